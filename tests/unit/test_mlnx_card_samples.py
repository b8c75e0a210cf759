"""Card reads from cited samples: ASIC temperature (hwmon, mget_temp), PCIe link files,
and the dcb JSON the lossless read-back parses (tests/fixtures/mlnx/, sources in headers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cxfab.host.mlnx.health import HealthReader
from cxfab.host.mlnx.pcie import read_link
from cxfab.host.net import lossless
from cxfab.verify.nic_health import temperature_check

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mlnx"
PCI = "0000:17:00.0"


def sample(name: str) -> str:
    return (FIXTURES / name).read_text().split("# ---\n", 1)[1]


def sysfs_files(root: Path, name: str) -> Path:
    """Write a `path: content` sample under /sys/bus/pci/devices/<PCI>/ of `root`."""
    device = root / "sys/bus/pci/devices" / PCI
    for line in sample(name).splitlines():
        path, _, content = line.partition(": ")
        (device / path).parent.mkdir(parents=True, exist_ok=True)
        (device / path).write_text(content + "\n")
    return device


class Runner:
    """Answers one command with a sample; records what ran."""

    def __init__(self, out: str, rc: int = 0):
        self.out, self.rc, self.calls = out, rc, []

    def __call__(self, argv):
        self.calls.append(argv)
        return self.rc, self.out, ""


def test_hwmon_temp1_input_is_millidegrees_and_wins_over_the_tool(tmp_path):
    sysfs_files(tmp_path, "hwmon_mlx5.txt")
    runner = Runner(sample("mget_temp_seed000.txt"))
    reading = HealthReader(runner, {"temp": "/usr/bin/mget_temp"}, str(tmp_path)).temperature(PCI)
    assert reading == {"celsius": 51.25, "source": "hwmon temp1_input"}
    assert runner.calls == []  # the driver's sensor is read first: no tool call


def test_mget_temp_seed000_output_without_hwmon(tmp_path):
    (tmp_path / "sys/bus/pci/devices" / PCI).mkdir(parents=True)
    runner = Runner(sample("mget_temp_seed000.txt"))
    reader = HealthReader(runner, {"temp": "/usr/bin/mstmget_temp"}, str(tmp_path))
    assert reader.temperature(PCI) == {"celsius": 35.0, "source": "mstmget_temp"}
    assert runner.calls == [["/usr/bin/mstmget_temp", "-d", PCI]]


def test_mget_temp_without_a_reading_fails_closed_though_it_exits_0(tmp_path):
    runner = Runner(sample("mget_temp_no_reading.txt"))
    reading = HealthReader(runner, {"temp": "mget_temp"}, str(tmp_path)).temperature(PCI)
    assert reading["error"].startswith(f"`mget_temp -d {PCI}` failed (rc=0): -I- No valid")
    check = temperature_check("h1", "cx4", reading, 95.0)
    assert (check["status"], check["observed"]) == ("fail", "unreadable")


def test_no_sensor_and_no_tool_is_a_skip(tmp_path):
    reading = HealthReader(Runner(""), {"temp": None}, str(tmp_path)).temperature(PCI)
    assert temperature_check("h1", "cx4", reading, 95.0)["status"] == "skip"


@pytest.mark.parametrize(("limit", "status"), [(95.0, "pass"), (51.25, "fail"), (45.0, "fail")])
def test_the_temperature_limit_is_the_one_given(tmp_path, limit, status):
    sysfs_files(tmp_path, "hwmon_mlx5.txt")
    reading = HealthReader(Runner(""), {}, str(tmp_path)).temperature(PCI)
    check = temperature_check("h1", "cx4", reading, limit)
    assert check["status"] == status and check["expected"] == f"ASIC below {limit:g} C"
    assert check["observed"] == "51.25 C (hwmon temp1_input)"


def test_seed000_narrow_slot_from_its_sysfs_files(tmp_path):
    link = read_link(str(sysfs_files(tmp_path, "pcie_sysfs_seed000_x8.txt")))
    assert link.degraded
    assert link.observed() == "8 GT/s x8 (63.008 Gb/s), capable of 8 GT/s x16 (126.016 Gb/s)"


def test_dcb_json_samples_read_pfc_on_priority_3_and_dscp_trust():
    state = lossless.dcb_state(
        sample("dcb_pfc_show_prio3.txt"), sample("dcb_app_show_dscp_default.txt")
    )
    assert state == {"trust": "dscp", "pfc": [0, 0, 0, 1, 0, 0, 0, 0]}
    assert lossless.dcb_state(sample("dcb_pfc_show_prio3.txt"), "{}")["trust"] == "pcp"


# /proc/net/bonding/<bond> (drivers/net/bonding/bond_procfs.c, bond_info_show_slave:
# one block per member, "Link Failure Count: %u").
BONDING = """Ethernet Channel Bonding Driver: v6.1.0

Bonding Mode: IEEE 802.3ad Dynamic link aggregation
MII Status: up

Slave Interface: ens1f0
MII Status: up
Speed: 100000 Mbps
Link Failure Count: 3
Aggregator ID: 1

Slave Interface: ens1f1
MII Status: up
Link Failure Count: 0
Aggregator ID: 1
"""


def test_a_bond_member_reads_its_own_link_failure_count(tmp_path):
    net = tmp_path / "sys/class/net"
    (net / "bond0").mkdir(parents=True)
    for port in ("ens1f0", "ens1f1", "eth9"):
        (net / port).mkdir()
    for port in ("ens1f0", "ens1f1"):
        (net / port / "master").symlink_to(net / "bond0")
    (tmp_path / "proc/net/bonding").mkdir(parents=True)
    (tmp_path / "proc/net/bonding/bond0").write_text(BONDING)
    reader = HealthReader(Runner(""), {}, str(tmp_path))
    assert reader.bond_link_failures("ens1f0") == {"bond": "bond0", "bond_link_failures": 3}
    assert reader.bond_link_failures("ens1f1") == {"bond": "bond0", "bond_link_failures": 0}
    assert reader.bond_link_failures("eth9") == {}  # no master: nothing to read
