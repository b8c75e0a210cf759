"""Lab tier: the switch pair forwards the hosts' traffic, and a wrong switch config breaks it.

Runs on the lab as site.yml left it. Three switch faults are planted at once behind
cxfab's back (the emulator's control channel, not saved), each on a path the hosts
cannot avoid: host 1's cable to lab-sw-b and host 2's to lab-sw-a are pulled, so host 1
reaches everything through lab-sw-a, host 2 through lab-sw-b, and host 1 -> host 2 must
cross the IPL. One `verify.yml --tags verify_dataplane,verify_switches` run must name
each fault with what it observed. The switches are then restarted from their saved
config, the cables plugged back, and the dataplane section must pass again.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.lab.vm import lab as labctl
from tests.system import switchpair
from tests.system.deployment import Deployment
from tests.system.switchpair import ctl

pytestmark = [pytest.mark.lab, pytest.mark.dataplane, pytest.mark.timeout(1800)]

SECTIONS = "verify_dataplane,verify_switches"
NO_REPLY = "0/3 replies"
CONVERGE_S = 4  # the switches' agents converge within PERIOD, a read costs ~1 s
# A revived switch: its agent brings the ports up, LACP bundles the MPOs again, and its
# next read of the bonds shows them.
REVIVE_S = 60
CABLED = ("swp1", "swp2", "swp35")
# Each fault: the config line(s), the switch, and the checks that must name it.
MPO_VLAN = ("lab-sw-a", ["interface mlag-port-channel 1 switchport hybrid allowed-vlan remove 10"])
PEER_VLAN = ("lab-sw-b", ["no interface vlan 20 magp 20", "no interface vlan 20", "no vlan 20"])
MAGP_VIP = ("lab-sw-b", ["interface vlan 30 magp 30 ip virtual-router address 12.0.30.2"])


def checks(reports: Path) -> dict[tuple[str, str], dict]:
    data = json.loads((reports / "latest" / "report.json").read_text())
    return {(c["target"], c["id"]): c for c in data["checks"]}


def restore_from_saved() -> None:
    """Each switch whose running config differs from its saved (deployed) one restarted
    from it, one at a time, the next only once the pair is whole again. A killed switch
    forwards nothing meanwhile."""
    for switch in ("lab-sw-a", "lab-sw-b"):
        if not switchpair.status(switch)["unsaved"]:
            continue  # already as deployed (e.g. restored by the test before)
        ctl(switch, "kill")
        links = switchpair.namespace_links(switch)
        assert not any(switchpair.is_up(links[port]) for port in CABLED), links
        ctl(switch, "revive")
        switchpair.wait_whole(REVIVE_S)


@pytest.fixture(scope="module")
def planted(deployed: Deployment, tmp_path_factory):
    reports = tmp_path_factory.mktemp("dataplane-faults")
    try:
        labctl.apply_fault(["port", "lab-host1:2"], active=True)
        labctl.apply_fault(["port", "lab-host2:1"], active=True)
        for switch, lines in (MPO_VLAN, PEER_VLAN, MAGP_VIP):
            for line in lines:
                ctl(switch, "config", *line.split())
        time.sleep(CONVERGE_S)
        run = deployed.play("verify.yml", "--tags", SECTIONS, reports=reports)
        yield run, checks(reports)
    finally:
        labctl.apply_fault([], active=False)  # cables first: a whole pair needs them
        restore_from_saved()


def failed(found: dict, target: str, check_id: str) -> dict:
    check = found.get((target, check_id))
    assert check is not None, f"no {check_id} on {target}: {sorted(found)[:20]}"
    assert check["status"] == "fail", check
    return check


def test_verify_exits_non_zero(planted):
    run, _ = planted
    assert run.returncode != 0, run.tail()


def test_a_vlan_removed_from_one_mpo_breaks_that_path(planted):
    _, found = planted
    # Host 1 reaches VLAN 10 only through lab-sw-a, whose MPO 1 no longer carries it.
    assert failed(found, "lab-host1", "dataplane.gateway.vlan10")["observed"] == NO_REPLY
    assert failed(found, "lab-host1", "dataplane.peer.vlan10.lab-host2")["observed"] == NO_REPLY
    # VLAN 30 (untouched, same path) still reaches its gateway: the fault is the VLAN.
    assert found[("lab-host1", "dataplane.gateway.vlan30")]["status"] == "pass"


def test_a_vlan_missing_on_one_peer_is_not_carried_over_the_ipl(planted):
    _, found = planted
    # host 1 -> lab-sw-a -> IPL -> lab-sw-b, which has no VLAN 20 any more.
    assert failed(found, "lab-host1", "dataplane.peer.vlan20.lab-host2")["observed"] == NO_REPLY
    assert failed(found, "lab-host2", "dataplane.gateway.vlan20")["observed"] == NO_REPLY
    assert failed(found, "lab-sw-b", "magp.20.config")["observed"] == "instance missing"


def test_a_magp_virtual_ip_changed_on_one_peer(planted):
    _, found = planted
    check = failed(found, "lab-sw-b", "magp.30.config")
    assert "12.0.30.2" in check["observed"], check
    # Host 2 reaches its gateway only through lab-sw-b, which no longer answers 12.0.30.1.
    assert failed(found, "lab-host2", "dataplane.gateway.vlan30")["observed"] == NO_REPLY


def test_the_healed_fabric_passes_every_dataplane_check(deployed, tmp_path):
    """After the faults (the module's fixture restores again at its end: idempotent)."""
    reports = tmp_path / "healed"
    labctl.apply_fault([], active=False)
    restore_from_saved()
    time.sleep(CONVERGE_S)
    run = deployed.play("verify.yml", "--tags", "verify_dataplane", reports=reports)
    found = checks(reports)
    dataplane = [c for (_, cid), c in found.items() if cid.startswith("dataplane.")]
    assert len(dataplane) >= 20, sorted(found)
    assert run.returncode == 0 and all(c["status"] == "pass" for c in dataplane), [
        c for c in dataplane if c["status"] != "pass"
    ]
