"""The one check constructor (module_utils/cxfab/common/checks.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cxfab.common.checks import CATEGORIES, CATEGORY_OF_PREFIX, Checks, check, merge

PRODUCT = Path(__file__).resolve().parents[2] / "module_utils" / "cxfab"


def test_the_category_follows_the_id_prefix_and_nothing_else():
    assert check("mtu.bond0.10", "h1", "pass", 9000, 9000)["category"] == "network"
    assert check("pfc.eth1/7", "sw", "fail", "on", "off")["category"] == "lossless"
    assert check("nosuchprefix.x", "h1", "pass", 1, 1)["category"] == "other"
    assert set(CATEGORY_OF_PREFIX.values()) <= set(CATEGORIES)


def test_default_messages_and_extra_keys():
    passed = check("mlag.enabled", "sw", "pass", "Enabled", "Enabled", scope="local")
    failed = check("mlag.enabled", "sw", "fail", "Enabled", "Disabled")
    assert passed["message"] == "as intended" and passed["scope"] == "local"
    assert failed["message"] == "expected Enabled, observed Disabled"


def test_an_unknown_status_is_refused():
    with pytest.raises(ValueError, match="status 'ok'"):
        check("mtu.x", "h1", "ok", 1, 1)


def test_checks_of_one_target_and_merge_keeps_the_worst():
    out = Checks("h1")
    out.judge("mtu.a", True, 1, 1)
    out.skip("mtu.a", 1, "not read")
    out.warn("mtu.b", 1, 2, "starved")
    assert [c["status"] for c in merge(out)] == ["skip", "warn"]
    assert {c["target"] for c in out} == {"h1"}


def test_no_other_module_builds_a_check_by_hand():
    """A check dict written out elsewhere would set its category a second time."""
    literal = re.compile(r'"category":\s*(?!name\b)\S')
    offenders = [
        str(path.relative_to(PRODUCT))
        for path in PRODUCT.rglob("*.py")
        if path.name != "checks.py" or path.parent.name != "common"
        if literal.search(path.read_text())
    ]
    assert offenders == []
