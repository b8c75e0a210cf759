"""`value | cxfab_flag('<variable>')`: the strict boolean reading of cxfab/flags.py."""

import sys
from pathlib import Path

from ansible.errors import AnsibleFilterError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "module_utils"))

from cxfab.common.flags import FlagError, flag


def cxfab_flag(value, name="a boolean setting"):
    try:
        return flag(value, name)
    except FlagError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    """Strict booleans for safety switches."""

    def filters(self):
        return {"cxfab_flag": cxfab_flag}
