"""What the switch session may send: single lines of the planner's CLI grammar.

The planner renders each statement as one line, quoting a value that holds a
space. A line with a newline, a carriage return or any other control or
separator character would be two commands to the CLI (or an escape to the
terminal), and an unbalanced quote swallows what follows. The session refuses
such a line whatever produced it - a template, a planted fact or a parser - and
before it sends anything.
"""

from __future__ import annotations

_NAMES = {"\n": "a newline", "\r": "a control character"}


def problem(line: object) -> str | None:
    """Why `line` is not one CLI line, or None."""
    if not isinstance(line, str):
        return f"not a string ({type(line).__name__})"
    if not line.strip():
        return "an empty line"
    for char in line:
        if not char.isprintable():
            return f"it holds {_NAMES.get(char, 'a control character')} ({ord(char):#04x})"
    if line.count('"') % 2:
        return "it holds an unbalanced quote"
    return None


def shown(line: object, limit: int = 80) -> str:
    """`line` for an error message: one line, cut to `limit` characters."""
    text = repr(line)
    return text if len(text) <= limit else text[: limit - 3] + "..."
