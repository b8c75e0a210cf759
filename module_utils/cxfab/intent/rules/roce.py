"""Rules on cxfab_roce: one PFC priority on hosts, switch ports and the VLAN egress maps.

Only a fabric with `lossless: true` is judged: off, nothing of cxfab_roce is
configured, so nothing of it can disagree.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

from . import FabricView, Finding, rule

# ConnectX (mlx5 dscp2prio) and Onyx (`qos trust L3`) both start from DSCP n -> priority n/8.
DSCP_PER_PRIORITY = 8


def _lossless(view: FabricView) -> dict | None:
    """cxfab_roce when lossless is on and its keys are readable (a key with a schema
    error was dropped or left as it was: the schema error already names it)."""
    roce = view.fabric.get("roce")
    if not isinstance(roce, dict) or roce.get("lossless") is not True:
        return None
    ecn = roce.get("ecn")
    readable = (
        all(_is_int(roce.get(key)) for key in ("priority", "dscp"))
        and isinstance(roce.get("vlans"), list)
        and isinstance(ecn, dict)
        and all(_is_int(ecn.get(key)) for key in ("min_kb", "max_kb"))
    )
    return roce if readable else None


def _when_lossless(check: Callable[[FabricView, dict], Iterator[Finding]]) -> Callable:
    """Run `check(view, roce)` only when lossless RoCE is on and readable (see _lossless)."""

    @functools.wraps(check)
    def checked(view: FabricView) -> Iterator[Finding]:
        roce = _lossless(view)
        if roce is not None:
            yield from check(view, roce)

    return checked


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _roce_vlans(roce: dict) -> set[int]:
    return {vlan for vlan in roce["vlans"] if _is_int(vlan)}


@rule("roce-vlans-exist")
@_when_lossless
def roce_vlans_exist(view: FabricView, roce: dict) -> Iterator[Finding]:
    """With lossless RoCE, the RoCE VLANs are present VLANs of cxfab_vlans."""
    if not roce["vlans"]:
        yield ("roce", "vlans"), "lossless: true needs the VLANs that carry RoCE (none listed)"
    for index, vlan_id in enumerate(roce["vlans"]):
        if not _is_int(vlan_id):
            continue  # the schema error names it
        if vlan_id not in view.vlan_by_id and not view.was_dropped("vlan", vlan_id):
            yield ("roce", "vlans", index), f"VLAN {vlan_id} is not a present VLAN of cxfab_vlans"


@rule("roce-dscp-on-priority")
@_when_lossless
def roce_dscp_on_priority(view: FabricView, roce: dict) -> Iterator[Finding]:
    """The RoCE DSCP lands on the PFC priority under the default DSCP map (priority = DSCP / 8)."""
    landed = roce["dscp"] // DSCP_PER_PRIORITY
    if landed != roce["priority"]:
        low = roce["priority"] * DSCP_PER_PRIORITY
        yield (
            ("roce", "dscp"),
            f"DSCP {roce['dscp']} maps to priority {landed} under the default DSCP map of "
            f"ConnectX and Onyx, not the PFC priority {roce['priority']} "
            f"(use a DSCP from {low} to {low + DSCP_PER_PRIORITY - 1})",
        )


@rule("roce-ecn-thresholds")
@_when_lossless
def roce_ecn_thresholds(view: FabricView, roce: dict) -> Iterator[Finding]:
    """The ECN marking starts below the depth where it marks everything."""
    ecn = roce["ecn"]
    if ecn["min_kb"] >= ecn["max_kb"]:
        yield (
            ("roce", "ecn", "min_kb"),
            f"{ecn['min_kb']} KB is not below max_kb {ecn['max_kb']} KB",
        )


@rule("roce-egress-on-pfc-priority")
@_when_lossless
def roce_egress_on_pfc_priority(view: FabricView, roce: dict) -> Iterator[Finding]:
    """Every host RoCE VLAN's egress map writes the PFC priority, and no other VLAN's does."""
    priority, roce_vlans = roce["priority"], _roce_vlans(roce)
    for name, host in sorted(view.hosts.items()):
        qos_by_vlan = {
            entry["vlan"]: (q, entry)
            for q, entry in enumerate(host["qos"])
            if _is_int(entry.get("vlan")) and _is_int(entry.get("user_priority"))
        }
        for v, vlan in enumerate(host["vlans"]):
            if vlan["id"] in roce_vlans and vlan["id"] not in qos_by_vlan:
                yield (
                    ("hosts", name, "vlans", v, "id"),
                    f"VLAN {vlan['id']} carries RoCE (cxfab_roce.vlans) but has no qos entry: "
                    f"its egress map leaves RoCE on priority 0, not the PFC priority {priority}",
                )
        for vlan_id, (q, entry) in sorted(qos_by_vlan.items()):
            path = ("hosts", name, "qos", q, "user_priority")
            if vlan_id in roce_vlans and entry["user_priority"] != priority:
                yield (
                    path,
                    f"VLAN {vlan_id} carries RoCE (cxfab_roce.vlans) but its egress map puts "
                    f"it on priority {entry['user_priority']}, not the PFC priority {priority}",
                )
            elif vlan_id not in roce_vlans and entry["user_priority"] == priority:
                yield (
                    path,
                    f"priority {priority} is the PFC priority (cxfab_roce.priority) but VLAN "
                    f"{vlan_id} does not carry RoCE: its traffic would be paused too; "
                    "use another priority or add the VLAN to cxfab_roce.vlans",
                )


@rule("roce-ipl-pfc")
@_when_lossless
def roce_ipl_pfc(view: FabricView, roce: dict) -> Iterator[Finding]:
    """With lossless RoCE, the IPL of a pair that carries RoCE runs PFC."""
    roce_vlans = _roce_vlans(roce)
    for p, pair in enumerate(view.pairs):
        mlag = pair.get("mlag")
        if not mlag or mlag["ipl"]["pfc"]:
            continue
        carried = {
            vlan
            for _, mpo in view.present_mpos(pair)
            for vlan in [*mpo["allowed_vlans"], mpo.get("access_vlan", 1)]
        }
        if carried & roce_vlans:
            yield (
                ("switch_pairs", p, "mlag", "ipl", "pfc"),
                f"pair {pair['name']} carries RoCE VLAN(s) {sorted(carried & roce_vlans)}: "
                "traffic crossing the IPL must be lossless too (set pfc: true)",
            )
