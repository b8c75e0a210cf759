"""Emulated Onyx (MLNX-OS) switch pair for the lab.

Each emulated switch is its own process: an SSH server speaking the MLNX-OS CLI
(`server.py`), a configuration model (`model.py` with its objects in `objects.py`
and the interface commands in `interface_commands.py`), the running-config writer
(`runcfg.py`), the pair protocols over a real UDP keepalive (`peer.py`) and the
show commands (`shows.py`). `pair.py` starts and stops the two switches;
`fixtures.py` does the same for pytest. See docs/lab-onyx.md.
"""
