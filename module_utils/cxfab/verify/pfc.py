"""Lossless RoCE under load: did the RoCE priority's counters move while the workloads ran?

`pfc.<netdev>.counters` compares the `ethtool -S` snapshots of the start and the end of
verify. mlx5 counts per priority (kernel mlx5 counters.rst): the traffic that left and
arrived in it (`tx_prio<P>_packets`, `rx_prio<P>_packets`) and the PFC pause frames
(`rx_prio<P>_pause`, `tx_prio<P>_pause`). RoCE traffic that reaches the lossless
priority moves the first pair; pauses move only when a receiver was congested, so
they are reported, not required.

- the driver reports no per-priority counter: skip (nothing to compare);
- no start snapshot of them: skip, "not compared" (never a pass);
- no RoCE workload ran on this host during verify: skip with the growth seen;
- load ran and the priority's traffic grew: pass; did not grow: fail, or warn when
  the host's RDMA devices are all soft-RoCE (rxe marks nothing itself) or the driver
  counts only pauses.
"""

from __future__ import annotations

from ..common.checks import check

RDMA_TOOLS = ("ib_write_bw", "pingpong", "qperf", "rcat")


def roce_load(structured: dict, workloads: dict, results: list, host_facts: dict) -> dict:
    """host -> {what, software} for every host that ran RDMA workloads on a RoCE VLAN.

    A run counts when it read a figure (bits_per_second); `software` says whether every
    RDMA device the host facts list is a software one (soft-RoCE).
    """
    loaded: dict[str, dict] = {}
    for pair in (workloads or {}).get("pairs") or []:
        lossless = (structured.get(pair["client"]) or {}).get("lossless")
        if not lossless or pair.get("vlan") not in lossless["roce"]["vlans"]:
            continue
        ran = sorted(
            {
                r["tool"]
                for r in results or []
                if r.get("pair") == pair["name"]
                and r.get("transport") == "rdma"
                and r.get("tool") in RDMA_TOOLS
                and r.get("bits_per_second")
            }
        )
        if not ran:
            continue
        for host in (pair["client"], pair["server"]):
            devices = ((host_facts or {}).get(host) or {}).get("rdma") or {}
            software = bool(devices) and all(d.get("software") for d in devices.values())
            loaded[host] = {
                "what": f"{', '.join(ran)} of {pair['name']} on VLAN {pair['vlan']}",
                "software": software,
            }
    return loaded


def _growth(names, now, before) -> tuple[str, int]:
    parts, grown = [], 0
    for name in names:
        delta = now[name] - before[name]
        grown += max(delta, 0)
        parts.append(f"{name} {now[name]} (+{delta})")
    return ", ".join(parts), grown


def pfc_counters_check(target, priority, start, end, load=None) -> dict:
    """The RoCE priority's counters, compared between start and end (see the module doc)."""
    netdev = end["netdev"]
    check_id = f"pfc.{netdev}.counters"
    traffic = [f"rx_prio{priority}_packets", f"tx_prio{priority}_packets"]
    pauses = [f"rx_prio{priority}_pause", f"tx_prio{priority}_pause"]
    expected = f"priority {priority} traffic grows under the RoCE workloads (ethtool -S)"
    if end.get("counters_error"):
        reason = end["counters_error"]
        return check(check_id, target, "fail", expected, "unreadable", reason)
    if end.get("counters_absent"):
        reason = end["counters_absent"]
        return check(check_id, target, "skip", expected, "not measured", reason)
    now = {**((end.get("counters") or {}).get("priority") or {}),
           **((end.get("counters") or {}).get("pause") or {})}  # fmt: skip
    first = (start or {}).get("counters") or {}
    before = {**(first.get("priority") or {}), **(first.get("pause") or {})}
    traffic = [n for n in traffic if n in now]
    pauses = [n for n in pauses if n in now]
    if not traffic and not pauses:
        why = f"the driver of {netdev} reports no per-priority counters"
        return check(check_id, target, "skip", expected, "not measured", why)
    if not all(n in before for n in traffic + pauses):
        why = "not compared: the start snapshot has no such counters (was it taken?)"
        return check(check_id, target, "skip", expected, "not measured", why)
    moved_text, moved = _growth(traffic, now, before)
    pause_text, _ = _growth(pauses, now, before)
    observed = "; ".join(t for t in (moved_text, f"pauses {pause_text}" if pause_text else "") if t)
    if not load:
        why = "no RoCE workload ran on this host during verify (verify_perf): movement not judged"
        return check(check_id, target, "skip", expected, observed, why)
    if moved:
        return check(check_id, target, "pass", expected, observed, f"under {load['what']}")
    if not traffic:
        what = load["what"]
        why = f"the driver counts only pauses on priority {priority}: not moved under {what}"
        return check(check_id, target, "warn", expected, observed, why)
    if load.get("software"):
        why = (
            f"not moved under {load['what']}: soft-RoCE (rxe) traffic takes the priority only "
            "from the VLAN's egress map, and this port did not count it"
        )
        return check(check_id, target, "warn", expected, observed, why)
    why = (
        f"not moved under {load['what']}: the RoCE traffic did not reach priority {priority} "
        "(check the workloads' ToS, DSCP trust and the VLAN's egress map)"
    )
    return check(check_id, target, "fail", expected, observed, why)
