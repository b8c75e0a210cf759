"""VRRP on a cumulus switch: the NVUE tree (VRR-and-VRRP set commands of the NVUE
command reference, 5.14-and-earlier `ip vrrp` names), its spec check, the plan that
removes it, the health read of `nv show ... ip vrrp virtual-router -o json` (the user
guide's VRRP page) and the emulator's election and show."""

import json

import pytest
from cxfab.switch.nvue import health, plan, render, spec
from cxfab.switch.nvue.render import RenderError

from tests.lab.nvue import model
from tests.lab.nvue import vrrp as lab_vrrp
from tests.unit.nvue_helpers import cumulus


def with_vrrp(switch="lab-sw-a", priority=110, preempt=True, interval=1) -> dict:
    structured = cumulus("lab", switch)
    structured["vrrp"] = [
        {"vlan": 20, "vrid": 20, "virtual_ip": "12.0.20.1", "priority": priority,
         "preempt": preempt, "advertisement_interval": interval},
    ]  # fmt: skip
    structured["anycast_gateways"] = []
    return structured


def test_vrrp_renders_the_reference_paths_and_passes_the_spec():
    tree = render.render(with_vrrp(preempt=False, interval=2))
    assert tree["router"] == {"vrrp": {"enable": "on"}}
    assert tree["interface"]["vlan20"]["ip"]["vrrp"] == {
        "enable": "on",
        "virtual-router": {
            "20": {
                "address": {"12.0.20.1": {}},
                "priority": 110,
                "preempt": "off",
                "advertisement-interval": 2000,  # NVUE takes milliseconds
            }
        },
    }
    assert "vrr" not in tree["interface"]["vlan20"]["ip"]
    assert spec.validate(tree) == []
    lines = plan.intended_lines(with_vrrp())
    assert "nv set interface vlan20 ip vrrp virtual-router 20 priority 110" in lines
    assert "nv set interface vlan20 ip vrrp virtual-router 20 address 12.0.20.1" in lines


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"priority": 255}, "priority: 255 is outside 1..254"),
        ({"priority": "110"}, "priority: '110' is not of type integer"),
        ({"preempt": True}, "preempt: True is not of type string"),
        ({"advertisement-interval": 5}, "advertisement-interval: 5 is outside 10..40950"),
        ({"address": {"12.0.20.1/24": {}}}, "key is not a valid ipv4-address"),
        ({"prio": 110}, "prio: not a path cxfab has confirmed"),
    ],
)
def test_a_wrong_vrrp_path_or_type_fails_the_spec(body, said):
    at = ("interface", "vlan20", "ip", "vrrp", "virtual-router", "20")
    problems = spec.validate(body, at=at)
    assert len(problems) == 1 and said in problems[0], problems
    assert spec.validate({}, at=(*at[:-1], "256")) == [
        "interface.vlan20.ip.vrrp.virtual-router.256: not a path cxfab has confirmed"
    ]


def test_vrr_and_vrrp_on_one_switch_and_a_long_interval_are_refused():
    both = with_vrrp()
    both["anycast_gateways"] = cumulus("lab", "lab-sw-a")["anycast_gateways"]
    with pytest.raises(RenderError, match="cannot run VRR and VRRP on the same switch"):
        render.render(both)
    with pytest.raises(RenderError, match="41 s is outside NVUE's 10-40950 ms"):
        render.render(with_vrrp(interval=41))


def test_dropping_vrrp_unsets_it_and_an_unchanged_tree_plans_nothing():
    structured = with_vrrp()
    applied = render.render(structured)
    assert plan.plan(structured, applied, applied) == []
    back = cumulus("lab", "lab-sw-a")
    ops = plan.plan(back, render.render(back), applied)
    unsets = [op["path"] for op in ops if op["op"] == "unset"]
    assert ["interface", "vlan20", "ip", "vrrp"] in unsets
    assert ["router", "vrrp", "enable"] in unsets


def shown(status="Master", priority=110, address="12.0.20.1") -> str:
    """The user guide's `nv show interface swp1 ip vrrp virtual-router -o json` shape."""
    return json.dumps({"20": {
        "priority": priority, "preempt": "on", "advertisement-interval": 1000,
        "address-family": {"ipv4": {"status": status, "priority": priority,
                                    "virtual-addresses": {address: {}}}},
    }})  # fmt: skip


def checks_of(outputs_by_switch: dict) -> dict:
    structured = {n: with_vrrp(n, 110 if n == "lab-sw-a" else 100) for n in outputs_by_switch}
    out = {}
    for name, outputs in outputs_by_switch.items():
        for c in health.switch_checks(structured[name], outputs):
            out[(name, c["id"])] = c
    for c in health.pair_checks("lab-rack", structured, outputs_by_switch):
        out[("lab-rack", c["id"])] = c
    return {k: (c["status"], c["observed"]) for k, c in out.items() if "vrrp" in c["id"]}


SHOW = "nv show interface vlan20 ip vrrp virtual-router -o json"


def test_the_health_read_gives_the_onyx_check_ids_and_fails_closed():
    assert SHOW in health.needed_shows(with_vrrp())
    good = checks_of({"lab-sw-a": {SHOW: shown()}, "lab-sw-b": {SHOW: shown("Backup", 100)}})
    assert good == {
        ("lab-sw-a", "vrrp.20.20.config"): ("pass", "address 12.0.20.1, priority 110"),
        ("lab-sw-b", "vrrp.20.20.config"): ("pass", "address 12.0.20.1, priority 100"),
        ("lab-rack", "vrrp.20.20.master"): ("pass", "lab-sw-a: Master, lab-sw-b: Backup"),
    }
    two = checks_of({"lab-sw-a": {SHOW: shown()}, "lab-sw-b": {SHOW: shown(priority=100)}})
    assert two[("lab-rack", "vrrp.20.20.master")][0] == "fail"
    cut = checks_of({"lab-sw-a": {SHOW: shown()[:40]}, "lab-sw-b": {SHOW: shown("Backup", 100)}})
    assert cut[("lab-sw-a", "vrrp.20.20.config")][0] == "fail"
    assert "not JSON" in cut[("lab-sw-a", "vrrp.20.20.config")][1]
    assert cut[("lab-rack", "vrrp.20.20.master")][0] == "fail"  # unread is not "no master"
    flat = json.dumps({"20": {"priority": 110}})  # no address-family.ipv4
    missing = checks_of({"lab-sw-a": {SHOW: flat}, "lab-sw-b": {SHOW: shown("Backup", 100)}})
    assert "no field address-family.ipv4" in missing[("lab-sw-a", "vrrp.20.20.config")][1]


def test_the_emulator_takes_vrrp_elects_alone_and_shows_the_documented_shape():
    switch = model.Switch("lab-sw-a")
    rev, _ = switch.create_revision()
    switch.patch(rev, (), render.render(with_vrrp()))
    switch.applied = switch.revisions[rev]["tree"]
    path = ("interface", "vlan20", "ip", "vrrp", "virtual-router")
    assert switch.operational(path)["20"]["address-family"]["ipv4"]["status"] == "Backup"
    switch.peering.elections.tick(switch.applied, None, 0.0, 1e9)  # no advertisement heard
    shown_ = switch.operational(path)["20"]
    assert shown_["address-family"]["ipv4"]["status"] == "Master"
    assert shown_["address-family"]["ipv4"]["virtual-addresses"] == {"12.0.20.1": {}}
    assert (shown_["priority"], shown_["advertisement-interval"]) == (110, 1000)
    # A better peer's advertisement (priority 120) makes it Backup at once.
    peer = {"vrrp": {"20:20": {"eligible": True, "priority": 120, "ip": "12.0.20.253",
                               "state": lab_vrrp.rfc.MASTER}}}  # fmt: skip
    switch.peering.elections.tick(switch.applied, peer, 1e9 + 1, 1e9 + 1)
    assert switch.operational(path)["20"]["address-family"]["ipv4"]["status"] == "Backup"


def test_the_intent_takes_vrrp_on_a_cumulus_pair_without_mlag_only():
    from cxfab.intent.validate import validate_inventory

    from tests.tools import inventory

    def rule_errors(patches):
        patched = inventory.apply(inventory.load(), patches)
        result = validate_inventory(patched.fabric_vars(), patched.cxfab_hosts(),
                                    patched.groups, patched.host_settings())  # fmt: skip
        return [str(e) for e in result.errors if e.rule == "cumulus-gateway-vrrp"]

    cumulus_ = [{"path": "cxfab_switch_pairs[0].platform", "value": "cumulus"}]
    every_vrrp = [
        {"path": f"cxfab_vlans[{i}].gateway",
         "value": {"mode": "vrrp", "virtual_ip": ip, "vrrp": {"vrid": vid}}}
        for i, (ip, vid) in enumerate(
            [("12.0.0.1", 1), ("12.0.10.1", 10), ("12.0.20.1", 20), ("12.0.30.1", 30)])
    ]  # fmt: skip
    no_mlag = [{"path": "cxfab_switch_pairs[0].mlag", "delete": True}]
    assert rule_errors(cumulus_ + no_mlag + every_vrrp) == []
    with_mlag = [*cumulus_, {"path": "cxfab_switch_pairs[0].mlag.ipl.vlan", "value": 4094}]
    assert len(rule_errors(with_mlag + every_vrrp)) == 4  # one per VRRP VLAN
