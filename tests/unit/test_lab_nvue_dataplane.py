"""The NVUE twin's dataplane: the lab's intent, rendered for onyx and for cumulus and
applied to each emulator, gives the same Plan but for the differences
tests/lab/nvue/dataplane.py documents (bond names, Onyx's IPL VLAN and its SVI)."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest

from module_utils.cxfab.switch.nvue.render import render
from tests.lab.nvue import dataplane as nvue_dataplane
from tests.lab.nvue.model import Switch as NvueSwitch
from tests.lab.onyx.dataplane import Plan, plan
from tests.unit.nvue_helpers import cumulus
from tests.unit.test_lab_dataplane import CABLED, PEER_BOTH_UP, lab_switch

ONYX_IPL_VLAN = 4000  # the lab's Onyx IPL VLAN (fabric.yml mlag.ipl.vlan)
RENAMED = {"po100": "peerlink", "mpo1": "bond1", "mpo2": "bond2"}


def applied_tree(switch: str) -> dict:
    """The lab intent rendered for cumulus, applied through the NVUE emulator's revision
    flow (the same calls its REST handlers make)."""
    emulator = NvueSwitch(switch)
    rev, _ = emulator.create_revision()
    emulator.patch(rev, (), render(cumulus("lab", switch)))
    assert (
        emulator.change_state(rev, {"state": "apply", "auto-prompt": {"ays": "ays_yes"}})["state"]
        == "applied_and_saved"
    )
    return emulator.read((), "applied")


def onyx_plan_as_nvue_names(switch: str) -> Plan:
    """The Onyx twin's plan of the same switch with the documented differences taken out."""
    got = plan(lab_switch(switch), CABLED, PEER_BOTH_UP)

    def rename(name):
        return RENAMED.get(name, name)

    links = {}
    for name, link in got.links.items():
        if name == f"vlan{ONYX_IPL_VLAN}":
            continue
        links[rename(name)] = replace(
            link, name=rename(name), master=link.master and rename(link.master)
        )
    vlans = {
        rename(port): {vid: flags for vid, flags in vids.items() if vid != ONYX_IPL_VLAN}
        for port, vids in got.vlans.items()
    }
    addresses = {k: v for k, v in got.addresses.items() if k != f"vlan{ONYX_IPL_VLAN}"}
    return replace(
        got, links=links, vlans=vlans, addresses=addresses, ipl=rename(got.ipl),
        dual_connected={rename(n) for n in got.dual_connected},
        mlag_bonds={rename(n) for n in got.mlag_bonds},
    )  # fmt: skip


@pytest.mark.parametrize("switch", ["lab-sw-a", "lab-sw-b"])
def test_same_intent_same_dataplane_on_both_oses(switch):
    cumulus_plan = nvue_dataplane.nvue_plan(applied_tree(switch), switch, CABLED, PEER_BOTH_UP)
    assert cumulus_plan == onyx_plan_as_nvue_names(switch)


def test_the_nvue_plan_carries_mlag_vrr_and_the_bridge():
    got = nvue_dataplane.nvue_plan(applied_tree("lab-sw-a"), "lab-sw-a", CABLED, PEER_BOTH_UP)
    bond = got.links["bond1"]
    # `mlag mac-address` is the LACP actor system of every MLAG bond, not of the peerlink
    assert bond.options["ad_actor_system"] == "00:00:5e:00:01:5d"
    assert "ad_actor_system" not in got.links["peerlink"].options
    assert got.links["swp35"].master == "peerlink" and got.ipl == "peerlink"
    assert got.links["peerlink"].learning is False
    # `untagged 1` + vlan 10,20,30 on the bond: VLAN 1 the PVID, the others tagged
    assert got.vlans["bond1"] == {1: (True, True), 10: (False, False), 20: (False, False),
                                  30: (False, False)}  # fmt: skip
    # VRR: the shared MAC and address as the gateway macvlan, the MAC local on the bridge
    vrr = got.links["vlan10-m10"]
    assert (vrr.kind, vrr.address, vrr.lower) == ("macvlan", "00:00:5e:00:01:0a", "vlan10")
    assert got.addresses["vlan10-m10"] == {"12.0.10.1/32"}
    assert ("00:00:5e:00:01:0a", 10) in got.fdb
    assert got.dual_connected == {"bond1", "bond2"}


def test_tree_changes_reach_the_plan():
    tree = applied_tree("lab-sw-a")
    changed = copy.deepcopy(tree)
    changed["interface"]["bond2"]["link"]["state"] = "down"
    changed["interface"]["bond1"]["bridge"]["domain"]["br_default"]["untagged"] = "none"
    del changed["router"]  # no `router vrr enable on`: no VRR answers
    got = nvue_dataplane.nvue_plan(changed, "lab-sw-a", CABLED, PEER_BOTH_UP)
    assert got.links["bond2"].up is False and "bond2" not in got.dual_connected
    assert 1 not in got.vlans["bond1"]
    assert not any(name.endswith("-m10") for name in got.links)


def test_a_bond_without_an_mlag_id_is_refused_not_guessed():
    tree = applied_tree("lab-sw-a")
    del tree["interface"]["bond1"]["bond"]["mlag"]
    with pytest.raises(nvue_dataplane.NvueTreeError, match="bond1"):
        nvue_dataplane.nvue_plan(tree, "lab-sw-a", CABLED, PEER_BOTH_UP)


def test_a_cabled_port_the_tree_does_not_name_is_down():
    got = nvue_dataplane.nvue_plan(applied_tree("lab-sw-a"), "lab-sw-a", {**CABLED, "1/9": "x"})
    assert got.links["swp9"].up is False and got.links["swp1"].up is True
    blank = nvue_dataplane.nvue_plan({}, "lab-sw-a", CABLED)
    assert not any(link.up for name, link in blank.links.items() if name.startswith("swp"))
