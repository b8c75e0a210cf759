"""The OS-neutral pair transaction, driven through an in-memory double of the driver interface.

The double keeps a running and a saved config as plain lines, refuses the lines it
is told to refuse (as a switch's `%` would) and fails its health check while a
line it is told breaks the pair is in its running config.
"""

from __future__ import annotations

from collections import namedtuple
from pathlib import Path

import pytest

from module_utils.cxfab.switch.driver import (
    DriverError,
    HealthReading,
    RunningConfig,
    Staged,
    SwitchDriver,
)
from module_utils.cxfab.switch.transaction import Options, deploy_pair

Statement = namedtuple("Statement", "line")
HEALTHY_MLAG = {
    "read_errors": [],
    "mlag": {"oper": "Up", "ipl_up": True, "system_mac": "00:00:5E:00:01:5D", "mismatched": False},
    "vip": None,
}


class FakeSwitch:
    """What the switch itself holds across runs (a driver lives for one run)."""

    def __init__(self, lines: list[str]):
        self.running, self.saved = list(lines), list(lines)
        self.refuses: set[str] = set()
        self.breaks_health: set[str] = set()
        self.reachable = True
        self.mlag = HEALTHY_MLAG
        self.sent: list[str] = []
        self.sessions = 0
        self.saves = 0
        self.journal: list[str] = []  # what happened, in order (tests share one per pair)


class FakeDriver(SwitchDriver):
    SECTIONS = ("all",)

    def __init__(self, name: str, structured: dict, switch: FakeSwitch):
        super().__init__(name, structured)
        self.switch = switch

    def open(self, username, password, known_hosts, check_host_key=True):
        if not self.switch.reachable:
            self.unreachable = "timed out"
            return
        self.switch.sessions += 1
        self.unreachable, self.release = None, "1.0"

    def close(self):
        pass

    def read_config(self) -> RunningConfig:
        lines = self.switch.running
        statements = {line: Statement(line) for line in lines}
        return RunningConfig("\n".join(lines), statements, [], "protocol mlag" in lines)

    def mlag_state(self, config):
        return self.switch.mlag

    def unsaved_changes(self):
        return self.switch.running != self.switch.saved

    def health(self) -> HealthReading:
        broken = sorted(self.switch.breaks_health & set(self.switch.running))
        status, observed = ("fail", f"Down {broken}") if broken else ("pass", "Up")
        check = {"id": "mlag.oper", "target": self.name, "scope": "local", "expected": "Up",
                 "status": status, "observed": observed}  # fmt: skip
        self.switch.journal.append(f"health {self.name} {status}")
        return HealthReading(self.name, self.structured, [check])

    def pair_checks(self, readings):
        return []

    def stage(self, intended, sections, current) -> Staged:
        wanted = intended.splitlines()
        return Staged([line for line in wanted if line not in current.statements], private=wanted)

    def commit(self, staged) -> list[str]:
        for line in staged.lines:
            if line in self.switch.refuses:
                raise DriverError(f"{self.name}: {line!r}: % Invalid input")
            self.switch.running.append(line)
            self.switch.sent.append(line)
            self.switch.journal.append(f"{self.name} {line}")
        return [line for line in staged.private if line not in self.switch.running]

    def revert(self, snapshot):
        extra = [line for line in self.switch.running if line not in snapshot.statements]
        missing = [line for line in snapshot.statements if line not in self.switch.running]
        lines = [f"no {line}" for line in extra] + missing
        self.switch.running = [line for line in self.switch.running if line not in extra] + missing
        self.switch.sent += lines
        return lines, None

    def save(self):
        self.switch.saved = list(self.switch.running)
        self.switch.saves += 1
        self.switch.journal.append(f"save {self.name}")


BASE = ["hostname sw", "protocol mlag"]
PASSWORD = "S3cret-pw"


@pytest.fixture
def pair():
    return {"sw-a": FakeSwitch(BASE), "sw-b": FakeSwitch(BASE)}


def run(pair, intended: dict[str, list[str]], tmp_path: Path, order=("sw-a", "sw-b"), **options):
    drivers = {
        name: FakeDriver(
            name,
            {
                "switch": name,
                "partner": "sw-b" if name == "sw-a" else "sw-a",
                "pair": "p1",
                "peer_index": index,
            },
            switch,
        )
        for index, (name, switch) in enumerate(pair.items())
    }
    return deploy_pair(
        drivers,
        list(order),
        lambda name: "\n".join(intended[name]),
        {"username": "admin", "password": PASSWORD, "known_hosts": None, "check_host_key": True},
        Options(
            FakeDriver.SECTIONS,
            snapshot_dir=str(tmp_path / "snapshots"),
            wait=0,
            interval=0,
            secrets=[PASSWORD],
            **options,
        ),
        warn=lambda message: None,  # shown by the Ansible module, not judged here
    )


def test_a_refused_line_reverts_the_peer_and_proves_it_by_reading_again(pair, tmp_path):
    pair["sw-a"].refuses = {"vlan 666"}
    result = run(pair, {"sw-a": [*BASE, "vlan 10", "vlan 666", "vlan 20"]}, tmp_path)
    record = result["switches"]["sw-a"]
    assert record["refused"] == "sw-a: 'vlan 666': % Invalid input"
    # Nothing after the refused line was sent; the one line taken was taken back.
    assert pair["sw-a"].sent == ["vlan 10", "no vlan 10"]
    assert pair["sw-a"].running == BASE and pair["sw-a"].saved == BASE
    assert record["revert"]["proof"]["equal"] is True
    assert "reverted with 1 line(s) (no vlan 10)" in result["msg"]
    assert "equals the snapshot statement for statement (2 statements" in result["msg"]
    assert "sw-b was not touched" in result["msg"] and pair["sw-b"].sent == []
    assert Path(record["snapshot"]).read_text() == "\n".join(BASE)


def test_a_revert_that_does_not_take_is_reported_incomplete_never_done(pair, tmp_path):
    pair["sw-a"].refuses = {"vlan 666"}
    stuck = FakeDriver.revert

    def revert_that_leaves_a_line(self, snapshot):
        lines, refused = stuck(self, snapshot)
        self.switch.running.append("vlan 10")  # the switch kept it
        return lines, refused

    FakeDriver.revert = revert_that_leaves_a_line
    try:
        result = run(pair, {"sw-a": [*BASE, "vlan 10", "vlan 666"]}, tmp_path)
    finally:
        FakeDriver.revert = stuck
    assert result["switches"]["sw-a"]["revert"]["proof"]["extra"] == ["vlan 10"]
    assert "REVERT INCOMPLETE" in result["msg"]


def test_a_pair_that_fails_its_health_after_the_change_is_reverted_and_not_saved(pair, tmp_path):
    pair["sw-a"].breaks_health = {"vlan 30"}
    result = run(pair, {"sw-a": [*BASE, "vlan 30"]}, tmp_path)
    record = result["switches"]["sw-a"]
    assert "the pair is not healthy after the change: sw-a mlag.oper" in result["msg"]
    assert [c["id"] for c in record["post_failed"]] == ["mlag.oper"]
    assert pair["sw-a"].sent == ["vlan 30", "no vlan 30"]
    assert pair["sw-a"].running == BASE == pair["sw-a"].saved
    assert record["revert"]["proof"]["equal"] is True and "saved" not in record


def test_an_unhealthy_partner_blocks_the_change_unless_repair_is_set(pair, tmp_path):
    down = {**HEALTHY_MLAG, "mlag": {**HEALTHY_MLAG["mlag"], "oper": "Down", "ipl_up": False}}
    pair["sw-b"].mlag = down
    intended = {"sw-a": [*BASE, "vlan 10"]}
    blocked = run(pair, intended, tmp_path, order=("sw-a",))
    assert blocked["msg"].startswith(
        "sw-a: change blocked before the first line: partner sw-b MLAG is not healthy: "
        "Operational status Down, IPL not Up"
    )
    assert pair["sw-a"].sent == [] and "snapshot" not in blocked["switches"]["sw-a"]

    repaired = run(pair, intended, tmp_path, order=("sw-a",), repair=True)
    assert "msg" not in repaired and repaired["changed"] is True
    assert repaired["switches"]["sw-a"]["post_scope"] == "local"  # the partner is not relied on
    assert pair["sw-a"].saved == [*BASE, "vlan 10"]


def test_an_unreachable_partner_blocks_the_change(pair, tmp_path):
    pair["sw-b"].reachable = False
    result = run(pair, {"sw-a": [*BASE, "vlan 10"]}, tmp_path, order=("sw-a",))
    assert "partner sw-b is unreachable: timed out" in result["msg"]
    assert result["sessions"] == {"sw-a": 1, "sw-b": 0} and pair["sw-a"].sent == []


def test_both_peers_change_one_at_a_time_then_a_second_run_sends_nothing(pair, tmp_path):
    intended = {name: [*BASE, "vlan 10"] for name in pair}
    first = run(pair, intended, tmp_path)
    assert "msg" not in first and first["changed"] is True
    assert [first["switches"][n]["post_scope"] for n in pair] == ["core", "pair"]
    assert all(first["switches"][n]["saved"] for n in pair)
    assert first["sessions"] == {"sw-a": 1, "sw-b": 1}

    second = run(pair, intended, tmp_path)
    assert "msg" not in second and second["changed"] is False
    assert [second["switches"][n]["lines"] for n in pair] == [[], []]
    assert [pair[n].sent for n in pair] == [["vlan 10"], ["vlan 10"]]
    assert second["sessions"] == {"sw-a": 1, "sw-b": 1}
    assert [pair[n].sessions for n in pair] == [2, 2]  # one session per switch per run


def test_the_password_never_reaches_the_result(pair, tmp_path):
    # A refused line that echoes the password (a switch's message may quote the line).
    pair["sw-a"].refuses = {f"vlan {PASSWORD}"}
    result = run(pair, {"sw-a": [*BASE, f"vlan {PASSWORD}"]}, tmp_path)
    assert PASSWORD not in repr(result) and "'vlan <redacted>'" in result["msg"]


# ------------------------------------------------------------------ the pair changes as one
def test_a_line_the_second_peer_refuses_reverts_both_and_saves_neither(pair, tmp_path):
    pair["sw-b"].refuses = {"vlan 666"}
    intended = {"sw-a": [*BASE, "vlan 10"], "sw-b": [*BASE, "vlan 10", "vlan 666"]}
    result = run(pair, intended, tmp_path)
    records = result["switches"]
    assert records["sw-b"]["refused"] == "sw-b: 'vlan 666': % Invalid input"
    # The second peer is reverted first, then the first; each proven by reading it again.
    assert pair["sw-b"].sent == ["vlan 10", "no vlan 10"]
    assert pair["sw-a"].sent == ["vlan 10", "no vlan 10"]
    assert result["reverted"] == ["sw-b", "sw-a"] == result["reverted_proven"]
    assert all(records[n]["revert"]["proof"]["equal"] for n in pair)
    for name in pair:
        assert pair[name].running == BASE == pair[name].saved and pair[name].saves == 0
    assert records["sw-a"]["save_held"] is True and "saved" not in records["sw-a"]
    assert "sw-b failed" in records["sw-a"]["reverted_because"]
    assert (
        "Then sw-a (changed earlier in this run, not saved): reverted with 1 line(s)"
        in result["msg"]
    )
    assert "both peers were reverted, neither was saved" in result["msg"]
    assert "was not touched" not in result["msg"]


def test_a_pair_unhealthy_after_the_second_peer_reverts_both(pair, tmp_path):
    pair["sw-b"].breaks_health = {"vlan 20"}
    intended = {"sw-a": [*BASE, "vlan 10"], "sw-b": [*BASE, "vlan 20"]}
    result = run(pair, intended, tmp_path)
    assert "sw-b: the pair is not healthy after the change: sw-b mlag.oper" in result["msg"]
    assert result["reverted"] == ["sw-b", "sw-a"] == result["reverted_proven"]
    assert "both peers were reverted" in result["msg"]
    for name in pair:
        assert pair[name].running == BASE == pair[name].saved and pair[name].saves == 0
    assert pair["sw-a"].sent == ["vlan 10", "no vlan 10"]
    assert pair["sw-b"].sent == ["vlan 20", "no vlan 20"]


def test_both_peers_are_saved_only_once_the_pair_is_healthy_first_then_second(pair, tmp_path):
    journal: list[str] = []
    pair["sw-a"].journal = pair["sw-b"].journal = journal
    intended = {name: [*BASE, "vlan 10"] for name in pair}
    result = run(pair, intended, tmp_path)
    assert "msg" not in result and "reverted" not in result
    # sw-a is saved after sw-b's change passed its health, then sw-b; each once.
    assert journal.index("save sw-a") > journal.index("sw-b vlan 10")
    assert journal.index("save sw-a") > max(
        i for i, event in enumerate(journal) if event == "health sw-b pass"
    )
    assert journal[-2:] == ["save sw-a", "save sw-b"]
    assert [pair[n].saves for n in pair] == [1, 1]
    records = result["switches"]
    assert records["sw-a"]["saved"] is True and records["sw-a"]["save_held"] is False
    assert records["sw-b"]["saved"] is True

    # Nothing differs on the second peer: the first is saved once healthy, as alone.
    del journal[:]
    intended["sw-a"].append("vlan 11")
    again = run(pair, intended, tmp_path)
    assert "msg" not in again and again["switches"]["sw-b"]["lines"] == []
    assert pair["sw-a"].saved == [*BASE, "vlan 10", "vlan 11"] and pair["sw-a"].saves == 2
    assert pair["sw-b"].saves == 1 and journal.count("save sw-a") == 1


def test_check_diff_asks_the_driver_for_its_own_diff_and_warns_when_it_differs(
    pair, tmp_path, monkeypatch
):
    asked = []

    def device_diff(self, staged):
        asked.append(self.name)
        return [*staged.lines, "vlan 99"] if self.name == "sw-b" else list(staged.lines)

    monkeypatch.setattr(FakeDriver, "device_diff", device_diff)
    intended = {n: [*BASE, "vlan 10"] for n in pair}
    result = run(pair, intended, tmp_path, check_mode=True, diff=True)
    assert "msg" not in result and asked == ["sw-a", "sw-b"]
    a, b = result["switches"]["sw-a"], result["switches"]["sw-b"]
    assert a["device_diff"] == ["vlan 10"] and a["warnings"] == []
    assert b["warnings"] == [
        "the switch's own diff differs from cxfab's plan: only the switch's ['vlan 99'], "
        "only cxfab's []"
    ]
    assert pair["sw-a"].sent == [] and pair["sw-a"].running == BASE
    # Without --diff, or with nothing to change, the driver is not asked.
    run(pair, intended, tmp_path, check_mode=True)
    run(pair, {n: BASE for n in pair}, tmp_path, check_mode=True, diff=True)
    assert asked == ["sw-a", "sw-b"]


def test_a_driver_without_a_diff_of_its_own_leaves_the_record_as_it_was(pair, tmp_path):
    result = run(pair, {n: [*BASE, "vlan 10"] for n in pair}, tmp_path, check_mode=True, diff=True)
    assert "device_diff" not in result["switches"]["sw-a"] and "msg" not in result


def test_a_failed_device_diff_fails_the_check_run(pair, tmp_path, monkeypatch):
    def device_diff(self, staged):
        raise DriverError(f"{self.name}: refused; scratch revision 3 deleted, nothing applied")

    monkeypatch.setattr(FakeDriver, "device_diff", device_diff)
    result = run(pair, {n: [*BASE, "vlan 10"] for n in pair}, tmp_path, check_mode=True, diff=True)
    assert result["msg"] == "sw-a: refused; scratch revision 3 deleted, nothing applied"
    assert result["switches"]["sw-a"]["lines"] == ["vlan 10"] and "sw-b" not in result["switches"]
