"""The kept NVUE spec parts catch a wrong path, type, enum, range or key."""

import copy

from cxfab.switch.nvue import render, spec

from tests.unit.nvue_helpers import cumulus

TREE = render.render(cumulus("example", "sw-a"))


def test_a_rendered_tree_is_valid():
    assert spec.validate(TREE) == []


def test_a_wrong_path_fails():
    tree = copy.deepcopy(TREE)
    tree["interface"]["vlan10"]["ipv4"] = tree["interface"]["vlan10"].pop("ip")  # 5.15 name
    tree["mlag"]["system-mac"] = "00:00:5E:00:01:5D"
    problems = spec.validate(tree)
    assert "interface.vlan10.ipv4: not a path cxfab has confirmed" in problems
    assert "mlag.system-mac: not a path cxfab has confirmed" in problems


def test_a_wrong_type_enum_range_or_format_fails():
    tree = copy.deepcopy(TREE)
    tree["interface"]["bond1"]["bond"]["mlag"]["id"] = "1"
    tree["interface"]["bond1"]["bond"]["mode"] = "802.3ad"
    tree["interface"]["bond2"]["link"]["mtu"] = 10000
    tree["interface"]["bond2"]["bond"]["mlag"]["enable"] = True
    tree["mlag"]["mac-address"] = "00:00:5E:00:01"
    tree["qos"]["roce"]["mode"] = "lossles"
    problems = spec.validate(tree)
    assert "interface.bond1.bond.mlag.id: '1' is not of type integer" in problems
    assert any(p.startswith("interface.bond1.bond.mode: '802.3ad' is not one of") for p in problems)
    assert "interface.bond2.link.mtu: 10000 is outside 552..9216" in problems
    assert "interface.bond2.bond.mlag.enable: True is not of type string" in problems
    assert "mlag.mac-address: '00:00:5E:00:01' is not a valid mac" in problems
    assert any(p.startswith("qos.roce.mode: 'lossles'") for p in problems)
    assert len(problems) == 6


def test_a_malformed_key_or_non_object_fails():
    problems = spec.validate({"bridge": {"domain": {"br_default": {"vlan": {"4095": {}}}}}})
    assert problems == ["bridge.domain.br_default.vlan.4095: key is not a valid vlan-id"]
    assert spec.validate({"interface": {"vlan10": {"ip": {"address": ["10.0.0.1/24"]}}}}) == [
        "interface.vlan10.ip.address: expected an object, got list"
    ]


def test_a_body_placed_below_the_root_is_checked_there():
    assert spec.validate({"mode": "lossless"}, at=("qos", "roce")) == []
    assert spec.validate({"mode": "x"}, at=("qos", "roce"))[0].startswith("qos.roce.mode")
    assert spec.validate({}, at=("qos", "pfc")) == ["qos.pfc: not a path cxfab has confirmed"]


def test_the_spec_names_its_source():
    source = spec.spec()["SOURCE"]
    assert source["repository"] == "CumulusNetworks/docs"
    assert all(path in source["commits"] for path in source["files"])
