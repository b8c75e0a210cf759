"""verify.yml's switch section on a cumulus pair of emulated NVUE switches.

The pair is built by switches.yml (lossless RoCE on VLAN 10), then `verify.yml --tags
verify_switches` reads it through cxfab_onyx_health over the NVUE REST API, the
certificates checked against a CA bundle: the saved state, every MLAG, backup, bond,
VRR (the `magp.N` checks) and RoCE check passes. A dead peer fails the MLAG checks it
decides, a cut JSON answer fails the checks built on it (naming why) and leaves the
others passing, and a switch whose API does not answer fails every one of its checks:
none is dropped.
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.integration.test_nvue_playbook import cumulus_fabric  # noqa: E402
from tests.integration.test_switch_roles import run_playbook  # noqa: E402
from tests.lab.nvue import fixtures  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow]

A, B = "lab-sw-a", "lab-sw-b"
# The ids each switch must report (lossless RoCE on VLAN 10's bonds, VRR on VLANs 10, 20).
MLAG = {"config.saved", "mlag.enabled", "mlag.system_mac", "mlag.ipl_config", "mlag.oper",
        "mlag.backup", "mlag.ipl_state", "mlag.mpo_status", "mpo.1", "mpo.2"}  # fmt: skip
VRR = {"magp.10.config", "magp.10.state", "magp.20.config", "magp.20.state"}


def lossless_fabric(pair) -> dict:
    fabric = cumulus_fabric(pair)
    fabric["cxfab_roce"] = {"lossless": True, "priority": 3, "vlans": [10]}
    return fabric


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    base = tmp_path_factory.mktemp("nvue-verify")
    with fixtures.nvue_pair(base / "run") as pair:
        bundle = base / "switch-cas.pem"
        bundle.write_text("".join(Path(s.cert).read_text() for s in pair.values()))
        lab = {"pair": pair, "base": base, "known_hosts": base / "unused_known_hosts",
               "tls": ("-e", f"cxfab_switch_tls_ca={bundle}")}  # fmt: skip
        built = run_playbook(lab, lossless_fabric(pair), *lab["tls"])
        assert built["rc"] == 0, built["output"]
        yield lab


def verify(lab, fabric: dict | None = None) -> tuple[dict, dict]:
    """(rc and output, {(target, id): check}) of verify.yml's switch section."""
    reports = lab["base"] / "reports"
    run = run_playbook(lab, fabric or lossless_fabric(lab["pair"]), *lab["tls"],
                       "--tags", "verify_switches", "-e", f"cxfab_reports_dir={reports}",
                       playbook="verify.yml")  # fmt: skip
    report = json.loads((reports / "latest" / "report.json").read_text())
    return run, {(c["target"], c["id"]): c for c in report["checks"]}


def failed(checks: dict) -> dict:
    return {key: c["observed"] for key, c in checks.items() if c["status"] != "pass"}


def test_a_deployed_cumulus_pair_passes_every_switch_check(lab):
    run, checks = verify(lab)
    assert failed(checks) == {}, failed(checks)
    assert run["rc"] == 0, run["output"]
    for switch in (A, B):
        ids = {i for target, i in checks if target == switch}
        assert ids >= MLAG | VRR, sorted(ids)
        # Lossless RoCE: `qos roce` judged for every member port of a RoCE VLAN's bond.
        assert {i.split(".")[0] for i in ids if i.startswith(("pfc.", "trust.", "ecn."))} == {
            "pfc", "trust", "ecn"}  # fmt: skip
    assert ("lab-pair", "mlag.system_mac_equal") in checks
    assert checks[(A, "magp.10.config")]["observed"].startswith("vrr 12.0.10.1 ")


def test_a_dead_peer_and_a_cut_answer_fail_the_checks_built_on_them(lab):
    pair = lab["pair"]
    pair[B].fault(peer_down=True)
    pair[A].fault(garble_paths=["qos/roce"])
    try:
        run, checks = verify(lab)
    finally:
        pair[B].fault(peer_down=False)
        pair[A].fault(garble_paths=[])
    bad = failed(checks)
    # lab-sw-b's peer reads dead: MLAG down, peerlink down, bonds single (backup-active
    # False is shown in mlag.backup, not judged: see nvue/health.py).
    for check_id in ("mlag.oper", "mlag.ipl_state", "mpo.1", "mlag.mpo_status"):
        assert (B, check_id) in bad, sorted(bad)
    assert "peer-alive False" in bad[(B, "mlag.oper")]
    # lab-sw-a's `nv show qos roce` came back cut: its RoCE checks fail and say why.
    roce = {key: observed for key, observed in bad.items()
            if key[0] == A and key[1].startswith(("pfc.", "trust.", "ecn."))}  # fmt: skip
    assert roce and all("not JSON" in observed for observed in roce.values()), roce
    # Nothing else failed: the faults name their checks only.
    assert set(bad) == {key for key in bad if key[0] == B or key in roce}
    assert (A, "mlag.oper") not in bad and (B, "magp.10.config") not in bad
    assert (B, "config.saved") not in bad and (B, "mlag.enabled") not in bad
    assert run["rc"] != 0


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_api_fails_every_check_of_that_switch(lab):
    fabric = lossless_fabric(lab["pair"])
    fabric["cxfab_switch_pairs"][0]["peers"][1]["mgmt_port"] = _closed_port()
    run, checks = verify(lab, fabric)
    mine = {key: c for key, c in checks.items() if key[0] == B}
    assert {i for _, i in mine} >= MLAG | VRR
    assert all(c["status"] == "fail" for c in mine.values()), failed(mine)
    assert all("cannot open the HTTPS session" in c["observed"]
               for key, c in mine.items() if key[1] != "mlag.mpo_status"), mine  # fmt: skip
    assert checks[("lab-pair", "mlag.system_mac_equal")]["status"] == "fail"
    assert failed({k: c for k, c in checks.items() if k[0] == A}) == {}
    assert run["rc"] != 0
