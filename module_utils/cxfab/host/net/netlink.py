"""Read and change links over netlink (pyroute2): the module's and the revert watchdog's.

`read_links` gives the normalised view `linkplan` plans on; `apply` runs a plan.
pyroute2 is imported by the caller (an `IPRoute` is passed in), so this file also
runs inside the revert watchdog from the copy installed on the host.
"""

from __future__ import annotations

import socket

from .bonding import BOND_MODES, LACP_RATES, XMIT_HASH_POLICIES

IFF_UP = 0x1
MODE_NAMES = {v: k for k, v in BOND_MODES.items()}
LACP_NAMES = {v: k for k, v in LACP_RATES.items()}
HASH_NAMES = {v: k for k, v in XMIT_HASH_POLICIES.items()}


def _info(msg):
    linkinfo = msg.get_attr("IFLA_LINKINFO")
    if not linkinfo:
        return None, None
    return linkinfo.get_attr("IFLA_INFO_KIND"), linkinfo.get_attr("IFLA_INFO_DATA")


def read_links(ipr) -> dict:
    """Normalised view of every link (see linkplan for the shape)."""
    raw = list(ipr.get_links())
    names = {msg["index"]: msg.get_attr("IFLA_IFNAME") for msg in raw}
    links = {}
    for msg in raw:
        kind, data = _info(msg)
        entry = {
            "index": msg["index"],
            "kind": kind,
            "mtu": msg.get_attr("IFLA_MTU"),
            "master": names.get(msg.get_attr("IFLA_MASTER")),
            "link": names.get(msg.get_attr("IFLA_LINK")) if kind == "vlan" else None,
            "up": bool(msg["flags"] & IFF_UP),
            "addresses": [],
        }
        if kind == "vlan" and data is not None:
            entry["vlan_id"] = data.get_attr("IFLA_VLAN_ID")
            egress = data.get_attr("IFLA_VLAN_EGRESS_QOS")
            mappings = egress.get_attrs("IFLA_VLAN_QOS_MAPPING") if egress else []
            entry["egress_qos_map"] = {int(m["from"]): int(m["to"]) for m in mappings}
        if kind == "bond" and data is not None:
            entry["bond"] = {
                "mode": MODE_NAMES.get(data.get_attr("IFLA_BOND_MODE")),
                "miimon": data.get_attr("IFLA_BOND_MIIMON"),
                "lacp_rate": LACP_NAMES.get(data.get_attr("IFLA_BOND_AD_LACP_RATE")),
                "xmit_hash_policy": HASH_NAMES.get(data.get_attr("IFLA_BOND_XMIT_HASH_POLICY")),
            }
        links[msg.get_attr("IFLA_IFNAME")] = entry
    for msg in ipr.get_addr(family=socket.AF_INET):
        name = names.get(msg["index"])
        # Only global addresses are managed; host-scope (127/8) ones belong to lo.
        if name in links and msg["scope"] == 0:
            links[name]["addresses"].append(f"{msg.get_attr('IFA_ADDRESS')}/{msg['prefixlen']}")
    for entry in links.values():
        entry["addresses"].sort()
    return links


def qos_attrs(mapping: dict) -> dict:
    """IFLA_VLAN_EGRESS_QOS payload; unlisted priorities are reset to 0."""
    mapping = {int(k): int(v) for k, v in (mapping or {}).items()}
    return {
        "attrs": [
            ("IFLA_VLAN_QOS_MAPPING", {"from": prio, "to": mapping.get(prio, 0)})
            for prio in range(8)
        ]
    }


def bond_params(params: dict) -> dict:
    out = {"bond_mode": BOND_MODES[params["mode"]], "bond_miimon": params["miimon"]}
    if params["mode"] == "802.3ad" and params.get("lacp_rate"):
        out["bond_ad_lacp_rate"] = LACP_RATES[params["lacp_rate"]]
    if params["mode"] in ("802.3ad", "balance-xor", "balance-tlb") and params.get(
        "xmit_hash_policy"
    ):
        out["bond_xmit_hash_policy"] = XMIT_HASH_POLICIES[params["xmit_hash_policy"]]
    return out


def apply(ipr, actions, intent):
    """Run a linkplan plan; `intent` gives the bond's parameters for `set_bond`."""

    def index(name):
        found = ipr.link_lookup(ifname=name)
        if not found:
            raise RuntimeError(f"{name} vanished during the run")
        return found[0]

    bond = intent.get("bond") or {}
    for action, name, args in actions:
        if action == "create_bond":
            ipr.link("add", ifname=name, kind="bond", **bond_params(args))
        elif action == "set_bond":
            if args["release"]:
                for slave in ipr.link_lookup(master=index(name)):
                    ipr.link("set", index=slave, master=0)
            if args["down"]:
                ipr.link("set", index=index(name), state="down")
            ipr.link("set", index=index(name), kind="bond", **bond_params(bond))
            ipr.link("set", index=index(name), state="up")
        elif action == "enslave":
            ipr.link("set", index=index(name), state="down")
            if args.get("old") and args["old"] != args["master"]:
                ipr.link("set", index=index(name), master=0)
            ipr.link("set", index=index(name), master=index(args["master"]))
            ipr.link("set", index=index(name), state="up")
        elif action == "release":
            ipr.link("set", index=index(name), master=0)
        elif action == "set_mtu":
            ipr.link("set", index=index(name), mtu=args["mtu"])
        elif action == "create_vlan":
            extra = {}
            if args.get("egress_qos_map"):
                extra["vlan_egress_qos"] = qos_attrs(args["egress_qos_map"])
            ipr.link(
                "add",
                ifname=name,
                kind="vlan",
                link=index(args["link"]),
                vlan_id=args["id"],
                **extra,
            )
        elif action == "set_egress_map":
            ipr.link(
                "set",
                index=index(name),
                kind="vlan",
                vlan_egress_qos=qos_attrs(args["egress_qos_map"]),
            )
        elif action in ("add_address", "del_address"):
            address, prefix = args["address"].split("/")
            verb = "add" if action == "add_address" else "del"
            ipr.addr(verb, index=index(name), address=address, prefixlen=int(prefix))
        elif action == "set_up":
            ipr.link("set", index=index(name), state="up")
        elif action == "set_down":
            ipr.link("set", index=index(name), state="down")
        elif action == "delete":
            ipr.link("del", index=index(name))
        else:
            raise RuntimeError(f"unknown link action {action}")
