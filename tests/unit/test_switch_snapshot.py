"""Pre-change snapshots hold the unredacted config: private directories, never in git."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from module_utils.cxfab.switch import snapshot

CONFIG = '##\n## Running database "initial"\nusername admin password 7 secret\n'


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_every_directory_created_for_a_snapshot_is_private(tmp_path):
    directory = tmp_path / "state" / "cxfab" / "snapshots"
    previous = os.umask(0o022)  # a usual umask: os.makedirs would give the parents 0755
    try:
        path = snapshot.write_snapshot(str(directory), "sw-a", CONFIG)
    finally:
        os.umask(previous)
    assert Path(path).read_text(encoding="utf-8") == CONFIG
    assert mode(path) == 0o600
    for folder in (tmp_path / "state", tmp_path / "state" / "cxfab", directory, directory / "sw-a"):
        assert mode(folder) == 0o700, folder


def test_an_existing_switch_folder_is_made_private(tmp_path):
    (tmp_path / "sw-a").mkdir(mode=0o755)
    os.chmod(tmp_path / "sw-a", 0o755)
    snapshot.write_snapshot(str(tmp_path), "sw-a", CONFIG)
    assert mode(tmp_path / "sw-a") == 0o700


def test_a_directory_inside_a_git_work_tree_is_refused_and_nothing_is_written(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    inside = tmp_path / "repo" / "build" / "snapshots"
    with pytest.raises(snapshot.SnapshotRefused, match=r"inside the git work tree .*/repo"):
        snapshot.write_snapshot(str(inside), "sw-a", CONFIG)
    assert not (tmp_path / "repo" / "build").exists()
