"""Parsers of the Onyx show commands and the post-deploy health checks.

Every check returns {id, target, category, status, expected, observed,
message, scope}: status is `pass` or `fail`; scope is `local` when the check
holds for a switch on its own (its config, saved state) and `pair` when it
needs the partner too (MLAG Up, IPL Up, MPOs Active-full, MAGP Master, one
VRRP master per VRID). A switch whose partner is still blank can pass only
the local checks.

The text parsers accept the layouts of 3.6 to 3.10 (tests/fixtures/onyx/corpus/)
and fail closed: an output they cannot read raises ReadError naming the command
and its first lines, and the checks built on it fail with that message. A
check never compares two missing values. Asynchronous messages and `%` errors
are handled by the session (session.clean_output / first_error) on every line.
"""

from __future__ import annotations

import re

from ...common.addressing import AddressError, mac
from ...common.checks import check
from . import health_json
from .parser import parse_running_config
from .readerror import ReadError
from .readerror import unreadable as _unreadable
from .version import VersionError, at_least

_KV = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 \-/()]*?)\s*:\s*(.*?)\s*$")
_IPL_ROW = re.compile(
    r"^\s*(\d+)\s+Po(\d+)\s+(\d+|N/A)\s+(Up|Down|\S+)\s+(\S+)\s+(\S+)", re.IGNORECASE
)
_MEMBER_ROW = re.compile(r"^\s*([0-9A-Fa-f:]{17})\s+(\S+)\s+(\S+)\s*$")
_VIP_ROW = re.compile(r"^\s*(\S+)\s+(master|standby|backup|\S+)\s+(\d+\.\d+\.\d+\.\d+)\s*$")
_MPO_ROW = re.compile(r"^\s*\d+\s+Mpo(\d+)\((\w)\)\s+(\S+)\s*(.*)$")
_PORT_FLAG = re.compile(r"Eth(\d+/\d+(?:/\d+)?)\((\w)\)")
_RECORD = re.compile(r"^\s*(MAGP|VRRP)\b(.*):\s*$")


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
    nodes = []
    for line in (text or "").splitlines():
        row = _VIP_ROW.match(line)
        if row and row.group(1) != "Hostname":
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
    """The `MAGP 10:` / `VRRP ...:` records of an output, each with its `key: value` lines.

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


def parse_show_vrrp(text: str) -> dict[tuple[int, int], dict]:
    """`show vrrp` (layout unconfirmed on a real switch: see docs/switches.md).

    Read, instance absent: the VLAN/VRID is not a key. Could not read: ReadError."""
    result = {}
    for name, fields in _records(text, "VRRP", "show vrrp"):
        vlan, vrid = _int(fields.get("Interface vlan")), _int(fields.get("VRID"))
        if vlan is None or vrid is None or "State" not in fields:
            raise _unreadable("show vrrp", text, f"VRRP record {name!r} is incomplete")
        result[(vlan, vrid)] = {
            "state": fields.get("State"),
            "virtual_ip": fields.get("Virtual IP"),
            "priority": _int(fields.get("Priority")),
        }
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
# `show vrrp` (no public capture) are read as text.
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


def needed_shows(structured: dict) -> list[str]:
    names = ["files"]
    if structured.get("mlag"):
        names += ["mlag", "mlag_vip", "mpo"]
    if structured.get("magp"):
        names.append("magp")
    if structured.get("vrrp"):
        names.append("vrrp")
    if structured.get("lossless"):
        names += ["pfc", "running"]
    return names


def switch_checks(
    structured: dict,
    outputs: dict[str, str | None],
    errors: dict[str, str],
    release: str | None = None,
) -> list[dict]:
    """Checks of one switch from its show outputs (None = the command failed)."""
    name = structured["switch"]
    checks: list[dict] = []
    errors, parsed = dict(errors), {}
    for key in PARSERS:
        if outputs.get(key) is None:
            continue
        try:
            parsed[key] = parse(key, outputs[key], release)
        except ReadError as exc:
            # A check never passes on a value it did not read.
            said = f"release {release or 'unknown'}"
            errors[key] = str(exc) if said in str(exc) else f"{exc} ({said})"

    def unavailable(key):
        return f"`{show_command(key, release)}` failed: {errors.get(key, 'no output')}"

    files = parsed.get("files")
    if files is None:
        checks.append(
            check(
                "config.saved",
                name,
                "fail",
                "Unsaved changes: no",
                unavailable("files"),
                "",
                scope="local",
            )
        )
    else:
        unsaved = files["unsaved"]
        checks.append(
            check(
                "config.saved",
                name,
                "pass" if unsaved is False else "fail",
                "Unsaved changes: no",
                f"Unsaved changes: {'unknown' if unsaved is None else 'yes' if unsaved else 'no'}",
                "",
                scope="local",
            )
        )

    mlag_intent = structured.get("mlag")
    if mlag_intent:
        checks += _mlag_checks(structured, parsed, unavailable)
    if structured.get("magp"):
        checks += _magp_checks(structured, parsed.get("magp"), unavailable)
    if structured.get("vrrp"):
        checks += _vrrp_local_checks(structured, parsed.get("vrrp"), unavailable)
    if structured.get("lossless"):
        checks += lossless_checks(structured, parsed, unavailable)
    return checks


def lossless_checks(structured, parsed, unavailable) -> list[dict]:
    """PFC on the RoCE priority and on each RoCE port (read from `show dcb
    priority-flow-control`), DSCP trust and ECN thresholds (read from the running config)."""
    name, intent = structured["switch"], structured["lossless"]
    checks = []

    def add(check_id, ok, expected, observed, message=""):
        checks.append(
            check(
                check_id, name, "pass" if ok else "fail", expected, observed, message, scope="local"
            )
        )

    priority = intent["priority"]
    pfc = parsed.get("pfc")
    expected = f"PFC enabled, priority {priority} in the enabled list"
    if pfc is None:
        add("pfc.priority", False, expected, unavailable("pfc"))
    else:
        observed = (
            f"PFC {'enabled' if pfc['enabled'] else 'disabled'}, "
            f"enabled priorities {pfc['priorities'] or 'none'}"
        )
        add("pfc.priority", pfc["enabled"] and priority in pfc["priorities"], expected, observed)
    for port in intent["ports"]:
        expected = "PFC oper Enabled"
        if pfc is None:
            add(f"pfc.{port}", False, expected, unavailable("pfc"))
            continue
        row = pfc["ports"].get(port)
        observed = f"PFC admin {row['admin']}, oper {row['oper']}" if row else "port not listed"
        add(f"pfc.{port}", bool(row) and row["oper"] == "Enabled", expected, observed)
    running = parsed.get("running")
    ecn = intent["ecn"]
    for port in intent["ports"]:
        trust_expected = f"qos trust {intent['trust']}"
        ecn_expected = (
            f"traffic-class {ecn['traffic_class']} ECN {ecn['min_kb']}-{ecn['max_kb']} KB"
        )
        if running is None:
            add(f"trust.{port}", False, trust_expected, unavailable("running"))
            add(f"ecn.{port}", False, ecn_expected, unavailable("running"))
            continue
        trust = running.get(("eth_trust", port))
        add(f"trust.{port}", trust == intent["trust"], trust_expected,
            f"qos trust {trust}" if trust else "no qos trust line (default L2)")  # fmt: skip
        marks = running.get(("eth_ecn", port, ecn["traffic_class"]))
        observed = f"ECN {marks[0]}-{marks[1]} KB" if marks else "no ECN on the traffic class"
        add(f"ecn.{port}", marks == (ecn["min_kb"], ecn["max_kb"]), ecn_expected, observed)
    return checks


def _mlag_checks(structured, parsed, unavailable) -> list[dict]:
    name, intent = structured["switch"], structured["mlag"]
    ipl = intent["ipl"]
    mlag = parsed.get("mlag")
    checks = []
    expected_ipl = f"Po{ipl['port_channel']} vlan {ipl['vlan']} peer {ipl['peer_address']}"
    mpo_count = len(structured.get("mlag_port_channels") or [])
    if mlag is None:
        observed = unavailable("mlag")
        for check_id, scope in (
            ("mlag.enabled", "local"),
            ("mlag.system_mac", "local"),
            ("mlag.ipl_config", "local"),
            ("mlag.oper", "pair"),
            ("mlag.ipl_state", "pair"),
            ("mlag.mpo_status", "pair"),
        ):
            checks.append(check(check_id, name, "fail", "readable", observed, "", scope=scope))
    else:
        checks.append(
            check(
                "mlag.enabled",
                name,
                "pass" if mlag["admin"] == "Enabled" else "fail",
                "Admin status: Enabled",
                f"Admin status: {mlag['admin']}",
                "",
                scope="local",
            )
        )
        checks.append(
            check(
                "mlag.system_mac",
                name,
                "pass"
                if mlag["system_mac"] == intent["system_mac"] and not mlag["mismatched"]
                else "fail",
                f"System-mac: {intent['system_mac']}",
                f"System-mac: {mlag['system_mac_raw']}",
                "",
                scope="local",
            )
        )
        row = next((r for r in mlag["ipls"] if r["id"] == ipl["id"]), None)
        observed_ipl = (
            f"Po{row['port_channel']} vlan {row['vlan']} peer {row['peer_ip']}"
            if row
            else "no IPL row"
        )
        checks.append(
            check(
                "mlag.ipl_config",
                name,
                "pass" if observed_ipl == expected_ipl else "fail",
                expected_ipl,
                observed_ipl,
                "",
                scope="local",
            )
        )
        checks.append(
            check(
                "mlag.oper",
                name,
                "pass" if mlag["oper"] == "Up" else "fail",
                "Operational status: Up",
                f"Operational status: {mlag['oper']}",
                "",
                scope="pair",
            )
        )
        checks.append(
            check(
                "mlag.ipl_state",
                name,
                "pass" if bool(row) and row["state"] == "Up" else "fail",
                f"IPL {ipl['id']} Up",
                f"IPL {ipl['id']} {row['state'] if row else 'missing'}",
                "",
                scope="pair",
            )
        )
        observed = (
            f"Inactive {mlag['inactive']}, Active-partial {mlag['active_partial']}, "
            f"Active-full {mlag['active_full']}"
        )
        checks.append(
            check(
                "mlag.mpo_status",
                name,
                "pass"
                if mlag["inactive"] == 0
                and mlag["active_partial"] == 0
                and mlag["active_full"] == mpo_count
                else "fail",
                f"Inactive 0, Active-partial 0, Active-full {mpo_count}",
                observed,
                "",
                scope="pair",
            )
        )

    vip = parsed.get("mlag_vip")
    if vip is None:
        checks.append(
            check(
                "mlag_vip.nodes",
                name,
                "fail",
                "Active nodes: 2, one master, one standby",
                unavailable("mlag_vip"),
                "",
                scope="pair",
            )
        )
        checks.append(
            check(
                "mlag_vip.address",
                name,
                "fail",
                f"{intent['domain']} {intent['vip']}",
                unavailable("mlag_vip"),
                "",
                scope="local",
            )
        )
    else:
        states = sorted(node["state"] for node in vip["nodes"])
        ok = vip["active_nodes"] == 2 and states == ["master", "standby"]
        checks.append(
            check(
                "mlag_vip.nodes",
                name,
                "pass" if ok else "fail",
                "Active nodes: 2, one master, one standby",
                f"Active nodes: {vip['active_nodes']}, states: {', '.join(states) or 'none'}",
                "",
                scope="pair",
            )
        )
        checks.append(
            check(
                "mlag_vip.address",
                name,
                "pass"
                if vip["group"] == intent["domain"] and vip["vip"] == intent["vip"]
                else "fail",
                f"{intent['domain']} {intent['vip']}",
                f"{vip['group']} {vip['vip']}",
                "",
                scope="local",
            )
        )

    mpos = parsed.get("mpo")
    for mpo in structured.get("mlag_port_channels") or []:
        check_id = f"mpo.{mpo['id']}"
        if mpos is None:
            checks.append(
                check(
                    check_id, name, "fail", "(U), members (P)", unavailable("mpo"), "", scope="pair"
                )
            )
            continue
        row = mpos.get(mpo["id"])
        if row is None:
            checks.append(
                check(check_id, name, "fail", f"Mpo{mpo['id']}(U)", "not listed", "", scope="pair")
            )
            continue
        bad = [f"Eth{port}({flag})" for port, flag in row["ports"] if flag in ("S", "D")]
        observed = f"Mpo{mpo['id']}({row['flag']})" + (f", members {' '.join(bad)}" if bad else "")
        checks.append(
            check(
                check_id,
                name,
                "pass" if row["flag"] == "U" and not bad else "fail",
                f"Mpo{mpo['id']}(U), no member (S) or (D)",
                observed,
                "",
                scope="pair",
            )
        )
    return checks


def _magp_checks(structured, parsed, unavailable) -> list[dict]:
    name, checks = structured["switch"], []
    for gateway in structured["magp"]:
        base = f"magp.{gateway['instance']}"
        expected_cfg = f"vlan {gateway['vlan']} {gateway['virtual_ip']} {gateway['virtual_mac']}"
        if parsed is None:
            # Both checks fail: an unread state must not vanish from the report either.
            observed = unavailable("magp")
            checks.append(
                check(base + ".config", name, "fail", expected_cfg, observed, "", scope="local")
            )
            checks.append(
                check(
                    base + ".state",
                    name,
                    "fail",
                    "Admin Enabled, State Master",
                    observed,
                    "",
                    scope="pair",
                )
            )
            continue
        inst = parsed.get(gateway["instance"])
        observed_cfg = (
            f"vlan {inst['vlan']} {inst['virtual_ip']} {inst['virtual_mac']}"
            if inst
            else "instance missing"
        )
        checks.append(
            check(
                base + ".config",
                name,
                "pass" if observed_cfg == expected_cfg else "fail",
                expected_cfg,
                observed_cfg,
                "",
                scope="local",
            )
        )
        state = inst["state"] if inst else "missing"
        checks.append(
            check(
                base + ".state",
                name,
                "pass" if state == "Master" and (inst or {}).get("admin") == "Enabled" else "fail",
                "Admin Enabled, State Master",
                f"Admin {(inst or {}).get('admin')}, State {state}",
                "",
                scope="pair",
            )
        )
    return checks


def _vrrp_local_checks(structured, parsed, unavailable) -> list[dict]:
    name, checks = structured["switch"], []
    for gateway in structured["vrrp"]:
        check_id = f"vrrp.{gateway['vlan']}.{gateway['vrid']}.config"
        expected = f"address {gateway['virtual_ip']}, priority {gateway['priority']}"
        if parsed is None:
            checks.append(
                check(check_id, name, "fail", expected, unavailable("vrrp"), "", scope="local")
            )
            continue
        inst = parsed.get((gateway["vlan"], gateway["vrid"]))
        observed = (
            f"address {inst['virtual_ip']}, priority {inst['priority']}"
            if inst
            else "instance missing"
        )
        checks.append(
            check(
                check_id,
                name,
                "pass" if observed == expected else "fail",
                expected,
                observed,
                "",
                scope="local",
            )
        )
    return checks


def pair_checks(
    pair: str,
    structured: dict[str, dict],
    outputs: dict[str, dict],
    releases: dict[str, str | None] | None = None,
) -> list[dict]:
    """Checks that compare the two peers: same system MAC, one VRRP master per VRID.

    `releases` (switch -> release) says how each output was asked for (text when absent)."""
    checks, releases = [], releases or {}
    names = sorted(structured)
    first = structured[names[0]]
    if first.get("mlag"):
        macs = {}
        for switch in names:
            text = outputs.get(switch, {}).get("mlag")
            try:
                mlag = parse("mlag", text, releases.get(switch))
                macs[switch] = mlag["system_mac_raw"] or "unreadable"
            except ReadError:
                macs[switch] = "unreadable"
        values = set(macs.values())
        ok = (
            len(values) == 1
            and "unreadable" not in values
            and not any("mismatch" in v.lower() for v in values)
        )
        checks.append(
            check(
                "mlag.system_mac_equal",
                pair,
                "pass" if ok else "fail",
                f"System-mac {first['mlag']['system_mac']} on both peers",
                ", ".join(f"{k}: {v}" for k, v in macs.items()),
                "",
                scope="pair",
            )
        )
    for gateway in first.get("vrrp") or []:
        key = (gateway["vlan"], gateway["vrid"])
        states, unread = {}, []
        for switch in names:
            text = outputs.get(switch, {}).get("vrrp")
            try:
                if text is None:
                    raise _unreadable("show vrrp", "", "the command failed or was not run")
                inst = parse_show_vrrp(text).get(key)
            except ReadError as exc:
                # A partner that could not be read is not "no master there".
                states[switch] = str(exc)
                unread.append(switch)
                continue
            states[switch] = inst["state"] if inst else "instance absent"
        masters = [s for s, state in states.items() if state == "Master"]
        checks.append(
            check(
                f"vrrp.{key[0]}.{key[1]}.master",
                pair,
                "pass" if len(masters) == 1 and not unread else "fail",
                "exactly one Master",
                ", ".join(f"{k}: {v}" for k, v in states.items()),
                "",
                scope="pair",
            )
        )
    return checks
