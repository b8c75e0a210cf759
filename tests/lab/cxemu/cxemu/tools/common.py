"""Helpers shared by the emulated tools (cxfab lab emulator)."""

import sys

from .. import EMULATOR_TAG
from ..state import DeviceNotFound, Store, Target

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


def confirmed(prompt: str, yes: bool) -> bool:
    """The tool's question answered: --yes says y (echoed, as the real tools do), else stdin."""
    out(prompt)
    if yes:
        out("y\n")
        return True
    return read_answer() in ("y", "yes")


def resolve_or_say(store: Store, device: str, not_found: str) -> Target | None:
    """The device named on the command line, or None after the tool's own not-found line."""
    try:
        return store.resolve(device)
    except DeviceNotFound:
        out(not_found)
        return None
