"""NIC -> PCI function -> NUMA node -> CPUs -> MSI-X IRQs on a fake sysfs/procfs."""

import os

import pytest
from cxfab.host.net.irq import (
    IrqError,
    device_irqs,
    node_cpus,
    numa_node,
    pci_device,
    read_affinity,
    write_affinity,
)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)


@pytest.fixture
def root(tmp_path):
    """A guest-like tree: virtio NIC under 0000:65:00.0 (node 1), ConnectX-like 17:00.0."""
    sysfs = tmp_path / "sys"
    pci_bus = sysfs / "bus" / "pci"
    pci_bus.mkdir(parents=True)
    for bdf, parent, node, irqs in (
        ("0000:65:00.0", "pci0000:64/0000:64:00.0", 1, [40, 41, 42]),
        ("0000:17:00.0", "pci0000:00/0000:00:02.0", 0, [60, 61]),
    ):
        device = sysfs / "devices" / parent / bdf
        write(str(device / "numa_node"), f"{node}\n")
        os.symlink(pci_bus, device / "subsystem")
        for irq in irqs:
            write(str(device / "msi_irqs" / str(irq)), "msix\n")
    # virtio: the netdev's device link is the virtio child below the PCI function.
    virtio = sysfs / "devices" / "pci0000:64/0000:64:00.0/0000:65:00.0/virtio8"
    virtio.mkdir()
    os.symlink(sysfs / "bus" / "virtio", virtio / "subsystem")
    (sysfs / "bus" / "virtio").mkdir()
    for name, target in (
        ("ens1", virtio),
        ("enp23s0f0", virtio.parent.parent.parent.parent / "pci0000:00/0000:00:02.0/0000:17:00.0"),
    ):
        (sysfs / "class" / "net" / name).mkdir(parents=True)
        os.symlink(target, sysfs / "class" / "net" / name / "device")
    write(str(sysfs / "devices/system/node/node0/cpulist"), "0-1\n")
    write(str(sysfs / "devices/system/node/node1/cpulist"), "2-3\n")
    write(str(sysfs / "devices/system/cpu/online"), "0-3\n")
    for irq in (40, 41, 42, 60, 61):
        write(str(tmp_path / "proc/irq" / str(irq) / "smp_affinity_list"), "0-3\n")
        write(str(tmp_path / "proc/irq" / str(irq) / "effective_affinity_list"), "0\n")
    write(str(tmp_path / "proc/interrupts"), " 77:  0  0  PCI-MSI mlx5_comp0@pci:0000:18:00.0\n")
    return str(tmp_path)


def test_virtio_netdev_resolves_to_its_pci_parent_on_node_1(root):
    pci = pci_device(root, "ens1")
    assert pci.endswith("/0000:65:00.0")
    assert numa_node(pci) == 1
    assert node_cpus(root, 1) == [2, 3]
    assert device_irqs(root, pci, "ens1") == [40, 41, 42]


def test_connectx_style_device_link_is_the_pci_function(root):
    pci = pci_device(root, "enp23s0f0")
    assert pci.endswith("/0000:17:00.0")
    assert numa_node(pci) == 0


def test_missing_interface_is_a_clear_error(root):
    with pytest.raises(IrqError, match="eth9"):
        pci_device(root, "eth9")


def test_unknown_node_falls_back_to_online_cpus(root):
    assert node_cpus(root, -1) == [0, 1, 2, 3]


def test_proc_interrupts_names_are_the_fallback(root, tmp_path):
    pci = tmp_path / "sys/devices/x/0000:18:00.0"
    pci.mkdir(parents=True)
    assert device_irqs(root, str(pci), "nope") == [77]


def test_affinity_write_and_read_back(root):
    write_affinity(root, 41, "3")
    assert read_affinity(root, 41) == {"requested": [3], "effective": [0]}


def test_pin_spreads_over_node_cpus_writes_and_reads_back(root):
    from cxfab.host.net.irq import pin

    result = pin(root, ["ens1"], "numa-local")
    assert result["cpus"] == "2-3" and result["changed"]
    assert result["assignment"] == {"40": 2, "41": 3, "42": 2}
    assert read_affinity(root, 41)["requested"] == [3]
    # The effective CPU (0) moves at the next interrupt: named, not failed.
    assert result["effective_pending"] == [40, 41, 42]
    assert not pin(root, ["ens1"], "numa-local")["changed"]


def test_pin_dry_run_writes_nothing_and_cpulist_outside_online_is_refused(root):
    from cxfab.host.net.irq import pin

    assert pin(root, ["ens1"], "cpulist", "1", apply=False)["diff"]["after"][40] == "1"
    assert read_affinity(root, 40)["requested"] == [0, 1, 2, 3]
    with pytest.raises(IrqError, match="not a subset of the online CPUs 0-3"):
        pin(root, ["ens1"], "cpulist", "7")
