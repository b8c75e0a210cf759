"""Which ConnectX tool to call, and the argument lists to call it with.

Two tool sets exist: the open-source mstflint package (`mstflint`,
`mstconfig`, `mstfwreset`) and NVIDIA's MFT (`flint`, `mlxfwmanager`,
`mlxconfig`, `mlxfwreset`). The options used here are common to both. A
configured value may be a command name (looked up in PATH) or a path.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

# Preference order when nothing is configured.
FLINT_CANDIDATES = ("mstflint", "flint")
FWMANAGER_CANDIDATES = ("mlxfwmanager",)
CONFIG_CANDIDATES = ("mstconfig", "mlxconfig")

# The argument spec of a module that reads a card (firmware and port protocols): the
# NIC state read and the activation's read-back take the same tools the same way.
CARD_READ_OPTIONS = {
    "query_tool": {"type": "str", "choices": ["auto", "flint", "mlxfwmanager"], "default": "auto"},
    "flint_path": {"type": "str"},
    "fwmanager_path": {"type": "str"},
    "config_path": {"type": "str"},
    "sysfs_root": {"type": "path", "default": "/sys"},
}
FWRESET_CANDIDATES = ("mstfwreset", "mlxfwreset")


class ToolNotFound(LookupError):
    """None of the candidate tools is installed."""


def resolve_tool(
    configured: str | None,
    candidates: Sequence[str],
    find: Callable[[str], str | None],
    purpose: str,
    option: str,
) -> str:
    """Return the absolute path of the tool to use.

    `find` looks a command name up in PATH (AnsibleModule.get_bin_path).
    `option` names the module option, for the error message.
    """
    if configured:
        if os.sep in configured:
            if os.path.isfile(configured) and os.access(configured, os.X_OK):
                return configured
            raise ToolNotFound(f"{option}: {configured} is not an executable file ({purpose})")
        found = find(configured)
        if not found:
            raise ToolNotFound(f"{option}: command {configured!r} not found in PATH ({purpose})")
        return found
    for name in candidates:
        found = find(name)
        if found:
            return found
    raise ToolNotFound(
        f"no tool for {purpose}: install mstflint or NVIDIA MFT "
        f"(looked for {', '.join(candidates)}), or set {option}"
    )


def find_optional(
    configured: str | None, candidates: Sequence[str], find: Callable[[str], str | None]
) -> str | None:
    """Like resolve_tool but None when nothing is installed."""
    names = [configured] if configured else list(candidates)
    for name in names:
        if os.sep in name:
            if os.path.isfile(name) and os.access(name, os.X_OK):
                return name
            continue
        found = find(name)
        if found:
            return found
    return None


def flavour(path: str) -> str:
    """'flint', 'fwmanager', 'config' or 'fwreset' from the tool's file name."""
    name = os.path.basename(path)
    if name in FLINT_CANDIDATES:
        return "flint"
    if name in FWMANAGER_CANDIDATES:
        return "fwmanager"
    if name in CONFIG_CANDIDATES:
        return "config"
    if name in FWRESET_CANDIDATES:
        return "fwreset"
    return "unknown"


# ---------------------------------------------------------------- argument lists
def flint_query(flint: str, device: str) -> list[str]:
    return [flint, "-d", device, "q"]


def flint_image_query(flint: str, image: str) -> list[str]:
    return [flint, "-i", image, "q"]


def flint_burn(flint: str, device: str, image: str, allow_psid_change: bool) -> list[str]:
    argv = [flint, "-d", device, "-i", image]
    if allow_psid_change:
        argv.append("-allow_psid_change")
    return [*argv, "-y", "burn"]


def fwmanager_query(fwmanager: str, device: str, xml: bool) -> list[str]:
    argv = [fwmanager, "-d", device, "--query"]
    return [*argv, "--query-format", "XML"] if xml else argv


def fwmanager_image_query(fwmanager: str, device: str, image: str) -> list[str]:
    return [fwmanager, "-d", device, "-i", image, "--query"]


def fwmanager_burn(fwmanager: str, device: str, image: str, force: bool) -> list[str]:
    """`-u -y` burns only an image newer than the flash; anything else is reported
    `Up to date` and left alone, with exit status 0. `-f` (`--force`) makes the
    manager burn an image that is not newer: the caller passes it for a downgrade
    it has already allowed, never to hide a version mismatch."""
    argv = [fwmanager, "-d", device, "-i", image, "-u", "-y"]
    return [*argv, "-f"] if force else argv


def config_query(config: str, device: str, params: Sequence[str]) -> list[str]:
    return [config, "-d", device, "-e", "q", *params]


def config_set(config: str, device: str, assignments: Sequence[str]) -> list[str]:
    return [config, "-d", device, "-y", "set", *assignments]


def fwreset_query(fwreset: str, device: str) -> list[str]:
    return [fwreset, "-d", device, "q"]


def fwreset_reset(fwreset: str, device: str) -> list[str]:
    return [fwreset, "-d", device, "-y", "reset"]
