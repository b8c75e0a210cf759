"""Parse `mlxcables` (MFT): the EEPROM identity of every cable plugged into a ConnectX.

The query prints one block per cable::

    Cable #1:
    ---------
    Cable name    : mt4115_pciconf0.1_cable_1
    >> No FW data to show
    -------- Cable EEPROM --------
    Identifier    : QSFP28 (11h)
    ...
    Vendor        : OPTCORE
    Part number   : Q-100G-DAC-P2M
    Length        : 2 m

Multi-line values (Attenuation lists one frequency per line) continue on lines
that start with spaces. The cable name ends in `_cable_<n>`, n the 0-based port
of the card the cable sits in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_BLOCK_RE = re.compile(r"^Cable #(\d+):\s*$")
_ROW_RE = re.compile(r"^(?P<key>[A-Za-z][A-Za-z ]*?)\s*:\s?(?P<value>.*)$")
_PORT_RE = re.compile(r"_cable_(\d+)$")
NO_CABLES = "-W- No cables were found"


class MlxcablesParseError(ValueError):
    """The text is not an mlxcables listing."""


@dataclass(frozen=True)
class Cable:
    name: str
    vendor: str | None
    part_number: str | None
    serial: str | None
    identifier: str | None
    technology: str | None
    compliance: str | None
    length: str | None
    oui: str | None
    revision: str | None
    fields: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def port_index(self) -> int | None:
        """0-based port of the card, from the `_cable_<n>` suffix of the name."""
        match = _PORT_RE.search(self.name)
        return int(match.group(1)) if match else None


def _clean(value: str | None) -> str | None:
    return None if value in (None, "", "N/A") else value


def _cable(fields: dict[str, str]) -> Cable:
    return Cable(
        name=fields.get("Cable name", ""),
        vendor=_clean(fields.get("Vendor")),
        part_number=_clean(fields.get("Part number")),
        serial=_clean(fields.get("Serial number")),
        identifier=_clean(fields.get("Identifier")),
        technology=_clean(fields.get("Technology")),
        compliance=_clean(fields.get("Compliance")),
        length=_clean(fields.get("Length")),
        oui=_clean(fields.get("OUI")),
        revision=_clean(fields.get("Revision")),
        fields=fields,
    )


def parse_mlxcables(text: str, command: str = "mlxcables") -> list[Cable]:
    """Every cable of the listing (an empty list only when the tool says none was found)."""
    cables: list[Cable] = []
    fields: dict[str, str] | None = None
    last_key = None
    saw_header = False
    for raw in text.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if stripped.startswith("-E-"):
            raise MlxcablesParseError(f"{command} reported an error: {stripped}")
        if stripped.startswith("Querying Cables"):
            saw_header = True
            continue
        if stripped == NO_CABLES:
            return []
        if _BLOCK_RE.match(stripped):
            if fields is not None:
                cables.append(_cable(fields))
            fields, last_key = {}, None
            continue
        if fields is None or not stripped or stripped.startswith(("---", ">>")):
            continue
        if line[0].isspace() and last_key:
            fields[last_key] += "; " + stripped
            continue
        match = _ROW_RE.match(stripped)
        if match:
            last_key = match.group("key").strip()
            fields[last_key] = match.group("value").strip()
    if fields is not None:
        cables.append(_cable(fields))
    nameless = [cable for cable in cables if not cable.name]
    if not cables or nameless:
        head = " | ".join(line.strip() for line in text.strip().splitlines()[:3]) or "no output"
        what = "a cable block without 'Cable name'" if nameless else "no 'Cable #' block"
        hint = "" if saw_header else " and no 'Querying Cables' header"
        raise MlxcablesParseError(f"{command}: {what}{hint} (output began: {head})")
    return cables
