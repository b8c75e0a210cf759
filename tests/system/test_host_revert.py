"""Lab tier: a host_network change that cuts the controller off is undone by the host.

A test-only copy of the lab inventory moves VLAN 10 into 10.0.2.0/25, inside the
guests' management /24 (enp0s16, 10.0.2.15/24, the controller seen as 10.0.2.2).
The planner accepts it (the change never names enp0s16), but the more specific
route sends the replies to 10.0.2.2 out of bond0.10: SSH is cut the moment the
address lands. The canary host must put itself back at its revert deadline (its
result.json records both times), answer SSH again, and the run must say it
reverted; the second host, behind the canary, is never touched. Runs with the good
inventory then converge.
"""

from __future__ import annotations

import json
import shutil
import time

import pytest
import yaml

from tests.lab.vm.topology import GUESTS, INVENTORY_DIR
from tests.system.deployment import Deployment
from tests.tools.inventory import write_copy

pytestmark = [pytest.mark.lab, pytest.mark.slow, pytest.mark.revert, pytest.mark.timeout(1800)]

CANARY, OTHER = (guest.name for guest in GUESTS)
REVERT_SECONDS = 20
# The watchdog wakes every second at most; a loaded TCG guest may be a little slower.
RESTORE_SLACK_SECONDS = 5
RECORD_DIR = "/run/cxfab/network-rollback"
VLAN = 10
# Inside the management 10.0.2.0/24 and more specific than it.
CUTTING_ADDRESSES = {CANARY: "10.0.2.100/25", OTHER: "10.0.2.101/25"}
# What a change can alter on a guest, and what it must leave as it was.
LINKS = ("bond0", "bond0.10", "bond0.20", "bond0.30", "ens1f0", "ens1f1", "enp0s16")


def cutting_inventory(deployed: Deployment, destination) -> Deployment:
    """The lab inventory with VLAN 10 moved into the management subnet, a short timer."""
    fabric = deployed.intent(CANARY)
    index = next(i for i, v in enumerate(fabric["cxfab_vlans"]) if v["id"] == VLAN)
    patches = [
        {"path": f"cxfab_vlans[{index}].subnet", "value": "10.0.2.0/25"},
        {"path": f"cxfab_vlans[{index}].gateway.virtual_ip", "value": "10.0.2.126"},
        {
            "path": f"cxfab_vlans[{index}].svi_addresses",
            "value": {"lab-sw-a": "10.0.2.124/25", "lab-sw-b": "10.0.2.125/25"},
        },
    ]
    for host, address in CUTTING_ADDRESSES.items():
        intent = deployed.intent(host)["cxfab_host"]
        vlan = next(i for i, v in enumerate(intent["vlans"]) if v["id"] == VLAN)
        patches += [
            {"host": host, "path": f"cxfab_host.vlans[{vlan}].address", "value": address},
            deployed.image_patch(host),
        ]
    copy = write_copy(INVENTORY_DIR, destination, patches)
    timer = {"host_network_revert_seconds": REVERT_SECONDS, "host_network_revert_margin": 90}
    (copy / "group_vars" / "hosts" / "revert.yml").write_text(yaml.safe_dump(timer))
    return Deployment(copy)


def network_state(host) -> dict:
    """Links (flags, MTU, master, addresses), the route back to the controller, the files."""
    links = {}
    for link in json.loads(host.run("ip -j -d addr show")):
        if link["ifname"] in LINKS:
            addresses = sorted(
                f"{a['local']}/{a['prefixlen']}"
                for a in link.get("addr_info", [])
                if a.get("family") == "inet"
            )
            keep = ("flags", "mtu", "master")
            links[link["ifname"]] = {**{k: link.get(k) for k in keep}, "addresses": addresses}
    (route,) = json.loads(host.run("ip -j route get 10.0.2.2"))
    files = host.run("cd /etc/systemd/network && sha256sum 60-cxfab-* 2>/dev/null", check=False)
    return {"links": links, "route": route["dev"], "files": files}


def flat(run) -> str:
    """The run's output with YAML's line folding undone (long messages wrap)."""
    return " ".join(run.output.split())


def rollback_result(host) -> dict:
    return json.loads(host.run(f"cat {RECORD_DIR}/result.json"))


@pytest.fixture
def guests(lab) -> dict:
    return {host.name: host for host in lab.hosts}


def test_a_change_that_cuts_ssh_is_reverted_by_the_canary_and_stops_the_rest(
    deployed, guests, tmp_path
):
    cutting = cutting_inventory(deployed, tmp_path / "inventory")
    canary, other = guests[CANARY], guests[OTHER]
    before = {name: network_state(host) for name, host in guests.items()}
    assert before[CANARY]["route"] == "enp0s16"
    for host in guests.values():
        host.run(f"rm -rf {RECORD_DIR}")

    # The planner does not refuse it up front: check mode plans the address on bond0.10
    # over the live state (the connection's interfaces are computed there) and arms nothing.
    check = cutting.play("host_network.yml", "--check", "-v")
    assert check.returncode == 0, check.tail()
    assert f"add_address bond0.10 (address={CUTTING_ADDRESSES[CANARY]})" in flat(check)
    assert canary.run(f"ls {RECORD_DIR} 2>/dev/null || true").strip() == ""

    started = time.monotonic()
    run = cutting.play("host_network.yml")
    elapsed = time.monotonic() - started
    assert run.returncode != 0, run.tail()
    output = flat(run)
    assert f"reverted: not confirmed within {REVERT_SECONDS} s, restored" in output, run.tail()
    assert f"del_address bond0.10 (address={CUTTING_ADDRESSES[CANARY]})" in output, run.tail()
    assert run.recap[CANARY]["failed"] == 1, run.tail()
    # The canary's failure ends the play: the second host is never changed.
    assert run.recap.get(OTHER, {"changed": 0})["changed"] == 0, run.tail()
    assert network_state(other) == before[OTHER]
    assert other.run(f"ls {RECORD_DIR} 2>/dev/null || true").strip() == ""

    # The canary answers SSH again, exactly as before, and restored itself in time.
    assert canary.run("true", timeout=60) == ""
    assert network_state(canary) == before[CANARY]
    result = rollback_result(canary)
    assert result["state"] == "reverted" and result["errors"] == [], result
    # The watchdog restored at its deadline, not before and not much after (host clock).
    late = result["started"] - result["deadline"]
    assert 0 <= late <= RESTORE_SLACK_SECONDS, result
    assert elapsed < REVERT_SECONDS + 90 + 120, f"the failed run took {elapsed:.0f}s"

    # With the good inventory: a change (an address removed by hand on the second host)
    # is made, confirmed over a fresh connection and kept; then nothing changes.
    vlan_address = deployed.intent(OTHER)["cxfab_host"]["vlans"][-1]["address"]
    other.run(f"ip address del {vlan_address} dev bond0.30")
    second = deployed.play("host_network.yml")
    assert second.returncode == 0, second.tail()
    assert second.recap[OTHER]["changed"] >= 1, second.tail()
    confirmed = rollback_result(other)
    assert confirmed["state"] == "confirmed", confirmed
    assert other.run(f"ls {RECORD_DIR}/armed.json 2>/dev/null || true").strip() == ""
    third = deployed.play("host_network.yml")
    assert third.returncode == 0, third.tail()
    assert {h: third.recap[h]["changed"] for h in guests} == dict.fromkeys(guests, 0), third.tail()
    assert {name: network_state(host) for name, host in guests.items()} == before
    shutil.rmtree(tmp_path / "inventory")
