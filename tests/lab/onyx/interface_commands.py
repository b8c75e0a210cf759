"""The commands typed under an interface of an emulated Onyx switch: ethernet ports,
port-channels and MLAG port-channels, switchports, and the VLAN interface (SVI) with
its IPL peer, MAGP and VRRP instances.

A mixin of `model.SwitchConfig`, which dispatches `interface ...` lines here and
holds the tables these commands change.
"""

from __future__ import annotations

from .objects import (
    ECN_MAX_KB,
    MAC_RE,
    TRUST_MODES,
    CliError,
    Ethernet,
    Magp,
    Member,
    MlagPortChannel,
    PortChannel,
    Svi,
    Switchport,
    Unrecognized,
    Vrrp,
    arg_at,
    int_in,
    need,
    negation_after_prefix,
    no_extra,
    parse_ip,
    parse_mtu,
    parse_vlan,
    parse_vlan_list,
)


class InterfaceCommands:
    """Interface sub-commands; `self` is the `SwitchConfig` they change."""

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
            group = int_in(rest[1], 1, 4096)
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
            eth.speed = None if negate else arg_at(rest, 1)
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
            eth.mtu = 1500 if negate else parse_mtu(rest)
            return
        if word == "shutdown":
            no_extra(rest[1:])
            eth.shutdown = not negate
            return
        raise Unrecognized(word, "keyword")

    def _trust_cmd(self, eth: Ethernet, rest: list[str], negate: bool) -> None:
        """qos trust {L2|L3|both|port}; `no qos trust` restores L2."""
        if rest[1:2] != ["trust"]:
            raise Unrecognized(rest[1] if len(rest) > 1 else "qos", "keyword")
        if negate:
            no_extra(rest[2:])
            eth.trust = "L2"
            return
        mode = arg_at(rest, 2)
        if mode not in TRUST_MODES:
            raise Unrecognized(mode, "keyword")
        no_extra(rest[3:])
        eth.trust = mode

    def _ecn_cmd(self, eth: Ethernet, rest: list[str], negate: bool) -> None:
        """traffic-class <tc> congestion-control ecn minimum-absolute <kb> maximum-absolute <kb>."""
        tc = int_in(arg_at(rest, 1), 0, 7)
        if rest[2:3] != ["congestion-control"]:
            raise Unrecognized(rest[2] if len(rest) > 2 else "traffic-class", "keyword")
        if negate:
            no_extra(rest[3:])
            eth.ecn.pop(tc, None)
            return
        if rest[3:4] != ["ecn"] or rest[4:5] != ["minimum-absolute"]:
            raise Unrecognized(rest[3] if len(rest) > 3 else "congestion-control", "keyword")
        low = int_in(arg_at(rest, 5), 1, ECN_MAX_KB)
        if rest[6:7] != ["maximum-absolute"]:
            raise CliError("% Incomplete command.")
        high = int_in(arg_at(rest, 7), 1, ECN_MAX_KB)
        no_extra(rest[8:])
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
            ipl_id = int_in(arg_at(rest, 1), 1, 1)
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
            lag.mtu = 1500 if negate else parse_mtu(rest)
        elif word == "shutdown":
            no_extra(rest[1:])
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
        need(rest, 1)
        if rest[0] == "mode":
            if negate:
                sp.mode, sp.allowed = "access", set()
                return
            mode = arg_at(rest, 1)
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
            vlan = parse_vlan(arg_at(rest, 2))
            self._require_vlan(vlan)
            if sp.mode == "trunk":
                raise CliError("% Access VLAN cannot be set in trunk mode")
            sp.access_vlan = vlan
            return
        if rest[0] in ("hybrid", "trunk") and rest[1:2] == ["allowed-vlan"]:
            if sp.mode != rest[0]:
                raise CliError(f"% Interface is not in {rest[0]} mode")
            action = arg_at(rest, 2)
            if action == "none":
                sp.allowed = set()
                return
            if action == "all":
                sp.allowed = set(self.vlans) - {1}
                return
            if action not in ("add", "remove"):
                raise Unrecognized(action, "keyword")
            vlans = parse_vlan_list(arg_at(rest, 3))
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
            svi.mtu = 1500 if negate else parse_mtu(rest)
            return None
        if word == "shutdown":
            svi.shutdown = not negate
            return None
        if word == "ipl":
            self._require_protocol("mlag", "ipl")
            ipl_id = int_in(arg_at(rest, 1), 1, 1)
            if negate:
                svi.ipl_peer = None
                return None
            if rest[2:3] != ["peer-address"]:
                raise CliError("% Incomplete command.")
            if not self.ip_routing:
                raise CliError("% IP routing must be enabled for an IPL VLAN interface")
            if not any(p.ipl == ipl_id for p in self.port_channels.values()):
                raise CliError(f"% IPL {ipl_id} does not exist")
            peer = parse_ip(arg_at(rest, 3)).ip
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
        magp_id = int_in(arg_at(rest, 0), 1, 255)
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
        negate, sub = negation_after_prefix(sub, negate)
        if sub[:2] != ["ip", "virtual-router"] or len(sub) < 3:
            raise Unrecognized(sub[0], "keyword")
        if sub[2] == "address":
            if negate:
                inst.address = None
                return None
            address = parse_ip(arg_at(sub, 3)).ip
            if svi.ip is None or address not in svi.ip.network:
                raise CliError("% Virtual router address must be in the interface subnet")
            inst.address = str(address)
            return None
        if sub[2] == "mac-address":
            if negate:
                inst.mac = None
                return None
            mac = arg_at(sub, 3)
            if not MAC_RE.match(mac):
                raise CliError(f"% Invalid MAC address: {mac}")
            inst.mac = mac.upper()
            return None
        raise Unrecognized(sub[2], "keyword")

    def _vrrp_cmd(self, svi: Svi, rest: list[str], negate: bool) -> str | None:
        self._require_protocol("vrrp", "vrrp")
        vrid = int_in(arg_at(rest, 0), 1, 255)
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
        negate, sub = negation_after_prefix(sub, negate)
        word = sub[0]
        if word == "address":
            if negate:
                inst.address = None
                return None
            address = parse_ip(arg_at(sub, 1)).ip
            if svi.ip is None or address not in svi.ip.network:
                raise CliError("% VRRP address must be in the interface subnet")
            inst.address = str(address)
        elif word == "priority":
            inst.priority = 100 if negate else int_in(arg_at(sub, 1), 1, 254)
        elif word == "preempt":
            inst.preempt = not negate
        elif word == "advertisement-interval":
            inst.advertisement_interval = 1 if negate else int_in(arg_at(sub, 1), 1, 255)
        elif word == "shutdown":
            inst.shutdown = not negate
        else:
            raise Unrecognized(word, "keyword")
        return None
