"""Each lab host looks like the seed's server (two NUMA nodes, the data NIC on node 1); the
fabric guest cables every host port to its switch port."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from tests.lab.vm import lab as labctl
from tests.lab.vm.topology import (
    CABLES,
    CXEMU_BIN,
    DATA_NETDEVS,
    DATA_PCI,
    DATA_QUEUES,
    FABRIC,
    GUEST_CXEMU_STATE_DIR,
    GUEST_MGMT_ADDRESS,
    MGMT_NETDEV,
    SWITCHES,
    node_cpulist,
)

pytestmark = pytest.mark.lab


@pytest.fixture(params=["host1", "host2"])
def host(request):
    return request.getfixturevalue(request.param)


def test_two_numa_nodes_split_the_cpus(host):
    nodes = "/sys/devices/system/node"
    out = host.run(f"cat {nodes}/online {nodes}/node*/cpulist")
    online, node0, node1 = out.split()
    assert (online, node0, node1) == ("0-1", node_cpulist(0), node_cpulist(1))


@pytest.mark.parametrize("index", range(len(DATA_NETDEVS)))
def test_data_port_sits_on_numa_node_1_with_one_irq_per_queue(host, index):
    netdev = DATA_NETDEVS[index]
    pci = host.pci_device(netdev)
    assert pci.endswith(DATA_PCI[index]), f"{netdev} is {pci}, the topology says {DATA_PCI[index]}"
    assert host.run(f"cat {pci}/numa_node").strip() == "1"
    assert host.run(f"cat {pci}/local_cpulist").strip() == node_cpulist(1)
    msi = host.run(f"ls {pci}/msi_irqs").split()
    # virtio-net: one vector per rx and per tx queue, plus config and control.
    assert len(msi) >= 2 * DATA_QUEUES, f"{netdev}: only {len(msi)} MSI-X vectors"
    virtio = os.path.basename(host.run(f"readlink -f /sys/class/net/{netdev}/device").strip())
    interrupts = host.run("cat /proc/interrupts")
    queues = set(re.findall(rf"{virtio}-input\.(\d+)", interrupts))
    assert len(queues) == DATA_QUEUES, f"{netdev}: rx queue IRQs {sorted(queues)}"
    assert host.run(f"cat /proc/irq/{msi[1]}/smp_affinity_list").strip()


def test_management_nic_carries_the_ssh_session(host):
    route = host.run('echo "$SSH_CONNECTION"').split()
    assert route[2] == GUEST_MGMT_ADDRESS.split("/")[0]
    addresses = host.run(f"ip -4 -o address show dev {MGMT_NETDEV}")
    assert GUEST_MGMT_ADDRESS in addresses
    assert MGMT_NETDEV not in DATA_NETDEVS


def test_real_kernel_modules_load(host):
    modules = ["rdma_rxe", "8021q", "bonding", "sch_mqprio", "sch_htb", "sch_tbf", "sch_prio"]
    host.run("modprobe -a " + " ".join(modules))
    loaded = {line.split()[0] for line in host.run("cat /proc/modules").splitlines()}
    assert set(modules) <= loaded


def test_connectx_tools_come_first_in_guest_path_only(host):
    env = dict(line.split("=", 1) for line in host.run("env").splitlines() if "=" in line)
    assert env["PATH"].split(":")[0] == str(CXEMU_BIN)
    assert env["CXEMU_STATE_DIR"] == GUEST_CXEMU_STATE_DIR
    assert host.run(f"test -d {GUEST_CXEMU_STATE_DIR} -a -w {GUEST_CXEMU_STATE_DIR} && echo ok")
    assert str(CXEMU_BIN) not in os.environ.get("PATH", "").split(":")


def test_usr_and_the_tool_emulator_are_read_through_the_cached_mounts(host):
    """guest-init.sh's cached 9p mounts are in place (a failed mount only logs).

    Without them every guest program reads the controller's files uncached, and a
    module call costs twice as long: the lab still passes, only slower, so this
    test is where a lost mount shows.
    """
    # Mounts stacked on /usr are listed bottom first: the last one is what serves it.
    usr = host.run("findmnt -n -o SOURCE,FSTYPE /usr").splitlines()[-1].split()
    assert usr == ["cxfab-usr", "overlay"], usr
    lower = host.run("findmnt -n -o FSTYPE,OPTIONS /run/cxfab-usr/lower").split()
    assert lower[0] == "9p" and "loose" in lower[1].split(","), lower
    emulator = host.run(f"findmnt -n -o SOURCE,OPTIONS {CXEMU_BIN.parent}").split()
    assert emulator[0] == "cxfab_emu" and "loose" in emulator[1].split(","), emulator
    # virtme-ng's link to the guest kernel's modules is still reachable under /usr.
    assert host.run("ls /usr/lib/modules/$(uname -r)/modules.dep").strip()


def test_the_fabric_guest_cables_every_host_port_to_its_switch_port(lab):
    """lab-fabric holds one namespace per switch; each cable's NIC is there as swp<N>
    (found by its MAC), and the IPL is one veth between the two namespaces."""
    del lab  # only for the skip/fail when the lab is not up
    script = 'for ns in $(ip netns list | cut -d" " -f1); do echo "== $ns"; ip -n $ns -j link; done'
    done = subprocess.run(labctl.ssh_argv(FABRIC, script), capture_output=True, text=True,
                          timeout=120, check=True)  # fmt: skip
    namespaces, current = {}, None
    for line in done.stdout.splitlines():
        if line.startswith("== "):
            current = line[3:]
        elif current:
            namespaces[current] = {e["ifname"]: e for e in json.loads(line)}
    assert set(namespaces) == set(SWITCHES), sorted(namespaces)
    for cable in CABLES:
        port = namespaces[cable.switch][f"swp{cable.number}"]
        assert port["address"] == cable.fabric_mac, port
    for switch in SWITCHES:
        ipl = namespaces[switch]["swp35"]
        assert ipl.get("link_netnsid") is not None, ipl  # a veth whose peer is elsewhere
