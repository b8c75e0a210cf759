"""How the integration tier shares out its tests among pytest-xdist workers.

`make test-integration` runs `--dist loadgroup`. A file's tests stay together on one
worker (their module-scoped fixtures, an emulated switch pair or a native build, are
set up once), unless the file says `SPREAD_TESTS = True`: its tests are independent
(each builds its own world in tmp_path) and go to whichever worker is free. Without
that, the longest file alone set the tier's time.

The fixtures more than one file uses: `bin_dir`, the native build.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    # tryfirst: xdist reads the xdist_group marks in its own hook of this name.
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and not getattr(module, "SPREAD_TESTS", False):
            item.add_marker(pytest.mark.xdist_group(module.__name__))


@pytest.fixture(scope="module")
def bin_dir():
    """The native programs, built (make -C native) once per test file that asks."""
    subprocess.run(["make", "-s", "-C", str(REPO / "native")], check=True)
    return REPO / "native" / "build"
