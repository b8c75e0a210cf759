"""Who deploys which peers, credentials and tag -> section selection of the switch play."""

from cxfab.onyx import turns
from onyx_helpers import example_fabric


def test_the_first_peer_in_play_deploys_the_pair_in_pair_order():
    fabric = example_fabric()
    play = ["sw-b", "sw-a"]
    assert turns.turn(fabric, "sw-b", play) == {
        "pair": fabric["switch_pairs"][0]["name"],
        "switches": ["sw-a", "sw-b"],
        "runs_here": True,
    }
    assert turns.turn(fabric, "sw-a", play)["runs_here"] is False


def test_a_limited_play_changes_only_the_peers_in_it():
    assert turns.turn(example_fabric(), "sw-b", ["sw-b"])["switches"] == ["sw-b"]


def test_credentials_come_from_the_switch_pair():
    fabric = example_fabric()
    assert turns.credentials(fabric, "sw-a") == fabric["switch_pairs"][0]["credentials"]


def test_section_tags_select_sections_and_skip_tags_remove_them():
    assert turns.sections(["all"], []) == ["mlag", "vlans", "gateway"]
    assert turns.sections(["switch_vlans"], []) == ["vlans"]
    assert turns.sections(["switch_gateway", "switch_mlag"], []) == ["mlag", "gateway"]
    assert turns.sections(["all"], ["switch_gateway"]) == ["mlag", "vlans"]
