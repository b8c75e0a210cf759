"""NIC -> PCI function -> NUMA node -> CPUs, and the function's MSI-X IRQs.

Every path is taken relative to `root` so tests can build a fake sysfs/procfs.
"""

from __future__ import annotations

import os
import re

from .cpulist import parse_cpulist

_BDF = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


class IrqError(RuntimeError):
    """The system does not expose what the IRQ plan needs (named in the message)."""


def _path(root: str, *parts: str) -> str:
    return os.path.join(root, *(p.lstrip("/") for p in parts))


def _read(path: str) -> str:
    with open(path, encoding="ascii") as handle:
        return handle.read().strip()


def pci_device(root: str, netdev: str) -> str:
    """Absolute sysfs directory of the PCI function behind `netdev`.

    `/sys/class/net/<if>/device` is the PCI function on ConnectX but a virtio
    child (`.../0000:65:00.0/virtio7`) on virtio-net: walk up until the
    directory's subsystem is `pci`.
    """
    link = _path(root, "sys/class/net", netdev, "device")
    if not os.path.exists(link):
        raise IrqError(f"{netdev}: no {link} (not a device-backed interface)")
    current = os.path.realpath(link)
    sys_devices = os.path.realpath(_path(root, "sys/devices"))
    while current.startswith(sys_devices) and current != sys_devices:
        subsystem = os.path.join(current, "subsystem")
        name = os.path.basename(current)
        if (
            os.path.exists(subsystem)
            and os.path.basename(os.path.realpath(subsystem)) == "pci"
            and _BDF.match(name)
        ):
            return current
        current = os.path.dirname(current)
    raise IrqError(f"{netdev}: no PCI device above {os.path.realpath(link)}")


def numa_node(pci_dir: str) -> int:
    """The function's NUMA node; -1 when the platform does not say."""
    try:
        return int(_read(os.path.join(pci_dir, "numa_node")))
    except (OSError, ValueError):
        return -1


def node_cpus(root: str, node: int) -> list[int]:
    """CPUs of NUMA node `node` (all online CPUs when node is -1)."""
    if node < 0:
        return parse_cpulist(_read(_path(root, "sys/devices/system/cpu/online")))
    return parse_cpulist(_read(_path(root, f"sys/devices/system/node/node{node}/cpulist")))


def device_irqs(root: str, pci_dir: str, netdev: str) -> list[int]:
    """MSI/MSI-X IRQs of the function; else /proc/interrupts lines naming it."""
    msi_dir = os.path.join(pci_dir, "msi_irqs")
    if os.path.isdir(msi_dir):
        irqs = sorted(int(name) for name in os.listdir(msi_dir) if name.isdigit())
        if irqs:
            return irqs
    bdf = os.path.basename(pci_dir)
    irqs = []
    try:
        with open(_path(root, "proc/interrupts"), encoding="ascii", errors="replace") as handle:
            for line in handle:
                head, _, rest = line.partition(":")
                if head.strip().isdigit() and (bdf in rest or re.search(rf"\b{netdev}\b", rest)):
                    irqs.append(int(head))
    except OSError:
        pass
    return sorted(irqs)


def read_affinity(root: str, irq: int) -> dict:
    """`smp_affinity_list` and, where the kernel has it, `effective_affinity_list`."""
    base = _path(root, "proc/irq", str(irq))
    state = {"requested": parse_cpulist(_read(os.path.join(base, "smp_affinity_list")))}
    effective = os.path.join(base, "effective_affinity_list")
    state["effective"] = parse_cpulist(_read(effective)) if os.path.exists(effective) else None
    return state


def write_affinity(root: str, irq: int, cpus_text: str) -> None:
    with open(_path(root, "proc/irq", str(irq), "smp_affinity_list"), "w", encoding="ascii") as f:
        f.write(cpus_text + "\n")
