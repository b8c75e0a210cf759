"""Filters of the switch play (their logic lives in module_utils/cxfab/switch/turns.py)."""

import sys
from pathlib import Path

from ansible.errors import AnsibleFilterError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "module_utils"))

from cxfab.switch import turns
from cxfab.switch.nvue import plan as nvue_plan


def switch_credentials(switch_pairs, switch):
    """`cxfab_switch_pairs | cxfab_switch_credentials(switch)`: the pair's CLI login."""
    try:
        return turns.credentials(switch_pairs, switch)
    except KeyError as exc:
        raise AnsibleFilterError(str(exc.args[0])) from exc


class FilterModule:
    """Deploy turn, credentials, tag -> sections of a switch; a Cumulus switch's intended
    config as `nv set` lines."""

    def filters(self):
        return {
            "cxfab_switch_turn": turns.turn,
            "cxfab_switch_credentials": switch_credentials,
            "cxfab_switch_sections": turns.sections,
            "cxfab_nvue_intended": nvue_plan.intended_lines,
        }
