"""Per-VLAN QoS measurement: parse iperf3 JSON and judge each VLAN against its limit."""

from __future__ import annotations

import json


def iperf3_bits_per_second(output: str) -> float:
    """Receiver-side throughput of an `iperf3 -J` client run (sum over streams)."""
    data = json.loads(output)
    if data.get("error"):
        raise ValueError(f"iperf3: {data['error']}")
    end = data.get("end") or {}
    for key in ("sum_received", "sum"):
        value = (end.get(key) or {}).get("bits_per_second")
        if value is not None:
            return float(value)
    raise ValueError("iperf3 output has no end.sum_received.bits_per_second")


def judge(results: list[dict], tolerance: float) -> list[dict]:
    """Mark each VLAN passed/failed.

    `results`: `{vlan, limit_mbps (None = unlimited), measured_mbps}`. A limited
    VLAN passes within `tolerance` of its limit; an unlimited one passes when it
    is above every limit measured in the same run.
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
            item["expected"] = f"{limit} Mb/s +/- {tolerance:.0%}"
        else:
            item["ratio"] = round(measured / highest, 3) if highest else None
            item["passed"] = measured > highest * (1 + tolerance)
            item["expected"] = f"> {highest * (1 + tolerance):.0f} Mb/s (above every limit)"
        verdicts.append(item)
    return verdicts
