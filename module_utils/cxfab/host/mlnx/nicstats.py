"""Parse `ethtool -S <if>` and pick the counters that tell of trouble.

ethtool prints `NIC statistics:` and then one `     <name>: <value>` line per
counter (ethtool.c, dump_stats). Names are the driver's. mlx5 (ConnectX-4 and
later, kernel Documentation/networking/device_drivers/ethernet/mellanox/mlx5/
counters.rst) has the physical-port ones the health check needs:
`rx_crc_errors_phy`, `rx_symbol_err_phy`, `rx_discards_phy`, `tx_discards_phy`,
`rx_pause_ctrl_phy`, `rx_prio<N>_pause`, `rx_prio<N>_packets`, `link_down_events_phy`, plus the
software `rx_out_of_buffer`. Other drivers (virtio_net in the lab) print only
queue counters: then there is simply nothing to flag.
"""

from __future__ import annotations

import re

_ROW_RE = re.compile(r"^\s+(?P<name>[^:]+?):\s+(?P<value>-?\d+)\s*$")
HEADER = "NIC statistics:"

# Per-queue/per-ring copies (`rx0_wqe_err`, `tx_queue_1_drops`, `ch2_...`) are left
# out: the port totals already count them.
_PER_QUEUE = re.compile(r"^(rx|tx)\d+_|queue|^ch\d+_")
# Kind of counter -> name pattern, first match wins.
_KINDS = (
    ("link_down", re.compile(r"^link_down_events(_phy)?$")),
    ("pause", re.compile(r"^(rx|tx)_(\w+_)?pause(_ctrl)?(_phy)?$")),
    # Traffic per priority (mlx5 `rx_prio3_packets`): lossless RoCE must land there.
    ("priority", re.compile(r"^(rx|tx)_prio\d+_(bytes|packets)$")),
    ("error", re.compile(r"(err|crc|symbol|fcs)")),
    ("discard", re.compile(r"(discard|drop|out_of_buffer)")),
)


class EthtoolParseError(ValueError):
    """The text is not an `ethtool -S` listing."""


def parse_ethtool_stats(text: str, command: str = "ethtool -S") -> dict[str, int]:
    """{counter name: value}; EthtoolParseError when the header is missing."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == HEADER), None)
    if start is None:
        head = " | ".join(line.strip() for line in text.strip().splitlines()[:3]) or "no output"
        raise EthtoolParseError(f"{command}: no '{HEADER}' header (output began: {head})")
    counters = {}
    for line in lines[start + 1 :]:
        match = _ROW_RE.match(line)
        if match:
            counters[match.group("name").strip()] = int(match.group("value"))
    return counters


def kind(name: str) -> str | None:
    """`error`, `discard`, `pause`, `priority`, `link_down` or None for a counter name."""
    if _PER_QUEUE.search(name):
        return None
    for label, pattern in _KINDS:
        if pattern.search(name):
            return label
    return None


def health_counters(counters: dict[str, int]) -> dict[str, dict[str, int]]:
    """The counters worth comparing, grouped by kind: {kind: {name: value}}."""
    grouped: dict[str, dict[str, int]] = {}
    for name, value in sorted(counters.items()):
        label = kind(name)
        if label:
            grouped.setdefault(label, {})[name] = value
    return grouped
