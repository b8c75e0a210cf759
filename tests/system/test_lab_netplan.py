"""The netplan backend applies the lab host's bond and VLANs on a real netplan and kernel.

The integration tier shows that netplan accepts cxfab's file and renders what the
structured config says (tests/integration/test_netplan_backend.py), but the
controller's kernel can build neither the bond nor the VLANs. A lab guest's can:
tests/tools/netplan_lab_selftest.py runs cxfab_host_network's code with `backend:
netplan` in lab-host1, in fresh network and mount namespaces (veth ports named like the
data ports, empty /etc/netplan, /etc/systemd/network and /run), and reads back the
links over netlink, cxfab's files and what `netplan generate` made of them, through a
check-mode run, the apply, a second apply and an unconfirmed change the revert timer
undoes. This file compares those readings with the structured config.

The guest's own data ports, bond and VLANs live in another network namespace and are
never touched: it runs in the lab tier's first pytest run with the other test_lab_*
suites, or alone against a configured lab. One run serves every test here.
"""

from __future__ import annotations

import configparser
import shlex
from pathlib import Path

import pytest
import yaml
from cxfab.structured import netplan, persisted

from tests.system.nmlinks import guest_module, show, whole_as_configured
from tests.tools.netplan_lab_selftest import MGMT, SHORT

pytestmark = [pytest.mark.lab, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parents[2]
STRUCTURED = REPO / "tests/golden/lab/structured/lab-host1.yml"
OWN = "/etc/netplan/60-cxfab.yaml"


@pytest.fixture(scope="module")
def network():
    return yaml.safe_load(STRUCTURED.read_text())["network"]


@pytest.fixture(scope="module")
def readings(lab, request):
    host = lab.hosts[0]
    args = f"tests.tools.netplan_lab_selftest run {shlex.quote(str(STRUCTURED))}"
    result = guest_module(host, args)
    show(
        request,
        f"\nnetplan {result['netplan']} on {result['kernel']} in {host.name}: "
        f"{result['total_s']} s (check {result['check']['seconds']} s, apply "
        f"{result['first']['seconds']} s, again {result['again']['seconds']} s)",
    )
    return result


def _ini(text: str, section: str, key: str) -> list[str]:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str
    parser.read_string(text)
    return [parser[section][key]] if parser.has_option(section, key) else []


def _no_state(links: dict) -> dict:
    return {n: {k: v for k, v in link.items() if k != "operstate"} for n, link in links.items()}


def test_check_mode_names_every_file_and_link_and_writes_nothing(readings, network):
    check = readings["check"]
    assert check.get("failed") is not True, check.get("msg")
    assert (check["changed"], check["backend"], check["rollback"]) == (
        True, "netplan", {"armed": False}
    )  # fmt: skip
    wanted = netplan.render_netplan(network, [])
    assert sorted(check["files"]) == sorted(f"write {p}" for p in wanted)
    assert check["protected"] == {
        MGMT[0]: "is the management interface (cxfab_host.mgmt_interface)"
    }
    assert readings["written_by_check"] == {"files": {}, "generated": {}}


def test_the_apply_builds_the_links_as_the_structured_config_says(readings, network):
    first, after = readings["first"], readings["after_first"]
    assert first.get("failed") is not True, first.get("msg")
    assert first["changed"] and first["backend"] == "netplan"
    whole_as_configured(after["links"], network)
    assert _no_state(after["links"])[MGMT[0]] == _no_state(readings["baseline"])[MGMT[0]]


def test_cxfabs_files_say_what_the_structured_config_says(readings, network):
    files = readings["after_first"]["files"]
    assert sorted(files) == sorted(netplan.render_netplan(network, []))
    assert netplan.read_netplan(files) == persisted.comparable(network, [])


def test_netplan_generate_ran_and_rendered_the_bond_and_vlans_for_networkd(readings, network):
    generated, bond = readings["after_first"]["generated"], network["bond"]
    netdev = generated[f"10-netplan-{bond['name']}.netdev"]
    assert _ini(netdev, "Bond", "Mode") == [bond["mode"]]
    assert _ini(netdev, "NetDev", "MTUBytes") == [str(bond["mtu"])]
    for vlan in network["vlans"]:
        assert _ini(generated[f"10-netplan-{vlan['name']}.netdev"], "VLAN", "Id") == [
            str(vlan["id"])
        ]


def test_a_second_apply_changes_nothing(readings):
    again = readings["again"]
    assert (again["changed"], again["actions"], again["files"]) == (False, [], [])
    assert again["rollback"] == {"armed": False}  # nothing to change arms nothing


def test_an_unconfirmed_change_is_undone_by_the_timer_links_files_and_netplans_output(
    readings, network
):
    pending, changed = readings["pending"], readings["after_pending"]
    dropped = network["vlans"][-1]["name"]
    assert pending["changed"] and pending["rollback"]["armed"]
    assert pending["rollback"]["seconds"] == SHORT
    # The VLAN leaves the boot files and the kernel (linkplan.stale_links: a VLAN on
    # the bond that the intent no longer names is deleted); the timer brings it back.
    assert f"10-netplan-{dropped}.netdev" not in changed["generated"]
    assert dropped not in changed["links"]
    assert f"delete {dropped}" in pending["actions"]
    assert changed["links"][network["vlans"][0]["name"]]["mtu"] == 1500
    assert (
        f"remove /etc/systemd/network/10-netplan-{dropped}.netdev.d/60-cxfab-egress-qos.conf"
        in (pending["files"])
    )
    watchdog = readings["watchdog"]
    assert watchdog and watchdog["state"] == "reverted", watchdog
    assert watchdog["errors"] == [] and watchdog["reason"] == f"not confirmed within {SHORT} s"
    reverted, first = readings["after_revert"], readings["after_first"]
    assert _no_state(reverted["links"]) == _no_state(first["links"])
    assert reverted["files"] == first["files"]
    assert reverted["generated"] == first["generated"]  # netplan generate ran again
