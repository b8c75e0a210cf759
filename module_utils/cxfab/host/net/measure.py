"""Per-VLAN QoS measurement: tell a wrong limit from a starved machine.

All VLANs are measured at the same time, round after round (cxfab_qos_measure); the
unlimited VLAN of the same round is the reference for what the path could carry at
that moment. It is offered a fixed load just above every limit
(`reference_offer_mbps`), enough to prove the path's headroom without starving the
shaped VLANs beside it.

Per round, a limited VLAN is
  pass     within the tolerance of its limit;
  high     above the band: the limit does not hold (a starved machine never makes a
           shaper deliver more), evidence at once;
  low      below the band while the unlimited VLAN carried more than this VLAN's limit
           at the same moment (the path had room: the limit is wrong), or with no
           unlimited VLAN to compare with (fail closed);
  starved  below the band while the unlimited VLAN carried no more than this limit
           either: the machine, not the shaper, held it back. Not evidence.
The unlimited VLAN passes above every limit; it is low (evidence) when a limited VLAN
of the same round reached its full limit and still carried more than it (the
"unlimited" traffic is held below a shaper), else starved.

Over the rounds: a reading above the band fails the VLAN at once, even if another
round passed; otherwise a VLAN that passed once passes; otherwise a low reading fails it;
otherwise it is inconclusive (reported as a warning with the readings, never a pass).
(The iperf3 figures are parsed by cxfab.workloads.pair_runs.iperf3_bps.)
"""

from __future__ import annotations

PASS, HIGH, LOW, STARVED = "pass", "high", "low", "starved"
EVIDENCE = (HIGH, LOW)


def reference_offer_mbps(targets: list[dict], tolerance: float) -> float | None:
    """The load offered to an unlimited VLAN: above every limit by twice the tolerance."""
    limits = [t["limit_mbps"] for t in targets if t.get("limit_mbps")]
    return round(max(limits) * (1 + 2 * tolerance), 3) if limits else None


def classify_round(readings: dict, targets: list[dict], tolerance: float) -> dict:
    """{vlan: (status, reason)} for one round of simultaneous readings (Mb/s)."""
    limits = {t["vlan"]: t["limit_mbps"] for t in targets if t.get("limit_mbps")}
    unlimited = [t["vlan"] for t in targets if not t.get("limit_mbps")]
    reference = max((readings[v] for v in unlimited), default=None)
    highest = max(limits.values(), default=None)
    out = {}
    for vlan, limit in limits.items():
        got, ratio = readings[vlan], readings[vlan] / limit
        if abs(ratio - 1) <= tolerance:
            out[vlan] = (PASS, f"{got:g} Mb/s (ratio {ratio:.3f})")
        elif ratio > 1 + tolerance:
            out[vlan] = (HIGH, f"{got:g} Mb/s (ratio {ratio:.3f}): the limit does not hold")
        elif reference is None:
            out[vlan] = (
                LOW,
                f"{got:g} Mb/s (ratio {ratio:.3f}), and no unlimited VLAN was measured with "
                "it to tell a starved path from a wrong limit",
            )
        elif reference > limit * (1 + tolerance):
            out[vlan] = (
                LOW,
                f"{got:g} Mb/s (ratio {ratio:.3f}) while the unlimited VLAN carried "
                f"{reference:g} Mb/s at the same moment: the path had room, the limit is wrong",
            )
        else:
            out[vlan] = (
                STARVED,
                f"{got:g} Mb/s (ratio {ratio:.3f}) while the unlimited VLAN carried only "
                f"{reference:g} Mb/s at the same moment: the machine was starved",
            )
    for vlan in unlimited:
        got = readings[vlan]
        if highest is None:
            out[vlan] = (PASS, f"{got:g} Mb/s (no limited VLAN to compare with)")
            continue
        floor = highest * (1 + tolerance)
        holders = [
            v
            for v, limit in limits.items()
            if abs(readings[v] / limit - 1) <= tolerance and readings[v] > got * (1 + tolerance)
        ]
        if got > floor:
            out[vlan] = (PASS, f"{got:g} Mb/s (above every limit)")
        elif holders:
            out[vlan] = (
                LOW,
                f"{got:g} Mb/s while VLAN {holders[0]}, shaped to {limits[holders[0]]:g} Mb/s, "
                f"carried {readings[holders[0]]:g} at the same moment: this VLAN is held back",
            )
        else:
            out[vlan] = (
                STARVED,
                f"{got:g} Mb/s, below {floor:g}, with no shaped VLAN doing better at the same "
                "moment: the machine was starved",
            )
    return out


def settled(rounds: list[dict], targets: list[dict], tolerance: float) -> bool:
    """No further round can change a verdict: each VLAN passed once or ran too fast."""
    classified = [classify_round(r, targets, tolerance) for r in rounds]
    for target in targets:
        statuses = [c[target["vlan"]][0] for c in classified]
        if PASS not in statuses and HIGH not in statuses:
            return False
    return True


def verdicts(rounds: list[dict], targets: list[dict], tolerance: float) -> list[dict]:
    """Per VLAN over all rounds: verdict (pass, fail, inconclusive), the reading it rests
    on, every reading, and the reason."""
    classified = [classify_round(r, targets, tolerance) for r in rounds]
    offer = reference_offer_mbps(targets, tolerance)
    results = []
    for target in targets:
        vlan, limit = target["vlan"], target.get("limit_mbps")
        pairs = zip(classified, rounds, strict=True)
        status, reason, reading = _choose([(c[vlan][0], c[vlan][1], r[vlan]) for c, r in pairs])
        verdict = "pass" if status == PASS else "fail" if status in EVIDENCE else "inconclusive"
        item = {
            **target,
            "measured_mbps": reading,
            "readings_mbps": [r[vlan] for r in rounds],
            "reference_mbps": [
                max((r[t["vlan"]] for t in targets if not t.get("limit_mbps")), default=None)
                for r in rounds
            ],
            "verdict": verdict,
            "passed": verdict == "pass",
            "reason": reason,
        }
        if limit:
            item["ratio"] = round(reading / limit, 3)
            item["expected"] = f"{limit:g} Mb/s +/- {tolerance:.0%}"
        else:
            highest = max((t["limit_mbps"] for t in targets if t.get("limit_mbps")), default=0)
            item["ratio"] = round(reading / highest, 3) if highest else None
            item["expected"] = (
                f"> {highest * (1 + tolerance):g} Mb/s (above every limit; offered {offer:g})"
                if highest
                else "no limited VLAN to compare with"
            )
        results.append(item)
    return results


def _choose(per_round: list[tuple[str, str, float]]) -> tuple[str, str, float]:
    """The round a verdict rests on: a reading above the band (the limit did not hold:
    evidence at once, whatever other rounds read), else a pass, else a low reading,
    else the highest starved reading."""
    for wanted in (HIGH, PASS, LOW):
        found = [entry for entry in per_round if entry[0] == wanted]
        if found:
            return max(found, key=lambda entry: entry[2]) if wanted != HIGH else found[0]
    return max(per_round, key=lambda entry: entry[2])
