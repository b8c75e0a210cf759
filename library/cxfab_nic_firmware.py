#!/usr/bin/python
"""Ansible module: roll a firmware image out to one ConnectX card, safely."""

from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.cxfab.common.params import dataclass_from_params
from ansible.module_utils.cxfab.host.mlnx import tools
from ansible.module_utils.cxfab.host.mlnx.firmware import (
    FirmwareError,
    FirmwareRequest,
    roll_out,
    toolset_from_params,
)
from ansible.module_utils.cxfab.host.mlnx.runner import module_runner

DOCUMENTATION = r"""
module: cxfab_nic_firmware
short_description: Burn ConnectX firmware only when needed and only when it is the right image
description:
  - Queries the card with C(mstflint q) (or MFT C(flint q), or C(mlxfwmanager --query)).
  - Burns only when the flash does not hold O(version) already; an image burned earlier
    but not yet activated is reported as pending, never burned again.
  - Before burning, checks the image's sha256 on the host, the version inside the image,
    and that the image's PSID equals the card's. A different PSID is refused unless
    O(allow_psid_change) is set, which passes C(-allow_psid_change).
  - Never activates by itself; it reports C(pending_activation) and whether
    C(mstfwreset) can reset the card, for the activation handler.
options:
  device: {description: PCI address of the card (function 0), type: str, required: true}
  version: {description: Target firmware version (required unless O(state=query)), type: str}
  image: {description: Path of the image on the host, type: path}
  src:
    description:
      - Path of the image on the controller (relative to O(src_base_dir)). Handled by the
        action plugin, which queries the card first and ships the image into the task's
        temporary directory on the host only when a burn is needed, after checking its
        sha256 on the controller; the copy is removed afterwards. Sets O(image).
    type: path
  src_base_dir: {description: Directory a relative O(src) is resolved against, type: path}
  error_path:
    description: Inventory key path named in the controller's image errors
    type: str
    default: firmware
  sha256: {description: Expected sha256 of the image, type: str}
  psid: {description: PSID the inventory expects the card (and image) to have, type: str}
  allow_psid_change:
    description: Allow crossflashing to the image's PSID
    type: bool
    default: false
  allow_downgrade:
    description: Allow burning a version lower than the one in flash (refused otherwise)
    type: bool
    default: false
  state:
    description: V(present) rolls out; V(query) only reports.
    type: str
    choices: [present, query]
    default: present
  query_tool:
    description: Which tool queries the card; V(auto) prefers flint.
    type: str
    choices: [auto, flint, mlxfwmanager]
    default: auto
  flint_path: {description: Command name or path of mstflint/flint (default auto), type: str}
  fwmanager_path: {description: Command name or path of mlxfwmanager (default auto), type: str}
  fwreset_path:
    description: Command name or path of mstfwreset/mlxfwreset (default auto)
    type: str
author: cxfab
"""

EXAMPLES = r"""
- name: Roll out ConnectX-4 firmware
  cxfab_nic_firmware:
    device: "0000:17:00.0"
    version: 12.28.1002
    image: /var/lib/cxfab/firmware/fw-ConnectX4-rel-12_28_1002.bin
    sha256: 9f2c4f6be7a1c0d0e3b8b5a2f6d1e4c7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3
    psid: LNV2190110032
"""

RETURN = r"""
psid: {description: The card's PSID (after the burn), returned: success, type: str}
flash_version: {description: Version in flash, returned: success, type: str}
running_version: {description: Version the card runs, returned: success, type: str}
burned: {description: An image was burned in this run, returned: success, type: bool}
would_burn: {description: Check mode found a burn necessary, returned: success, type: bool}
pending_activation:
  description: Flash holds a version the card does not run yet
  returned: success
  type: bool
activation:
  description: For the activation handler, when pending (device, fwreset, fwreset_supported).
  returned: success
  type: dict
image:
  description: Image checks (path, sha256, psid, version)
  returned: when a burn was considered
  type: dict
"""


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "device": {"type": "str", "required": True},
            "version": {"type": "str"},
            "image": {"type": "path"},
            # Consumed by the action plugin (action_plugins/cxfab_nic_firmware.py).
            "src": {"type": "path"},
            "src_base_dir": {"type": "path"},
            "error_path": {"type": "str", "default": "firmware"},
            "sha256": {"type": "str", "no_log": False},
            "psid": {"type": "str"},
            "allow_psid_change": {"type": "bool", "default": False},
            "allow_downgrade": {"type": "bool", "default": False},
            "state": {"type": "str", "choices": ["present", "query"], "default": "present"},
            "query_tool": {
                "type": "str",
                "choices": ["auto", "flint", "mlxfwmanager"],
                "default": "auto",
            },
            "flint_path": {"type": "str"},
            "fwmanager_path": {"type": "str"},
            "fwreset_path": {"type": "str"},
        },
        required_if=[("state", "present", ("version", "image", "sha256"))],
        supports_check_mode=True,
    )
    params = module.params
    if params["src"]:
        module.fail_json(
            msg="src: shipping an image needs the cxfab_nic_firmware action plugin "
            "(action_plugins/ in ansible.cfg), which did not run"
        )
    try:
        toolset = toolset_from_params(params, module.get_bin_path)
    except tools.ToolNotFound as exc:
        module.fail_json(msg=str(exc))

    runner = module_runner(module)

    request = dataclass_from_params(FirmwareRequest, params, query_only=params["state"] == "query")
    try:
        result = roll_out(
            request,
            runner,
            toolset,
            sha256_of=lambda path: module.digest_from_file(path, "sha256"),
            check_mode=module.check_mode,
        )
    except FirmwareError as exc:
        module.fail_json(msg=str(exc), device=params["device"], **exc.state)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
