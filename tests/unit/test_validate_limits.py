"""Smaller holes of issue 26: misspelled prefixes, NaN, and error messages of bounded size."""

from __future__ import annotations

import pytest
from cxfab.intent.validate import validate_inventory

from tests.tools import inventory

EXAMPLE = inventory.load()


def errors(patches=(), extra_vars=None) -> list[str]:
    inv = inventory.apply(EXAMPLE, list(patches))
    fabric_vars = {**inv.fabric_vars(), **(extra_vars or {})}
    result = validate_inventory(fabric_vars, inv.cxfab_hosts(), inv.groups, inv.host_settings())
    return [str(error) for error in result.errors]


@pytest.mark.parametrize(
    "name", ["CXFAB_vlans", "cxfab-vlans", "Cxfab_Vlans", "cxfab-switch_prune"]
)
def test_a_misspelled_prefix_is_an_unknown_variable(name):
    found = errors(extra_vars={name: []})
    assert any(
        line.startswith(f"{name}: unknown cxfab variable; did you mean") for line in found
    ), found


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "nan", "-inf"])
def test_a_threshold_that_is_not_a_finite_number_is_refused(value):
    path = "cxfab_workloads.thresholds.link_fraction"
    found = errors([{"path": path, "value": value}])
    assert any(line.startswith(f"{path}: ") and "finite" in line for line in found), found


@pytest.mark.parametrize(
    ("path", "host"),
    [
        ("cxfab_vlans[0].name", None),
        ("cxfab_switch_pairs[0].mlag.domain", None),
        ("cxfab_host.bond.name", "apricot"),
        ("cxfab_switch_pairs[0].peers[0].mgmt_address", None),
    ],
)
def test_an_error_cuts_a_long_value(path, host):
    value = "a" * 9_000 + "\n" + "b" * 1_000
    found = errors([{"host": host, "path": path, "value": value}])
    mine = [line for line in found if line.startswith(path)]
    assert mine, found
    for line in mine:
        assert len(line) < 600, line[:200]
        assert "a" * 100 not in line, line[:600]  # shown cut, if at all


@pytest.mark.parametrize(
    "image",
    ["../../etc/shadow", "files/../../secrets/fw.bin", "files/firmware/..", "/var/../root/fw.bin"],
)
def test_a_firmware_image_path_with_dotdot_is_refused(image):
    path = "cxfab_host.nics[0].firmware.image"
    found = errors([{"host": "apricot", "path": path, "value": image}])
    assert any(line.startswith(path) and "no `..`" in line for line in found), found


def test_a_firmware_image_under_the_inventory_passes():
    path = "cxfab_host.nics[0].firmware.image"
    found = errors([{"host": "apricot", "path": path, "value": "files/firmware/fw-cx4..v2.bin"}])
    assert not [line for line in found if line.startswith(path)], found
