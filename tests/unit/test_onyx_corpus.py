"""The show-output corpus: each layout is read right, or refused with "could not read".

And the rule behind it: no health check passes on an output it did not read.
"""

import pytest
from cxfab.switch.onyx import health, shows
from cxfab.switch.onyx.session import clean_output, first_error
from cxfab.switch.onyx.version import release_from_show_version
from onyx_helpers import FIXTURES, example_fabric, intended

CORPUS = FIXTURES / "corpus"


def text(name: str) -> str:
    return (CORPUS / name).read_text()


@pytest.mark.parametrize("name", ["mlag_3.10.txt", "mlag_3.6_peers_state.txt"])
def test_both_mlag_layouts_read_the_same_values(name):
    mlag = shows.parse_show_mlag(text(name))
    assert (mlag["admin"], mlag["oper"], mlag["system_mac"]) == (
        "Enabled",
        "Up",
        "00:00:5E:00:01:5D",
    )
    assert (mlag["inactive"], mlag["active_partial"], mlag["active_full"]) == (0, 0, 2)
    assert mlag["ipls"][0]["state"] == "Up" and mlag["ipls"][0]["peer_ip"] == "192.168.255.254"
    assert [m["hostname"] for m in mlag["members"]] == ["sw-a", "sw-b"]


@pytest.mark.parametrize("name", ["mlag_vip_3.10.txt", "mlag_vip_old_header.txt"])
def test_both_mlag_vip_layouts_read_the_vip_with_its_prefix(name):
    vip = shows.parse_show_mlag_vip(text(name))
    assert (vip["group"], vip["vip"], vip["active_nodes"]) == ("rack1-mlag", "10.0.0.50/24", 2)
    assert sorted(n["state"] for n in vip["nodes"]) == ["master", "standby"]


def test_mpo_summary_keeps_local_and_peer_members_apart():
    mpos = shows.parse_mpo_summary(text("mpo_summary_wide.txt"))
    assert mpos[1]["ports"] == [("1/1", "P")] and mpos[1]["peer_ports"] == [("1/1", "S")]
    assert mpos[2]["ports"] == [("1/2", "P"), ("1/3", "P")]


def test_json_print_version_without_product_release_gives_the_release_not_the_uptime():
    assert release_from_show_version(text("version_json_no_product_release.txt")) == "3.10.2002"


@pytest.mark.parametrize(
    ("name", "parser"),
    [
        ("mlag_truncated.txt", shows.parse_show_mlag),
        ("empty.txt", shows.parse_show_mlag),
        ("empty.txt", shows.parse_show_mlag_vip),
        ("empty.txt", shows.parse_mpo_summary),
        ("empty.txt", shows.parse_show_magp),
        ("empty.txt", shows.parse_configuration_files),
        ("mlag_error_after_line1.txt", shows.parse_show_mlag),
        ("mlag_3.10.txt", shows.parse_show_mlag_vip),
        ("magp.txt", shows.parse_mpo_summary),
        ("not_a_record.txt", shows.parse_show_magp),
        ("magp_truncated.txt", shows.parse_show_magp),
        ("mlag_3.10.txt", shows.parse_show_magp),
        ("empty.txt", shows.parse_show_vrrp),
        ("not_a_record.txt", shows.parse_show_vrrp),
        ("vrrp_truncated_row.txt", shows.parse_show_vrrp),
        ("magp_20_30.txt", shows.parse_show_vrrp),
    ],
)
def test_unreadable_outputs_are_refused_with_command_and_first_lines(name, parser):
    with pytest.raises(health.ReadError, match=r"could not read `show [a-z -]+`: .+; first lines"):
        parser(text(name))


def test_percent_error_and_async_message_are_found_on_any_line():
    assert first_error(text("mlag_error_after_line1.txt")).startswith("% Internal error")
    cleaned, found = clean_output(text("mlag_async_middle.txt"))
    assert found == ["other state: ready"]
    assert shows.parse_show_mlag(cleaned) == shows.parse_show_mlag(text("mlag_3.10.txt"))


def _good_outputs():
    return {
        "files": "Active configuration: initial\nUnsaved changes : no\n",
        "mlag": text("mlag_3.10.txt"),
        "mlag_vip": text("mlag_vip_3.10.txt"),
        "mpo": text("mpo_summary_wide.txt").replace("Eth1/1(S)", "Eth1/1(P)"),
        "magp": "",
    }


@pytest.mark.parametrize(
    "damaged", ["empty.txt", "mlag_truncated.txt", "mlag_error_after_line1.txt"]
)
@pytest.mark.parametrize("command", ["files", "mlag", "mlag_vip", "mpo"])
def test_no_check_passes_on_an_output_it_did_not_read(command, damaged):
    sc, _ = intended(example_fabric(), "sw-a")
    sc = {**sc, "anycast_gateways": [], "vrrp": []}
    # 3.6.5000: the release whose health reads are text (json-print from 3.6.6000).
    good = health.switch_checks(sc, _good_outputs(), {}, "3.6.5000")
    bad = health.switch_checks(sc, {**_good_outputs(), command: text(damaged)}, {}, "3.6.5000")
    changed = [b for g, b in zip(good, bad, strict=True) if g != b]
    assert changed, "damaging the output must change some check"
    for check in changed:
        assert check["status"] == "fail"
        assert "could not read" in str(check["observed"]), check
    # Checks that do not depend on the damaged output keep their verdict.
    assert all(b["status"] == g["status"] for g, b in zip(good, bad, strict=True) if g == b)


def test_system_mac_equal_never_compares_two_missing_values():
    sc_a, _ = intended(example_fabric(), "sw-a")
    sc_b, _ = intended(example_fabric(), "sw-b")
    outputs = {"sw-a": {"mlag": text("empty.txt")}, "sw-b": {"mlag": text("mlag_truncated.txt")}}
    checks = health.pair_checks("rack1", {"sw-a": sc_a, "sw-b": sc_b}, outputs)
    equal = next(c for c in checks if c["id"] == "mlag.system_mac_equal")
    assert equal["status"] == "fail" and "unreadable" in equal["observed"]


# ------------------------------------------------------------------ gateways and the partner
DAMAGED = ["empty.txt", "not_a_record.txt", "mlag_error_after_line1.txt", "mlag_truncated.txt"]


def gateway_fabric():
    """The example pair with VLANs 1 and 10 on VRRP (masters spread) and 20, 30 on MAGP."""
    fabric = example_fabric(lossless=False)
    for vlan in fabric["vlans"][:2]:
        vlan["gateway"] = {"mode": "vrrp", "virtual_ip": vlan["gateway"]["virtual_ip"]}
    return fabric


def _gateway_outputs(switch: str) -> dict:
    return {"magp": text("magp_20_30.txt"), "vrrp": text(f"vrrp_{switch}.txt")}


def test_vrrp_tables_read_with_their_state_and_priority():
    vrrp = shows.parse_show_vrrp(text("vrrp_sw-a.txt"))  # 3.9+, VLAN 1 also on IPv6
    assert vrrp[(1, 1)] == {"state": "Master", "virtual_ip": "12.0.0.1", "priority": 110}
    assert vrrp[(10, 10)]["state"] == "Backup"
    assert shows.parse_show_vrrp(text("vrrp_sw-b.txt")) == {  # 3.6, Eth1/5 left out
        (1, 1): {"state": "Backup", "virtual_ip": "12.0.0.1", "priority": 100},
        (10, 10): {"state": "Master", "virtual_ip": "12.0.10.1", "priority": 110},
    }


@pytest.mark.parametrize("damaged", [*DAMAGED, "magp_truncated.txt", "vrrp_truncated_row.txt"])
@pytest.mark.parametrize("command", ["magp", "vrrp"])
def test_no_gateway_check_passes_on_an_output_it_did_not_read(command, damaged):
    sc, _ = intended(gateway_fabric(), "sw-a")
    sc = {**sc, "mlag": None, "mlag_bonds": []}
    outputs = {"files": "Unsaved changes : no\n", **_gateway_outputs("sw-a")}
    good = health.switch_checks(sc, outputs, {}, "3.6.5000")
    assert all(check["status"] == "pass" for check in good), good
    bad = health.switch_checks(sc, {**outputs, command: text(damaged)}, {}, "3.6.5000")
    changed = [b for g, b in zip(good, bad, strict=True) if g != b]
    assert {c["id"].split(".")[0] for c in changed} == {command}
    for check in changed:
        assert check["status"] == "fail" and f"could not read `show {command}`" in check["observed"]


def _pair(outputs_b: dict):
    structures = {s: intended(gateway_fabric(), s)[0] for s in ("sw-a", "sw-b")}
    outputs = {"sw-a": _gateway_outputs("sw-a"), "sw-b": outputs_b}
    return [
        c
        for c in health.pair_checks("rack1", structures, outputs)
        if c["id"] != "mlag.system_mac_equal"
    ]


def test_one_vrrp_master_per_vrid_over_both_peers_passes():
    checks = _pair(_gateway_outputs("sw-b"))
    assert [c["id"] for c in checks] == ["vrrp.1.1.master", "vrrp.10.10.master"]
    assert all(c["status"] == "pass" for c in checks), checks


@pytest.mark.parametrize("damaged", [*DAMAGED, "vrrp_truncated_row.txt", None])
def test_the_vrrp_master_check_fails_when_the_partner_could_not_be_read(damaged):
    # sw-a alone is Master of VRID 1: an unread partner must not make that "exactly one".
    partner = {"vrrp": None if damaged is None else text(damaged)}
    for check in _pair(partner):
        assert check["status"] == "fail", check
        assert "sw-b: could not read `show vrrp`" in check["observed"]


def test_a_partner_read_without_the_instance_is_told_apart_from_an_unread_one():
    only_vlan_1 = text("vrrp_sw-b.txt").split("\nVlan10")[0]
    checks = {c["id"]: c for c in _pair({"vrrp": only_vlan_1})}
    assert checks["vrrp.1.1.master"]["status"] == "pass"
    absent = checks["vrrp.10.10.master"]
    assert absent["status"] == "fail" and "sw-b: instance absent" in absent["observed"]
    assert "could not read" not in absent["observed"]


@pytest.mark.parametrize("damaged", [*DAMAGED, None])
def test_system_mac_equal_fails_when_only_the_partner_could_not_be_read(damaged):
    structures = {s: intended(example_fabric(), s)[0] for s in ("sw-a", "sw-b")}
    outputs = {
        "sw-a": {"mlag": text("mlag_3.10.txt")},
        "sw-b": {"mlag": None if damaged is None else text(damaged)},
    }
    checks = health.pair_checks("rack1", structures, outputs)
    equal = next(c for c in checks if c["id"] == "mlag.system_mac_equal")
    assert equal["status"] == "fail" and "sw-b: unreadable" in equal["observed"]
