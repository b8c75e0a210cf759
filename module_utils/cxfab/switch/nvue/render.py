"""Structured config -> the NVUE desired-config tree of one switch.

The tree is what NVUE's REST API PATCHes at /nvue_v1/?rev=N and what
`nv config show -o json` prints: a CLI path `nv set a b c v` is the tree path
a.b.c = v, and a keyed set (bond members, addresses, bridge VLANs) is a map of
keys to `{}`. Every path below is confirmed by an NVIDIA page named beside it
(docs/switches-nvue.md has the table); spec_nvue59.py keeps their
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
  VRRP   content/nvue-reference/Set-and-Unset-Commands/VRR-and-VRRP.md (ip vrrp enable,
         ip vrrp virtual-router <vrid> address/priority/preempt/advertisement-interval,
         router vrrp enable; the 5.14-and-earlier `ip vrrp` names)
"""

from __future__ import annotations

import ipaddress

from . import names

ON = "on"  # 5.9-5.14 booleans (`enable on`); 5.15 writes `state enabled` (refused by intent)
VRRP_INTERVAL_MS = (10, 40950)  # `advertisement-interval`, milliseconds (VRR-and-VRRP reference)
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


def _vrrp(gateways: list[dict]) -> dict:
    """`ip vrrp` of one SVI: its virtual routers keyed by VRID, `enable on`."""
    routers = {}
    for gateway in gateways:
        interval = gateway["advertisement_interval"] * 1000  # intent: seconds; NVUE: ms
        if not VRRP_INTERVAL_MS[0] <= interval <= VRRP_INTERVAL_MS[1]:
            raise RenderError(
                f"vrrp vlan {gateway['vlan']} vrid {gateway['vrid']}: advertisement interval "
                f"{gateway['advertisement_interval']} s is outside NVUE's "
                f"{VRRP_INTERVAL_MS[0]}-{VRRP_INTERVAL_MS[1]} ms"
            )
        routers[str(gateway["vrid"])] = {
            "address": {str(ipaddress.IPv4Address(gateway["virtual_ip"])): {}},
            "priority": gateway["priority"],
            "preempt": ON if gateway["preempt"] else "off",
            "advertisement-interval": interval,
        }
    return {"enable": ON, "virtual-router": routers}


def _svis(structured: dict, interfaces: dict) -> tuple[bool, bool]:
    """The SVIs; (VRR used, VRRP used). NVUE runs one of them per switch: "You cannot
    configure both VRR and VRRP on the same switch" (VRR page, VRRP page)."""
    gateways = {g["vlan"]: g for g in structured.get("anycast_gateways") or []}
    vrrp: dict[int, list] = {}
    for gateway in structured.get("vrrp") or []:
        vrrp.setdefault(gateway["vlan"], []).append(gateway)
    if gateways and vrrp:
        raise RenderError(
            f"vrrp (VLAN {min(vrrp)}) beside VRR gateways (VLAN {min(gateways)}): NVUE cannot "
            "run VRR and VRRP on the same switch"
        )
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
        if svi["id"] in vrrp:
            ip["vrrp"] = _vrrp(vrrp.pop(svi["id"]))
        interfaces[names.svi(svi["id"])] = {
            "type": "svi",
            "vlan": svi["id"],
            "ip": ip,
            "link": {"mtu": svi["mtu"]},
        }
    if vrrp:
        raise RenderError(f"vrrp vlan {min(vrrp)}: no VLAN interface (SVI) to run it on")
    return bool(gateways), bool(structured.get("vrrp"))


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
    vrr, vrrp = _svis(structured, interfaces)
    if vrr:
        tree["router"] = {"vrr": {"enable": ON}}
    if vrrp:
        tree["router"] = {"vrrp": {"enable": ON}}
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
