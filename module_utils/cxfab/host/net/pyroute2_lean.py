"""pyroute2's IPRoute and NetlinkError without the start-up work of `import pyroute2`.

The package's __init__ (0.7.x, Debian 12's python3-pyroute2) reads the entry points of
every installed distribution (importlib.metadata) and imports every one of pyroute2's
own: NDB, IPDB, its test lab (unittest.mock), asyncio, multiprocessing. cxfab uses
IPRoute and NetlinkError only, and the modules that need them run once per task. On a
lab guest under TCG, `from pyroute2 import IPRoute` took 4.0 s and the path below 2.0 s
(2026-11-28, `time python3 ...` on lab-host1, twice each).

How: the package object is created from its spec without running its __init__ (what
`importlib.util.module_from_spec` gives before `exec_module`), so importing
`pyroute2.iproute.linux` runs only that module and what it imports itself. Anything
unexpected on the way (another pyroute2 layout) drops the partial import and falls back
to the package's own `import pyroute2`: the lean path can only save time, never change
which IPRoute is used. When pyroute2 is already imported, its own classes are returned.
Once the lean path ran, the process's `pyroute2` package object is the bare one: code in
that process imports names from their own modules (`pyroute2.iproute.linux`), never
`from pyroute2 import ...`, which finds nothing on it. Every cxfab caller uses load().

Also installed beside rollback.py for the revert watchdog (rollback.PACKAGE_FILES).
"""

from __future__ import annotations

import importlib.util
import sys

PACKAGE = "pyroute2"


def _forget_partial_import() -> None:
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]


def _from_submodules():
    from pyroute2.iproute.linux import IPRoute
    from pyroute2.netlink.exceptions import NetlinkError

    return IPRoute, NetlinkError


def load():
    """(IPRoute, NetlinkError); ImportError when pyroute2 is not installed.

    Taken from their own modules in every case: `pyroute2.IPRoute` is the very class of
    `pyroute2.iproute.linux` (0.7.2), and the package object may be the lean one.
    """
    if PACKAGE in sys.modules:
        return _from_submodules()
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError(f"No module named {PACKAGE!r}", name=PACKAGE)
    sys.modules[PACKAGE] = importlib.util.module_from_spec(spec)
    try:
        return _from_submodules()
    except Exception:  # any other layout: the package's own import
        _forget_partial_import()
    import pyroute2  # noqa: F401 - runs the package's __init__

    return _from_submodules()
