"""Check an NVUE request body (a tree or part of one) against the kept spec parts.

spec_nvue59.py holds (as JSON text), for every path cxfab writes, its type (object, keyed
map, string, integer), enums, ranges and formats, each with the NVIDIA page it
comes from. validate() returns the problems as "path: reason" strings: an
unknown path, a wrong type, a value outside its enum or range, a malformed key.
An empty list means every path and value is one cxfab has confirmed. A `null`
value (an unset) is accepted at any confirmed path.
"""

from __future__ import annotations

import ipaddress
import json
import re
from functools import cache

from . import spec_nvue59

_MAC = re.compile(r"^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$")
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,14}$")  # Linux interface names: 15 characters


def _ipv4(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _prefix(text: str) -> bool:
    try:
        ipaddress.IPv4Interface(text)
    except ValueError:
        return False
    return "/" in text


def _vlan_id(text: str) -> bool:
    return text.isdigit() and 1 <= int(text) <= 4094


FORMATS = {
    "mac": lambda v: bool(_MAC.match(v)),
    "linklocal-or-ipv4": lambda v: v == "linklocal" or _ipv4(v),
    "interface-name": lambda v: bool(_NAME.match(v)),
    "bridge-name": lambda v: bool(_NAME.match(v)),
    "ipv4-prefix": _prefix,
    "ipv4-address": _ipv4,
    "vlan-id": _vlan_id,
    "state": lambda v: v in ("up", "down"),
    "vrid": lambda v: v.isdigit() and 1 <= int(v) <= 255,
}


@cache
def spec() -> dict:
    return json.loads(spec_nvue59.TEXT)


def _where(path: tuple) -> str:
    return ".".join(str(p) for p in path) or "(root)"


def _scalar(node: dict, value, path: tuple) -> list[str]:
    kinds = node["type"] if isinstance(node["type"], list) else [node["type"]]
    if isinstance(value, str) and value in node.get("enum_strings", ()):
        return []
    if isinstance(value, bool) or not (
        ("integer" in kinds and isinstance(value, int))
        or ("string" in kinds and isinstance(value, str))
    ):
        return [f"{_where(path)}: {value!r} is not of type {' or '.join(kinds)}"]
    if "enum" in node and value not in node["enum"]:
        return [f"{_where(path)}: {value!r} is not one of {node['enum']}"]
    if isinstance(value, int) and not (
        node.get("minimum", value) <= value <= node.get("maximum", value)
    ):
        return [f"{_where(path)}: {value} is outside {node.get('minimum')}..{node.get('maximum')}"]
    test = FORMATS.get(node.get("format", ""))
    if test and isinstance(value, str) and not test(value):
        return [f"{_where(path)}: {value!r} is not a valid {node['format']}"]
    return []


def _check(node: dict, value, path: tuple) -> list[str]:
    if value is None:
        # `null` unsets the node in a PATCH body (NVUE API page, "Unset a Configuration
        # Change"): the path must be a confirmed one (the caller checked its key), any type.
        return []
    kind = node["type"]
    if kind in ("object", "map"):
        if not isinstance(value, dict):
            return [f"{_where(path)}: expected an object, got {type(value).__name__}"]
        problems = []
        for key, child in value.items():
            if kind == "object":
                sub = node["properties"].get(key)
                if sub is None:
                    problems.append(f"{_where((*path, key))}: not a path cxfab has confirmed")
                    continue
            else:
                sub = node["values"]
                if not FORMATS[node["key"]](str(key)):
                    problems.append(f"{_where((*path, key))}: key is not a valid {node['key']}")
                    continue
            problems += _check(sub, child, (*path, key))
        return problems
    return _scalar(node, value, path)


def validate(body: dict, at: tuple = ()) -> list[str]:
    """Problems of `body` placed at tree path `at` (() is the root)."""
    node = spec()["tree"]
    for part in at:
        if node["type"] == "object" and part in node["properties"]:
            node = node["properties"][part]
        elif node["type"] == "map" and FORMATS[node["key"]](str(part)):
            node = node["values"]
        else:
            return [f"{_where(at)}: not a path cxfab has confirmed"]
    return _check(node, body, tuple(at))
