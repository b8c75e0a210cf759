"""What the integration tests of the workload roles share: their marks (ansible-playbook
and iperf3 needed), the native build as a host's install, the environment
ansible-playbook runs in, and a port held by a listener that hangs up on every
connection (a server that cannot listen there, a client that fails at once).
The `bin_dir` fixture (the native build) is conftest's.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
# The marks of a test file that runs the workload roles (its `pytestmark`).
MARKS = [
    pytest.mark.integration,
    pytest.mark.skipif(not ANSIBLE_PLAYBOOK.exists(), reason="ansible-playbook not in the venv"),
    pytest.mark.skipif(not Path("/usr/bin/iperf3").exists(), reason="needs iperf3"),
]


def ansible_env() -> dict[str, str]:
    """ansible-playbook's environment: the repository's ansible.cfg and roles, no colour."""
    return dict(
        os.environ,
        ANSIBLE_CONFIG=str(REPO / "ansible.cfg"),
        ANSIBLE_ROLES_PATH=str(REPO / "roles"),
        ANSIBLE_NOCOLOR="1",
    )


def ansible_playbook(*args: str, timeout: float) -> subprocess.CompletedProcess:
    """ansible-playbook `args` in the repository, in ansible_env(); its output captured."""
    return subprocess.run(
        [str(ANSIBLE_PLAYBOOK), *args],
        env=ansible_env(), cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def installed_opt(tmp_path: Path, bin_dir: Path) -> Path:
    """`tmp_path/opt`, a host's rdma_workloads_dir whose native/build is `bin_dir`."""
    opt = tmp_path / "opt"
    (opt / "native").mkdir(parents=True)
    (opt / "native" / "build").symlink_to(bin_dir)
    return opt


def _hang_up_on_every_connection(listener: socket.socket) -> None:
    while True:
        try:
            connection, _ = listener.accept()
        except OSError:  # the test closed the listener
            return
        connection.close()


@contextlib.contextmanager
def hanging_up(listener: socket.socket) -> Iterator[socket.socket]:
    """`listener` (bound, listening) accepts and hangs up on every connection until the
    block ends; then it is closed."""
    thread = threading.Thread(target=_hang_up_on_every_connection, args=(listener,), daemon=True)
    thread.start()
    try:
        yield listener
    finally:
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(5)
