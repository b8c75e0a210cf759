"""Who deploys which switch in a run of playbooks/switches.yml (logic kept out of Jinja).

One module call per switch pair changes the pair's peers that are in the play,
in pair order, over one SSH session per switch. It runs on the first of those
peers in play order; the other peer's host has nothing to do.
"""

from __future__ import annotations

from ..structured.switch import find_pair
from .onyx.plan import SECTIONS

# Tag of each section group of the intended config.
SECTION_TAGS = {"switch_mlag": "mlag", "switch_vlans": "vlans", "switch_gateway": "gateway"}


def turn(fabric: dict, switch: str, play_hosts: list[str]) -> dict:
    """{pair, platform: the switch OS (picks the driver), switches: peers to change
    (pair order), runs_here: this host deploys}."""
    pair, _ = find_pair(fabric, switch)
    peers = [peer["name"] for peer in pair["peers"]]
    in_play = [name for name in peers if name in play_hosts]
    first_in_play = min(in_play, key=play_hosts.index) if in_play else None
    return {
        "pair": pair["name"],
        "platform": pair.get("platform", "onyx"),  # the schema's default
        "switches": in_play,
        "runs_here": first_in_play == switch,
    }


def credentials(switch_pairs: list, switch: str) -> dict:
    """The CLI login of the switch's pair, from the inventory's `cxfab_switch_pairs`.

    No fact holds the password (the validated fabric is published without it): the
    task that logs in reads it here, from the templated inventory variable, and hands
    it only to a module parameter marked no_log. Validation has passed, so the pair
    and both keys exist; a switch of no pair is still an error, never an empty login.
    """
    for pair in switch_pairs or []:
        if any(peer.get("name") == switch for peer in pair.get("peers") or []):
            login = pair["credentials"]
            return {"username": str(login["username"]), "password": str(login["password"])}
    raise KeyError(f"cxfab_switch_pairs: no switch pair has a peer named {switch!r}")


def sections(run_tags, skip_tags) -> list[str]:
    """Sections a run reconciles: all, or those whose tag was asked for (minus skipped)."""
    asked = [SECTION_TAGS[tag] for tag in SECTION_TAGS if tag in (run_tags or [])]
    chosen = asked or list(SECTIONS)
    skipped = {SECTION_TAGS[tag] for tag in SECTION_TAGS if tag in (skip_tags or [])}
    return [section for section in chosen if section not in skipped]
