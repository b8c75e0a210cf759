"""QoS checks: the settings read back, lossless RoCE, and the measured rate per VLAN."""

from __future__ import annotations

from ..common.checks import Checks
from .readings import absent, failed


def qos_readback_checks(name: str, result) -> list[dict]:
    """cxfab_host_qos in check mode: per port, the differences found before any change."""
    out = Checks(name)
    if absent(result):
        return out
    plan = result.get("plan") or {}
    limits = ", ".join(
        f"TC{tc['tc']} {tc['rate_limit_mbps']} Mb/s"
        for tc in plan.get("tcs") or []
        if isinstance(tc, dict) and tc.get("rate_limit_mbps")
    )
    expected = f"prio->TC {plan.get('prio_tc', 'as planned')}, limits {limits or 'none'}"
    if failed(result):
        out.fail("qos.readback", expected, "unreadable", str(result.get("msg", "failed")))
        return out
    for port, info in sorted((result.get("ports") or {}).items()):
        found = info.get("differences_before") or []
        observed = "; ".join(found) or f"as planned (backend {info.get('backend')})"
        out.judge(f"qos.readback.{port}", not found, expected, observed)
    return out


def lossless_checks(name: str, sc: dict, result) -> list[dict]:
    """Trust, PFC and ECN of each lossless port, as cxfab_host_qos (check mode) read them."""
    out = Checks(name)
    plan = sc.get("lossless")
    if not plan:
        out.skip(
            "lossless.host",
            "lossless RoCE (trust dscp, PFC, ECN)",
            "not configured: cxfab_roce.lossless is off or the host carries no RoCE VLAN",
        )
        return out
    pfc_on = [p for p, flag in enumerate(plan["pfc"]) if flag]
    expected = {
        "trust": f"trust {plan['trust']}",
        "pfc": f"PFC on priorities {pfc_on} only",
        "ecn": f"ECN (roce_np, roce_rp) on priorities {plan['ecn_priorities']}",
    }
    if absent(result) or failed(result):
        why = "not read" if absent(result) else str(result.get("msg", "failed"))
        for port in plan["ports"]:
            for kind, text in expected.items():
                out.fail(f"{kind}.{port}", text, "unreadable", why)
        return out
    ports = result.get("ports") or {}
    for port in plan["ports"]:
        info = ports.get(port) or {}
        # What the port held as read, never "observed": in check mode (verify) that is
        # the planned state, and a check on it would pass a removed PFC setting.
        observed = info.get("read") or {}
        trust = observed.get("trust")
        out.judge(f"trust.{port}", trust == plan["trust"], expected["trust"],
                  f"trust {trust}" if trust else "not read")  # fmt: skip
        pfc = observed.get("pfc")
        seen = [p for p, flag in enumerate(pfc) if flag] if isinstance(pfc, list) else None
        out.judge(f"pfc.{port}", pfc == plan["pfc"], expected["pfc"],
                  f"PFC on priorities {seen}" if seen is not None else "not read")  # fmt: skip
        knobs = (info.get("ecn") or {}).get("before")
        if not knobs:
            out.fail(f"ecn.{port}", expected["ecn"], "not read")
            continue
        missing = sorted(k for k, v in knobs.items() if v is None)
        off = sorted(k for k, v in knobs.items() if v == 0)
        observed_ecn = ", ".join(f"{k} {'-' if v is None else v}" for k, v in sorted(knobs.items()))
        if off:
            out.fail(f"ecn.{port}", expected["ecn"], observed_ecn, f"ECN off: {', '.join(off)}")
        elif missing:
            out.warn(
                f"ecn.{port}",
                expected["ecn"],
                observed_ecn,
                f"the driver exposes no ECN knob {', '.join(missing)}: ECN could be "
                "neither set nor read on this port",
            )
        else:
            out.judge(f"ecn.{port}", True, expected["ecn"], observed_ecn)
    return out


def qos_checks(measurements: dict, tolerance: float) -> tuple[list[dict], list[dict]]:
    """Per-VLAN throughput: within `tolerance` of its limit; the unlimited VLAN above all.

    `measurements`: {client host: {results: [{vlan, limit_mbps, measured_mbps,
    configured_limit_mbps?, verdict?, reason?}]} or a failed result}. The measurement's
    own verdict (cxfab_qos_measure: rounds measured at the same moment) is reported as
    it is: an inconclusive one (the machine was starved) is a warning with its reason,
    never a pass. A row without a verdict is judged here on its reading alone.
    Returns (checks, report series).
    """
    found, series = [], []
    for host, result in sorted((measurements or {}).items()):
        out = Checks(host)
        if absent(result):
            continue
        if failed(result):
            out.fail(
                "qos.measure",
                "per-VLAN iperf3 measurement",
                "not measured",
                str(result.get("msg", "measurement failed")),
            )
        rows = result.get("results") or []
        highest = max((float(r["limit_mbps"]) for r in rows if r.get("limit_mbps")), default=0.0)
        for row in rows:
            measured, limit = float(row["measured_mbps"]), row.get("limit_mbps")
            series.append(
                {
                    "target": host,
                    "vlan": row["vlan"],
                    "limit_mbps": limit,
                    "measured_mbps": measured,
                }
            )
            check_id = f"qos.vlan{row['vlan']}.throughput"
            if limit:
                ratio, configured = measured / float(limit), row.get("configured_limit_mbps")
                scaled = configured and float(configured) != float(limit)
                note = f" (configured {configured} Mb/s, shaped at {limit})" if scaled else ""
                expected = f"{float(limit):g} Mb/s +/- {tolerance:.0%}{note}"
                observed = f"{measured:g} Mb/s (ratio {ratio:.3f})"
                ok = abs(ratio - 1) <= tolerance
            elif not highest:
                out.skip(check_id, "above every limited VLAN", "no limited VLAN measured with it")
                continue
            else:
                floor = highest * (1 + tolerance)
                expected = f"> {floor:g} Mb/s (above every limit)"
                observed = f"{measured:g} Mb/s (unlimited)"
                ok = measured > floor
            _qos_verdict(out, check_id, row, ok, expected, observed)
        found += out
    return found, series


def _qos_verdict(out: Checks, check_id, row, ok, expected, observed):
    verdict = row.get("verdict")
    if verdict is None:
        out.judge(check_id, ok, expected, observed)
        return
    readings = row.get("readings_mbps") or []
    if len(readings) > 1:
        observed += f"; readings {', '.join(f'{r:g}' for r in readings)} Mb/s"
    if verdict == "pass" and ok:
        out.judge(check_id, True, expected, observed)
    elif verdict == "inconclusive":
        out.warn(
            check_id,
            expected,
            observed,
            f"inconclusive: {row.get('reason', 'starved')}; the limit was neither "
            "confirmed nor refuted",
        )
    else:
        reason = row.get("reason") or f"expected {expected}, observed {observed}"
        out.judge(check_id, False, expected, observed, reason)
