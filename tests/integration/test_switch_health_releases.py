"""The health module on a pair of the oldest supported release (3.6.5000).

3.6.5000 predates `| json-print`'s named-list shape, so every health read is text,
in the layouts of that era (`Peers state Summary:` with unindented counters, the
`MLAG VIP` / `========` header with the VIP as `a.b.c.d /24`), as the emulator
prints them by release. verify.yml's switch section must read them all and pass.
"""

from __future__ import annotations

import json
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

RELEASE = "3.6.5000"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    base = tmp_path_factory.mktemp("health-3.6")
    with fixtures.onyx_pair(base / "run", version=RELEASE) as pair:
        ports = [pair["lab-sw-a"].port, pair["lab-sw-b"].port]
        lab = {"pair": pair, "base": base, "fabric": onyx_inventory.fabric(ports)}
        lab["known_hosts"] = pair.write_known_hosts(base / "switches_known_hosts")
        built = run_playbook(lab, lab["fabric"])
        assert built["rc"] == 0, built["output"]
        yield lab


def test_the_pair_prints_the_3_6_layouts(lab):
    assert "Peers state Summary:" in show(lab, "lab-sw-a", "show mlag")
    vip = show(lab, "lab-sw-b", "show mlag-vip")
    assert vip.startswith("MLAG VIP\n========") and "10.0.0.50 /24" in vip


def test_verify_reads_every_switch_check_of_a_3_6_5000_pair(lab):
    reports = lab["base"] / "reports"
    run = run_playbook(
        lab,
        lab["fabric"],
        "--tags",
        "verify_switches",
        "-e",
        f"cxfab_reports_dir={reports}",
        "-e",
        "verify_switch_health_wait=15",
        playbook="verify.yml",
    )
    report = json.loads((reports / "latest" / "report.json").read_text())
    checks = [c for c in report["checks"] if c["target"].startswith("lab-")]
    ids = {c["id"] for c in checks}
    # Each text read of the era is behind some check: show mlag, mlag-vip, the MPO
    # summary, show magp, show configuration files.
    assert {"mlag.oper", "mlag_vip.nodes", "mlag_vip.address", "mpo.1", "magp.10.state"} <= ids
    assert {"config.saved", "mlag.system_mac_equal"} <= ids
    failed = [c for c in checks if c["status"] != "pass"]
    assert failed == [], failed
    assert run["rc"] == 0, run["output"]
