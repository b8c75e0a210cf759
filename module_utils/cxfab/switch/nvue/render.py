"""Structured config -> the NVUE desired-config tree of one switch.

The tree is what NVUE's REST API PATCHes at /nvue_v1/?rev=N and what
`nv config show -o json` prints: a CLI path `nv set a b c v` is the tree path
a.b.c = v, and a keyed set (bond members, addresses, bridge VLANs) is a map of
keys to `{}`. Every path below is confirmed by an NVIDIA page named beside it
(docs/switches.md, section NVUE, has the table); spec_nvue59.py keeps their
types and enums and spec.validate() checks a rendered tree against it.

Sources (CumulusNetworks/docs, content/cumulus-linux-59/...):
  MLAG   Layer-2/Multi-Chassis-Link-Aggregation-MLAG.md (bond mlag id, peerlink bond
         member, mlag mac-address/backup/peer-ip, peerlink.4094, link mtu)
  VRR    Layer-2/Virtual-Router-Redundancy-VRR.md (ip address, ip vrr address/
         mac-address/enable/state, router vrr enable, the startup.yaml tree)
  Bridge Layer-2/Ethernet-Bridging-VLANs/VLAN-aware-Bridge-Mode.md (bridge domain
         br_default vlan/untagged, port access/untagged/vlan)
  Bond   Layer-2/Bonding-Link-Aggregation.md (bond member, bond mode lacp|static)
  RoCE   Layer-1-and-Switch-Ports/Quality-of-Service/RDMA-over-Converged-Ethernet-RoCE.md
"""

from __future__ import annotations

import ipaddress

from . import names

ON = "on"  # 5.9-5.14 booleans (`enable on`); 5.15 writes `state enabled` (refused by intent)
ROCE_PRIORITY = 3  # `qos roce mode lossless` enables PFC on switch priority 3 (RoCE page)
SUPPORTED_RELEASES = ("5.9", "5.10", "5.11", "5.12", "5.13", "5.14")


class RenderError(ValueError):
    """The structured config holds something cxfab does not render into NVUE."""


def _keys(values) -> dict:
    return {str(v): {} for v in values}


def _release(structured: dict) -> str:
    release = structured.get("release") or SUPPORTED_RELEASES[0]
    if release not in SUPPORTED_RELEASES:
        raise RenderError(
            f"Cumulus Linux {release}: cxfab renders the NVUE tree of "
            f"{SUPPORTED_RELEASES[0]}-{SUPPORTED_RELEASES[-1]} only"
        )
    return release


def _backup_address(structured: dict) -> str:
    address = structured["partner_management"]["address"]
    try:
        return str(ipaddress.IPv4Address(address))
    except ValueError:
        raise RenderError(
            f"partner_management.address {address!r}: NVUE `mlag backup` takes an IPv4 address"
        ) from None


def _port(interfaces: dict, port: str, mtu: int) -> str:
    name = names.swp(port)
    interfaces[name] = {"type": "swp", "link": {"mtu": mtu}}
    return name


def _bridge_port(bond: dict) -> dict:
    """The bond's membership of br_default: access, trunk or hybrid (untagged + tagged)."""
    mode = bond["switchport_mode"]
    if mode == "access":
        return {"access": bond["access_vlan"]}
    port = {"vlan": _keys(bond["allowed_vlans"])}
    port["untagged"] = bond["access_vlan"] if mode == "hybrid" else "none"
    return port


def _mlag(structured: dict, interfaces: dict) -> dict:
    mlag = structured["mlag"]
    link = mlag["peer_link"]
    if link["vlan"] != names.PEERLINK_VLAN:
        raise RenderError(
            f"mlag.peer_link.vlan {link['vlan']}: NVUE's peer link is {names.PEERLINK_SUB}"
        )
    members = [_port(interfaces, p, link["mtu"]) for p in link["members"]]
    interfaces[names.PEERLINK] = {
        "type": "peerlink",
        "bond": {"member": _keys(members)},
        "link": {"mtu": link["mtu"]},
    }
    interfaces[names.PEERLINK_SUB] = {
        "type": "sub",
        "base-interface": names.PEERLINK,
        "vlan": names.PEERLINK_VLAN,
    }
    return {
        "enable": ON,
        "mac-address": mlag["system_mac"].upper(),
        # The partner's eth0 address, reached in the management VRF (MLAG step 5:
        # "nv set mlag backup 10.10.10.2 vrf mgmt").
        "backup": {_backup_address(structured): {"vrf": "mgmt"}},
        "peer-ip": "linklocal",
    }


def _bonds(structured: dict, interfaces: dict) -> None:
    for bond in structured.get("mlag_bonds") or []:
        if bond.get("lacp_mode") == "passive":
            raise RenderError(f"mlag_bonds {bond['id']}: NVUE has no passive LACP")
        members = [_port(interfaces, p, bond["mtu"]) for p in bond["members"]]
        tree = {
            "type": "bond",
            "bond": {
                "member": _keys(members),
                "mode": "static" if bond["lacp_mode"] == "on" else "lacp",
                "mlag": {"enable": ON, "id": bond["id"]},
            },
            "bridge": {"domain": {names.BRIDGE: _bridge_port(bond)}},
            "link": {"mtu": bond["mtu"]},
        }
        if bond.get("description"):
            tree["description"] = bond["description"]
        interfaces[names.bond(bond["id"])] = tree


def _svis(structured: dict, interfaces: dict) -> bool:
    gateways = {g["vlan"]: g for g in structured.get("anycast_gateways") or []}
    if structured.get("vrrp"):
        raise RenderError("vrrp: NVUE VRRP is not rendered yet (intent rule cumulus-gateway-vrr)")
    for svi in structured.get("vlan_interfaces") or []:
        address = ipaddress.IPv4Interface(svi["ip_address"])
        ip: dict = {"address": {str(address): {}}}
        gateway = gateways.get(svi["id"])
        if gateway:
            virtual = f"{gateway['virtual_ip']}/{address.network.prefixlen}"
            ip["vrr"] = {
                "address": {virtual: {}},
                "mac-address": gateway["virtual_mac"].upper(),
                "enable": ON,
                "state": {"up": {}},
            }
        interfaces[names.svi(svi["id"])] = {
            "type": "svi",
            "vlan": svi["id"],
            "ip": ip,
            "link": {"mtu": svi["mtu"]},
        }
    return bool(gateways)


def render(structured: dict) -> dict:
    """The NVUE tree cxfab wants on this switch (only what cxfab owns)."""
    if structured.get("platform") != "cumulus":
        raise RenderError(f"platform {structured.get('platform')!r} is not cumulus")
    _release(structured)
    interfaces: dict = {}
    tree: dict = {}
    if structured.get("mlag"):
        tree["mlag"] = _mlag(structured, interfaces)
    _bonds(structured, interfaces)
    vlans = [v["id"] for v in structured.get("vlans") or []]
    if vlans:
        tree["bridge"] = {"domain": {names.BRIDGE: {"vlan": _keys(vlans)}}}
    if _svis(structured, interfaces):
        tree["router"] = {"vrr": {"enable": ON}}
    lossless = structured.get("lossless")
    if lossless:
        if lossless["priority"] != ROCE_PRIORITY:
            raise RenderError(
                f"lossless.priority {lossless['priority']}: NVUE `qos roce` runs PFC on "
                f"priority {ROCE_PRIORITY}"
            )
        tree["qos"] = {"roce": {"enable": ON, "mode": "lossless"}}
    if interfaces:
        tree["interface"] = dict(sorted(interfaces.items()))
    return tree
