"""Validated fabric -> structured config of one switch (AVD style).

The structured config is the contract between the fabric and the switch: the
templates render it, the deploy compares against it and the health checks
take their expected values from it. It holds no credentials.

Input is the fabric that playbooks/validate.yml publishes: every rule of
module_utils/cxfab/intent/rules/ has passed and every default is filled
(cxfab.intent.fabric.normalise). Nothing is checked or defaulted a second time here;
this module only derives the per-switch view.

Its keys are OS-neutral: every switch driver (Onyx today, Cumulus/NVUE next)
consumes the same shape and maps it to its own statements (an Onyx MLAG bond is an
mlag-port-channel, its anycast gateway MAGP and its `dscp` trust the `L3` keyword).

Shape (lists in natural order, written to build/structured/<switch>.yml):

    switch, pair, peer_index, partner, platform (the pair's switch OS), model
    release                            (cumulus only: the Cumulus Linux release, "5.9")
    management: {address, port}        partner_management: {address, port}
    protocols: {lacp, ip_routing, mlag, pfc, anycast_gateway, vrrp, lldp}
    mlag: {domain, vip, system_mac, peer_link: {id, bond_id, members, lacp_mode,
           pfc, mtu, vlan, address, peer_address}}       (absent: no MLAG)
    mlag_bonds: [{id, description, members, lacp_mode, mtu,
                  switchport_mode, access_vlan, allowed_vlans}]
    vlans: [{id, name}]                 data VLANs on this pair (not the peer-link VLAN)
    vlan_interfaces: [{id, ip_address, mtu}]
    anycast_gateways: [{vlan, id, virtual_ip, virtual_mac}]
                       (both peers answer the virtual IP/MAC: MAGP on Onyx, VRR on Cumulus)
    vrrp: [{vlan, vrid, virtual_ip, priority, preempt, advertisement_interval}]
    lossless: {priority, ports, trust: dscp, ecn: {traffic_class, min_kb, max_kb}} | null
               (cxfab_roce.lossless on and an MLAG bond of this switch carries a RoCE VLAN)
    scope: {prune, vlans, mlag_bonds, peer_link_bonds, mlag, lossless, lossless_ports}

gateways_of() gives the gateways of a structured config as neutral rows, for the
checks that need no switch OS (verify's dataplane).
"""

from __future__ import annotations

from ..common.addressing import interface_address, natural_key, port

VRRP_MAC_PREFIX = "00:00:5E:00:01:"


class StructuredConfigError(ValueError):
    """A switch the fabric does not describe; names the fabric key path."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def find_pair(fabric: dict, switch: str) -> tuple[dict, int]:
    """(switch pair, index of `switch` in its peers)."""
    for pair in fabric["switch_pairs"]:
        for peer_index, peer in enumerate(pair["peers"]):
            if peer["name"] == switch:
                return pair, peer_index
    raise StructuredConfigError(
        "switch_pairs[].peers[].name", f"no switch pair has a peer named {switch!r}"
    )


def _ports(values) -> list[str]:
    return sorted({port(str(p)) for p in values}, key=natural_key)


def _pair_vlans(fabric: dict, pair: dict, peer_names: list[str]) -> list[dict]:
    """The VLANs this pair carries (every VLAN when the fabric has one pair)."""
    carried = set()
    for mpo in pair["mpos"]:
        carried.update(mpo["allowed_vlans"])
        if "access_vlan" in mpo:
            carried.add(mpo["access_vlan"])
    only_pair = len(fabric["switch_pairs"]) == 1
    return [
        vlan
        for vlan in fabric["vlans"]
        if only_pair or vlan["id"] in carried or any(n in vlan["svi_addresses"] for n in peer_names)
    ]


def _mlag(mlag: dict, switch: str, partner: str) -> dict:
    ipl = mlag["ipl"]
    return {
        "domain": mlag["domain"],
        "vip": interface_address(mlag["vip"]),
        "system_mac": mlag["system_mac"],
        "peer_link": {
            "id": ipl["id"],
            "bond_id": ipl["port_channel"],
            "members": _ports(ipl["members"][switch]),
            "lacp_mode": "active",
            "pfc": ipl["pfc"],
            "mtu": ipl["mtu"],
            "vlan": ipl["vlan"],
            "address": interface_address(ipl["addresses"][switch]),
            "peer_address": interface_address(ipl["addresses"][partner]).split("/")[0],
        },
    }


def _mpo(mpo: dict, switch: str) -> dict:
    mode = mpo["switchport_mode"]
    access = mpo.get("access_vlan", 1)
    return {
        "id": mpo["id"],
        "description": mpo.get("description"),
        "members": _ports(mpo["members"][switch]),
        "lacp_mode": mpo["lacp_mode"],
        "mtu": mpo["mtu"],
        "switchport_mode": mode,
        "access_vlan": access if mode != "trunk" else 1,
        "allowed_vlans": sorted(set(mpo["allowed_vlans"])) if mode != "access" else [],
    }


def _gateway(vlan: dict, switch: str) -> tuple[str, dict | None]:
    gateway = vlan["gateway"]
    if gateway["mode"] == "magp":
        return "anycast", {
            "vlan": vlan["id"],
            "id": gateway["instance"],
            "virtual_ip": gateway["virtual_ip"],
            "virtual_mac": gateway["virtual_mac"],
        }
    if gateway["mode"] == "vrrp":
        settings = gateway["vrrp"]
        return "vrrp", {
            "vlan": vlan["id"],
            "vrid": settings["vrid"],
            "virtual_ip": gateway["virtual_ip"],
            "priority": settings["priorities"][switch],
            "preempt": settings["preempt"],
            "advertisement_interval": settings["advertisement_interval"],
        }
    return "none", None


def _lossless(fabric: dict, mpos: list[dict]) -> dict | None:
    """PFC, DSCP trust and ECN on the member ports of every MPO that carries RoCE.

    Onyx maps switch-priority n to traffic class n by default, so ECN marks the
    traffic class numbered like the PFC priority.
    """
    roce = fabric.get("roce") or {}
    if not roce.get("lossless"):
        return None
    roce_vlans = set(roce["vlans"])
    ports = {
        member
        for mpo in mpos
        if roce_vlans & {*mpo["allowed_vlans"], mpo["access_vlan"]}
        for member in mpo["members"]
    }
    if not ports:
        return None
    return {
        "priority": roce["priority"],
        "ports": sorted(ports, key=natural_key),
        "trust": "dscp",
        "ecn": {
            "traffic_class": roce["priority"],
            "min_kb": roce["ecn"]["min_kb"],
            "max_kb": roce["ecn"]["max_kb"],
        },
    }


def _pair_ports(pair: dict, switch: str) -> list[str]:
    members = [p for mpo in pair["mpos"] for p in mpo["members"].get(switch, [])]
    if pair.get("mlag"):
        members += pair["mlag"]["ipl"]["members"].get(switch, [])
    return _ports(members)


def _endpoint(peer: dict) -> dict:
    return {"address": peer["mgmt_address"], "port": peer["mgmt_port"]}


def build(fabric: dict, switch: str, prune: bool = True) -> dict:
    """The structured config of `switch` (an inventory hostname of group switches)."""
    pair, peer_index = find_pair(fabric, switch)
    peers = pair["peers"]
    peer_names = [p["name"] for p in peers]
    partner = peer_names[1 - peer_index]
    mlag = _mlag(pair["mlag"], switch, partner) if pair.get("mlag") else None
    ipl_vlan = mlag["peer_link"]["vlan"] if mlag else None

    pair_vlans = _pair_vlans(fabric, pair, peer_names)
    vlans, interfaces, gateways = [], [], {"anycast": [], "vrrp": []}
    for vlan in sorted(pair_vlans, key=lambda v: v["id"]):
        if vlan["state"] != "present":
            continue
        vlans.append({"id": vlan["id"], "name": vlan.get("name")})
        if switch in vlan["svi_addresses"]:
            interfaces.append(
                {
                    "id": vlan["id"],
                    "ip_address": interface_address(vlan["svi_addresses"][switch]),
                    "mtu": vlan["mtu"],
                }
            )
        mode, gateway = _gateway(vlan, switch)
        if gateway:
            gateways[mode].append(gateway)

    mpos = sorted(
        (_mpo(m, switch) for m in pair["mpos"] if m["state"] == "present"),
        key=lambda m: m["id"],
    )
    lossless = _lossless(fabric, mpos)
    release = {"release": pair["cumulus_release"]} if pair["platform"] == "cumulus" else {}
    return {
        "switch": switch,
        "pair": pair["name"],
        "peer_index": peer_index,
        "partner": partner,
        "platform": pair["platform"],
        **release,
        "model": pair.get("model"),
        "management": _endpoint(peers[peer_index]),
        "partner_management": _endpoint(peers[1 - peer_index]),
        "protocols": {
            "lacp": bool(mlag or mpos),
            "ip_routing": bool(mlag or interfaces),
            "mlag": bool(mlag),
            "pfc": bool((mlag and mlag["peer_link"]["pfc"]) or lossless),
            "anycast_gateway": bool(gateways["anycast"]),
            "vrrp": bool(gateways["vrrp"]),
            "lldp": pair["lldp"],
        },
        "mlag": mlag,
        "mlag_bonds": mpos,
        "vlans": vlans,
        "vlan_interfaces": interfaces,
        "anycast_gateways": gateways["anycast"],
        "vrrp": gateways["vrrp"],
        "lossless": lossless,
        "scope": {
            "prune": bool(prune),
            "vlans": sorted({v["id"] for v in pair_vlans} | ({ipl_vlan} if ipl_vlan else set())),
            "mlag_bonds": sorted(m["id"] for m in pair["mpos"]),
            "peer_link_bonds": [mlag["peer_link"]["bond_id"]] if mlag else [],
            "mlag": "mlag" in pair,
            # Ports whose lossless lines are cxfab's: every member port of the pair's
            # MPOs and IPL on this switch (with prune off, others are left alone).
            "lossless": bool(lossless),
            "lossless_ports": _pair_ports(pair, switch),
        },
    }


def gateways_of(structured: dict) -> list[dict]:
    """The gateways of a switch's structured config, by VLAN:
    [{vlan, mode: anycast|vrrp, virtual_ip, virtual_mac}] (VRRP: the RFC 5798 MAC of its vrid)."""
    rows = [
        {"vlan": g["vlan"], "mode": "anycast", "virtual_ip": g["virtual_ip"],
         "virtual_mac": g["virtual_mac"].upper()}
        for g in structured.get("anycast_gateways") or []
    ]  # fmt: skip
    rows += [
        {"vlan": g["vlan"], "mode": "vrrp", "virtual_ip": g["virtual_ip"],
         "virtual_mac": f"{VRRP_MAC_PREFIX}{g['vrid']:02X}"}
        for g in structured.get("vrrp") or []
    ]  # fmt: skip
    return sorted(rows, key=lambda row: row["vlan"])
