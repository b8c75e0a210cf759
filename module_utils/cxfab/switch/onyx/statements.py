"""The Onyx CLI statements cxfab manages, one entry per kind.

A running-config (or a rendered intended config) is read into Statements: a
`key` naming the slot the line fills (e.g. ("svi_ip", 10) for the address of
interface vlan 10), a normalised `value`, and the `line` it came from. Two
configs are compared slot by slot, so `ip address 12.0.10.252 255.255.255.0`
and `ip address 12.0.10.252/24` are the same statement.

For every kind this table also knows:
  remove     the line that removes it (built from the *current* statement);
  rank       its place in the teardown order (lower goes first);
  parent     the statement whose removal removes it too (its own removal
             line is then not sent);
  replace    a new value cannot simply overwrite the old one: the old
             statement is removed first (LACP mode of a member port);
  owner      the object it belongs to, for the managed-scope rule.

Teardown order (reference: NVIDIA MLAG pages, reversed build order):
lossless (ECN, DSCP trust, port PFC, then the PFC priority) -> gateway (VRRP, MAGP)
-> VLAN membership of the MPOs -> `mlag shutdown` ->
MPOs (shutdown, attributes, members, port-channel) -> `no mlag-vip` ->
system MAC -> IPL peer-address -> SVIs -> PFC -> `no ipl` -> IPL members ->
IPL port-channel -> VLANs -> `no protocol vrrp|magp|mlag`.

The VRRP removal lines come from vrrp.py, the one place of that (unconfirmed)
dialect.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import vrrp

# Protocols cxfab turns on but never off: other features of the switch may use them.
KEPT_PROTOCOLS = frozenset({"lacp", "ip routing", "dcb pfc"})


@dataclass(frozen=True)
class Statement:
    key: tuple
    value: Any = True
    line: str = ""

    @property
    def kind(self) -> str:
        return self.key[0]


@dataclass(frozen=True)
class Kind:
    rank: int
    remove: Any  # callable(statement, context) -> str | None
    parent: Any = None  # callable(key) -> key | None
    replace: bool = False
    owner: Any = None  # callable(statement) -> tuple


@dataclass
class Context:
    """What removal lines may need to know about the current config."""

    current: dict = field(default_factory=dict)
    # A revert to a snapshot: protocols cxfab otherwise never switches off
    # (lacp, ip routing, global PFC) are switched off when the snapshot lacks them.
    restore: bool = False

    def mpo_mode(self, mpo: int) -> str:
        statement = self.current.get(("mpo_mode", mpo))
        return statement.value if statement else "hybrid"


_KEPT_PROTOCOL_REMOVAL = {
    "lacp": "no lacp",
    "ip routing": "no ip routing",
    "dcb pfc": "no dcb priority-flow-control enable force",
}


def _protocol_remove(st: Statement, ctx: Context) -> str | None:
    name = st.key[1]
    if name in KEPT_PROTOCOLS:
        return _KEPT_PROTOCOL_REMOVAL[name] if ctx.restore else None
    return f"no protocol {name}"


def _eth_channel_remove(st: Statement, _ctx: Context) -> str:
    kind = "mlag-channel-group" if st.value[0] == "mlag-port-channel" else "channel-group"
    return f"interface ethernet {st.key[1]} no {kind}"


def _eth_rank(st: Statement) -> int:
    return 32 if st.value[0] == "mlag-port-channel" else 57


def _vlan_owner(st: Statement) -> tuple:
    return ("vlan", st.key[1])


def _mpo_owner(st: Statement) -> tuple:
    return ("mpo", st.key[1])


def _mlag_owner(_st: Statement) -> tuple:
    return ("mlag",)


def _lossless_port_owner(st: Statement) -> tuple:
    return ("lossless", st.key[1])


def _vrrp_remove(st: Statement, _ctx: Context) -> str:
    return vrrp.removal(st.kind, st.key[1], st.key[2])


KINDS: dict[str, Kind] = {
    "protocol": Kind(
        rank=90,
        remove=_protocol_remove,
        owner=lambda st: ("protocol", st.key[1]),
    ),
    "po": Kind(
        rank=58,
        remove=lambda st, _c: f"no interface port-channel {st.key[1]}",
        owner=lambda st: ("po", st.key[1]),
    ),
    "po_ipl": Kind(
        rank=56,
        remove=lambda st, _c: f"interface port-channel {st.key[1]} no ipl {st.value}",
        owner=lambda st: ("po", st.key[1]),
    ),
    "po_mtu": Kind(
        rank=55,
        remove=lambda st, _c: f"interface port-channel {st.key[1]} no mtu",
        parent=lambda key: ("po", key[1]),
        owner=lambda st: ("po", st.key[1]),
    ),
    "po_pfc": Kind(
        rank=55,
        remove=lambda st, _c: (
            f"interface port-channel {st.key[1]} no dcb priority-flow-control mode force"
        ),
        owner=lambda st: ("po", st.key[1]),
    ),
    "eth_channel": Kind(
        rank=57,  # refined by _eth_rank: MPO members go with the MPOs
        remove=_eth_channel_remove,
        replace=True,
        owner=lambda st: ("mpo" if st.value[0] == "mlag-port-channel" else "po", st.value[1]),
    ),
    "vlan": Kind(rank=81, remove=lambda st, _c: f"no vlan {st.key[1]}", owner=_vlan_owner),
    "vlan_name": Kind(
        rank=80,
        remove=lambda st, _c: f"no vlan {st.key[1]} name",
        parent=lambda key: ("vlan", key[1]),
        owner=_vlan_owner,
    ),
    "svi": Kind(rank=52, remove=lambda st, _c: f"no interface vlan {st.key[1]}", owner=_vlan_owner),
    "svi_ip": Kind(
        rank=51,
        remove=lambda st, _c: f"interface vlan {st.key[1]} no ip address",
        parent=lambda key: ("svi", key[1]),
        owner=_vlan_owner,
    ),
    "svi_mtu": Kind(
        rank=50,
        remove=lambda st, _c: f"interface vlan {st.key[1]} no mtu",
        parent=lambda key: ("svi", key[1]),
        owner=_vlan_owner,
    ),
    "svi_ipl_peer": Kind(
        rank=45,
        remove=lambda st, _c: f"interface vlan {st.key[1]} no ipl {st.value[0]}",
        owner=_mlag_owner,
    ),
    "mlag_enabled": Kind(rank=25, remove=lambda _st, _c: "mlag shutdown", owner=_mlag_owner),
    "mlag_vip": Kind(rank=40, remove=lambda _st, _c: "no mlag-vip", owner=_mlag_owner),
    "mlag_system_mac": Kind(
        rank=41, remove=lambda _st, _c: "no mlag system-mac", owner=_mlag_owner
    ),
    "mpo": Kind(
        rank=33,
        remove=lambda st, _c: f"no interface mlag-port-channel {st.key[1]}",
        owner=_mpo_owner,
    ),
    "mpo_enabled": Kind(
        rank=30,
        remove=lambda st, _c: f"interface mlag-port-channel {st.key[1]} shutdown",
        parent=lambda key: ("mpo", key[1]),
        owner=_mpo_owner,
    ),
    "mpo_mtu": Kind(
        rank=31,
        remove=lambda st, _c: f"interface mlag-port-channel {st.key[1]} no mtu",
        parent=lambda key: ("mpo", key[1]),
        owner=_mpo_owner,
    ),
    "mpo_description": Kind(
        rank=31,
        remove=lambda st, _c: f"interface mlag-port-channel {st.key[1]} no description",
        parent=lambda key: ("mpo", key[1]),
        owner=_mpo_owner,
    ),
    "mpo_mode": Kind(
        rank=22,
        remove=lambda st, _c: f"interface mlag-port-channel {st.key[1]} no switchport mode",
        parent=lambda key: ("mpo", key[1]),
        owner=_mpo_owner,
    ),
    "mpo_access_vlan": Kind(
        rank=21,
        remove=lambda st, _c: f"interface mlag-port-channel {st.key[1]} no switchport access vlan",
        parent=lambda key: ("mpo", key[1]),
        owner=_mpo_owner,
    ),
    "mpo_allowed": Kind(
        rank=20,
        remove=lambda st, ctx: (
            f"interface mlag-port-channel {st.key[1]} switchport "
            f"{ctx.mpo_mode(st.key[1])} allowed-vlan remove {st.key[2]}"
        ),
        parent=lambda key: ("mpo", key[1]),
        owner=_mpo_owner,
    ),
    "magp": Kind(
        rank=13,
        remove=lambda st, _c: f"interface vlan {st.key[1]} no magp {st.key[2]}",
        owner=_vlan_owner,
    ),
    "magp_vip": Kind(
        rank=12,
        remove=lambda st, _c: (
            f"interface vlan {st.key[1]} magp {st.key[2]} no ip virtual-router address"
        ),
        parent=lambda key: ("magp", key[1], key[2]),
        owner=_vlan_owner,
    ),
    "magp_vmac": Kind(
        rank=12,
        remove=lambda st, _c: (
            f"interface vlan {st.key[1]} magp {st.key[2]} no ip virtual-router mac-address"
        ),
        parent=lambda key: ("magp", key[1], key[2]),
        owner=_vlan_owner,
    ),
    # Lossless RoCE (built last, so removed first): ECN, trust, port PFC, priority.
    "eth_ecn": Kind(
        rank=1,
        remove=lambda st, _c: (
            f"interface ethernet {st.key[1]} no traffic-class {st.key[2]} congestion-control"
        ),
        owner=_lossless_port_owner,
    ),
    "eth_trust": Kind(
        rank=2,
        remove=lambda st, _c: f"interface ethernet {st.key[1]} no qos trust",
        owner=_lossless_port_owner,
    ),
    "eth_pfc": Kind(
        rank=3,
        remove=lambda st, _c: (
            f"interface ethernet {st.key[1]} no dcb priority-flow-control mode force"
        ),
        owner=_lossless_port_owner,
    ),
    "pfc_priority": Kind(
        rank=4,
        remove=lambda st, _c: f"no dcb priority-flow-control priority {st.key[1]} enable",
        owner=lambda _st: ("lossless",),
    ),
    # VRRP: removal lines from the one dialect table (vrrp.py, unconfirmed on a real switch).
    "vrrp": Kind(rank=11, remove=_vrrp_remove, owner=_vlan_owner),
    **{
        kind: Kind(
            rank=10,
            remove=_vrrp_remove,
            parent=lambda key: ("vrrp", key[1], key[2]),
            owner=_vlan_owner,
        )
        for kind in ("vrrp_address", "vrrp_priority", "vrrp_no_preempt", "vrrp_interval")
    },
}


def removal_rank(st: Statement) -> int:
    if st.kind == "eth_channel":
        return _eth_rank(st)
    if st.kind == "protocol":
        # vrrp and magp go before mlag (MAGP needs MLAG).
        return {"vrrp": 90, "magp": 91, "mlag": 92}.get(st.key[1], 93)
    return KINDS[st.kind].rank


def removal_line(st: Statement, ctx: Context) -> str | None:
    return KINDS[st.kind].remove(st, ctx)


def parent_key(key: tuple) -> tuple | None:
    parent = KINDS[key[0]].parent
    return parent(key) if parent else None


def owner(st: Statement) -> tuple:
    return KINDS[st.kind].owner(st)


def needs_replace(st: Statement) -> bool:
    return KINDS[st.kind].replace
