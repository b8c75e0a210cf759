"""Reading the Onyx show commands: which command, asked how, and its output parsed.

The text parsers accept the layouts of 3.6 to 3.10 (tests/fixtures/onyx/corpus/)
and fail closed: an output they cannot read raises ReadError naming the command
and its first lines. From 3.6.6000 the shows are asked with `| json-print` and read
by health_json. Asynchronous messages and `%` errors are handled by the session
(session.clean_output / first_error) on every line.
"""

from __future__ import annotations

import re

from ...common.addressing import AddressError, mac
from . import health_json
from .parser import parse_running_config
from .readerror import unreadable as _unreadable
from .version import VersionError, at_least

_KV = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 \-/()]*?)\s*:\s*(.*?)\s*$")
_IPL_ROW = re.compile(
    r"^\s*(\d+)\s+Po(\d+)\s+(\d+|N/A)\s+(Up|Down|\S+)\s+(\S+)\s+(\S+)", re.IGNORECASE
)
_MEMBER_ROW = re.compile(r"^\s*([0-9A-Fa-f:]{17})\s+(\S+)\s+(\S+)\s*$")
# A node row after the `Hostname  VIP-State  IP Address` header; the older layout's
# hostnames may hold spaces (`Switch 1   master   10.234.23.1`).
_VIP_ROW = re.compile(r"^\s*(\S.*?)\s+(\S+)\s+(\d+\.\d+\.\d+\.\d+)\s*$")
_MPO_ROW = re.compile(r"^\s*\d+\s+Mpo(\d+)\((\w)\)\s+(\S+)\s*(.*)$")
_PORT_FLAG = re.compile(r"Eth(\d+/\d+(?:/\d+)?)\((\w)\)")
_RECORD = re.compile(r"^\s*(MAGP)\b(.*):\s*$")


def _kv_lines(text: str) -> dict[str, str]:
    values = {}
    for line in (text or "").splitlines():
        match = _KV.match(line)
        if match and match.group(1) not in values:
            values[match.group(1).strip()] = match.group(2)
    return values


def _int(value, default=None):
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return default


def _required(kv: dict, keys, command: str, text: str) -> None:
    missing = [key for key in keys if key not in kv]
    if missing:
        raise _unreadable(command, text, f"no {', '.join(missing)}")


MLAG_FIELDS = (
    "Admin status",
    "Operational status",
    "System-mac",
    "Inactive",
    "Active-partial",
    "Active-full",
)


def parse_show_mlag(text: str) -> dict:
    """`show mlag` (3.6 `Peers state Summary:` and 3.9+ `MLAG Members Summary:` layouts)."""
    kv = _kv_lines(text)
    _required(kv, MLAG_FIELDS, "show mlag", text)
    raw_mac = kv.get("System-mac", "")
    try:
        system_mac = mac(raw_mac) if raw_mac else None
    except AddressError:
        system_mac = None
    result = {
        "admin": kv.get("Admin status"),
        "oper": kv.get("Operational status"),
        "system_mac": system_mac,
        "system_mac_raw": raw_mac,
        "mismatched": "mismatch" in raw_mac.lower(),
        "configured": _int(kv.get("Configured")),
        "inactive": _int(kv.get("Inactive")),
        "active_partial": _int(kv.get("Active-partial")),
        "active_full": _int(kv.get("Active-full")),
        "ipls": [],
        "members": [],
    }
    section = None
    for line in (text or "").splitlines():
        if line.startswith("MLAG IPLs Summary"):
            section = "ipl"
        elif line.startswith(("MLAG Members Summary", "Peers state Summary")):
            section = "members"
        elif section == "ipl":
            row = _IPL_ROW.match(line)
            if row:
                result["ipls"].append(
                    {
                        "id": int(row.group(1)),
                        "port_channel": int(row.group(2)),
                        "vlan": _int(row.group(3)),
                        "state": row.group(4),
                        "local_ip": row.group(5),
                        "peer_ip": row.group(6),
                    }
                )
        elif section == "members":
            row = _MEMBER_ROW.match(line)
            if row:
                result["members"].append(
                    {
                        "system_id": row.group(1).upper(),
                        "state": row.group(2),
                        "hostname": row.group(3).strip("<>"),
                    }
                )
    if None in (result["inactive"], result["active_partial"], result["active_full"]):
        raise _unreadable("show mlag", text, "MLAG port counters are not numbers")
    if section is None:
        raise _unreadable("show mlag", text, "no IPL summary")
    return result


def parse_show_mlag_vip(text: str) -> dict:
    """`show mlag-vip` (`MLAG-VIP:` and the older `MLAG VIP` / `====` layouts, `x /24`)."""
    kv = _kv_lines(text)
    _required(kv, ("MLAG group name", "MLAG VIP address", "Active nodes"), "show mlag-vip", text)
    nodes, header = [], False
    for line in (text or "").splitlines():
        if not header:
            header = line.split()[:1] == ["Hostname"] and "VIP-State" in line
            continue
        row = _VIP_ROW.match(line)
        if row:
            nodes.append(
                {"hostname": row.group(1), "state": row.group(2).lower(), "ip": row.group(3)}
            )
    active = _int(kv.get("Active nodes"))
    if active is None or len(nodes) != active:
        raise _unreadable(
            "show mlag-vip", text, f"{len(nodes)} node row(s) for Active nodes {kv['Active nodes']}"
        )
    return {
        "group": kv.get("MLAG group name"),
        "vip": kv.get("MLAG VIP address", "").replace(" ", "") or None,
        "active_nodes": active,
        "nodes": nodes,
    }


def parse_mpo_summary(text: str) -> dict[int, dict]:
    """MPO rows; `ports` are the local members only (the peer's column is `peer_ports`)."""
    mpos, peer_column = {}, None
    for line in (text or "").splitlines():
        if peer_column is None and "Local" in line and "Peer" in line:
            peer_column = line.index("Peer")
            continue
        row = _MPO_ROW.match(line)
        if not row:
            continue
        if peer_column is None:
            raise _unreadable(
                "show interfaces mlag-port-channel summary", text, "no Local/Peer column header"
            )
        local, peer = line[:peer_column], line[peer_column:]
        mpos[int(row.group(1))] = {
            "flag": row.group(2),
            "type": row.group(3),
            "ports": _PORT_FLAG.findall(local),
            "peer_ports": _PORT_FLAG.findall(peer),
        }
    if peer_column is None:
        raise _unreadable("show interfaces mlag-port-channel summary", text, "no summary table")
    return mpos


_RULE = re.compile(r"^\s*[-=]+\s*$")


def _records(text: str, kind: str, command: str) -> list[tuple[str, dict]]:
    """The `MAGP 10:` records of an output, each with its `key: value` lines.

    An output with no record, or with a line that belongs to no record, was not
    read: junk must never parse to "no instances" (a check would then pass on it).
    """
    records, current = [], None
    for line in (text or "").splitlines():
        if not line.strip() or _RULE.match(line):
            continue
        head = _RECORD.match(line)
        if head and head.group(1) == kind:
            current = {}
            records.append((head.group(2).strip(), current))
            continue
        match = _KV.match(line) if current is not None else None
        if match is None:
            raise _unreadable(
                command, text, f"line {line.strip()[:60]!r} is not in a {kind} record"
            )
        current[match.group(1).strip()] = match.group(2)
    if not records:
        raise _unreadable(command, text, f"no {kind} record")
    return records


def parse_show_magp(text: str) -> dict[int, dict]:
    result = {}
    for name, fields in _records(text, "MAGP", "show magp"):
        instance = _int(name)
        if instance is None or not {"Interface vlan", "State", "Admin state"} <= set(fields):
            raise _unreadable("show magp", text, f"MAGP record {name!r} is incomplete")
        result[instance] = {
            "vlan": _int(fields.get("Interface vlan")),
            "admin": fields.get("Admin state"),
            "state": fields.get("State"),
            "virtual_ip": fields.get("Virtual IP"),
            "virtual_mac": (fields.get("Virtual MAC") or "").upper() or None,
        }
    return result


# `show vrrp` is a table, one row per virtual router address. Its two layouts are
# the Onyx manual's examples as quoted second-hand (docs/switches.md, "VRRP"):
# 3.6 (`Time` is the advertisement interval, `Pre` Y/N) and 3.9 on. Each layout:
# its header's words, and the columns of VR id, priority, state and address.
_VRRP_TABLES = {
    "Interface VR Pri Time Pre State VR IP addr": (7, 1, 2, 5, 6),
    "Interface VR Admin State Priority Adv-Intvl Preempt State VR IP addr": (8, 1, 3, 6, 7),
}
_VLAN_IFACE = re.compile(r"vlan(\d+)", re.IGNORECASE)


def _vrrp_layout(line: str):
    words = " ".join(line.split()).lower()
    return next((cols for head, cols in _VRRP_TABLES.items() if head.lower() == words), None)


def parse_show_vrrp(text: str) -> dict[tuple[int, int], dict]:
    """`show vrrp`: {(vlan, vrid): {state, virtual_ip, priority}} of the VLAN interfaces.

    Rows of other interfaces (`Eth1/5`) are read and left out; an instance's IPv4
    and IPv6 rows merge, its virtual_ip being the IPv4 address. A header with no
    row is "no instances". Read, instance absent: the VLAN/VRID is not a key.
    Could not read (no known header, a line before it, a row of the wrong width or
    with a non-numeric VR or priority): ReadError."""
    command, layout, result = "show vrrp", None, {}
    for line in (text or "").splitlines():
        if not line.strip() or _RULE.match(line):
            continue
        if layout is None:
            layout = _vrrp_layout(line)
            if layout is None:
                raise _unreadable(
                    command, text, f"no VRRP table header before {line.strip()[:60]!r}"
                )
            continue
        width, vr_col, prio_col, state_col, ip_col = layout
        cells = line.split()
        if len(cells) != width:
            raise _unreadable(
                command, text, f"row {line.strip()[:60]!r} has {len(cells)} columns, not {width}"
            )
        if not (cells[vr_col].isdigit() and cells[prio_col].isdigit()):
            raise _unreadable(
                command, text, f"row {line.strip()[:60]!r}: VR or priority not a number"
            )
        vlan = _VLAN_IFACE.fullmatch(cells[0])
        if vlan is None:
            continue  # a router interface (Eth1/5): not one of cxfab's VLAN gateways
        address, key = cells[ip_col], (int(vlan.group(1)), int(cells[vr_col]))
        ipv4 = ":" not in address
        known = result.get(key)
        if known is None or (ipv4 and known["virtual_ip"] is None):
            result[key] = {
                "state": cells[state_col],
                "virtual_ip": address if ipv4 else None,
                "priority": int(cells[prio_col]),
            }
    if layout is None:
        raise _unreadable(command, text, "no VRRP table header")
    return result


def parse_configuration_files(text: str) -> dict:
    kv = _kv_lines(text)
    unsaved = kv.get("Unsaved changes")
    if unsaved is None or unsaved.lower() not in ("yes", "no"):
        raise _unreadable("show configuration files", text, "no 'Unsaved changes: yes|no'")
    return {
        "active": kv.get("Active configuration"),
        "unsaved": None if unsaved is None else unsaved.lower() == "yes",
    }


# --------------------------------------------------------------------- checks
_PFC_PORT_ROW = re.compile(r"^\s*Eth(\d+/\d+(?:/\d+)?)\s+(\S+)\s+(\S+)\s*$")


def parse_show_dcb_pfc(text: str) -> dict:
    """`show dcb priority-flow-control`: global state, enabled priorities, per-port state.

    Layout (Onyx 3.x; NVIDIA/SmartX RoCE guides' captures, and the JSON keys the
    mellanox.onyx onyx_pfc_interface module reads): `PFC: enabled`, `Priority
    Enabled List: 3`, `Priority Disabled List: ...`, then a table
    `Interface  PFC admin  PFC oper` with one `Eth1/1  Auto  Enabled` row per port.
    """
    command = "show dcb priority-flow-control"
    kv = _kv_lines(text)
    _required(kv, ("PFC", "Priority Enabled List"), command, text)
    words = kv["Priority Enabled List"].replace(",", " ").split()
    if not all(word.isdigit() and int(word) < 8 for word in words):
        raise _unreadable(command, text, "the enabled priorities are not 0-7")
    if not any("PFC admin" in line and "PFC oper" in line for line in (text or "").splitlines()):
        raise _unreadable(command, text, "no Interface / PFC admin / PFC oper table")
    ports = {}
    for line in text.splitlines():
        match = _PFC_PORT_ROW.match(line)
        if match:
            ports[match.group(1)] = {"admin": match.group(2), "oper": match.group(3)}
    return {
        "enabled": kv["PFC"].strip().lower() == "enabled",
        "priorities": sorted(int(word) for word in words),
        "ports": ports,
    }


def _parse_running(text: str):
    """A running-config without its `## Running database` header was cut or is something
    else: reading it as a config would report every line missing, not unread."""
    parsed = parse_running_config(text)
    if "running database" not in parsed.header:
        raise _unreadable("show running-config", text, "no `## Running database` header")
    return parsed


SHOW_COMMANDS = {
    "mlag": "show mlag",
    "mlag_vip": "show mlag-vip",
    "mpo": "show interfaces mlag-port-channel summary",
    "magp": "show magp",
    "vrrp": "show vrrp",
    "files": "show configuration files",
    "pfc": "show dcb priority-flow-control",
    "running": "show running-config",
}


PARSERS = {
    "files": parse_configuration_files,
    "mlag": parse_show_mlag,
    "mlag_vip": parse_show_mlag_vip,
    "mpo": parse_mpo_summary,
    "magp": parse_show_magp,
    "vrrp": parse_show_vrrp,
    "pfc": parse_show_dcb_pfc,
    "running": _parse_running,
}

# First release whose `| json-print` output is read for each show (3.6.6000: the
# named-list shape, also printed by 3.10). Older releases, an unknown release and
# `show vrrp` (no json-print example, public or captured) are read as text.
JSON_PRINT_SINCE = {key: "3.6.6000" for key in ("files", "mlag", "mlag_vip", "mpo", "magp")}

JSON_PARSERS = {
    "files": health_json.parse_configuration_files,
    "mlag": health_json.parse_show_mlag,
    "mlag_vip": health_json.parse_show_mlag_vip,
    "mpo": health_json.parse_mpo_summary,
    "magp": health_json.parse_show_magp,
}


def uses_json_print(key: str, release: str | None) -> bool:
    """Releases compared as numbers: 3.10.2002 is past 3.6.6000."""
    if not release or key not in JSON_PRINT_SINCE:
        return False
    try:
        return at_least(release, JSON_PRINT_SINCE[key])
    except VersionError:
        return False


def show_command(key: str, release: str | None) -> str:
    command = SHOW_COMMANDS[key]
    return f"{command} | json-print" if uses_json_print(key, release) else command


def parse(key: str, text: str | None, release: str | None):
    """The output of show_command(key, release), read the way it was asked for."""
    if uses_json_print(key, release):
        return JSON_PARSERS[key](text, release)
    return PARSERS[key](text)
