"""The Onyx CLI statements cxfab manages: one row per kind (the machinery: table.py).

A row says how the running-config line reads back, the line that sets it, the
line that removes it, its rank in the teardown order, the object that owns it
(the prune scope, plan.Scope) and its section (template group and tag). The
parser and the planner derive everything about a kind from TABLE; a new kind
is one row here (plus its template line).

Teardown order (reference: NVIDIA MLAG pages, reversed build order):
lossless (ECN, DSCP trust, port PFC, then the PFC priority) -> gateway (VRRP, MAGP)
-> VLAN membership of the MPOs -> `mlag shutdown` ->
MPOs (shutdown, attributes, members, port-channel) -> `no mlag-vip` ->
system MAC -> IPL peer-address -> SVIs -> PFC -> `no ipl` -> IPL members ->
IPL port-channel -> VLANs -> `no protocol vrrp|magp|mlag`.

VRRP lines are UNCONFIRMED on a real switch: no public Onyx VRRP command reference
was found (`show vrrp` is read as the manual's tables quoted second-hand:
docs/switches.md; MAGP follows NVIDIA's documentation and the mellanox.onyx
onyx_magp module). Its removals follow the documented MAGP form
(`interface vlan N magp M no ip virtual-router address`: `no` after the instance
prefix). Correct a form against a device here; a line the switch refuses is
reverted by the deploy transaction, never left half applied.
"""

from __future__ import annotations

from ...common.addressing import host_address, interface_address, mac, quote, unquote
from .table import Context, Row, Statement, Table, UnknownKind

__all__ = ["ROWS", "TABLE", "Context", "Row", "Statement", "Table", "UnknownKind"]

ADDRESS = r"(\d+\.\d+\.\d+\.\d+)\s*(?:(/\s*\d+)|\s+(\d+\.\d+\.\d+\.\d+))"
# `qos trust` modes as Onyx prints them.
TRUST_MODES = {"l2": "L2", "l3": "L3", "both": "both", "port": "port"}
# The Onyx `qos trust` mode of the structured config's neutral lossless.trust.
ONYX_TRUST = {"pcp": "L2", "dscp": "L3"}
_MLAG = ("mlag", None)
_VLAN = ("vlan", 1)
_MPO = ("mpo", 1)
_PO = ("po", 1)
_PORT = ("lossless", 1)
_CHANNELS = {"channel-group": "port-channel", "mlag-channel-group": "mlag-port-channel"}
_MLAG_KINDS = ("mlag_enabled", "mlag_vip", "mlag_system_mac", "mpo", "po_ipl", "svi_ipl_peer")


def _protocol(name, read, set_line, remove, rank, section="mlag", kept=False, held_by=()):
    owner = ("protocol", 1)
    return Row("protocol", "global", read, set_line, remove, rank, owner, section,
               name=name, kept=kept, held_by=held_by)  # fmt: skip


def _mlag_vip_set(st: Statement, _ctx: Context) -> str:
    domain, address = st.value
    if address is None:
        return f"mlag-vip {domain}"
    ip, length = address.split("/")
    return f"mlag-vip {domain} ip {ip} /{length} force"


def _mlag_vip_value(m):
    address = interface_address(m.group(2), m.group(3) or m.group(4)) if m.group(2) else None
    return (m.group(1), address)


def _channel_word(st: Statement) -> str:
    return "mlag-channel-group" if st.value[0] == "mlag-port-channel" else "channel-group"


def _allowed(action: str):
    """`switchport <mode> allowed-vlan add|remove N`: the mode is the MPO's current one."""

    def line(st: Statement, ctx: Context) -> str:
        mode = ctx.mpo_mode(st.key[1])
        return f"{MPO.format(key=st.key)} switchport {mode} allowed-vlan {action} {st.key[2]}"

    return line


ETH = "interface ethernet {key[1]}"
PO = "interface port-channel {key[1]}"
SVI = "interface vlan {key[1]}"
MPO = "interface mlag-port-channel {key[1]}"
MAGP = SVI + " magp {key[2]}"
VRRP = SVI + " vrrp {key[2]}"

# One row per kind; fields in Row's order (table.py): kind, on, read, set, remove, rank,
# owner, section, then the keywords. Kept compact on purpose: one row reads as one block.
# fmt: off
ROWS: list[Row] = [
    # ---------------------------------------------------------------- protocols
    _protocol("lacp", r"^lacp$", "lacp", "no lacp", 93, kept=True),
    _protocol("ip routing", r"^ip routing(?: vrf default)?$", "ip routing", "no ip routing", 93,
              kept=True),
    _protocol("dcb pfc", r"^dcb priority-flow-control enable(?: force)?$",
              "dcb priority-flow-control enable force",
              "no dcb priority-flow-control enable force", 93, kept=True),
    # vrrp and magp go before mlag (MAGP needs MLAG); each stays while a statement of its own does.
    _protocol("vrrp", r"^protocol vrrp$", "protocol vrrp", "no protocol vrrp", 90, "gateway",
              held_by=("vrrp",)),
    _protocol("magp", r"^protocol magp$", "protocol magp", "no protocol magp", 91, "gateway",
              held_by=("magp",)),
    _protocol("mlag", r"^protocol mlag$", "protocol mlag", "no protocol mlag", 92,
              held_by=_MLAG_KINDS),
    # LLDP (NVIDIA's LLDP page: `lldp`; on by default from 3.8.2000); off is `no lldp`.
    _protocol("lldp", r"^lldp$", "lldp", "no lldp", 85),
    # ---------------------------------------------------------------- MLAG
    Row("mlag_enabled", "global", r"^no mlag shutdown$", "no mlag shutdown", "mlag shutdown",
        25, _MLAG, "mlag", off=r"^mlag shutdown$"),
    Row("mlag_system_mac", "global", r"^mlag system-mac (\S+)(?: \[\w+\])?$",
        "mlag system-mac {value}", "no mlag system-mac", 41, _MLAG, "mlag",
        value=lambda m: mac(m.group(1))),
    Row("mlag_vip", "global", r"^mlag-vip (\S+)(?: ip " + ADDRESS + r"(?: force)?)?$",
        _mlag_vip_set, "no mlag-vip", 40, _MLAG, "mlag", value=_mlag_vip_value),
    # ---------------------------------------------------------------- VLANs (VLAN 1: parser.py)
    Row("vlan", "global", r"^vlan ([\d,\-]+)$", "vlan {key[1]}", "no vlan {key[1]}", 81, _VLAN,
        "vlans", ids=1, many=True, ipl_vlan_is_mlag=True),
    Row("vlan_name", "global", r"^vlan (\d+) name (.+)$",
        lambda st, _c: f"vlan {st.key[1]} name {quote(st.value)}", "no vlan {key[1]} name", 80,
        _VLAN, "vlans", ids=1, value=lambda m: unquote(m.group(2)), parent="vlan",
        ipl_vlan_is_mlag=True),
    # ---------------------------------------------------------------- ethernet ports
    # MPO members go with the MPOs (rank 32), IPL members with the IPL port-channel (57).
    Row("eth_channel", "ethernet",
        r"^(channel-group|mlag-channel-group) (\d+) mode (active|passive|on)$",
        lambda st, _c: f"{ETH.format(key=st.key)} {_channel_word(st)} {st.value[1]} "
                       f"mode {st.value[2]}",
        lambda st, _c: f"{ETH.format(key=st.key)} no {_channel_word(st)}",
        lambda st: 32 if st.value[0] == "mlag-port-channel" else 57,
        lambda st: ("mpo" if st.value[0] == "mlag-port-channel" else "po", st.value[1]),
        "mlag", replace=True,
        value=lambda m: (_CHANNELS[m.group(1)], int(m.group(2)), m.group(3))),
    # ---------------------------------------------------------------- IPL port-channel
    Row("po", "port-channel", r"^$", PO, "no " + PO, 58, _PO, "mlag"),
    Row("po_ipl", "port-channel", r"^ipl (\d+)$", PO + " ipl {value}", PO + " no ipl {value}",
        56, _PO, "mlag", value=lambda m: int(m.group(1))),
    Row("po_mtu", "port-channel", r"^mtu (\d+)(?: force)?$", PO + " mtu {value} force",
        PO + " no mtu", 55, _PO, "mlag", value=lambda m: int(m.group(1)), parent="po"),
    Row("po_pfc", "port-channel", r"^dcb priority-flow-control mode on(?: force)?$",
        PO + " dcb priority-flow-control mode on force",
        PO + " no dcb priority-flow-control mode force", 55, _PO, "mlag"),
    # ---------------------------------------------------------------- VLAN interfaces
    Row("svi", "vlan", r"^$", SVI, "no " + SVI, 52, _VLAN, "vlans", ipl_vlan_is_mlag=True),
    Row("svi_ip", "vlan", r"^ip address " + ADDRESS + r"(?: primary)?$",
        SVI + " ip address {value}", SVI + " no ip address", 51, _VLAN, "vlans",
        value=lambda m: interface_address(m.group(1), m.group(2) or m.group(3)), parent="svi",
        ipl_vlan_is_mlag=True),
    Row("svi_mtu", "vlan", r"^mtu (\d+)(?: force)?$", SVI + " mtu {value}", SVI + " no mtu", 50,
        _VLAN, "vlans", value=lambda m: int(m.group(1)), parent="svi", ipl_vlan_is_mlag=True),
    Row("svi_ipl_peer", "vlan", r"^ipl (\d+) peer-address (\S+)$",
        SVI + " ipl {value[0]} peer-address {value[1]}", SVI + " no ipl {value[0]}", 45, _MLAG,
        "mlag", value=lambda m: (int(m.group(1)), host_address(m.group(2)))),
    # ---------------------------------------------------------------- MLAG port-channels
    Row("mpo", "mlag-port-channel", r"^$", MPO, "no " + MPO, 33, _MPO, "mlag"),
    Row("mpo_enabled", "mlag-port-channel", r"^no shutdown$", MPO + " no shutdown",
        MPO + " shutdown", 30, _MPO, "mlag", parent="mpo", off=r"^shutdown$"),
    Row("mpo_mtu", "mlag-port-channel", r"^mtu (\d+)(?: force)?$", MPO + " mtu {value} force",
        MPO + " no mtu", 31, _MPO, "mlag", value=lambda m: int(m.group(1)), parent="mpo"),
    Row("mpo_description", "mlag-port-channel", r"^description (.+)$",
        lambda st, _c: f"{MPO.format(key=st.key)} description {quote(st.value)}",
        MPO + " no description", 31, _MPO, "mlag", value=lambda m: unquote(m.group(1)),
        parent="mpo"),
    Row("mpo_mode", "mlag-port-channel", r"^switchport mode (access|trunk|hybrid)$",
        MPO + " switchport mode {value}", MPO + " no switchport mode", 22, _MPO, "vlans",
        value=lambda m: m.group(1), parent="mpo"),
    Row("mpo_access_vlan", "mlag-port-channel", r"^switchport access vlan (\d+)$",
        MPO + " switchport access vlan {value}", MPO + " no switchport access vlan", 21, _MPO,
        "vlans", value=lambda m: int(m.group(1)), parent="mpo"),
    Row("mpo_allowed", "mlag-port-channel",
        r"^switchport (?:hybrid|trunk) allowed-vlan (?:add )?([\d,\-]+)$",
        _allowed("add"), _allowed("remove"), 20, _MPO, "vlans", ids=1, many=True,
        parent="mpo"),
    # ---------------------------------------------------------------- MAGP
    Row("magp", "vlan", r"^magp (\d+)$", MAGP, SVI + " no magp {key[2]}", 13, _VLAN, "gateway",
        ids=1),
    Row("magp_vip", "vlan", r"^magp (\d+) ip virtual-router address (\S+)$",
        MAGP + " ip virtual-router address {value}", MAGP + " no ip virtual-router address", 12,
        _VLAN, "gateway", ids=1, value=lambda m: host_address(m.group(2)), parent="magp"),
    Row("magp_vmac", "vlan", r"^magp (\d+) ip virtual-router mac-address (\S+)$",
        MAGP + " ip virtual-router mac-address {value}",
        MAGP + " no ip virtual-router mac-address", 12, _VLAN, "gateway", ids=1,
        value=lambda m: mac(m.group(2)), parent="magp"),
    # ---------------------------------------------------------------- VRRP (unconfirmed)
    Row("vrrp", "vlan", r"^vrrp (\d+)$", VRRP, SVI + " no vrrp {key[2]}", 11, _VLAN, "gateway",
        ids=1),
    Row("vrrp_address", "vlan", r"^vrrp (\d+) address (\S+)$", VRRP + " address {value}",
        VRRP + " no address", 10, _VLAN, "gateway", ids=1,
        value=lambda m: host_address(m.group(2)), parent="vrrp"),
    Row("vrrp_priority", "vlan", r"^vrrp (\d+) priority (\d+)$", VRRP + " priority {value}",
        VRRP + " no priority", 10, _VLAN, "gateway", ids=1, value=lambda m: int(m.group(2)),
        parent="vrrp"),
    Row("vrrp_interval", "vlan", r"^vrrp (\d+) advertisement-interval (\d+)$",
        VRRP + " advertisement-interval {value}", VRRP + " no advertisement-interval", 10,
        _VLAN, "gateway", ids=1, value=lambda m: int(m.group(2)), parent="vrrp"),
    # Preemption is on by default; only its absence is printed, as a negation
    # (`no interface vlan N vrrp V preempt` reads as `interface vlan N no vrrp V preempt`).
    Row("vrrp_no_preempt", "vlan", r"^no vrrp (\d+) preempt$", SVI + " no vrrp {key[2]} preempt",
        VRRP + " preempt", 10, _VLAN, "gateway", ids=1, parent="vrrp"),
    # ---------------------------------------------------------------- lossless RoCE
    # Built last, so removed first: ECN, trust, port PFC, then the priority.
    Row("eth_ecn", "ethernet",
        r"^traffic-class ([0-7]) congestion-control ecn minimum-absolute (\d+) "
        r"maximum-absolute (\d+)$",
        ETH + " traffic-class {key[2]} congestion-control ecn minimum-absolute {value[0]} "
        "maximum-absolute {value[1]}",
        ETH + " no traffic-class {key[2]} congestion-control", 1, _PORT, "mlag", ids=1,
        value=lambda m: (int(m.group(2)), int(m.group(3)))),
    Row("eth_trust", "ethernet", r"(?i)^qos trust (L2|L3|both|port)$",
        ETH + " qos trust {value}", ETH + " no qos trust", 2, _PORT, "mlag",
        value=lambda m: TRUST_MODES[m.group(1).lower()]),
    Row("eth_pfc", "ethernet", r"^dcb priority-flow-control mode on(?: force)?$",
        ETH + " dcb priority-flow-control mode on force",
        ETH + " no dcb priority-flow-control mode force", 3, _PORT, "mlag"),
    Row("pfc_priority", "global", r"^dcb priority-flow-control priority ([0-7]) enable$",
        "dcb priority-flow-control priority {key[1]} enable",
        "no dcb priority-flow-control priority {key[1]} enable", 4, ("lossless", None), "mlag",
        ids=1),
]
# fmt: on

TABLE = Table(ROWS)
