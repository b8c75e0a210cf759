"""Link, cable and card health in verify: verify_health.yml against the emulated ConnectX tools.

One ansible-playbook run on the controller (local connection) imports the tasks
of playbooks/verify_health.yml twice around a planted link flap, then judges the
snapshots with cxfab_verify_checks, on an emulated seed-000 card whose second port
holds the seed's third-party DAC and which sits in an x8 slot. The card's sysfs
(carrier_changes, the PCIe link files) is a fake tree the emulator writes
(CXEMU_SYSFS_ROOT); only this test's subprocess has the emulators in PATH.
`ethtool -S` on the fake netdevs is a stub that prints the mlx5 sample.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.integration import cxemu_lab

REPO = Path(__file__).resolve().parents[2]
EMU_BIN = REPO / "tests" / "lab" / "cxemu" / "bin"
ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
MLX5_SAMPLE = REPO / "tests" / "fixtures" / "mlnx" / "ethtool_mlx5.txt"
BDF = "0000:65:00.0"

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not ANSIBLE_PLAYBOOK.exists(), reason="ansible-playbook not in the venv"),
]

PLAYBOOK = """\
- name: Start of verify
  hosts: hosts
  gather_facts: false
  vars:
    # The NICs of the host's structured config, as validate.yml would write them.
    verify_structured: {nics: "{{ cxfab_host.nics }}"}
  tasks:
    - name: Snapshot the counters
      ansible.builtin.import_tasks: %(tasks)s
      vars: {verify_health_phase: start}

- name: A link flaps while verify runs
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Flap port 1
      ansible.builtin.command: cxemu-admin flap -d %(bdf)s
      changed_when: true

- name: End of verify
  hosts: hosts
  gather_facts: false
  vars:
    # The NICs of the host's structured config, as validate.yml would write them.
    verify_structured: {nics: "{{ cxfab_host.nics }}"}
  tasks:
    - name: Read everything
      ansible.builtin.import_tasks: %(tasks)s
      vars: {verify_health_phase: end}

- name: Judge
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Judge the snapshots
      cxfab_verify_checks:
        fabric:
          hosts: {nichost: "{{ hostvars['nichost'].cxfab_host }}"}
          structured: {nichost: {nics: "{{ hostvars['nichost'].cxfab_host.nics }}"}}
          vlans: []
          workloads: {}
        sections: [health]
        health: {nichost: "{{ hostvars['nichost'].verify_health }}"}
        supported_cables: [{vendor: Mellanox, part_number: "MCP1600-*"}]
      register: judged

    - name: Write the checks
      ansible.builtin.copy:
        content: "{{ judged.checks | to_json }}"
        dest: %(out)s
        mode: "0644"
"""


@pytest.fixture(scope="module")
def checks(tmp_path_factory):
    root = tmp_path_factory.mktemp("health")
    sysfs = root / "sys"
    for netdev, changes in (("cxa0", 4), ("cxb0", 2)):
        (sysfs / "class" / "net" / netdev).mkdir(parents=True)
        (sysfs / "class" / "net" / netdev / "carrier_changes").write_text(f"{changes}\n")
    stub = root / "ethtool-stub"
    stub.write_text(f"#!/bin/sh\nsed '1,/^# ---$/d' {MLX5_SAMPLE}\n")
    stub.chmod(0o755)
    env = cxemu_lab.cxemu_env(root, sysfs)

    def admin(*args):
        cxemu_lab.admin(env, *args)

    admin("seed", "--profile", "seed000", "--bdf", f"{BDF},0000:65:00.1", "--netdevs", "cxa0,cxb0")
    # Seed 000: the refused third-party DAC on port 2, the card in an x8 slot; both
    # ports Ethernet as the intent pins them.
    admin("set", "-d", BDF, "port2.cable=optcore", "pcie.width=8", "config.LINK_TYPE_P2=ETH")
    # A card running hot: mget_temp (the emulator's, in PATH) prints 101.
    admin("set", "-d", BDF, "temperature=101")
    nics = [
        {
            "name": "cx4",
            "pci": BDF,
            "model": "ConnectX-4",
            "nv_config": {"SRIOV_EN": False},
            "ports": [
                {"port": 1, "netdev": "cxa0", "link_type": "eth", "speed_gbps": 100},
                {"port": 2, "netdev": "cxb0", "link_type": "eth", "speed_gbps": 100},
            ],
        }
    ]
    inventory = root / "inventory.yml"
    host = {
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
        "cxfab_host": {"mgmt_interface": "eno1", "nics": nics},
        "nic_health_ethtool_path": str(stub),
        "nic_health_root": str(root),
    }
    inventory.write_text(
        yaml.safe_dump({"all": {"children": {"hosts": {"hosts": {"nichost": host}}}}})
    )
    out = root / "checks.json"
    playbook = root / "play.yml"
    tasks = REPO / "playbooks" / "verify_health.yml"
    playbook.write_text(PLAYBOOK % {"tasks": tasks, "bdf": BDF, "out": out})
    proc = subprocess.run(
        [str(ANSIBLE_PLAYBOOK), "-i", str(inventory), str(playbook)],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    return {check["id"]: check for check in json.loads(out.read_text())}


def test_third_party_cable_fails_with_the_opcode_text_and_the_cable(checks):
    link = checks["link.cxb0.diag"]
    assert link["status"] == "fail"
    assert link["observed"] == (
        "module's PMD type is not enabled (opcode 1036), cable OPTCORE Q-100G-DAC-P2M"
    )
    assert "Connected wrong module type. Change to a different module type." in link["message"]
    cable = checks["cable.cxb0.supported"]
    assert cable["status"] == "warn" and "OPTCORE Q-100G-DAC-P2M" in cable["message"]
    assert checks["link.cxa0.diag"]["status"] == "pass"
    assert checks["cable.cxa0.supported"]["status"] == "pass"


def test_narrow_slot_fails_with_current_and_maximum(checks):
    pcie = checks["pcie.cx4.link"]
    assert pcie["status"] == "fail"
    assert pcie["observed"] == "8 GT/s x8 (63.008 Gb/s), capable of 8 GT/s x16 (126.016 Gb/s)"
    assert "63.008 Gb/s of the 126.016" in pcie["message"]


def test_planted_flap_is_named(checks):
    flap = checks["flap.cxa0"]
    assert flap["status"] == "fail"
    assert flap["observed"] == "carrier_changes 4 -> 6"
    assert "link cxa0 flapped during verify (1 down/up)" in flap["message"]
    assert checks["flap.cxb0"]["status"] == "pass"


def test_pinned_config_and_counters_are_audited(checks):
    assert checks["nvconfig.cx4.LINK_TYPE_P1"]["status"] == "pass"
    assert checks["nvconfig.cx4.LINK_TYPE_P2"]["observed"] == "current ETH(2), next boot ETH(2)"
    assert checks["nvconfig.cx4.SRIOV_EN"]["status"] == "pass"
    # the same (static) mlx5 counters at start and end: nothing grew
    assert checks["counters.cxa0"]["status"] == "pass"
    # no hwmon sensor on the emulated card: mget_temp reads it, and 101 C is over 95
    temp = checks["temp.cx4"]
    assert (temp["status"], temp["observed"]) == ("fail", "101 C (mget_temp)"), temp
    assert "runs hot" in temp["message"]
