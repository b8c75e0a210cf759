"""Intent vs running config: only what differs, removals in teardown order."""

import copy

from cxfab.switch.onyx.parser import parse_running_config
from cxfab.switch.onyx.plan import Scope, make_plan
from onyx_helpers import FIXTURES, captured_fabric, example_fabric, intended


def _plan(fabric, running, switch="sw-a", prune=True):
    sc, text = intended(fabric, switch, prune=prune)
    return make_plan(
        parse_running_config(text), parse_running_config(running), Scope.from_structured(sc)
    )


def test_blank_switch_gets_exactly_the_rendered_lines_in_order():
    _sc, text = intended(example_fabric(), "sw-a")
    plan = _plan(example_fabric(), "")
    body = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert plan.lines == body
    assert plan.lines.index("protocol mlag") < plan.lines.index("interface port-channel 100 ipl 1")
    assert plan.lines.index("no mlag shutdown") < plan.lines.index("interface mlag-port-channel 1")


def test_real_3_6_config_round_trips_with_no_diff():
    running = (FIXTURES / "sw-a_3.6.5000_running.cfg").read_text()
    plan = _plan(captured_fabric(), running)
    assert plan.lines == []
    assert plan.before == plan.after


def test_second_run_is_empty():
    _, text = intended(example_fabric(), "sw-a")
    assert _plan(example_fabric(), text).lines == []


def test_removing_a_vlan_removes_gateway_svi_membership_then_vlan():
    running = (FIXTURES / "sw-a_3.6.5000_running.cfg").read_text()
    fabric = captured_fabric()
    fabric["vlans"] = [v for v in fabric["vlans"] if v["id"] != 30]
    for mpo in fabric["switch_pairs"][0]["mpos"]:
        mpo["allowed_vlans"].remove(30)
    assert _plan(fabric, running).lines == [
        "interface vlan 30 no magp 30",
        "interface mlag-port-channel 1 switchport hybrid allowed-vlan remove 30",
        "interface mlag-port-channel 2 switchport hybrid allowed-vlan remove 30",
        "no interface vlan 30",
        "no vlan 30",
    ]


def test_without_prune_an_unknown_vlan_stays_and_state_absent_removes():
    running = "vlan 77\nvlan 77 name other\n" + (FIXTURES / "sw-a_3.6.5000_running.cfg").read_text()
    assert "no vlan 77" in _plan(captured_fabric(), running).lines
    assert _plan(captured_fabric(), running, prune=False).lines == []
    fabric = captured_fabric()
    fabric["vlans"].append({"id": 77, "state": "absent", "gateway": {"mode": "none"}})
    assert _plan(fabric, running, prune=False).lines == ["no vlan 77"]


def test_vlan_1_is_never_deleted():
    fabric = captured_fabric()
    fabric["vlans"] = [v for v in fabric["vlans"] if v["id"] != 1]
    lines = _plan(fabric, (FIXTURES / "sw-a_3.6.5000_running.cfg").read_text()).lines
    assert "no interface vlan 1" in lines
    assert "no vlan 1" not in lines


def test_lacp_mode_change_removes_and_re_adds_the_member():
    fabric = captured_fabric()
    fabric["switch_pairs"][0]["mpos"][0]["lacp_mode"] = "passive"
    lines = _plan(fabric, (FIXTURES / "sw-a_3.6.5000_running.cfg").read_text()).lines
    assert lines == [
        "interface ethernet 1/1 no mlag-channel-group",
        "interface ethernet 1/1 mlag-channel-group 1 mode passive",
    ]


def test_magp_to_vrrp_spreads_masters_and_removes_magp_first():
    fabric = captured_fabric()
    for vlan in fabric["vlans"]:
        if vlan["id"] in (10, 20):
            vlan["gateway"] = {
                "mode": "vrrp",
                "virtual_ip": vlan["gateway"]["virtual_ip"],
                "vrrp": {},
            }
    running = (FIXTURES / "sw-a_3.6.5000_running.cfg").read_text()
    lines_a = _plan(fabric, running, "sw-a").lines
    assert lines_a[:2] == ["interface vlan 10 no magp 10", "interface vlan 20 no magp 20"]
    assert "protocol vrrp" in lines_a and "no protocol magp" not in lines_a
    assert "interface vlan 10 vrrp 10 priority 110" in lines_a
    assert "interface vlan 20 vrrp 20 priority 110" not in lines_a
    sc_b, _ = intended(fabric, "sw-b")
    assert {g["vlan"]: g["priority"] for g in sc_b["vrrp"]} == {10: 100, 20: 110}


def test_removing_the_mlag_follows_the_teardown_order():
    running = (FIXTURES / "sw-a_3.6.5000_running.cfg").read_text()
    fabric = copy.deepcopy(captured_fabric())
    pair = fabric["switch_pairs"][0]
    del pair["mlag"]
    pair["mpos"] = []
    for vlan in fabric["vlans"]:
        vlan["gateway"] = {"mode": "none"}
    lines = _plan(fabric, running).lines
    order = [
        "mlag shutdown",
        "no interface mlag-port-channel 1",
        "no mlag-vip",
        "interface vlan 4000 no ipl 1",
        "no interface vlan 4000",
        "interface port-channel 100 no ipl 1",
        "interface ethernet 1/35 no channel-group",
        "no interface port-channel 100",
        "no vlan 4000",
        "no protocol mlag",
    ]
    assert [line for line in lines if line in order] == order
    assert lines.index("no protocol magp") < lines.index("no protocol mlag")


def test_a_vlan_carrying_unmanaged_lines_is_not_pruned_and_is_named():
    _, text = intended(example_fabric(), "sw-a")
    running = text + "vlan 77\ninterface vlan 77\ninterface vlan 77 ip ospf area 0.0.0.0\n"
    plan = _plan(example_fabric(), running)
    assert not any("77" in line for line in plan.lines)
    assert plan.warnings == [
        "vlan/interface vlan 77 is not pruned: it carries lines cxfab does not manage: "
        "interface vlan 77 ip ospf area 0.0.0.0"
    ]


def test_a_vlan_used_only_by_an_unmanaged_port_is_not_pruned_and_is_named():
    _, text = intended(example_fabric(), "sw-a")
    carried = "interface ethernet 1/9 switchport hybrid allowed-vlan add 76-77"
    running = (
        text
        + "".join(f"vlan {vlan}\nvlan {vlan} name spare\n" for vlan in (76, 77, 78))
        + f"interface ethernet 1/9 switchport mode hybrid\n{carried}\n"
    )
    plan = _plan(example_fabric(), running)
    assert plan.lines == ["no vlan 78"]  # the one no port uses is still pruned
    assert plan.warnings == [
        f"vlan/interface vlan {vlan} is not pruned: it carries lines cxfab does not manage: "
        + carried
        for vlan in (76, 77)
    ]


def test_a_revert_plan_restores_the_snapshot_with_teardown_order():
    _, text = intended(example_fabric(), "sw-a")
    plan = make_plan(parse_running_config(""), parse_running_config(text), Scope.all(), True)
    # A revert to a blank snapshot also switches off what a deploy never removes.
    assert plan.lines[-4:] == [
        "no protocol mlag",
        "no dcb priority-flow-control enable force",
        "no ip routing",
        "no lacp",
    ]
    assert plan.lines.index("mlag shutdown") < plan.lines.index("no protocol mlag")
    deploy = make_plan(parse_running_config(""), parse_running_config(text), Scope.all())
    assert "no lacp" not in deploy.lines and "no ip routing" not in deploy.lines


# ---------------------------------------------------------------- lossless RoCE
LOSSLESS_A = [
    "dcb priority-flow-control priority 3 enable",
    "interface ethernet 1/1 dcb priority-flow-control mode on force",
    "interface ethernet 1/2 dcb priority-flow-control mode on force",
    "interface ethernet 1/1 qos trust L3",
    "interface ethernet 1/2 qos trust L3",
    "interface ethernet 1/1 traffic-class 3 congestion-control ecn "
    "minimum-absolute 150 maximum-absolute 1500",
    "interface ethernet 1/2 traffic-class 3 congestion-control ecn "
    "minimum-absolute 150 maximum-absolute 1500",
]


def test_turning_lossless_on_sends_only_the_lossless_lines_after_global_pfc():
    running = (FIXTURES / "sw-a_3.6.5000_running.cfg").read_text()
    assert "dcb priority-flow-control enable force" in running
    assert _plan(captured_fabric(lossless=True), running).lines == LOSSLESS_A


def test_lossless_lines_parse_back_so_a_second_plan_is_empty():
    _, text = intended(example_fabric(), "sw-a")
    parsed = parse_running_config(text)
    assert parsed.get(("pfc_priority", 3)) is True
    assert parsed.get(("eth_pfc", "1/2")) is True
    assert parsed.get(("eth_trust", "1/1")) == "L3"
    assert parsed.get(("eth_ecn", "1/1", 3)) == (150, 1500)
    assert parsed.unknown == []
    assert _plan(example_fabric(), text).lines == []


def test_compressed_lossless_ranges_read_like_the_expanded_lines():
    _, text = intended(example_fabric(), "sw-a")
    compressed = "\n".join(
        line
        for line in text.splitlines()
        if not line.startswith("interface ethernet")
        or not any(word in line for word in ("priority-flow-control", "qos", "traffic-class"))
    )
    compressed += (
        "\n   interface ethernet 1/1-1/2 dcb priority-flow-control mode on force"
        "\n   interface ethernet 1/1-1/2 qos trust l3"
        "\n   interface ethernet 1/1-1/2 traffic-class 3 congestion-control ecn "
        "minimum-absolute 150 maximum-absolute 1500\n"
    )
    assert _plan(example_fabric(), compressed).lines == []


def test_changed_ecn_thresholds_overwrite_only_the_ecn_lines():
    _, text = intended(example_fabric(), "sw-a")
    fabric = example_fabric()
    fabric["roce"]["ecn"] = {"min_kb": 300, "max_kb": 3000}
    assert _plan(fabric, text).lines == [
        f"interface ethernet 1/{n} traffic-class 3 congestion-control ecn "
        "minimum-absolute 300 maximum-absolute 3000"
        for n in (1, 2)
    ]


def test_turning_lossless_off_tears_it_down_first_and_keeps_global_pfc():
    _, text = intended(example_fabric(), "sw-a")
    lines = _plan(example_fabric(lossless=False), text).lines
    assert lines == [
        "interface ethernet 1/1 no traffic-class 3 congestion-control",
        "interface ethernet 1/2 no traffic-class 3 congestion-control",
        "interface ethernet 1/1 no qos trust",
        "interface ethernet 1/2 no qos trust",
        "interface ethernet 1/1 no dcb priority-flow-control mode force",
        "interface ethernet 1/2 no dcb priority-flow-control mode force",
        "no dcb priority-flow-control priority 3 enable",
    ]


def test_without_prune_lossless_lines_on_other_ports_stay():
    _, text = intended(example_fabric(), "sw-a")
    running = text + (
        "interface ethernet 1/20 qos trust L3\n"
        "interface ethernet 1/20 dcb priority-flow-control mode on force\n"
    )
    assert "interface ethernet 1/20 no qos trust" in _plan(example_fabric(), running).lines
    assert _plan(example_fabric(), running, prune=False).lines == []


def test_a_revert_removes_lossless_before_the_gateway():
    _, text = intended(example_fabric(), "sw-a")
    plan = make_plan(parse_running_config(""), parse_running_config(text), Scope.all(), True)
    first_gateway = next(i for i, line in enumerate(plan.lines) if "magp" in line)
    lossless = [i for i, line in enumerate(plan.lines) if "congestion-control" in line]
    assert lossless and max(lossless) < first_gateway
    assert plan.lines.index("no dcb priority-flow-control priority 3 enable") < first_gateway
    assert "no dcb priority-flow-control enable force" in plan.lines


def test_an_ipl_at_the_default_mtu_gets_the_intended_jumbo_mtu_and_can_go_back():
    running = (FIXTURES / "sw-a_3.6.5000_running.cfg").read_text()
    plan = _plan(example_fabric(lossless=False), running)  # mlag.ipl.mtu: 9216 by default
    assert [line for line in plan.lines if "port-channel" in line] == [
        "interface port-channel 100 mtu 9216 force"
    ]
    _, jumbo = intended(example_fabric(lossless=False), "sw-a")
    assert parse_running_config(jumbo).get(("po_mtu", 100)) == 9216
    back = [line for line in _plan(captured_fabric(), jumbo).lines if "port-channel" in line]
    assert back == ["interface port-channel 100 no mtu"]
