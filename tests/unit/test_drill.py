"""The failover drill's figures from real `ping -D -O` output (iputils 20221126)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cxfab.verify import drill

OUT = Path(__file__).resolve().parents[1] / "unit" / "outputs" / "dataplane"
TEXT = (OUT / "ping_drill.txt").read_text()
# In ping_drill.txt echo requests were dropped from about seq 16 (sent 1795445004.13)
# to seq 27; seq 28 (1795445005.378) was answered again.
DOWN, UP = 1795445004.10, 1795445005.30


def test_timeline_places_every_probe():
    timeline = drill.parse_timeline(TEXT, 0.1)
    assert timeline["transmitted"] == 39 and len(timeline["replies"]) == 27
    assert sorted(timeline["sent"]) == list(range(1, 40))
    # a lost probe: one interval before its "no answer yet" line
    assert timeline["sent"][16] == pytest.approx(1795445004.130023)


def test_loss_and_gap_at_the_failure_and_none_at_the_return():
    got = drill.figures(drill.parse_timeline(TEXT, 0.1), DOWN, UP, 0.1)
    assert got["failure"] == {
        "sent": 12, "measured": True, "lost": 12, "lost_seqs": "16-27", "longest_gap_s": 1.348,
        "recovered": True,
    }  # fmt: skip
    assert got["return"]["lost"] == 0 and got["return"]["longest_gap_s"] == 0.0
    assert got["return"]["measured"]
    assert (got["total_sent"], got["total_lost"]) == (39, 12)


def test_an_outage_that_never_ends_is_not_recovered():
    cut = TEXT.split("[1795445005.378043]")[0] + (
        "\n--- 12.0.10.1 ping statistics ---\n"
        "27 packets transmitted, 15 received, 44.4444% packet loss, time 2700ms\n"
    )
    got = drill.figures(drill.parse_timeline(cut, 0.1), DOWN, UP, 0.1)
    assert got["failure"]["lost"] == 12 and not got["failure"]["recovered"]


def test_a_window_with_the_loss_elsewhere_is_clean():
    got = drill.figures(drill.parse_timeline(TEXT, 0.1), 1795445002.0, 1795445003.5, 0.1)
    assert got["failure"]["lost"] == 0 and got["failure"]["longest_gap_s"] == 0.0
    assert got["return"]["lost"] == 12


def test_unreadable_ping_fails_closed():
    with pytest.raises(drill.DrillReadError, match="h1 -> gw: no timestamped ping timeline"):
        drill.parse_timeline("ping: bond0.10: No such device\n", 0.1, "h1 -> gw")
    plain = (OUT / "ping_ok.txt").read_text()  # without -D there are no timestamps
    with pytest.raises(drill.DrillReadError):
        drill.parse_timeline(plain, 0.2)


def test_mpo_lines_of_one_peer():
    sc = {"mlag_bonds": [{"id": 1}, {"id": 2}]}
    assert drill.mpo_lines(sc, shutdown=True) == [
        "interface mlag-port-channel 1 shutdown",
        "interface mlag-port-channel 2 shutdown",
    ]
    assert drill.mpo_lines(sc, shutdown=False)[1] == "interface mlag-port-channel 2 no shutdown"


def test_report_table_and_unreadable_targets():
    results = [
        {"host": "h1", "id": "drill.gateway.vlan10", "kind": "gateway", "address": "12.0.10.1",
         "stdout": TEXT},
        {"host": "h1", "id": "drill.peer.vlan10.h2", "kind": "peer", "address": "12.0.10.12",
         "stdout": "garbage"},
    ]  # fmt: skip
    got = drill.report(results, "lab-sw-a", DOWN, UP, 0.1)
    assert got["targets"][0]["failure"]["lost"] == 12
    assert (
        "| h1 | drill.gateway.vlan10 (12.0.10.1) | 12/12 | 1.348 | 0/12 | 0.0 |" in got["markdown"]
    )
    assert got["errors"] and "h1 -> drill.peer.vlan10.h2" in got["errors"][0]


def test_a_phase_without_a_probe_is_not_measured_never_zero_lost():
    # The pings ended before the return (up_at after the last probe).
    rows = [{"host": "h1", "id": "drill.gateway.vlan10", "kind": "gateway",
             "address": "12.0.10.1", "stdout": TEXT}]  # fmt: skip
    late = 1795445100.0
    got = drill.report(rows, "lab-sw-a", DOWN, late, 0.1, fault="fault command x")
    assert not got["targets"][0]["return"]["measured"]
    assert "| not measured | not measured |" in got["markdown"]
    assert got["errors"] == ["h1 -> drill.gateway.vlan10 (12.0.10.1): no probe was sent in "
                             "the return phase"]  # fmt: skip
    assert got["markdown"].startswith("# Failover drill: lab-sw-a, fault command x for")


def test_command_timestamps_are_read_or_refused():
    assert drill.command_epoch("2026-11-24 01:40:00.500000") % 1 == pytest.approx(0.5)
    with pytest.raises(drill.DrillReadError, match="not a command timestamp"):
        drill.command_epoch("yesterday")


def test_a_probe_in_flight_when_the_ping_was_ended_is_not_lost():
    stopped = TEXT.replace("39 packets transmitted", "40 packets transmitted")
    assert stopped != TEXT
    got = drill.figures(drill.parse_timeline(stopped, 0.1), DOWN, UP, 0.1)
    assert (got["total_sent"], got["total_lost"]) == (39, 12)
    assert got["return"]["recovered"]
