"""One interactive CLI session: modes, prompts and command dispatch.

Modes as on a real switch: `>` (user), `#` (enable), `(config) #` and the
sub-modes `(config interface vlan 10) #`, `(config mlag) #`, `(config interface
vlan 10 magp 10) #`. In a sub-mode a line is first read relative to the
sub-mode, then as a global config command. There is no `end`: config mode is
left with repeated `exit` (netmiko's mellanox_mlnxos driver relies on that).
"""

from __future__ import annotations

import logging
import re

from . import shows
from .objects import CliError, Unrecognized
from .switch import Switch

PIPE_RE = re.compile(r"\s+\|\s*")
LOG = logging.getLogger("onyx")


def _is_configure_terminal(words: list[str]) -> bool:
    return (
        len(words) == 2
        and len(words[0]) >= 4
        and "configure".startswith(words[0])
        and "terminal".startswith(words[1])
    )


class Session:
    def __init__(self, switch: Switch):
        self.switch = switch
        self.mode = "user"  # user | enable | config
        self.stack: list[str] = []
        self.paging = True
        self.closed = False

    # ------------------------------------------------------------------ prompt
    def prompt(self) -> str:
        base = f"{self.switch.cfg.hostname} [{self.switch.prompt_label()}] "
        if self.mode == "user":
            return base + "> "
        if self.mode == "enable":
            return base + "# "
        inner = f"config {self.stack[-1]}" if self.stack else "config"
        return base + f"({inner}) # "

    # ------------------------------------------------------------------ dispatch
    def handle(self, line: str) -> str:
        """Run one line; return its output (without the next prompt)."""
        line = line.strip()
        if not line:
            return ""
        try:
            return self._handle(line)
        except CliError as exc:
            return str(exc)

    def _handle(self, line: str) -> str:
        parts = PIPE_RE.split(line)
        words = parts[0].split()
        if words == ["exit"]:
            return self._exit()
        if words in (
            ["no", "cli", "session", "paging", "enable"],
            ["cli", "session", "paging", "enable"],
        ):
            self.paging = words[0] != "no"
            return ""
        if words[0] == "show":
            return self._show(words[1:], parts[1:])
        if self.mode == "user":
            if words == ["enable"]:
                self.mode = "enable"
                return ""
            raise Unrecognized(words[0])
        if words == ["enable"]:
            return ""
        if words in (["configuration", "write"], ["write", "memory"]):
            self.switch.write()
            return ""
        if self.mode == "enable":
            if words == ["disable"]:
                self.mode = "user"
                return ""
            if _is_configure_terminal(words):
                self.mode, self.stack = "config", []
                return ""
            raise Unrecognized(words[0])
        if _is_configure_terminal(words):
            return ""
        return self._config(parts[0])

    def _exit(self) -> str:
        if self.mode == "config":
            if self.stack:
                self.stack.pop()
            else:
                self.mode = "enable"
            return ""
        self.closed = True
        return ""

    def _config(self, line: str) -> str:
        if " ".join(line.split()) in self.switch.rejected_lines:
            raise CliError(f"% Command refused by the switch (lab fault): {line}")
        negate = line.startswith("no ")
        body = line[3:] if negate else line
        attempts = []
        if self.stack:
            attempts.append(("no " if negate else "") + f"{self.stack[-1]} {body}")
        attempts.append(line)
        first_error: Unrecognized | None = None
        for attempt in attempts:
            try:
                with self.switch.lock:
                    entered = self.switch.cfg.apply(attempt)
            except Unrecognized as exc:
                first_error = first_error or exc
                continue
            # Onyx's system log records every command a CLI user runs; the lab's
            # switch log does the same for config lines, so tests can see them land.
            LOG.info("%s: Executing command: %s", self.switch.cfg.hostname, line)
            if entered:
                if " magp " in entered or " vrrp " in entered:
                    self.stack = [" ".join(entered.split()[:3]), entered]
                else:
                    self.stack = [entered]
            return ""
        assert first_error is not None
        raise first_error

    def _show(self, words: list[str], pipes: list[str]) -> str:
        if not words:
            raise CliError("% Incomplete command.")
        json_print = False
        filters: list[tuple[str, str]] = []
        for pipe in pipes:
            kind, _, arg = pipe.partition(" ")
            if kind == "json-print":
                json_print = True
            elif kind in ("include", "exclude") and arg:
                filters.append((kind, arg.strip().strip('"')))
            else:
                raise Unrecognized(kind, "keyword")
        privileged = words[0] in ("running-config", "configuration")
        if privileged and self.mode == "user":
            raise Unrecognized(words[0], "keyword")
        text = shows.dispatch(self.switch, words, json_print)
        for kind, pattern in filters:
            keep = kind == "include"
            text = "\n".join(x for x in text.splitlines() if (pattern in x) == keep)
        return text
