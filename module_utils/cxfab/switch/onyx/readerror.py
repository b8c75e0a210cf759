"""The one error every Onyx show parser raises when it cannot read an output."""

from __future__ import annotations


class ReadError(ValueError):
    """An output a parser could not read: names the command and shows its first lines."""


def unreadable(command: str, text: str, what: str) -> ReadError:
    lines = [line for line in (text or "").splitlines() if line.strip()][:3]
    shown = " | ".join(lines) if lines else "(empty reply)"
    return ReadError(f"could not read `{command}`: {what}; first lines: {shown[:200]}")
