"""NetworkManager keyfile and netplan renderers: exact keys, and the round trip
render -> read == comparable on every golden host and on the shapes the goldens lack."""

import configparser
from pathlib import Path

import pytest
import yaml
from cxfab.structured import hosts, netplan, nmkeyfile
from cxfab.structured.persisted import comparable

ROOT = Path(__file__).resolve().parents[2]
GOLDEN_HOSTS = sorted(
    path
    for path in (ROOT / "tests/golden").glob("*/structured/*.yml")
    if "network" in (yaml.safe_load(path.read_text()) or {})
)


def golden(name: str) -> dict:
    return yaml.safe_load((ROOT / "tests/golden" / name).read_text())


def _intent_host(mode: str, qos: bool = True, bond: bool = True) -> dict:
    host = {
        "mgmt_interface": "eth0",
        "bond": {"name": "bond1", "members": ["p1", "p0"], "mode": mode, "lacp_rate": "fast",
                 "mtu": 4200, "address": "10.0.0.5/24"} if bond else None,
        "vlans": [{"id": 7, "mtu": 1500}, {"id": 5, "mtu": 4200, "address": "10.5.0.5/24"}]
        if bond else [],
        "qos": [{"vlan": 5, "user_priority": 4, "traffic_class": 2, "tsa": "ets",
                 "bandwidth_percent": 50}] if qos else [],
    }  # fmt: skip
    return host


SHAPES = {
    "active-backup, one VLAN without QoS map": _intent_host("active-backup"),
    "balance-xor without QoS": _intent_host("balance-xor", qos=False),
    "802.3ad": _intent_host("802.3ad"),
    "no bond": _intent_host("802.3ad", qos=False, bond=False),
}


def sections_of(structured: dict):
    return structured["network"], structured["ipoib"]


def all_cases():
    cases = [
        pytest.param(sections_of(yaml.safe_load(p.read_text())), id=str(p.relative_to(ROOT)))
        for p in GOLDEN_HOSTS
    ]
    for label, host in SHAPES.items():
        network = hosts.network_section(host)
        ipoib = [{"name": "ib0", "nic": "x", "pci": "0000:01:00.0", "port": 1,
                  "mode": "datagram", "mtu": 2044, "addresses": []}]  # fmt: skip
        cases.append(pytest.param((network, ipoib), id=label))
    return cases


def test_goldens_are_found():
    names = {p.name for p in GOLDEN_HOSTS}
    assert {"lab-host1.yml", "lab-host2.yml", "apricot.yml", "cardamine.yml"} <= names


@pytest.mark.parametrize("sections", all_cases())
def test_keyfiles_round_trip(sections):
    network, ipoib = sections
    files = nmkeyfile.render_keyfiles(network, ipoib)
    assert nmkeyfile.read_keyfiles(files) == comparable(network, ipoib)


@pytest.mark.parametrize("sections", all_cases())
def test_netplan_round_trip(sections):
    network, ipoib = sections
    files = netplan.render_netplan(network, ipoib)
    assert netplan.read_netplan(files) == comparable(network, ipoib)


def _ini(text: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read_string(text)
    return parser


def test_keyfiles_of_lab_host1_say_what_the_structured_config_says():
    network, ipoib = sections_of(golden("lab/structured/lab-host1.yml"))
    files = nmkeyfile.render_keyfiles(network, ipoib)
    assert sorted(files) == [
        "cxfab-bond0.10.nmconnection", "cxfab-bond0.20.nmconnection",
        "cxfab-bond0.30.nmconnection", "cxfab-bond0.nmconnection",
        "cxfab-ens1f0.nmconnection", "cxfab-ens1f1.nmconnection",
    ]  # fmt: skip
    bond = _ini(files["cxfab-bond0.nmconnection"])
    assert dict(bond["connection"]) | {"uuid": "-"} == {
        "id": "cxfab-bond0", "uuid": "-", "type": "bond", "interface-name": "bond0",
    }  # fmt: skip
    assert dict(bond["bond"]) == {
        "mode": "802.3ad", "miimon": "100", "lacp_rate": "fast", "xmit_hash_policy": "layer2",
    }  # fmt: skip
    assert bond["ethernet"]["mtu"] == "9000"
    assert dict(bond["ipv4"]) == {"method": "manual", "address1": "12.0.0.11/24"}
    assert dict(bond["ipv6"]) == {"method": "disabled"}
    port = _ini(files["cxfab-ens1f0.nmconnection"])
    assert port["connection"]["master"] == "bond0"
    assert port["connection"]["slave-type"] == "bond"
    assert port["connection"]["type"] == "ethernet"
    assert not port.has_section("ipv4")
    vlan = _ini(files["cxfab-bond0.20.nmconnection"])
    assert dict(vlan["vlan"]) == {
        "id": "20", "parent": "bond0",
        "egress-priority-map": "0:3;1:3;2:3;3:3;4:3;5:3;6:3;7:3;",
    }  # fmt: skip
    assert vlan["ethernet"]["mtu"] == "9000"


def test_keyfile_uuid_is_stable_and_distinct():
    network, ipoib = sections_of(golden("lab/structured/lab-host1.yml"))
    first = nmkeyfile.render_keyfiles(network, ipoib)
    assert first == nmkeyfile.render_keyfiles(network, ipoib)
    uuids = {_ini(text)["connection"]["uuid"] for text in first.values()}
    assert len(uuids) == len(first)


def test_keyfile_ipoib_profile():
    network, ipoib = sections_of(golden("example/structured/apricot.yml"))
    profile = _ini(nmkeyfile.render_keyfiles(network, ipoib)["cxfab-ibp59s0.nmconnection"])
    assert profile["connection"]["type"] == "infiniband"
    assert dict(profile["infiniband"]) == {"transport-mode": "connected", "mtu": "65520"}


def test_keyfile_reader_takes_nm_written_variants():
    """A port naming its bond by uuid (nmcli) and the 1.46+ controller/port-type keys."""
    network, ipoib = sections_of(golden("lab/structured/lab-host1.yml"))
    files = nmkeyfile.render_keyfiles(network, ipoib)
    bond_uuid = _ini(files["cxfab-bond0.nmconnection"])["connection"]["uuid"]
    files["cxfab-ens1f0.nmconnection"] = files["cxfab-ens1f0.nmconnection"].replace(
        "master=bond0", f"master={bond_uuid}"
    )
    files["cxfab-ens1f1.nmconnection"] = (
        files["cxfab-ens1f1.nmconnection"]
        .replace("master=", "controller=")
        .replace("slave-type=", "port-type=")
    )
    files["someone-else.nmconnection"] = "[connection]\nid=x\ntype=ethernet\ninterface-name=eth9\n"
    assert nmkeyfile.read_keyfiles(files) == comparable(network, ipoib)


def test_netplan_document_of_lab_host1():
    network, ipoib = sections_of(golden("lab/structured/lab-host1.yml"))
    files = netplan.render_netplan(network, ipoib)
    doc = yaml.safe_load(files[netplan.NETPLAN_FILE])["network"]
    assert doc["version"] == 2
    assert doc["bonds"]["bond0"]["parameters"] == {
        "mode": "802.3ad", "mii-monitor-interval": "100ms", "lacp-rate": "fast",
        "transmit-hash-policy": "layer2",
    }  # fmt: skip
    assert doc["bonds"]["bond0"]["interfaces"] == ["ens1f0", "ens1f1"]
    assert doc["ethernets"] == {
        "ens1f0": {"renderer": "networkd", "mtu": 9000},
        "ens1f1": {"renderer": "networkd", "mtu": 9000},
    }
    assert doc["vlans"]["bond0.10"] == {
        "renderer": "networkd", "link-local": [], "id": 10, "link": "bond0", "mtu": 9000,
        "addresses": ["12.0.10.11/24"],
    }  # fmt: skip
    dropin = "/etc/systemd/network/10-netplan-bond0.10.netdev.d/60-cxfab-egress-qos.conf"
    assert files[dropin].endswith("[VLAN]\nEgressQOSMaps=0-1 1-1 2-1 3-1 4-1 5-1 6-1 7-1\n")
    # the drop-in carries what cxfab's own networkd file carries
    assert (
        "EgressQOSMaps=0-1 1-1 2-1 3-1 4-1 5-1 6-1 7-1"
        in golden("lab/structured/lab-host1.yml")["networkd"]["60-cxfab-bond0.10.netdev"]
    )


def test_netplan_ipoib_and_bare_mii_interval():
    network, ipoib = sections_of(golden("example/structured/cardamine.yml"))
    files = netplan.render_netplan(network, ipoib)
    doc = yaml.safe_load(files[netplan.NETPLAN_FILE])["network"]
    assert doc["ethernets"]["ibp59s0"]["infiniband-mode"] == "datagram"
    assert doc["ethernets"]["ibp59s0"]["mtu"] == 2044
    # netplan reads a bare number as milliseconds, "1s" as a second
    text = files[netplan.NETPLAN_FILE].replace(
        "mii-monitor-interval: 100ms", "mii-monitor-interval: 1s"
    )
    files[netplan.NETPLAN_FILE] = text
    assert netplan.read_netplan(files)["bond"]["miimon"] == 1000
    files[netplan.NETPLAN_FILE] = text.replace(
        "mii-monitor-interval: 1s", "mii-monitor-interval: 100"
    )
    assert netplan.read_netplan(files)["bond"]["miimon"] == 100


def test_readers_see_a_difference():
    network, ipoib = sections_of(golden("lab/structured/lab-host1.yml"))
    want = comparable(network, ipoib)
    files = nmkeyfile.render_keyfiles(network, ipoib)
    files["cxfab-bond0.30.nmconnection"] = files["cxfab-bond0.30.nmconnection"].replace(
        "7:5;", "7:6;"
    )
    assert nmkeyfile.read_keyfiles(files)["vlans"][2]["egress_qos_map"][7] == 6
    assert nmkeyfile.read_keyfiles(files) != want
    files = netplan.render_netplan(network, ipoib)
    files[netplan.NETPLAN_FILE] = files[netplan.NETPLAN_FILE].replace(
        "lacp-rate: fast", "lacp-rate: slow"
    )
    assert netplan.read_netplan(files)["bond"]["lacp_rate"] == "slow"
