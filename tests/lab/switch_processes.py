"""What both emulated switch pairs (tests/lab/onyx/pair.py, tests/lab/nvue/pair.py) do
with their processes: the run directory's layout (pair.json), a switch's pid file,
whether a port is free as the switches bind it, stopping a switch's process group,
and the status lines of their CLIs.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.lab.onyx.dataplane import DataplaneError
from tests.lab.onyx.dataplane_agent import go_dark


class PairError(Exception):
    pass


def read_layout(run_dir: Path) -> dict:
    path = run_dir / "pair.json"
    if not path.exists():
        raise PairError(f"{path}: no pair was started in this run directory")
    return json.loads(path.read_text(encoding="utf-8"))


def pid_of(run_dir: Path, name: str) -> int | None:
    path = run_dir / f"{name}.pid"
    if not path.exists():
        return None
    pid = int(path.read_text().strip())
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    return pid


def port_free(port: int, kind: int = socket.SOCK_STREAM) -> bool:
    """Whether the switches could bind the port as they do (TCP with SO_REUSEADDR, so
    the last lab's connections still in TIME_WAIT do not count; a listener does)."""
    with socket.socket(socket.AF_INET, kind) as sock:
        if kind == socket.SOCK_STREAM:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def terminate(run_dir: Path, name: str, sig: int = signal.SIGTERM) -> None:
    pid = pid_of(run_dir, name)
    if pid is not None:
        os.killpg(pid, sig)
        deadline = time.monotonic() + 5.0
        while pid_of(run_dir, name) is not None and time.monotonic() < deadline:
            reap(pid)
            time.sleep(0.05)
        if pid_of(run_dir, name) is not None:
            os.killpg(pid, signal.SIGKILL)
            while pid_of(run_dir, name) is not None:
                reap(pid)
                time.sleep(0.05)
    (run_dir / f"{name}.pid").unlink(missing_ok=True)


def reap(pid: int) -> None:
    """Collect the exit status when this process is the parent (fixtures start it)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def kill(run_dir: Path, layout: dict, name: str) -> None:
    """`ctl <switch> kill`: the switch's processes SIGKILLed and, with a dataplane twin,
    its namespace's ports dark (a dead switch forwards nothing)."""
    terminate(run_dir, name, signal.SIGKILL)
    if layout.get("dataplane"):
        spec = json.loads(Path(layout["dataplane"]).read_text(encoding="utf-8"))
        try:
            go_dark(spec, name)
        except (DataplaneError, OSError, subprocess.SubprocessError) as exc:
            raise PairError(f"ctl: {name} killed, but it may still forward: {exc}") from exc


def print_status(rows: list[dict]) -> int:
    """One line per switch; exit status 0 when both run, 3 otherwise (both pairs' CLI)."""
    for row in rows:
        state = "running" if row["running"] else "stopped"
        print(f"{row['name']} 127.0.0.1:{row['port']} {state} pid={row['pid'] or '-'}")
    return 0 if all(r["running"] for r in rows) else 3


def run_verb(args, start, stop, status, ctl, **more) -> int:
    """One verb of a pair's CLI (args.action): `start(args)` (the pair's own), stop,
    status (exit 3 unless both run), ctl, or one of `more` (name -> callable(args)).
    A PairError is printed as the error it is, exit status 2."""
    try:
        if args.action == "start":
            start(args)
        elif args.action == "stop":
            stop(args.run_dir)
        elif args.action == "status":
            return print_status(status(args.run_dir))
        elif args.action == "ctl":
            print(ctl(args.run_dir, args.switch, args.request))
        else:
            more[args.action](args)
    except PairError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
