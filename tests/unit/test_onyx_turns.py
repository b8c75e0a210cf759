"""Who deploys which peers, credentials and tag -> section selection of the switch play."""

import pytest
from cxfab.switch import turns
from onyx_helpers import example_fabric


def test_the_first_peer_in_play_deploys_the_pair_in_pair_order():
    fabric = example_fabric()
    play = ["sw-b", "sw-a"]
    assert turns.turn(fabric, "sw-b", play) == {
        "pair": fabric["switch_pairs"][0]["name"],
        "platform": "onyx",
        "switches": ["sw-a", "sw-b"],
        "runs_here": True,
    }
    assert turns.turn(fabric, "sw-a", play)["runs_here"] is False


def test_a_limited_play_changes_only_the_peers_in_it():
    assert turns.turn(example_fabric(), "sw-b", ["sw-b"])["switches"] == ["sw-b"]


def test_credentials_come_from_the_inventory_switch_pair():
    pairs = [
        {"name": "p1", "peers": [{"name": "sw-a"}, {"name": "sw-b"}],
         "credentials": {"username": "admin", "password": 12345}},
        {"name": "p2", "peers": [{"name": "sw-c"}, {"name": "sw-d"}],
         "credentials": {"username": "ops", "password": "Other-1"}},
    ]  # fmt: skip
    # a YAML number typed as the password is the string the switch expects
    assert turns.credentials(pairs, "sw-b") == {"username": "admin", "password": "12345"}
    assert turns.credentials(pairs, "sw-c") == {"username": "ops", "password": "Other-1"}
    with pytest.raises(KeyError, match="no switch pair has a peer named 'sw-x'"):
        turns.credentials(pairs, "sw-x")


def test_section_tags_select_sections_and_skip_tags_remove_them():
    assert turns.sections(["all"], []) == ["mlag", "vlans", "gateway"]
    assert turns.sections(["switch_vlans"], []) == ["vlans"]
    assert turns.sections(["switch_gateway", "switch_mlag"], []) == ["mlag", "gateway"]
    assert turns.sections(["all"], ["switch_gateway"]) == ["mlag", "vlans"]
