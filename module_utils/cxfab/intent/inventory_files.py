"""Check an inventory directory's YAML files before Ansible loads them.

Ansible reads group_vars/ and host_vars/ lazily: a tab in one of them fails the
first task that reads that host with an error naming the task, not the file, and
a few hundred bytes of nested YAML aliases expand to gigabytes once a value is
copied or rendered. This check runs first (vars plugin `cxfab_inventory_files`)
and stops the run with `<file>:<line>:<column>: <reason>`: a file that does not
parse, a key given twice in one mapping, a file above the size limit, aliases
that expand beyond the node limit, or too many files in all.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import yaml

MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_TOTAL_BYTES = 512 * 1024 * 1024
MAX_FILES = 200_000
MAX_NODES = 2_000_000  # values of one file with every alias expanded
VARS_DIRS = ("group_vars", "host_vars")
EXTENSIONS = ("", ".yml", ".yaml", ".json")
VAULT_HEADER = b"$ANSIBLE_VAULT"

try:
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - libyaml missing
    _Loader = yaml.SafeLoader


class InventoryFileError(ValueError):
    """A file of the inventory cannot be loaded safely; the message names it."""


def vars_files(directory: str | os.PathLike) -> Iterator[Path]:
    """The files Ansible's host_group_vars plugin would read below `directory`."""
    for sub in VARS_DIRS:
        root = Path(directory) / sub
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            hidden = any(part.startswith(".") for part in path.relative_to(root).parts)
            if path.is_file() and not hidden and path.suffix in EXTENSIONS:
                yield path


def check_directory(directory: str | os.PathLike) -> None:
    """Raise InventoryFileError for the first unsafe vars file below `directory`."""
    total = 0
    for count, path in enumerate(vars_files(directory), start=1):
        if count > MAX_FILES:
            raise InventoryFileError(
                f"{directory}: more than {MAX_FILES} variable files (the inventory size limit)"
            )
        total += check_file(path)
        if total > MAX_TOTAL_BYTES:
            raise InventoryFileError(
                f"{path}: the variable files reach {total} bytes, above the inventory "
                f"limit of {MAX_TOTAL_BYTES}"
            )


def check_file(path: Path) -> int:
    """Raise InventoryFileError when `path` is unsafe to load; returns its size."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise InventoryFileError(
            f"{path}:1:1: the file is {size} bytes, above the limit of {MAX_FILE_BYTES}"
        )
    data = path.read_bytes()
    if data.lstrip().startswith(VAULT_HEADER):
        return size  # a vault-encrypted file: ansible-vault checks it
    try:
        nodes = list(yaml.compose_all(data, Loader=_Loader))
    except yaml.MarkedYAMLError as error:
        raise InventoryFileError(_marked(path, error)) from None
    except yaml.YAMLError as error:
        raise InventoryFileError(f"{path}:1:1: not YAML: {error}") from None
    counts: dict[int, int] = {}
    for node in nodes:
        if node is not None and _expanded(node, counts, set(), path) > MAX_NODES:
            raise InventoryFileError(_too_many(path, node))
    return size


def _marked(path: Path, error: yaml.MarkedYAMLError) -> str:
    mark = error.problem_mark or error.context_mark
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else f"{path}:1:1"
    reason = " ".join(part for part in (error.context, error.problem) if part)
    if "\\t" in reason or "\t" in reason:
        reason += " (a tab: indent with spaces)"
    return f"{where}: {reason}"


def _too_many(path: Path, node: yaml.Node) -> str:
    mark = node.start_mark
    return (
        f"{path}:{mark.line + 1}:{mark.column + 1}: its aliases expand to more than "
        f"{MAX_NODES} values (nested YAML aliases, an 'alias bomb'?)"
    )


def _expanded(node: yaml.Node, counts: dict[int, int], active: set[int], path: Path) -> int:
    """Values under `node` with every alias expanded, memoised per node (never expanded)."""
    key = id(node)
    if key in counts:
        return counts[key]
    if key in active:
        mark = node.start_mark
        raise InventoryFileError(
            f"{path}:{mark.line + 1}:{mark.column + 1}: an alias refers to its own anchor"
        )
    active.add(key)
    total = 1
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                line = key_node.start_mark.line + 1
                if key_node.value in seen:
                    raise InventoryFileError(
                        f"{path}:{line}:{key_node.start_mark.column + 1}: Found duplicate "
                        f"mapping key {key_node.value!r} (also on line {seen[key_node.value]})"
                    )
                seen[key_node.value] = line
            total += _expanded(key_node, counts, active, path)
            total += _expanded(value_node, counts, active, path)
            if total > MAX_NODES:
                break
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            total += _expanded(item, counts, active, path)
            if total > MAX_NODES:
                break
    active.discard(key)
    counts[key] = total
    return total
