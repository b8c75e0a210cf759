"""Check mode with --diff on two emulated NVUE switches: NVUE's own diff of the plan.

A scratch revision is made only when the plan differs, patched, diffed against the
applied revision and deleted, never applied: the test re-reads each switch (same
applied tree, the same revisions, none pending) after every run. A patch the switch
refuses in check mode fails the run and still leaves no revision behind.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.integration import nvue_lab  # noqa: E402

pytestmark = [pytest.mark.integration]

A, B = "lab-sw-a", "lab-sw-b"
MTU_LINE = "nv set interface vlan10 link mtu 1500"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with nvue_lab.running_pair(tmp_path_factory.mktemp("nvue-diff")) as lab:
        built, _, _ = nvue_lab.deploy(lab["switches"], snapshot_dir=lab["snapshots"])
        assert "msg" not in built, built.get("msg")
        yield lab


def run(lab, **kwargs) -> tuple[dict, list[str]]:
    result, _, warnings = nvue_lab.deploy(lab["switches"], snapshot_dir=lab["snapshots"],
                                          check_mode=True, **kwargs)  # fmt: skip
    return result, warnings


def seen(lab) -> dict:
    """What must not change: each switch's applied tree and its revision list (GET)."""
    out = {}
    for name, switch in lab["pair"].items():
        status, revisions = switch.request("GET", "/nvue_v1/revision")
        assert status == 200, revisions
        assert all(r["state"] != "pending" for r in revisions.values()), revisions
        out[name] = (switch.applied(), revisions)
    return out


def created(lab) -> dict:
    return {name: switch.status()["revisions_created"] for name, switch in lab["pair"].items()}


def test_check_diff_shows_nvues_own_diff_of_a_changed_vlan_and_leaves_no_revision(lab):
    before, made = seen(lab), created(lab)
    result, warnings = run(lab, edit="vlan10-mtu-1500", diff=True)
    assert "msg" not in result, result.get("msg")
    for name in (A, B):
        record = result["switches"][name]
        assert record["lines"] == [MTU_LINE]
        assert record["device_diff"] == [MTU_LINE]  # the switch's own, from ?diff=
    assert not any("differs from cxfab's plan" in w for w in warnings), warnings
    assert seen(lab) == before  # same applied tree, same revisions, none pending
    # A scratch revision was made on each switch (and deleted: not in the list above).
    assert created(lab) == {n: made[n] + 1 for n in (A, B)}
    assert all(s.status()["refusals"] == [] for s in lab["pair"].values())


def test_check_diff_shows_a_removed_vlan_as_nvues_unsets(lab):
    before = seen(lab)
    result, warnings = run(lab, edit="vlan30-removed", diff=True)
    assert "msg" not in result, result.get("msg")
    unsets = ["nv unset bridge domain br_default vlan 30", "nv unset interface vlan30"]
    for name in (A, B):
        record = result["switches"][name]
        assert record["lines"] == unsets and record["device_diff"] == unsets
    assert not any("differs from cxfab's plan" in w for w in warnings), warnings
    assert seen(lab) == before


def test_check_without_diff_or_with_nothing_to_change_makes_no_revision(lab):
    before, made = seen(lab), created(lab)
    plain, _ = run(lab, edit="vlan10-mtu-1500")
    assert "device_diff" not in plain["switches"][A] and plain["switches"][A]["lines"]
    same, _ = run(lab, diff=True)
    assert {n: r["lines"] for n, r in same["switches"].items()} == {A: [], B: []}
    assert "device_diff" not in same["switches"][A]
    assert created(lab) == made and seen(lab) == before


def test_a_scratch_patch_the_switch_refuses_fails_the_check_and_is_deleted(lab):
    a = lab["pair"][A]
    before, made = seen(lab), created(lab)
    a.fault(refuse_paths=["interface.vlan10.link.mtu"])
    try:
        result, _ = run(lab, edit="vlan10-mtu-1500", diff=True)
    finally:
        a.fault(refuse_paths=[])
    rev = str(made[A] + 1)
    assert "NVUE's diff of the plan (check mode)" in result["msg"]
    assert "not a path of this release's schema" in result["msg"]
    assert f"scratch revision {rev} deleted, nothing applied" in result["msg"]
    assert result["switches"][A]["lines"] == [MTU_LINE]  # what the real run would send
    assert seen(lab) == before
    assert created(lab) == {A: made[A] + 1, B: made[B]}  # lab-sw-b was not reached
    [refusal] = a.status()["refusals"]
    assert refusal["method"] == "PATCH" and refusal["path"] == f"/nvue_v1/?rev={rev}"
