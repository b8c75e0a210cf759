"""The machinery of the Onyx statement table: a Row per statement kind, a Table of rows.

A running-config line (or a rendered intended line) is read into Statements: a
`key` naming the slot the line fills (e.g. ("svi_ip", 10) for the address of
interface vlan 10), a normalised `value`, and the `line` it came from. Two
configs are compared slot by slot, so `ip address 12.0.10.252 255.255.255.0`
and `ip address 12.0.10.252/24` are the same statement.

Everything cxfab knows about one kind lives in its Row (statements.py holds the
rows): how the line reads back, the line that sets it and the one that removes
it, its rank in the teardown order, the object that owns it (the prune scope)
and the section (template group and tag) it belongs to. The parser and the
planner ask the Table; nothing else lists kinds. A row naming an unknown owner,
section, parent or interface is refused when the table is built, and a key no
row knows raises (UnknownKind), never a silent default.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...common.addressing import expand_ids

# Where a line lives: a global line, or the rest of an `interface <on> <id> <rest>` line.
PLACES = ("global", "ethernet", "port-channel", "mlag-port-channel", "vlan")
# The template groups, each also a tag (--tags switch_mlag|switch_vlans|switch_gateway).
SECTIONS = ("mlag", "vlans", "gateway")
# The objects whose scope the planner decides (plan.Scope has one rule per owner).
OWNERS = ("protocol", "po", "vlan", "mpo", "mlag", "lossless")


class UnknownKind(KeyError):
    """A statement key, owner or section no row of the table knows."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Statement:
    key: tuple
    value: Any = True
    line: str = ""

    @property
    def kind(self) -> str:
        return self.key[0]


@dataclass
class Context:
    """What set and removal lines may need to know about the current config."""

    current: dict = field(default_factory=dict)
    # A revert to a snapshot: rows marked `kept` (protocols cxfab otherwise never
    # switches off: lacp, ip routing, global PFC) are removed when the snapshot lacks them.
    restore: bool = False

    def mpo_mode(self, mpo: int) -> str:
        statement = self.current.get(("mpo_mode", mpo))
        return statement.value if statement else "hybrid"


@dataclass(frozen=True)
class Row:
    """One Onyx statement kind.

    kind     first element of the key; `name` (protocol rows) is the second.
    on       `global`, or the interface kind whose lines it reads (PLACES).
    read     regex on the whole line (global) or on the rest after `interface <on> <id>`.
    set      the line that sets it; remove: the line that removes it (from the
             current statement). A str is formatted with key=, value=; else a
             callable (statement, context) -> line.
    rank     teardown order (lower goes first); an int or a callable (statement) -> int.
    owner    (owner, index): the owning object is (owner, key[index]), or (owner,)
             when index is None; or a callable (statement) -> owner key.
    section  mlag | vlans | gateway; `ipl_vlan_is_mlag`: on the IPL VLAN it is mlag's.
    ids      how many regex groups (from the first) belong to the key: 0 or 1.
    many     that group is a range (`vlan 10-20`): one statement per id.
    value    match -> value (default True).
    parent   the kind whose removal removes this one too (its line is then not sent).
    replace  a new value cannot overwrite the old: the old is removed first.
    kept     cxfab switches it on but never off, except in a revert.
    held_by  kinds whose statements keep it (no `no protocol mlag` while an MPO stays).
    off      regex of a line that means the statement is absent (`mlag shutdown`).
    """

    kind: str
    on: str
    read: str
    set: Any
    remove: Any
    rank: Any
    owner: Any
    section: str
    name: str | None = None
    ids: int = 0
    many: bool = False
    value: Callable[[re.Match], Any] | None = None
    parent: str | None = None
    replace: bool = False
    kept: bool = False
    held_by: tuple = ()
    off: str | None = None
    ipl_vlan_is_mlag: bool = False

    @property
    def prefix(self) -> tuple:
        return (self.kind, self.name) if self.name else (self.kind,)

    @property
    def width(self) -> int:
        """Key elements after the kind: the protocol name, the interface id, the id groups."""
        return (1 if self.name or self.on != "global" else 0) + self.ids


def _form(form, statement: Statement, context: Context) -> str | None:
    if callable(form):
        return form(statement, context)
    return form.format(key=statement.key, value=statement.value)


class Table:
    """The rows, indexed for the parser and the planner."""

    def __init__(self, rows: list[Row]):
        self.rows = list(rows)
        self.by_prefix: dict[tuple, Row] = {}
        self.readers: dict[str, list[tuple[re.Pattern, Row]]] = {place: [] for place in PLACES}
        self.absent: dict[str, list[re.Pattern]] = {place: [] for place in PLACES}
        for row in self.rows:
            self._check(row)
            self.by_prefix[row.prefix] = row
            self.readers[row.on].append((re.compile(row.read), row))
            if row.off:
                self.absent[row.on].append(re.compile(row.off))
        for row in self.rows:
            if row.parent and (row.parent,) not in self.by_prefix:
                raise UnknownKind(f"row {row.prefix}: parent kind {row.parent!r} has no row")
            for kind in row.held_by:
                if not any(prefix[0] == kind for prefix in self.by_prefix):
                    raise UnknownKind(f"row {row.prefix}: held_by kind {kind!r} has no row")

    def _check(self, row: Row) -> None:
        problems = []
        if row.on not in PLACES:
            problems.append(f"place {row.on!r} is not among {PLACES}")
        if row.section not in SECTIONS:
            problems.append(f"section {row.section!r} is not among {SECTIONS}")
        if not callable(row.owner) and row.owner[0] not in OWNERS:
            problems.append(f"owner {row.owner[0]!r} is not among {OWNERS}")
        if row.prefix in self.by_prefix:
            problems.append("a second row of the same kind")
        if problems:
            raise UnknownKind(f"row {row.prefix}: " + "; ".join(problems))

    @property
    def kinds(self) -> set[str]:
        return {row.kind for row in self.rows}

    def row(self, key: tuple) -> Row:
        row = self.by_prefix.get(tuple(key[:2])) or self.by_prefix.get(tuple(key[:1]))
        if row is None:
            raise UnknownKind(f"no statement row for {key!r}")
        return row

    # ------------------------------------------------------------------ reading
    def read(self, on: str, ident, text: str) -> list[tuple[tuple, Any]] | None:
        """(key, value) of one line (global: ident None), [] for an `off` line, None if unknown."""
        for pattern, row in self.readers[on]:
            match = pattern.match(text)
            if match:
                return _statements(row, ident, match)
        if any(pattern.match(text) for pattern in self.absent[on]):
            return []
        return None

    # ------------------------------------------------------------------ planning
    def set_line(self, statement: Statement, context: Context | None = None) -> str:
        return _form(self.row(statement.key).set, statement, context or Context())

    def removal_line(self, statement: Statement, context: Context) -> str | None:
        row = self.row(statement.key)
        if row.kept and not context.restore:
            return None
        return _form(row.remove, statement, context)

    def removal_rank(self, statement: Statement) -> int:
        rank = self.row(statement.key).rank
        return rank(statement) if callable(rank) else rank

    def parent_key(self, key: tuple) -> tuple | None:
        parent = self.row(key).parent
        if parent is None:
            return None
        return (parent, *key[1 : 1 + self.by_prefix[(parent,)].width])

    def owner(self, statement: Statement) -> tuple:
        owner = self.row(statement.key).owner
        if callable(owner):
            return owner(statement)
        name, index = owner
        return (name,) if index is None else (name, statement.key[index])

    def needs_replace(self, statement: Statement) -> bool:
        return self.row(statement.key).replace

    def held_by(self, statement: Statement) -> tuple:
        return self.row(statement.key).held_by

    def section(self, statement: Statement, ipl_vlans: frozenset) -> str:
        row = self.row(statement.key)
        if row.ipl_vlan_is_mlag and statement.key[1] in ipl_vlans:
            return "mlag"
        return row.section


def _statements(row: Row, ident, match: re.Match) -> list[tuple[tuple, Any]]:
    head = row.prefix + (() if ident is None else (ident,))
    value = row.value(match) if row.value else True
    if not row.ids:
        return [(head, value)]
    if row.many:
        return [((*head, number), value) for number in expand_ids(match.group(1))]
    return [((*head, int(match.group(1))), value)]
