"""What the integration tests of the workload roles share: their marks (ansible-playbook
and iperf3 needed), the native build as a host's install, the environment
ansible-playbook runs in, a play of the role's runs on two hosts that are both the
controller, and a port held by a listener that hangs up on every connection (a
server that cannot listen there, a client that fails at once).
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
import yaml

REPO = Path(__file__).resolve().parents[2]
ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
# The marks of a test file that runs the workload roles (its `pytestmark`).
MARKS = [
    pytest.mark.integration,
    pytest.mark.skipif(not ANSIBLE_PLAYBOOK.exists(), reason="ansible-playbook not in the venv"),
    pytest.mark.skipif(not Path("/usr/bin/iperf3").exists(), reason="needs iperf3"),
]


# The role's runs (tasks_from: run) from the controller, the results kept beside the
# playbook for the test (in check mode too).
RUN_PLAYBOOK = """\
- name: Run the workloads
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Run the workloads of every pair
      ansible.builtin.include_role:
        name: rdma_workloads
        tasks_from: run

    - name: Keep the results for the test (check mode included)
      ansible.builtin.copy:
        content: "{{ rdma_workloads_results | to_json }}"
        dest: "{{ playbook_dir }}/results.json"
        mode: "0644"
      check_mode: false
"""


def run_play(tmp_path: Path, variables: dict, *args: str, timeout: float, path_first=None):
    """RUN_PLAYBOOK on hosts h1 and h2, both the controller (local connection), with
    the inventory's `variables`; `path_first`: a directory put first on PATH."""
    host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory = {
        "all": {
            "hosts": {"localhost": host},
            "children": {"hosts": {"hosts": {"h1": host, "h2": host}}},
            "vars": variables,
        }
    }
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks" / "run.yml").write_text(RUN_PLAYBOOK)
    argv = ["-i", str(tmp_path / "inventory.yml"), *args, str(tmp_path / "playbooks" / "run.yml")]
    return ansible_playbook(*argv, timeout=timeout, path_first=path_first)


def ansible_env() -> dict[str, str]:
    """ansible-playbook's environment: the repository's ansible.cfg and roles, no colour."""
    return dict(
        os.environ,
        ANSIBLE_CONFIG=str(REPO / "ansible.cfg"),
        ANSIBLE_ROLES_PATH=str(REPO / "roles"),
        ANSIBLE_NOCOLOR="1",
    )


def ansible_playbook(*args: str, timeout: float, path_first=None) -> subprocess.CompletedProcess:
    """ansible-playbook `args` in the repository, in ansible_env() (`path_first`: a
    directory put first on PATH); its output captured."""
    env = ansible_env()
    if path_first:
        env["PATH"] = f"{path_first}:{env['PATH']}"
    return subprocess.run(
        [str(ANSIBLE_PLAYBOOK), *args],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False,
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
