"""The SSH CLI session to one Onyx switch (netmiko `mellanox_mlnxos`).

The only code that talks to a switch. Hardening for what breaks prompt
detection on Onyx (netmiko issues #394, #400, #2483):
  - the prompt changes from `sw [standalone: master] #` to `sw [<domain>: master] #`
    once `mlag-vip` is applied, so prompts are matched on the hostname alone;
  - asynchronous cluster messages may interleave with output: parsers ignore
    lines they do not know, and config output is scanned for `%` errors only.
The password never leaves this object: errors carry the host and the cause.
"""

from __future__ import annotations

import contextlib
import re

ERROR_LINE = re.compile(r"^\s*%\s*(.+)$", re.MULTILINE)


class SessionError(RuntimeError):
    """A switch could not be reached or refused a command."""


class OnyxSession:
    def __init__(self, host: str, port: int, username: str, password: str, timeout: int = 30):
        self.host, self.port = host, int(port)
        self._params = {
            "device_type": "mellanox_mlnxos",
            "host": host,
            "port": int(port),
            "username": username,
            "password": password,
            "timeout": timeout,
            "conn_timeout": timeout,
            "fast_cli": True,
        }
        self.conn = None

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
            from netmiko import ConnectHandler
        except ImportError as exc:  # pragma: no cover - controller dependency
            raise SessionError("the netmiko Python package is missing on the controller") from exc
        try:
            self.conn = ConnectHandler(**self._params)
            self.conn.enable()
            prompt = self.conn.find_prompt()
            # `sw-a [standalone: master] #` -> `sw-a`: stays valid after mlag-vip.
            self.conn.base_prompt = prompt.split()[0].rstrip("#>")
        except Exception as exc:
            raise SessionError(
                f"{self.where}: cannot open the CLI session: {_cause(exc)}"
            ) from None

    def close(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(Exception):
                self.conn.disconnect()
            self.conn = None

    def show(self, command: str) -> str:
        """Output of a show command; raises on a `%` error."""
        try:
            output = self.conn.send_command(
                command, expect_string=rf"{re.escape(self.conn.base_prompt)}.*#", read_timeout=60
            )
        except Exception as exc:
            raise SessionError(f"{self.where}: {command!r} failed: {_cause(exc)}") from None
        first = output.strip().splitlines()[0] if output.strip() else ""
        if first.startswith("%"):
            raise SessionError(f"{self.where}: {command!r}: {first}")
        return output

    def try_show(self, command: str) -> tuple[str | None, str | None]:
        """(output, None) or (None, error message)."""
        try:
            return self.show(command), None
        except SessionError as exc:
            return None, str(exc)

    def configure(self, lines: list[str]) -> str:
        """Send config lines; stop at the first line the switch refuses."""
        try:
            output = self.conn.send_config_set(
                lines, cmd_verify=True, read_timeout=60, error_pattern=r"^\s*%"
            )
        except Exception as exc:
            raise SessionError(f"{self.where}: sending the config failed: {_cause(exc)}") from None
        error = ERROR_LINE.search(output)
        if error:
            raise SessionError(f"{self.where}: the switch refused the config: % {error.group(1)}")
        return output

    def save(self) -> None:
        try:
            output = self.conn.save_config()
        except Exception as exc:
            raise SessionError(f"{self.where}: configuration write failed: {_cause(exc)}") from None
        error = ERROR_LINE.search(output)
        if error:
            raise SessionError(f"{self.where}: configuration write: % {error.group(1)}")


def _cause(exc: Exception) -> str:
    """First line of an exception, without anything that could echo credentials."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:300]
