"""Verify cannot shrink (issue 25): what intent expects and the run did not produce fails,
a skip is only "not applicable by intent", a warning fails the run, waivers are explicit."""

from __future__ import annotations

import copy

import pytest
from cxfab.host.net import measure
from cxfab.verify import bounds, checks, nic_health, perf, report

from tests.unit.checks_data import (
    WORKLOADS,
    host_data,
    host_intent,
    qos_rows,
    structured,
    workload_results,
)


def _fabric(sc=None):
    return {
        "hosts": {"h1": host_intent(1)},
        "structured": {"h1": sc or structured(host_intent(1))},
        "vlans": [],
        "workloads": WORKLOADS,
    }


def _by_key(found):
    return {(c["id"], c["target"]): c for c in found}


# ---------------------------------------------------------------- finding 2


def test_relative_with_transport_and_reference_both_failed_is_a_failure():
    rows = [
        {"pair": "p", "tool": "pingpong", "transport": "rdma", "size_bytes": 65536,
         "error": "Run the client: rdma_connect failed"},
        {"pair": "p", "tool": "ib_write_bw", "size_bytes": 65536, "error": "no device"},
        {"pair": "p", "tool": "iperf3", "bits_per_second": 4e9},
        {"pair": "p", "tool": "pingpong", "transport": "tcp", "size_bytes": 65536,
         "bits_per_second": 3e9, "checksum": "c"},
    ]  # fmt: skip
    found, _ = perf.perf_checks(WORKLOADS, {}, rows, {})
    check = _by_key(found)[("perf.rdma_vs_ib_write_bw.65536", "p")]
    assert check["status"] == "fail"
    assert "rdma_connect failed" in check["observed"]


# ---------------------------------------------------------------- finding 3


def test_qos_reading_above_the_band_fails_even_when_another_round_passed():
    targets = [{"vlan": 10, "limit_mbps": 10.0}, {"vlan": 30, "limit_mbps": None}]
    rounds = [{10: 10.0, 30: 50.0}, {10: 14.0, 30: 50.0}]
    (vlan10, _) = measure.verdicts(rounds, targets, 0.1)
    assert vlan10["verdict"] == "fail"
    assert vlan10["measured_mbps"] == 14.0
    assert "does not hold" in vlan10["reason"]


# ---------------------------------------------------------------- finding 4


def test_qos_host_whose_measurement_never_ran_fails_not_measured():
    sc = structured(host_intent(1))
    sc["qos_measure"] = {
        "peer": "h2",
        "targets": [{"vlan": 10, "address": "12.0.10.2", "port": 5301, "limit_mbps": 1000}],
    }
    judged = checks.all_checks(_fabric(sc), {}, {}, {"h1": {"skipped": True}}, [], ["qos"])
    check = _by_key(judged["checks"])[("qos.vlan10.throughput", "h1")]
    assert check["status"] == "fail"
    assert check["observed"] == "not measured"
    assert check["message"].startswith("not measured: ")


# ---------------------------------------------------------------- verify cannot shrink


def test_every_check_intent_expects_of_a_host_is_there_or_failed_not_measured():
    data = host_data()
    data["facts"] = {"failed": True, "msg": "cxfab_host_facts: timeout"}
    judged = checks.all_checks(_fabric(), {"h1": data}, {}, {}, [], ["hosts"])
    found = _by_key(judged["checks"])
    for check_id in ("link.ens1f0.up", "mtu.bond0", "bond.bond0.mode", "rdma.rxe0.state",
                     "irq.ens1f0"):  # fmt: skip
        assert found[(check_id, "h1")]["status"] == "fail", check_id
        assert "timeout" in found[(check_id, "h1")]["message"], check_id


def test_perf_pair_without_any_pingpong_result_fails_the_relative_check():
    rows = [r for r in workload_results() if r.get("tool") != "pingpong"]
    judged = checks.all_checks(_fabric(), {}, {}, {}, rows, ["perf"])
    check = _by_key(judged["checks"])[("perf.rdma_vs_ib_write_bw", "p")]
    assert check["status"] == "fail"
    assert check["observed"] == "not measured"


def test_a_switch_that_returned_no_health_fails_not_measured():
    judged = checks.all_checks(
        _fabric(),
        {},
        {"sw-a": {"checks": [{"id": "mlag.oper", "target": "sw-a", "status": "pass"}]}},
        {},
        [],
        ["switches"],
        switches=["sw-a", "sw-b"],
    )
    found = _by_key(judged["checks"])
    assert found[("switch.health", "sw-b")]["status"] == "fail"
    assert ("switch.health", "sw-a") not in found


# ---------------------------------------------------------------- finding 5: bounded skips


@pytest.mark.parametrize("maker", [nic_health.flap_check, nic_health.counters_check])
def test_missing_start_snapshot_is_a_failure(maker):
    check = maker("h1", None, {"netdev": "ens1f0", "carrier_changes": 2})
    assert check["status"] == "fail"
    assert "start snapshot" in check["message"]


@pytest.mark.parametrize(
    "message",
    [
        "neither mlxlink (MFT) nor mstlink (mstflint) is installed",
        "nic_health_link_path: '/opt/mft/bin/mlxlnk' is not an executable or in PATH",
    ],
)
def test_a_missing_or_mistyped_tool_is_a_failure(message):
    data = {"netdev": "ens1f0", "link": {"absent": message}}
    check = nic_health.link_check("h1", {"netdev": "ens1f0"}, data)
    assert check["status"] == "fail"
    assert message in check["message"]


def test_firmware_query_tool_with_a_mistyped_path_fails():
    data = host_data(
        nic_state={"failed": True, "msg": "flint_path: /usr/bin/flnt is not an executable file"}
    )
    judged = checks.all_checks(_fabric(), {"h1": data}, {}, {}, [], ["hosts"])
    check = _by_key(judged["checks"])[("firmware.cx4.version", "h1")]
    assert check["status"] == "fail"
    assert "is not an executable file" in check["message"]


def test_not_applicable_by_intent_stays_a_skip():
    judged = checks.all_checks(_fabric(), {"h1": host_data()}, {}, {}, [], ["hosts"])
    assert _by_key(judged["checks"])[("lossless.host", "h1")]["status"] == "skip"


# ---------------------------------------------------------------- waivers and the verdict


def test_waived_failures_and_warnings_are_counted_apart_and_do_not_fail_the_run():
    waive = [
        {"id": "qos.vlan*.throughput", "target": "h1", "reason": "TCG shaper is coarse"},
        {"id": "perf.*", "reason": "no workloads on this rack yet"},
    ]
    judged = checks.all_checks(
        _fabric(), {}, {}, {"h1": qos_rows(v10=2000.0)}, [], ["qos", "perf"], waive=waive
    )
    found = _by_key(judged["checks"])
    waived = found[("qos.vlan10.throughput", "h1")]
    assert waived["status"] == "waived"
    assert "TCG shaper is coarse" in waived["message"]
    assert found[("perf.results", "p")]["status"] == "waived"
    assert found[("qos.vlan20.throughput", "h1")]["status"] == "pass"
    summary = report.build_report(judged["checks"])["summary"]
    # qos.vlan10 and every perf check the pair was expected to produce (none ran)
    assert summary["waived"] == 5 and summary["failed"] == 0
    assert not report.run_fails(summary)


def test_a_waiver_for_another_target_does_not_apply():
    waive = [{"id": "qos.*", "target": "h2", "reason": "h2 only"}]
    judged = checks.all_checks(
        _fabric(), {}, {}, {"h1": qos_rows(v10=2000.0)}, [], ["qos"], waive=waive
    )
    assert _by_key(judged["checks"])[("qos.vlan10.throughput", "h1")]["status"] == "fail"


@pytest.mark.parametrize(
    ("waive", "words"),
    [
        ({"id": "qos.*"}, "verify_waive: must be a list"),
        ([{"id": "qos.*", "reason": ""}], "verify_waive[0]: reason"),
        ([{"reason": "x"}], "verify_waive[0]: id"),
        ([{"id": "qos.*", "reason": "x", "until": "2027"}], "verify_waive[0]: unknown key until"),
        (["qos.*"], "verify_waive[0]: must be a mapping"),
    ],
)
def test_verify_waive_of_the_wrong_shape_is_refused_clearly(waive, words):
    with pytest.raises(checks.WaiverError, match=r"^" + words.replace("[", r"\[")):
        checks.all_checks(_fabric(), {}, {}, {}, [], [], waive=waive)


def test_an_inconclusive_warning_fails_the_run():
    rows = qos_rows()
    rows["results"][0].update(verdict="inconclusive", reason="starved")
    judged = checks.all_checks(_fabric(), {}, {}, {"h1": rows}, [], ["qos"])
    summary = report.build_report(judged["checks"])["summary"]
    assert summary["warned"] == 1 and summary["failed"] == 0
    assert report.run_fails(summary)


def test_waive_is_not_mutated():
    waive = [{"id": "qos.*", "reason": "x"}]
    before = copy.deepcopy(waive)
    checks.all_checks(_fabric(), {}, {}, {"h1": qos_rows(v10=2000.0)}, [], ["qos"], waive=waive)
    assert waive == before


@pytest.mark.parametrize(
    ("reason", "status"),
    [
        ("ethtool is not installed", "fail"),
        ("mlxcables is not installed", "fail"),
        ("no hwmon sensor and no mget_temp", "fail"),
        ("not compared: the start snapshot has no such counters (was it taken?)", "fail"),
        ("lab-host2: host unreachable", "fail"),
        ("not configured: cxfab_roce.lossless is off or the host carries no RoCE VLAN", "skip"),
        ("irq_affinity.policy is off", "skip"),
    ],
)
def test_a_skip_is_only_not_applicable_by_intent(reason, status):
    from cxfab.verify import bounds

    skipped = {"id": "counters.ens1f0", "target": "h1", "category": "link/cable",
               "status": "skip", "expected": "e", "observed": "-", "message": reason}  # fmt: skip
    (bounded,) = bounds.bound_skips([skipped])
    assert bounded["status"] == status
    assert reason in bounded["message"]


def test_link_fraction_with_an_unreadable_ceiling_fails_and_soft_roce_skips():
    hw = {"rdma": {"devices": [{"name": "mlx5_0", "netdev": "ens1f0", "type": "mlx5"}]}}
    facts = {"rdma": {"mlx5_0": {"rate": "unknown"}}, "netdevs": {}}
    found, _ = perf.perf_checks(
        WORKLOADS, {"h1": hw, "h2": hw}, workload_results(), {"h1": facts, "h2": facts}
    )
    check = _by_key(found)[("perf.link_fraction", "p")]
    assert (check["status"], check["observed"]) == ("fail", "not measured")
    assert "rate is unreadable" in check["message"]
    soft = {"rdma": {"devices": [{"name": "rxe0", "netdev": "bond0", "type": "rxe"}]}}
    facts = {"rdma": {"rxe0": {"rate": "100 Gb/sec", "software": True}}, "netdevs": {}}
    found, _ = perf.perf_checks(
        WORKLOADS, {"h1": soft, "h2": soft}, workload_results(), {"h1": facts, "h2": facts}
    )
    assert _by_key(found)[("perf.link_fraction", "p")]["status"] == "skip"


def test_egress_maps_intent_expects_are_failed_when_the_facts_were_not_read():
    sc = structured(host_intent(1))
    names = [v["name"] for v in sc["network"]["vlans"] if v.get("egress_qos_map") is not None]
    assert names  # the intent maps socket priorities on its VLANs
    data = host_data()
    data["facts"] = {"unreachable": True, "msg": "ssh: connect timed out"}
    judged = checks.all_checks(_fabric(sc), {"h1": data}, {}, {}, [], ["hosts"])
    found = _by_key(judged["checks"])
    for name in names:
        check = found[(f"qos.egress.{name}", "h1")]
        assert (check["status"], check["observed"]) == ("fail", "not measured")
        assert "connect timed out" in check["message"]


def _cabled_sc():
    """The test host's structured config with its ports cabled and one planned probe."""
    sc = copy.deepcopy(structured(host_intent(1)))
    for index, port in enumerate(p for n in sc["nics"] for p in n["ports"]):
        port.update(peer=f"sw-{'ab'[index % 2]}", peer_port=f"1/{index + 1}")
    probe = {"vlan": 10, "interface": "bond0.10", "mtu": 9000, "size": 8972}
    sc["probes"] = [{**probe, "id": "mtu.path.vlan10.h2", "address": "12.0.10.12", "kind": "peer"}]
    return sc


def test_speed_neighbour_and_path_mtu_probes_intent_expects_fail_unmeasured_when_unread():
    sc = _cabled_sc()
    cabled = [p["netdev"] for n in sc["nics"] for p in n["ports"] if p.get("peer")]
    assert cabled
    data = host_data()
    data["facts"] = {"failed": True, "msg": "cxfab_host_facts: timeout"}
    judged = checks.all_checks(_fabric(sc), {"h1": data}, {}, {}, [], ["hosts"])
    found = _by_key(judged["checks"])
    wanted = [f"link.{dev}.neighbour" for dev in cabled] + [f"link.{dev}.speed" for dev in cabled]
    for check_id in [*wanted, "mtu.path.vlan10.h2"]:
        check = found[(check_id, "h1")]
        assert (check["status"], check["observed"]) == ("fail", "not measured"), check_id
        assert "timeout" in check["message"], check_id


def test_expected_checks_name_the_neighbour_and_speed_of_every_cabled_port():
    sc = _cabled_sc()
    cabled = [p["netdev"] for n in sc["nics"] for p in n["ports"] if p.get("peer")]
    expected = {i for i, _, _ in bounds.expected_checks({"h1": sc}, {"h1": {}}, {}, [],
                                                         ["hosts"], False)}  # fmt: skip
    assert len(cabled) == 2
    for dev in cabled:
        assert {f"link.{dev}.neighbour", f"link.{dev}.speed"} <= expected
    assert "mtu.path.vlan10.h2" in expected


def test_a_host_with_gpus_expects_its_gpudirect_checks():
    from cxfab.structured import hosts
    from onyx_helpers import example_fabric

    sc = hosts.build(example_fabric(), "apricot")
    expected = {i for i, _, _ in bounds.expected_checks({"apricot": sc}, {"apricot": {}}, {}, [],
                                                         ["hosts"], False)}  # fmt: skip
    wanted = {"gpudirect.peer_memory", "gpudirect.gpu0.topology", "gpudirect.gpu0.acs"}
    wanted |= {"sriov.enp23s0f0.vfs", "sriov.enp23s0f1.vfs"}  # the sriov profile's VFs
    assert wanted <= expected
