"""VRRP gateways on a pair of emulated NVUE switches that hear each other (keepalive).

The lab pair's structured configs with every VRR gateway made VRRP (nvue_lab's
`vrrp-gateways` edit: VRID = VLAN, priority 110 on alternate peers) go through the pair
transaction: every body passes the emulators' spec check (the kept spec parts), the
health gate and verify's vrrp.<vlan>.<vrid>.config / .master checks pass once each VRID
has elected its master (the RFC 3768 timers of tests/lab/onyx/vrrp.py, over the
keepalive), a second run creates no revision, and going back to VRR unsets `ip vrrp`
and `router vrrp`.

The structured configs keep the lab pair's MLAG: the emulator models no pair without
it. The intent refuses VRRP on a cumulus pair that runs MLAG (rule cumulus-gateway-vrrp,
after NVIDIA's VRRP page); this drives the driver and the emulator below the intent.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.integration import nvue_lab  # noqa: E402
from tests.lab.nvue import fixtures  # noqa: E402

pytestmark = [pytest.mark.integration]

from cxfab.switch.nvue import render, spec  # noqa: E402

A, B = "lab-sw-a", "lab-sw-b"
EDIT = "vrrp-gateways"
WAIT = 12  # the health gate's limit (the pair's VRIDs elect within about 4 s)
SETTLE_S = 10.0  # 3 x 1 s advertisement interval + skew after lab-sw-b's apply, and margin


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with nvue_lab.running_pair(tmp_path_factory.mktemp("nvue-vrrp"), peered=True) as lab:
        yield lab


def run(lab, edit=EDIT) -> dict:
    result, drivers, _ = nvue_lab.deploy(
        lab["switches"], edit=edit, wait=WAIT, snapshot_dir=lab["snapshots"]
    )
    assert "msg" not in result, result.get("msg")
    return {"result": result, "drivers": drivers}


def status(lab) -> dict:
    return {name: switch.status() for name, switch in lab["pair"].items()}


def vrrp_checks(drivers) -> dict:
    """verify's reading (cxfab_onyx_health runs these driver calls) of the vrrp checks."""
    readings = [drivers[name].health() for name in (A, B)]
    checks = [c for r in readings for c in r.checks] + drivers[A].pair_checks(readings)
    return {(c["target"], c["id"]): c for c in checks if c["id"].startswith("vrrp.")}


def settled_checks(drivers, masters: dict[str, str]) -> dict:
    """The vrrp checks once every VRID has one Master and the masters are those expected
    (masters: check target id -> observed): lab-sw-b, applied second, takes over the
    VRIDs it has the higher priority of when its master-down timer runs out (preempt),
    and the peer steps down when it hears that: until then a read may show one Master
    too few, for one advertisement two, or (a pass) lab-sw-a still Master of them all."""
    for driver in drivers.values():
        driver.open(fixtures.USERNAME, fixtures.PASSWORD, check_host_key=True)
    deadline = time.monotonic() + SETTLE_S
    while True:
        checks = vrrp_checks(drivers)
        settled = all(c["status"] == "pass" for c in checks.values()) and all(
            checks.get(("lab-rack", check), {}).get("observed") == seen
            for check, seen in masters.items()
        )
        if settled or time.monotonic() > deadline:
            return checks
        time.sleep(0.25)


def test_vrrp_gateways_elect_one_master_each_a_second_run_is_a_no_op_and_vrr_unsets_it(lab):
    built = run(lab)
    seen = status(lab)
    for name in (A, B):
        wanted = render.render(nvue_lab.structured_for(name, 0, EDIT))
        assert spec.validate(wanted) == []
        assert seen[name]["applied"] == wanted
        assert seen[name]["revisions_created"] == 1 and seen[name]["refusals"] == []
        lines = built["result"]["switches"][name]["lines"]
        assert "nv set router vrrp enable on" in lines
        priority = 110 if name == A else 100  # VLAN 20 is the pair's third VRRP VLAN
        assert f"nv set interface vlan20 ip vrrp virtual-router 20 priority {priority}" in lines
    # The higher priority is Master: lab-sw-a for VLANs 1 and 20, lab-sw-b for 10 and 30.
    masters = {
        "vrrp.20.20.master": "lab-sw-a: Master, lab-sw-b: Backup",
        "vrrp.10.10.master": "lab-sw-a: Backup, lab-sw-b: Master",
    }
    checks = settled_checks(built["drivers"], masters)
    assert len(checks) == 4 * 2 + 4  # .config on each switch, .master per VRID
    assert all(c["status"] == "pass" for c in checks.values()), checks
    for check, observed in masters.items():
        assert checks[("lab-rack", check)]["observed"] == observed, checks

    started = time.monotonic()
    again = run(lab)["result"]
    assert again["changed"] is False
    assert {n: r["lines"] for n, r in again["switches"].items()} == {A: [], B: []}
    assert {n: s["revisions_created"] for n, s in status(lab).items()} == {A: 1, B: 1}
    assert time.monotonic() - started < 10

    back = run(lab, edit=None)["result"]
    assert back["changed"] is True
    assert "nv unset router vrrp enable" in back["switches"][A]["lines"]
    assert "nv unset interface vlan20 ip vrrp" in back["switches"][A]["lines"]
    for name, seen in status(lab).items():
        applied = seen["applied"]
        # cxfab unsets the one leaf it set (`router vrrp enable`): the emulator keeps the
        # emptied node, which plans to nothing (the run below sends nothing).
        assert applied["router"].pop("vrrp") == {}
        assert applied == render.render(nvue_lab.structured_for(name, 0, None))
        # Every body of the three runs passed the emulator's spec check.
        assert seen["refusals"] == [] and seen["revisions_created"] == 2
    third = run(lab, edit=None)["result"]
    assert {n: r["lines"] for n, r in third["switches"].items()} == {A: [], B: []}
