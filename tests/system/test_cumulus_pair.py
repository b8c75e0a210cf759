"""Lab tier, last: the same lab behind the emulated Cumulus Linux (NVUE) pair.

`lab pair cumulus` stops the Onyx pair site.yml configured and starts the NVUE pair,
blank, on the same ports, cables and namespaces (its dataplane agents clear what the
Onyx twin built; tests/lab/vm/lab.py `use_pair`). hosts.yml then names the pair's OS,
so the one lab intent renders for NVUE (fabric.yml: `platform` from `lab_switch_os`).
The hosts keep what site.yml gave them.

- switches.yml builds the blank pair: one revision per switch, applied and confirmed
  once the pair is healthy; a second run changes nothing and creates no revision.
- The peer link is cut with both switches alive (`make lab-fail IPL=cut`): the
  secondary, whose backup link still answers, takes its MLAG bonds down ([MLAG] "Peer
  Link"/"Backup Link", docs/lab-nvue.md), so every host is served by the primary
  alone, without loss once converged; healed, the pair is whole again.
- The gateway drill: drill.yml kills lab-sw-a (`make lab-fail SWITCH=a`) under the
  hosts' continuous pings and brings it back with the applied tree it saved. VRR is
  active on both peers (NVIDIA's MAGP), so no gateway moves: every path loses at most
  what the data path does, as the Onyx pair's MAGP paths in test_fabric_vrrp.py.

Each judges the pair by cxfab's own NVUE driver (`nv show ... -o json` read as verify
reads it), the namespaces' links and the hosts' bonds. It runs after every other suite
(conftest.LAST_MARKERS) and leaves the lab on the NVUE pair, which `lab down` stops.
"""

from __future__ import annotations

import json
import time

import pytest

from tests.lab.vm import lab as labctl
from tests.lab.vm.topology import SWITCHES
from tests.system import switchpair
from tests.system.deployment import Deployment

pytestmark = [pytest.mark.lab, pytest.mark.cumulus, pytest.mark.timeout(900)]

PRIMARY, SECONDARY = "lab-sw-a", "lab-sw-b"
BONDS = ("bond1", "bond2")  # the lab's two MLAG bonds, `bond mlag id` 1 and 2
CONVERGE_S, HEAL_S = 30, 60
# The drill's waits: no gateway moves here (VRR on both peers), so the failure needs no
# takeover time; 8 s down still gives each path over 10 pings on either side. The return
# window is 10 s: with 5, a CI run (2026-11-29, d70a0b7) saw lab-host1's bond lose its last
# 1-2 pings to every target 5 s after lab-sw-a was back (gaps 0.37-0.60 s), so the drill
# ended before the path could show it had recovered.
DOWN_S, SETTLE_S = 8, 10
# A path whose gateway is VRR on both peers loses at most what the data path does.
MAX_GAP_S = 3.0


def bonds_up(switch: str) -> dict[str, bool]:
    links = switchpair.namespace_links(switch)
    return {name: name in links and switchpair.is_up(links[name]) for name in BONDS}


@pytest.fixture(scope="module")
def cumulus(deployed: Deployment, lab):
    """The lab on the NVUE pair, built by switches.yml and whole."""
    figures = {}
    started = time.monotonic()
    assert labctl.use_pair("cumulus") == 0, "lab pair cumulus failed (its log is above)"
    figures["swap_s"] = time.monotonic() - started
    built = deployed.play("switches.yml")
    assert built.returncode == 0, built.tail()
    assert set(built.changed_hosts()) & set(SWITCHES), built.tail()
    figures["build_s"] = time.monotonic() - started - figures["swap_s"]
    # One revision per switch, created, applied and kept by its confirm; none refused.
    revisions = {switch: switchpair.nvue_revisions(switch) for switch in SWITCHES}
    assert revisions == {s: {"1": "applied_and_saved"} for s in SWITCHES}, revisions
    for switch in SWITCHES:
        record = switchpair.nvue_status(switch)
        assert (record["revisions_created"], record["refusals"]) == (1, []), (switch, record)
    switchpair.wait_for(lambda: not switchpair.nvue_unhealthy(), HEAL_S, "the NVUE pair whole")
    # The hosts' bonds aggregate again with the new partner (NVUE's MLAG system MAC),
    # then every host reaches every gateway (the VRR MAC) and peer through the pair.
    switchpair.wait_bonds(lab.hosts, switchpair.BOTH_SIDES, HEAL_S, started, "lacp", figures)
    for host in lab.hosts:
        targets = switchpair.probe_targets(host.name)
        switchpair.wait_for(
            lambda host=host, targets=targets: not switchpair.unanswered(host, targets, count=1),
            CONVERGE_S, f"{host.name} reaching every gateway and peer",
        )  # fmt: skip
        figures[f"{host.name}_reaches_all_s"] = time.monotonic() - started
        assert switchpair.unanswered(host, targets) == [], host.name
    again = deployed.play("switches.yml")
    assert again.returncode == 0, again.tail()
    assert again.changed_hosts() == {} and set(again.recap) >= set(SWITCHES), again.tail()
    assert {s: switchpair.nvue_revisions(s) for s in SWITCHES} == revisions
    assert {s: switchpair.nvue_status(s)["revisions_created"] for s in SWITCHES} == (
        dict.fromkeys(SWITCHES, 1)
    )
    print("cumulus pair: " + ", ".join(f"{k} {v:.1f}" for k, v in figures.items()))
    return deployed


def test_a_cut_peer_link_leaves_the_primary_forwarding_and_heals(cumulus, lab):
    targets = switchpair.every_hosts_targets(lab.hosts)
    figures = {}
    cut_at = time.monotonic()
    try:
        labctl.apply_fault(["ipl"], active=True)
        switchpair.wait_for(
            lambda: bonds_up(SECONDARY) == dict.fromkeys(BONDS, False),
            CONVERGE_S, f"{SECONDARY} taking its MLAG bonds down",
        )  # fmt: skip
        figures["secondary_down_s"] = time.monotonic() - cut_at
        switchpair.wait_bonds(
            lab.hosts, switchpair.ONLY_SIDE_A, CONVERGE_S, cut_at, "primary_only", figures
        )
        # What the switches say, read as verify reads it.
        mlag = switchpair.nvue_show(SECONDARY, "mlag")
        assert mlag["peer-alive"] is False and mlag["backup-active"] is True, mlag
        health = {switch: switchpair.nvue_health(switch) for switch in SWITCHES}
        for switch in SWITCHES:
            assert health[switch]["mlag.oper"]["status"] == "fail", (switch, health[switch])
            assert health[switch]["mlag.ipl_state"]["status"] == "fail", switch
        for bond in (1, 2):
            assert "down" in health[SECONDARY][f"mpo.{bond}"]["observed"], health[SECONDARY]
            assert health[PRIMARY][f"mpo.{bond}"]["observed"].startswith(f"bond{bond} up"), health[
                PRIMARY
            ]
        assert bonds_up(PRIMARY) == dict.fromkeys(BONDS, True)
        for host in lab.hosts:
            switchpair.wait_for(
                lambda host=host: not switchpair.unanswered(host, targets[host.name], count=1),
                CONVERGE_S, f"{host.name} reaching every gateway and peer",
            )  # fmt: skip
            figures[f"{host.name}_reaches_all_s"] = time.monotonic() - cut_at
            assert switchpair.unanswered(host, targets[host.name], count=5) == [], host.name
    finally:
        healed_at = time.monotonic()
        labctl.apply_fault(["ipl"], active=False)
    switchpair.wait_for(lambda: not switchpair.nvue_unhealthy(), HEAL_S, "the NVUE pair whole")
    figures["whole_after_heal_s"] = time.monotonic() - healed_at
    switchpair.wait_bonds(lab.hosts, switchpair.BOTH_SIDES, HEAL_S, healed_at, "both", figures)
    assert all(bonds_up(switch) == dict.fromkeys(BONDS, True) for switch in SWITCHES)
    print("peer link cut and heal: " + ", ".join(f"{k} {v:.1f}" for k, v in figures.items()))


def test_the_gateway_drill_loses_no_gateway_when_a_switch_dies(cumulus, lab, tmp_path):
    drill = switchpair.drill_killing_switch_a(DOWN_S, SETTLE_S)
    applied = {switch: switchpair.nvue_driver(switch).applied_tree() for switch in SWITCHES}
    try:
        run = cumulus.play("drill.yml", "-e", json.dumps(drill), reports=tmp_path)
    finally:
        labctl.apply_fault([], active=False)
    assert run.returncode == 0, run.tail()
    (report_dir,) = tmp_path.glob("drill-*")
    report = json.loads((report_dir / "drill.json").read_text())
    print(report["markdown"])
    assert report["errors"] == [], report["errors"]
    gateways = [t for t in report["targets"] if t["id"].startswith("drill.gateway.")]
    assert len(gateways) == 6 and len(report["targets"]) == 12, report["targets"]
    for target in report["targets"]:
        failure, back = target["failure"], target["return"]
        where = (target["host"], target["id"])
        assert failure["sent"] > 10 and back["sent"] > 10, (where, target)
        assert failure["recovered"] and back["recovered"], (where, target)
        assert failure["longest_gap_s"] <= MAX_GAP_S, (where, failure)
        assert back["longest_gap_s"] <= MAX_GAP_S, (where, back)
    # lab-sw-a came back with the tree it had applied and saved: the pair whole, both
    # applied trees as before, every host reaching every gateway and peer.
    switchpair.wait_for(lambda: not switchpair.nvue_unhealthy(), HEAL_S, "the NVUE pair whole")
    assert {s: switchpair.nvue_driver(s).applied_tree() for s in SWITCHES} == applied
    for host in lab.hosts:
        targets = switchpair.probe_targets(host.name)
        assert switchpair.unanswered(host, targets) == [], host.name
