"""Rules on cxfab_host: adapters, bond, VLAN interfaces, QoS, IRQs, RDMA."""

from __future__ import annotations

from collections.abc import Iterator

from . import FabricView, Finding, rule

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


def _ports(host: dict) -> Iterator[tuple[tuple, dict, dict]]:
    """(path under the host, port, nic) of every adapter port."""
    for n, nic in enumerate(host["nics"]):
        for p, port in enumerate(nic["ports"]):
            yield ("nics", n, "ports", p), port, nic


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


def _speed_mbps(host: dict) -> int | None:
    """Slowest bond member speed in Mb/s (the rate a QoS class can reach), if known."""
    ports = _port_by_netdev(host)
    bond = host.get("bond")
    names = bond["members"] if bond else list(ports)
    speeds = [
        ports[n][1]["speed_gbps"] for n in names if n in ports and "speed_gbps" in ports[n][1]
    ]
    return min(speeds) * 1000 if speeds else None


@rule("bond-switch-pair-exists", "bond.switch_pair names a switch pair.")
def bond_switch_pair_exists(view: FabricView) -> Iterator[Finding]:
    for name, host in _hosts(view):
        bond = host.get("bond")
        if (
            bond
            and bond["switch_pair"] not in view.pair_by_name
            and not view.was_dropped("pair", bond["switch_pair"])
        ):
            known = ", ".join(view.pair_by_name)
            yield (
                ("hosts", name, "bond", "switch_pair"),
                f"switch pair {bond['switch_pair']} is not defined (known: {known})",
            )


@rule("bond-mpo-exists", "bond.mpo is a present MLAG port-channel of that switch pair.")
def bond_mpo_exists(view: FabricView) -> Iterator[Finding]:
    for name, host in _hosts(view):
        pair, mpo = view.host_bond_pair_mpo(host)
        if (
            pair is not None
            and mpo is None
            and not view.was_dropped("mpo", (pair["name"], host["bond"]["mpo"]))
        ):
            yield (
                ("hosts", name, "bond", "mpo"),
                f"MPO {host['bond']['mpo']} is not a present MLAG port-channel of "
                f"switch pair {pair['name']}",
            )


@rule("mpo-single-host", "No two hosts' bonds use the same MLAG port-channel.")
def mpo_single_host(view: FabricView) -> Iterator[Finding]:
    owner: dict[tuple[str, int], str] = {}
    for name, host in _hosts(view):
        bond = host.get("bond")
        if not bond:
            continue
        key = (bond["switch_pair"], bond["mpo"])
        if key in owner:
            yield (
                ("hosts", name, "bond", "mpo"),
                f"MPO {bond['mpo']} of {bond['switch_pair']} already serves host {owner[key]}",
            )
        owner.setdefault(key, name)


@rule("bond-members-are-nic-ports", "Bond members are netdevs of the host's adapter ports.")
def bond_members_are_nic_ports(view: FabricView) -> Iterator[Finding]:
    for name, host in _hosts(view):
        bond = host.get("bond")
        ports = _port_by_netdev(host)
        for i, member in enumerate(bond["members"] if bond else []):
            if member not in ports and member != host["mgmt_interface"]:
                yield (
                    ("hosts", name, "bond", "members", i),
                    f"{member} is not the netdev of any port in cxfab_host.nics",
                )


@rule("bond-member-eth", "Bond member ports have link_type eth.")
def bond_member_eth(view: FabricView) -> Iterator[Finding]:
    for name, host in _hosts(view):
        bond = host.get("bond")
        ports = _port_by_netdev(host)
        for member in bond["members"] if bond else []:
            if member in ports and ports[member][1]["link_type"] != "eth":
                path = ports[member][0]
                yield (
                    ("hosts", name, *path, "link_type"),
                    f"port {member} is a bond member and must be eth, not ib",
                )


@rule(
    "bond-port-cabling",
    "A bond member's peer/peer_port is a member port of the bond's MPO on that peer.",
)
def bond_port_cabling(view: FabricView) -> Iterator[Finding]:
    for name, host in _hosts(view):
        pair, mpo = view.host_bond_pair_mpo(host)
        if mpo is None:
            continue
        ports = _port_by_netdev(host)
        peers = view.peer_names(pair)
        for member in host["bond"]["members"]:
            if member not in ports:
                continue
            path, port, _ = ports[member]
            if "peer" not in port or "peer_port" not in port:
                continue
            if port["peer"] not in peers:
                yield (
                    ("hosts", name, *path, "peer"),
                    f"{port['peer']} is not a peer of switch pair {pair['name']} "
                    f"(the bond's pair: {', '.join(peers)})",
                )
            elif port["peer_port"] not in mpo["members"].get(port["peer"], []):
                yield (
                    ("hosts", name, *path, "peer_port"),
                    f"{port['peer']} port {port['peer_port']} is not a member of MPO "
                    f"{mpo['id']} on {port['peer']}",
                )


@rule(
    "bond-lacp-matches-mpo",
    "Bond mode 802.3ad faces an MPO with LACP (active/passive); a static MPO (on) does not.",
)
def bond_lacp_matches_mpo(view: FabricView) -> Iterator[Finding]:
    for name, host in _hosts(view):
        _, mpo = view.host_bond_pair_mpo(host)
        if mpo is None:
            continue
        lacp_bond = host["bond"]["mode"] == "802.3ad"
        lacp_mpo = mpo["lacp_mode"] != "on"
        if lacp_bond != lacp_mpo:
            yield (
                ("hosts", name, "bond", "mode"),
                f"bond mode {host['bond']['mode']} does not match MPO {mpo['id']} "
                f"lacp_mode {mpo['lacp_mode']} (802.3ad needs LACP active/passive)",
            )


@rule(
    "nic-firmware-family",
    "A firmware version belongs to the adapter's family (ConnectX-3 2.x.y, ConnectX-4 "
    "12.x.y, ConnectX-4 Lx 14.x.y, ConnectX-5 16.x.y, ConnectX-6 20.x.y, ConnectX-6 Dx "
    "22.x.y, ConnectX-6 Lx 26.x.y, ConnectX-7 28.x.y).",
)
def nic_firmware_family(view: FabricView) -> Iterator[Finding]:
    for name, host in _hosts(view):
        for n, nic in enumerate(host["nics"]):
            firmware = nic.get("firmware")
            if not firmware:
                continue
            major = int(firmware["version"].split(".", 1)[0])
            want = MODEL_FIRMWARE_MAJOR[nic["model"]]
            if major != want:
                yield (
                    ("hosts", name, "nics", n, "firmware", "version"),
                    f"{firmware['version']} is not a {nic['model']} firmware "
                    f"(a {nic['model']} runs {want}.x.y)",
                )


@rule(
    "nic-link-type-supported",
    "Ethernet-only adapters (ConnectX-4 Lx, 6 Dx, 6 Lx) have no ib ports.",
)
def nic_link_type_supported(view: FabricView) -> Iterator[Finding]:
    for name, host in _hosts(view):
        for path, port, nic in _ports(host):
            if port["link_type"] == "ib" and nic["model"] in ETHERNET_ONLY_MODELS:
                yield (
                    ("hosts", name, *path, "link_type"),
                    f"{nic['model']} is Ethernet-only; link_type ib is not available",
                )


@rule(
    "nv-config-not-link-type",
    "nics[].nv_config leaves LINK_TYPE_P<n> to ports[].link_type (one owner per parameter).",
)
def nv_config_not_link_type(view: FabricView) -> Iterator[Finding]:
    for name, host in _hosts(view):
        for n, nic in enumerate(host["nics"]):
            for param in nic.get("nv_config") or {}:
                if str(param).startswith("LINK_TYPE_P"):
                    yield (
                        ("hosts", name, "nics", n, "nv_config", param),
                        "the port protocol is set by ports[].link_type; remove it here",
                    )


@rule("nic-speed-within-model", "A port's speed_gbps does not exceed its adapter family's maximum.")
def nic_speed_within_model(view: FabricView) -> Iterator[Finding]:
    for name, host in _hosts(view):
        for path, port, nic in _ports(host):
            top = MODEL_MAX_SPEED_GBPS[nic["model"]]
            if port.get("speed_gbps", 0) > top:
                yield (
                    ("hosts", name, *path, "speed_gbps"),
                    f"{port['speed_gbps']} Gb/s exceeds the {top} Gb/s of a {nic['model']}",
                )


@rule(
    "nic-peer-known",
    "A port's peer is a fabric switch, given together with peer_port, never an IPL port.",
)
def nic_peer_known(view: FabricView) -> Iterator[Finding]:
    for name, host in _hosts(view):
        for path, port, _ in _ports(host):
            base = ("hosts", name, *path)
            if ("peer" in port) != ("peer_port" in port):
                missing = "peer_port" if "peer" in port else "peer"
                yield (*base, missing), "peer and peer_port are given together"
                continue
            if "peer" not in port:
                continue
            pair = view.peer_pair.get(port["peer"])
            if pair is None and view.was_dropped("peer", port["peer"]):
                continue
            if pair is None:
                yield (*base, "peer"), f"{port['peer']} is not a peer of any switch pair"
            elif "mlag" in pair and port["peer_port"] in pair["mlag"]["ipl"]["members"].get(
                port["peer"], []
            ):
                yield (
                    (*base, "peer_port"),
                    f"{port['peer']} port {port['peer_port']} is an IPL member port",
                )


@rule("switch-port-single-host", "No two host ports are cabled to the same switch port.")
def switch_port_single_host(view: FabricView) -> Iterator[Finding]:
    owner: dict[tuple[str, str], str] = {}
    for name, host in _hosts(view):
        for path, port, _ in _ports(host):
            if "peer" not in port or "peer_port" not in port:
                continue
            key = (port["peer"], port["peer_port"])
            label = f"{port['netdev']} of host {name}"
            if key in owner:
                yield (
                    ("hosts", name, *path, "peer_port"),
                    f"{key[0]} port {key[1]} is already cabled to {owner[key]}",
                )
            owner.setdefault(key, label)


@rule("netdev-unique", "Netdev names and PCI addresses are unique within a host.")
def netdev_unique(view: FabricView) -> Iterator[Finding]:
    for name, host in _hosts(view):
        seen: dict[str, str] = {}
        pcis: dict[str, str] = {}
        for n, nic in enumerate(host["nics"]):
            if nic["pci"] in pcis:
                yield (
                    ("hosts", name, "nics", n, "pci"),
                    f"{nic['pci']} is also the PCI address of adapter {pcis[nic['pci']]}",
                )
            pcis.setdefault(nic["pci"], nic["name"])
        for path, port, nic in _ports(host):
            label = f"port {port['port']} of {nic['name']}"
            if port["netdev"] in seen:
                yield (
                    ("hosts", name, *path, "netdev"),
                    f"{port['netdev']} is also the netdev of {seen[port['netdev']]}",
                )
            seen.setdefault(port["netdev"], label)
        bond = host.get("bond")
        if bond and bond["name"] in seen:
            yield (
                ("hosts", name, "bond", "name"),
                f"{bond['name']} is also the netdev of {seen[bond['name']]}",
            )
