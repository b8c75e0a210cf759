"""The SSH CLI session to one Onyx switch (netmiko `mellanox_mlnxos`).

The only code that talks to a switch. One session per switch per run: the
Onyx driver opens it once and reads, sends, checks and saves through it.

Hardening for what breaks reads on Onyx (netmiko issues #394, #400, #2483):
  - the prompt changes from `sw [standalone: master] #` to `sw [<domain>: master] #`
    once `mlag-vip` is applied, so prompts are matched on the hostname alone;
  - asynchronous cluster messages (ASYNC_MESSAGE) may land anywhere in an
    output: they are removed and kept in `async_messages`;
  - a `%` error is looked for on every line of an output, not only the first.
Host keys are checked by default: the switch's key must be in `known_hosts`
(an operator-owned file, the operator's own ~/.ssh/known_hosts unless told) and
match; an unknown or changed key stops the session before anything is sent,
and the message says how to add the key. `check_host_key=False` is the explicit,
unsafe opt-out (any key is accepted: a man in the middle gets the password).
The password never leaves this object: errors carry the host and the cause.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re

from ..driver import DriverError
from ..login import DEFAULT_KNOWN_HOSTS
from . import known_hosts as known_hosts_file
from .lines import problem, shown

ERROR_LINE = re.compile(r"^\s*(%.*)$", re.MULTILINE)
# Unsolicited messages Onyx prints between or inside command outputs.
ASYNC_MESSAGE = re.compile(
    r"^\s*(?:other state: \S+|Active HA nodes: \d+|(?:Broadcast|System) message from .*)\s*$",
    re.IGNORECASE,
)


# An Onyx prompt at the end of what the switch sent: `sw1 [standalone: master] #` in
# Enable mode (reference.md). The CLI starts in Standard mode (MLNX-OS user manual,
# "Command Line Interface (CLI)"); its `>` ending is netmiko's and the emulator's, no
# NVIDIA page shows it: UNCONFIRMED, hence the fallback below.
LOGIN_PROMPT = r"\S+ \[[^\]]*\] (?:\([^)]*\) )?[>#] ?$"
# How long the first read waits for that prompt before reading as netmiko does.
LOGIN_PROMPT_WAIT_S = 10


@functools.cache
def _connection_class():
    """netmiko's `mellanox_mlnxos` class, told what the prompt after login looks like.

    netmiko 4.8's MLNX-OS class keeps BaseConnection.session_preparation, whose first
    read has no pattern and so waits until the channel has been quiet for 2 s
    (read_channel_timing's last_read): every session opened cost 2.4 s of waiting, the
    most of a deploy that changes nothing (py-spy on cxfab_onyx_deploy, 2026-11-28:
    4.9 s of 7.7 s in two session openings). netmiko's Cisco classes give their first
    read the prompt's pattern instead; this class does the same with Onyx's prompt. A
    switch whose prompt does not match within LOGIN_PROMPT_WAIT_S is read the generic way
    (slower, never refused), and nothing else differs from ConnectHandler's class.
    """
    from netmiko.exceptions import ReadTimeout
    from netmiko.mellanox.mellanox_mlnxos_ssh import MellanoxMlnxosSSH

    class OnyxConnection(MellanoxMlnxosSSH):
        def session_preparation(self) -> None:
            try:
                self.read_until_pattern(pattern=LOGIN_PROMPT, read_timeout=LOGIN_PROMPT_WAIT_S)
            except ReadTimeout:
                self._test_channel_read()
            self.set_base_prompt()
            self.set_terminal_width()
            self.disable_paging()

    return OnyxConnection


class SessionError(DriverError):
    """A switch could not be reached or refused a command."""


class HostKeyError(SessionError):
    """The switch's SSH host key is unknown or changed."""


class RejectedLine(SessionError):
    """The switch refused a config line; `index` is its 0-based position in the batch."""

    def __init__(self, where: str, index: int, line: str, message: str):
        super().__init__(f"{where}: the switch refused line {index + 1} {line!r}: {message}")
        self.index, self.line, self.message = index, line, message


def clean_output(text: str) -> tuple[str, list[str]]:
    """(output without async messages, the async messages found)."""
    kept, found = [], []
    for line in (text or "").splitlines():
        (found if ASYNC_MESSAGE.match(line) else kept).append(line)
    return "\n".join(kept), found


def first_error(text: str) -> str | None:
    """The first `%` error line anywhere in an output."""
    match = ERROR_LINE.search(text or "")
    return match.group(1).strip() if match else None


class OnyxSession:
    def __init__(
        self,
        host: str,
        port: int,
        username: str,
        password: str,
        known_hosts: str | None = DEFAULT_KNOWN_HOSTS,
        timeout: int = 30,
        check_host_key: bool = True,
    ):
        self.host, self.port = host, int(port)
        self.check_host_key = check_host_key
        self.known_hosts = os.path.expanduser(known_hosts) if known_hosts else None
        if check_host_key and not self.known_hosts:
            raise HostKeyError(
                f"{host}:{port}: host keys are checked but no known-hosts file is given "
                "(cxfab_switch_known_hosts)"
            )
        self._params = {
            "device_type": "mellanox_mlnxos",
            "host": host,
            "port": int(port),
            "username": username,
            "password": password,
            "timeout": timeout,
            "conn_timeout": timeout,
            "fast_cli": True,
            # Fixed waits of netmiko scale with this; the CLI answers in milliseconds.
            "global_delay_factor": 0.2,
            "system_host_keys": False,
            "ssh_strict": check_host_key,
            "alt_host_keys": check_host_key,
            "alt_key_file": (self.known_hosts or "") if check_host_key else "",
        }
        self.conn = None
        self.async_messages: list[str] = []
        # Lines of known_hosts Paramiko cannot use, left out (cxfab/onyx/known_hosts.py).
        self.known_hosts_notes: list[str] = []
        self._known_hosts_copy: str | None = None

    @property
    def where(self) -> str:
        return f"{self.host}:{self.port}"

    def __enter__(self) -> OnyxSession:
        self.open()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def open(self) -> None:
        try:
            connection_class = _connection_class()
        except ImportError as exc:  # pragma: no cover - controller dependency
            raise SessionError("the netmiko Python package is missing on the controller") from exc
        if self.check_host_key:
            try:
                usable, self.known_hosts_notes = known_hosts_file.usable(self.known_hosts)
            except known_hosts_file.RevokedLineError as exc:
                raise HostKeyError(f"{self.where}: {exc}") from None
            if usable != self.known_hosts:
                self._known_hosts_copy = self._params["alt_key_file"] = usable
        try:
            self.conn = connection_class(**self._params)
            self.conn.enable()
            prompt = self.conn.find_prompt()
            # `sw-a [standalone: master] #` -> `sw-a`: stays valid after mlag-vip.
            self.conn.base_prompt = prompt.split()[0].rstrip("#>")
        except Exception as exc:
            # netmiko wraps paramiko's host key errors into its own exceptions.
            text = str(exc)
            if "does not match" in text and "Host key" in text:
                raise HostKeyError(
                    f"{self.where}: the SSH host key CHANGED (known hosts: {self.known_hosts}); "
                    "stopping before any line is sent. Check the switch (a replaced switch "
                    "or a man in the middle), then replace its entry in that file"
                ) from None
            if "not found in known_hosts" in text:
                raise HostKeyError(self._unknown_key_message()) from None
            cause = _cause(exc)
            raise SessionError(f"{self.where}: cannot open the CLI session: {cause}") from None

    def _unknown_key_message(self) -> str:
        entry = self.host if self.port == 22 else f"[{self.host}]:{self.port}"
        missing = "" if os.path.exists(self.known_hosts) else " (the file does not exist)"
        return (
            f"{self.where}: the SSH host key is unknown: {entry} is not in "
            f"{self.known_hosts}{missing}; stopping before any line is sent. Add the "
            f"switch's key once you have compared it with the one its console shows, "
            f"e.g. `ssh-keyscan -p {self.port} {self.host} >> {self.known_hosts}`, or "
            "point cxfab_switch_known_hosts at the file that holds it"
            + "".join(f"; {note}" for note in self.known_hosts_notes)
        )

    def close(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(Exception):
                self.conn.disconnect()
            self.conn = None
        if self._known_hosts_copy:
            with contextlib.suppress(OSError):
                os.unlink(self._known_hosts_copy)
            self._known_hosts_copy = None

    @property
    def _prompt(self) -> str:
        return rf"{re.escape(self.conn.base_prompt)} \[[^\]]*\] (?:\([^)]*\) )?#"

    def show(self, command: str) -> str:
        """Output of a show command, async messages removed; raises on a `%` error anywhere."""
        self._refuse_outside_grammar([command])
        try:
            raw = self.conn.send_command(command, expect_string=self._prompt, read_timeout=60)
        except Exception as exc:
            raise SessionError(f"{self.where}: {command!r} failed: {_cause(exc)}") from None
        output, found = clean_output(raw)
        self.async_messages += found
        error = first_error(output)
        if error:
            raise SessionError(f"{self.where}: {command!r}: {error}")
        return output

    def try_show(self, command: str) -> tuple[str | None, str | None]:
        """(output, None) or (None, error message)."""
        try:
            return self.show(command), None
        except SessionError as exc:
            return None, str(exc)

    def configure(self, lines: list[str]) -> int:
        """Send config lines one by one; stop at the first refused line (RejectedLine).

        Returns the number of lines sent. A line outside the CLI grammar (cxfab/onyx/lines.py)
        stops the batch before config mode is entered.
        """
        self._refuse_outside_grammar(lines)
        try:
            self.conn.config_mode()
        except Exception as exc:
            raise SessionError(f"{self.where}: cannot enter config mode: {_cause(exc)}") from None
        try:
            for index, line in enumerate(lines):
                try:
                    raw = self.conn.send_command(
                        line, expect_string=self._prompt, read_timeout=60, cmd_verify=True
                    )
                except Exception as exc:
                    raise SessionError(
                        f"{self.where}: sending {line!r} failed: {_cause(exc)}"
                    ) from None
                output, found = clean_output(raw)
                self.async_messages += found
                error = first_error(output)
                if error:
                    raise RejectedLine(self.where, index, line, error)
            return len(lines)
        finally:
            with contextlib.suppress(Exception):
                self.conn.exit_config_mode()

    def _refuse_outside_grammar(self, lines: list[str]) -> None:
        for index, line in enumerate(lines):
            reason = problem(line)
            if reason:
                raise SessionError(
                    f"{self.where}: refusing to send line {index + 1} {shown(line)}: {reason}; "
                    "nothing was sent"
                )

    def save(self) -> None:
        try:
            output = self.conn.save_config()
        except Exception as exc:
            raise SessionError(f"{self.where}: configuration write failed: {_cause(exc)}") from None
        error = first_error(clean_output(output)[0])
        if error:
            raise SessionError(f"{self.where}: configuration write: {error}")


def _cause(exc: Exception) -> str:
    """First line of an exception, without anything that could echo credentials."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:300]
