"""NVUE render: golden trees of the lab/example switches as cumulus, and refusals."""

import json

import pytest
from cxfab.switch.nvue import render, spec
from cxfab.switch.nvue.render import RenderError

from tests.unit.nvue_helpers import GOLDEN, cumulus

SWITCHES = [("lab", "lab-sw-a"), ("lab", "lab-sw-b"), ("example", "sw-a"), ("example", "sw-b")]


@pytest.mark.parametrize("fabric,switch", SWITCHES, ids=[s for _, s in SWITCHES])
def test_the_rendered_tree_is_the_golden_one_and_passes_the_spec(fabric, switch):
    tree = render.render(cumulus(fabric, switch))
    golden = json.loads((GOLDEN / "nvue" / f"{switch}.json").read_text(encoding="utf-8"))
    assert tree == golden
    assert spec.validate(tree) == []


def test_mlag_follows_the_mlag_page():
    tree = render.render(cumulus("example", "sw-a"))
    assert tree["mlag"] == {
        "enable": "on",
        "mac-address": "00:00:5E:00:01:5D",
        "backup": {"10.0.0.52": {"vrf": "mgmt"}},  # the partner's management address
        "peer-ip": "linklocal",
    }
    interfaces = tree["interface"]
    assert interfaces["peerlink"]["type"] == "peerlink"
    assert interfaces["peerlink"]["bond"]["member"] == {"swp35": {}, "swp36": {}}
    assert interfaces["peerlink.4094"] == {
        "type": "sub",
        "base-interface": "peerlink",
        "vlan": 4094,
    }
    bond = interfaces["bond1"]
    assert bond["bond"]["mlag"] == {"enable": "on", "id": 1}
    assert bond["bond"]["member"] == {"swp1": {}}
    assert bond["bond"]["mode"] == "lacp"
    assert bond["bridge"]["domain"]["br_default"] == {
        "vlan": {"10": {}, "20": {}, "30": {}},
        "untagged": 1,
    }
    assert bond["link"]["mtu"] == 9216


def test_svis_carry_the_gateway_as_vrr_with_the_subnet_prefix():
    tree = render.render(cumulus("lab", "lab-sw-b"))
    svi = tree["interface"]["vlan10"]
    assert svi["type"] == "svi" and svi["vlan"] == 10
    assert svi["ip"]["address"] == {"12.0.10.253/24": {}}
    assert svi["ip"]["vrr"] == {
        "address": {"12.0.10.1/24": {}},
        "mac-address": "00:00:5E:00:01:0A",
        "enable": "on",
        "state": {"up": {}},
    }
    assert tree["router"] == {"vrr": {"enable": "on"}}
    assert tree["bridge"]["domain"]["br_default"]["vlan"] == {
        "1": {},
        "10": {},
        "20": {},
        "30": {},
    }


def test_lossless_roce_is_qos_roce_mode_lossless():
    assert render.render(cumulus("example", "sw-a"))["qos"] == {
        "roce": {"enable": "on", "mode": "lossless"}
    }
    assert "qos" not in render.render(cumulus("lab", "lab-sw-a"))


def test_access_trunk_and_static_bonds():
    structured = cumulus("lab", "lab-sw-a")
    structured["mlag_bonds"][0].update(switchport_mode="access", access_vlan=10)
    structured["mlag_bonds"][1].update(switchport_mode="trunk", lacp_mode="on")
    interfaces = render.render(structured)["interface"]
    assert interfaces["bond1"]["bridge"]["domain"]["br_default"] == {"access": 10}
    assert interfaces["bond2"]["bridge"]["domain"]["br_default"]["untagged"] == "none"
    assert interfaces["bond2"]["bond"]["mode"] == "static"


@pytest.mark.parametrize(
    "edit,message",
    [
        (lambda s: s.update(release="5.15"), "Cumulus Linux 5.15"),
        (lambda s: s.update(platform="onyx"), "is not cumulus"),
        (lambda s: s["mlag"]["peer_link"].update(vlan=4000), "peerlink.4094"),
        (lambda s: s["mlag_bonds"][0].update(lacp_mode="passive"), "no passive LACP"),
        (lambda s: s["mlag_bonds"][0].update(members=["1/1/2"]), "only whole ports"),
        (lambda s: s["partner_management"].update(address="sw-b.example"), "IPv4 address"),
        (lambda s: s.update(vrrp=[{"vlan": 1, "vrid": 1}]), "cannot run VRR and VRRP"),
        (lambda s: s["lossless"].update(priority=4), "priority 3"),
    ],
)
def test_what_nvue_cannot_express_is_refused(edit, message):
    structured = cumulus("example", "sw-a")
    edit(structured)
    with pytest.raises((RenderError, ValueError), match=message):
        render.render(structured)
