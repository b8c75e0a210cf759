"""Read Onyx running-config text into Statements (see statements.py).

Tolerates what differs between releases and between `show running-config`
and `show running-config expanded`:
  - `##` section comments, blank lines, leading indentation, `exit`;
  - compressed ranges: `interface ethernet 1/7-1/8 channel-group 1 mode active`,
    `interface mlag-port-channel 1-2 no shutdown`, `vlan 10-20`;
  - addresses as `a.b.c.d/len`, `a.b.c.d /len` or `a.b.c.d 255.255.255.0`;
  - `ip routing` or `ip routing vrf default`; `mtu 9216` with or without `force`;
  - quoted or bare names and descriptions; MAC addresses in any case.
What each line means comes from the statement table (statements.py); lines no
row reads are kept in `unknown` and never touched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...common.addressing import AddressError, expand_ids, expand_ports
from .statements import TABLE, Statement, Table

_SPACES = re.compile(r"\s+")
_INTERFACE = re.compile(
    r"^interface (ethernet|port-channel|mlag-port-channel|vlan) (\S+)(?: (.*))?$", re.IGNORECASE
)
_NEGATED_INTERFACE = re.compile(r"^no interface (\S+) (\S+) (.+)$", re.IGNORECASE)
# VLAN 1 always exists and is never created, renamed or deleted.
_VLAN_ONE = (("vlan", 1), ("vlan_name", 1))


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


def _interface_statements(table: Table, kind: str, ids: str, rest: str):
    """Statements of one `interface <kind> <range> <rest>` line, or None if not managed."""
    kind = kind.lower()
    found = []
    for ident in expand_ports(ids) if kind == "ethernet" else expand_ids(ids):
        items = table.read(kind, ident, rest)
        if items is None:
            return None
        found.extend(items)
    return found


_HEADER = re.compile(
    r"^##\s*(Hostname|Product release|Running database)\s*:?\s*\"?([^\"]+?)\"?\s*$"
)


def parse_running_config(text: str, table: Table = TABLE) -> ParsedConfig:
    """Statements of a running-config (or of a rendered intended config), read by `table`."""
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
                    table,
                    interface.group(1),
                    interface.group(2),
                    (interface.group(3) or "").strip(),
                )
            else:
                items = table.read("global", None, line)
        except AddressError as exc:
            parsed.warnings.append(f"line {number}: {line!r}: {exc}")
            parsed.unknown.append(line)
            continue
        if items is None:
            parsed.unknown.append(line)
            continue
        for key, value in items:
            if key in _VLAN_ONE:
                continue
            parsed.statements[key] = Statement(key=key, value=value, line=line)
    return parsed
