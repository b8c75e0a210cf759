"""host_network's one definition of its module's arguments, in a real ansible-playbook run.

The role applies the intent with `host_network_persist: false`; then the same role's
check-mode reading (tasks_from: read, what verify.yml runs) and its contribution to the
host's one-call reading (tasks_from: state) are taken. All three must carry the
inventory's setting through module_defaults: a reading that still looked for networkd
files would report the run it was told to make as drift. The host is test_ipoib's
emulated card (IPoIB ports in a private network namespace).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml
from cxfab.structured.hosts import sections
from test_ipoib import ANSIBLE_PLAYBOOK, EMU_BIN, HOST, IB_NAMES, REPO, _namespaces_work

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not ANSIBLE_PLAYBOOK.exists(), reason="ansible-playbook not in the venv"),
    pytest.mark.skipif(not _namespaces_work(), reason="needs root, unshare -n and tun devices"),
]

PLAYBOOK = """\
- name: The host_network role with persist off, then its readings
  hosts: ibhost
  gather_facts: false
  vars:
    host_network_structured: "{{ lookup('file', '%(structured)s') | from_json }}"
    host_network_networkd_dir: %(networkd)s
    host_network_root: %(root)s
    host_network_revert_seconds: 0
    host_network_persist: false
    # The controller boots without systemd: auto would refuse it (no daemon runs).
    host_network_backend: networkd
    cxfab_host_state_args: {}
  tasks:
    - name: Apply the intent through the role
      ansible.builtin.include_role:
        name: host_network
    - name: Read it back as verify.yml does
      ansible.builtin.include_role:
        name: host_network
        tasks_from: read
    - name: Add the network stage to the one-call reading as host_state.yml does
      ansible.builtin.include_role:
        name: host_network
        tasks_from: state
    - name: Write the results
      ansible.builtin.copy:
        content: "{{ {'run': host_network_result, 'reading': host_network_reading,
                      'state_args': cxfab_host_state_args} | to_json }}"
        dest: %(out)s
        mode: "0644"
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostnet_args")
    env = {
        "PATH": f"{EMU_BIN}:{sys.executable.rsplit('/', 1)[0]}:/usr/sbin:/usr/bin:/sbin:/bin",
        "CXEMU_STATE_DIR": str(root / "cxemu"),
        "CXEMU_SYSFS_ROOT": str(root / "sys"),
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        "ANSIBLE_NOCOLOR": "1",
        "HOME": str(root),
    }
    for args in (
        ("seed", "--profile", "seed000", "--bdf", "0000:3b:00.0,0000:3b:00.1",
         "--netdevs", ",".join(IB_NAMES)),
        ("set", "-d", "0000:3b:00.0", "config.LINK_TYPE_P1=IB", "config.LINK_TYPE_P2=IB"),
    ):  # fmt: skip
        subprocess.run([str(EMU_BIN / "cxemu-admin"), *args], env=env, check=True)
    (root / "structured.json").write_text(json.dumps(sections(HOST)))
    inventory = root / "inventory.yml"
    host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {"ibhost": host}}}))
    out = root / "results.json"
    playbook = root / "play.yml"
    paths = {"structured": root / "structured.json", "networkd": root / "networkd"}
    playbook.write_text(PLAYBOOK % {**paths, "root": root, "out": out})
    tuns = " && ".join(f"ip tuntap add dev {name} mode tun" for name in IB_NAMES)
    proc = subprocess.run(
        ["unshare", "-n", "sh", "-c", f'{tuns} && exec "$0" "$@"', str(ANSIBLE_PLAYBOOK),
         "-i", str(inventory), str(playbook)],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return {"root": root, **json.loads(out.read_text())}


def test_the_run_applies_the_intent_and_writes_no_networkd_file(run):
    assert run["run"]["changed"] is True
    networkd = run["root"] / "networkd"
    assert not networkd.exists() or not any(networkd.iterdir())


def test_the_reading_verify_runs_finds_nothing_to_do(run):
    """Read with persist: true it would name the networkd files the run never wrote."""
    reading = run["reading"]
    assert reading["differs"] is False and reading["actions"] == [], reading["actions"]


def test_the_one_call_reading_gets_the_same_arguments(run):
    network = run["state_args"]["network"]
    assert network["persist"] is False and network["revert_seconds"] == 0
    assert network["networkd_dir"] == str(run["root"] / "networkd")
