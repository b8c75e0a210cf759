"""The lines of a known-hosts file that Paramiko (under netmiko) can use.

Paramiko reads neither `@cert-authority` nor `@revoked` marker lines: one such
line made it refuse the whole file (InvalidHostKey), so every switch was
"unreachable". Here each line is tried alone: a marker or unreadable line is
left out of a private copy and reported as `<file>:<line>: ...`. An `@revoked`
line stops the session instead: leaving it out would accept a revoked key.
"""

from __future__ import annotations

import os
import tempfile


class RevokedLineError(ValueError):
    """The file holds an @revoked line, which Paramiko cannot honour."""


def usable(path: str) -> tuple[str, list[str]]:
    """(a file Paramiko can load in full, a note per line left out of it)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return path, []  # missing or unreadable: the unknown-key message says so
    try:
        from paramiko.hostkeys import HostKeyEntry
    except ImportError:  # pragma: no cover - netmiko needs paramiko
        return path, []
    kept, notes = [], []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        marker = text.split()[0]
        if marker == "@revoked":
            raise RevokedLineError(
                f"{path}:{number}: @revoked lines are not supported by Paramiko (the SSH "
                "client cxfab uses), so the revocation cannot be honoured; stopping before "
                "any login. Keep the switches' keys in a file of their own and point "
                "cxfab_switch_known_hosts at it"
            )
        if marker.startswith("@"):
            notes.append(
                f"{path}:{number}: {marker} lines are not supported by Paramiko (the SSH "
                "client cxfab uses): ignored; list each switch's own key"
            )
            continue
        try:
            entry = HostKeyEntry.from_line(text, number)
        except Exception as exc:  # paramiko raises InvalidHostKey, ValueError, ...
            entry, reason = None, type(exc).__name__
        else:
            reason = "not a known-hosts entry"
        if entry is None:
            notes.append(f"{path}:{number}: Paramiko cannot read this line ({reason}): ignored")
            continue
        kept.append(text)
    if not notes:
        return path, []
    descriptor, copy = tempfile.mkstemp(prefix="cxfab-known-hosts-")
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write("".join(f"{line}\n" for line in kept))
    return copy, notes
