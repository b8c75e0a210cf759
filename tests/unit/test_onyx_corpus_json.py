"""The `| json-print` corpus: both shapes read alike, and read only where the release has them.

Same rule as the text corpus: no health check passes on an output it did not read.
"""

import pytest
from cxfab.switch.onyx import health, shows
from onyx_helpers import FIXTURES, example_fabric, intended

CORPUS = FIXTURES / "corpus"
NEW, OLD = "3.10.2002", "3.6.5000"


def text(name: str) -> str:
    return (CORPUS / name).read_text()


@pytest.mark.parametrize(
    ("release", "suffix"),
    [("3.6.5000", ""), ("3.6.5999", ""), ("3.6.6000", " | json-print"), (NEW, " | json-print")],
)
def test_json_print_is_asked_for_from_3_6_6000_compared_as_numbers(release, suffix):
    # "3.10.2002" < "3.6.6000" as strings: a string comparison would send text to 3.10.
    for key in ("mlag", "mlag_vip", "mpo", "magp", "files"):
        assert shows.show_command(key, release) == shows.SHOW_COMMANDS[key] + suffix
    assert shows.show_command("vrrp", NEW) == "show vrrp"  # no json-print example: text
    assert shows.show_command("mlag", None) == "show mlag"  # release unknown: text


@pytest.mark.parametrize("name", ["mlag_3.10.json", "mlag_split_list.json"])
def test_json_mlag_reads_what_the_text_layout_reads(name):
    from_json = shows.parse("mlag", text(name), NEW)
    from_text = shows.parse("mlag", text("mlag_3.10.txt"), OLD)
    keys = ("admin", "oper", "system_mac", "mismatched", "inactive", "active_partial")
    assert {k: from_json[k] for k in keys} == {k: from_text[k] for k in keys}
    assert from_json["active_full"] == 2 and isinstance(from_json["active_full"], int)
    assert from_json["ipls"] == from_text["ipls"]


def test_json_mlag_vip_old_release_spacing_and_key_order():
    vip = shows.parse("mlag_vip", text("mlag_vip_3.6_space_prefix.json"), "3.6.8008")
    assert (vip["group"], vip["vip"], vip["active_nodes"]) == ("rack1-mlag", "10.0.0.50/24", 2)
    assert sorted(n["state"] for n in vip["nodes"]) == ["master", "standby"]


@pytest.mark.parametrize("name", ["mpo_summary_named_list.json", "mpo_summary_header_list.json"])
def test_both_json_mpo_shapes_read_like_the_text_table(name):
    mpos = shows.parse("mpo", text(name), NEW)
    assert mpos == shows.parse("mpo", text("mpo_summary_wide.txt"), OLD)
    assert mpos[1]["ports"] == [("1/1", "P")] and mpos[1]["peer_ports"] == [("1/1", "S")]
    assert mpos[2]["ports"] == [("1/2", "P"), ("1/3", "P")]


@pytest.mark.parametrize(
    "name", ["magp_header_list.json", "magp_named_list.json", "magp_single_record.json"]
)
def test_every_json_magp_shape_gives_the_text_values(name):
    magp = shows.parse("magp", text(name), NEW)
    assert magp[10] == shows.parse("magp", text("magp.txt"), OLD)[10]
    if name != "magp_single_record.json":
        assert magp[20]["state"] == "Init" and magp[20]["vlan"] == 20


@pytest.mark.parametrize(
    ("key", "name", "why"),
    [
        ("mlag", "mlag_truncated.json", "not JSON"),
        ("mlag", "empty.txt", "not JSON"),
        ("mlag", "mlag_3.10.txt", "not JSON"),  # text where JSON was asked for
        ("mlag", "mlag_no_active_full.json", "no 'Active-full'"),
        ("mlag", "mlag_counter_not_number.json", "'Inactive' is 'N/A', not a number"),
        ("mlag", "magp_named_list.json", "no 'Admin status'"),
        ("mlag", "mlag_vip_3.6_space_prefix.json", "no 'Admin status'"),
        ("mpo", "magp_single_record.json", "no 'MLAG Port-Channel Summary'"),
        ("mlag_vip", "mlag_vip_one_node_for_two.json", "1 node record"),
        ("mlag_vip", "mlag_3.10.json", "no 'MLAG-VIP'"),
        ("mpo", "files.json", "no 'MLAG Port-Channel Summary'"),
        ("magp", "magp_no_state.json", "no 'State'"),
        ("magp", "mpo_summary_named_list.json", "is not `MAGP <n>`"),
        ("files", "mlag_3.10.json", "no 'Unsaved changes'"),
    ],
)
def test_unreadable_json_names_command_release_and_first_lines(key, name, why):
    command = shows.SHOW_COMMANDS[key]
    with pytest.raises(health.ReadError) as caught:
        shows.parse(key, text(name), NEW)
    message = str(caught.value)
    assert message.startswith(f"could not read `{command} | json-print`: ")
    assert why in message and f"release {NEW}" in message and "; first lines: " in message


def _good_outputs():
    return {
        "files": text("files.json"),
        "mlag": text("mlag_3.10.json"),
        "mlag_vip": text("mlag_vip_3.6_space_prefix.json"),
        "mpo": text("mpo_summary_named_list.json").replace("Eth1/1(S)", "Eth1/1(P)"),
        "magp": "[]",
    }


@pytest.mark.parametrize(
    "damaged",
    [
        "empty.txt",
        "mlag_truncated.json",
        "mlag_no_active_full.json",
        "mlag_counter_not_number.json",
        "mlag_3.10.txt",
    ],
)
@pytest.mark.parametrize("command", ["files", "mlag", "mlag_vip", "mpo"])
def test_no_check_passes_on_a_json_reply_it_did_not_read(command, damaged):
    # The MLAG shows only (the lossless ones have their own tests in test_onyx_health).
    sc, _ = intended(example_fabric(lossless=False), "sw-a")
    sc = {**sc, "anycast_gateways": [], "vrrp": []}
    good = health.switch_checks(sc, _good_outputs(), {}, NEW)
    assert all(check["status"] == "pass" for check in good), good
    bad = health.switch_checks(sc, {**_good_outputs(), command: text(damaged)}, {}, NEW)
    changed = [b for g, b in zip(good, bad, strict=True) if g != b]
    assert changed, "damaging the output must change some check"
    for check in changed:
        assert check["status"] == "fail"
        assert "could not read" in str(check["observed"]), check
        assert f"release {NEW}" in str(check["observed"]) and "| json-print" in check["observed"]
    assert all(b["status"] == g["status"] for g, b in zip(good, bad, strict=True) if g == b)


def test_a_magp_check_fails_closed_on_a_damaged_json_reply():
    sc, _ = intended(example_fabric(), "sw-a")
    assert sc["anycast_gateways"], "the example fabric has MAGP gateways"
    checks = health.switch_checks(sc, {"magp": text("magp_no_state.json")}, {}, NEW)
    magp = [c for c in checks if c["id"].startswith("magp.")]
    assert magp and all(c["status"] == "fail" for c in magp)
    assert all("could not read `show magp | json-print`" in c["observed"] for c in magp)


def test_system_mac_equal_reads_each_peer_by_its_own_release():
    sc_a, _ = intended(example_fabric(), "sw-a")
    sc_b, _ = intended(example_fabric(), "sw-b")
    structures = {"sw-a": sc_a, "sw-b": sc_b}
    outputs = {"sw-a": {"mlag": text("mlag_3.10.json")}, "sw-b": {"mlag": text("mlag_3.10.txt")}}
    releases = {"sw-a": NEW, "sw-b": OLD}
    checks = health.pair_checks("rack1", structures, outputs, releases)
    equal = next(c for c in checks if c["id"] == "mlag.system_mac_equal")
    assert equal["status"] == "pass", equal
    # The same text reply from a 3.10 peer was not asked for as text: unreadable, never equal.
    checks = health.pair_checks("rack1", structures, outputs, {"sw-a": NEW, "sw-b": NEW})
    equal = next(c for c in checks if c["id"] == "mlag.system_mac_equal")
    assert equal["status"] == "fail" and "sw-b: unreadable" in equal["observed"]


# ------------------------------------------------------------------ gateways and the partner
def _gateway_structures() -> dict:
    """The example pair with VLANs 1 and 10 on VRRP and 20, 30 on MAGP."""
    fabric = example_fabric(lossless=False)
    for vlan in fabric["vlans"][:2]:
        vlan["gateway"] = {"mode": "vrrp", "virtual_ip": vlan["gateway"]["virtual_ip"]}
    return {switch: intended(fabric, switch)[0] for switch in ("sw-a", "sw-b")}


@pytest.mark.parametrize(
    "damaged",
    ["empty.txt", "mlag_truncated.json", "magp_no_state.json", "magp.txt", "mlag_3.10.json"],
)
def test_no_magp_check_passes_on_a_json_reply_it_did_not_read(damaged):
    sc = {**_gateway_structures()["sw-a"], "mlag": None, "mlag_bonds": [], "vrrp": []}
    good_outputs = {"files": text("files.json"), "magp": text("magp_20_30_named_list.json")}
    good = health.switch_checks(sc, good_outputs, {}, NEW)
    assert [c["status"] for c in good] == ["pass"] * 5, good
    bad = health.switch_checks(sc, {**good_outputs, "magp": text(damaged)}, {}, NEW)
    assert bad[0] == good[0]  # config.saved did not read show magp
    for check in bad[1:]:
        assert check["status"] == "fail"
        assert "could not read `show magp | json-print`" in check["observed"], check


@pytest.mark.parametrize("damaged", ["empty.txt", "mlag_truncated.json", "mlag_3.10.txt", None])
def test_pair_checks_fail_when_only_the_json_partner_could_not_be_read(damaged):
    partner = None if damaged is None else text(damaged)
    outputs = {
        "sw-a": {"mlag": text("mlag_3.10.json"), "vrrp": text("vrrp_sw-a.txt")},
        "sw-b": {"mlag": partner, "vrrp": partner},
    }
    checks = health.pair_checks("rack1", _gateway_structures(), outputs, {"sw-a": NEW, "sw-b": NEW})
    assert [c["id"] for c in checks] == [
        "mlag.system_mac_equal",
        "vrrp.1.1.master",
        "vrrp.10.10.master",
    ]
    assert all(c["status"] == "fail" for c in checks), checks
    assert "sw-b: unreadable" in checks[0]["observed"]
    # show vrrp is read as text on every release (no public json-print capture).
    assert all("sw-b: could not read `show vrrp`" in c["observed"] for c in checks[1:])
