"""Verify's dataplane checks: does the switch pair forward the hosts' traffic as intended?

From each host, per VLAN of its bond: ping the VLAN's gateway (anycast / VRRP virtual IP)
and every other host of the same switch pair on that VLAN; read the neighbour entry of
the gateway (it must carry the anycast gateway's virtual MAC - MAGP on Onyx - or
00:00:5e:00:01:<vrid> for VRRP);
send DF pings at the VLAN MTU to the peers across the switches; read the bond's LACP
partner on every member (it must be the pair's MLAG system MAC). The targets come from
the structured configs (the host's probes, its switches' gateways - gateways_of - and
mlag section);
`cxfab_dataplane_probe` runs the commands on the host and returns their raw outputs;
the parsers and checks below judge them on the controller. Every parser fails closed:
an output it cannot read raises DataplaneReadError naming the command and first lines.
"""

from __future__ import annotations

import json
import re

from ..common.checks import Checks
from ..structured.packed import Unpacked
from ..structured.switch import gateways_of

PING_SUMMARY = re.compile(
    r"^(\d+) packets transmitted, (\d+) received(?:, \+(\d+) duplicates)?"
    r"(?:, \+(\d+) errors)?, ([\d.]+)% packet loss",
    re.M,
)
PING_REPLY = re.compile(r"^(?:\[(\d+\.\d+)\] )?\d+ bytes from [^:]+: icmp_seq=(\d+) ")
PING_LOCAL_ERROR = re.compile(r"^ping: local error: (.*)$", re.M)
MAC = re.compile(r"^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$")
OFF_REASON = (
    "cxfab_verify_dataplane is off: this fabric's switches are not expected to forward the "
    "hosts' traffic in this run"
)


class DataplaneReadError(ValueError):
    """An output that cannot be read: the message names the command and what it printed."""


def _first_lines(text: str, count: int = 3) -> str:
    return " | ".join((text or "").strip().splitlines()[:count])[:300] or "(no output)"


# ---------------------------------------------------------------- targets
def targets(structured, host: str) -> dict:
    """What `host` probes, from the structured configs of the host and of its switches
    (`structured`: device -> structured config, decoded or as validate.yml publishes it)."""
    structured = Unpacked(structured)
    sc = structured[host]
    switches = [
        structured[p["peer"]]
        for nic in sc.get("nics") or []
        for p in nic.get("ports") or []
        if p.get("peer") in structured and "switch" in structured[p["peer"]]
    ]
    first = switches[0] if switches else {}
    gateways = {g["vlan"]: {"mode": g["mode"], "mac": g["virtual_mac"]} for g in gateways_of(first)}
    vlans: dict[int, dict] = {}
    for probe in sc.get("probes") or []:
        vlan = vlans.setdefault(
            probe["vlan"],
            {"vlan": probe["vlan"], "interface": probe["interface"], "mtu": probe["mtu"],
             "size": probe["size"], "gateway": None, "peers": []},
        )  # fmt: skip
        if probe["kind"] == "gateway":
            vlan["gateway"] = {"address": probe["address"], **gateways.get(probe["vlan"], {})}
        else:
            peer = probe["id"].removeprefix(f"mtu.path.vlan{probe['vlan']}.")
            vlan["peers"].append({"host": peer, "address": probe["address"]})
    bond = (sc.get("network") or {}).get("bond")
    return {
        "host": host,
        "pair": first.get("pair"),
        "system_mac": ((first.get("mlag") or {}).get("system_mac") or "").upper() or None,
        "bond": {"name": bond["name"], "members": list(bond["members"]), "mode": bond["mode"]}
        if bond
        else None,
        "vlans": [vlans[v] for v in sorted(vlans)],
    }


# ---------------------------------------------------------------- parsers
def parse_ping(text: str, command: str = "ping") -> dict:
    """iputils ping output -> {transmitted, received, errors, loss_percent, replies, error}."""
    summary = PING_SUMMARY.search(text or "")
    if summary is None:
        raise DataplaneReadError(f"{command}: no packet statistics in: {_first_lines(text)}")
    replies = {}
    for line in (text or "").splitlines():
        match = PING_REPLY.match(line)
        if match:
            seq = int(match.group(2))
            replies.setdefault(seq, float(match.group(1)) if match.group(1) else None)
    local = PING_LOCAL_ERROR.search(text)
    return {
        "transmitted": int(summary.group(1)),
        "received": int(summary.group(2)),
        "errors": int(summary.group(4) or 0),
        "loss_percent": float(summary.group(5)),
        "replies": replies,
        "error": local.group(1) if local else "",
    }


def parse_neigh(text: str, address: str, command: str = "ip -j neigh show") -> dict | None:
    """`ip -j neigh show` -> the entry of `address` ({lladdr, state}), None when absent."""
    try:
        entries = json.loads(text)
    except ValueError:
        raise DataplaneReadError(f"{command}: not JSON: {_first_lines(text)}") from None
    if not isinstance(entries, list):
        raise DataplaneReadError(f"{command}: expected a list, got {_first_lines(text)}")
    for entry in entries:
        if isinstance(entry, dict) and entry.get("dst") == address:
            return {
                "lladdr": str(entry.get("lladdr") or "").upper() or None,
                "state": ",".join(entry.get("state") or []),
            }
    return None


def parse_lacp_partners(text: str, bond: str) -> dict:
    """/proc/net/bonding/<bond> (802.3ad, kernel >= 4.x with CAP_NET_ADMIN) ->
    {aggregator_partner, members: {name: partner system mac}}."""
    command = f"/proc/net/bonding/{bond}"
    if not re.search(r"^Bonding Mode: ", text or "", re.M):
        raise DataplaneReadError(f"{command}: no 'Bonding Mode' line in: {_first_lines(text)}")
    head, *slaves = re.split(r"^Slave Interface:\s*", text, flags=re.M)
    active = re.search(r"^\s*Partner Mac Address:\s*(\S+)", head, re.M)
    members = {}
    for block in slaves:
        name = block.splitlines()[0].strip()
        partner = re.search(
            r"^details partner lacp pdu:\s*\n(?:\s+.*\n)*?\s+system mac address:\s*(\S+)",
            block,
            re.M,
        )
        members[name] = partner.group(1).upper() if partner else None
    return {"aggregator_partner": active.group(1).upper() if active else None, "members": members}


# ---------------------------------------------------------------- checks
def dataplane_checks(name: str, plan: dict, observed) -> list[dict]:
    """Checks of one host: `plan` from targets(), `observed` the cxfab_dataplane_probe result."""
    out = Checks(name)
    expected_ids = _expected(plan)
    if not isinstance(observed, dict):
        # The section ran and this host's probe did not (host unreachable, task failed
        # before it, or its result lost): nothing was measured, which is not a pass.
        for check_id, expected in expected_ids:
            out.unmeasured(check_id, expected, "the dataplane probe did not run on this host")
        return out
    if observed.get("skipped"):
        for check_id, expected in expected_ids:
            out.skip(check_id, expected, OFF_REASON)
        return out
    if observed.get("failed") or observed.get("unreachable"):
        message = str(observed.get("msg", "the dataplane probe failed"))
        for check_id, expected in expected_ids:
            out.fail(check_id, expected, "not probed", message)
        return out
    pings = {p["id"]: p for p in observed.get("pings") or []}
    for vlan in plan["vlans"]:
        _vlan_checks(out, vlan, pings, (observed.get("neigh") or {}).get(str(vlan["vlan"])))
    _lacp_checks(out, plan, observed.get("bonding"))
    return out


def _expected(plan: dict) -> list[tuple[str, str]]:
    found = []
    for vlan in plan["vlans"]:
        gateway, tag = vlan["gateway"], f"vlan{vlan['vlan']}"
        if gateway:
            found.append((f"dataplane.gateway.{tag}", f"replies from {gateway['address']}"))
            if gateway.get("mac"):
                found.append((f"dataplane.gateway_mac.{tag}", gateway["mac"]))
        for peer in vlan["peers"]:
            found.append(
                (f"dataplane.peer.{tag}.{peer['host']}", f"replies from {peer['address']}")
            )
            found.append((f"dataplane.jumbo.{tag}.{peer['host']}", _jumbo_expected(vlan, peer)))
    bond = plan.get("bond")
    if bond and bond["mode"] == "802.3ad":
        for member in bond["members"]:
            found.append((f"dataplane.lacp_partner.{member}", plan.get("system_mac") or "?"))
    return found


def _jumbo_expected(vlan: dict, peer: dict) -> str:
    return f"replies to {vlan['mtu']}-byte DF packets from {peer['address']}"


def ping_id(kind: str, vlan: dict, peer: dict | None = None) -> str:
    tag = f"vlan{vlan['vlan']}"
    return f"dataplane.{kind}.{tag}" + (f".{peer['host']}" if peer else "")


def _judge_ping(out: Checks, check_id: str, expected: str, result: dict | None) -> bool:
    if result is None:
        out.fail(check_id, expected, "not sent", "the probe returned no result for it")
        return False
    command = " ".join(result.get("cmd") or ["ping"])
    try:
        parsed = parse_ping(result.get("stdout", "") + result.get("stderr", ""), command)
    except DataplaneReadError as exc:
        out.fail(check_id, expected, "unreadable", str(exc))
        return False
    observed = f"{parsed['received']}/{parsed['transmitted']} replies"
    if parsed["error"]:
        observed += f" ({parsed['error']})"
    ok = parsed["received"] > 0 and parsed["received"] == parsed["transmitted"]
    out.judge(check_id, ok, expected, observed)
    return ok


def _vlan_checks(out: Checks, vlan: dict, pings: dict, neigh_text) -> None:
    gateway = vlan["gateway"]
    if gateway:
        check_id = ping_id("gateway", vlan)
        _judge_ping(out, check_id, f"replies from {gateway['address']}", pings.get(check_id))
        if gateway.get("mac"):
            _gateway_mac_check(out, vlan, gateway, neigh_text)
    for peer in vlan["peers"]:
        check_id = ping_id("peer", vlan, peer)
        _judge_ping(out, check_id, f"replies from {peer['address']}", pings.get(check_id))
        check_id = ping_id("jumbo", vlan, peer)
        _judge_ping(out, check_id, _jumbo_expected(vlan, peer), pings.get(check_id))


def _gateway_mac_check(out: Checks, vlan: dict, gateway: dict, neigh_text) -> None:
    check_id = ping_id("gateway_mac", vlan)
    command = f"ip -j neigh show {gateway['address']} dev {vlan['interface']}"
    if neigh_text is None:
        out.fail(check_id, gateway["mac"], "not read", f"{command} was not run")
        return
    try:
        entry = parse_neigh(neigh_text, gateway["address"], command)
    except DataplaneReadError as exc:
        out.fail(check_id, gateway["mac"], "unreadable", str(exc))
        return
    if entry is None or not entry["lladdr"]:
        state = entry["state"] if entry else "no entry"
        out.fail(check_id, gateway["mac"], f"no MAC ({state})", f"{command}: gateway unresolved")
        return
    observed = f"{entry['lladdr']} ({entry['state']})"
    mode = "anycast virtual MAC" if gateway.get("mode") == "anycast" else "VRRP MAC"
    ok = entry["lladdr"] == gateway["mac"]
    message = "" if ok else f"the gateway's ARP entry is not its {mode}: {observed}"
    out.judge(check_id, ok, gateway["mac"], observed, message)


def _lacp_checks(out: Checks, plan: dict, text) -> None:
    bond = plan.get("bond")
    if not bond or bond["mode"] != "802.3ad":
        return
    wanted = plan.get("system_mac")
    ids = [f"dataplane.lacp_partner.{m}" for m in bond["members"]]
    if not wanted:
        for check_id in ids:
            out.skip(check_id, "the MLAG system MAC", "the switch pair has no mlag.system_mac")
        return
    if text is None:
        for check_id in ids:
            out.fail(check_id, wanted, "not read", f"/proc/net/bonding/{bond['name']} is missing")
        return
    try:
        partners = parse_lacp_partners(text, bond["name"])
    except DataplaneReadError as exc:
        for check_id in ids:
            out.fail(check_id, wanted, "unreadable", str(exc))
        return
    for member, check_id in zip(bond["members"], ids, strict=True):
        got = partners["members"].get(member)
        if member not in partners["members"]:
            out.fail(check_id, wanted, "not enslaved")
        elif got is None:
            out.fail(check_id, wanted, "no partner details", "the bond printed no LACP details")
        else:
            out.judge(check_id, got == wanted, wanted, f"partner system {got}")
