"""Planning link changes from live state, and refusing the connection's interfaces."""

import pytest
from cxfab.host.net import IntentError
from cxfab.host.net.linkplan import (
    check_protected,
    plan,
    protected_interfaces,
    simulate,
    summary,
)
from cxfab.structured.hosts import network_section
from hostnet_helpers import HOST, live_link


def bare_links():
    return {
        "lo": live_link(up=True, addresses=[]),
        "eno1": live_link(up=True, addresses=["10.0.2.15/24"]),
        "ens1f0": live_link(),
        "ens1f1": live_link(),
    }


def verbs(actions):
    return [(a[0], a[1]) for a in actions]


def test_plan_from_bare_ports_builds_everything_in_order():
    intent = network_section(HOST)
    actions = plan(intent, bare_links())
    order = verbs(actions)
    assert order[0] == ("create_bond", "bond0")
    assert order.index(("enslave", "ens1f0")) < order.index(("set_mtu", "bond0"))
    assert order.index(("set_mtu", "bond0")) < order.index(("create_vlan", "bond0.10"))
    assert ("add_address", "bond0.30") in order
    assert order[-1] == ("set_up", "bond0.30")
    create = dict((a[1], a[2]) for a in actions if a[0] == "create_vlan")
    assert create["bond0.10"]["egress_qos_map"] == dict.fromkeys(range(8), 1)
    assert create["bond0.30"]["egress_qos_map"] is None


def test_converged_state_plans_nothing():
    intent = network_section(HOST)
    links = bare_links()
    converged = simulate(links, plan(intent, links))
    assert plan(intent, converged) == []


def test_drifted_state_plans_only_the_drift():
    intent = network_section(HOST)
    links = simulate(bare_links(), plan(intent, bare_links()))
    links["bond0.10"]["egress_qos_map"] = {}
    links["bond0"]["bond"]["lacp_rate"] = "slow"
    links["bond0.30"]["addresses"] = ["12.0.30.99/24"]
    actions = plan(intent, links)
    assert verbs(actions) == [
        ("set_bond", "bond0"),
        ("set_egress_map", "bond0.10"),
        ("add_address", "bond0.30"),
        ("del_address", "bond0.30"),
    ]
    assert actions[0][2] == {"changes": {"lacp_rate": "fast"}, "down": True, "release": False}


def test_mode_change_releases_and_reenslaves_members():
    intent = network_section(HOST)
    links = simulate(bare_links(), plan(intent, bare_links()))
    links["bond0"]["bond"]["mode"] = "active-backup"
    actions = verbs(plan(intent, links))
    assert actions[:3] == [("set_bond", "bond0"), ("enslave", "ens1f0"), ("enslave", "ens1f1")]


def test_missing_member_names_its_key():
    links = bare_links()
    del links["ens1f1"]
    with pytest.raises(IntentError) as caught:
        plan(network_section(HOST), links)
    assert caught.value.path == "cxfab_host.bond.members[1]"


def test_management_interface_as_member_is_refused():
    host = {**HOST, "bond": {**HOST["bond"], "members": ["ens1f0", "eno1"]}}
    seeds = {"eno1": "is the management interface (cxfab_host.mgmt_interface)"}
    with pytest.raises(IntentError) as caught:
        check_protected(network_section(host), bare_links(), seeds)
    assert caught.value.path == "cxfab_host.bond.members[1]"
    assert "eno1 is the management interface" in str(caught.value)


def test_connection_over_a_vlan_protects_its_bond_and_members():
    links = simulate(bare_links(), plan(network_section(HOST), bare_links()))
    seeds = {"bond0.30": "holds 12.0.30.23, the address the Ansible connection uses"}
    protected = protected_interfaces(links, seeds)
    assert {"bond0.30", "bond0", "ens1f0", "ens1f1"} <= set(protected)
    assert "bond0.10" not in protected
    with pytest.raises(IntentError) as caught:
        check_protected(network_section(HOST), links, seeds)
    assert "Ansible connection" in str(caught.value)


def test_unrelated_connection_interface_passes():
    protected = check_protected(network_section(HOST), bare_links(), {"eno1": "mgmt"})
    assert set(protected) == {"eno1"}


def built_links():
    return simulate(bare_links(), plan(network_section(HOST), bare_links()))


def test_a_vlan_dropped_from_the_intent_is_deleted_and_shown_in_the_diff_view():
    links = built_links()
    host = {**HOST, "vlans": HOST["vlans"][:1]}  # VLAN 30 left out of the inventory
    intent = network_section(host)
    actions = plan(intent, links)
    assert verbs(actions) == [("delete", "bond0.30")]
    after = simulate(links, actions)
    assert "bond0.30" not in after and plan(intent, after) == []
    # The diff's before shows the VLAN, its after no longer does.
    assert summary(intent, links)["bond0.30"] is not None
    assert "bond0.30" not in summary(intent, after)


def test_a_renamed_vlan_is_deleted_before_its_id_is_created_again():
    links = built_links()
    intent = network_section(HOST)
    intent["vlans"][1]["name"] = "storage30"  # the same id on the same bond
    order = verbs(plan(intent, links))
    assert order.index(("delete", "bond0.30")) < order.index(("create_vlan", "storage30"))


def test_a_port_dropped_from_the_bond_is_released_and_other_links_are_left_alone():
    links = built_links()
    links["ens2f0"] = live_link(up=True, master="bond0")
    # Not on an interface of the intent: someone else's.
    links["eno1.99"] = live_link(kind="vlan", link="eno1", vlan_id=99)
    links["ens1f1.5"] = live_link(kind="vlan", link="ens1f1", vlan_id=5)
    actions = plan(network_section(HOST), links)
    assert verbs(actions) == [("release", "ens2f0")]
    assert actions[0][2] == {"master": "bond0"}
    assert simulate(links, actions)["ens2f0"]["master"] is None


def test_a_stale_vlan_that_carries_the_connection_is_refused_through_its_bond():
    links = built_links()
    seeds = {"bond0.30": "holds 12.0.30.23, the address the Ansible connection uses"}
    intent = network_section({**HOST, "vlans": HOST["vlans"][:1]})
    with pytest.raises(IntentError) as caught:
        check_protected(intent, links, seeds)
    assert caught.value.path == "cxfab_host.bond.name"
    assert "through bond0.30" in str(caught.value)
