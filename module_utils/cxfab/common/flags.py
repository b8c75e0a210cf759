"""One strict reading of a boolean setting (a safety switch above all).

Jinja2's `| bool` turns anything it does not know (`ture`, `flase`, `0n`) into
false with a deprecation warning: a misspelled `cxfab_switch_host_key_checking`
then switched host-key checking off. Here only the spellings YAML and Ansible
agree on are read; anything else is an error naming the variable.
"""

from __future__ import annotations

from typing import Any

TRUE = ("true", "yes", "on", "1", "y", "t")
FALSE = ("false", "no", "off", "0", "n", "f")


class FlagError(ValueError):
    """A boolean setting holds something that is not a boolean."""


def flag(value: Any, name: str) -> bool:
    """`value` of the setting `name` as a bool; FlagError for anything else."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE:
            return True
        if word in FALSE:
            return False
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    raise FlagError(
        f"{name}: {shown} is not a boolean (true/false, yes/no, on/off, 1/0); nothing was run"
    )
