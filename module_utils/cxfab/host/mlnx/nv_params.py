"""Any pinned mlxconfig parameter (`nics[].nv_config`): the Next Boot / Current rule.

The same rule as the port protocols (link_type.py, after Mellanox's
nic-configuration-operator): desired value not in Next Boot -> set, then activate;
in Next Boot but not in Current -> only activate; in both -> nothing; absent from
the query -> the card does not support the parameter (nothing is set).

A value matches by number when both sides have one (`8` against `8`, `1` against
`True(1)`), else by label, case-insensitively (`True` against `True(1)`, `ETH`
against `ETH(2)`), as `NvValue.equals` compares them.
"""

from __future__ import annotations

import re

from .link_type import ParamDecision, action_for
from .nvconfig import CURRENT, NEXT_BOOT, NvConfigQuery, NvValue

_NUMBER_RE = re.compile(r"^(?:\d+|0[xX][0-9a-fA-F]+)$")


class NvParamError(ValueError):
    """A pinned parameter the card cannot take; the message names `nv_config.<PARAM>`."""


def desired_number(desired: str) -> int | None:
    text = str(desired).strip()
    return int(text, 0) if _NUMBER_RE.match(text) else None


def matches(value: NvValue | None, desired: str) -> bool:
    return value is not None and value.equals(str(desired), desired_number(desired))


def decide_param(query: NvConfigQuery, param: str, desired: str, device: str) -> ParamDecision:
    if not query.has_column(CURRENT) or not query.has_column(NEXT_BOOT):
        raise NvParamError(
            f"{device}: the query lacks the Current/Next Boot columns (was it run with -e?)"
        )
    entry = query.params.get(param)
    if entry is None:
        kind = f" ({query.device_type})" if query.device_type else ""
        raise NvParamError(
            f"nv_config.{param}: {device}{kind} does not report {param}: this card does not "
            "support it; nothing was set"
        )
    current, next_boot = entry.get(CURRENT), entry.get(NEXT_BOOT)
    action = action_for(matches(next_boot, desired), matches(current, desired))
    return ParamDecision(
        param,
        str(desired),
        current.raw if current else None,
        next_boot.raw if next_boot else None,
        action,
    )


def decide_params(query: NvConfigQuery, pins: dict, device: str) -> list[ParamDecision]:
    return [decide_param(query, name, str(value), device) for name, value in sorted(pins.items())]


def set_words(decisions: list[ParamDecision]) -> list[str]:
    """`PARAM=value` words for the one `set` call, only where Next Boot differs."""
    return [f"{d.param}={d.desired}" for d in decisions if d.needs_set]
