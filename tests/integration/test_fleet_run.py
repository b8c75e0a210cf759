"""The fleet's generated plan run for real, as verify.yml runs it, four hosts on this machine.

Four inventory hosts (local connection, all on 127.0.0.1) in one rack, transports tcp: the
ring's 2 rounds of 2 tests, each test iperf3 (the reference) and pingpong over TCP. The
plays are verify.yml's: the plan once on the controller (entry point fleet_plan), every
host running its round's test at once (entry point fleet); what verify.yml hands
cxfab_verify_checks is then judged and reported in this process (the module's own call
costs seconds of AnsiballZ that the unit tests need not pay). The port of iperf3 in each
round's first test is held by this test, so those two tests get no figure: they, and the
host that took part in both, must be "not measured", while the other two tests land in
the matrix with their figures.

A round's tests run side by side: each batch task is announced once per round for
all hosts, not once per test. The rounds are set to count as larger than `forks`
(rdma_workloads_fleet_async_above: 1), so the clients start in the background and are
waited for, as a fleet's rounds past forks do.
"""

from __future__ import annotations

import json
import re
import socket
import sys
import time
from pathlib import Path

import yaml
from cxfab.verify.checks import all_checks
from cxfab.verify.report import build_report, write_report

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.integration import workloads_lab  # noqa: E402

HOSTS = ["h1", "h2", "h3", "h4"]

pytestmark = workloads_lab.MARKS

PLAYBOOK = """\
- name: Plan the fleet's pairwise tests
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Plan once on the controller
      ansible.builtin.include_role:
        name: rdma_workloads
        tasks_from: fleet_plan

- name: Run the fleet's pairwise plan
  hosts: hosts
  gather_facts: false
  tasks:
    - name: Run the rounds of the plan
      ansible.builtin.include_role:
        name: rdma_workloads
        tasks_from: fleet
      when: hostvars['localhost'].rdma_workloads_fleet is defined

- name: Keep what verify.yml hands cxfab_verify_checks (judged here, in the test's process)
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Write the plan and each host's results
      ansible.builtin.copy:
        content: >-
          {{ {'plan': rdma_workloads_fleet.plan,
              'results': hostvars | cxfab_per_host(names, 'rdma_workloads_fleet_results', None),
              'seconds': hostvars | cxfab_per_host(names, 'rdma_workloads_fleet_seconds', None)}
             | to_json }}
        dest: "{{ playbook_dir }}/fleet.json"
        mode: "0644"
      vars:
        names: "{{ groups['hosts'] }}"
"""


def _free_port_pair() -> tuple[int, socket.socket]:
    """A base port whose next one is held (listening, hanging up): iperf3's of slot 0."""
    for _ in range(50):
        holder = socket.socket()
        holder.bind(("127.0.0.1", 0))
        base = holder.getsockname()[1] - 1
        probe = socket.socket()
        try:
            probe.bind(("0.0.0.0", base))
        except OSError:
            holder.close()
            continue
        finally:
            probe.close()
        holder.listen(8)
        return base, holder
    raise RuntimeError("no free port below a free port")


def _inventory(tmp_path: Path, bin_dir: Path, port_base: int) -> Path:
    opt = workloads_lab.installed_opt(tmp_path, bin_dir)
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    hosts = {
        name: {"bond": {"switch_pair": "rack1"}, "vlans": [{"id": 10, "address": "127.0.0.1/8"}]}
        for name in HOSTS
    }
    fabric = {
        "hosts": hosts,
        "workloads": {
            "pairs": [],
            "plan": "generated",
            # The ring of 4 hosts: 2 rounds of 10 s (the least budget the rule accepts).
            "fleet": {"budget_s": 20, "test_s": 10, "tolerance": 0.8, "fabric_tolerance": 0.7},
            "transports": ["tcp"],
            "message_sizes": [65536],
            "iterations": 20,
            "pipeline": 1,
            "thresholds": {},
        },
    }
    inventory = {
        "all": {
            "hosts": {"localhost": local},
            "children": {"hosts": {"hosts": dict.fromkeys(HOSTS, local)}},
            "vars": {
                "cxfab_fabric": fabric,
                # No structured config: verify's perf section reads none of it.
                "test_structured": {name: {} for name in HOSTS},
                "rdma_workloads_dir": str(opt),
                "rdma_workloads_port_base": port_base,
                "rdma_workloads_duration": 1,
                "rdma_workloads_listen_timeout": 10,
                "rdma_workloads_timeout": 30,
                # Rounds of two tests count as more than forks: the clients start in the
                # background and are waited for (the path of a round past forks).
                "rdma_workloads_fleet_async_above": 1,
            },
        }
    }
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump(inventory))
    return path


def test_the_rounds_run_side_by_side_and_an_unmeasured_test_is_named(tmp_path, bin_dir):
    port_base, holder = _free_port_pair()
    inventory = _inventory(tmp_path, bin_dir, port_base)
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks" / "f.yml").write_text(PLAYBOOK)
    start = time.monotonic()
    with workloads_lab.hanging_up(holder):
        run = workloads_lab.ansible_playbook(
            "-i", str(inventory), str(tmp_path / "playbooks" / "f.yml"), timeout=120
        )
    elapsed = time.monotonic() - start
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-2000:]

    # Two rounds, each task of the batch announced once per round: the tests ran together.
    calls = re.findall(r"^TASK \[rdma_workloads : (.+?)\]", run.stdout, re.M)
    assert calls.count("Start the servers") == 2, calls
    assert calls.count("Run the clients") == 2
    assert calls.count("Wait for the clients started in the background") == 2
    assert re.search(r"4 tests of 4 hosts in\s+2 rounds", run.stdout), run.stdout[-3000:]

    fleet = json.loads((tmp_path / "playbooks" / "fleet.json").read_text())
    fabric = yaml.safe_load(inventory.read_text())["all"]["vars"]["cxfab_fabric"]
    fabric["structured"] = {name: {} for name in HOSTS}  # the perf section reads none
    judged = all_checks(fabric, {}, {}, {}, [], ["perf"], fleet=fleet)
    out = write_report(build_report(judged["checks"], fleet=judged["fleet"]), tmp_path / "r")
    report = json.loads((out / "report.json").read_text())
    checks = {(c["id"], c["target"]): c for c in report["checks"]}
    table = report["performance"]["fleet"]
    # Round 1's first test is h1~h2, round 2's h2~h3 (the ring in host order).
    assert sorted(p["pair"] for p in table["not_measured"]) == ["h1~h2", "h2~h3"]
    for pair in ("h1~h2", "h2~h3"):
        check = checks[(f"perf.fleet.pair.{pair}", pair)]
        assert check["status"] == "fail" and check["observed"] == "not measured", check
        assert "iperf3" in check["message"], check
    node = checks[("perf.fleet.node.h2", "h2")]
    assert node["status"] == "fail" and node["message"].startswith("not measured: "), node
    measured = {p["pair"]: p for p in table["pairs"]}
    assert sorted(measured) == ["h1~h4", "h3~h4"]
    for pair in measured.values():
        assert pair["gbps"] > 0 and pair["transport_gbps"] > 0 and pair["tool"] == "iperf3"
    assert table["plan"]["rounds"] == 2 and table["plan"]["elapsed_s"] > 0
    budget = checks[("perf.fleet.budget", "fleet")]
    assert budget["observed"].endswith(" s a round"), budget  # judged against 20 s
    assert (out / "fleet.png").exists()
    print(f"fleet plan, 2 rounds of 2 tests: {elapsed:.1f} s")
