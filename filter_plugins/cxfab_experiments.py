"""Filters of playbooks/experiments.yml: the plan, its batches, their records, the report."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "module_utils"))

from cxfab.workloads.experiments import batches, plan, report


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
            "cxfab_experiments_unknown_tags": plan.unknown_tags,
            "cxfab_experiments_from_tags": plan.experiments_from_tags,
            "cxfab_experiment_batches": batches.batches,
            "cxfab_experiment_batch_data": batches.batch_data,
            "cxfab_experiment_batch_records": batches.records,
            "cxfab_experiment_retry_batch": batches.retry_batch,
            "cxfab_experiment_with_retries": batches.with_retries,
            "cxfab_experiment_report": experiment_report,
        }
