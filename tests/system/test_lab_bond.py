"""An LACP bond over both data ports survives losing either switch.

The two hosts are cabled back to back through the two switch sides, so each bond's
LACP partner is the other host's bond: one system id on both ports, one aggregator.
"""

from __future__ import annotations

import re
import time

import pytest

from tests.lab.vm.topology import DATA_NETDEVS

pytestmark = pytest.mark.lab

BOND = "ltbond0"
ADDRESSES = {"lab-host1": "10.250.20.1", "lab-host2": "10.250.20.2"}
PING_INTERVAL_S = 0.2
PING_COUNT = 100


def bond_state(host) -> dict:
    """Per member: MII status, aggregator id and partner system MAC from /proc/net/bonding."""
    text = host.run(f"cat /proc/net/bonding/{BOND}")
    members = {}
    for block in text.split("Slave Interface: ")[1:]:
        name = block.split()[0]
        members[name] = {
            "mii": re.search(r"MII Status: (\w+)", block).group(1),
            "aggregator": re.search(r"Aggregator ID: (\d+)", block).group(1),
            "partner": re.search(
                r"system mac address: ([0-9a-f:]+)", block.split("partner")[1]
            ).group(1),
        }
    return members


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(1)


@pytest.fixture
def lacp_bonds(clean_lab, host1, host2):
    for host in (host1, host2):
        members = " && ".join(
            f"ip link set {port} down && ip link set {port} master {BOND}" for port in DATA_NETDEVS
        )
        host.run(
            f"modprobe bonding max_bonds=0 && "
            f"ip link add {BOND} type bond mode 802.3ad miimon 100 lacp_rate fast "
            f"xmit_hash_policy layer3+4 && {members} && ip link set {BOND} up && "
            f"ip address add {ADDRESSES[host.name]}/24 dev {BOND}"
        )
    return host1, host2


def test_lacp_aggregates_both_ports_across_the_two_switches(lacp_bonds):
    for host, peer in (lacp_bonds, lacp_bonds[::-1]):
        seen = {}

        def aggregated(host=host, peer=peer, seen=seen):
            # Read the peer's MAC each time: udev may give a new bond its own MAC late.
            seen["peer_mac"] = peer.run(f"cat /sys/class/net/{BOND}/address").strip()
            seen["state"] = state = bond_state(host)
            aggregators = {member["aggregator"] for member in state.values()}
            partners = {member["partner"] for member in state.values()}
            return len(aggregators) == 1 and partners == {seen["peer_mac"]}

        try:
            wait_for(aggregated, 90, f"{host.name}: both ports in one aggregator")
        except AssertionError as exc:
            raise AssertionError(
                f"{exc}: peer bond {seen.get('peer_mac')}, {seen.get('state')}"
            ) from None
        assert all(member["mii"] == "up" for member in seen["state"].values())


def test_bond_keeps_traffic_flowing_when_one_switch_fails(clean_lab, lacp_bonds):
    host1, host2 = lacp_bonds
    target = ADDRESSES[host2.name]
    wait_for(
        lambda: " 0% packet loss" in host1.run(f"busybox ping -c 2 -W 2 {target}", check=False),
        60,
        "the bond to pass traffic",
    )
    host1.start(
        f"busybox ping -i {PING_INTERVAL_S} -c {PING_COUNT} -W 2 {target}", "/tmp/lt-ping.log"
    )
    time.sleep(3)
    for side, port in zip(("a", "b"), DATA_NETDEVS, strict=True):
        clean_lab.cut(side)
        for host in lacp_bonds:  # the cut is real: both hosts lost that port's carrier
            assert host.run(f"cat /sys/class/net/{port}/carrier").strip() == "0"
            wait_for(lambda h=host, p=port: bond_state(h)[p]["mii"] == "down", 10, "MII down")
        time.sleep(4)
        clean_lab.restore(side)
        wait_for(lambda p=port: bond_state(host1)[p]["mii"] == "up", 10, f"{port} back in the bond")
        time.sleep(2)
    out = wait_for(
        lambda: (log := host1.run("cat /tmp/lt-ping.log")) and "packet loss" in log and log,
        PING_COUNT * PING_INTERVAL_S + 30,
        "the background ping to finish",
    )
    counts = re.search(r"(\d+) packets transmitted, (\d+) .*received", out)
    sent, received = int(counts.group(1)), int(counts.group(2))
    assert sent == PING_COUNT
    # Failover is carrier-driven (miimon 100 ms): a few lost echoes at most per cut.
    assert sent - received <= 6, out
