"""Negative cases: the example inventory plus a patch must fail with a named error.

Each file in tests/unit/cases/ holds `rule` (the rule id, or `schema`),
`patches` (key path edits, see tests/tools/inventory.py) and `expected_error`,
a substring of the error line, which starts with the inventory key path.
"""

from pathlib import Path

import pytest
import yaml
from cxfab.intent.rules import RULES
from cxfab.intent.validate import validate_inventory

from tests.tools import inventory

CASES_DIR = Path(__file__).parent / "cases"
CASE_FILES = sorted(CASES_DIR.glob("*.yml"))
BASE = inventory.load()


def load_case(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("case_file", CASE_FILES, ids=[f.stem for f in CASE_FILES])
def test_negative_case_fails_with_key_path_and_reason(case_file):
    case = load_case(case_file)
    patched = inventory.apply(BASE, case["patches"])
    result = validate_inventory(
        patched.fabric_vars(), patched.cxfab_hosts(), patched.groups, patched.host_settings()
    )

    assert result.fabric is None, "an invalid fabric must not be returned"
    lines = [str(error) for error in result.errors]
    matching = [e for e in result.errors if case["expected_error"] in str(e)]
    assert matching, f"expected {case['expected_error']!r} in:\n" + "\n".join(lines)
    error = matching[0]
    assert error.rule == case["rule"]
    # The message leads with the inventory key path, then the reason.
    assert case["expected_error"].startswith(error.path)
    assert str(error).startswith(error.path)


def test_every_rule_has_a_negative_case():
    covered = {load_case(path)["rule"] for path in CASE_FILES}
    missing = sorted(rule.id for rule in RULES if rule.id not in covered)
    assert not missing, f"rules without a negative case in {CASES_DIR}: {missing}"
    assert len(RULES) >= 25


def test_every_rule_has_a_summary_for_the_docs():
    # A rule's summary is its docstring (docs/data-model.md lists it).
    missing = sorted(rule.id for rule in RULES if not rule.summary)
    assert not missing, f"rules without a docstring: {missing}"
