"""Rules on the switch OS of a pair: one OS per pair, and what NVUE can express.

A `cumulus` pair is rendered into the NVUE object tree (switch/nvue/); what the
Onyx-shaped intent can say but cxfab cannot express (or has not confirmed) in
NVUE is refused here, by key path, instead of being dropped silently. Each
refusal names the vendor page behind it; docs/switches-nvue.md has the full table.
"""

from __future__ import annotations

from collections.abc import Iterator

from . import FabricView, Finding, rule

CUMULUS = "cumulus"
# The releases whose NVUE tree the renderer writes (ip vrr / enable on): the Cumulus
# Linux 5.9 user guide examples, and the NVUE command reference's "In Cumulus Linux
# 5.14 and earlier" notes. 5.15 renamed ip -> ipv4 and enable on -> state enabled.
SUPPORTED_CUMULUS_RELEASES = ("5.9", "5.10", "5.11", "5.12", "5.13", "5.14")
# NVUE names the peer link subinterface peerlink.4094 (Cumulus Linux 5.9 user guide,
# "Multi-Chassis Link Aggregation - MLAG", step 5).
NVUE_PEERLINK_VLAN = 4094
# `nv set qos roce mode lossless` enables PFC on switch priority 3 (Cumulus Linux 5.9
# user guide, "RDMA over Converged Ethernet - RoCE", default configuration table).
NVUE_ROCE_PRIORITY = 3
# `ip vrrp virtual-router <id> advertisement-interval`: 10-40950 milliseconds (NVUE
# command reference, VRR and VRRP set commands); the intent says seconds.
NVUE_VRRP_INTERVAL_MS = 40950


def _cumulus_pairs(view: FabricView) -> Iterator[tuple[int, dict]]:
    for p, pair in enumerate(view.pairs):
        if pair.get("platform") == CUMULUS:
            yield p, pair


@rule("peers-share-platform")
def peers_share_platform(view: FabricView) -> Iterator[Finding]:
    """Both peers of a switch pair run the pair's platform."""
    for p, pair in enumerate(view.pairs):
        for s, peer in enumerate(pair["peers"]):
            own = peer.get("platform")
            if own is not None and own != pair["platform"]:
                yield (
                    ("switch_pairs", p, "peers", s, "platform"),
                    f"{peer['name']} runs {own} but switch pair {pair['name']} is "
                    f"{pair['platform']}: cxfab runs no mixed-OS pair (MLAG needs one OS "
                    "and release on both peers)",
                )


@rule("cumulus-release-supported")
def cumulus_release_supported(view: FabricView) -> Iterator[Finding]:
    """A cumulus pair runs a Cumulus Linux release whose NVUE tree cxfab renders (5.9-5.14)."""
    for p, pair in _cumulus_pairs(view):
        release = pair.get("cumulus_release")
        if release not in SUPPORTED_CUMULUS_RELEASES:
            yield (
                ("switch_pairs", p, "cumulus_release"),
                f"Cumulus Linux {release} is not supported (cxfab renders the NVUE tree "
                f"of {SUPPORTED_CUMULUS_RELEASES[0]}-{SUPPORTED_CUMULUS_RELEASES[-1]})",
            )


@rule("cumulus-ipl-vlan")
def cumulus_ipl_vlan(view: FabricView) -> Iterator[Finding]:
    """The IPL VLAN of a cumulus pair is 4094 (NVUE's peerlink.4094)."""
    for p, pair in _cumulus_pairs(view):
        mlag = pair.get("mlag")
        if mlag and mlag["ipl"]["vlan"] != NVUE_PEERLINK_VLAN:
            yield (
                ("switch_pairs", p, "mlag", "ipl", "vlan"),
                f"NVUE carries the MLAG peer link on peerlink.{NVUE_PEERLINK_VLAN}; "
                f"VLAN {mlag['ipl']['vlan']} cannot be expressed on a cumulus pair",
            )


@rule("cumulus-lacp-mode")
def cumulus_lacp_mode(view: FabricView) -> Iterator[Finding]:
    """A cumulus MPO is LACP active or static (NVUE has no passive LACP)."""
    for p, pair in _cumulus_pairs(view):
        for m, mpo in view.present_mpos(pair):
            if mpo["lacp_mode"] == "passive":
                yield (
                    ("switch_pairs", p, "mpos", m, "lacp_mode"),
                    "NVUE bonds are `bond mode lacp` or `static` only; passive LACP "
                    "cannot be expressed on a cumulus pair",
                )


@rule("cumulus-ports-unsplit")
def cumulus_ports_unsplit(view: FabricView) -> Iterator[Finding]:
    """Ports of a cumulus pair are whole ports (1/N, NVUE swpN)."""
    for p, pair in _cumulus_pairs(view):
        maps = [(("switch_pairs", p, "mpos", m), mpo) for m, mpo in view.present_mpos(pair)]
        if pair.get("mlag"):
            maps.insert(0, (("switch_pairs", p, "mlag", "ipl"), pair["mlag"]["ipl"]))
        for base, owner in maps:
            for peer, ports in owner["members"].items():
                for i, name in enumerate(ports):
                    if str(name).count("/") > 1:
                        yield (
                            (*base, "members", peer, i),
                            f"split port {name}: its NVUE name (swpNsM) is not confirmed "
                            "yet; a cumulus pair takes whole ports only",
                        )


@rule("cumulus-gateway-vrrp")
def cumulus_gateway_vrrp(view: FabricView) -> Iterator[Finding]:
    """VRRP on a cumulus pair: only without MLAG, never beside VRR, interval at most 40 s."""
    cumulus = {pair["name"]: pair for _, pair in _cumulus_pairs(view)}
    modes: dict[str, dict[str, int]] = {}  # pair -> gateway mode -> first VLAN index
    for v, vlan in enumerate(view.vlans):
        mode = vlan["gateway"]["mode"]
        if vlan["state"] != "present" or mode not in ("magp", "vrrp"):
            continue
        for pair in view.vlan_pairs(vlan):
            if pair["name"] in cumulus:
                modes.setdefault(pair["name"], {}).setdefault(mode, v)
        names = [p["name"] for p in view.vlan_pairs(vlan) if p["name"] in cumulus]
        if mode != "vrrp" or not names:
            continue
        if any(cumulus[name].get("mlag") for name in names):
            # Cumulus Linux user guide, "Virtual Router Redundancy Protocol - VRRP":
            # "You cannot use VRRP with MLAG" (5.0-5.2, "VRR and VRRP": "You use VRRP
            # without MLAG"); VRR is NVIDIA's gateway for an MLAG pair.
            yield (
                ("vlans", v, "gateway", "mode"),
                f"switch pair {names[0]} is cumulus and runs MLAG: NVIDIA's VRRP page says "
                "VRRP cannot be used with MLAG; use mode magp (NVUE VRR) on this pair",
            )
        interval = vlan["gateway"].get("vrrp", {}).get("advertisement_interval", 1)
        if interval * 1000 > NVUE_VRRP_INTERVAL_MS:
            yield (
                ("vlans", v, "gateway", "vrrp", "advertisement_interval"),
                f"switch pair {names[0]} is cumulus: NVUE's VRRP advertisement-interval is "
                f"at most {NVUE_VRRP_INTERVAL_MS} ms, not {interval} s",
            )
    for name, seen in modes.items():
        if len(seen) == 2:
            v = seen["vrrp"]
            yield (
                ("vlans", v, "gateway", "mode"),
                f"switch pair {name} is cumulus: VLAN {view.vlans[seen['magp']]['id']} is VRR "
                f'(mode magp) and VLAN {view.vlans[seen["vrrp"]]["id"]} VRRP; NVIDIA: "You '
                'cannot configure both VRR and VRRP on the same switch"',
            )


@rule("cumulus-roce-priority")
def cumulus_roce_priority(view: FabricView) -> Iterator[Finding]:
    """Lossless RoCE over a cumulus pair uses priority 3 (NVUE `qos roce` PFC priority)."""
    roce = view.fabric.get("roce")
    if not isinstance(roce, dict) or roce.get("lossless") is not True:
        return
    names = [pair["name"] for _, pair in _cumulus_pairs(view)]
    if names and roce.get("priority") != NVUE_ROCE_PRIORITY:
        yield (
            ("roce", "priority"),
            f"switch pair {names[0]} is cumulus: NVUE `qos roce mode lossless` runs PFC "
            f"on priority {NVUE_ROCE_PRIORITY}, not {roce.get('priority')}",
        )
