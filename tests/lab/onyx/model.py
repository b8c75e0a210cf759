"""Configuration model of one emulated switch and the config-mode command set.

Commands are taken in the flat form a running-config uses (`interface vlan 10
ip address 10.0.10.2/24`). Sub-modes (`interface vlan 10`, `mlag`, ...) are
handled by the CLI, which prefixes the sub-mode to each line before calling
`SwitchConfig.apply`.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from .interface_commands import InterfaceCommands
from .objects import (
    ETHERNET_PORTS,
    MAC_RE,
    PROTOCOLS,
    CliError,
    Ethernet,
    MlagPortChannel,
    PortChannel,
    Svi,
    Switchport,
    Unrecognized,
    arg_at,
    int_in,
    need,
    no_extra,
    parse_ethernet_range,
    parse_id_range,
    parse_ip,
    parse_vlan,
    parse_vlan_list,
)


@dataclass
class SwitchConfig(InterfaceCommands):
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
        need(args, 1)
        self.hostname = args[0]

    def _lacp(self, args: list[str], negate: bool) -> None:
        no_extra(args)
        self.lacp = not negate

    def _lldp(self, args: list[str], negate: bool) -> None:
        no_extra(args)
        self.lldp = not negate

    def _ip(self, args: list[str], negate: bool) -> None:
        if not args or args[0] != "routing":
            raise Unrecognized(args[0] if args else "ip", "keyword")
        if args[1:] not in ([], ["vrf", "default"]):
            raise Unrecognized(args[1], "keyword")
        self.ip_routing = not negate

    def _protocol(self, args: list[str], negate: bool) -> None:
        need(args, 1)
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
            priority = int_in(arg_at(args, 2), 0, 7)
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
        need(args, 1)
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
                need(rest, 2)
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
            need(args, 2)
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
        need(args, 2)
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
