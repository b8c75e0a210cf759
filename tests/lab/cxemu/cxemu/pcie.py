"""The PCIe link of an emulated card and the flap knob (cxfab lab emulator).

A ConnectX-4 is a PCIe 3.0 x16 device; seed 000's card sat in an x8 slot. The card
state keeps the link as ``pcie: {speed, width, max_speed, max_width}`` and shows it
where product code reads it, the PCI function's sysfs files
(``current_link_speed`` ... ``max_link_width``), but only in a fake sysfs tree named
by ``CXEMU_SYSFS_ROOT``: a guest kernel's own files cannot be overridden, so there
the knob is refused rather than silently ignored.

``flap`` takes a port's link down and up once: the card counts a link-down event
(mstlink's ``Link Down Counter`` on an IB port) and the netdev's ``carrier_changes``
grows by 2, by writing the fake tree, or on a real netdev by ``ip link set down/up``.
"""

import os
import subprocess
from pathlib import Path

from . import sysfs

DEFAULT_LINK = {"speed": 8.0, "width": 16, "max_speed": 8.0, "max_width": 16}
SPEEDS = (2.5, 5.0, 8.0, 16.0, 32.0)
WIDTHS = (1, 2, 4, 8, 16)


class PublishError(Exception):
    """The link cannot be shown where product code reads it."""


def fake_tree() -> Path | None:
    """The fake sysfs root when one is configured, None on a real /sys."""
    root = os.environ.get("CXEMU_SYSFS_ROOT")
    return Path(root) if root else None


def link_of(card: dict) -> dict:
    return {**DEFAULT_LINK, **(card.get("pcie") or {})}


def publish(card: dict) -> None:
    """Write the card's link into the fake tree (every function of the card)."""
    root = fake_tree()
    if root is None:
        raise PublishError(
            "the PCIe link is shown only through a fake sysfs tree (CXEMU_SYSFS_ROOT); "
            "a guest kernel's own link files cannot be overridden"
        )
    link = link_of(card)
    for function in card["functions"]:
        device = root / "bus" / "pci" / "devices" / function
        device.mkdir(parents=True, exist_ok=True)
        for name, value in (
            ("current_link_speed", f"{link['speed']:.1f} GT/s PCIe"),
            ("current_link_width", str(link["width"])),
            ("max_link_speed", f"{link['max_speed']:.1f} GT/s PCIe"),
            ("max_link_width", str(link["max_width"])),
        ):
            (device / name).write_text(value + "\n")


def flap(card: dict, port: int) -> str:
    """One link down/up of a port; returns what was done (for the admin's output)."""
    netdev = (card.get("netdevs") or [""] * 8)[port]
    state = card["ports"][port]
    state["link_down_events"] = state.get("link_down_events", 0) + 1
    if not netdev:
        return f"port {port + 1}: link-down event counted (no netdev mapped)"
    root = fake_tree()
    if root is not None:
        path = root / "class" / "net" / netdev / "carrier_changes"
        try:
            count = int(path.read_text().strip())
        except (OSError, ValueError) as exc:
            raise PublishError(f"{path}: cannot read carrier_changes ({exc})") from None
        path.write_text(f"{count + 2}\n")
        return f"{netdev}: carrier_changes {count} -> {count + 2}"
    if sysfs.carrier(netdev) is None:
        raise PublishError(f"{netdev}: no such network interface")
    for updown in ("down", "up"):
        subprocess.run(["ip", "link", "set", "dev", netdev, updown], check=True)
    return f"{netdev}: set down and up"
