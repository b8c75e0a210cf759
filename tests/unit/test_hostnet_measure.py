"""QoS measurement verdicts: every VLAN at the same moment, the unlimited VLAN as the
reference that tells a wrong limit from a starved machine.

(The iperf3 figures come from cxfab.workloads.pair_runs.iperf3_bps: tests/unit/test_workloads.py.)
"""

from cxfab.host.net.measure import (
    classify_round,
    reference_offer_mbps,
    settled,
    verdicts,
)
from cxfab.verify import qos

# The lab's intent at 1/200: 5 and 25 Mb/s, VLAN 30 unlimited.
LAB = [
    {"vlan": 10, "limit_mbps": 5.0},
    {"vlan": 20, "limit_mbps": 25.0},
    {"vlan": 30, "limit_mbps": None},
]
# Seed 001: 1 and 5 Gb/s, VLAN 30 unlimited.
SEED = [
    {"vlan": 10, "limit_mbps": 1000},
    {"vlan": 20, "limit_mbps": 5000},
    {"vlan": 30, "limit_mbps": None},
]


def by_vlan(results):
    return {r["vlan"]: r for r in results}


def test_seed_001_figures_pass_in_one_round():
    # Seed 001 measured 1.04 Gb/s (limit 1), 5.02 (limit 5), 37.8 (unlimited).
    rounds = [{10: 1040, 20: 5020, 30: 37800}]
    assert settled(rounds, SEED, 0.1)
    results = by_vlan(verdicts(rounds, SEED, 0.1))
    assert [results[v]["verdict"] for v in (10, 20, 30)] == ["pass"] * 3
    assert results[10]["ratio"] == 1.04


def test_the_reference_is_offered_just_above_every_limit():
    assert reference_offer_mbps(LAB, 0.1) == 30.0
    assert reference_offer_mbps([{"vlan": 30, "limit_mbps": None}], 0.1) is None


def test_issue_15_starved_machine_is_inconclusive_never_failed():
    # VLAN 20 read 22 of 25 Mb/s (0.88) while the unlimited VLAN carried only 21 at the
    # same moment: the path could not offer 25, the shaper is not shown wrong.
    rounds = [{10: 4.9, 20: 22.0, 30: 21.0}] * 3
    assert classify_round(rounds[0], LAB, 0.1)[20][0] == "starved"
    results = by_vlan(verdicts(rounds, LAB, 0.1))
    assert results[20]["verdict"] == "inconclusive" and not results[20]["passed"]
    assert "carried only 21 Mb/s at the same moment" in results[20]["reason"]
    assert results[30]["verdict"] == "inconclusive"


def test_a_low_vlan_with_room_on_the_path_fails_the_limit_is_wrong():
    # A shaper set at 20 instead of 25: the reference proves the path carried 29.8.
    rounds = [{10: 5.0, 20: 20.1, 30: 29.8}] * 3
    results = by_vlan(verdicts(rounds, LAB, 0.1))
    assert results[20]["verdict"] == "fail"
    assert "the path had room, the limit is wrong" in results[20]["reason"]
    assert results[10]["verdict"] == "pass" and results[30]["verdict"] == "pass"


def test_a_vlan_above_its_band_fails_at_once_and_is_not_measured_again():
    # VLAN 10's egress map removed: its traffic leaves in the unlimited class.
    rounds = [{10: 29.0, 20: 25.1, 30: 29.9}]
    assert settled(rounds, LAB, 0.1)
    results = by_vlan(verdicts(rounds, LAB, 0.1))
    assert results[10]["verdict"] == "fail" and "the limit does not hold" in results[10]["reason"]


def test_a_starved_round_is_measured_again_and_a_later_pass_counts():
    rounds = [{10: 4.9, 20: 19.0, 30: 18.0}]
    assert not settled(rounds, LAB, 0.1)
    rounds.append({10: 5.0, 20: 24.7, 30: 29.6})
    assert settled(rounds, LAB, 0.1)
    results = by_vlan(verdicts(rounds, LAB, 0.1))
    assert results[20]["verdict"] == "pass" and results[20]["measured_mbps"] == 24.7
    assert results[20]["readings_mbps"] == [19.0, 24.7]
    assert results[20]["reference_mbps"] == [18.0, 29.6]


def test_an_unlimited_vlan_held_below_a_shaped_one_fails():
    # VLAN 30 put in VLAN 10's class by a wrong egress map: VLAN 20 got its full 25.
    rounds = [{10: 2.6, 20: 24.9, 30: 2.5}] * 3
    results = by_vlan(verdicts(rounds, LAB, 0.1))
    assert results[30]["verdict"] == "fail"
    assert "VLAN 20, shaped to 25 Mb/s, carried 24.9" in results[30]["reason"]


def test_without_an_unlimited_vlan_a_low_reading_fails_closed():
    targets = [{"vlan": 10, "limit_mbps": 5.0}]
    results = verdicts([{10: 3.0}] * 3, targets, 0.1)
    assert results[0]["verdict"] == "fail"
    assert "no unlimited VLAN was measured with it" in results[0]["reason"]


def test_verify_reports_an_inconclusive_vlan_as_a_warning_with_its_readings():
    rounds = [{10: 4.9, 20: 22.0, 30: 21.0}, {10: 5.0, 20: 21.5, 30: 20.0}]
    measured = {"results": verdicts(rounds, LAB, 0.1)}
    found, _series = qos.qos_checks({"lab-host1": measured}, 0.1)
    check = {c["id"]: c for c in found}["qos.vlan20.throughput"]
    assert check["status"] == "warn"
    assert check["observed"] == "22 Mb/s (ratio 0.880); readings 22, 21.5 Mb/s"
    assert check["message"].startswith("inconclusive: 22 Mb/s (ratio 0.880) while the unlimited")


def test_verify_fails_a_wrong_limit_with_the_measurement_s_evidence():
    measured = {"results": verdicts([{10: 5.0, 20: 20.1, 30: 29.8}] * 3, LAB, 0.1)}
    found, _series = qos.qos_checks({"lab-host1": measured}, 0.1)
    check = {c["id"]: c for c in found}["qos.vlan20.throughput"]
    assert check["status"] == "fail" and "the path had room" in check["message"]
