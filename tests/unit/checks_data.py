"""What the verification-check tests (tests/unit/test_checks*.py) hand verify: a host's
intent and structured config, and the facts and results a healthy host gives."""

from __future__ import annotations

from cxfab.structured import hosts as host_structured

FIRMWARE = {"version": "12.28.1002", "psid": "LNV2190110032", "image": "fw.bin", "sha256": "0" * 64}


def structured(host: dict) -> dict:
    """The host's structured config (the sections that do not need its peers)."""
    return host_structured.sections(host)


def host_intent(index: int = 1, **overrides) -> dict:
    host = {
        "mgmt_interface": "eno1",
        "nics": [
            {
                "name": "cx4",
                "pci": "0000:65:00.0",
                "model": "ConnectX-4",
                "ports": [
                    {"port": 1, "netdev": "ens1f0", "link_type": "eth", "speed_gbps": 100},
                    {"port": 2, "netdev": "ens1f1", "link_type": "eth", "speed_gbps": 100},
                ],
                "firmware": dict(FIRMWARE),
            }
        ],
        "bond": {
            "name": "bond0",
            "members": ["ens1f0", "ens1f1"],
            "mode": "802.3ad",
            "lacp_rate": "fast",
            "mtu": 9000,
            "switch_pair": "lab",
            "mpo": index,
            "address": f"12.0.0.{index}/24",
        },
        "vlans": [{"id": v, "address": f"12.0.{v}.{index}/24", "mtu": 9000} for v in (10, 20, 30)],
        "qos": [
            {
                "vlan": v,
                "user_priority": up,
                "traffic_class": tc,
                "tsa": "strict",
                "bandwidth_percent": 0,
                **({"rate_limit_mbps": rate} if rate else {}),
            }
            for v, up, tc, rate in ((10, 1, 0, 1000), (20, 3, 1, 5000), (30, 5, 2, None))
        ],
        "irq_affinity": {"policy": "numa-local"},
        "rdma": {"devices": [{"name": "rxe0", "netdev": "bond0.30", "type": "rxe"}]},
    }
    host.update(overrides)
    return host


def netdev(**overrides) -> dict:
    info = {
        "exists": True,
        "operstate": "up",
        "carrier": 1,
        "speed_mbps": 100000,
        "driver": "mlx5_core",
        "pci": "0000:65:00.0",
        "numa_node": 1,
        "node_cpus": "2-3",
        "pcie_gbps": 63.008,
        "irqs": [
            {"irq": 42, "requested": "2", "effective": "2"},
            {"irq": 43, "requested": "3", "effective": "3"},
        ],
    }
    info.update(overrides)
    return info


def healthy_facts() -> dict:
    egress = {
        "bond0.10": dict.fromkeys(range(8), 1),
        "bond0.20": dict.fromkeys(range(8), 3),
        "bond0.30": dict.fromkeys(range(8), 5),
    }
    return {
        "netdevs": {"ens1f0": netdev(), "ens1f1": netdev(pci="0000:65:00.1")},
        "mtus": {"bond0": 9000, "ens1f0": 9000, "ens1f1": 9000}
        | {f"bond0.{v}": 9000 for v in (10, 20, 30)},
        "vlans": {
            name: {"exists": True, "vlan_id": int(name.split(".")[1]), "egress_qos_map": m}
            for name, m in egress.items()
        },
        "bond": {
            "exists": True,
            "mode": "IEEE 802.3ad Dynamic link aggregation",
            "mii_status": "up",
            "active_aggregator": 1,
            "members": {
                "ens1f0": {"mii_status": "up", "aggregator": 1},
                "ens1f1": {"mii_status": "up", "aggregator": 1},
            },
        },
        "rdma": {
            "rxe0": {
                "state": "4: ACTIVE",
                "rate": "100 Gb/sec (4X EDR)",
                "netdev": "bond0.30",
                "software": True,
            }
        },
        "probes": [
            {
                "id": "mtu.path.vlan10.h2",
                "address": "12.0.10.2",
                "interface": "bond0.10",
                "size": 8972,
                "mtu": 9000,
                "skip": "",
                "ok": True,
                "error": "",
            }
        ],
        "nic_local_cpus": "2-3",
    }


def firmware_result(**overrides) -> dict:
    result = {
        "item": host_intent()["nics"][0],
        "psid": "LNV2190110032",
        "flash_version": "12.28.1002",
        "running_version": "12.28.1002",
        "target_in_flash": True,
        "target_running": True,
    }
    result.update(overrides)
    return result


def link_type_result(current="eth", next_boot="eth") -> dict:
    return {
        "item": host_intent()["nics"][0],
        "ports": [
            {"port": 1, "desired": "eth", "current": current, "next_boot": next_boot},
            {"port": 2, "desired": "eth", "current": "eth", "next_boot": "eth"},
        ],
    }


def host_data(facts=None, **overrides) -> dict:
    data = {
        "facts": {"facts": healthy_facts() if facts is None else facts},
        "firmware": [firmware_result()],
        "link_type": [link_type_result()],
        "network": {"changed": False, "actions": []},
        "qos": {
            "plan": {
                "prio_tc": [0, 0, 1, 1, 2, 2, 3, 3],
                "tcs": [{"tc": 0, "rate_limit_mbps": 1000}],
            },
            "ports": {"ens1f0": {"backend": "tc", "differences_before": []}},
        },
    }
    data.update(overrides)
    return data


def by_id(found: list[dict]) -> dict:
    return {c["id"]: c for c in found}


def status_of(found, check_id):
    return by_id(found)[check_id]["status"]


WORKLOADS = {
    "pairs": [{"name": "p", "client": "h1", "server": "h2", "vlan": 30}],
    "thresholds": {
        "link_fraction": 0.9,
        "qos_tolerance": 0.1,
        "rdma_vs_ib_write_bw": 0.5,
        "tcp_vs_iperf3": 0.5,
    },
}


def qos_rows(v10=1000.0, v20=5010.0, v30=37800.0):
    return {
        "results": [
            {"vlan": 10, "limit_mbps": 1000, "measured_mbps": v10},
            {"vlan": 20, "limit_mbps": 5000, "measured_mbps": v20},
            {"vlan": 30, "limit_mbps": None, "measured_mbps": v30},
        ]
    }


def workload_results(rdma=40e9, reference=50e9, tcp=30e9, iperf=40e9, sums=("c1", "c1", "c1")):
    rows = []
    for transport, bits, checksum in (
        ("tcp", tcp, sums[0]),
        ("rdma", rdma, sums[1]),
        ("shm", 80e9, sums[2]),
    ):
        rows.append(
            {
                "pair": "p",
                "tool": "pingpong",
                "transport": transport,
                "size_bytes": 65536,
                "bits_per_second": bits,
                "checksum": checksum,
            }
        )
    rows.append(
        {
            "pair": "p",
            "tool": "iperf3",
            "transport": "tcp",
            "size_bytes": None,
            "bits_per_second": iperf,
        }
    )
    rows.append(
        {
            "pair": "p",
            "tool": "ib_write_bw",
            "transport": "rdma",
            "size_bytes": 65536,
            "bits_per_second": reference,
        }
    )
    rows.append(
        {
            "pair": "p",
            "tool": "rcat-integrity",
            "transport": "rdma",
            "sent_sha256": "ab",
            "received_sha256": "ab",
        }
    )
    return rows
