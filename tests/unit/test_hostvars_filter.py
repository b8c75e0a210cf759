"""cxfab_per_host: one variable of several hosts by host name (verify.yml, drill.yml)."""

import pytest
from plugin_loading import load_plugin

filters = load_plugin("filter_plugins", "cxfab_hostvars")
per_host = filters.FilterModule().filters()["cxfab_per_host"]

HOSTVARS = {
    "h1": {"verify_health": {"links": 2}, "drill_pings": {"results": [1]}},
    "h2": {"drill_pings": {"results": []}},  # no health read (unreachable)
    "sw1": {"verify_switch_result": {"mlag": "up"}},
}


def test_each_named_host_gives_its_variable_in_the_order_of_the_names():
    assert per_host(HOSTVARS, ["h2", "h1"], "drill_pings", {}) == {
        "h2": {"results": []},
        "h1": {"results": [1]},
    }
    assert list(per_host(HOSTVARS, ["h2", "h1"], "drill_pings")) == ["h2", "h1"]


def test_a_host_without_the_variable_gets_the_default_and_only_the_named_hosts_are_read():
    skipped = {"skipped": True}
    result = per_host(HOSTVARS, ["h1", "h2"], "verify_health", skipped)
    assert result == {"h1": {"links": 2}, "h2": {"skipped": True}}
    assert "sw1" not in result
    assert per_host(HOSTVARS, ["h2"], "verify_health") == {"h2": None}
    # A default is a copy per host: a consumer changing one host's value changes no other.
    both = per_host(HOSTVARS, ["h2", "sw1"], "verify_health", {})
    both["h2"]["x"] = 1
    assert both["sw1"] == {} and both["h2"] is not both["sw1"]


def test_a_name_that_is_no_host_gets_the_default_and_no_names_give_nothing():
    assert per_host(HOSTVARS, ["ghost"], "verify_health", {}) == {"ghost": {}}
    assert per_host(HOSTVARS, [], "verify_health", {}) == {}


def test_a_single_name_or_a_non_string_key_is_refused():
    with pytest.raises(TypeError, match="a list of host names"):
        per_host(HOSTVARS, "h1", "verify_health")
    with pytest.raises(TypeError, match="a list of host names"):
        per_host(HOSTVARS, ["h1"], 3)
