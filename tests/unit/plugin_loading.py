"""Loading one plugin or module of the repository by its file, as Ansible does.

Ansible loads filter plugins, action plugins and modules by path, not as a package, so the
tests do the same instead of putting those folders on sys.path."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import cxfab

REPO = Path(__file__).resolve().parents[2]


def load_plugin(kind: str, name: str) -> ModuleType:
    """`<repo>/<kind>/<name>.py` as a module, e.g. load_plugin("filter_plugins", "cxfab_distro")."""
    # Modules import ansible.module_utils.cxfab.* (Ansible ships module_utils with them):
    # serve it from the repo's package, which tests/conftest.py puts on sys.path.
    sys.modules.setdefault("ansible.module_utils.cxfab", cxfab)
    spec = importlib.util.spec_from_file_location(name, REPO / kind / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_module(module: ModuleType, args: dict, monkeypatch, capsys) -> dict:
    """The JSON result of `module.main()` run with `args` as its module arguments."""
    import pytest
    from ansible.module_utils import basic

    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode())
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy")
    with pytest.raises(SystemExit):
        module.main()
    return json.loads(capsys.readouterr().out)
