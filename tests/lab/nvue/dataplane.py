"""Dataplane twin of one emulated NVUE switch: its applied tree -> the lab's dataplane Plan.

The Onyx twin (tests/lab/onyx/dataplane.py) already turns a switch's config into a
Linux plan (bridge, bonds, SVIs, gateway macvlans, the MLAG nft rule) and converges a
namespace to it. NVUE holds the same things under other names, so this module does
not plan anything itself: it reads the applied NVUE tree into the neutral inputs
`plan()` takes (the Onyx model's dataclasses: ports, LAGs, switchports, SVIs,
gateway instances) and names the bonds as NVUE does. What maps to what, with the
Cumulus Linux 5.9 user guide page that says what the NVUE object means:

NVUE (applied tree) -> plan input [user guide page]:
  interface swpN, link mtu, link state down -> ethernet 1/N [Switch Port Attributes]
  interface peerlink (type peerlink), bond member -> the IPL bond [MLAG, step 5]
  interface bondN with bond mlag id M -> MLAG bond M, named bondN [MLAG, steps 2-3]
  bond mode lacp | static -> 802.3ad | balance-xor [Bonding - Link Aggregation]
  mlag mac-address -> the MLAG bonds' LACP actor system [MLAG, "MLAG system MAC"]
  bridge domain br_default vlan -> the bridge's VLANs [VLAN-aware Bridge Mode]
  a bond's bridge domain br_default access N -> access VLAN N [same page]
  a bond's ... vlan + untagged N | none -> tagged + PVID N | tagged only [same page]
  interface vlanN (type svi), ip address -> SVI N [VRR, "Configure VRR"]
  ip vrr address / mac-address / enable on, with router vrr enable on -> the shared
    gateway macvlan, as MAGP's [VRR]

Documented differences from the Onyx plan of the same intent (tests/unit/
test_lab_nvue_dataplane.py holds them): the bonds are `peerlink` and `bond<N>`
(Onyx: `po<N>`, `mpo<N>`); NVUE's peer link has no IPL VLAN in the bridge and no
SVI (`peerlink.4094` is a subinterface with link-local peering, `mlag peer-ip
linklocal`), where Onyx carries VLAN 4000 and its SVI; the lab does not build
`peerlink.4094` since nothing in the namespace talks over it (the pair's keepalive
runs between the emulator processes). A bond without `untagged` takes the bridge's
untagged VLAN (1), the NVUE default: UNCONFIRMED beyond the bridge page's examples.
"""

from __future__ import annotations

import ipaddress

from module_utils.cxfab.switch.nvue import names
from tests.lab.onyx.dataplane import Plan, plan
from tests.lab.onyx.model import SwitchConfig
from tests.lab.onyx.objects import (
    Magp,
    Member,
    MlagPortChannel,
    PortChannel,
    Svi,
    Switchport,
)

ON = "on"
PEERLINK_GROUP = 1  # the IPL's number in the plan inputs (NVUE's peerlink has none)
DEFAULT_UNTAGGED = 1  # br_default's untagged VLAN when nothing sets it


class NvueTreeError(ValueError):
    """An applied tree the twin cannot turn into a dataplane (names the path)."""


def _port_of(swp: str) -> str:
    """`swp7` -> `1/7`, the plan's (and the lab's cabling's) name of the port."""
    number = swp[len("swp") :]
    if not swp.startswith("swp") or not number.isdigit():
        raise NvueTreeError(f"interface {swp}: not a whole front-panel port swpN")
    return f"1/{int(number)}"


def _down(iface: dict) -> bool:
    return (iface.get("link") or {}).get("state") == "down"


def _mtu(iface: dict, default: int = 9216) -> int:
    # Cumulus Linux's default MTU is 9216 (Switch Port Attributes, "MTU").
    return int((iface.get("link") or {}).get("mtu") or default)


def _switchport(name: str, iface: dict) -> Switchport:
    domain = ((iface.get("bridge") or {}).get("domain") or {}).get(names.BRIDGE)
    if domain is None:
        raise NvueTreeError(f"interface {name}: not a port of {names.BRIDGE}")
    if "access" in domain:
        return Switchport("access", int(domain["access"]))
    tagged = {int(v) for v in domain.get("vlan") or {}}
    untagged = domain.get("untagged", DEFAULT_UNTAGGED)
    if untagged == "none":
        return Switchport("trunk", DEFAULT_UNTAGGED, tagged)
    return Switchport("hybrid", int(untagged), tagged)


def _members(cfg: SwitchConfig, name: str, iface: dict, kind: str, group: int) -> None:
    mode = "on" if (iface.get("bond") or {}).get("mode") == "static" else "active"
    for swp in (iface.get("bond") or {}).get("member") or {}:
        port = cfg.ethernets.get(_port_of(swp))
        if port is None:
            raise NvueTreeError(f"interface {name} bond member {swp}: no such port here")
        port.member = Member(kind, group, mode)


def switch_config(tree: dict, hostname: str) -> tuple[SwitchConfig, dict[tuple[str, int], str]]:
    """The plan inputs of the applied NVUE `tree`, and the bonds' interface names."""
    cfg = SwitchConfig(hostname)
    ifnames: dict[tuple[str, int], str] = {}
    mlag = tree.get("mlag") or {}
    if mlag.get("enable") == ON:
        cfg.protocols.add("mlag")
        cfg.mlag_shutdown = False
    cfg.system_mac = mlag.get("mac-address")
    domain = ((tree.get("bridge") or {}).get("domain") or {}).get(names.BRIDGE) or {}
    cfg.vlans.update({int(v): None for v in domain.get("vlan") or {}})
    vrr_on = ((tree.get("router") or {}).get("vrr") or {}).get("enable") == ON
    if vrr_on:
        cfg.protocols.add("magp")
    interfaces = tree.get("interface") or {}
    # A swp the tree does not name is down: NVUE brings a port up administratively by
    # `nv set interface swpN` (Interface Configuration and Management, "Bring an
    # Interface Up or Down"). An Onyx port is up in VLAN 1 by default instead.
    for port in cfg.ethernets.values():
        port.shutdown = f"swp{port.name.split('/')[1]}" not in interfaces
    for name, iface in sorted(interfaces.items()):
        kind = iface.get("type")
        if kind == "swp":
            port = cfg.ethernets.get(_port_of(name))
            if port is None:
                raise NvueTreeError(f"interface {name}: beyond this switch's ports")
            port.mtu, port.shutdown = _mtu(iface), _down(iface)
        elif kind == "peerlink":
            cfg.port_channels[PEERLINK_GROUP] = PortChannel(
                PEERLINK_GROUP, ipl=1, mtu=_mtu(iface), shutdown=_down(iface)
            )
            ifnames[("port-channel", PEERLINK_GROUP)] = name
            _members(cfg, name, iface, "port-channel", PEERLINK_GROUP)
        elif kind == "bond":
            bond_mlag = (iface.get("bond") or {}).get("mlag") or {}
            if bond_mlag.get("enable") != ON or "id" not in bond_mlag:
                raise NvueTreeError(
                    f"interface {name}: a bond without `bond mlag id` (not modelled)"
                )
            group = int(bond_mlag["id"])
            cfg.mpos[group] = MlagPortChannel(
                group, description=iface.get("description"), mtu=_mtu(iface),
                shutdown=_down(iface), switchport=_switchport(name, iface),
            )  # fmt: skip
            ifnames[("mlag-port-channel", group)] = name
            _members(cfg, name, iface, "mlag-port-channel", group)
        elif kind == "svi":
            cfg.svis[int(iface["vlan"])] = _svi(iface, vrr_on)
        elif kind != "sub":  # peerlink.4094: see the module's documented differences
            raise NvueTreeError(f"interface {name}: type {kind!r} not modelled by the twin")
    return cfg, ifnames


def _svi(iface: dict, vrr_on: bool) -> Svi:
    vid = int(iface["vlan"])
    ip = iface.get("ip") or {}
    addresses = sorted(ip.get("address") or {})
    svi = Svi(vid, mtu=_mtu(iface, 1500), shutdown=_down(iface))
    if addresses:
        svi.ip = ipaddress.IPv4Interface(addresses[0])
    vrr = ip.get("vrr") or {}
    # Without `router vrr enable on` no SVI's VRR runs (VRR page, step 1 of the config).
    if vrr_on and vrr.get("enable") == ON and vrr.get("address") and vrr.get("mac-address"):
        virtual = ipaddress.IPv4Interface(sorted(vrr["address"])[0]).ip
        # One VRR per SVI: the plan names its macvlan vlan<N>-m<N>.
        svi.magp[vid] = Magp(vid, str(virtual), str(vrr["mac-address"]))
    return svi


def nvue_plan(tree: dict, hostname: str, cabled, peer: dict | None = None) -> Plan:
    """The dataplane of the NVUE switch whose applied tree is `tree` (see plan())."""
    cfg, ifnames = switch_config(tree, hostname)
    return plan(cfg, cabled, peer, lag_ifnames=ifnames)
