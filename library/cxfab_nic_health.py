#!/usr/bin/python
"""Ansible module: one snapshot of the link, cable and card health of a host's ConnectX NICs."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_nic_health
short_description: Read the link, cable and card health of the ConnectX NICs of a host
description:
  - Read-only, one call per host. Per adapter - PCIe link speed and width current
    vs capable (sysfs), ASIC temperature (hwmon, or C(mget_temp)), every
    mlxconfig parameter the intent pins (C(LINK_TYPE_P<n>) from the ports, plus
    C(nv_config)) with its Current and Next Boot values.
  - Per port - C(mlxlink -d <function> -m -c) (MFT) or C(mstlink) (mstflint) state,
    speed, FEC, troubleshooting opcode and recommendation, BER and counters, the
    cable (Module Info, else C(mlxcables)), C(carrier_changes) and the
    C(ethtool -S) error, discard, pause and link-down counters.
  - O(phase=start) reads only the counters (cheap), O(phase=end) everything; the
    verify checks compare the two snapshots to name a link that flapped.
  - A tool that is not installed is reported per item, never guessed; a read that
    fails carries the command and its output.
version_added: "0.2.0"
options:
  nics:
    description: The host's C(cxfab_host.nics) (name, pci, ports with port and netdev).
    type: list
    elements: dict
    required: true
  phase:
    description: C(start) (counters only) or C(end) (everything).
    type: str
    choices: [start, end]
    default: end
  link_path:
    description: mlxlink or mstlink to use (name or path); default the first found.
    type: str
  cables_path:
    description: mlxcables to use; default C(mlxcables) when installed.
    type: str
  config_path:
    description: mstconfig or mlxconfig to use; default the first found.
    type: str
  ethtool_path:
    description: ethtool to use; default C(ethtool) when installed.
    type: str
  temp_path:
    description: mget_temp to use; default C(mget_temp) when installed.
    type: str
  root:
    description: Prefix of C(/sys) (tests point it at a copied tree).
    type: path
    default: /
author: cxfab
"""

EXAMPLES = r"""
- name: Snapshot the counters before verify runs its workloads
  cxfab_nic_health:
    nics: "{{ cxfab_fabric.hosts[inventory_hostname].nics }}"
    phase: start
  register: health_start
"""

RETURN = r"""
health:
  description: "{phase, tools, nics: {<name>: {pci, pcie, temperature, config, ports: {<n>: ...}}}}"
  type: dict
  returned: success
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.host.mlnx.health import (  # noqa: E402
    HealthInputError,
    HealthReader,
    find_tools,
    gather,
)
from ansible.module_utils.cxfab.host.mlnx.runner import module_runner  # noqa: E402

_OPTIONS = {
    "link": "link_path",
    "cables": "cables_path",
    "config": "config_path",
    "ethtool": "ethtool_path",
    "temp": "temp_path",
}


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "nics": {"type": "list", "elements": "dict", "required": True},
            "phase": {"type": "str", "choices": ["start", "end"], "default": "end"},
            "link_path": {"type": "str"},
            "cables_path": {"type": "str"},
            "config_path": {"type": "str"},
            "ethtool_path": {"type": "str"},
            "temp_path": {"type": "str"},
            "root": {"type": "path", "default": "/"},
        },
        supports_check_mode=True,
    )
    params = module.params
    configured = {role: params[option] for role, option in _OPTIONS.items()}
    found = find_tools(module.get_bin_path, configured)
    for role, option in _OPTIONS.items():
        if configured[role] and not found[role]:
            module.fail_json(msg=f"{option}: {configured[role]!r} is not an executable or in PATH")

    runner = module_runner(module)

    try:
        health = gather(
            params["nics"], params["phase"], HealthReader(runner, found, params["root"])
        )
    except HealthInputError as exc:
        module.fail_json(msg=str(exc))
    health["tools"] = found
    module.exit_json(changed=False, health=health)


if __name__ == "__main__":
    main()
