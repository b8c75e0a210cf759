"""LLDP of the emulated switches: a real lldpd per switch namespace, and Onyx's view of it.

In the lab each switch's namespace in the fabric guest runs its own lldpd (started by
the cabling script, tests/lab/vm/fabric.py): it advertises the switch's name as system
name and `Eth1/N` as port id on every cabled port, and keeps what it received. The
emulator answers `show lldp interfaces ethernet 1/N remote` from that lldpd's
`lldpcli -f json0 show neighbors details`, read over the agent's SSH connection.

Printed in the layout of NVIDIA's example on the Onyx User Manual page "Link Layer
Discovery Protocol (LLDP)" (docs/lab-onyx.md says which parts are confirmed).
"""

from __future__ import annotations

import json
import shlex
import subprocess

from .dataplane import DataplaneError, port_ifname

# Where each namespace's lldpd keeps its control socket and start-up config in the
# fabric guest (its /run is the guest's own tmpfs).
RUN = "/run/cxfab-lldpd"
# lldpd's chroot (privilege separation) must exist; the Debian unit makes it.
CHROOT = "/run/lldpd"
# Faster than Onyx's 30 s so a lab test sees a recabling within seconds; TTL = 5 x 4.
TX_INTERVAL_S = 5
TX_HOLD = 4
SSH_TIMEOUT = 60


def socket_path(namespace: str) -> str:
    return f"{RUN}/{namespace}.socket"


def onyx_port_id(port: str) -> str:
    """`1/3` -> `Eth1/3`, the port id a Spectrum switch advertises (see docs/lab-onyx.md)."""
    return f"Eth{port}"


def cumulus_port_id(port: str) -> str:
    """`1/3` -> `swp3`, the port id a Cumulus Linux switch advertises: its interface name
    (NVUE command reference, `nv show interface lldp`: remote ports `swp1`, `swp49`)."""
    return port_ifname(port)


def lldpd_config(system_name: str, ports: list[str], port_id=onyx_port_id) -> str:
    """lldpcli lines the switch's lldpd runs at start (`lldpd -O FILE`); `port_id` names
    a port as the emulated OS advertises it."""
    lines = [
        f"configure system hostname {system_name}",
        "configure system capabilities enabled bridge",
        f"configure lldp tx-interval {TX_INTERVAL_S}",
        f"configure lldp tx-hold {TX_HOLD}",
    ]
    for port in ports:
        eth = port_id(port)
        lines.append(
            f"configure ports {port_ifname(port)} lldp portidsubtype local {eth} description {eth}"
        )
    return "\n".join(lines) + "\n"


def start_script(namespace: str, system_name: str, ports: list[str], port_id=onyx_port_id) -> str:
    """Shell (fabric guest) that starts the namespace's lldpd on `ports` only."""
    conf = f"{RUN}/{namespace}.conf"
    ifaces = ",".join(port_ifname(p) for p in ports)
    return (
        f"mkdir -p {RUN} {CHROOT}\n"
        f"cat > {conf} <<'CXFAB_LLDP'\n{lldpd_config(system_name, ports, port_id)}CXFAB_LLDP\n"
        f"ip netns exec {shlex.quote(namespace)} lldpd -u {socket_path(namespace)} "
        f"-I {ifaces} -O {conf} </dev/null >{RUN}/{namespace}.log 2>&1\n"
    )


def relabel_script(namespace: str, ports: list[str], port_id=onyx_port_id) -> str:
    """Shell (fabric guest) that makes the namespace's running lldpd advertise `ports`
    the way another OS names them (`lab pair OS` swaps the pair on a running lab)."""
    sock = socket_path(namespace)
    return "".join(
        f"ip netns exec {shlex.quote(namespace)} lldpcli -u {sock} configure ports "
        f"{port_ifname(port)} lldp portidsubtype local {port_id(port)} "
        f"description {port_id(port)}\n"
        for port in ports
    )


def neighbors_command(namespace: str) -> str:
    return (
        f"ip netns exec {shlex.quote(namespace)} "
        f"lldpcli -u {socket_path(namespace)} -f json0 show neighbors details"
    )


_CAP_LETTERS = {
    "Other": "O", "Repeater": "P", "Bridge": "B", "Wlan": "W", "Router": "R",
    "Telephone": "T", "Docsis": "C", "Station": "S",
}  # fmt: skip


def _value(entries, default: str = "") -> str:
    return entries[0].get("value", default) if entries else default


def parse_neighbors(text: str) -> dict[str, list[dict]]:
    """{ifname: [neighbour, ...]} from `lldpcli -f json0 show neighbors details`.

    Each neighbour: chassis_id, chassis_subtype, port_id, port_subtype, port_descr,
    sysname, sysdescr, caps_supported, caps_enabled (capability letters), rid.
    """
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError:
        raise DataplaneError(f"lldpcli: not JSON: {text.strip()[:200]!r}") from None
    found: dict[str, list[dict]] = {}
    for lldp in data.get("lldp", []):
        for iface in lldp.get("interface", []):
            chassis = (iface.get("chassis") or [{}])[0]
            port = (iface.get("port") or [{}])[0]
            chassis_id = (chassis.get("id") or [{}])[0]
            port_id = (port.get("id") or [{}])[0]
            caps = chassis.get("capability") or []
            found.setdefault(iface["name"], []).append(
                {
                    "rid": iface.get("rid", ""),
                    "chassis_id": chassis_id.get("value", ""),
                    "chassis_subtype": chassis_id.get("type", ""),
                    "port_id": port_id.get("value", ""),
                    "port_subtype": port_id.get("type", ""),
                    "port_descr": _value(port.get("descr")),
                    "sysname": _value(chassis.get("name")),
                    "sysdescr": _value(chassis.get("descr")),
                    "caps_supported": ",".join(_CAP_LETTERS.get(c["type"], "O") for c in caps),
                    "caps_enabled": ",".join(
                        _CAP_LETTERS.get(c["type"], "O") for c in caps if c.get("enabled")
                    ),
                }
            )
    return found


class LldpReader:
    """Reads one switch namespace's lldpd neighbours over the dataplane SSH command."""

    def __init__(self, ssh: list[str], namespace: str):
        self.ssh = ssh
        self.namespace = namespace

    def neighbors(self) -> dict[str, list[dict]]:
        done = subprocess.run(
            [*self.ssh, neighbors_command(self.namespace)], text=True, capture_output=True,
            timeout=SSH_TIMEOUT, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            why = done.stderr.strip()[-300:]
            raise DataplaneError(f"lldpcli in {self.namespace}: exit {done.returncode}: {why!r}")
        return parse_neighbors(done.stdout)


# Onyx prints a chassis id subtype `mac` and a port id subtype `local` in NVIDIA's example;
# the other words are lldpd's own names (unconfirmed).
def render_remote(port: str, neighbors: list[dict]) -> str:
    """`show lldp interfaces ethernet 1/N remote` for one port."""
    lines = [f"Ethernet {port}"]
    if not neighbors:
        lines.append("No lldp remote information.")
    for index, n in enumerate(neighbors, 1):
        lines += [
            f"Remote Index: {index}",
            f"Remote chassis id: {n['chassis_id']} ; chassis id subtype: {n['chassis_subtype']}",
            f"Remote port-id: {n['port_id']}; port id subtype: {n['port_subtype']}",
            f"Remote port description: {n['port_descr']}",
            f"Remote system name: {n['sysname']}",
            f"Remote system description: {n['sysdescr']}",
            f"Remote system capabilities supported: {n['caps_supported']} ; {n['caps_enabled']}",
        ]
    return "\n".join(lines)


def remote_json(port: str, neighbors: list[dict]) -> dict:
    """`| json-print` form, keyed `Eth1/N` as in real captures (secondary, unconfirmed)."""
    return {
        f"Eth{port}": [
            {
                "Remote Index": str(index),
                "Remote chassis id": n["chassis_id"],
                "chassis id subtype": n["chassis_subtype"],
                "Remote port-id": n["port_id"],
                "port id subtype": n["port_subtype"],
                "Remote port description": n["port_descr"] or "Not Advertised",
                "Remote system name": n["sysname"] or "Not Advertised",
                "Remote system description": n["sysdescr"] or "Not Advertised",
                "Remote system capabilities supported": n["caps_supported"],
                "Remote system capabilities enabled": n["caps_enabled"],
            }
            for index, n in enumerate(neighbors, 1)
        ]
    }
