"""Map a netdev to its PCI function (cxfab lab emulator seeding).

``/sys/class/net/<if>/device`` is the PCI function itself on a ConnectX NIC, but the
virtio child (``.../0000:65:00.0/virtio7``) on the lab's virtio NICs: walk up from the
resolved path to the first component that is a PCI address. ``CXEMU_SYSFS_ROOT`` lets
tests point this at a fake tree.
"""

import os
from pathlib import Path

from .state import normalize_bdf


class NetdevError(Exception):
    """The netdev does not exist or has no PCI device."""


def sysfs_root() -> Path:
    return Path(os.environ.get("CXEMU_SYSFS_ROOT", "/sys"))


def pci_function(netdev: str) -> str:
    link = sysfs_root() / "class" / "net" / netdev / "device"
    if not link.exists():
        raise NetdevError(f"netdev {netdev}: {link} does not exist (no such device or no bus)")
    path = link.resolve()
    for candidate in (path, *path.parents):
        if candidate.name and normalize_bdf(candidate.name) and candidate.name.count(":") == 2:
            return normalize_bdf(candidate.name)
    raise NetdevError(f"netdev {netdev}: no PCI function above {path}")


def mac_address(netdev: str) -> str | None:
    path = sysfs_root() / "class" / "net" / netdev / "address"
    try:
        return path.read_text().strip()
    except OSError:
        return None


def carrier(netdev: str) -> bool | None:
    """Real carrier of the mapped netdev (None when unknown), so mlxlink follows link cuts."""
    path = sysfs_root() / "class" / "net" / netdev / "carrier"
    try:
        return path.read_text().strip() == "1"
    except OSError:
        return None
