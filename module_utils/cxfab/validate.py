"""Validate the fabric: schema first, then the semantic cross-device rules.

Errors name the inventory key path (`cxfab_vlans[2].svi_addresses.sw-b`, or
`cxfab_host.bond.members[1]` plus the host whose host_vars hold it) and the
reason. Schema errors stop validation before the semantic rules (those need
well-typed data); all errors of a phase are reported together.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema

from . import fabric as fabric_mod
from . import schema
from .rules import RULES, FabricView

DocPath = tuple[Any, ...]


@dataclass(frozen=True)
class FabricError:
    """One validation error at an inventory key path."""

    path: str
    message: str
    host: str | None = None
    rule: str = "schema"

    def __str__(self) -> str:
        where = f"{self.path} (host {self.host})" if self.host else self.path
        return f"{where}: {self.message}"


@dataclass
class ValidationResult:
    fabric: dict | None
    errors: list[FabricError]

    @property
    def ok(self) -> bool:
        return not self.errors


def inventory_path(doc_path: DocPath) -> tuple[str | None, str]:
    """(host, inventory key path) for a path inside the fabric document."""
    head, rest = doc_path[0], list(doc_path[1:])
    host = None
    if head == "hosts":
        if not rest:
            return None, f"group '{fabric_mod.HOSTS_GROUP}'"
        host = str(rest.pop(0))
        text = fabric_mod.HOST_VAR
    else:
        text = fabric_mod.FABRIC_VARS.get(head, str(head))
    for part in rest:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return host, text


def make_error(doc_path: DocPath, message: str, rule: str = "schema") -> FabricError:
    host, path = inventory_path(doc_path)
    return FabricError(path=path, message=message, host=host, rule=rule)


# ------------------------------------------------------------------ schema phase

_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean (true/false)",
    "object": "a mapping",
    "array": "a list",
}


def _show(value: Any, sensitive: bool) -> str:
    if sensitive:
        return "<hidden>"
    return repr(value) if isinstance(value, str) else str(value)


def _type_name(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        dict: "a mapping",
        list: "a list",
    }.get(type(value), type(value).__name__)


def _schema_messages(error: jsonschema.ValidationError) -> Iterable[tuple[DocPath, str]]:
    """Readable (path, message) pairs for one jsonschema error."""
    path: DocPath = tuple(error.absolute_path)
    sub = error.schema if isinstance(error.schema, dict) else {}
    secret = bool(sub.get("x-sensitive"))
    value = error.instance
    kind = error.validator
    if kind == "required":
        key = ast.literal_eval(error.message.split(" is a required property")[0])
        yield (*path, key), "required key is missing"
    elif kind == "additionalProperties":
        known = sorted(sub.get("properties", {}))
        for key in value:
            if key not in known:
                hint = f" (known keys: {', '.join(known)})" if known else ""
                yield (*path, key), f"unknown key{hint}"
    elif kind == "type":
        want = _TYPE_WORDS.get(str(error.validator_value), str(error.validator_value))
        yield path, f"expected {want}, got {_type_name(value)}"
    elif kind == "enum":
        choices = ", ".join(str(v) for v in error.validator_value)
        yield path, f"{_show(value, secret)} is not one of: {choices}"
    elif kind == "format":
        what = schema.FORMATS[error.validator_value][1]
        yield path, f"{_show(value, secret)} is not {what}"
    elif kind == "minimum":
        yield path, f"{value} is below the minimum {error.validator_value}"
    elif kind == "maximum":
        yield path, f"{value} is above the maximum {error.validator_value}"
    elif kind in ("minItems", "maxItems"):
        low, high = sub.get("minItems"), sub.get("maxItems")
        if low is not None and low == high:
            yield path, f"needs exactly {low} entries, got {len(value)}"
        elif kind == "minItems":
            yield path, f"needs at least {low} entries, got {len(value)}"
        else:
            yield path, f"takes at most {high} entries, got {len(value)}"
    elif kind == "minLength":
        yield path, f"must not be shorter than {error.validator_value} characters"
    elif kind == "maxLength":
        yield path, f"must not be longer than {error.validator_value} characters"
    elif kind == "uniqueItems":
        seen, twice = [], []
        for item in value:
            (twice if item in seen else seen).append(item)
        yield path, f"entries must be unique; {', '.join(map(str, twice))} listed twice"
    else:  # a keyword this module does not word itself
        yield path, "invalid value" if secret else error.message


def _format_checker() -> jsonschema.FormatChecker:
    checker = jsonschema.FormatChecker(formats=())
    for name, (check, _) in schema.FORMATS.items():
        checker.checks(name)(check)
    return checker


def _primary_key_errors(node: dict, value: Any, path: DocPath) -> Iterable[tuple[DocPath, str]]:
    """Duplicate primary keys in lists (the schema's `primary_key`)."""
    kind = node["type"]
    if kind == "dict" and isinstance(value, dict):
        keys = node.get("keys", {})
        for name, item in value.items():
            child = keys.get(name, node.get("values"))
            if child:
                yield from _primary_key_errors(child, item, (*path, name))
    elif kind == "list" and isinstance(value, list) and "items" in node:
        key = node.get("primary_key")
        first_seen: dict[Any, int] = {}
        for index, item in enumerate(value):
            if key and isinstance(item, dict) and key in item:
                ident = item[key]
                if ident in first_seen:
                    _, other = inventory_path((*path, first_seen[ident]))
                    yield (*path, index, key), f"duplicate {key} {ident} (also at {other})"
                else:
                    first_seen[ident] = index
            yield from _primary_key_errors(node["items"], item, (*path, index))


def schema_errors(document: dict) -> list[FabricError]:
    """Errors of the raw document against the schema (types, ranges, enums, keys)."""
    root = schema.document_schema()
    validator = jsonschema.Draft202012Validator(
        schema.to_json_schema(root), format_checker=_format_checker()
    )
    errors: list[FabricError] = []
    for error in sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.path))):
        if not error.absolute_path and error.validator == "required":
            key = ast.literal_eval(error.message.split(" is a required property")[0])
            var = fabric_mod.FABRIC_VARS.get(key, key)
            errors.append(FabricError(var, "required variable is not defined (group_vars/all)"))
            continue
        for path, message in _schema_messages(error):
            errors.append(make_error(path, message))
    for path, message in _primary_key_errors(root, document, ()):
        errors.append(make_error(path, message, rule="primary-key-unique"))
    return errors


# ------------------------------------------------------------------ entry points


def semantic_errors(
    fabric: dict, groups: Mapping[str, Iterable[str]] | None = None
) -> list[FabricError]:
    """Errors of the cross-device rules on a normalised, schema-valid fabric."""
    view = FabricView(fabric, groups)
    errors: list[FabricError] = []
    for rule in RULES:
        for path, message in rule.check(view):
            error = make_error(path, message, rule=rule.id)
            if error not in errors:
                errors.append(error)
    return errors


def validate_document(
    document: dict, groups: Mapping[str, Iterable[str]] | None = None
) -> ValidationResult:
    """Validate an assembled document; on success return the normalised fabric."""
    errors = [
        FabricError(
            fabric_mod.HOST_VAR,
            f"is not defined; every host of group '{fabric_mod.HOSTS_GROUP}' needs it "
            "(host_vars/<host>/)",
            host=name,
        )
        for name, value in document.get("hosts", {}).items()
        if value is None
    ]
    if errors:
        return ValidationResult(None, errors)
    errors = schema_errors(document)
    if errors:
        return ValidationResult(None, errors)
    fabric = fabric_mod.normalise(document)
    errors = semantic_errors(fabric, groups)
    return ValidationResult(None if errors else fabric, errors)


def validate_inventory(
    fabric_vars: Mapping[str, Any],
    host_vars: Mapping[str, Any],
    groups: Mapping[str, Iterable[str]] | None = None,
) -> ValidationResult:
    """Assemble the document from inventory variables and validate it.

    fabric_vars: cxfab_fabric_name, cxfab_switch_pairs, cxfab_vlans, cxfab_workloads;
    host_vars: hostname -> cxfab_host (None when undefined) for every host of group 'hosts';
    groups: inventory groups (name -> hostnames), for the inventory cross-checks.
    """
    document = fabric_mod.assemble(fabric_vars, host_vars)
    return validate_document(document, groups)
