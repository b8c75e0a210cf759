"""Issue 25 finding 11: MPO members against the intent, the pair's system MACs
normalised, and the older `show mlag-vip` layout with spaces in hostnames."""

from cxfab.switch.onyx import health, shows
from onyx_helpers import FIXTURES, example_fabric, intended

HEADER = "  Group          Type     Local          Peer\n"


def _mpo_checks(rows: str) -> dict:
    sc, _ = intended(example_fabric(), "sw-a")
    outputs = {"mpo": HEADER + rows}
    return {c["id"]: c for c in health.switch_checks(sc, outputs, {}) if c["id"].startswith("mpo.")}


def test_an_individual_or_absent_local_member_fails_the_mpo_and_is_named():
    checks = _mpo_checks(
        "  1 Mpo1(U)     LACP     Eth1/1(I)      Eth1/1(P)\n"
        "  2 Mpo2(U)     LACP     N/A            Eth1/2(P)\n"
    )
    assert checks["mpo.1"]["status"] == "fail", checks["mpo.1"]
    assert "Eth1/1(I)" in checks["mpo.1"]["observed"]
    assert checks["mpo.2"]["status"] == "fail", checks["mpo.2"]
    assert "Eth1/2(absent)" in checks["mpo.2"]["observed"]


def test_a_member_other_than_the_intended_one_fails_the_mpo():
    checks = _mpo_checks(
        "  1 Mpo1(U)     LACP     Eth1/9(P)      Eth1/1(P)\n"
        "  2 Mpo2(U)     LACP     Eth1/2(P)      Eth1/2(P)\n"
    )
    assert checks["mpo.1"]["status"] == "fail"
    assert "Eth1/1(absent)" in checks["mpo.1"]["observed"]
    assert checks["mpo.2"]["status"] == "pass", checks["mpo.2"]


def test_system_macs_equal_but_for_case_pass_the_pair_check():
    structures = {name: intended(example_fabric(), name)[0] for name in ("sw-a", "sw-b")}
    text = (FIXTURES / "show_mlag_healthy.txt").read_text()
    lower = text.replace("00:00:5E:00:01:5D", "00:00:5e:00:01:5d")
    assert lower != text
    outputs = {"sw-a": {"mlag": text}, "sw-b": {"mlag": lower}}
    checks = {c["id"]: c for c in health.pair_checks("rack1", structures, outputs)}
    assert checks["mlag.system_mac_equal"]["status"] == "pass", checks["mlag.system_mac_equal"]
    outputs["sw-b"]["mlag"] = text.replace("00:00:5E:00:01:5D", "00:00:5E:00:01:5E")
    checks = {c["id"]: c for c in health.pair_checks("rack1", structures, outputs)}
    assert checks["mlag.system_mac_equal"]["status"] == "fail"


# The older layout as the Mellanox community MLAG article (copied into Cray docs) prints it.
OLD_VIP = """MLAG VIP
========
MLAG group name: my-mlag-group
MLAG VIP address: 10.234.23.254 /24
Active nodes: 2

Hostname             VIP-State            IP Address
----------------------------------------------------
Switch 1              master               10.234.23.1
Switch 2              standby              10.234.23.2
"""


def test_the_older_mlag_vip_layout_reads_hostnames_with_spaces():
    vip = shows.parse_show_mlag_vip(OLD_VIP)
    assert (vip["group"], vip["vip"], vip["active_nodes"]) == (
        "my-mlag-group",
        "10.234.23.254/24",
        2,
    )
    assert [(n["hostname"], n["state"], n["ip"]) for n in vip["nodes"]] == [
        ("Switch 1", "master", "10.234.23.1"),
        ("Switch 2", "standby", "10.234.23.2"),
    ]
