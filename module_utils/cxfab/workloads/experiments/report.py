"""reports/experiments/<ts>/: report.json, report.md and report.html (inline SVG plots)."""

from __future__ import annotations

import html
import json
from pathlib import Path

from . import tables, tables_more
from .tables import SOFT_ROCE_NOTE

BUILDERS = {
    "pingpong_matrix": tables.pingpong_table,
    "reference_tools": tables.reference_table,
    "numa": tables.numa_table,
    "rcat": tables_more.rcat_table,
    "latency": tables_more.latency_table,
    "smc": tables_more.smc_table,
    "rsocket": tables_more.rsocket_table,
}


def build_tables(records: list[dict]) -> list[dict]:
    """One table per experiment present in the records, in the plan's order."""
    present = []
    for rec in records:
        if rec.get("experiment") in BUILDERS and rec["experiment"] not in present:
            present.append(rec["experiment"])
    return [BUILDERS[e](records) for e in present]


def cell(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _columns(rows: list[dict]) -> list[str]:
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    return columns


def build(records: list[dict], meta: dict) -> dict:
    return {
        "meta": meta,
        "soft_roce_note": SOFT_ROCE_NOTE,
        "tables": build_tables(records),
        "records": records,
    }


def pinning(meta: dict) -> str:
    """Where the runs were pinned: each host's NIC-local cores (and all of its online ones)."""
    cores = meta.get("cores") or {}
    sides = [
        f"{side} {meta.get(side, '?')}: NIC-local {c.get('local') or 'unknown'} "
        f"of {c.get('online') or '?'}"
        for side, c in ((side, cores.get(side) or {}) for side in ("server", "client"))
    ]
    return (
        "Cores: "
        + "; ".join(sides)
        + " (runs pinned to the NIC-local ones, numa's far runs to the others)."
    )


def markdown(report: dict) -> str:
    meta = report["meta"]
    lines = [
        f"# Seed experiments: {meta.get('pair', '?')}",
        "",
        f"Run {meta.get('started', '?')}; hosts {meta.get('server', '?')} (server) and "
        f"{meta.get('client', '?')} (client). Seed figures are the published ones (their "
        "hardware); only the ratios carry across machines.",
        "",
        pinning(meta),
        "",
        f"> {report['soft_roce_note']}",
        "",
    ]
    for table in report["tables"]:
        lines += [f"## {table['title']}", ""]
        if table.get("note"):
            lines += [f"> {table['note']}", ""]
        columns = _columns(table["rows"])
        if columns:
            lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
            lines += [
                "| " + " | ".join(cell(r.get(c)) for c in columns) + " |" for r in table["rows"]
            ]
        lines += [
            "",
            "| ratio | ours | seed | meaningful on soft-RoCE | why |",
            "|---|---:|---:|---|---|",
        ]
        lines += [
            f"| {r['name']} | {cell(r['ours'])} | {cell(r['seed'])} | "
            f"{cell(r['soft_roce_meaningful'])} | {r['why']} |"
            for r in table["ratios"]
        ]
        if table["errors"]:
            lines += ["", "Runs without a figure:", ""] + [f"- {e}" for e in table["errors"]]
        lines.append("")
    return "\n".join(lines)


def svg_ratios(table: dict, width: int = 640) -> str:
    """Horizontal bars: our ratio and the seed's, per ratio of the table."""
    items = [r for r in table["ratios"] if r["ours"] is not None or r["seed"] is not None]
    if not items:
        return ""
    top = max(max(r["ours"] or 0, r["seed"] or 0) for r in items) or 1.0
    bar, gap, label_w = 12, 10, 300
    height = len(items) * (2 * bar + gap) + 20
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{html.escape(table["title"])}">'
    ]
    for i, r in enumerate(items):
        y = 10 + i * (2 * bar + gap)
        parts.append(
            f'<text x="0" y="{y + bar}" font-size="11">{html.escape(r["name"][:48])}</text>'
        )
        for j, (key, color) in enumerate((("ours", "#1f77b4"), ("seed", "#bbbbbb"))):
            value = r[key]
            if value is None:
                continue
            w = max(1, int((width - label_w - 60) * value / top))
            parts.append(
                f'<rect x="{label_w}" y="{y + j * bar}" width="{w}" height="{bar - 2}" '
                f'fill="{color}"><title>{key} {value:.3g}</title></rect>'
            )
            parts.append(
                f'<text x="{label_w + w + 4}" y="{y + j * bar + bar - 3}" '
                f'font-size="10">{key} {value:.3g}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def html_page(report: dict) -> str:
    meta = report["meta"]
    out = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>cxfab experiments {html.escape(str(meta.get('pair', '')))}</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}"
        "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;"
        "padding:2px 6px;font-size:12px;text-align:right}th{background:#eee}"
        ".note{background:#fff6dd;padding:8px}</style></head><body>",
        f"<h1>Seed experiments: {html.escape(str(meta.get('pair', '')))}</h1>",
        f"<p>Run {html.escape(str(meta.get('started', '')))}. {html.escape(pinning(meta))}</p>",
        f"<p class='note'>{html.escape(report['soft_roce_note'])}</p>",
    ]
    for table in report["tables"]:
        out.append(f"<h2>{html.escape(table['title'])}</h2>")
        if table.get("note"):
            out.append(f"<p class='note'>{html.escape(table['note'])}</p>")
        columns = _columns(table["rows"])
        if columns:
            out.append(
                "<table><tr>"
                # Spaced headers wrap: a wide table still fits the page.
                + "".join(f"<th>{html.escape(c.replace('_', ' '))}</th>" for c in columns)
                + "</tr>"
            )
            for row in table["rows"]:
                out.append(
                    "<tr>"
                    + "".join(f"<td>{html.escape(cell(row.get(c)))}</td>" for c in columns)
                    + "</tr>"
                )
            out.append("</table>")
        out.append(
            "<table><tr><th>ratio</th><th>ours</th><th>seed</th>"
            "<th>meaningful on soft-RoCE</th><th>why</th></tr>"
        )
        for r in table["ratios"]:
            out.append(
                f"<tr><td>{html.escape(r['name'])}</td><td>{cell(r['ours'])}</td>"
                f"<td>{cell(r['seed'])}</td><td>{cell(r['soft_roce_meaningful'])}</td>"
                f"<td>{html.escape(r['why'])}</td></tr>"
            )
        out.append("</table>")
        out.append(svg_ratios(table))
        if table["errors"]:
            out.append(
                "<ul>" + "".join(f"<li>{html.escape(e)}</li>" for e in table["errors"]) + "</ul>"
            )
    out.append("</body></html>")
    return "\n".join(out)


def write(out_dir: str, records: list[dict], meta: dict) -> dict:
    """Writes the three files; returns the paths and how many runs gave no figure."""
    report = build(records, meta)
    path = Path(out_dir)
    path.mkdir(parents=True, exist_ok=True)
    (path / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    (path / "report.md").write_text(markdown(report))
    (path / "report.html").write_text(html_page(report))
    return {
        "dir": str(path),
        "tables": len(report["tables"]),
        "runs_without_figure": sum(1 for r in records if "error" in r),
    }
