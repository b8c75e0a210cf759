"""What the emulated show commands share: the JSON printer, the release that changed
the text layouts, and the record layout (`name:` then `  key : value`).
"""

from __future__ import annotations

import json

from .runcfg import version_tuple
from .switch import Switch

ROW_RULE = "-" * 161
# Text layouts of `show mlag` and `show mlag-vip` changed with 3.9 (the 3.9.3210
# captures): before it, `Peers state Summary:` with unindented counters and an
# `MLAG VIP` / `========` header with the VIP as `a.b.c.d /24`.
NEW_TEXT_LAYOUT = (3, 9, 0)


def old_text(switch: Switch) -> bool:
    return version_tuple(switch.identity.release) < NEW_TEXT_LAYOUT


def to_json(data: object) -> str:
    return json.dumps(data, indent=4)


def print_records(
    switch: Switch, records: list[tuple[str, dict]], json_print: bool, keys: list[str]
) -> str:
    if json_print:
        if switch.new_json:
            return to_json([{name: [body]} for name, body in records])
        return to_json([{**body, "header": name} for name, body in records])
    width = max(len(k) for k in keys)
    lines = []
    for name, body in records:
        lines += ["", f"{name}:"]
        lines += [f"  {k:<{width}}: {body[k]}" for k in keys]
    return "\n".join(lines)
