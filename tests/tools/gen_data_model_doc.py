"""Render docs/data-model.md from the schema fragments and the rule registry.

    python -m tests.tools.gen_data_model_doc > docs/data-model.md   (make docs)

A unit test re-renders it and fails when the committed file has drifted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT / "module_utils") not in sys.path:
    sys.path.insert(0, str(REPO_ROOT / "module_utils"))

from cxfab.intent import fabric, schema  # noqa: E402
from cxfab.intent.rules import RULES  # noqa: E402
from cxfab.intent.schema import free_text  # noqa: E402

HEADER = """\
# Fabric data model

<!-- Generated from module_utils/cxfab/intent/schema/ by
     `python -m tests.tools.gen_data_model_doc` (make docs). Do not edit. -->

The fabric intent lives in inventory variables. `playbooks/validate.yml`
assembles them into one fabric document, checks it against the schema below
and the semantic rules at the end, and publishes the normalised document
(defaults filled in) as `hostvars['localhost'].cxfab_fabric`.

| Document key | Inventory variable | Where |
| --- | --- | --- |
| `fabric_name` | `cxfab_fabric_name` | `group_vars/all/` |
| `switch_pairs` | `cxfab_switch_pairs` | `group_vars/all/` |
| `vlans` | `cxfab_vlans` | `group_vars/all/` |
| `hosts.<host>` | `cxfab_host` | `host_vars/<host>/`, every host of group `hosts` |
| `workloads` | `cxfab_workloads` | `group_vars/all/` |

Key paths: `a.b` is key `b` of mapping `a`, `a[]` an entry of list `a`,
`a.<peer>` a free key of mapping `a` (here, a switch name). Errors name the
same paths with list indexes, e.g. `cxfab_vlans[2].svi_addresses.sw-b`.
Unknown keys are errors. Values marked *secret* are never printed.
"""


def _type(node: dict) -> str:
    kind = node["type"]
    if kind == "list" and "items" in node:
        return f"list[{_type(node['items'])}]"
    if kind == "dict" and "values" in node and "keys" not in node:
        return f"dict[{_type(node['values'])}]"
    return kind


def _value(value: object) -> str:
    return f"`{json.dumps(value)}`"


def _constraints(node: dict) -> str:
    parts = []
    if "valid_values" in node:
        parts.append(", ".join(f"`{v}`" for v in node["valid_values"]))
    if "min" in node and "max" in node:
        parts.append(f"{node['min']}-{node['max']}")
    elif "min" in node:
        parts.append(f">= {node['min']}")
    elif "max" in node:
        parts.append(f"<= {node['max']}")
    if "min_length" in node:
        parts.append(f"at least {node['min_length']} character(s)")
    if "max_length" in node:
        parts.append(f"at most {node['max_length']} characters")
    low, high = node.get("min_items"), node.get("max_items")
    if low is not None and low == high:
        parts.append(f"exactly {low} entries")
    elif low is not None:
        parts.append(f"at least {low} entr{'y' if low == 1 else 'ies'}")
    elif high is not None:
        parts.append(f"at most {high} entries")
    if "format" in node:
        parts.append(schema.FORMATS[node["format"]][1])
    if "key_format" in node:
        parts.append("keys: " + schema.FORMATS[node["key_format"]][1])
    if "primary_key" in node:
        parts.append(f"primary key `{node['primary_key']}`")
    if node.get("unique_items"):
        parts.append("unique entries")
    if node.get("sensitive"):
        parts.append("*secret*: never printed")
    return "; ".join(parts)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _row(path: str, node: dict) -> str:
    default = _value(node["default"]) if "default" in node else ""
    cells = [
        f"`{path}`",
        _type(node),
        "yes" if node.get("required") else "",
        default,
        _constraints(node),
        node.get("description", ""),
    ]
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def documented_nodes():
    """(documented key path, node) of every schema node, in document order."""
    for key, node in schema.load().items():
        if key == "hosts":
            root_path, root = fabric.HOST_VAR, node["values"]
        else:
            root_path, root = node["inventory_var"], node
        yield root_path, root
        for path, child in schema.walk(root):
            yield f"{root_path}{path if path.startswith('[') else '.' + path}", child


# The documented path of the hosts' free keys: the inventory hostnames of group hosts.
HOSTNAME_KEY_PATH = "<inventory_hostname>"


def _free_keys():
    """(documented path of the key, key node) of every mapping with free keys."""
    hosts = schema.load()["hosts"]
    yield HOSTNAME_KEY_PATH, hosts
    for path, node in documented_nodes():
        if node["type"] == "dict" and "values" in node:
            yield f"{path}.{node.get('key_name', '<key>')}", node


def free_text_nodes():
    """(path, node) of every string of a free-text format, free mapping keys included
    (a key's node is {type: str, format: its key_format})."""
    for path, node in documented_nodes():
        if node["type"] == "str" and node.get("format") in free_text.FREE_TEXT_FORMATS:
            yield path, node
    for path, node in _free_keys():
        if node.get("key_format") in free_text.FREE_TEXT_FORMATS:
            yield path, {"type": "str", "format": node["key_format"], "description": "a key"}


def free_key_paths():
    """Documented paths of every mapping key the user chooses, with or without a format."""
    return [path for path, _ in _free_keys()]


def _free_text_table() -> list[str]:
    out = [
        "## Free-text values and where they go\n",
        "Every free-text value has a strict format, checked before anything runs; "
        "templates quote what they paste. A value that breaks its format is refused "
        "with its key path, whatever it holds (newline, `;`, quotes, `$()`, backticks, "
        "globs, `#`, overlong or non-ASCII text). The switch password alone reaches "
        "only the SSH login: it may hold any printable character, but no control "
        "character and at most 128 characters.\n",
        "| Key path | Format | Destinations |",
        "| --- | --- | --- |",
    ]
    for path, node in free_text_nodes():
        what = schema.FORMATS[node["format"]][1]
        if "max_length" in node:
            what += f"; at most {node['max_length']} characters"
        row = [f"`{path}`", what, free_text.DESTINATIONS.get(path, "")]
        out.append("| " + " | ".join(_cell(c) for c in row) + " |")
    out.append("")
    return out


def render() -> str:
    out = [HEADER]
    for key, node in schema.load().items():
        if key == "hosts":
            root_path, root = fabric.HOST_VAR, node["values"]
        else:
            root_path, root = node["inventory_var"], node
        out.append(f"## `{key}` (`{root_path}`)\n")
        out.append(_cell(node["description"]) + "\n")
        out.append("| Key path | Type | Required | Default | Valid values / range | Description |")
        out.append("| --- | --- | --- | --- | --- | --- |")
        out.append(_row(root_path, root))
        out.extend(
            _row(f"{root_path}{path if path.startswith('[') else '.' + path}", child)
            for path, child in schema.walk(root)
        )
        out.append("")
    out.extend(_free_text_table())
    out.append("## Semantic rules\n")
    out.append(
        "Checked after the schema, on the normalised fabric. Each rule has a negative "
        "case in `tests/unit/cases/`; schema checks (types, ranges, valid values, "
        "formats, unknown keys) and `primary-key-unique` run first.\n"
    )
    out.append("| Rule | Section | Checks |")
    out.append("| --- | --- | --- |")
    out.extend(f"| `{r.id}` | {r.section} | {_cell(r.summary)} |" for r in RULES)
    out.append("")
    return "\n".join(out)


def main() -> None:
    sys.stdout.write(render())


if __name__ == "__main__":
    main()
