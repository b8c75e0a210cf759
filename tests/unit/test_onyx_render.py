"""Rendered intended configs: golden files, guarded lines, VRRP syntax read back."""

import os

import pytest
from cxfab.switch.onyx.parser import parse_running_config
from cxfab.switch.onyx.statements import TABLE
from onyx_helpers import GOLDEN, REPO, example_fabric, intended, inventory_fabric

INVENTORIES = ["example", "lab"]


def _switches(fabric):
    return [peer["name"] for pair in fabric["switch_pairs"] for peer in pair["peers"]]


@pytest.mark.parametrize("inventory", INVENTORIES)
def test_intended_configs_match_the_golden_files(inventory):
    """Set CXFAB_UPDATE_GOLDEN=1 to rewrite them after an intended change (review the diff)."""
    directory = REPO / "inventories" / inventory
    if not any((directory / "group_vars" / "all").glob("*.yml")):
        pytest.skip(f"inventories/{inventory} has no fabric yet")
    fabric = inventory_fabric(directory)
    for switch in _switches(fabric):
        _, text = intended(fabric, switch)
        golden = GOLDEN / inventory / f"{switch}.cfg"
        if os.environ.get("CXFAB_UPDATE_GOLDEN"):
            golden.parent.mkdir(parents=True, exist_ok=True)
            golden.write_text(text)
        assert golden.exists(), f"{golden} missing: run with CXFAB_UPDATE_GOLDEN=1"
        assert text == golden.read_text(), f"{golden} drifted from the templates"


def vrrp_fabric() -> dict:
    """The example fabric with its first two VLANs on VRRP (no preempt, 3 s adverts)."""
    fabric = example_fabric()
    for vlan in fabric["vlans"][:2]:
        vlan["gateway"] = {
            "mode": "vrrp",
            "virtual_ip": vlan["gateway"]["virtual_ip"],
            "vrrp": {"preempt": False, "advertisement_interval": 3},
        }
    return fabric


def test_every_rendered_line_is_understood_by_the_parser():
    _, text = intended(vrrp_fabric(), "sw-a")
    parsed = parse_running_config(text)
    assert parsed.unknown == [] and parsed.warnings == []
    assert ("vrrp_no_preempt", 1, 1) in parsed.statements
    assert parsed.get(("vrrp_interval", 10, 10)) == 3


def test_the_template_renders_vrrp_exactly_as_the_one_dialect_table_sets_it():
    _, text = intended(vrrp_fabric(), "sw-a")
    rendered = [line for line in text.splitlines() if " vrrp " in line]
    read = [
        st for st in parse_running_config(text).statements.values() if st.kind.startswith("vrrp")
    ]
    assert rendered == [TABLE.set_line(st) for st in read]
    # Every VRRP row is rendered (sw-a is the master of VLAN 1: priority 110).
    assert {st.kind for st in read} == {k for k in TABLE.kinds if k.startswith("vrrp")}


def test_default_values_are_not_rendered():
    fabric = example_fabric()
    mpo = fabric["switch_pairs"][0]["mpos"][0]
    mpo["mtu"], mpo["description"] = 1500, None
    _, text = intended(fabric, "sw-a")
    assert "interface mlag-port-channel 1 mtu" not in text
    assert "interface mlag-port-channel 1 description" not in text
    assert "switchport access vlan 1\n" not in text
    assert "\nvlan 1\n" not in text
