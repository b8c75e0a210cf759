"""The verification report: checks and measurements -> report.json, report.md, report.html.

A report is built on the controller from the results the verify playbook collects.
Every check has the same shape, whatever produced it (switch, host or workload):

    {id, target, category, status: pass|fail|skip, expected, observed, message}

Performance figures are kept beside the checks as series for the plots:

    bandwidth: [{transport, size_bytes, bits_per_second, reference?}]   (vs message size)
    qos:       [{target, vlan, limit_mbps|None, measured_mbps}]          (per VLAN)

Secrets never reach a report: every string is scrubbed of the values passed as
`secrets` before anything is written.
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

STATUSES = ("pass", "fail", "skip")
CHECK_KEYS = ("id", "target", "category", "status", "expected", "observed", "message")
REDACTED = "********"


class ReportError(ValueError):
    """A check or series does not have the shape the report needs."""


def normalise_check(check: dict, index: int) -> dict:
    """Return the check with every key present; reject unknown statuses."""
    missing = [k for k in ("id", "target", "category", "status") if k not in check]
    if missing:
        raise ReportError(f"checks[{index}]: missing {', '.join(missing)}")
    status = str(check["status"]).lower()
    if status not in STATUSES:
        raise ReportError(f"checks[{index}].status: {check['status']!r} is not one of {STATUSES}")
    out = {k: check.get(k, "") for k in CHECK_KEYS}
    out["status"] = status
    return out


def scrub(value, secrets: list[str]):
    """Replace every secret inside strings of a nested structure."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {k: scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v, secrets) for v in value]
    return value


def build_report(
    checks: list[dict],
    bandwidth: list[dict] | None = None,
    qos: list[dict] | None = None,
    meta: dict | None = None,
    secrets: list[str] | None = None,
) -> dict:
    """Assemble the report document; the summary is derived, never passed in."""
    normalised = [normalise_check(c, i) for i, c in enumerate(checks)]
    seen: set[tuple[str, str]] = set()
    for i, check in enumerate(normalised):
        key = (check["id"], check["target"])
        if key in seen:
            raise ReportError(f"checks[{i}]: duplicate check {check['id']} on {check['target']}")
        seen.add(key)
    summary = {"passed": 0, "failed": 0, "skipped": 0}
    for check in normalised:
        summary[{"pass": "passed", "fail": "failed", "skip": "skipped"}[check["status"]]] += 1
    summary["total"] = len(normalised)
    report = {
        "meta": {"generated": datetime.now(UTC).isoformat(timespec="seconds"), **(meta or {})},
        "summary": summary,
        "checks": normalised,
        "performance": {"bandwidth": list(bandwidth or []), "qos": list(qos or [])},
    }
    return scrub(report, [s for s in (secrets or []) if s])


# ---------------------------------------------------------------- plots


def _plot_png(draw) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    try:
        draw(ax)
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
        return buffer.getvalue()
    finally:
        plt.close(fig)


def plot_bandwidth(series: list[dict]) -> bytes | None:
    """Bandwidth vs message size, one line per transport (the seeds' graphs)."""
    if not series:
        return None

    def draw(ax):
        by_transport: dict[str, list[tuple[int, float]]] = {}
        for point in series:
            by_transport.setdefault(point["transport"], []).append(
                (int(point["size_bytes"]), float(point["bits_per_second"]) / 1e9)
            )
        for transport, points in sorted(by_transport.items()):
            points.sort()
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=transport)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size [bytes]")
        ax.set_ylabel("bandwidth [Gb/s]")
        ax.set_title("Bandwidth vs message size")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()

    return _plot_png(draw)


def plot_qos(series: list[dict]) -> bytes | None:
    """Measured throughput per VLAN next to its configured limit (seed 001's check)."""
    if not series:
        return None

    def draw(ax):
        labels = [f"{p['target']}\nVLAN {p['vlan']}" for p in series]
        measured = [float(p["measured_mbps"]) for p in series]
        limits = [float(p["limit_mbps"]) if p.get("limit_mbps") else 0.0 for p in series]
        xs = range(len(series))
        ax.bar([x - 0.2 for x in xs], measured, width=0.4, label="measured")
        ax.bar([x + 0.2 for x in xs], limits, width=0.4, label="limit (0 = unlimited)")
        ax.set_xticks(list(xs), labels, fontsize=8)
        ax.set_ylabel("throughput [Mb/s]")
        ax.set_title("Per-VLAN throughput against its QoS limit")
        ax.legend()

    return _plot_png(draw)


# ---------------------------------------------------------------- writing


def _environment():
    import jinja2

    templates = Path(__file__).resolve().parents[2] / "templates" / "report"
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)),
        autoescape=jinja2.select_autoescape(["html.j2"]),
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )


def write_report(report: dict, reports_dir: str | os.PathLike, stamp: str | None = None) -> Path:
    """Write reports/<stamp>/ and refresh reports/latest/; return the stamped folder."""
    reports_dir = Path(reports_dir)
    stamp = stamp or datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = reports_dir / stamp
    out.mkdir(parents=True, exist_ok=True)

    plots = {}
    for name, png in (
        ("bandwidth", plot_bandwidth(report["performance"]["bandwidth"])),
        ("qos", plot_qos(report["performance"]["qos"])),
    ):
        if png:
            (out / f"{name}.png").write_bytes(png)
            plots[name] = base64.b64encode(png).decode("ascii")

    (out / "report.json").write_text(json.dumps(report, indent=2, sort_keys=False) + "\n")
    env = _environment()
    context = {"report": report, "plots": plots}
    (out / "report.md").write_text(env.get_template("report.md.j2").render(**context))
    (out / "report.html").write_text(env.get_template("report.html.j2").render(**context))

    latest = reports_dir / "latest"
    if latest.is_symlink() or latest.is_file():
        latest.unlink()
    elif latest.is_dir():
        shutil.rmtree(latest)
    shutil.copytree(out, latest)
    return out


VERIFY_SECTIONS = ("switches", "hosts", "qos", "perf")


def sections_run(run_tags, skip_tags) -> list[str]:
    """The verify sections a run covers, from `--tags` / `--skip-tags` (tag verify_<section>)."""
    run, skip = set(run_tags or ["all"]), set(skip_tags or [])
    return [
        section
        for section in VERIFY_SECTIONS
        if ("all" in run or f"verify_{section}" in run) and f"verify_{section}" not in skip
    ]
