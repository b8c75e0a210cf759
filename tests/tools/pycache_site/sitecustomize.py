"""The test tiers' controller: the lab guests' bytecode cache for zip imports, here too.

`make test` (and its tiers) put this directory first on PYTHONPATH, so every Python
process of a test run loads it at start-up: ansible-playbook, the AnsiballZ payload of
every task Ansible runs on localhost (the switch plays, validation, the report), the
emulators. An AnsiballZ payload imports ansible.module_utils and cxfab's module_utils
from a zip, and zipimport never keeps bytecode, so every local task compiled them again.
The cache is tests/lab/vm/guest_pycache.py, the one the guests load (its docstring says
how it is keyed and why a failure of it only costs a compile); its directory is
CXFAB_LAB_PYCACHE, build/pycache/zip under make.

Measured (2026-11-29, tests/integration/test_switch_roles.py alone, CPU time of the
run): 33.1 s user as before; 27.7 s with this cache; 24.0 s with it and the .pyc files
kept under PYTHONPYCACHEPREFIX (Makefile).

Only test runs load it: an operator's ansible-playbook never does.
"""

import importlib.util
import os

_CACHE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    "lab",
    "vm",
    "guest_pycache.py",
)
if os.path.exists(_CACHE):  # a file's location always gives a spec with a loader
    _spec = importlib.util.spec_from_file_location("cxfab_zip_pycache", _CACHE)
    _spec.loader.exec_module(importlib.util.module_from_spec(_spec))
