"""The run-time sysfs files of an emulated card: SR-IOV and the mlx5 ECN knobs.

Shown only in a fake sysfs tree (``CXEMU_SYSFS_ROOT``), laid out as the PCI core and
mlx5 show them on a real host:

- ``bus/pci/devices/<pf>/sriov_totalvfs`` and ``sriov_numvfs``, present only while
  ``SRIOV_EN`` is Current (a function without the SR-IOV capability has neither);
  ``sriov_totalvfs`` is the Current ``NUM_OF_VFS``; every VF is a function
  ``bus/pci/devices/<vf>`` with ``physfn`` pointing back and ``virtfn<i>`` on the PF;
- ``class/net/<netdev>/ecn/{roce_np,roce_rp}/enable/<0..7>`` on an Ethernet port, each
  starting at the bit of ``ROCE_CC_PRIO_MASK_P<n>`` (UNCONFIRMED: which firmware
  parameter a driver load takes the per-priority enables from);
- ``class/net/<netdev>/device`` pointing at the function, as on a ConnectX.

The files are plain files: nothing reacts to a write as the kernel would. ``sync``
(``cxemu-admin sync``) is the kernel's side of a ``sriov_numvfs`` write: the VFs of
the count the file holds appear (or go); a count above ``sriov_totalvfs``, which the
kernel refuses with ERANGE, is put back to the VFs that exist and reported. The
refusal of a change between two nonzero counts (EBUSY) is not reproduced.
``publish(card, reset=True)`` is a driver restart (``mstfwreset``): no VFs, the
knobs back at their start values.
"""

import os
import shutil
from pathlib import Path

from .pcie import PublishError, fake_tree
from .state import port_protocol

ECN_PROTOCOLS = ("roce_np", "roce_rp")
PRIORITIES = range(8)


def _current(card: dict, name: str, default: int = 0) -> int:
    entry = card["config"].get(name)
    return default if entry is None else int(entry["current"])


def _link(path: Path, target: Path) -> None:
    if path.is_symlink() or path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(os.path.relpath(target, path.parent))


def vf_address(card: dict, port: int, index: int) -> str:
    """VF <index> of function <port>: after the card's PFs, each PF's VFs in a block
    of NUM_OF_VFS routing IDs (emulation choice; a card's VF offset and stride are in
    its SR-IOV capability)."""
    first = card["functions"][0]
    domain, bus, rest = first.split(":")
    slot, function = rest.split(".")
    total = _current(card, "NUM_OF_VFS")
    rid = (int(slot, 16) << 3 | int(function)) + len(card["functions"]) + port * total + index
    return f"{domain}:{bus}:{rid >> 3:02x}.{rid & 7}"


def _vfs(card: dict, root: Path, port: int, count: int) -> None:
    """Exactly `count` VFs under the PF of `port` (virtfn links and VF functions)."""
    pf = root / "bus" / "pci" / "devices" / card["functions"][port]
    for link in pf.glob("virtfn*"):
        index = int(link.name[len("virtfn") :])
        if index >= count:
            shutil.rmtree(link.resolve(), ignore_errors=True)
            link.unlink()
    for index in range(count):
        vf = root / "bus" / "pci" / "devices" / vf_address(card, port, index)
        vf.mkdir(parents=True, exist_ok=True)
        _link(vf / "physfn", pf)
        _link(pf / f"virtfn{index}", vf)


def _ecn(card: dict, netdev_dir: Path, port: int, reset: bool) -> None:
    mask = _current(card, f"ROCE_CC_PRIO_MASK_P{port + 1}", 255)
    for protocol in ECN_PROTOCOLS:
        knobs = netdev_dir / "ecn" / protocol / "enable"
        knobs.mkdir(parents=True, exist_ok=True)
        for prio in PRIORITIES:
            if reset or not (knobs / str(prio)).exists():
                (knobs / str(prio)).write_text(f"{mask >> prio & 1}\n")


def publish(card: dict, reset: bool = False) -> None:
    """Write the card's SR-IOV files and ECN knobs into the fake tree."""
    root = fake_tree()
    if root is None:
        raise PublishError("SR-IOV and ECN files are shown only through a fake sysfs tree")
    for port, function in enumerate(card["functions"]):
        pf = root / "bus" / "pci" / "devices" / function
        pf.mkdir(parents=True, exist_ok=True)
        numvfs, totalvfs = pf / "sriov_numvfs", pf / "sriov_totalvfs"
        if _current(card, "SRIOV_EN"):
            totalvfs.write_text(f"{_current(card, 'NUM_OF_VFS')}\n")
            if reset or not numvfs.exists():
                numvfs.write_text("0\n")
            sync_function(card, root, port)
        else:
            _vfs(card, root, port, 0)
            for path in (numvfs, totalvfs):
                path.unlink(missing_ok=True)
        netdev = (card.get("netdevs") or [""] * 8)[port]
        if not netdev:
            continue
        netdev_dir = root / "class" / "net" / netdev
        if not netdev_dir.exists():
            _link(netdev_dir, pf / "net" / netdev)
            (pf / "net" / netdev).mkdir(parents=True, exist_ok=True)
        # The link's relative target is taken from where the netdev's directory really is.
        _link(netdev_dir.resolve() / "device", pf)
        if port_protocol(card, port) == "ETH":
            _ecn(card, netdev_dir, port, reset)


def sync_function(card: dict, root: Path, port: int) -> str:
    """The kernel's side of a write to the PF's sriov_numvfs; what it did, one line."""
    pf = root / "bus" / "pci" / "devices" / card["functions"][port]
    numvfs = pf / "sriov_numvfs"
    if not numvfs.exists():
        return f"{card['functions'][port]}: no SR-IOV"
    existing = len(list(pf.glob("virtfn*")))
    text = numvfs.read_text().strip()
    total = _current(card, "NUM_OF_VFS")
    name = card["functions"][port]
    if not text.isdigit() or int(text) > total:
        numvfs.write_text(f"{existing}\n")
        return f"{name}: {text!r} refused (ERANGE, total {total}), {existing} VFs"
    _vfs(card, root, port, int(text))
    return f"{name}: {text} VFs"


def sync(card: dict) -> list[str]:
    root = fake_tree()
    if root is None:
        raise PublishError("SR-IOV files are shown only through a fake sysfs tree")
    return [sync_function(card, root, port) for port in range(len(card["functions"]))]
