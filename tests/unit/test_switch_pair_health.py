"""The health gate after a switch change blocks what the change broke, not the hosts' pace."""

from __future__ import annotations

from module_utils.cxfab.switch import pair_health


def check(check_id: str, status: str, target: str = "lab-sw-a") -> dict:
    return {"id": check_id, "target": target, "status": status, "observed": "x"}


def test_an_mpo_that_was_down_before_the_change_does_not_block():
    before = {("lab-sw-a", "mpo.1"): "fail", ("lab-sw-a", "mlag.mpo_status"): "fail"}
    after = [check("mpo.1", "fail"), check("mlag.mpo_status", "fail"), check("mlag.oper", "pass")]
    assert pair_health.blocking(after, before) == []
    waived = pair_health.waived(after, [])
    assert [c["id"] for c in waived] == ["mpo.1", "mlag.mpo_status"]
    assert all("LACP" in c["waived"] for c in waived)


def test_an_mpo_the_change_took_down_blocks():
    before = {("lab-sw-a", "mpo.1"): "pass", ("lab-sw-b", "mpo.1"): "fail"}
    after = [check("mpo.1", "fail"), check("mpo.1", "fail", target="lab-sw-b")]
    assert pair_health.blocking(after, before) == [after[0]]


def test_a_new_mpo_absent_before_does_not_block_but_mlag_does():
    after = [check("mpo.2", "fail"), check("mlag.ipl_state", "fail")]
    assert pair_health.blocking(after, {}) == [after[1]]


def test_without_a_change_only_host_independent_failures_block():
    after = [check("mpo.1", "fail"), check("config.saved", "fail")]
    assert pair_health.blocking(after, None) == [after[1]]
    assert pair_health.host_dependent(after[0]) and not pair_health.host_dependent(after[1])
