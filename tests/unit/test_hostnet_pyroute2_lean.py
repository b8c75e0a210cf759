"""pyroute2's IPRoute without the package's start-up work (host/net/pyroute2_lean.py).

Each case runs in a Python of its own: the lean path is about what a fresh process
imports, and the test process has imported pyroute2 already.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

MODULE_UTILS = Path(__file__).resolve().parents[2] / "module_utils"

PROBE = """
import json, sys
sys.path.insert(0, {module_utils!r})
{prelude}
from cxfab.host.net.pyroute2_lean import load
iproute, netlink_error = load()
import pyroute2.iproute.linux, pyroute2.netlink.exceptions
with iproute() as ipr:
    links = list(ipr.get_links())
print(json.dumps({{
    "same_iproute": iproute is pyroute2.iproute.linux.IPRoute,
    "same_error": netlink_error is pyroute2.netlink.exceptions.NetlinkError,
    "package_ran": hasattr(sys.modules["pyroute2"], "IPRoute"),
    "ndb_loaded": "pyroute2.ndb.main" in sys.modules,
    "links": len(links),
}}))
"""


def probe(prelude: str = "") -> dict:
    code = PROBE.format(module_utils=str(MODULE_UTILS), prelude=prelude)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_lean_path_gives_pyroute2s_own_classes_without_its_package_start_up():
    found = probe()
    assert found["same_iproute"] and found["same_error"]
    # The package's __init__ never ran: no IPRoute on it, NDB not imported.
    assert not found["package_ran"] and not found["ndb_loaded"]
    assert found["links"] >= 1  # a working netlink socket: at least lo


def test_an_already_imported_pyroute2_is_used_as_it_is():
    found = probe("import pyroute2")
    assert found["same_iproute"] and found["same_error"] and found["package_ran"]


def test_a_layout_the_lean_path_cannot_import_falls_back_to_the_package():
    # pyroute2.iproute.linux refuses to import (another release's layout): the partial
    # import is dropped and the package's own import gives the classes.
    prelude = """
import builtins
real_import = builtins.__import__
state = {"refused": 0}
def refusing(name, *args, **kwargs):
    if name == "pyroute2.iproute.linux" and not state["refused"]:
        state["refused"] = 1
        raise ImportError("planted: no such layout")
    return real_import(name, *args, **kwargs)
builtins.__import__ = refusing
"""
    found = probe(prelude)
    assert found["same_iproute"] and found["same_error"] and found["package_ran"]


def test_no_pyroute2_is_an_import_error():
    # find_spec finds nothing, as on a host without pyroute2: network.py reports
    # missing_required_lib("pyroute2") on this ImportError.
    code = (
        f"import sys; sys.path.insert(0, {str(MODULE_UTILS)!r})\n"
        "import importlib.util\n"
        "importlib.util.find_spec = lambda name, *a: None\n"
        "from cxfab.host.net.pyroute2_lean import load\n"
        "try:\n    load()\nexcept ImportError as exc:\n    print('ImportError', exc.name)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.stdout.strip() == "ImportError pyroute2", done.stderr
