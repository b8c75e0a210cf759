#!/usr/bin/python
"""Ansible module: read, in one round trip, everything the host checks of verify.yml need."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_host_facts
short_description: Read link, MTU, VLAN, bond, NUMA, IRQ, RDMA and PCIe state of a host
description:
  - Read-only. For every adapter port of the host's C(cxfab_host) - operstate,
    carrier, speed, driver, the PCI function (the parent of a virtio child),
    its NUMA node and that node's CPUs, the effective affinity of each of its
    MSI-X IRQs and the PCIe C(current_link_speed) x C(current_link_width).
  - MTUs of the bond, its members and the VLAN interfaces; each VLAN's egress
    priority map from C(/proc/net/vlan/<if>); bond mode, members, MII status and
    LACP aggregators from C(/proc/net/bonding/<bond>); RDMA devices with port
    state, rate and netdev from C(/sys/class/infiniband).
  - Sends DF pings (ICMP echo, IP_PMTUDISC_DO) at each VLAN's MTU to the other
    hosts' VLAN addresses and to the VLAN gateway, so the MTU is proven end to end.
  - Returns the NIC-local CPU list as C(nic_local_cpus) for workload pinning.
  - With lossless RoCE (the structured C(lossless) section), C(roce) - the GID
    entries (device, port, index, type) of each RoCE VLAN interface and the
    wildcard C(memlock) limits of limits.conf and limits.d, as pam_limits reads them.
  - On a host with C(link_type) ib ports, C(ib) - per port the RDMA device found
    from the adapter's PCI address and C(ibstat <device> <port>) (state, physical
    state, rate, LIDs, link layer), and the IPoIB interfaces' sysfs C(mode) and
    C(mtu). A reading that fails carries the command and its output instead.
version_added: "0.1.0"
options:
  structured:
    description: >-
      This host's structured config (C(build/structured/<host>.yml)): the network,
      NICs, RDMA devices and the DF probes (peers and gateways) to send.
    type: dict
    required: true
  ping_gateway:
    description: Probe the VLAN gateways too (off where the gateway does not answer).
    type: bool
    default: true
  probe_count:
    description: Echo requests per probe before it counts as failed.
    type: int
    default: 3
  probe_timeout:
    description: Seconds to wait for each reply.
    type: float
    default: 1.0
  root:
    description: Prefix of /sys and /proc (tests point it at a copied tree).
    type: str
    default: /
  ibstat_path:
    description: ibstat to use on hosts with ib ports; default C(ibstat) when installed.
    type: str
author: cxfab
"""

EXAMPLES = r"""
- name: Read the host state the checks need
  cxfab_host_facts:
    name: "{{ inventory_hostname }}"
    host: "{{ cxfab_fabric.hosts[inventory_hostname] }}"
    hosts: "{{ cxfab_fabric.hosts }}"
    vlans: "{{ cxfab_fabric.vlans }}"
  register: host_facts
"""

RETURN = r"""
facts:
  description: >-
    netdevs, mtus, vlans, bond, rdma, probes, nic_local_cpus, roce (lossless RoCE only),
    ib (ib ports only).
  type: dict
  returned: always
"""

import errno  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import select  # noqa: E402
import socket  # noqa: E402
import struct  # noqa: E402
import time  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.host.mlnx import ibport  # noqa: E402
from ansible.module_utils.cxfab.host.mlnx.pcie import usable_gbps  # noqa: E402
from ansible.module_utils.cxfab.host.net import IntentError  # noqa: E402
from ansible.module_utils.cxfab.host.net import irq as sysirq  # noqa: E402
from ansible.module_utils.cxfab.host.net.bondstate import parse_bonding_proc  # noqa: E402
from ansible.module_utils.cxfab.host.net.cpulist import format_cpulist, parse_cpulist  # noqa: E402
from ansible.module_utils.cxfab.host.net.roce import gids_on, read_memlock  # noqa: E402

IP_MTU_DISCOVER, IP_PMTUDISC_DO = 10, 2  # <linux/in.h>: never fragment, fail on EMSGSIZE
SMALL_PROBE = 56  # ping's default payload: tells "no path at all" from "path MTU too small"


def _path(root, *parts):
    return os.path.join(root, *(p.lstrip("/") for p in parts))


def _read(path, default=None):
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return default


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


def _checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def df_ping(address, size, interface, count, timeout):
    """ICMP echo with DF at `size` bytes of payload; {ok, error}. Needs root (raw socket)."""
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    except OSError as exc:
        return {"ok": False, "error": f"raw ICMP socket refused: {exc.strerror}"}
    ident = os.getpid() & 0xFFFF
    with sock:
        sock.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
        if interface:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, interface.encode())
            except OSError as exc:
                return {"ok": False, "error": f"cannot send on {interface}: {exc.strerror}"}
        for seq in range(1, count + 1):
            payload = bytes((seq + i) & 0xFF for i in range(size))
            header = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
            header = struct.pack("!BBHHH", 8, 0, _checksum(header + payload), ident, seq)
            try:
                sock.sendto(header + payload, (address, 0))
            except OSError as exc:
                if exc.errno == errno.EMSGSIZE:
                    return {
                        "ok": False,
                        "error": f"message too long: {interface} MTU below {size + 28} bytes",
                    }
                return {"ok": False, "error": f"send failed: {exc.strerror}"}
            reply = _await_reply(sock, address, ident, seq, timeout)
            if reply is not None:
                return reply
    return {"ok": False, "error": f"no reply to {count} x {size + 28}-byte DF packets"}


def _await_reply(sock, address, ident, seq, timeout):
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        if not select.select([sock], [], [], left)[0]:
            return None
        packet, (source, _) = sock.recvfrom(65535)
        offset = (packet[0] & 0x0F) * 4
        kind, code = packet[offset], packet[offset + 1]
        if kind == 0 and source == address:
            got_ident, got_seq = struct.unpack("!HH", packet[offset + 4 : offset + 8])
            if (got_ident, got_seq) == (ident, seq):
                return {"ok": True, "error": ""}
        elif kind == 3 and code == 4:  # fragmentation needed: a smaller MTU on the path
            mtu = struct.unpack("!H", packet[offset + 6 : offset + 8])[0]
            return {"ok": False, "error": f"fragmentation needed at {source} (MTU {mtu})"}
    return None


def gather(params):
    root, sc = params["root"], params["structured"]
    intent = sc["network"]
    ports = [p["netdev"] for nic in sc.get("nics") or [] for p in nic.get("ports") or []]
    members = intent["bond"]["members"] if intent["bond"] else []
    netdevs = {name: netdev_state(root, name) for name in dict.fromkeys(ports + members)}
    named = ([intent["bond"]["name"]] if intent["bond"] else []) + members
    named += [v["name"] for v in intent["vlans"]]
    mtus = {n: _int(_read(_path(root, "sys/class/net", n, "mtu"))) for n in named}
    mtus = {n: m for n, m in mtus.items() if m is not None}
    vlans = {}
    for vlan in intent["vlans"]:
        text = _read(_path(root, "proc/net/vlan", vlan["name"]))
        vlans[vlan["name"]] = {"exists": text is not None, **parse_vlan_proc(text or "")}
    bond = {"exists": False}
    if intent["bond"]:
        text = _read(_path(root, "proc/net/bonding", intent["bond"]["name"]))
        if text is not None:
            bond = {"exists": True, **parse_bonding_proc(text)}
    local = {
        cpu
        for n in netdevs.values()
        if n.get("numa_node", -1) >= 0
        for cpu in parse_cpulist(n.get("node_cpus") or "")
    }
    facts = {
        "netdevs": netdevs,
        "mtus": mtus,
        "vlans": vlans,
        "bond": bond,
        "rdma": rdma_devices(root),
        "nic_local_cpus": format_cpulist(local),
    }
    if sc.get("lossless"):
        facts["roce"] = roce_facts(root, sc)
    return facts


def roce_facts(root, sc):
    """GIDs of the RoCE VLAN interfaces (the workloads' -x) and the memlock limits."""
    wanted = set(sc["lossless"]["roce"]["vlans"])
    netdevs = [v["name"] for v in sc["network"]["vlans"] if v["id"] in wanted]
    return {"gids": gids_on(root, netdevs), "memlock": read_memlock(root)}


def main():
    module = AnsibleModule(
        argument_spec={
            "structured": {"type": "dict", "required": True},
            "ping_gateway": {"type": "bool", "default": True},
            "probe_count": {"type": "int", "default": 3},
            "probe_timeout": {"type": "float", "default": 1.0},
            "root": {"type": "str", "default": "/"},
            "ibstat_path": {"type": "str"},
        },
        supports_check_mode=True,
    )
    params = module.params
    facts = gather(params)
    if ibport.ib_ports(params["structured"]):
        ibstat = module.get_bin_path(params["ibstat_path"] or "ibstat")
        if params["ibstat_path"] and not ibstat:
            module.fail_json(msg=f"ibstat_path: {params['ibstat_path']!r} is not an executable")

        def runner(argv):
            return module.run_command(argv, environ_update={"LC_ALL": "C"})

        facts["ib"] = ibport.gather(params["structured"], runner, ibstat, params["root"])
    probes = []
    for planned in params["structured"].get("probes") or []:
        off = planned["kind"] == "gateway" and not params["ping_gateway"]
        reason = "gateway probes are off (verify_ping_gateway: false)" if off else ""
        probes.append({**planned, "skip": reason})
    count, timeout = params["probe_count"], params["probe_timeout"]
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
    facts["probes"] = probes
    module.exit_json(changed=False, facts=facts)


if __name__ == "__main__":
    main()
