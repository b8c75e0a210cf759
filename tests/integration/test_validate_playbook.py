"""playbooks/validate.yml with real ansible-playbook: passes, fails loudly, touches no device."""

import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from tests.tools import inventory

# Every test builds its own world in tmp_path: xdist may give each its own worker.
SPREAD_TESTS = True

pytestmark = pytest.mark.integration

REPO_ROOT = Path(__file__).resolve().parents[2]
ANSIBLE_PLAYBOOK = REPO_ROOT / ".venv" / "bin" / "ansible-playbook"
CASES_DIR = REPO_ROOT / "tests" / "unit" / "cases"


def ansible_playbook(playbook: str, inventory_dir: Path, *extra: str):
    env = dict(
        os.environ,
        ANSIBLE_CONFIG=str(REPO_ROOT / "ansible.cfg"),
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_FORCE_COLOR="0",
    )
    # The structured files go to a directory of the run's own, not the repo's build/:
    # validate.yml removes the files of devices it does not know, e.g. a demo lab's.
    with tempfile.TemporaryDirectory(prefix="cxfab-validate-") as build:
        command = [str(ANSIBLE_PLAYBOOK), f"playbooks/{playbook}", "-i", str(inventory_dir)]
        command += ["-e", f"cxfab_build_dir={build}", *extra]
        proc = subprocess.run(
            command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
        )
    return proc.returncode, proc.stdout + proc.stderr


def broken_inventory(tmp_path: Path, case_name: str) -> tuple[Path, str]:
    case = yaml.safe_load((CASES_DIR / f"{case_name}.yml").read_text(encoding="utf-8"))
    directory = inventory.write_copy(inventory.EXAMPLE, tmp_path / "inv", case["patches"])
    return directory, case["expected_error"]


def test_example_inventory_passes():
    code, output = ansible_playbook("validate.yml", inventory.EXAMPLE)
    assert code == 0, output
    assert "Fabric seed-rack is valid" in output
    assert "failed=0" in output


def test_site_lists_validation_first_and_parses_in_check_mode():
    # The example's devices are not in reach: list the run instead of executing it.
    # Validation must be the first play and every stage must parse in check mode.
    code, output = ansible_playbook("site.yml", inventory.EXAMPLE, "--check", "--list-tasks")
    assert code == 0, output
    plays = [line.strip() for line in output.splitlines() if line.strip().startswith("play #")]
    assert "Validate the fabric intent" in plays[0], plays
    assert any("Roll NIC firmware" in play for play in plays[1:]), plays


@pytest.mark.parametrize(
    "case_name", ["svi-in-subnet", "bond-members-are-nic-ports", "schema-vlan-id-range"]
)
def test_broken_inventory_fails_naming_the_key_path(tmp_path, case_name):
    directory, expected = broken_inventory(tmp_path, case_name)
    code, output = ansible_playbook("validate.yml", directory)
    assert code != 0
    assert expected in output, output


def test_every_error_is_listed_one_per_line(tmp_path):
    patches = [
        {"path": "cxfab_vlans[2].svi_addresses.sw-b", "value": "12.0.21.253/24"},
        {"host": "apricot", "path": "cxfab_host.qos[0].vlan", "value": 40},
    ]
    directory = inventory.write_copy(inventory.EXAMPLE, tmp_path / "inv", patches)
    code, output = ansible_playbook("validate.yml", directory)
    assert code != 0
    lines = [line.strip() for line in output.splitlines()]
    assert "The fabric intent has 2 error(s):" in lines
    assert (
        "cxfab_vlans[2].svi_addresses.sw-b: 12.0.21.253/24 is outside the VLAN subnet "
        "12.0.20.0/24" in lines
    )
    assert any(line.startswith("cxfab_host.qos[0].vlan (host apricot): VLAN 40") for line in lines)


def test_errors_stop_site_before_any_later_play(tmp_path):
    directory, expected = broken_inventory(tmp_path, "svi-in-subnet")
    code, output = ansible_playbook("site.yml", directory, "--check")
    assert code != 0
    assert expected in output
    assert "PLAY [Roll NIC firmware" not in output


def test_no_device_is_contacted_and_no_secret_is_printed(tmp_path):
    # Every switch and host points at an unroutable TEST-NET address over SSH:
    # any connection attempt would hang until its timeout or report UNREACHABLE.
    secret = "S3cret-switch-pw"
    password = {"path": "cxfab_switch_pairs[0].credentials.password", "value": secret}
    directory = inventory.write_copy(inventory.EXAMPLE, tmp_path / "inv", [password])
    hosts_file = directory / "hosts.yml"
    data = yaml.safe_load(hosts_file.read_text(encoding="utf-8"))
    names = [name for group in data["all"]["children"].values() for name in group["hosts"]]
    for index, name in enumerate(names, start=1):
        for group in data["all"]["children"].values():
            if name in group["hosts"]:
                group["hosts"][name] = {
                    "ansible_host": f"192.0.2.{index}",
                    "ansible_connection": "ssh",
                }
    hosts_file.write_text(yaml.safe_dump(data), encoding="utf-8")

    started = time.monotonic()
    code, output = ansible_playbook(
        "validate.yml", directory, "-vvv", "-e", "ansible_ssh_timeout=30"
    )
    elapsed = time.monotonic() - started
    assert code == 0, output
    assert "UNREACHABLE" not in output
    assert secret not in output
    assert elapsed < 25, f"validation took {elapsed:.1f}s: did it try to connect?"
    recap = output[output.index("PLAY RECAP") :].splitlines()[1:]
    assert [line.split()[0] for line in recap if line.strip()] == ["localhost"]


def test_a_duplicate_yaml_key_is_an_error(tmp_path):
    directory = inventory.write_copy(inventory.EXAMPLE, tmp_path / "inv", [])
    host_file = directory / inventory.HOST_FILE.format(host="apricot")
    text = host_file.read_text(encoding="utf-8")
    # A second `mgmt_interface` in the same mapping: the last one must not silently win.
    twice = "  mgmt_interface: eno1\n  mgmt_interface: eno2\n"
    host_file.write_text(text.replace("  mgmt_interface: eno1\n", twice), encoding="utf-8")
    code, output = ansible_playbook("validate.yml", directory)
    assert code != 0
    assert "Found duplicate mapping key 'mgmt_interface'" in output
    assert "Fabric seed-rack is valid" not in output


def test_a_misspelled_section_variable_is_named_with_a_suggestion(tmp_path):
    directory = inventory.write_copy(inventory.EXAMPLE, tmp_path / "inv", [])
    fabric_file = directory / inventory.FABRIC_FILE
    data = yaml.safe_load(fabric_file.read_text(encoding="utf-8"))
    data["cxfab_workload"] = {"iterations": 5}
    fabric_file.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    code, output = ansible_playbook("validate.yml", directory)
    assert code != 0
    assert "cxfab_workload: unknown cxfab variable; did you mean cxfab_workloads?" in output


def test_templates_in_cxfab_host_render_in_that_hosts_context(tmp_path):
    patches = [
        {"host": "apricot", "path": "apricot_bond_mtu", "value": 9000},
        {"host": "apricot", "path": "cxfab_host.bond.mtu", "value": "{{ apricot_bond_mtu }}"},
    ]
    directory = inventory.write_copy(inventory.EXAMPLE, tmp_path / "inv", patches)
    # Rendered in localhost's context, apricot_bond_mtu would be undefined.
    code, output = ansible_playbook("validate.yml", directory)
    assert code == 0, output
    assert "Fabric seed-rack is valid" in output
