"""A host's checks from its structured config and what was read from it."""

from __future__ import annotations

import re

from ..common.checks import Checks
from ..host.net.cpulist import format_cpulist, parse_cpulist
from .gpudirect import gpudirect_checks
from .nic import (
    activation_checks,
    dcqcn_checks,
    drift_check,
    firmware_checks,
    link_type_checks,
    nic_state_results,
    sriov_checks,
    trust_checks,
)
from .qos import lossless_checks, qos_readback_checks
from .readings import absent, data_ports, failed

# /proc/net/bonding prints the mode as a sentence.
BOND_MODE_TEXT = {
    "802.3ad": "IEEE 802.3ad Dynamic link aggregation",
    "active-backup": "fault-tolerance (active-backup)",
    "balance-xor": "load balancing (xor)",
}


def format_map(mapping: dict) -> str:
    """{0: 1, 1: 1} -> "0:1 1:1 2:0 ..." over all eight priorities (missing = 0)."""
    clean = {int(k): int(v) for k, v in (mapping or {}).items()}
    return " ".join(f"{prio}:{clean.get(prio, 0)}" for prio in range(8))


def _gathered(name: str, data: dict | None) -> tuple[Checks, bool, object, dict]:
    """(failures, judged, facts_result, facts) of one host's gathered data. judged is
    False when nothing can be judged (nothing gathered, host unreachable: one check says
    so); facts is {} when the facts read failed (host.facts says why)."""
    out = Checks(name)
    if not data:
        out.fail(
            "host.data",
            "verification data gathered on the host",
            "nothing gathered",
            "the host was unreachable or its verify tasks failed before gathering",
        )
        return out, False, None, {}
    facts_result = data.get("facts")
    if isinstance(facts_result, dict) and facts_result.get("unreachable"):
        # Every later read of the host would fail the same way: one check says it.
        out.fail(
            "host.data",
            "verification data gathered on the host",
            "host unreachable",
            str(facts_result.get("msg", "unreachable")),
        )
        return out, False, None, {}
    facts = {}
    if absent(facts_result) or failed(facts_result):
        observed = (facts_result or {}).get("msg", "not gathered")
        out.fail("host.facts", "host facts read", observed)
    else:
        facts = facts_result.get("facts") or {}
    return out, True, facts_result, facts


def cabling_section_checks(name: str, sc: dict, data: dict | None) -> list[dict]:
    """verify.yml --tags verify_cabling: only the LLDP neighbour of each cabled port
    (or why the host's facts could not be judged)."""
    out, _judged, _result, facts = _gathered(name, data)
    return [*out, *cabling_checks(name, sc, facts)] if facts else list(out)


def host_checks(name: str, sc: dict, data: dict | None) -> list[dict]:
    """Every check of one host from its structured config and the data gathered on it."""
    out, judged, facts_result, facts = _gathered(name, data)
    if not judged:
        return out
    intent = sc["network"]
    firmware, link_type = data.get("firmware") or [], data.get("link_type") or []
    if "nic_state" in data:  # verify.yml reads every NIC in one call (cxfab_nic_state)
        firmware, link_type = nic_state_results(sc, data["nic_state"])
    found = [*out, *firmware_checks(name, firmware)]
    found += link_type_checks(name, link_type)
    found += activation_checks(name, sc, data.get("nic_state"))
    found += drift_check(name, data.get("network"))
    if facts:
        found += link_checks(name, sc, facts) + mtu_checks(name, intent, facts)
        found += probe_checks(name, facts.get("probes") or [])
        found += egress_checks(name, intent, facts) + irq_checks(name, sc, facts)
        found += bond_checks(name, intent, facts) + rdma_checks(name, sc, facts)
        found += cabling_checks(name, sc, facts)
    # Imported here: checks_ib and checks_roce build on Checks, defined above.
    from .ib import ib_checks
    from .roce import roce_checks

    if facts:
        found += roce_checks(name, sc, facts) + gpudirect_checks(name, sc, facts)
        found += sriov_checks(name, sc, facts) + dcqcn_checks(name, sc, facts)
        found += trust_checks(name, sc, facts)

    # The IB readings come with the host facts (absent there: the facts were not read).
    found += ib_checks(name, sc, facts_result if not facts else {"ib": facts.get("ib")})
    return (
        found
        + qos_readback_checks(name, data.get("qos"))
        + lossless_checks(name, sc, data.get("qos"))
    )


def link_checks(name: str, host: dict, facts: dict) -> list[dict]:
    """Carrier and speed of every adapter port."""
    out = Checks(name)
    netdevs = facts.get("netdevs") or {}
    for port in data_ports(host):
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


def _switch_port(port_id: str) -> str:
    """`Eth1/7`, `ethernet 1/7`, `1/7` -> `1/7` (how Onyx and the inventory name a port);
    `swp7` -> `1/7`: a Cumulus Linux switch advertises its port's name (the NVUE command
    reference's `nv show interface lldp` lists remote ports `swp1`, `swp49`), and the
    intent's `1/N` is its `swpN` (switch/nvue/names.py)."""
    cumulus = re.fullmatch(r"swp([1-9][0-9]*)", port_id.strip())
    if cumulus:
        return f"1/{cumulus.group(1)}"
    return re.sub(r"^eth(?:ernet)?\s*", "", port_id.strip(), flags=re.IGNORECASE)


def cabling_checks(name: str, host: dict, facts: dict) -> list[dict]:
    """Each port the intent cables to a switch port reaches that port (its LLDP
    neighbour); a swapped or misplaced cable names both ends."""
    out = Checks(name)
    lldp = facts.get("lldp") or {}
    for port in data_ports(host):
        if not port.get("peer"):
            continue
        dev, peer = port["netdev"], port["peer"]
        check_id, expected = f"link.{dev}.neighbour", f"{peer} Eth{port['peer_port']}"
        if "neighbours" not in lldp:
            out.fail(check_id, expected, "unreadable", lldp.get("error") or "no LLDP reading")
            continue
        seen = lldp["neighbours"].get(dev) or []
        observed = ", ".join(f"{n['sysname']} {n['port_id']}" for n in seen) or "no neighbour"
        ok = any(
            n["sysname"].split(".")[0].lower() == peer.lower()
            and _switch_port(n["port_id"]) == port["peer_port"]
            for n in seen
        )
        where = f"{name} {dev} reaches {observed}; the intent cables it to {expected}"
        out.judge(check_id, ok, expected, observed, "" if ok else where)
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


def irq_checks(name: str, sc: dict, facts: dict) -> list[dict]:
    """Effective affinity of every NIC IRQ inside the NIC-local CPUs (or the CPU list)."""
    out = Checks(name)
    settings = sc["irq"] or {"policy": "off"}
    policy = settings["policy"]
    bond = sc["network"]["bond"]
    ports = settings.get("interfaces") or (
        bond["members"] if bond else [p["netdev"] for p in data_ports(sc)]
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
