"""The partner gate and the VRRP revert on an emulated pair of their own.

A dead partner or a cut IPL blocks a change before its first line (repair lets it
through); a refused line reverts a VRRP priority and interval change. Each test
leaves the pair as it found it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

pytestmark = [pytest.mark.integration, pytest.mark.slow]
fixtures = pytest.importorskip("tests.lab.onyx.fixtures")
pytest.importorskip("netmiko")

from tests.integration.onyx_pair_lab import (  # noqa: E402
    VLAN30_LINES,
    A,
    B,
    pair_fixture,
    statements,
    unsaved,
    wait_for_oper,
    with_vlan30,
    with_vrrp30,
)
from tests.integration.test_switch_roles import run_playbook  # noqa: E402

lab = pair_fixture("partner_gate")


def test_a_refused_line_reverts_a_vrrp_priority_and_interval_change(lab):
    """The revert needs VRRP removal lines (`... vrrp 30 no priority`): the switch takes them."""
    pair = lab["pair"]
    try:
        # lab-sw-a at the VRRP defaults (priority 100, interval 1, preempt): nothing printed.
        built = run_playbook(lab, with_vrrp30(lab["fabric"], {A: 100, B: 110}))
        assert built["rc"] == 0, built["output"]
        snapshot = {name: statements(lab, name) for name in (A, B)}
        assert ("vrrp_priority", 30, 30) not in snapshot[A][0]
        refused = "interface vlan 30 no vrrp 30 preempt"
        pair.ctl(A, "reject-line", *refused.split())
        try:
            changed = with_vrrp30(lab["fabric"], {A: 120, B: 110}, interval=3, preempt=False)
            result = run_playbook(lab, changed)
        finally:
            pair.ctl(A, "accept-lines")
        assert result["rc"] != 0
        record = result["health"][A]
        assert record["lines"] == [
            "interface vlan 30 vrrp 30 priority 120",
            "interface vlan 30 vrrp 30 advertisement-interval 3",
            refused,
        ]
        assert refused in record["refused"]
        revert = record["revert"]
        assert revert["refused"] is None and revert["proof"]["equal"] is True, revert
        assert sorted(revert["lines"]) == [
            "interface vlan 30 vrrp 30 no advertisement-interval",
            "interface vlan 30 vrrp 30 no priority",
        ]
        for name in (A, B):
            assert statements(lab, name) == snapshot[name]
            assert unsaved(lab, name) == "no"
        assert B not in result["lines"], "the partner must not be touched"
    finally:
        back = run_playbook(lab, lab["fabric"])
    assert back["rc"] == 0, back["output"]
    assert ("vrrp", 30, 30) not in statements(lab, A)[0]


def test_a_dead_partner_blocks_the_change_and_repair_lets_it_through(lab):
    pair = lab["pair"]
    before = statements(lab, A)
    pair.ctl(B, "kill")
    try:
        blocked = run_playbook(lab, with_vlan30(lab["fabric"]))
        assert blocked["rc"] != 0
        error = blocked["health"][A]["error"]
        assert "change blocked before the first line" in error
        assert "partner lab-sw-b is unreachable" in error
        assert statements(lab, A) == before

        repaired = run_playbook(lab, with_vlan30(lab["fabric"]), "-e", "cxfab_switch_repair=true")
        assert repaired["lines"][A] == VLAN30_LINES
        # Its own turn cannot happen: the run says so and fails.
        assert "lab-sw-b is unreachable" in repaired["health"][B]["error"]
        assert ("vlan", 30) in statements(lab, A)[0]
        assert unsaved(lab, A) == "no"
    finally:
        pair.ctl(B, "revive")
    # The revived switch must be back in the MLAG before the gate reads it (slow
    # on a loaded machine: the emulator's keepalives are plain threads).
    wait_for_oper(lab, B, "Up", seconds=60)
    back = run_playbook(lab, lab["fabric"])
    assert back["rc"] == 0, back["output"]
    assert ("vlan", 30) not in statements(lab, A)[0]


def test_a_partner_with_a_cut_ipl_blocks_the_change(lab):
    pair = lab["pair"]
    before = statements(lab, A)
    pair.ctl(B, "cut-ipl")
    try:
        wait_for_oper(lab, B, "Down")
        blocked = run_playbook(lab, with_vlan30(lab["fabric"]))
    finally:
        pair.ctl(B, "heal-ipl")
    assert blocked["rc"] != 0
    record = blocked["health"][A]
    assert record["lines"] == [], "nothing planned or sent past the gate"
    assert "change blocked before the first line" in record["error"]
    assert (
        "partner lab-sw-b MLAG is not healthy: Operational status Down, IPL not Up"
        in record["error"]
    )
    assert statements(lab, A) == before
    wait_for_oper(lab, A, "Up", seconds=60)  # healed: the next test finds the pair as it was
