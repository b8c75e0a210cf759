"""SR-IOV virtual functions of a physical function, through the PCI core's sysfs files.

`/sys/class/net/<pf>/device/sriov_totalvfs` is how many VFs the function offers (on a
ConnectX the firmware's NUM_OF_VFS, once SRIOV_EN is active; without SR-IOV the files
are absent), `sriov_numvfs` how many exist; writing it creates or removes them. The
kernel refuses a count above sriov_totalvfs (ERANGE) and a new nonzero count while
VFs exist (EBUSY: "Disable before enabling"), so a change between two nonzero counts
writes 0 first (the kernel's Documentation/ABI/testing/sysfs-bus-pci).

Pure file access on a root given as an argument, so the stage, the host agent and the
tests share it. Every count is checked before anything is written: a count the
function cannot take changes nothing.
"""

from __future__ import annotations

import os

from . import read_text


class SriovError(ValueError):
    """A count that cannot be set, or a sysfs file that cannot be read or written."""


def device_dir(root: str, netdev: str) -> str:
    return os.path.join(root, "sys/class/net", netdev, "device")


def _count(path: str) -> int | None:
    text = read_text(path)
    return int(text) if text is not None and text.isdigit() else None


def read(root: str, netdev: str) -> dict:
    """{"numvfs", "totalvfs"} as read, or {"error": why} when the function has no SR-IOV."""
    base = device_dir(root, netdev)
    numvfs = _count(os.path.join(base, "sriov_numvfs"))
    if numvfs is None:
        text = read_text(os.path.join(base, "sriov_numvfs"))
        return {"error": f"{base}/sriov_numvfs: unreadable ({text!r})"}
    return {"numvfs": numvfs, "totalvfs": _count(os.path.join(base, "sriov_totalvfs"))}


def steps(netdev: str, want: int, state: dict) -> list[int]:
    """The values to write to the netdev's sriov_numvfs, in order ([] when it holds `want`).

    SriovError when the function has no SR-IOV or offers fewer than `want` VFs."""
    if "error" in state:
        raise SriovError(
            f"{netdev}: {state['error']}: the function offers no SR-IOV "
            "(SRIOV_EN and NUM_OF_VFS active on the card? an activation may be pending)"
        )
    total = state.get("totalvfs")
    if total is None or want > total:
        raise SriovError(
            f"{netdev}: {want} VFs wanted, the function offers {total} (sriov_totalvfs); "
            "raise NUM_OF_VFS (firmware, then an activation) or lower num_vfs"
        )
    current = state["numvfs"]
    if current == want:
        return []
    return [0, want] if current and want else [want]


def plan(root: str, wanted: dict[str, int]) -> dict[str, dict]:
    """netdev -> {"before", "totalvfs", "steps"} for every wanted count; SriovError (with
    every refused netdev) before any write when one cannot be set."""
    planned, errors = {}, []
    for netdev, want in sorted(wanted.items()):
        state = read(root, netdev)
        try:
            planned[netdev] = {
                "before": state.get("numvfs"),
                "totalvfs": state.get("totalvfs"),
                "steps": steps(netdev, want, state),
            }
        except SriovError as exc:
            errors.append(str(exc))
    if errors:
        raise SriovError("; ".join(errors))
    return planned


def write(root: str, netdev: str, values: list[int]) -> None:
    """Write each value to sriov_numvfs in turn; SriovError names the file and the errno."""
    path = os.path.join(device_dir(root, netdev), "sriov_numvfs")
    for value in values:
        try:
            with open(path, "w", encoding="ascii") as handle:
                handle.write(f"{value}\n")
        except OSError as exc:
            raise SriovError(f"{path}: writing {value}: {exc.strerror or exc}") from None


def apply(root: str, wanted: dict[str, int]) -> list[str]:
    """The host agent at boot: every count set again, each port on its own (one that
    cannot be set does not hold the others back); the errors, one per netdev."""
    errors = []
    for netdev, want in sorted(wanted.items()):
        try:
            write(root, netdev, steps(netdev, want, read(root, netdev)))
        except SriovError as exc:
            errors.append(str(exc))
    return errors
