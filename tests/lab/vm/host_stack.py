"""Which lab guest's network NetworkManager owns, and NetworkManager started there.

lab-host2 is built as a host of the RHEL family would be: `lab up` starts a system bus,
NetworkManager (managing the data ports, the bond and its VLANs) and its dispatcher in
it (tests/tools/nm_guest.py start), and so does the restart of a guest found wedged
mid-run. Its host_vars leave the backend to cxfab (`host_network_backend: auto`,
inventories/lab/host_vars/lab-host2/network_backend.yml): the network stage finds
NetworkManager running there (backendfacts: the process table, the guests boot without
systemd) and takes the NetworkManager path. lab-host1 stays on networkd (the hosts'
group_vars), so every suite of the deployed lab runs on both backends. The lab's own
tests (test_lab_*.py) run on the same guests; their interfaces (`lt*`) are not
NetworkManager's, which leaves them alone.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sysconfig

from tests.lab.vm.topology import GUESTS, REPO_ROOT, Guest

START_TIMEOUT_S = 180


# The guests built with NetworkManager (their "distribution"): tests/unit/test_lab_host_stack.py
# holds the lab inventory to it (auto or networkmanager for these, networkd for the others).
NETWORKMANAGER_GUESTS = ("lab-host2",)


def networkmanager_guests() -> list[Guest]:
    return [guest for guest in GUESTS if guest.name in NETWORKMANAGER_GUESTS]


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
