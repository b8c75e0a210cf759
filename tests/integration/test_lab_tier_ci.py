"""With CI=true, a lab tier that cannot boot its lab fails instead of passing empty.

`make test-system` runs `lab up`; exit status 77 means the lab cannot run on this
machine (no kernel, no QEMU, no root...). Outside CI the lab's tests then skip with
the reason; in CI that used to print "all tiers passed" with every system test
skipped (it happened once: d0f0470). The lab command is replaced here by one that
answers 77, so nothing boots.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
UNAVAILABLE = "sh -c 'test \"$$0\" != up || exit 77'"


def _test_system(ci: str, tmp_path) -> subprocess.CompletedProcess:
    (tmp_path / "none").mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "MAKEFLAGS", "MAKELEVEL")}
    if ci:
        env["CI"] = ci
    return subprocess.run(
        [
            "make",
            "--no-print-directory",
            "-o",
            "setup",
            "test-system",
            f"LAB={UNAVAILABLE}",
            # No test file (an empty folder): pytest's "no tests" (5) is no failure there,
            # and its own basetemp (pytest would otherwise prune /tmp/pytest-of-* first).
            f"LAB_TESTS={tmp_path / 'none'}",
            f"DEPLOYED_TESTS={tmp_path / 'none'}",
            f"PYTEST_ARGS=-p no:cacheprovider --basetemp={tmp_path / 'inner'}",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_lab_that_cannot_run_fails_the_tier_in_ci(tmp_path):
    result = _test_system("true", tmp_path)
    assert result.returncode != 0, result.stdout + result.stderr
    assert "a skipped lab tier proves nothing" in result.stderr


def test_outside_ci_the_same_lab_skips_and_the_tier_goes_on(tmp_path):
    result = _test_system("", tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "a skipped lab tier proves nothing" not in result.stderr
