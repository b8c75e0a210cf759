"""Links read in a lab guest (nm_lab_selftest.links) against the structured config's network.

Shared by the NetworkManager suites: the sandbox's (test_lab_networkmanager.py) and the
guest whose own network NetworkManager owns (test_host_networkmanager.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cxfab.host.net.linkplan import normalise_map

from tests.lab.vm import host_stack

REPO = Path(__file__).resolve().parents[2]
_PYTHON_CHECKED: set[str] = set()  # guests whose python3 matches the venv's


def show(request, text: str) -> None:
    """Print `text` into the run's log past pytest's capture (a module fixture has no
    capsys), as the QoS figures are: CI's log keeps the timings."""
    capture = request.config.pluginmanager.getplugin("capturemanager")
    if capture is None:  # pytest -p no:capture: nothing to get past
        print(text, flush=True)
        return
    with capture.global_and_fixture_disabled():
        print(text, flush=True)


def guest_module(host, args: str, timeout: float = 900) -> dict:
    """`python3 -m <args>` in a lab guest (its python3, this checkout and the venv's
    packages on PYTHONPATH: the guests share the controller's root fs): its last line,
    JSON. A reading with "error" fails the test with it and the log it carries."""
    if host.name not in _PYTHON_CHECKED:  # one SSH round trip per guest, not per call
        version = host.run("python3 -c 'import sys; print(sys.version_info[:2])'").strip()
        if version != str(sys.version_info[:2]):
            pytest.fail(f"the guest's python3 is {version}, the venv's {sys.version_info[:2]}: "
                        "the venv's packages cannot be imported there")  # fmt: skip
        _PYTHON_CHECKED.add(host.name)
    command = host_stack.guest_python_command(args)
    result = json.loads(host.run(command, timeout=timeout).strip().splitlines()[-1])
    if isinstance(result, dict) and "error" in result:
        pytest.fail(f"{host.name}: {args}: {result['error']}\n{result.get('log', '')}")
    return result


def egress(link: dict) -> dict[int, int]:
    """A VLAN's egress map as the kernel reports it (entries to priority 0 left out)."""
    return {int(m["from"]): int(m["to"]) for m in link["info"].get("egress_qos", [])}


def wanted_egress(vlan: dict) -> dict[int, int]:
    # The kernel does not report entries mapping to priority 0.
    return normalise_map(vlan["egress_qos_map"])


def rebuilt_as_configured(links: dict, network: dict) -> None:
    """The bond, its members and the VLANs as configured (the egress maps aside)."""
    bond = network["bond"]
    assert (links[bond["name"]]["kind"], links[bond["name"]]["mtu"]) == ("bond", bond["mtu"])
    assert links[bond["name"]]["addresses"] == sorted(bond["addresses"])
    for member in network["members"]:
        assert links[member["name"]]["master"] == bond["name"]
    for vlan in network["vlans"]:
        link = links[vlan["name"]]
        assert (link["kind"], link["parent"], link["mtu"], link["addresses"]) == (
            "vlan", vlan["link"], vlan["mtu"], sorted(vlan["addresses"])
        )  # fmt: skip


def whole_as_configured(links: dict, network: dict) -> None:
    """Everything cxfab configures of the network: bond options, members' MTUs, VLAN ids
    and every egress map too."""
    rebuilt_as_configured(links, network)
    bond = network["bond"]
    assert links[bond["name"]]["info"] == {
        "mode": bond["mode"],
        "miimon": bond["miimon"],
        "xmit_hash_policy": bond["xmit_hash_policy"],
        "ad_lacp_rate": bond["lacp_rate"],
    }, links[bond["name"]]
    for member in network["members"]:
        link = links[member["name"]]
        assert (link["slave_kind"], link["mtu"], link["addresses"]) == ("bond", member["mtu"], [])
    for vlan in network["vlans"]:
        link = links[vlan["name"]]
        assert (link["info"]["protocol"], link["info"]["id"]) == ("802.1Q", vlan["id"])
        assert egress(link) == wanted_egress(vlan), (vlan["name"], link["info"])
