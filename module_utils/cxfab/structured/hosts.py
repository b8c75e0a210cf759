"""Validated fabric -> structured config of one host (the host's contract).

Every host role and verify's host checks read only this. The fabric was
validated (schema + rules) and its defaults filled by fabric.normalise before
it gets here, so nothing is checked again: this module only derives.

Shape (written to build/structured/<host>.yml):

    host, mgmt_interface
    nics:      the host's adapters as the inventory gives them (firmware, ports); an
               adapter with `profiles` gets `nv_config` = the profiles' parameters
               merged with its own, and `runtime` = the run-time settings they imply
    gpudirect: {peer_memory_modules, pairs: [{gpu, gpu_pci, nic, nic_pci, ats}]} | null
               (the host declares GPUs: verify's GPUDirect readiness)
    network:   {bond: {name, members, mode, lacp_rate, miimon, xmit_hash_policy,
                       mtu, addresses} | null,
                members: [{name, mtu}],
                vlans: [{name, id, link, mtu, addresses, egress_qos_map}]}
    ipoib:     [{name, nic, pci, port, mode, mtu, addresses}] (IPoIB interfaces
                of the ib ports that have an ipoib block)
    networkd:  {file name: text} (systemd-networkd .netdev/.network files)
    qos:       {ports, prio_tc, tcs: [8 x {tc, tsa, bandwidth_percent,
                rate_limit_mbps}]} | null
    irq:       {interfaces, policy, cpus} | null
    rdma:      {modules, devices: [{name, netdev, type}]}
    probes:    [{id, kind: peer|gateway, vlan, interface, mtu, size, address}]
    qos_measure: {peer, targets: [{vlan, address, port, limit_mbps}]} | null
    lossless:  {priority, ports, trust, pfc: [8 x 0|1], ecn_priorities,
                roce: {vlans, dscp, tos, gid_type}, memlock_kb} | null
               (cxfab_roce.lossless on and the host is in a RoCE VLAN)
"""

from __future__ import annotations

from ..intent.profiles import merged_nv_config, runtime_settings

# Kernel defaults the fabric does not carry (bonding's own miimon is 0: no link
# monitoring at all, which would keep a dead member in the bond).
BOND_MIIMON_MS = 100
# layer2 keeps one peer on one member, as the seed's MLAG bonds do.
BOND_XMIT_HASH_POLICY = "layer2"
HASH_POLICY_MODES = ("balance-xor", "802.3ad", "balance-tlb")
NUM_PRIORITIES = 8
NUM_TCS = 8
NETWORKD_PREFIX = "60-cxfab"
# First iperf3 port of the per-VLAN QoS measurement (one port per VLAN).
QOS_MEASURE_BASE_PORT = 5301
RDMA_BASE_MODULES = ("ib_uverbs", "rdma_ucm")
# mlnx_qos --trust / the kernel's DCB APP table: classify received packets by DSCP,
# which RoCE v2 carries in routed and bridged networks alike.
LOSSLESS_TRUST = "dscp"
RXE_MODULE = "rdma_rxe"
IPOIB_MODULE = "ib_ipoib"
# The kernel modules that let an RDMA adapter reach GPU memory: NVIDIA's driver's own
# (nvidia_peermem, since driver 470) and MLNX_OFED's older peer-memory client.
PEER_MEMORY_MODULES = ("nvidia_peermem", "ib_peer_mem")


def bond_section(host: dict) -> dict | None:
    bond = host.get("bond")
    if not bond:
        return None
    mode = bond["mode"]
    return {
        "name": bond["name"],
        "members": list(bond["members"]),
        "mode": mode,
        # The kernel keeps lacp_rate for every mode; only 802.3ad uses it.
        "lacp_rate": bond["lacp_rate"] if mode == "802.3ad" else "slow",
        "miimon": bond.get("miimon", BOND_MIIMON_MS),
        # Bonding refuses a hash policy in the other modes and reports layer2.
        "xmit_hash_policy": bond.get("xmit_hash_policy", BOND_XMIT_HASH_POLICY)
        if mode in HASH_POLICY_MODES
        else "layer2",
        "mtu": bond["mtu"],
        "addresses": [bond["address"]] if bond.get("address") else [],
    }


def egress_maps(host: dict) -> dict[int, dict[int, int]]:
    """VLAN id -> {socket priority: user priority}: all eight priorities to the VLAN's PCP."""
    return {
        entry["vlan"]: dict.fromkeys(range(NUM_PRIORITIES), entry["user_priority"])
        for entry in host.get("qos") or []
    }


def network_section(host: dict) -> dict:
    """Bond, member and VLAN interfaces the host must end up with."""
    bond = bond_section(host)
    maps = egress_maps(host)
    members = [{"name": name, "mtu": bond["mtu"]} for name in bond["members"]] if bond else []
    vlans = []
    for entry in host.get("vlans") or []:
        parent = bond["name"]  # rule host-vlans-need-bond: VLANs sit on the bond
        vlans.append(
            {
                "name": f"{parent}.{entry['id']}",
                "id": entry["id"],
                "link": parent,
                "mtu": entry["mtu"],
                "addresses": [entry["address"]] if entry.get("address") else [],
                "egress_qos_map": maps.get(entry["id"]),
            }
        )
    return {"bond": bond, "members": members, "vlans": vlans}


def ipoib_section(host: dict) -> list[dict]:
    """The IPoIB interface of every ib port with an ipoib block, in inventory order.

    `pci` and `port` say where the host module finds the interface (the adapter's RDMA
    device port); `name` is the netdev the inventory expects there.
    """
    interfaces = []
    for nic in host.get("nics") or []:
        for port in nic["ports"]:
            ipoib = port.get("ipoib")
            if ipoib is None or port["link_type"] != "ib":  # rule ipoib-needs-ib-port
                continue
            interfaces.append(
                {
                    "name": port["netdev"],
                    "nic": nic["name"],
                    "pci": nic["pci"],
                    "port": port["port"],
                    "mode": ipoib["mode"],
                    "mtu": ipoib["mtu"],
                    "addresses": [ipoib["address"]] if ipoib.get("address") else [],
                }
            )
    return interfaces


def _default_tc(priority: int) -> int:
    # Unlisted priorities pair up into traffic classes (0,0,1,1,2,2,3,3), the layout
    # seed 001 programs and the one operators expect from mlnx_qos examples.
    return priority // 2


def qos_plan(host: dict) -> dict:
    """Per-port DCB plan: prio->TC map and per-TC TSA, ETS share and rate limit."""
    prio_tc: dict[int, int] = {}
    tcs: dict[int, dict] = {}
    for entry in host.get("qos") or []:
        prio_tc[entry["user_priority"]] = entry["traffic_class"]
        tcs[entry["traffic_class"]] = {
            "tc": entry["traffic_class"],
            "tsa": entry["tsa"],
            "bandwidth_percent": entry["bandwidth_percent"],
            "rate_limit_mbps": entry.get("rate_limit_mbps"),
        }
    unset = {"tsa": "strict", "bandwidth_percent": 0, "rate_limit_mbps": None}
    return {
        "prio_tc": [prio_tc.get(p, _default_tc(p)) for p in range(NUM_PRIORITIES)],
        "tcs": [tcs.get(tc, {"tc": tc, **unset}) for tc in range(NUM_TCS)],
    }


def _nic_ports(host: dict) -> list[str]:
    return [port["netdev"] for nic in host.get("nics") or [] for port in nic["ports"]]


def qos_section(host: dict, network: dict) -> dict | None:
    if not host.get("qos"):
        return None
    bond = network["bond"]
    ports = bond["members"] if bond else sorted({v["link"] for v in network["vlans"]})
    return {"ports": ports, **qos_plan(host)}


def irq_section(host: dict, network: dict) -> dict | None:
    settings = host.get("irq_affinity")
    if not settings or settings["policy"] == "off":
        return None
    bond = network["bond"]
    return {
        # The bond members carry the traffic; without a bond every NIC port does.
        "interfaces": bond["members"] if bond else _nic_ports(host),
        "policy": settings["policy"],
        "cpus": settings.get("cpus", ""),
    }


def rdma_section(host: dict) -> dict:
    devices = [
        {"name": d["name"], "netdev": d["netdev"], "type": d["type"]}
        for d in (host.get("rdma") or {}).get("devices") or []
    ]
    soft_roce = any(d["type"] == "rxe" for d in devices)
    ipoib = bool(ipoib_section(host))
    return {
        "modules": [
            *RDMA_BASE_MODULES,
            *([RXE_MODULE] if soft_roce else []),
            *([IPOIB_MODULE] if ipoib else []),
        ],
        "devices": devices,
    }


class Racks:
    """The hosts behind each switch pair, in name order, and each VLAN's gateway: read
    once per fabric, so a host's probes cost its rack, not the whole fabric."""

    def __init__(self, fabric: dict):
        self.members: dict = {}
        for peer, other in sorted(fabric["hosts"].items()):
            pair = (other.get("bond") or {}).get("switch_pair")
            self.members.setdefault(pair, []).append((peer, other))
        self.gateways = {
            v["id"]: (v.get("gateway") or {}).get("virtual_ip") for v in fabric["vlans"]
        }


def probes_section(fabric: dict, name: str, network: dict, racks: Racks | None = None):
    """DF pings at each VLAN interface's MTU: to the VLAN's gateway and to every other
    host on that VLAN behind the same switch pair (one rack: linear in the fabric size)."""
    racks = racks or Racks(fabric)
    host = fabric["hosts"][name]
    pair = (host.get("bond") or {}).get("switch_pair")
    gateways = racks.gateways
    rack = [(peer, other) for peer, other in racks.members.get(pair, []) if peer != name]
    probes = []
    for vlan in network["vlans"]:
        # IPv4 header 20 + ICMP header 8: the payload that fills the MTU exactly.
        base = {"vlan": vlan["id"], "interface": vlan["name"], "mtu": vlan["mtu"]}
        base["size"] = vlan["mtu"] - 28
        for peer, other in rack:
            entry = next((v for v in other.get("vlans") or [] if v["id"] == vlan["id"]), {})
            if entry.get("address"):
                address = entry["address"].split("/")[0]
                probes.append(
                    {**base, "id": f"mtu.path.vlan{vlan['id']}.{peer}", "address": address,
                     "kind": "peer"}
                )  # fmt: skip
        if gateways.get(vlan["id"]):
            probes.append(
                {**base, "id": f"mtu.gateway.vlan{vlan['id']}", "address": gateways[vlan["id"]],
                 "kind": "gateway"}
            )  # fmt: skip
    return probes


def qos_measure_section(fabric: dict, name: str) -> dict | None:
    """Where this host measures its per-VLAN limits: the server of its workload pair."""
    host = fabric["hosts"][name]
    servers = [p["server"] for p in fabric["workloads"]["pairs"] if p["client"] == name]
    if not servers or not host.get("qos"):
        return None
    peer = servers[0]
    peer_vlans = {v["id"]: v for v in fabric["hosts"][peer].get("vlans") or []}
    targets = [
        {
            "vlan": entry["vlan"],
            "address": peer_vlans[entry["vlan"]]["address"].split("/")[0],
            "port": QOS_MEASURE_BASE_PORT + index,
            "limit_mbps": entry.get("rate_limit_mbps"),
        }
        for index, entry in enumerate(host["qos"])
        if peer_vlans.get(entry["vlan"], {}).get("address")
    ]
    return {"peer": peer, "targets": targets} if targets else None


def lossless_section(fabric: dict, name: str, network: dict) -> dict | None:
    """Trust, PFC and ECN of the host's data ports when it carries lossless RoCE.

    The rules (roce-*) guarantee the host's RoCE VLANs write the PFC priority, so
    the priority enabled here is the one those VLANs' traffic is tagged with.
    """
    roce = fabric.get("roce") or {}
    if not roce.get("lossless"):
        return None
    host = fabric["hosts"][name]
    vlans = sorted({v["id"] for v in host.get("vlans") or []} & set(roce["vlans"]))
    if not vlans:
        return None
    bond = network["bond"]
    priority = roce["priority"]
    return {
        "priority": priority,
        # The bond members carry the VLANs (rule host-vlans-need-bond).
        "ports": list(bond["members"]) if bond else _nic_ports(host),
        "trust": LOSSLESS_TRUST,
        "pfc": [int(p == priority) for p in range(NUM_PRIORITIES)],
        "ecn_priorities": [priority],
        "roce": {
            "vlans": vlans,
            "dscp": roce["dscp"],
            # The IP ToS byte RDMA-CM users set (perftest --tclass, rdma_cm tos): DSCP << 2.
            "tos": roce["dscp"] << 2,
            "gid_type": roce["gid_type"],
        },
        "memlock_kb": roce["memlock_kb"],
    }


# ---------------------------------------------------------------- networkd files
def _file(*sections: tuple[str, list[str]]) -> str:
    lines = ["# Written by cxfab from build/structured/<host>.yml; do not edit."]
    for title, body in sections:
        lines += ["", f"[{title}]", *body]
    return "\n".join(lines) + "\n"


def networkd_files(network: dict, ipoib: list[dict] | None = None) -> dict[str, str]:
    """systemd-networkd files that rebuild `network` and the IPoIB interfaces at boot."""
    files: dict[str, str] = {}
    for interface in ipoib or []:
        # The driver creates the interface, so a .network file (not a .netdev) adopts
        # it; its [IPoIB] Mode= exists since systemd 250 (Debian 12 has 252). The
        # kernel itself raises the MTU to 65520 on a switch to connected mode.
        files[f"{NETWORKD_PREFIX}-{interface['name']}.network"] = _file(
            ("Match", [f"Name={interface['name']}"]),
            ("Link", [f"MTUBytes={interface['mtu']}"]),
            ("IPoIB", [f"Mode={interface['mode']}"]),
            (
                "Network",
                ["LinkLocalAddressing=no", *(f"Address={a}" for a in interface["addresses"])],
            ),
        )
    bond = network["bond"]
    if bond:
        params = [f"Mode={bond['mode']}", f"MIIMonitorSec={bond['miimon']}ms"]
        if bond["mode"] == "802.3ad":
            params.append(f"LACPTransmitRate={bond['lacp_rate']}")
        if bond["mode"] in HASH_POLICY_MODES:
            params.append(f"TransmitHashPolicy={bond['xmit_hash_policy']}")
        netdev = [f"Name={bond['name']}", "Kind=bond", f"MTUBytes={bond['mtu']}"]
        files[f"{NETWORKD_PREFIX}-{bond['name']}.netdev"] = _file(
            ("NetDev", netdev), ("Bond", params)
        )
        on_bond = [f"VLAN={v['name']}" for v in network["vlans"] if v["link"] == bond["name"]]
        files[f"{NETWORKD_PREFIX}-{bond['name']}.network"] = _file(
            ("Match", [f"Name={bond['name']}"]),
            ("Link", [f"MTUBytes={bond['mtu']}"]),
            (
                "Network",
                [
                    "LinkLocalAddressing=no",
                    *(f"Address={a}" for a in bond["addresses"]),
                    *on_bond,
                ],
            ),
        )
        for member in network["members"]:
            files[f"{NETWORKD_PREFIX}-{member['name']}.network"] = _file(
                ("Match", [f"Name={member['name']}"]),
                ("Link", [f"MTUBytes={member['mtu']}"]),
                ("Network", [f"Bond={bond['name']}"]),
            )
    for vlan in network["vlans"]:
        params = [f"Id={vlan['id']}"]
        if vlan["egress_qos_map"]:
            pairs = " ".join(f"{p}-{up}" for p, up in sorted(vlan["egress_qos_map"].items()))
            params.append(f"EgressQOSMaps={pairs}")
        files[f"{NETWORKD_PREFIX}-{vlan['name']}.netdev"] = _file(
            ("NetDev", [f"Name={vlan['name']}", "Kind=vlan", f"MTUBytes={vlan['mtu']}"]),
            ("VLAN", params),
        )
        files[f"{NETWORKD_PREFIX}-{vlan['name']}.network"] = _file(
            ("Match", [f"Name={vlan['name']}"]),
            ("Link", [f"MTUBytes={vlan['mtu']}"]),
            ("Network", ["LinkLocalAddressing=no", *(f"Address={a}" for a in vlan["addresses"])]),
        )
    return dict(sorted(files.items()))


def nics_section(host: dict, roce: dict | None = None) -> list[dict]:
    """The adapters; those with profiles carry the merged parameters and runtime side."""
    nics = []
    for nic in host.get("nics") or []:
        if nic.get("profiles"):
            nic = {
                **nic,
                "nv_config": merged_nv_config(nic, roce),
                "runtime": runtime_settings(nic, roce),
            }
        nics.append(nic)
    return nics


def gpudirect_section(host: dict) -> dict | None:
    """What verify's GPUDirect readiness needs: each GPU with its adapter (rule
    gpu-nic-exists) and the ATS the adapter's gpudirect profile asks for (None: none)."""
    gpus = host.get("gpus") or []
    if not gpus:
        return None
    by_name = {nic["name"]: nic for nic in host.get("nics") or []}
    pairs = []
    for gpu in gpus:
        nic = by_name[gpu["nic"]]
        profile = (nic.get("profiles") or {}).get("gpudirect")
        pairs.append(
            {
                "gpu": gpu["name"],
                "gpu_pci": gpu["pci"],
                "nic": nic["name"],
                "nic_pci": nic["pci"],
                "ats": None if profile is None else bool(profile.get("ats", False)),
            }
        )
    return {"peer_memory_modules": list(PEER_MEMORY_MODULES), "pairs": pairs}


def sections(host: dict, roce: dict | None = None) -> dict:
    """The sections that depend on the host alone (everything but its peers; `roce`:
    cxfab_roce, whose PFC priority the roce profile defaults to)."""
    network = network_section(host)
    ipoib = ipoib_section(host)
    return {
        "mgmt_interface": host["mgmt_interface"],
        "nics": nics_section(host, roce),
        "gpudirect": gpudirect_section(host),
        "network": network,
        "ipoib": ipoib,
        "networkd": networkd_files(network, ipoib),
        "qos": qos_section(host, network),
        "irq": irq_section(host, network),
        "rdma": rdma_section(host),
    }


def build(fabric: dict, name: str, racks: Racks | None = None) -> dict:
    """The structured config of host `name` of a validated, normalised fabric (`racks`:
    the fabric's Racks, shared when every host is built in one pass)."""
    own = sections(fabric["hosts"][name], fabric.get("roce"))
    return {
        "host": name,
        **own,
        "probes": probes_section(fabric, name, own["network"], racks),
        "qos_measure": qos_measure_section(fabric, name),
        "lossless": lossless_section(fabric, name, own["network"]),
    }
