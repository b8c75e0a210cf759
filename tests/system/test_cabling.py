"""Lab tier: verify's cabling check names a swapped pair of cables, and passes healed.

site.yml leaves lldpd running on every host (rdma_stack_daemons); the switches of the
dataplane twin send LLDP with their names and `Eth1/N` port ids (tests/lab/onyx/lldp.py).
`fail swap lab-host1` crosses host 1's two cables at the switches: forwarding goes on
(both ports are in one MPO), only LLDP shows it. verify.yml's host section must fail
`link.<port>.neighbour` on both of host 1's ports, each naming the host port, the
switch port it reaches and the one the inventory cables it to; host 2 stays green.
The switches' own LLDP view (`show lldp interfaces ethernet 1/N remote`) shows the
same crossing while swapped. Healed, every neighbour check passes again.

The two verify runs are `--tags verify_cabling`: the host facts without the pings and
the neighbour checks alone (the section an operator runs after a re-cabling). They
took 44 and 56 s as `--tags verify_hosts --skip-tags verify_health,verify_dataplane`
(CI run of 425d796), 100 s and more as the whole host section.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.lab.vm import lab as labctl
from tests.lab.vm.topology import DATA_NETDEVS
from tests.system.deployment import Deployment
from tests.system.switchpair import (
    expected_hosts_view,
    expected_switch_view,
    host_neighbours,
    switches_see,
    wait_for,
)

pytestmark = [pytest.mark.lab, pytest.mark.timeout(1200)]

SWAPPED, OTHER = "lab-host1", "lab-host2"
# The switches send every 5 s and the swap drops carrier on all four ends, so both
# lldpd ends forget the old neighbour at once. Awaited on host 1's lldpd, so verify
# reads the state it judges (a fixed 15 s before; no time was saved, 46-60 s a call
# either way); the bound leaves a slow guest room.
HOST_VIEW_S = 60
# The switches' view of the crossing, once the hosts' lldpd (every 30 s) has sent again.
SWITCH_VIEW_S = 90


def neighbour_checks(deployed: Deployment, reports: Path) -> dict[tuple[str, str], dict]:
    deployed.play("verify.yml", "--tags", "verify_cabling", reports=reports)
    data = json.loads((reports / "latest" / "report.json").read_text())
    # The cabling alone: nothing else judged, nothing else read.
    assert data["meta"]["sections"] == ["cabling"], data["meta"]
    assert {c["id"].rsplit(".", 1)[1] for c in data["checks"]} == {"neighbour"}, data["checks"]
    return {(c["target"], c["id"]): c for c in data["checks"]}


def host_sees(host, swapped: set[str]) -> bool:
    """Whether each data port of `host` has exactly the one neighbour the cabling says."""
    seen = host_neighbours(host)
    return {port: seen.get(port) for port in DATA_NETDEVS} == (
        expected_hosts_view(swapped)[host.name]
    )


def test_swapped_cables_fail_the_cabling_check_naming_both_ends(deployed, host1, tmp_path_factory):
    assert host1.name == SWAPPED
    intent = deployed.intent(SWAPPED)["cxfab_host"]
    cabled = {p["netdev"]: f"{p['peer']} Eth{p['peer_port']}" for n in intent["nics"]
              for p in n["ports"] if p.get("peer")}  # fmt: skip
    assert len(cabled) == 2, intent
    try:
        labctl.apply_fault(["swap", SWAPPED], active=True)
        what = "host 1's lldpd to show its cables crossed"
        wait_for(lambda: host_sees(host1, {SWAPPED}), HOST_VIEW_S, what, every=1)
        found = neighbour_checks(deployed, tmp_path_factory.mktemp("swapped"))
        crossed = expected_switch_view({SWAPPED})
        what = "the switches' LLDP to show host 1's cables crossed"
        wait_for(lambda: switches_see(crossed, only=False), SWITCH_VIEW_S, what, every=2)
    finally:
        labctl.apply_fault(["swap", SWAPPED], active=False)
    ports = sorted(cabled)
    for port, other in zip(ports, reversed(ports), strict=True):
        check = found[(SWAPPED, f"link.{port}.neighbour")]
        assert check["status"] == "fail", check
        # This port reaches what the intent cables the other port to: both ends named.
        assert check["observed"] == cabled[other], check
        assert check["message"] == (
            f"{SWAPPED} {port} reaches {cabled[other]}; the intent cables it to {cabled[port]}"
        ), check
    assert {c["status"] for (target, _), c in found.items() if target == OTHER} == {"pass"}

    # Healed, only the hosts' view is awaited: the switches keep the crossed neighbour
    # until the host's lldpd TTL (4 x 30 s) runs out, over 105 s on the lab.
    wait_for(lambda: host_sees(host1, set()), HOST_VIEW_S, "host 1's lldpd healed", every=1)
    healed = neighbour_checks(deployed, tmp_path_factory.mktemp("healed"))
    assert len(healed) == 4 and {c["status"] for c in healed.values()} == {"pass"}, healed
