"""Read Onyx running-config text into Statements (see statements.py).

Tolerates what differs between releases and between `show running-config`
and `show running-config expanded`:
  - `##` section comments, blank lines, leading indentation, `exit`;
  - compressed ranges: `interface ethernet 1/7-1/8 channel-group 1 mode active`,
    `interface mlag-port-channel 1-2 no shutdown`, `vlan 10-20`;
  - addresses as `a.b.c.d/len`, `a.b.c.d /len` or `a.b.c.d 255.255.255.0`;
  - `ip routing` or `ip routing vrf default`; `mtu 9216` with or without `force`;
  - quoted or bare names and descriptions; MAC addresses in any case.
Lines outside the managed classes are kept in `unknown` and never touched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...common.addressing import (
    AddressError,
    expand_ids,
    expand_ports,
    host_address,
    interface_address,
    mac,
    unquote,
)
from . import vrrp
from .statements import Statement

_SPACES = re.compile(r"\s+")
_INTERFACE = re.compile(
    r"^interface (ethernet|port-channel|mlag-port-channel|vlan) (\S+)(?: (.*))?$", re.IGNORECASE
)
_NEGATED_INTERFACE = re.compile(r"^no interface (\S+) (\S+) (.+)$", re.IGNORECASE)
_ADDRESS = r"(\d+\.\d+\.\d+\.\d+)\s*(?:(/\s*\d+)|\s+(\d+\.\d+\.\d+\.\d+))"

_GLOBAL = [
    (re.compile(r"^lacp$"), lambda m: [(("protocol", "lacp"), True)]),
    (re.compile(r"^ip routing(?: vrf default)?$"), lambda m: [(("protocol", "ip routing"), True)]),
    (
        re.compile(r"^protocol (mlag|magp|vrrp)$"),
        lambda m: [(("protocol", m.group(1)), True)],
    ),
    (
        re.compile(r"^dcb priority-flow-control enable(?: force)?$"),
        lambda m: [(("protocol", "dcb pfc"), True)],
    ),
    (
        re.compile(r"^dcb priority-flow-control priority ([0-7]) enable$"),
        lambda m: [(("pfc_priority", int(m.group(1))), True)],
    ),
    (re.compile(r"^no mlag shutdown$"), lambda m: [(("mlag_enabled",), True)]),
    (re.compile(r"^mlag shutdown$"), lambda m: []),
    (
        re.compile(r"^mlag system-mac (\S+)(?: \[\w+\])?$"),
        lambda m: [(("mlag_system_mac",), mac(m.group(1)))],
    ),
    (
        re.compile(r"^mlag-vip (\S+) ip " + _ADDRESS + r"(?: force)?$"),
        lambda m: [
            (("mlag_vip",), (m.group(1), interface_address(m.group(2), m.group(3) or m.group(4))))
        ],
    ),
    (re.compile(r"^mlag-vip (\S+)$"), lambda m: [(("mlag_vip",), (m.group(1), None))]),
    (
        re.compile(r"^vlan (\d+) name (.+)$"),
        lambda m: [(("vlan_name", int(m.group(1))), unquote(m.group(2)))],
    ),
    (
        re.compile(r"^vlan ([\d,\-]+)$"),
        lambda m: [(("vlan", v), True) for v in expand_ids(m.group(1))],
    ),
]

# `qos trust` modes as Onyx prints them.
_TRUST_MODES = {"l2": "L2", "l3": "L3", "both": "both", "port": "port"}

_ETHERNET = [
    (
        re.compile(r"^channel-group (\d+) mode (active|passive|on)$"),
        lambda p, m: [(("eth_channel", p), ("port-channel", int(m.group(1)), m.group(2)))],
    ),
    (
        re.compile(r"^mlag-channel-group (\d+) mode (active|passive|on)$"),
        lambda p, m: [(("eth_channel", p), ("mlag-port-channel", int(m.group(1)), m.group(2)))],
    ),
    (
        re.compile(r"^dcb priority-flow-control mode on(?: force)?$"),
        lambda p, m: [(("eth_pfc", p), True)],
    ),
    (
        re.compile(r"^qos trust (L2|L3|both|port)$", re.IGNORECASE),
        lambda p, m: [(("eth_trust", p), _TRUST_MODES[m.group(1).lower()])],
    ),
    (
        re.compile(
            r"^traffic-class ([0-7]) congestion-control ecn "
            r"minimum-absolute (\d+) maximum-absolute (\d+)$"
        ),
        lambda p, m: [(("eth_ecn", p, int(m.group(1))), (int(m.group(2)), int(m.group(3))))],
    ),
]

_PORT_CHANNEL = [
    (re.compile(r"^$"), lambda i, m: [(("po", i), True)]),
    (re.compile(r"^ipl (\d+)$"), lambda i, m: [(("po_ipl", i), int(m.group(1)))]),
    (re.compile(r"^mtu (\d+)(?: force)?$"), lambda i, m: [(("po_mtu", i), int(m.group(1)))]),
    (
        re.compile(r"^dcb priority-flow-control mode on(?: force)?$"),
        lambda i, m: [(("po_pfc", i), True)],
    ),
]

_VLAN_INTERFACE = [
    (re.compile(r"^$"), lambda i, m: [(("svi", i), True)]),
    (
        re.compile(r"^ip address " + _ADDRESS + r"(?: primary)?$"),
        lambda i, m: [(("svi_ip", i), interface_address(m.group(1), m.group(2) or m.group(3)))],
    ),
    (re.compile(r"^mtu (\d+)(?: force)?$"), lambda i, m: [(("svi_mtu", i), int(m.group(1)))]),
    (
        re.compile(r"^ipl (\d+) peer-address (\S+)$"),
        lambda i, m: [(("svi_ipl_peer", i), (int(m.group(1)), host_address(m.group(2))))],
    ),
    (re.compile(r"^magp (\d+)$"), lambda i, m: [(("magp", i, int(m.group(1))), True)]),
    (
        re.compile(r"^magp (\d+) ip virtual-router address (\S+)$"),
        lambda i, m: [(("magp_vip", i, int(m.group(1))), host_address(m.group(2)))],
    ),
    (
        re.compile(r"^magp (\d+) ip virtual-router mac-address (\S+)$"),
        lambda i, m: [(("magp_vmac", i, int(m.group(1))), mac(m.group(2)))],
    ),
]

# VRRP: the read patterns of the one dialect table (vrrp.py, unconfirmed on a real switch).
_VRRP_VALUES = {"vrrp_address": host_address, "vrrp_priority": int, "vrrp_interval": int}


def _vrrp_reader(kind: str):
    convert = _VRRP_VALUES.get(kind)
    return lambda i, m: [((kind, i, int(m.group(1))), convert(m.group(2)) if convert else True)]


_VLAN_INTERFACE += [(form.read, _vrrp_reader(kind)) for kind, form in vrrp.FORMS.items()]

_MLAG_PORT_CHANNEL = [
    (re.compile(r"^$"), lambda i, m: [(("mpo", i), True)]),
    (re.compile(r"^no shutdown$"), lambda i, m: [(("mpo_enabled", i), True)]),
    (re.compile(r"^shutdown$"), lambda i, m: []),
    (re.compile(r"^mtu (\d+)(?: force)?$"), lambda i, m: [(("mpo_mtu", i), int(m.group(1)))]),
    (
        re.compile(r"^description (.+)$"),
        lambda i, m: [(("mpo_description", i), unquote(m.group(1)))],
    ),
    (
        re.compile(r"^switchport mode (access|trunk|hybrid)$"),
        lambda i, m: [(("mpo_mode", i), m.group(1))],
    ),
    (
        re.compile(r"^switchport access vlan (\d+)$"),
        lambda i, m: [(("mpo_access_vlan", i), int(m.group(1)))],
    ),
    (
        re.compile(r"^switchport (?:hybrid|trunk) allowed-vlan (?:add )?([\d,\-]+)$"),
        lambda i, m: [(("mpo_allowed", i, v), True) for v in expand_ids(m.group(1))],
    ),
]

_INTERFACE_TABLES = {
    "port-channel": _PORT_CHANNEL,
    "vlan": _VLAN_INTERFACE,
    "mlag-port-channel": _MLAG_PORT_CHANNEL,
}


@dataclass
class ParsedConfig:
    """Statements by key, in the order they were read, plus what was not understood."""

    statements: dict[tuple, Statement] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    header: dict[str, str] = field(default_factory=dict)

    def get(self, key: tuple, default=None):
        statement = self.statements.get(key)
        return statement.value if statement else default

    def keys_of(self, kind: str) -> list[tuple]:
        return [key for key in self.statements if key[0] == kind]


def _normalise(line: str) -> str:
    return _SPACES.sub(" ", line.strip())


def _match(table, args, rest: str):
    for pattern, build in table:
        match = pattern.match(rest)
        if match:
            return build(*args, match)
    return None


def _interface_statements(kind: str, ids: str, rest: str):
    """Statements of one `interface <kind> <range> <rest>` line, or None if not managed."""
    kind = kind.lower()
    if kind == "ethernet":
        found = []
        for port in expand_ports(ids):
            items = _match(_ETHERNET, (port,), rest)
            if items is None:
                return None
            found.extend(items)
        return found
    found = []
    for number in expand_ids(ids):
        items = _match(_INTERFACE_TABLES[kind], (number,), rest)
        if items is None:
            return None
        found.extend(items)
    return found


_HEADER = re.compile(
    r"^##\s*(Hostname|Product release|Running database)\s*:?\s*\"?([^\"]+?)\"?\s*$"
)


def parse_running_config(text: str) -> ParsedConfig:
    """Statements of a running-config (or of a rendered intended config)."""
    parsed = ParsedConfig()
    for number, raw in enumerate((text or "").splitlines(), start=1):
        line = _normalise(raw)
        if not line or line == "exit":
            continue
        if line.startswith("#"):
            header = _HEADER.match(line)
            if header:
                parsed.header[header.group(1).lower()] = header.group(2).strip()
            continue
        try:
            # `no interface vlan 10 vrrp 10 preempt` == `interface vlan 10 no vrrp 10 preempt`
            negated = _NEGATED_INTERFACE.match(line)
            if negated:
                line = f"interface {negated.group(1)} {negated.group(2)} no {negated.group(3)}"
            interface = _INTERFACE.match(line)
            if interface:
                items = _interface_statements(
                    interface.group(1), interface.group(2), (interface.group(3) or "").strip()
                )
            else:
                items = _match(_GLOBAL, (), line)
        except AddressError as exc:
            parsed.warnings.append(f"line {number}: {line!r}: {exc}")
            parsed.unknown.append(line)
            continue
        if items is None:
            parsed.unknown.append(line)
            continue
        for key, value in items:
            if key in (("vlan", 1), ("vlan_name", 1)):
                # VLAN 1 always exists and is never created, renamed or deleted.
                continue
            parsed.statements[key] = Statement(key=key, value=value, line=line)
    return parsed
