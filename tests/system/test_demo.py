"""The demo's promise on the lab: site.yml deploys, verify.yml passes every check,
and a second site.yml changes nothing on any host or switch.

Runs the real playbooks over SSH against the guests and the emulated switch pair,
in the order `make demo` runs them. Slow under TCG (~10 min), so it is one test.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.lab.vm.topology import HOSTS_FILE

# Marked slow (~15 min under TCG): `make test-system LAB_MARKS=` runs it.
pytestmark = [pytest.mark.lab, pytest.mark.slow, pytest.mark.timeout(2400)]

REPO = Path(__file__).resolve().parents[2]
PLAYBOOK = REPO / ".venv" / "bin" / "ansible-playbook"
RECAP = re.compile(r"^(\S+)\s*:\s*ok=\d+\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)


def play(playbook: str) -> tuple[int, str]:
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run(
        [str(PLAYBOOK), "-i", "inventories/lab", f"playbooks/{playbook}"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    return proc.returncode, proc.stdout + proc.stderr


def recap(output: str) -> dict[str, tuple[int, int, int]]:
    return {m[1]: (int(m[2]), int(m[3]), int(m[4])) for m in RECAP.finditer(output)}


@pytest.fixture(scope="module")
def lab_up():
    if not HOSTS_FILE.exists():
        pytest.skip("lab is not up (no inventories/lab/hosts.yml; run `make lab-up`)")


def test_site_then_verify_then_site_changes_nothing(lab_up):
    code, output = play("site.yml")
    assert code == 0, output[-4000:]
    first = recap(output)
    assert {"lab-host1", "lab-host2", "lab-sw-a", "lab-sw-b"} <= set(first), first
    assert all(failed == 0 and unreachable == 0 for _, unreachable, failed in first.values())

    code, output = play("verify.yml")
    report = json.loads((REPO / "reports" / "latest" / "report.json").read_text())
    failed = [c for c in report["checks"] if c["status"] == "fail"]
    assert code == 0 and not failed, (failed, output[-3000:])
    assert report["summary"]["passed"] >= 50
    by_id = {(c["target"], c["id"]): c for c in report["checks"]}
    # The seed 001 QoS figures, measured: limited VLANs within tolerance, VLAN 30 above.
    for vlan in (10, 20, 30):
        assert by_id[("lab-host1", f"qos.vlan{vlan}.throughput")]["status"] == "pass"
    assert report["performance"]["qos"], "the report carries the QoS series for its plot"

    code, output = play("site.yml")
    assert code == 0, output[-4000:]
    second = recap(output)
    changed = {host: c for host, (c, _, _) in second.items() if c and host != "localhost"}
    assert not changed, f"second site.yml run changed something: {changed}\n{output[-3000:]}"
