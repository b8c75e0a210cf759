"""An inventory that did not parse, or that would not fit in memory, stops every run.

Each error names the file and line; nothing runs on half an inventory.
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.integration import onyx_inventory  # noqa: E402
from tests.integration.test_validate_playbook import ANSIBLE_PLAYBOOK, ansible_playbook  # noqa: E402
from tests.tools import inventory  # noqa: E402

# Every test builds its own inventory in tmp_path.
SPREAD_TESTS = True

pytestmark = pytest.mark.integration

HOSTS_WITH_A_DUPLICATE = """\
all:
  children:
    switches:
      hosts:
        lab-sw-a:
        lab-sw-b:
        lab-sw-a:
    hosts:
      hosts: {}
"""


def switch_only(tmp_path: Path) -> Path:
    """The emulated pair's fabric (no hosts, no workloads), never contacted here."""
    return onyx_inventory.write(tmp_path / "inv", onyx_inventory.fabric([2201, 2202]))


def test_the_switch_only_inventory_is_valid(tmp_path):
    code, output = ansible_playbook("validate.yml", switch_only(tmp_path))
    assert code == 0, output
    assert "Fabric lab is valid" in output


def test_a_hosts_file_that_does_not_parse_stops_every_playbook(tmp_path):
    directory = switch_only(tmp_path)
    (directory / "hosts.yml").write_text(HOSTS_WITH_A_DUPLICATE, encoding="utf-8")
    for playbook, extra in (("validate.yml", ()), ("switches.yml", ("--check",))):
        code, output = ansible_playbook(playbook, directory, *extra)
        assert code != 0, output
        assert "is valid" not in output
        assert f"{directory / 'hosts.yml'}:7" in output, output


def test_an_inventory_without_group_switches_is_an_error(tmp_path):
    directory = switch_only(tmp_path)
    (directory / "hosts.yml").write_text("all:\n  hosts:\n    lab-sw-a:\n", encoding="utf-8")
    code, output = ansible_playbook("validate.yml", directory)
    assert code != 0, output
    assert "inventory group 'switches' is missing" in output, output


def test_a_tab_in_group_vars_names_the_file_and_line(tmp_path):
    directory = inventory.write_copy(inventory.EXAMPLE, tmp_path / "inv", [])
    fabric_file = directory / inventory.FABRIC_FILE
    lines = fabric_file.read_text(encoding="utf-8").splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if line.startswith("  - name:"))
    lines[number] = "\t" + lines[number][2:]
    fabric_file.write_text("".join(lines), encoding="utf-8")
    code, output = ansible_playbook("validate.yml", directory)
    assert code != 0
    assert f"{fabric_file}:{number + 1}:" in output, output
    assert "tab" in output


def test_a_tab_in_host_vars_names_the_file_and_line(tmp_path):
    directory = inventory.write_copy(inventory.EXAMPLE, tmp_path / "inv", [])
    host_file = directory / inventory.HOST_FILE.format(host="apricot")
    text = host_file.read_text(encoding="utf-8")
    number = text[: text.index("  mgmt_interface:")].count("\n") + 1
    host_file.write_text(text.replace("  mgmt_interface:", "\tmgmt_interface:"), encoding="utf-8")
    code, output = ansible_playbook("validate.yml", directory)
    assert code != 0
    assert f"{host_file}:{number}:" in output, output


ALIAS_BOMB = "\n".join(
    ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    + [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 10)]
    + ["cxfab_bomb: *a9", ""]
)


def _limit_memory():  # the run must stop long before this; the machine is shared
    limit = 3 * 1024**3
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def test_a_yaml_alias_bomb_fails_fast_naming_the_file(tmp_path):
    assert len(ALIAS_BOMB.encode()) < 500
    directory = switch_only(tmp_path)
    bomb = directory / "group_vars" / "all" / "bomb.yml"
    bomb.write_text(ALIAS_BOMB, encoding="utf-8")
    started = time.monotonic()
    proc = subprocess.run(
        [str(ANSIBLE_PLAYBOOK), "playbooks/validate.yml", "-i", str(directory)],
        cwd=REPO,
        env={"ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "PATH": "/usr/bin:/bin", "HOME": "/tmp"},
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limit_memory,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"{bomb}:" in output and "alias" in output, output[-2000:]
    assert time.monotonic() - started < 60


def test_an_inventory_file_over_the_size_limit_is_refused(tmp_path):
    directory = switch_only(tmp_path)
    big = directory / "group_vars" / "all" / "big.yml"
    shutil.copy(directory / "group_vars" / "all" / "fabric.yml", big)
    big.write_text("padding: '" + "x" * (17 * 1024 * 1024) + "'\n", encoding="utf-8")
    code, output = ansible_playbook("validate.yml", directory)
    assert code != 0
    assert f"{big}:" in output and "limit" in output, output[-2000:]


@pytest.mark.parametrize("name", ["CXFAB_vlans", "Cxfab_switch_prune"])
def test_a_variable_with_a_misspelled_prefix_is_reported(tmp_path, name):
    directory = switch_only(tmp_path)
    (directory / "group_vars" / "all" / "more.yml").write_text(f"{name}: []\n", encoding="utf-8")
    code, output = ansible_playbook("validate.yml", directory)
    assert code != 0, output
    assert f"{name}: unknown cxfab variable; did you mean" in output, output
