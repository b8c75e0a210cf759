"""`show vrrp` is read from the manual's two table layouts (docs/switches.md, "VRRP"),
and the emulator's tables of a 3.6 and a 3.10 release read back to its own state."""

from __future__ import annotations

import pytest
from cxfab.switch.onyx import health, shows

from tests.lab.onyx import shows as lab_shows
from tests.lab.onyx import vrrp
from tests.lab.onyx.switch import Identity, Switch
from tests.unit.test_lab_dataplane import lab_switch

OLD_HEADER = "Interface  VR  Pri  Time  Pre  State   VR IP addr\n" + "-" * 49 + "\n"
NEW_HEADER = (
    "Interface  VR   Admin State  Priority  Adv-Intvl  Preempt   State   VR IP addr\n"
    + "-" * 79
    + "\n"
)


def test_the_3_6_table_is_read_by_its_columns():
    text = OLD_HEADER + "Vlan20     7   200  3s    N    Backup  198.51.100.1\n"
    assert shows.parse_show_vrrp(text) == {
        (20, 7): {"state": "Backup", "virtual_ip": "198.51.100.1", "priority": 200}
    }


def test_the_3_9_table_is_read_by_its_columns():
    text = (
        NEW_HEADER
        + "Vlan20     100  Enabled      150       1          Enabled   Master  198.51.100.40\n"
    )
    assert shows.parse_show_vrrp(text) == {
        (20, 100): {"state": "Master", "virtual_ip": "198.51.100.40", "priority": 150}
    }


def test_the_ipv6_row_of_a_router_merges_and_the_ipv4_address_is_its_virtual_ip():
    rows = [
        "Vlan20 100 Enabled 100 1 Enabled Master 2001:db8::40",
        "vlan20 100 Enabled 100 1 Enabled Master 198.51.100.40",
    ]
    for ordered in (rows, rows[::-1]):
        read = shows.parse_show_vrrp(NEW_HEADER + "\n".join(ordered) + "\n")
        assert read == {
            (20, 100): {"state": "Master", "virtual_ip": "198.51.100.40", "priority": 100}
        }


def test_a_router_interface_row_is_read_but_not_returned():
    text = OLD_HEADER + "Eth1/5     1   200  2s    Y    Init    192.0.2.10\n"
    assert shows.parse_show_vrrp(text) == {}
    # ...read, all the same: a garbled Eth row is not skipped over.
    with pytest.raises(health.ReadError, match="show vrrp"):
        shows.parse_show_vrrp(OLD_HEADER + "Eth1/5     x   200  2s    Y    Init    192.0.2.10\n")


@pytest.mark.parametrize("header", [OLD_HEADER, NEW_HEADER, NEW_HEADER.splitlines()[0]])
def test_a_table_with_no_row_is_no_instances(header):
    assert shows.parse_show_vrrp(header) == {}


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "no VRRP table header"),
        ("  \n-----\n", "no VRRP table header"),
        ("VRRP vlan 1 vrid 1:\n  Interface vlan: 1\n  VRID: 1\n  State: Master\n", "header"),
        ("Interface VR State VR IP addr\nVlan1 1 Master 12.0.0.1\n", "header"),
        (OLD_HEADER + "Vlan1      1   100  1s    Y    Master\n", "6 columns, not 7"),
        (NEW_HEADER + "Vlan1 1 Enabled 100 1s Master 12.0.0.1\n", "7 columns, not 8"),
        (NEW_HEADER + "Vlan1 1 Enabled 100 1 Enabled Master 12.0.0.1 extra\n", "9 columns"),
        (OLD_HEADER + "Vlan1      one 100  1s    Y    Master  12.0.0.1\n", "not a number"),
        (NEW_HEADER + "Vlan1 1 Enabled high 1 Enabled Master 12.0.0.1\n", "not a number"),
        (OLD_HEADER + "% VRRP database is not ready\n", "columns"),
    ],
)
def test_an_output_it_cannot_read_is_refused_naming_show_vrrp(text, why):
    with pytest.raises(health.ReadError, match=r"could not read `show vrrp`") as raised:
        shows.parse_show_vrrp(text)
    assert why in str(raised.value)


@pytest.mark.parametrize("release", ["3.6.8008", "3.10.4504"])
def test_the_emulators_table_reads_back_to_its_own_vrrp_state(release):
    switch = Switch(Identity("lab-sw-a", release, "7C:FE:90:11:00:0A", "127.0.0.1"))
    switch.cfg = lab_switch()
    for line in (
        "protocol vrrp",
        "interface vlan 30 vrrp 30",
        "interface vlan 30 vrrp 30 address 12.0.30.254",
        "interface vlan 30 vrrp 30 priority 120",
        "interface vlan 30 vrrp 31",
        "interface vlan 30 vrrp 31 address 12.0.30.253",
        "interface vlan 30 vrrp 31 advertisement-interval 3",
        "no interface vlan 30 vrrp 31 preempt",
    ):
        switch.cfg.apply(line)
    switch.vrrp = {"30:30": vrrp.Instance(vrrp.MASTER), "30:31": vrrp.Instance(vrrp.BACKUP)}
    text = lab_shows.show_vrrp(switch, json_print=False)
    want = {
        (v["vlan"], v["vrid"]): {
            "state": v["state"],
            "virtual_ip": v["address"],
            "priority": v["priority"],
        }
        for v in switch.vrrp_view()
    }
    assert len(want) == 2 and shows.parse_show_vrrp(text) == want
    # The layout is the release's: 3.6 prints `Pri Time Pre`, 3.9 on `Adv-Intvl`.
    assert ("Adv-Intvl" in text) == (release != "3.6.8008")
    assert ("3s    N" in text) == (release == "3.6.8008")
