"""Write the verification report (reports/<stamp>/ and reports/latest/) on the controller."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "module_utils"))

from cxfab.verify.report import ReportError, build_report, run_fails, write_report


class ActionModule(ActionBase):
    """Build report.json/.md/.html from checks and measurements; never touches a device."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(
        ("checks", "bandwidth", "qos", "fleet", "meta", "reports_dir", "secrets")
    )
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self._task.args
        checks = args.get("checks") or []
        if not isinstance(checks, list):
            raise AnsibleActionFail("checks: must be a list of check results")
        reports_dir = args.get("reports_dir") or str(
            Path((task_vars or {}).get("playbook_dir", ".")).parent / "reports"
        )
        try:
            report = build_report(
                checks,
                bandwidth=args.get("bandwidth") or [],
                qos=args.get("qos") or [],
                meta=args.get("meta") or {},
                secrets=[str(s) for s in (args.get("secrets") or [])],
                fleet=args.get("fleet") or None,
            )
        except ReportError as exc:
            raise AnsibleActionFail(f"report: {exc}") from exc
        if self._task.check_mode:
            result.update(
                changed=False,
                summary=report["summary"],
                path=None,
                run_failed=run_fails(report["summary"]),
            )
            return result
        out = write_report(report, reports_dir)
        written = json.loads((out / "report.json").read_text())
        result.update(
            changed=True,
            path=str(out),
            latest=str(Path(reports_dir) / "latest"),
            summary=report["summary"],
            run_failed=run_fails(report["summary"]),
            categories=report["categories"],
            failed_checks=[c for c in report["checks"] if c["status"] == "fail"],
            warned_checks=[c for c in report["checks"] if c["status"] == "warn"],
            diff=written["diff"],
        )
        return result
