"""Which host stages a run reads up front (playbooks/host_state.yml), from its tags."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "module_utils"))

from cxfab.host.stages import check


def cxfab_host_stages(run_tags, skip_tags=(), wanted=None):
    """{{ ansible_run_tags | cxfab_host_stages(ansible_skip_tags, cxfab_host_state_stages) }}

    The stages of check.STAGES the run's tags select (all of them without --tags),
    limited to `wanted` when a stage playbook imports host_state.yml for its own.
    """
    return check.selected(run_tags, skip_tags, wanted)


class FilterModule:
    def filters(self):
        return {"cxfab_host_stages": cxfab_host_stages}
