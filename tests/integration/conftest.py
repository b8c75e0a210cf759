"""How the integration tier shares out its tests among pytest-xdist workers.

`make test-integration` runs `--dist loadgroup`. A file's tests stay together on one
worker (their module-scoped fixtures, an emulated switch pair or a native build, are
set up once), unless the file says `SPREAD_TESTS = True`: its tests are independent
(each builds its own world in tmp_path) and go to whichever worker is free. Without
that, the longest file alone set the tier's time.

xdist hands the groups out largest first by their number of tests, so a long file of
few tests ran alone at the end (test_canary_every_playbook.py, 2 tests, started 130 s
into a 353 s tier and ended it). The order is made here instead (the Makefile turns
xdist's off with --no-loadscope-reorder): first the files that give their measured
`WORKER_SECONDS` (those of 90 s and more), longest first, then the rest largest group
first, as xdist would; every group keeps the order of its tests. A stale figure only
costs time.

The fixtures more than one file uses: `bin_dir`, the native build.
"""

from __future__ import annotations

import collections
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def worker_seconds(item) -> float:
    return float(getattr(getattr(item, "module", None), "WORKER_SECONDS", 0))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    # tryfirst: xdist reads the xdist_group marks in its own hook of this name.
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and not getattr(module, "SPREAD_TESTS", False):
            item.add_marker(pytest.mark.xdist_group(module.__name__))
    scope = {id(item): group_of(item) for item in items}
    size = collections.Counter(scope.values())
    # Stable: a group's tests keep their order.
    items.sort(key=lambda item: (-worker_seconds(item), -size[scope[id(item)]]))


def group_of(item) -> str:
    """The scope xdist's loadgroup gives the item: its group, else the test alone."""
    mark = item.get_closest_marker("xdist_group")
    return mark.args[0] if mark is not None and mark.args else item.nodeid


@pytest.fixture(scope="module")
def bin_dir():
    """The native programs, built (make -C native) once per test file that asks."""
    subprocess.run(["make", "-s", "-C", str(REPO / "native")], check=True)
    return REPO / "native" / "build"
