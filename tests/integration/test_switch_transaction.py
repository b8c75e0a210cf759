"""Transactions on the emulated pair: refused lines and sessions.

One pair for the module: built once, then each test makes a change that must
fail safely and leaves the pair as it found it. The partner gate (dead partner,
cut IPL) and the VRRP revert are in test_switch_partner_gate.py, on a pair of
their own.
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
    with_vlan30,
)
from tests.integration.test_switch_roles import run_playbook  # noqa: E402

lab = pair_fixture("transaction")


def test_a_rerun_opens_one_session_per_switch(lab):
    pair = lab["pair"]
    before = {name: pair.logins(name) for name in (A, B)}
    result = run_playbook(lab, lab["fabric"])
    assert result["rc"] == 0, result["output"]
    assert result["lines"] == {A: [], B: []}
    assert {name: pair.logins(name) - before[name] for name in (A, B)} == {A: 1, B: 1}


@pytest.mark.parametrize("position", [0, 2, len(VLAN30_LINES) - 1], ids=["first", "middle", "last"])
def test_a_refused_line_reverts_the_peer_to_its_snapshot(lab, position):
    pair = lab["pair"]
    refused = VLAN30_LINES[position]
    snapshot = {name: statements(lab, name) for name in (A, B)}
    logins_b = pair.logins(B)
    pair.ctl(A, "reject-line", *refused.split())
    try:
        result = run_playbook(lab, with_vlan30(lab["fabric"]))
    finally:
        pair.ctl(A, "accept-lines")
    assert result["rc"] != 0
    assert pair.logins(B) - logins_b == 1  # one session: read for the gate only
    record = result["health"][A]
    assert record["lines"] == VLAN30_LINES
    assert refused in record["refused"] and "lab fault" in record["refused"]
    revert = record["revert"]
    assert revert["proof"]["equal"] is True, revert
    # Everything before the refused line is taken back, in teardown order (the
    # SVI's address goes with the SVI, the VLAN's name with the VLAN).
    undo = {0: [], 2: ["no vlan 30"], 4: ["no interface vlan 30", "no vlan 30"]}
    assert revert["lines"] == undo[position]
    assert f"refused line {position + 1} {refused!r}" in record["error"]
    assert "equals the snapshot statement for statement" in record["error"]
    for name in (A, B):
        assert statements(lab, name) == snapshot[name]
        assert unsaved(lab, name) == "no"
    assert B not in result["lines"], "the partner must not be touched"


def test_a_line_the_second_peer_refuses_reverts_both_and_the_first_is_never_saved(lab):
    """The pair changes as one: lab-sw-a's change waits unsaved for lab-sw-b's turn;
    lab-sw-b refuses a line, so lab-sw-b is reverted, then lab-sw-a."""
    pair = lab["pair"]
    snapshot = {name: statements(lab, name) for name in (A, B)}
    saved_file = pair.run_dir / f"{A}.saved.cfg"
    saved_before = (saved_file.read_text(), saved_file.stat().st_mtime_ns)
    refused = "interface vlan 30 mtu 9000"
    pair.ctl(B, "reject-line", *refused.split())
    try:
        result = run_playbook(lab, with_vlan30(lab["fabric"]))
    finally:
        pair.ctl(B, "accept-lines")
    assert result["rc"] != 0
    first, second = result["health"][A], result["health"][B]
    assert first["lines"] == VLAN30_LINES and refused in second["refused"]
    assert first["save_held"] is True and "saved" not in first
    assert second["revert"]["proof"]["equal"] is True, second["revert"]
    assert first["revert"]["proof"]["equal"] is True, first["revert"]
    assert first["revert"]["lines"] == ["no interface vlan 30", "no vlan 30"]
    assert "saved_again" not in first["revert"]
    assert "equals the snapshot statement for statement" in first["error"]
    assert "both peers were reverted, neither was saved" in result["stdout"]
    # Proof on the devices: both running configs equal their snapshots, nothing unsaved,
    # and lab-sw-a's saved config was never written.
    for name in (A, B):
        assert statements(lab, name) == snapshot[name]
        assert unsaved(lab, name) == "no"
    assert (saved_file.read_text(), saved_file.stat().st_mtime_ns) == saved_before
