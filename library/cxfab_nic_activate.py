#!/usr/bin/python
"""Ansible module: activate a host's pending ConnectX changes once, then prove them."""

from __future__ import annotations

import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.cxfab.common.params import dataclass_from_params
from ansible.module_utils.cxfab.host.mlnx import tools
from ansible.module_utils.cxfab.host.mlnx.activation import ActivationError, Options, activate
from ansible.module_utils.cxfab.host.mlnx.firmware import toolset_from_params
from ansible.module_utils.cxfab.host.mlnx.runner import module_runner

DOCUMENTATION = r"""
module: cxfab_nic_activate
short_description: Reset the cards with pending changes once, read them back, wait for the bond
description:
  - Takes the activation requests the firmware and link type modules returned (one per
    card and role) and merges them per card, so one reset covers both.
  - Notes whether the host's bond exists, resets every card that can be reset live
    (C(mstfwreset -d DEV -y reset)), reads back the firmware each card runs and its port
    protocols, and waits until every bond member is up and in the active aggregator.
  - A card that cannot be reset live is listed in C(reboot_for) when O(allow_reboot) is
    set (the play reboots the host and calls again with O(after_reboot)), else in
    C(not_activated).
  - Fails with the card and what was read when a reset fails, a card does not run what
    was asked, or the bond does not come back within O(bond_timeout).
options:
  requests:
    description: >-
      Activation requests (device, fwreset, fwreset_supported, and version, or ports and
      nv_config).
    type: list
    elements: dict
    required: true
  use_fwreset:
    description: Reset live where the card supports it.
    type: bool
    default: true
  allow_reboot:
    description: Cards that cannot be reset live wait for a reboot.
    type: bool
    default: false
  after_reboot:
    description: The host rebooted for these requests; read back and wait only.
    type: bool
    default: false
  bond:
    description: The host's structured bond (name, members, mode) or null.
    type: dict
  bond_existed_before:
    description: Whether the bond existed before the activation; read here when omitted.
    type: bool
  bond_timeout:
    description: Seconds to wait for the bond members.
    type: int
    default: 120
  bond_proc_dir:
    description: Directory of the bonding status files.
    type: path
    default: /proc/net/bonding
extends_documentation_fragment: [cxfab_card_read]
author: cxfab
"""

EXAMPLES = r"""
- name: Activate the cards, read back what they run and wait for the bond
  cxfab_nic_activate:
    requests: "{{ nic_firmware_activation_requests + nic_link_type_activation_requests }}"
    bond: {name: bond0, members: [ens1f0, ens1f1], mode: 802.3ad}
"""

RETURN = r"""
reset: {description: Cards reset live in this call, returned: always, type: list}
reboot_for:
  description: Cards waiting for the reboot the play does next
  returned: always
  type: list
not_activated:
  description: Cards left pending (no live reset, no reboot allowed)
  returned: always
  type: list
cards: {description: Per activated card, what it runs now, returned: always, type: list}
bond:
  description: existed_before, skipped_reason, waited_seconds, members
  returned: always
  type: dict
"""


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "requests": {"type": "list", "elements": "dict", "required": True},
            "use_fwreset": {"type": "bool", "default": True},
            "allow_reboot": {"type": "bool", "default": False},
            "after_reboot": {"type": "bool", "default": False},
            "bond": {"type": "dict"},
            "bond_existed_before": {"type": "bool"},
            "bond_timeout": {"type": "int", "default": 120},
            "bond_proc_dir": {"type": "path", "default": "/proc/net/bonding"},
            **tools.CARD_READ_OPTIONS,
        },
        supports_check_mode=True,
    )
    p = module.params
    if p["bond_timeout"] <= 0:
        module.fail_json(msg=f"bond_timeout: expected seconds > 0, got {p['bond_timeout']}")
    find = module.get_bin_path
    try:
        # Only what the requests need must exist: a link type change needs no flint.
        wants_firmware = any(r.get("version") for r in p["requests"])
        wants_ports = any(r.get("ports") or r.get("nv_config") for r in p["requests"])
        toolset = toolset_from_params(p, find) if wants_firmware else None
        config_tool = (
            tools.resolve_tool(
                p["config_path"], tools.CONFIG_CANDIDATES, find, "reading ports", "config_path"
            )
            if wants_ports
            else None
        )
    except tools.ToolNotFound as exc:
        module.fail_json(msg=str(exc))

    runner = module_runner(module)

    options = dataclass_from_params(Options, p)
    try:
        result = activate(
            p["requests"],
            options,
            runner,
            toolset,
            config_tool,
            bond_exists=lambda name: os.path.exists(os.path.join(p["bond_proc_dir"], name)),
            check_mode=module.check_mode,
        )
    except ActivationError as exc:
        module.fail_json(msg=str(exc), **exc.result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
