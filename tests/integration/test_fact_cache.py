"""A persistent fact cache (as a site or AWX keeps one) never stands in for validation.

Every run validates what the inventory says now; a fabric or structured config
left in the cache by an earlier run (or planted there) is never deployed. The
emulated pair shows what reaches a switch.
"""

from __future__ import annotations

import copy
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

A, B = "lab-sw-a", "lab-sw-b"
POISON = "servers\nvlan 999\nvlan 999 name INJECTED"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    base = tmp_path_factory.mktemp("fact-cache")
    with fixtures.onyx_pair(base / "run") as pair:
        fabric = onyx_inventory.fabric([pair[A].port, pair[B].port])
        fabric["cxfab_switch_pairs"][0]["mpos"][0]["description"] = "servers"
        yield {
            "pair": pair,
            "base": base,
            "fabric": fabric,
            "known_hosts": pair.write_known_hosts(base / "switches_known_hosts"),
        }


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ANSIBLE_CACHE_PLUGIN", "jsonfile")
    monkeypatch.setenv("ANSIBLE_CACHE_PLUGIN_CONNECTION", str(tmp_path / "facts"))
    return tmp_path / "facts"


def _replace(value, old: str, new: str):
    """`value` with `old` replaced by `new` in every string, inside JSON texts too."""
    if isinstance(value, dict):
        return {key: _replace(item, old, new) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace(item, old, new) for item in value]
    if isinstance(value, str):
        if value.startswith("{"):
            return json.dumps(_replace(json.loads(value), old, new))
        return value.replace(old, new)
    return value


def poison(cache: Path) -> None:
    """Put newlines (two more CLI lines) into the MPO description of the cached facts."""
    (path,) = [p for p in cache.iterdir() if p.name.endswith("localhost")]
    outer = json.loads(path.read_text(encoding="utf-8"))
    facts = json.loads(outer["__payload__"])
    assert "cxfab_fabric" in facts and "cxfab_structured" in facts, sorted(facts)
    poisoned = _replace(facts, "servers", POISON)
    assert poisoned != facts
    outer["__payload__"] = json.dumps(poisoned)
    path.write_text(json.dumps(outer), encoding="utf-8")


def test_an_inventory_edited_after_a_cached_run_is_validated_again(lab, cache):
    first = run_playbook(lab, lab["fabric"], playbook="validate.yml")
    assert first["rc"] == 0, first["output"]
    fabric = copy.deepcopy(lab["fabric"])
    fabric["cxfab_switch_pairs"][0]["mpos"][0]["description"] = "x;vlan 999"
    fabric["cxfab_vlans"][0]["name"] = "data\nINJECTED"
    second = run_playbook(lab, fabric, playbook="validate.yml")
    assert second["rc"] != 0, second["output"]
    assert "is valid" not in second["stdout"]
    assert "cxfab_switch_pairs[0].mpos[0].description" in second["stdout"]
    assert "cxfab_vlans[0].name" in second["stdout"]


def test_a_poisoned_cached_fact_is_never_sent(lab, cache):
    """A cached fabric and structured config with newlines: the run validates the
    inventory (here broken too) and refuses; the switches get nothing."""
    first = run_playbook(lab, lab["fabric"], playbook="validate.yml")
    assert first["rc"] == 0, first["output"]
    poison(cache)
    fabric = copy.deepcopy(lab["fabric"])
    fabric["cxfab_switch_pairs"][0]["mpos"][0]["description"] = "x;vlan 999"
    refused = run_playbook(lab, fabric)
    assert refused["rc"] != 0, refused["output"]
    assert "cxfab_switch_pairs[0].mpos[0].description" in refused["stdout"]
    assert refused["lines"] == {}, "no switch got as far as a plan"
    for switch in (A, B):
        config = show(lab, switch, "show running-config")
        assert "vlan 999" not in config and "protocol mlag" not in config


def test_a_poisoned_cache_with_a_clean_inventory_plans_the_inventory(lab, cache):
    first = run_playbook(lab, lab["fabric"], playbook="validate.yml")
    assert first["rc"] == 0, first["output"]
    poison(cache)
    checked = run_playbook(lab, lab["fabric"], "--check")
    assert checked["rc"] == 0, checked["output"]
    planned = checked["lines"][A]
    assert "protocol mlag" in planned
    assert not any("999" in line or "INJECTED" in line for line in planned), planned
    assert "vlan 999" not in show(lab, A, "show running-config")
