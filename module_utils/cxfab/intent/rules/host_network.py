"""Rules on a host's network: management interface, VLAN interfaces, addresses, QoS,
IRQs, RDMA devices (the adapters, bond and cabling: hosts.py)."""

from __future__ import annotations

from collections.abc import Iterator

from . import FabricView, Finding, each, interface, is_host_address, network, repeats, rule, within
from .hosts import (
    MODEL_RDMA_DRIVER,
    _port_by_netdev,
    _speed_mbps,
    cabled_bonds,
    host_addresses,
    host_entries,
    host_vlan_ids,
    hosts_at,
)


@rule("mgmt-interface-untouched")
@each(hosts_at, at=("mgmt_interface",))
def mgmt_interface_untouched(view: FabricView, host: dict) -> str | None:
    """The management interface is no adapter port, bond, bond member or VLAN parent."""
    mgmt = host["mgmt_interface"]
    bond = host.get("bond")
    parent = mgmt.split(".", 1)[0]
    if bond and mgmt in bond["members"]:
        return f"{mgmt} carries the Ansible connection and cannot be a bond member"
    if bond and parent == bond["name"]:
        return f"{mgmt} carries the Ansible connection; it cannot be or sit on the bond"
    if parent in _port_by_netdev(host):
        return f"{mgmt} carries the Ansible connection; {parent} cannot be a managed adapter port"


@rule("host-vlans-need-bond")
@each(hosts_at, at=("vlans",))
def host_vlans_need_bond(view: FabricView, host: dict) -> str | None:
    """Host VLAN interfaces sit on the bond: cxfab_host.bond is defined."""
    if host["vlans"] and not host.get("bond"):
        return "VLAN interfaces need cxfab_host.bond (their parent)"


@rule("host-vlan-exists")
@each(host_entries, "vlans", at=("id",))
def host_vlan_exists(view: FabricView, vlan: dict, host: dict) -> str | None:
    """Host VLANs are defined (present) in cxfab_vlans."""
    if vlan["id"] not in view.vlan_by_id and not view.was_dropped("vlan", vlan["id"]):
        return f"VLAN {vlan['id']} is not defined in cxfab_vlans"


@rule("host-vlan-allowed-on-mpo")
def host_vlan_allowed_on_mpo(view: FabricView) -> Iterator[Finding]:
    """Host VLANs are allowed (tagged) on the host's MPO; an untagged bond address needs
    access_vlan."""
    for (_, name, _), host, _, mpo in cabled_bonds(view):
        for v, vlan in enumerate(host["vlans"]):
            if vlan["id"] not in mpo["allowed_vlans"]:
                reason = f"VLAN {vlan['id']} is not in allowed_vlans of MPO {mpo['id']}"
                yield ("hosts", name, "vlans", v, "id"), reason
        if "address" in host["bond"] and "access_vlan" not in mpo:
            reason = f"an untagged address needs access_vlan on MPO {mpo['id']}"
            yield ("hosts", name, "bond", "address"), reason


@rule("host-mtu-fits")
@within(hosts_at)
def host_mtu_fits(view: FabricView, host: dict) -> Iterator[Finding]:
    """Bond MTU <= MPO MTU; a VLAN interface's MTU (default the VLAN's) <= bond MTU and <= the
    VLAN's MTU."""
    bond = host.get("bond")
    if not bond:
        return
    _, mpo = view.host_bond_pair_mpo(host)
    if mpo and bond["mtu"] > mpo["mtu"]:
        yield ("bond", "mtu"), f"{bond['mtu']} exceeds the MTU {mpo['mtu']} of MPO {mpo['id']}"
    for v, vlan in enumerate(host["vlans"]):
        path = ("vlans", v, "mtu")
        fabric_vlan = view.vlan_by_id.get(vlan["id"])
        if vlan["mtu"] > bond["mtu"]:
            # The default (the VLAN's MTU) or the host's own value: say which.
            default = fabric_vlan and vlan["mtu"] == fabric_vlan["mtu"]
            source = f" (VLAN {vlan['id']}'s MTU, the default)" if default else ""
            yield path, f"{vlan['mtu']}{source} exceeds the bond MTU {bond['mtu']}"
        if fabric_vlan and vlan["mtu"] > fabric_vlan["mtu"]:
            yield (
                path,
                f"{vlan['mtu']} exceeds the MTU {fabric_vlan['mtu']} of VLAN {vlan['id']}",
            )


def _addresses_in_vlans(view: FabricView) -> Iterator[tuple[tuple, dict, str]]:
    """(document path, VLAN, address) of every host address whose VLAN is defined."""
    for path, vlan_id, address in host_addresses(view):
        vlan = view.vlan_by_id.get(vlan_id)
        if vlan:
            yield path, vlan, address


@rule("host-address-in-subnet")
def host_address_in_subnet(view: FabricView) -> Iterator[Finding]:
    """Host addresses are host addresses inside their VLAN's subnet, with its prefix length."""
    for path, vlan, address in _addresses_in_vlans(view):
        if "subnet" not in vlan:
            continue
        subnet = network(vlan["subnet"])
        iface = interface(address)
        if iface.ip not in subnet:
            yield path, f"{address} is outside the subnet {subnet} of VLAN {vlan['id']}"
        elif iface.network != subnet:
            prefix = iface.network.prefixlen
            yield path, f"{address} has prefix length /{prefix}; VLAN {vlan['id']} is {subnet}"
        elif not is_host_address(iface):
            yield path, f"{address} is the network or broadcast address of {subnet}"


@rule("host-address-not-gateway")
def host_address_not_gateway(view: FabricView) -> Iterator[Finding]:
    """Host addresses are not the VLAN's virtual IP or an SVI address."""
    for path, vlan, address in _addresses_in_vlans(view):
        ip = str(interface(address).ip)
        if ip == vlan["gateway"].get("virtual_ip"):
            yield path, f"{ip} is the gateway virtual IP of VLAN {vlan['id']}"
        svi_peers = [
            peer for peer, svi in vlan["svi_addresses"].items() if ip == str(interface(svi).ip)
        ]
        for peer in svi_peers:
            yield path, f"{ip} is the SVI address of {peer} in VLAN {vlan['id']}"


@rule("host-address-unique")
def host_address_unique(view: FabricView) -> Iterator[Finding]:
    """No two host interfaces share an address."""
    places = (
        (path, interface(address).ip, f"host {path[1]}")
        for path, _, address in host_addresses(view)
    )
    for path, ip, owner in repeats(places):
        yield path, f"{ip} is already used by {owner}"


@rule("qos-vlan-is-host-vlan")
@each(host_entries, "qos", at=("vlan",))
def qos_vlan_is_host_vlan(view: FabricView, entry: dict, host: dict) -> str | None:
    """A QoS entry's vlan is a VLAN of the host."""
    if entry["vlan"] not in host_vlan_ids(view, host):
        return f"VLAN {entry['vlan']} is not a VLAN of this host (cxfab_host.vlans)"


@rule("qos-rate-within-link")
@each(host_entries, "qos", at=("rate_limit_mbps",))
def qos_rate_within_link(view: FabricView, entry: dict, host: dict) -> str | None:
    """A QoS rate limit does not exceed the speed of the bond's ports."""
    speed = _speed_mbps(host)
    if speed is not None and entry.get("rate_limit_mbps", 0) > speed:
        return f"{entry['rate_limit_mbps']} Mb/s exceeds the port speed of {speed} Mb/s"


@rule("qos-ets-sum")
@within(hosts_at)
def qos_ets_sum(view: FabricView, host: dict) -> Iterator[Finding]:
    """When a traffic class uses ets, the ets shares of the port sum to 100 and others have 0."""
    classes: dict[int, dict] = {}
    for entry in host["qos"]:
        classes.setdefault(entry["traffic_class"], entry)
    if not any(entry["tsa"] == "ets" for entry in classes.values()):
        return
    total = sum(e["bandwidth_percent"] for e in classes.values() if e["tsa"] == "ets")
    if total != 100:
        yield ("qos",), f"ets bandwidth shares sum to {total} per port; they must sum to 100"
    for q, entry in enumerate(host["qos"]):
        if entry["tsa"] != "ets" and entry["bandwidth_percent"]:
            yield (
                ("qos", q, "bandwidth_percent"),
                f"traffic class {entry['traffic_class']} uses {entry['tsa']}; "
                "only ets classes take a bandwidth share",
            )


@rule("qos-traffic-class-consistent")
@within(hosts_at)
def qos_traffic_class_consistent(view: FabricView, host: dict) -> Iterator[Finding]:
    """Entries sharing a traffic class agree on tsa, share and rate limit."""
    first: dict[int, dict] = {}
    for q, entry in enumerate(host["qos"]):
        other = first.setdefault(entry["traffic_class"], entry)
        for key in ("tsa", "bandwidth_percent", "rate_limit_mbps"):
            if entry.get(key) != other.get(key):
                yield (
                    ("qos", q, key),
                    f"traffic class {entry['traffic_class']} has {key} "
                    f"{other.get(key)} for VLAN {other['vlan']}; a class has one value",
                )


@rule("qos-user-priority-unique")
@within(hosts_at)
def qos_user_priority_unique(view: FabricView, host: dict) -> Iterator[Finding]:
    """Each VLAN of a host has its own user priority (so its class can be told apart)."""
    entries = (
        (("qos", q, "user_priority"), entry["user_priority"], entry["vlan"])
        for q, entry in enumerate(host["qos"])
    )
    for path, priority, vlan_id in repeats(entries):
        yield path, f"user priority {priority} is already used by VLAN {vlan_id}"


@rule("irq-cpus-policy")
@each(hosts_at, at=("irq_affinity", "cpus"))
def irq_cpus_policy(view: FabricView, host: dict) -> str | None:
    """irq_affinity.cpus is given for policy cpulist, and only then."""
    irq = host["irq_affinity"]
    if irq["policy"] == "cpulist" and "cpus" not in irq:
        return "required for policy cpulist"
    if irq["policy"] != "cpulist" and "cpus" in irq:
        return f"only used by policy cpulist (policy is {irq['policy']})"


@rule("rdma-device-netdev")
@within(hosts_at)
def rdma_device_netdev(view: FabricView, host: dict) -> Iterator[Finding]:
    """An RDMA device sits on a netdev of the host; mlx4/mlx5 match the adapter family."""
    devices = host.get("rdma", {}).get("devices", [])
    known = view.host_netdevs(host)
    ports = _port_by_netdev(host)
    for d, device in enumerate(devices):
        base = ("rdma", "devices", d)
        netdev = device["netdev"]
        if netdev not in known and netdev != host["mgmt_interface"]:
            yield (*base, "netdev"), f"{netdev} is not an interface defined in cxfab_host"
            continue
        if device["type"] == "rxe" or netdev not in ports:
            continue
        model = ports[netdev][2]["model"]
        driver = MODEL_RDMA_DRIVER.get(model, "mlx5")
        if device["type"] != driver:
            yield (*base, "type"), f"{netdev} is on a {model}, whose RDMA driver is {driver}"
