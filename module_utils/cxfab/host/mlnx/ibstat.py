"""Parse `ibstat` (rdma-core infiniband-diags): the state of InfiniBand ports.

Two layouts, both from ibstat.c. Without arguments every CA is listed::

    CA 'mlx5_0'
        CA type: MT4119
        ...
        Port 1:
                State: Active
                Physical state: LinkUp
                Rate: 100
                Base lid: 7
                LMC: 0
                SM lid: 1
                Capability mask: 0x2659e848
                Port GUID: 0xb8cef60300a1b2c0
                Link layer: InfiniBand

`ibstat <ca> <port>` prints `CA: '<ca>'` then that one port without indentation.
`Rate` is Gb/s as an integer, `2.5` for 1x SDR, or `40 (FDR10)`; `Link layer` is
`InfiniBand` (or `IB` from old libibumad) or `Ethernet` on a RoCE port.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

_CA_RE = re.compile(r"^CA:? '(?P<name>[^']+)'\s*$")
_PORT_RE = re.compile(r"^Port (?P<port>\d+):\s*$")
_FIELD_RE = re.compile(r"^(?P<key>[A-Za-z][A-Za-z ]*?):\s*(?P<value>.*?)\s*$")
_RATE_RE = re.compile(r"^(?P<gbps>\d+(?:\.\d+)?)(?:\s*\((?P<note>[^)]*)\))?$")
PORT_FIELDS = ("State", "Physical state", "Rate", "Base lid", "SM lid", "Link layer")


class IbstatParseError(ValueError):
    """The text is not ibstat output, or a port lacks a field the checks need."""


@dataclass(frozen=True)
class IbPort:
    ca: str
    port: int
    state: str
    physical_state: str
    rate_gbps: float
    rate_note: str | None
    base_lid: int
    sm_lid: int
    link_layer: str

    @property
    def infiniband(self) -> bool:
        return self.link_layer in ("InfiniBand", "IB")

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def _excerpt(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()][:3]
    return " | ".join(lines) if lines else "(empty output)"


def _port(ca: str, number: int, fields: dict[str, str]) -> IbPort:
    missing = [key for key in PORT_FIELDS if key not in fields]
    if missing:
        raise IbstatParseError(f"ibstat: {ca} port {number} has no {', '.join(missing)}")
    rate = _RATE_RE.match(fields["Rate"])
    try:
        if not rate:
            raise ValueError(fields["Rate"])
        return IbPort(
            ca=ca,
            port=number,
            state=fields["State"],
            physical_state=fields["Physical state"],
            rate_gbps=float(rate.group("gbps")),
            rate_note=rate.group("note"),
            base_lid=int(fields["Base lid"], 0),
            sm_lid=int(fields["SM lid"], 0),
            link_layer=fields["Link layer"],
        )
    except ValueError as exc:
        raise IbstatParseError(f"ibstat: {ca} port {number}: unreadable value {exc}") from None


def parse_ibstat(text: str) -> dict[str, dict[int, IbPort]]:
    """{ca: {port: IbPort}} of every port in the output; IbstatParseError otherwise."""
    cas: dict[str, dict[int, IbPort]] = {}
    ca = None
    port = None
    fields: dict[str, str] = {}

    def close():
        if ca is not None and port is not None:
            cas[ca][port] = _port(ca, port, fields)

    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if match := _CA_RE.match(line):
            close()
            ca, port, fields = match.group("name"), None, {}
            cas.setdefault(ca, {})
        elif match := _PORT_RE.match(line):
            if ca is None:
                raise IbstatParseError(f"ibstat: a port before any CA line: {_excerpt(text)}")
            close()
            port, fields = int(match.group("port")), {}
        elif (match := _FIELD_RE.match(line)) and port is not None:
            fields[match.group("key")] = match.group("value")
    close()
    if not cas:
        raise IbstatParseError(f"ibstat: no CA in the output: {_excerpt(text)}")
    return cas


def port_of(text: str, ca: str, number: int) -> IbPort:
    """The one port `ibstat <ca> <number>` was asked for."""
    ports = parse_ibstat(text).get(ca)
    if not ports or number not in ports:
        raise IbstatParseError(f"ibstat: no port {number} of {ca} in: {_excerpt(text)}")
    return ports[number]
