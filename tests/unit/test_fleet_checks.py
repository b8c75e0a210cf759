"""The generated plan judged in verify: its results -> perf.fleet.* checks and the matrix
for report.json; a planted slow node named with every pair it took part in, a healthy
fleet passing, a test without a figure "not measured", the rounds against the budget."""

import json
import random
import re

import jsonschema
import pytest
from cxfab.verify import checks as verify_checks
from cxfab.verify import fleet
from cxfab.verify.bounds import expected_checks
from cxfab.verify.report import SCHEMA_VERSION, build_report, write_report
from cxfab.workloads import fleet_plan, fleet_runs

from tests.unit.test_report_outputs import SCHEMA

HOSTS = [f"h{i}" for i in range(8)]
WORKLOADS = {"plan": "generated", "fleet": {"budget_s": 600, "test_s": 60}, "pairs": []}


def hardware(name):
    """A host with one 100 Gb/s port on a x16 slot: its link limit is 100 Gb/s."""
    nic = {"name": "nic0", "ports": [{"port": 1, "netdev": "ens1f0"}]}
    intent = {"nics": [nic], "rdma": {"devices": [{"name": "mlx5_0", "type": "mlx5"}]}}
    facts = {
        "rdma": {"mlx5_0": {"rate": "100 Gb/sec (4X EDR)"}},
        "netdevs": {"ens1f0": {"pcie_gbps": 252.0}},
    }
    return intent, facts


INTENT = {h: hardware(h)[0] for h in HOSTS}
FACTS = {h: hardware(h)[1] for h in HOSTS}


def the_plan():
    members = {h: {"rack": "rack1", "vlans": [10], "cpus": ""} for h in HOSTS}
    return fleet_plan.plan_fleet(members, budget_s=600, test_s=60)  # every pair once: 9 rounds


def run(plan, slow_node=None, lost=(), seconds=400.0, seed=3):
    """What the hosts would hand verify: each test's figure, 90 Gb/s +-3%, half through
    the slow node; a lost test has no figure (its error) or no result at all ("gone")."""
    rng, results = random.Random(seed), {}
    for tests in plan["rounds"]:
        for test in tests:
            result = {**{k: test[k] for k in ("name", "server", "client")}, "round": 0}
            gbps = 90.0 * rng.uniform(0.97, 1.03)
            if slow_node in (test["server"], test["client"]):
                gbps *= 0.5
            if test["name"] in lost:
                if lost[test["name"]] == "gone":
                    continue
                result["error"] = lost[test["name"]]
            else:
                result.update(gbps=gbps, transport_gbps=gbps * 0.9)
            results.setdefault(test["client"], []).append(result)
    hosts = {h: {"vlans": [{"id": 10, "address": f"10.0.0.{i}/24"}]} for i, h in enumerate(HOSTS)}
    published = fleet_runs.publish(plan, {"hosts": hosts, "workloads": {}})
    return {"plan": published["plan"], "results": results, "seconds": {"h0": seconds}}


def by_id(found):
    return {(c["id"], c["target"]): c for c in found}


def test_a_healthy_fleet_passes_every_check_and_its_matrix_validates():
    plan = the_plan()
    found, table = fleet.plan_checks(WORKLOADS, INTENT, FACTS, run(plan))
    assert {c["status"] for c in found} == {"pass"}
    ids = {c["id"] for c in found}
    nodes = {f"perf.fleet.node.{h}" for h in HOSTS}
    assert ids == {"perf.fleet.fabric", "perf.fleet.budget"} | nodes
    assert len(table["pairs"]) == 28 and table["not_measured"] == []
    assert table["median_share_of_limit"] == pytest.approx(0.9, abs=0.03)
    assert table["plan"] == {
        "source": "generated", "test_s": 60, "budget_s": 600, "tests": 28,
        "seconds": 540, "rounds": 9, "phases": {"ring": 2, "rack": 7}, "elapsed_s": 400.0,
    }  # fmt: skip


def test_a_planted_slow_node_is_named_with_every_pair_it_took_part_in():
    plan = the_plan()
    found, table = fleet.plan_checks(WORKLOADS, INTENT, FACTS, run(plan, slow_node="h5"))
    assert table["verdict"] == {"nodes": ["h5"], "links": [], "undetermined": []}
    named = by_id(found)[("perf.fleet.node.h5", "h5")]
    assert named["status"] == "fail" and named["message"].startswith("slow node h5: ")
    partners = sorted(h for h in HOSTS if h != "h5")
    for partner in partners:  # the evidence: each of its 7 pairs, with its figure
        key = f"{min(partner, 'h5')}~{max(partner, 'h5')}"
        assert f"{key} " in named["message"] and "Gb/s (slow)" in named["message"]
    others = [c for c in found if c["id"].startswith("perf.fleet.node.") and c["target"] != "h5"]
    assert {c["status"] for c in others} == {"pass"}
    assert by_id(found)[("perf.fleet.fabric", "fleet")]["status"] == "pass"


def test_a_test_without_a_figure_is_not_measured_never_a_pass():
    plan = the_plan()
    lost = {"h0~h1": "Run the client: ib_write_bw: Couldn't connect", "h2~h3": "gone"}
    found, table = fleet.plan_checks(WORKLOADS, INTENT, FACTS, run(plan, lost=lost))
    failed = by_id(found)[("perf.fleet.pair.h0~h1", "h0~h1")]
    assert failed["status"] == "fail" and failed["observed"] == "not measured"
    assert "Couldn't connect" in failed["message"]
    gone = by_id(found)[("perf.fleet.pair.h2~h3", "h2~h3")]
    assert gone["status"] == "fail" and "recorded no result" in gone["message"]
    assert [p["pair"] for p in table["not_measured"]] == ["h0~h1", "h2~h3"]
    assert len(table["pairs"]) == 26
    # The hosts' other pairs still judge them.
    assert by_id(found)[("perf.fleet.node.h0", "h0")]["status"] == "pass"


def test_a_host_none_of_whose_tests_has_a_figure_is_not_measured():
    plan = the_plan()
    lost = {t["name"]: "host unreachable" for r in plan["rounds"] for t in r if "h7" in t["name"]}
    found, _ = fleet.plan_checks(WORKLOADS, INTENT, FACTS, run(plan, lost=lost))
    node = by_id(found)[("perf.fleet.node.h7", "h7")]
    assert node["status"] == "fail" and node["message"].startswith("not measured: ")
    assert "host unreachable" in node["message"]


def test_rounds_over_the_budget_fail_naming_the_round_length_and_no_timing_is_not_measured():
    plan = the_plan()
    found, _ = fleet.plan_checks(WORKLOADS, INTENT, FACTS, run(plan, seconds=700.0))
    budget = by_id(found)[("perf.fleet.budget", "fleet")]
    assert budget["status"] == "fail" and "a round lasts 77.8 s" in budget["message"]
    assert "workloads.fleet.test_s (60 s)" in budget["message"]
    inputs = run(plan)
    inputs["seconds"] = {"h0": None}
    budget = by_id(fleet.plan_checks(WORKLOADS, INTENT, FACTS, inputs)[0])[
        ("perf.fleet.budget", "fleet")
    ]
    assert budget["status"] == "fail" and budget["observed"] == "not measured"


def test_no_plan_fails_every_host_not_measured_and_plan_given_adds_nothing():
    found, table = fleet.plan_checks(WORKLOADS, INTENT, FACTS, {})
    assert table is None and len(found) == 2 + len(HOSTS)
    assert {c["status"] for c in found} == {"fail"}
    assert all(c["message"].startswith("not measured: ") for c in found)
    assert fleet.plan_checks({**WORKLOADS, "plan": "given"}, INTENT, FACTS, {}) == ([], None)


def test_verify_expects_the_fleet_checks_and_the_report_carries_the_matrix_and_heatmap(tmp_path):
    plan = the_plan()
    inputs = run(plan, slow_node="h2")
    fabric = {"hosts": INTENT, "workloads": {**WORKLOADS, "transports": ["rdma"]}}
    fabric["structured"] = {h: {} for h in HOSTS}
    result = verify_checks.all_checks(fabric, {}, {}, {}, [], ["perf"], fleet=inputs)
    assert result["fleet"]["verdict"]["nodes"] == ["h2"]
    structured, workloads = fabric["structured"], fabric["workloads"]
    expected = expected_checks(structured, INTENT, workloads, [], ["perf"], False)
    assert ("perf.fleet.node.h2", "h2", "fleet pairs") in expected
    assert ("perf.fleet.budget", "fleet", "fleet budget") in expected
    report = build_report(result["checks"], fleet=result["fleet"])
    out = write_report(report, tmp_path, stamp="s")
    document = json.loads((out / "report.json").read_text())
    assert document["schema_version"] == SCHEMA_VERSION
    jsonschema.validate(document, json.loads(SCHEMA.read_text()))
    assert document["performance"]["fleet"]["verdict"]["nodes"] == ["h2"]
    assert (out / "fleet.png").read_bytes()[:4] == b"\x89PNG"
    markdown = (out / "report.md").read_text()
    assert "Slow nodes: h2." in markdown and "![fleet](fleet.png)" in markdown
    assert re.search(
        r"28 pairs measured, 0 not measured, in 9 rounds \(400.0 s of a 600 s budget\)"
        r"; median \d+\.\d\d Gb/s\.",
        markdown,
    ), markdown
    assert 'id="fleet"' in (out / "report.html").read_text()


def test_the_schema_refuses_a_fleet_matrix_without_its_verdict(tmp_path):
    plan = the_plan()
    _, table = fleet.plan_checks(WORKLOADS, INTENT, FACTS, run(plan))
    del table["verdict"]
    document = build_report([], fleet=table)
    document["diff"] = {"previous": None, "changed": [], "new": [], "gone": [], "note": ""}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document, json.loads(SCHEMA.read_text()))
