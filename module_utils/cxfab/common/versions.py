"""Ordering of dotted version numbers (firmware, switch releases)."""

from __future__ import annotations


def compare_numbers(left: tuple[int, ...], right: tuple[int, ...]) -> int:
    """-1, 0 or 1 as the parsed version `left` is below, equal to or above `right`.

    A missing trailing part counts as 0 (3.6 equals 3.6.0).
    """
    width = max(len(left), len(right))
    a = left + (0,) * (width - len(left))
    b = right + (0,) * (width - len(right))
    return (a > b) - (a < b)
