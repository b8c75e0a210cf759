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

import json
import subprocess
import time

from . import lldp
from .dataplane import DataplaneError
from .model import CliError, Unrecognized, parse_ethernet_range
from .runcfg import version_tuple
from .switch import Switch

ROW_RULE = "-" * 161
# Text layouts of `show mlag` and `show mlag-vip` changed with 3.9 (the 3.9.3210
# captures): before it, `Peers state Summary:` with unindented counters and an
# `MLAG VIP` / `========` header with the VIP as `a.b.c.d /24`.
NEW_TEXT_LAYOUT = (3, 9, 0)
# `show version | json-print` of 3.10 has no `Product release` key (the release is
# only in `Version summary`: tests/fixtures/onyx/corpus/version_json_no_product_release.txt).
JSON_VERSION_WITHOUT_RELEASE = (3, 10, 0)


def _old_text(switch: Switch) -> bool:
    return version_tuple(switch.identity.release) < NEW_TEXT_LAYOUT


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


def _json(data: object) -> str:
    return json.dumps(data, indent=4)


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
        return _json(data)
    lines = []
    for name, value in data.items():
        lines.append(f"{name + ':':<19}{value}")
        if name in ("Version summary", "System UUID"):
            lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------------- mlag
def _ipl_row(switch: Switch, status: dict) -> dict | None:
    ipl = status["ipl"]
    cfg = switch.cfg
    po = next((p for p in cfg.port_channels.values() if p.ipl == 1), None)
    svi = next((s for s in cfg.svis.values() if s.ipl_peer), None)
    if po is None and svi is None:
        return None
    up_time = "N/A"
    if status["ipl_up"] and switch.ipl_up_since:
        secs = int(time.time() - switch.ipl_up_since)
        up_time = f"0 days, {secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}"
    return {
        "Group Port-Channel": f"Po{po.id}" if po else "N/A",
        "Vlan Interface": str(svi.vlan) if svi else "N/A",
        "Operational State": "Up" if status["ipl_up"] else "Down",
        "Local IP address": ipl["local"] if ipl else (str(svi.ip.ip) if svi and svi.ip else "N/A"),
        "Peer IP address": svi.ipl_peer[1] if svi else "N/A",
        "Up Time": up_time,
        "Toggle Counter": str(switch.ipl_toggles),
    }


def show_mlag(switch: Switch, json_print: bool) -> str:
    with switch.lock:
        status = switch.status()
        cfg = switch.cfg
        counts = {"Inactive": 0, "Active-partial": 0, "Active-full": 0}
        for mpo in status["mpos"].values():
            counts[mpo["state"]] += 1
        enabled = sum(1 for m in cfg.mpos.values() if not m.shutdown)
        mac = switch.system_mac() + (" [Mismatched]" if status["mismatched"] else "")
        ipl = _ipl_row(switch, status)
        peer = status["peer"]
    conf = {
        "Configured": str(len(cfg.mpos)),
        "Disabled": str(len(cfg.mpos) - enabled),
        "Enabled": str(enabled),
    }
    if json_print:
        data = {
            "Admin status": "Enabled" if status["admin"] else "Disabled",
            "Operational status": "Up" if status["oper"] else "Down",
            "Reload-delay": "30 sec",
            "Keepalive-interval": "1 sec",
            "Upgrade-timeout": "60 min",
            "System-mac": mac,
            "MLAG Ports Configuration Summary": conf,
            "MLAG Ports Status Summary": {k: str(v) for k, v in counts.items()},
        }
        if ipl:
            data["MLAG IPLs Summary"] = {
                "1": [{k: v for k, v in ipl.items() if k not in ("Up Time", "Toggle Counter")}]
            }
        return _json(data)
    if _old_text(switch):
        return _show_mlag_3_6(switch, status, mac, conf, counts, ipl, peer)
    lines = [
        *_mlag_status_lines(status, mac),
        "",
        "MLAG Ports Configuration Summary:",
        f" Configured: {conf['Configured']}",
        f" Disabled:   {conf['Disabled']}",
        f" Enabled:    {conf['Enabled']}",
        "",
        "MLAG Ports Status Summary:",
        f" Inactive:       {counts['Inactive']}",
        f" Active-partial: {counts['Active-partial']}",
        f" Active-full:    {counts['Active-full']}",
        "",
        "MLAG IPLs Summary:",
        ROW_RULE,
        f"{'ID':<5}{'Group':<14}{'Vlan':<11}{'Operational':<13}{'Local':<41}{'Peer':<41}"
        f"{'Up Time':<21}Toggle Counter",
        f"{'':<5}{'Port-Channel':<14}{'Interface':<11}{'State':<13}{'IP address':<41}IP address",
        ROW_RULE,
    ]
    if ipl:
        lines.append(
            f"{'1':<5}{ipl['Group Port-Channel']:<14}{ipl['Vlan Interface']:<11}"
            f"{ipl['Operational State']:<13}{ipl['Local IP address']:<41}"
            f"{ipl['Peer IP address']:<41}{ipl['Up Time']:<21}{ipl['Toggle Counter']}"
        )
    lines += [
        "",
        "MLAG Members Summary:",
        "-" * 69,
        f"{'System-id':<20}{'State':<29}Hostname",
        "-" * 69,
        f"{switch.identity.host_mac.upper():<20}{'Up':<29}<{switch.identity.hostname}>",
    ]
    if peer and status["ipl"]:
        ident = peer["identity"]
        state = "Up" if status["ipl_up"] else "Down"
        lines.append(f"{ident['host_mac'].upper():<20}{state:<29}{ident['hostname']}")
    return "\n".join(lines)


def _mlag_status_lines(status: dict, mac: str) -> list[str]:
    """The first lines of `show mlag`, the same in the 3.6 and the 3.9 layouts."""
    return [
        f"Admin status: {'Enabled' if status['admin'] else 'Disabled'}",
        f"Operational status: {'Up' if status['oper'] else 'Down'}",
        "Reload-delay: 30 sec",
        "Keepalive-interval: 1 sec",
        "Upgrade-timeout: 60 min",
        f"System-mac: {mac}",
    ]


def _show_mlag_3_6(switch: Switch, status, mac, conf, counts, ipl, peer) -> str:
    """The pre-3.9 text layout: unindented counters, `Peers state Summary:`."""
    lines = [
        *_mlag_status_lines(status, mac),
        "",
        "MLAG Ports Configuration Summary:",
        *(f"{name}: {value}" for name, value in conf.items()),
        "",
        "MLAG Ports Status Summary:",
        *(f"{name}: {value}" for name, value in counts.items()),
        "",
        "",
        "MLAG IPLs Summary:",
        f"{'ID':<5}{'Group':<15}{'Vlan':<11}{'Operational':<13}{'Local':<18}Peer",
        f"{'':<5}{'Port-Channel':<15}{'Interface':<11}{'State':<13}{'IP address':<18}IP address",
        "-" * 74,
    ]
    if ipl:
        lines.append(
            f"{'1':<5}{ipl['Group Port-Channel']:<15}{ipl['Vlan Interface']:<11}"
            f"{ipl['Operational State']:<13}{ipl['Local IP address']:<18}{ipl['Peer IP address']}"
        )
    lines += ["", "Peers state Summary:", f"{'System-id':<20}{'State':<7}Hostname", "-" * 35]
    lines.append(f"{switch.identity.host_mac.upper():<20}{'Up':<7}<{switch.identity.hostname}>")
    if peer and status["ipl"]:
        ident = peer["identity"]
        state = "Up" if status["ipl_up"] else "Down"
        lines.append(f"{ident['host_mac'].upper():<20}{state:<7}{ident['hostname']}")
    return "\n".join(lines)


def show_mlag_vip(switch: Switch, json_print: bool) -> str:
    vip = switch.vip_view()
    if vip is None:
        return "" if not json_print else _json({})
    domain, address, prefix = switch.cfg.vip
    ident = switch.identity
    rows = [(ident.hostname, vip["role"], ident.mgmt_ip)]
    if vip["peer"]:
        pid = vip["peer"]["identity"]
        rows.append(
            (pid["hostname"], "standby" if vip["role"] == "master" else "master", pid["mgmt_ip"])
        )
    rows.sort(key=lambda r: r[1] != "master")
    if json_print:
        data: dict = {
            "MLAG-VIP": {
                "MLAG group name": domain,
                "MLAG VIP address": f"{address}/{prefix}",
                "Active nodes": str(len(rows)),
            }
        }
        for host, role, ip in rows:
            data[host] = [{"VIP-State": role, "IP Address": ip}]
        return _json(data)
    if _old_text(switch):
        lines = [
            "MLAG VIP",
            "========",
            f"MLAG group name: {domain}",
            f"MLAG VIP address: {address} /{prefix}",
            f"Active nodes: {len(rows)}",
            "",
            f"{'Hostname':<25}{'VIP-State':<21}IP Address",
            "-" * 58,
        ]
        return "\n".join(lines + [f"{host:<25}{role:<21}{ip}" for host, role, ip in rows])
    lines = [
        "MLAG-VIP:",
        f" MLAG group name: {domain}",
        f" MLAG VIP address: {address}/{prefix}",
        f" Active nodes: {len(rows)}",
        "",
        "-" * 82,
        f"{'Hostname':<41}{'VIP-State':<21}IP Address",
        "-" * 82,
    ]
    lines += [f"{host:<41}{role:<21}{ip}" for host, role, ip in rows]
    return "\n".join(lines)


def _ports(local: dict, flag: str) -> str:
    """`Eth1/1(P) ...`: each member's own flag when a dataplane reported it (D/P/I),
    else the MPO's flag for all; an MPO suspended by MLAG shows S on every member."""
    flags = local.get("flags")
    if flags is not None and flag != "S":
        return " ".join(f"Eth{port}({member})" for port, member in flags.items())
    return " ".join(f"Eth{m}({flag})" for m in local.get("members", []))


def show_mpo_summary(switch: Switch, json_print: bool) -> str:
    status = switch.status()
    flags = "D-Down, U-Up, P-Partial UP, S - suspended by MLAG"
    port_flags = {
        "D": "Down",
        "P": "Up in port-channel (members)",
        "S": "Suspend in port-channel (members)",
        "I": "Individual",
    }
    rows = {}
    for index, (number, mpo) in enumerate(status["mpos"].items(), start=1):
        member_flag = {"U": "P", "P": "P", "S": "S", "D": "D"}[mpo["flag"]]
        local = _ports(mpo["local"], member_flag) or "N/A"
        remote = mpo["remote"]
        peer_flag = "P" if remote and remote["active"] else "D"
        peer_ports = _ports(remote or {"members": []}, peer_flag)
        rows[f"{index} Mpo{number}({mpo['flag']})"] = {
            "Type": "LACP" if mpo["local"]["lacp"] else "Static",
            "Local Ports (D/P/S/I)": local,
            "Peer Ports (D/P/S/I)": peer_ports or "N/A",
        }
    if json_print:
        if switch.new_json:
            summary = [{name: [row] for name, row in rows.items()}] if rows else []
            return _json(
                [
                    {"MLAG Port-Channel Flags": flags},
                    {"Port Flags": port_flags},
                    {"MLAG Port-Channel Summary": summary},
                ]
            )
        return _json(
            {
                "MLAG Port-Channel Flags": flags,
                "Port Flags": port_flags,
                "MLAG Port-Channel Summary": {name: [row] for name, row in rows.items()},
            }
        )
    rule = "  " + "-" * 78
    lines = [
        "MLAG Port-Channel Flags: D-Down, U-Up, P-Partial UP, S-suspended by MLAG",
        "",
        "Port Flags:",
        *[f"  {k}: {v}" for k, v in port_flags.items()],
        "",
        "MLAG Port-Channel Summary:",
        rule,
        f"  {'Group':<19}{'Type':<9}{'Local':<26}Peer",
        f"  {'Port-Channel':<28}{'Ports':<26}Ports",
        f"  {'(D/U/P/S)':<28}{'(D/P/S/I)':<26}(D/P/S/I)",
        rule,
    ]
    for name, row in rows.items():
        lines.append(
            f"  {name:<19}{row['Type']:<9}{row['Local Ports (D/P/S/I)']:<26}"
            f"{row['Peer Ports (D/P/S/I)']}"
        )
    return "\n".join(lines)


def show_po_summary(switch: Switch, json_print: bool) -> str:
    cfg = switch.cfg
    flags = {
        "D": "Down",
        "U": "Up",
        "P": "Up in port-channel (members)",
        "S": "Suspend in port-channel (members)",
        "I": "Individual",
    }
    rows = {}
    for index, po in enumerate(sorted(cfg.port_channels.values(), key=lambda p: p.id), start=1):
        members = [
            e
            for e in sorted(cfg.ethernets.values(), key=lambda e: int(e.name.split("/")[1]))
            if e.member and e.member.kind == "port-channel" and e.member.group == po.id
        ]
        up = bool([e for e in members if not e.shutdown]) and not po.shutdown
        ports = " ".join(
            f"Eth{e.name}({'D' if e.shutdown or po.shutdown else 'P'})" for e in members
        )
        lacp = any(e.member.mode != "on" for e in members)
        rows[f"{index} Po{po.id}({'U' if up else 'D'})"] = {
            "Type": "LACP" if lacp else "STATIC",
            "Member Ports": ports,
        }
    if json_print:
        if switch.new_json:
            return _json([{"Flags": flags}, *[{name: [row]} for name, row in rows.items()]])
        return _json({"Flags": flags, **{name: [row] for name, row in rows.items()}})
    lines = [
        "Flags: D - Down, U - Up, P - Up in port-channel (members)",
        "       S - Suspend in port-channel (members), I - Individual",
        "",
        "-" * 80,
        f"{'Group':<14}{'Type':<12}Member Ports",
        "Port-Channel",
        "-" * 80,
    ]
    lines += [f"{name:<14}{row['Type']:<12}{row['Member Ports']}" for name, row in rows.items()]
    return "\n".join(lines)


# ---------------------------------------------------------------------- gateways
def show_magp(switch: Switch, json_print: bool, only: str | None = None) -> str:
    if "magp" not in switch.cfg.protocols:
        raise Unrecognized("magp", "keyword")
    states = switch.magp_states()
    if only is not None:
        if not only.isdigit() or int(only) not in states:
            raise CliError(f"% MAGP instance {only} does not exist")
        states = {int(only): states[int(only)]}
    records = []
    for magp_id in sorted(states):
        st = states[magp_id]
        records.append(
            (
                f"MAGP {magp_id}",
                {
                    "Interface vlan": str(st["vlan"]),
                    "Admin state": "Enabled",
                    "State": st["state"],
                    "Virtual IP": st["address"],
                    "Virtual MAC": st["mac"],
                },
            )
        )
    return _records(
        switch,
        records,
        json_print,
        ["Interface vlan", "Admin state", "State", "Virtual IP", "Virtual MAC"],
    )


# `show vrrp`: one row per virtual router, the Onyx manual's two table layouts as
# quoted second-hand (docs/switches.md, "VRRP"): 3.6 and, from 3.9, a wider one.
VRRP_COLUMNS_3_6 = [("Interface", 11), ("VR", 4), ("Pri", 5), ("Time", 6), ("Pre", 5)]
VRRP_COLUMNS_3_6 += [("State", 8), ("VR IP addr", 0)]
VRRP_COLUMNS = [("Interface", 11), ("VR", 5), ("Admin State", 13), ("Priority", 10)]
VRRP_COLUMNS += [("Adv-Intvl", 11), ("Preempt", 10), ("State", 8), ("VR IP addr", 0)]


def _vrrp_row(inst: dict, old: bool) -> list[str]:
    head = [f"Vlan{inst['vlan']}", str(inst["vrid"])]
    tail = [inst["state"], inst["address"]]
    if old:
        middle = [str(inst["priority"]), f"{inst['interval']}s", "Y" if inst["preempt"] else "N"]
        return [*head, *middle, *tail]
    admin = "Enabled" if inst["admin"] else "Disabled"
    preempt = "Enabled" if inst["preempt"] else "Disabled"
    return [*head, admin, str(inst["priority"]), str(inst["interval"]), preempt, *tail]


def show_vrrp(switch: Switch, json_print: bool) -> str:
    old = _old_text(switch)
    columns = VRRP_COLUMNS_3_6 if old else VRRP_COLUMNS
    rows = [_vrrp_row(inst, old) for inst in switch.vrrp_view()]
    if json_print:  # no example of it anywhere: the table's rows, named by interface and VR
        named = [
            (f"{row[0]} {row[1]}", dict(zip((c for c, _ in columns), row, strict=True)))
            for row in rows
        ]
        return _records(switch, named, True, [])

    def line(cells: list[str]) -> str:
        return "".join(
            f"{cell} ".ljust(width) for cell, (_, width) in zip(cells, columns, strict=True)
        ).rstrip()

    header = line([name for name, _ in columns])
    return "\n".join([header, "-" * len(header), *(line(row) for row in rows)])


def _records(
    switch: Switch, records: list[tuple[str, dict]], json_print: bool, keys: list[str]
) -> str:
    if json_print:
        if switch.new_json:
            return _json([{name: [body]} for name, body in records])
        return _json([{**body, "header": name} for name, body in records])
    width = max(len(k) for k in keys)
    lines = []
    for name, body in records:
        lines += ["", f"{name}:"]
        lines += [f"  {k:<{width}}: {body[k]}" for k in keys]
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
        return _json(data)
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
        return _json(data)
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
        return _json([summary, ports])
    out = ["", *(f"{key}: {value}" for key, value in summary.items()), ""]
    out += [PFC_RULE, f"{'Interface':<17}{'PFC admin':<17}PFC oper", PFC_RULE]
    out += [f"{name:<17}{admin:<17}{oper}" for name, admin, oper in rows]
    return "\n".join(out) + "\n"


def show_configuration_files(switch: Switch, json_print: bool) -> str:
    unsaved = "yes" if switch.unsaved() else "no"
    if json_print:
        return _json({"Active configuration": "initial", "Unsaved changes": unsaved})
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
        return _json(lldp.remote_json(port, neighbors))
    return lldp.render_remote(port, neighbors)
