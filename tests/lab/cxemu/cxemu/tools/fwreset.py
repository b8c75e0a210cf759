"""mstfwreset / mlxfwreset (cxfab lab emulator): activate burned firmware and Next Boot config.

``-d <dev> [-y] [--level 3] reset`` makes the flash firmware the running one and Next Boot
configuration the Current one, clearing the pending reset. ConnectX-3 is refused like the
real tool does (it needs a reboot). Level 4 (warm reboot) is refused: the lab never
reboots a guest behind the caller's back.
"""

import argparse

from .. import runtime
from ..pcie import fake_tree
from ..state import Store, device_type
from .common import MSTFLINT_VERSION, banner, confirmed, out, resolve_or_say

LEVELS = (
    (0, 'Driver, PCI link, network link will remain up ("live-Patch")', False),
    (3, "Driver restart and PCI reset", True),
    (4, "Warm Reboot", True),
)
TYPES = (
    (0, "Full chip reset", True),
    (1, "Phy-less reset (keep network port active during reset)", False),
    (2, "NIC only reset (for SoC devices)", False),
)


def _row(number: int, text: str, supported: bool, default: bool, word: str = "supported") -> str:
    state = "Supported" if supported else f"Not {word}"
    return f"{number}: {text:<62}-{state:<14}{'(default)' if default else ''}\n"


def query_text() -> str:
    text = "Reset-levels:\n"
    for number, description, supported in LEVELS:
        text += _row(number, description, supported, number == 3, "Supported")
    text += "\nReset-types (relevant only for reset-levels 3,4):\n"
    for number, description, supported in TYPES:
        text += _row(number, description, supported, number == 0, "Supported")
    text += "\nReset-sync (relevant only for reset-level 3):\n"
    text += _row(0, "Tool is the owner", True, True)
    text += _row(1, "Driver is the owner", False, False)
    return text


def _parser(tool: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        formatter_class=argparse.RawTextHelpFormatter,
        prog=tool,
        description=f"{tool}: load new firmware and configuration ({banner(tool, '1.0.0')}).",
    )
    parser.add_argument("-d", "--device", required=True)
    parser.add_argument("-l", "--level", type=int, choices=(0, 3, 4))
    parser.add_argument("-t", "--type", type=int, choices=(0, 1, 2))
    parser.add_argument("-y", "--yes", action="store_true")
    parser.add_argument("--skip_driver", action="store_true")
    parser.add_argument("-v", "--version", action="version", version=banner(tool, MSTFLINT_VERSION))
    parser.add_argument("command", choices=("q", "query", "r", "reset", "reset_fsm_register"))
    return parser


def _step(label: str) -> None:
    out(f"-I- {label:<40}-Done\n")


def main(argv: list[str], tool: str = "mstfwreset") -> int:
    args = _parser(tool).parse_args(argv)
    with Store(write=True) as store:
        target = resolve_or_say(
            store, args.device, f"-E- Failed to Identify Device: {args.device}.\n"
        )
        if target is None:
            return 1
        card = target.card
        kind = device_type(card)
        if not kind.fwreset_supported:
            out(f"-E- Unsupported Device: {args.device} ({kind.name}).\n")
            return 1
        out("\n")
        if args.command in ("q", "query"):
            out(query_text())
            return 0
        if args.command == "reset_fsm_register":
            out("-I- FSM register was reset successfully.\n")
            return 0
        level = 3 if args.level is None else args.level
        if level == 0:
            out(
                f"-E- Reset-level '{level}' is not supported in the current state of this device.\n"
            )
            return 1
        if level == 4:
            out(
                "-E- Reset-level '4' (warm reboot) is not performed by the cxfab lab emulator; "
                "use reset-level 3.\n"
            )
            return 1
        if args.type not in (None, 0):
            out(
                f"-E- Reset-type '{args.type}' is not supported in the current state "
                "of this device.\n"
            )
            return 1
        minimal = "Minimal" if args.level is None else "Requested"
        out(f"{minimal} reset level for device, {args.device}:\n\n")
        out(f"{level}: Driver restart and PCI reset\n")
        if not confirmed("Continue with reset?[y/N] ", args.yes):
            out("-E- Aborted by user.\n")
            return 1
        if not args.skip_driver:
            _step("Stopping Driver")
        _step("Sending Reset Command To Fw")
        _step("Resetting PCI")
        if not args.skip_driver:
            _step("Starting Driver")
        _step("Restarting MST")
        card["firmware"]["running"] = card["firmware"]["flash"]
        for entry in card["config"].values():
            entry["current"] = entry["next"]
        if fake_tree() is not None:
            # The driver comes back without VFs, the ECN knobs at their start values.
            runtime.publish(card, reset=True)
        store.mark(card)
        out("-I- FW was loaded successfully.\n")
        return 0
