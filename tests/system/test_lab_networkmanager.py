"""The NetworkManager backend builds the lab host's bond and VLANs on a real NetworkManager.

The controller's kernel has no bonding and no 802.1Q, so the integration tier
(tests/integration/test_networkmanager_apply.py) never sees a NetworkManager build the
bond or the VLANs. A lab guest's kernel has both: tests/tools/nm_lab_selftest.py runs in
lab-host1 (over SSH, the guest's python3, the controller's venv and this checkout on
PYTHONPATH: the guests share the controller's root fs) a private NetworkManager in fresh
namespaces with two veth ports named like the data ports, arms the backend's checkpoint,
applies the lab host's structured config through nmapply (completing the VLAN egress
maps NetworkManager 1.42 leaves short, as the module does: nmegress) twice, lets the checkpoint run
out and reads the links back over netlink (`ip -d -j address show`) after each step. It
prints its readings as JSON; this file compares them with the structured config. The
module itself, through the role, on a guest whose own network NetworkManager owns, and
a reboot of that network with the host agent keeping the egress maps whole, are the
deployed tier's (test_host_networkmanager.py).

The guest's own data ports, bond and VLANs live in another network namespace and are
never touched, so this needs neither `clean_lab` nor bare ports: it runs in the lab tier's
first pytest run like the other test_lab_* suites, or alone against a configured lab.
One run (about 60 s in a TCG guest) serves every test here.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import yaml

from tests.system.nmlinks import egress, guest_module, show, wanted_egress
from tests.tools.nm_lab_selftest import PORTS, SHORT

# The guest's run (about 60 s under TCG) makes the first test's setup.
pytestmark = [pytest.mark.lab, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parents[2]
STRUCTURED = REPO / "tests/golden/lab/structured/lab-host1.yml"
MGMT = "mgmt0"  # the sandbox's stand-in for the management interface


@pytest.fixture(scope="module")
def network():
    return yaml.safe_load(STRUCTURED.read_text())["network"]


def _selftest(host, step: str) -> dict:
    """tests/tools/nm_lab_selftest.py `step` in `host`: its JSON line."""
    return guest_module(host, f"tests.tools.nm_lab_selftest {step} {shlex.quote(str(STRUCTURED))}")


@pytest.fixture(scope="module")
def readings(lab, request):
    """The script's JSON from lab-host1 (one run for the module)."""
    host = lab.hosts[0]
    result = _selftest(host, "run")
    show(
        request,
        f"\nNetworkManager {result['nm_version']} on {result['kernel']} in {host.name}: "
        f"{result['total_s']} s (sandbox {result['sandbox_start_s']} s, first apply "
        f"{result['first']['seconds']} s, second {result['again']['seconds']} s)",
    )
    return result


def _no_state(links: dict) -> dict:
    """The readings without operstate (carrier timing is not what cxfab configures)."""
    return {
        name: {k: v for k, v in link.items() if k != "operstate"} for name, link in links.items()
    }


def test_the_bond_its_members_and_the_vlans_are_live_as_the_structured_config_says(
    readings, network
):
    links, bond = readings["applied"], network["bond"]
    assert readings["first"]["plan"] == [
        f"write /etc/NetworkManager/system-connections/{name}" for name in readings["files"]
    ]
    assert links[bond["name"]] == {
        "mtu": bond["mtu"],
        "master": None,
        "parent": None,
        "kind": "bond",
        "slave_kind": None,
        "info": {
            "mode": bond["mode"],
            "miimon": bond["miimon"],
            "xmit_hash_policy": bond["xmit_hash_policy"],
            "ad_lacp_rate": bond["lacp_rate"],
        },
        "operstate": "UP",
        "addresses": sorted(bond["addresses"]),
    }
    assert sorted(bond["members"]) == sorted(PORTS)
    for member in network["members"]:
        link = links[member["name"]]
        assert (link["master"], link["slave_kind"], link["mtu"], link["addresses"]) == (
            bond["name"], "bond", member["mtu"], []
        )  # fmt: skip
    for vlan in network["vlans"]:
        link = links[vlan["name"]]
        assert (link["kind"], link["parent"], link["mtu"], link["addresses"]) == (
            "vlan", vlan["link"], vlan["mtu"], sorted(vlan["addresses"])
        )  # fmt: skip
        assert (link["info"]["protocol"], link["info"]["id"]) == ("802.1Q", vlan["id"])
    # What cxfab wrote is what it reads back from NetworkManager's keyfiles.
    assert readings["read_back"] == json.loads(json.dumps({**network, "ipoib": []}))
    assert links[MGMT] == readings["baseline"][MGMT]


def test_what_networkmanager_programs_of_the_egress_maps_today(readings, network):
    """NetworkManager alone: only `1 -> to` reaches the kernel (1.42 types each entry of
    IFLA_VLAN_EGRESS_QOS with its index, the kernel keeps the one typed 1: nmegress.py).
    A NetworkManager with the fix (1.46.6, 1.48.16, 1.50.2, 1.52+) fails this pin."""
    for vlan in network["vlans"]:
        assert egress(readings["applied"][vlan["name"]]) == {1: vlan["egress_qos_map"][1]}


def test_each_vlans_egress_priority_map_is_live_once_cxfab_completed_it(readings, network):
    completed = readings["completed"]
    got = {v["name"]: egress(completed["links"][v["name"]]) for v in network["vlans"]}
    assert got == {v["name"]: wanted_egress(v) for v in network["vlans"]}
    assert [step.split(":")[0] for step in completed["steps"]] == [
        f"set the egress map of {v['name']} over netlink" for v in network["vlans"]
    ]
    # Only the maps changed: the rest is as NetworkManager made it.
    strip = lambda links: {  # noqa: E731
        name: {**link, "info": {k: v for k, v in link["info"].items() if k != "egress_qos"}}
        for name, link in _no_state(links).items()
    }
    assert strip(completed["links"]) == strip(readings["applied"])


def test_the_sandbox_leaves_the_guests_hostname_alone(readings, lab):
    name = lab.hosts[0].name
    assert readings["hostname"] == {"before": name, "after": name}


def test_a_second_apply_changes_nothing(readings):
    again = readings["again"]
    assert (again["plan"], again["steps"]) == ([], [])
    # Nothing re-activated, so the completed egress maps stay as cxfab set them.
    assert _no_state(again["links"]) == _no_state(readings["completed"]["links"])


def test_an_unconfirmed_checkpoint_is_rolled_back_by_networkmanager(readings, network):
    reverted, baseline = readings["reverted"], readings["baseline"]
    built = [network["bond"]["name"], *(v["name"] for v in network["vlans"])]
    assert not [name for name in built if name in reverted]
    # Re-read: every link as before the first apply (ports bare, MTU, no master, no address).
    assert _no_state(reverted) == _no_state(baseline)
    assert readings["profiles"] == [] and readings["keyfiles_left"] == []
    assert readings["armed"] == {"armed": True, "method": "networkmanager checkpoint",
                                 "seconds": 240}  # fmt: skip
    assert readings["disarm"] == {"state": "reverted", "reason": f"not confirmed within {SHORT} s"}
    assert -1.0 < readings["rollback_after_deadline_s"] < 10.0
