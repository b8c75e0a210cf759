"""Validate the fabric: the schema, the semantic cross-device rules, the inventory.

Errors name the inventory key path (`cxfab_vlans[2].svi_addresses.sw-b`, or
`cxfab_host.bond.members[1]` plus the host whose host_vars hold it) and the
reason. One run reports every error of the inventory: the semantic rules need
well-typed data, so they run on the parts that passed the schema (an entity
with a schema error - a switch pair, MPO, VLAN, host or workload pair - is left
out of them, and rules do not report references to what was left out).
"""

from __future__ import annotations

import contextlib
import difflib
import gc
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from . import fabric as fabric_mod
from . import schema
from .rules import RULES, FabricView
from .schema import checker, prune

DocPath = tuple[Any, ...]
# Head of the paths of findings about inventory variables outside the fabric
# document, e.g. ("inventory", host, "ansible_host").
INVENTORY = "inventory"


@dataclass(frozen=True)
class FabricError:
    """One validation error at an inventory key path."""

    path: str
    message: str
    host: str | None = None
    rule: str = "schema"

    def __str__(self) -> str:
        host = _cut(_printable(self.host)) if self.host else None
        path = _cut(_printable(self.path))
        where = f"{path} (host {host})" if host else path
        return f"{where}: {_cut(self.message, MESSAGE_CHARACTERS)}"


MESSAGE_CHARACTERS = 400  # an error line stays readable whatever value it repeats


def _cut(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def is_cxfab_name(name: str) -> bool:
    """A cxfab variable, also misspelled in its prefix (`CXFAB_vlans`, `cxfab-vlans`)."""
    return isinstance(name, str) and name.lower().replace("-", "_").startswith("cxfab_")


def _printable(text: str) -> str:
    """Text as is when it is plain printable ASCII, else its quoted repr: a hostile key
    (a newline in a hostname) must not break the one-error-per-line output."""
    return text if text.isascii() and text.isprintable() else repr(text)


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
    if head == INVENTORY and rest:
        # ("inventory", host, variable): a variable of that host's inventory entry.
        return str(rest[0]), ".".join(map(str, rest[1:]))
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
            ident = item.get(key) if key and isinstance(item, dict) else None
            # an identifier of the wrong type is a schema error already: skip it here
            if isinstance(ident, str | int) and not isinstance(ident, bool):
                if ident in first_seen:
                    _, other = inventory_path((*path, first_seen[ident]))
                    yield (*path, index, key), f"duplicate {key} {ident} (also at {other})"
                else:
                    first_seen[ident] = index
            yield from _primary_key_errors(node["items"], item, (*path, index))


def schema_problems(document: dict) -> tuple[dict, list[tuple[DocPath, str, str]]]:
    """(converted document, [(path, message, rule)]) of the schema phase."""
    root = schema.document_schema()
    converted, problems = checker.check(root, document)
    found = [(path, message, "schema") for path, message in problems]
    found += [
        (path, message, "primary-key-unique")
        for path, message in _primary_key_errors(root, converted, ())
    ]
    return converted, found


def _schema_error(path: DocPath, message: str, rule: str) -> FabricError:
    if len(path) == 1 and message == "required key is missing":
        var = fabric_mod.FABRIC_VARS.get(path[0], path[0])
        return FabricError(var, "required variable is not defined (group_vars/all)")
    return make_error(path, message, rule)


def schema_errors(document: dict) -> list[FabricError]:
    """Errors of the raw document against the schema (types, ranges, enums, keys)."""
    return [_schema_error(*problem) for problem in schema_problems(document)[1]]


# ------------------------------------------------------------------ inventory checks


def _suggest(name: str) -> str:
    known = [*fabric_mod.FABRIC_VARS.values(), fabric_mod.HOST_VAR, *fabric_mod.RUN_SETTINGS]
    # Compared without the common prefix, which would make every name look close.
    suffixes = {var.removeprefix("cxfab_"): var for var in known}
    stem = name.lower().replace("-", "_").removeprefix("cxfab_")
    close = difflib.get_close_matches(stem, suffixes, n=1, cutoff=0.6)
    if close:
        return f"; did you mean {suffixes[close[0]]}?"
    return f" (known: {', '.join(known)})"


def unknown_variable_errors(
    fabric_vars: Mapping[str, Any], host_settings: Mapping[str, Mapping[str, Any]]
) -> list[FabricError]:
    """cxfab_* variables nobody reads: a misspelled one would silently drop a section."""
    known = {*fabric_mod.FABRIC_VARS.values(), *fabric_mod.RUN_SETTINGS}
    errors = [
        FabricError(name, f"unknown cxfab variable{_suggest(name)}", rule="unknown-variable")
        for name in fabric_vars
        if is_cxfab_name(name) and name not in known
    ]
    reported = {error.path for error in errors}
    holders: dict[str, list[str]] = {}
    for host, settings in host_settings.items():
        for name in settings:
            if is_cxfab_name(name) and name not in known | {fabric_mod.HOST_VAR}:
                holders.setdefault(name, []).append(host)
    for name, hosts in holders.items():
        if name in reported:  # a group_vars/all variable every host inherits
            continue
        more = f" (also on {len(hosts) - 1} other host(s))" if len(hosts) > 1 else ""
        errors.append(
            FabricError(
                name,
                f"unknown cxfab variable{_suggest(name)}{more}",
                host=hosts[0],
                rule="unknown-variable",
            )
        )
    return errors


# ------------------------------------------------------------------ entry points


def semantic_errors(
    fabric: dict,
    groups: Mapping[str, Iterable[str]] | None = None,
    host_settings: Mapping[str, Mapping[str, Any]] | None = None,
    pruned: prune.Pruned | None = None,
) -> list[FabricError]:
    """Errors of the cross-device rules on a normalised fabric (its schema-valid part)."""
    view = FabricView(fabric, groups, host_settings, pruned.dropped if pruned else None)
    errors: list[FabricError] = []
    seen: set[FabricError] = set()
    for rule in RULES:
        for path, message in rule.check(view):
            original = pruned.original_path(path) if pruned else path
            error = make_error(original, message, rule=rule.id)
            if error not in seen:
                seen.add(error)
                errors.append(error)
    return errors


def validate_document(
    document: dict,
    groups: Mapping[str, Iterable[str]] | None = None,
    host_settings: Mapping[str, Mapping[str, Any]] | None = None,
) -> ValidationResult:
    """Validate an assembled document; on success return the normalised fabric."""
    hosts = document.get("hosts", {})
    undefined = [name for name, value in hosts.items() if value is None]
    errors = [
        FabricError(
            fabric_mod.HOST_VAR,
            f"is not defined; every host of group '{fabric_mod.HOSTS_GROUP}' needs it "
            "(host_vars/<host>/)",
            host=name,
        )
        for name in undefined
    ]
    if undefined:
        document = {**document, "hosts": {n: v for n, v in hosts.items() if v is not None}}
    converted, problems = schema_problems(document)
    hosts_node = schema.load()["hosts"]
    problems += [
        (path, message, "schema")
        for path, message in checker.key_problems(hosts_node, undefined, ("hosts",))
    ]
    errors += [_schema_error(*problem) for problem in problems]
    pruned = prune.prune(converted, [path for path, _, _ in problems], undefined)
    fabric = fabric_mod.normalise(pruned.document)
    errors += semantic_errors(fabric, groups, host_settings, pruned)
    return ValidationResult(None if errors else fabric, errors)


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector off for a while.

    Validation builds hundreds of thousands of small dicts and lists, none in a
    reference cycle; each full collection walks all of them again, which made a
    fabric ten times larger take fifteen times longer. Reference counting still
    frees everything; the collector runs again afterwards.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def validate_inventory(
    fabric_vars: Mapping[str, Any],
    host_vars: Mapping[str, Any],
    groups: Mapping[str, Iterable[str]] | None = None,
    host_settings: Mapping[str, Mapping[str, Any]] | None = None,
) -> ValidationResult:
    """Assemble the document from inventory variables and validate it.

    fabric_vars: every cxfab_* variable of group_vars/all (cxfab_fabric_name,
        cxfab_switch_pairs, cxfab_vlans, cxfab_workloads; any other one that is
        not a run setting is reported as unknown);
    host_vars: hostname -> cxfab_host (None when undefined) for every host of group 'hosts';
    groups: inventory groups (name -> hostnames), for the inventory cross-checks;
    host_settings: hostname -> that host's ansible_host/ansible_port and the
        names of its other cxfab_* variables (values unused), for every inventory host.
    """
    settings = host_settings or {}
    with paused_gc():
        errors = unknown_variable_errors(fabric_vars, settings)
        document = fabric_mod.assemble(fabric_vars, host_vars)
        result = validate_document(document, groups, settings)
    if errors:
        return ValidationResult(None, errors + result.errors)
    return result
