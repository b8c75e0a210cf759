"""The workload role's two build paths, run for real on the controller as a host.

- build_on host: the sources are shipped, compiled on the host, and a second run
  changes nothing (the lab uses the controller build, so this is where the host
  build is exercised);
- build_on controller: the programs are built once on the controller, shipped, run
  on the host, and a second run changes nothing;
- a controller build the host cannot run stops the role with the loader's error.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
PLAYBOOK = """\
- name: Build the workloads
  hosts: all
  gather_facts: false
  roles:
    - role: rdma_workloads
"""


def _play(tmp_path: Path, *options: str, **variables) -> subprocess.CompletedProcess:
    host = {
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
        "rdma_workloads_dir": str(tmp_path / "opt"),
        "rdma_workloads_manage_packages": False,
        "rdma_workloads_native_source": str(REPO / "native"),
        # Its own build directory: the repository's native/build is used by other tests.
        "rdma_workloads_controller_build": str(tmp_path / "controller-build"),
        **variables,
    }
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {"buildhost": host}}}))
    # The role's controller paths hang off playbook_dir/..: a playbooks/ folder in
    # tmp_path keeps the archives out of the repository's build/.
    (tmp_path / "playbooks").mkdir(exist_ok=True)
    playbook = tmp_path / "playbooks" / "build.yml"
    playbook.write_text(PLAYBOOK)
    env = dict(
        os.environ,
        ANSIBLE_CONFIG=str(REPO / "ansible.cfg"),
        ANSIBLE_ROLES_PATH=str(REPO / "roles"),
        ANSIBLE_NOCOLOR="1",
    )
    return subprocess.run(
        [str(ANSIBLE_PLAYBOOK), *options, "-i", str(inventory), str(playbook)],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def _changed(run: subprocess.CompletedProcess) -> int:
    recap = re.search(r"buildhost\s+:.*changed=(\d+)", run.stdout)
    assert recap, run.stdout[-2000:]
    return int(recap.group(1))


def _programs_run(opt: Path) -> None:
    for program in ("pingpong", "rcat", "stencil-bench"):
        shown = subprocess.run(
            [str(opt / "native" / "build" / program), "--help"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert shown.returncode == 0 and "--help" in shown.stdout, (program, shown.stderr)


@pytest.mark.parametrize("build_on", ["host", "controller"])
def test_built_shipped_runnable_and_idempotent(tmp_path, build_on):
    first = _play(tmp_path, rdma_workloads_build_on=build_on)
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-2000:]
    assert _changed(first) > 0
    _programs_run(tmp_path / "opt")
    shipped = "native-src.tar" if build_on == "host" else "native-bin.tar"
    assert (tmp_path / "opt" / shipped).is_file()
    assert (tmp_path / "opt" / "native" / "src").is_dir() is (build_on == "host")
    # -v: the ok result's message is printed only when verbose.
    again = _play(tmp_path, "-v", rdma_workloads_build_on=build_on)
    assert again.returncode == 0, again.stdout[-4000:]
    assert _changed(again) == 0, again.stdout[-4000:]
    if build_on == "controller":  # one remote command, no transfer, no module call
        assert "programs up to date" in again.stdout, again.stdout[-4000:]


def test_a_controller_build_the_host_cannot_run_stops_the_role(tmp_path):
    # A "native/" whose build makes programs the host cannot start (an interpreter
    # that does not exist, as a missing library or a foreign ELF would).
    source = tmp_path / "native"
    source.mkdir()
    (source / "Makefile").write_text(
        "all:\n"
        "\tmkdir -p $(BUILD)\n"
        "\tfor p in pingpong rcat stencil-bench; do"
        " printf '#!/nonexistent/ld-linux\\n' > $(BUILD)/$$p; chmod 755 $(BUILD)/$$p; done\n"
    )
    run = _play(
        tmp_path,
        rdma_workloads_build_on="controller",
        rdma_workloads_native_source=str(source),
    )
    assert run.returncode != 0
    assert "pingpong built on the controller does not run on buildhost" in run.stdout
    assert "rdma_workloads_build_on: host" in run.stdout
    assert re.search(r"buildhost\s+:.*failed=1", run.stdout)
