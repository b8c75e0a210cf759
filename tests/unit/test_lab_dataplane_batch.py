"""The dataplane agent's converge script: consecutive ip/bridge commands in one batch
each, so that a blank switch costs the TCG fabric guest a handful of processes, not
two per command (the 60 s SSH timeout a blank NVUE pair once hit)."""

from __future__ import annotations

import shutil
import subprocess
import uuid

import pytest

from tests.lab.nvue.converge_cost import blank_commands
from tests.lab.onyx import dataplane_agent

MARK = dataplane_agent.MARK


def test_a_blank_nvue_switch_converges_with_a_handful_of_processes():
    commands = blank_commands("lab-sw-a")
    script, execs = dataplane_agent.converge_script("lab-sw-a", commands)
    # One by one, each command was `ip netns exec <ns> <tool>`: 2 processes each.
    assert len(commands) == 78 and 2 * len(commands) == 156
    assert execs == 14  # 3 ip + 3 bridge batches, 4 nft commands one by one
    assert script.count("-force -batch -") == 6
    assert dataplane_agent.SSH_TIMEOUT + dataplane_agent.EXEC_SECONDS * execs == 74


def test_failed_lines_map_back_to_their_commands():
    commands = [["ip", "link", "add", "br0", "type", "bridge"], ["ip", "link", "set", "br0", "up"],
                ["nft", "add", "table", "bridge", "t"], ["bridge", "vlan", "add", "vid", "10"],
                ["bridge", "vlan", "add", "vid", "20"]]  # fmt: skip
    script, execs = dataplane_agent.converge_script("ns", commands)
    assert execs == 4 and "ip -n ns -force -batch - 2>&1" in script
    answer = (f"{MARK}-batch 0\nRTNETLINK answers: File exists\nCommand failed -:2\n"
              f"{MARK}-stopped 0 2 1\n{MARK}-failed 2 1\n{MARK}-batch 3\n"
              f"Command failed -:1\n{MARK}-stopped 3 5 255\n")  # fmt: skip
    # The second batch stopped after its first line: the one after it may not have run.
    assert dataplane_agent.failed_commands(answer) == [1, 2, 3, 4]


def test_an_argument_a_batch_line_cannot_carry_runs_alone():
    commands = [["ip", "link", "set", "a", "alias", "two words"], ["ip", "link", "set", "a", "up"]]
    script, execs = dataplane_agent.converge_script("ns", commands)
    assert "ip netns exec ns ip link set a alias 'two words' || echo" in script and execs == 3


@pytest.mark.skipif(shutil.which("ip") is None or shutil.which("bridge") is None,
                    reason="iproute2 not installed")  # fmt: skip
def test_the_script_runs_in_a_real_namespace_and_reports_what_failed():
    ns = f"cxbatch-{uuid.uuid4().hex[:8]}"
    if subprocess.run(["ip", "netns", "add", ns], capture_output=True).returncode != 0:
        pytest.skip("no network namespaces here (needs root)")
    try:
        commands = [["ip", "link", "add", "br0", "type", "bridge"],
                    ["ip", "link", "add", "x0", "type", "no-such-kind"],
                    ["ip", "link", "set", "br0", "up"],
                    ["bridge", "link", "set", "dev", "no-such-port", "learning", "off"],
                    ["ip", "link", "set", "br0", "mtu", "9000"],
                    # iproute2 exits at once on this one (`argument "nosuch" is wrong`):
                    ["ip", "link", "set", "br0", "master", "nosuch"],
                    ["ip", "link", "set", "br0", "mtu", "1500"]]  # fmt: skip
        script, execs = dataplane_agent.converge_script(ns, commands)
        done = subprocess.run(["bash", "-s"], input=script, text=True, capture_output=True,
                              timeout=30, check=True)  # fmt: skip
        # The third batch stopped with nothing reported: each of its lines may not have
        # run (4 did, 5 stopped it, 6 never ran); the agent converges again next round.
        assert dataplane_agent.failed_commands(done.stdout) == [1, 3, 4, 5, 6], done.stdout
        link = subprocess.run(["ip", "-n", ns, "-d", "link", "show", "br0"], text=True,
                              capture_output=True, check=True).stdout  # fmt: skip
        assert "mtu 9000" in link and "bridge" in link and execs == 3
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=True)
