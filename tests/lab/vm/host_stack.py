"""Which lab guest's network NetworkManager owns, and NetworkManager started there.

The lab inventory says it (`host_network_backend: networkmanager` in a host's
host_vars: lab-host2's, inventories/lab/host_vars/lab-host2/network_backend.yml), and
`lab up` makes the guest so (tests/tools/nm_guest.py start: a system bus,
NetworkManager managing the data ports, the bond and its VLANs, its dispatcher), as does
a guest booted again after a wedge. The inventory and the guests therefore never
disagree: every suite of the deployed lab runs with one host on networkd and one on
NetworkManager. The lab's own tests (test_lab_*.py) run on the same guests; their
interfaces (`lt*`) are not NetworkManager's, which leaves them alone.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sysconfig

from tests.lab.vm.topology import GUESTS, INVENTORY_DIR, REPO_ROOT, Guest

NETWORKMANAGER = "networkmanager"
START_TIMEOUT_S = 180


def networkmanager_guests() -> list[Guest]:
    """The guests whose host_vars in the lab inventory say `networkmanager`."""
    from tests.tools.inventory import load

    host_vars = load(INVENTORY_DIR).host_vars
    return [
        guest
        for guest in GUESTS
        if host_vars.get(guest.name, {}).get("host_network_backend") == NETWORKMANAGER
    ]


def guest_python_command(module_args: str) -> str:
    """`python3 -m <module_args>` in a guest: this checkout and the venv's packages on its
    path (the guests share the controller's root file system)."""
    path = ":".join([str(REPO_ROOT), str(REPO_ROOT / "module_utils"),
                     sysconfig.get_paths()["purelib"]])  # fmt: skip
    return (
        f"cd {shlex.quote(str(REPO_ROOT))} && PYTHONPATH={shlex.quote(path)} "
        f"python3 -m {module_args}"
    )


def start_networkmanager(guest: Guest, ssh_argv) -> dict:
    """NetworkManager started in `guest` (nm_guest start); its JSON reading. Raises
    RuntimeError with NetworkManager's log when it does not come up."""
    done = subprocess.run(
        ssh_argv(guest, guest_python_command("tests.tools.nm_guest start")),
        capture_output=True, text=True, timeout=START_TIMEOUT_S, check=False,
    )  # fmt: skip
    lines = done.stdout.strip().splitlines()
    try:
        reading = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        reading = {}
    if done.returncode != 0 or not reading or "error" in reading:
        why = reading.get("error") or done.stderr.strip()[-600:] or "no reading"
        raise RuntimeError(
            f"{guest.name}: NetworkManager did not start: {why}\n{reading.get('log', '')}"
        )
    return reading
