"""Lab tier: a host_network change that cuts the controller off is undone by the host.

A test-only copy of the lab inventory moves VLAN 10 into 10.0.2.0/25, inside the
guests' management /24 (enp0s16, 10.0.2.15/24, the controller seen as 10.0.2.2).
The planner accepts it (the change never names enp0s16), but the more specific
route sends the replies to 10.0.2.2 out of bond0.10: SSH is cut the moment the
address lands. The canary host must put itself back at its revert deadline, answer SSH
again, and the run must say it reverted; the other host is never touched. Runs with
the good inventory then converge. Once per backend:

- networkd (lab-host1, the canary, lab-host2 behind it): cxfab's watchdog restores the
  snapshot; its result.json records the deadline and when it started;
- NetworkManager (lab-host2 first in the copy's hosts.yml, so the canary, lab-host1
  behind it): NetworkManager rolls its checkpoint back by itself; its log says when.
"""

from __future__ import annotations

import json
import re
import shutil
import time

import pytest
import yaml
from cxfab.structured import nmkeyfile

from tests.lab.vm.topology import GUESTS, INVENTORY_DIR
from tests.system.deployment import Deployment
from tests.tools.inventory import write_copy

pytestmark = [pytest.mark.lab, pytest.mark.slow, pytest.mark.revert, pytest.mark.timeout(1800)]

NETWORKD_HOST, NM_HOST = (guest.name for guest in GUESTS)
# networkd's change (netlink) lands in a second or two; NetworkManager's (its profiles
# activated one by one under TCG) took over 20 s once, and its checkpoint ran out while
# nmcli still worked: the revert came, but not for the cut this test is about.
REVERT_SECONDS = {"networkd": 20, "networkmanager": 45}
# The watchdog wakes every second at most; a loaded TCG guest may be a little slower.
RESTORE_SLACK_SECONDS = 5
BUSCTL_SLACK_SECONDS = 2
RECORD_DIR = "/run/cxfab/network-rollback"
KEYFILES = "/etc/NetworkManager/system-connections"
VLAN = 10
# Inside the management 10.0.2.0/24 and more specific than it.
CUTTING_ADDRESSES = {NETWORKD_HOST: "10.0.2.100/25", NM_HOST: "10.0.2.101/25"}
# Per backend: the canary (first in the inventory), then the other host.
CASES = {"networkd": (NETWORKD_HOST, NM_HOST), "networkmanager": (NM_HOST, NETWORKD_HOST)}
NM_LOG = "/run/cxfab-lab-nm/NetworkManager.log"  # tests/tools/nm_guest.py
# NetworkManager 1.42's line when a checkpoint's timeout runs out, as its log shows:
# "<info>  [1795822718.0580] checkpoint[0x56247ef034e0]: rollback of /org/.../Checkpoint/3"
NM_ROLLBACK = re.compile(r"\[(\d+\.\d+)\] checkpoint\[\w+\]: rollback of (\S+)")
# What a change can alter on a guest, and what it must leave as it was.
STALE_VLAN = "bond0.40"  # not in the lab's intent
LINKS = ("bond0", "bond0.10", "bond0.20", "bond0.30", "ens1f0", "ens1f1", "enp0s16")


def cutting_inventory(deployed: Deployment, destination, canary: str, seconds: int) -> Deployment:
    """The lab inventory with VLAN 10 moved into the management subnet, a short timer,
    `canary` first among the hosts."""
    fabric = deployed.intent(NETWORKD_HOST)
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
    timer = {"host_network_revert_seconds": seconds, "host_network_revert_margin": 90}
    (copy / "group_vars" / "hosts" / "revert.yml").write_text(yaml.safe_dump(timer))
    hosts_file = copy / "hosts.yml"
    tree = yaml.safe_load(hosts_file.read_text())
    group = tree["all"]["children"]["hosts"]
    group["hosts"] = {canary: group["hosts"][canary], **group["hosts"]}  # the play's order
    hosts_file.write_text(yaml.safe_dump(tree, sort_keys=False))
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
    return {"links": links, "route": route["dev"], "files": files, "profiles": profiles(host)}


def profiles(host) -> dict:
    """cxfab's NetworkManager profiles in the comparable form the module judges them by:
    NetworkManager's rollback writes a restored profile back in its own layout (keys
    reordered, its defaults spelled out), the same profile in other bytes."""
    listing = host.run(
        f"for f in {KEYFILES}/cxfab-*; do [ -e $f ] && echo '=== '$f && cat $f; done; true"
    )
    files = {}
    for chunk in listing.split("=== ")[1:]:
        name, _, text = chunk.partition("\n")
        files[name] = text
    return nmkeyfile.read_keyfiles(files) if files else {}


def flat(run) -> str:
    """The run's output with YAML's line folding undone (long messages wrap)."""
    return " ".join(run.output.split())


def rollback_result(host) -> dict:
    return json.loads(host.run(f"cat {RECORD_DIR}/result.json"))


@pytest.fixture
def guests(lab) -> dict:
    return {host.name: host for host in lab.hosts}


def restored_at(host, backend: str, result: dict) -> float:
    """When the canary restored itself (host clock): the watchdog's record on networkd;
    on NetworkManager its own log line of the checkpoint's rollback (time stamped in
    seconds since the epoch)."""
    if backend == "networkd":
        return result["started"]
    rollbacks = NM_ROLLBACK.findall(host.run(f"cat {NM_LOG}"))
    assert rollbacks, f"no checkpoint rollback in NetworkManager's log ({NM_LOG})"
    stamp, checkpoint = rollbacks[-1]
    assert result["restored"] == [f"NetworkManager rolled back checkpoint {checkpoint}"], result
    return float(stamp)


@pytest.mark.parametrize("backend", list(CASES))
def test_a_change_that_cuts_ssh_is_reverted_by_the_canary_and_stops_the_rest(
    deployed, guests, tmp_path, backend
):
    canary_name, other_name = CASES[backend]
    seconds = REVERT_SECONDS[backend]
    cutting = cutting_inventory(deployed, tmp_path / "inventory", canary_name, seconds)
    canary, other = guests[canary_name], guests[other_name]
    before = {name: network_state(host) for name, host in guests.items()}
    assert before[canary_name]["route"] == "enp0s16"
    for host in guests.values():
        host.run(f"rm -rf {RECORD_DIR}")

    if backend == "networkd":  # the plan is the backends' common part: once
        # The planner does not refuse it up front: check mode plans the address on
        # bond0.10 over the live state (the connection's interfaces are computed there)
        # and arms nothing.
        check = cutting.play("host_network.yml", "--check", "-v")
        assert check.returncode == 0, check.tail()
        assert f"add_address bond0.10 (address={CUTTING_ADDRESSES[canary_name]})" in flat(check)
        assert canary.run(f"ls {RECORD_DIR} 2>/dev/null || true").strip() == ""

    started = time.monotonic()
    run = cutting.play("host_network.yml")
    elapsed = time.monotonic() - started
    assert run.returncode != 0, run.tail()
    output = flat(run)
    assert f"reverted: not confirmed within {seconds} s, restored" in output, run.tail()
    if backend == "networkd":  # the watchdog lists what it undid
        cut = CUTTING_ADDRESSES[canary_name]
        assert f"del_address bond0.10 (address={cut})" in output, run.tail()
    else:
        assert "restored NetworkManager rolled back checkpoint" in output, run.tail()
    assert run.recap[canary_name]["failed"] == 1, run.tail()
    # The canary's failure ends the play: the second host is never changed.
    assert run.recap.get(other_name, {"changed": 0})["changed"] == 0, run.tail()
    assert network_state(other) == before[other_name]
    assert other.run(f"ls {RECORD_DIR} 2>/dev/null || true").strip() == ""

    # The canary answers SSH again, exactly as before, and restored itself in time.
    assert canary.run("true", timeout=60) == ""
    assert network_state(canary) == before[canary_name]
    result = rollback_result(canary)
    assert result["state"] == "reverted" and result["errors"] == [], result
    # Restored at its deadline, not before and not much after (host clock).
    late = restored_at(canary, backend, result) - result["deadline"]
    # (cxfab records NetworkManager's deadline once CheckpointCreate has answered, so
    # NetworkManager's own clock starts up to a busctl round trip earlier.)
    early = 0 if backend == "networkd" else BUSCTL_SLACK_SECONDS
    assert -early <= late <= RESTORE_SLACK_SECONDS, (late, result)
    assert elapsed < seconds + 90 + 120, f"the failed run took {elapsed:.0f}s"

    # With the good inventory a change is made, confirmed over a fresh connection and
    # kept, on the canary only; then nothing changes. networkd: an address removed by
    # hand. NetworkManager: the restored profile, which NetworkManager's rollback wrote
    # back in its own layout, written as cxfab's file again. Both: a stale VLAN.
    if backend == "networkd":
        vlan_address = deployed.intent(canary_name)["cxfab_host"]["vlans"][-1]["address"]
        canary.run(f"ip address del {vlan_address} dev bond0.30")
    # And a VLAN on the bond that the intent does not name: the run deletes it
    # (linkplan.stale_links; on NetworkManager no profile holds it, so over netlink).
    canary.run(f"ip link add link bond0 name {STALE_VLAN} type vlan id 40")
    second = deployed.play("host_network.yml")
    assert second.returncode == 0, second.tail()
    assert canary.run(f"ip -o link show {STALE_VLAN} 2>/dev/null || true").strip() == ""
    assert second.recap[canary_name]["changed"] >= 1, second.tail()
    assert second.recap.get(other_name, {"changed": 0})["changed"] == 0, second.tail()
    confirmed = rollback_result(canary)
    assert confirmed["state"] == "confirmed", confirmed
    assert canary.run(f"ls {RECORD_DIR}/armed.json 2>/dev/null || true").strip() == ""
    third = deployed.play("host_network.yml")
    assert third.returncode == 0, third.tail()
    assert {h: third.recap[h]["changed"] for h in guests} == dict.fromkeys(guests, 0), third.tail()
    assert {name: network_state(host) for name, host in guests.items()} == before
    shutil.rmtree(tmp_path / "inventory")
