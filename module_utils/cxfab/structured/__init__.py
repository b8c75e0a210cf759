"""The structured config of every device: the one contract between intent and devices.

One controller step right after validation (action plugin `cxfab_structured`)
derives it for every switch and every host of the validated fabric and writes
`build/structured/<device>.yml`. Every module then takes only its own device's
structured data; nothing downstream reads the raw inventory again.
"""

from __future__ import annotations

from . import hosts as host_structured
from . import switch as switch_structured


def public_fabric(fabric: dict) -> dict:
    """The fabric without switch credentials: all that structured config may see."""
    pairs = [{**pair, "credentials": {}} for pair in fabric.get("switch_pairs") or []]
    return {**fabric, "switch_pairs": pairs}


def switch_names(fabric: dict) -> list[str]:
    return [peer["name"] for pair in fabric.get("switch_pairs") or [] for peer in pair["peers"]]


def build_all(fabric: dict, prune: bool = True) -> dict[str, dict]:
    """Device name -> structured config, switches first, for a validated fabric."""
    public = public_fabric(fabric)
    devices = {
        name: switch_structured.build(public, name, prune=prune) for name in switch_names(public)
    }
    racks = host_structured.Racks(public)
    for name in fabric.get("hosts") or {}:
        devices[name] = host_structured.build(public, name, racks)
    return devices
