"""Whether a text reads as something, for the checks that only need yes or no."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def reads_as(read: Callable[[str], Any], text: str) -> bool:
    """True when `read(text)` takes the text (raises no ValueError)."""
    try:
        read(text)
    except ValueError:
        return False
    return True
