"""Onyx releases are compared as numbers (mellanox.onyx compared strings)."""

import pytest
from cxfab.switch.onyx import version


def test_3_10_is_newer_than_3_6():
    assert "3.10.2102" < "3.6.6000"  # the string comparison that broke mellanox.onyx
    assert version.compare("3.10.2102", "3.6.6000") == 1
    assert version.at_least("3.10.2102", "3.6.6000")
    assert not version.at_least("3.6.5000", "3.6.6000")


def test_json_print_shape_switches_at_3_6_6000():
    assert version.json_print_shape("3.6.5000") == "header-list"
    assert version.json_print_shape("3.6.6000") == "named-list"
    assert version.json_print_shape("3.10.2002") == "named-list"


def test_release_from_show_version():
    text = "Product name:      Onyx\nProduct release:   3.10.2002\nBuild ID:          #1-dev\n"
    assert version.release_from_show_version(text) == "3.10.2002"
    with pytest.raises(version.VersionError):
        version.release_from_show_version("Product name: Onyx\n")


@pytest.mark.parametrize(
    ("output", "why"),
    [
        ("Product name: Onyx\nUptime: 1d 2h\n", "no 'Product release:' line"),
        ('% Unrecognized command "versoin"\nType "?" for help.\n', "no 'Product release:'"),
        ("Product release: next\nBuild ID: #1\n", "'next' is not a release"),
        ('{"Product name": "Onyx", "Uptime": "1d"', "is not JSON"),
        ('{"Product name": "Onyx", "Version summary": "X86_64 dev"}', "has no release field"),
    ],
)
def test_a_release_that_cannot_be_read_shows_the_first_lines(output, why):
    with pytest.raises(version.VersionError) as caught:
        version.release_from_show_version(output)
    message = str(caught.value)
    assert why in message
    first = next(line for line in output.splitlines() if line.strip()).strip()
    assert f"first lines: {first[:40]}" in message


def test_both_json_print_shapes_normalise_to_the_same_items():
    old = [{"header": "MAGP 10", "State": "Master", "Interface vlan": "10"}]
    new = [{"MAGP 10": [{"State": "Master", "Interface vlan": "10"}]}]
    assert (
        version.normalise_json_print(old, "3.6.5000")
        == version.normalise_json_print(new, "3.10.2002")
        == {"MAGP 10": {"State": "Master", "Interface vlan": "10"}}
    )


def test_each_entry_is_read_in_its_own_shape_whatever_the_release():
    named = [{"MAGP 10": [{"State": "Master"}]}]
    headed = [{"header": "MAGP 10", "State": "Master"}]
    for release in ("3.6.5000", "3.10.2002"):
        assert version.normalise_json_print(named, release) == {"MAGP 10": {"State": "Master"}}
        assert version.normalise_json_print(headed, release) == {"MAGP 10": {"State": "Master"}}
