"""The show-output corpus: each layout is read right, or refused with "could not read".

And the rule behind it: no health check passes on an output it did not read.
"""

import pytest
from cxfab.onyx import health
from cxfab.onyx.session import clean_output, first_error
from cxfab.onyx.version import release_from_show_version
from onyx_helpers import FIXTURES, example_fabric, intended

CORPUS = FIXTURES / "corpus"


def text(name: str) -> str:
    return (CORPUS / name).read_text()


@pytest.mark.parametrize("name", ["mlag_3.10.txt", "mlag_3.6_peers_state.txt"])
def test_both_mlag_layouts_read_the_same_values(name):
    mlag = health.parse_show_mlag(text(name))
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
    vip = health.parse_show_mlag_vip(text(name))
    assert (vip["group"], vip["vip"], vip["active_nodes"]) == ("rack1-mlag", "10.0.0.50/24", 2)
    assert sorted(n["state"] for n in vip["nodes"]) == ["master", "standby"]


def test_mpo_summary_keeps_local_and_peer_members_apart():
    mpos = health.parse_mpo_summary(text("mpo_summary_wide.txt"))
    assert mpos[1]["ports"] == [("1/1", "P")] and mpos[1]["peer_ports"] == [("1/1", "S")]
    assert mpos[2]["ports"] == [("1/2", "P"), ("1/3", "P")]


def test_json_print_version_without_product_release_gives_the_release_not_the_uptime():
    assert release_from_show_version(text("version_json_no_product_release.txt")) == "3.10.2002"


@pytest.mark.parametrize(
    ("name", "parser"),
    [
        ("mlag_truncated.txt", health.parse_show_mlag),
        ("empty.txt", health.parse_show_mlag),
        ("empty.txt", health.parse_show_mlag_vip),
        ("empty.txt", health.parse_mpo_summary),
        ("empty.txt", health.parse_show_magp),
        ("empty.txt", health.parse_configuration_files),
        ("mlag_error_after_line1.txt", health.parse_show_mlag),
        ("mlag_3.10.txt", health.parse_show_mlag_vip),
        ("magp.txt", health.parse_mpo_summary),
    ],
)
def test_unreadable_outputs_are_refused_with_command_and_first_lines(name, parser):
    with pytest.raises(health.ReadError, match=r"could not read `show [a-z -]+`: .+; first lines"):
        parser(text(name))


def test_percent_error_and_async_message_are_found_on_any_line():
    assert first_error(text("mlag_error_after_line1.txt")).startswith("% Internal error")
    cleaned, found = clean_output(text("mlag_async_middle.txt"))
    assert found == ["other state: ready"]
    assert health.parse_show_mlag(cleaned) == health.parse_show_mlag(text("mlag_3.10.txt"))


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
    sc = {**sc, "magp": [], "vrrp": []}
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
