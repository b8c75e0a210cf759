"""The servers of a host pair's workload runs, started together and collected together.

Each server runs detached in its own session under a small sh wrapper that writes
its exit status to a file, so it outlives the module call that started it and a
later call can read how it ended. Its output goes to files in a run directory,
with a manifest of the session ids. Every process carries a marker in its
environment naming that directory: only processes with the marker are ever
killed, so a pid reused by something else is left alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time

MARKER = "CXFAB_WORKLOAD_SERVERS"
MANIFEST = "manifest.json"
# Bytes kept of each output (the end: that is where a failure is printed).
OUTPUT_TAIL = 65536
# Seconds a TERM-ed process gets before it is KILL-ed.
KILL_GRACE = 2.0
# Exit status of coreutils `timeout` when the lifetime ran out.
LIFETIME_EXPIRED = 124

# $1 the status file, $2 the lifetime, then the server's argv. `timeout` ends a server
# whose collection never comes (a play stopped between start and collect).
_WRAPPER = (
    'status=$1 lifetime=$2; shift 2; timeout -k 5 "$lifetime" "$@"; '
    'echo $? > "$status.tmp" && mv "$status.tmp" "$status"'
)


def _paths(run_dir: str, index: int) -> dict:
    base = os.path.join(run_dir, str(index))
    return {"out": base + ".out", "err": base + ".err", "status": base + ".rc"}


def _read_manifest(run_dir: str) -> dict | None:
    try:
        with open(os.path.join(run_dir, MANIFEST), encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return None
    except ValueError as exc:
        raise ValueError(f"{run_dir}/{MANIFEST}: not JSON ({exc})") from None


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, session id) of a process, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            stat = handle.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return fields[0], int(fields[3])


def _carries_marker(pid: int, run_dir: str) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environ = handle.read().split(b"\0")
    except OSError:
        return False
    return f"{MARKER}={run_dir}".encode() in environ


def _alive(pid: int) -> bool:
    stat = _proc_stat(pid)
    return stat is not None and stat[0] != "Z"


def session_members(session: int, run_dir: str) -> list[int]:
    """Live processes of a server's session that carry this run directory's marker."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        stat = _proc_stat(int(entry))
        if stat and stat[0] != "Z" and stat[1] == session and _carries_marker(int(entry), run_dir):
            found.append(int(entry))
    return found


def kill_session(session: int, run_dir: str, clock=time.monotonic) -> bool:
    """TERM, then KILL, every marked process of a session; True when any was running.

    The session is read again before each signal: a process forked meanwhile goes too.
    """
    found = False
    for sig in (signal.SIGTERM, signal.SIGKILL, signal.SIGKILL):
        members = session_members(session, run_dir)
        if not members:
            break
        found = True
        for pid in members:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = clock() + KILL_GRACE
        while clock() < deadline and any(_alive(pid) for pid in members):
            time.sleep(0.05)
    return found


def _kill_leftovers(run_dir: str) -> list[int]:
    manifest = _read_manifest(run_dir)
    killed = []
    for entry in (manifest or {}).get("servers", []):
        if entry and kill_session(int(entry["session"]), run_dir):
            killed.append(int(entry["session"]))
    return killed


def start(run_dir: str, servers: list, lifetime: int) -> dict:
    """Spawn every server (an argv, or None for a run without one); returns at once.

    A previous batch's servers still running from the same directory are killed
    first: their ports are the ones this batch listens on.
    """
    run_dir = os.path.abspath(run_dir)
    stale = _kill_leftovers(run_dir) if os.path.isdir(run_dir) else []
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir, mode=0o700)
    env = dict(os.environ, **{MARKER: run_dir})
    entries: list[dict | None] = []
    try:
        for index, argv in enumerate(servers):
            if argv is None:
                entries.append(None)
                continue
            paths = _paths(run_dir, index)
            with open(paths["out"], "wb") as out, open(paths["err"], "wb") as err:
                proc = subprocess.Popen(
                    ["sh", "-c", _WRAPPER, "sh", paths["status"], str(lifetime), *argv],
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    env=env,
                    close_fds=True,
                    start_new_session=True,
                )
            entries.append({"session": proc.pid, "argv": argv})
    finally:
        with open(os.path.join(run_dir, MANIFEST), "w", encoding="utf-8") as handle:
            json.dump({"lifetime": lifetime, "servers": entries}, handle)
    return {"started": [e["session"] if e else None for e in entries], "stale_killed": stale}


def _tail(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - OUTPUT_TAIL))
            return handle.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return ""


def _status(path: str) -> int | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return int(handle.read().strip())
    except (FileNotFoundError, ValueError):
        return None


def _ended(run_dir: str, index: int, session: int) -> bool:
    return _status(_paths(run_dir, index)["status"]) is not None or not _alive(session)


def _outcome(run_dir: str, index: int, killed_why: str, lifetime: int) -> dict:
    paths = _paths(run_dir, index)
    rc = _status(paths["status"])
    if killed_why:
        error = killed_why
    elif rc is None:
        error = "ended without an exit status (killed from outside?)"
    elif rc == LIFETIME_EXPIRED:
        error = f"ran past its lifetime of {lifetime} s and was killed"
    elif rc != 0:
        error = f"non-zero return code {rc}"
    else:
        error = ""
    return {
        "rc": rc,
        "stdout": _tail(paths["out"]),
        "stderr": _tail(paths["err"]),
        "killed": bool(killed_why),
        "error": error,
    }


def collect(run_dir: str, wait_for: list, timeout: float, clock=time.monotonic) -> list:
    """How every server of the batch ended (None for runs without one).

    The servers in wait_for (run indexes) get up to `timeout` seconds to exit; the
    others (their client got no reading, so no client will end them) and any still
    running at the deadline are killed. The run directory is removed.
    """
    run_dir = os.path.abspath(run_dir)
    manifest = _read_manifest(run_dir)
    if manifest is None:
        raise ValueError(f"{run_dir}: no {MANIFEST}: the servers were not started here")
    servers = manifest["servers"]
    unknown = [i for i in wait_for if not 0 <= i < len(servers) or servers[i] is None]
    if unknown:
        raise ValueError(f"wait_for: {unknown} name no started server (of {len(servers)} runs)")
    waited = set(wait_for)
    killed_why = {}
    unwaited = [i for i, entry in enumerate(servers) if entry and i not in waited]
    for index in unwaited:
        running = not _ended(run_dir, index, servers[index]["session"])
        if running and kill_session(servers[index]["session"], run_dir):
            killed_why[index] = "still running without a client: killed"
    deadline = clock() + timeout
    pending = [i for i in sorted(waited) if not _ended(run_dir, i, servers[i]["session"])]
    while pending and clock() < deadline:
        time.sleep(0.1)
        pending = [i for i in pending if not _ended(run_dir, i, servers[i]["session"])]
    for index in pending:
        kill_session(servers[index]["session"], run_dir)
        killed_why[index] = f"still running {timeout:g} s after its client finished: killed"
    results = [
        _outcome(run_dir, index, killed_why.get(index, ""), manifest["lifetime"]) if entry else None
        for index, entry in enumerate(servers)
    ]
    shutil.rmtree(run_dir, ignore_errors=True)
    return results
