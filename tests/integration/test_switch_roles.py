"""switches.yml against the emulated Onyx pair: real SSH, netmiko, ansible-playbook.

One pair for the whole module (the runs build on each other, like an operator's day):
blank pair -> MLAG + VLANs + MAGP; re-run sends nothing; --check --diff lists exactly
what the real run then sends (MAGP->VRRP and a VLAN removal); a system-MAC change stops
the rollout after the first peer with the observed value.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.integration import onyx_inventory  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow]
fixtures = pytest.importorskip("tests.lab.onyx.fixtures")
netmiko = pytest.importorskip("netmiko")

from cxfab.switch.onyx.session import OnyxSession  # noqa: E402


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    base = tmp_path_factory.mktemp("switches")
    with fixtures.onyx_pair(base / "run") as pair:
        ports = [pair["lab-sw-a"].port, pair["lab-sw-b"].port]
        yield {
            "pair": pair,
            "base": base,
            "fabric": onyx_inventory.fabric(ports),
            # The operator's step: the switches' keys in the file the inventory names.
            "known_hosts": pair.write_known_hosts(base / "switches_known_hosts"),
        }


def run_playbook(
    lab,
    fabric: dict,
    *extra: str,
    trust: bool = True,
    home: Path | None = None,
    playbook: str = "switches.yml",
) -> dict:
    """Run switches.yml (or `playbook`); returns rc, output and the per-host lines of the
    deploy task.

    trust=False leaves cxfab_switch_known_hosts out of the inventory (the role's
    default file is then checked); `home` replaces HOME (where that default lives)."""
    known_hosts = lab["known_hosts"] if trust else None
    inventory = onyx_inventory.write(lab["base"] / "inventory", fabric, known_hosts)
    env = dict(
        os.environ,
        ANSIBLE_CONFIG=str(REPO / "ansible.cfg"),
        PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    )
    if home is not None:
        env["HOME"] = str(home)
    cmd = [
        "ansible-playbook",
        f"playbooks/{playbook}",
        "-i",
        str(inventory),
        "-e",
        f"cxfab_build_dir={lab['base'] / 'build'}",
        "-e",
        f"cxfab_switch_snapshot_dir={lab['base'] / 'snapshots'}",
        "-e",
        "cxfab_switch_health_wait=15",
        *extra,
    ]
    records = lab["base"] / "build" / "deploy"
    for old in records.glob("*.json"):
        old.unlink()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=400)
    lines, health = {}, {}
    for path in records.glob("*.json"):
        record = json.loads(path.read_text())
        lines[record["switch"]] = record["lines"]
        health[record["switch"]] = record
    stats = {
        host: {"changed": int(changed), "failed": int(failed)}
        for host, changed, failed in re.findall(
            r"^(\S+)\s+: ok=\d+\s+changed=(\d+).*?failed=(\d+)", proc.stdout, re.MULTILINE
        )
    }
    return {
        "rc": proc.returncode,
        "stats": stats,
        "lines": lines,
        "health": health,
        "output": proc.stdout[-3000:] + proc.stderr[-2000:],
        "stdout": proc.stdout,
        "stderr": proc.stderr,
    }


def show(lab, switch: str, command: str) -> str:
    endpoint = lab["pair"][switch]
    credentials = (endpoint.host, endpoint.port, endpoint.username, endpoint.password)
    with OnyxSession(*credentials, known_hosts=str(lab["known_hosts"])) as cli:
        return cli.show(command)


def test_blank_pair_is_built_and_healthy(lab):
    result = run_playbook(lab, lab["fabric"])
    assert result["rc"] == 0, result["output"]
    assert "protocol mlag" in result["lines"]["lab-sw-a"]
    for switch in ("lab-sw-a", "lab-sw-b"):
        mlag = show(lab, switch, "show mlag")
        assert re.search(r"Operational status: Up", mlag)
        assert re.search(r"^1\s+Po100\s+4000\s+Up", mlag, re.MULTILINE)
        assert re.search(r"Active-full:\s+2", mlag)
        assert "Unsaved changes : no" in show(lab, switch, "show configuration files")
    snapshots = list((lab["base"] / "snapshots" / "lab-sw-a").glob("*.cfg"))
    assert len(snapshots) == 1 and snapshots[0].read_text().startswith("##")
    assert snapshots[0].stat().st_mode & 0o777 == 0o600


def test_second_run_sends_nothing(lab):
    result = run_playbook(lab, lab["fabric"])
    assert result["rc"] == 0, result["output"]
    assert result["lines"] == {"lab-sw-a": [], "lab-sw-b": []}
    assert all(stats["changed"] == 0 for stats in result["stats"].values())


def test_check_diff_lists_exactly_what_the_run_sends(lab):
    fabric = copy.deepcopy(lab["fabric"])
    vlan20 = fabric["cxfab_vlans"][1]
    vlan20["gateway"] = {"mode": "vrrp", "virtual_ip": "12.0.20.1", "vrrp": {}}
    fabric["cxfab_vlans"].append(
        {
            "id": 30,
            "name": "extra",
            "subnet": "12.0.30.0/24",
            "gateway": {"mode": "none"},
            "svi_addresses": {"lab-sw-a": "12.0.30.252/24", "lab-sw-b": "12.0.30.253/24"},
        }
    )
    built = run_playbook(lab, fabric)
    assert built["rc"] == 0, built["output"]

    # Now remove VLAN 30 again and look first with --check --diff.
    fabric["cxfab_vlans"].pop()
    checked = run_playbook(lab, fabric, "--check", "--diff")
    assert checked["rc"] == 0, checked["output"]
    assert checked["lines"]["lab-sw-a"] == ["no interface vlan 30", "no vlan 30"]
    real = run_playbook(lab, fabric)
    assert real["rc"] == 0
    assert real["lines"] == checked["lines"]
    # MAGP->VRRP happened in the first run: one master per VRID, spread by VLAN order.
    vrrp = {s: show(lab, s, "show vrrp") for s in ("lab-sw-a", "lab-sw-b")}
    assert sum("Master" in out for out in vrrp.values()) == 1
    assert "MAGP 20" not in show(lab, "lab-sw-a", "show magp")


def test_system_mac_change_is_reverted_on_the_first_peer_and_the_partner_untouched(lab):
    fabric = copy.deepcopy(lab["fabric"])
    fabric["cxfab_vlans"][1]["gateway"] = {"mode": "vrrp", "virtual_ip": "12.0.20.1", "vrrp": {}}
    fabric["cxfab_switch_pairs"][0]["mlag"]["system_mac"] = "00:00:5E:00:01:5E"
    result = run_playbook(lab, fabric)
    assert result["rc"] != 0
    assert result["lines"]["lab-sw-a"] == ["mlag system-mac 00:00:5E:00:01:5E"]
    assert "lab-sw-b" not in result["lines"], "the second peer must not be touched"
    failed = {c["id"]: c for c in result["health"]["lab-sw-a"]["post_failed"]}
    assert "mlag.system_mac" in failed or "mlag.system_mac_equal" in failed
    observed = " ".join(str(c["observed"]) for c in failed.values())
    assert "00:00:5E:00:01:5E" in observed or "Mismatched" in observed
    assert "00:00:5E:00:01:5D" in show(lab, "lab-sw-b", "show running-config")
    revert = result["health"]["lab-sw-a"]["revert"]
    assert revert["lines"] == ["mlag system-mac 00:00:5E:00:01:5D"]
    assert revert["proof"]["equal"] is True
    assert "mlag system-mac 00:00:5E:00:01:5D" in show(lab, "lab-sw-a", "show running-config")
    for switch in ("lab-sw-a", "lab-sw-b"):
        assert "Unsaved changes : no" in show(lab, switch, "show configuration files")
    yaml.safe_dump(failed)  # the report is plain data
