"""Parse `mlxfwmanager --query` (text) and `mlxfwmanager --query --query-format XML`.

Both list devices with type, part number, PSID, the current and available
versions per component (FW, PXE, UEFI) and a status such as `Update required`,
`Up to date` or `No matching image found`. While a burned image awaits
activation the text form adds a `FW (Running)` row.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from .versions import same_version

_NOT_AVAILABLE = {"", "N/A", "NA", "-"}


class FwManagerParseError(ValueError):
    """The text is not an mlxfwmanager query."""


@dataclass
class FwManagerDevice:
    """One `Device #N` block."""

    pci_name: str = ""
    device_type: str = ""
    part_number: str = ""
    description: str = ""
    psid: str = ""
    status: str = ""
    versions: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)

    @property
    def fw_version(self) -> str | None:
        """Firmware in flash."""
        return self.versions.get("FW", (None, None))[0]

    @property
    def available_version(self) -> str | None:
        """Firmware the queried image/bundle offers for this PSID (None: no match)."""
        return self.versions.get("FW", (None, None))[1]

    @property
    def running_version(self) -> str | None:
        return self.versions.get("FW (Running)", (None, None))[0]

    @property
    def activation_pending(self) -> bool:
        return self.running_version is not None and not same_version(
            self.running_version, self.fw_version
        )

    def matches_pci(self, bdf: str) -> bool:
        """True when this block is the PCI function `bdf` (domain optional on either side)."""
        return _short_bdf(self.pci_name) == _short_bdf(bdf) if self.pci_name else False


def _short_bdf(name: str) -> str:
    name = name.strip().lower()
    match = re.search(r"([0-9a-f]{2}:[0-9a-f]{2}\.[0-7])$", name)
    return match.group(1) if match else name


def _version_or_none(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    return None if value in _NOT_AVAILABLE else value


_KEYS = {
    "Device Type": "device_type",
    "Part Number": "part_number",
    "Description": "description",
    "PSID": "psid",
    "PCI Device Name": "pci_name",
    "Status": "status",
}


def parse_fwmanager_text(text: str) -> list[FwManagerDevice]:
    """Parse the human-readable query into one entry per device."""
    devices: list[FwManagerDevice] = []
    current: FwManagerDevice | None = None
    in_versions = False
    for raw in text.splitlines():
        line = raw.strip()
        if raw.lstrip().startswith("-E-"):
            raise FwManagerParseError(f"mlxfwmanager reported an error: {line}")
        if re.match(r"^Device #\d+:", line):
            current = FwManagerDevice()
            devices.append(current)
            in_versions = False
            continue
        if current is None or not line or set(line) == {"-"}:
            continue
        if line.startswith("Versions:"):
            in_versions = True
            continue
        key, sep, value = line.partition(":")
        if sep and key.strip() in _KEYS:
            in_versions = False
            setattr(current, _KEYS[key.strip()], value.strip())
            continue
        if in_versions:
            # "FW             12.23.1020     12.28.1002" or "FW (Running)  12.23.1020  N/A"
            columns = re.split(r"\s{2,}", line)
            if len(columns) >= 2:
                available = columns[2] if len(columns) > 2 else None
                current.versions[columns[0]] = (
                    _version_or_none(columns[1]),
                    _version_or_none(available),
                )
    if not devices:
        raise FwManagerParseError("mlxfwmanager output lists no device")
    return devices


def parse_fwmanager_xml(text: str) -> list[FwManagerDevice]:
    """Parse `--query-format XML`: <Devices><Device pciName= psid= ...><Versions>..."""
    start = text.find("<Devices")
    end = text.rfind("</Devices>")
    if start < 0 or end < 0:
        raise FwManagerParseError("mlxfwmanager XML output has no <Devices> element")
    try:
        root = ET.fromstring(text[start : end + len("</Devices>")])
    except ET.ParseError as exc:
        raise FwManagerParseError(f"mlxfwmanager XML output is malformed: {exc}") from exc
    devices = []
    for node in root.iter("Device"):
        device = FwManagerDevice(
            pci_name=node.get("pciName", ""),
            device_type=node.get("type", ""),
            part_number=node.get("partNumber", ""),
            psid=node.get("psid", ""),
            status=(node.findtext("Status") or "").strip(),
            description=(node.findtext("Description") or "").strip(),
        )
        versions = node.find("Versions")
        for component in versions if versions is not None else []:
            name = component.tag
            if name.lower().replace("_", "") in {"fwrunning", "runningfw"}:
                name = "FW (Running)"
            device.versions[name] = (
                _version_or_none(component.get("current")),
                _version_or_none(component.get("available")),
            )
        devices.append(device)
    if not devices:
        raise FwManagerParseError("mlxfwmanager XML output lists no device")
    return devices


def parse_fwmanager(text: str) -> list[FwManagerDevice]:
    """Parse either format, chosen by the content."""
    if "<Devices" in text:
        return parse_fwmanager_xml(text)
    return parse_fwmanager_text(text)


def find_device(devices: list[FwManagerDevice], bdf: str) -> FwManagerDevice | None:
    """The block for `bdf`.

    A query narrowed with `-d` lists one block whose name may be an mst path
    (/dev/mst/mt4115_pciconf0) rather than the PCI address: that block is it.
    """
    for device in devices:
        if device.matches_pci(bdf):
            return device
    return devices[0] if len(devices) == 1 else None
