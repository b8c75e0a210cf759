#!/usr/bin/python
"""Ansible module: set the protocol (IB/ETH) of ConnectX VPI ports and the pinned mlxconfig
parameters."""

from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.cxfab.host.mlnx import tools
from ansible.module_utils.cxfab.host.mlnx.port_config import (
    PortConfigError,
    configure_ports,
    requests_from_inventory,
)
from ansible.module_utils.cxfab.host.mlnx.runner import module_runner

DOCUMENTATION = r"""
module: cxfab_nic_link_type
short_description: Set LINK_TYPE_P<n> and pinned mlxconfig parameters (Current/Next Boot rule)
description:
  - Reads C(mstconfig -d DEV -e q) (MFT C(mlxconfig)) and decides per port. Desired value
    not in Next Boot -> set it (one C(set) call for all ports); in Next Boot but not in
    Current -> nothing to set, activation pending; parameter absent -> the card does not
    support it, the module fails and sets nothing.
  - The same rule for every parameter of C(nv_config) (C(PARAM=value) in the same one
    C(set) call); a parameter the card does not report fails the module, nothing set.
  - On ConnectX-3 (mlx4) the running protocol is also switched through
    C(/sys/bus/pci/devices/DEV/mlx4_portN), which needs no activation.
  - Never activates by itself; returns C(pending_activation) and whether C(mstfwreset)
    can reset the card.
options:
  device: {description: PCI address of the card (function 0), type: str, required: true}
  ports:
    description:
      - "Port entries as the inventory writes them: C(port) (number) and C(link_type)
        (V(ib), V(eth) or V(vpi))."
      - Other keys (netdev, speed...) are ignored; entries without C(link_type) are left alone.
      - V(vpi) (auto-sensing) exists only on ConnectX-3.
    type: list
    elements: dict
    required: true
  nv_config:
    description:
      - Other non-volatile parameters to pin, C(PARAM) to value as mlxconfig takes it
        (a number or a label such as V(True)); C(LINK_TYPE_P<n>) belongs to O(ports).
    type: dict
    default: {}
  state:
    description: V(present) configures; V(query) only reports.
    type: str
    choices: [present, query]
    default: present
  config_path: {description: Command name or path of mstconfig/mlxconfig (default auto), type: str}
  fwreset_path:
    description: Command name or path of mstfwreset/mlxfwreset (default auto)
    type: str
  sysfs_root: {description: Mount point of sysfs, type: path, default: /sys}
author: cxfab
"""

EXAMPLES = r"""
- name: Put both ports of the ConnectX-4 in Ethernet mode
  cxfab_nic_link_type:
    device: "0000:17:00.0"
    ports:
      - {port: 1, link_type: eth}
      - {port: 2, link_type: eth}
"""

RETURN = r"""
ports:
  description: Per port, param, desired, current, next_boot and action (none, set, activate).
  returned: success
  type: list
params:
  description: Per nv_config parameter, desired, current, next_boot and action.
  returned: success
  type: list
set: {description: The PARAM=value words passed to set, returned: success, type: list}
pending_activation:
  description: Some port or parameter runs a value other than desired
  returned: success
  type: bool
activation: {description: For the activation handler when pending, returned: success, type: dict}
"""


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "device": {"type": "str", "required": True},
            "ports": {"type": "list", "elements": "dict", "required": True},
            "nv_config": {"type": "dict", "default": {}},
            "state": {"type": "str", "choices": ["present", "query"], "default": "present"},
            "config_path": {"type": "str"},
            "fwreset_path": {"type": "str"},
            "sysfs_root": {"type": "path", "default": "/sys"},
        },
        supports_check_mode=True,
    )
    params = module.params

    def find(name):
        return module.get_bin_path(name)

    try:
        config_tool = tools.resolve_tool(
            params["config_path"],
            tools.CONFIG_CANDIDATES,
            find,
            "reading the port configuration",
            "config_path",
        )
    except tools.ToolNotFound as exc:
        module.fail_json(msg=str(exc))
    fwreset = tools.find_optional(params["fwreset_path"], tools.FWRESET_CANDIDATES, find)

    runner = module_runner(module)

    try:
        requests = requests_from_inventory(params["ports"])
        result = configure_ports(
            params["device"],
            requests,
            runner,
            config_tool,
            fwreset,
            params["sysfs_root"],
            check_mode=module.check_mode,
            query_only=params["state"] == "query",
            pins=params["nv_config"],
        )
    except PortConfigError as exc:
        module.fail_json(msg=str(exc), device=params["device"])
    module.exit_json(**result)


if __name__ == "__main__":
    main()
