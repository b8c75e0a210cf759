"""Time a blank NVUE switch's dataplane converge script, one by one and batched.

    sudo .venv/bin/python -m tests.lab.nvue.converge_cost [lab-sw-a] [runs]

Runs both forms of the script (the agent's former one `ip netns exec <ns> <tool>`
per command, and dataplane_agent.converge_script) with `bash -s` in a fresh local
network namespace whose cabled ports are veth swpN, as `ssh lab-fabric bash -s`
would in the fabric guest; prints the commands, the processes each form starts and
the median wall time. Needs root and `ip netns`; no lab VM. A kernel without bonds or
VLAN filtering fails those commands (the count is printed): the figure is then the
cost of the processes, which is what the 1-vCPU TCG guest pays most for.
"""

from __future__ import annotations

import shlex
import statistics
import subprocess
import sys
import time

from module_utils.cxfab.switch.nvue import render
from tests.lab.nvue.dataplane import nvue_plan
from tests.lab.onyx import dataplane_agent
from tests.lab.onyx.dataplane import Link, port_ifname
from tests.lab.onyx.dataplane_converge import Current, converge
from tests.lab.vm.topology import cabled_ports
from tests.unit.nvue_helpers import cumulus

MARK = dataplane_agent.MARK


def blank_commands(name: str) -> list[list[str]]:
    """What a blank NVUE switch of the lab converges with (its cabled ports down)."""
    cabled = cabled_ports(name)
    ports = {port_ifname(p): Link(port_ifname(p), "port", up=False, mtu=1500) for p in cabled}
    want = nvue_plan(render.render(cumulus("lab", name)), name, cabled)
    return converge(want, Current(links=ports))


def one_by_one(namespace: str, commands: list[list[str]]) -> tuple[str, int]:
    """The agent's script before the batches: 2 processes per command."""
    prefix = f"ip netns exec {shlex.quote(namespace)} "
    script = "".join(
        f"{prefix}{shlex.join(argv)} || echo {MARK}-failed {i} $?\n"
        for i, argv in enumerate(commands)
    )
    return script, 2 * len(commands)


def timed(make, name: str, commands: list[list[str]]) -> tuple[float, int, int]:
    namespace = "cxfab-converge-cost"
    subprocess.run(["ip", "netns", "del", namespace], capture_output=True, check=False)
    subprocess.run(["ip", "netns", "add", namespace], check=True)
    try:
        for port in cabled_ports(name):
            ifname = port_ifname(port)
            subprocess.run(["ip", "-n", namespace, "link", "add", ifname, "type", "veth",
                            "peer", "name", f"p{ifname}"], check=True)  # fmt: skip
        script, execs = make(namespace, commands)
        started = time.monotonic()
        done = subprocess.run(["bash", "-s"], input=script, text=True, capture_output=True,
                              check=True)  # fmt: skip
        took = time.monotonic() - started
        return took, execs, len(dataplane_agent.failed_commands(done.stdout))
    finally:
        subprocess.run(["ip", "netns", "del", namespace], check=True)


def main(argv: list[str]) -> int:
    name = argv[1] if len(argv) > 1 else "lab-sw-a"
    runs = int(argv[2]) if len(argv) > 2 else 5
    commands = blank_commands(name)
    for label, make in (("one by one", one_by_one), ("batched", dataplane_agent.converge_script)):
        results = [timed(make, name, commands) for _ in range(runs)]
        median = statistics.median(r[0] for r in results)
        print(
            f"{name} {label}: {len(commands)} commands, {results[0][1]} processes, "
            f"median {median * 1000:.0f} ms of {runs} runs, {results[0][2]} failed here"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
