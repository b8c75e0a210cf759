"""One emulated Onyx pair built for a test module, and what its tests read from it.

test_switch_transaction.py and test_switch_partner_gate.py each build their own pair
(`lab = pair_fixture(name)`), so pytest-xdist can run the two files on two workers: as
one file they were one worker's 340 s. The tier as a whole is CPU-bound on 2 cores
(407 s in CI after the split, 359 s before with fewer tests), so this shortened its
longest group, not its total.
"""

from __future__ import annotations

import copy
import time

import pytest
from cxfab.switch.onyx.parser import parse_running_config

from tests.integration import onyx_inventory
from tests.integration.test_switch_roles import run_playbook, show

A, B = "lab-sw-a", "lab-sw-b"
# The lines sw-a gets for VLAN 30 (rendered order: VLANs, then SVIs).
VLAN30_LINES = [
    "vlan 30",
    "vlan 30 name extra",
    "interface vlan 30",
    "interface vlan 30 ip address 12.0.30.252/24",
    "interface vlan 30 mtu 9000",
]


def pair_fixture(name: str):
    """A module-scoped `lab` fixture: a pair built from the fabric intent, stopped after
    the module. Skips the module where the emulator or netmiko cannot be imported."""

    @pytest.fixture(scope="module")
    def lab(tmp_path_factory):
        fixtures = pytest.importorskip("tests.lab.onyx.fixtures")
        pytest.importorskip("netmiko")
        base = tmp_path_factory.mktemp(name)
        with fixtures.onyx_pair(base / "run") as pair:
            ports = [pair[A].port, pair[B].port]
            lab = {"pair": pair, "base": base, "fabric": onyx_inventory.fabric(ports)}
            lab["known_hosts"] = pair.write_known_hosts(base / "switches_known_hosts")
            built = run_playbook(lab, lab["fabric"])
            assert built["rc"] == 0, built["output"]
            yield lab

    return lab


def with_vlan30(fabric: dict) -> dict:
    changed = copy.deepcopy(fabric)
    changed["cxfab_vlans"].append(
        {
            "id": 30,
            "name": "extra",
            "subnet": "12.0.30.0/24",
            "mtu": 9000,
            "gateway": {"mode": "none"},
            "svi_addresses": {A: "12.0.30.252/24", B: "12.0.30.253/24"},
        }
    )
    return changed


def with_vrrp30(fabric: dict, priorities: dict, interval: int = 1, preempt: bool = True) -> dict:
    changed = with_vlan30(fabric)
    changed["cxfab_vlans"][-1]["gateway"] = {
        "mode": "vrrp",
        "virtual_ip": "12.0.30.1",
        "vrrp": {"priorities": priorities, "advertisement_interval": interval, "preempt": preempt},
    }
    return changed


def statements(lab, switch: str) -> tuple[dict, list]:
    parsed = parse_running_config(show(lab, switch, "show running-config"))
    return parsed.statements, sorted(parsed.unknown)


def unsaved(lab, switch: str) -> str:
    return show(lab, switch, "show configuration files").split("Unsaved changes :")[1].split()[0]


def mlag_oper(lab, switch: str) -> str:
    return show(lab, switch, "show mlag").split("Operational status:")[1].split()[0]


def wait_for_oper(lab, switch: str, state: str, seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while mlag_oper(lab, switch) != state:
        assert time.monotonic() < deadline, f"{switch} MLAG not {state} within {seconds} s"
        time.sleep(0.5)
