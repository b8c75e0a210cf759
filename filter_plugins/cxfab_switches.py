"""Filters of the switch play (their logic lives in module_utils/cxfab/onyx/turns.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "module_utils"))

from cxfab.onyx import turns


class FilterModule:
    """Deploy turn, credentials and tag -> sections of a switch."""

    def filters(self):
        return {
            "cxfab_switch_turn": turns.turn,
            "cxfab_switch_credentials": turns.credentials,
            "cxfab_switch_sections": turns.sections,
        }
