"""The verification report: checks and measurements -> report.json, report.md, report.html.

report.json's shape is docs/report.schema.json (`schema_version`); report.junit.xml and
cxfab.prom (outputs.py) carry the same checks for CI systems and monitoring.

A report is built on the controller from the results the verify playbook collects.
Every check has the same shape, whatever produced it (switch, host or workload):

    {id, target, category, status: pass|warn|fail|skip, expected, observed, message}

The report a person reads first: a summary per report category (switch, firmware,
link/cable, PCIe, QoS, IRQ, RDMA, performance, lossless; the category comes from the
check id's prefix, see CATEGORY_OF_PREFIX), then the failures and warnings with
what was observed and why, then the plots, then every check; and what changed
state since the previous report of the same fabric (`diff`).

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

from ..common.checks import (  # noqa: F401  (re-exported: the report's readers use them here)
    ALWAYS_LISTED,
    CATEGORIES,
    CATEGORY_OF_PREFIX,
    CHECK_KEYS,
    STATUSES,
    SUMMARY_KEYS,
    category_of,
)
from .bounds import run_fails  # noqa: F401  (the run's verdict, read with the summary)
from .outputs import junit_xml, prometheus_text

REDACTED = "********"
# The version of report.json's shape, described by docs/report.schema.json: bump it
# (and the schema's `schema_version` const) whenever the shape changes.
SCHEMA_VERSION = "3"


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
    fleet: dict | None = None,
) -> dict:
    """Assemble the report document; the summary is derived, never passed in. `fleet`:
    the generated plan's pair matrix and verdict (verify/fleet.py), when it ran."""
    normalised = [normalise_check(c, i) for i, c in enumerate(checks)]
    seen: set[tuple[str, str]] = set()
    for i, check in enumerate(normalised):
        key = (check["id"], check["target"])
        if key in seen:
            raise ReportError(f"checks[{i}]: duplicate check {check['id']} on {check['target']}")
        seen.add(key)
    summary = dict.fromkeys(SUMMARY_KEYS.values(), 0)
    for check in normalised:
        summary[SUMMARY_KEYS[check["status"]]] += 1
    summary["total"] = len(normalised)
    report = {
        "schema_version": SCHEMA_VERSION,
        "meta": {"generated": datetime.now(UTC).isoformat(timespec="seconds"), **(meta or {})},
        "summary": summary,
        "categories": category_summary(normalised),
        "checks": normalised,
        "performance": {"bandwidth": list(bandwidth or []), "qos": list(qos or [])},
    }
    if fleet:
        report["performance"]["fleet"] = fleet
    return scrub(report, [s for s in (secrets or []) if s])


# ---------------------------------------------------------------- reading order


def category_summary(checks: list[dict]) -> list[dict]:
    """Per category, in CATEGORIES order: {category, pass, warn, fail, skip, total}."""
    counts = {name: dict.fromkeys(STATUSES, 0) for name in CATEGORIES}
    for check in checks:
        counts[category_of(check["id"])][check["status"]] += 1
    rows = []
    for name in CATEGORIES:
        total = sum(counts[name].values())
        if total or name in ALWAYS_LISTED:
            rows.append({"category": name, **counts[name], "total": total})
    return rows


_ORDER = {name: index for index, name in enumerate(CATEGORIES)}
_STATUS_ORDER = {"fail": 0, "warn": 1, "waived": 2, "skip": 3, "pass": 4}


def reading_order(checks: list[dict]) -> list[dict]:
    """Checks with their report category, by category, then worst status, target, id."""
    view = [{**check, "group": category_of(check["id"])} for check in checks]
    return sorted(
        view,
        key=lambda c: (_ORDER[c["group"]], _STATUS_ORDER[c["status"]], c["target"], c["id"]),
    )


def problems(checks: list[dict]) -> list[dict]:
    """Failures first, then warnings, each with its category, observed value and cause."""
    return [c for c in reading_order(checks) if c["status"] == "fail"] + [
        c for c in reading_order(checks) if c["status"] == "warn"
    ]


def diff_reports(previous: dict | None, current: dict) -> dict:
    """What changed state since `previous`: {previous, changed, new, gone, note}."""
    out = {"previous": None, "changed": [], "new": [], "gone": [], "note": ""}
    if not previous:
        out["note"] = "no previous report"
        return out
    out["previous"] = (previous.get("meta") or {}).get("generated")
    before_fabric = (previous.get("meta") or {}).get("fabric")
    now_fabric = (current.get("meta") or {}).get("fabric")
    if before_fabric != now_fabric:
        out["note"] = f"the previous report is of fabric {before_fabric!r}: not compared"
        return out
    before = {(c["id"], c["target"]): c for c in previous.get("checks") or []}
    now = {(c["id"], c["target"]): c for c in current["checks"]}
    for key, check in now.items():
        old = before.get(key)
        entry = {
            "id": key[0],
            "target": key[1],
            "group": category_of(key[0]),
            "after": check["status"],
            "observed": check["observed"],
        }
        if old is None:
            out["new"].append({**entry, "before": None})
        elif old.get("status") != check["status"]:
            out["changed"].append({**entry, "before": old.get("status")})
    out["gone"] = [
        {"id": key[0], "target": key[1], "before": check.get("status")}
        for key, check in before.items()
        if key not in now
    ]
    for name in ("changed", "new", "gone"):
        out[name].sort(key=lambda e: (e["target"], e["id"]))
    return out


def _previous(reports_dir: Path) -> dict | None:
    """The report `latest/` holds before this one replaces it (None if none or unreadable)."""
    try:
        return json.loads((reports_dir / "latest" / "report.json").read_text())
    except (OSError, ValueError):
        return None


# ---------------------------------------------------------------- plots


def _plot_png(draw, size=(7, 4)) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=size, dpi=100)
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


def _ends(pair: dict) -> list[str]:
    """The two hosts of a matrix entry (`hosts`; a report of schema 3 without it named
    them in its key, `a~b`)."""
    return pair.get("hosts") or pair["pair"].split("~")


def plot_fleet(table: dict | None) -> bytes | None:
    """The fleet's heatmap: host x host, each tested pair's figure over the fleet's median
    (its share of its link limit when every limit is known), red below the tolerance;
    a pair not tested is blank, one not measured is marked with an x. A pair tested
    both ways fills its two cells apart: the row is the client, the column the server."""
    if not table or not (table.get("pairs") or table.get("not_measured")):
        return None
    hosts = sorted(
        set(table.get("hosts") or {})
        | {h for p in table.get("not_measured") or [] for h in _ends(p)}
    )
    index = {host: i for i, host in enumerate(hosts)}
    share = table.get("median_share_of_limit")

    def ratio(pair):
        if share and pair.get("limit_gbps"):
            return pair["gbps"] / pair["limit_gbps"] / share
        return pair["gbps"] / table["median_gbps"] if table.get("median_gbps") else None

    def draw(ax):
        import numpy

        grid = numpy.full((len(hosts), len(hosts)), numpy.nan)
        for pair in table.get("pairs") or []:
            figure = numpy.nan if ratio(pair) is None else ratio(pair)
            if "->" in pair["pair"]:  # tested both ways: row the client, column the server
                grid[index[pair["client"]], index[pair["server"]]] = figure
            else:
                a, b = (index[h] for h in pair["hosts"])
                grid[a, b] = grid[b, a] = figure
        tolerance = float(table.get("tolerance") or 0.8)
        image = ax.imshow(grid, cmap="RdYlGn", vmin=tolerance - 0.3, vmax=1.1)
        for pair in table.get("not_measured") or []:
            a, b = (index[h] for h in _ends(pair))
            ax.plot([a, b], [b, a], "kx", markersize=4)
        ax.figure.colorbar(image, ax=ax, label="pair / fleet median")
        if len(hosts) <= 40:  # beyond, names would overlap: report.json has them
            ax.set_xticks(range(len(hosts)), hosts, rotation=90, fontsize=7)
            ax.set_yticks(range(len(hosts)), hosts, fontsize=7)
        else:
            ax.set_xlabel("host, by name (report.json names each pair)")
        if any("->" in p["pair"] for p in table.get("pairs") or []):
            ax.set_ylabel("client (pairs tested both ways: one cell per way)")
            ax.set_xlabel("server")
        ax.set_title(f"Fleet pairs ({len(table.get('pairs') or [])} measured)")

    return _plot_png(draw, size=(7, 6))


# ---------------------------------------------------------------- writing


def _environment():
    import jinja2

    templates = Path(__file__).resolve().parents[3] / "templates" / "report"
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)),
        autoescape=jinja2.select_autoescape(["html.j2"]),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["md_cell"] = md_cell
    return env


def md_cell(value) -> str:
    """A value that cannot break a Markdown table row (pipes escaped, one line)."""
    return " ".join(str(value).split()).replace("|", "\\|")


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
        ("fleet", plot_fleet(report["performance"].get("fleet"))),
    ):
        if png:
            (out / f"{name}.png").write_bytes(png)
            plots[name] = base64.b64encode(png).decode("ascii")

    report = {**report, "diff": diff_reports(_previous(reports_dir), report)}
    (out / "report.json").write_text(json.dumps(report, indent=2, sort_keys=False) + "\n")
    env = _environment()
    context = {
        "report": report,
        "plots": plots,
        "problems": problems(report["checks"]),
        "table": reading_order(report["checks"]),
    }
    (out / "report.md").write_text(env.get_template("report.md.j2").render(**context))
    (out / "report.html").write_text(env.get_template("report.html.j2").render(**context))
    (out / "report.junit.xml").write_text(junit_xml(report))
    (out / "cxfab.prom").write_text(prometheus_text(report))

    latest = reports_dir / "latest"
    if latest.is_symlink() or latest.is_file():
        latest.unlink()
    elif latest.is_dir():
        shutil.rmtree(latest)
    shutil.copytree(out, latest)
    return out


# "dataplane" is also part of "hosts"; its own tag runs the probe through the pair alone.
# `health` (link, cable and card health) is part of `hosts`, or alone with verify_health.
# `cabling` (the LLDP neighbour of each cabled port) is part of `hosts`; its own tag
# reads only the host facts and judges only the cabling (after a re-cabling: seconds,
# not the minute of the whole host section).
VERIFY_SECTIONS = ("switches", "hosts", "cabling", "health", "dataplane", "qos", "perf")


def sections_run(run_tags, skip_tags) -> list[str]:
    """The verify sections a run covers, from `--tags` / `--skip-tags` (tag verify_<section>).

    The dataplane probe and the link, cable and card health are tasks of the hosts
    plays: `--tags verify_hosts` runs them too, so their sections are covered (and
    their checks expected) unless verify_dataplane or verify_health is skipped by name."""
    run, skip = set(run_tags or ["all"]), set(skip_tags or [])
    if "verify_hosts" in run:
        run |= {"verify_dataplane", "verify_health"}
    found = [
        section
        for section in VERIFY_SECTIONS
        if ("all" in run or f"verify_{section}" in run) and f"verify_{section}" not in skip
    ]
    # The host section's checks hold the cabling ones: `cabling` names a run of those
    # alone. (Skipping verify_cabling in a host run skips the facts read: every host
    # check then fails as not gathered, never passes unread.)
    return [s for s in found if not (s == "cabling" and "hosts" in found)]
