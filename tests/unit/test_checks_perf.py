"""Verification checks of the measurements: QoS rates and the workloads against their
references and the link's limit (module_utils/cxfab/verify/perf.py, qos.py)."""

from __future__ import annotations

import copy

import pytest
from cxfab.host.mlnx.pcie import usable_gbps
from cxfab.verify import checks, perf, qos

from tests.unit.checks_data import (
    WORKLOADS,
    by_id,
    healthy_facts,
    host_data,
    host_intent,
    qos_rows,
    structured,
    workload_results,
)

# ---------------------------------------------------------------- QoS measurement


def test_qos_within_tolerance_passes_and_series_is_reported():
    found, series = qos.qos_checks({"h1": qos_rows()}, 0.1)
    assert {c["status"] for c in found} == {"pass"}
    assert series[0] == {"target": "h1", "vlan": 10, "limit_mbps": 1000, "measured_mbps": 1000.0}


def test_qos_limit_missed_fails_with_ratio():
    found, _ = qos.qos_checks({"h1": qos_rows(v10=1250.0)}, 0.1)
    check = by_id(found)["qos.vlan10.throughput"]
    assert check["status"] == "fail"
    assert check["observed"] == "1250 Mb/s (ratio 1.250)"


def test_qos_unlimited_vlan_must_exceed_every_limit():
    found, _ = qos.qos_checks({"h1": qos_rows(v30=5200.0)}, 0.1)
    check = by_id(found)["qos.vlan30.throughput"]
    assert check["status"] == "fail"
    assert check["expected"] == "> 5500 Mb/s (above every limit)"


def test_qos_scaled_limit_is_explained_and_failure_reported():
    rows = {
        "results": [
            {"vlan": 10, "limit_mbps": 10.0, "configured_limit_mbps": 1000, "measured_mbps": 9.6}
        ]
    }
    found, _ = qos.qos_checks({"h1": rows}, 0.1)
    assert found[0]["status"] == "pass"
    assert "configured 1000 Mb/s" in found[0]["expected"]
    failed, _ = qos.qos_checks({"h1": {"failed": True, "msg": "iperf3: refused"}}, 0.1)
    assert (failed[0]["id"], failed[0]["status"]) == ("qos.measure", "fail")


# ---------------------------------------------------------------- performance


def hardware_facts(rate="100 Gb/sec (4X EDR)", pcie=63.008):
    facts = healthy_facts()
    facts["rdma"] = {
        "mlx5_0": {"state": "4: ACTIVE", "rate": rate, "netdev": "ens1f0", "software": False}
    }
    for info in facts["netdevs"].values():
        info["pcie_gbps"] = pcie
    return facts


def hardware_hosts():
    hosts = {name: host_intent(i, rdma={"devices": []}) for i, name in ((1, "h1"), (2, "h2"))}
    return hosts


def test_perf_all_pass_and_series_for_the_plot():
    facts = {"h1": hardware_facts(), "h2": hardware_facts()}
    found, series = perf.perf_checks(
        WORKLOADS, hardware_hosts(), workload_results(reference=58e9), facts
    )
    assert {c["id"]: c["status"] for c in found} == {
        "perf.rdma_vs_ib_write_bw.65536": "pass",
        "perf.tcp_vs_iperf3": "pass",
        "perf.link_fraction": "pass",
        "perf.checksum.65536": "pass",
        "perf.rcat.sha256": "pass",
    }
    assert {p["transport"] for p in series} == {"tcp", "rdma", "shm", "ib_write_bw (reference)"}


def test_perf_link_fraction_uses_the_pcie_ceiling():
    # Seed 000: 63.008 Gb/s of PCIe (8 GT/s x8) below a 100 Gb/s port: 90 % = 56.7 Gb/s.
    facts = {"h1": hardware_facts(), "h2": hardware_facts()}
    found, _ = perf.perf_checks(WORKLOADS, hardware_hosts(), workload_results(), facts)
    check = by_id(found)["perf.link_fraction"]
    assert check["status"] == "fail"
    assert "56.707 Gb/s" in check["expected"]
    assert check["observed"].startswith("50.000 Gb/s, ratio 0.794")


def test_perf_link_fraction_skips_on_soft_roce_and_without_facts():
    facts = {"h1": healthy_facts(), "h2": healthy_facts()}
    hosts = {"h1": host_intent(1), "h2": host_intent(2)}
    check = by_id(perf.perf_checks(WORKLOADS, hosts, workload_results(), facts)[0])[
        "perf.link_fraction"
    ]
    assert check["status"] == "skip"
    assert "soft-RoCE" in check["message"]
    check = by_id(perf.perf_checks(WORKLOADS, hosts, workload_results(), {})[0])[
        "perf.link_fraction"
    ]
    assert "not gathered" in check["message"]


def test_perf_relative_thresholds_fail_with_ratio():
    found, _ = perf.perf_checks(
        WORKLOADS, hardware_hosts(), workload_results(rdma=10e9, tcp=5e9), {}
    )
    rdma = by_id(found)["perf.rdma_vs_ib_write_bw.65536"]
    assert rdma["status"] == "fail"
    assert rdma["observed"] == "ratio 0.200 (10.000 Gb/s vs 50.000 Gb/s)"
    assert by_id(found)["perf.tcp_vs_iperf3"]["observed"].startswith("ratio 0.125")


def test_perf_threshold_absent_is_a_skip_with_the_key():
    workloads = copy.deepcopy(WORKLOADS)
    del workloads["thresholds"]["tcp_vs_iperf3"]
    check = by_id(perf.perf_checks(workloads, hardware_hosts(), workload_results(), {})[0])[
        "perf.tcp_vs_iperf3"
    ]
    assert check["status"] == "skip"
    assert "workloads.thresholds.tcp_vs_iperf3" in check["message"]


def test_perf_checksum_mismatch_and_rcat_corruption_fail():
    rows = workload_results(sums=("c1", "c2", "c1"))
    rows[-1]["received_sha256"] = "cd"
    found = by_id(perf.perf_checks(WORKLOADS, hardware_hosts(), rows, {})[0])
    assert found["perf.checksum.65536"]["status"] == "fail"
    assert found["perf.checksum.65536"]["observed"] == "rdma c2, shm c1, tcp c1"
    assert found["perf.rcat.sha256"]["observed"] == "received cd"


def test_perf_no_result_fails_with_the_run_error():
    found, _ = perf.perf_checks(WORKLOADS, hardware_hosts(), [], {}, "ib_write_bw: timeout")
    assert [(c["id"], c["status"], c["message"]) for c in found] == [
        ("perf.results", "fail", "ib_write_bw: timeout")
    ]


def test_perf_missing_reference_fails():
    rows = [r for r in workload_results() if r["tool"] != "iperf3"]
    check = by_id(perf.perf_checks(WORKLOADS, hardware_hosts(), rows, {})[0])["perf.tcp_vs_iperf3"]
    assert (check["status"], check["observed"]) == ("fail", "iperf3: no result")


def test_perf_reference_that_averaged_zero_says_so():
    rows = workload_results()
    for row in rows:
        if row["tool"] == "iperf3":
            row["bits_per_second"] = 0.0
    check = by_id(perf.perf_checks(WORKLOADS, hardware_hosts(), rows, {})[0])["perf.tcp_vs_iperf3"]
    assert (check["status"], check["observed"]) == ("fail", "iperf3: averaged 0 b/s")


def test_perf_failed_run_shows_its_recorded_reason():
    rows = [r for r in workload_results() if r["tool"] != "iperf3"]
    reason = "Run the client: iperf3: unable to connect to server: Connection refused"
    rows.append({"pair": "p", "tool": "iperf3", "transport": "tcp", "error": reason})
    check = by_id(perf.perf_checks(WORKLOADS, hardware_hosts(), rows, {})[0])["perf.tcp_vs_iperf3"]
    assert (check["status"], check["observed"]) == ("fail", f"iperf3: {reason}")


# ---------------------------------------------------------------- helpers and all_checks


@pytest.mark.parametrize(
    ("speed", "width", "gbps"),
    [
        ("8.0 GT/s PCIe", "8", 63.008),
        ("16.0 GT/s PCIe", "16", 252.048),
        ("2.5 GT/s PCIe", "1", 2.0),
        ("Unknown", "8", None),
        ("8.0 GT/s", "", None),
    ],
)
def test_pcie_gbps(speed, width, gbps):
    assert usable_gbps(speed, width) == gbps


@pytest.mark.parametrize(
    ("text", "gbps"),
    [("100 Gb/sec (4X EDR)", 100.0), ("2.5 Gb/sec (1X SDR)", 2.5), ("", None), ("fast", None)],
)
def test_rdma_rate(text, gbps):
    assert perf.rdma_rate_gbps(text) == gbps


def test_all_checks_only_sections_that_ran():
    fabric = {
        "hosts": {"h1": host_intent(1)},
        "structured": {"h1": structured(host_intent(1))},
        "vlans": [],
        "workloads": WORKLOADS,
    }
    only_hosts = checks.all_checks(fabric, {"h1": host_data()}, {}, {}, [], ["hosts"])
    assert only_hosts["checks"]
    assert all(not c["id"].startswith(("perf.", "qos.vlan")) for c in only_hosts["checks"])
    everything = checks.all_checks(
        fabric,
        {"h1": host_data()},
        {},
        {"h1": qos_rows()},
        workload_results(),
        ["hosts", "qos", "perf", "switches"],
    )
    ids = {c["id"] for c in everything["checks"]}
    assert {"perf.tcp_vs_iperf3", "qos.vlan10.throughput", "irq.ens1f0"} <= ids
    assert everything["bandwidth"] and everything["qos"]
