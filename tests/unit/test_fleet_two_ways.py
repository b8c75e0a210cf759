"""A fleet of two hosts (the lab's): the ring tests their pair both ways and the verdict
judges each way, so one host's slow transmit is named as that direction with the other
as its evidence; a healthy pair passes; a lost way is "not measured" under its key."""

import json

import jsonschema
from cxfab.verify import fleet
from cxfab.verify.report import build_report, write_report
from cxfab.workloads import fleet_plan, fleet_runs

from tests.unit.test_fleet_checks import FACTS, INTENT, by_id
from tests.unit.test_report_outputs import SCHEMA

HOSTS = ["h0", "h1"]
WORKLOADS = {"plan": "generated", "fleet": {"budget_s": 120, "test_s": 60}, "pairs": []}


def the_plan():
    members = {h: {"rack": "rack1", "vlans": [10], "cpus": ""} for h in HOSTS}
    return fleet_plan.plan_fleet(members, budget_s=120, test_s=60)


def run(plan, figures):
    """What the two hosts hand verify: `figures`, client -> Gb/s (None: an error)."""
    results = {}
    for test in (t for tests in plan["rounds"] for t in tests):
        result = {k: test[k] for k in ("name", "server", "client")}
        gbps = figures[test["client"]]
        if gbps is None:
            result["error"] = "ib_write_bw: Completion with error at client"
        else:
            result.update(gbps=gbps, transport_gbps=gbps * 0.9, round=0)
        results.setdefault(test["client"], []).append(result)
    hosts = {
        h: {"vlans": [{"id": 10, "address": f"10.0.0.{i + 1}/24"}]} for i, h in enumerate(HOSTS)
    }
    published = fleet_runs.publish(plan, {"hosts": hosts, "workloads": {}})
    return {"plan": published["plan"], "results": results, "seconds": {"h0": 100.0}}


def test_the_ring_of_two_is_their_pair_both_ways_in_two_rounds():
    plan = the_plan()
    ways = [[(t["client"], t["server"]) for t in tests] for tests in plan["rounds"]]
    assert ways == [[("h1", "h0")], [("h0", "h1")]]
    assert plan["phases"] == {"ring": 2} and plan["seconds"] == 120


def test_one_slow_way_is_named_as_that_direction_with_the_other_as_evidence(tmp_path):
    found, table = fleet.plan_checks(
        WORKLOADS, INTENT, FACTS, run(the_plan(), {"h0": 9.0, "h1": 90.0})
    )
    assert table["verdict"] == {"nodes": [], "links": ["h0->h1"], "undetermined": []}
    named = by_id(found)[("perf.fleet.pair.h0->h1", "h0->h1")]
    assert named["status"] == "fail" and named["observed"] == "9 Gb/s"
    assert named["message"].startswith("slow link h0->h1: 9 Gb/s = 9% of 100 Gb/s")
    assert named["message"].endswith("both hosts are fine in their other tests: h1->h0 90 Gb/s")
    assert [p["pair"] for p in named["evidence"]] == ["h0->h1", "h1->h0"]
    assert {(p["pair"], p["client"], p["slow"]) for p in table["pairs"]} == {
        ("h0->h1", "h0", True),
        ("h1->h0", "h1", False),
    }
    for host in HOSTS:  # each host's other way is fine: neither is a slow node
        assert by_id(found)[(f"perf.fleet.node.{host}", host)]["status"] == "pass"
    out = write_report(build_report(found, fleet=table), tmp_path, stamp="s")
    jsonschema.validate(
        json.loads((out / "report.json").read_text()), json.loads(SCHEMA.read_text())
    )
    assert "Slow links: h0->h1." in (out / "report.md").read_text()
    assert (out / "fleet.png").read_bytes()[:4] == b"\x89PNG"


def test_a_healthy_pair_passes_both_ways():
    found, table = fleet.plan_checks(
        WORKLOADS, INTENT, FACTS, run(the_plan(), {"h0": 88.0, "h1": 91.0})
    )
    assert {c["status"] for c in found} == {"pass"}, [c for c in found if c["status"] != "pass"]
    assert sorted(p["pair"] for p in table["pairs"]) == ["h0->h1", "h1->h0"]


def test_a_lost_way_is_not_measured_under_its_own_key():
    found, table = fleet.plan_checks(
        WORKLOADS, INTENT, FACTS, run(the_plan(), {"h0": None, "h1": 90.0})
    )
    lost = by_id(found)[("perf.fleet.pair.h0->h1", "h0->h1")]
    assert lost["status"] == "fail" and "Completion with error" in lost["message"]
    assert table["not_measured"] == [
        {"pair": "h0->h1", "hosts": ["h0", "h1"], "why": lost["message"].split(": ", 1)[1]}
    ]
    assert [p["pair"] for p in table["pairs"]] == ["h1->h0"]
