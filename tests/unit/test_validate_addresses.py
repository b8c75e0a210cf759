"""Addresses in one canonical form: no IPv4 spelled as a name, no alias passes a
duplicate check, no netmask form, no MLAG VIP subnet wide enough to hold anything."""

from __future__ import annotations

import pytest
from cxfab.intent.validate import validate_inventory

from tests.tools import inventory

EXAMPLE = inventory.load()
MGMT = "cxfab_switch_pairs[0].peers[0].mgmt_address"


def errors(patches=(), settings=None) -> list[str]:
    inv = inventory.apply(EXAMPLE, list(patches))
    host_settings = inv.host_settings()
    for host, values in (settings or {}).items():
        host_settings.setdefault(host, {}).update(values)
    result = validate_inventory(inv.fabric_vars(), inv.cxfab_hosts(), inv.groups, host_settings)
    return [str(error) for error in result.errors]


def test_the_example_is_valid():
    assert errors() == []


@pytest.mark.parametrize(
    ("spelled", "address"),
    [
        ("010.0.0.1", "8.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("0x7f.0.0.1", "127.0.0.1"),
        ("10.0.0.0x33", "10.0.0.51"),
    ],
)
def test_a_non_canonical_ipv4_is_not_a_dns_name(spelled, address):
    found = errors([{"path": MGMT, "value": spelled}])
    assert any(
        line.startswith(f"{MGMT}: '{spelled}' is not a canonical IPv4 address")
        and f"reads as {address}:" in line
        for line in found
    ), found


def test_a_dns_name_is_still_accepted():
    found = errors([{"path": MGMT, "value": "sw-a.mgmt.example.net"}])
    assert not any(line.startswith(MGMT) for line in found), found


def test_two_names_of_one_address_are_one_management_endpoint():
    found = errors(
        [
            {"path": MGMT, "value": "localhost"},
            {"path": "cxfab_switch_pairs[0].peers[1].mgmt_address", "value": "127.0.0.1"},
        ]
    )
    assert any(
        line.startswith("cxfab_switch_pairs[0].peers[1].mgmt_address: 127.0.0.1 port 22 is also")
        for line in found
    ), found


@pytest.mark.parametrize("alias", ["127.1", "127.000.000.001", "localhost"])
def test_ansible_host_aliases_of_one_address_are_duplicates(alias):
    found = errors(
        settings={"cardamine": {"ansible_host": "127.0.0.1"}, "apricot": {"ansible_host": alias}}
    )
    assert any(
        line.startswith("ansible_host (host apricot):")
        or line.startswith("ansible_host (host cardamine):")
        for line in found
    ), found


@pytest.mark.parametrize(
    "value", ["12.0.10.25/255.255.255.0", "12.0.10.25/024", "12.0.10.25/0.0.0.255"]
)
def test_a_host_address_in_netmask_form_is_refused(value):
    path = "cxfab_host.vlans[0].address"
    found = errors([{"host": "apricot", "path": path, "value": value}])
    assert any(line.startswith(f"{path} (host apricot): '{value}' is not") for line in found), found


@pytest.mark.parametrize("prefix", [0, 8, 15, 31])
def test_an_mlag_vip_subnet_must_be_a_management_subnet(prefix):
    path = "cxfab_switch_pairs[0].mlag.vip"
    vip = "10.0.0.50" if prefix else "0.0.0.0"
    found = errors([{"path": path, "value": f"{vip}/{prefix}"}])
    assert any(line.startswith(f"{path}: ") and "/16 to /30" in line for line in found), found
