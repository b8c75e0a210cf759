"""The objects of an emulated Onyx switch's configuration, and the argument parsers
its commands share.

`model.SwitchConfig` holds these objects and takes the global commands;
`interface_commands.InterfaceCommands` takes the commands typed under an interface.
A refused value raises `CliError` with the message the switch prints.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

ETHERNET_PORTS = [f"1/{n}" for n in range(1, 37)]
MTU_MIN, MTU_MAX = 1500, 9216
MAC_RE = re.compile(r"^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$")
PROTOCOLS = ("mlag", "magp", "vrrp")
TRUST_MODES = ("L2", "L3", "both", "port")
ECN_MAX_KB = 16000


class CliError(Exception):
    """A command the switch refuses; the message is printed as is (starts with %)."""


class Unrecognized(CliError):
    """The command (or a keyword of it) is not known in this context."""

    def __init__(self, word: str, kind: str = "command"):
        super().__init__(f'% Unrecognized {kind} "{word}".\nType "?" for help.')


@dataclass
class Member:
    kind: str  # "port-channel" or "mlag-port-channel"
    group: int
    mode: str  # on | active | passive


@dataclass
class Ethernet:
    name: str
    member: Member | None = None
    mtu: int = 1500
    shutdown: bool = False
    pfc: bool = False
    speed: str | None = None
    description: str | None = None
    trust: str = "L2"  # Onyx's default: classify by PCP
    # traffic class -> (minimum-absolute, maximum-absolute) KB of ECN marking
    ecn: dict[int, tuple[int, int]] = field(default_factory=dict)


@dataclass
class Switchport:
    mode: str = "access"
    access_vlan: int = 1
    allowed: set[int] = field(default_factory=set)


@dataclass
class PortChannel:
    id: int
    ipl: int | None = None
    mtu: int = 1500
    shutdown: bool = False
    pfc: bool = False
    description: str | None = None
    switchport: Switchport = field(default_factory=Switchport)


@dataclass
class MlagPortChannel:
    id: int
    description: str | None = None
    mtu: int = 1500
    shutdown: bool = True  # an MPO is created administratively down
    lacp_individual: bool = False
    switchport: Switchport = field(default_factory=Switchport)


@dataclass
class Magp:
    id: int
    address: str | None = None
    mac: str | None = None


@dataclass
class Vrrp:
    vrid: int
    address: str | None = None
    priority: int = 100
    preempt: bool = True  # RFC 5798 default
    shutdown: bool = False
    advertisement_interval: int = 1


@dataclass
class Svi:
    vlan: int
    ip: ipaddress.IPv4Interface | None = None
    mtu: int = 1500
    shutdown: bool = False
    ipl_peer: tuple[int, str] | None = None
    magp: dict[int, Magp] = field(default_factory=dict)
    vrrp: dict[int, Vrrp] = field(default_factory=dict)


# ---------------------------------------------------------------------- argument helpers
def negation_after_prefix(sub: list[str], negate: bool) -> tuple[bool, list[str]]:
    """`interface vlan 10 magp 10 no ip virtual-router address`: the flat form of a
    negation typed inside the instance's sub-mode (the form mellanox.onyx's onyx_magp
    sends; cxfab's VRRP removals follow it)."""
    if sub[:1] == ["no"]:
        if negate or len(sub) == 1:
            raise CliError("% Incomplete command.")
        return True, sub[1:]
    return negate, sub


def need(args: list[str], count: int) -> None:
    if len(args) < count:
        raise CliError("% Incomplete command.")


def no_extra(args: list[str]) -> None:
    if args:
        raise Unrecognized(args[0], "keyword")


def arg_at(args: list[str], index: int) -> str:
    if len(args) <= index:
        raise CliError("% Incomplete command.")
    return args[index]


def int_in(text: str, low: int, high: int) -> int:
    if not text.isdigit() or not low <= int(text) <= high:
        raise CliError(f"% Value {text} is out of range ({low}-{high})")
    return int(text)


def parse_mtu(rest: list[str]) -> int:
    value = int_in(arg_at(rest, 1), MTU_MIN, MTU_MAX)
    if rest[2:] not in ([], ["force"]):
        raise Unrecognized(rest[2], "keyword")
    return value


def parse_vlan(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 4094:
        raise CliError(f"% Invalid VLAN ID {text} (valid range is 1-4094)")
    return int(text)


def parse_vlan_list(text: str) -> list[int]:
    vlans: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        first, last = parse_vlan(low), parse_vlan(high or low)
        if last < first:
            raise CliError(f"% Invalid VLAN range {part}")
        vlans.extend(range(first, last + 1))
    return vlans


def parse_id_range(text: str, low: int, high: int) -> list[int]:
    first, _, last = text.partition("-")
    start, end = int_in(first, low, high), int_in(last or first, low, high)
    if end < start:
        raise CliError(f"% Invalid interface range {text}")
    return list(range(start, end + 1))


def parse_ethernet_range(text: str) -> list[str]:
    match = re.fullmatch(r"1/(\d+)(?:-(?:1/)?(\d+))?", text)
    if not match:
        raise CliError(f"% Invalid interface ethernet {text}")
    first = int(match.group(1))
    last = int(match.group(2) or first)
    names = [f"1/{n}" for n in range(first, last + 1)]
    if not names or any(name not in ETHERNET_PORTS for name in names):
        raise CliError(f"% Interface ethernet {text} does not exist")
    return names


def parse_ip(text: str) -> ipaddress.IPv4Interface:
    """a.b.c.d/len, a.b.c.d/255.255.255.0 or a bare a.b.c.d (host)."""
    try:
        iface = ipaddress.IPv4Interface(text)
    except ValueError:
        raise CliError(f"% Invalid IP address {text}") from None
    if "/" in text and iface.network.prefixlen == 0:
        raise CliError(f"% Invalid prefix length in {text}")
    return iface
