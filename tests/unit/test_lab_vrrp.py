"""The emulated switch's VRRP election: RFC 3768 timers decide who owns the address."""

from __future__ import annotations

import pytest

from tests.lab.onyx import vrrp
from tests.lab.onyx.switch import Identity, Switch
from tests.unit.test_lab_dataplane import lab_switch

A_RANK = (110, (12, 0, 20, 252))
B_RANK = (100, (12, 0, 20, 253))


def local(rank=B_RANK, preempt=True, interval=1, eligible=True) -> vrrp.Local:
    return vrrp.Local(eligible, rank, preempt, interval)


def run(instance, me, advert, advert_at, start, end, tick=0.25):
    """Ticks from start to end; returns the instance and when it first became Master."""
    became_master, now = None, start
    while now <= end + 1e-9:
        instance = vrrp.step(instance, me, advert, advert_at(now), now)
        if instance.state == vrrp.MASTER and became_master is None:
            became_master = now
        now += tick
    return instance, became_master


@pytest.mark.parametrize(("priority", "interval", "expected"), [(100, 1, 3.609), (254, 2, 6.008)])
def test_master_down_interval_is_three_adverts_plus_skew(priority, interval, expected):
    assert vrrp.master_down_interval(priority, interval) == pytest.approx(expected, abs=1e-3)


def test_an_eligible_instance_starts_as_backup_and_waits_before_claiming_master():
    instance = vrrp.step(vrrp.Instance(), local(), None, 0.0, now=100.0)
    assert instance == vrrp.Instance(vrrp.BACKUP, 100.0)
    _, became = run(instance, local(), None, lambda now: 0.0, 100.0, 110.0)
    assert became == pytest.approx(103.75)  # the first tick after 3.609 s


def test_a_backup_hearing_a_better_master_stays_backup():
    instance = vrrp.Instance(vrrp.BACKUP, 0.0)
    # Adverts every 0.25 s, each heard when sent.
    instance, became = run(instance, local(), A_RANK, lambda now: now, 0.0, 20.0)
    assert became is None and instance.state == vrrp.BACKUP


def test_the_backup_takes_over_master_down_interval_after_the_last_advert():
    last_advert = 50.0
    instance, became = run(
        vrrp.Instance(vrrp.BACKUP, 0.0), local(), A_RANK,
        lambda now: min(now, last_advert), 0.0, 60.0,
    )  # fmt: skip
    assert instance.state == vrrp.MASTER
    assert 3.609 <= became - last_advert < 3.609 + 0.25


def test_a_master_hearing_a_better_master_steps_down_at_once():
    instance = vrrp.step(vrrp.Instance(vrrp.MASTER, 5.0), local(), A_RANK, 9.9, now=10.0)
    assert instance.state == vrrp.BACKUP
    # An advert older than the takeover is the dead master's last one: no news.
    assert vrrp.step(vrrp.Instance(vrrp.MASTER, 10.0), local(), A_RANK, 9.9, 10.5).state == "Master"
    # A worse master's advert leaves a master in place (the other side steps down).
    assert vrrp.step(vrrp.Instance(vrrp.MASTER), local(A_RANK), B_RANK, 9.9, 10.0).state == "Master"


def test_a_better_backup_preempts_when_its_timer_runs_out_and_never_without_preempt():
    start = vrrp.Instance(vrrp.BACKUP, 0.0)
    _, became = run(start, local(A_RANK), B_RANK, lambda now: now, 0.0, 10.0)
    assert became == pytest.approx(3.75)  # B's adverts are ignored: the timer runs out
    _, became = run(start, local(A_RANK, preempt=False), B_RANK, lambda now: now, 0.0, 20.0)
    assert became is None


def test_equal_priority_never_preempts():
    tie = (110, (12, 0, 20, 250))
    _, became = run(vrrp.Instance(vrrp.BACKUP, 0.0), local(A_RANK), tie, lambda n: n, 0.0, 20.0)
    assert became is None


def test_an_instance_not_eligible_is_init():
    assert (
        vrrp.step(vrrp.Instance(vrrp.MASTER), local(eligible=False), None, 0, 1) == vrrp.Instance()
    )


def test_the_switch_elects_through_its_keepalive_view_and_logs_each_change(caplog, monkeypatch):
    """Switch.tick feeds the peer's summary in: a dead master's backup takes over."""
    clock = [1000.0]
    monkeypatch.setattr("tests.lab.onyx.switch.time.monotonic", lambda: clock[0])
    switch = Switch(Identity("lab-sw-b", "3.10.2002", "7C:FE:90:11:00:0B", "127.0.0.1"))
    switch.cfg = lab_switch()
    for line in ("protocol vrrp", "interface vlan 30 vrrp 30",
                 "interface vlan 30 vrrp 30 address 12.0.30.254"):  # fmt: skip
        switch.cfg.apply(line)
    master = {"eligible": True, "priority": 110, "ip": "12.0.30.254", "state": "Master",
              "advertising": True}  # fmt: skip
    peer = {**switch.summary(), "ipl_cut": False, "vrrp": {"30:30": master}}
    monkeypatch.setattr(switch, "status", lambda: {"peer": switch.peer(), "ipl_up": True})
    with caplog.at_level("INFO", logger="onyx.vrrp"):
        for _ in range(40):  # 10 s of adverts
            switch.receive(peer)
            switch.tick()
            clock[0] += 0.25
        assert switch.vrrp_state == {"30:30": "Backup"}
        for _ in range(16):  # the master is dead: 4 s without adverts
            switch.tick()
            clock[0] += 0.25
    assert switch.vrrp_state == {"30:30": "Master"}
    assert [r.getMessage() for r in caplog.records] == [
        "vrrp vlan 30 vrid 30: Init -> Backup",
        "vrrp vlan 30 vrid 30: Backup -> Master",
    ]


def vrrp30_switch(monkeypatch, clock) -> Switch:
    monkeypatch.setattr("tests.lab.onyx.switch.time.monotonic", lambda: clock[0])
    switch = Switch(Identity("lab-sw-a", "3.10.2002", "7C:FE:90:11:00:0A", "127.0.0.1"))
    switch.cfg = lab_switch()
    for line in ("protocol vrrp", "interface vlan 30 vrrp 30",
                 "interface vlan 30 vrrp 30 address 12.0.30.254"):  # fmt: skip
        switch.cfg.apply(line)
    monkeypatch.setattr(switch, "status", lambda: {"peer": switch.peer(), "ipl_up": True})
    return switch


def test_a_master_advertises_once_its_dataplane_holds_the_virtual_ip(monkeypatch):
    """A preempting Master whose agent has not yet added the address sends no advert, so
    the Master it preempts keeps the address until the new one forwards for it."""
    clock = [1000.0]
    switch = vrrp30_switch(monkeypatch, clock)
    switch.dataplane_links = frozenset()  # a dataplane that has applied nothing yet
    for _ in range(16):  # alone for 4 s: elected Master
        switch.tick()
        clock[0] += 0.25
    assert switch.vrrp_state == {"30:30": "Master"}
    assert switch.summary()["vrrp"]["30:30"]["advertising"] is False
    switch.dataplane_links = frozenset({"vlan30", "vlan30-v30"})
    assert switch.summary()["vrrp"]["30:30"]["advertising"] is True
    switch.dataplane_links = None  # no dataplane (the integration tier): as elected
    assert switch.summary()["vrrp"]["30:30"]["advertising"] is True


def test_a_master_that_does_not_advertise_yet_does_not_hold_a_backup_down(monkeypatch):
    clock = [1000.0]
    switch = vrrp30_switch(monkeypatch, clock)
    silent = {"eligible": True, "priority": 120, "ip": "12.0.30.253", "state": "Master",
              "advertising": False}  # fmt: skip
    peer = {**switch.summary(), "ipl_cut": False, "vrrp": {"30:30": silent}}
    for _ in range(16):
        switch.receive(peer)
        switch.tick()
        clock[0] += 0.25
    assert switch.vrrp_state == {"30:30": "Master"}
