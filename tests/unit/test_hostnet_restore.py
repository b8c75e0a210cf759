"""Restore planning: a change planned forward, simulated, then planned back to the snapshot."""

import copy

import pytest
from cxfab.host.net.linkplan import plan, simulate
from cxfab.host.net.restore import (
    differences,
    restore_intent,
    restore_plan,
    snapshot_names,
    take_snapshot,
)
from cxfab.structured.hosts import network_section
from hostnet_helpers import HOST, live_link

BOND_PARAMS = {"miimon": 100, "xmit_hash_policy": "layer2"}


def bond(mode="802.3ad", lacp_rate="fast", **extra):
    return live_link(
        kind="bond", bond={"mode": mode, "lacp_rate": lacp_rate, **BOND_PARAMS}, **extra
    )


def vlan(link, vlan_id, **extra):
    return live_link(kind="vlan", link=link, vlan_id=vlan_id, **{"egress_qos_map": {}, **extra})


def bare():
    return {
        "lo": live_link(up=True),
        "eno1": live_link(up=True, addresses=["10.0.2.15/24"]),
        "ens1f0": live_link(up=True, addresses=["10.250.0.1/24"]),
        "ens1f1": live_link(),
    }


def drifted():
    """A bond0 built by hand: other mode, LACP rate, MTU; a VLAN with the wrong id and
    map, an extra address, an operator's VLAN on the bond and a third port in it."""
    links = bare()
    links["ens1f0"] = live_link(master="bond0", up=True)
    links["ens1f1"] = live_link(master="bond0", up=True)
    links["ens2"] = live_link(master="bond0", up=True)
    links["bond0"] = bond("balance-xor", None, up=True, addresses=["12.0.0.99/24"])
    links["bond0.30"] = vlan("bond0", 31, egress_qos_map={0: 4}, up=True)
    links["bond0.10"] = vlan("bond0", 10, egress_qos_map={0: 2}, up=False,
                             addresses=["12.0.10.23/24", "12.0.10.5/24"])  # fmt: skip
    links["bond0.99"] = vlan("bond0", 99, up=True, addresses=["192.0.2.1/24"])
    return links


def foreign_bond():
    """ens1f1 sits in an operator's bond9 that the change takes it from."""
    links = bare()
    links["bond9"] = bond("active-backup", None, up=True)
    links["ens1f1"] = live_link(master="bond9", up=True, mtu=4000)
    return links


def forward(links):
    """What the host holds after applying the intent (as the module would)."""
    return simulate(links, plan(network_section(HOST), links))


def restore(before, now):
    """Plan the restore, apply it in simulation; plan again until nothing is left."""
    rounds = 0
    while actions := restore_plan(before, now):
        now = simulate(now, actions)
        rounds += 1
        assert rounds < 3, f"restore does not converge: {actions}"
    return now, rounds


@pytest.mark.parametrize("initial", [bare, drifted, foreign_bond])
def test_restore_puts_every_snapshot_link_back_in_one_pass(initial):
    links = initial()
    before = take_snapshot(network_section(HOST), links)
    after = forward(links)
    assert differences(before, after), "the change must differ from the snapshot"
    restored, rounds = restore(before, after)
    assert differences(before, restored) == []
    assert rounds == 1
    # Links outside the snapshot are as the change left them (never touched back).
    for name in set(links) - set(before):
        assert restored.get(name) == after.get(name), name


def test_snapshot_covers_what_the_change_creates_and_what_hangs_on_the_bond():
    names = snapshot_names(network_section(HOST), drifted())
    assert names == ["bond0", "bond0.10", "bond0.30", "bond0.99", "ens1f0", "ens1f1", "ens2"]
    snapshot = take_snapshot(network_section(HOST), bare())
    assert snapshot["bond0"] is None and snapshot["bond0.10"] is None
    assert "eno1" not in snapshot


def test_restore_of_a_fresh_build_deletes_vlans_then_bond_then_fixes_the_ports():
    before = take_snapshot(network_section(HOST), bare())
    actions = restore_plan(before, forward(bare()))
    verbs = [(a[0], a[1]) for a in actions]
    assert verbs[:3] == [("delete", "bond0.10"), ("delete", "bond0.30"), ("delete", "bond0")]
    assert ("set_mtu", "ens1f0") in verbs and ("set_mtu", "ens1f1") in verbs
    # Released ports go down: ens1f0 was up and comes back up; ens1f1 was down and stays down.
    assert ("set_up", "ens1f0") in verbs
    assert ("set_up", "ens1f1") not in verbs


def test_restore_recreates_a_replaced_vlan_and_puts_the_bond_mode_back():
    links = drifted()
    before = take_snapshot(network_section(HOST), links)
    verbs = [(a[0], a[1]) for a in restore_plan(before, forward(links))]
    assert verbs.index(("delete", "bond0.30")) < verbs.index(("create_vlan", "bond0.30"))
    assert ("set_bond", "bond0") in verbs
    assert ("enslave", "ens2") in verbs  # the mode change released it
    assert ("set_down", "bond0.10") in verbs


def test_restore_gives_a_port_back_to_the_bond_it_came_from():
    links = foreign_bond()
    before = take_snapshot(network_section(HOST), links)
    actions = restore_plan(before, forward(links))
    assert ("enslave", "ens1f1", {"master": "bond9", "old": None}) in actions


def test_restored_state_plans_nothing_and_snapshot_is_not_modified():
    links = drifted()
    before = take_snapshot(network_section(HOST), links)
    kept = copy.deepcopy(before)
    restored, _ = restore(before, forward(links))
    assert restore_plan(before, restored) == []
    assert before == kept


def test_restore_intent_lists_the_snapshot_bond_members_and_vlans():
    intent = restore_intent(take_snapshot(network_section(HOST), drifted()))
    assert intent["bond"]["members"] == ["ens1f0", "ens1f1", "ens2"]
    assert intent["bond"]["mode"] == "balance-xor"
    assert [v["name"] for v in intent["vlans"]] == ["bond0.10", "bond0.30", "bond0.99"]
    assert intent["vlans"][1]["id"] == 31


def test_a_stale_vlan_and_port_removed_by_the_change_come_back_with_the_restore():
    links = drifted()  # bond0.99 and ens2 are not in the intent
    before = take_snapshot(network_section(HOST), links)
    after = forward(links)
    assert "bond0.99" not in after and after["ens2"]["master"] is None
    restored, _ = restore(before, after)
    assert restored["bond0.99"]["addresses"] == ["192.0.2.1/24"]
    assert restored["bond0.99"]["vlan_id"] == 99 and restored["ens2"]["master"] == "bond0"
