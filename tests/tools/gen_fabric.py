"""Generate a valid cxfab inventory of any size: N switch pairs, H hosts per pair.

Used by the rollout benchmark (tests/tools/bench_rollout.py) and by the tests
that check validation grows linearly. Every pair is an MLAG pair with its own
VLANs (MAGP gateways), one MPO per host; every host has a ConnectX-4 with two
ports bonded to its MPO, one tagged VLAN interface per pair VLAN and QoS.
Addresses that Ansible would connect to are TEST-NET ones (RFC 5737): nothing
generated here is reachable.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

import yaml

from tests.tools.inventory import Inventory

VLANS_PER_PAIR = 3
# RFC 5737 documentation ranges: never routed, so nothing can be contacted.
TEST_NETS = ("192.0.2.", "198.51.100.", "203.0.113.")
# 172.16.0.0/12 holds one /24 per VLAN (4,096 of them).
VLAN_SPACE = ipaddress.IPv4Network("172.16.0.0/12")
IPL_SPACE = ipaddress.IPv4Network("192.168.0.0/16")


def _vlan_subnet(index: int) -> ipaddress.IPv4Network:
    return ipaddress.IPv4Network((int(VLAN_SPACE.network_address) + index * 256, 24))


def _test_net_endpoint(index: int) -> tuple[str, int]:
    """A unique (TEST-NET address, SSH port) for inventory host number `index`."""
    per_port = 250 * len(TEST_NETS)
    net = TEST_NETS[(index // 250) % len(TEST_NETS)]
    return f"{net}{index % 250 + 1}", 22 + index // per_port


def _pair(p: int, hosts_per_pair: int) -> tuple[dict, list[dict]]:
    peers = [f"sw{p}a", f"sw{p}b"]
    mgmt = f"10.{p // 250}.{p % 250}."
    ipl = ipaddress.IPv4Network((int(IPL_SPACE.network_address) + p * 4, 30))
    ipl_hosts = list(ipl.hosts())
    vlan_ids = [100 + p * VLANS_PER_PAIR + k for k in range(VLANS_PER_PAIR)]
    mpos = [
        {
            "id": h + 1,
            "description": f"h{p}x{h} bond0",
            "members": {peers[0]: [f"1/{h + 1}"], peers[1]: [f"1/{h + 1}"]},
            "switchport_mode": "trunk",
            "allowed_vlans": vlan_ids,
            "mtu": 9216,
        }
        for h in range(hosts_per_pair)
    ]
    pair = {
        "name": f"rack{p}",
        "model": "SN2700",
        "peers": [
            {"name": peers[0], "mgmt_address": f"{mgmt}11"},
            {"name": peers[1], "mgmt_address": f"{mgmt}12"},
        ],
        "credentials": {"username": "admin", "password": "bench-password"},
        "mlag": {
            "domain": f"rack{p}-mlag",
            "vip": f"{mgmt}10/24",
            "system_mac": f"00:00:5E:01:{p // 256:02X}:{p % 256:02X}",
            "ipl": {
                "port_channel": 100,
                "members": {peers[0]: ["1/31", "1/32"], peers[1]: ["1/31", "1/32"]},
                "vlan": 4000,
                "addresses": {
                    peers[0]: f"{ipl_hosts[0]}/30",
                    peers[1]: f"{ipl_hosts[1]}/30",
                },
            },
        },
        "mpos": mpos,
    }
    vlans = []
    for k, vid in enumerate(vlan_ids):
        subnet = _vlan_subnet(vid)
        base = subnet.network_address
        vlans.append(
            {
                "id": vid,
                "name": f"v{vid}",
                "subnet": str(subnet),
                "mtu": 9000,
                "gateway": {
                    "mode": "magp",
                    "instance": k + 1,
                    "virtual_ip": str(base + 1),
                    "virtual_mac": f"00:00:5E:02:{vid // 256:02X}:{vid % 256:02X}",
                },
                "svi_addresses": {peers[0]: f"{base + 252}/24", peers[1]: f"{base + 253}/24"},
            }
        )
    return pair, vlans


def _host(p: int, h: int, pair: dict, vlans: list[dict]) -> dict:
    peers = [peer["name"] for peer in pair["peers"]]
    ports = [
        {
            "port": n + 1,
            "netdev": f"enp23s0f{n}",
            "speed_gbps": 100,
            "peer": peers[n],
            "peer_port": f"1/{h + 1}",
        }
        for n in range(2)
    ]
    host_vlans = []
    qos = []
    for k, vlan in enumerate(vlans):
        base = ipaddress.IPv4Network(vlan["subnet"]).network_address
        host_vlans.append({"id": vlan["id"], "address": f"{base + 10 + h}/24", "mtu": 9000})
        qos.append(
            {
                "vlan": vlan["id"],
                "user_priority": k + 1,
                "traffic_class": k,
                "rate_limit_mbps": 1000 * (k + 1),
            }
        )
    return {
        "mgmt_interface": "eno1",
        "nics": [
            {
                "name": "cx4",
                "pci": "0000:17:00.0",
                "model": "ConnectX-4",
                "ports": ports,
                "firmware": {
                    "version": "12.28.1002",
                    "psid": "MT_2190110032",
                    "image": "files/firmware/fw-ConnectX4.bin",
                    "sha256": "0" * 63 + "1",
                },
            }
        ],
        "bond": {
            "members": [port["netdev"] for port in ports],
            "mtu": 9000,
            "switch_pair": pair["name"],
            "mpo": h + 1,
        },
        "vlans": host_vlans,
        "qos": qos,
    }


def generate(pairs: int, hosts_per_pair: int = 20) -> Inventory:
    """A valid inventory of `pairs` MLAG pairs with `hosts_per_pair` hosts each."""
    inventory = Inventory()
    all_pairs, all_vlans, workload_pairs = [], [], []
    switches: list[str] = []
    hosts: list[str] = []
    for p in range(pairs):
        pair, vlans = _pair(p, hosts_per_pair)
        all_pairs.append(pair)
        all_vlans.extend(vlans)
        switches.extend(peer["name"] for peer in pair["peers"])
        names = [f"h{p}x{h}" for h in range(hosts_per_pair)]
        for h, name in enumerate(names):
            inventory.host_vars[name] = {"cxfab_host": _host(p, h, pair, vlans)}
        hosts.extend(names)
        if len(names) >= 2:
            workload_pairs.append(
                {
                    "name": f"rack{p}-pair",
                    "client": names[0],
                    "server": names[1],
                    "vlan": vlans[0]["id"],
                }
            )
    inventory.all_vars = {
        "cxfab_fabric_name": f"bench-{pairs}",
        "cxfab_switch_pairs": all_pairs,
        "cxfab_vlans": all_vlans,
        "cxfab_workloads": {"pairs": workload_pairs},
    }
    for index, name in enumerate(switches + hosts):
        address, port = _test_net_endpoint(index)
        inventory.host_vars.setdefault(name, {}).update(
            {"ansible_host": address, "ansible_port": port}
        )
    inventory.groups = {"switches": switches, "hosts": hosts}
    inventory.hosts_file = {
        "all": {
            "children": {
                group: {"hosts": {name: None for name in members}}
                for group, members in inventory.groups.items()
            }
        }
    }
    return inventory


def write(inventory: Inventory, directory: Path) -> Path:
    """Write the inventory as an Ansible YAML inventory directory."""
    directory = Path(directory)
    (directory / "group_vars" / "all").mkdir(parents=True, exist_ok=True)
    (directory / "hosts.yml").write_text(yaml.safe_dump(inventory.hosts_file), encoding="utf-8")
    (directory / "group_vars" / "all" / "fabric.yml").write_text(
        yaml.safe_dump(inventory.all_vars, sort_keys=False), encoding="utf-8"
    )
    for name, host_vars in inventory.host_vars.items():
        (directory / "host_vars").mkdir(exist_ok=True)
        (directory / "host_vars" / f"{name}.yml").write_text(
            yaml.safe_dump(host_vars, sort_keys=False), encoding="utf-8"
        )
    return directory
