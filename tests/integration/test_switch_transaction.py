"""Transactions on the emulated pair: refused lines, dead partner, cut IPL, sessions.

One pair for the module: built once, then each test makes a change that must
fail safely (or, with repair, go through) and leaves the pair as it found it.
"""

from __future__ import annotations

import copy
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.integration import onyx_inventory  # noqa: E402
from tests.integration.test_switch_roles import run_playbook, show  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow]
fixtures = pytest.importorskip("tests.lab.onyx.fixtures")
pytest.importorskip("netmiko")

from cxfab.switch.onyx.parser import parse_running_config  # noqa: E402

A, B = "lab-sw-a", "lab-sw-b"
# The lines sw-a gets for VLAN 30 (rendered order: VLANs, then SVIs).
VLAN30_LINES = [
    "vlan 30",
    "vlan 30 name extra",
    "interface vlan 30",
    "interface vlan 30 ip address 12.0.30.252/24",
    "interface vlan 30 mtu 9000",
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    base = tmp_path_factory.mktemp("transaction")
    with fixtures.onyx_pair(base / "run") as pair:
        ports = [pair[A].port, pair[B].port]
        lab = {"pair": pair, "base": base, "fabric": onyx_inventory.fabric(ports)}
        lab["known_hosts"] = pair.write_known_hosts(base / "switches_known_hosts")
        built = run_playbook(lab, lab["fabric"])
        assert built["rc"] == 0, built["output"]
        yield lab


def with_vlan30(fabric: dict) -> dict:
    changed = copy.deepcopy(fabric)
    changed["cxfab_vlans"].append(
        {
            "id": 30,
            "name": "extra",
            "subnet": "12.0.30.0/24",
            "mtu": 9000,
            "gateway": {"mode": "none"},
            "svi_addresses": {A: "12.0.30.252/24", B: "12.0.30.253/24"},
        }
    )
    return changed


def with_vrrp30(fabric: dict, priorities: dict, interval: int = 1, preempt: bool = True) -> dict:
    changed = with_vlan30(fabric)
    changed["cxfab_vlans"][-1]["gateway"] = {
        "mode": "vrrp",
        "virtual_ip": "12.0.30.1",
        "vrrp": {"priorities": priorities, "advertisement_interval": interval, "preempt": preempt},
    }
    return changed


def statements(lab, switch: str) -> tuple[dict, list]:
    parsed = parse_running_config(show(lab, switch, "show running-config"))
    return parsed.statements, sorted(parsed.unknown)


def unsaved(lab, switch: str) -> str:
    return show(lab, switch, "show configuration files").split("Unsaved changes :")[1].split()[0]


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


def mlag_oper(lab, switch: str) -> str:
    return show(lab, switch, "show mlag").split("Operational status:")[1].split()[0]


def wait_for_oper(lab, switch: str, state: str, seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while mlag_oper(lab, switch) != state:
        assert time.monotonic() < deadline, f"{switch} MLAG not {state} within {seconds} s"
        time.sleep(0.5)


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
