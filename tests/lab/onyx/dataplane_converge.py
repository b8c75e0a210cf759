"""Read a switch namespace's dataplane back (iproute2 / nft JSON) and converge it to a Plan.

Inputs are the outputs, inside the switch's namespace, of:
  ip -j -d link show          links, kinds, masters, bond/bridge/vlan/macvlan options
  bridge -j vlan show         per-port VLANs with their PVID / Egress Untagged flags
  ip -j addr show             IPv4 addresses
  bridge -j fdb show dev br0  the gateways' local fdb entries
  nft -j list table bridge cxfab_mlag   (absent table: pass None)
`converge()` returns argv lists (run them with `ip netns exec <ns>` in front), removals
first and in the reverse of their dependencies, then creations in dependency order.
A converged namespace gives no command. Only what the plan owns is touched: br0,
po<N>, mpo<N> (an NVUE switch's peerlink, bond<N>), vlan<N>, vlan<N>-m/v<N> and the nft
table; cabled swp<N> ports are configured, never created or deleted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from .dataplane import BRIDGE, NFT_CHAIN, NFT_SET, NFT_TABLE, DataplaneError, Link, Plan

OWNED = re.compile(r"^(br0|po\d+|mpo\d+|peerlink|bond\d+|vlan\d+(-[mv]\d+)?)$")
# Bond options that need the bond rebuilt (the kernel refuses them with members or up).
BOND_REBUILD = ("mode", "ad_lacp_rate")
BOND_ARG = {"miimon": "miimon", "ad_lacp_rate": "lacp_rate", "ad_actor_system": "ad_actor_system"}


@dataclass
class Current:
    links: dict[str, Link] = field(default_factory=dict)
    vlans: dict[str, dict[int, tuple[bool, bool]]] = field(default_factory=dict)
    addresses: dict[str, set[str]] = field(default_factory=dict)
    fdb: set[tuple[str, int]] = field(default_factory=set)
    nft: dict | None = None  # {"set": bool, "chain": bool, "rule_ipl": str|None, "elements": set}


def _load(text_or_data, command: str):
    if not isinstance(text_or_data, str):
        return text_or_data
    try:
        return json.loads(text_or_data)
    except ValueError:
        first = " | ".join(text_or_data.strip().splitlines()[:3])[:200]
        raise DataplaneError(f"{command}: not JSON: {first!r}") from None


def _need_list(data, command: str) -> list:
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise DataplaneError(f"{command}: expected a JSON list of objects, got {str(data)[:200]!r}")
    return data


def parse_links(text) -> dict[str, Link]:
    command = "ip -j -d link show"
    links = {}
    for entry in _need_list(_load(text, command), command):
        if "ifname" not in entry or "flags" not in entry:
            raise DataplaneError(f"{command}: an entry has no ifname/flags: {str(entry)[:200]!r}")
        info = entry.get("linkinfo") or {}
        kind, data = info.get("info_kind"), info.get("info_data") or {}
        name = entry["ifname"]
        if kind in ("bridge", "bond", "vlan", "macvlan"):
            options = {
                "bridge": lambda d: {"vlan_filtering": d.get("vlan_filtering")},
                "bond": lambda d: {k: d.get(k) for k in ("mode", "miimon", "ad_lacp_rate",
                                                          "ad_actor_system")},
                "vlan": lambda d: {"id": d.get("id")},
                "macvlan": lambda d: {"mode": d.get("mode")},
            }[kind](data)  # fmt: skip
            lower = entry.get("link") if kind in ("vlan", "macvlan") else None
        else:
            kind, options, lower = "port", {}, None
        learning = None
        if info.get("info_slave_kind") == "bridge":
            learning = (info.get("info_slave_data") or {}).get("learning")
        links[name] = Link(
            name, kind, up="UP" in entry["flags"], mtu=entry.get("mtu"),
            master=entry.get("master"), lower=lower,
            address=str(entry.get("address", "")).lower() or None, options=options,
            learning=learning,
        )  # fmt: skip
    return links


def parse_vlans(text) -> dict[str, dict[int, tuple[bool, bool]]]:
    command = "bridge -j vlan show"
    out = {}
    for entry in _need_list(_load(text, command), command):
        if "ifname" not in entry or not isinstance(entry.get("vlans"), list):
            raise DataplaneError(f"{command}: an entry has no ifname/vlans: {str(entry)[:200]!r}")
        vids = {}
        for vlan in entry["vlans"]:
            flags = vlan.get("flags") or []
            last = vlan.get("vlanEnd", vlan["vlan"])  # `-c` compresses ranges
            for vid in range(vlan["vlan"], last + 1):
                vids[vid] = ("PVID" in flags, "Egress Untagged" in flags)
        out[entry["ifname"]] = vids
    return out


def parse_addresses(text) -> dict[str, set[str]]:
    command = "ip -j addr show"
    out = {}
    for entry in _need_list(_load(text, command), command):
        if "ifname" not in entry or "addr_info" not in entry:
            raise DataplaneError(f"{command}: an entry has no ifname/addr_info")
        out[entry["ifname"]] = {
            f"{a['local']}/{a['prefixlen']}"
            for a in entry["addr_info"]
            if a.get("family") == "inet"
        }
    return out


def parse_fdb(text) -> set[tuple[str, int]]:
    """Local (permanent) entries of the bridge itself; the device's own address list
    (flags ["self"], no master) is the kernel's, not ours."""
    command = f"bridge -j fdb show dev {BRIDGE}"
    return {
        (e["mac"].lower(), e.get("vlan", 0))
        for e in _need_list(_load(text, command), command)
        if e.get("master") == BRIDGE and e.get("state") == "permanent" and "mac" in e
    }


def parse_nft(text) -> dict | None:
    """`nft -j list table bridge cxfab_mlag` -> what of the MLAG rule exists; None: no table."""
    if text is None:
        return None
    command = f"nft -j list table bridge {NFT_TABLE}"
    data = _load(text, command)
    if not isinstance(data, dict) or not isinstance(data.get("nftables"), list):
        raise DataplaneError(f"{command}: no 'nftables' list in {str(data)[:200]!r}")
    out = {"set": False, "chain": False, "rule_ipl": None, "rules": 0, "elements": set()}
    for item in data["nftables"]:
        if "set" in item and item["set"].get("name") == NFT_SET:
            out["set"] = True
            out["elements"] = {e for e in item["set"].get("elem", []) if isinstance(e, str)}
        elif "chain" in item and item["chain"].get("name") == NFT_CHAIN:
            out["chain"] = True
        elif "rule" in item and item["rule"].get("chain") == NFT_CHAIN:
            out["rules"] += 1
            out["rule_ipl"] = _rule_ipl(item["rule"].get("expr") or [])
    return out


def _rule_ipl(expr: list) -> str | None:
    """The IPL of `iifname <ipl> oifname @dual_connected drop`, None for any other rule."""
    matches = {}
    for step in expr:
        match = step.get("match") if isinstance(step, dict) else None
        if match and match.get("op") == "==":
            matches[((match.get("left") or {}).get("meta") or {}).get("key")] = match.get("right")
    dropped = any(isinstance(s, dict) and "drop" in s for s in expr)
    if (
        dropped
        and matches.get("oifname") == f"@{NFT_SET}"
        and isinstance(matches.get("iifname"), str)
    ):
        return matches["iifname"]
    return None


def read_current(link, vlan, addr, fdb, nft=None) -> Current:
    links = parse_links(link)
    # The kernel keeps the bridge's own MAC as a local entry per VLAN: not a gateway's.
    own = links[BRIDGE].address if BRIDGE in links else None
    gateways = {(mac, vid) for mac, vid in parse_fdb(fdb) if mac != own}
    return Current(links, parse_vlans(vlan), parse_addresses(addr), gateways, parse_nft(nft))


# ---------------------------------------------------------------------- converge
def _vlan_cmd(action: str, port: str, vid: int, flags: tuple[bool, bool] = (False, False)):
    cmd = ["bridge", "vlan", action, "vid", str(vid), "dev", port]
    if action == "add":
        cmd += (["pvid"] if flags[0] else []) + (["untagged"] if flags[1] else [])
    return cmd + (["self"] if port == BRIDGE else [])


def _fdb_cmd(action: str, mac: str, vid: int) -> list[str]:
    cmd = ["bridge", "fdb", action, mac, "dev", BRIDGE, "vlan", str(vid), "self"]
    return cmd + (["local"] if action == "add" else [])


def _replaced(want: Link, have: Link | None) -> bool:
    """An owned link that exists but must be deleted and made again."""
    if have is None:
        return False
    if have.kind != want.kind or have.lower != want.lower:
        return True
    if want.kind == "bond":
        return any(want.options.get(k) != have.options.get(k) for k in BOND_REBUILD)
    if want.kind in ("vlan", "macvlan"):
        return want.options != have.options
    return False


def _create(link: Link) -> list[list[str]]:
    if link.kind == "bridge":
        return [["ip", "link", "add", link.name, "type", "bridge", "vlan_filtering", "1",
                 "vlan_default_pvid", "0"]]  # fmt: skip
    if link.kind == "bond":
        args = ["ip", "link", "add", link.name, "type", "bond", "mode", link.options["mode"]]
        for key, arg in BOND_ARG.items():
            if key in link.options:
                args += [arg, str(link.options[key])]
        return [args]
    if link.kind == "vlan":
        return [["ip", "link", "add", "link", link.lower, "name", link.name, "type", "vlan",
                 "id", str(link.options["id"])]]  # fmt: skip
    return [["ip", "link", "add", "link", link.lower, "name", link.name, "address", link.address,
             "type", "macvlan", "mode", link.options["mode"]]]  # fmt: skip


_ORDER = {"bridge": 0, "bond": 1, "port": 2, "vlan": 3, "macvlan": 4}


def converge(plan: Plan, current: Current) -> list[list[str]]:
    want, have = plan.links, current.links
    for name, link in want.items():
        if link.kind == "port" and name not in have:
            raise DataplaneError(
                f"{name} is cabled in the plan but absent from the namespace (ip -j -d link show)"
            )
    gone = {n for n in have if OWNED.match(n) and (n not in want or _replaced(want[n], have[n]))}
    cmds: list[list[str]] = []
    # ---- removals, leaves first
    nft = current.nft
    if nft and nft["elements"] - plan.dual_connected:
        stale = ", ".join(sorted(nft["elements"] - plan.dual_connected))
        cmds.append(["nft", "delete", "element", "bridge", NFT_TABLE, NFT_SET, f"{{ {stale} }}"])
    for name, addresses in sorted(current.addresses.items()):
        if name in want and name not in gone:
            for address in sorted(addresses - plan.addresses.get(name, set())):
                cmds.append(["ip", "addr", "del", address, "dev", name])
    for mac, vid in sorted(current.fdb - plan.fdb):
        cmds.append(_fdb_cmd("del", mac, vid))
    for kind in ("macvlan", "vlan"):
        cmds += [["ip", "link", "del", n] for n in sorted(gone) if have[n].kind == kind]
    for port, vids in sorted(current.vlans.items()):
        keep = plan.vlans.get(port)
        bridged = port in want and want[port].master in (None, BRIDGE)
        if keep is not None and bridged and port not in gone:
            cmds += [_vlan_cmd("del", port, v) for v in sorted(set(vids) - set(keep))]
    for name, link in sorted(want.items()):
        current_master = have[name].master if name in have and name not in gone else None
        if current_master and current_master != link.master and current_master not in gone:
            cmds.append(["ip", "link", "set", name, "nomaster"])
    cmds += [["ip", "link", "del", n] for n in sorted(gone) if have[n].kind in ("bond", "bridge")]
    # ---- creations and settings, in dependency order
    ordered = sorted(want.values(), key=lambda link: (_ORDER[link.kind], link.name))
    for link in ordered:
        now = None if link.name in gone else have.get(link.name)
        if now is not None and now.master in gone:  # released (and closed) with its bond
            now = Link(now.name, now.kind, up=False, mtu=now.mtu, options=now.options)
        if now is None and link.kind != "port":
            cmds += _create(link)
        cmds += _settings(link, now, want)
    for port, vids in sorted(plan.vlans.items()):
        now = {} if port in gone else current.vlans.get(port, {})
        cmds += [_vlan_cmd("add", port, v, f) for v, f in sorted(vids.items()) if now.get(v) != f]
    for name, addresses in sorted(plan.addresses.items()):
        now = set() if name in gone else current.addresses.get(name, set())
        cmds += [["ip", "addr", "add", a, "dev", name] for a in sorted(addresses - now)]
    cmds += [_fdb_cmd("add", mac, vid) for mac, vid in sorted(plan.fdb - current.fdb)]
    return cmds + _nft_commands(plan, nft)


def _settings(link: Link, now: Link | None, want: dict[str, Link]) -> list[list[str]]:
    cmds = []
    name = link.name
    if link.kind == "bridge" and now is not None and now.options.get("vlan_filtering") != 1:
        cmds.append(["ip", "link", "set", name, "type", "bridge", "vlan_filtering", "1"])
    if link.kind == "bond" and now is not None:
        for key in ("miimon", "ad_actor_system"):
            if key in link.options and now.options.get(key) != link.options[key]:
                cmds.append(["ip", "link", "set", name, "type", "bond", BOND_ARG[key],
                             str(link.options[key])])  # fmt: skip
    if link.kind == "macvlan" and now is not None and now.address != link.address:
        cmds.append(["ip", "link", "set", name, "address", link.address])
    master_now = now.master if now else None
    if link.master and master_now != link.master:
        if want.get(link.master) and want[link.master].kind == "bond" and (now is None or now.up):
            cmds.append(["ip", "link", "set", name, "down"])  # a bond enslaves only a down port
            now = Link(name, link.kind, up=False, mtu=now.mtu if now else None)
        cmds.append(["ip", "link", "set", name, "master", link.master])
    if link.mtu is not None and (now is None or now.mtu != link.mtu):
        cmds.append(["ip", "link", "set", name, "mtu", str(link.mtu)])
    learning_now = now.learning if now is not None and master_now == link.master else None
    if link.learning is not None and link.master == BRIDGE and learning_now != link.learning:
        cmds.append(["bridge", "link", "set", "dev", name,
                         "learning", "on" if link.learning else "off"])  # fmt: skip
    if now is None or now.up != link.up:
        cmds.append(["ip", "link", "set", name, "up" if link.up else "down"])
    return cmds


def _nft_commands(plan: Plan, nft: dict | None) -> list[list[str]]:
    base = ["nft", "add"]
    cmds = []
    if nft is None:
        cmds.append([*base, "table", "bridge", NFT_TABLE])
        nft = {"set": False, "chain": False, "rule_ipl": None, "rules": 0, "elements": set()}
    if not nft["set"]:
        cmds.append([*base, "set", "bridge", NFT_TABLE, NFT_SET, "{ type ifname; }"])
    if not nft["chain"]:
        hook = "{ type filter hook forward priority 0; policy accept; }"
        cmds.append([*base, "chain", "bridge", NFT_TABLE, NFT_CHAIN, hook])
    wanted_rules = 1 if plan.ipl else 0
    if nft["rules"] != wanted_rules or nft["rule_ipl"] != plan.ipl:
        if nft["rules"]:
            cmds.append(["nft", "flush", "chain", "bridge", NFT_TABLE, NFT_CHAIN])
        if plan.ipl:
            cmds.append([*base, "rule", "bridge", NFT_TABLE, NFT_CHAIN, "iifname", plan.ipl,
                         "oifname", f"@{NFT_SET}", "drop"])  # fmt: skip
    missing = plan.dual_connected - nft["elements"]
    if missing:
        cmds.append([*base, "element", "bridge", NFT_TABLE, NFT_SET,
                     f"{{ {', '.join(sorted(missing))} }}"])  # fmt: skip
    return cmds
