"""InfiniBand side of an emulated card (cxfab lab emulator): ibstat's view and the sysfs tree.

A port whose Current LINK_TYPE is IB is an InfiniBand port: with a genuine cable and
link it is Active / LinkUp at the card's IB rate (a ConnectX-4: 4X EDR, 100), with a
base LID and the LID of a subnet manager; ``cxemu-admin set -d <dev> port<N>.sm=none``
takes the subnet manager away (Initializing, SM lid 0), a missing or third-party cable
or ``port<N>.link=down`` leaves it Down / Polling. An Ethernet port is what ibstat
shows for RoCE: link layer Ethernet, LIDs 0.

No kernel in the lab has an InfiniBand device, so the RDMA device and the IPoIB
interface of an IB port are shown only in a fake sysfs tree (``CXEMU_SYSFS_ROOT``),
laid out like a real one: ``bus/pci/devices/<bdf>/infiniband/mlx5_<n>/ports/1/...``
with its ``device`` link back to the function, ``class/infiniband/mlx5_<n>`` and, for
the port's netdev, ``bus/pci/devices/<bdf>/net/<netdev>/{type,dev_port,mode,mtu}``
with ``class/net/<netdev>`` pointing at it. The ``mode`` and ``mtu`` files are plain
files: what product code writes stays, but nothing reacts to it as the ib_ipoib driver
would (switching to connected raises the MTU to 65520, an MTU above the datagram
limit is refused).
"""

import os
from pathlib import Path

from . import render
from .pcie import PublishError, fake_tree
from .state import device_type, port_protocol

# Kernel sysfs rate text and ibstat's integer rate of each IB speed the catalog knows.
IB_RATES = {"IB-EDR": (100, "100 Gb/sec (4X EDR)"), "IB-FDR": (56, "56 Gb/sec (4X FDR)")}
SM_LID = 1
ARPHRD_INFINIBAND = 32
# What ib_ipoib starts an interface with: datagram mode, 2048-byte IB MTU - 4.
IPOIB_START = {"mode": "datagram", "mtu": 2044}


def device_name(card: dict, port: int) -> str:
    """mlx5: one RDMA device per PCI function (port), numbered across the cards."""
    return f"mlx5_{card['mst_index'] * 2 + port}"


def port_view(card: dict, port: int, carrier: bool | None) -> dict:
    """What ibstat prints for port 1 of the function of `port` (0-based)."""
    guid = int(card["base_guid"], 16) + port
    if port_protocol(card, port) != "IB":
        return {
            "state": "Active" if render.link_state(card, port, carrier) == "up" else "Down",
            "phys_state": "LinkUp" if render.link_state(card, port, carrier) == "up" else
            "Disabled",
            "rate": 100 if device_type(card).eth_speed == "100GbE" else 40,
            "rate_text": "", "lid": 0, "sm_lid": 0, "link_layer": "Ethernet", "guid": guid,
        }  # fmt: skip
    rate, rate_text = IB_RATES.get(device_type(card).ib_speed, (10, "10 Gb/sec (4X SDR)"))
    view = {"rate": rate, "rate_text": rate_text, "link_layer": "InfiniBand", "guid": guid}
    if render.link_state(card, port, carrier) != "up":
        return {**view, "state": "Down", "phys_state": "Polling", "rate": 10, "lid": 0,
                "sm_lid": 0, "rate_text": "10 Gb/sec (4X SDR)"}  # fmt: skip
    if card["ports"][port].get("sm", "present") == "none":
        return {**view, "state": "Initializing", "phys_state": "LinkUp", "lid": 0, "sm_lid": 0}
    lid = 2 + card["mst_index"] * 2 + port
    return {**view, "state": "Active", "phys_state": "LinkUp", "lid": lid, "sm_lid": SM_LID}


_STATE_NUMBERS = {"Down": 1, "Initializing": 2, "Armed": 3, "Active": 4}
_PHYS_NUMBERS = {"Polling": 2, "Disabled": 3, "LinkUp": 5}


def _link(path: Path, target: Path) -> None:
    if path.is_symlink() or path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(os.path.relpath(target, path.parent))


def publish(card: dict, carrier=lambda netdev: None) -> None:
    """Write the RDMA devices and IPoIB interfaces of the card's IB ports into the fake tree."""
    root = fake_tree()
    if root is None:
        raise PublishError(
            "InfiniBand devices are shown only through a fake sysfs tree (CXEMU_SYSFS_ROOT); "
            "no guest kernel of the lab has one"
        )
    for port, function in enumerate(card["functions"]):
        pci = root / "bus" / "pci" / "devices" / function
        netdev = (card.get("netdevs") or [""] * 8)[port]
        view = port_view(card, port, carrier(netdev) if netdev else None)
        rdma = pci / "infiniband" / device_name(card, port)
        files = rdma / "ports" / "1"
        files.mkdir(parents=True, exist_ok=True)
        for name, value in (
            ("state", f"{_STATE_NUMBERS[view['state']]}: {view['state'].upper()}"),
            ("phys_state", f"{_PHYS_NUMBERS[view['phys_state']]}: {view['phys_state']}"),
            ("rate", view["rate_text"] or f"{view['rate']} Gb/sec (4X)"),
            ("lid", hex(view["lid"])),
            ("sm_lid", hex(view["sm_lid"])),
            ("link_layer", view["link_layer"]),
        ):
            (files / name).write_text(value + "\n")
        _link(rdma / "device", pci)
        _link(root / "class" / "infiniband" / rdma.name, rdma)
        if netdev and view["link_layer"] == "InfiniBand":
            _ipoib_interface(root, pci, netdev)


def _ipoib_interface(root: Path, pci: Path, netdev: str) -> None:
    """The port's IPoIB interface as ib_ipoib creates it; existing mode/mtu are kept."""
    directory = pci / "net" / netdev
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "type").write_text(f"{ARPHRD_INFINIBAND}\n")
    (directory / "dev_port").write_text("0\n")  # port 1 of a one-port mlx5 device
    for name, value in (*IPOIB_START.items(), ("carrier_changes", 0)):
        if not (directory / name).exists():
            (directory / name).write_text(f"{value}\n")
    _link(root / "class" / "net" / netdev, directory)


def ibstat(cards: list[dict], carrier, only: str | None = None, port: int | None = None) -> str:
    """ibstat's output: every CA, or ``CA: '<ca>'`` and one port (``ibstat <ca> <port>``)."""
    text = []
    for card in cards:
        kind = device_type(card)
        for index in range(len(card["functions"])):
            name = device_name(card, index)
            if only and name != only:
                continue
            netdev = (card.get("netdevs") or [""] * 8)[index]
            view = port_view(card, index, carrier(netdev) if netdev else None)
            fields = [
                f"State: {view['state']}",
                f"Physical state: {view['phys_state']}",
                f"Rate: {view['rate']}",
                f"Base lid: {view['lid']}",
                "LMC: 0",
                f"SM lid: {view['sm_lid']}",
                "Capability mask: 0x2659e848" if view["link_layer"] == "InfiniBand"
                else "Capability mask: 0x00010000",
                f"Port GUID: 0x{view['guid']:016x}",
                f"Link layer: {view['link_layer']}",
            ]  # fmt: skip
            if port is not None:
                text += [f"CA: '{name}'", "Port 1:", *fields]
                continue
            text += [
                f"CA '{name}'",
                f"\tCA type: MT{kind.device_id}",
                "\tNumber of ports: 1",
                f"\tFirmware version: {card['firmware']['running']}",
                "\tHardware version: 0",
                f"\tNode GUID: 0x{view['guid']:016x}",  # mlx5: one node per function
                f"\tSystem image GUID: 0x{int(card['base_guid'], 16):016x}",
                "\tPort 1:",
                *(f"\t\t{line}" for line in fields),
            ]
    return "\n".join(text) + ("\n" if text else "")
