"""The `show` side of the dataplane twin: real bond state -> what the emulator reports.

Reads `ip -j -d link show` inside the switch namespace (bond masters carry `ad_info`,
their members `info_slave_data` with the LACP port states) and turns it into the
member flags of `show interfaces mlag-port-channel summary` / `port-channel summary`
(D down, P up in the port-channel, I individual: up but not bundled by LACP) and the
MPO's local state in the shape of Switch._mpo_local, so the pair's MPO states (and with
them the MLAG rule of dataplane.plan) follow what the links really do.
"""

from __future__ import annotations

from .dataplane import DataplaneError, port_ifname
from .dataplane_converge import _load, _need_list
from .model import SwitchConfig

# IEEE 802.1AX port state bits (as the bonding driver reports them).
LACP_SYNC, LACP_COLLECTING, LACP_DISTRIBUTING = 0x08, 0x10, 0x20
NO_PARTNER = "00:00:00:00:00:00"


def lag_states(link_json) -> dict[str, dict]:
    """{bond: {up, mode, partner_mac, aggregator, members: {port: flag}}} of every bond."""
    command = "ip -j -d link show"
    entries = _need_list(_load(link_json, command), command)
    bonds, members = {}, {}
    for entry in entries:
        info = entry.get("linkinfo") or {}
        if info.get("info_kind") == "bond":
            data = info.get("info_data") or {}
            if "mode" not in data:
                raise DataplaneError(f"{command}: bond {entry.get('ifname')} has no info_data.mode")
            ad_info = data.get("ad_info") or {}
            bonds[entry["ifname"]] = {
                "up": "UP" in entry.get("flags", []),
                "mode": data["mode"],
                "partner_mac": ad_info.get("partner_mac"),
                "aggregator": ad_info.get("aggregator"),
                "members": {},
            }
        if info.get("info_slave_kind") == "bond":
            members[entry["ifname"]] = (entry.get("master"), info.get("info_slave_data") or {})
    for port, (master, slave) in members.items():
        bond = bonds.get(master)
        if bond is None:
            raise DataplaneError(f"{command}: {port} is a bond member of {master}, not listed")
        bond["members"][port] = _member_flag(bond, slave)
    return bonds


def _member_flag(bond: dict, slave: dict) -> str:
    if slave.get("mii_status") != "UP":
        return "D"
    if bond["mode"] != "802.3ad":
        return "P"
    actor = int(slave.get("ad_actor_oper_port_state") or 0)
    partner = int(slave.get("ad_partner_oper_port_state") or 0)
    bundled = (
        slave.get("ad_aggregator_id") == bond["aggregator"]
        and actor & (LACP_SYNC | LACP_COLLECTING | LACP_DISTRIBUTING)
        == LACP_SYNC | LACP_COLLECTING | LACP_DISTRIBUTING
        and partner & LACP_SYNC
        and (bond["partner_mac"] or NO_PARTNER) != NO_PARTNER
    )
    return "P" if bundled else "I"


def mpo_local(cfg: SwitchConfig, number: int, states: dict[str, dict]) -> dict:
    """Switch._mpo_local's shape from the dataplane: active only when a member is bundled.

    Adds `flags` (Onyx port -> D/P/I) and `partner` (the LACP partner system MAC)."""
    members = sorted(
        (e for e in cfg.ethernets.values()
         if e.member and e.member.kind == "mlag-port-channel" and e.member.group == number),
        key=lambda e: int(e.name.split("/")[1]),
    )  # fmt: skip
    bond = states.get(f"mpo{number}") or {"up": False, "members": {}, "partner_mac": None}
    flags = {e.name: bond["members"].get(port_ifname(e.name), "D") for e in members}
    if not bond["up"]:
        flags = dict.fromkeys(flags, "D")
    return {
        "active": bond["up"] and "P" in flags.values(),
        "members": [e.name for e in members],
        "lacp": any(e.member.mode != "on" for e in members),
        "flags": flags,
        "partner": bond["partner_mac"],
    }


def summary_ports(local: dict) -> str:
    """`Eth1/1(P) Eth1/3(D)` as the summary's Local Ports column prints them."""
    return " ".join(f"Eth{port}({flag})" for port, flag in local["flags"].items()) or "N/A"
