#!/usr/bin/python
"""Ansible module: confirm a host_network change (disarm its revert timer), or report the revert."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_host_network_confirm
short_description: Confirm a host_network change over a fresh connection
description:
  - Stops the revert timer that M(cxfab_host_network) armed before its change and
    drops the snapshot. Reaching the host to run this is the confirmation.
  - When the timer already restored the previous network (the change cut the host
    off, or the change failed), fails with C(reverted - <reason>, restored <what>).
  - In check mode only reads the record.
version_added: "0.1.0"
options:
  token:
    description:
      - The change to confirm (C(rollback.token) of cxfab_host_network).
      - Empty - the pending one (the change's own result never came back).
    type: str
    default: ""
  rollback_dir:
    description: Where cxfab_host_network keeps the snapshot and the watchdog's result.
    type: path
    default: /run/cxfab/network-rollback
author: cxfab
"""

EXAMPLES = r"""
- name: Confirm the change
  cxfab_host_network_confirm:
    token: "{{ host_network_result.rollback.token }}"
"""

RETURN = r"""
rollback:
  description: The record - C(state) confirmed or reverted, C(reason), C(restored), C(errors).
  type: dict
  returned: always
"""

import json  # noqa: E402
import os  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.host.net import rollback  # noqa: E402


def main():
    module = AnsibleModule(
        argument_spec={
            "token": {"type": "str", "default": "", "no_log": False},  # not a secret: a record id
            "rollback_dir": {"type": "path", "default": rollback.ROLLBACK_DIR},
        },
        supports_check_mode=True,
    )
    directory, token = module.params["rollback_dir"], module.params["token"]
    if module.check_mode:
        try:
            with open(os.path.join(directory, rollback.ARMED), encoding="utf-8") as handle:
                armed = json.load(handle)
        except FileNotFoundError:
            module.exit_json(changed=False, rollback={"state": "none"})
        except (OSError, ValueError) as exc:
            module.fail_json(msg=f"{rollback.ARMED} cannot be read: {exc}")
        module.exit_json(changed=False, rollback=rollback.public(armed))
    try:
        result = rollback.disarm(directory, token)
    except (rollback.RollbackError, OSError) as exc:
        module.fail_json(msg=str(exc), rollback={"state": "unknown"})
    if result["state"] == "reverted":
        module.fail_json(msg=rollback.describe_result(result), reverted=True, rollback=result)
    module.exit_json(changed=False, rollback=result)


if __name__ == "__main__":
    main()
