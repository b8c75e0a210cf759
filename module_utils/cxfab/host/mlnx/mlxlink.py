"""Parse `mlxlink -d <dev> [-m] [-c]` (MFT) and `mstlink` (mstflint): one port's link health.

Both tools print titled sections, each title underlined with dashes, then
`<key padded to 32>: <value>` rows (mlxlink_cmd_print / mlxlink_record in the
mstflint sources). Values may be wrapped in ANSI colour codes: the tool colours
them whether or not stdout is a terminal. The two tools differ in what they
print, not in how: MFT 4.15 lists the BER rows as Effective errors, Effective
BER, Raw BER, Raw errors per lane; mstflint 4.21 puts the per-lane errors
second and adds `Link Down Counter` / `Link Error Recovery Counter` on newer
firmware. Rows are therefore read by name, never by position.

Sections used here:
  Operational Info        State, Physical state, Speed, Width, FEC, ...
  Troubleshooting Info    Status Opcode, Group Opcode, Recommendation
  Physical Counters and BER Info   (-c)
  Module Info             (-m) vendor, part number, cable type, length, temperature
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...common.parsing import reads_as

_ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
_ROW_RE = re.compile(r"^(?P<key>\S[^:]*?)\s*:\s?(?P<value>.*)$")
_TEMPERATURE_RE = re.compile(r"^(-?\d+(?:\.\d+)?)")
NOT_AVAILABLE = "N/A"

OPERATIONAL = "Operational Info"
SUPPORTED = "Supported Info"
TROUBLESHOOTING = "Troubleshooting Info"
COUNTERS = "Physical Counters and BER Info"
MODULE = "Module Info"

# Status opcodes of the management firmware (PDDR troubleshooting page, `monitor_opcode`,
# group MNG FW, 1024-2047): the cause is the cable or module, not the far end. Texts of
# the register's description (mstflint tools_layouts/adb/prm/hca/ext/
# register_access_table.adb; tests/fixtures/mlnx/pddr_monitor_opcodes.txt), first letter
# lower-cased and without the cross-references to other registers.
MODULE_OPCODES = {
    1024: "cable is unplugged",
    1025: "long Range for non Mellanox cable/module",
    1026: "bus stuck (I2C Data or clock shorted)",
    1027: "bad/unsupported EEPROM",
    1028: "part number list",
    1029: "unsupported cable",
    1030: "module temperature shutdown",
    1031: "shorted cable",
    1032: "power budget exceeded",
    1033: "management forced down the port",
    1034: "module is disabled by command",
    1035: "system Power is Exceeded therefore the module is powered off",
    1036: "module's PMD type is not enabled",
}


class MlxlinkParseError(ValueError):
    """The text is not an mlxlink/mstlink port report (an error, or truncated output)."""


def strip_ansi(text: str) -> str:
    return _ANSI_RE.sub("", text)


def parse_sections(text: str) -> dict[str, dict[str, str]]:
    """{section title: {row key: value}}; a title is a line followed by a dash underline."""
    lines = [line.rstrip() for line in strip_ansi(text).splitlines()]
    sections: dict[str, dict[str, str]] = {}
    current = None
    for index, line in enumerate(lines):
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if line and following and set(following) == {"-"} and ":" not in line:
            current = sections.setdefault(line.strip(), {})
            continue
        if current is None or not line.strip() or set(line.strip()) == {"-"}:
            continue
        match = _ROW_RE.match(line)
        if match:
            current[match.group("key").strip()] = match.group("value").strip()
    return sections


def _value(row: dict[str, str], key: str) -> str | None:
    """The value of a row, None when absent or printed as N/A."""
    value = row.get(key)
    return None if value in (None, "", NOT_AVAILABLE) else value


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text.replace(",", ""), 0)
    except ValueError:
        return None


def parse_ber(text: str | None) -> float | None:
    """`15E-255` (mlxlink prints coefficient E- magnitude) -> 1.5e-254; N/A -> None."""
    if text is None:
        return None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)E-(\d+)", text.strip())
    if not match:
        return None
    return float(match.group(1)) * 10.0 ** -int(match.group(2))


@dataclass(frozen=True)
class ModuleInfo:
    """The cable/transceiver as `mlxlink -m` describes it (Module Info section)."""

    vendor: str | None
    part_number: str | None
    serial: str | None
    cable_type: str | None
    technology: str | None
    compliance: str | None
    length: str | None
    temperature_c: float | None


@dataclass(frozen=True)
class LinkReport:
    """One port: operational state, troubleshooting verdict, counters, module."""

    state: str
    physical_state: str | None
    speed: str | None
    width: str | None
    fec: str | None
    enabled_speeds: str | None
    cable_speeds: str | None
    opcode: int | None
    group: str | None
    recommendation: str | None
    effective_errors: int | None = None
    effective_ber: float | None = None
    raw_ber: float | None = None
    raw_errors_per_lane: tuple[int, ...] = ()
    link_down_counter: int | None = None
    recovery_counter: int | None = None
    minutes_since_clear: float | None = None
    module: ModuleInfo | None = None
    sections: dict[str, dict[str, str]] = field(default_factory=dict, repr=False)

    @property
    def up(self) -> bool:
        return self.state == "Active"

    @property
    def issue(self) -> bool:
        """The troubleshooting page names a problem (opcode other than 0)."""
        return self.opcode not in (None, 0)

    def cause(self) -> str:
        """Why the port is not up: `module's PMD type is not enabled (opcode 1036)`."""
        if not self.issue:
            return f"state {self.state}, no troubleshooting opcode"
        what = MODULE_OPCODES.get(self.opcode) or (self.recommendation or "").rstrip(".")
        return f"{what or 'link problem'} (opcode {self.opcode})"


def _module(row: dict[str, str]) -> ModuleInfo | None:
    if not row:
        return None
    temperature = _value(row, "Temperature [C]")
    match = _TEMPERATURE_RE.match(temperature or "")
    return ModuleInfo(
        vendor=_value(row, "Vendor Name"),
        part_number=_value(row, "Vendor Part Number"),
        serial=_value(row, "Vendor Serial Number"),
        cable_type=_value(row, "Cable Type"),
        technology=_value(row, "Cable Technology"),
        compliance=_value(row, "Compliance"),
        length=_value(row, "Transfer Distance [m]") or _value(row, "Cable Length"),
        temperature_c=float(match.group(1)) if match else None,
    )


def parse_mlxlink(text: str, command: str = "mlxlink") -> LinkReport:
    """Parse one port report; MlxlinkParseError (naming the command) when it is not one."""
    clean = strip_ansi(text)
    errors = [line.strip() for line in clean.splitlines() if line.strip().startswith("-E-")]
    if errors:
        raise MlxlinkParseError(f"{command} reported an error: {errors[0]}")
    sections = parse_sections(clean)
    operational = sections.get(OPERATIONAL) or {}
    state = _value(operational, "State")
    if not state:
        head = " | ".join(line.strip() for line in clean.strip().splitlines()[:3]) or "no output"
        raise MlxlinkParseError(
            f"{command}: no '{OPERATIONAL}' section with a State row (output began: {head})"
        )
    trouble = sections.get(TROUBLESHOOTING) or {}
    supported = sections.get(SUPPORTED) or {}
    counters = sections.get(COUNTERS) or {}
    lanes = _value(counters, "Raw Physical Errors Per Lane")
    lane_counts = tuple(_int(part.strip()) for part in (lanes or "").split(",") if part.strip())
    minutes = _value(counters, "Time Since Last Clear [Min]")
    return LinkReport(
        state=state,
        physical_state=_value(operational, "Physical state"),
        speed=_value(operational, "Speed"),
        width=_value(operational, "Width"),
        fec=_value(operational, "FEC"),
        enabled_speeds=_value(supported, "Enabled Link Speed")
        or _value(supported, "Enabled Link Speed (Ext.)"),
        cable_speeds=_value(supported, "Supported Cable Speed")
        or _value(supported, "Supported Cable Speed (Ext.)"),
        opcode=_int(_value(trouble, "Status Opcode")),
        group=_value(trouble, "Group Opcode"),
        recommendation=_value(trouble, "Recommendation"),
        effective_errors=_int(_value(counters, "Effective Physical Errors")),
        effective_ber=parse_ber(_value(counters, "Effective Physical BER")),
        raw_ber=parse_ber(_value(counters, "Raw Physical BER")),
        raw_errors_per_lane=tuple(n for n in lane_counts if n is not None),
        link_down_counter=_int(_value(counters, "Link Down Counter")),
        recovery_counter=_int(_value(counters, "Link Error Recovery Counter")),
        minutes_since_clear=float(minutes) if minutes and reads_as(float, minutes) else None,
        module=_module(sections.get(MODULE) or {}),
        sections=sections,
    )
