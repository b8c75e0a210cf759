"""InfiniBand ports end to end on the controller: IPoIB applied, persisted, read back, verified.

No kernel here or in the lab guests has an InfiniBand device, so this is what is
emulated, and how (docs/lab-cxemu.md, "InfiniBand ports"):

- the card (cxemu): a ConnectX-4 at 0000:3b:00.0/.1 with both ports switched to IB
  (LINK_TYPE_P1/P2=IB), its `ibstat`, and a fake sysfs tree (CXEMU_SYSFS_ROOT) laid
  out like the real one - the RDMA devices mlx5_0/mlx5_1 on their PCI functions and
  the IPoIB interfaces ibp59s0/ibp59s0f1 with their `type`, `dev_port`, `mode` and
  `mtu` files. The product reads and writes that tree through its `root` option,
  the same way the other host modules' tests point them at a copied /sys;
- the interfaces' addresses: a private network namespace holds a tun device of each
  IPoIB name (this test's process alone), so the netlink side of cxfab_host_network
  runs for real. Its netlink MTU is the tun's, not the sysfs file's.

One ansible-playbook run (local connection) applies the intent, applies it again,
reads the ports back with cxfab_host_facts (as verify does), plants a drift and a missing subnet
manager, and reads again; the test judges the results with the verify checks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from cxfab.structured.hosts import sections
from cxfab.verify.ib import ib_checks

from tests.integration import cxemu_lab

REPO = Path(__file__).resolve().parents[2]
EMU_BIN = REPO / "tests" / "lab" / "cxemu" / "bin"
ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
IB_NAMES = ("ibp59s0", "ibp59s0f1")


def _namespaces_work() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        return False
    probe = subprocess.run(
        ["unshare", "-n", "ip", "tuntap", "add", "dev", "cxprobe0", "mode", "tun"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not ANSIBLE_PLAYBOOK.exists(), reason="ansible-playbook not in the venv"),
    pytest.mark.skipif(not _namespaces_work(), reason="needs root, unshare -n and tun devices"),
]

HOST = {
    "mgmt_interface": "eno1",
    "nics": [
        {
            "name": "cx4ib",
            "pci": "0000:3b:00.0",
            "model": "ConnectX-4",
            "ports": [
                {"port": 1, "netdev": "ibp59s0", "link_type": "ib", "speed_gbps": 100,
                 "ipoib": {"mode": "connected", "ib_mtu": 2048, "mtu": 65520,
                           "address": "10.77.0.1/24"}},
                {"port": 2, "netdev": "ibp59s0f1", "link_type": "ib", "speed_gbps": 100,
                 "ipoib": {"mode": "datagram", "ib_mtu": 2048, "mtu": 2044,
                           "address": "10.78.0.1/24"}},
            ],
        }
    ],
    "vlans": [],
    "qos": [],
}  # fmt: skip

PLAYBOOK = """\
- name: IPoIB on the emulated card
  hosts: ibhost
  gather_facts: false
  vars:
    structured: "{{ lookup('file', '%(structured)s') | from_json }}"
    network: &network
      structured: "{{ structured }}"
      networkd_dir: %(networkd)s
      root: %(root)s
      revert_seconds: 0
  tasks:
    - name: Apply the intent
      cxfab_host_network: *network
      register: first
    - name: Apply it again
      cxfab_host_network: *network
      register: second
    - name: Read the ports and the IPoIB interfaces
      cxfab_host_facts: {structured: "{{ structured }}", root: %(root)s}
      register: facts
    - name: Someone switches port 1 back to datagram mode
      ansible.builtin.copy:
        content: "datagram\\n"
        dest: %(root)s/sys/class/net/ibp59s0/mode
        mode: "0644"
    - name: The subnet manager of port 2's fabric goes away
      ansible.builtin.command: cxemu-admin set -d 0000:3b:00.1 port2.sm=none
      changed_when: true
    - name: Compare with the intent (check mode, as verify does)
      cxfab_host_network: *network
      check_mode: true
      register: drift
    - name: Read the ports again
      cxfab_host_facts: {structured: "{{ structured }}", root: %(root)s}
      register: facts_after
    - name: Write the results
      ansible.builtin.copy:
        content: "{{ {'first': first, 'second': second, 'facts': facts, 'drift': drift,
                      'facts_after': facts_after} | to_json }}"
        dest: %(out)s
        mode: "0644"
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("ipoib")
    sysfs = root / "sys"
    env = cxemu_lab.cxemu_env(root, sysfs)

    def admin(*args):
        cxemu_lab.admin(env, *args)

    admin("seed", "--profile", "seed000", "--bdf", "0000:3b:00.0,0000:3b:00.1",
          "--netdevs", ",".join(IB_NAMES))  # fmt: skip
    # What the NIC link-type role leaves behind once the card was reset.
    admin("set", "-d", "0000:3b:00.0", "config.LINK_TYPE_P1=IB", "config.LINK_TYPE_P2=IB")
    structured = sections(HOST)
    (root / "structured.json").write_text(json.dumps(structured))
    inventory = root / "inventory.yml"
    host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {"ibhost": host}}}))
    out = root / "results.json"
    playbook = root / "play.yml"
    playbook.write_text(
        PLAYBOOK
        % {
            "structured": root / "structured.json",
            "networkd": root / "networkd",
            "root": root,
            "out": out,
        }
    )
    tuns = " && ".join(f"ip tuntap add dev {name} mode tun" for name in IB_NAMES)
    proc = subprocess.run(
        ["unshare", "-n", "sh", "-c", f'{tuns} && exec "$0" "$@"', str(ANSIBLE_PLAYBOOK),
         "-i", str(inventory), str(playbook)],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return {"root": root, "structured": structured, **json.loads(out.read_text())}


def _net(run, name, key):
    return (run["root"] / "sys" / "class" / "net" / name / key).read_text().strip()


def test_connected_65520_and_datagram_2044_are_applied_and_read_back(run):
    first = run["first"]
    assert first["changed"] and first["differs"]
    assert "set_ipoib_mode ibp59s0 (mode=connected)" in first["actions"]
    assert "set_ipoib_mtu ibp59s0 (mtu=65520)" in first["actions"]
    assert "add_address ibp59s0f1 (address=10.78.0.1/24)" in first["actions"]
    # The emulated driver started both in datagram mode at 2044: port 2 needs nothing.
    assert not any(a.startswith("set_ipoib") and "ibp59s0f1" in a for a in first["actions"])
    assert first["ipoib"]["ibp59s0"] == {
        "mode": "connected", "mtu": 65520, "device": "mlx5_0", "ib_port": 1,
    }  # fmt: skip
    assert first["ipoib"]["ibp59s0f1"] == {
        "mode": "datagram", "mtu": 2044, "device": "mlx5_1", "ib_port": 1,
    }  # fmt: skip
    # The second run read sysfs before the drift planted below.
    assert {n: (s["mode"], s["mtu"]) for n, s in run["second"]["ipoib"].items()} == {
        "ibp59s0": ("connected", 65520), "ibp59s0f1": ("datagram", 2044),
    }  # fmt: skip
    assert _net(run, "ibp59s0", "mtu") == "65520"
    assert (_net(run, "ibp59s0f1", "mode"), _net(run, "ibp59s0f1", "mtu")) == ("datagram", "2044")
    assert first["links"]["ibp59s0"]["addresses"] == ["10.77.0.1/24"]


def test_the_networkd_files_persist_it_and_a_second_run_changes_nothing(run):
    text = (run["root"] / "networkd" / "60-cxfab-ibp59s0.network").read_text()
    assert "[IPoIB]\nMode=connected\n" in text and "MTUBytes=65520" in text
    assert "Address=10.77.0.1/24" in text
    other = (run["root"] / "networkd" / "60-cxfab-ibp59s0f1.network").read_text()
    assert "Mode=datagram" in other and "MTUBytes=2044" in other
    second = run["second"]
    assert second["changed"] is False and second["differs"] is False
    assert second["actions"] == [] and second["files"] == []


def test_verify_passes_on_the_applied_ports(run):
    reading = {"ib": run["facts"]["facts"]["ib"]}
    checks = {c["id"]: c for c in ib_checks("ibhost", run["structured"], reading)}
    assert {c["status"] for c in checks.values()} == {"pass"}, checks
    assert checks["ib.ibp59s0.state"]["observed"] == "State Active, Physical state LinkUp"
    assert checks["ipoib.ibp59s0.mtu"]["observed"] == "65520"
    assert checks["ipoib.ibp59s0f1.mode"]["observed"] == "datagram"


def test_drift_and_a_missing_subnet_manager_are_named(run):
    assert "set_ipoib_mode ibp59s0 (mode=connected)" in run["drift"]["actions"]
    assert run["drift"]["changed"] is True and run["drift"]["differs"] is True
    assert _net(run, "ibp59s0", "mode") == "datagram"  # check mode wrote nothing
    reading = {"ib": run["facts_after"]["facts"]["ib"]}
    checks = {c["id"]: c for c in ib_checks("ibhost", run["structured"], reading)}
    assert (checks["ipoib.ibp59s0.mode"]["status"], checks["ipoib.ibp59s0.mode"]["observed"]) == (
        "fail", "datagram",
    )  # fmt: skip
    sm = checks["ib.ibp59s0f1.sm"]
    assert (sm["status"], sm["observed"]) == ("fail", "SM lid 0, base lid 0")
    assert "no subnet manager has configured it" in checks["ib.ibp59s0f1.state"]["message"]
    assert checks["ib.ibp59s0.sm"]["status"] == "pass"
