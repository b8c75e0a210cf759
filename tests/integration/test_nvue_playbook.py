"""switches.yml on a cumulus pair of emulated NVUE switches: ansible-playbook, the
deploy module over HTTPS, the switches' certificates checked against a CA bundle.

The first run builds the pair with one revision per switch; the second reports
changed=0 and creates no revision (the emulators count them). `--check --diff` with
VLAN 10's MTU changed prints NVUE's own diff next to cxfab's lines and leaves each
switch as it was (its scratch revision deleted, never applied)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.integration import onyx_inventory  # noqa: E402
from tests.integration.test_switch_roles import run_playbook  # noqa: E402
from tests.lab.nvue import fixtures  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def cumulus_fabric(pair) -> dict:
    fabric = onyx_inventory.fabric([pair["lab-sw-a"].port, pair["lab-sw-b"].port])
    spec = fabric["cxfab_switch_pairs"][0]
    spec["platform"] = "cumulus"
    spec["credentials"] = {"username": fixtures.USERNAME, "password": fixtures.PASSWORD}
    spec["mlag"]["ipl"]["vlan"] = 4094  # NVUE's peerlink.4094 (rule cumulus-ipl-vlan)
    return fabric


def test_switches_yml_builds_a_cumulus_pair_and_a_second_run_creates_no_revision(tmp_path):
    with fixtures.nvue_pair(tmp_path / "run") as pair:
        bundle = tmp_path / "switch-cas.pem"
        bundle.write_text("".join(Path(s.cert).read_text() for s in pair.values()))
        lab = {"base": tmp_path, "known_hosts": tmp_path / "unused_known_hosts"}
        tls = ("-e", f"cxfab_switch_tls_ca={bundle}")
        first = run_playbook(lab, cumulus_fabric(pair), *tls)
        assert first["rc"] == 0, first["output"]
        assert first["lines"]["lab-sw-a"][0] == "nv set mlag enable on"
        # The intended config kept in build/configs speaks NVUE, not Onyx, and holds
        # every line the first run sent.
        intended = (tmp_path / "build" / "configs" / "lab-sw-a.cfg").read_text().splitlines()
        assert set(first["lines"]["lab-sw-a"]) <= set(intended), intended
        assert all(line.startswith("nv set ") for line in intended), intended
        assert {n: s.status()["revisions_created"] for n, s in pair.items()} == {
            "lab-sw-a": 1, "lab-sw-b": 1,
        }  # fmt: skip
        second = run_playbook(lab, cumulus_fabric(pair), *tls)
        assert second["rc"] == 0, second["output"]
        assert second["lines"] == {"lab-sw-a": [], "lab-sw-b": []}
        assert all(stats["changed"] == 0 for stats in second["stats"].values()), second["stats"]
        for switch in pair.values():
            status = switch.status()
            assert status["revisions_created"] == 1 and status["refusals"] == []
            assert (
                fixtures.PASSWORD
                not in (tmp_path / "build" / "deploy" / f"{switch.name}.json").read_text()
            )
        trees = {n: (s.applied(), s.request("GET", "/nvue_v1/revision")) for n, s in pair.items()}
        changed = cumulus_fabric(pair)
        changed["cxfab_vlans"][0]["mtu"] = 1500
        checked = run_playbook(lab, changed, *tls, "--check", "--diff")
        assert checked["rc"] == 0, checked["output"]
        line = "nv set interface vlan10 link mtu 1500"
        assert checked["lines"] == {"lab-sw-a": [line], "lab-sw-b": [line]}
        for name, switch in pair.items():
            assert f"{name}: the switch's own diff (nv config diff):\n  {line}" in checked["output"]
            assert f"after: {name} (cxfab's plan)" in checked["output"]
            assert (switch.applied(), switch.request("GET", "/nvue_v1/revision")) == trees[name]
            assert switch.status()["revisions_created"] == 2  # the scratch one, deleted
