"""The comparable form of a host's persisted network, shared by every backend's reader.

Each persistence backend (systemd-networkd, NetworkManager keyfiles, netplan) renders
the structured config's `network` and `ipoib` sections into its own files, and reads
those files back into this one dict, so "what is written" is compared with "what
the intent says", never eyeballed:

    {bond: {name, members (sorted), mode, lacp_rate, miimon, xmit_hash_policy, mtu,
            addresses} | None,
     members: [{name, mtu}], vlans: [{name, id, link, mtu, addresses, egress_qos_map}],
     ipoib: [{name, mode, mtu, addresses}]}        (lists sorted by name)
"""

from __future__ import annotations

# Bonding's lacp_rate and xmit_hash_policy as the kernel reports them outside the
# modes that use them (hosts.bond_section normalises the intent the same way).
LACP_MODE = "802.3ad"
HASH_POLICY_MODES = ("balance-xor", "802.3ad", "balance-tlb")
UNUSED_LACP_RATE = "slow"
UNUSED_HASH_POLICY = "layer2"
# Every cxfab-owned file's name starts with this (the networkd files' NETWORKD_PREFIX).
FILE_PREFIX = "cxfab"


def _by_name(items):
    return sorted(items, key=lambda item: item["name"])


def qos_map(value) -> dict[int, int] | None:
    return {int(k): int(v) for k, v in value.items()} if value else None


def comparable(network: dict, ipoib: list[dict] | None = None) -> dict:
    """The structured config's network + ipoib sections in the readers' form."""
    bond = network.get("bond")
    return {
        "bond": None
        if not bond
        else {
            "name": bond["name"],
            "members": sorted(bond["members"]),
            "mode": bond["mode"],
            "lacp_rate": bond["lacp_rate"] if bond["mode"] == LACP_MODE else UNUSED_LACP_RATE,
            "miimon": int(bond["miimon"]),
            "xmit_hash_policy": bond["xmit_hash_policy"]
            if bond["mode"] in HASH_POLICY_MODES
            else UNUSED_HASH_POLICY,
            "mtu": int(bond["mtu"]),
            "addresses": list(bond["addresses"]),
        },
        "members": _by_name({"name": m["name"], "mtu": int(m["mtu"])} for m in network["members"]),
        "vlans": _by_name(
            {
                "name": v["name"],
                "id": int(v["id"]),
                "link": v["link"],
                "mtu": int(v["mtu"]),
                "addresses": list(v["addresses"]),
                "egress_qos_map": qos_map(v.get("egress_qos_map")),
            }
            for v in network["vlans"]
        ),
        "ipoib": _by_name(
            {
                "name": i["name"],
                "mode": i["mode"],
                "mtu": int(i["mtu"]),
                "addresses": list(i["addresses"]),
            }
            for i in ipoib or []
        ),
    }


def bond_options(bond: dict) -> dict[str, str]:
    """The bond's kernel options cxfab sets, in the order the backends write them: the
    mode's unused options are left out (the kernel refuses a hash policy there)."""
    options = {"mode": bond["mode"], "miimon": str(bond["miimon"])}
    if bond["mode"] == LACP_MODE:
        options["lacp_rate"] = bond["lacp_rate"]
    if bond["mode"] in HASH_POLICY_MODES:
        options["xmit_hash_policy"] = bond["xmit_hash_policy"]
    return options


def read_bond(name: str, members, options: dict, mtu, addresses) -> dict:
    """A bond in the comparable form from the options a backend's file holds."""
    miimon = options.get("miimon")
    return {
        "name": name,
        "members": sorted(members),
        "mode": options.get("mode"),
        "lacp_rate": options.get("lacp_rate", UNUSED_LACP_RATE),
        "miimon": int(miimon) if miimon is not None else None,
        "xmit_hash_policy": options.get("xmit_hash_policy", UNUSED_HASH_POLICY),
        "mtu": int(mtu) if mtu is not None else None,
        "addresses": list(addresses),
    }


def assemble(bond, members, vlans, ipoib) -> dict:
    return {
        "bond": bond,
        "members": _by_name(members),
        "vlans": _by_name(vlans),
        "ipoib": _by_name(ipoib),
    }
