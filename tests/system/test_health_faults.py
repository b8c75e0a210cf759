"""Lab tier: verify's link and cable health names seed 000's faults on the configured lab.

Runs on the lab as site.yml left it, in CI (short: two `verify.yml --tags verify_health`
runs). Three faults in one run:

- lab-host1's emulated ConnectX-4 gets seed 000's third-party DAC on port 1
  (`cxemu-admin set ... port1.cable=optcore`): mlxlink answers status opcode 1036, so
  `link.<port>.diag` must fail with the opcode's text and the cable's vendor and part
  number as its observed value;
- the same card runs hot (`cxemu-admin set ... temperature=101`): `temp.<nic>` must
  fail with the reading of mget_temp as its observed value;
- lab-host2's first data port flaps for real (`ip link set down`, then `up`) after
  verify's start snapshot of the counters and before its end snapshot: `flap.<port>`
  must name the counter that moved (the bond's Link Failure Count: virtio keeps its
  carrier over an administrative down, so carrier_changes does not move in the lab).

All are healed (genuine cable back, the card's temperature back, the bond member back
in its aggregator) and the same tags must pass again. The narrow PCIe slot of seed
000 is not planted here: a
guest's PCIe link files are its kernel's (QEMU cannot narrow a virtio endpoint), so it
is shown on the emulator's sysfs tree by tests/integration/test_cxemu_health.py.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from tests.lab.vm.topology import GUESTS
from tests.system.deployment import Deployment

pytestmark = [pytest.mark.lab, pytest.mark.timeout(900)]

TAGS = ("--tags", "verify_health")
CABLE_HOST, FLAP_HOST = GUESTS[0].name, GUESTS[1].name
THIRD_PARTY = "module's PMD type is not enabled (opcode 1036), cable OPTCORE Q-100G-DAC-P2M"
# The start snapshot of FLAP_HOST is in: the flap now lands between the two snapshots.
START_TAKEN = rf"(?s)phase start\].*?(?:ok|changed): \[{FLAP_HOST}\]"
BOND_BACK_S = 90
# Over verify_nic_max_temp_c (95); the emulator's card reads 47 until set.
HOT_C, COOL_C = 101, 47


def checks(reports: Path) -> dict[tuple[str, str], dict]:
    data = json.loads((reports / "latest" / "report.json").read_text())
    return {(c["target"], c["id"]): c for c in data["checks"]}


def bond_whole(host, bond: str) -> bool:
    """Every member up and in the active aggregator (LACP settled again after a flap)."""
    text = host.run(f"cat /proc/net/bonding/{bond}")
    active = re.search(r"Active Aggregator Info:\s*\n\s*Aggregator ID: (\d+)", text)
    members = re.findall(
        r"Slave Interface: \S+\nMII Status: (\S+)(?:.*\n)*?Aggregator ID: (\d+)", text
    )
    return bool(active and members) and all(
        mii == "up" and agg == active.group(1) for mii, agg in members
    )


def link_failures(host, bond: str, port: str) -> int:
    text = host.run(f"cat /proc/net/bonding/{bond}")
    block = text.split(f"Slave Interface: {port}\n", 1)[1]
    return int(re.search(r"^Link Failure Count: (\d+)", block, re.M).group(1))


@pytest.fixture(scope="module")
def planted(deployed: Deployment, lab, tmp_path_factory):
    """Both faults planted, one verify run, then both healed (before any test runs)."""
    hosts = {h.name: h for h in lab.hosts}
    cable_nic = deployed.intent(CABLE_HOST)["cxfab_host"]["nics"][0]
    flap_intent = deployed.intent(FLAP_HOST)["cxfab_host"]
    flap_port = flap_intent["nics"][0]["ports"][0]["netdev"]
    bond = flap_intent["bond"]["name"]
    reports = tmp_path_factory.mktemp("health-faults")
    started = time.monotonic()
    try:
        hosts[CABLE_HOST].run(
            f"cxemu-admin set -d {cable_nic['pci']} port1.cable=optcore temperature={HOT_C}"
        )
        failures = link_failures(hosts[FLAP_HOST], bond, flap_port)
        running = deployed.spawn("verify.yml", *TAGS, reports=reports)
        running.wait_for(START_TAKEN)
        # Down long enough for the bond's link monitor (miimon 100 ms) to see it.
        hosts[FLAP_HOST].run(
            f"ip link set dev {flap_port} down; sleep 1; ip link set dev {flap_port} up"
        )
        run = running.finish()
    finally:
        hosts[CABLE_HOST].run(
            f"cxemu-admin set -d {cable_nic['pci']} port1.cable=mellanox temperature={COOL_C}"
        )
        deadline = time.monotonic() + BOND_BACK_S
        while not bond_whole(hosts[FLAP_HOST], bond) and time.monotonic() < deadline:
            time.sleep(2)
    print(f"health faults planted, caught and healed in {time.monotonic() - started:.0f} s")
    return {
        "run": run,
        "checks": checks(reports),
        "cable_port": cable_nic["ports"][0]["netdev"],
        "cable_nic": cable_nic["name"],
        "flap_port": flap_port,
        "bond": bond,
        "failures_before": failures,
    }


def test_the_faulted_run_fails(planted):
    assert planted["run"].returncode != 0, planted["run"].tail(3000)


def test_a_third_party_cable_is_named_with_the_opcode_text_and_the_cable(planted):
    check = planted["checks"][(CABLE_HOST, f"link.{planted['cable_port']}.diag")]
    print(f"{CABLE_HOST} {check['id']}: {check['status']}, observed {check['observed']!r}")
    assert check["status"] == "fail", check
    assert check["observed"] == THIRD_PARTY, check
    assert "Connected wrong module type" in check["message"], check


def test_a_hot_card_is_named_with_its_temperature(planted):
    check = planted["checks"][(CABLE_HOST, f"temp.{planted['cable_nic']}")]
    print(f"{CABLE_HOST} {check['id']}: {check['status']}, observed {check['observed']!r}")
    assert check["status"] == "fail", check
    assert check["observed"] == f"{HOT_C} C (mget_temp)", check
    # The other host's card was not heated: measured, and under the limit.
    assert planted["checks"][(FLAP_HOST, f"temp.{planted['cable_nic']}")]["status"] == "pass"


def test_a_flap_between_the_snapshots_is_named(planted):
    check = planted["checks"][(FLAP_HOST, f"flap.{planted['flap_port']}")]
    print(f"{FLAP_HOST} {check['id']}: {check['status']}, observed {check['observed']!r}")
    assert check["status"] == "fail", check
    # A virtio port keeps its carrier over an administrative down: the bond counted it.
    before, bond = planted["failures_before"], planted["bond"]
    assert f"{bond} Link Failure Count {before} -> {before + 1}" in check["observed"], check
    # The other host's same port did not flap: the check names only what moved.
    assert planted["checks"][(CABLE_HOST, f"flap.{planted['flap_port']}")]["status"] == "pass"


def test_healed_the_same_tags_pass_again(planted, deployed, lab, tmp_path):
    hosts = {h.name: h for h in lab.hosts}
    bond = deployed.intent(FLAP_HOST)["cxfab_host"]["bond"]["name"]
    assert bond_whole(hosts[FLAP_HOST], bond), hosts[FLAP_HOST].run(f"cat /proc/net/bonding/{bond}")
    started = time.monotonic()
    run = deployed.play("verify.yml", *TAGS, reports=tmp_path)
    found = checks(tmp_path)
    print(f"healed verify --tags verify_health: {time.monotonic() - started:.0f} s")
    assert run.returncode == 0, run.tail(3000)
    assert found[(CABLE_HOST, f"link.{planted['cable_port']}.diag")]["status"] == "pass"
    assert found[(FLAP_HOST, f"flap.{planted['flap_port']}")]["status"] == "pass"
    assert found[(CABLE_HOST, f"temp.{planted['cable_nic']}")]["status"] == "pass"
    failed = [c for c in found.values() if c["status"] == "fail"]
    assert not failed, failed
