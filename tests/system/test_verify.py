"""Lab tier: verify.yml catches planted faults on the configured lab.

Runs on the lab as site.yml left it (the session's `deployed` fixture; the demo
suite has shown that verify.yml passes there). Each fault is planted, verify.yml
must exit non-zero with the failing check and its observed value in report.json,
and the fault is healed by the role that owns the setting before the next one.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.lab.vm.topology import GUESTS, INVENTORY_DIR, ONYX_RUN_DIR, REPO_ROOT
from tests.system.deployment import Deployment

pytestmark = [pytest.mark.lab, pytest.mark.faults, pytest.mark.timeout(3600)]

CXEMU_ADMIN = REPO_ROOT / "tests" / "lab" / "cxemu" / "bin" / "cxemu-admin"
HOST = GUESTS[0].name
FAR_CPU = "0"  # the data NIC sits on NUMA node 1 (CPUs 2-3); CPU 0 is on node 0


def report(reports: Path) -> dict:
    return json.loads((reports / "latest" / "report.json").read_text())


def check(data: dict, check_id: str, target: str = HOST) -> dict:
    found = [c for c in data["checks"] if c["id"] == check_id and c["target"] == target]
    assert found, f"no check {check_id} on {target} in the report"
    return found[0]


# The planted host faults are read by the hosts section's own checks; its health and
# dataplane parts (a third of its two minutes under TCG) have planted suites of their
# own (test_health_faults.py, test_fabric_dataplane.py), so these runs leave them out.
HOST_CHECKS = ("--tags", "verify_hosts", "--skip-tags", "verify_health,verify_dataplane")


def verify_fails(deployed: Deployment, reports: Path, tag: str, check_id: str, target=HOST):
    """Run one verify section: it must exit non-zero with `check_id` failed."""
    run = deployed.play("verify.yml", "--tags", tag, reports=reports)
    assert run.returncode != 0, run.tail(3000)
    found = check(report(reports), check_id, target)
    assert found["status"] == "fail", found
    return found


@pytest.fixture(scope="module")
def guest(lab):
    """lab-host1 over the lab's shared SSH connection."""
    return lab.hosts[0]


@pytest.fixture(scope="module")
def intent(deployed) -> dict:
    return deployed.intent(HOST)


@pytest.fixture(scope="module")
def host_faults(deployed, intent, lab, guest, tmp_path_factory) -> dict:
    """Three host faults planted at once and one run of verify.yml's host checks
    (each check is independent and a run costs minutes under TCG): the NIC's IRQs
    on the far NUMA node, a VLAN's egress map zeroed, switch side A cut (the first
    bond member loses carrier). Healed by the owning roles and the wire before any
    test of this module runs (the switch test below needs side A back: with it cut,
    lab-sw-a's MPOs read down), and verify_hosts must pass again."""
    host = intent["cxfab_host"]
    irqs = guest.run(f"ls /sys/bus/pci/devices/{host['nics'][0]['pci']}/msi_irqs").split()
    vlan = f"{host['bond']['name']}.{host['qos'][0]['vlan']}"
    zero = " ".join(f"{prio}:0" for prio in range(8))
    reports = tmp_path_factory.mktemp("host-faults")
    guest.run(" ; ".join(f"echo {FAR_CPU} > /proc/irq/{irq}/smp_affinity_list" for irq in irqs))
    guest.run(f"ip link set dev {vlan} type vlan egress-qos-map {zero}")
    lab.cut("a")
    try:
        time.sleep(3)  # miimon notices within 100 ms
        run = deployed.play("verify.yml", *HOST_CHECKS, reports=reports)
        planted = {"run": run, "report": report(reports), "vlan": vlan, "zero": zero}
    finally:
        lab.restore("a")
        bond = host["bond"]["name"]
        for _ in range(30):
            if guest.run(f"cat /proc/net/bonding/{bond}").count("MII Status: up") >= 3:
                break
            time.sleep(2)
        deployed.healthy(
            "site.yml", "--tags", "host_network,irq_affinity", "--limit", f"localhost,{HOST}"
        )
    deployed.healthy("verify.yml", *HOST_CHECKS)
    return planted


def test_host_faults_fail_the_run(host_faults):
    assert host_faults["run"].returncode != 0, host_faults["run"].tail(3000)


def test_irqs_on_the_far_numa_node_are_caught(host_faults, intent):
    port = intent["cxfab_host"]["bond"]["members"][0]
    found = check(host_faults["report"], f"irq.{port}")
    assert found["status"] == "fail" and f"->{FAR_CPU}" in found["observed"], found


def test_a_removed_egress_map_is_caught(host_faults):
    found = check(host_faults["report"], f"qos.egress.{host_faults['vlan']}")
    assert found["status"] == "fail" and found["observed"] == host_faults["zero"], found


def test_a_cut_bond_member_is_caught(host_faults, intent):
    bond = intent["cxfab_host"]["bond"]
    member = bond["members"][0]
    found = check(host_faults["report"], f"bond.{bond['name']}.{member}")
    assert found["status"] == "fail" and "MII Status: down" in found["observed"], found
    assert check(host_faults["report"], f"link.{member}.up")["status"] == "fail"


def test_a_changed_switch_system_mac_is_caught(deployed, intent, tmp_path):
    pair = intent["cxfab_switch_pairs"][0]
    wanted, switch = pair["mlag"]["system_mac"].upper(), pair["peers"][1]["name"]
    wrong = "00:00:5E:00:01:99"
    control = [sys.executable, "-m", "tests.lab.onyx.pair", "ctl", "--run-dir", str(ONYX_RUN_DIR)]

    def set_mac(mac):
        subprocess.run([*control, switch, "set-system-mac", mac], check=True, cwd=REPO_ROOT)

    set_mac(wrong)
    try:
        found = verify_fails(deployed, tmp_path, "verify_switches", "mlag.system_mac", switch)
        assert wrong in found["observed"].upper()
        pair_check = check(report(tmp_path), "mlag.system_mac_equal", pair["name"])
        assert pair_check["status"] == "fail"
    finally:
        set_mac(wanted)
    # The hosts' bonds see one partner system again and re-select their aggregator
    # (LACP, seconds): verify's own wait polls the pair until every check passes.
    deployed.healthy(
        "verify.yml", "--tags", "verify_switches", "-e", "verify_switch_health_wait=90"
    )


def test_a_firmware_image_with_another_psid_is_refused(deployed, intent, guest, tmp_path):
    nic = intent["cxfab_host"]["nics"][0]
    before = guest.run(f"mstflint -d {nic['pci']} q")
    bad = tmp_path / "fw-other-psid.bin"
    subprocess.run(
        [
            str(CXEMU_ADMIN),
            "make-image",
            "--psid",
            "MT_2190110032",
            "--version",
            "12.28.2006",
            "--out",
            str(bad),
        ],
        check=True,
    )
    inventory = tmp_path / "inventory"
    shutil.copytree(INVENTORY_DIR, inventory)
    for host_file in inventory.glob("host_vars/*/*.yml"):
        data = yaml.safe_load(host_file.read_text())
        if "cxfab_host" not in data:  # e.g. lab-host2's network_backend.yml
            continue
        for card in data["cxfab_host"]["nics"]:
            # The lab's image paths are relative to its inventory, not to this copy.
            card["firmware"]["image"] = str((INVENTORY_DIR / card["firmware"]["image"]).resolve())
        if host_file.parent.name == HOST:
            data["cxfab_host"]["nics"][0]["firmware"].update(
                version="12.28.2006",
                image=str(bad),
                sha256=hashlib.sha256(bad.read_bytes()).hexdigest(),
            )
        host_file.write_text(yaml.safe_dump(data, sort_keys=False))
    run = deployed.play("nic_firmware.yml", inventory=inventory)
    assert run.returncode != 0
    assert "PSID mismatch" in run.output and "nothing was burned" in run.output
    assert guest.run(f"mstflint -d {nic['pci']} q") == before, "the refused image changed the flash"
