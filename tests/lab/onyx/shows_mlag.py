"""The pair's show commands of the emulated switch: `show mlag`, `show mlag-vip`, the
MLAG and plain port-channel summaries, `show magp` and `show vrrp` (layouts: shows.py).
"""

from __future__ import annotations

import time

from .objects import CliError, Unrecognized
from .shows_format import ROW_RULE, old_text, print_records, to_json
from .switch import Switch


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
        return to_json(data)
    if old_text(switch):
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
        return "" if not json_print else to_json({})
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
        return to_json(data)
    if old_text(switch):
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
            return to_json(
                [
                    {"MLAG Port-Channel Flags": flags},
                    {"Port Flags": port_flags},
                    {"MLAG Port-Channel Summary": summary},
                ]
            )
        return to_json(
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
            return to_json([{"Flags": flags}, *[{name: [row]} for name, row in rows.items()]])
        return to_json({"Flags": flags, **{name: [row] for name, row in rows.items()}})
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
    return print_records(
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
    old = old_text(switch)
    columns = VRRP_COLUMNS_3_6 if old else VRRP_COLUMNS
    rows = [_vrrp_row(inst, old) for inst in switch.vrrp_view()]
    if json_print:  # no example of it anywhere: the table's rows, named by interface and VR
        named = [
            (f"{row[0]} {row[1]}", dict(zip((c for c, _ in columns), row, strict=True)))
            for row in rows
        ]
        return print_records(switch, named, True, [])

    def line(cells: list[str]) -> str:
        return "".join(
            f"{cell} ".ljust(width) for cell, (_, width) in zip(cells, columns, strict=True)
        ).rstrip()

    header = line([name for name, _ in columns])
    return "\n".join([header, "-" * len(header), *(line(row) for row in rows)])
