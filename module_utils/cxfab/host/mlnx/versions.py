"""Firmware version numbers, compared as numbers.

The onyx collection compared versions as strings ("3.10" < "3.6"); a firmware
rollout that did the same would downgrade cards. Every comparison goes through
here instead.
"""

from __future__ import annotations

import re

from ...common.versions import compare_numbers

_VERSION_RE = re.compile(r"^\d+(\.\d+)*$")


class VersionError(ValueError):
    """A string that is not a dotted firmware version."""


def parse_version(text: str) -> tuple[int, ...]:
    """Return '12.28.1002' as (12, 28, 1002); leading zeros do not matter."""
    cleaned = str(text).strip()
    if not _VERSION_RE.match(cleaned):
        raise VersionError(f"not a firmware version (digits separated by dots): {text!r}")
    return tuple(int(part) for part in cleaned.split("."))


def compare_versions(left: str, right: str) -> int:
    """Return -1, 0 or 1 as left is older than, equal to or newer than right."""
    return compare_numbers(parse_version(left), parse_version(right))


def same_version(left: str | None, right: str | None) -> bool:
    """True when both are versions and equal numerically (3.6.0101 == 3.6.101)."""
    if left is None or right is None:
        return False
    return compare_versions(left, right) == 0
