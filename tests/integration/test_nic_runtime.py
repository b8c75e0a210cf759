"""The NIC profiles' runtime side end to end on the controller: VFs and DCQCN knobs.

The card is cxemu's ConnectX-4 at 0000:17:00.0/.1 with its fake sysfs tree
(CXEMU_SYSFS_ROOT, docs/lab-cxemu.md): SRIOV_EN and NUM_OF_VFS=8 already Current (what
the link-type stage and one activation leave), so the PFs show `sriov_totalvfs` 8 and
`sriov_numvfs` 0, and the ECN knobs start at ROCE_CC_PRIO_MASK's bits. The product
reads and writes the tree through its `root` option. The files are plain files:
`cxemu-admin sync` is the kernel's side of a `sriov_numvfs` write (the VFs appear).

One ansible-playbook run (local connection): check mode, the run, the VFs appearing, a
second run, verify's reading, a tampered count, a count above sriov_totalvfs refused
with nothing changed, then a driver restart (mstfwreset: no VFs left) and the host
agent's boot run bringing them back.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from cxfab.host.net import agent
from cxfab.structured.hosts import sections
from cxfab.verify.nic import dcqcn_checks, sriov_checks, trust_checks

from tests.integration import cxemu_lab

REPO = Path(__file__).resolve().parents[2]
EMU_BIN = REPO / "tests" / "lab" / "cxemu" / "bin"
ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
PORTS = ("enp23s0f0", "enp23s0f1")

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not ANSIBLE_PLAYBOOK.exists(), reason="ansible-playbook not in the venv"),
]


def _host(num_vfs: int) -> dict:
    ports = [{"port": n, "netdev": name, "link_type": "eth", "speed_gbps": 100}
             for n, name in enumerate(PORTS, 1)]  # fmt: skip
    nic = {
        "name": "cx4",
        "pci": "0000:17:00.0",
        "model": "ConnectX-4",
        "ports": ports,
        "profiles": {"sriov": {"num_vfs": num_vfs}, "roce": {"cc_priorities": [3]}},
    }
    return {"mgmt_interface": "eno1", "nics": [nic], "vlans": [], "qos": []}


PLAYBOOK = """\
- name: The NIC profiles' runtime side on the emulated card
  hosts: nichost
  gather_facts: false
  vars:
    runtime: &runtime
      structured: "{{ lookup('file', '%(structured)s') | from_json }}"
      root: %(root)s
    facts: &facts
      structured: "{{ lookup('file', '%(structured)s') | from_json }}"
      root: %(root)s
    numvfs: %(sys)s/class/net/enp23s0f0/device/sriov_numvfs
  tasks:
    - name: What would change (check mode)
      cxfab_nic_runtime: *runtime
      check_mode: true
      diff: true
      register: check
    - name: Read the count after check mode
      ansible.builtin.slurp: {src: "{{ numvfs }}"}
      register: after_check
    - name: Apply
      cxfab_nic_runtime: *runtime
      register: first
    - name: The kernel creates the VFs written
      ansible.builtin.command: cxemu-admin sync
      register: sync_first
      changed_when: true
    - name: Apply again
      cxfab_nic_runtime: *runtime
      register: second
    - name: Read as verify does
      cxfab_host_facts: *facts
      register: facts_ok
    - name: Someone sets port 1 to 3 VFs
      ansible.builtin.shell: echo 0 > {{ numvfs }} && echo 3 > {{ numvfs }} && cxemu-admin sync
      changed_when: true
    - name: Read again
      cxfab_host_facts: *facts
      register: facts_tampered
    - name: A count above sriov_totalvfs
      cxfab_nic_runtime:
        structured: "{{ lookup('file', '%(big)s') | from_json }}"
        root: %(root)s
      register: too_many
      ignore_errors: true
    - name: Read the count after the refusal
      ansible.builtin.slurp: {src: "{{ numvfs }}"}
      register: after_refusal
    - name: The driver restarts (the VFs are gone), as at a reboot
      ansible.builtin.command: mstfwreset -d 0000:17:00.0 -y reset
      changed_when: true
    - name: Read after the restart
      cxfab_host_facts: *facts
      register: facts_reset
    - name: The host agent's boot run
      ansible.builtin.command:
        argv: [%(python)s, -c, "%(agent)s"]
      changed_when: true
    - name: The kernel creates the VFs the agent wrote
      ansible.builtin.command: cxemu-admin sync
      changed_when: true
    - name: Read after the agent
      cxfab_host_facts: *facts
      register: facts_boot
    - name: Write the results
      ansible.builtin.copy:
        content: "{{ {'check': check, 'after_check': after_check, 'first': first,
                      'sync_first': sync_first, 'second': second, 'facts_ok': facts_ok,
                      'facts_tampered': facts_tampered, 'too_many': too_many,
                      'after_refusal': after_refusal, 'facts_reset': facts_reset,
                      'facts_boot': facts_boot} | to_json }}"
        dest: %(out)s
        mode: "0644"
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("nicrt")
    sysfs = root / "sys"
    env = cxemu_lab.cxemu_env(root, sysfs)

    def admin(*args):
        cxemu_lab.admin(env, *args)

    admin("seed", "--profile", "seed000", "--bdf", "0000:17:00.0,0000:17:00.1",
          "--netdevs", ",".join(PORTS))  # fmt: skip
    # What the link-type stage and one activation leave: the profiles' parameters Current.
    admin("set", "-d", "0000:17:00.0", "config.SRIOV_EN=True", "config.NUM_OF_VFS=8",
          "config.LINK_TYPE_P2=ETH", "config.ROCE_CC_PRIO_MASK_P1=8",
          "config.ROCE_CC_PRIO_MASK_P2=8")  # fmt: skip
    # Someone turned the notification point of priority 3 off on port 2.
    (sysfs / "class/net/enp23s0f1/ecn/roce_np/enable/3").write_text("0\n")
    structured = sections(_host(8))
    (root / "structured.json").write_text(json.dumps(structured))
    (root / "big.json").write_text(json.dumps(sections(_host(16))))
    inventory = root / "inventory.yml"
    host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {"nichost": host}}}))
    config = root / agent.CONFIG.lstrip("/")
    library = root / agent.LIBRARY_DIR.lstrip("/")
    boot = (
        f"import sys; sys.path.insert(0, '{library}'); "
        f"from cxfab.host.net.agent import main; sys.exit(main(['--config', '{config}']))"
    )
    out = root / "results.json"
    playbook = root / "play.yml"
    playbook.write_text(PLAYBOOK % {
        "structured": root / "structured.json", "big": root / "big.json", "root": root,
        "sys": sysfs, "python": sys.executable, "agent": boot, "out": out,
    })  # fmt: skip
    proc = subprocess.run(
        [str(ANSIBLE_PLAYBOOK), "-i", str(inventory), str(playbook)],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return {"root": root, "structured": structured, **json.loads(out.read_text())}


def _checks(run, key):
    facts = run[key]["facts"] if "facts" in run[key] else run[key]
    sc = run["structured"]
    found = sriov_checks("h", sc, facts) + dcqcn_checks("h", sc, facts)
    return {c["id"]: c for c in found + trust_checks("h", sc, facts)}


def _slurped(result):
    import base64

    return base64.b64decode(result["content"]).decode().strip()


def test_check_mode_shows_the_change_and_writes_nothing(run):
    check = run["check"]
    assert check["changed"] and check["sriov"]["enp23s0f0"] == {
        "before": 0, "after": 8, "wanted": 8,
    }  # fmt: skip
    assert check["diff"]["before"]["sriov_numvfs/enp23s0f0"] == 0
    assert check["diff"]["after"]["ecn/enp23s0f1/roce_np/3"] == 1
    assert _slurped(run["after_check"]) == "0"


def test_the_vfs_are_created_dcqcn_enabled_and_a_second_run_changes_nothing(run):
    first = run["first"]
    assert first["changed"]
    assert {n: s["after"] for n, s in first["sriov"].items()} == {p: 8 for p in PORTS}
    assert first["dcqcn"]["enp23s0f1"]["before"]["roce_np/3"] == 0
    assert first["dcqcn"]["enp23s0f1"]["after"] == {"roce_np/3": 1, "roce_rp/3": 1}
    assert "0000:17:00.0: 8 VFs" in run["sync_first"]["stdout"]
    # No lossless section here: the roce profile's trust is this stage's (mlnx_qos).
    assert first["trust"]["enp23s0f0"] == {"backend": "mlnx_qos", "before": "pcp", "after": "dscp"}
    assert run["check"]["diff"]["after"]["trust/enp23s0f1"] == "dscp"
    second = run["second"]
    assert not second["changed"] and second["persisted"] == []
    passed = _checks(run, "facts_ok")
    assert all(c["status"] == "pass" for c in passed.values())
    assert {"trust.enp23s0f0", "dcqcn.enp23s0f1", "sriov.enp23s0f1.vfs"} <= set(passed)


def test_verify_fails_a_tampered_count_with_the_observed_value(run):
    tampered = _checks(run, "facts_tampered")["sriov.enp23s0f0.vfs"]
    assert (tampered["status"], tampered["observed"]) == ("fail", "3 VFs (of 8)")
    assert _checks(run, "facts_tampered")["sriov.enp23s0f1.vfs"]["status"] == "pass"


def test_a_count_above_totalvfs_is_refused_and_nothing_changes(run):
    refused = run["too_many"]
    assert refused["failed"] and not refused.get("changed")
    assert "16 VFs wanted, the function offers 8 (sriov_totalvfs)" in refused["msg"]
    assert _slurped(run["after_refusal"]) == "3"


def test_the_agent_recreates_the_vfs_after_a_driver_restart(run):
    reset = _checks(run, "facts_reset")["sriov.enp23s0f0.vfs"]
    assert (reset["status"], reset["observed"]) == ("fail", "0 VFs (of 8)")
    assert all(c["status"] == "pass" for c in _checks(run, "facts_boot").values())
    assert len(list((run["root"] / "sys/bus/pci/devices/0000:17:00.1").glob("virtfn*"))) == 8
