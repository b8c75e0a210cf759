"""Filters of verify.yml (logic lives in module_utils/cxfab and is unit tested there)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "module_utils"))

from cxfab.verify import dataplane, report


class FilterModule:
    """Which verify sections the run's tags select."""

    def filters(self):
        return {
            "cxfab_verify_sections": report.sections_run,
            "cxfab_dataplane_targets": dataplane.targets,
        }
