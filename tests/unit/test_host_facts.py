"""Host readings (host/facts.py) against a fake /sys and /proc tree (virtio, ConnectX)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from cxfab.host import facts as host_facts
from cxfab.host.net.dfping import df_ping
from cxfab.structured.hosts import sections

REPO = Path(__file__).resolve().parents[2]


VLAN_PROC = """bond0.20  VID: 20\t REORDER_HDR: 1  dev->priv_flags: 1021
         total frames received            0
          total bytes received            0
Device: bond0
INGRESS priority mappings: 0:0  1:0  2:0  3:0  4:0  5:0  6:0 7:0
 EGRESS priority mappings: 0:3 1:3 2:3 3:3 4:3 5:3 6:3 7:3
"""

BOND_PROC = """Ethernet Channel Bonding Driver: v6.1.0

Bonding Mode: IEEE 802.3ad Dynamic link aggregation
Transmit Hash Policy: layer2 (0)
MII Status: up
MII Polling Interval (ms): 100

802.3ad info
LACP active: on
LACP rate: fast
Active Aggregator Info:
\tAggregator ID: 1
\tNumber of ports: 2

Slave Interface: ens1f0
MII Status: up
Speed: 100000 Mbps
Aggregator ID: 1

Slave Interface: ens1f1
MII Status: down
Speed: Unknown
Aggregator ID: 2
"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def pci_function(root: Path, bdf: str, node: int, irqs: list[int]) -> Path:
    pci = root / "sys/devices/pci0000:64/0000:64:00.0" / bdf
    (pci / "msi_irqs").mkdir(parents=True)
    for irq in irqs:
        (pci / "msi_irqs" / str(irq)).write_text("msix\n")
    write(pci / "numa_node", str(node))
    write(pci / "current_link_speed", "8.0 GT/s PCIe")
    write(pci / "current_link_width", "8")
    (root / "sys/bus/pci").mkdir(parents=True, exist_ok=True)
    (pci / "subsystem").symlink_to(root / "sys/bus/pci")
    return pci


def netdev(root: Path, name: str, device: Path, speed: str, mtu: int = 9000) -> None:
    net = root / "sys/class/net" / name
    net.mkdir(parents=True)
    (net / "device").symlink_to(device)
    for key, value in (("operstate", "up"), ("carrier", "1"), ("speed", speed), ("mtu", mtu)):
        write(net / key, str(value))


@pytest.fixture
def tree(tmp_path):
    root = tmp_path
    write(root / "sys/devices/system/node/node1/cpulist", "2-3")
    write(root / "sys/devices/system/cpu/online", "0-3")
    # virtio: the netdev's device is the virtio child of the PCI function.
    virtio_pci = pci_function(root, "0000:65:00.0", 1, [42, 43])
    child = virtio_pci / "virtio7"
    child.mkdir()
    (root / "sys/bus/virtio").mkdir(parents=True)
    (child / "subsystem").symlink_to(root / "sys/bus/virtio")
    netdev(root, "ens1f0", child, "-1")
    # ConnectX: the netdev's device is the PCI function itself.
    cx_pci = pci_function(root, "0000:65:00.1", 1, [51])
    netdev(root, "ens1f1", cx_pci, "100000")
    for irq, requested, effective in ((42, "2", "2"), (43, "0", "2"), (51, "3", "3")):
        write(root / f"proc/irq/{irq}/smp_affinity_list", requested)
        write(root / f"proc/irq/{irq}/effective_affinity_list", effective)
    for name, mtu in (("bond0", 9000), ("bond0.20", 1500)):
        write(root / "sys/class/net" / name / "mtu", str(mtu))
    write(root / "proc/net/vlan/bond0.20", VLAN_PROC)
    write(root / "proc/net/bonding/bond0", BOND_PROC)
    ib = root / "sys/class/infiniband/rxe0/ports/1"
    write(ib / "state", "4: ACTIVE")
    write(ib / "rate", "100 Gb/sec (4X EDR)")
    write(ib / "gid_attrs/ndevs/0", "bond0.20")
    return root


HOST = {
    "mgmt_interface": "eno1",
    "nics": [
        {
            "name": "cx4",
            "pci": "0000:65:00.0",
            "model": "ConnectX-4",
            "ports": [{"port": 1, "netdev": "ens1f0"}, {"port": 2, "netdev": "ens1f1"}],
        }
    ],
    "bond": {"name": "bond0", "members": ["ens1f0", "ens1f1"], "mtu": 9000,
             "mode": "802.3ad", "lacp_rate": "fast"},
    "vlans": [{"id": 20, "address": "12.0.20.1/24", "mtu": 9000},
              {"id": 30, "address": "12.0.30.1/24", "mtu": 9000}],
}  # fmt: skip


def gather(root, host=HOST):
    return host_facts.gather(host_facts.Host(str(root), sections(host)))


def test_virtio_child_resolves_to_its_pci_parent(tree):
    info = gather(tree)["netdevs"]["ens1f0"]
    assert info["pci"] == "0000:65:00.0"
    assert (info["numa_node"], info["node_cpus"]) == (1, "2-3")
    assert info["speed_mbps"] is None  # virtio reports -1
    assert info["pcie_link"] == "8.0 GT/s PCIe x8"
    assert info["pcie_gbps"] == 63.008
    assert info["irqs"] == [
        {"irq": 42, "requested": "2", "effective": "2"},
        {"irq": 43, "requested": "0", "effective": "2"},
    ]


def test_connectx_function_is_its_own_pci_device(tree):
    info = gather(tree)["netdevs"]["ens1f1"]
    assert info["pci"] == "0000:65:00.1"
    assert info["speed_mbps"] == 100000
    assert [i["irq"] for i in info["irqs"]] == [51]


def test_mtus_vlans_bond_rdma_and_local_cpus(tree):
    facts = gather(tree)
    assert facts["mtus"] == {"bond0": 9000, "ens1f0": 9000, "ens1f1": 9000, "bond0.20": 1500}
    assert facts["vlans"]["bond0.20"] == {
        "exists": True,
        "vlan_id": 20,
        "egress_qos_map": dict.fromkeys(range(8), 3),
    }
    assert facts["vlans"]["bond0.30"]["exists"] is False
    assert facts["bond"]["active_aggregator"] == 1
    assert facts["bond"]["members"]["ens1f1"] == {
        "mii_status": "down",
        "speed": "Unknown",
        "aggregator": 2,
    }
    assert facts["rdma"]["rxe0"]["netdev"] == "bond0.20"
    assert facts["rdma"]["rxe0"]["software"] is True
    assert facts["nic_local_cpus"] == "2-3"


def test_missing_interface_and_bond(tree):
    bond = {**HOST["bond"], "name": "bond9", "members": ["ens9"]}
    facts = gather(tree, dict(HOST, bond=bond, vlans=[], nics=[]))
    assert facts["netdevs"]["ens9"] == {"exists": False}
    assert facts["bond"] == {"exists": False}


def test_vlan_proc_without_egress_map():
    text = VLAN_PROC.replace(" EGRESS priority mappings: 0:3 1:3 2:3 3:3 4:3 5:3 6:3 7:3", "")
    assert host_facts.parse_vlan_proc(text + " EGRESS priority mappings: \n") == {
        "vlan_id": 20,
        "egress_qos_map": {},
    }


@pytest.mark.skipif(os.geteuid() != 0, reason="raw ICMP sockets need root")
def test_df_ping_loopback_reply_and_too_big():
    try:
        socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close()
    except OSError as exc:
        pytest.skip(f"raw sockets not permitted here: {exc}")
    assert df_ping("127.0.0.1", 1472, "lo", 2, 1.0) == {"ok": True, "error": ""}
    too_big = df_ping("127.0.0.1", 70000, "lo", 1, 0.5)
    assert too_big["ok"] is False
    assert too_big["error"]


def test_df_ping_on_a_missing_interface_says_so():
    try:
        socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close()
    except OSError as exc:
        pytest.skip(f"raw sockets not permitted here: {exc}")
    result = df_ping("127.0.0.1", 100, "nosuchif0", 1, 0.5)
    assert result["ok"] is False
    assert result["error"].startswith("cannot send on nosuchif0")


def test_lossless_host_reads_the_gids_of_its_roce_vlans_and_memlock(tree):
    from tests.unit.test_hostnet_roce import gid_tree

    gid_tree(tree, device="rxe1")
    limits = tree / "etc/security/limits.d"
    limits.mkdir(parents=True)
    (limits / "90-cxfab-rdma.conf").write_text("* - memlock unlimited\n")
    structured = sections(HOST)
    structured["lossless"] = {"roce": {"vlans": [20, 30], "gid_type": "RoCE v2"}}
    facts = host_facts.gather(host_facts.Host(str(tree), structured))
    assert [e["index"] for e in facts["roce"]["gids"]["bond0.20"]] == [2, 3]
    assert facts["roce"]["gids"]["bond0.30"] == []
    assert facts["roce"]["memlock"]["soft"]["value"] == "unlimited"
    assert "roce" not in gather(tree)  # lossless off: nothing read


def test_a_reading_is_one_function_and_one_row(tmp_path):
    """A new reading plugs into the list; one that does not apply leaves its key out."""
    structured = sections(HOST)

    def read_hostname(host, facts):
        return "h1" if facts["netdevs"] else None

    def read_nothing(host, facts):
        return None

    readings = (
        *host_facts.READINGS[:1],
        ("hostname", read_hostname),
        ("nothing", read_nothing),
    )
    found = host_facts.gather(host_facts.Host(str(tmp_path), structured), readings)
    assert found["hostname"] == "h1" and "nothing" not in found
    assert set(found) == {"netdevs", "hostname"}


def test_a_mistyped_ibstat_path_stops_the_reading():
    structured = sections(HOST)
    structured["nics"][0]["ports"][0]["link_type"] = "ib"
    host = host_facts.Host("/", structured, {"ibstat_path": "/no/such/ibstat"})
    with pytest.raises(host_facts.FactsError, match="is not an executable"):
        host_facts.read_ib(host, {})


LLDP_JSON0 = """{"lldp": [{"interface": [
 {"name": "ens1f0", "chassis": [{"id": [{"type": "mac", "value": "52:54:00:da:00:01"}],
   "name": [{"value": "lab-sw-a"}]}], "port": [{"id": [{"type": "local", "value": "Eth1/1"}]}]},
 {"name": "ens1f1", "chassis": [{"name": [{"value": "lab-sw-b"}]}],
   "port": [{"id": [{"type": "local", "value": "Eth1/1"}]}]}]}]}"""


CABLED = {
    **HOST,
    "nics": [
        {
            **HOST["nics"][0],
            "ports": [
                {"port": 1, "netdev": "ens1f0", "peer": "lab-sw-a", "peer_port": "1/1"},
                {"port": 2, "netdev": "ens1f1", "peer": "lab-sw-b", "peer_port": "1/1"},
            ],
        }
    ],
}


def _lldp_host(run, found="/usr/sbin/lldpcli"):
    return host_facts.Host("/", sections(CABLED), {}, run, lambda name: found)


def test_no_lldp_reading_for_a_host_without_cabling():
    host = host_facts.Host("/", sections(HOST), {}, lambda argv: (0, "", ""), lambda n: "x")
    assert host_facts.read_lldp(host, {}) is None


def test_lldp_neighbours_of_the_cabled_ports_from_lldpcli():
    calls = []

    def run(argv):
        calls.append(argv)
        return 0, LLDP_JSON0, ""

    found = host_facts.read_lldp(_lldp_host(run), {})
    assert calls == [["/usr/sbin/lldpcli", "-f", "json0", "show", "neighbors"]]
    assert found["neighbours"] == {
        "ens1f0": [{"sysname": "lab-sw-a", "port_id": "Eth1/1"}],
        "ens1f1": [{"sysname": "lab-sw-b", "port_id": "Eth1/1"}],
    }


@pytest.mark.parametrize(
    ("run", "found", "error"),
    [
        (lambda argv: (0, "", ""), None, "lldpcli not found"),
        (lambda argv: (1, "", "unable to connect to socket"), "/x/lldpcli", "exit 1: unable"),
        (lambda argv: (0, "Interface ens1f0", ""), "/x/lldpcli", "printed no JSON"),
    ],
)
def test_an_lldp_reading_that_fails_says_why(run, found, error):
    assert error in host_facts.read_lldp(_lldp_host(run, found), {})["error"]
