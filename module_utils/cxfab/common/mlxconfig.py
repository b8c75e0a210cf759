"""The syntax of mlxconfig parameters: the schema checks the inventory with it, and the
host stage checks its module arguments with it again before they reach the tool."""

from __future__ import annotations

import re

# mlxconfig parameter names (`LINK_TYPE_P1`, `NUM_OF_VFS`) and the values `set` takes:
# a decimal or 0x number, or an enumeration label (`True`, `ETH`). Both reach the
# tool's argv as `PARAM=VALUE`, never a shell.
PARAM_NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
PARAM_VALUE_RE = re.compile(r"^[A-Za-z0-9_]{1,32}$")
