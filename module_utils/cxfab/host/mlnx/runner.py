"""The one way the logic talks to the host: run an argument list.

The modules pass AnsibleModule.run_command; the unit tests pass a replay of
recorded tool output. No shell is ever involved.
"""

from __future__ import annotations

from collections.abc import Callable

from . import tools

# argv -> (rc, stdout, stderr)
Runner = Callable[[list[str]], tuple[int, str, str]]


class ToolFailed(RuntimeError):
    """A tool exited non-zero; the message carries the command and its output."""

    def __init__(self, argv: list[str], rc: int, out: str, err: str):
        detail = (err.strip() or out.strip() or "no output").splitlines()
        super().__init__(f"`{' '.join(argv)}` failed (rc={rc}): {' | '.join(detail[-5:])}")
        self.argv, self.rc, self.out, self.err = argv, rc, out, err


def module_runner(module) -> Runner:
    """The Runner of an AnsibleModule: argument lists only, in the C locale (parsers
    read the tools' English output)."""

    def run(argv: list[str]) -> tuple[int, str, str]:
        return module.run_command(argv, environ_update={"LC_ALL": "C"})

    return run


def run_checked(runner: Runner, argv: list[str]) -> str:
    rc, out, err = runner(argv)
    if rc != 0:
        raise ToolFailed(argv, rc, out, err)
    return out


def probe_fwreset(runner: Runner, fwreset: str | None, device: str) -> bool:
    """True when the reset tool can reset this device live (ConnectX-3 cannot)."""
    if not fwreset:
        return False
    rc, _out, _err = runner(tools.fwreset_query(fwreset, device))
    return rc == 0


def activation_info(runner: Runner, fwreset: str | None, device: str) -> dict:
    """What the activation handler needs to know about this device."""
    return {
        "device": device,
        "fwreset": fwreset or "",
        "fwreset_supported": probe_fwreset(runner, fwreset, device),
    }
