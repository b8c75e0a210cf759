"""The fleet's pairwise plan: rounds without a host twice, the ring first, racks then
across, sized by the budget, hand-written pairs kept, 2,000 hosts in well under 2 s."""

import time
from collections import Counter
from itertools import chain

import pytest
from cxfab.intent.rules.workloads import ring_round_count
from cxfab.workloads import fleet_plan


def members(racks: int, per_rack: int, short_last: int = 0) -> dict:
    out = {}
    for r in range(racks):
        size = per_rack - short_last if r == racks - 1 else per_rack
        for h in range(size):
            out[f"r{r:03d}h{h:02d}"] = {"rack": f"pair{r:03d}", "vlans": [100 + r], "cpus": "0-3"}
    return out


def planned_tests(plan):
    return list(chain.from_iterable(plan["rounds"]))


@pytest.mark.parametrize("count", range(2, 14))
def test_circle_method_is_a_round_robin(count):
    seen = Counter()
    for k in range(fleet_plan.circle_round_count(count)):
        ends = [h for pair in fleet_plan.circle_round(count, k) for h in pair]
        assert len(ends) == len(set(ends)), f"a host twice in round {k}"
        assert len(ends) >= count - 1, "at most one bye a round"
        seen.update(frozenset(p) for p in fleet_plan.circle_round(count, k))
    assert len(seen) == count * (count - 1) // 2 and set(seen.values()) == {1}


@pytest.mark.parametrize("count", [2, 3, 4, 5, 8, 9])
def test_ring_rounds_are_a_cycle_without_a_host_twice(count):
    rounds = fleet_plan.ring_rounds(count)
    for pairs in rounds:
        ends = [h for p in pairs for h in p]
        assert len(ends) == len(set(ends))
    degree = Counter(h for p in chain.from_iterable(rounds) for h in p)
    assert set(degree.values()) == {2}
    assert len(rounds) == (2 if count % 2 == 0 else 3)
    clients = Counter(b for b in (p[1] for p in chain.from_iterable(rounds)))
    assert set(clients.values()) == {1} and len(clients) == count, "each host a client once"


@pytest.mark.parametrize("shape", [(3, 6, 0), (4, 5, 2), (1, 7, 0), (5, 1, 0)])
def test_every_host_twice_with_different_partners_and_never_in_two_tests_at_once(shape):
    fleet = members(*shape)
    plan = fleet_plan.plan_fleet(fleet, budget_s=0, test_s=10)  # the ring alone
    for pairs in plan["rounds"]:
        ends = [h for t in pairs for h in (t["server"], t["client"])]
        assert len(ends) == len(set(ends))
    partners = {h: set() for h in fleet}
    for t in planned_tests(plan):
        partners[t["server"]].add(t["client"])
        partners[t["client"]].add(t["server"])
    assert all(len(p) >= 2 for p in partners.values())
    assert plan["phases"] == {"ring": len(plan["rounds"])}
    assert plan["seconds"] == 10 * len(plan["rounds"])


def test_the_budget_adds_rack_rounds_before_rounds_across_racks():
    fleet = members(4, 6)
    plan = fleet_plan.plan_fleet(fleet, budget_s=100, test_s=10)
    assert len(plan["rounds"]) == 10
    phases = [r[0]["phase"] for r in plan["rounds"]]
    assert phases == ["ring"] * 2 + ["rack"] * 5 + ["across"] * 3
    for t in planned_tests(plan):
        same_rack = fleet[t["server"]]["rack"] == fleet[t["client"]]["rack"]
        assert same_rack == (t["phase"] == "rack") or t["phase"] == "ring"
        assert t["routed"] == (not same_rack) and t["vlan"] == fleet[t["server"]]["vlans"][0]
    keys = [frozenset((t["server"], t["client"])) for t in planned_tests(plan)]
    assert len(keys) == len(set(keys)), "a pair planned twice"
    assert plan["cpus"]["r000h00"] == "0-3"


def test_a_large_budget_tests_every_pair_once():
    fleet = members(3, 4, short_last=1)
    plan = fleet_plan.plan_fleet(fleet, budget_s=10_000, test_s=10)
    keys = {frozenset((t["server"], t["client"])) for t in planned_tests(plan)}
    assert len(keys) == plan["tests"] == len(fleet) * (len(fleet) - 1) // 2


def test_hand_written_pairs_win_and_are_packed_in_rounds():
    fleet = members(2, 4)
    given = [
        {"name": "p1", "server": "r000h00", "client": "r001h00", "vlan": 100},
        {"name": "p2", "server": "r000h01", "client": "r001h01", "vlan": 101},
        {"name": "p3", "server": "r000h00", "client": "r001h01", "vlan": 100},
    ]
    plan = fleet_plan.plan_fleet(fleet, budget_s=10_000, test_s=10, given=given)
    assert plan["source"] == "given"
    assert [[t["name"] for t in r] for r in plan["rounds"]] == [["p1", "p2"], ["p3"]]
    assert [t["vlan"] for t in planned_tests(plan)] == [100, 101, 100]


def test_members_come_from_the_fabric_switch_pairs():
    fabric = {
        "hosts": {
            "a": {"bond": {"switch_pair": "rack1"}, "vlans": [{"id": 20}, {"id": 10}]},
            "b": {"bond": {"switch_pair": "rack1"}, "vlans": [{"id": 10}]},
            "c": {"vlans": []},
        }
    }
    found = fleet_plan.fleet_members(fabric, cpus={"a": "0-7"})
    assert found["a"] == {"rack": "rack1", "vlans": [10, 20], "cpus": "0-7"}
    assert found["c"]["rack"] != found["a"]["rack"] and found["b"]["cpus"] == ""


def test_a_test_length_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        fleet_plan.rounds_in_budget(60, 0)


def test_two_thousand_hosts_in_a_hundred_racks_planned_in_under_two_seconds():
    fleet = members(100, 20)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        plan = fleet_plan.plan_fleet(fleet, budget_s=600, test_s=10)
        best = min(best, time.perf_counter() - start)
    assert len(plan["rounds"]) == 60 and plan["phases"]["rack"] == 19
    assert plan["tests"] > 50_000
    assert best < 2.0, f"best of 3: {best:.2f} s"


def test_a_fabric_with_hand_written_pairs_keeps_them_and_one_without_is_generated():
    hosts = {
        name: {"bond": {"switch_pair": "rack1"}, "vlans": [{"id": 10}]}
        for name in ("a", "b", "c", "d")
    }
    given = [{"name": "ab", "server": "a", "client": "b", "vlan": 10}]
    plan = fleet_plan.plan_for_fabric({"hosts": hosts, "workloads": {"pairs": given}}, 60, 10)
    assert [t["name"] for t in planned_tests(plan)] == ["ab"]
    plan = fleet_plan.plan_for_fabric({"hosts": hosts, "workloads": {"pairs": []}}, 60, 10)
    assert plan["source"] == "generated" and plan["tests"] == 6  # 4 hosts: every pair


def test_plan_generated_plans_every_host_beside_hand_written_pairs_with_the_fleet_settings():
    hosts = {f"h{i}": {"bond": {"switch_pair": "rack1"}, "vlans": [{"id": 10}]} for i in range(5)}
    workloads = {
        "pairs": [{"name": "ab", "server": "h0", "client": "h1", "vlan": 10}],
        "plan": "generated",
        "fleet": {"budget_s": 30, "test_s": 10},
    }
    plan = fleet_plan.plan_for_fabric({"hosts": hosts, "workloads": workloads})
    assert plan["source"] == "generated" and (plan["budget_s"], plan["test_s"]) == (30, 10)
    assert len(plan["rounds"]) == 3 and plan["phases"] == {"ring": 3}  # 5 hosts: the ring
    assert {h for t in planned_tests(plan) for h in (t["server"], t["client"])} == set(hosts)


@pytest.mark.parametrize("count", range(0, 12))
def test_the_budget_rule_counts_the_rounds_of_the_ring_as_the_planner_plans_them(count):
    assert ring_round_count(count) == len(fleet_plan.ring_rounds(count))


def test_workloads_fleet_vlan_is_every_tests_vlan_else_the_lowest_shared():
    fleet = {f"h{i}": {"rack": "pair0", "vlans": [10, 30], "cpus": ""} for i in range(4)}
    chosen = fleet_plan.plan_fleet(fleet, budget_s=600, test_s=60, vlan=30)
    assert {(t["vlan"], t["routed"]) for t in planned_tests(chosen)} == {(30, False)}
    lowest = fleet_plan.plan_fleet(fleet, budget_s=600, test_s=60)
    assert {(t["vlan"], t["routed"]) for t in planned_tests(lowest)} == {(10, False)}
    fabric = {"hosts": {h: {"vlans": [{"id": 10}, {"id": 30}]} for h in fleet}}
    fabric["workloads"] = {"plan": "generated", "fleet": {"vlan": 30}}
    assert {t["vlan"] for t in planned_tests(fleet_plan.plan_for_fabric(fabric))} == {30}
