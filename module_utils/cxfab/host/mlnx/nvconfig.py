"""Parse `mstconfig -d <dev> -e q [PARAM ...]` (MFT: `mlxconfig`).

With `-e` every parameter row carries three columns, `Default`, `Current` and
`Next Boot`; a leading `*` marks a row whose next value differs from the
default/current one. Enumerations print as `LABEL(number)`: `ETH(2)`, `True(1)`.
Rows are matched by column position under the `Configurations:` header, never
by searching the whole line for a value (a value that appears only in the
Default column must not count as configured).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_ENUM_RE = re.compile(r"^(?P<label>.*?)\((?P<number>-?\d+)\)$")
_COLUMN_SPLIT = re.compile(r"\s{2,}")

DEFAULT = "Default"
CURRENT = "Current"
NEXT_BOOT = "Next Boot"


class NvConfigParseError(ValueError):
    """The text is not a configuration query."""


@dataclass(frozen=True)
class NvValue:
    """One cell: `ETH(2)` -> label 'ETH', number 2; `16` -> label '16', number 16."""

    raw: str
    label: str
    number: int | None

    @classmethod
    def parse(cls, raw: str) -> NvValue:
        raw = raw.strip()
        match = _ENUM_RE.match(raw)
        if match:
            return cls(raw, match.group("label").strip(), int(match.group("number")))
        number = int(raw) if re.fullmatch(r"-?\d+", raw) else None
        return cls(raw, raw, number)

    def equals(self, label: str | None = None, number: int | None = None) -> bool:
        """Match by number when both sides have one, else by label (case-insensitive)."""
        if number is not None and self.number is not None:
            return self.number == number
        return label is not None and self.label.casefold() == label.casefold()


@dataclass(frozen=True)
class NvParam:
    name: str
    values: dict[str, NvValue]
    marked: bool = False

    def get(self, column: str) -> NvValue | None:
        return self.values.get(column)


@dataclass
class NvConfigQuery:
    device_type: str = ""
    device_name: str = ""
    columns: tuple[str, ...] = ()
    params: dict[str, NvParam] = field(default_factory=dict)

    def has_column(self, column: str) -> bool:
        return column in self.columns


def parse_nvconfig_query(text: str) -> NvConfigQuery:
    """Parse a query; works with and without `-e` (then only `Next Boot` exists)."""
    query = NvConfigQuery()
    in_config = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("-E-"):
            raise NvConfigParseError(f"configuration tool reported an error: {line}")
        if not in_config:
            key, sep, value = line.partition(":")
            if sep and key.strip() == "Device type":
                query.device_type = value.strip()
            elif sep and key.strip() == "Name":
                query.device_name = value.strip()
            elif sep and key.strip() == "Configurations":
                header = value.strip()
                query.columns = tuple(_COLUMN_SPLIT.split(header)) if header else (NEXT_BOOT,)
                in_config = True
            continue
        if line.startswith("The '*'"):
            continue
        marked = line.startswith("*")
        body = line.lstrip("*").strip()
        cells = _COLUMN_SPLIT.split(body)
        if len(cells) != len(query.columns) + 1:
            # A 16-character value leaves one space before the next column.
            cells = body.split()
        if len(cells) != len(query.columns) + 1:
            # Not a parameter row (a warning, a wrapped description).
            continue
        name, *values = cells
        query.params[name] = NvParam(
            name=name,
            values={col: NvValue.parse(v) for col, v in zip(query.columns, values, strict=True)},
            marked=marked,
        )
    if not in_config:
        raise NvConfigParseError("configuration query output has no 'Configurations:' section")
    return query
