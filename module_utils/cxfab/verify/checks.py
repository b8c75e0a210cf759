"""Verification checks: fabric intent + what was read back -> checks in the report's shape.

Pure functions, no I/O. `playbooks/verify.yml` gathers the observations (host
facts, read-only module runs, switch health, QoS and workload measurements) and
`cxfab_verify_checks` turns them into checks here:

    {id, target, category, status: pass|fail|skip, expected, observed, message}

A check that cannot be judged is `skip` with the reason in `message`; nothing
that was not observed ever passes.
"""

from __future__ import annotations

from ..common.checks import Checks, merge
from ..host.net.cpulist import format_cpulist, parse_cpulist
from ..structured.packed import Unpacked
from .nic_health import health_checks
from .pfc import roce_load

# /proc/net/bonding prints the mode as a sentence.
BOND_MODE_TEXT = {
    "802.3ad": "IEEE 802.3ad Dynamic link aggregation",
    "active-backup": "fault-tolerance (active-backup)",
    "balance-xor": "load balancing (xor)",
}
# Per-lane data rate in Mb/s after line encoding, as the kernel computes it
# (PCIE_SPEED2MBS_ENC): 8b/10b up to 5 GT/s, 128b/130b from 8 GT/s on.
PCIE_LANE_MBPS = {2.5: 2000, 5.0: 4000, 8.0: 7876, 16.0: 15753, 32.0: 31507, 64.0: 63015}


# ---------------------------------------------------------------- helpers


def pcie_gbps(speed_text, width) -> float | None:
    """`current_link_speed` ("8.0 GT/s PCIe") x `current_link_width` -> usable Gb/s."""
    try:
        gts, lanes = float(str(speed_text).split()[0]), int(width)
    except (ValueError, IndexError, TypeError):
        return None
    per_lane = PCIE_LANE_MBPS.get(gts)
    return per_lane * lanes / 1000.0 if per_lane and lanes > 0 else None


def rdma_rate_gbps(rate_text) -> float | None:
    """`/sys/class/infiniband/<dev>/ports/<p>/rate` ("100 Gb/sec (4X EDR)") -> 100.0."""
    parts = str(rate_text or "").split()
    if len(parts) < 2 or not parts[1].startswith("Gb/sec"):
        return None
    try:
        return float(parts[0])
    except ValueError:
        return None


def format_map(mapping: dict) -> str:
    """{0: 1, 1: 1} -> "0:1 1:1 2:0 ..." over all eight priorities (missing = 0)."""
    clean = {int(k): int(v) for k, v in (mapping or {}).items()}
    return " ".join(f"{prio}:{clean.get(prio, 0)}" for prio in range(8))


def _gbps(bits) -> str:
    return f"{float(bits) / 1e9:.3f} Gb/s"


def _failed(result) -> bool:
    return isinstance(result, dict) and bool(result.get("failed") or result.get("unreachable"))


def _absent(result) -> bool:
    return not isinstance(result, dict) or bool(result.get("skipped"))


def _tool_missing(message: str) -> bool:
    text = message.lower()
    return "no tool for" in text or "not found in path" in text or "not an executable" in text


def _data_ports(host: dict) -> list[dict]:
    return [port for nic in host.get("nics") or [] for port in nic.get("ports") or []]


# ---------------------------------------------------------------- host checks


def host_checks(name: str, sc: dict, data: dict | None) -> list[dict]:
    """Every check of one host from its structured config and the data gathered on it."""
    out = Checks(name)
    if not data:
        out.fail(
            "host.data",
            "verification data gathered on the host",
            "nothing gathered",
            "the host was unreachable or its verify tasks failed before gathering",
        )
        return out
    facts_result = data.get("facts")
    if isinstance(facts_result, dict) and facts_result.get("unreachable"):
        # Every later read of the host would fail the same way: one check says it.
        out.fail(
            "host.data",
            "verification data gathered on the host",
            "host unreachable",
            str(facts_result.get("msg", "unreachable")),
        )
        return out
    facts = {}
    if _absent(facts_result) or _failed(facts_result):
        observed = (facts_result or {}).get("msg", "not gathered")
        out.fail("host.facts", "host facts read", observed)
    else:
        facts = facts_result.get("facts") or {}
    intent = sc["network"]
    firmware, link_type = data.get("firmware") or [], data.get("link_type") or []
    if "nic_state" in data:  # verify.yml reads every NIC in one call (cxfab_nic_state)
        firmware, link_type = nic_state_results(sc, data["nic_state"])
    found = [*out, *firmware_checks(name, firmware)]
    found += link_type_checks(name, link_type)
    found += drift_check(name, data.get("network"))
    if facts:
        found += link_checks(name, sc, facts) + mtu_checks(name, intent, facts)
        found += probe_checks(name, facts.get("probes") or [])
        found += egress_checks(name, intent, facts) + irq_checks(name, sc, facts)
        found += bond_checks(name, intent, facts) + rdma_checks(name, sc, facts)
    # Imported here: checks_ib and checks_roce build on Checks, defined above.
    from .ib import ib_checks
    from .roce import roce_checks

    if facts:
        found += roce_checks(name, sc, facts)

    # The IB readings come with the host facts (absent there: the facts were not read).
    found += ib_checks(name, sc, facts_result if not facts else {"ib": facts.get("ib")})
    return (
        found
        + qos_readback_checks(name, data.get("qos"))
        + lossless_checks(name, sc, data.get("qos"))
    )


def _nic(result: dict) -> dict:
    return result.get("item") or {}


def _unreadable(out: Checks, check_id: str, expected: str, result: dict) -> None:
    message = str(result.get("msg", "query failed"))
    if _tool_missing(message):
        out.skip(check_id, expected, message)
    else:
        out.fail(check_id, expected, "unreadable", message)


def nic_state_results(sc: dict, result) -> tuple[list[dict], list[dict]]:
    """cxfab_nic_state's one reading as the per-NIC query results the checks judge
    (each with its NIC as `item`); a reading that failed, or a NIC it does not name,
    gives that NIC's results as failed, with the module's message."""
    nics = sc.get("nics") or []
    with_firmware = [n for n in nics if n.get("firmware")]
    with_ports = [n for n in nics if any(p.get("link_type") for p in n.get("ports") or [])]
    if _absent(result) or not result:  # not run in this verify (its section not selected)
        return [], []
    if _failed(result):
        failed = {"failed": True, "msg": str(result.get("msg", "NIC state not read"))}
        return [{**failed, "item": n} for n in with_firmware], [
            {**failed, "item": n} for n in with_ports
        ]
    read = {entry.get("pci"): entry for entry in result.get("nics") or []}
    missing = {"failed": True, "msg": "not in cxfab_nic_state's reading"}
    firmware = [
        {"item": n, **((read.get(n["pci"]) or {}).get("firmware") or missing)}
        for n in with_firmware
    ]
    link_type = [
        {"item": n, **((read.get(n["pci"]) or {}).get("link_type") or missing)} for n in with_ports
    ]
    return firmware, link_type


def firmware_checks(name: str, results: list[dict]) -> list[dict]:
    """Firmware version running and PSID, from `cxfab_nic_firmware state=query`."""
    out = Checks(name)
    for result in (r for r in results if not _absent(r)):
        nic, wanted = _nic(result).get("name", "nic"), _nic(result).get("firmware") or {}
        version_id, psid_id = f"firmware.{nic}.version", f"firmware.{nic}.psid"
        expected_version = f"{wanted.get('version')} in flash and running"
        if _failed(result):
            _unreadable(out, version_id, expected_version, result)
            if wanted.get("psid"):
                _unreadable(out, psid_id, wanted["psid"], result)
            continue
        observed = f"flash {result.get('flash_version')}, running {result.get('running_version')}"
        in_flash, running = bool(result.get("target_in_flash")), bool(result.get("target_running"))
        pending = "in flash, awaiting activation (reset or reboot)" if in_flash else ""
        pending = "" if running else pending
        out.judge(version_id, in_flash and running, expected_version, observed, pending)
        if wanted.get("psid"):
            psid = result.get("psid") or "unknown"
            out.judge(psid_id, psid == wanted["psid"], wanted["psid"], psid)
    return out


def link_type_checks(name: str, results: list[dict]) -> list[dict]:
    """Port protocol (LINK_TYPE_P<n>) current and next boot, from a query run."""
    out = Checks(name)
    for result in (r for r in results if not _absent(r)):
        nic = _nic(result).get("name", "nic")
        if _failed(result):
            for port in _nic(result).get("ports") or []:
                expected = str(port.get("link_type", "eth")).upper()
                _unreadable(out, f"link_type.{nic}.p{port.get('port')}", expected, result)
            continue
        for port in result.get("ports") or []:
            desired = str(port.get("desired")).upper()
            current = str(port.get("current") or "unknown").upper()
            next_boot = str(port.get("next_boot") or "unknown").upper()
            pending = "set for next boot, activation pending" if next_boot == desired else ""
            out.judge(
                f"link_type.{nic}.p{port.get('port')}",
                current == desired == next_boot,
                f"{desired} current and next boot",
                f"current {current}, next boot {next_boot}",
                "" if current == desired == next_boot else pending,
            )
    return out


def drift_check(name: str, result) -> list[dict]:
    """host_network in check mode: the actions it would take are the drift."""
    out = Checks(name)
    expected = "bond, members, VLANs, MTUs and addresses as intended"
    if _absent(result):
        return out
    if _failed(result):
        out.fail("network.config", expected, "unreadable", str(result.get("msg", "failed")))
        return out
    actions = result.get("actions") or []
    out.judge("network.config", not actions, expected, "; ".join(actions) or "no difference")
    return out


def link_checks(name: str, host: dict, facts: dict) -> list[dict]:
    """Carrier and speed of every adapter port."""
    out = Checks(name)
    netdevs = facts.get("netdevs") or {}
    for port in _data_ports(host):
        dev, wanted = port["netdev"], port.get("speed_gbps")
        info = netdevs.get(dev) or {}
        if not info.get("exists"):
            out.fail(f"link.{dev}.up", "operstate up, carrier 1", "interface missing")
            continue
        up = info.get("operstate") == "up" and info.get("carrier") == 1
        observed = f"operstate {info.get('operstate')}, carrier {info.get('carrier')}"
        out.judge(f"link.{dev}.up", up, "operstate up, carrier 1", observed)
        speed_id = f"link.{dev}.speed"
        if not wanted:
            out.skip(speed_id, "not set", "no speed_gbps in the intent")
        elif not info.get("speed_mbps"):
            driver = info.get("driver") or "unknown"
            out.skip(speed_id, f"{wanted} Gb/s", f"the {driver} driver reports no speed for {dev}")
        else:
            got = info["speed_mbps"]
            out.judge(speed_id, got == wanted * 1000, f"{wanted} Gb/s", f"{got / 1000:g} Gb/s")
    return out


def mtu_checks(name: str, intent: dict, facts: dict) -> list[dict]:
    """MTU of the bond, its members and the VLAN interfaces."""
    out = Checks(name)
    wanted = [(intent["bond"]["name"], intent["bond"]["mtu"])] if intent["bond"] else []
    wanted += [(i["name"], i["mtu"]) for i in intent["members"] + intent["vlans"]]
    mtus = facts.get("mtus") or {}
    for interface, mtu in wanted:
        got = mtus.get(interface)
        out.judge(f"mtu.{interface}", got == mtu, str(mtu), "missing" if got is None else str(got))
    return out


def probe_checks(name: str, probes: list[dict]) -> list[dict]:
    """DF pings at the VLAN MTU, sent by the host facts module."""
    out = Checks(name)
    for probe in probes:
        expected = (
            f"reply to {probe['size'] + 28}-byte packets with DF (MTU {probe['mtu']}) "
            f"from {probe['address']} over {probe['interface']}"
        )
        if probe.get("skip"):
            out.skip(probe["id"], expected, probe["skip"])
        else:
            observed = "reply" if probe.get("ok") else str(probe.get("error") or "no reply")
            out.judge(probe["id"], bool(probe.get("ok")), expected, observed)
    return out


def egress_checks(name: str, intent: dict, facts: dict) -> list[dict]:
    """Each QoS VLAN's egress map equals the intent (every socket priority -> its UP)."""
    out = Checks(name)
    vlans = facts.get("vlans") or {}
    for vlan in (v for v in intent["vlans"] if v.get("egress_qos_map") is not None):
        info, expected = vlans.get(vlan["name"]) or {}, format_map(vlan["egress_qos_map"])
        check_id = f"qos.egress.{vlan['name']}"
        if not info.get("exists"):
            out.fail(check_id, expected, "interface missing")
            continue
        observed = format_map(info.get("egress_qos_map"))
        out.judge(check_id, observed == expected, expected, observed)
    return out


def qos_readback_checks(name: str, result) -> list[dict]:
    """cxfab_host_qos in check mode: per port, the differences found before any change."""
    out = Checks(name)
    if _absent(result):
        return out
    plan = result.get("plan") or {}
    limits = ", ".join(
        f"TC{tc['tc']} {tc['rate_limit_mbps']} Mb/s"
        for tc in plan.get("tcs") or []
        if isinstance(tc, dict) and tc.get("rate_limit_mbps")
    )
    expected = f"prio->TC {plan.get('prio_tc', 'as planned')}, limits {limits or 'none'}"
    if _failed(result):
        out.fail("qos.readback", expected, "unreadable", str(result.get("msg", "failed")))
        return out
    for port, info in sorted((result.get("ports") or {}).items()):
        found = info.get("differences_before") or []
        observed = "; ".join(found) or f"as planned (backend {info.get('backend')})"
        out.judge(f"qos.readback.{port}", not found, expected, observed)
    return out


def lossless_checks(name: str, sc: dict, result) -> list[dict]:
    """Trust, PFC and ECN of each lossless port, as cxfab_host_qos (check mode) read them."""
    out = Checks(name)
    plan = sc.get("lossless")
    if not plan:
        out.skip(
            "lossless.host",
            "lossless RoCE (trust dscp, PFC, ECN)",
            "not configured: cxfab_roce.lossless is off or the host carries no RoCE VLAN",
        )
        return out
    pfc_on = [p for p, flag in enumerate(plan["pfc"]) if flag]
    expected = {
        "trust": f"trust {plan['trust']}",
        "pfc": f"PFC on priorities {pfc_on} only",
        "ecn": f"ECN (roce_np, roce_rp) on priorities {plan['ecn_priorities']}",
    }
    if _absent(result) or _failed(result):
        why = "not read" if _absent(result) else str(result.get("msg", "failed"))
        for port in plan["ports"]:
            for kind, text in expected.items():
                out.fail(f"{kind}.{port}", text, "unreadable", why)
        return out
    ports = result.get("ports") or {}
    for port in plan["ports"]:
        info = ports.get(port) or {}
        # What the port held as read, never "observed": in check mode (verify) that is
        # the planned state, and a check on it would pass a removed PFC setting.
        observed = info.get("read") or {}
        trust = observed.get("trust")
        out.judge(f"trust.{port}", trust == plan["trust"], expected["trust"],
                  f"trust {trust}" if trust else "not read")  # fmt: skip
        pfc = observed.get("pfc")
        seen = [p for p, flag in enumerate(pfc) if flag] if isinstance(pfc, list) else None
        out.judge(f"pfc.{port}", pfc == plan["pfc"], expected["pfc"],
                  f"PFC on priorities {seen}" if seen is not None else "not read")  # fmt: skip
        knobs = (info.get("ecn") or {}).get("before")
        if not knobs:
            out.fail(f"ecn.{port}", expected["ecn"], "not read")
            continue
        missing = sorted(k for k, v in knobs.items() if v is None)
        off = sorted(k for k, v in knobs.items() if v == 0)
        observed_ecn = ", ".join(f"{k} {'-' if v is None else v}" for k, v in sorted(knobs.items()))
        if off:
            out.fail(f"ecn.{port}", expected["ecn"], observed_ecn, f"ECN off: {', '.join(off)}")
        elif missing:
            out.warn(
                f"ecn.{port}",
                expected["ecn"],
                observed_ecn,
                f"the driver exposes no ECN knob {', '.join(missing)}: ECN could be "
                "neither set nor read on this port",
            )
        else:
            out.judge(f"ecn.{port}", True, expected["ecn"], observed_ecn)
    return out


def irq_checks(name: str, sc: dict, facts: dict) -> list[dict]:
    """Effective affinity of every NIC IRQ inside the NIC-local CPUs (or the CPU list)."""
    out = Checks(name)
    settings = sc["irq"] or {"policy": "off"}
    policy = settings["policy"]
    bond = sc["network"]["bond"]
    ports = settings.get("interfaces") or (
        bond["members"] if bond else [p["netdev"] for p in _data_ports(sc)]
    )
    netdevs = facts.get("netdevs") or {}
    for dev in ports:
        check_id, info = f"irq.{dev}", netdevs.get(dev) or {}
        if policy == "off":
            out.skip(check_id, "left alone", "irq_affinity.policy is off")
            continue
        if not info.get("exists"):
            out.fail(check_id, "NIC-local CPUs", "interface missing")
            continue
        node = info.get("numa_node")
        if policy == "cpulist":
            wanted, where = parse_cpulist(settings.get("cpus", "")), "irq_affinity.cpus"
        elif node is None or node < 0:
            reason = f"the platform reports no NUMA node for {info.get('pci') or dev}"
            out.skip(check_id, "NIC-local CPUs", reason)
            continue
        else:
            wanted, where = parse_cpulist(info.get("node_cpus") or ""), f"NUMA node {node}"
        expected = f"affinity within CPUs {format_cpulist(wanted)} ({where})"
        placed, outside, pending = [], [], []
        for irq in info.get("irqs") or []:
            # The requested CPUs are where the kernel sends the IRQ; on x86 (no
            # interrupt remapping) the effective CPU follows at its next interrupt,
            # so an IRQ that has not fired since it was pinned still shows the old
            # one. The request decides; a pending move is named in the message.
            requested, effective = irq.get("requested") or "", irq.get("effective")
            cpus = set(parse_cpulist(requested))
            shown = (
                requested if effective in (None, requested) else f"{requested} (now {effective})"
            )
            placed.append(f"{irq['irq']}->{shown or '?'}")
            if not cpus or not cpus <= set(wanted):
                outside.append(str(irq["irq"]))
            elif not set(parse_cpulist(effective or requested)) <= set(wanted):
                pending.append(str(irq["irq"]))
        if not placed:
            out.fail(check_id, expected, "no MSI-X IRQ found")
            continue
        if outside:
            message = f"IRQ {', '.join(outside)} outside {format_cpulist(wanted)}"
        elif pending:
            message = f"IRQ {', '.join(pending)} move at their next interrupt (none since pinned)"
        else:
            message = ""
        out.judge(check_id, not outside, expected, "IRQ " + ", ".join(placed), message)
    return out


def bond_checks(name: str, intent: dict, facts: dict) -> list[dict]:
    """Bond mode, and every member enslaved with MII up (in the active aggregator for LACP)."""
    out, bond = Checks(name), intent["bond"]
    if not bond:
        return out
    info, prefix = facts.get("bond") or {}, f"bond.{bond['name']}"
    mode = BOND_MODE_TEXT.get(bond["mode"], bond["mode"])
    if not info.get("exists"):
        out.fail(f"{prefix}.mode", mode, "bond missing")
        return out
    out.judge(f"{prefix}.mode", info.get("mode") == mode, mode, info.get("mode") or "unknown")
    lacp = bond["mode"] == "802.3ad"
    active = info.get("active_aggregator")
    expected = "enslaved, MII Status: up" + (", in the active aggregator" if lacp else "")
    for member in bond["members"]:
        state = (info.get("members") or {}).get(member)
        if state is None:
            out.fail(f"{prefix}.{member}", expected, "not enslaved")
            continue
        observed, ok = f"MII Status: {state.get('mii_status')}", state.get("mii_status") == "up"
        if lacp and active is not None:
            observed += f", aggregator {state.get('aggregator')} (active {active})"
            ok = ok and state.get("aggregator") == active
        out.judge(f"{prefix}.{member}", ok, expected, observed)
    return out


def rdma_checks(name: str, sc: dict, facts: dict) -> list[dict]:
    """Each RDMA device of the intent exists on its netdev with port 1 ACTIVE."""
    out = Checks(name)
    devices = facts.get("rdma") or {}
    for device in sc["rdma"]["devices"]:
        info, check_id = devices.get(device["name"]), f"rdma.{device['name']}.state"
        expected = f"port 1 ACTIVE on {device['netdev']}"
        if not info:
            out.fail(check_id, expected, "device missing")
            continue
        ok = "ACTIVE" in str(info.get("state")) and info.get("netdev") == device["netdev"]
        rate = info.get("rate") or "rate unknown"
        observed = f"{info.get('state')} ({rate}) on {info.get('netdev')}"
        out.judge(check_id, ok, expected, observed)
    return out


# ---------------------------------------------------------------- switch checks


def switch_checks(results: dict) -> list[dict]:
    """Health checks returned per switch (already in the report's shape), or the error."""
    found = []
    for switch, result in sorted((results or {}).items()):
        if _absent(result):
            continue
        checks = result.get("checks") or []
        if not checks:
            out = Checks(switch)
            out.fail("switch.health", "health checks ran", "not run", str(result.get("msg", "")))
            found += out
        keys = ("id", "target", "category", "status", "expected", "observed", "message")
        found += [{k: check.get(k, "") for k in keys} for check in checks]
    return found


# ---------------------------------------------------------------- QoS measurement


def qos_checks(measurements: dict, tolerance: float) -> tuple[list[dict], list[dict]]:
    """Per-VLAN throughput: within `tolerance` of its limit; the unlimited VLAN above all.

    `measurements`: {client host: {results: [{vlan, limit_mbps, measured_mbps,
    configured_limit_mbps?, verdict?, reason?}]} or a failed result}. The measurement's
    own verdict (cxfab_qos_measure: rounds measured at the same moment) is reported as
    it is: an inconclusive one (the machine was starved) is a warning with its reason,
    never a pass. A row without a verdict is judged here on its reading alone.
    Returns (checks, report series).
    """
    found, series = [], []
    for host, result in sorted((measurements or {}).items()):
        out = Checks(host)
        if _absent(result):
            continue
        if _failed(result):
            out.fail(
                "qos.measure",
                "per-VLAN iperf3 measurement",
                "not measured",
                str(result.get("msg", "measurement failed")),
            )
        rows = result.get("results") or []
        highest = max((float(r["limit_mbps"]) for r in rows if r.get("limit_mbps")), default=0.0)
        for row in rows:
            measured, limit = float(row["measured_mbps"]), row.get("limit_mbps")
            series.append(
                {
                    "target": host,
                    "vlan": row["vlan"],
                    "limit_mbps": limit,
                    "measured_mbps": measured,
                }
            )
            check_id = f"qos.vlan{row['vlan']}.throughput"
            if limit:
                ratio, configured = measured / float(limit), row.get("configured_limit_mbps")
                scaled = configured and float(configured) != float(limit)
                note = f" (configured {configured} Mb/s, shaped at {limit})" if scaled else ""
                expected = f"{float(limit):g} Mb/s +/- {tolerance:.0%}{note}"
                observed = f"{measured:g} Mb/s (ratio {ratio:.3f})"
                ok = abs(ratio - 1) <= tolerance
            elif not highest:
                out.skip(check_id, "above every limited VLAN", "no limited VLAN measured with it")
                continue
            else:
                floor = highest * (1 + tolerance)
                expected = f"> {floor:g} Mb/s (above every limit)"
                observed = f"{measured:g} Mb/s (unlimited)"
                ok = measured > floor
            _qos_verdict(out, check_id, row, ok, expected, observed)
        found += out
    return found, series


def _qos_verdict(out: Checks, check_id, row, ok, expected, observed):
    verdict = row.get("verdict")
    if verdict is None:
        out.judge(check_id, ok, expected, observed)
        return
    readings = row.get("readings_mbps") or []
    if len(readings) > 1:
        observed += f"; readings {', '.join(f'{r:g}' for r in readings)} Mb/s"
    if verdict == "pass" and ok:
        out.judge(check_id, True, expected, observed)
    elif verdict == "inconclusive":
        out.warn(
            check_id,
            expected,
            observed,
            f"inconclusive: {row.get('reason', 'starved')}; the limit was neither "
            "confirmed nor refuted",
        )
    else:
        reason = row.get("reason") or f"expected {expected}, observed {observed}"
        out.judge(check_id, False, expected, observed, reason)


# ---------------------------------------------------------------- performance


def _ceiling(host: dict, facts: dict) -> tuple[float | None, str]:
    """min(port rate, PCIe link bandwidth) of a host in Gb/s, or None and the reason."""
    if not facts:
        return None, "host facts were not gathered in this run"
    devices, intent = facts.get("rdma") or {}, (host.get("rdma") or {}).get("devices") or []
    chosen = {d["name"]: devices.get(d["name"]) or {} for d in intent} or devices
    if not chosen:
        return None, "no RDMA device found"
    soft = sorted(n for n, d in chosen.items() if d.get("software"))
    soft += [d["name"] for d in intent if d["type"] == "rxe"]
    if soft:
        return None, f"soft-RoCE device {soft[0]}: its port rate is nominal, not a hardware limit"
    rates = [rdma_rate_gbps(d.get("rate")) for d in chosen.values()]
    netdevs = facts.get("netdevs") or {}
    pcie = [(netdevs.get(p["netdev"]) or {}).get("pcie_gbps") for p in _data_ports(host)]
    if None in rates or not rates:
        return None, "an RDMA port rate is unreadable"
    if not pcie or None in pcie:
        return None, "the PCIe link of the adapter is unreadable"
    return min(min(rates), min(pcie)), f"port {min(rates):g} Gb/s, PCIe {min(pcie):g} Gb/s"


def _first(rows, key, tool, transport=None, size=None):
    """`key` of the first result of `tool` (at that transport and size) that has it."""
    for row in rows:
        if (
            row.get("tool") == tool
            and row.get(key) is not None
            and transport in (None, row.get("transport"))
            and size in (None, row.get("size_bytes"))
        ):
            return row[key]
    return None


def _bps(rows, tool, transport=None, size=None):
    """Bits per second of the first matching result, None when it did not run."""
    value = _first(rows, "bits_per_second", tool, transport, size)
    return None if value is None else float(value)


def _error(rows, tool, transport=None, size=None) -> str:
    """Why a run of `tool` has no figure (the rdma_workloads role records it), or ''."""
    return str(_first(rows, "error", tool, transport, size) or "")


def _relative(out, thresholds, key, at, value, ref, what, against, why_missing=""):
    """value / ref >= thresholds[key]; skip (with the reason) without a threshold."""
    threshold = thresholds.get(key)
    check_id = f"perf.{key}" + (f".{at}" if at else "")
    expected = f"{what} >= {threshold} x {against}" + (f" at {at} B" if at else "")
    if value is None and ref is None:
        return
    if threshold is None:
        reason = f"no workloads.thresholds.{key} in the inventory"
        out.skip(check_id, f"{what} vs {against}", reason)
    elif value is None or not ref:
        missing = what if value is None else against
        measured_zero = value is not None and ref is not None  # the tool averaged 0 b/s
        reason = why_missing or ("averaged 0 b/s" if measured_zero else "no result")
        out.fail(check_id, expected, f"{missing}: {reason}")
    else:
        ratio = value / ref
        observed = f"ratio {ratio:.3f} ({_gbps(value)} vs {_gbps(ref)})"
        out.judge(check_id, ratio >= float(threshold), expected, observed)


def perf_checks(workloads, hosts, results, host_facts, run_error="") -> tuple[list, list]:
    """Checks of the workload runs, each against a reference measured in the same run."""
    thresholds, pairs = workloads.get("thresholds") or {}, workloads.get("pairs") or []
    found, series = [], []
    for pair in pairs:
        target = pair["name"]
        perf, integrity = Checks(target), Checks(target)
        rows = [r for r in results or [] if r.get("pair") == target]
        if not rows:
            perf.fail("perf.results", "workload results", "none", run_error or "no result")
            found += perf
            continue
        label = "" if len(pairs) == 1 else f"{target} "
        names = {"pingpong": "{transport}", "ib_write_bw": "ib_write_bw (reference)"}
        for row in rows:
            if row.get("tool") in names and row.get("size_bytes") and row.get("bits_per_second"):
                series.append(
                    {
                        "transport": label + names[row["tool"]].format(**row),
                        "size_bytes": row["size_bytes"],
                        "bits_per_second": row["bits_per_second"],
                    }
                )
        sizes = sorted({r["size_bytes"] for r in rows if r.get("tool") == "pingpong"})
        for size in sizes:
            _relative(
                perf,
                thresholds,
                "rdma_vs_ib_write_bw",
                size,
                _bps(rows, "pingpong", "rdma", size),
                _bps(rows, "ib_write_bw", size=size),
                "pingpong over RDMA",
                "ib_write_bw",
                _error(rows, "pingpong", "rdma", size) or _error(rows, "ib_write_bw", size=size),
            )
        tcp = [b for b in (_bps(rows, "pingpong", "tcp", s) for s in sizes) if b is not None]
        _relative(
            perf,
            thresholds,
            "tcp_vs_iperf3",
            None,
            max(tcp, default=None),
            _bps(rows, "iperf3"),
            "best pingpong over TCP",
            "iperf3",
            _error(rows, "pingpong", "tcp") or _error(rows, "iperf3"),
        )
        _link_fraction(perf, pair, hosts, host_facts, thresholds, rows)
        _checksums(integrity, rows, sizes)
        _rcat(integrity, rows)
        found += perf + integrity
    return found, series


def _link_fraction(out, pair, hosts, host_facts, thresholds, rows) -> None:
    fraction = float(thresholds.get("link_fraction", 0.9))
    expected = f"best ib_write_bw >= {fraction:g} x min(port rate, PCIe link)"
    ceilings = []
    for host in (pair["client"], pair["server"]):
        ceiling, why = _ceiling(hosts.get(host) or {}, (host_facts or {}).get(host) or {})
        if ceiling is None:
            out.skip("perf.link_fraction", expected, f"{host}: {why}")
            return
        ceilings.append((ceiling, f"{host}: {why}"))
    tool = [
        float(r["bits_per_second"])
        for r in rows
        if r.get("tool") == "ib_write_bw" and r.get("bits_per_second")
    ]
    limit = min(c for c, _ in ceilings)
    if not tool:
        out.fail("perf.link_fraction", expected, "no ib_write_bw result")
        return
    ratio = max(tool) / (limit * 1e9)
    observed = f"{_gbps(max(tool))}, ratio {ratio:.3f} ({'; '.join(w for _, w in ceilings)})"
    out.judge(
        "perf.link_fraction",
        ratio >= fraction,
        f"{expected} = {fraction * limit:.3f} Gb/s",
        observed,
    )


def _checksums(out, rows, sizes) -> None:
    for size in sizes:
        sums = {
            r["transport"]: r.get("checksum")
            for r in rows
            if r.get("tool") == "pingpong" and r.get("size_bytes") == size
        }
        expected = "one checksum across " + ", ".join(sorted(sums))
        if len(sums) < 2:
            out.skip(f"perf.checksum.{size}", expected, "fewer than two transports at this size")
            continue
        observed = ", ".join(f"{t} {sums[t]}" for t in sorted(sums))
        ok = len(set(sums.values())) == 1 and None not in sums.values()
        out.judge(f"perf.checksum.{size}", ok, expected, observed)


def _rcat(out, rows) -> None:
    record = next((r for r in rows if r.get("tool") == "rcat-integrity"), None)
    if record is not None:
        sent, received = record.get("sent_sha256") or "", record.get("received_sha256") or ""
        out.judge(
            "perf.rcat.sha256",
            bool(sent) and sent == received,
            f"received sha256 = sent {sent or '?'}",
            f"received {received or 'nothing'}",
        )


# ---------------------------------------------------------------- everything


def _dataplane(structured: dict, name: str, observed) -> list[dict]:
    # Imported here: dataplane.py builds its checks with this module's Checks.
    from .dataplane import dataplane_checks, targets

    return dataplane_checks(name, targets(structured, name), observed)


def all_checks(
    fabric,
    host_data,
    switch_results,
    qos_measurements,
    workload_results,
    sections,
    workload_error="",
    health=None,
    supported_cables=None,
    max_temp_c=None,
) -> dict:
    """Every check of a verify run plus the report series; sections not run add nothing."""
    hosts, workloads = fabric.get("hosts") or {}, fabric.get("workloads") or {}
    # As validate.yml publishes it (one JSON text per device) or already decoded.
    structured = Unpacked(fabric.get("structured") or {})
    host_data = host_data or {}
    facts = {n: ((d or {}).get("facts") or {}).get("facts") or {} for n, d in host_data.items()}
    checks, bandwidth, qos_series = [], [], []
    if "switches" in sections:
        checks += switch_checks(switch_results)
    if "hosts" in sections or "dataplane" in sections:
        for name in sorted(hosts):
            if "hosts" in sections:
                checks += host_checks(name, structured[name], host_data.get(name))
            if "dataplane" in (host_data.get(name) or {}):
                checks += _dataplane(structured, name, host_data[name]["dataplane"])
    # Link, cable and card health: part of the host section, or alone (verify_health).
    if ("hosts" in sections or "health" in sections) and health is not None:
        # The RoCE load this run put on each host (none when the workloads did not run).
        load = (
            roce_load(structured, workloads, workload_results, facts) if "perf" in sections else {}
        )
        checks += health_checks(
            {n: structured[n] for n in hosts}, health, supported_cables, max_temp_c, load
        )
    if "qos" in sections:
        tolerance = float((workloads.get("thresholds") or {}).get("qos_tolerance", 0.1))
        found, qos_series = qos_checks(qos_measurements, tolerance)
        checks += found
    if "perf" in sections:
        found, bandwidth = perf_checks(workloads, hosts, workload_results, facts, workload_error)
        checks += found
    return {"checks": merge(checks), "bandwidth": bandwidth, "qos": qos_series}
