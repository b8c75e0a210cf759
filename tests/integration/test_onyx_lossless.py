"""The emulated Onyx switch takes cxfab's lossless RoCE lines, shows them back, tears them down.

Drives the emulator's config model, running-config writer and show commands directly
(no SSH, no VM): the same code the lab switches run behind their CLI.
"""

from __future__ import annotations

import pytest
from cxfab.switch.onyx import health
from cxfab.switch.onyx import shows as onyx_shows
from cxfab.switch.onyx.parser import parse_running_config
from cxfab.switch.onyx.plan import Scope, make_plan

from tests.lab.onyx import shows
from tests.lab.onyx.objects import CliError
from tests.lab.onyx.switch import Identity, Switch
from tests.unit.onyx_helpers import example_fabric, intended

pytestmark = pytest.mark.integration

RELEASE = "3.10.2002"


def _switch() -> Switch:
    return Switch(Identity("sw-a", RELEASE, "0c:42:a1:00:00:01", "10.0.0.51"))


def _apply(switch: Switch, lines: list[str]) -> None:
    for line in lines:
        switch.cfg.apply(line)


def _deploy(switch: Switch, fabric: dict, prune: bool = True) -> list[str]:
    sc, text = intended(fabric, "sw-a", prune=prune)
    current = parse_running_config(switch.running_config())
    plan = make_plan(parse_running_config(text), current, Scope.from_structured(sc))
    _apply(switch, plan.lines)
    return plan.lines


def _show(switch: Switch, command: str, json_print: bool = False) -> str:
    return shows.dispatch(switch, command.split(), json_print)


def test_lossless_lines_are_taken_shown_and_a_second_plan_is_empty():
    switch = _switch()
    sent = _deploy(switch, example_fabric())
    assert "dcb priority-flow-control priority 3 enable" in sent
    running = switch.running_config()
    assert "   dcb priority-flow-control priority 3 enable\n" in running
    # Consecutive ports fold into a range, as the real running-config prints them.
    assert "   interface ethernet 1/1-1/2 qos trust L3\n" in running
    assert (
        "   interface ethernet 1/1-1/2 traffic-class 3 congestion-control ecn "
        "minimum-absolute 150 maximum-absolute 1500\n"
    ) in running
    assert _deploy(switch, example_fabric()) == []

    text = _show(switch, "dcb priority-flow-control")
    assert "PFC: enabled\nPriority Enabled List: 3\nPriority Disabled List: 0 1 2 4 5 6 7\n" in text
    assert "Eth1/1           On               Enabled\n" in text
    assert "Eth1/3           Auto             Disabled\n" in text
    pfc = onyx_shows.parse_show_dcb_pfc(text)
    assert pfc["ports"]["1/35"]["oper"] == "Disabled"  # IPL members: PFC on the port-channel
    data = _show(switch, "dcb priority-flow-control", json_print=True)
    assert '"Priority Enabled List": "3"' in data and '"PFC oper": "Enabled"' in data

    sc, _ = intended(example_fabric(), "sw-a")
    outputs = {"pfc": text, "running": running, "files": _show(switch, "configuration files")}
    checks = {c["id"]: c for c in health.lossless_checks(sc, _parsed(outputs), _never)}
    assert checks and all(c["status"] == "pass" for c in checks.values()), checks


def _parsed(outputs: dict) -> dict:
    return {key: onyx_shows.parse(key, outputs[key], RELEASE) for key in ("pfc", "running")}


def _never(key):
    raise AssertionError(f"{key} was read")


def test_a_removed_port_pfc_is_seen_and_put_back_alone():
    switch = _switch()
    _deploy(switch, example_fabric())
    switch.cfg.apply("interface ethernet 1/2 no dcb priority-flow-control mode force")
    sc, _ = intended(example_fabric(), "sw-a")
    outputs = {"pfc": _show(switch, "dcb priority-flow-control"), "running": None}
    outputs["running"] = switch.running_config()
    checks = {c["id"]: c for c in health.lossless_checks(sc, _parsed(outputs), _never)}
    assert checks["pfc.1/2"]["status"] == "fail"
    assert checks["pfc.1/2"]["observed"] == "PFC admin Auto, oper Disabled"
    assert _deploy(switch, example_fabric()) == [
        "interface ethernet 1/2 dcb priority-flow-control mode on force"
    ]


def test_turning_lossless_off_tears_down_in_order_and_the_switch_accepts_it():
    switch = _switch()
    _deploy(switch, example_fabric())
    sent = _deploy(switch, example_fabric(lossless=False))
    assert sent[0].endswith("no traffic-class 3 congestion-control")
    assert sent[-1] == "no dcb priority-flow-control priority 3 enable"
    running = switch.running_config()
    assert "qos trust" not in running and "traffic-class" not in running
    assert "priority 3 enable" not in running
    assert "Priority Enabled List: \n" in _show(switch, "dcb priority-flow-control")


def test_bad_lossless_lines_are_refused_with_percent_errors():
    switch = _switch()
    for line, message in (
        ("dcb priority-flow-control priority 8 enable", "% Value 8 is out of range (0-7)"),
        ("interface ethernet 1/1 qos trust L4", '% Unrecognized keyword "L4"'),
        (
            "interface ethernet 1/1 traffic-class 3 congestion-control ecn "
            "minimum-absolute 2000 maximum-absolute 1000",
            "% Minimum threshold must not be greater than maximum threshold",
        ),
        ("interface ethernet 1/1 dcb priority-flow-control mode on force", "not enabled globally"),
    ):
        with pytest.raises(CliError) as caught:
            switch.cfg.apply(line)
        assert message in str(caught.value)
    assert "qos trust" not in switch.running_config()
