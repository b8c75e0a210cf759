"""Lab tier: the failover drill on the dataplane twin, VLAN 20 under VRRP, 10 and 30 MAGP.

This is the lab's one switch-kill drill (it replaced a drill of the all-MAGP intent,
which measured the same paths but VLAN 20's gateway a third time under MAGP):
drill.yml runs the hosts' continuous pings, fails lab-sw-a with the lab's own fault
command (`make lab-fail SWITCH=a`: its emulator killed, every port dark) and brings it
back (`make lab-heal SWITCH=a`).

The lab intent runs MAGP on every VLAN, which every other suite relies on. This suite
applies a test-only copy of it in which VLAN 20's gateway is VRRP with lab-sw-a as
master (switches.yml --tags switch_gateway), checks that one switch, the elected
master, owns the virtual IP in its namespace, kills lab-sw-a with drill.yml and
measures what the hosts saw: the backup takes over the gateway when the master's
advertisements stop for its master-down interval (3 x 1 s + skew), while the MAGP
gateways and the host-to-host paths lose at most what the data path does. At the
return lab-sw-a preempts. The lab intent is then applied again and the pair checked
whole, every host reaching every gateway and peer.

The VRRP MAC of VRID 20 is the lab's MAGP MAC of VLAN 20 (00:00:5E:00:01:14), so the
hosts' ARP entries for the gateway stay valid across both configuration changes.
"""

from __future__ import annotations

import json

import pytest

from tests.lab.vm import lab as labctl
from tests.lab.vm.topology import INVENTORY_DIR, SWITCHES
from tests.system import switchpair
from tests.system.deployment import Deployment
from tests.tools.inventory import write_copy

pytestmark = [pytest.mark.lab, pytest.mark.dataplane, pytest.mark.vrrp, pytest.mark.timeout(1800)]

VLAN, VRID = 20, 20
MASTER, BACKUP = "lab-sw-a", "lab-sw-b"
PRIORITIES = {MASTER: 110, BACKUP: 100}
VRRP_LINK, MAGP_LINK = f"vlan{VLAN}-v{VRID}", f"vlan{VLAN}-m{VLAN}"
DOWN_S, SETTLE_S = 12, 5
# A path that keeps its gateway loses at most what the data path does (the MAGP drill).
MAX_GAP_S = 3.0
# The takeover: master-down interval 3 x 1 s + (256 - 100) / 256 s, then the backup's
# agent adds the address. It must end well inside DOWN_S (the backup took over).
MAX_TAKEOVER_S = 8.0
CONVERGE_S = 15


def vrrp_copy(deployed: Deployment, destination) -> tuple[Deployment, str]:
    """The lab inventory with VLAN 20's gateway as VRRP; and its virtual IP."""
    fabric = deployed.intent("lab-host1")
    index = next(i for i, v in enumerate(fabric["cxfab_vlans"]) if v["id"] == VLAN)
    vip = fabric["cxfab_vlans"][index]["gateway"]["virtual_ip"]
    gateway = {"mode": "vrrp", "virtual_ip": vip, "vrrp": {"vrid": VRID, "priorities": PRIORITIES}}
    patches = [{"path": f"cxfab_vlans[{index}].gateway", "value": gateway}]
    return Deployment(write_copy(INVENTORY_DIR, destination, patches)), vip


def gateway_owners(vip: str) -> dict[str, tuple[str | None, list[str]]]:
    """Per switch: its VRRP state and the namespace interfaces holding the virtual IP."""
    owners = {}
    for switch in SWITCHES:
        states = [v["state"] for v in switchpair.status(switch)["vrrp"] if v["vlan"] == VLAN]
        holding = sorted(
            name
            for name, addresses in switchpair.namespace_addresses(switch).items()
            if f"{vip}/32" in addresses
        )
        owners[switch] = (states[0] if states else None, holding)
    return owners


def owned_by(master: str, vip: str):
    want = {s: ("Master" if s == master else "Backup", [VRRP_LINK] if s == master else [])
            for s in SWITCHES}  # fmt: skip
    return lambda: gateway_owners(vip) == want


def test_vrrp_backup_takes_the_gateway_over_when_the_master_dies(deployed, lab, tmp_path):
    variant, vip = vrrp_copy(deployed, tmp_path / "inventory")
    # The variant's build outputs (structured configs, deploy records) go elsewhere:
    # later suites read the lab intent's from build/.
    build = ("-e", f"cxfab_build_dir={tmp_path / 'build'}")
    drill = switchpair.drill_killing_switch_a(DOWN_S, SETTLE_S)
    try:
        applied = variant.play("switches.yml", "--tags", "switch_gateway", *build)
        assert applied.returncode == 0, applied.tail()
        switchpair.wait_for(owned_by(MASTER, vip), CONVERGE_S, f"{MASTER} alone owning {vip}")
        run = variant.play("drill.yml", "-e", json.dumps(drill), *build, reports=tmp_path)
        assert run.returncode == 0, run.tail()
        # The return: lab-sw-a outranks the backup and preempts it.
        switchpair.wait_for(owned_by(MASTER, vip), CONVERGE_S, f"{MASTER} preempting")
    finally:
        labctl.apply_fault([], active=False)
        restored = deployed.play("switches.yml", "--tags", "switch_gateway")
    (report_dir,) = tmp_path.glob("drill-*")
    report = json.loads((report_dir / "drill.json").read_text())
    print(report["markdown"])
    assert report["errors"] == [], report["errors"]
    vrrp_paths = [t for t in report["targets"] if t["id"] == f"drill.gateway.vlan{VLAN}"]
    assert len(vrrp_paths) == 2 and len(report["targets"]) == 12, report["targets"]
    for target in report["targets"]:
        failure, back = target["failure"], target["return"]
        where = (target["host"], target["id"])
        assert failure["sent"] > 10 and back["sent"] > 10, (where, target)
        assert failure["recovered"] and back["recovered"], (where, target)
        limit = MAX_TAKEOVER_S if target in vrrp_paths else MAX_GAP_S
        assert failure["longest_gap_s"] <= limit, (where, failure)
        assert back["longest_gap_s"] <= MAX_GAP_S, (where, back)
    takeover = [t for t in switchpair.log_events(BACKUP, "Backup -> Master")
                if report["down_at"] <= t <= report["up_at"]]  # fmt: skip
    preempt = [t for t in switchpair.log_events(MASTER, "Backup -> Master") if t > report["up_at"]]
    assert takeover and preempt, (takeover, preempt)
    took, regained = takeover[0] - report["down_at"], preempt[0] - report["up_at"]
    print(f"{BACKUP} Master {took:.2f} s after the kill, {MASTER} {regained:.2f} s after return")
    # The lab intent again: MAGP on VLAN 20 on both peers, the pair whole and saved.
    assert restored.returncode == 0, restored.tail()
    switchpair.wait_whole(CONVERGE_S * 4)
    for switch in SWITCHES:
        state = switchpair.status(switch)
        assert state["vrrp"] == [] and not state["unsaved"], (switch, state)
        addresses = switchpair.namespace_addresses(switch)
        assert f"{vip}/32" in addresses.get(MAGP_LINK, set()), (switch, addresses)
        assert VRRP_LINK not in addresses, (switch, addresses)
    for host in lab.hosts:
        targets = switchpair.probe_targets(host.name)
        assert switchpair.unanswered(host, targets) == [], host.name
