"""Put links back as a snapshot recorded them: the inverse of a host_network change.

A snapshot is `{ifname: link or None}` in the shape `linkplan` plans on (None: the
link did not exist). The restore is planned by the same `linkplan.plan`, fed with
the snapshot turned into an intent, plus what an intent never asks for: deleting
what the change created, releasing ports that were not in a bond, taking down
what was down, and the addresses of plain ports.
"""

from __future__ import annotations

from .linkplan import BOND_KEYS, managed_interfaces, normalise_map, plan, simulate


def snapshot_names(intent: dict, links: dict) -> list[str]:
    """Every link a change planned from `intent` can alter, existing or to be created.

    The intent's own interfaces, the ports now in its bond (a mode change releases
    them all) and the VLANs now stacked on any of them (an MTU change clamps them).
    """
    names = set(managed_interfaces(intent))
    for name, info in links.items():
        if info.get("master") in names or info.get("link") in names:
            names.add(name)
    return sorted(names)


def take_snapshot(intent: dict, links: dict) -> dict:
    """`{name: link state or None}` for `snapshot_names`; ifindex left out (it is not restored)."""
    return {
        name: ({k: v for k, v in links[name].items() if k != "index"} if name in links else None)
        for name in snapshot_names(intent, links)
    }


def restore_intent(before: dict) -> dict:
    """The snapshot's bond, ports and VLANs as an intent `linkplan.plan` understands."""
    present = {name: info for name, info in before.items() if info is not None}
    intent: dict = {"members": [], "vlans": []}
    for name, info in sorted(present.items()):
        kind = info.get("kind")
        if kind == "bond" and "bond" not in intent:
            params = info.get("bond") or {}
            intent["bond"] = {
                "name": name,
                "members": sorted(n for n, i in present.items() if i.get("master") == name),
                **{key: params.get(key) for key in BOND_KEYS},
                "mtu": info["mtu"],
                "addresses": list(info.get("addresses") or []),
            }
        elif kind == "vlan":
            intent["vlans"].append(
                {
                    "name": name,
                    "id": info["vlan_id"],
                    "link": info["link"],
                    "mtu": info["mtu"],
                    "addresses": list(info.get("addresses") or []),
                    "egress_qos_map": normalise_map(info.get("egress_qos_map")),
                }
            )
        elif kind != "bond":
            intent["members"].append({"name": name, "mtu": info["mtu"]})
    return intent


def restore_plan(before: dict, now: dict) -> list[tuple]:
    """Ordered actions turning the links of `now` named in `before` back into `before`."""
    actions: list[tuple] = []
    created = [name for name, info in before.items() if info is None and name in now]
    # VLANs first: deleting a bond would take its VLANs with it anyway.
    for name in sorted(created, key=lambda n: (now[n].get("kind") != "vlan", n)):
        actions.append(("delete", name, {}))
    state = simulate(now, actions)
    intent = restore_intent(before)
    bond = (intent.get("bond") or {}).get("name")
    for name, info in sorted(before.items()):
        if info is None or name not in state:
            continue
        was, is_now = info.get("master"), state[name].get("master")
        if is_now and is_now != was and was != bond:
            actions.append(("release", name, {"master": is_now}))
    state = simulate(now, actions)
    actions += [a for a in plan(intent, state) if not _stays_down(a, before)]
    state = simulate(now, actions)
    for name, info in sorted(before.items()):
        if info is None or name not in state:
            continue
        have = state[name]
        if info.get("master") and info["master"] != bond and have.get("master") != info["master"]:
            actions.append(("enslave", name, {"master": info["master"], "old": have["master"]}))
        if info.get("kind") not in ("bond", "vlan"):
            # plan() sets port MTUs only beside a bond; a released port needs its own.
            if have.get("mtu") != info["mtu"]:
                actions.append(("set_mtu", name, {"mtu": info["mtu"]}))
            wanted, current = set(info.get("addresses") or []), set(have.get("addresses") or [])
            actions += [("add_address", name, {"address": a}) for a in sorted(wanted - current)]
            actions += [("del_address", name, {"address": a}) for a in sorted(current - wanted)]
    state = simulate(now, actions)
    for name, info in sorted(before.items()):
        if info is None or name not in state:
            continue
        if info.get("up") and not state[name].get("up"):
            actions.append(("set_up", name, {}))
        elif not info.get("up") and state[name].get("up"):
            actions.append(("set_down", name, {}))
    return actions


def _stays_down(action: tuple, before: dict) -> bool:
    """plan() brings every interface up; a restore leaves down what was down."""
    verb, name, _ = action
    return verb == "set_up" and not (before.get(name) or {}).get("up")


def differences(before: dict, now: dict) -> list[str]:
    """What still differs from the snapshot, one line per link (empty: restored)."""
    fields = ("kind", "mtu", "master", "link", "vlan_id", "up")
    lines = []
    for name, info in sorted(before.items()):
        have = now.get(name)
        if info is None or have is None:
            if (info is None) != (have is None):
                lines.append(f"{name}: {'exists' if have else 'missing'}")
            continue
        diff = [f for f in fields if info.get(f) != have.get(f)]
        if sorted(info.get("addresses") or []) != sorted(have.get("addresses") or []):
            diff.append("addresses")
        if normalise_map(info.get("egress_qos_map")) != normalise_map(have.get("egress_qos_map")):
            diff.append("egress_qos_map")
        if info.get("kind") == "bond" and info.get("bond") != have.get("bond"):
            diff.append("bond")
        if diff:
            lines.append(f"{name}: {', '.join(diff)}")
    return lines
