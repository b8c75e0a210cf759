"""Switch passwords are read as written: never rendered by Jinja2, never retyped by YAML.

Ansible renders every inventory string that holds `{{`, `{%` or `{#`, and YAML 1.1
reads an unquoted `0123` as 83 and `12:30:45` as 45045. For a password either one
silently logs in with another password, or fails with ansible-core printing the
inventory line that holds it. The validator hands each password here before it
renders anything: a plain string (or an `!unsafe` one, or a vaulted value) is
taken as written; a whole-value reference to another variable
(`{{ vault_cxfab_switch_password }}`, optionally with filters) is rendered, and the
variable it names is held to the same rules; anything else is refused with a
message that says how to quote or vault it and shows nothing of the value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

# `{{ name }}` or `{{ name | filter(...) ... }}`: no braces inside the expression.
_REFERENCE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\|[^{}]*)?\}\}")
_MAX_DEPTH = 4
REFUSED = "refused-secret"  # stands in for a refused value so that nothing renders it

TEMPLATED = (
    "<hidden> holds template syntax ({{, {% or {#}) that Ansible would render into "
    "another password: write it as `password: !unsafe '...'` or vault it "
    "(ansible-vault encrypt_string)"
)
RETYPED = (
    "<hidden> is not a string: YAML reads it as {kind} (an unquoted number, time or "
    "yes/no): quote it (`password: '...'`), write it as `!unsafe '...'` or vault it"
)
RENDERED = (
    "<hidden>: the variable it names ({name}) {reason}; write that value as "
    "`!unsafe '...'` (quoted) or vault it"
)


def problem(
    raw: Any, is_template: Callable[[Any], bool], lookup: Callable[[str], Any], depth: int = 0
) -> str | None:
    """Why the raw inventory value `raw` of a password cannot be used as written, or None.

    `is_template(value)`: Ansible would render `value`; `lookup(name)`: the raw value
    of another variable (KeyError when it is not defined)."""
    if isinstance(raw, bool | int | float) or type(raw).__name__ in ("date", "datetime"):
        return RETYPED.format(kind=_kind(raw))
    if not isinstance(raw, str) or not is_template(raw):
        return None  # plain, !unsafe, vaulted (or a type the schema reports)
    match = _REFERENCE.fullmatch(raw.strip())
    if match is None:
        return TEMPLATED
    name = match.group(1)
    try:
        target = lookup(name)
    except KeyError:
        return None  # rendering says it is undefined (or its default applies)
    if depth >= _MAX_DEPTH:
        return RENDERED.format(name=name, reason="refers to variables too deeply")
    inner = problem(target, is_template, lookup, depth + 1)
    if inner is None:
        return None
    reason = "is not a string" if inner.startswith("<hidden> is not") else "holds templates"
    return RENDERED.format(name=name, reason=reason)


def rendered_problem(value: Any) -> str | None:
    """Why a rendered password is unusable (a template that produced a non-string)."""
    if value is None or isinstance(value, str):
        return None
    return RETYPED.format(kind=_kind(value))


def _kind(value: Any) -> str:
    for kind, name in ((bool, "a boolean"), (int, "an integer"), (float, "a float")):
        if isinstance(value, kind):
            return name
    return f"a {type(value).__name__.lower()}"
