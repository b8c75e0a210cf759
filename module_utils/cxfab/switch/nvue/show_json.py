"""Reading one `nv show ... -o json` answer, fail closed (health.py, health_vrrp.py).

An answer that is missing, failed (`Failed`: the transport's message), not JSON, not an
object, or lacks a field raises `Unreadable` naming why; the checks built on it fail.
"""

from __future__ import annotations

import json


class Unreadable(ValueError):
    """A show output cxfab cannot read; the checks built on it fail with this text."""


class Failed(str):
    """An output slot holding why the read failed (the transport's message), not JSON."""


def read(outputs: dict, command: str, empty: bool = False) -> dict:
    """The JSON object of `command`'s output; `empty` accepts `{}` (no revisions)."""
    text = outputs.get(command)
    if text is None:
        raise Unreadable(f"{command}: not run or failed")
    if isinstance(text, Failed):
        raise Unreadable(f"{command}: {text}")
    try:
        data = json.loads(text) if isinstance(text, str) else text
    except ValueError as exc:
        raise Unreadable(f"{command}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict) or not (data or empty):
        raise Unreadable(f"{command}: not a JSON object with fields")
    return data


def field(data: dict, *path: str):
    """The value at `path`, or Unreadable naming the missing field."""
    node = data
    for key in path:
        if not isinstance(node, dict) or key not in node:
            raise Unreadable(f"no field {'.'.join(path)}")
        node = node[key]
    return node
