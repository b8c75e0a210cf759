"""host_network_backend: validation, auto detection and the refusals (every branch)."""

from pathlib import Path

import pytest
import yaml
from cxfab.host.net.backend import BACKEND_KEY, CHOICES, BackendError, choose, detect, validate

ROOT = Path(__file__).resolve().parents[2]
NM = {"networkmanager_running": True, "networkmanager_links": ["eth0"]}
ND = {"networkd_running": True, "networkd_links": ["ens1f0"]}


@pytest.mark.parametrize("value", CHOICES)
def test_validate_accepts_the_choices(value):
    assert validate(value) == value


@pytest.mark.parametrize("value", ["ifupdown", "", None, "NetworkManager"])
def test_validate_refuses_an_unknown_value_naming_the_key(value):
    with pytest.raises(BackendError) as caught:
        validate(value)
    assert caught.value.reason.startswith(f"{BACKEND_KEY}: {value!r} is not one of")


def test_netplan_files_owning_interfaces_win():
    facts = {"netplan_interfaces": ["enp1s0"], **NM, **ND}
    assert detect(facts) == "netplan"


def test_networkmanager_alone():
    assert detect({**NM}) == "networkmanager"
    # running but managing nothing yet: still the only daemon there
    assert detect({"networkmanager_running": True}) == "networkmanager"


def test_networkd_alone():
    assert detect({**ND}) == "networkd"
    assert detect({"networkd_running": True}) == "networkd"


def test_both_running_one_managing_picks_that_one():
    assert detect({**NM, "networkd_running": True}) == "networkmanager"
    assert detect({**ND, "networkmanager_running": True}) == "networkd"


def test_both_managing_links_is_refused_naming_the_links():
    with pytest.raises(BackendError) as caught:
        detect({**NM, **ND})
    assert "eth0" in caught.value.reason and "ens1f0" in caught.value.reason
    assert BACKEND_KEY in caught.value.reason


def test_both_running_neither_managing_is_refused():
    with pytest.raises(BackendError, match="neither manages a link"):
        detect({"networkmanager_running": True, "networkd_running": True})


def test_nothing_running_is_refused():
    with pytest.raises(BackendError, match="nothing would apply"):
        detect({})


def test_choose_auto_detects():
    assert choose("auto", {**ND}) == "networkd"


def test_choose_explicit_backend_must_be_running():
    assert choose("networkmanager", {**NM}) == "networkmanager"
    with pytest.raises(BackendError, match="NetworkManager is not running"):
        choose("networkmanager", {**ND})


def test_choose_netplan_needs_networkd():
    facts = {"netplan_interfaces": ["enp1s0"], **NM}
    with pytest.raises(BackendError, match="renderer networkd"):
        choose("auto", facts)
    assert choose("netplan", {**facts, **ND}) == "netplan"


def test_choose_refuses_unknown_before_looking():
    with pytest.raises(BackendError, match=BACKEND_KEY):
        choose("wicked", {**ND})


def test_role_choices_are_the_modules():
    specs = yaml.safe_load((ROOT / "roles/host_network/meta/argument_specs.yml").read_text())
    option = specs["argument_specs"]["main"]["options"][BACKEND_KEY]
    assert tuple(option["choices"]) == CHOICES
    defaults = yaml.safe_load((ROOT / "roles/host_network/defaults/main.yml").read_text())
    assert defaults[BACKEND_KEY] == option["default"] == "auto"
