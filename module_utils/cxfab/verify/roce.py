"""Lossless RoCE checks from the host facts: a GID of the wanted type on every RoCE VLAN
interface (what the workloads pass to perftest's -x), and the locked-memory limit.

    roce.gid.<vlan if>   a `gid_type` GID on the interface (device, index)
    roce.memlock         the `*` memlock limit pam_limits applies, soft and hard

Nothing passes unread: facts without the `roce` readings fail with "not read".
"""

from __future__ import annotations

from ..common.checks import Checks
from ..host.net.roce import UNLIMITED, pick_gid


def _memlock_wanted(memlock_kb: int) -> str:
    return UNLIMITED if not memlock_kb else str(int(memlock_kb))


def roce_checks(name: str, sc: dict, facts: dict) -> list[dict]:
    plan = sc.get("lossless")
    out = Checks(name)
    if not plan:
        return out  # lossless_checks reports lossless.host as skipped
    roce = facts.get("roce")
    wanted_type = plan["roce"]["gid_type"]
    vlans = set(plan["roce"]["vlans"])
    netdevs = [v["name"] for v in sc["network"]["vlans"] if v["id"] in vlans]
    memlock = _memlock_wanted(plan["memlock_kb"])
    memlock_expected = f"memlock {memlock} (soft and hard) for every user (*)"
    if not isinstance(roce, dict):
        for netdev in netdevs:
            out.fail(f"roce.gid.{netdev}", f"a {wanted_type} GID on {netdev}", "not read")
        out.fail("roce.memlock", memlock_expected, "not read")
        return out
    for netdev in netdevs:
        expected = f"a {wanted_type} GID on {netdev}"
        entries = (roce.get("gids") or {}).get(netdev)
        if entries is None:
            out.fail(f"roce.gid.{netdev}", expected, "not read")
            continue
        chosen = pick_gid(entries, wanted_type)
        if chosen:
            observed = f"{chosen['device']} port {chosen['port']} index {chosen['index']}"
            out.judge(f"roce.gid.{netdev}", True, expected, f"{observed} ({chosen['gid']})")
            continue
        others = ", ".join(sorted({e["type"] for e in entries}))
        observed = f"only {others} GIDs" if entries else f"no GID on {netdev}"
        why = (
            f"no {wanted_type} entry in the GID table for {netdev}: the RoCE workloads "
            "cannot mark their traffic for the lossless priority (does the interface "
            "carry its address, is the RDMA device on its parent?)"
        )
        out.fail(f"roce.gid.{netdev}", expected, observed, why)
    _memlock(out, roce.get("memlock"), memlock, memlock_expected)
    return out


def _memlock(out: Checks, found, wanted: str, expected: str) -> None:
    if not isinstance(found, dict):
        out.fail("roce.memlock", expected, "not read")
        return
    parts, wrong = [], []
    for kind in ("soft", "hard"):
        entry = found.get(kind)
        if not entry:
            parts.append(f"{kind} not set")
            wrong.append(kind)
            continue
        parts.append(f"{kind} {entry['value']} ({entry['file']})")
        if entry["value"] != wanted:
            wrong.append(kind)
    observed = ", ".join(parts)
    if found.get("errors"):
        observed += "; unreadable lines: " + ", ".join(found["errors"])
    message = ""
    if wrong:
        message = (
            f"{' and '.join(wrong)} memlock differ from cxfab_roce.memlock_kb: RDMA users may "
            "fail to register memory (a later limits.d file overrides cxfab's, or it is missing)"
        )
    out.judge("roce.memlock", not wrong, expected, observed, message)
