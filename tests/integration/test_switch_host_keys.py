"""Switch SSH host keys on the emulated pair: checked by default, unknown or changed stops.

The pair is never built: every run is `--check` (it connects to both switches,
reads and plans, sends nothing), so this module is short and runs beside the
transaction module. A stopped run must leave the switches blank.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.integration import onyx_inventory  # noqa: E402
from tests.integration.test_switch_roles import run_playbook, show  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow]
fixtures = pytest.importorskip("tests.lab.onyx.fixtures")
pytest.importorskip("netmiko")

A, B = "lab-sw-a", "lab-sw-b"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    base = tmp_path_factory.mktemp("host-keys")
    with fixtures.onyx_pair(base / "run") as pair:
        ports = [pair[A].port, pair[B].port]
        lab = {"pair": pair, "base": base, "fabric": onyx_inventory.fabric(ports)}
        lab["known_hosts"] = pair.write_known_hosts(base / "switches_known_hosts")
        yield lab


def test_keys_are_checked_by_default_and_an_unknown_one_says_how_to_add_it(lab, tmp_path):
    """No cxfab_switch_known_hosts: the operator's ~/.ssh/known_hosts (an empty HOME here)."""
    stopped = run_playbook(lab, lab["fabric"], "--check", trust=False, home=tmp_path)
    assert stopped["rc"] != 0 and stopped["lines"].get(A, []) == []
    default, port = tmp_path / ".ssh" / "known_hosts", lab["pair"][A].port
    assert (
        f"[127.0.0.1]:{port} is not in {default} (the file does not exist); "
        "stopping before any line is sent" in stopped["stdout"]
    )
    assert f"ssh-keyscan -p {port} 127.0.0.1 >> {default}" in stopped["stdout"]
    # The documented, unsafe opt-out accepts any key.
    unchecked = run_playbook(
        lab,
        lab["fabric"],
        "--check",
        "-e",
        "cxfab_switch_host_key_checking=false",
        trust=False,
        home=tmp_path,
    )
    assert unchecked["rc"] == 0, unchecked["output"]
    assert "protocol mlag" in unchecked["lines"][A]  # it read the blank switch and planned


def test_a_changed_host_key_stops_the_run(lab):
    pair = lab["pair"]
    checked = run_playbook(lab, lab["fabric"], "--check")
    assert checked["rc"] == 0, checked["output"]
    pair.ctl(B, "rekey")
    try:
        stopped = run_playbook(lab, lab["fabric"])
        assert stopped["rc"] != 0
        assert stopped["lines"] == {}, "no switch got as far as a plan"
        assert f":{pair[B].port}: the SSH host key CHANGED" in stopped["stdout"]
        assert "protocol mlag" not in show(lab, A, "show running-config"), "nothing is sent"
    finally:
        pair.write_known_hosts(lab["known_hosts"])  # the operator accepts the new key


@pytest.mark.parametrize(
    ("playbook", "extra"),
    [
        ("switches.yml", ("--check",)),
        ("verify.yml", ("-e", "cxfab_reports_dir={reports}")),
        ("drill.yml", ("-e", "cxfab_drill_confirm=true", "-e", f"cxfab_drill_switch={A}")),
    ],
)
def test_a_misspelled_host_key_switch_stops_every_playbook_before_a_login(
    lab, tmp_path, playbook, extra
):
    pair = lab["pair"]
    before = {name: pair.logins(name) for name in (A, B)}
    extra = [arg.format(reports=tmp_path / "reports") for arg in extra]
    run = run_playbook(
        lab,
        lab["fabric"],
        "-e",
        "cxfab_switch_host_key_checking=ture",
        *extra,
        trust=False,
        home=tmp_path,  # an empty ~/.ssh/known_hosts
        playbook=playbook,
    )
    assert run["rc"] != 0, run["output"]
    assert "cxfab_switch_host_key_checking: 'ture' is not a boolean" in run["stdout"], run["output"]
    assert {name: pair.logins(name) for name in (A, B)} == before, "nobody logged in"


def test_known_hosts_lines_paramiko_cannot_use_are_reported(lab, tmp_path):
    keys = lab["known_hosts"].read_text(encoding="utf-8")
    key = keys.split()[1:3]
    with_ca = tmp_path / "with_ca"
    with_ca.write_text(f"@cert-authority *.example.net {' '.join(key)}\n{keys}", encoding="utf-8")
    fabric = lab["fabric"]
    checked = run_playbook(lab, fabric, "--check", "-e", f"cxfab_switch_known_hosts={with_ca}")
    assert checked["rc"] == 0, checked["output"]
    assert f"{with_ca}:1: @cert-authority" in checked["stdout"] + checked["stderr"]

    revoked = tmp_path / "revoked"
    revoked.write_text(f"{keys}@revoked * {' '.join(key)}\n", encoding="utf-8")
    line = keys.count("\n") + 1
    stopped = run_playbook(lab, fabric, "--check", "-e", f"cxfab_switch_known_hosts={revoked}")
    assert stopped["rc"] != 0
    assert f"{revoked}:{line}: @revoked" in stopped["stdout"], stopped["output"]
    assert "InvalidHostKey" not in stopped["stdout"]
