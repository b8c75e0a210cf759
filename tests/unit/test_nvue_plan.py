"""NVUE plan: minimal set/unset operations within cxfab's scope; a second run sends nothing."""

import copy

from cxfab.switch.nvue import plan, render, spec

from tests.unit.nvue_helpers import cumulus


def _merge(tree: dict, patch: dict) -> dict:
    for key, value in patch.items():
        if isinstance(value, dict) and value and isinstance(tree.get(key), dict):
            _merge(tree[key], value)
        else:
            tree[key] = copy.deepcopy(value)
    return tree


def _apply(applied: dict, ops: list[dict]) -> dict:
    """What the switch would hold after the operations (an emulator's view)."""
    applied = copy.deepcopy(applied)
    for op in ops:
        if op["op"] == "unset":
            node = applied
            for key in op["path"][:-1]:
                node = node[key]
            del node[op["path"][-1]]
    return _merge(applied, plan.body(ops))


def setup():
    structured = cumulus("example", "sw-a")
    return structured, render.render(structured)


def test_a_blank_switch_gets_every_leaf_and_a_second_run_sends_nothing():
    structured, desired = setup()
    ops = plan.plan(structured, desired, {})
    assert all(op["op"] == "set" for op in ops)
    assert len(ops) == len(plan.leaves(desired))
    assert spec.validate(plan.body(ops)) == []
    assert plan.plan(structured, desired, _apply({}, ops)) == []


def test_equal_trees_give_no_operation():
    structured, desired = setup()
    assert plan.plan(structured, desired, copy.deepcopy(desired)) == []


def test_a_changed_value_is_one_set():
    structured, desired = setup()
    applied = copy.deepcopy(desired)
    applied["interface"]["bond1"]["link"]["mtu"] = 1500
    applied["interface"]["vlan10"]["ip"]["vrr"]["state"] = {"down": {}}
    ops = plan.plan(structured, desired, applied)
    assert plan.cli_lines(ops) == [
        "nv unset interface vlan10 ip vrr state down",
        "nv set interface bond1 link mtu 9216",
        "nv set interface vlan10 ip vrr state up",
    ]
    assert plan.plan(structured, desired, _apply(applied, ops)) == []


def test_extras_inside_what_cxfab_renders_are_unset_and_the_operators_settings_stay():
    structured, desired = setup()
    applied = copy.deepcopy(desired)
    bond1 = applied["interface"]["bond1"]
    bond1["bond"]["member"]["swp9"] = {}  # an extra member of a cxfab bond: cxfab's
    bond1["bond"]["lacp-rate"] = "slow"  # not rendered by cxfab: the operator's
    applied["interface"]["swp1"]["link"]["speed"] = "100G"  # an swp's speed: the operator's
    applied["interface"]["swp20"] = {"type": "swp"}  # a port cxfab does not use
    applied["interface"]["eth0"] = {"ip": {"vrf": "mgmt"}, "type": "eth"}
    applied["system"] = {"hostname": "sw-a"}
    ops = plan.plan(structured, desired, applied)
    assert plan.cli_lines(ops) == ["nv unset interface bond1 bond member swp9"]


def test_an_absent_mpo_in_scope_is_removed_whole():
    structured, desired = setup()
    applied = copy.deepcopy(desired)
    applied["interface"]["bond3"] = {"type": "bond", "bond": {"mlag": {"id": 3}}}
    structured["scope"]["mlag_bonds"] = [1, 2, 3]
    assert plan.cli_lines(plan.plan(structured, desired, applied)) == ["nv unset interface bond3"]


def test_prune_decides_about_objects_cxfab_no_longer_intends():
    structured, desired = setup()
    applied = copy.deepcopy(desired)
    applied["bridge"]["domain"]["br_default"]["vlan"]["99"] = {}
    applied["interface"]["vlan99"] = {"type": "svi", "vlan": 99}
    applied["interface"]["bond50"] = {"type": "bond", "bond": {"mlag": {"id": 50}}}
    applied["interface"]["bond60"] = {"type": "bond", "bond": {"member": {"swp60": {}}}}
    pruned = plan.cli_lines(plan.plan(structured, desired, applied))
    assert pruned == [
        "nv unset bridge domain br_default vlan 99",
        "nv unset interface vlan99",
        "nv unset interface bond50",  # an MLAG bond cxfab no longer intends
    ]  # bond60 is not an MLAG bond: left alone
    structured["scope"]["prune"] = False
    assert plan.plan(structured, desired, applied) == []


def test_mlag_and_roce_are_cxfabs_only_in_scope():
    structured, desired = setup()
    applied = copy.deepcopy(desired)
    applied["mlag"]["priority"] = 1000  # not rendered: the operator's
    applied["mlag"]["backup"]["10.0.0.99"] = {}
    assert plan.cli_lines(plan.plan(structured, desired, applied)) == [
        "nv unset mlag backup 10.0.0.99"
    ]
    structured["scope"]["mlag"] = False
    assert plan.plan(structured, desired, applied) == []


def test_cli_lines_quote_values_with_spaces():
    ops = [{"op": "set", "path": ["interface", "bond1", "description"], "value": "h1 bond0"}]
    assert plan.cli_lines(ops) == ["nv set interface bond1 description 'h1 bond0'"]
