"""Structured configs of the golden lab/example switches, turned into cumulus ones."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

GOLDEN = Path(__file__).parents[1] / "golden"


def cumulus(fabric: str, switch: str, release: str = "5.9") -> dict:
    """The golden structured config of `switch`, as a cumulus pair would give it: the
    intent rules make the IPL VLAN 4094 (peerlink.4094) on a cumulus pair."""
    path = GOLDEN / fabric / "structured" / f"{switch}.yml"
    structured = copy.deepcopy(yaml.safe_load(path.read_text(encoding="utf-8")))
    structured["platform"] = "cumulus"
    structured["release"] = release
    if structured.get("mlag"):
        structured["mlag"]["peer_link"]["vlan"] = 4094
        structured["scope"]["vlans"] = [v for v in structured["scope"]["vlans"] if v != 4000]
    return structured
