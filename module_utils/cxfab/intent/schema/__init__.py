"""The fabric schema: one YAML fragment per top-level key of the fabric document.

The fragments use a small AVD-style dialect. Every node is a mapping with:

    type          str | int | float | bool | dict | list   (float also accepts int)
    description   text for the generated docs (required on every node)
    required      true: the key must be present (no default then)
    default       value filled in when the key is absent
    min / max     numeric range (int, float)
    min_length / max_length   string length
    min_items / max_items     list length
    valid_values  the allowed values
    format        a named syntax checked by code (see FORMATS)
    sensitive     true: the value is a secret, never printed in errors or docs
    unique_items  true: list entries must differ
    primary_key   lists of dicts: the key whose value identifies an entry (unique)
    keys          dicts: the known keys and their nodes (other keys are errors...)
    values        dicts: ...unless `values` gives the node of the free-form keys
    key_name      dicts with `values`: what the free keys are, e.g. `<peer>`
    key_format    dicts with `values`: a named syntax (FORMATS) every free key must have
    items         lists: the node of every entry
    inventory_var top-level nodes: the inventory variable that holds the key

`checker.check()` validates a document against a node (validate.py uses it);
`to_json_schema()` turns a node into JSON Schema (draft 2020-12) for outside
tools; `walk()` yields every node with its documented path, for the docs generator.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from ...common.mlxconfig import PARAM_NAME_RE, PARAM_VALUE_RE
from ...common.parsing import reads_as
from .addresses import numeric_reading, reading_hint

SCHEMA_DIR = Path(__file__).resolve().parent

# The top-level keys of the fabric document, in document order.
TOP_LEVEL_KEYS = (
    "fabric_name",
    "switch_pairs",
    "vlans",
    "hosts",
    "workloads",
    "supported_cables",
    "roce",
)

_JSON_TYPES = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "dict": "object",
    "list": "array",
}

DIALECT_KEYS = {
    "type",
    "description",
    "required",
    "default",
    "min",
    "max",
    "min_length",
    "max_length",
    "min_items",
    "max_items",
    "valid_values",
    "format",
    "sensitive",
    "unique_items",
    "primary_key",
    "keys",
    "values",
    "key_name",
    "key_format",
    "items",
    "inventory_var",
}

# Free text that reaches a device CLI, a shell, a systemd unit or a networkd
# file has a strict format (docs/data-model.md lists each field and where it goes).
# Checked with fullmatch: `$` alone would let a trailing newline through.
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
# What the kernel accepts (dev_valid_name) minus everything a shell or a unit
# file treats specially: at most 15 characters of [A-Za-z0-9_.-], not . or ..
# A leading '-' is refused too: a tool that takes the name as an argument would
# read it as an option.
_NETDEV_RE = re.compile(r"^(?!\.{1,2}$)(?!-)[A-Za-z0-9_.-]{1,15}$")
# A description: printable ASCII words without quotes, shell or comment characters.
_TEXT_CHARS = r"A-Za-z0-9_.,:/+=@\-"
_TEXT_RE = re.compile(rf"^[{_TEXT_CHARS}](?:[{_TEXT_CHARS} ]{{0,62}}[{_TEXT_CHARS}])?$")
_PART_PATTERN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.*?-]{0,31}")
# A file path on the controller: no spaces or shell characters, no leading '-'.
_PATH_RE = re.compile(r"^(?!-)[A-Za-z0-9_./+-]{1,255}$")
# A secret is never pasted into a command line, only sent to a login: any
# character but control characters (a newline would end the login line).
_SECRET_RE = re.compile(r"^[^\x00-\x1f\x7f]{1,128}$")
_MAC_RE = re.compile(r"^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$")
# Onyx front-panel ports: slot/port, or slot/port/split-lane for split ports.
_RELEASE_RE = re.compile(r"^[1-9][0-9]?\.(0|[1-9][0-9]?)$")
_ONYX_PORT_RE = re.compile(r"^[1-9][0-9]?/[1-9][0-9]?(/[1-4])?$")
_PCI_RE = re.compile(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-1][0-9a-fA-F]\.[0-7]$")
_FW_VERSION_RE = re.compile(r"^[0-9]{1,2}\.[0-9]{1,3}\.[0-9]{4}$")
_PSID_RE = re.compile(r"^[A-Za-z0-9_]{1,16}$")
_SHA256_RE = re.compile(r"^[0-9a-fA-F]{64}$")
# An inventory hostname names files (build/structured/<host>.yml) and directories on
# other hosts: dot-separated labels of letters, digits, '_', '-', each starting with a
# letter or digit (no '/', no '..', no leading '-'), short enough for any file name.
_INVENTORY_HOSTNAME_RE = re.compile(
    r"^(?=.{1,128}$)[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9][A-Za-z0-9_-]*)*$"
)
_HOSTNAME_RE = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9-]{1,63})*$")
_CPU_RANGE_RE = re.compile(r"^([0-9]{1,4})(?:-([0-9]{1,4}))?$")


def parse_cpulist(text: str) -> list[int]:
    """CPUs of a Linux cpulist (`0-3,8`); ValueError on bad syntax or overlap."""
    cpus: list[int] = []
    for part in text.split(","):
        # fullmatch, no strip: a newline or space is refused, never ignored
        match = _CPU_RANGE_RE.fullmatch(part)
        if not match:
            raise ValueError(f"{part!r} is not a CPU number or range")
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) is not None else first
        if last < first:
            raise ValueError(f"range {part} runs backwards")
        cpus.extend(range(first, last + 1))
    if len(set(cpus)) != len(cpus):
        raise ValueError("CPUs are listed twice")
    return cpus


# Addresses are accepted in their canonical form only (`str()` of the parsed value):
# no netmask form (a.b.c.d/255.255.255.0), no leading zeros, no spaces.
def _is_interface(text: str) -> bool:
    try:
        return "/" in text and str(ipaddress.IPv4Interface(text)) == text
    except ValueError:
        return False


def _is_network(text: str) -> bool:
    try:
        return "/" in text and str(ipaddress.IPv4Network(text, strict=True)) == text
    except ValueError:
        return False


def _is_address(text: str) -> bool:
    try:
        return str(ipaddress.IPv4Address(text)) == text
    except ValueError:
        return False


def _is_host(text: str) -> bool:
    """A canonical IPv4 address, or a DNS name that is no other spelling of one."""
    if _is_address(text):
        return True
    return bool(_HOSTNAME_RE.fullmatch(text)) and numeric_reading(text) is None


def _matches(pattern: re.Pattern) -> Any:
    """A format check: the whole value matches `pattern`."""
    return lambda value: bool(pattern.fullmatch(value))


# format name -> f(value): more words for the error message (what the value reads as)
FORMAT_HINTS: dict[str, Any] = {"host": reading_hint}

# format name -> (check, what a valid value looks like)
FORMATS: dict[str, tuple[Any, str]] = {
    "name": (
        _matches(_NAME_RE),
        "a name of letters, digits, '.', '_', '-' (at most 64, starting with a letter or digit)",
    ),
    "netdev": (
        _matches(_NETDEV_RE),
        "a Linux interface name (1-15 of letters, digits, '_', '.', '-'; not . or .., "
        "not starting with '-')",
    ),
    "inventory_hostname": (
        _matches(_INVENTORY_HOSTNAME_RE),
        "a DNS-style name (labels of letters, digits, '_', '-' separated by single dots, "
        "each starting with a letter or digit; at most 128 characters)",
    ),
    "text": (
        _matches(_TEXT_RE),
        "a description of at most 64 letters, digits, spaces and _ . , : / + = @ -",
    ),
    "part_pattern": (
        _matches(_PART_PATTERN_RE),
        "a part number or a pattern of them (letters, digits, _ . - and * ?; at most 32)",
    ),
    "path": (
        lambda v: bool(_PATH_RE.fullmatch(v)) and ".." not in v.split("/"),
        "a file path of letters, digits and _ . / + - (no spaces, not starting with -, "
        "no `..`: keep the file under the inventory, e.g. files/)",
    ),
    "secret": (
        _matches(_SECRET_RE),
        "1-128 characters without control characters",
    ),
    "host": (_is_host, "a canonical IPv4 address or DNS name"),
    "ipv4_address": (_is_address, "an IPv4 address (a.b.c.d)"),
    "ipv4_interface": (
        _is_interface,
        "an IPv4 address with prefix length (a.b.c.d/len; no netmask, no leading zeros)",
    ),
    "ipv4_network": (
        _is_network,
        "an IPv4 network with no host bits set (a.b.c.0/len; no netmask, no leading zeros)",
    ),
    "mac": (_matches(_MAC_RE), "a MAC address (00:00:5E:00:01:0A)"),
    "release": (_matches(_RELEASE_RE), "a major.minor release such as 5.9 or 5.14"),
    "onyx_port": (
        _matches(_ONYX_PORT_RE),
        "an Onyx port name (1/1, or 1/1/2 for a split port)",
    ),
    "pci_address": (_matches(_PCI_RE), "a PCI address (0000:17:00.0)"),
    "fw_version": (
        _matches(_FW_VERSION_RE),
        "a firmware version NN.NN.NNNN (2.NN.NNNN on a ConnectX-3)",
    ),
    "psid": (_matches(_PSID_RE), "a PSID (up to 16 letters, digits, '_')"),
    "sha256": (_matches(_SHA256_RE), "a sha256 digest (64 hex digits)"),
    "cpulist": (
        lambda v: reads_as(parse_cpulist, v),
        "a CPU list such as 0-3,8 (ascending ranges, no overlap)",
    ),
    "nv_param": (
        _matches(PARAM_NAME_RE),
        "an mlxconfig parameter name (A-Z, 0-9, '_', starting with a letter; at most 64)",
    ),
    "nv_value": (
        _matches(PARAM_VALUE_RE),
        "an mlxconfig value: a number or a label of letters, digits, '_' (at most 32)",
    ),
}


@cache
def load() -> dict[str, dict]:
    """All fragments, keyed by top-level key, in document order."""
    fragments: dict[str, dict] = {}
    for key in TOP_LEVEL_KEYS:
        path = SCHEMA_DIR / f"{key}.schema.yml"
        with path.open(encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
        if not isinstance(data, dict) or list(data) != [key]:
            raise ValueError(f"{path}: must hold exactly one top-level key {key!r}")
        fragments[key] = data[key]
    return fragments


def document_schema() -> dict:
    """The schema of the whole fabric document as one dialect node."""
    fragments = load()
    return {
        "type": "dict",
        "description": "The fabric document.",
        "keys": fragments,
    }


def to_json_schema(node: dict) -> dict:
    """JSON Schema for one dialect node (recursively)."""
    kind = node["type"]
    out: dict[str, Any] = {"type": _JSON_TYPES[kind]}
    if node.get("sensitive"):
        out["x-sensitive"] = True
    if "valid_values" in node:
        out["enum"] = list(node["valid_values"])
    if "format" in node:
        out["format"] = node["format"]
    for ours, theirs in (
        ("min", "minimum"),
        ("max", "maximum"),
        ("min_length", "minLength"),
        ("max_length", "maxLength"),
        ("min_items", "minItems"),
        ("max_items", "maxItems"),
    ):
        if ours in node:
            out[theirs] = node[ours]
    if node.get("unique_items"):
        out["uniqueItems"] = True
    if kind == "dict":
        keys = node.get("keys", {})
        out["properties"] = {name: to_json_schema(child) for name, child in keys.items()}
        required = [name for name, child in keys.items() if child.get("required")]
        if required:
            out["required"] = required
        out["additionalProperties"] = to_json_schema(node["values"]) if "values" in node else False
        if "key_format" in node:
            out["propertyNames"] = {"format": node["key_format"]}
    if kind == "list" and "items" in node:
        out["items"] = to_json_schema(node["items"])
    return out


def walk(node: dict, path: str = "") -> Iterator[tuple[str, dict]]:
    """Every node below `node` with its documented path (`a.b[].c`, `m.<peer>`)."""
    kind = node["type"]
    if kind == "dict":
        for name, child in node.get("keys", {}).items():
            child_path = f"{path}.{name}" if path else name
            yield child_path, child
            yield from walk(child, child_path)
        if "values" in node:
            child_path = f"{path}.{node.get('key_name', '<key>')}"
            yield child_path, node["values"]
            yield from walk(node["values"], child_path)
    elif kind == "list" and "items" in node:
        child = node["items"]
        if child["type"] in ("dict", "list"):
            yield from walk(child, f"{path}[]")
        else:
            yield f"{path}[]", child


def fill_defaults(node: dict, value: Any) -> Any:
    """A copy of `value` with every absent key that has a default filled in."""
    kind = node["type"]
    if kind == "dict" and isinstance(value, dict):
        out = {}
        keys = node.get("keys", {})
        for name, child in keys.items():
            if name in value:
                out[name] = fill_defaults(child, value[name])
            elif "default" in child:
                out[name] = fill_defaults(child, _copy(child["default"]))
        for name, item in value.items():
            if name not in keys:
                out[name] = fill_defaults(node["values"], item) if "values" in node else item
        return out
    if kind == "list" and isinstance(value, list) and "items" in node:
        return [fill_defaults(node["items"], item) for item in value]
    return value


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def convert_scalar(kind: str, value: Any) -> Any:
    """`value` coerced to the node type when that loses nothing, else unchanged."""
    if kind == "int" and isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value.strip()):
        return int(value)
    if kind == "float" and isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def convert_types(node: dict, value: Any) -> Any:
    """A copy of `value` with scalars coerced where YAML or templating gave another type.

    Like AVD's type conversion: "22" -> 22 for an int, 12 -> "12" for a str. Only
    lossless conversions; anything else is left for the schema to reject.
    """
    kind = node["type"]
    if kind == "dict" and isinstance(value, dict):
        keys = node.get("keys", {})
        out = {}
        for name, item in value.items():
            child = keys.get(name, node.get("values"))
            out[name] = convert_types(child, item) if child else item
        return out
    if kind == "list" and isinstance(value, list):
        if "items" not in node:
            return list(value)
        return [convert_types(node["items"], item) for item in value]
    if kind == "str" and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return convert_scalar(kind, value)
