"""Fabric document -> structured config of one Onyx switch (AVD style).

The structured config is the contract between the fabric and the switch: the
templates render it, the deploy compares against it and the health checks
take their expected values from it. It holds no credentials.

Shape (lists in natural order, written to build/structured/<switch>.yml):

    switch, pair, peer_index, partner, model
    management: {address, port}        partner_management: {address, port}
    protocols: {lacp, ip_routing, mlag, dcb_pfc, magp, vrrp}
    mlag: {domain, vip, system_mac, ipl: {id, port_channel, members, lacp_mode,
           pfc, vlan, address, peer_address}}            (absent: no MLAG)
    mlag_port_channels: [{id, description, members, lacp_mode, mtu,
                          switchport_mode, access_vlan, allowed_vlans}]
    vlans: [{id, name}]                 data VLANs on this pair (not the IPL VLAN)
    vlan_interfaces: [{id, ip_address, mtu}]
    magp: [{vlan, instance, virtual_ip, virtual_mac}]
    vrrp: [{vlan, vrid, virtual_ip, priority, preempt, advertisement_interval}]
    scope: {prune, vlans, mlag_port_channels, port_channels, mlag}
"""

from __future__ import annotations

from .addressing import AddressError, interface_address, mac, natural_key, port, same_subnet

DEFAULT_MTU = 1500
VRRP_MASTER_PRIORITY = 110
VRRP_BACKUP_PRIORITY = 100


class StructuredConfigError(ValueError):
    """Intent that cannot be turned into a switch config; names the fabric key path."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def _find_pair(fabric: dict, switch: str) -> tuple[int, dict, int]:
    for pair_index, pair in enumerate(fabric.get("switch_pairs") or []):
        for peer_index, peer in enumerate(pair.get("peers") or []):
            if peer.get("name") == switch:
                return pair_index, pair, peer_index
    raise StructuredConfigError(
        "switch_pairs[].peers[].name", f"no switch pair has a peer named {switch!r}"
    )


def _ports(value, path: str) -> list[str]:
    if not isinstance(value, list) or not value:
        raise StructuredConfigError(path, "needs a non-empty list of ports such as [1/1]")
    try:
        return sorted({port(str(p)) for p in value}, key=natural_key)
    except AddressError as exc:
        raise StructuredConfigError(path, str(exc)) from exc


def _cidr(value, path: str) -> str:
    try:
        return interface_address(str(value))
    except AddressError as exc:
        raise StructuredConfigError(path, str(exc)) from exc


def _mac(value, path: str) -> str:
    try:
        return mac(str(value))
    except AddressError as exc:
        raise StructuredConfigError(path, str(exc)) from exc


def _pair_vlans(fabric: dict, pair: dict, peer_names: list[str]) -> list[tuple[int, dict]]:
    """(index in fabric.vlans, vlan) of the VLANs this pair carries."""
    carried = set()
    for mpo in pair.get("mpos") or []:
        carried.update(mpo.get("allowed_vlans") or [])
        if mpo.get("access_vlan"):
            carried.add(mpo["access_vlan"])
    only_pair = len(fabric.get("switch_pairs") or []) == 1
    result = []
    for index, vlan in enumerate(fabric.get("vlans") or []):
        svis = vlan.get("svi_addresses") or {}
        if only_pair or vlan["id"] in carried or any(name in svis for name in peer_names):
            result.append((index, vlan))
    return result


def _mlag(pair: dict, pair_path: str, switch: str, partner: str) -> dict | None:
    mlag = pair.get("mlag")
    if not mlag:
        return None
    path = f"{pair_path}.mlag"
    ipl = mlag.get("ipl") or {}
    members = (ipl.get("members") or {}).get(switch)
    addresses = ipl.get("addresses") or {}
    if switch not in addresses or partner not in addresses:
        raise StructuredConfigError(
            f"{path}.ipl.addresses", f"needs an address for both {switch} and {partner}"
        )
    local = _cidr(addresses[switch], f"{path}.ipl.addresses.{switch}")
    remote = _cidr(addresses[partner], f"{path}.ipl.addresses.{partner}")
    if not same_subnet(local, remote.split("/")[0]):
        raise StructuredConfigError(
            f"{path}.ipl.addresses", f"{local} and {remote} are not in one subnet"
        )
    return {
        "domain": str(mlag["domain"]),
        "vip": _cidr(mlag["vip"], f"{path}.vip"),
        "system_mac": _mac(mlag["system_mac"], f"{path}.system_mac"),
        "ipl": {
            "id": int(ipl.get("id", 1)),
            "port_channel": int(ipl["port_channel"]),
            "members": _ports(members, f"{path}.ipl.members.{switch}"),
            "lacp_mode": "active",
            "pfc": bool(ipl.get("pfc", True)),
            "vlan": int(ipl["vlan"]),
            "address": local,
            "peer_address": remote.split("/")[0],
        },
    }


def _mpos(pair: dict, pair_path: str, switch: str, present_vlans: set, ipl_vlan) -> list:
    result = []
    for index, mpo in enumerate(pair.get("mpos") or []):
        path = f"{pair_path}.mpos[{index}]"
        if mpo.get("state", "present") == "absent":
            continue
        members = (mpo.get("members") or {}).get(switch)
        mode = mpo.get("switchport_mode", "hybrid")
        allowed = sorted(set(mpo.get("allowed_vlans") or []))
        for vlan in allowed:
            if vlan not in present_vlans:
                raise StructuredConfigError(
                    f"{path}.allowed_vlans",
                    f"VLAN {vlan} is not a present VLAN of the fabric (vlans[].id)",
                )
            if vlan == ipl_vlan:
                raise StructuredConfigError(
                    f"{path}.allowed_vlans", f"VLAN {vlan} is the IPL VLAN, reserved for MLAG"
                )
        access = mpo.get("access_vlan")
        if access is not None and access != 1 and access not in present_vlans:
            raise StructuredConfigError(
                f"{path}.access_vlan", f"VLAN {access} is not a present VLAN of the fabric"
            )
        result.append(
            {
                "id": int(mpo["id"]),
                "description": mpo.get("description"),
                "members": _ports(members, f"{path}.members.{switch}"),
                "lacp_mode": mpo.get("lacp_mode", "active"),
                "mtu": int(mpo.get("mtu") or DEFAULT_MTU),
                "switchport_mode": mode,
                "access_vlan": int(access) if access is not None and mode != "trunk" else 1,
                "allowed_vlans": allowed if mode != "access" else [],
            }
        )
    return sorted(result, key=lambda m: m["id"])


def _vrrp_priority(vlan, vrrp_index: int, peer_names, switch, path) -> int:
    priorities = (vlan["gateway"].get("vrrp") or {}).get("priorities") or {}
    if priorities:
        if switch not in priorities:
            raise StructuredConfigError(
                f"{path}.gateway.vrrp.priorities", f"no priority for {switch}"
            )
        return int(priorities[switch])
    master = peer_names[vrrp_index % 2]
    return VRRP_MASTER_PRIORITY if switch == master else VRRP_BACKUP_PRIORITY


def build(fabric: dict, switch: str, prune: bool = True) -> dict:
    """The structured config of `switch` (an inventory hostname of group switches)."""
    pair_index, pair, peer_index = _find_pair(fabric, switch)
    pair_path = f"switch_pairs[{pair_index}]"
    peers = pair.get("peers") or []
    if len(peers) != 2:
        raise StructuredConfigError(f"{pair_path}.peers", "a switch pair has exactly two peers")
    peer_names = [p["name"] for p in peers]
    partner = peer_names[1 - peer_index]
    mlag = _mlag(pair, pair_path, switch, partner)
    ipl_vlan = mlag["ipl"]["vlan"] if mlag else None

    pair_vlans = _pair_vlans(fabric, pair, peer_names)
    present = {v["id"] for _, v in pair_vlans if v.get("state", "present") == "present"}
    vlans, interfaces, magp, vrrp = [], [], [], []
    vrrp_index = 0
    for index, vlan in sorted(pair_vlans, key=lambda item: item[1]["id"]):
        path = f"vlans[{index}]"
        if vlan.get("state", "present") != "present":
            continue
        if vlan["id"] == ipl_vlan:
            raise StructuredConfigError(
                f"{path}.id", f"VLAN {ipl_vlan} is the IPL VLAN of {pair_path}, reserved for MLAG"
            )
        vlans.append({"id": vlan["id"], "name": vlan.get("name")})
        svis = vlan.get("svi_addresses") or {}
        gateway = vlan.get("gateway") or {}
        mode = gateway.get("mode", "none")
        if switch in svis:
            interfaces.append(
                {
                    "id": vlan["id"],
                    "ip_address": _cidr(svis[switch], f"{path}.svi_addresses.{switch}"),
                    "mtu": int(vlan.get("mtu") or DEFAULT_MTU),
                }
            )
        elif mode in ("magp", "vrrp"):
            raise StructuredConfigError(
                f"{path}.svi_addresses", f"gateway mode {mode} needs an SVI address on {switch}"
            )
        if mode == "magp":
            if mlag is None:
                raise StructuredConfigError(
                    f"{path}.gateway.mode", f"magp needs an MLAG pair ({pair_path}.mlag is unset)"
                )
            magp.append(
                {
                    "vlan": vlan["id"],
                    "instance": int(gateway["instance"]),
                    "virtual_ip": str(gateway["virtual_ip"]),
                    "virtual_mac": _mac(gateway["virtual_mac"], f"{path}.gateway.virtual_mac"),
                }
            )
        elif mode == "vrrp":
            settings = gateway.get("vrrp") or {}
            vrid = settings.get("vrid", vlan["id"] if vlan["id"] <= 255 else None)
            if vrid is None:
                raise StructuredConfigError(
                    f"{path}.gateway.vrrp.vrid", "required when the VLAN id is above 255"
                )
            vrrp.append(
                {
                    "vlan": vlan["id"],
                    "vrid": int(vrid),
                    "virtual_ip": str(gateway["virtual_ip"]),
                    "priority": _vrrp_priority(vlan, vrrp_index, peer_names, switch, path),
                    "preempt": bool(settings.get("preempt", True)),
                    "advertisement_interval": int(settings.get("advertisement_interval", 1)),
                }
            )
            vrrp_index += 1

    mpos = _mpos(pair, pair_path, switch, present, ipl_vlan)
    if mpos and mlag is None:
        raise StructuredConfigError(f"{pair_path}.mpos", "MLAG port-channels need the pair's mlag")

    management = {
        "address": str(peers[peer_index]["mgmt_address"]),
        "port": int(peers[peer_index].get("mgmt_port") or 22),
    }
    partner_peer = peers[1 - peer_index]
    return {
        "switch": switch,
        "pair": pair["name"],
        "peer_index": peer_index,
        "partner": partner,
        "model": pair.get("model"),
        "management": management,
        "partner_management": {
            "address": str(partner_peer["mgmt_address"]),
            "port": int(partner_peer.get("mgmt_port") or 22),
        },
        "protocols": {
            "lacp": bool(mlag or mpos),
            "ip_routing": bool(mlag or interfaces),
            "mlag": bool(mlag),
            "dcb_pfc": bool(mlag and mlag["ipl"]["pfc"]),
            "magp": bool(magp),
            "vrrp": bool(vrrp),
        },
        "mlag": mlag,
        "mlag_port_channels": mpos,
        "vlans": vlans,
        "vlan_interfaces": interfaces,
        "magp": magp,
        "vrrp": vrrp,
        "scope": {
            "prune": bool(prune),
            "vlans": sorted({v["id"] for _, v in pair_vlans} | ({ipl_vlan} if ipl_vlan else set())),
            "mlag_port_channels": sorted(int(m["id"]) for m in pair.get("mpos") or []),
            "port_channels": [mlag["ipl"]["port_channel"]] if mlag else [],
            "mlag": "mlag" in pair,
        },
    }
