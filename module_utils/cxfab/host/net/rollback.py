"""Revert timer for host_network, like `netplan try`.

Before a change the module records the links it can alter and cxfab's networkd
files (`arm`), and starts a watchdog: a transient systemd timer where systemd is
the init, else a detached process (its own session) running this file from the
copy installed under the record's directory. Unless the controller confirms over
a fresh connection (`disarm`) before the deadline, the watchdog restores the
links and files (`fire`) and leaves a result the controller reads once the host
answers again.

Files in the record directory (root only, 0700/0600): `armed.json` (the pending
snapshot), `result.json` (the last outcome), `lib/` (this package), `watchdog.py`.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time

ROLLBACK_DIR = "/run/cxfab/network-rollback"
ARMED = "armed.json"
RESULT = "result.json"
LAUNCHER = "watchdog.py"
UNIT_PREFIX = "cxfab-network-rollback-"
# Package files the watchdog imports, relative to <record dir>/lib.
PACKAGE_FILES = (
    "cxfab/__init__.py",
    "cxfab/host/__init__.py",
    "cxfab/host/net/__init__.py",
    "cxfab/host/net/bonding.py",
    "cxfab/host/net/ipoib.py",
    "cxfab/host/net/linkplan.py",
    "cxfab/host/net/restore.py",
    "cxfab/host/net/netlink.py",
    "cxfab/host/net/pyroute2_lean.py",
    "cxfab/host/net/rollback.py",
)

_LAUNCHER_TEXT = """#!/usr/bin/python3
# Installed by cxfab host_network: restores the network unless the change is confirmed.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from cxfab.host.net.rollback import main

sys.exit(main())
"""


class RollbackError(RuntimeError):
    """The record cannot be read, armed or confirmed; the message says why."""


def systemd_is_init(root: str = "/") -> bool:
    """sd_booted(3) - /run/systemd/system is a directory - and PID 1 is systemd.

    The directory alone misleads on a host systemd did not boot once netplan has run:
    `netplan generate` creates /run/systemd/system (its generator's service and .wants
    links) wherever it runs, e.g. in the lab's guests (virtme-ng's init).
    """
    if not os.path.isdir(os.path.join(root, "run/systemd/system")):
        return False
    try:
        with open(os.path.join(root, "proc/1/comm"), encoding="utf-8") as handle:
            return handle.read().strip() == "systemd"
    except OSError:  # /proc/1 hidden (hidepid): sd_booted's answer stands
        return True


# ---------------------------------------------------------------- files
def _write(path: str, data: bytes, mode: int) -> None:
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    temporary = f"{path}.cxfab-new"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(temporary, mode)
    os.replace(temporary, path)


def _read_json(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise RollbackError(f"{path} cannot be read: {exc}") from exc


def _write_json(path: str, data: dict) -> None:
    _write(path, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode(), 0o600)


def snapshot_files(directory: str, prefix: str, names) -> dict:
    """Every `prefix*` file of `directory` plus `names`: bytes (base64) and mode, or None."""
    present = set()
    if os.path.isdir(directory):
        present = {n for n in os.listdir(directory) if n.startswith(prefix)}
    return {name: _saved(os.path.join(directory, name)) for name in sorted(present | set(names))}


def snapshot_paths(paths) -> dict:
    """The same snapshot keyed by absolute path (the netplan backend's files live in two
    directories; restore_files' join leaves an absolute key as it is)."""
    return {path: _saved(path) for path in sorted(paths)}


def _saved(path: str) -> dict | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        return None
    return {"data": base64.b64encode(data).decode("ascii"), "mode": mode}


def restore_files(directory: str, files: dict) -> list[str]:
    """Put each file back byte for byte (None: remove it). Returns what was done."""
    done = []
    for name, saved in sorted(files.items()):
        path = os.path.join(directory, name)
        if saved is None:
            if os.path.lexists(path):
                os.unlink(path)
                done.append(f"removed {path}")
            continue
        data = base64.b64decode(saved["data"])
        try:
            with open(path, "rb") as handle:
                if handle.read() == data and os.stat(path).st_mode & 0o7777 == saved["mode"]:
                    continue
        except FileNotFoundError:
            pass
        _write(path, data, saved["mode"])
        done.append(f"wrote {path}")
    return done


@contextlib.contextmanager
def _locked(directory: str):
    os.makedirs(directory, mode=0o700, exist_ok=True)
    os.chmod(directory, 0o700)
    fd = os.open(os.path.join(directory, "lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


# ---------------------------------------------------------------- arming
def install(directory: str, sources: dict[str, str]) -> str:
    """Put the watchdog's package and launcher in the record directory; return the launcher."""
    for rel, text in sources.items():
        _write(os.path.join(directory, "lib", rel), text.encode("utf-8"), 0o600)
    launcher = os.path.join(directory, LAUNCHER)
    _write(launcher, _LAUNCHER_TEXT.encode("utf-8"), 0o700)
    return launcher


def arm(
    directory: str,
    snapshot: dict,
    seconds: int,
    sources: dict[str, str],
    python: str = sys.executable,
    systemd: bool | None = None,
    runner=subprocess.run,
    spawner=subprocess.Popen,
    clock=time.time,
) -> dict:
    """Record `snapshot` (`links`, `files`, `networkd_dir`; `ipoib` and `root` where IPoIB
    interfaces change) and start the watchdog.

    A record still armed by an unconfirmed earlier change keeps its entries: they
    hold the state before that change, the last one anybody confirmed. Returns the
    public part of the record (token, deadline, method).
    """
    if seconds <= 0:
        raise RollbackError(f"revert time must be positive, got {seconds}")
    if systemd is None:
        systemd = systemd_is_init()
    launcher = install(directory, sources)
    with _locked(directory):
        earlier = _read_json(os.path.join(directory, ARMED))
        if earlier:
            _stop(earlier, runner)
            for section in ("links", "files", "ipoib"):
                snapshot[section] = {**snapshot.get(section, {}), **earlier.get(section, {})}
        token = secrets.token_hex(8)
        record = {
            **snapshot,
            "token": token,
            "seconds": seconds,
            "deadline": clock() + seconds,
            "reload_networkd": systemd,
        }
        argv = [python, launcher, "--dir", directory, "--token", token]
        if systemd:
            unit = UNIT_PREFIX + token
            result = runner(
                [
                    "systemd-run",
                    f"--unit={unit}",
                    f"--on-active={seconds}s",
                    "--timer-property=AccuracySec=1s",
                    "--collect",
                    *argv,
                    "fire",
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            if result.returncode != 0:
                raise RollbackError(
                    f"systemd-run could not arm the revert timer (rc={result.returncode}): "
                    f"{(result.stderr or result.stdout).strip()[:300]}"
                )
            record.update(method="systemd-run", unit=unit)
        else:
            process = spawner(
                [*argv, "wait"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                close_fds=True,
                start_new_session=True,
                cwd="/",
            )
            record.update(method="detached process", pid=process.pid)
        _write_json(os.path.join(directory, ARMED), record)
    return public(record)


def arm_checkpoint(
    directory: str, interfaces, seconds: int, runner=subprocess.run, clock=time.time
) -> dict:
    """The NetworkManager backend's timer: a checkpoint of the existing `interfaces`.

    NetworkManager rolls back by itself when the checkpoint is not destroyed within
    `seconds` (nmcheckpoint), so no watchdog runs; the record only lets `disarm` find the
    checkpoint. A checkpoint still pending from an unconfirmed earlier change is kept and
    given `seconds` more: it holds the state before that change, the last one confirmed.
    """
    from . import nmcheckpoint

    if seconds <= 0:
        raise RollbackError(f"revert time must be positive, got {seconds}")
    with _locked(directory):
        earlier = _read_json(os.path.join(directory, ARMED))
        if earlier and not earlier.get("checkpoint"):
            raise RollbackError(
                f"a revert timer of another backend is pending ({earlier.get('method')}, "
                f"change {earlier['token']}): confirm it first"
            )
        try:
            checkpoint = earlier and earlier["checkpoint"]
            if not (checkpoint and nmcheckpoint.adjust(runner, checkpoint, seconds)):
                paths = nmcheckpoint.devices(runner, interfaces)
                checkpoint = nmcheckpoint.create(runner, paths.values(), seconds)
        except nmcheckpoint.CheckpointError as exc:
            raise RollbackError(f"NetworkManager checkpoint: {exc}") from exc
        record = {
            "token": secrets.token_hex(8),
            "seconds": seconds,
            "deadline": clock() + seconds,
            "method": "networkmanager checkpoint",
            "checkpoint": checkpoint,
        }
        _write_json(os.path.join(directory, ARMED), record)
    return public(record)


def public(record: dict) -> dict:
    keys = ("token", "seconds", "deadline", "method", "unit", "pid", "checkpoint")
    return {"armed": True, **{k: record[k] for k in keys if k in record}}


def _stop(record: dict, runner) -> None:
    """Stop the watchdog of `record` (its timer, or its process if it is still ours)."""
    if record.get("unit"):
        runner(["systemctl", "stop", f"{record['unit']}.timer"], capture_output=True, check=False)
    pid = record.get("pid")
    if pid and _is_watchdog(pid, record["token"]):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)


def _is_watchdog(pid: int, token: str) -> bool:
    """Never signal a recycled pid: the process must carry our token."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return token.encode() in handle.read().split(b"\0")
    except OSError:
        return False


def disarm(directory: str, token: str = "", runner=subprocess.run, clock=time.time) -> dict:
    """Confirm the change of `token` ("" - the pending one): stop the watchdog, drop the snapshot.

    Returns the result record: state `confirmed`, or `reverted` when the watchdog
    (or the module after a failure) already put the network back.
    """
    with _locked(directory):
        armed = _read_json(os.path.join(directory, ARMED))
        if armed and token in ("", armed["token"]):
            _stop(armed, runner)
            result = {"state": "confirmed", "token": armed["token"], "at": clock()}
            if armed.get("checkpoint") and not _keep_checkpoint(armed, runner):
                result = {
                    "state": "reverted",
                    "token": armed["token"],
                    "reason": f"not confirmed within {armed['seconds']} s",
                    "restored": [f"NetworkManager rolled back checkpoint {armed['checkpoint']}"],
                    "errors": [],
                    "deadline": armed["deadline"],
                    "at": clock(),
                }
            _write_json(os.path.join(directory, RESULT), result)
            os.unlink(os.path.join(directory, ARMED))
            return result
        result = _read_json(os.path.join(directory, RESULT))
        if result and token in ("", result["token"]):
            return result
    raise RollbackError(
        f"no revert timer and no result for change {token or '(any)'} in {directory}: "
        "the host restarted (which clears /run) or another run replaced the record"
    )


def _keep_checkpoint(armed: dict, runner) -> bool:
    """Destroy the record's checkpoint (the change stays); False: NetworkManager rolled back."""
    from . import nmcheckpoint

    try:
        return nmcheckpoint.destroy(runner, armed["checkpoint"])
    except nmcheckpoint.CheckpointError as exc:
        raise RollbackError(f"NetworkManager checkpoint {armed['checkpoint']}: {exc}") from exc


# ---------------------------------------------------------------- on the host
def fire(
    directory: str, token: str, reason: str, restorer=None, clock=time.time, stop=None
) -> dict | None:
    """Restore the snapshot of `token` if it is still armed; return the result (None: not armed).

    `stop` (a runner) also stops the watchdog: the module restoring after a failed change.
    The result keeps the armed `deadline` beside the host-clock times the restore
    `started` and ended (`at`), so a reader can tell the timer kept its word.
    """
    with _locked(directory):
        armed = _read_json(os.path.join(directory, ARMED))
        if not armed or armed["token"] != token:
            return None
        if stop is not None:
            _stop(armed, stop)
        started = clock()
        restored, errors = (restorer or restore)(armed)
        result = {
            "state": "reverted",
            "token": token,
            "reason": reason,
            "restored": restored,
            "errors": errors,
            "deadline": armed["deadline"],
            "started": started,
            "at": clock(),
        }
        _write_json(os.path.join(directory, RESULT), result)
        os.unlink(os.path.join(directory, ARMED))
        return result


def restore(record: dict) -> tuple[list[str], list[str]]:
    """IPoIB modes and MTUs back over sysfs, links over netlink (re-planned until nothing
    is left), then the files."""
    if record.get("checkpoint"):
        from . import nmcheckpoint

        return nmcheckpoint.restore(record)
    from .linkplan import describe
    from .restore import differences, restore_intent, restore_plan

    restored, errors = restore_ipoib(record)
    before = record["links"]
    if before:
        try:
            from .netlink import apply, read_links
            from .pyroute2_lean import load

            iproute, _netlink_error = load()
            with iproute() as ipr:
                for _ in range(3):
                    actions = restore_plan(before, read_links(ipr))
                    if not actions:
                        break
                    restored += [describe(a) for a in actions]
                    apply(ipr, actions, restore_intent(before))
                errors += [f"still differs: {d}" for d in differences(before, read_links(ipr))]
        except Exception as exc:  # the files must be restored whatever happened to the links
            errors.append(f"links: {type(exc).__name__}: {exc}")
    try:
        files = restore_files(record["networkd_dir"], record["files"])
    except OSError as exc:
        files, errors = [], [*errors, f"files: {exc}"]
    restored += files
    if files and record.get("netplan_generate") and shutil.which("netplan"):
        # netplan's networkd files in /run must follow the restored netplan file
        errors += _run_step(["netplan", "generate"])
    if files and record.get("reload_networkd"):
        errors += _run_step(["networkctl", "reload"])
    return restored, errors


def _run_step(argv: list[str]) -> list[str]:
    """Run a command of the restore; [] or the one error it made."""
    try:
        result = subprocess.run(argv, capture_output=True, text=True)
    except OSError as exc:
        return [f"{' '.join(argv)}: {exc}"]
    if result.returncode != 0:
        return [f"{' '.join(argv)}: {(result.stderr or result.stdout).strip()[:200]}"]
    return []


def restore_ipoib(record: dict) -> tuple[list[str], list[str]]:
    """Each IPoIB interface's sysfs mode, then MTU, as the snapshot read them; read back."""
    from .ipoib import apply, plan, read_state, verify
    from .linkplan import describe

    before = record.get("ipoib") or {}
    if not before:
        return [], []
    root = record.get("root", "/")
    wanted = [{"name": name, **state} for name, state in sorted(before.items())]
    try:
        actions = plan(wanted, {name: read_state(root, name) for name in before})
        apply(root, actions)
        verify(root, wanted)
    except Exception as exc:  # the links and files must be restored whatever happens here
        return [], [f"ipoib: {type(exc).__name__}: {exc}"]
    return [describe(action) for action in actions], []


def describe_result(result: dict) -> str:
    """`reverted: <reason>, restored <what>` for the controller's failure message."""
    restored = result.get("restored") or []
    what = "; ".join(restored) if restored else "nothing (the host was already as before)"
    text = f"reverted: {result.get('reason', 'unknown reason')}, restored {what}"
    if result.get("errors"):
        text += "; errors: " + "; ".join(result["errors"])
    return text


def main(argv=None, sleep=time.sleep, clock=time.time) -> int:
    parser = argparse.ArgumentParser(prog="cxfab-network-rollback")
    parser.add_argument("--dir", default=ROLLBACK_DIR)
    parser.add_argument("--token", required=True)
    parser.add_argument("when", choices=("wait", "fire"), help="wait for the deadline, or fire now")
    args = parser.parse_args(argv)
    armed = _read_json(os.path.join(args.dir, ARMED))
    if not armed or armed["token"] != args.token:
        return 0  # confirmed (or replaced) before the deadline
    if args.when == "wait":
        while clock() < armed["deadline"]:
            sleep(min(1.0, max(0.0, armed["deadline"] - clock())))
    result = fire(args.dir, args.token, f"not confirmed within {armed['seconds']} s", clock=clock)
    return 1 if result and result["errors"] else 0
