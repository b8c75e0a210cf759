"""Show commands: text as printed by the real CLI, and `| json-print`.

Text layouts follow public captures (NVIDIA docs, HPE/Cray switch guides, the
mellanox.onyx fixtures). JSON: releases before 3.6.6000 print table outputs as
a list of dicts carrying a "header" key (or a dict of name -> dict); 3.6.6000
and later print a list of {"<name>": [ {...} ]} (or name -> [ {...} ]). Outputs
that are one record (`show version`, `show mlag`, `show mlag-vip`, `show
protocols`) stay a flat dict on every release: the collection's cliconf reads
`Product release` straight from `show version | json-print` on all releases.
`show vrrp` prints the manual's 3.6 table before 3.9 and its 3.9 table from 3.9 on
(quoted second-hand, no capture: docs/switches.md).
"""

from __future__ import annotations

import subprocess
import time

from . import lldp
from .dataplane import DataplaneError
from .objects import CliError, Unrecognized, parse_ethernet_range
from .runcfg import version_tuple
from .shows_format import to_json
from .shows_mlag import (
    show_magp,
    show_mlag,
    show_mlag_vip,
    show_mpo_summary,
    show_po_summary,
    show_vrrp,
)
from .switch import Switch

# `show version | json-print` of 3.10 has no `Product release` key (the release is
# only in `Version summary`: tests/fixtures/onyx/corpus/version_json_no_product_release.txt).
JSON_VERSION_WITHOUT_RELEASE = (3, 10, 0)


def dispatch(switch: Switch, words: list[str], json_print: bool) -> str:
    """words: the show command without `show`."""
    key = " ".join(words)
    table = {
        "version": show_version,
        "mlag": show_mlag,
        "mlag-vip": show_mlag_vip,
        "interfaces mlag-port-channel summary": show_mpo_summary,
        "interfaces port-channel summary": show_po_summary,
        "magp": show_magp,
        "vrrp": show_vrrp,
        "vlan": show_vlan,
        "protocols": show_protocols,
        "configuration files": show_configuration_files,
        "hosts": show_hosts,
        "dcb priority-flow-control": show_dcb_pfc,
    }
    if key in ("running-config", "running-config expanded"):
        if json_print:
            raise CliError("% JSON output is not supported for this command")
        return switch.running_config(expanded=key.endswith("expanded"))
    if words[:1] == ["magp"] and len(words) == 2:
        return show_magp(switch, json_print, only=words[1])
    if words[:3] == ["lldp", "interfaces", "ethernet"] and len(words) == 5 and words[4] == "remote":
        return show_lldp_remote(switch, words[3], json_print)
    handler = table.get(key)
    if handler is None:
        raise Unrecognized(words[0] if words else "show", "keyword")
    needs = {"mlag": "mlag", "mlag-vip": "mlag", "magp": "magp", "vrrp": "vrrp"}
    if key in needs and needs[key] not in switch.cfg.protocols:
        raise Unrecognized(words[0], "keyword")
    return handler(switch, json_print)


# ---------------------------------------------------------------------- version
def _uptime(switch: Switch) -> str:
    secs = time.time() - switch.started
    days, rest = divmod(secs, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{int(days)}d {int(hours)}h {int(minutes)}m {seconds:.3f}s"


def show_version(switch: Switch, json_print: bool) -> str:
    ident = switch.identity
    release = ident.release
    old = release.startswith("3.6")
    build_date = "2019-04-14 12:08:31" if old else "2021-06-30 08:39:40"
    data = {
        "Product name": "MLNX-OS" if old else "Onyx",
        "Product release": release,
        "Build ID": "#1-dev",
        "Build date": build_date,
        "Target arch": "x86_64",
        "Target hw": "x86_64",
        "Built by": "jenkins@e4f385ab3f49",
        "Version summary": f"X86_64 {release} {build_date} x86_64",
        "Product model": "x86onie",
        "Host ID": ident.host_mac.replace(":", "").upper(),
        "System serial num": f"MT17{ident.host_mac[-5:].replace(':', '')}X0",
        "System UUID": "0b19d6d0-5eca-11e6-8000-" + ident.host_mac.replace(":", "").lower(),
        "Uptime": _uptime(switch),
        "CPU load averages": "0.06 / 0.12 / 0.13",
        "Number of CPUs": "4",
        "System memory": "2597 MB used / 5213 MB free / 7810 MB total",
        "Swap": "0 MB used / 0 MB free / 0 MB total",
    }
    if json_print:
        if version_tuple(release) >= JSON_VERSION_WITHOUT_RELEASE:
            data = {k: v for k, v in data.items() if k != "Product release"}
        return to_json(data)
    lines = []
    for name, value in data.items():
        lines.append(f"{name + ':':<19}{value}")
        if name in ("Version summary", "System UUID"):
            lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------------- vlans, protocols
def show_vlan(switch: Switch, json_print: bool) -> str:
    cfg = switch.cfg
    ports: dict[int, list[str]] = {vlan: [] for vlan in cfg.vlans}
    ipl_pos = [p.id for p in cfg.port_channels.values() if p.ipl is not None]
    for eth in sorted(cfg.ethernets.values(), key=lambda e: int(e.name.split("/")[1])):
        if eth.member is None:
            ports[1].append(f"Eth{eth.name}")
    lags = [(f"Po{p.id}", p) for p in sorted(cfg.port_channels.values(), key=lambda p: p.id)]
    lags += [(f"Mpo{m.id}", m) for m in sorted(cfg.mpos.values(), key=lambda m: m.id)]
    for name, lag in lags:
        sp = lag.switchport
        vlans = set(cfg.vlans) if lag.id in ipl_pos and name.startswith("Po") else set()
        if sp.mode != "trunk":
            vlans.add(sp.access_vlan)
        vlans |= sp.allowed
        for vlan in vlans & set(ports):
            ports[vlan].append(name)
    names = {vlan: (cfg.vlans[vlan] or ("default" if vlan == 1 else "")) for vlan in cfg.vlans}
    if json_print:
        data = {}
        for vlan in sorted(cfg.vlans):
            body = {"Name": names[vlan], "Ports": ", ".join(ports[vlan])}
            data[str(vlan)] = [body] if switch.new_json else body
        return to_json(data)
    lines = [
        "",
        f"{'VLAN':<8}{'Name':<22}Ports",
        f"{'-' * 7} {'-' * 21} {'-' * 48}",
    ]
    for vlan in sorted(cfg.vlans):
        chunks = [ports[vlan][i : i + 5] for i in range(0, len(ports[vlan]), 5)] or [[]]
        first = True
        for chunk in chunks:
            label = f"{vlan:<8}{names[vlan]:<22}" if first else " " * 30
            lines.append((label + ", ".join(chunk)).rstrip())
            first = False
    return "\n".join(lines)


def show_protocols(switch: Switch, json_print: bool) -> str:
    cfg = switch.cfg
    on = {True: "enabled", False: "disabled"}
    data = {
        "Ethernet": "enabled",
        "IP L3": on[cfg.ip_routing],
        "bgp": "disabled",
        "dhcp-relay": "disabled",
        "igmp-snooping": "disabled",
        "lacp": on[cfg.lacp],
        "lldp": on[cfg.lldp],
        "magp": on["magp" in cfg.protocols],
        "mlag": on["mlag" in cfg.protocols],
        "ospf": "disabled",
        "pim": "disabled",
        "priority-flow-control": on[cfg.pfc_global],
        "ets": "enabled",
        "spanning-tree": "rst",
        "vrrp": on["vrrp" in cfg.protocols],
    }
    if json_print:
        return to_json(data)
    return "\n".join(f"{name + ':':<24}{state}" for name, state in data.items())


PFC_RULE = "-" * 49


def show_dcb_pfc(switch: Switch, json_print: bool) -> str:
    """`show dcb priority-flow-control`: global state, priority lists, one row per port.

    Text layout of the captures in NVIDIA/SmartX RoCE switch guides; JSON as the list of
    two records the mellanox.onyx onyx_pfc_interface module reads (`PFC admin`/`PFC
    oper` per `Eth1/n`). A port set `mode on` shows admin On; oper is Enabled only
    while PFC is on globally too.
    """
    cfg = switch.cfg
    enabled = sorted(cfg.pfc_priorities)
    disabled = [p for p in range(8) if p not in cfg.pfc_priorities]
    rows = []
    for eth in sorted(cfg.ethernets.values(), key=lambda e: tuple(map(int, e.name.split("/")))):
        admin = "On" if eth.pfc else "Auto"
        oper = "Enabled" if eth.pfc and cfg.pfc_global else "Disabled"
        rows.append((f"Eth{eth.name}", admin, oper))
    summary = {
        "PFC": "enabled" if cfg.pfc_global else "disabled",
        "Priority Enabled List": " ".join(map(str, enabled)),
        "Priority Disabled List": " ".join(map(str, disabled)),
    }
    if json_print:
        ports = {name: [{"PFC admin": admin, "PFC oper": oper}] for name, admin, oper in rows}
        return to_json([summary, ports])
    out = ["", *(f"{key}: {value}" for key, value in summary.items()), ""]
    out += [PFC_RULE, f"{'Interface':<17}{'PFC admin':<17}PFC oper", PFC_RULE]
    out += [f"{name:<17}{admin:<17}{oper}" for name, admin, oper in rows]
    return "\n".join(out) + "\n"


def show_configuration_files(switch: Switch, json_print: bool) -> str:
    unsaved = "yes" if switch.unsaved() else "no"
    if json_print:
        return to_json({"Active configuration": "initial", "Unsaved changes": unsaved})
    return "\n".join(
        [
            "initial (active)",
            "initial.bak",
            "",
            "Active configuration: initial",
            f"Unsaved changes : {unsaved}",
        ]
    )


def show_hosts(switch: Switch, json_print: bool) -> str:
    return f"Hostname: {switch.cfg.hostname}\nName servers:\n  none"


# ---------------------------------------------------------------------- lldp
def show_lldp_remote(switch: Switch, port_text: str, json_print: bool) -> str:
    """`show lldp interfaces ethernet 1/N remote`: what the switch's lldpd received there.

    LLDP is on by default (Onyx 3.8.2000 on); without a dataplane no neighbour exists."""
    ports = parse_ethernet_range(port_text)
    if len(ports) != 1:
        raise CliError(f"% Invalid interface ethernet {port_text}")
    port = ports[0]
    neighbors: list[dict] = []
    if switch.lldp_reader is not None:
        try:
            neighbors = switch.lldp_reader.neighbors().get(lldp.port_ifname(port), [])
        except (DataplaneError, OSError, subprocess.SubprocessError) as exc:
            raise CliError(f"% LLDP information is not available: {exc}") from None
    if json_print:
        return to_json(lldp.remote_json(port, neighbors))
    return lldp.render_remote(port, neighbors)
