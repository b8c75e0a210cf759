"""The emulated switches speak LLDP on their cables, and a swapped pair of cables shows.

Each switch namespace of lab-fabric runs lldpd naming its switch and advertising
`Eth1/N` on each port (tests/lab/vm/fabric.py). The test starts an lldpd of its own on
each host guest (socket /run/lt-lldpd.socket, so a host's own lldpd is left alone) and
reads the neighbours from both ends:

- the host: `lldpcli -u /run/lt-lldpd.socket -f json0 show neighbors`: per data port
  one neighbour, system name = the switch of the lab's cabling, port id = `Eth1/N`;
- the switch: the emulated Onyx CLI's `show lldp interfaces ethernet 1/N remote`,
  whose `Remote system name` / `Remote port-id` are the host and its port's MAC.

A swapped pair of cables (`fail swap lab-host1`) is tested once, on the deployed lab,
by tests/system/test_cabling.py: both ends see it there, and verify names it.
"""

from __future__ import annotations

import pytest

from tests.lab.vm import lab as labctl
from tests.lab.vm.topology import DATA_NETDEVS
from tests.system.switchpair import (
    expected_hosts_view,
    expected_switch_view,
    host_neighbours,
    switch_remote,
    switches_see,
    wait_for,
)

pytestmark = pytest.mark.lab

SOCKET = "/run/lt-lldpd.socket"
CONF = "/run/lt-lldpd.conf"
PID = "/run/lt-lldpd.pid"
TIMEOUT_S = 90  # lldpd sends every 5 s on both ends; a TCG guest under load is slow
SWAPPED = "lab-host1"


def start_lldpd(host) -> None:
    conf = "\n".join(
        [
            f"configure system hostname {host.name}",
            "configure lldp tx-interval 5",
            "configure lldp tx-hold 4",
        ]
    )
    ports = ",".join(DATA_NETDEVS)
    host.run(
        f"mkdir -p /run/lldpd && printf '%s\\n' '{conf}' >{CONF} && "
        + " && ".join(f"ip link set {port} up" for port in DATA_NETDEVS)
        + f" && {{ nohup lldpd -d -u {SOCKET} -I {ports} -O {CONF} </dev/null "
        f">/run/lt-lldpd.log 2>&1 & echo $! >{PID}; }}"
    )


def stop_lldpd(host) -> None:
    """Stops the test's lldpd (its monitor; the privilege-separated child follows)."""
    host.run(f"[ -f {PID} ] && kill $(cat {PID}); rm -f {PID} {SOCKET} {SOCKET}.lock; true")


@pytest.fixture
def lldp_lab(lab):
    """Bare data ports wired through the switch pair, an lldpd on each host guest."""
    for host in lab.hosts:
        for port in DATA_NETDEVS:
            link = host.run(f"ip -o link show dev {port}")
            if " master " in link:
                pytest.fail(f"{host.name}: {port} is in a bond: the lab tests need bare ports")
    lab.reset()
    if labctl.wiring() != "fabric":
        labctl.wire("fabric")
    for host in lab.hosts:
        stop_lldpd(host)
        start_lldpd(host)
    yield lab
    if SWAPPED in labctl.swapped_hosts():
        labctl.set_swap(SWAPPED, swapped=False)
    for host in lab.hosts:
        stop_lldpd(host)
    lab.reset()


def wait_hosts_see(lab, want) -> None:
    def check():
        seen = {host.name: host_neighbours(host, SOCKET) for host in lab.hosts}
        return seen if all(seen[h] == want[h] for h in want) else None

    wait_for(check, TIMEOUT_S, f"the hosts' LLDP neighbours to be {want}", every=2)


def test_lldp_neighbours_follow_the_cabling(lldp_lab):
    wait_hosts_see(lldp_lab, expected_hosts_view(set()))
    what = "each switch port's LLDP remote to be its cabled host port"
    seen = wait_for(lambda: switches_see(expected_switch_view(set())), TIMEOUT_S, what, every=2)
    assert seen == {key: [remote] for key, remote in expected_switch_view(set()).items()}
    one = switch_remote("lab-sw-a", "1/1")
    assert one["_text"].splitlines()[:2] == ["Ethernet 1/1", "Remote Index: 1"]
    assert one["Remote chassis id"].endswith("; chassis id subtype: mac")
    assert one["Remote port-id"].endswith("; port id subtype: mac")
