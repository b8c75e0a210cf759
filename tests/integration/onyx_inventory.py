"""A throw-away inventory for the emulated Onyx pair (lab-sw-a, lab-sw-b).

It mirrors the lab fabric (inventories/lab) but points the peers at the ports
the pytest fixture picked, and lets a test change the intent between runs.
"""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

BASE_FABRIC = {
    "cxfab_fabric_name": "lab",
    "cxfab_switch_pairs": [
        {
            "name": "lab-pair",
            "platform": "onyx",
            "model": "SN2100",
            "peers": [
                {"name": "lab-sw-a", "mgmt_address": "127.0.0.1", "mgmt_port": 0},
                {"name": "lab-sw-b", "mgmt_address": "127.0.0.1", "mgmt_port": 0},
            ],
            "credentials": {"username": "admin", "password": "admin"},
            "mlag": {
                "domain": "lab-mlag",
                "vip": "10.0.0.50/24",
                "system_mac": "00:00:5E:00:01:5D",
                "ipl": {
                    "id": 1,
                    "port_channel": 100,
                    "members": {"lab-sw-a": ["1/31", "1/32"], "lab-sw-b": ["1/31", "1/32"]},
                    "vlan": 4000,
                    "addresses": {
                        "lab-sw-a": "192.168.255.253/30",
                        "lab-sw-b": "192.168.255.254/30",
                    },
                    "pfc": True,
                },
            },
            "mpos": [
                {
                    "id": 1,
                    "members": {"lab-sw-a": ["1/1"], "lab-sw-b": ["1/1"]},
                    "lacp_mode": "active",
                    "switchport_mode": "hybrid",
                    "allowed_vlans": [10, 20],
                    "mtu": 9216,
                },
                {
                    "id": 2,
                    "members": {"lab-sw-a": ["1/2"], "lab-sw-b": ["1/2"]},
                    "lacp_mode": "active",
                    "switchport_mode": "hybrid",
                    "allowed_vlans": [10, 20],
                    "mtu": 9216,
                },
            ],
        }
    ],
    "cxfab_vlans": [
        {
            "id": vlan,
            "name": f"data-{vlan}",
            "subnet": f"12.0.{vlan}.0/24",
            "mtu": 9000,
            "gateway": {
                "mode": "magp",
                "instance": vlan,
                "virtual_ip": f"12.0.{vlan}.1",
                "virtual_mac": f"00:00:5E:00:01:{vlan:02X}",
            },
            "svi_addresses": {"lab-sw-a": f"12.0.{vlan}.252/24", "lab-sw-b": f"12.0.{vlan}.253/24"},
        }
        for vlan in (10, 20)
    ],
    "cxfab_workloads": {"pairs": [], "transports": ["tcp"]},
}


def fabric(ports: list[int]) -> dict:
    data = copy.deepcopy(BASE_FABRIC)
    for peer, port in zip(data["cxfab_switch_pairs"][0]["peers"], ports, strict=True):
        peer["mgmt_port"] = port
    return data


def write(directory: Path, data: dict, known_hosts: Path | None = None) -> Path:
    """Write hosts.yml + group_vars/all/fabric.yml; returns the inventory directory.

    `known_hosts`: the file holding the pair's SSH host keys, named in
    group_vars/switches (without it the role checks the operator's default file)."""
    (directory / "group_vars" / "all").mkdir(parents=True, exist_ok=True)
    switch_vars = directory / "group_vars" / "switches" / "ssh.yml"
    switch_vars.unlink(missing_ok=True)
    if known_hosts is not None:
        switch_vars.parent.mkdir(parents=True, exist_ok=True)
        switch_vars.write_text(f"cxfab_switch_known_hosts: {known_hosts}\n", encoding="utf-8")
    hosts = {
        "all": {
            "children": {
                "switches": {"hosts": {"lab-sw-a": None, "lab-sw-b": None}},
                "hosts": {"hosts": {}},
            }
        }
    }
    (directory / "hosts.yml").write_text(yaml.safe_dump(hosts), encoding="utf-8")
    (directory / "group_vars" / "all" / "fabric.yml").write_text(
        "---\n" + yaml.safe_dump(data, sort_keys=False), encoding="utf-8"
    )
    return directory
