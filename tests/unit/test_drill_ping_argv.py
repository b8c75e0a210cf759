"""cxfab_drill_ping's background ping: bounded by a probe count, never by a deadline.

iputils ping with -w exits at the first ICMP error from the network (checked with a
namespace answering Destination Host Unreachable: `-w 5` ended after one probe, `-c 25`
sent all 25). A failover drill provokes such errors, and a ping that ended there left
its path unmeasured at the switch's return (the lab's VRRP drill, 2026-11-24)."""

from __future__ import annotations

from plugin_loading import load_plugin

drill_ping = load_plugin("library", "cxfab_drill_ping")


def test_the_duration_is_a_count_of_probes_not_a_deadline():
    argv = drill_ping.ping_argv(0.2, 60, "vlan20", "12.0.20.1")
    assert "-w" not in argv
    assert argv[argv.index("-c") + 1] == "300"  # 60 s of probes every 0.2 s
    assert argv[argv.index("-i") + 1] == "0.2" and argv[-3:] == ["-I", "vlan20", "12.0.20.1"]
    assert {"-D", "-O", "-n"} <= set(argv)  # the timeline drill.py reads


def test_a_duration_shorter_than_one_interval_still_sends_a_probe():
    argv = drill_ping.ping_argv(2.5, 1, "vlan10", "12.0.10.1")
    assert argv[argv.index("-c") + 1] == "1"
