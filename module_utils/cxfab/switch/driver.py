"""The driver seam: what the pair transaction asks of one switch, whatever its OS.

The transaction (transaction.py) gates, snapshots, changes one peer at a time,
waits for health, saves and reverts using only this interface; each switch OS is
a package below it (`onyx/driver.py`) that turns these calls into its own CLI or
API. A driver talks to one switch over one session, opened once per run.

What a driver returns is OS-neutral: a running config as statements (what a
plan and a revert proof compare), the MLAG state the partner gate judges, and
health checks in the shape of common/checks.py with cxfab's check ids.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field


class DriverError(RuntimeError):
    """A read or a line failed: the switch refused it, did not answer or replied unreadably."""


class UntrustedSwitch(DriverError):
    """The switch could not prove who it is (unknown or changed host key): the run stops."""


class ChangeRefused(RuntimeError):
    """cxfab will not make this change; `lines` is what it would have sent (may be empty)."""

    def __init__(self, message: str, lines: list[str] | None = None):
        super().__init__(message)
        self.lines = lines or []


@dataclass
class RunningConfig:
    """A running config read from the switch.

    `text` is the switch's own text (the snapshot); `statements` maps a statement's
    identity to the statement (its `.line` is the CLI line) and `other_lines` are the
    lines the driver does not model: a revert proof compares both.
    """

    text: str
    statements: dict
    other_lines: list[str]
    runs_mlag: bool
    private: object = None  # the driver's own parse of `text`


@dataclass
class Staged:
    """The change a driver would send: `lines` in order, with what it compared."""

    lines: list[str]
    warnings: list[str] = field(default_factory=list)
    before: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    # The driver's own data for commit (the intended config, the scope it compared).
    private: object = None


@dataclass
class HealthReading:
    """One round of this switch's health reads.

    `checks` are its own checks (common/checks.py shape: MLAG, IPL, member bonds,
    gateways, saved state, lossless); `private` is what pair_checks compares across
    the two peers.
    """

    switch: str
    structured: dict
    checks: list[dict]
    private: object = None


class SwitchDriver(ABC):
    """One switch of a pair, reached over one session."""

    # The config sections the driver can reconcile on their own (the play's tags).
    SECTIONS: tuple = ()

    def __init__(self, name: str, structured: dict):
        self.name = name
        self.structured = structured
        self.unreachable: str | None = "not opened"  # why there is no session
        self.release: str | None = None  # the OS release, None when it could not be read
        self.release_error: str | None = None  # why it could not be read
        self.notes: list[str] = []  # what opening noticed and the run should say (warnings)

    # ---------------------------------------------------------------- session
    @abstractmethod
    def open(self, username: str, password: str, known_hosts: str | None, check_host_key: bool):
        """Log in and read the release. An unreachable switch sets `unreachable` (the
        gate reports it); an unproven identity raises UntrustedSwitch."""

    @abstractmethod
    def close(self) -> None: ...

    # ---------------------------------------------------------------- reads
    @abstractmethod
    def read_config(self) -> RunningConfig:
        """The running config; an empty or cut reply raises DriverError, never a blank switch."""

    @abstractmethod
    def mlag_state(self, config: RunningConfig) -> dict:
        """The MLAG this switch sees, for the partner gate:

        {"read_errors": [why a read failed]} when a read failed, else
        {"read_errors": [], "mlag": {"oper", "ipl_up", "system_mac", "mismatched"} or
        the reason it is unreadable (str), "vip": None (no VIP configured),
        {"active_nodes", "states"} or the reason it is unreadable (str)}.
        """

    @abstractmethod
    def unsaved_changes(self) -> bool | None:
        """Does the running config differ from the saved one (None: the switch does not
        say)? Raises DriverError when the answer is unreadable."""

    @abstractmethod
    def health(self) -> HealthReading:
        """This switch's health checks, every read failure a failed check."""

    @abstractmethod
    def pair_checks(self, readings: list[HealthReading]) -> list[dict]:
        """The checks that compare the two peers' readings (same system MAC, one master)."""

    # ---------------------------------------------------------------- changes
    @abstractmethod
    def stage(self, intended: str, sections: tuple, current: RunningConfig) -> Staged:
        """What would be sent to bring `current` to `intended` in `sections` (check mode
        and the diff show it). Raises ChangeRefused for a change cxfab does not make."""

    @abstractmethod
    def commit(self, staged: Staged) -> list[str]:
        """Send the staged lines and read back: returns what still differs (empty: done).
        A refused line raises DriverError naming it; nothing after it is sent."""

    @abstractmethod
    def revert(self, snapshot: RunningConfig) -> tuple[list[str], str | None]:
        """Send what brings the switch back to `snapshot`: (lines, why refused or None).
        The caller proves the result by reading the config again."""

    def device_diff(self, staged: Staged) -> list[str] | None:
        """The switch's own diff of `staged` as lines, made without changing anything (check
        mode with --diff); None: this OS has none. Raises DriverError when it fails."""
        return None

    @abstractmethod
    def save(self) -> None:
        """Make the running config the one the switch boots with."""
