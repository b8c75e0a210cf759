"""Vars plugin: check an inventory directory's variable files before Ansible loads them.

Enabled before host_group_vars (ansible.cfg `vars_plugins_enabled`); provides no
variables. A file that does not parse, repeats a key, or is too large (in bytes
or in YAML alias expansion) stops the run with its path, line and column
(module_utils/cxfab/inventory_files.py). Each directory is checked once per run.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ansible.errors import AnsibleParserError
from ansible.plugins.vars import BaseVarsPlugin

_MODULE_UTILS = str(Path(__file__).resolve().parent.parent / "module_utils")
if _MODULE_UTILS not in sys.path:
    sys.path.insert(0, _MODULE_UTILS)

from cxfab.intent.inventory_files import InventoryFileError, check_directory  # noqa: E402

DOCUMENTATION = r"""
name: cxfab_inventory_files
short_description: Check the inventory's variable files before they are loaded
description:
  - Parses every file of C(group_vars/) and C(host_vars/) beside an inventory source
    without constructing it, and fails naming the file, line and column when one does
    not parse, repeats a mapping key, exceeds the size limit or expands its YAML
    aliases beyond the node limit. Provides no variables.
options:
  stage:
    ini:
      - key: stage
        section: vars_cxfab_inventory_files
    env:
      - name: ANSIBLE_VARS_PLUGIN_STAGE
extends_documentation_fragment:
  - vars_plugin_staging
"""

_CHECKED: set[str] = set()


class VarsModule(BaseVarsPlugin):
    REQUIRES_ENABLED = True

    def get_vars(self, loader, path, entities, cache=True):
        super().get_vars(loader, path, entities)
        key = str(Path(path).resolve())
        if key not in _CHECKED:
            try:
                check_directory(key)
            except InventoryFileError as error:
                raise AnsibleParserError(f"Inventory file error: {error}") from None
            _CHECKED.add(key)
        return {}
