#!/usr/bin/python
"""Ansible module: read every NIC of a host once and name those with nothing to do."""

from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.cxfab.host.stages.nic_state import ARGUMENT_SPEC, run

DOCUMENTATION = r"""
module: cxfab_nic_state
short_description: Read the firmware and port protocols of a host's ConnectX cards in one call
description:
  - Read-only. For every NIC of the host's structured config, queries the firmware
    (C(mstflint q), MFT C(flint q) or C(mlxfwmanager --query)) when the NIC pins one,
    and the port protocols (C(mstconfig -e q)) when a port pins C(link_type).
  - Names the NICs whose firmware (target in flash, running, PSID as pinned) and port
    protocols (Current and Next Boot as wanted) need nothing; the serial rollout skips
    them without contacting the host. A pending activation is not settled.
  - Fails when a card cannot be read - nothing is assumed settled.
options:
  nics:
    description: The host's structured NICs (pci, firmware, ports).
    type: list
    elements: dict
    required: true
extends_documentation_fragment: [cxfab_card_read]
author: cxfab
"""

EXAMPLES = r"""
- name: Read the firmware and port protocols of every NIC
  cxfab_nic_state:
    nics: "{{ (hostvars['localhost'].cxfab_structured | cxfab_device(inventory_hostname)).nics }}"
"""

RETURN = r"""
nics: {description: Per NIC what it runs and what it needs, returned: success, type: list}
settled_firmware:
  description: PCI addresses whose firmware needs nothing
  returned: success
  type: list
settled_link_type:
  description: PCI addresses whose port protocols need nothing
  returned: success
  type: list
changes_needed: {description: Some NIC needs a change, returned: success, type: bool}
pending_activation:
  description: >-
    PCI address -> what its next activation changes: firmware waiting in flash, and
    every mlxconfig parameter whose Next Boot differs from Current
    (C(SRIOV_EN (current False(0), next boot True(1)))), pinned or not
  returned: success
  type: dict
"""


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(**run(module))


if __name__ == "__main__":
    main()
