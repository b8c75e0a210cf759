"""The pair's health after a change, judged the same whatever the switch OS.

Which checks a change must pass depends on the partner (see post_scope); a check
the far end decides too (an MPO comes up when its host's bond answers LACP)
blocks only when the change made it worse.
"""

from __future__ import annotations

import time

from .driver import SwitchDriver

# The checks a peer must pass while its partner waits for its own turn in this run.
CORE_CHECKS = frozenset({"mlag.enabled", "mlag.oper", "mlag.ipl_state", "mlag_vip.nodes"})


def post_scope(
    me: SwitchDriver, partner_pending: bool, partner_has_mlag: bool, partner_ok: bool
) -> str:
    """local: the partner is blank or not usable (repair); core: it waits for its
    turn in this run; pair: everything on both peers."""
    if not partner_ok or (me.structured.get("mlag") and not partner_has_mlag):
        return "local"
    return "core" if partner_pending else "pair"


def _selected(check: dict, own: bool, scope: str) -> bool:
    if check["id"] == "config.saved":
        return False  # judged after the configuration is saved
    if scope == "local":
        return own and check["scope"] == "local"
    if scope == "core":
        return (own and check["scope"] == "local") or check["id"] in CORE_CHECKS
    return own or check["scope"] == "pair"


def health_round(me: SwitchDriver, partner: SwitchDriver, scope: str) -> list[dict]:
    peers = [me] if scope == "local" else [me, partner]
    checks, readings = [], []
    for peer in peers:
        reading = peer.health()
        readings.append(reading)
        checks += [c for c in reading.checks if _selected(c, peer is me, scope)]
    if scope != "local":
        pair_checks = me.pair_checks(readings)
        if scope == "core":
            pair_checks = [c for c in pair_checks if c["id"] == "mlag.system_mac_equal"]
        checks += pair_checks
    return checks


def host_dependent(check: dict) -> bool:
    """Checks the far end decides too: an MPO is up only when its host's bond answers LACP."""
    return check["id"] == "mlag.mpo_status" or check["id"].startswith("mpo.")


def blocking(checks: list[dict], before: dict[tuple[str, str], str] | None) -> list[dict]:
    """The failed checks that block a change.

    A host-dependent check blocks only when this change made it worse: it passed before
    the change (`before`: (target, id) -> status) and fails after. On a first rollout
    the hosts' bonds come after the switches, so their MPOs cannot be up yet; with no
    change made (`before` None) nothing was made worse. verify.yml checks them all.
    """
    return [
        c for c in checks
        if c["status"] == "fail"
        and not (host_dependent(c) and (before or {}).get((c["target"], c["id"])) != "pass")
    ]  # fmt: skip


def waived(checks: list[dict], blocked: list[dict]) -> list[dict]:
    return [
        {**c, "waived": "not up before this change either: an MPO comes up when its host's "
                        "bond answers LACP (verify.yml checks it)"}
        for c in checks if c["status"] == "fail" and c not in blocked
    ]  # fmt: skip


def wait_healthy(
    me: SwitchDriver, partner: SwitchDriver, scope: str, wait: float, interval: float,
    before: dict | None = None,
) -> list[dict]:  # fmt: skip
    deadline = time.monotonic() + max(wait, 0)
    while True:
        checks = health_round(me, partner, scope)
        if not blocking(checks, before) or time.monotonic() >= deadline:
            return checks
        time.sleep(interval)
