"""Per-VLAN QoS measurement: judge each VLAN against its limit (iperf3 figures are
parsed by cxfab.workloads.iperf3_bps, shared with the workload runs)."""

from __future__ import annotations


def judge(results: list[dict], tolerance: float) -> list[dict]:
    """Mark each VLAN passed/failed.

    `results`: `{vlan, limit_mbps (None = unlimited), measured_mbps}`. A limited
    VLAN passes within `tolerance` of its limit; an unlimited one passes when it
    is above every limit measured in the same run. `low` marks a failure below the
    band (worth measuring again: a starved machine only lowers a reading).
    """
    limits = [r["limit_mbps"] for r in results if r.get("limit_mbps")]
    highest = max(limits) if limits else 0
    verdicts = []
    for result in results:
        measured = result["measured_mbps"]
        limit = result.get("limit_mbps")
        item = dict(result)
        if limit:
            ratio = measured / limit
            item["ratio"] = round(ratio, 3)
            item["passed"] = abs(ratio - 1) <= tolerance
            item["low"] = ratio < 1 - tolerance
            item["expected"] = f"{limit} Mb/s +/- {tolerance:.0%}"
        else:
            item["ratio"] = round(measured / highest, 3) if highest else None
            item["passed"] = measured > highest * (1 + tolerance)
            item["low"] = not item["passed"]
            item["expected"] = f"> {highest * (1 + tolerance):.0f} Mb/s (above every limit)"
        verdicts.append(item)
    return verdicts
