"""Read /proc/net/bonding/<bond> and decide whether a bond's members are back.

Used by host facts (what the bond looks like now) and by the NIC activation
(after a card reset or a reboot the next host waits until this host's members
are up again and, for 802.3ad, in the active aggregator).
"""

from __future__ import annotations

import os
import re
import time


def _int(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def parse_bonding_proc(text):
    """/proc/net/bonding/<bond> -> mode, MII status, active aggregator, members."""
    head, *slaves = re.split(r"^Slave Interface:\s*", text, flags=re.M)

    def field(block, key):
        found = re.search(rf"^{re.escape(key)}:\s*(.*)$", block, re.M)
        return found.group(1).strip() if found else None

    active = re.search(r"Active Aggregator Info:\s*\n\s*Aggregator ID:\s*(\d+)", head)
    members = {}
    for block in slaves:
        name = block.splitlines()[0].strip()
        members[name] = {
            "mii_status": field(block, "MII Status"),
            "speed": field(block, "Speed"),
            "aggregator": _int(field(block, "Aggregator ID")),
        }
    return {
        "mode": field(head, "Bonding Mode"),
        "mii_status": field(head, "MII Status"),
        "active_aggregator": int(active.group(1)) if active else None,
        "members": members,
    }


def wait_skip_reason(bond, existed_before):
    """Why no wait is needed after an activation, or None when the wait applies.

    `bond` is the host's structured bond (name, members, mode) or None;
    `existed_before` says whether /proc/net/bonding/<name> was there before the
    reset: a bond that host_network has not built yet cannot come back.
    """
    if not bond:
        return "the host has no bond in the fabric"
    if not bond.get("members"):
        return f"bond {bond['name']} has no members"
    if not existed_before:
        return (
            f"bond {bond['name']} did not exist before the activation "
            "(host_network builds it later in the run)"
        )
    return None


def member_states(bond, text):
    """(ready, {member: state}) for the intended members of `bond` in the proc text.

    A member is ready when its MII status is up and, in 802.3ad, its aggregator
    is the bond's active aggregator. `text` None (no proc file) means nothing is ready.
    Raises ValueError when the text is not a bonding status (fail closed).
    """
    if text is None:
        return False, {m: f"bond {bond['name']} absent" for m in bond["members"]}
    parsed = parse_bonding_proc(text)
    if parsed["mode"] is None:
        first = " | ".join(text.strip().splitlines()[:3])
        raise ValueError(f"/proc/net/bonding/{bond['name']}: no 'Bonding Mode' line in: {first}")
    lacp = "802.3ad" in parsed["mode"] or bond.get("mode") == "802.3ad"
    active = parsed["active_aggregator"]
    states = {}
    for name in bond["members"]:
        member = parsed["members"].get(name)
        if member is None:
            states[name] = "not enslaved"
            continue
        mii = member["mii_status"] or "unknown"
        state = f"MII {mii}"
        ok = mii == "up"
        if lacp:
            state += f", aggregator {member['aggregator']} (active {active})"
            ok = ok and active is not None and member["aggregator"] == active
        states[name] = state + ("" if ok else " - not ready")
    ready = all(not s.endswith(" - not ready") and s != "not enslaved" for s in states.values())
    return ready, states


def read_bond_status(proc_dir, name):
    """The text of <proc_dir>/<name>, or None when the bond does not exist."""
    try:
        with open(os.path.join(proc_dir, name), encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def wait_for_members(bond, proc_dir, timeout, interval, clock=time.monotonic, sleep=time.sleep):
    """(ready, seconds waited, member states); raises ValueError on an unreadable status."""
    start = clock()
    while True:
        ready, states = member_states(bond, read_bond_status(proc_dir, bond["name"]))
        waited = round(clock() - start, 1)
        if ready or waited >= timeout:
            return ready, waited, states
        sleep(interval)
