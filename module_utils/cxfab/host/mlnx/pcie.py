"""The PCIe link of an adapter, current against capable, from sysfs.

`/sys/bus/pci/devices/<bdf>/` holds `current_link_speed`, `current_link_width`
(LnkSta) and `max_link_speed`, `max_link_width` (LnkCap). Kernels since 4.19
print speeds as `8.0 GT/s PCIe`; older ones `8 GT/s`; a link the kernel cannot
decode is `Unknown` (`Unknown speed` on old kernels). Widths are bare numbers.

The usable bandwidth is computed like the kernel's own warning (seed 000:
"63.008 Gb/s available PCIe bandwidth, limited by 8 GT/s x8 link ... capable of
126.016 Gb/s with 8 GT/s x16 link"): per-lane rate after line encoding
(8b/10b up to 5 GT/s, 128b/130b from 8 GT/s) times the width.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass

# Mb/s per lane after encoding (PCIE_SPEED2MBS_ENC in include/linux/pci.h).
LANE_MBPS = {2.5: 2000, 5.0: 4000, 8.0: 7876, 16.0: 15753, 32.0: 31507, 64.0: 63015}
_SPEED_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*GT/s(?:\s+PCIe)?$")
FILES = ("current_link_speed", "current_link_width", "max_link_speed", "max_link_width")


class PcieReadError(ValueError):
    """The link files are missing or say something this code cannot read."""


def parse_speed(text: str) -> float:
    """`8.0 GT/s PCIe` or `8 GT/s` -> 8.0; PcieReadError for `Unknown` or anything else."""
    match = _SPEED_RE.match(text.strip())
    if not match or float(match.group(1)) not in LANE_MBPS:
        raise PcieReadError(f"link speed {text.strip()!r} is not a known PCIe rate")
    return float(match.group(1))


def parse_width(text: str) -> int:
    value = text.strip().lstrip("x")
    if not value.isdigit() or int(value) not in (1, 2, 4, 8, 12, 16, 32):
        raise PcieReadError(f"link width {text.strip()!r} is not a PCIe lane count")
    return int(value)


def gbps(speed_gts: float, width: int) -> float:
    return LANE_MBPS[speed_gts] * width / 1000.0


def usable_gbps(speed_text, width) -> float | None:
    """sysfs `current_link_speed` x `current_link_width` -> usable Gb/s; None if unreadable."""
    try:
        return gbps(parse_speed(str(speed_text)), parse_width(str(width)))
    except PcieReadError:
        return None


def describe(speed_gts: float, width: int) -> str:
    """`8 GT/s x8 (63.008 Gb/s)`."""
    return f"{speed_gts:g} GT/s x{width} ({gbps(speed_gts, width):.3f} Gb/s)"


@dataclass(frozen=True)
class PcieLink:
    speed_gts: float
    width: int
    max_speed_gts: float
    max_width: int

    @property
    def gbps(self) -> float:
        return gbps(self.speed_gts, self.width)

    @property
    def max_gbps(self) -> float:
        return gbps(self.max_speed_gts, self.max_width)

    @property
    def degraded(self) -> bool:
        return self.speed_gts < self.max_speed_gts or self.width < self.max_width

    def observed(self) -> str:
        """`8 GT/s x8 (63.008 Gb/s), capable of 8 GT/s x16 (126.016 Gb/s)`."""
        return (
            f"{describe(self.speed_gts, self.width)}, "
            f"capable of {describe(self.max_speed_gts, self.max_width)}"
        )

    def as_dict(self) -> dict:
        return {
            **dataclasses.asdict(self),
            "gbps": round(self.gbps, 3),
            "max_gbps": round(self.max_gbps, 3),
            "degraded": self.degraded,
        }


def parse_link(values: dict[str, str], where: str = "the device") -> PcieLink:
    """Build the link from the four sysfs values (file name -> text)."""
    missing = [name for name in FILES if values.get(name) is None]
    if missing:
        raise PcieReadError(f"{where}: no {', '.join(missing)} (not a PCIe device?)")
    try:
        return PcieLink(
            speed_gts=parse_speed(values["current_link_speed"]),
            width=parse_width(values["current_link_width"]),
            max_speed_gts=parse_speed(values["max_link_speed"]),
            max_width=parse_width(values["max_link_width"]),
        )
    except PcieReadError as exc:
        raise PcieReadError(f"{where}: {exc}") from None


def read_link(pci_dir: str) -> PcieLink:
    """Read the four files of one PCI function's directory in sysfs."""
    values = {}
    for name in FILES:
        try:
            with open(os.path.join(pci_dir, name), encoding="ascii", errors="replace") as handle:
                values[name] = handle.read().strip()
        except OSError:
            continue
    return parse_link(values, pci_dir)
