"""checks_health: two cxfab_nic_health snapshots -> checks; nothing unread passes."""

import pytest
from cxfab.verify.nic_health import health_checks, host_health_checks, link_gbps

NICS = [
    {
        "name": "cx4",
        "pci": "0000:17:00.0",
        "ports": [{"port": 1, "netdev": "ens4", "link_type": "eth", "speed_gbps": 100}],
    }
]
UP = {
    "state": "Active",
    "up": True,
    "speed": "100GbE",
    "width": "4x",
    "fec": "Standard RS-FEC - RS(528,514)",
    "opcode": 0,
    "cause": "state Active, no troubleshooting opcode",
    "effective_errors": 0,
    "effective_ber": 1.5e-254,
    "link_down_counter": None,
}
CABLE = {"vendor": "Mellanox", "part_number": "MCP1600-E002", "type": "Passive copper cable"}
COUNTERS = {"error": {"rx_crc_errors_phy": 0}, "discard": {"rx_discards_phy": 0}, "pause": {}}


def port(**changes):
    data = {
        "netdev": "ens4",
        "function": "0000:17:00.0",
        "carrier_changes": 2,
        "counters": COUNTERS,
        "link": dict(UP),
        "cable": dict(CABLE),
    }
    data.update(changes)
    return data


def snapshots(end_port=None, start_port=None, nic=None):
    nic_end = {
        "pci": "0000:17:00.0",
        "pcie": {
            "speed_gts": 8.0,
            "width": 16,
            "max_speed_gts": 8.0,
            "max_width": 16,
            "gbps": 126.016,
            "max_gbps": 126.016,
            "degraded": False,
        },
        "temperature": {"celsius": 51.0, "source": "hwmon temp1_input"},
        "config": {},
        "ports": {"1": end_port or port()},
    }
    nic_end.update(nic or {})
    start = {"health": {"phase": "start", "nics": {"cx4": {"ports": {"1": start_port or port()}}}}}
    return {"start": start, "end": {"health": {"phase": "end", "nics": {"cx4": nic_end}}}}


def by_id(checks):
    return {check["id"]: check for check in checks}


def run(health, supported=None):
    return by_id(host_health_checks("h1", {"nics": NICS}, health, supported))


def test_healthy_host_passes_everything_it_read():
    found = run(snapshots(), [{"vendor": "mellanox", "part_number": "MCP1600-*"}])
    assert {c["status"] for c in found.values()} == {"pass"}
    assert set(found) == {
        "pcie.cx4.link",
        "temp.cx4",
        "link.ens4.diag",
        "cable.ens4.supported",
        "flap.ens4",
        "counters.ens4",
    }


def test_no_supported_list_no_cable_check():
    assert "cable.ens4.supported" not in run(snapshots())


def test_slow_port_names_the_enabled_and_cable_speeds():
    slow = dict(UP, speed="25G", enabled_speeds="0xf8fc0000 (100G,50G,25G)", cable_speeds="25G")
    check = run(snapshots(port(link=slow)))["link.ens4.diag"]
    assert check["status"] == "fail"
    assert (
        "running at 25G below 100 Gb/s" in check["message"]
        and "cable supports 25G" in check["message"]
    )


def test_errors_fec_did_not_correct_fail_the_link():
    noisy = dict(UP, effective_errors=12, effective_ber=3e-12)
    check = run(snapshots(port(link=noisy)))["link.ens4.diag"]
    assert (
        check["status"] == "fail"
        and "12 effective physical errors (BER 3.0e-12)" in check["observed"]
    )


@pytest.mark.parametrize(
    ("link", "status", "observed"),
    [
        ({"error": "`mlxlink -d x -c` failed (rc=1): -E- boom"}, "fail", "unreadable"),
        (
            {"absent": "neither mlxlink (MFT) nor mstlink (mstflint) is installed"},
            "fail",
            "not measured",
        ),
    ],
)
def test_unread_link_never_passes(link, status, observed):
    check = run(snapshots(port(link=link)))["link.ens4.diag"]
    assert (check["status"], check["observed"]) == (status, observed)


def test_counters_that_grew_fail_and_pause_is_only_reported():
    grown = {
        "error": {"rx_crc_errors_phy": 3},
        "discard": {"rx_discards_phy": 0},
        "pause": {"rx_prio3_pause": 40},
    }
    before = dict(COUNTERS, pause={"rx_prio3_pause": 0})
    check = run(snapshots(port(counters=grown), port(counters=before)))["counters.ens4"]
    assert check["status"] == "fail"
    assert check["observed"] == "rx_crc_errors_phy +3; pause rx_prio3_pause +40"
    only_pause = dict(COUNTERS, pause={"rx_prio3_pause": 40})
    check = run(snapshots(port(counters=only_pause), port(counters=before)))["counters.ens4"]
    assert check["status"] == "pass" and "pause rx_prio3_pause +40" in check["observed"]


def test_counters_absent_skip_and_unreadable_fail():
    absent = port(counters=None, counters_absent="ens4: the driver has no statistics")
    assert run(snapshots(absent))["counters.ens4"]["status"] == "skip"
    broken = port(counters=None, counters_error="`ethtool -S ens4` failed (rc=96)")
    assert run(snapshots(broken))["counters.ens4"]["status"] == "fail"


def test_flap_from_the_link_down_counter_alone():
    before = port(link=dict(UP, link_down_counter=1))
    after = port(link=dict(UP, link_down_counter=2))
    check = run(snapshots(after, before))["flap.ens4"]
    assert check["status"] == "fail" and "mlxlink Link Down Counter 1 -> 2" in check["observed"]


def test_an_administrative_flap_seen_only_by_the_bond_is_named():
    # virtio keeps its carrier over `ip link set down/up`: only the bond counted it.
    before = port(bond="bond0", bond_link_failures=0)
    after = port(bond="bond0", bond_link_failures=1)
    check = run(snapshots(after, before))["flap.ens4"]
    assert check["status"] == "fail", check
    assert check["observed"] == "bond0 Link Failure Count 0 -> 1"


def test_without_start_snapshot_the_comparisons_fail_not_measured():
    health = snapshots()
    health["start"] = {"skipped": True}
    found = run(health)
    assert found["flap.ens4"]["status"] == found["counters.ens4"]["status"] == "fail"
    assert found["flap.ens4"]["observed"] == "not measured"


def test_failed_end_read_is_one_failed_check():
    found = run({"end": {"failed": True, "msg": "nics[0]: needs name and pci"}})
    assert list(found) == ["health.read"]
    assert found["health.read"]["status"] == "fail"
    assert found["health.read"]["message"] == "nics[0]: needs name and pci"


def test_pcie_not_a_pcie_device_skips_and_unreadable_fails():
    absent = {"absent": "the kernel shows no PCIe link for 0000:17:00.0 (not a PCIe device)"}
    assert run(snapshots(nic={"pcie": absent}))["pcie.cx4.link"]["status"] == "skip"
    broken = {"error": "link speed 'Unknown' is not a known PCIe rate"}
    assert run(snapshots(nic={"pcie": broken}))["pcie.cx4.link"]["status"] == "fail"


def test_hot_card_fails():
    hot = {"temperature": {"celsius": 101.0, "source": "mget_temp"}}
    check = run(snapshots(nic=hot))["temp.cx4"]
    assert check["status"] == "fail" and check["observed"] == "101 C (mget_temp)"


@pytest.mark.parametrize(
    ("entry", "status", "message"),
    [
        (
            {
                "desired": "ETH",
                "supported": True,
                "current": "IB(1)",
                "next_boot": "ETH(2)",
                "current_ok": False,
                "next_boot_ok": True,
            },
            "fail",
            "activation pending",
        ),
        (
            {
                "desired": "True",
                "supported": True,
                "current": "False(0)",
                "next_boot": "False(0)",
                "current_ok": False,
                "next_boot_ok": False,
            },
            "fail",
            "drifted",
        ),
        ({"desired": "8", "supported": False}, "fail", "does not support"),
    ],
)
def test_pinned_parameter_drift(entry, status, message):
    config = {"params": {"SRIOV_EN": entry}}
    check = run(snapshots(nic={"config": config}))["nvconfig.cx4.SRIOV_EN"]
    assert check["status"] == status and message in check["message"]


def test_hosts_without_nics_add_nothing():
    assert health_checks({"h0": {"nics": []}}, {}) == []


@pytest.mark.parametrize(
    ("speed", "width", "gbps"),
    [
        ("100GbE", "4x", 100),
        ("25G", "1x", 25),
        ("IB-EDR", "4x", 100),
        ("IB-FDR", "4x", 56),
        ("IB-EDR", "1x", 25),
        (None, None, None),
        ("weird", "4x", None),
    ],
)
def test_link_speed_words(speed, width, gbps):
    assert link_gbps(speed, width) == gbps


# ---------------------------------------------------------------- lossless RoCE
LOSSLESS_HOST = {"nics": NICS, "lossless": {"priority": 3, "ports": ["ens4"]}}


def run_lossless(health):
    return by_id(host_health_checks("h1", LOSSLESS_HOST, health))


LOAD = {"what": "ib_write_bw, pingpong of p on VLAN 20", "software": False}


def prio(packets_rx, packets_tx, pause_rx=120):
    return {
        **COUNTERS,
        "priority": {"rx_prio3_packets": packets_rx, "tx_prio3_packets": packets_tx},
        "pause": {"rx_prio3_pause": pause_rx, "tx_prio3_pause": 44},
    }


def pfc_check(before, after, load=LOAD):
    health = snapshots(port(counters=after), port(counters=before))
    return by_id(host_health_checks("h1", LOSSLESS_HOST, health, load=load))["pfc.ens4.counters"]


def test_roce_priority_traffic_grew_under_the_workloads_passes_with_the_growth():
    check = pfc_check(prio(1000, 900), prio(5000, 900, pause_rx=180))
    assert check["status"] == "pass" and check["category"] == "lossless"
    assert check["observed"] == (
        "rx_prio3_packets 5000 (+4000), tx_prio3_packets 900 (+0); "
        "pauses rx_prio3_pause 180 (+60), tx_prio3_pause 44 (+0)"
    )
    assert check["message"] == f"under {LOAD['what']}"
    # No lossless plan: no such check.
    assert "pfc.ens4.counters" not in run(snapshots())


def test_not_moved_under_load_fails_or_warns_on_soft_roce():
    still = pfc_check(prio(1000, 900), prio(1000, 900))
    assert still["status"] == "fail" and "did not reach priority 3" in still["message"]
    soft = pfc_check(prio(1000, 900), prio(1000, 900), {**LOAD, "software": True})
    assert soft["status"] == "warn" and "soft-RoCE" in soft["message"]
    pauses_only = {**COUNTERS, "pause": {"rx_prio3_pause": 1, "tx_prio3_pause": 1}}
    only = pfc_check(pauses_only, pauses_only)
    assert only["status"] == "warn" and "counts only pauses" in only["message"]


def test_never_a_pass_on_counters_not_compared_or_without_load():
    idle = pfc_check(prio(1000, 900), prio(5000, 900), load=None)
    assert idle["status"] == "skip" and "no RoCE workload ran" in idle["message"]
    assert idle["observed"].startswith("rx_prio3_packets 5000 (+4000)")
    no_start = pfc_check(COUNTERS, prio(5000, 900))
    assert no_start["status"] == "skip" and no_start["message"].startswith("not compared")


def test_pfc_counters_missing_skip_and_unreadable_fail():
    check = run_lossless(snapshots())["pfc.ens4.counters"]
    assert check["status"] == "skip" and "no per-priority counters" in check["message"]
    broken = port(counters=None, counters_error="`ethtool -S ens4` failed (rc=96)")
    check = run_lossless(snapshots(broken))["pfc.ens4.counters"]
    assert (check["status"], check["observed"]) == ("fail", "unreadable")


def test_roce_load_names_the_hosts_of_a_pair_that_measured_on_a_roce_vlan():
    from cxfab.verify.pfc import roce_load

    lossless = {"roce": {"vlans": [20]}}
    structured = {"h1": {"lossless": lossless}, "h2": {"lossless": lossless}}
    workloads = {"pairs": [{"name": "p", "client": "h1", "server": "h2", "vlan": 20}]}
    results = [
        {"pair": "p", "tool": "ib_write_bw", "transport": "rdma", "bits_per_second": 9e7},
        {"pair": "p", "tool": "qperf", "transport": "rdma", "bits_per_second": None},
        {"pair": "p", "tool": "iperf3", "transport": "tcp", "bits_per_second": 1e8},
    ]
    facts = {"h1": {"rdma": {"rxe0": {"software": True}}}, "h2": {"rdma": {}}}
    loaded = roce_load(structured, workloads, results, facts)
    assert loaded == {
        "h1": {"what": "ib_write_bw of p on VLAN 20", "software": True},
        "h2": {"what": "ib_write_bw of p on VLAN 20", "software": False},
    }
    # A pair off the RoCE VLANs, or runs without a figure, load nothing.
    off = {"pairs": [{**workloads["pairs"][0], "vlan": 30}]}
    assert roce_load(structured, off, results, facts) == {}
    assert roce_load(structured, workloads, results[1:], facts) == {}


def test_the_fabric_wide_temperature_limit_reaches_every_host():
    found = by_id(health_checks({"h1": {"nics": NICS}}, {"h1": snapshots()}, max_temp_c=50))
    assert found["temp.cx4"]["status"] == "fail"  # 51 C read, 50 C allowed
    assert found["temp.cx4"]["expected"] == "ASIC below 50 C"
    default = by_id(health_checks({"h1": {"nics": NICS}}, {"h1": snapshots()}))
    assert default["temp.cx4"]["status"] == "pass"
