"""The pre-change snapshot: the unredacted running config, 0600, outside any git work tree."""

from __future__ import annotations

import os
import time


class SnapshotRefused(RuntimeError):
    """The snapshot cannot be kept safely where it was asked for."""


def _inside_git(path: str) -> str | None:
    current = os.path.abspath(path)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _private_dirs(folder: str) -> None:
    """Every directory this creates is 0700 (os.makedirs gives the parents the umask's
    mode); the per-switch folder is made 0700 even when it existed."""
    missing = []
    current = os.path.abspath(folder)
    while not os.path.isdir(current):
        missing.append(current)
        current = os.path.dirname(current)
    for path in reversed(missing):
        os.mkdir(path, 0o700)
        os.chmod(path, 0o700)  # mkdir's mode is masked by the umask
    os.chmod(folder, 0o700)


def write_snapshot(directory: str, switch: str, text: str) -> str:
    """The unredacted running-config, 0600, outside any git work tree."""
    work_tree = _inside_git(directory)
    if work_tree:
        raise SnapshotRefused(
            f"snapshot directory {directory} is inside the git work tree {work_tree}; "
            "an unredacted switch config must not be there (set cxfab_switch_snapshot_dir)"
        )
    folder = os.path.join(directory, switch)
    _private_dirs(folder)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = os.path.join(folder, f"{stamp}-{time.monotonic_ns() % 10**6:06d}.cfg")
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path
