"""Rules on cxfab_host: adapters, bond, VLAN interfaces, QoS, IRQs, RDMA."""

from __future__ import annotations

from collections.abc import Iterator

from ..profiles import profile_params, same_value
from . import FabricView, Finding, each, repeats, rule, within

# Highest port speed (Gb/s) of each adapter family.
MODEL_MAX_SPEED_GBPS = {
    "ConnectX-3": 56,
    "ConnectX-3 Pro": 56,
    "ConnectX-4": 100,
    "ConnectX-4 Lx": 50,
    "ConnectX-5": 100,
    "ConnectX-6": 200,
    "ConnectX-6 Dx": 200,
    "ConnectX-6 Lx": 50,
    "ConnectX-7": 400,
}
# Families without InfiniBand (Ethernet-only adapters).
ETHERNET_ONLY_MODELS = {"ConnectX-4 Lx", "ConnectX-6 Dx", "ConnectX-6 Lx"}
# RDMA driver of each family.
MODEL_RDMA_DRIVER = {"ConnectX-3": "mlx4", "ConnectX-3 Pro": "mlx4"}  # later ones: mlx5
# First number of the firmware versions of each family (NVIDIA's mlxup and MFT
# release notes list e.g. 2.42.5000, 12.28.2006, 14.32.1010, 16.35.2000,
# 20.36.1010, 22.36.1010, 26.36.1010, 28.36.1010): an image of another family
# can never be burnt on the adapter.
MODEL_FIRMWARE_MAJOR = {
    "ConnectX-3": 2,
    "ConnectX-3 Pro": 2,
    "ConnectX-4": 12,
    "ConnectX-4 Lx": 14,
    "ConnectX-5": 16,
    "ConnectX-6": 20,
    "ConnectX-6 Dx": 22,
    "ConnectX-6 Lx": 26,
    "ConnectX-7": 28,
}


def _hosts(view: FabricView) -> Iterator[tuple[str, dict]]:
    yield from view.hosts.items()


def hosts_at(view: FabricView) -> Iterator[tuple[tuple, dict]]:
    """(document path, host) of every host."""
    for name, host in _hosts(view):
        yield ("hosts", name), host


def _ports(host: dict) -> Iterator[tuple[tuple, dict, dict]]:
    """(path under the host, port, nic) of every adapter port."""
    for n, nic in enumerate(host["nics"]):
        for p, port in enumerate(nic["ports"]):
            yield ("nics", n, "ports", p), port, nic


def host_ports(view: FabricView) -> Iterator[tuple[tuple, dict, dict]]:
    """(document path, port, nic) of every adapter port of every host."""
    for name, host in _hosts(view):
        for path, port, nic in _ports(host):
            yield ("hosts", name, *path), port, nic


def host_entries(view: FabricView, key: str) -> Iterator[tuple[tuple, dict, dict]]:
    """(document path, entry, host) of every entry of the host list `key` (nics, vlans, qos)."""
    for name, host in _hosts(view):
        for index, entry in enumerate(host[key]):
            yield ("hosts", name, key, index), entry, host


def _bond_members(view: FabricView) -> Iterator[tuple[tuple, str, dict, dict]]:
    """(document path, netdev, host, its ports by netdev) of every bond member."""
    for name, host in _hosts(view):
        bond = host.get("bond")
        ports = _port_by_netdev(host)
        for index, member in enumerate(bond["members"] if bond else []):
            yield ("hosts", name, "bond", "members", index), member, host, ports


def cabled_bonds(view: FabricView) -> Iterator[tuple[tuple, dict, dict, dict]]:
    """(document path of the bond, host, switch pair, MPO) of every bond whose MPO exists."""
    for name, host in _hosts(view):
        pair, mpo = view.host_bond_pair_mpo(host)
        if mpo is not None:
            yield ("hosts", name, "bond"), host, pair, mpo


def _port_by_netdev(host: dict) -> dict[str, tuple[tuple, dict, dict]]:
    found: dict[str, tuple[tuple, dict, dict]] = {}
    for path, port, nic in _ports(host):
        found.setdefault(port["netdev"], (path, port, nic))
    return found


def host_vlan_ids(view: FabricView, host: dict) -> dict[int, tuple]:
    """VLANs the host is in -> path: its tagged VLANs and the bond's untagged one."""
    ids: dict[int, tuple] = {}
    for v, vlan in enumerate(host["vlans"]):
        ids.setdefault(vlan["id"], ("vlans", v, "id"))
    _, mpo = view.host_bond_pair_mpo(host)
    if mpo and "address" in host.get("bond", {}) and "access_vlan" in mpo:
        ids.setdefault(mpo["access_vlan"], ("bond", "address"))
    return ids


def _host_addresses(view: FabricView, host: dict) -> Iterator[tuple[tuple, int, str]]:
    """(path under the host, VLAN id, address) of every host address on the fabric."""
    bond = host.get("bond")
    _, mpo = view.host_bond_pair_mpo(host)
    if bond and "address" in bond and mpo and "access_vlan" in mpo:
        yield ("bond", "address"), mpo["access_vlan"], bond["address"]
    for v, vlan in enumerate(host["vlans"]):
        if "address" in vlan:
            yield ("vlans", v, "address"), vlan["id"], vlan["address"]


def host_addresses(view: FabricView) -> Iterator[tuple[tuple, int, str]]:
    """(document path, VLAN id, address) of every host address on the fabric."""
    for name, host in _hosts(view):
        for path, vlan_id, address in _host_addresses(view, host):
            yield ("hosts", name, *path), vlan_id, address


def _speed_mbps(host: dict) -> int | None:
    """Slowest bond member speed in Mb/s (the rate a QoS class can reach), if known."""
    ports = _port_by_netdev(host)
    bond = host.get("bond")
    names = bond["members"] if bond else list(ports)
    speeds = [
        ports[n][1]["speed_gbps"] for n in names if n in ports and "speed_gbps" in ports[n][1]
    ]
    return min(speeds) * 1000 if speeds else None


@rule("bond-switch-pair-exists")
@each(hosts_at, at=("bond", "switch_pair"))
def bond_switch_pair_exists(view: FabricView, host: dict) -> str | None:
    """bond.switch_pair names a switch pair."""
    bond = host.get("bond")
    if (
        bond
        and bond["switch_pair"] not in view.pair_by_name
        and not view.was_dropped("pair", bond["switch_pair"])
    ):
        known = ", ".join(view.pair_by_name)
        return f"switch pair {bond['switch_pair']} is not defined (known: {known})"


@rule("bond-mpo-exists")
@each(hosts_at, at=("bond", "mpo"))
def bond_mpo_exists(view: FabricView, host: dict) -> str | None:
    """bond.mpo is a present MLAG port-channel of that switch pair."""
    pair, mpo = view.host_bond_pair_mpo(host)
    if pair is None or mpo is not None:
        return None
    mpo_id = host["bond"]["mpo"]
    if view.was_dropped("mpo", (pair["name"], mpo_id)):
        return None
    return f"MPO {mpo_id} is not a present MLAG port-channel of switch pair {pair['name']}"


@rule("mpo-single-host")
def mpo_single_host(view: FabricView) -> Iterator[Finding]:
    """No two hosts' bonds use the same MLAG port-channel."""
    bonds = (
        (("hosts", name, "bond", "mpo"), (host["bond"]["switch_pair"], host["bond"]["mpo"]), name)
        for name, host in _hosts(view)
        if host.get("bond")
    )
    for path, (pair_name, mpo_id), owner in repeats(bonds):
        yield path, f"MPO {mpo_id} of {pair_name} already serves host {owner}"


@rule("bond-members-are-nic-ports")
@each(_bond_members)
def bond_members_are_nic_ports(
    view: FabricView, member: str, host: dict, ports: dict
) -> str | None:
    """Bond members are netdevs of the host's adapter ports."""
    if member not in ports and member != host["mgmt_interface"]:
        return f"{member} is not the netdev of any port in cxfab_host.nics"


@rule("bond-member-eth")
def bond_member_eth(view: FabricView) -> Iterator[Finding]:
    """Bond member ports have link_type eth."""
    for (_, name, *_), member, _, ports in _bond_members(view):
        if member in ports and ports[member][1]["link_type"] != "eth":
            port_path = ("hosts", name, *ports[member][0], "link_type")
            yield port_path, f"port {member} is a bond member and must be eth, not ib"


@rule("bond-port-cabling")
def bond_port_cabling(view: FabricView) -> Iterator[Finding]:
    """A bond member's peer/peer_port is a member port of the bond's MPO on that peer."""
    for (_, name, _), host, pair, mpo in cabled_bonds(view):
        ports = _port_by_netdev(host)
        peers = view.peer_names(pair)
        cabled = (ports[m] for m in host["bond"]["members"] if m in ports)
        for path, port, _ in cabled:
            if "peer" not in port or "peer_port" not in port:
                continue
            base, peer = ("hosts", name, *path), port["peer"]
            if peer not in peers:
                yield (
                    (*base, "peer"),
                    f"{peer} is not a peer of switch pair {pair['name']} "
                    f"(the bond's pair: {', '.join(peers)})",
                )
            elif port["peer_port"] not in mpo["members"].get(peer, []):
                reason = f"{peer} port {port['peer_port']} is not a member of MPO {mpo['id']}"
                yield (*base, "peer_port"), f"{reason} on {peer}"


@rule("bond-lacp-matches-mpo")
@each(cabled_bonds, at=("mode",))
def bond_lacp_matches_mpo(view: FabricView, host: dict, pair: dict, mpo: dict) -> str | None:
    """Bond mode 802.3ad faces an MPO with LACP (active/passive); a static MPO (on) does not."""
    mode = host["bond"]["mode"]
    # 802.3ad speaks LACP; an MPO speaks it unless its lacp_mode is on (static).
    if (mode == "802.3ad") == (mpo["lacp_mode"] != "on"):
        return None
    return (
        f"bond mode {mode} does not match MPO {mpo['id']} "
        f"lacp_mode {mpo['lacp_mode']} (802.3ad needs LACP active/passive)"
    )


@rule("nic-firmware-family")
@each(host_entries, "nics", at=("firmware", "version"))
def nic_firmware_family(view: FabricView, nic: dict, host: dict) -> str | None:
    """A firmware version belongs to the adapter's family (ConnectX-3 2.x.y, ConnectX-4 12.x.y,
    ConnectX-4 Lx 14.x.y, ConnectX-5 16.x.y, ConnectX-6 20.x.y, ConnectX-6 Dx 22.x.y, ConnectX-6
    Lx 26.x.y, ConnectX-7 28.x.y)."""
    version = (nic.get("firmware") or {}).get("version")
    want = MODEL_FIRMWARE_MAJOR[nic["model"]]
    if version and int(version.split(".", 1)[0]) != want:
        return f"{version} is not a {nic['model']} firmware (a {nic['model']} runs {want}.x.y)"


@rule("nic-link-type-supported")
@each(host_ports, at=("link_type",))
def nic_link_type_supported(view: FabricView, port: dict, nic: dict) -> str | None:
    """Ethernet-only adapters (ConnectX-4 Lx, 6 Dx, 6 Lx) have no ib ports."""
    if port["link_type"] == "ib" and nic["model"] in ETHERNET_ONLY_MODELS:
        return f"{nic['model']} is Ethernet-only; link_type ib is not available"


@rule("nv-config-not-link-type")
@within(host_entries, "nics")
def nv_config_not_link_type(view: FabricView, nic: dict, host: dict) -> Iterator[Finding]:
    """nics[].nv_config leaves LINK_TYPE_P<n> to ports[].link_type (one owner per parameter)."""
    params = nic.get("nv_config") or {}
    for param in (p for p in params if str(p).startswith("LINK_TYPE_P")):
        yield ("nv_config", param), "the port protocol is set by ports[].link_type; remove it here"


@rule("nic-profile-conflict")
@within(host_entries, "nics")
def nic_profile_conflict(view: FabricView, nic: dict, host: dict) -> Iterator[Finding]:
    """A parameter pinned in nics[].nv_config that a profile of the adapter sets has the
    profile's value."""
    roce = view.fabric.get("roce") if isinstance(view.fabric.get("roce"), dict) else None
    implied = profile_params(nic, roce)
    for param, value in sorted((nic.get("nv_config") or {}).items()):
        if param in implied and not same_value(str(value), implied[param][0]):
            want, profile = implied[param]
            yield (
                ("nv_config", param),
                f"{value} contradicts profile {profile}, which sets {param}={want} "
                f"(remove the pin or the profile)",
            )


@rule("nic-profile-roce-eth")
@each(host_entries, "nics", at=("profiles", "roce"))
def nic_profile_roce_eth(view: FabricView, nic: dict, host: dict) -> str | None:
    """Profile roce is for an adapter whose ports are all Ethernet."""
    if (nic.get("profiles") or {}).get("roce") is None:
        return None
    ib = [str(p["port"]) for p in nic["ports"] if p["link_type"] == "ib"]
    if ib:
        return f"RoCE congestion control needs Ethernet ports; port {', '.join(ib)} is ib"
    return None


@rule("gpu-nic-exists")
@each(host_entries, "gpus", at=("nic",))
def gpu_nic_exists(view: FabricView, gpu: dict, host: dict) -> str | None:
    """A GPU's nic names an adapter of the same host."""
    names = [nic["name"] for nic in host["nics"]]
    if gpu["nic"] in names:
        return None
    return f"{gpu['nic']} is not an adapter of this host (known: {', '.join(names) or 'none'})"


@rule("nic-speed-within-model")
@each(host_ports, at=("speed_gbps",))
def nic_speed_within_model(view: FabricView, port: dict, nic: dict) -> str | None:
    """A port's speed_gbps does not exceed its adapter family's maximum."""
    top = MODEL_MAX_SPEED_GBPS[nic["model"]]
    if port.get("speed_gbps", 0) > top:
        return f"{port['speed_gbps']} Gb/s exceeds the {top} Gb/s of a {nic['model']}"


@rule("nic-peer-known")
@within(host_ports)
def nic_peer_known(view: FabricView, port: dict, nic: dict) -> Iterator[Finding]:
    """A port's peer is a fabric switch, given together with peer_port, never an IPL port."""
    if ("peer" in port) != ("peer_port" in port):
        missing = "peer_port" if "peer" in port else "peer"
        yield (missing,), "peer and peer_port are given together"
        return
    if "peer" not in port:
        return
    pair = view.peer_pair.get(port["peer"])
    if pair is None and view.was_dropped("peer", port["peer"]):
        return
    if pair is None:
        yield ("peer",), f"{port['peer']} is not a peer of any switch pair"
    elif "mlag" in pair and port["peer_port"] in pair["mlag"]["ipl"]["members"].get(
        port["peer"], []
    ):
        yield ("peer_port",), f"{port['peer']} port {port['peer_port']} is an IPL member port"


@rule("switch-port-single-host")
def switch_port_single_host(view: FabricView) -> Iterator[Finding]:
    """No two host ports are cabled to the same switch port."""
    cabled = (
        (
            (*path, "peer_port"),
            (port["peer"], port["peer_port"]),
            f"{port['netdev']} of host {path[1]}",
        )
        for path, port, _ in host_ports(view)
        if "peer" in port and "peer_port" in port
    )
    for path, (peer, peer_port), owner in repeats(cabled):
        yield path, f"{peer} port {peer_port} is already cabled to {owner}"


@rule("netdev-unique")
def netdev_unique(view: FabricView) -> Iterator[Finding]:
    """Netdev names and PCI addresses are unique within a host."""
    for name, host in _hosts(view):
        base = ("hosts", name)
        adapters = (
            ((*base, "nics", n, "pci"), nic["pci"], nic["name"])
            for n, nic in enumerate(host["nics"])
        )
        for path, pci, other in repeats(adapters):
            yield path, f"{pci} is also the PCI address of adapter {other}"
        # The bond's name comes last: it repeats a port netdev, never the other way round.
        netdevs = [
            ((*base, *path, "netdev"), port["netdev"], f"port {port['port']} of {nic['name']}")
            for path, port, nic in _ports(host)
        ]
        if host.get("bond"):
            netdevs.append(((*base, "bond", "name"), host["bond"]["name"], "the bond"))
        for path, netdev, other in repeats(netdevs):
            yield path, f"{netdev} is also the netdev of {other}"
