"""The NVUE emulator's model in-process: it refuses what the kept spec refuses, keeps
revisions apart from the applied tree and rolls back a confirm answered no."""

import pytest

from tests.lab.nvue import model


def switch_with(body: dict) -> tuple[model.Switch, str]:
    switch = model.Switch("sw-a")
    rev, _ = switch.create_revision()
    switch.patch(rev, (), body)
    return switch, rev


@pytest.mark.parametrize(
    ("path", "body", "said"),
    [
        ((), {"mlag": {"enable": 1}}, "mlag.enable: 1 is not of type string"),
        ((), {"mlag": {"no-such": "on"}}, "mlag.no-such: not a path cxfab has confirmed"),
        (("interface",), {"vlan10": {"link": {"mtu": "big"}}}, "interface.vlan10.link.mtu"),
        (("interface", "bad name!"), {"type": "svi"}, "not a path cxfab has confirmed"),
        (("no-such-root",), {"x": None}, "no-such-root: not a path cxfab has confirmed"),
    ],
)
def test_a_wrong_path_or_type_is_refused_and_changes_nothing(path, body, said):
    switch = model.Switch("sw-a")
    rev, _ = switch.create_revision()
    with pytest.raises(model.Refused) as caught:
        switch.patch(rev, path, body)
    assert any(said in problem for problem in caught.value.problems), caught.value.problems
    assert switch.read((), rev) == {} and switch.applied == {}


def test_a_lab_refused_path_is_refused_like_an_unknown_one():
    switch = model.Switch("sw-a")
    switch.refused_paths = ["interface.vlan10.link.mtu"]
    rev, _ = switch.create_revision()
    switch.patch(rev, (), {"interface": {"vlan10": {"type": "svi"}}})
    with pytest.raises(model.Refused, match="lab fault"):
        switch.patch(rev, (), {"interface": {"vlan10": {"link": {"mtu": 9000}}}})


def test_null_unsets_and_apply_moves_the_revision_to_applied():
    switch, rev = switch_with({"mlag": {"enable": "on", "mac-address": "00:00:5E:00:01:5D"}})
    assert switch.applied == {}  # staged only
    switch.change_state(rev, {"state": "apply", "auto-prompt": {"ays": "ays_yes"}})
    assert switch.applied["mlag"]["enable"] == "on"
    assert switch.revisions[rev]["state"] == model.APPLIED
    second, _ = switch.create_revision()
    switch.patch(second, ("mlag",), {"mac-address": None})
    switch.change_state(second, {"state": "apply", "auto-prompt": {"ays": "ays_yes"}})
    assert switch.applied == {"mlag": {"enable": "on"}}


def test_a_confirm_answered_no_returns_to_the_previous_tree():
    switch, rev = switch_with({"mlag": {"enable": "on"}})
    apply = {"state": "apply", "auto-prompt": {"ays": "ays_yes"}}
    switch.change_state(rev, {**apply, "confirm": "60s"})
    assert switch.revisions[rev]["state"] == model.AWAITING and switch.applied
    with pytest.raises(model.Refused, match="awaits its confirm"):
        other, _ = switch.create_revision()
        switch.change_state(other, apply)
    switch.change_state(rev, {**apply, "auto-prompt": {"ays": "ays_yes", "confirm": "confirm_no"}})
    assert switch.revisions[rev]["state"] == model.ROLLED_BACK
    assert switch.applied == {} and switch.applied_rev == "0"


@pytest.mark.parametrize(
    "body",
    [
        {"state": "apply"},  # no auto-prompt: the real switch would wait and fail (ays_fail)
        {"state": "applied", "auto-prompt": {"ays": "ays_yes"}},
        {"state": "apply", "auto-prompt": {"ays": "ays_yes"}, "confirm": 30},
        {"state": "apply", "auto-prompt": {"ays": "ays_yes"}, "extra": 1},
    ],
)
def test_a_revision_body_outside_the_documented_form_is_refused(body):
    switch, rev = switch_with({"mlag": {"enable": "on"}})
    with pytest.raises(model.Refused):
        switch.change_state(rev, body)
    assert switch.applied == {} and switch.revisions[rev]["state"] == "pending"
