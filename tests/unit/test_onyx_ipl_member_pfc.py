"""Issue 25 finding 9: PFC on the IPL member ports, as NVIDIA configures a lossless
IPL (mellanox.onyx fixture onyx_config_config.cfg, a real 3.6 running-config:
`interface ethernet 1/7-1/8 dcb priority-flow-control mode on force` next to
`interface port-channel 1 dcb priority-flow-control mode on force`), is not
cxfab's to remove: cxfab renders no lossless line on an IPL member."""

import pytest
from cxfab.switch.onyx.parser import parse_running_config
from cxfab.switch.onyx.plan import Scope, make_plan
from onyx_helpers import FIXTURES, captured_fabric, intended

PO_PFC = "   interface port-channel 100 dcb priority-flow-control mode on force\n"
# The capture's IPL members (`interface ethernet 1/35-1/36 channel-group 100 mode active`).
MEMBERS_PFC = "   interface ethernet 1/35-1/36 dcb priority-flow-control mode on force\n"


def _running() -> str:
    capture = (FIXTURES / "sw-a_3.6.5000_running.cfg").read_text()
    assert PO_PFC in capture
    return capture.replace(PO_PFC, MEMBERS_PFC + PO_PFC)


def _plan(running: str, prune: bool, fabric=None):
    sc, text = intended(fabric or captured_fabric(), "sw-a", prune=prune)
    current = parse_running_config(running)
    return make_plan(parse_running_config(text), current, Scope.from_structured(sc))


@pytest.mark.parametrize("prune", [True, False])
def test_an_intent_equal_to_a_switch_with_pfc_on_its_ipl_members_plans_nothing(prune):
    current = parse_running_config(_running())
    assert current.get(("eth_pfc", "1/35")) is True and current.get(("eth_pfc", "1/36")) is True
    plan = _plan(_running(), prune)
    assert plan.lines == [], plan.lines


def test_with_prune_off_lossless_lines_on_ipl_members_are_left_when_lossless_is_on():
    running = _running()
    plan = _plan(running, False, captured_fabric(lossless=True))
    assert not [line for line in plan.lines if " no " in line or line.startswith("no ")]
    assert not [line for line in plan.lines if "1/35" in line or "1/36" in line]
    # A revert to a snapshot (every object in scope) still removes them.
    revert = make_plan(parse_running_config(""), parse_running_config(running), Scope.all(), True)
    assert "interface ethernet 1/35 no dcb priority-flow-control mode force" in revert.lines
