"""Helpers shared by the emulated tools (cxfab lab emulator)."""

import sys

from .. import EMULATOR_TAG

MSTFLINT_VERSION = "4.26.0"
MFT_VERSION = "4.15.1-9"


def banner(tool: str, version: str) -> str:
    return f"{tool}, {version} ({EMULATOR_TAG}: emulated ConnectX devices, no hardware access)"


def out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def read_answer() -> str:
    """One line from stdin; an empty answer (or no stdin) means no."""
    line = sys.stdin.readline() if not sys.stdin.closed else ""
    return line.strip().lower()
