"""Filters of playbooks/experiments.yml: the plan, one run's record, the report files."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "module_utils"))

from cxfab.experiments import plan, report, results


def experiments_from_tags(run_tags, given=None):
    """The experiments to run: those named in --tags, else the settings' (default: all)."""
    named = [e for e in plan.EXPERIMENTS if e in (run_tags or [])]
    return named or list((given or {}).get("experiments") or plan.EXPERIMENTS)


def experiment_record(run, clients, servers, error=""):
    """A run's record from the registered outputs of its clients and servers."""

    def outputs(items):
        return [
            {"rc": i.get("rc", 1), "stdout": i.get("stdout", ""), "stderr": i.get("stderr", "")}
            for i in items or []
        ]

    return results.record(run, outputs(clients), outputs(servers), error)


def experiment_report(records, meta, fmt):
    built = report.build(records, meta)
    if fmt == "md":
        return report.markdown(built)
    if fmt == "html":
        return report.html_page(built)
    return report.json.dumps(built, indent=2)


class FilterModule:
    def filters(self):
        return {
            "cxfab_experiment_settings": plan.settings_with_defaults,
            "cxfab_experiment_plan": plan.plan_experiments,
            "cxfab_experiment_inputs": plan.rcat_inputs,
            "cxfab_experiments_from_tags": experiments_from_tags,
            "cxfab_experiment_record": experiment_record,
            "cxfab_experiment_report": experiment_report,
        }
