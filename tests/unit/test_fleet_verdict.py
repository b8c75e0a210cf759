"""The fleet verdict: the slow node, the slow link and the slow fabric told apart, each
named with its evidence; nothing named in a healthy fleet; the simulation's rates."""

import random

import pytest
from cxfab.verify import fleet
from cxfab.workloads import fleet_plan

from tests.tools import fleet_sim

HOSTS = [f"h{i}" for i in range(8)]
LIMITS = dict.fromkeys(HOSTS, 100.0)


def ring_and_more(healthy=92.0, node=None, link=None, scale=1.0, latency=None):
    """Every pair of a ring of 8 plus the chords i~i+4: 12 pairs, 3 per host."""
    edges = [(HOSTS[i], HOSTS[(i + 1) % 8]) for i in range(8)]
    edges += [(HOSTS[i], HOSTS[i + 4]) for i in range(4)]
    results = []
    for k, (a, b) in enumerate(edges):
        gbps = healthy * scale * (1 + 0.01 * (k % 3 - 1))
        if node in (a, b):
            gbps *= 0.5
        if {a, b} == set(link or ()):
            gbps *= 0.5
        one = {"server": a, "client": b, "gbps": gbps}
        if latency:
            one["latency_us"] = latency.get((a, b), 3.0)
        results.append(one)
    return results


def by_id(checks):
    return {c["id"]: c for c in checks}


def test_a_healthy_fleet_names_nothing_and_passes_every_host():
    checks, table = fleet.fleet_checks(ring_and_more(), LIMITS, HOSTS)
    assert table["verdict"] == {"nodes": [], "links": [], "undetermined": []}
    assert {c["status"] for c in checks} == {"pass"}
    assert len(checks) == 1 + len(HOSTS)
    assert all(c["category"] == "performance" for c in checks)


def test_one_slow_node_is_named_with_every_pair_it_took_part_in():
    checks, table = fleet.fleet_checks(ring_and_more(node="h3"), LIMITS, HOSTS)
    assert table["verdict"]["nodes"] == ["h3"] and table["verdict"]["links"] == []
    named = by_id(checks)["perf.fleet.node.h3"]
    assert named["status"] == "fail" and "slow node h3" in named["message"]
    assert sorted(p["pair"] for p in named["evidence"]) == ["h2~h3", "h3~h4", "h3~h7"]
    assert by_id(checks)["perf.fleet.node.h2"]["status"] == "pass"
    assert by_id(checks)["perf.fleet.fabric"]["status"] == "pass"
    assert not [c for c in checks if c["id"].startswith("perf.fleet.pair.")]


def test_one_slow_link_is_named_and_both_its_hosts_pass():
    checks, table = fleet.fleet_checks(ring_and_more(link=("h5", "h1")), LIMITS, HOSTS)
    assert table["verdict"] == {"nodes": [], "links": ["h1~h5"], "undetermined": []}
    link = by_id(checks)["perf.fleet.pair.h1~h5"]
    assert link["status"] == "fail" and "slow link" in link["message"]
    assert link["evidence"][0]["gbps"] < 50
    assert by_id(checks)["perf.fleet.node.h1"]["status"] == "pass"
    assert by_id(checks)["perf.fleet.node.h5"]["status"] == "pass"


def test_a_slow_fabric_fails_its_check_and_still_names_a_slow_node():
    checks, table = fleet.fleet_checks(ring_and_more(scale=0.6), LIMITS, HOSTS)
    assert by_id(checks)["perf.fleet.fabric"]["status"] == "fail"
    assert table["verdict"]["nodes"] == [] and table["median_gbps"] < 70
    checks, table = fleet.fleet_checks(ring_and_more(scale=0.6, node="h0"), LIMITS, HOSTS)
    assert by_id(checks)["perf.fleet.fabric"]["status"] == "fail"
    assert table["verdict"]["nodes"] == ["h0"]


def test_a_pair_slow_in_latency_only_is_a_slow_link():
    slow = {("h2", "h6"): 9.0}
    checks, table = fleet.fleet_checks(ring_and_more(latency=slow), LIMITS, HOSTS)
    assert table["verdict"]["links"] == ["h2~h6"]
    assert "us > median" in by_id(checks)["perf.fleet.pair.h2~h6"]["message"]


def test_a_host_with_one_slow_pair_only_cannot_be_judged_node_or_link():
    results = [*ring_and_more(), {"server": "h0", "client": "lone", "gbps": 40.0}]
    checks, table = fleet.fleet_checks(results, {**LIMITS, "lone": 100.0}, [*HOSTS, "lone"])
    assert table["verdict"]["undetermined"] == ["lone"]
    assert by_id(checks)["perf.fleet.node.lone"]["status"] == "warn"
    assert "node or link?" in by_id(checks)["perf.fleet.pair.h0~lone"]["message"]


def test_a_planned_host_without_results_and_a_fleet_without_any_are_not_measured():
    checks, _ = fleet.fleet_checks(ring_and_more(), LIMITS, [*HOSTS, "ghost"])
    ghost = by_id(checks)["perf.fleet.node.ghost"]
    assert ghost["status"] == "fail" and ghost["observed"] == "not measured"
    checks, table = fleet.fleet_checks([], LIMITS, ["h0"])
    assert by_id(checks)["perf.fleet.fabric"]["status"] == "fail"
    assert by_id(checks)["perf.fleet.fabric"]["message"].startswith("not measured: ")
    assert table["pairs"] == [] and by_id(checks)["perf.fleet.node.h0"]["status"] == "fail"


def test_without_every_link_limit_the_fabric_is_skipped_and_pairs_judged_by_bandwidth():
    checks, table = fleet.fleet_checks(ring_and_more(node="h3"), {}, HOSTS)
    assert by_id(checks)["perf.fleet.fabric"]["status"] == "skip"
    assert table["median_share_of_limit"] is None and table["verdict"]["nodes"] == ["h3"]


def test_the_matrix_holds_every_pair_and_each_host_row():
    _, table = fleet.fleet_checks(ring_and_more(node="h3"), LIMITS, HOSTS)
    assert len(table["pairs"]) == 12 and table["median_gbps"] == pytest.approx(92.0, rel=0.02)
    assert table["hosts"]["h3"]["slow"] == 3 and len(table["hosts"]["h3"]["pairs"]) == 3
    assert table["hosts"]["h0"]["slow"] == 0
    assert table["hosts"]["h3"]["best_gbps"] < 0.8 * table["median_gbps"]


def test_a_planned_slow_node_among_a_generated_plan_is_found():
    rng = random.Random(7)
    members = fleet_sim.synthetic_members(57)
    plan = fleet_plan.plan_fleet(members, budget_s=20, test_s=10)  # the ring alone
    results = fleet_sim.measure(rng, plan, 0.05, node="h0041")
    _, table = fleet.fleet_checks(results, dict.fromkeys(members, 100.0), sorted(members))
    assert table["verdict"]["nodes"] == ["h0041"] and table["verdict"]["links"] == []


def test_simulation_names_the_planted_fault_in_198_of_200_and_nothing_in_clean_fleets():
    hits = fleet_sim.rates(fleets=200, seed=30, noise=0.05, rounds=4)
    assert hits["node"] >= 198, hits
    assert hits["link"] >= 198, hits
    assert hits["none"] == 200, hits
