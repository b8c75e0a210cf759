"""NIC -> PCI function -> NUMA node -> CPUs, and the function's MSI-X IRQs.

Every path is taken relative to `root` so tests can build a fake sysfs/procfs.
"""

from __future__ import annotations

import os
import re

from . import IntentError
from .cpulist import format_cpulist, parse_cpulist, spread

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


def discover(root: str, interfaces) -> dict:
    """Interface -> {pci, numa_node, irqs}; IRQs shared by two ports count once."""
    devices, seen = {}, set()
    for name in interfaces:
        pci_dir = pci_device(root, name)
        irqs = [n for n in device_irqs(root, pci_dir, name) if n not in seen]
        seen.update(irqs)
        devices[name] = {
            "pci": pci_dir.rsplit("/", 1)[-1],
            "numa_node": numa_node(pci_dir),
            "irqs": irqs,
        }
    return devices


def target_cpus(root: str, devices: dict, policy: str, cpus_text: str) -> list[int]:
    """The CPUs the IRQs go to: the NICs' node CPUs, or the fixed list (policy cpulist)."""
    if policy == "cpulist":
        try:
            cpus = parse_cpulist(cpus_text, "cxfab_host.irq_affinity.cpus")
        except IntentError as exc:
            raise IrqError(str(exc)) from exc
        online = set(node_cpus(root, -1))
        if not cpus or not set(cpus) <= online:
            raise IrqError(
                f"cxfab_host.irq_affinity.cpus: {cpus_text!r} is not a subset of the "
                f"online CPUs {format_cpulist(online)}"
            )
        return cpus
    nodes = {d["numa_node"] for d in devices.values()}
    return sorted({cpu for node in nodes for cpu in node_cpus(root, node)})


def pin(root: str, interfaces, policy: str, cpus_text: str = "", apply: bool = True) -> dict:
    """Spread the interfaces' IRQs one CPU each over the target CPUs and read them back.

    The one implementation of IRQ pinning: the module runs it at deploy time and the
    host agent at boot and link-up (affinity resets when a port goes down and up).
    With apply=False nothing is written and the result says what would be.
    Raises IrqError when the system refuses or reads back something else.
    """
    devices = discover(root, interfaces)
    cpus = target_cpus(root, devices, policy, cpus_text)
    all_irqs = [irq for d in devices.values() for irq in d["irqs"]]
    if policy != "off" and not all_irqs:
        raise IrqError(f"no MSI-X IRQ found for {list(interfaces)}")
    wanted = spread(all_irqs, cpus) if policy != "off" and cpus else {}
    before, after, pending = {}, {}, []
    for name, device in devices.items():
        device["affinity"] = {}
        for irq in device["irqs"]:
            state = read_affinity(root, irq)
            before[irq] = format_cpulist(state["requested"])
            target = wanted.get(irq)
            if target is not None and state["requested"] != [target]:
                if apply:
                    try:
                        write_affinity(root, irq, str(target))
                    except OSError as exc:
                        # Managed IRQs (spread by the kernel) refuse user affinity with EIO.
                        raise IrqError(
                            f"{name}: IRQ {irq}: writing smp_affinity_list refused: "
                            f"{exc.strerror or exc}"
                        ) from exc
                    state = read_affinity(root, irq)
                    if state["requested"] != [target]:
                        raise IrqError(
                            f"{name}: IRQ {irq} reads back "
                            f"{format_cpulist(state['requested'])}, wanted {target}"
                        )
                else:
                    state = {"requested": [target], "effective": state["effective"]}
            after[irq] = format_cpulist(state["requested"])
            effective = state["effective"]
            device["affinity"][irq] = {
                "requested": format_cpulist(state["requested"]),
                "effective": None if effective is None else format_cpulist(effective),
            }
            # x86 without interrupt remapping moves an MSI at its next interrupt:
            # an idle queue keeps its old effective CPU until it fires.
            outside = effective is not None and not set(effective) <= set(cpus)
            if apply and target is not None and outside:
                pending.append(irq)
    return {
        "changed": before != after,
        "cpus": format_cpulist(cpus),
        "cpu_list": cpus,
        "numa_nodes": sorted({d["numa_node"] for d in devices.values()}),
        "devices": devices,
        "assignment": {str(k): v for k, v in wanted.items()},
        "effective_pending": pending,
        "diff": {"before": before, "after": after},
    }
