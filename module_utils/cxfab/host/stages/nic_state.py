"""The NIC reading that opens a host's rollout: firmware and port protocols of every card.

The module cxfab_nic_state runs it; cxfab_host_state runs it with the host's other
stages, in one call. It only reads: check mode changes nothing here.
"""

from __future__ import annotations

from ..mlnx import tools
from ..mlnx.firmware import toolset_from_params
from ..mlnx.nic_state import NicStateError, read_nics
from ..mlnx.runner import module_runner

ARGUMENT_SPEC = {
    "nics": {"type": "list", "elements": "dict", "required": True},
    **tools.CARD_READ_OPTIONS,
}


def run(module) -> dict:
    p = module.params
    find = module.get_bin_path

    runner = module_runner(module)

    # Resolved only when a NIC needs them: a host with no pinned firmware needs no flint.
    def toolset():
        return toolset_from_params(p, find)

    def config_tool():
        return tools.resolve_tool(
            p["config_path"], tools.CONFIG_CANDIDATES, find, "reading ports", "config_path"
        )

    try:
        return read_nics(p["nics"], runner, toolset, config_tool, p["sysfs_root"])
    except (NicStateError, tools.ToolNotFound) as exc:
        module.fail_json(msg=str(exc))
    return {}
