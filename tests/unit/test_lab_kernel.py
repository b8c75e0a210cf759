"""The lab's guest-kernel modules link: which /lib/modules/<version> serves a tree."""

from __future__ import annotations

import pytest

from tests.lab.vm import kernel

VERSION = "6.1.0-56-amd64"


def _unpack(root, dep: bytes):
    modules = root / "lib" / "modules" / VERSION
    modules.mkdir(parents=True)
    (modules / "modules.dep").write_bytes(dep)
    return modules


@pytest.fixture
def modules_root(tmp_path, monkeypatch):
    root = tmp_path / "lib-modules"
    root.mkdir()
    monkeypatch.setattr(kernel, "MODULES_ROOT", root)
    return root


def test_the_trees_own_unpack_serves_it(tmp_path, modules_root):
    ours = _unpack(tmp_path / "ours", b"kernel/net/smc/smc.ko:\n")
    (modules_root / VERSION).symlink_to(ours)
    assert kernel.modules_ok(VERSION, ours)


def test_another_clones_unpack_of_the_same_package_serves_it(tmp_path, modules_root):
    ours = _unpack(tmp_path / "ours", b"kernel/net/smc/smc.ko:\n")
    theirs = _unpack(tmp_path / "theirs", b"kernel/net/smc/smc.ko:\n")
    (modules_root / VERSION).symlink_to(theirs)
    assert kernel.modules_ok(VERSION, ours)


def test_a_different_tree_or_a_missing_link_does_not(tmp_path, modules_root):
    ours = _unpack(tmp_path / "ours", b"kernel/net/smc/smc.ko:\n")
    assert not kernel.modules_ok(VERSION, ours)  # no link yet
    other = _unpack(tmp_path / "other", b"kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko:\n")
    (modules_root / VERSION).symlink_to(other)
    assert not kernel.modules_ok(VERSION, ours)
