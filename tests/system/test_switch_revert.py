"""Lab tier: a switch change refused half way is undone on the deployed pair.

On the lab as site.yml left it, lab-sw-a is told (emulator control channel) to refuse
the last line of a test-only change: VLAN 77 with its SVI, from a copy of the lab
inventory. switches.yml must fail naming the line and the switch's message, revert
lab-sw-a to its snapshot statement for statement with `Unsaved changes: no`, and
never touch lab-sw-b. Build outputs go to a temporary directory, so the suites after
this one still read the lab's own structured configs. The refusal is cleared in
`finally` and both switches are checked to be as they were.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from cxfab.switch.onyx.parser import parse_running_config
from cxfab.switch.onyx.session import OnyxSession

from tests.lab.vm.topology import (
    INVENTORY_DIR,
    ONYX_RUN_DIR,
    REPO_ROOT,
    SWITCHES,
    SWITCHES_KNOWN_HOSTS_FILE,
)
from tests.system.deployment import Deployment
from tests.tools.inventory import write_copy

pytestmark = [pytest.mark.lab, pytest.mark.switch_revert, pytest.mark.timeout(600)]

A, B = "lab-sw-a", "lab-sw-b"
PROBE_VLAN = {
    "id": 77,
    "name": "revert-probe",
    "subnet": "12.0.77.0/24",
    "mtu": 9000,
    "gateway": {"mode": "none"},
    "svi_addresses": {A: "12.0.77.252/24", B: "12.0.77.253/24"},
}
# What lab-sw-a is sent for VLAN 77, in the rendered order; the last one is refused.
PROBE_LINES = [
    "vlan 77",
    "vlan 77 name revert-probe",
    "interface vlan 77",
    "interface vlan 77 ip address 12.0.77.252/24",
    "interface vlan 77 mtu 9000",
]
REFUSED = PROBE_LINES[-1]
REVERT_TARGET_S = 60


def ctl(switch: str, *request: str) -> str:
    argv = [sys.executable, "-m", "tests.lab.onyx.pair", "ctl", "--run-dir", str(ONYX_RUN_DIR)]
    done = subprocess.run(
        [*argv, switch, *request], cwd=REPO_ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def state(switch: str) -> tuple[dict, list, str]:
    """(statements, other lines, Unsaved changes) as the switch prints them now."""
    port = SWITCHES[switch]["port"]
    with OnyxSession(
        "127.0.0.1", port, "admin", "admin", known_hosts=str(SWITCHES_KNOWN_HOSTS_FILE)
    ) as cli:
        parsed = parse_running_config(cli.show("show running-config"))
        files = cli.show("show configuration files")
    unsaved = files.split("Unsaved changes")[1].split(":")[1].split()[0]
    return parsed.statements, sorted(parsed.unknown), unsaved


def test_a_refused_line_reverts_the_peer_and_leaves_the_partner_untouched(
    deployed: Deployment, tmp_path
):
    started = time.monotonic()
    inventory = write_copy(
        INVENTORY_DIR, tmp_path / "inventory", [{"path": "cxfab_vlans", "append": PROBE_VLAN}]
    )
    build = tmp_path / "build"
    before = {name: state(name) for name in (A, B)}
    assert all(unsaved == "no" for _, _, unsaved in before.values()), before
    logins_b = int(ctl(B, "logins"))
    ctl(A, "reject-line", *REFUSED.split())
    try:
        run = deployed.play(
            "switches.yml",
            "-e",
            f"cxfab_build_dir={build}",
            "-e",
            f"cxfab_switch_snapshot_dir={tmp_path / 'snapshots'}",
            inventory=inventory,
        )
        touched_b = int(ctl(B, "logins")) - logins_b
    finally:
        ctl(A, "accept-lines")
    record = json.loads((build / "deploy" / f"{A}.json").read_text())
    revert = record["revert"]
    figures = {
        "lines_sent": len(record["lines"]),
        "apply_s": record["apply_seconds"],
        "revert_lines": revert["lines"],
        "revert_s": revert["seconds"],
        "proof": {k: revert["proof"][k] for k in ("statements", "other_lines")},
        "test_s": round(time.monotonic() - started, 1),
    }
    print(f"switch revert on the lab: {json.dumps(figures)}")

    assert run.returncode != 0, run.tail()
    assert record["lines"] == PROBE_LINES
    assert f"refused line {len(PROBE_LINES)} {REFUSED!r}" in record["error"]
    assert "% Command refused by the switch (lab fault)" in record["error"]
    assert revert["refused"] is None and revert["proof"]["equal"] is True, revert
    assert revert["lines"] == ["no interface vlan 77", "no vlan 77"]
    assert revert["seconds"] < REVERT_TARGET_S, figures
    assert f"{B} was not touched" in record["error"]
    # lab-sw-b: one login, for the gate's reads; no deploy of its own, nothing changed.
    assert touched_b == 1
    assert (
        not (build / "deploy" / f"{B}.json").exists()
        or json.loads((build / "deploy" / f"{B}.json").read_text())["lines"] == []
    )
    # Healed: the refusal cleared, MLAG up, both switches exactly as before and saved.
    status = json.loads(ctl(A, "status"))
    assert status["rejected_lines"] == [] and status["oper"] is True, status
    assert {name: state(name) for name in (A, B)} == before
