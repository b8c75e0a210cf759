"""Configuration model of one emulated switch and the config-mode command set.

Commands are taken in the flat form a running-config uses (`interface vlan 10
ip address 10.0.10.2/24`). Sub-modes (`interface vlan 10`, `mlag`, ...) are
handled by the CLI, which prefixes the sub-mode to each line before calling
`SwitchConfig.apply`.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from dataclasses import dataclass, field

# The SX1036 of seed 001: 36 QSFP ports.
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


@dataclass
class SwitchConfig:
    hostname: str
    protocols: set[str] = field(default_factory=set)
    lacp: bool = False
    # NVIDIA's LLDP page: `lldp` / `no lldp` (on by default from 3.8.2000; a fresh
    # emulated switch starts with it off, as the 3.6 running-configs show it set).
    lldp: bool = False
    ip_routing: bool = False
    pfc_global: bool = False
    pfc_priorities: set[int] = field(default_factory=set)
    vlans: dict[int, str | None] = field(default_factory=lambda: {1: None})
    ethernets: dict[str, Ethernet] = field(
        default_factory=lambda: {name: Ethernet(name) for name in ETHERNET_PORTS}
    )
    port_channels: dict[int, PortChannel] = field(default_factory=dict)
    mpos: dict[int, MlagPortChannel] = field(default_factory=dict)
    svis: dict[int, Svi] = field(default_factory=dict)
    mlag_shutdown: bool = True
    system_mac: str | None = None
    vip: tuple[str, str, int] | None = None  # domain, address, prefix length

    # ------------------------------------------------------------------ entry point
    def apply(self, line: str) -> str | None:
        """Apply one flat config line. Return the sub-mode it enters, if any."""
        try:
            words = shlex.split(line)
        except ValueError as exc:
            raise CliError(f"% Invalid quoting: {exc}") from None
        if not words:
            return None
        negate = words[0] == "no"
        if negate:
            words = words[1:]
            if not words:
                raise CliError("% Incomplete command.")
        head = words[0]
        handler = _TOP.get(head)
        if handler is None:
            raise Unrecognized(head)
        return handler(self, words[1:], negate)

    # ------------------------------------------------------------------ globals
    def _hostname(self, args: list[str], negate: bool) -> None:
        if negate:
            return
        _need(args, 1)
        self.hostname = args[0]

    def _lacp(self, args: list[str], negate: bool) -> None:
        _no_extra(args)
        self.lacp = not negate

    def _lldp(self, args: list[str], negate: bool) -> None:
        _no_extra(args)
        self.lldp = not negate

    def _ip(self, args: list[str], negate: bool) -> None:
        if not args or args[0] != "routing":
            raise Unrecognized(args[0] if args else "ip", "keyword")
        if args[1:] not in ([], ["vrf", "default"]):
            raise Unrecognized(args[1], "keyword")
        self.ip_routing = not negate

    def _protocol(self, args: list[str], negate: bool) -> None:
        _need(args, 1)
        name = args[0]
        if name not in PROTOCOLS:
            raise Unrecognized(name, "keyword")
        if not negate:
            self.protocols.add(name)
            return
        # "no protocol X" also deletes that protocol's database (NVIDIA docs).
        self.protocols.discard(name)
        if name == "mlag":
            self._drop_mlag_database()
        for svi in self.svis.values():
            if name == "magp":
                svi.magp.clear()
            if name == "vrrp":
                svi.vrrp.clear()

    def _drop_mlag_database(self) -> None:
        self.mlag_shutdown = True
        self.system_mac = None
        self.vip = None
        for po in self.port_channels.values():
            po.ipl = None
        for svi in self.svis.values():
            svi.ipl_peer = None
        for eth in self.ethernets.values():
            if eth.member and eth.member.kind == "mlag-port-channel":
                eth.member = None
        self.mpos.clear()

    def _dcb(self, args: list[str], negate: bool) -> None:
        if args[:2] == ["priority-flow-control", "priority"]:
            # dcb priority-flow-control priority <0-7> enable
            priority = _int(_arg(args, 2), 0, 7)
            if args[3:] != ["enable"]:
                raise Unrecognized(args[3] if len(args) > 3 else "priority", "keyword")
            if negate:
                self.pfc_priorities.discard(priority)
            else:
                self.pfc_priorities.add(priority)
            return
        if args[:2] != ["priority-flow-control", "enable"] or args[2:] not in ([], ["force"]):
            raise Unrecognized(" ".join(args) or "dcb", "keyword")
        self.pfc_global = not negate

    def _vlan(self, args: list[str], negate: bool) -> str | None:
        _need(args, 1)
        ids = parse_vlan_list(args[0])
        rest = args[1:]
        if rest:
            if rest[0] != "name" or len(ids) != 1:
                raise Unrecognized(rest[0], "keyword")
            vlan = ids[0]
            self._require_vlan(vlan)
            if negate:
                self.vlans[vlan] = None
            else:
                _need(rest, 2)
                self.vlans[vlan] = " ".join(rest[1:])
            return None
        if negate:
            for vlan in ids:
                self._delete_vlan(vlan)
            return None
        for vlan in ids:
            self.vlans.setdefault(vlan, None)
        return f"vlan {ids[0]}" if len(ids) == 1 else None

    def _delete_vlan(self, vlan: int) -> None:
        if vlan == 1:
            raise CliError("% Cannot delete default VLAN 1")
        if vlan not in self.vlans:
            return
        if vlan in self.svis:
            raise CliError(f"% Cannot delete VLAN {vlan}: interface vlan {vlan} exists")
        self.vlans.pop(vlan)
        for sp in self._switchports():
            sp.allowed.discard(vlan)
            if sp.access_vlan == vlan:
                sp.access_vlan = 1

    def _switchports(self) -> list[Switchport]:
        return [p.switchport for p in [*self.port_channels.values(), *self.mpos.values()]]

    def _require_vlan(self, vlan: int) -> None:
        if vlan not in self.vlans:
            raise CliError(f"% VLAN {vlan} does not exist")

    def _require_protocol(self, name: str, word: str) -> None:
        if name not in self.protocols:
            raise Unrecognized(word, "command" if word.startswith("mlag") else "keyword")

    def _mlag(self, args: list[str], negate: bool) -> str | None:
        self._require_protocol("mlag", "mlag")
        if not args:
            return None if negate else "mlag"
        if args == ["shutdown"]:
            self.mlag_shutdown = not negate
            return None
        if args[0] == "system-mac":
            if negate:
                self.system_mac = None
                return None
            _need(args, 2)
            if not MAC_RE.match(args[1]):
                raise CliError(f"% Invalid MAC address: {args[1]}")
            self.system_mac = args[1].upper()
            return None
        raise Unrecognized(args[0], "keyword")

    def _mlag_vip(self, args: list[str], negate: bool) -> None:
        self._require_protocol("mlag", "mlag-vip")
        if negate:
            self.vip = None
            return
        # mlag-vip <domain> ip <a.b.c.d> /<len> [force]   (also a.b.c.d/len)
        if len(args) < 3 or args[1] != "ip":
            raise CliError("% Incomplete command.")
        rest = args[2:]
        if rest and rest[-1] == "force":
            rest = rest[:-1]
        text = "".join(rest)
        iface = parse_ip(text.replace(" ", ""))
        self.vip = (args[0], str(iface.ip), iface.network.prefixlen)

    # ------------------------------------------------------------------ interfaces
    def _interface(self, args: list[str], negate: bool) -> str | None:
        _need(args, 2)
        kind, spec, rest = args[0], args[1], args[2:]
        if rest[:1] == ["no"]:  # running-config form: "interface mlag-port-channel 1 no shutdown"
            negate, rest = not negate, rest[1:]
            if not rest:
                raise CliError("% Incomplete command.")
        if kind == "ethernet":
            names = parse_ethernet_range(spec)
            if not rest:
                if negate:
                    raise CliError("% Cannot delete a physical interface")
                return f"interface ethernet {names[0]}" if len(names) == 1 else None
            for name in names:
                self._ethernet_cmd(self.ethernets[name], rest, negate)
            return None
        if kind in ("port-channel", "mlag-port-channel"):
            if kind == "mlag-port-channel":
                self._require_protocol("mlag", "mlag-port-channel")
            ids = parse_id_range(spec, 1, 4096 if kind == "port-channel" else 1000)
            table = self.port_channels if kind == "port-channel" else self.mpos
            if not rest:
                for number in ids:
                    if negate:
                        self._delete_lag(kind, number)
                    elif kind == "port-channel":
                        table.setdefault(number, PortChannel(number))
                    else:
                        table.setdefault(number, MlagPortChannel(number))
                if negate or len(ids) != 1:
                    return None
                return f"interface {kind} {ids[0]}"
            for number in ids:
                if number not in table:
                    raise CliError(f"% Interface {kind} {number} does not exist")
                if kind == "port-channel":
                    self._port_channel_cmd(table[number], rest, negate)
                else:
                    self._lag_common_cmd(table[number], rest, negate, mpo=True)
            return None
        if kind == "vlan":
            vlan = parse_vlan(spec)
            if not rest:
                if negate:
                    self._delete_svi(vlan)
                    return None
                self._require_vlan(vlan)
                self.svis.setdefault(vlan, Svi(vlan))
                return f"interface vlan {vlan}"
            if vlan not in self.svis:
                raise CliError(f"% Interface vlan {vlan} does not exist")
            return self._svi_cmd(self.svis[vlan], rest, negate)
        raise Unrecognized(kind, "keyword")

    def _delete_lag(self, kind: str, number: int) -> None:
        if kind == "port-channel":
            po = self.port_channels.get(number)
            if po and po.ipl is not None:
                raise CliError(
                    f"% Cannot delete port-channel {number}: it is configured as IPL {po.ipl}"
                )
            self.port_channels.pop(number, None)
        else:
            self.mpos.pop(number, None)
        for eth in self.ethernets.values():
            if eth.member and eth.member.kind == kind and eth.member.group == number:
                eth.member = None

    def _delete_svi(self, vlan: int) -> None:
        svi = self.svis.get(vlan)
        if svi is None:
            return
        if svi.ipl_peer:
            raise CliError(f"% Cannot delete interface vlan {vlan}: IPL {svi.ipl_peer[0]} uses it")
        if svi.magp or svi.vrrp:
            raise CliError(
                f"% Cannot delete interface vlan {vlan}: remove its MAGP/VRRP instances first"
            )
        self.svis.pop(vlan)

    def _ethernet_cmd(self, eth: Ethernet, rest: list[str], negate: bool) -> None:
        word = rest[0]
        if word in ("channel-group", "mlag-channel-group"):
            kind = "port-channel" if word == "channel-group" else "mlag-port-channel"
            if kind == "mlag-port-channel":
                self._require_protocol("mlag", word)
            if negate:
                if eth.member and eth.member.kind == kind:
                    eth.member = None
                return
            if len(rest) != 4 or rest[2] != "mode" or rest[3] not in ("on", "active", "passive"):
                raise CliError("% Incomplete command.")
            group = _int(rest[1], 1, 4096)
            table = self.port_channels if kind == "port-channel" else self.mpos
            if group not in table:
                raise CliError(f"% Interface {kind} {group} does not exist")
            current = eth.member
            if current and (current.kind, current.group) != (kind, group):
                raise CliError(
                    f"% Interface ethernet {eth.name} is already a member of "
                    f"{current.kind} {current.group}"
                )
            eth.member = Member(kind, group, rest[3])
            return
        if word == "speed":
            eth.speed = None if negate else _arg(rest, 1)
            return
        if word == "description":
            eth.description = None if negate else " ".join(rest[1:])
            return
        if word == "dcb":
            eth.pfc = self._pfc_arg(rest, negate)
            return
        if word == "qos":
            self._trust_cmd(eth, rest, negate)
            return
        if word == "traffic-class":
            self._ecn_cmd(eth, rest, negate)
            return
        if word == "mtu":
            eth.mtu = 1500 if negate else _mtu(rest)
            return
        if word == "shutdown":
            _no_extra(rest[1:])
            eth.shutdown = not negate
            return
        raise Unrecognized(word, "keyword")

    def _trust_cmd(self, eth: Ethernet, rest: list[str], negate: bool) -> None:
        """qos trust {L2|L3|both|port}; `no qos trust` restores L2."""
        if rest[1:2] != ["trust"]:
            raise Unrecognized(rest[1] if len(rest) > 1 else "qos", "keyword")
        if negate:
            _no_extra(rest[2:])
            eth.trust = "L2"
            return
        mode = _arg(rest, 2)
        if mode not in TRUST_MODES:
            raise Unrecognized(mode, "keyword")
        _no_extra(rest[3:])
        eth.trust = mode

    def _ecn_cmd(self, eth: Ethernet, rest: list[str], negate: bool) -> None:
        """traffic-class <tc> congestion-control ecn minimum-absolute <kb> maximum-absolute <kb>."""
        tc = _int(_arg(rest, 1), 0, 7)
        if rest[2:3] != ["congestion-control"]:
            raise Unrecognized(rest[2] if len(rest) > 2 else "traffic-class", "keyword")
        if negate:
            _no_extra(rest[3:])
            eth.ecn.pop(tc, None)
            return
        if rest[3:4] != ["ecn"] or rest[4:5] != ["minimum-absolute"]:
            raise Unrecognized(rest[3] if len(rest) > 3 else "congestion-control", "keyword")
        low = _int(_arg(rest, 5), 1, ECN_MAX_KB)
        if rest[6:7] != ["maximum-absolute"]:
            raise CliError("% Incomplete command.")
        high = _int(_arg(rest, 7), 1, ECN_MAX_KB)
        _no_extra(rest[8:])
        if low > high:
            raise CliError("% Minimum threshold must not be greater than maximum threshold")
        eth.ecn[tc] = (low, high)

    def _pfc_arg(self, rest: list[str], negate: bool) -> bool:
        if rest[1:3] != ["priority-flow-control", "mode"]:
            raise Unrecognized(rest[1] if len(rest) > 1 else "dcb", "keyword")
        if negate:
            return False
        if rest[3:] not in (["on"], ["on", "force"]):
            raise CliError("% Incomplete command.")
        if not self.pfc_global:
            raise CliError("% Priority flow control is not enabled globally")
        return True

    def _port_channel_cmd(self, po: PortChannel, rest: list[str], negate: bool) -> None:
        word = rest[0]
        if word == "ipl":
            self._require_protocol("mlag", "ipl")
            ipl_id = _int(_arg(rest, 1), 1, 1)
            if negate:
                if any(s.ipl_peer and s.ipl_peer[0] == ipl_id for s in self.svis.values()):
                    raise CliError(f"% Remove the peer-address of IPL {ipl_id} first")
                po.ipl = None
                return
            owner = next((p for p in self.port_channels.values() if p.ipl == ipl_id), None)
            if owner and owner is not po:
                raise CliError(f"% IPL {ipl_id} is already set on port-channel {owner.id}")
            po.ipl = ipl_id
            return
        if word == "dcb":
            po.pfc = self._pfc_arg(rest, negate)
            return
        self._lag_common_cmd(po, rest, negate, mpo=False)

    def _lag_common_cmd(
        self, lag: PortChannel | MlagPortChannel, rest: list[str], negate: bool, mpo: bool
    ) -> None:
        word = rest[0]
        if word == "mtu":
            lag.mtu = 1500 if negate else _mtu(rest)
        elif word == "shutdown":
            _no_extra(rest[1:])
            lag.shutdown = not negate
        elif word == "lacp-individual" and mpo:
            lag.lacp_individual = not negate
        elif word == "description":
            lag.description = None if negate else " ".join(rest[1:])
        elif word == "switchport":
            self._switchport_cmd(lag.switchport, rest[1:], negate)
        else:
            raise Unrecognized(word, "keyword")

    def _switchport_cmd(self, sp: Switchport, rest: list[str], negate: bool) -> None:
        _need(rest, 1)
        if rest[0] == "mode":
            if negate:
                sp.mode, sp.allowed = "access", set()
                return
            mode = _arg(rest, 1)
            if mode not in ("access", "trunk", "hybrid"):
                raise Unrecognized(mode, "keyword")
            if mode != sp.mode:
                sp.allowed = set()
            sp.mode = mode
            return
        if rest[0] == "access":
            if rest[1:2] != ["vlan"]:
                raise CliError("% Incomplete command.")
            if negate:
                sp.access_vlan = 1
                return
            vlan = parse_vlan(_arg(rest, 2))
            self._require_vlan(vlan)
            if sp.mode == "trunk":
                raise CliError("% Access VLAN cannot be set in trunk mode")
            sp.access_vlan = vlan
            return
        if rest[0] in ("hybrid", "trunk") and rest[1:2] == ["allowed-vlan"]:
            if sp.mode != rest[0]:
                raise CliError(f"% Interface is not in {rest[0]} mode")
            action = _arg(rest, 2)
            if action == "none":
                sp.allowed = set()
                return
            if action == "all":
                sp.allowed = set(self.vlans) - {1}
                return
            if action not in ("add", "remove"):
                raise Unrecognized(action, "keyword")
            vlans = parse_vlan_list(_arg(rest, 3))
            for vlan in vlans:
                # The NVIDIA build order adds a VLAN to an MPO before creating it.
                if action == "add":
                    sp.allowed.add(vlan)
                else:
                    sp.allowed.discard(vlan)
            return
        raise Unrecognized(rest[0], "keyword")

    def _svi_cmd(self, svi: Svi, rest: list[str], negate: bool) -> str | None:
        word = rest[0]
        if word == "ip":
            if rest[1:2] != ["address"]:
                raise Unrecognized(rest[1] if len(rest) > 1 else "ip", "keyword")
            if negate:
                if svi.ipl_peer:
                    raise CliError("% Remove the IPL peer-address first")
                svi.ip = None
                return None
            words = [w for w in rest[2:] if w != "primary"]
            if not words:
                raise CliError("% Incomplete command.")
            text = words[0] if len(words) == 1 else f"{words[0]}/{words[1]}"
            svi.ip = parse_ip(text.replace("//", "/"))
            return None
        if word == "mtu":
            svi.mtu = 1500 if negate else _mtu(rest)
            return None
        if word == "shutdown":
            svi.shutdown = not negate
            return None
        if word == "ipl":
            self._require_protocol("mlag", "ipl")
            ipl_id = _int(_arg(rest, 1), 1, 1)
            if negate:
                svi.ipl_peer = None
                return None
            if rest[2:3] != ["peer-address"]:
                raise CliError("% Incomplete command.")
            if not self.ip_routing:
                raise CliError("% IP routing must be enabled for an IPL VLAN interface")
            if not any(p.ipl == ipl_id for p in self.port_channels.values()):
                raise CliError(f"% IPL {ipl_id} does not exist")
            peer = parse_ip(_arg(rest, 3)).ip
            if svi.ip is None or peer not in svi.ip.network or peer == svi.ip.ip:
                raise CliError(f"% Peer address {peer} is not in the subnet of interface vlan")
            svi.ipl_peer = (ipl_id, str(peer))
            return None
        if word == "magp":
            return self._magp_cmd(svi, rest[1:], negate)
        if word == "vrrp":
            return self._vrrp_cmd(svi, rest[1:], negate)
        raise Unrecognized(word, "keyword")

    def _magp_cmd(self, svi: Svi, rest: list[str], negate: bool) -> str | None:
        self._require_protocol("magp", "magp")
        magp_id = _int(_arg(rest, 0), 1, 255)
        sub = rest[1:]
        if not sub:
            if negate:
                svi.magp.pop(magp_id, None)
                return None
            owner = next((s for s in self.svis.values() if magp_id in s.magp), None)
            if owner and owner is not svi:
                raise CliError(f"% MAGP {magp_id} already exists on interface vlan {owner.vlan}")
            svi.magp.setdefault(magp_id, Magp(magp_id))
            return f"interface vlan {svi.vlan} magp {magp_id}"
        inst = svi.magp.get(magp_id)
        if inst is None:
            raise CliError(f"% MAGP instance {magp_id} does not exist")
        negate, sub = _negation_after_prefix(sub, negate)
        if sub[:2] != ["ip", "virtual-router"] or len(sub) < 3:
            raise Unrecognized(sub[0], "keyword")
        if sub[2] == "address":
            if negate:
                inst.address = None
                return None
            address = parse_ip(_arg(sub, 3)).ip
            if svi.ip is None or address not in svi.ip.network:
                raise CliError("% Virtual router address must be in the interface subnet")
            inst.address = str(address)
            return None
        if sub[2] == "mac-address":
            if negate:
                inst.mac = None
                return None
            mac = _arg(sub, 3)
            if not MAC_RE.match(mac):
                raise CliError(f"% Invalid MAC address: {mac}")
            inst.mac = mac.upper()
            return None
        raise Unrecognized(sub[2], "keyword")

    def _vrrp_cmd(self, svi: Svi, rest: list[str], negate: bool) -> str | None:
        self._require_protocol("vrrp", "vrrp")
        vrid = _int(_arg(rest, 0), 1, 255)
        sub = rest[1:]
        if not sub:
            if negate:
                svi.vrrp.pop(vrid, None)
                return None
            svi.vrrp.setdefault(vrid, Vrrp(vrid))
            return f"interface vlan {svi.vlan} vrrp {vrid}"
        inst = svi.vrrp.get(vrid)
        if inst is None:
            raise CliError(f"% VRRP instance {vrid} does not exist on interface vlan {svi.vlan}")
        negate, sub = _negation_after_prefix(sub, negate)
        word = sub[0]
        if word == "address":
            if negate:
                inst.address = None
                return None
            address = parse_ip(_arg(sub, 1)).ip
            if svi.ip is None or address not in svi.ip.network:
                raise CliError("% VRRP address must be in the interface subnet")
            inst.address = str(address)
        elif word == "priority":
            inst.priority = 100 if negate else _int(_arg(sub, 1), 1, 254)
        elif word == "preempt":
            inst.preempt = not negate
        elif word == "advertisement-interval":
            inst.advertisement_interval = 1 if negate else _int(_arg(sub, 1), 1, 255)
        elif word == "shutdown":
            inst.shutdown = not negate
        else:
            raise Unrecognized(word, "keyword")
        return None


_TOP = {
    "hostname": SwitchConfig._hostname,
    "lacp": SwitchConfig._lacp,
    "lldp": SwitchConfig._lldp,
    "ip": SwitchConfig._ip,
    "protocol": SwitchConfig._protocol,
    "dcb": SwitchConfig._dcb,
    "vlan": SwitchConfig._vlan,
    "mlag": SwitchConfig._mlag,
    "mlag-vip": SwitchConfig._mlag_vip,
    "interface": SwitchConfig._interface,
}


# ---------------------------------------------------------------------- argument helpers
def _negation_after_prefix(sub: list[str], negate: bool) -> tuple[bool, list[str]]:
    """`interface vlan 10 magp 10 no ip virtual-router address`: the flat form of a
    negation typed inside the instance's sub-mode (the form mellanox.onyx's onyx_magp
    sends; cxfab's VRRP removals follow it)."""
    if sub[:1] == ["no"]:
        if negate or len(sub) == 1:
            raise CliError("% Incomplete command.")
        return True, sub[1:]
    return negate, sub


def _need(args: list[str], count: int) -> None:
    if len(args) < count:
        raise CliError("% Incomplete command.")


def _no_extra(args: list[str]) -> None:
    if args:
        raise Unrecognized(args[0], "keyword")


def _arg(args: list[str], index: int) -> str:
    if len(args) <= index:
        raise CliError("% Incomplete command.")
    return args[index]


def _int(text: str, low: int, high: int) -> int:
    if not text.isdigit() or not low <= int(text) <= high:
        raise CliError(f"% Value {text} is out of range ({low}-{high})")
    return int(text)


def _mtu(rest: list[str]) -> int:
    value = _int(_arg(rest, 1), MTU_MIN, MTU_MAX)
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
    start, end = _int(first, low, high), _int(last or first, low, high)
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
