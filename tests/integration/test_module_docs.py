"""Every cxfab module's documentation renders with ansible-doc (doc fragments merged in).

A description line holding ": " is a YAML mapping, not text: the documentation then
does not parse at all, or turns a sentence into a dict, and `ansible-doc` shows
nothing for the module. Eight modules were like that.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MODULES = sorted(p.stem for p in (REPO / "library").glob("cxfab_*.py"))


def test_every_module_documents_itself():
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg")}
    done = subprocess.run(
        ["ansible-doc", "--json", "-t", "module", *MODULES],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert "ERROR" not in done.stderr, done.stderr
    docs = json.loads(done.stdout)
    assert sorted(docs) == MODULES
    for name, doc in docs.items():
        options = doc["doc"].get("options") or {}
        for key, option in options.items():
            assert isinstance(option.get("description"), str | list), f"{name}.{key}"


def test_a_fragment_brings_its_options():
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg")}
    done = subprocess.run(
        ["ansible-doc", "--json", "-t", "module", "cxfab_nic_state", "cxfab_nic_activate"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    for doc in json.loads(done.stdout).values():
        assert {"query_tool", "flint_path", "sysfs_root"} <= set(doc["doc"]["options"])
