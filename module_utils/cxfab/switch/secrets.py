"""Keep credentials out of backups, diffs and error messages."""

from __future__ import annotations

import json
import re

# Running-config lines that carry a secret (hashed or not) after a keyword.
_SECRET_LINES = re.compile(
    r"^(\s*(?:no\s+)?(?:username \S+ (?:password|secret)|snmp-server community|"
    r"snmp-server user \S+ \S+ auth \S+|radius-server key|tacacs-server key|"
    r"ldap bind-password|\S.* (?:key|password|secret)))(\s+\S.*)$",
    re.MULTILINE,
)

REDACTED = "<redacted>"


def redact(text: str, secrets=()) -> str:
    """`text` without secret-bearing values and without any of `secrets`."""
    text = _SECRET_LINES.sub(lambda m: f"{m.group(1)} {REDACTED}", text or "")
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


def redact_record(record: dict, secrets) -> dict:
    """The record without any of `secrets` (outputs may echo configuration)."""
    text = json.dumps(record)
    for secret in secrets:
        if secret:
            text = text.replace(json.dumps(secret)[1:-1], REDACTED)
    return json.loads(text)
