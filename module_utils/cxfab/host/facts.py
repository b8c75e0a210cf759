"""Everything verify reads from a host, in one module call: one function per reading.

`READINGS` is the list: each row names the key the reading fills in the facts and
the function that reads it. A function takes the `Host` (sysfs/proc root, the
host's structured config, the module's parameters, a command runner) and the facts
read so far; it returns the value, or None when it does not apply to this host
(the key is then absent). A new host check that needs a new value is one reading
here, one check function in verify, and their tests.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .mlnx import gpudirect, ibport
from .mlnx.pcie import usable_gbps
from .net import IntentError, sriov
from .net import irq as sysirq
from .net import read_text as _read
from .net.bondstate import parse_bonding_proc
from .net.cpulist import format_cpulist, parse_cpulist
from .net.dfping import df_ping
from .net.lossless import LosslessReadError, ecn_state, mlnx_qos_state, profile_trust
from .net.roce import gids_on, read_memlock

SMALL_PROBE = 56  # ping's default payload: tells "no path at all" from "path MTU too small"


class FactsError(RuntimeError):
    """A reading that cannot start (e.g. a tool path that is not an executable)."""


@dataclass
class Host:
    """What a reading sees of the host it runs on."""

    root: str
    structured: dict
    params: dict = field(default_factory=dict)
    # argv -> (rc, stdout, stderr), run with LC_ALL=C
    run: Callable[[list], tuple] | None = None
    # tool name -> absolute path or None
    bin_path: Callable[[str], str | None] = lambda name: None


def _path(root, *parts):
    return os.path.join(root, *(p.lstrip("/") for p in parts))


def _int(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def netdev_state(root, name):
    """Link state, PCI function, NUMA node, IRQ affinity and PCIe link of one interface."""
    base = _path(root, "sys/class/net", name)
    if not os.path.isdir(base):
        return {"exists": False}
    speed = _int(_read(os.path.join(base, "speed")))
    driver = os.path.join(base, "device", "driver")
    info = {
        "exists": True,
        "operstate": _read(os.path.join(base, "operstate")),
        "carrier": _int(_read(os.path.join(base, "carrier"))),
        "speed_mbps": speed if speed and speed > 0 else None,
        "driver": os.path.basename(os.path.realpath(driver)) if os.path.exists(driver) else None,
    }
    try:
        pci_dir = sysirq.pci_device(root, name)
    except sysirq.IrqError:
        return info
    node = sysirq.numa_node(pci_dir)
    link_speed = _read(os.path.join(pci_dir, "current_link_speed"))
    link_width = _read(os.path.join(pci_dir, "current_link_width"))
    irqs = []
    for irq in sysirq.device_irqs(root, pci_dir, name):
        try:
            state = sysirq.read_affinity(root, irq)
        except (OSError, IntentError):
            continue
        effective = state["effective"]
        irqs.append(
            {
                "irq": irq,
                "requested": format_cpulist(state["requested"]),
                "effective": None if effective is None else format_cpulist(effective),
            }
        )
    try:
        node_cpus = format_cpulist(sysirq.node_cpus(root, node))
    except (OSError, IntentError):
        node_cpus = ""
    info.update(
        pci=os.path.basename(pci_dir),
        numa_node=node,
        node_cpus=node_cpus,
        pcie_link=f"{link_speed} x{link_width}" if link_speed and link_width else None,
        pcie_gbps=usable_gbps(link_speed, link_width),
        irqs=irqs,
    )
    return info


def parse_vlan_proc(text):
    """/proc/net/vlan/<if> -> {vlan_id, egress_qos_map {prio: up}}."""
    vid = re.search(r"\bVID:\s*(\d+)", text)
    egress = re.search(r"EGRESS priority mappings:([^\n]*)", text)
    mapping = {}
    for prio, up in re.findall(r"(\d+):(\d+)", egress.group(1) if egress else ""):
        mapping[int(prio)] = int(up)
    return {"vlan_id": int(vid.group(1)) if vid else None, "egress_qos_map": mapping}


def rdma_devices(root):
    """RDMA devices: port 1 state, rate, netdev and whether it is a software device."""
    base = _path(root, "sys/class/infiniband")
    devices = {}
    for name in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        port = os.path.join(base, name, "ports", "1")
        ndev = _read(os.path.join(port, "gid_attrs", "ndevs", "0")) or _read(
            os.path.join(base, name, "parent")
        )
        devices[name] = {
            "state": _read(os.path.join(port, "state")),
            "rate": _read(os.path.join(port, "rate")),
            "netdev": ndev,
            # soft-RoCE/iWARP devices sit on no bus device of their own.
            "software": not os.path.exists(os.path.join(base, name, "device")),
        }
    return devices


def read_netdevs(host: Host, facts: dict) -> dict:
    intent = host.structured["network"]
    ports = [
        p["netdev"] for nic in host.structured.get("nics") or [] for p in nic.get("ports") or []
    ]
    members = intent["bond"]["members"] if intent["bond"] else []
    return {name: netdev_state(host.root, name) for name in dict.fromkeys(ports + members)}


def read_mtus(host: Host, facts: dict) -> dict:
    intent = host.structured["network"]
    named = ([intent["bond"]["name"]] if intent["bond"] else []) + (
        intent["bond"]["members"] if intent["bond"] else []
    )
    named += [v["name"] for v in intent["vlans"]]
    mtus = {n: _int(_read(_path(host.root, "sys/class/net", n, "mtu"))) for n in named}
    return {n: m for n, m in mtus.items() if m is not None}


def read_vlans(host: Host, facts: dict) -> dict:
    vlans = {}
    for vlan in host.structured["network"]["vlans"]:
        text = _read(_path(host.root, "proc/net/vlan", vlan["name"]))
        vlans[vlan["name"]] = {"exists": text is not None, **parse_vlan_proc(text or "")}
    return vlans


def read_bond(host: Host, facts: dict) -> dict:
    bond = host.structured["network"]["bond"]
    text = _read(_path(host.root, "proc/net/bonding", bond["name"])) if bond else None
    return {"exists": True, **parse_bonding_proc(text)} if text is not None else {"exists": False}


def read_rdma(host: Host, facts: dict) -> dict:
    return rdma_devices(host.root)


def read_nic_local_cpus(host: Host, facts: dict) -> str:
    local = {
        cpu
        for n in facts["netdevs"].values()
        if n.get("numa_node", -1) >= 0
        for cpu in parse_cpulist(n.get("node_cpus") or "")
    }
    return format_cpulist(local)


def read_roce(host: Host, facts: dict) -> dict | None:
    """GIDs of the RoCE VLAN interfaces (the workloads' -x) and the memlock limits."""
    sc = host.structured
    if not sc.get("lossless"):
        return None
    wanted = set(sc["lossless"]["roce"]["vlans"])
    netdevs = [v["name"] for v in sc["network"]["vlans"] if v["id"] in wanted]
    return {"gids": gids_on(host.root, netdevs), "memlock": read_memlock(host.root)}


def read_ib(host: Host, facts: dict) -> dict | None:
    if not ibport.ib_ports(host.structured):
        return None
    wanted = host.params.get("ibstat_path")
    ibstat = host.bin_path(wanted or "ibstat")
    if wanted and not ibstat:
        raise FactsError(f"ibstat_path: {wanted!r} is not an executable")
    return ibport.gather(host.structured, host.run, ibstat, host.root)


def read_lldp(host: Host, facts: dict) -> dict | None:
    """The LLDP neighbours of the ports the intent cables to a switch, from the host's
    lldpd (`lldpcli -f json0 show neighbors`): {"neighbours": {port: [{sysname,
    port_id}]}}, or {"error": why} when lldpd cannot be asked."""
    nics = host.structured.get("nics") or []
    ports = [p["netdev"] for nic in nics for p in nic.get("ports") or [] if p.get("peer")]
    if not ports or host.run is None:
        return None
    lldpcli = host.bin_path("lldpcli")
    if not lldpcli:
        return {"error": "lldpcli not found (package lldpd)"}
    rc, out, err = host.run([lldpcli, "-f", "json0", "show", "neighbors"])
    if rc != 0:
        return {"error": f"lldpcli show neighbors: exit {rc}: {(err or out).strip()[:200]}"}
    try:
        data = json.loads(out or "{}")
    except ValueError:
        return {"error": f"lldpcli printed no JSON: {out.strip()[:200]!r}"}
    seen: dict = {}
    for lldp in data.get("lldp") or []:
        for iface in lldp.get("interface") or []:
            chassis, port = (iface.get("chassis") or [{}])[0], (iface.get("port") or [{}])[0]
            seen.setdefault(iface.get("name"), []).append(
                {
                    "sysname": ((chassis.get("name") or [{}])[0]).get("value", ""),
                    "port_id": ((port.get("id") or [{}])[0]).get("value", ""),
                }
            )
    return {"neighbours": {port: seen.get(port, []) for port in ports}}


def read_probes(host: Host, facts: dict) -> list:
    """The DF probes planned in the structured config, each with its outcome."""
    params = host.params
    probes = []
    for planned in host.structured.get("probes") or []:
        off = planned["kind"] == "gateway" and not params.get("ping_gateway", True)
        reason = "gateway probes are off (verify_ping_gateway: false)" if off else ""
        probes.append({**planned, "skip": reason})
    count, timeout = params.get("probe_count", 3), params.get("probe_timeout", 1.0)
    for probe in probes:
        if probe["skip"]:
            continue
        probe.update(df_ping(probe["address"], probe["size"], probe["interface"], count, timeout))
        if not probe["ok"] and probe["error"].startswith("no reply"):
            # Tell a path MTU problem from a peer that does not answer at all.
            small = df_ping(probe["address"], SMALL_PROBE, probe["interface"], count, timeout)
            probe["error"] += (
                f"; {SMALL_PROBE + 28}-byte packets do get replies: the path MTU is smaller"
                if small["ok"]
                else f"; {SMALL_PROBE + 28}-byte packets get none either: the peer does not answer"
            )
    return probes


def read_sriov(host: Host, facts: dict) -> dict | None:
    """sriov_numvfs and sriov_totalvfs of every port the sriov profile gives VFs."""
    wanted = [
        netdev
        for nic in host.structured.get("nics") or []
        for netdev in ((nic.get("runtime") or {}).get("sriov_numvfs") or {})
    ]
    if not wanted:
        return None
    return {netdev: sriov.read(host.root, netdev) for netdev in wanted}


def read_dcqcn(host: Host, facts: dict) -> dict | None:
    """The ECN knobs (`roce_np/<prio>` -> 0/1, None when absent) of the roce profile's
    ports and priorities, or {"error": why} for a port whose knobs do not read."""
    found: dict = {}
    for nic in host.structured.get("nics") or []:
        section = (nic.get("runtime") or {}).get("dcqcn") or {}
        for netdev in section.get("netdevs") or []:
            try:
                found[netdev] = ecn_state(host.root, netdev, section["priorities"])
            except LosslessReadError as exc:
                found[netdev] = {"error": str(exc)}
    return found or None


def read_trust(host: Host, facts: dict) -> dict | None:
    """Trust of the roce profile's ports outside lossless (`mlnx_qos -i <port>`):
    {port: {"trust"} or {"error"}}."""
    wanted = profile_trust(host.structured)
    if not wanted or host.run is None:
        return None
    tool = host.bin_path("mlnx_qos")
    found: dict = {}
    for port in sorted(wanted):
        if not tool:
            found[port] = {"error": "mlnx_qos not found in PATH (mlnx-tools)"}
            continue
        rc, out, err = host.run([tool, "-i", port])
        try:
            if rc != 0:
                raise LosslessReadError(f"exit {rc}: {(err or out).strip()[:200]}")
            found[port] = {"trust": mlnx_qos_state(out, f"mlnx_qos -i {port}")["trust"]}
        except LosslessReadError as exc:
            found[port] = {"error": f"mlnx_qos -i {port}: {exc}"}
    return found


def read_gpudirect(host: Host, facts: dict) -> dict | None:
    """Peer memory, the PCIe path, ACS and ATS of each GPU and its adapter (host with GPUs)."""
    section = host.structured.get("gpudirect")
    return gpudirect.read(host.root, section) if section else None


READINGS: tuple[tuple[str, Callable[[Host, dict], Any]], ...] = (
    ("netdevs", read_netdevs),
    ("mtus", read_mtus),
    ("vlans", read_vlans),
    ("bond", read_bond),
    ("rdma", read_rdma),
    ("nic_local_cpus", read_nic_local_cpus),
    ("roce", read_roce),
    ("ib", read_ib),
    ("lldp", read_lldp),
    ("probes", read_probes),
    ("gpudirect", read_gpudirect),
    ("sriov", read_sriov),
    ("dcqcn", read_dcqcn),
    ("trust", read_trust),
)


def gather(host: Host, readings=READINGS) -> dict:
    """Every reading in order; a reading that does not apply leaves its key out."""
    facts: dict = {}
    for key, read in readings:
        value = read(host, facts)
        if value is not None:
            facts[key] = value
    return facts
