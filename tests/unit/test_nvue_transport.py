"""The NVUE transport and the driver's request bodies, without a switch.

The HTTPS session itself (certificates, pins) is exercised against the emulator in
tests/integration/test_nvue_transaction.py; here a fake connection answers, so that
each way an answer can be wrong is shown to fail closed, naming the request.
"""

import copy
import json

import pytest
from cxfab.switch.driver import ChangeRefused, UntrustedSwitch
from cxfab.switch.nvue import driver as driver_module
from cxfab.switch.nvue import plan, render, spec
from cxfab.switch.nvue.driver import NvueDriver, patch_body, statements
from cxfab.switch.nvue.transport import NvueClient, TransportError, Trust

from tests.unit.nvue_helpers import cumulus

PASSWORD = "S3cret-Pw!"


class FakeResponse:
    def __init__(self, status, raw):
        self.status, self._raw = status, raw

    def read(self):
        return self._raw


class FakeConnection:
    def __init__(self, status, raw):
        self.answer = FakeResponse(status, raw)
        self.sent = []

    def request(self, method, url, body=None, headers=None):
        self.sent.append((method, url, body, headers))

    def getresponse(self):
        return self.answer

    def close(self):
        pass


def client(monkeypatch, status, raw) -> tuple[NvueClient, FakeConnection]:
    conn = FakeConnection(status, raw)
    nvue = NvueClient("192.0.2.1", 8765, "cumulus", PASSWORD, Trust(verify=False))
    monkeypatch.setattr(nvue, "_connect", lambda: conn)
    return nvue, conn


@pytest.mark.parametrize(
    ("status", "raw", "said"),
    [
        (200, b"<html>proxy error</html>", "HTTP 200, the answer is not JSON"),
        (500, b'{"detail": "internal"}', "HTTP 500: internal"),
        (404, b'{"title": "Not Found"}', "HTTP 404: Not Found"),
        (401, b'{"title": "Unauthorized"}', "HTTP 401, the login was refused"),
    ],
)
def test_every_unexpected_answer_fails_closed_naming_the_request(monkeypatch, status, raw, said):
    nvue, _ = client(monkeypatch, status, raw)
    with pytest.raises(TransportError) as caught:
        nvue.request("GET", "interface/vlan10", {"rev": "applied"})
    message = str(caught.value)
    assert "192.0.2.1:8765: GET /nvue_v1/interface/vlan10?rev=applied" in message
    assert said in message and PASSWORD not in message


def test_an_object_read_that_is_not_an_object_fails(monkeypatch):
    nvue, _ = client(monkeypatch, 200, b"[1, 2]")
    with pytest.raises(TransportError, match="GET /nvue_v1/mlag: not a JSON object"):
        nvue.get_object("mlag")


def test_the_password_travels_only_in_the_basic_auth_header(monkeypatch):
    nvue, conn = client(monkeypatch, 200, b"{}")
    nvue.request("PATCH", "", {"rev": "7"}, {"mlag": {"enable": "on"}})
    method, url, body, headers = conn.sent[0]
    assert (method, url) == ("PATCH", "/nvue_v1/?rev=7")
    assert PASSWORD not in url and PASSWORD not in body
    auth = headers["Authorization"]
    assert auth.startswith("Basic ") and PASSWORD not in auth


def test_a_revision_id_with_a_slash_stays_one_path_segment(monkeypatch):
    nvue, conn = client(monkeypatch, 200, b"{}")
    nvue.request("GET", ("revision", "changeset/cumulus/2026-11-26_10.00.00_AB12"))
    assert conn.sent[0][1] == "/nvue_v1/revision/changeset%2Fcumulus%2F2026-11-26_10.00.00_AB12"


@pytest.mark.parametrize("pin", ["abc", "zz" * 32, "12:34"])
def test_a_malformed_pin_is_refused_before_any_connection(pin):
    with pytest.raises(UntrustedSwitch, match="not a SHA-256"):
        NvueClient("192.0.2.1", 8765, "u", "p", Trust(fingerprint=pin))


def test_a_pin_with_colons_and_capitals_is_read():
    digest = "AB:" * 31 + "CD"
    nvue = NvueClient("192.0.2.1", 8765, "u", "p", Trust(fingerprint=digest))
    assert nvue._pin == "ab" * 31 + "cd"


# ------------------------------------------------------------------ request bodies
def test_a_patch_body_carries_sets_and_null_unsets_and_passes_the_spec():
    structured = cumulus("lab", "lab-sw-a")
    applied = copy.deepcopy(render.render(structured))
    applied["interface"]["bond9"] = {"type": "bond", "bond": {"mlag": {"id": 9, "enable": "on"}}}
    applied["interface"]["vlan10"]["link"]["mtu"] = 1500
    ops = plan.plan(structured, render.render(structured), applied)
    body = patch_body(ops)
    assert body == {"interface": {"bond9": None, "vlan10": {"link": {"mtu": 9000}}}}
    assert spec.validate(body) == []


def test_null_is_an_unset_only_at_a_confirmed_path():
    assert spec.validate({"interface": {"vlan10": None}}) == []
    assert spec.validate({"mlag": {"no-such-key": None}}) == [
        "mlag.no-such-key: not a path cxfab has confirmed"
    ]


def test_a_body_outside_the_spec_is_refused_before_a_revision(monkeypatch):
    driver = NvueDriver("lab-sw-a", cumulus("lab", "lab-sw-a"))
    # Patched on the module object: a dotted string could reach another copy of the
    # package (test_switch_deploy_module loads it as ansible.module_utils.cxfab too).
    monkeypatch.setattr(
        driver_module.render, "render", lambda s: {"mlag": {"enable": "on", "mac-address": "x"}}
    )
    with pytest.raises(ChangeRefused, match=r"mlag\.mac-address: 'x' is not a valid mac"):
        driver.stage_tree({})
    assert driver.revisions == []


def test_statements_are_one_per_leaf_with_the_cli_line():
    tree = {"mlag": {"enable": "on", "backup": {"10.0.0.2": {"vrf": "mgmt"}}}}
    lines = sorted(leaf.line for leaf in statements(tree).values())
    assert lines == ["nv set mlag backup 10.0.0.2 vrf mgmt", "nv set mlag enable on"]
    assert json.loads(json.dumps(tree)) == tree


def test_a_secret_leaf_is_compared_but_its_line_is_redacted():
    tree = {"system": {"aaa": {"user": {"cumulus": {"hashed-password": "$6$salt$hash"}}}}}
    [leaf] = statements(tree).values()
    assert leaf.line == "nv set system aaa user cumulus hashed-password '<redacted>'"
    changed = {"system": {"aaa": {"user": {"cumulus": {"hashed-password": "$6$other"}}}}}
    assert statements(changed) != statements(tree)  # the proof still sees the difference
    assert "$6$" not in next(iter(statements(changed).values())).line
