"""The lab's NVUE pair (tests/lab/nvue/pair.py): the peers learn each other's liveness
over their keepalive, so `nv show mlag` answers what the pair really is: a killed
peer, a cut peer link, a revived peer with its applied tree back."""

from __future__ import annotations

import json
import random
import socket
import time

import pytest

from module_utils.cxfab.switch.nvue.render import render
from tests.lab.nvue import pair
from tests.lab.nvue.fixtures import request
from tests.lab.onyx.pair import KEEPALIVE_OFFSET
from tests.lab.switch_processes import port_free
from tests.unit.nvue_helpers import cumulus

SETTLE_S = 8.0  # the keepalive's PEER_TIMEOUT is 3 s


def free_ports() -> list[int]:
    while True:
        base = random.randrange(20000, 30000)
        ports = [base, base + 1]
        checks = [(p, socket.SOCK_STREAM) for p in ports]
        checks += [(p + KEEPALIVE_OFFSET, socket.SOCK_DGRAM) for p in ports]
        if all(port_free(p, kind) for p, kind in checks):
            return ports


def call(run_dir, name, method, path, body=None):
    info = pair.ready_info(run_dir, name)
    status, answer = request(info["port"], info["cert"], ("admin", "admin"), method, path, body)
    assert status == 200, (name, method, path, answer)
    return answer


def apply_lab_intent(run_dir, name):
    rev = next(iter(call(run_dir, name, "POST", "/nvue_v1/revision")))
    call(run_dir, name, "PATCH", f"/nvue_v1/?rev={rev}", render(cumulus("lab", name)))
    body = {"state": "apply", "auto-prompt": {"ays": "ays_yes"}}
    assert call(run_dir, name, "PATCH", f"/nvue_v1/revision/{rev}", body)["state"] == (
        "applied_and_saved"
    )


def wait_for(predicate, what: str):
    deadline = time.monotonic() + SETTLE_S
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(0.25)
    raise AssertionError(f"not within {SETTLE_S} s: {what}")


def mlag(run_dir, name) -> dict:
    return call(run_dir, name, "GET", "/nvue_v1/mlag")


@pytest.fixture
def lab_pair(tmp_path):
    run_dir = tmp_path / "nvue-pair"
    pair.start(run_dir, free_ports())
    try:
        for name in pair.NAMES:
            apply_lab_intent(run_dir, name)
        yield run_dir
    finally:
        pair.stop(run_dir)


def test_peers_learn_each_other_and_a_killed_peer_reads_dead(lab_pair):
    a, b = pair.NAMES
    got = wait_for(lambda: mlag(lab_pair, a)["peer-alive"] and mlag(lab_pair, a), "a sees b")
    assert (got["local-role"], got["peer-role"], got["backup-active"]) == (
        "primary", "secondary", True,
    )  # fmt: skip
    bond = call(lab_pair, b, "GET", "/nvue_v1/interface/bond1")
    assert bond["bond"]["mlag"]["status"] == "dual"

    assert pair.ctl(lab_pair, b, ["kill"]) == "ok"
    dead = wait_for(lambda: not mlag(lab_pair, a)["peer-alive"] and mlag(lab_pair, a), "b dead")
    assert dead["backup-active"] is False  # the backup address does not answer either
    bond = call(lab_pair, a, "GET", "/nvue_v1/interface/bond1")
    assert bond["bond"]["mlag"]["status"] == "single"

    assert pair.ctl(lab_pair, b, ["revive"]) == "ok"
    # b comes back with the tree it had applied (saved at apply), and finds a again
    assert call(lab_pair, b, "GET", "/nvue_v1/?rev=applied")["mlag"]["enable"] == "on"
    wait_for(lambda: mlag(lab_pair, b)["peer-alive"], "b sees a after revive")


def test_a_cut_peer_link_leaves_the_backup_and_suspends_the_secondarys_bonds(lab_pair):
    a, b = pair.NAMES
    wait_for(lambda: mlag(lab_pair, b)["peer-alive"], "b sees a")
    pair.ctl(lab_pair, a, ["cut-ipl"])
    cut = wait_for(lambda: not mlag(lab_pair, b)["peer-alive"] and mlag(lab_pair, b), "cut")
    assert cut["backup-active"] is True  # the peer still answers on its backup address
    link = call(lab_pair, "lab-sw-b", "GET", "/nvue_v1/interface/bond1")["link"]
    assert link["oper-status"] == "down"  # the secondary's MLAG bonds go down
    primary = call(lab_pair, a, "GET", "/nvue_v1/interface/bond1")
    assert primary["link"]["oper-status"] == "up"  # the primary's stay up
    assert call(lab_pair, a, "GET", "/nvue_v1/interface/peerlink")["link"]["oper-status"] == (
        "down"
    )
    assert json.loads(pair.ctl(lab_pair, a, ["status"]))["ipl_cut"] is True
    pair.ctl(lab_pair, a, ["heal-ipl"])
    wait_for(lambda: mlag(lab_pair, b)["peer-alive"], "healed")
    link = call(lab_pair, b, "GET", "/nvue_v1/interface/bond1")["link"]
    assert link["oper-status"] == "up"
