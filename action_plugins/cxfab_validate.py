"""Validate the whole fabric intent on the controller; never contacts a device.

Reads cxfab_fabric_name, cxfab_switch_pairs, cxfab_vlans, cxfab_workloads, cxfab_supported_cables
(group_vars/all) and cxfab_host of every host of group `hosts`, validates the
assembled fabric document (schema + semantic rules) and either fails listing
every error, one per line with its inventory key path, or sets the fact
`cxfab_fabric`: the normalised fabric every later stage reads
(`hostvars['localhost'].cxfab_fabric`).

The fabric carries the switch password, so a successful result is marked
no_log: its content never reaches the output, even with -vvv.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ansible.errors import AnsibleActionFail, AnsibleError
from ansible.plugins.action import ActionBase

# cxfab.* lives in <repo>/module_utils; controller code imports it directly.
_MODULE_UTILS = str(Path(__file__).resolve().parent.parent / "module_utils")
if _MODULE_UTILS not in sys.path:
    sys.path.insert(0, _MODULE_UTILS)

from cxfab import fabric as cxfab_fabric  # noqa: E402
from cxfab.validate import validate_inventory  # noqa: E402

DOCUMENTATION = r"""
action: cxfab_validate
short_description: Validate the cxfab fabric intent and publish the normalised fabric
description:
  - Assembles the fabric document from the inventory variables of the whole
    inventory, checks it against the schema in C(module_utils/cxfab/schema/) and the
    semantic cross-device rules, and returns it normalised as fact C(cxfab_fabric).
  - Runs on the controller only; no device is contacted.
options:
  hosts_group:
    description: Inventory group whose hosts carry C(cxfab_host).
    type: str
    default: hosts
"""


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        _, args = self.validate_argument_spec(
            argument_spec={"hosts_group": {"type": "str", "default": cxfab_fabric.HOSTS_GROUP}}
        )
        groups = {name: list(hosts) for name, hosts in task_vars.get("groups", {}).items()}
        hostvars = task_vars["hostvars"]

        fabric_vars = {}
        for var in cxfab_fabric.FABRIC_VARS.values():
            value = self._group_var(var, task_vars, hostvars, groups)
            if value is not None:
                fabric_vars[var] = value
        host_vars = {
            host: hostvars[host].get(cxfab_fabric.HOST_VAR)
            for host in groups.get(args["hosts_group"], [])
        }

        try:
            outcome = validate_inventory(fabric_vars, host_vars, groups)
        except Exception as error:  # a defect in a rule must still fail cleanly
            raise AnsibleActionFail(
                f"cxfab_validate: internal error {type(error).__name__}: {error}"
            ) from error
        if not outcome.ok:
            lines = [str(error) for error in outcome.errors]
            result.update(
                failed=True,
                changed=False,
                msg=f"The fabric intent has {len(lines)} error(s):\n" + "\n".join(lines),
            )
            return result

        result.update(
            changed=False,
            ansible_facts={"cxfab_fabric": outcome.fabric},
            msg=f"fabric {outcome.fabric['fabric_name']} is valid",
            _ansible_no_log=True,
        )
        return result

    def _group_var(self, var, task_vars, hostvars, groups):
        """A fabric variable of group_vars/all, templated (vault values decrypted)."""
        if var in task_vars:
            try:
                return self._templar.template(task_vars[var])
            except AnsibleError as error:
                raise AnsibleError(f"{var}: cannot be templated: {error}") from error
        # Not visible on this host (e.g. defined for group 'all' of another inventory
        # source only): take it from the first inventory host that has it.
        for host in groups.get("all", []):
            if var in hostvars[host]:
                return hostvars[host][var]
        return None
