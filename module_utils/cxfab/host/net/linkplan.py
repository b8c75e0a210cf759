"""Compare the kernel's links with the desired network and plan the changes.

`links` is the normalised live state the module reads over netlink:
`{ifname: {"kind", "mtu", "master", "link", "vlan_id", "egress_qos_map", "bond",
"up", "addresses"}}` where `bond` holds `mode`, `miimon`, `lacp_rate`,
`xmit_hash_policy` as names. Plans are lists of `(action, ifname, args)` tuples
in the order they must run.
"""

from __future__ import annotations

from . import IntentError

BOND_KEYS = ("mode", "miimon", "lacp_rate", "xmit_hash_policy")
# Bonding refuses these while the bond is up (mode also needs no members).
BOND_KEYS_NEED_DOWN = ("mode", "lacp_rate")


def normalise_map(mapping) -> dict[int, int]:
    """Egress map as {from: to} without the zero entries the kernel never reports."""
    return {int(k): int(v) for k, v in (mapping or {}).items() if int(v) != 0}


def managed_interfaces(intent: dict, path: str = "cxfab_host") -> dict[str, str]:
    """Interface name -> key path of every interface the intent changes or builds on."""
    touched: dict[str, str] = {}
    bond = intent.get("bond")
    if bond:
        touched[bond["name"]] = f"{path}.bond.name"
        for index, member in enumerate(bond["members"]):
            touched[member] = f"{path}.bond.members[{index}]"
    for index, vlan in enumerate(intent.get("vlans") or []):
        touched.setdefault(vlan["link"], f"{path}.vlans[{index}].parent")
        touched[vlan["name"]] = f"{path}.vlans[{index}].id"
    for index, interface in enumerate(intent.get("ipoib") or []):
        # IPoIB interfaces: only their addresses and up state are planned here
        # (mode and MTU are sysfs values, hostnet.ipoib).
        touched[interface["name"]] = interface.get("path", f"{path}.ipoib[{index}]")
    return touched


def stale_links(intent: dict, links: dict) -> list[tuple[str, str]]:
    """(name, action) of what the intent no longer lists on the interfaces it owns.

    The intent's bond and the parents of its VLANs are cxfab's: a VLAN stacked on one
    of them that the intent does not name is deleted, a port in its bond that is not
    a member is released. Without this a VLAN dropped from the inventory stayed up
    until the next reboot (its networkd file was already removed). VLANs come first:
    a renamed VLAN keeps its id, and the kernel refuses a second one of that id.
    A stale link that carries the connection makes its bond protected, which
    check_protected refuses (the bond is always in the intent).
    """
    bond = intent.get("bond") or {}
    vlans = intent.get("vlans") or []
    parents = {v["link"] for v in vlans} | ({bond["name"]} if bond else set())
    named = {v["name"] for v in vlans}
    stale = [
        (name, "delete")
        for name, info in sorted(links.items())
        if info.get("kind") == "vlan" and info.get("link") in parents and name not in named
    ]
    if bond:
        stale += [
            (name, "release")
            for name, info in sorted(links.items())
            if info.get("master") == bond["name"] and name not in bond["members"]
        ]
    return stale


def protected_interfaces(links: dict, seeds: dict[str, str]) -> dict[str, str]:
    """Seeds (name -> why) plus every device they depend on or belong to.

    A VLAN depends on its parent, a bond on its members; a bond member belongs
    to its bond. Changing any of them would cut what the seed carries.
    """
    protected: dict[str, str] = {}
    pending = [(name, why) for name, why in seeds.items() if name]
    while pending:
        name, why = pending.pop()
        if name in protected:
            continue
        protected[name] = why
        link = links.get(name) or {}
        related = [link.get("link"), link.get("master")]
        related += [other for other, info in links.items() if info.get("master") == name]
        for other in related:
            if other and other not in protected:
                pending.append((other, f"{why} (through {name})"))
    return protected


def check_protected(intent: dict, links: dict, seeds: dict[str, str], path="cxfab_host"):
    """Raise IntentError naming the key path when the intent would touch a protected link."""
    protected = protected_interfaces(links, seeds)
    for name, key_path in managed_interfaces(intent, path).items():
        if name in protected:
            raise IntentError(
                key_path,
                f"interface {name} {protected[name]}; cxfab never changes it. "
                "Use the data ports for the bond and VLANs.",
            )
    return protected


def _bond_changes(current: dict, wanted: dict) -> dict:
    have = current.get("bond") or {}
    return {key: wanted[key] for key in BOND_KEYS if have.get(key) != wanted[key]}


def plan(intent: dict, links: dict, purge_addresses: bool = True) -> list[tuple]:
    """Ordered actions turning `links` into the intent. Empty when nothing differs."""
    actions: list[tuple] = []
    for name, action in stale_links(intent, links):
        details = {"master": links[name]["master"]} if action == "release" else {}
        actions.append((action, name, details))
    bond = intent.get("bond")
    if bond:
        name = bond["name"]
        current = links.get(name)
        params = {key: bond[key] for key in BOND_KEYS}
        if current is None:
            actions.append(("create_bond", name, params))
        elif current.get("kind") != "bond":
            raise IntentError("cxfab_host.bond.name", f"{name} exists and is not a bond")
        else:
            changes = _bond_changes(current, bond)
            if changes:
                actions.append(
                    (
                        "set_bond",
                        name,
                        {
                            "changes": changes,
                            "down": any(k in changes for k in BOND_KEYS_NEED_DOWN),
                            "release": "mode" in changes,
                        },
                    )
                )
        release_all = bool(actions and actions[-1][0] == "set_bond" and actions[-1][2]["release"])
        for index, member in enumerate(bond["members"]):
            have = links.get(member)
            if have is None:
                raise IntentError(
                    f"cxfab_host.bond.members[{index}]", f"interface {member} does not exist"
                )
            if have.get("master") != name or release_all:
                actions.append(("enslave", member, {"master": name, "old": have.get("master")}))
        if current is None or current.get("mtu") != bond["mtu"]:
            actions.append(("set_mtu", name, {"mtu": bond["mtu"]}))
        for member in intent.get("members") or []:
            have = links.get(member["name"]) or {}
            if have.get("mtu") != member["mtu"]:
                actions.append(("set_mtu", member["name"], {"mtu": member["mtu"]}))
    for vlan in intent.get("vlans") or []:
        name = vlan["name"]
        have = links.get(name)
        wanted_map = vlan.get("egress_qos_map")
        if have is not None and (
            have.get("kind") != "vlan"
            or have.get("link") != vlan["link"]
            or have.get("vlan_id") != vlan["id"]
        ):
            actions.append(("delete", name, {}))
            have = None
        if have is None:
            actions.append(
                (
                    "create_vlan",
                    name,
                    {"link": vlan["link"], "id": vlan["id"], "egress_qos_map": wanted_map},
                )
            )
        elif wanted_map is not None and normalise_map(have.get("egress_qos_map")) != (
            normalise_map(wanted_map)
        ):
            actions.append(("set_egress_map", name, {"egress_qos_map": wanted_map}))
        if have is None or have.get("mtu") != vlan["mtu"]:
            actions.append(("set_mtu", name, {"mtu": vlan["mtu"]}))
    for item in _address_items(intent):
        name, wanted = item
        have = links.get(name) or {}
        current = set(have.get("addresses") or [])
        for address in wanted:
            if address not in current:
                actions.append(("add_address", name, {"address": address}))
        if purge_addresses:
            for address in sorted(current - set(wanted)):
                actions.append(("del_address", name, {"address": address}))
    for name in _up_order(intent):
        if not (links.get(name) or {}).get("up"):
            actions.append(("set_up", name, {}))
    return actions


def _address_items(intent):
    if intent.get("bond"):
        yield intent["bond"]["name"], intent["bond"]["addresses"]
    for vlan in intent.get("vlans") or []:
        yield vlan["name"], vlan["addresses"]
    for interface in intent.get("ipoib") or []:
        yield interface["name"], interface["addresses"]


def _up_order(intent):
    bond = intent.get("bond")
    if bond:
        yield from bond["members"]
        yield bond["name"]
    for vlan in intent.get("vlans") or []:
        yield vlan["name"]
    for interface in intent.get("ipoib") or []:
        yield interface["name"]


def summary(intent: dict, links: dict) -> dict:
    """The slice of `links` the intent covers, for diff before/after output."""
    names = [*managed_interfaces(intent), *(name for name, _ in stale_links(intent, links))]
    return {name: links.get(name) for name in sorted(set(names))}


def simulate(links: dict, actions: list[tuple]) -> dict:
    """Predict the links after `actions` (check mode shows this as the diff's after)."""
    state = {name: dict(info) for name, info in links.items()}
    for action, name, args in actions:
        info = state.setdefault(name, {"addresses": [], "up": False, "mtu": 1500})
        if action == "create_bond":
            info.update(kind="bond", bond=dict(args), master=None, link=None)
        elif action == "set_bond":
            info["bond"] = {**(info.get("bond") or {}), **args["changes"]}
        elif action == "enslave":
            # apply() takes the port down, enslaves it and brings it up again.
            info.update(master=args["master"], up=True)
        elif action == "release":
            # The bonding driver closes a port it releases.
            info.update(master=None, up=False)
        elif action == "set_mtu":
            info["mtu"] = args["mtu"]
        elif action == "create_vlan":
            info.update(
                kind="vlan",
                link=args["link"],
                vlan_id=args["id"],
                egress_qos_map=normalise_map(args["egress_qos_map"]),
                master=None,
            )
        elif action == "set_egress_map":
            info["egress_qos_map"] = normalise_map(args["egress_qos_map"])
        elif action == "add_address":
            info["addresses"] = sorted({*info.get("addresses", []), args["address"]})
        elif action == "del_address":
            info["addresses"] = [a for a in info.get("addresses", []) if a != args["address"]]
        elif action == "set_up":
            info["up"] = True
        elif action == "set_down":
            info["up"] = False
        elif action == "delete":
            state.pop(name, None)
            # The kernel deletes the VLANs on a deleted link and releases a bond's ports.
            for other in [n for n, i in state.items() if i.get("link") == name]:
                state.pop(other)
            for other in state.values():
                if other.get("master") == name:
                    other.update(master=None, up=False)
    return state


def describe(action: tuple) -> str:
    """One line per action for the module's `actions` result."""
    verb, name, args = action
    details = " ".join(f"{k}={v}" for k, v in sorted(args.items()) if v is not None)
    return f"{verb} {name}" + (f" ({details})" if details else "")
