"""Dataplane twin of one emulated switch: its config model -> a Linux dataplane plan.

The emulator (model.py, switch.py) keeps the Onyx configuration; this module says
what Linux must look like inside the switch's network namespace so that the config
cxfab pushed is the config that forwards. It follows Cumulus Linux's MLAG design:

- one VLAN-aware bridge `br0` (vlan_filtering 1, no default PVID: every port's
  VLANs are set explicitly from its switchport mode);
- each LAG a bond: an MPO (`mpo<N>`) in 802.3ad mode whose LACP actor system is the
  MLAG system MAC (`ad_actor_system`), so a host's bond sees one partner on both
  switches; the IPL port-channel (`po<N>`) a bond that carries every VLAN tagged;
  a LAG whose members are `mode on` is a static balance-xor bond;
- the MLAG rule: a frame that arrived over the IPL never leaves by an MPO that is up
  on both peers (its host already got it from the other switch). It is an nftables
  bridge rule over a set of dual-connected MPOs, so a failover changes one set
  element, not the rule;
- an SVI is a VLAN device `vlan<id>` on br0 with the switch's own address;
- MAGP is a macvlan `vlan<id>-m<inst>` with the virtual MAC and the virtual IP on
  both peers (active-active), the virtual MAC a local fdb entry of br0 so frames to
  it stop at this switch and its source is never learned from the IPL;
- VRRP is the same macvlan with 00:00:5e:00:01:<vrid>, present only on the peer the
  emulator's own election (Switch.tick) made Master.

Ethernet port 1/N is the namespace interface `swp<N>`; only cabled ports exist there
(the lab creates them: a veth or tap per cable). `plan()` is pure; `converge()` diffs
a plan against the state read back as JSON and returns the commands, as argv lists,
that make it so (none when converged), removals first, in dependency order.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field, replace

from .model import SwitchConfig

BRIDGE = "br0"
NFT_TABLE = "cxfab_mlag"  # family bridge
NFT_SET = "dual_connected"
NFT_CHAIN = "forward"
BOND_MIIMON_MS = 100
DEFAULT_MTU = 1500
# Namespace-wide settings, applied once when the namespace is made: answer ARP only for
# addresses of the receiving interface (so the SVI never answers for the virtual IP
# with its own MAC), source ARP from the interface's own address (a switch's ARP
# request must not rebind the gateway IP to the SVI MAC in the hosts' caches: seen on
# kernel 6.18 without it), route between SVIs (ip routing).
NAMESPACE_SYSCTLS = {
    "net.ipv4.conf.all.arp_ignore": "1",
    "net.ipv4.conf.all.arp_announce": "2",
    "net.ipv4.conf.all.rp_filter": "0",
    "net.ipv4.ip_forward": "1",
}


class DataplaneError(Exception):
    """A state read back that cannot be understood: names the command and what it got."""


def port_ifname(port: str) -> str:
    """Onyx `1/7` -> `swp7` (the interface the lab cables into the namespace)."""
    slot, _, number = port.partition("/")
    if slot != "1" or not number.isdigit():
        raise ValueError(f"not an ethernet port of this switch: {port!r}")
    return f"swp{int(number)}"


def vrrp_mac(vrid: int) -> str:
    return f"00:00:5e:00:01:{vrid:02x}"


def vrrp_link(vid: int, vrid: int) -> str:
    """The macvlan holding a VRRP instance's virtual IP while this switch is Master."""
    return f"vlan{vid}-v{vrid}"


@dataclass
class Link:
    """One interface of the plan. kind: bridge | bond | vlan | macvlan | port."""

    name: str
    kind: str
    up: bool = True
    mtu: int | None = None  # None: left to the kernel (a bond sets its members')
    master: str | None = None
    lower: str | None = None  # vlan / macvlan parent
    address: str | None = None  # MAC (lower case); None: the kernel's
    options: dict = field(default_factory=dict)
    learning: bool | None = None  # as a bridge port; None: left as the kernel has it


@dataclass
class Plan:
    links: dict[str, Link] = field(default_factory=dict)
    # bridge port (or br0 itself, "self") -> {vid: (pvid, untagged)}
    vlans: dict[str, dict[int, tuple[bool, bool]]] = field(default_factory=dict)
    addresses: dict[str, set[str]] = field(default_factory=dict)
    fdb: set[tuple[str, int]] = field(default_factory=set)  # local (mac, vid) on br0
    ipl: str | None = None
    dual_connected: set[str] = field(default_factory=set)
    mlag_bonds: set[str] = field(default_factory=set)  # the MPOs (NVUE: bonds with an MLAG id)


# ---------------------------------------------------------------------- plan
def _members(cfg: SwitchConfig, kind: str, group: int) -> list[str]:
    return sorted(
        (e.name for e in cfg.ethernets.values() if e.member and e.member.kind == kind
         and e.member.group == group),
        key=lambda n: int(n.split("/")[1]),
    )  # fmt: skip


def _bond_options(cfg: SwitchConfig, kind: str, group: int, system: str | None) -> dict:
    modes = {cfg.ethernets[n].member.mode for n in _members(cfg, kind, group)}
    if modes and modes <= {"on"}:
        return {"mode": "balance-xor", "miimon": BOND_MIIMON_MS}
    options = {"mode": "802.3ad", "miimon": BOND_MIIMON_MS, "ad_lacp_rate": "fast"}
    if system:
        options["ad_actor_system"] = system.lower()
    return options


def _switchport_vlans(sp, known: set[int]) -> dict[int, tuple[bool, bool]]:
    """Onyx switchport -> bridge VLANs: access/hybrid untag their access VLAN (PVID),
    hybrid/trunk tag their allowed VLANs. A VLAN the switch does not have carries nothing."""
    out: dict[int, tuple[bool, bool]] = {}
    if sp.mode in ("hybrid", "trunk"):
        out.update({vid: (False, False) for vid in sorted(sp.allowed) if vid in known})
    if sp.mode in ("access", "hybrid") and sp.access_vlan in known:
        out[sp.access_vlan] = (True, True)
    return out


def local_mpo_active(cfg: SwitchConfig, number: int) -> bool:
    """An MPO is up here when it is enabled and has a member not shut down (as switch.py)."""
    members = _members(cfg, "mlag-port-channel", number)
    return not cfg.mpos[number].shutdown and any(not cfg.ethernets[m].shutdown for m in members)


def plan(
    cfg: SwitchConfig,
    cabled: set[str] | dict,
    peer: dict | None = None,
    vrrp_state: dict[str, str] | None = None,
    lag_ifnames: dict[tuple[str, int], str] | None = None,
) -> Plan:
    """The dataplane of switch `cfg`.

    cabled: the ethernet ports with a cable (`1/1`, `1/35`...; a dict port -> far end
    is accepted); peer: the peer's keepalive summary (Switch.summary()) while it is
    reachable over the IPL, else None; vrrp_state: Switch.vrrp_state ("vlan:vrid" ->
    Master|Backup|Init); lag_ifnames: (kind, number) -> the bond's interface name where
    the OS names it otherwise (NVUE's `peerlink`, `bond<N>`); default `po<N>`/`mpo<N>`.
    """
    lag_ifnames = lag_ifnames or {}
    out = Plan()
    known = set(cfg.vlans)
    out.links[BRIDGE] = Link(BRIDGE, "bridge", options={"vlan_filtering": 1})
    lag_names = {}
    for number, po in sorted(cfg.port_channels.items()):
        name = lag_ifnames.get(("port-channel", number), f"po{number}")
        lag_names[("port-channel", number)] = name
        out.links[name] = Link(
            name, "bond", up=not po.shutdown, mtu=po.mtu, master=BRIDGE,
            options=_bond_options(cfg, "port-channel", number, None),
        )  # fmt: skip
        if po.ipl is not None:
            # The lab's pair syncs no MACs over the IPL (Onyx and Cumulus do): a port that
            # learned a dual-connected host's MAC from a flood over the IPL would send its
            # unicast back across, where the MLAG rule drops it. Without learning there, a
            # unicast for a host not learned locally floods, and the local MPO delivers it.
            out.links[name].learning = False
            out.ipl = name
            out.vlans[name] = {vid: (False, False) for vid in sorted(known)}
        else:
            out.vlans[name] = _switchport_vlans(po.switchport, known)
    for number, mpo in sorted(cfg.mpos.items()):
        name = lag_ifnames.get(("mlag-port-channel", number), f"mpo{number}")
        lag_names[("mlag-port-channel", number)] = name
        out.mlag_bonds.add(name)
        out.links[name] = Link(
            name, "bond", up=not mpo.shutdown, mtu=mpo.mtu, master=BRIDGE,
            options=_bond_options(cfg, "mlag-port-channel", number, cfg.system_mac),
        )  # fmt: skip
        out.vlans[name] = _switchport_vlans(mpo.switchport, known)
    for port in sorted(cabled, key=lambda n: int(n.split("/")[1])):
        eth = cfg.ethernets.get(port)
        if eth is None:
            raise ValueError(f"cabling names {port!r}, which this switch does not have")
        name = port_ifname(port)
        lag = lag_names.get((eth.member.kind, eth.member.group)) if eth.member else None
        if lag:
            out.links[name] = Link(name, "port", up=not eth.shutdown, master=lag)
        else:  # an Onyx port outside any LAG is an access port of VLAN 1
            out.links[name] = Link(name, "port", up=not eth.shutdown, mtu=eth.mtu, master=BRIDGE)
            out.vlans[name] = {1: (True, True)} if 1 in known else {}
    svi_mtus = [DEFAULT_MTU]
    out.vlans[BRIDGE] = {}
    for vid, svi in sorted(cfg.svis.items()):
        name = f"vlan{vid}"
        svi_mtus.append(svi.mtu)
        out.vlans[BRIDGE][vid] = (False, False)
        out.links[name] = Link(
            name, "vlan", up=not svi.shutdown, mtu=svi.mtu, lower=BRIDGE, options={"id": vid}
        )
        out.addresses[name] = {str(svi.ip)} if svi.ip else set()
        _gateways(cfg, out, vid, svi, vrrp_state or {})
    out.links[BRIDGE].mtu = max(svi_mtus)
    if out.ipl and peer:
        remote = peer.get("mpos") or {}
        out.dual_connected = {
            lag_names[("mlag-port-channel", n)]
            for n in cfg.mpos
            if local_mpo_active(cfg, n) and (remote.get(str(n)) or {}).get("active")
        }
    return out


def pair_state(want: Plan, ipl_cut: bool = False, mpos_suspended: bool = False) -> Plan:
    """The plan as the pair's state changes it, beyond the config.

    ipl_cut: the IPL's member ports are down (the lab's `fail ipl`: the cable is gone);
    mpos_suspended: this switch is the MLAG secondary that lost the IPL while its peer
    still answers over management, so Onyx shuts its MPOs (split-brain protection).
    """
    links = dict(want.links)
    for name, link in want.links.items():
        ipl_member = ipl_cut and want.ipl is not None and link.master == want.ipl
        suspended = mpos_suspended and name in want.mlag_bonds
        if ipl_member or suspended:
            links[name] = replace(link, up=False)
    return replace(want, links=links, dual_connected=set() if ipl_cut else want.dual_connected)


def _gateways(cfg: SwitchConfig, out: Plan, vid: int, svi, vrrp_state: dict) -> None:
    if svi.ip is None:
        return
    wanted = []
    if "magp" in cfg.protocols:
        for inst in sorted(svi.magp.values(), key=lambda i: i.id):
            if inst.address and inst.mac:
                wanted.append((f"vlan{vid}-m{inst.id}", inst.mac.lower(), inst.address))
    if "vrrp" in cfg.protocols:
        for vrid, inst in sorted(svi.vrrp.items()):
            if inst.address and vrrp_state.get(f"{vid}:{vrid}") == "Master":
                wanted.append((vrrp_link(vid, vrid), vrrp_mac(vrid), inst.address))
    for name, mac, address in wanted:
        out.links[name] = Link(
            name, "macvlan", up=not svi.shutdown, mtu=svi.mtu, lower=f"vlan{vid}",
            address=mac, options={"mode": "private"},
        )  # fmt: skip
        # /32: the SVI already holds the subnet route; ARP for the VIP is answered here.
        out.addresses[name] = {f"{ipaddress.IPv4Address(address)}/32"}
        out.fdb.add((mac, vid))


def namespace_setup(namespace: str) -> list[list[str]]:
    """Commands run once when the switch's namespace is created (before any converge)."""
    cmds = [["ip", "netns", "add", namespace]]
    cmds += [
        ["ip", "netns", "exec", namespace, "sysctl", "-qw", f"{key}={value}"]
        for key, value in NAMESPACE_SYSCTLS.items()
    ]
    return cmds
