"""Rules on cxfab_vlans: subnets, SVIs and the MAGP/VRRP gateways."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import Any

from . import (
    FabricView,
    Finding,
    interface,
    is_host_address,
    network,
    repeats,
    rule,
    unicast_mac_findings,
)


def _present(view: FabricView) -> Iterator[tuple[int, dict]]:
    for v, vlan in enumerate(view.vlans):
        if vlan["state"] == "present":
            yield v, vlan


def _gateways(view: FabricView, *modes: str) -> Iterator[tuple[int, dict]]:
    """(index, VLAN) of the present VLANs whose gateway mode is one of `modes`."""
    for v, vlan in _present(view):
        if vlan["gateway"]["mode"] in modes:
            yield v, vlan


@rule("vlan-name-unique")
def vlan_name_unique(view: FabricView) -> Iterator[Finding]:
    """VLAN names are unique."""
    seen: dict[str, int] = {}
    for v, vlan in enumerate(view.vlans):
        name = vlan.get("name")
        if name is None:
            continue
        if name in seen:
            yield ("vlans", v, "name"), f"name {name} is also used by VLAN {seen[name]}"
        else:
            seen[name] = vlan["id"]


@rule("vlan-subnet-required")
def vlan_subnet_required(view: FabricView) -> Iterator[Finding]:
    """A VLAN with SVIs or a gateway has a subnet."""
    for v, vlan in _present(view):
        if "subnet" not in vlan and (vlan["svi_addresses"] or vlan["gateway"]["mode"] != "none"):
            yield ("vlans", v, "subnet"), "required when the VLAN has SVI addresses or a gateway"


@rule("gateway-fields")
def gateway_fields(view: FabricView) -> Iterator[Finding]:
    """magp needs instance, virtual_ip, virtual_mac; vrrp needs virtual_ip; none has no gateway
    keys."""
    needed = {
        "magp": ("instance", "virtual_ip", "virtual_mac"),
        "vrrp": ("virtual_ip",),
        "none": (),
    }
    unused = {
        "magp": ("vrid", "priorities"),
        "vrrp": ("instance", "virtual_mac"),
        "none": ("instance", "virtual_ip", "virtual_mac", "vrid", "priorities"),
    }
    for v, vlan in _present(view):
        gateway = vlan["gateway"]
        mode = gateway["mode"]
        base = ("vlans", v, "gateway")
        for key in needed[mode]:
            if key not in gateway:
                yield (*base, key), f"required for gateway mode {mode}"
        for key in unused[mode]:
            if key in gateway or key in gateway["vrrp"]:
                where = (*base, key) if key in gateway else (*base, "vrrp", key)
                yield where, f"not used by gateway mode {mode}; remove it"


@rule("gateway-vip-in-subnet")
def gateway_vip_in_subnet(view: FabricView) -> Iterator[Finding]:
    """The gateway virtual IP is a host address inside the VLAN subnet."""
    for v, vlan in _present(view):
        gateway = vlan["gateway"]
        if "subnet" not in vlan or "virtual_ip" not in gateway:
            continue
        subnet = network(vlan["subnet"])
        vip = interface(f"{gateway['virtual_ip']}/{subnet.prefixlen}")
        path = ("vlans", v, "gateway", "virtual_ip")
        if vip.ip not in subnet:
            yield path, f"{vip.ip} is outside the VLAN subnet {subnet}"
        elif not is_host_address(vip):
            yield path, f"{vip.ip} is the network or broadcast address of {subnet}"


@rule("svi-in-subnet")
def svi_in_subnet(view: FabricView) -> Iterator[Finding]:
    """SVI addresses are host addresses inside the VLAN subnet, with its prefix length."""
    for v, vlan in _present(view):
        if "subnet" not in vlan:
            continue
        subnet = network(vlan["subnet"])
        for name, address in vlan["svi_addresses"].items():
            svi = interface(address)
            path = ("vlans", v, "svi_addresses", name)
            if svi.ip not in subnet:
                yield path, f"{address} is outside the VLAN subnet {subnet}"
            elif svi.network != subnet:
                yield (
                    path,
                    f"{address} has prefix length /{svi.network.prefixlen}; "
                    f"the VLAN subnet is {subnet}",
                )
            elif not is_host_address(svi):
                yield path, f"{address} is the network or broadcast address of {subnet}"


@rule("svi-distinct")
def svi_distinct(view: FabricView) -> Iterator[Finding]:
    """SVI addresses differ from each other and from the gateway virtual IP."""
    for v, vlan in _present(view):
        seen: dict[str, str] = {}
        virtual_ip = vlan["gateway"].get("virtual_ip")
        for name, address in vlan["svi_addresses"].items():
            ip = str(interface(address).ip)
            path = ("vlans", v, "svi_addresses", name)
            if ip == virtual_ip:
                yield path, f"{ip} is the gateway virtual IP; each peer needs its own address"
            if ip in seen:
                yield path, f"{ip} is also the SVI address of {seen[ip]}"
            seen.setdefault(ip, name)


@rule("gateway-virtual-mac-unicast")
def gateway_virtual_mac_unicast(view: FabricView) -> Iterator[Finding]:
    """The gateway virtual MAC is unicast and not all-zero."""
    for v, vlan in _present(view):
        mac = vlan["gateway"].get("virtual_mac")
        yield from unicast_mac_findings(("vlans", v, "gateway", "virtual_mac"), mac)


@rule("gateway-svi-both-peers")
def gateway_svi_both_peers(view: FabricView) -> Iterator[Finding]:
    """A MAGP/VRRP gateway has SVI addresses on both peers of exactly one switch pair."""
    for v, vlan in _gateways(view, "magp", "vrrp"):
        pairs = view.vlan_pairs(vlan)
        path = ("vlans", v, "svi_addresses")
        if len(pairs) > 1:
            names = ", ".join(pair["name"] for pair in pairs)
            yield (
                path,
                f"SVIs on peers of several switch pairs ({names}); a gateway lives on one pair",
            )
        elif not pairs and any(view.was_dropped("peer", name) for name in vlan["svi_addresses"]):
            continue
        elif not pairs:
            yield path, f"gateway mode {vlan['gateway']['mode']} needs an SVI address on both peers"
        else:
            for name in view.peer_names(pairs[0]):
                if name not in vlan["svi_addresses"]:
                    yield path, f"no SVI address for peer {name}; the gateway needs both peers"


@rule("magp-requires-mlag")
def magp_requires_mlag(view: FabricView) -> Iterator[Finding]:
    """Gateway mode magp is only used on a switch pair with MLAG."""
    for v, vlan in _gateways(view, "magp"):
        for pair in (pair for pair in view.vlan_pairs(vlan) if "mlag" not in pair):
            reason = f"switch pair {pair['name']} has no mlag section; MAGP needs MLAG (use vrrp)"
            yield ("vlans", v, "gateway", "mode"), reason


def _per_pair(view: FabricView, mode: str) -> dict[str, list[tuple[int, dict]]]:
    grouped: dict[str, list[tuple[int, dict]]] = {}
    for v, vlan in _gateways(view, mode):
        for pair in view.vlan_pairs(vlan):
            grouped.setdefault(pair["name"], []).append((v, vlan))
    return grouped


def _gateway_id_repeats(
    view: FabricView, mode: str, key_path: tuple[str, ...]
) -> Iterator[tuple[tuple, Any, int, str]]:
    """(path, id, VLAN that uses it first, pair name) of every gateway id (at `key_path`
    in the VLAN) that two VLANs with gateway `mode` use on one switch pair."""
    *parents, key = key_path
    for pair_name, vlans in _per_pair(view, mode).items():
        places = []
        for v, vlan in vlans:
            node = vlan
            for parent in parents:
                node = node[parent]
            if node.get(key) is not None:
                places.append((("vlans", v, *key_path), node[key], vlan["id"]))
        for path, ident, first_vlan in repeats(places):
            yield path, ident, first_vlan, pair_name


@rule("magp-instance-unique")
def magp_instance_unique(view: FabricView) -> Iterator[Finding]:
    """MAGP instance ids are unique within a switch pair."""
    for path, instance, vlan_id, pair_name in _gateway_id_repeats(
        view, "magp", ("gateway", "instance")
    ):
        yield (
            path,
            f"MAGP instance {instance} is also used by VLAN {vlan_id} on switch pair {pair_name}",
        )


@rule("vrrp-vrid-required")
def vrrp_vrid_required(view: FabricView) -> Iterator[Finding]:
    """VRRP VLANs above 255 set vrrp.vrid (the default is the VLAN id)."""
    for v, vlan in _gateways(view, "vrrp"):
        if "vrid" not in vlan["gateway"]["vrrp"]:
            reason = f"required: VLAN id {vlan['id']} is above 255 and cannot be the default vrid"
            yield ("vlans", v, "gateway", "vrrp", "vrid"), reason


@rule("vrrp-vrid-unique")
def vrrp_vrid_unique(view: FabricView) -> Iterator[Finding]:
    """VRRP vrids are unique within a switch pair."""
    vrid_path = ("gateway", "vrrp", "vrid")
    for path, vrid, vlan_id, pair_name in _gateway_id_repeats(view, "vrrp", vrid_path):
        yield path, f"vrid {vrid} is also used by VLAN {vlan_id} on switch pair {pair_name}"


@rule("vrrp-priorities")
def vrrp_priorities(view: FabricView) -> Iterator[Finding]:
    """VRRP priorities are given for both peers and differ."""
    for v, vlan in _gateways(view, "vrrp"):
        priorities = vlan["gateway"]["vrrp"].get("priorities") or {}
        path = ("vlans", v, "gateway", "vrrp", "priorities")
        pairs = view.vlan_pairs(vlan)
        for pair in pairs[:1]:
            missing = [n for n in view.peer_names(pair) if n not in priorities]
            if missing:
                yield path, f"no priority for peer {', '.join(missing)}; give both or neither"
        values = list(priorities.values())
        if len(values) == 2 and values[0] == values[1]:
            yield path, f"both peers have priority {values[0]}; the master must be unambiguous"


@rule("vlan-subnets-disjoint")
def vlan_subnets_disjoint(view: FabricView) -> Iterator[Finding]:
    # (subnet, order, label, path): IPL subnets first, then VLANs in list order; a
    # VLAN is reported against the first earlier subnet it overlaps.
    """VLAN subnets do not overlap each other or an IPL subnet."""
    subnets: list[tuple[ipaddress.IPv4Network, int, str, tuple | None]] = []
    for pair in view.pairs:
        if "mlag" in pair:
            for address in pair["mlag"]["ipl"]["addresses"].values():
                label = f"the IPL of switch pair {pair['name']}"
                subnets.append((interface(address).network, len(subnets), label, None))
    for v, vlan in _present(view):
        if "subnet" in vlan:
            path = ("vlans", v, "subnet")
            subnets.append((network(vlan["subnet"]), len(subnets), f"VLAN {vlan['id']}", path))
    # Sorted by first address, a subnet overlaps an earlier-starting one exactly
    # when it starts before the furthest end seen so far: n log n, not n^2.
    ordered = sorted(subnets, key=lambda s: (int(s[0].network_address), -s[0].prefixlen))
    found: dict[int, tuple[int, str, ipaddress.IPv4Network]] = {}
    open_: list[tuple[ipaddress.IPv4Network, int, str]] = []  # subnets still reaching here
    for subnet, order, label, _ in ordered:
        start = int(subnet.network_address)
        open_ = [o for o in open_ if int(o[0].broadcast_address) >= start]
        for other, other_order, other_label in open_:
            a, b = (order, (other_order, other_label, other)), (other_order, (order, label, subnet))
            for mine, theirs in (a, b):
                if theirs[0] < mine and (mine not in found or theirs[0] < found[mine][0]):
                    found[mine] = theirs
        open_.append((subnet, order, label))
    for subnet, order, _, path in subnets:
        if path is not None and order in found:
            _, label, other = found[order]
            yield path, f"{subnet} overlaps {other} of {label}"


@rule("vlan-mtu-fits-mpo")
def vlan_mtu_fits_mpo(view: FabricView) -> Iterator[Finding]:
    # VLAN id -> the MPOs carrying it, built once (not a scan of every MPO per VLAN).
    """A VLAN's MTU does not exceed the MTU of an MPO that carries it."""
    carriers: dict[int, list[tuple[dict, dict]]] = {}
    for pair in view.pairs:
        for _, mpo in view.present_mpos(pair):
            ids = dict.fromkeys(mpo["allowed_vlans"])
            if "access_vlan" in mpo:
                ids[mpo["access_vlan"]] = None
            for vlan_id in ids:
                carriers.setdefault(vlan_id, []).append((pair, mpo))
    for v, vlan in _present(view):
        for pair, mpo in carriers.get(vlan["id"], ()):
            if vlan["mtu"] > mpo["mtu"]:
                yield (
                    ("vlans", v, "mtu"),
                    f"{vlan['mtu']} exceeds the MTU {mpo['mtu']} of MPO {mpo['id']} "
                    f"of switch pair {pair['name']}",
                )
