"""Lab tier: the failover drill on the dataplane twin, switch A killed outright.

drill.yml runs the hosts' continuous pings, fails lab-sw-a with the lab's own fault
command (`make lab-fail SWITCH=a`: its emulator killed, every port dark) and brings it
back (`make lab-heal SWITCH=a`). The figures must meet the lab's targets (docs/lab.md):
at most 3 s without replies at the failure and at the return, every path answering
again at the end, and the MAGP gateway never changing (no gateway address is lost for
longer than the data paths are).
"""

from __future__ import annotations

import json

import pytest

from tests.lab.vm import lab as labctl
from tests.lab.vm.topology import REPO_ROOT
from tests.system.deployment import Deployment

pytestmark = [pytest.mark.lab, pytest.mark.dataplane, pytest.mark.timeout(900)]

MAX_GAP_S = 3.0


def test_switch_a_dies_and_returns_within_the_lab_targets(deployed: Deployment, tmp_path):
    make = ["make", "-s", "-C", str(REPO_ROOT)]
    commands = {
        "cxfab_drill_confirm": True,
        "cxfab_drill_fail_command": [*make, "lab-fail", "SWITCH=a"],
        "cxfab_drill_restore_command": [*make, "lab-heal", "SWITCH=a"],
        "cxfab_drill_down_seconds": 8,
        "cxfab_drill_settle_seconds": 6,
    }
    try:
        run = deployed.play("drill.yml", "-e", json.dumps(commands), reports=tmp_path)
    finally:
        labctl.apply_fault([], active=False)  # healed even when the play died half way
    assert run.returncode == 0, run.tail()
    (report_dir,) = tmp_path.glob("drill-*")
    report = json.loads((report_dir / "drill.json").read_text())
    assert report["errors"] == [], report["errors"]
    targets = report["targets"]
    assert len(targets) == 12, [t["id"] for t in targets]  # 2 hosts x 3 VLANs x gateway+peer
    for target in targets:
        where = f"{target['host']} -> {target['id']}"
        for phase in ("failure", "return"):
            figures = target[phase]
            assert figures["measured"] and figures["sent"] > 10, (where, phase, figures)
            assert figures["longest_gap_s"] <= MAX_GAP_S, (where, phase, figures)
            assert figures["recovered"], (where, phase, figures)
    print(report["markdown"])
