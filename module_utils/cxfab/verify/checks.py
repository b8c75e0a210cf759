"""Verification checks: fabric intent + what was read back -> checks in the report's shape.

Pure functions, no I/O. `playbooks/verify.yml` gathers the observations (host
facts, read-only module runs, switch health, QoS and workload measurements) and
`cxfab_verify_checks` turns them into checks here:

    {id, target, category, status: pass|warn|fail|skip|waived, expected, observed, message}

Nothing that was not observed ever passes, and verify cannot shrink (bounds.py): a
check the intent expects that the run did not produce fails "not measured: <why>";
`skip` is only "not applicable by intent"; the inventory's `verify_waive` turns a
failure or warning into `waived`.
"""

from __future__ import annotations

from ..common.checks import Checks, merge
from ..structured.packed import Unpacked
from .bounds import (  # noqa: F401  (WaiverError re-exported for the module)
    WaiverError,
    apply_waivers,
    bound_skips,
    expected_checks,
    missing_checks,
    validate_waivers,
)
from .fleet import plan_checks
from .host import cabling_section_checks, host_checks
from .nic_health import health_checks
from .perf import perf_checks
from .pfc import roce_load
from .qos import qos_checks
from .readings import absent


def switch_checks(results: dict) -> list[dict]:
    """Health checks returned per switch (already in the report's shape), or the error."""
    found = []
    for switch, result in sorted((results or {}).items()):
        if absent(result):
            continue
        checks = result.get("checks") or []
        if not checks:
            out = Checks(switch)
            out.fail("switch.health", "health checks ran", "not run", str(result.get("msg", "")))
            found += out
        keys = ("id", "target", "category", "status", "expected", "observed", "message")
        found += [{k: check.get(k, "") for k in keys} for check in checks]
    return found


def _dataplane(structured: dict, name: str, observed) -> list[dict]:
    # Imported here: dataplane.py builds its checks with this module's Checks.
    from .dataplane import dataplane_checks, targets

    return dataplane_checks(name, targets(structured, name), observed)


def all_checks(
    fabric,
    host_data,
    switch_results,
    qos_measurements,
    workload_results,
    sections,
    workload_error="",
    health=None,
    supported_cables=None,
    max_temp_c=None,
    switches=None,
    waive=None,
    fleet=None,
) -> dict:
    """Every check of a verify run plus the report series; sections not run add nothing.

    `switches`: the switches of the run (each must return its health); `waive`: the
    inventory's verify_waive (validated here, WaiverError when malformed); `fleet`: the
    generated plan and its results (fleet.plan_checks), judged with `perf`."""
    waivers = validate_waivers(waive)
    hosts, workloads = fabric.get("hosts") or {}, fabric.get("workloads") or {}
    # As validate.yml publishes it (one JSON text per device) or already decoded.
    structured = Unpacked(fabric.get("structured") or {})
    host_data = host_data or {}
    facts = {n: ((d or {}).get("facts") or {}).get("facts") or {} for n, d in host_data.items()}
    checks, bandwidth, qos_series, matrix = [], [], [], None
    if "switches" in sections:
        checks += switch_checks(switch_results)
    if {"hosts", "cabling", "dataplane"} & set(sections):
        for name in sorted(hosts):
            if "hosts" in sections:
                checks += host_checks(name, structured[name], host_data.get(name))
            elif "cabling" in sections:
                checks += cabling_section_checks(name, structured[name], host_data.get(name))
            if "dataplane" in sections:
                # A probe the run should have sent and did not is "not measured", never
                # an absent check (dataplane_checks).
                checks += _dataplane(structured, name, (host_data.get(name) or {}).get("dataplane"))
    # Link, cable and card health: with the host section (sections_run adds it) or alone.
    if "health" in sections and health is not None:
        # The RoCE load this run put on each host (none when the workloads did not run).
        load = (
            roce_load(structured, workloads, workload_results, facts) if "perf" in sections else {}
        )
        checks += health_checks(
            {n: structured[n] for n in hosts}, health, supported_cables, max_temp_c, load
        )
    if "qos" in sections:
        tolerance = float((workloads.get("thresholds") or {}).get("qos_tolerance", 0.1))
        found, qos_series = qos_checks(qos_measurements, tolerance)
        checks += found
    if "perf" in sections:
        found, bandwidth = perf_checks(workloads, hosts, workload_results, facts, workload_error)
        checks += found
        found, matrix = plan_checks(workloads, hosts, facts, fleet)
        checks += found
    checks = bound_skips(merge(checks))
    expected = expected_checks(
        structured, hosts, workloads, switches, sections, health_ran=health is not None
    )
    checks += missing_checks(checks, expected)
    checks = apply_waivers(checks, waivers)
    return {"checks": checks, "bandwidth": bandwidth, "qos": qos_series, "fleet": matrix}
