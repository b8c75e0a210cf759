"""The report for machines: JUnit XML for CI systems, a Prometheus textfile for monitoring.

report.junit.xml: one <testsuite> "cxfab verify", one <testcase> per check (classname
= target, name = id). `fail` and `warn` are <failure> (type fail / warn: a warning
fails the run as a failure does); `skip` and `waived` are <skipped> with their reason.

cxfab.prom (node_exporter's textfile collector format; rates in bytes per second, the
base unit Prometheus wants, from the report's bits and Mb/s):
    cxfab_check_status{id, target, category, status} 1      one series per check
                                                            (category from the id's prefix)
    cxfab_checks{status} <count>                            the summary
    cxfab_bandwidth_bytes_per_second{transport, size_bytes}  the workloads' figures
    cxfab_qos_throughput_bytes_per_second{target, vlan}      measured per VLAN
    cxfab_qos_limit_bytes_per_second{target, vlan}           its limit (limited VLANs)
    cxfab_report_generated_timestamp_seconds                when the report was built
"""

from __future__ import annotations

from datetime import datetime
from xml.etree import ElementTree as ET

from ..common.checks import STATUSES, SUMMARY_KEYS, category_of

_FAILURE, _SKIPPED = ("fail", "warn"), ("skip", "waived")


def junit_xml(report: dict) -> str:
    """The checks as a JUnit report (one testcase per check)."""
    checks = report["checks"]
    suites = ET.Element("testsuites", name="cxfab verify")
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="cxfab verify",
        tests=str(len(checks)),
        failures=str(sum(c["status"] in _FAILURE for c in checks)),
        errors="0",
        skipped=str(sum(c["status"] in _SKIPPED for c in checks)),
        timestamp=str((report.get("meta") or {}).get("generated", "")),
    )
    for one in checks:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=str(one["target"]),
            name=str(one["id"]),
        )
        details = f"expected: {one['expected']}\nobserved: {one['observed']}"
        if one["status"] in _FAILURE:
            message = f"{one['status']}: observed {one['observed']}: {one['message']}"
            failure = ET.SubElement(case, "failure", message=message, type=one["status"])
            failure.text = details
        elif one["status"] in _SKIPPED:
            ET.SubElement(case, "skipped", message=str(one["message"]))
        ET.SubElement(case, "system-out").text = f"category: {one['category']}\n{details}"
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _label(value) -> str:
    """A label value in the exposition format: backslash, quote and newline escaped."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(**labels) -> str:
    return "{" + ",".join(f'{k}="{_label(v)}"' for k, v in labels.items()) + "}"


def _vlan_rate(entry: dict, mbps) -> tuple[str, float]:
    """The labels of a QoS measurement's VLAN and a rate of it (Mb/s) in bytes per second."""
    return _labels(target=entry["target"], vlan=entry["vlan"]), float(mbps) * 1e6 / 8


def _metric(lines: list[str], name: str, help_text: str, samples: list[tuple[str, float]]):
    if not samples:
        return
    lines += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge"]
    lines += [f"{name}{labels} {float(value):.15g}" for labels, value in samples]


def prometheus_text(report: dict) -> str:
    """The report as a Prometheus textfile: a status per check and the measured values."""
    checks, lines = report["checks"], []
    _metric(
        lines,
        "cxfab_check_status",
        "1 for each verify check, labelled with its status (pass, warn, fail, skip, waived).",
        [
            (
                _labels(
                    id=c["id"],
                    target=c["target"],
                    category=category_of(c["id"]),
                    status=c["status"],
                ),
                1,
            )
            for c in checks
        ],
    )
    summary = report["summary"]
    _metric(
        lines,
        "cxfab_checks",
        "Number of verify checks per status.",
        [(_labels(status=s), summary[SUMMARY_KEYS[s]]) for s in STATUSES],
    )
    performance = report.get("performance") or {}
    _metric(
        lines,
        "cxfab_bandwidth_bytes_per_second",
        "Bandwidth a workload measured, per transport and message size.",
        [
            (
                _labels(transport=p["transport"], size_bytes=p["size_bytes"]),
                float(p["bits_per_second"]) / 8,
            )
            for p in performance.get("bandwidth") or []
        ],
    )
    qos = performance.get("qos") or []
    _metric(
        lines,
        "cxfab_qos_throughput_bytes_per_second",
        "Throughput measured per VLAN by the QoS measurement.",
        [_vlan_rate(p, p["measured_mbps"]) for p in qos],
    )
    _metric(
        lines,
        "cxfab_qos_limit_bytes_per_second",
        "The rate limit of a limited VLAN, as the QoS measurement shaped it.",
        [_vlan_rate(p, p["limit_mbps"]) for p in qos if p.get("limit_mbps")],
    )
    generated = (report.get("meta") or {}).get("generated")
    try:
        stamp = datetime.fromisoformat(str(generated)).timestamp()
    except ValueError:
        stamp = None
    if stamp is not None:
        _metric(
            lines,
            "cxfab_report_generated_timestamp_seconds",
            "When the verify report was built (Unix time).",
            [("", stamp)],
        )
    return "\n".join(lines) + "\n"
