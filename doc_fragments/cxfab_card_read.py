"""The options of a module that reads a ConnectX card (mlnx.tools.CARD_READ_OPTIONS)."""


class ModuleDocFragment:
    # One description for the NIC state read and the activation's read-back.
    DOCUMENTATION = r"""
options:
  query_tool:
    description: Tool that reads the firmware.
    type: str
    choices: [auto, flint, mlxfwmanager]
    default: auto
  flint_path: {description: Command name or path of mstflint/flint (default auto), type: str}
  fwmanager_path: {description: Command name or path of mlxfwmanager (default auto), type: str}
  config_path: {description: Command name or path of mstconfig/mlxconfig (default auto), type: str}
  sysfs_root: {description: Mount point of sysfs, type: path, default: /sys}
"""
