"""After an activation: is the host's bond back? Decision logic and the bounded wait."""

from __future__ import annotations

from pathlib import Path

import pytest
from cxfab.host.net.bondstate import (
    member_states,
    parse_bonding_proc,
    wait_for_members,
    wait_skip_reason,
)

REPO = Path(__file__).resolve().parents[2]


BOND = {"name": "bond0", "members": ["ens1f0", "ens1f1"], "mode": "802.3ad"}


def proc(members: dict[str, tuple[str, int]], active: int | None = 1, mode: str = "lacp") -> str:
    """A /proc/net/bonding/bond0 text: member -> (MII status, aggregator id)."""
    modes = {
        "lacp": "IEEE 802.3ad Dynamic link aggregation",
        "backup": "fault-tolerance (active-backup)",
    }
    text = (
        f"Ethernet Channel Bonding Driver: v6.1.0\n\nBonding Mode: {modes[mode]}\nMII Status: up\n"
    )
    if mode == "lacp" and active is not None:
        text += f"\n802.3ad info\nActive Aggregator Info:\n\tAggregator ID: {active}\n"
    for name, (mii, aggregator) in members.items():
        text += f"\nSlave Interface: {name}\nMII Status: {mii}\nSpeed: 100000 Mbps\n"
        if mode == "lacp":
            text += f"Aggregator ID: {aggregator}\n"
    return text


def test_parser_reads_mode_aggregator_and_members():
    parsed = parse_bonding_proc(proc({"ens1f0": ("up", 1), "ens1f1": ("down", 2)}))
    assert parsed["mode"] == "IEEE 802.3ad Dynamic link aggregation"
    assert parsed["active_aggregator"] == 1
    assert parsed["members"]["ens1f1"] == {
        "mii_status": "down",
        "speed": "100000 Mbps",
        "aggregator": 2,
    }


@pytest.mark.parametrize(
    ("bond", "existed", "reason"),
    [
        (None, True, "the host has no bond in the fabric"),
        ({"name": "bond0", "members": []}, True, "bond bond0 has no members"),
        (BOND, False, "bond bond0 did not exist before the activation"),
        (BOND, True, None),
    ],
)
def test_skip_reasons(bond, existed, reason):
    got = wait_skip_reason(bond, existed)
    assert (got is None) if reason is None else got.startswith(reason)


def test_all_members_up_in_the_active_aggregator_are_ready():
    ready, states = member_states(BOND, proc({"ens1f0": ("up", 1), "ens1f1": ("up", 1)}))
    assert ready
    assert states["ens1f0"] == "MII up, aggregator 1 (active 1)"


@pytest.mark.parametrize(
    ("members", "active", "not_ready"),
    [
        ({"ens1f0": ("up", 1), "ens1f1": ("down", 1)}, 1, "ens1f1"),
        # up, but LACP has not joined it to the active aggregator yet
        ({"ens1f0": ("up", 1), "ens1f1": ("up", 2)}, 1, "ens1f1"),
        # no active aggregator at all
        ({"ens1f0": ("up", 1), "ens1f1": ("up", 1)}, None, "ens1f0"),
    ],
    ids=["mii-down", "other-aggregator", "no-active-aggregator"],
)
def test_a_member_down_or_outside_the_aggregator_is_not_ready(members, active, not_ready):
    ready, states = member_states(BOND, proc(members, active))
    assert not ready
    assert states[not_ready].endswith("not ready")


def test_a_member_missing_from_the_bond_is_not_ready():
    ready, states = member_states(BOND, proc({"ens1f0": ("up", 1)}))
    assert not ready and states["ens1f1"] == "not enslaved"


def test_active_backup_needs_only_mii_up():
    bond = {**BOND, "mode": "active-backup"}
    ready, states = member_states(
        bond, proc({"ens1f0": ("up", 0), "ens1f1": ("up", 0)}, mode="backup")
    )
    assert ready and states["ens1f1"] == "MII up"


def test_an_absent_bond_is_not_ready_and_garbage_fails_closed():
    ready, states = member_states(BOND, None)
    assert not ready and states == {"ens1f0": "bond bond0 absent", "ens1f1": "bond bond0 absent"}
    with pytest.raises(ValueError, match="no 'Bonding Mode' line in: garbage"):
        member_states(BOND, "garbage\n")


class FakeTime:
    def __init__(self):
        self.now = 0.0
        self.sleeps = 0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.sleeps += 1


def test_wait_returns_when_the_members_come_back(tmp_path):
    status = tmp_path / "bond0"
    status.write_text(proc({"ens1f0": ("up", 1), "ens1f1": ("down", 2)}))
    fake = FakeTime()

    def sleep(seconds):
        fake.sleep(seconds)
        if fake.now >= 3:  # the second member rejoins after 3 s
            status.write_text(proc({"ens1f0": ("up", 1), "ens1f1": ("up", 1)}))

    ready, waited, states = wait_for_members(BOND, str(tmp_path), 120, 1.0, fake.clock, sleep)
    assert ready and waited == 3.0
    assert states["ens1f1"] == "MII up, aggregator 1 (active 1)"


def test_wait_gives_up_at_the_timeout_with_the_member_states(tmp_path):
    (tmp_path / "bond0").write_text(proc({"ens1f0": ("up", 1), "ens1f1": ("up", 2)}))
    fake = FakeTime()
    ready, waited, states = wait_for_members(BOND, str(tmp_path), 5, 1.0, fake.clock, fake.sleep)
    assert not ready and waited == 5.0 and fake.sleeps == 5
    assert states["ens1f1"] == "MII up, aggregator 2 (active 1) - not ready"
