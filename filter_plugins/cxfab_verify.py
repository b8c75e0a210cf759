"""Filters of verify.yml and drill.yml: the verify sections the run's tags select, the
dataplane targets of a host (both playbooks probe them) and the failover drill's
figures. The logic lives in module_utils/cxfab/verify and is unit tested there."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "module_utils"))

from cxfab.verify import dataplane, drill, report


def drill_report(results, switch, down_at, up_at, interval, fault="MPOs shut"):
    """cxfab_drill_ping results per host ({host: {results: [...]}}) -> the drill report."""
    rows = [
        {"host": host, **row}
        for host, result in sorted((results or {}).items())
        for row in (result or {}).get("results") or []
    ]
    return drill.report(rows, switch, float(down_at), float(up_at), float(interval), fault)


def command_window(stamps):
    """[start, end] of ansible.builtin.command results (local time) -> epoch seconds."""
    return [drill.command_epoch(stamp) for stamp in stamps]


class FilterModule:
    def filters(self):
        return {
            "cxfab_verify_sections": report.sections_run,
            "cxfab_dataplane_targets": dataplane.targets,
            "cxfab_drill_report": drill_report,
            "cxfab_drill_command_window": command_window,
        }
