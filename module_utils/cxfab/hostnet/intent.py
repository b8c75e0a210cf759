"""Desired host network and QoS state derived from one host's `cxfab_host`.

The result is plain data (dicts, lists, ints) that the modules compare with what
the kernel reports and the role renders into systemd-networkd files.
"""

from __future__ import annotations

import ipaddress

from . import IntentError

BOND_MODES = {
    "balance-rr": 0,
    "active-backup": 1,
    "balance-xor": 2,
    "broadcast": 3,
    "802.3ad": 4,
    "balance-tlb": 5,
    "balance-alb": 6,
}
LACP_RATES = {"slow": 0, "fast": 1}
XMIT_HASH_POLICIES = {
    "layer2": 0,
    "layer3+4": 1,
    "layer2+3": 2,
    "encap2+3": 3,
    "encap3+4": 4,
    "vlan+srcmac": 5,
}
HASH_POLICY_MODES = ("balance-xor", "802.3ad", "balance-tlb")
TSA_VALUES = ("strict", "ets", "vendor")
NUM_PRIORITIES = 8
NUM_TCS = 8
IFNAMSIZ_MAX = 15


def _require_dict(value, path):
    if not isinstance(value, dict):
        raise IntentError(path, f"expected a mapping, got {type(value).__name__}")
    return value


def _int(value, path, low, high):
    if isinstance(value, bool) or not isinstance(value, int):
        raise IntentError(path, f"expected an integer, got {value!r}")
    if not low <= value <= high:
        raise IntentError(path, f"{value} is outside {low}..{high}")
    return value


def _ifname(value, path):
    if not isinstance(value, str) or not value or len(value) > IFNAMSIZ_MAX or "/" in value:
        raise IntentError(path, f"{value!r} is not an interface name (1-15 characters)")
    return value


def _interface_address(value, path):
    try:
        return str(ipaddress.ip_interface(value))
    except ValueError:
        raise IntentError(path, f"{value!r} is not an address with prefix (10.0.0.1/24)") from None


def bond_intent(host: dict, path: str, miimon: int = 100, xmit_hash_policy: str = "layer2"):
    """The bond of `cxfab_host.bond`, with the kernel defaults the role adds (miimon, hash)."""
    bond = host.get("bond")
    if not bond:
        return None
    bond = _require_dict(bond, f"{path}.bond")
    members = bond.get("members")
    if not isinstance(members, list) or not members:
        raise IntentError(f"{path}.bond.members", "needs at least one member interface")
    for index, member in enumerate(members):
        _ifname(member, f"{path}.bond.members[{index}]")
    if len(set(members)) != len(members):
        raise IntentError(f"{path}.bond.members", f"lists an interface twice: {members}")
    mode = bond.get("mode", "802.3ad")
    if mode not in BOND_MODES:
        raise IntentError(f"{path}.bond.mode", f"{mode!r} is not one of {sorted(BOND_MODES)}")
    lacp_rate = bond.get("lacp_rate", "slow")
    if lacp_rate not in LACP_RATES:
        raise IntentError(f"{path}.bond.lacp_rate", f"{lacp_rate!r} is not slow or fast")
    if xmit_hash_policy not in XMIT_HASH_POLICIES:
        raise IntentError(
            "xmit_hash_policy", f"{xmit_hash_policy!r} is not one of {sorted(XMIT_HASH_POLICIES)}"
        )
    if mode not in HASH_POLICY_MODES:
        # Bonding rejects a hash policy in the other modes and reports layer2.
        xmit_hash_policy = "layer2"
    name = _ifname(bond.get("name", "bond0"), f"{path}.bond.name")
    if name in members:
        raise IntentError(f"{path}.bond.name", f"{name} cannot be its own member")
    address = bond.get("address")
    return {
        "name": name,
        "members": list(members),
        "mode": mode,
        # The kernel keeps lacp_rate for every mode; only 802.3ad uses it.
        "lacp_rate": lacp_rate if mode == "802.3ad" else "slow",
        "miimon": _int(miimon, "miimon", 0, 1_000_000),
        "xmit_hash_policy": xmit_hash_policy,
        "mtu": _int(bond.get("mtu", 1500), f"{path}.bond.mtu", 68, 65535),
        "addresses": [_interface_address(address, f"{path}.bond.address")] if address else [],
    }


def egress_maps(host: dict, path: str) -> dict[int, dict[int, int]]:
    """VLAN id -> {socket priority: user priority}: all eight priorities to the VLAN's UP."""
    maps: dict[int, dict[int, int]] = {}
    for index, entry in enumerate(host.get("qos") or []):
        entry = _require_dict(entry, f"{path}.qos[{index}]")
        vlan = _int(entry.get("vlan"), f"{path}.qos[{index}].vlan", 1, 4094)
        if vlan in maps:
            raise IntentError(f"{path}.qos[{index}].vlan", f"VLAN {vlan} has two QoS entries")
        user_priority = _int(entry.get("user_priority"), f"{path}.qos[{index}].user_priority", 0, 7)
        maps[vlan] = dict.fromkeys(range(NUM_PRIORITIES), user_priority)
    return maps


def network_intent(host: dict, path: str = "cxfab_host", **bond_options) -> dict:
    """Bond, member and VLAN interfaces wanted on the host (names, MTUs, addresses, maps)."""
    host = _require_dict(host, path)
    bond = bond_intent(host, path, **bond_options)
    maps = egress_maps(host, path)
    members = []
    if bond:
        members = [{"name": name, "mtu": bond["mtu"]} for name in bond["members"]]
    vlans = []
    seen: set[int] = set()
    for index, entry in enumerate(host.get("vlans") or []):
        item_path = f"{path}.vlans[{index}]"
        entry = _require_dict(entry, item_path)
        vlan_id = _int(entry.get("id"), f"{item_path}.id", 1, 4094)
        if vlan_id in seen:
            raise IntentError(f"{item_path}.id", f"VLAN {vlan_id} is listed twice")
        seen.add(vlan_id)
        parent = entry.get("parent") or (bond["name"] if bond else None)
        if not parent:
            raise IntentError(f"{item_path}", "no bond to carry the VLAN and no `parent` given")
        _ifname(parent, f"{item_path}.parent")
        default_mtu = bond["mtu"] if bond else 1500
        mtu = _int(entry.get("mtu", default_mtu), f"{item_path}.mtu", 68, 65535)
        if bond and parent == bond["name"] and mtu > bond["mtu"]:
            raise IntentError(
                f"{item_path}.mtu", f"{mtu} is larger than the bond MTU {bond['mtu']}"
            )
        address = entry.get("address")
        vlans.append(
            {
                "name": _ifname(f"{parent}.{vlan_id}", f"{item_path}.id"),
                "id": vlan_id,
                "link": parent,
                "mtu": mtu,
                "addresses": [_interface_address(address, f"{item_path}.address")]
                if address
                else [],
                "egress_qos_map": maps.get(vlan_id),
            }
        )
    unknown = sorted(set(maps) - seen)
    if unknown:
        raise IntentError(f"{path}.qos", f"QoS for VLAN(s) {unknown} not in {path}.vlans")
    return {"bond": bond, "members": members, "vlans": vlans}


def _default_tc(priority: int) -> int:
    # Unlisted priorities pair up into traffic classes (0,0,1,1,2,2,3,3), the layout
    # seed 001 programs and the one operators expect from mlnx_qos examples.
    return priority // 2


def qos_plan(host: dict, path: str = "cxfab_host") -> dict:
    """Per-port DCB plan: prio->TC map and per-TC TSA, ETS share and rate limit.

    Returns `{"prio_tc": [8 ints], "tcs": [8 x {tc, tsa, bandwidth_percent,
    rate_limit_mbps}], "egress": {vlan: {prio: up}}}`.
    """
    host = _require_dict(host, path)
    prio_tc: dict[int, int] = {}
    tcs: dict[int, dict] = {}
    for index, entry in enumerate(host.get("qos") or []):
        item_path = f"{path}.qos[{index}]"
        entry = _require_dict(entry, item_path)
        up = _int(entry.get("user_priority"), f"{item_path}.user_priority", 0, 7)
        tc = _int(entry.get("traffic_class"), f"{item_path}.traffic_class", 0, NUM_TCS - 1)
        if prio_tc.get(up, tc) != tc:
            raise IntentError(
                f"{item_path}.traffic_class",
                f"user priority {up} already maps to traffic class {prio_tc[up]}",
            )
        prio_tc[up] = tc
        tsa = entry.get("tsa", "strict")
        if tsa not in TSA_VALUES:
            raise IntentError(f"{item_path}.tsa", f"{tsa!r} is not one of {list(TSA_VALUES)}")
        bandwidth = _int(
            entry.get("bandwidth_percent", 0), f"{item_path}.bandwidth_percent", 0, 100
        )
        rate = entry.get("rate_limit_mbps")
        if rate is not None:
            _int(rate, f"{item_path}.rate_limit_mbps", 1, 10_000_000)
        wanted = {"tc": tc, "tsa": tsa, "bandwidth_percent": bandwidth, "rate_limit_mbps": rate}
        if tcs.get(tc, wanted) != wanted:
            raise IntentError(
                item_path, f"traffic class {tc} is configured differently by another VLAN"
            )
        tcs[tc] = wanted
    ets_total = sum(t["bandwidth_percent"] for t in tcs.values() if t["tsa"] == "ets")
    if any(t["tsa"] == "ets" for t in tcs.values()) and ets_total != 100:
        raise IntentError(f"{path}.qos", f"ETS shares sum to {ets_total}%, they must sum to 100%")
    full_map = [prio_tc.get(p, _default_tc(p)) for p in range(NUM_PRIORITIES)]
    full_tcs = [
        tcs.get(tc, {"tc": tc, "tsa": "strict", "bandwidth_percent": 0, "rate_limit_mbps": None})
        for tc in range(NUM_TCS)
    ]
    return {"prio_tc": full_map, "tcs": full_tcs, "egress": egress_maps(host, path)}
