"""Lab tier: lossless RoCE on the switch pair, applied, read back, idempotent, drift caught.

The lab's intent with `cxfab_roce` turned on for VLAN 20 (priority 3, DSCP 26: the
lab's rules accept it as it stands), given as extra vars: a test-only variant of the
inventory. switches.yml must send the Onyx PFC priority, port PFC, `qos trust L3` and
ECN lines to both switches; verify's switch section must read every one back; a second
run must send nothing; a port's PFC line removed behind cxfab's back on one switch
(the emulator's control channel, `config LINE`) must fail that port's check there and
only there. switches.yml on the lab's own intent then removes the lossless lines
again (prune), and the switch section passes. The host side is
tests/system/test_host_roles.py (marker lossless).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.lab.vm.topology import ONYX_RUN_DIR, REPO_ROOT
from tests.system.deployment import Deployment

pytestmark = [pytest.mark.lab, pytest.mark.lossless, pytest.mark.timeout(1200)]

ROCE = {"cxfab_roce": {"lossless": True, "priority": 3, "dscp": 26, "vlans": [20]}}
SWITCHES = ("lab-sw-a", "lab-sw-b")
PORTS = ("1/1", "1/2")  # the MPO members: both carry VLAN 20
PLANTED = ("lab-sw-b", "1/1")
# What the lossless section sends per port (the Onyx dialect of onyx/statements.py).
PORT_LINES = (
    "dcb priority-flow-control mode on force",
    "qos trust L3",
    "traffic-class 3 congestion-control ecn minimum-absolute 150 maximum-absolute 1500",
)
PRIORITY_LINE = "dcb priority-flow-control priority 3 enable"


def ctl(switch: str, *request: str) -> str:
    argv = [sys.executable, "-m", "tests.lab.onyx.pair", "ctl", "--run-dir", str(ONYX_RUN_DIR)]
    done = subprocess.run(
        [*argv, switch, *request], cwd=REPO_ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def lossless_checks(reports: Path) -> dict[tuple[str, str], dict]:
    data = json.loads((reports / "latest" / "report.json").read_text())
    return {(c["target"], c["id"]): c for c in data["checks"] if c["category"] == "lossless"}


def verify_switches(deployed: Deployment, reports: Path, variant: Path | None = None):
    extra = ("-e", f"@{variant}") if variant else ()
    return deployed.play("verify.yml", "--tags", "verify_switches", *extra, reports=reports)


def sent(deployed: Deployment) -> dict[str, list[str]]:
    return {name: record.get("lines") or [] for name, record in deployed.deploy_records().items()}


@pytest.fixture(scope="module")
def lossless_on(deployed: Deployment, tmp_path_factory):
    variant = tmp_path_factory.mktemp("switch-lossless") / "roce.yml"
    variant.write_text(yaml.safe_dump(ROCE))
    state = {"variant": variant, "healed": False}
    started = time.monotonic()
    try:
        deployed.healthy("switches.yml", "-e", f"@{variant}")
        state["lines"] = sent(deployed)
        yield state
    finally:
        if not state["healed"]:  # a test stopped before the last one healed the pair
            deployed.healthy("switches.yml")
            removed = sent(deployed)
            assert all(PRIORITY_LINE in " ".join(removed.get(s, [])) for s in SWITCHES), removed
        print(f"switch lossless suite: {time.monotonic() - started:.0f} s")


def test_the_pair_gets_the_lossless_lines_and_nothing_else(lossless_on):
    for switch in SWITCHES:
        lines = lossless_on["lines"].get(switch, [])
        assert PRIORITY_LINE in lines, (switch, lines)
        for port in PORTS:
            for words in PORT_LINES:
                assert any(words in line and port in line for line in lines), (switch, port, words)
        # Diff-only: the rest of the deployed intent is already there.
        kinds = ("priority-flow-control", "qos trust", "congestion-control")
        assert all(any(kind in line for kind in kinds) for line in lines), (switch, lines)


def test_verify_reads_every_lossless_setting_back(deployed, lossless_on, tmp_path):
    run = verify_switches(deployed, tmp_path, lossless_on["variant"])
    found = lossless_checks(tmp_path)
    for switch in SWITCHES:
        per_port = [f"{kind}.{port}" for kind in ("pfc", "trust", "ecn") for port in PORTS]
        for check_id in ("pfc.priority", *per_port):
            assert found[(switch, check_id)]["status"] == "pass", found[(switch, check_id)]
    assert run.returncode == 0, run.tail(3000)


def test_a_second_run_sends_nothing(deployed, lossless_on):
    deployed.healthy("switches.yml", "-e", f"@{lossless_on['variant']}")
    assert sent(deployed) == {switch: [] for switch in SWITCHES}, sent(deployed)


def test_a_pfc_line_removed_by_hand_is_caught_on_that_port_only(deployed, lossless_on, tmp_path):
    switch, port = PLANTED
    # The removal cxfab itself would send (onyx/statements.py), planted unsaved.
    line = f"interface ethernet {port} no dcb priority-flow-control mode force"
    ctl(switch, "config", *line.split())
    run = verify_switches(deployed, tmp_path, lossless_on["variant"])
    assert run.returncode != 0, run.tail(3000)
    found = lossless_checks(tmp_path)
    check = found[(switch, f"pfc.{port}")]
    assert check["status"] == "fail" and "oper Disabled" in check["observed"], check
    others = [c for key, c in found.items() if key != (switch, f"pfc.{port}")]
    assert all(c["status"] == "pass" for c in others), [c for c in others if c["status"] != "pass"]


def test_the_lab_intent_restored_removes_the_lossless_lines(deployed, lossless_on, tmp_path):
    deployed.healthy("switches.yml")
    lossless_on["healed"] = True
    removed = sent(deployed)
    for switch in SWITCHES:
        assert "no dcb priority-flow-control priority 3 enable" in removed[switch], removed
    run = verify_switches(deployed, tmp_path)
    assert run.returncode == 0, run.tail(3000)
    assert not lossless_checks(tmp_path), "lossless off: no lossless switch check"
