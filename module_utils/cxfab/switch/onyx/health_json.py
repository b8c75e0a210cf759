"""Parsers of `show ... | json-print` for the health reads.

Each returns the same dict as its text twin in health.py, so the checks do not
know which one read the switch. Both json-print shapes are read whatever the
release: the list of dicts carrying a "header" key (before 3.6.6000) and the
list of {"<name>": [ {...} ]} (3.6.6000 on), plus the single dict some
commands print for one record. Counters become ints here and are compared as
numbers, never as strings. A reply that is not JSON, or lacks a field a check
needs, raises ReadError naming the command, the release and the first lines.
"""

from __future__ import annotations

import json
import re

from ...common.addressing import AddressError, mac
from .readerror import ReadError, unreadable
from .version import normalise_json_print

_MPO_NAME = re.compile(r"Mpo(\d+)\((\w)\)")
_PORT_FLAG = re.compile(r"Eth(\d+/\d+(?:/\d+)?)\((\w)\)")
_MAGP_NAME = re.compile(r"^\s*MAGP\s+(\d+)\s*$")


class _Reply:
    """One json-print reply and what an error about it must say."""

    def __init__(self, command: str, text: str, release: str | None):
        self.command, self.text, self.release = command, text, release or "unknown"
        try:
            self.data = json.loads(text or "")
        except ValueError as exc:
            raise self.error(f"not JSON ({exc})") from None

    def error(self, what: str) -> ReadError:
        return unreadable(
            f"{self.command} | json-print", self.text, f"{what}, release {self.release}"
        )

    def fields(self, data=None) -> dict:
        """A record as one flat dict: {..}, [{..}, {..}] (merged) or [{..}] all read alike."""
        data = self.data if data is None else data
        if isinstance(data, dict):
            return data
        if isinstance(data, list) and all(isinstance(part, dict) for part in data):
            merged: dict = {}
            for part in data:
                merged.update(part)
            return merged
        raise self.error(f"expected an object, got {type(data).__name__}")

    def require(self, record: dict, keys, where: str = "") -> None:
        missing = [key for key in keys if key not in record]
        if missing:
            raise self.error(f"no {', '.join(repr(k) for k in missing)}{where}")

    def number(self, record: dict, key: str) -> int:
        self.require(record, (key,))
        value = str(record[key]).strip()
        if not value.isdigit():
            raise self.error(f"{key!r} is {record.get(key)!r}, not a number")
        return int(value)

    def items(self, data) -> dict[str, dict]:
        """Named records in either shape (and the single-record dict)."""
        if data in ([], {}):
            return {}
        try:
            # The shape is read from the entries; an unknown release reads as the newest.
            shape_release = self.release if self.release[:1].isdigit() else "99.0.0"
            items = normalise_json_print(data, shape_release)
        except (AttributeError, TypeError, ValueError):
            raise self.error("records are neither header-list nor named-list") from None
        if not all(isinstance(value, dict) for value in items.values()):
            raise self.error("a record is not an object")
        return items


def _summary(reply: _Reply, top: dict, key: str) -> dict:
    if key not in top:
        raise reply.error(f"no {key!r}")
    return reply.fields(top[key])


def parse_show_mlag(text: str, release: str | None) -> dict:
    reply = _Reply("show mlag", text, release)
    top = reply.fields()
    reply.require(top, ("Admin status", "Operational status", "System-mac"))
    status = _summary(reply, top, "MLAG Ports Status Summary")
    raw_mac = str(top["System-mac"])
    try:
        system_mac = mac(raw_mac) if raw_mac else None
    except AddressError:
        system_mac = None
    configured = reply.fields(top.get("MLAG Ports Configuration Summary") or {})
    result = {
        "admin": top["Admin status"],
        "oper": top["Operational status"],
        "system_mac": system_mac,
        "system_mac_raw": raw_mac,
        "mismatched": "mismatch" in raw_mac.lower(),
        "configured": reply.number(configured, "Configured")
        if "Configured" in configured
        else None,
        "inactive": reply.number(status, "Inactive"),
        "active_partial": reply.number(status, "Active-partial"),
        "active_full": reply.number(status, "Active-full"),
        "ipls": [],
        "members": [],
    }
    # No IPL summary means no IPL: the IPL checks then fail on "no IPL row".
    ipls = top.get("MLAG IPLs Summary") or {}
    if not isinstance(ipls, dict):
        ipls = reply.items(ipls)
    for ipl_id, rows in ipls.items():
        row = reply.fields(rows)
        where = f" in IPL {ipl_id}"
        reply.require(row, ("Group Port-Channel", "Vlan Interface", "Operational State"), where)
        port_channel = str(row["Group Port-Channel"]).removeprefix("Po")
        if not str(ipl_id).isdigit() or not port_channel.isdigit():
            raise reply.error(f"IPL {ipl_id!r} on {row['Group Port-Channel']!r} is not numbered")
        vlan = str(row["Vlan Interface"])
        result["ipls"].append(
            {
                "id": int(ipl_id),
                "port_channel": int(port_channel),
                "vlan": int(vlan) if vlan.isdigit() else None,
                "state": row["Operational State"],
                "local_ip": row.get("Local IP address"),
                "peer_ip": row.get("Peer IP address"),
            }
        )
    return result


def parse_show_mlag_vip(text: str, release: str | None) -> dict:
    reply = _Reply("show mlag-vip", text, release)
    top = reply.fields()
    header = _summary(reply, top, "MLAG-VIP")
    reply.require(header, ("MLAG group name", "MLAG VIP address", "Active nodes"))
    nodes = []
    for host, rows in top.items():
        if host == "MLAG-VIP":
            continue
        row = reply.fields(rows)
        reply.require(row, ("VIP-State", "IP Address"), f" for node {host!r}")
        nodes.append(
            {"hostname": host, "state": str(row["VIP-State"]).lower(), "ip": row["IP Address"]}
        )
    active = reply.number(header, "Active nodes")
    if len(nodes) != active:
        raise reply.error(f"{len(nodes)} node record(s) for Active nodes {active}")
    return {
        "group": header["MLAG group name"],
        "vip": str(header["MLAG VIP address"]).replace(" ", "") or None,
        "active_nodes": active,
        "nodes": nodes,
    }


def parse_mpo_summary(text: str, release: str | None) -> dict[int, dict]:
    reply = _Reply("show interfaces mlag-port-channel summary", text, release)
    top = reply.fields()
    if "MLAG Port-Channel Summary" not in top:
        raise reply.error("no 'MLAG Port-Channel Summary'")
    mpos = {}
    for name, row in reply.items(top["MLAG Port-Channel Summary"]).items():
        head = _MPO_NAME.search(name)
        local = next((v for k, v in row.items() if k.startswith("Local Ports")), None)
        if head is None or local is None:
            raise reply.error(f"MPO record {name!r} has no Mpo<n>(<flag>) name or Local Ports")
        peer = next((v for k, v in row.items() if k.startswith("Peer Ports")), "")
        mpos[int(head.group(1))] = {
            "flag": head.group(2),
            "type": row.get("Type"),
            "ports": _PORT_FLAG.findall(str(local)),
            "peer_ports": _PORT_FLAG.findall(str(peer)),
        }
    return mpos


def parse_show_magp(text: str, release: str | None) -> dict[int, dict]:
    reply = _Reply("show magp", text, release)
    result = {}
    for name, fields in reply.items(reply.data).items():
        head = _MAGP_NAME.match(name)
        if head is None:
            raise reply.error(f"record {name!r} is not `MAGP <n>`")
        reply.require(fields, ("Interface vlan", "State", "Admin state"), f" in {name!r}")
        result[int(head.group(1))] = {
            "vlan": reply.number(fields, "Interface vlan"),
            "admin": fields["Admin state"],
            "state": fields["State"],
            "virtual_ip": fields.get("Virtual IP"),
            "virtual_mac": (str(fields.get("Virtual MAC") or "")).upper() or None,
        }
    return result


def parse_configuration_files(text: str, release: str | None) -> dict:
    reply = _Reply("show configuration files", text, release)
    top = reply.fields()
    unsaved = str(top.get("Unsaved changes", "")).strip().lower()
    if unsaved not in ("yes", "no"):
        raise reply.error("no 'Unsaved changes': yes|no")
    return {"active": top.get("Active configuration"), "unsaved": unsaved == "yes"}
