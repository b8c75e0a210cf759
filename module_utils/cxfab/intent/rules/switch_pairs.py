"""Rules on cxfab_switch_pairs: peers, MLAG, IPL and MLAG port-channels."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from ..schema.addresses import resolve
from . import FabricView, Finding, interface, is_host_address, rule, unicast_mac_findings


def _pair_maps(pair: dict, p: int) -> Iterator[tuple[tuple, dict]]:
    """Every per-peer map of a pair with its document path."""
    mlag = pair.get("mlag")
    if mlag:
        yield ("switch_pairs", p, "mlag", "ipl", "members"), mlag["ipl"]["members"]
        yield ("switch_pairs", p, "mlag", "ipl", "addresses"), mlag["ipl"]["addresses"]
    for m, mpo in enumerate(pair["mpos"]):
        yield ("switch_pairs", p, "mpos", m, "members"), mpo["members"]


@rule("peer-name-unique")
def peer_name_unique(view: FabricView) -> Iterator[Finding]:
    """A switch is a peer of one switch pair only."""
    seen: dict[str, str] = {}
    for p, pair in enumerate(view.pairs):
        for s, peer in enumerate(pair["peers"]):
            owner = seen.get(peer["name"])
            if owner is not None and owner != pair["name"]:
                yield (
                    ("switch_pairs", p, "peers", s, "name"),
                    f"switch {peer['name']} is already a peer of switch pair {owner}",
                )
            seen.setdefault(peer["name"], pair["name"])


@rule("peers-in-inventory")
def peers_in_inventory(view: FabricView) -> Iterator[Finding]:
    """Peers are the hosts of inventory group 'switches', and every such host is a peer."""
    if "switches" not in view.groups:
        if view.pairs:
            yield (
                ("switch_pairs",),
                "inventory group 'switches' is missing: the peers of every switch pair "
                "must be its hosts (does the inventory file parse?)",
            )
        return
    group = view.groups["switches"]
    for p, pair in enumerate(view.pairs):
        for s, peer in enumerate(pair["peers"]):
            if peer["name"] not in group:
                yield (
                    ("switch_pairs", p, "peers", s, "name"),
                    f"{peer['name']} is not a host of inventory group 'switches'",
                )
    for name in group:
        if name not in view.peer_pair and not view.was_dropped("peer", name):
            yield (
                ("switch_pairs",),
                f"inventory host {name} of group 'switches' is not a peer of any switch pair",
            )


@rule("mgmt-endpoint-unique")
def mgmt_endpoint_unique(view: FabricView) -> Iterator[Finding]:
    """No two switches share a management address and port."""
    seen: dict[tuple[str, int], str] = {}
    for p, pair in enumerate(view.pairs):
        for s, peer in enumerate(pair["peers"]):
            address, port = peer["mgmt_address"], peer["mgmt_port"]
            # Compared as the addresses a name reaches (`localhost` is 127.0.0.1).
            keys = [(key, port) for key in sorted(resolve(address))] or [(address.lower(), port)]
            other = next((seen[key] for key in keys if key in seen), None)
            if other is not None:
                yield (
                    ("switch_pairs", p, "peers", s, "mgmt_address"),
                    f"{address} port {port} is also the management endpoint of {other}",
                )
            else:
                seen.update(dict.fromkeys(keys, peer["name"]))


@rule("peer-map-keys")
def peer_map_keys(view: FabricView) -> Iterator[Finding]:
    """Per-peer maps are keyed by the peers of their own switch pair."""
    for p, pair in enumerate(view.pairs):
        names = view.peer_names(pair)
        for path, mapping in _pair_maps(pair, p):
            for key in mapping:
                if key not in names:
                    yield (
                        (*path, key),
                        f"{key} is not a peer of switch pair {pair['name']} "
                        f"(peers: {', '.join(names)})",
                    )
    for v, vlan in enumerate(view.vlans):
        maps = [(("vlans", v, "svi_addresses"), vlan["svi_addresses"])]
        priorities = vlan["gateway"]["vrrp"].get("priorities")
        if priorities:
            maps.append((("vlans", v, "gateway", "vrrp", "priorities"), priorities))
        for path, mapping in maps:
            for key in mapping:
                if key not in view.peer_pair and not view.was_dropped("peer", key):
                    yield (*path, key), f"{key} is not a peer of any switch pair"


@rule("ipl-both-peers")
def ipl_both_peers(view: FabricView) -> Iterator[Finding]:
    """IPL members and IPL addresses are given for both peers."""
    for p, pair, mlag in view.mlag_pairs():
        ipl = mlag["ipl"]
        for key in ("members", "addresses"):
            for name in view.peer_names(pair):
                if name not in ipl[key]:
                    yield (
                        ("switch_pairs", p, "mlag", "ipl", key),
                        f"no IPL {key} for peer {name}; both peers need them",
                    )


@rule("ipl-addresses-mirrored")
def ipl_addresses_mirrored(view: FabricView) -> Iterator[Finding]:
    """The two IPL addresses are different host addresses of one subnet."""
    for p, pair, mlag in view.mlag_pairs():
        addresses = mlag["ipl"]["addresses"]
        names = [name for name in view.peer_names(pair) if name in addresses]
        base = ("switch_pairs", p, "mlag", "ipl", "addresses")
        for name in names:
            if not is_host_address(interface(addresses[name])):
                yield (
                    (*base, name),
                    f"{addresses[name]} is the network or broadcast address of its subnet",
                )
        if len(names) != 2:
            continue
        first, second = (interface(addresses[name]) for name in names)
        if first.network != second.network:
            yield (
                (*base, names[1]),
                f"{second} is not in the subnet {first.network} of peer {names[0]}'s "
                "IPL address; the two must share one subnet",
            )
        elif first.ip == second.ip:
            yield (*base, names[1]), f"{second} is also the IPL address of peer {names[0]}"


@rule("ipl-vlan-not-data")
def ipl_vlan_not_data(view: FabricView) -> Iterator[Finding]:
    """The IPL VLAN is not one of cxfab_vlans."""
    for _, pair, mlag in view.mlag_pairs():
        ipl_vlan = mlag["ipl"]["vlan"]
        for v, vlan in enumerate(view.vlans):
            if vlan["id"] == ipl_vlan:
                yield (
                    ("vlans", v, "id"),
                    f"VLAN {ipl_vlan} is the IPL VLAN of switch pair {pair['name']}; "
                    "it is reserved for MLAG and cannot carry data",
                )


@rule("ipl-vlan-not-on-mpo")
def ipl_vlan_not_on_mpo(view: FabricView) -> Iterator[Finding]:
    """The IPL VLAN is not allowed on any MLAG port-channel."""
    for p, pair, mlag in view.mlag_pairs():
        ipl_vlan = mlag["ipl"]["vlan"]
        for m, mpo in view.present_mpos(pair):
            base = ("switch_pairs", p, "mpos", m)
            if mpo.get("access_vlan") == ipl_vlan:
                yield (*base, "access_vlan"), f"VLAN {ipl_vlan} is the IPL VLAN"
            for a, allowed in enumerate(mpo["allowed_vlans"]):
                if allowed == ipl_vlan:
                    yield (*base, "allowed_vlans", a), f"VLAN {ipl_vlan} is the IPL VLAN"


# Prefix lengths of a management subnet: wider ones (a /8, a /0) would let any
# management address pass mlag-vip-in-mgmt-subnet.
VIP_PREFIXES = (16, 30)


@rule("mlag-vip-placement")
def mlag_vip_placement(view: FabricView) -> Iterator[Finding]:
    """The MLAG VIP is a host address outside the IPL subnet and no switch's mgmt address."""
    for p, pair, mlag in view.mlag_pairs():
        vip = interface(mlag["vip"])
        path = ("switch_pairs", p, "mlag", "vip")
        low, high = VIP_PREFIXES
        if not low <= vip.network.prefixlen <= high:
            yield (
                path,
                (
                    f"{vip} has a /{vip.network.prefixlen} prefix: the VIP's subnet is the peers' "
                    f"management subnet, /{low} to /{high}"
                ),
            )
        if not is_host_address(vip):
            yield path, f"{vip} is the network or broadcast address of its subnet"
        for name, address in mlag["ipl"]["addresses"].items():
            if vip.ip in interface(address).network:
                yield path, f"{vip.ip} lies in the IPL subnet of {name} ({address})"
                break
        for peer in pair["peers"]:
            if peer["mgmt_address"] == str(vip.ip):
                yield path, f"{vip.ip} is the management address of {peer['name']}"


@rule("mlag-vip-in-mgmt-subnet")
def mlag_vip_in_mgmt_subnet(view: FabricView) -> Iterator[Finding]:
    """The MLAG VIP lies in the peers' management subnet (peers given by IPv4 address; a loopback
    address is an SSH forward and is not checked)."""
    for p, pair, mlag in view.mlag_pairs():
        vip = interface(mlag["vip"])
        for peer in pair["peers"]:
            try:
                address = ipaddress.IPv4Address(peer["mgmt_address"])
            except ValueError:  # a DNS name: its subnet is unknown here
                continue
            if not address.is_loopback and address not in vip.network:
                yield (
                    ("switch_pairs", p, "mlag", "vip"),
                    f"{vip} is not in the management subnet of {peer['name']} "
                    f"({address}); the VIP lives on the peers' mgmt0 network",
                )


@rule("mlag-system-mac-unicast")
def mlag_system_mac_unicast(view: FabricView) -> Iterator[Finding]:
    """The MLAG system MAC is unicast and not all-zero."""
    for p, _, mlag in view.mlag_pairs():
        yield from unicast_mac_findings(
            ("switch_pairs", p, "mlag", "system_mac"), mlag["system_mac"]
        )


@rule("port-single-use")
def port_single_use(view: FabricView) -> Iterator[Finding]:
    """A switch port is in one port-channel only (never two MPOs, never an MPO and the IPL)."""
    for p, pair in enumerate(view.pairs):
        owner: dict[tuple[str, str], str] = {}
        places: list[tuple[tuple, dict, str]] = []
        if "mlag" in pair:
            places.append(
                (
                    ("switch_pairs", p, "mlag", "ipl", "members"),
                    pair["mlag"]["ipl"]["members"],
                    "the IPL",
                )
            )
        for m, mpo in view.present_mpos(pair):
            places.append(
                (("switch_pairs", p, "mpos", m, "members"), mpo["members"], f"MPO {mpo['id']}")
            )
        for path, members, label in places:
            for peer, ports in members.items():
                for i, port in enumerate(ports):
                    first = owner.setdefault((peer, port), label)
                    if first != label:
                        yield (
                            (*path, peer, i),
                            f"port {port} of {peer} is already a member of {first}",
                        )


@rule("mpo-requires-mlag")
def mpo_requires_mlag(view: FabricView) -> Iterator[Finding]:
    """MLAG port-channels need the pair's `mlag` section."""
    for p, pair in enumerate(view.pairs):
        if "mlag" not in pair and any(True for _ in view.present_mpos(pair)):
            yield (
                ("switch_pairs", p, "mpos"),
                f"switch pair {pair['name']} has MLAG port-channels but no mlag section",
            )


@rule("mpo-both-peers")
def mpo_both_peers(view: FabricView) -> Iterator[Finding]:
    """Every MLAG port-channel has member ports on both peers."""
    for p, pair in enumerate(view.pairs):
        for m, mpo in view.present_mpos(pair):
            for name in view.peer_names(pair):
                if not mpo["members"].get(name):
                    yield (
                        ("switch_pairs", p, "mpos", m, "members"),
                        f"MPO {mpo['id']} has no member port on peer {name}",
                    )


@rule("mpo-vlans-exist")
def mpo_vlans_exist(view: FabricView) -> Iterator[Finding]:
    """VLANs of an MLAG port-channel are defined (present) in cxfab_vlans."""
    for p, pair in enumerate(view.pairs):
        ipl_vlan = pair["mlag"]["ipl"]["vlan"] if "mlag" in pair else None
        for m, mpo in view.present_mpos(pair):
            base = ("switch_pairs", p, "mpos", m)
            used = [((*base, "allowed_vlans", a), v) for a, v in enumerate(mpo["allowed_vlans"])]
            if "access_vlan" in mpo:
                used.append(((*base, "access_vlan"), mpo["access_vlan"]))
            for path, vlan_id in used:
                if vlan_id == ipl_vlan or view.was_dropped("vlan", vlan_id):
                    continue
                if vlan_id not in view.vlan_by_id:
                    yield path, f"VLAN {vlan_id} is not defined in cxfab_vlans"


@rule("mpo-mode-vlans")
def mpo_mode_vlans(view: FabricView) -> Iterator[Finding]:
    """access mode has only access_vlan, trunk only allowed_vlans; hybrid may have both."""
    for p, pair in enumerate(view.pairs):
        for m, mpo in view.present_mpos(pair):
            base = ("switch_pairs", p, "mpos", m)
            mode = mpo["switchport_mode"]
            if mode == "access" and mpo["allowed_vlans"]:
                yield (*base, "allowed_vlans"), "an access port-channel carries no tagged VLANs"
            if mode == "access" and "access_vlan" not in mpo:
                yield (*base, "access_vlan"), "an access port-channel needs access_vlan"
            if mode == "trunk" and "access_vlan" in mpo:
                yield (
                    (*base, "access_vlan"),
                    "a trunk port-channel carries no untagged VLAN (use hybrid)",
                )
