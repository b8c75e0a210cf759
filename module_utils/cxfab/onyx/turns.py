"""Who deploys which switch in a run of playbooks/switches.yml (logic kept out of Jinja).

One module call per switch pair changes the pair's peers that are in the play,
in pair order, over one SSH session per switch. It runs on the first of those
peers in play order; the other peer's host has nothing to do.
"""

from __future__ import annotations

from .plan import SECTIONS
from .structured import find_pair

# Tag of each section group of the intended config.
SECTION_TAGS = {"switch_mlag": "mlag", "switch_vlans": "vlans", "switch_gateway": "gateway"}


def turn(fabric: dict, switch: str, play_hosts: list[str]) -> dict:
    """{pair, switches: peers to change (pair order), runs_here: this host deploys}."""
    pair, _ = find_pair(fabric, switch)
    peers = [peer["name"] for peer in pair["peers"]]
    in_play = [name for name in peers if name in play_hosts]
    first_in_play = min(in_play, key=play_hosts.index) if in_play else None
    return {"pair": pair["name"], "switches": in_play, "runs_here": first_in_play == switch}


def credentials(fabric: dict, switch: str) -> dict:
    """The CLI login of the switch's pair."""
    pair, _ = find_pair(fabric, switch)
    return pair["credentials"]


def sections(run_tags, skip_tags) -> list[str]:
    """Sections a run reconciles: all, or those whose tag was asked for (minus skipped)."""
    asked = [SECTION_TAGS[tag] for tag in SECTION_TAGS if tag in (run_tags or [])]
    chosen = asked or list(SECTIONS)
    skipped = {SECTION_TAGS[tag] for tag in SECTION_TAGS if tag in (skip_tags or [])}
    return [section for section in chosen if section not in skipped]
