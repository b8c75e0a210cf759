"""The one shape of a verification check, and the one table of report categories.

Every check, whoever makes it (host, switch, workload, NIC health), is built here:

    {id, target, category, status: pass|warn|fail|skip|waived, expected, observed, message}

`skip` is only "not applicable by intent"; a check intent expects that could not be
measured fails ("not measured: <why>") unless the inventory waives it (`waived`).

and its category follows from the first dotted part of its id (CATEGORY_OF_PREFIX),
so a new check id picks its category up in this one place.
"""

from __future__ import annotations

STATUSES = ("pass", "warn", "fail", "skip", "waived")
SUMMARY_KEYS = {
    "pass": "passed",
    "warn": "warned",
    "fail": "failed",
    "skip": "skipped",
    "waived": "waived",
}
NOT_MEASURED = "not measured"

# Report categories, in the order the summary lists them. The first nine are always
# listed (a category without checks shows that nothing of it was verified).
CATEGORIES = (
    "switch",
    "firmware",
    "link/cable",
    "PCIe",
    "QoS",
    "IRQ",
    "RDMA",
    "performance",
    "lossless",
    "network",
    "other",
)
ALWAYS_LISTED = CATEGORIES[:9]
# First dotted component of a check id -> report category.
CATEGORY_OF_PREFIX = {
    # switch pair health (cxfab_onyx_health)
    "switch": "switch",
    "mlag": "switch",
    "mlag_vip": "switch",
    "mpo": "switch",
    "magp": "switch",
    "vrrp": "switch",
    "config": "switch",
    "vlan": "switch",
    "ipl": "switch",
    # adapter firmware and its configuration (mlxconfig)
    "firmware": "firmware",
    "link_type": "firmware",
    "nvconfig": "firmware",
    "activation": "firmware",
    # ports and cables
    "link": "link/cable",
    "cable": "link/cable",
    "flap": "link/cable",
    "counters": "link/cable",
    "health": "link/cable",
    # the card on its bus
    "pcie": "PCIe",
    "temp": "PCIe",
    "gpudirect": "PCIe",
    "sriov": "PCIe",
    "qos": "QoS",
    "irq": "IRQ",
    "rdma": "RDMA",
    # InfiniBand ports (ibstat): their link, like the Ethernet ports'
    "ib": "link/cable",
    "perf": "performance",
    # lossless RoCE (PFC, ECN, trust)
    "lossless": "lossless",
    "pfc": "lossless",
    "ecn": "lossless",
    "dcqcn": "lossless",
    "trust": "lossless",
    "roce": "lossless",
    # host network
    "network": "network",
    "mtu": "network",
    "bond": "network",
    "host": "network",
    "dataplane": "network",
    "ipoib": "network",
}
CHECK_KEYS = ("id", "target", "category", "status", "expected", "observed", "message")
_STATUS_RANK = {"pass": 0, "waived": 1, "skip": 2, "warn": 3, "fail": 4}


def category_of(check_id: str) -> str:
    """Report category of a check id (`link.ens4.diag` -> `link/cable`); `other` if unknown."""
    return CATEGORY_OF_PREFIX.get(str(check_id).split(".", 1)[0], "other")


def check(check_id, target, status, expected, observed, message="", **extra) -> dict:
    """One check. A pass says "as intended" and a fail or warn "expected ..., observed ..."
    unless `message` says more; `extra` keys (e.g. a switch check's `scope`) ride along."""
    if status not in STATUSES:
        raise ValueError(f"check {check_id}: status {status!r} is not one of {STATUSES}")
    if not message:
        message = "as intended" if status == "pass" else ""
        if status in ("fail", "warn"):
            message = f"expected {expected}, observed {observed}"
    return {
        "id": check_id,
        "target": target,
        "category": category_of(check_id),
        "status": status,
        "expected": expected,
        "observed": observed,
        "message": message,
        **extra,
    }


def judged(check_id, target, ok, expected, observed, message="", **extra) -> dict:
    """A check that passes when `ok` and fails otherwise (see check())."""
    return check(check_id, target, "pass" if ok else "fail", expected, observed, message, **extra)


def one_master(vlan, vrid, pair: str, states: dict[str, str], unread: list[str]) -> dict:
    """`vrrp.<vlan>.<vrid>.master` of a pair, whatever the OS: exactly one peer reads
    Master and none could not be read (a partner not read is not "no master there").
    states: switch -> its state as read (or why it was not)."""
    masters = [switch for switch, state in states.items() if state == "Master"]
    return judged(
        f"vrrp.{vlan}.{vrid}.master",
        pair,
        len(masters) == 1 and not unread,
        "exactly one Master",
        ", ".join(f"{switch}: {state}" for switch, state in states.items()),
        scope="pair",
    )


class Checks(list):
    """Checks of one target, in the order they are made."""

    def __init__(self, target: str):
        super().__init__()
        self.target = target

    def judge(self, check_id, ok, expected, observed, message=""):
        """Pass when `ok`; a failure's message defaults to expected vs observed."""
        self.append(judged(check_id, self.target, ok, expected, observed, message))

    def fail(self, check_id, expected, observed, message=""):
        self.judge(check_id, False, expected, observed, message)

    def warn(self, check_id, expected, observed, message):
        """Read, but not enough to judge either way: never a pass."""
        self.append(check(check_id, self.target, "warn", expected, observed, message))

    def skip(self, check_id, expected, reason):
        """Not applicable by intent: the reason is the message, never a pass."""
        self.append(check(check_id, self.target, "skip", expected, NOT_MEASURED, reason))

    def unmeasured(self, check_id, expected, why):
        """Intent expects it and it could not be measured: a failure."""
        self.append(unmeasured(check_id, self.target, expected, why))


def unmeasured(check_id, target, expected, why, **extra) -> dict:
    """A check intent expects that was not measured: fail, "not measured: <why>"."""
    return check(
        check_id, target, "fail", expected, NOT_MEASURED, f"{NOT_MEASURED}: {why}", **extra
    )


def merge(checks: list[dict]) -> list[dict]:
    """One check per (id, target), keeping the worst status (fail > warn > skip > waived > pass)."""
    chosen: dict[tuple[str, str], dict] = {}
    for one in checks:
        key = (str(one["id"]), str(one["target"]))
        current = chosen.get(key)
        if current is None or _STATUS_RANK[one["status"]] > _STATUS_RANK[current["status"]]:
            chosen[key] = one
    return list(chosen.values())
