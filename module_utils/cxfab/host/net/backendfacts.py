"""What a host shows about its network daemons: the facts backend.choose decides on.

`gather(root, run)` reads, under `root` (a copied tree in tests):
- netplan: the YAML files of /etc/netplan, /run/netplan and /lib/netplan (all but
  cxfab's own 60-cxfab.yaml) and the interface names their device sections define;
- systemd-networkd: `systemctl is-active systemd-networkd`, and the links it manages
  (/run/systemd/netif/links/<ifindex> with an ADMIN_STATE other than unmanaged,
  named through /sys/class/net/*/ifindex);
- NetworkManager: `systemctl is-active NetworkManager`, and `nmcli -t -f DEVICE,STATE
  device`'s devices in a state other than unmanaged (lo and devices NetworkManager
  only watches, "connected (externally)", are not counted).

Whether a daemon runs is systemd's answer on a host systemd booted (sd_booted(3): the
directory /run/systemd/system exists, and PID 1 is systemd: netplan generate creates
that directory anywhere, rollback.systemd_is_init). On a host without systemd as its
init (a container, the lab's guests) systemctl cannot answer, and the process table
does: a process of the daemon's name (/proc/<pid>/comm, which the kernel cuts at 15
characters: systemd-networkd shows as "systemd-network").

`run(argv)` returns (exit status, stdout); a missing command is (127, ""). The network
stage calls it for `host_network_backend: auto` (stages/network.py, detected_backend).
"""

from __future__ import annotations

import glob
import os

from .rollback import systemd_is_init

NETPLAN_DIRS = ("etc/netplan", "run/netplan", "lib/netplan")
OWN_NETPLAN = "60-cxfab.yaml"
NETPLAN_DEVICE_TYPES = (
    "ethernets", "bonds", "bridges", "vlans", "wifis", "modems", "tunnels", "vrfs",
    "dummy-devices", "virtual-ethernets", "nm-devices",
)  # fmt: skip
UNMANAGED = "unmanaged"


def _path(root: str, relative: str) -> str:
    return os.path.join(root, relative)


def netplan_interfaces(root: str) -> list[str]:
    import yaml  # only here: the host agent (host/net alone) never reads netplan files

    names: set[str] = set()
    for directory in NETPLAN_DIRS:
        for path in sorted(glob.glob(os.path.join(_path(root, directory), "*.yaml"))):
            if os.path.basename(path) == OWN_NETPLAN:
                continue
            with open(path, encoding="utf-8") as handle:
                network = (yaml.safe_load(handle) or {}).get("network") or {}
            for kind in NETPLAN_DEVICE_TYPES:
                names.update((network.get(kind) or {}).keys())
    return sorted(names)


def _ifnames(root: str) -> dict[str, str]:
    names = {}
    for path in glob.glob(_path(root, "sys/class/net/*/ifindex")):
        with open(path, encoding="ascii") as handle:
            names[handle.read().strip()] = path.split("/")[-2]
    return names


def networkd_links(root: str) -> list[str]:
    names = _ifnames(root)
    managed = []
    for path in glob.glob(_path(root, "run/systemd/netif/links/*")):
        with open(path, encoding="utf-8", errors="replace") as handle:
            state = dict(
                line.strip().split("=", 1)
                for line in handle
                if "=" in line and not line.startswith("#")
            )
        ifindex = os.path.basename(path)
        if state.get("ADMIN_STATE", UNMANAGED) != UNMANAGED and ifindex in names:
            managed.append(names[ifindex])
    return sorted(managed)


def networkmanager_links(run) -> list[str]:
    status, out = run(["nmcli", "-t", "-f", "DEVICE,STATE", "device"])
    if status != 0:
        return []
    managed = []
    for line in out.splitlines():
        device, _, state = line.rpartition(":")
        if device and device != "lo" and state != UNMANAGED and "externally" not in state:
            managed.append(device.replace("\\:", ":"))
    return sorted(managed)


PROCESS_NAMES = {"NetworkManager": "NetworkManager", "systemd-networkd": "systemd-network"}


def _active(run, unit: str) -> bool:
    status, out = run(["systemctl", "is-active", unit])
    return status == 0 and out.strip() == "active"


def _process_runs(root: str, comm: str) -> bool:
    for path in glob.glob(_path(root, "proc/[0-9]*/comm")):
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                if handle.read().strip() == comm:
                    return True
        except OSError:  # the process ended while the table was read
            continue
    return False


def _running(root: str, run, unit: str) -> bool:
    if systemd_is_init(root):
        return _active(run, unit)
    return _process_runs(root, PROCESS_NAMES[unit])


def gather(root: str, run) -> dict:
    """The facts dict of backend.choose for the host under `root`."""
    nm_on = _running(root, run, "NetworkManager")
    nd_on = _running(root, run, "systemd-networkd")
    return {
        "netplan_interfaces": netplan_interfaces(root),
        "networkmanager_running": nm_on,
        "networkmanager_links": networkmanager_links(run) if nm_on else [],
        "networkd_running": nd_on,
        "networkd_links": networkd_links(root) if nd_on else [],
    }
