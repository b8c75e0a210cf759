"""NVUE's own diff: the emulator's `?rev=A&diff=B` answer, the driver's reading of it and
its scratch revision, which is deleted whatever happens and never applied."""

from __future__ import annotations

import pytest
from cxfab.switch.driver import DriverError, Staged
from cxfab.switch.nvue import driver as nvue_driver
from cxfab.switch.nvue.transport import TransportError

from tests.lab.nvue import diff, model

APPLIED = {
    "interface": {
        "vlan10": {"type": "svi", "vlan": 10, "link": {"mtu": 9000}},
        "vlan20": {"type": "svi", "vlan": 20},
    },
    "mlag": {"enable": "on"},
}


def test_the_diff_lists_what_the_target_sets_then_what_it_unsets():
    target = {
        "interface": {"vlan10": {"type": "svi", "vlan": 10, "link": {"mtu": 1500}},
                      "vlan30": {"type": "svi", "vlan": 30}},
        "mlag": {"enable": "on"},
    }  # fmt: skip
    assert diff.diff(APPLIED, target) == [
        {"set": {"interface": {"vlan10": {"link": {"mtu": 1500}},
                               "vlan30": {"type": "svi", "vlan": 30}}}},
        {"unset": {"interface": {"vlan20": None}}},
    ]  # fmt: skip
    assert diff.diff(APPLIED, APPLIED) == []
    assert diff.diff(target, APPLIED)[1] == {"unset": {"interface": {"vlan30": None}}}


def test_the_emulated_switch_diffs_a_revision_against_the_applied_tree():
    switch = model.Switch("sw-a")
    switch.applied = {"interface": {"vlan10": {"type": "svi", "link": {"mtu": 9000}}}}
    rev, _ = switch.create_revision()
    assert switch.diff((), "applied", rev) == []
    switch.patch(rev, (), {"interface": {"vlan10": {"link": {"mtu": 1500}}}})
    expected = [{"set": {"interface": {"vlan10": {"link": {"mtu": 1500}}}}}]
    assert switch.diff((), "applied", rev) == expected
    scoped = switch.diff(("interface", "vlan10"), "applied", rev)
    assert scoped == [{"set": {"link": {"mtu": 1500}}}]
    assert switch.diff((), rev, "applied") == [{"set": {"interface": {"vlan10": {"link": {
        "mtu": 9000}}}}}]  # fmt: skip
    with pytest.raises(model.NotFound):
        switch.diff((), "applied", "99")


def test_the_driver_reads_the_diff_as_nv_lines_with_secrets_redacted():
    answer = [
        {"set": {"interface": {"vlan10": {"link": {"mtu": 1500}}},
                 "system": {"aaa": {"user": {"x": {"hashed-password": "$6$s"}}}}}},
        {"unset": {"interface": {"vlan20": None, "bond3": {}}}},
    ]  # fmt: skip
    assert nvue_driver.diff_lines(answer, "GET") == [
        "nv set interface vlan10 link mtu 1500",
        "nv set system aaa user x hashed-password '<redacted>'",
        "nv unset interface vlan20",
        "nv unset interface bond3",
    ]
    assert nvue_driver.diff_lines([], "GET") == []


@pytest.mark.parametrize(
    "answer",
    [{"set": {}}, [{"set": {}, "unset": {}}], [{"change": {}}], [{"set": "x"}], "text", None],
)
def test_a_diff_answer_of_another_form_fails_closed(answer):
    with pytest.raises(TransportError, match="not a list of"):
        nvue_driver.diff_lines(answer, "GET ?rev=applied&diff=3")


class FakeClient:
    """Answers the driver's requests as a switch would; `fail` maps a method to an error."""

    def __init__(self, fail: dict | None = None, diff_answer=None):
        self.fail = fail or {}
        self.diff_answer = diff_answer if diff_answer is not None else [
            {"set": {"interface": {"vlan10": {"link": {"mtu": 1500}}}}}]  # fmt: skip
        self.sent: list[tuple] = []

    def request(self, method, path, query=None, body=None, expect=(200,)):
        self.sent.append((method, path, query))
        if method in self.fail:
            raise TransportError(self.fail[method], 400)
        if method == "POST":
            return {"7": {"state": "pending", "transition": {"issue": {}, "progress": ""}}}
        if method == "GET":
            return self.diff_answer
        return {}


def driver_with(client: FakeClient) -> nvue_driver.NvueDriver:
    driver = nvue_driver.NvueDriver("sw-a", {"management": {"address": "127.0.0.1"}})
    driver.client = client
    return driver


STAGED = Staged(["nv set interface vlan10 link mtu 1500"],
                private={"body": {"interface": {"vlan10": {"link": {"mtu": 1500}}}}})  # fmt: skip


def test_the_scratch_revision_is_patched_diffed_and_deleted_never_applied():
    client = FakeClient()
    driver = driver_with(client)
    assert driver.device_diff(STAGED) == ["nv set interface vlan10 link mtu 1500"]
    assert client.sent == [
        ("POST", "revision", None),
        ("PATCH", "", {"rev": "7"}),
        ("GET", "", {"rev": "applied", "diff": "7"}),
        ("DELETE", ("revision", "7"), None),
    ]
    assert driver.revisions == [] and driver.awaiting is None


@pytest.mark.parametrize(
    ("client", "said"),
    [
        (FakeClient(fail={"PATCH": "HTTP 400: interface.vlan10.link.mtu: refused"}), "refused"),
        (FakeClient(fail={"GET": "HTTP 500: boom"}), "boom"),
        (FakeClient(diff_answer={"not": "a list"}), "not a list of"),
    ],
)
def test_a_refused_patch_or_a_failed_diff_still_deletes_the_scratch_revision(client, said):
    driver = driver_with(client)
    with pytest.raises(DriverError, match=said) as caught:
        driver.device_diff(STAGED)
    assert "scratch revision 7 deleted, nothing applied" in str(caught.value)
    assert client.sent[-1] == ("DELETE", ("revision", "7"), None)
    assert not any(m == "PATCH" and p == ("revision", "7") for m, p, _ in client.sent)


def test_a_scratch_revision_that_cannot_be_deleted_is_named():
    client = FakeClient(fail={"DELETE": "HTTP 500: busy"})
    with pytest.raises(DriverError, match=r"scratch revision 7 NOT deleted \(HTTP 500: busy\)"):
        driver_with(client).device_diff(STAGED)
