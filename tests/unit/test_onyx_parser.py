"""Running-config parsing: ranges, both address formats, comments, release differences."""

from cxfab.switch.onyx.parser import parse_running_config
from onyx_helpers import FIXTURES


def test_ranges_expand_to_one_statement_per_object():
    parsed = parse_running_config(
        "interface ethernet 1/7-1/8 channel-group 1 mode active\n"
        "interface mlag-port-channel 1-3 no shutdown\nvlan 10-12\n"
    )
    assert parsed.get(("eth_channel", "1/8")) == ("port-channel", 1, "active")
    assert ("mpo_enabled", 3) in parsed.statements
    assert [k for k in parsed.statements if k[0] == "vlan"] == [
        ("vlan", 10),
        ("vlan", 11),
        ("vlan", 12),
    ]


def test_dotted_mask_prefix_and_primary_forms_are_equal():
    forms = [
        "interface vlan 10 ip address 12.0.10.252 255.255.255.0",
        "interface vlan 10 ip address 12.0.10.252/24",
        "interface vlan 10 ip address 12.0.10.252/24 primary",
    ]
    values = {parse_running_config(f).get(("svi_ip", 10)) for f in forms}
    assert values == {"12.0.10.252/24"}


def test_mlag_vip_with_and_without_space_before_prefix():
    a = parse_running_config("mlag-vip dom ip 10.0.0.50 /24 force").get(("mlag_vip",))
    b = parse_running_config("mlag-vip dom ip 10.0.0.50/24 force").get(("mlag_vip",))
    c = parse_running_config("mlag-vip dom ip 10.0.0.50 255.255.255.0").get(("mlag_vip",))
    assert a == b == c == ("dom", "10.0.0.50/24")


def test_mac_case_and_mismatched_suffix_do_not_matter():
    parsed = parse_running_config("mlag system-mac 00:00:5e:00:01:5d [Mismatched]")
    assert parsed.get(("mlag_system_mac",)) == "00:00:5E:00:01:5D"


def test_vlan_1_is_never_a_statement_and_unknown_lines_are_kept():
    parsed = parse_running_config("vlan 1\nvlan 1 name default\nntp server 10.0.0.1\n## x\n")
    assert parsed.statements == {}
    assert parsed.unknown == ["ntp server 10.0.0.1"]


def test_negated_vrrp_preempt_in_both_spellings():
    a = parse_running_config("no interface vlan 10 vrrp 10 preempt")
    b = parse_running_config("interface vlan 10 no vrrp 10 preempt")
    assert ("vrrp_no_preempt", 10, 10) in a.statements
    assert a.statements.keys() == b.statements.keys()


def test_bad_address_is_a_warning_not_a_crash():
    parsed = parse_running_config("interface vlan 10 ip address 12.0.10.300/24")
    assert parsed.warnings and "12.0.10.300" in parsed.warnings[0]
    assert ("svi_ip", 10) not in parsed.statements


def test_real_3_6_running_config_parses_with_header():
    parsed = parse_running_config((FIXTURES / "sw-a_3.6.5000_running.cfg").read_text())
    assert parsed.header["hostname"] == "sw-a"
    assert parsed.get(("svi_ip", 4000)) == "192.168.255.253/30"
    assert parsed.get(("eth_channel", "1/36")) == ("port-channel", 100, "active")
    assert parsed.get(("vlan_name", 10)) == "storage-1g"
    assert parsed.get(("mpo_description", 1)) == "cardamine bond0"
    assert parsed.warnings == []
