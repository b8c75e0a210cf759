"""Every removal line the planner can produce is taken by the emulated switch.

The planner writes removals as the flat config lines of statements.py (MAGP
after mellanox.onyx's onyx_magp: `interface vlan N magp M no ip virtual-router
address`; VRRP unconfirmed on a real switch). A revert that
needs a line the switch refuses would stop half way, so each line is applied to
the lab's switch model (tests/lab/onyx/model.py) and the switch must end up
holding exactly the planned config.
"""

import pytest
from cxfab.switch.onyx.parser import parse_running_config
from cxfab.switch.onyx.plan import Scope, make_plan
from cxfab.switch.onyx.statements import TABLE
from onyx_helpers import every_kind_config

from tests.lab.onyx.model import SwitchConfig
from tests.lab.onyx.runcfg import render

RELEASE = "3.10.2002"


FULL = every_kind_config()


def _switch(text: str) -> SwitchConfig:
    switch = SwitchConfig(hostname="sw-a")
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            switch.apply(line)
    return switch


def _running(switch: SwitchConfig):
    return parse_running_config(render(switch, RELEASE))


def _values(parsed) -> dict:
    return {key: st.value for key, st in parsed.statements.items()}


def test_the_full_config_holds_every_statement_kind():
    kinds = {st.kind for st in _running(_switch(FULL)).statements.values()}
    assert kinds == TABLE.kinds, f"not exercised: {sorted(TABLE.kinds - kinds)}"


def test_a_revert_to_a_blank_switch_is_taken_line_by_line():
    switch = _switch(FULL)
    blank = parse_running_config("")
    plan = make_plan(blank, _running(switch), Scope.all(), restore=True)
    for line in plan.lines:
        switch.apply(line)  # raises CliError on a refused line
    assert _values(_running(switch)) == {}


# Removals no valid intent asks for, refused by the switch for a good reason:
# the IPL VLAN's address while its peer-address stays; the switchport mode
# (back to access) while hybrid allowed VLANs stay.
_INCONSISTENT = {("svi_ip", 4000), ("mpo_mode", 2)}
_ATTRIBUTES = [
    key
    for key in parse_running_config(FULL).statements
    if TABLE.parent_key(key) is not None and key not in _INCONSISTENT
]


@pytest.mark.parametrize("key", _ATTRIBUTES, ids=lambda key: " ".join(map(str, key)))
def test_removing_one_attribute_is_taken_and_leaves_the_rest(key):
    switch = _switch(FULL)
    current = _running(switch)
    target = parse_running_config(FULL)
    target.statements.pop(key)
    plan = make_plan(target, current, Scope.all(), restore=True)
    assert plan.lines, f"removing {key} sends nothing"
    for line in plan.lines:
        switch.apply(line)
    assert _values(_running(switch)) == _values(target)
