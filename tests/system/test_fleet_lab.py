"""Lab tier: the fleet's generated plan on the lab's two hosts; a slowed link is named.

`verify.yml --tags verify_perf` with the lab's workloads as extra vars, but
`plan: generated` and no hand-written pair: the plan is computed from the fabric,
as for a fleet. Two hosts make the ring of two, their pair both ways in two rounds,
each way judged apart (`client->server`). Its settings, and why:

- `fleet.vlan: 30`: the lab's bulk VLAN, the one class its QoS does not rate-limit
  (VLAN 10, the lowest both hosts carry and the default, is shaped to 5 Mb/s);
- `fleet.tolerance: 0.5`: with two tests the median is their mean, so a way is slow
  below a third of the other. The default 0.8 would name a way 1.5 times slower, which
  soft-RoCE between TCG guests reaches unplanted (0.057 against 0.061 Gb/s here);
- `iterations: 10`: pingpong crosses the slowed way in both tests; 50 MiB of it at
  10 Mb/s would only lengthen the run;
- `test_s: 60`, `budget_s: 180`: 2 rounds planned; a healthy run takes ~50 s.

1. Slowed: a token bucket of 10 Mb/s (`tc qdisc add ... root tbf`) on lab-host1's
   VLAN 30 interface, the way its port sends that VLAN (the ports' own QoS tree is
   left alone). verify.yml must exit non-zero with `perf.fleet.pair.lab-host1->lab-host2`
   failed: its figure, and as evidence the other way, fine; both hosts pass as nodes
   (each is fine in its other test); the rounds stay inside the budget.
2. Healed (the qdisc deleted): the same run passes, inside the budget.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from tests.lab.vm.topology import GUESTS, INVENTORY_DIR
from tests.system.deployment import Deployment

pytestmark = [pytest.mark.lab, pytest.mark.timeout(900)]

SLOW, OTHER = GUESTS[0].name, GUESTS[1].name
VLAN = 30
SLOW_WAY, FINE_WAY = f"{SLOW}->{OTHER}", f"{OTHER}->{SLOW}"
SHAPER = "tbf rate 10mbit burst 16kb latency 50ms"
FLEET = {"budget_s": 180, "test_s": 60, "tolerance": 0.5, "vlan": VLAN}


def fleet_vars(path: Path) -> Path:
    fabric = yaml.safe_load((INVENTORY_DIR / "group_vars" / "all" / "fabric.yml").read_text())
    workloads = {**fabric["cxfab_workloads"], "plan": "generated", "pairs": []}
    workloads.update(iterations=10, fleet=FLEET)
    path.write_text(yaml.safe_dump({"cxfab_workloads": workloads}))
    return path


def vlan_interface(host, deployed: Deployment) -> str:
    """The interface that holds the host's VLAN 30 address (bond0.30 under networkd)."""
    vlans = deployed.intent(host.name)["cxfab_host"]["vlans"]
    address = next(v["address"] for v in vlans if v["id"] == VLAN).split("/")[0]
    line = host.run(f"ip -o -4 addr show to {address}/32").split()
    assert line, f"{host.name}: no interface holds {address}"
    return line[1].split("@")[0]


def verify(deployed: Deployment, reports: Path, extra: Path) -> tuple[int, dict, float]:
    """(exit status, report.json with report.md's text as `markdown`, seconds)."""
    started = time.monotonic()
    run = deployed.play("verify.yml", "--tags", "verify_perf", "-e", f"@{extra}", reports=reports)
    report = json.loads((reports / "latest" / "report.json").read_text())
    report["markdown"] = (reports / "latest" / "report.md").read_text()
    return run.returncode, report, time.monotonic() - started


@pytest.fixture(scope="module")
def runs(deployed: Deployment, lab, tmp_path_factory):
    """The slowed run, then the healed one: (rc, report, seconds) each."""
    host = next(h for h in lab.hosts if h.name == SLOW)
    interface = vlan_interface(host, deployed)
    base = tmp_path_factory.mktemp("fleet")
    extra = fleet_vars(base / "fleet-vars.yml")
    host.run(f"tc qdisc add dev {interface} root {SHAPER}")
    try:
        slowed = verify(deployed, base / "slowed", extra)
        shaped = host.run(f"tc -s qdisc show dev {interface}")
    finally:
        host.run(f"tc qdisc del dev {interface} root")
    assert "tbf" not in host.run(f"tc qdisc show dev {interface}"), "the shaper is gone"
    healed = verify(deployed, base / "healed", extra)
    for name, (rc, _, seconds) in (("slowed", slowed), ("healed", healed)):
        print(f"\n>> fleet {name}: verify.yml exit {rc} in {seconds:.0f} s")
    print(f">> fleet: {interface} on {SLOW} while slowed: {' '.join(shaped.split())}")
    return {"slowed": slowed, "healed": healed}


def checks(report: dict) -> dict:
    return {c["id"]: c for c in report["checks"] if c["id"].startswith("perf.fleet.")}


def test_the_slowed_way_is_named_with_its_evidence(runs):
    rc, report, _ = runs["slowed"]
    assert rc != 0, "a slowed link must fail verify"
    found = checks(report)
    named = found[f"perf.fleet.pair.{SLOW_WAY}"]
    print(f">> fleet: {named['message']}")
    assert named["status"] == "fail" and named["target"] == SLOW_WAY
    assert named["message"].startswith(f"slow link {SLOW_WAY}: ")
    assert f"both hosts are fine in their other tests: {FINE_WAY} " in named["message"]
    # report.json's matrix holds the evidence the message names: both ways, their figures
    pairs = {p["pair"]: p for p in report["performance"]["fleet"]["pairs"]}
    slow, fine = pairs.pop(SLOW_WAY), pairs.pop(FINE_WAY)
    assert not pairs and slow["slow"] and not fine["slow"] and slow["gbps"] * 3 < fine["gbps"]
    assert named["observed"] == f"{slow['gbps']:g} Gb/s"
    assert f"{FINE_WAY} {fine['gbps']:g} Gb/s" in named["message"]
    assert f"Slow links: {SLOW_WAY}." in report["markdown"]
    assert report["performance"]["fleet"]["verdict"] == {
        "nodes": [],
        "links": [SLOW_WAY],
        "undetermined": [],
    }
    for host in (SLOW, OTHER):  # each is fine in its other test: no node is named
        assert found[f"perf.fleet.node.{host}"]["status"] == "pass"
    assert found["perf.fleet.budget"]["status"] == "pass", found["perf.fleet.budget"]


def test_healed_every_fleet_check_passes_inside_the_budget(runs):
    rc, report, seconds = runs["healed"]
    found = checks(report)
    failing = {k: c["message"] for k, c in found.items() if c["status"] not in ("pass", "skip")}
    assert rc == 0 and not failing, failing
    assert set(found) == {
        "perf.fleet.fabric",  # skipped: a soft-RoCE port's rate is not a limit
        "perf.fleet.budget",
        f"perf.fleet.node.{SLOW}",
        f"perf.fleet.node.{OTHER}",
    }
    plan = report["performance"]["fleet"]["plan"]
    assert plan["rounds"] == 2 and plan["tests"] == 2
    assert plan["elapsed_s"] <= plan["budget_s"] == FLEET["budget_s"]
    pairs = {p["pair"]: p for p in report["performance"]["fleet"]["pairs"]}
    assert set(pairs) == {SLOW_WAY, FINE_WAY} and not any(p["slow"] for p in pairs.values())
    print(
        f">> fleet healed: {plan['elapsed_s']} s of {plan['budget_s']} s, whole run {seconds:.0f} s"
    )
