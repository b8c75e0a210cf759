"""The pair transaction on two emulated NVUE switches (HTTPS on localhost, no VM).

One pair for the module, built by the first deploy; each later test changes it and
must leave it as it found it: a second run creates no revision; check mode creates
none either; a patch the switch refuses, a failed health gate after the apply and a
controller killed before the confirm each end with the switch back on its previous
applied tree, proven by reading it again; the certificate is checked before the
password is sent. Every request body cxfab sends passes the emulator's spec check:
its refusals are only the ones a test planted.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.integration import nvue_lab  # noqa: E402
from tests.lab.nvue import fixtures  # noqa: E402

pytestmark = [pytest.mark.integration]

from cxfab.switch.nvue import render  # noqa: E402
from cxfab.switch.nvue.transport import Trust  # noqa: E402

A, B = "lab-sw-a", "lab-sw-b"
MTU_LINE = "nv set interface vlan10 link mtu 1500"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with nvue_lab.running_pair(tmp_path_factory.mktemp("nvue")) as lab:
        lab["built"] = run(lab)
        yield lab


def run(lab, **kwargs) -> dict:
    result, drivers, warnings = nvue_lab.deploy(
        lab["switches"], snapshot_dir=lab["snapshots"], **kwargs
    )
    return {"result": result, "drivers": drivers, "warnings": warnings}


def counts(lab) -> dict:
    return {name: switch.status()["revisions_created"] for name, switch in lab["pair"].items()}


def refusals(lab) -> dict:
    return {name: switch.status()["refusals"] for name, switch in lab["pair"].items()}


def test_a_blank_pair_is_built_one_peer_at_a_time_with_one_revision_each(lab):
    result = lab["built"]["result"]
    assert "msg" not in result, result.get("msg")
    assert result["changed"] is True
    status = {name: switch.status() for name, switch in lab["pair"].items()}
    for name in (A, B):
        assert status[name]["revisions_created"] == 1
        assert status[name]["applied"] == render.render(nvue_lab.structured_for(name, 0, None))
        [revision] = status[name]["revisions"].values()
        assert revision["state"] == "applied_and_saved"
        assert result["switches"][name]["lines"][0] == "nv set mlag enable on"
    first, second = status[A]["revisions"]["1"], status[B]["revisions"]["1"]
    # lab-sw-b's revision is made only after lab-sw-a's apply; lab-sw-a's confirm (its
    # save) waits until lab-sw-b is healthy too: the pair changes as one.
    assert first["applied"] < second["created"] < second["applied"] < first["confirmed"]
    assert result["switches"][A]["save_held"] is False
    assert refusals(lab) == {A: [], B: []}


def test_a_second_run_creates_no_revision_and_changes_nothing(lab):
    before = counts(lab)
    started = time.monotonic()
    result = run(lab)["result"]
    assert "msg" not in result, result.get("msg")
    assert result["changed"] is False
    assert {n: r["lines"] for n, r in result["switches"].items()} == {A: [], B: []}
    assert counts(lab) == before
    assert refusals(lab) == {A: [], B: []}
    assert time.monotonic() - started < 10


def test_check_mode_lists_the_planned_sets_and_creates_nothing(lab):
    before = counts(lab)
    result = run(lab, edit="vlan10-mtu-1500", check_mode=True)["result"]
    assert "msg" not in result, result.get("msg")
    for name in (A, B):
        record = result["switches"][name]
        assert record["lines"] == [MTU_LINE]
        assert record["before"] == ["nv set interface vlan10 link mtu 9000"]
    assert counts(lab) == before


def _assert_back_on(lab, name: str, tree: dict, record: dict) -> None:
    proof = record["revert"]["proof"]
    assert proof["equal"] is True, record["revert"]
    assert proof["statements"] > 50  # the whole applied tree was compared, leaf by leaf
    assert lab["pair"][name].applied() == tree


def test_a_patch_the_switch_refuses_is_detached_and_proven_gone(lab):
    a, b = lab["pair"][A], lab["pair"][B]
    trees, before = {A: a.applied(), B: b.applied()}, counts(lab)
    a.fault(refuse_paths=["interface.vlan10.link.mtu"])
    try:
        result = run(lab, edit="vlan10-mtu-1500")["result"]
    finally:
        a.fault(refuse_paths=[])
    record = result["switches"][A]
    assert "the switch refused the change" in result["msg"]
    assert "interface.vlan10.link.mtu: not a path of this release's schema" in record["refused"]
    assert "revision 2 detached, nothing applied" in record["refused"]
    assert record["revert"]["lines"] == []  # nothing was applied: nothing to take back
    _assert_back_on(lab, A, trees[A], record)
    assert "2" not in a.status()["revisions"]
    assert counts(lab) == {A: before[A] + 1, B: before[B]}  # the partner was not touched
    assert b.applied() == trees[B] and B not in result["switches"]
    [refusal] = a.status()["refusals"]
    assert refusal["method"] == "PATCH" and refusal["path"] == "/nvue_v1/?rev=2"


def test_a_failed_health_gate_after_the_apply_rolls_back_proven_by_rereading(lab):
    """lab-sw-a loses its peer once its revision is applied (the lab's peer-down): its
    own turn fails, the confirm is answered no, lab-sw-b is never touched."""
    a, b = lab["pair"][A], lab["pair"][B]
    trees, before = {A: a.applied(), B: b.applied()}, counts(lab)
    rev = str(before[A] + 1)
    a.fault(peer_down=True)
    try:
        result = run(lab, edit="vlan10-mtu-1500", wait=1)["result"]
    finally:
        a.fault(peer_down=False)
    record = result["switches"][A]
    assert result["msg"].startswith(f"{A}: the pair is not healthy after the change")
    assert "mlag.oper: expected peer-alive True, observed peer-alive False" in result["msg"]
    assert record["revert"]["lines"] == [
        f"revision {rev}: confirm answered no (the switch rolled it back)"
    ]
    _assert_back_on(lab, A, trees[A], record)
    assert a.status()["revisions"][rev]["state"] == "confirm_fail"
    assert counts(lab) == {A: before[A] + 1, B: before[B]}
    assert b.applied() == trees[B] and B not in result["switches"]


def test_the_second_peer_failing_rolls_both_back_and_neither_is_confirmed(lab):
    """lab-sw-a's VRR reads down: its own turn passes (the partner still to change, only
    the core checks count), the pair's checks in lab-sw-b's turn fail. lab-sw-b and then
    the held lab-sw-a answer their confirm no; both are proven back."""
    a, b = lab["pair"][A], lab["pair"][B]
    trees, before = {A: a.applied(), B: b.applied()}, counts(lab)
    a.fault(vrr_down=True)
    try:
        result = run(lab, edit="vlan10-mtu-1500", wait=1)["result"]
    finally:
        a.fault(vrr_down=False)
    assert result["msg"].startswith(f"{B}: the pair is not healthy after the change")
    assert f"{A} magp.10.state: expected state up, observed state down" in result["msg"]
    assert "both peers were reverted, neither was saved" in result["msg"]
    assert result["reverted_proven"] == [B, A]
    assert result["switches"][A]["save_held"] is True
    for name, switch in ((A, a), (B, b)):
        rev = str(before[name] + 1)
        _assert_back_on(lab, name, trees[name], result["switches"][name])
        revision = switch.status()["revisions"][rev]
        assert revision["state"] == "confirm_fail" and "confirmed" not in revision


def test_a_controller_killed_before_the_confirm_leaves_a_switch_that_rolls_back(lab):
    """The deploy runs as its own process; it is SIGKILLed while it waits for health
    after lab-sw-a's apply (its peer reads down). Nobody confirms: the
    switch returns to its previous applied tree when its 3 s timer runs out."""
    a = lab["pair"][A]
    tree, before = a.applied(), counts(lab)
    a.fault(peer_down=True)
    args = {"switches": lab["switches"], "edit": "vlan10-mtu-1500", "wait": 60, "confirm": 3,
            "snapshot_dir": lab["snapshots"]}  # fmt: skip
    env = dict(os.environ, NVUE_LAB_PASSWORD=fixtures.PASSWORD)
    controller = subprocess.Popen(
        [sys.executable, "-m", "tests.integration.nvue_lab", json.dumps(args)],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    rev = str(before[A] + 1)
    try:
        deadline = time.monotonic() + 15
        while a.status()["revisions"].get(rev, {}).get("state") != "confirm":
            assert controller.poll() is None, controller.stdout.read()
            assert time.monotonic() < deadline, "the apply never came"
            time.sleep(0.05)
        changed = a.applied()
        os.kill(controller.pid, signal.SIGKILL)
        controller.wait(timeout=5)
        assert changed["interface"]["vlan10"]["link"]["mtu"] == 1500  # applied, unconfirmed
        deadline = time.monotonic() + 6
        while a.status()["revisions"][rev]["state"] == "confirm" and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        a.fault(peer_down=False)
        if controller.poll() is None:
            controller.kill()
            controller.wait()
        controller.stdout.close()
    status = a.status()
    assert status["revisions"][rev]["state"] == "confirm_fail"
    assert status["applied"] == tree and status["applied_rev"] == "1"
    assert counts(lab)[B] == before[B]


def _colons(digest: str) -> str:
    return ":".join(digest[i : i + 2] for i in range(0, len(digest), 2)).upper()


def test_the_certificate_is_checked_before_the_password_is_sent(lab):
    pins = {name: switch.fingerprint for name, switch in lab["pair"].items()}
    wrong = {name: ("0" if pin[0] != "0" else "1") + pin[1:] for name, pin in pins.items()}
    for trust, said in (
        ({A: Trust()}, "not trusted by the system CAs"),
        ({A: Trust(fingerprint=wrong[A])}, "not the pinned"),
        ({A: Trust(ca_file=lab["switches"][B]["cert"])}, "not trusted by the CA file"),
    ):
        result = run(lab, trust=trust)["result"]
        assert said in result["msg"] and "before the password is sent" in result["msg"]
        assert result["switches"] == {}  # stopped at open(): nothing read, nothing sent
    # The same run goes through with the right pins, or with the explicit opt-out, which
    # says it is unsafe.
    pinned = run(lab, trust={name: Trust(fingerprint=_colons(pin)) for name, pin in pins.items()})
    assert "msg" not in pinned["result"] and pinned["result"]["changed"] is False
    unchecked = run(lab, trust={n: Trust(fingerprint=w) for n, w in wrong.items()},
                    check_host_key=False)  # fmt: skip
    assert "msg" not in unchecked["result"]
    assert any("NOT checked" in w and "UNSAFE" in w for w in unchecked["warnings"])


def test_every_body_cxfab_sent_passed_the_spec_check(lab):
    """Only the refusal planted by the refused-patch test: every other request of every
    run in this module was one the emulator's spec check took."""
    seen = refusals(lab)
    assert seen[B] == []
    assert [r["problems"] for r in seen[A]] == [
        ["interface.vlan10.link.mtu: not a path of this release's schema (lab fault)"]
    ]
