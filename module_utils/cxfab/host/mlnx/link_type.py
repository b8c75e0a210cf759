"""Port protocol (LINK_TYPE_P<n>) of a VPI card: the decision rule.

The rule (the one Mellanox's nic-configuration-operator applies to every
non-volatile parameter):
  * desired value not in Next Boot       -> set it, then activate (reset/reboot);
  * in Next Boot but not in Current      -> only activate, setting again is noise;
  * in both                              -> nothing to do;
  * parameter absent from the query      -> this card does not support it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .nvconfig import CURRENT, NEXT_BOOT, NvConfigQuery

# mlx5 cards know IB and ETH; VPI (auto-sense) exists only on ConnectX-3.
LINK_TYPES = {"ib": 1, "eth": 2, "vpi": 3}
LINK_TYPE_NAMES = {number: name for name, number in LINK_TYPES.items()}

ACTION_NONE = "none"
ACTION_ACTIVATE = "activate"
ACTION_SET = "set"


class LinkTypeError(ValueError):
    """Desired state the card cannot take (unknown value, unsupported parameter)."""


def param_name(port: int) -> str:
    return f"LINK_TYPE_P{port}"


def normalise_link_type(value: str | int) -> str:
    """'ETH', 'eth', 2 -> 'eth'."""
    if isinstance(value, int) or str(value).strip().isdigit():
        number = int(value)
        if number not in LINK_TYPE_NAMES:
            raise LinkTypeError(f"unknown link type number {number} (IB=1, ETH=2, VPI=3)")
        return LINK_TYPE_NAMES[number]
    name = str(value).strip().lower()
    if name not in LINK_TYPES:
        raise LinkTypeError(f"unknown link type {value!r}: use one of ib, eth, vpi")
    return name


def action_for(in_next_boot: bool, in_current: bool) -> str:
    """The rule: a value not in Next Boot is set (then activated); one in Next Boot
    but not yet Current is only activated; one in both needs nothing."""
    if not in_next_boot:
        return ACTION_SET
    return ACTION_NONE if in_current else ACTION_ACTIVATE


@dataclass(frozen=True)
class ParamDecision:
    """What the rule decided for one non-volatile parameter of a card."""

    param: str
    desired: str
    current: str | None
    next_boot: str | None
    action: str

    @property
    def needs_set(self) -> bool:
        return self.action == ACTION_SET

    @property
    def needs_activation(self) -> bool:
        return self.action in (ACTION_SET, ACTION_ACTIVATE)


@dataclass(frozen=True)
class PortDecision(ParamDecision):
    """The decision for a port's protocol (LINK_TYPE_P<port>)."""

    port: int


def _name_of(query: NvConfigQuery, param: str, column: str) -> str | None:
    value = query.params[param].get(column)
    if value is None:
        return None
    if value.number in LINK_TYPE_NAMES:
        return LINK_TYPE_NAMES[value.number]
    label = value.label.lower()
    return label if label in LINK_TYPES else value.raw


def decide_port(query: NvConfigQuery, port: int, desired: str | int, device: str) -> PortDecision:
    """Apply the rule to one port; raise LinkTypeError when the card cannot do it."""
    wanted = normalise_link_type(desired)
    param = param_name(port)
    if not query.has_column(CURRENT) or not query.has_column(NEXT_BOOT):
        raise LinkTypeError(
            f"{device}: the query lacks the Current/Next Boot columns (was it run with -e?)"
        )
    if param not in query.params:
        kind = f" ({query.device_type})" if query.device_type else ""
        raise LinkTypeError(
            f"{device}{kind} does not report {param}: the card has no port {port} "
            "or its port protocol is fixed (not a VPI card)"
        )
    current = _name_of(query, param, CURRENT)
    next_boot = _name_of(query, param, NEXT_BOOT)
    action = action_for(next_boot == wanted, current == wanted)
    return PortDecision(param, wanted, current, next_boot, action, port)


def set_arguments(decisions: list[PortDecision]) -> list[str]:
    """`PARAM=value` words for one `set` call covering every port that needs it."""
    return [f"{d.param}={LINK_TYPES[d.desired]}" for d in decisions if d.needs_set]
