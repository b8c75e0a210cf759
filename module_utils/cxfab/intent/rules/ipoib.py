"""Rules on InfiniBand ports and their IPoIB interfaces (cxfab_host.nics[].ports[].ipoib).

An ib port carries no Ethernet: rule bond-member-eth keeps it out of the bond, and
host VLANs sit only on the bond (host-vlans-need-bond), so it is in no Ethernet VLAN
either. The rules here cover the rest: IPoIB only on ib ports, an MTU the mode can
carry, no Ethernet switch or soft-RoCE device on an ib port, and IPoIB addresses
that collide with nothing.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from ..ipoib import CONNECTED_MAX_MTU, max_mtu
from . import FabricView, Finding, each, interface, is_host_address, network, rule, within
from .hosts import _ports, host_addresses, host_ports, hosts_at


def _ipoib_ports(view: FabricView) -> Iterator[tuple[tuple, dict]]:
    """(document path, port) of every port with an ipoib block."""
    for path, port, _ in host_ports(view):
        if port.get("ipoib") is not None:
            yield path, port


@rule("ipoib-needs-ib-port")
@each(_ipoib_ports, at=("ipoib",))
def ipoib_needs_ib_port(view: FabricView, port: dict) -> str | None:
    """An ipoib block sits only on a port with link_type ib."""
    if port["link_type"] != "ib":
        return f"port {port['netdev']} has link_type {port['link_type']}; IPoIB needs link_type ib"


@rule("ipoib-mtu-fits-mode")
@each(_ipoib_ports, at=("ipoib", "mtu"))
def ipoib_mtu_fits_mode(view: FabricView, port: dict) -> str | None:
    """An IPoIB MTU fits its mode: at most ib_mtu - 4 in datagram mode (2044 on a 2048-byte IB MTU,
    4092 on 4096), at most 65520 in connected mode."""
    ipoib = port["ipoib"]
    top = max_mtu(ipoib["mode"], ipoib["ib_mtu"])
    if ipoib["mtu"] <= top:
        return None
    if ipoib["mode"] == "datagram":
        return (
            f"{ipoib['mtu']} exceeds the {top} bytes datagram mode carries on an "
            f"IB MTU of {ipoib['ib_mtu']} (minus the 4-byte IPoIB header); "
            f"mode connected allows up to {CONNECTED_MAX_MTU}"
        )
    return f"{ipoib['mtu']} exceeds the {top} bytes of connected mode"


@rule("ib-port-not-ethernet")
@within(hosts_at)
def ib_port_not_ethernet(view: FabricView, host: dict) -> Iterator[Finding]:
    """An ib port is not cabled to a fabric (Ethernet) switch and carries no soft-RoCE device."""
    ib_ports = {}
    for path, port, _ in _ports(host):
        if port["link_type"] != "ib":
            continue
        ib_ports[port["netdev"]] = path
        pair = view.peer_pair.get(port.get("peer", ""))
        if pair is not None:
            yield (
                (*path, "peer"),
                f"{port['peer']} is an Ethernet switch of pair {pair['name']}; an ib "
                "port faces an InfiniBand switch (leave peer out)",
            )
    devices = (host.get("rdma") or {}).get("devices") or []
    for d, device in enumerate(devices):
        if device["type"] == "rxe" and device["netdev"] in ib_ports:
            yield (
                ("rdma", "devices", d, "netdev"),
                f"{device['netdev']} is an ib port; soft-RoCE (rxe) runs over Ethernet",
            )


@rule("ipoib-address")
def ipoib_address(view: FabricView) -> Iterator[Finding]:
    """An IPoIB address is a host address, used by no other host interface, in a subnet that
    overlaps no VLAN subnet of cxfab_vlans."""
    owner: dict[ipaddress.IPv4Address, str] = {}
    for (_, name, *path), _, address in host_addresses(view):
        owner.setdefault(interface(address).ip, f"host {name} ({'.'.join(map(str, path))})")
    vlan_subnets = [(v["id"], network(v["subnet"])) for v in view.fabric["vlans"] if "subnet" in v]
    for path, port in _ipoib_ports(view):
        address = port["ipoib"].get("address")
        if not address:
            continue
        full = (*path, "ipoib", "address")
        iface = interface(address)
        clash = next((vid for vid, net in vlan_subnets if net.overlaps(iface.network)), None)
        if not is_host_address(iface):
            yield full, f"{address} is the network or broadcast address of {iface.network}"
        elif iface.ip in owner:
            yield full, f"{iface.ip} is already used by {owner[iface.ip]}"
        elif clash is not None:
            yield full, f"{iface.network} overlaps the subnet of VLAN {clash}; IPoIB needs its own"
        owner.setdefault(iface.ip, f"host {path[1]} ({port['netdev']})")
