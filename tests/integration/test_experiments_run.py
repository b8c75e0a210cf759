"""The experiments role for real, with the controller as both hosts of the pair.

The controller has TCP but no RDMA device and no AF_SMC: the TCP runs must give
figures (their one-shot servers were seen listening without being connected to), and
every RDMA-CM run must be recorded with why it has none, without stopping the next
batch. A misspelt --tags fails before anything runs, naming the valid tags.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.integration import workloads_lab  # noqa: E402

pytestmark = workloads_lab.MARKS

# The play as playbooks/experiments.yml has it, without the fabric validation (the test
# gives the validated fabric and the structured configs as variables).
PLAYBOOK = """\
- name: Run the seed experiments on a host pair
  hosts: localhost
  gather_facts: false
  tags: [always]
  roles:
    - role: rdma_experiments
"""
SETTINGS = {
    "transports": ["tcp", "rdma"],
    "sizes": [65536],
    "pairs": [1, 2],
    "compute": [False],
    "mib_per_pair": 1,
    "duration": 1,
    "numa_processes": [2],
    "rcat_mib": [2],
    "latency_iterations": 20,
}
# The pair's NIC: lo has no PCI device, so no NIC-local cores (and no far ones).
STRUCTURED = {"network": {"bond": None, "vlans": []}, "nics": [{"ports": [{"netdev": "lo"}]}]}


def _play(tmp_path: Path, bin_dir: Path, *extra: str) -> subprocess.CompletedProcess:
    host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    fabric = {
        "hosts": {name: {"bond": {"address": "127.0.0.1/8"}} for name in ("h1", "h2")},
        "vlans": [],
        "workloads": {"pairs": [{"name": "p1", "client": "h1", "server": "h2", "vlan": 1}]},
    }
    inventory = {
        "all": {
            "hosts": {"localhost": host},
            "children": {"hosts": {"hosts": {"h1": host, "h2": host}}},
            "vars": {
                "cxfab_fabric": fabric,
                "cxfab_structured": {"h1": STRUCTURED, "h2": STRUCTURED},
                "rdma_experiments_settings": SETTINGS,
                "rdma_experiments_bin_dir": str(bin_dir),
                "rdma_experiments_work_dir": str(tmp_path / "work"),
                "rdma_experiments_reports_dir": str(tmp_path / "reports"),
                "rdma_experiments_timeout": 60,
            },
        }
    }
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "experiments.yml").write_text(PLAYBOOK)
    return workloads_lab.ansible_playbook(
        "-i",
        str(tmp_path / "inventory.yml"),
        *extra,
        str(tmp_path / "experiments.yml"),
        timeout=600,
    )


def _report(tmp_path: Path) -> dict:
    (stamp,) = (tmp_path / "reports").iterdir()
    for name in ("report.json", "report.md", "report.html"):
        assert (stamp / name).stat().st_size > 0, name
    return json.loads((stamp / "report.json").read_text())


def test_tcp_runs_give_figures_and_rdma_cm_runs_say_why_not(tmp_path, bin_dir):
    play = _play(tmp_path, bin_dir, "--tags", "pingpong_matrix,numa,rcat")
    assert play.returncode == 0, play.stdout[-3000:] + play.stderr[-2000:]
    records = {r["id"]: r for r in _report(tmp_path)["records"]}
    by = {
        (r["experiment"], r["tool"], r.get("transport"), r.get("pairs"), r.get("pipeline")): r
        for r in records.values()
    }
    for pairs in (1, 2):
        tcp = by[("pingpong_matrix", "pingpong", "tcp", pairs, None)]
        assert "error" not in tcp, tcp
        assert tcp["bytes_moved"] == pairs * 2 * 16 * (88 * 88 * 8 + 16)
        rdma = by[("pingpong_matrix", "pingpong", "rdma", pairs, None)]
        assert rdma["error"].startswith("server not listening on RDMA-CM port "), rdma
    numa_local = next(r for r in records.values() if r["experiment"] == "numa")
    assert numa_local["placement"] == "local" and numa_local["processes"] == 2, numa_local
    assert len(numa_local["per_process"]) == 2 and numa_local["bits_per_second"] > 0
    far = [r for r in records.values() if r["experiment"] == "numa" and r["placement"] == "far"]
    assert (
        far
        and far[0]["error"].startswith("skipped: ")
        and "NIC-local cores unknown" in far[0]["error"]
    )
    for pipeline in (1, 2):
        assert "error" not in by[("rcat", "rcat", "tcp", 1, pipeline)]
        assert "RDMA-CM" in by[("rcat", "rcat", "rdma", 1, pipeline)]["error"]
    assert "[1/1] pingpong_matrix, numa, rcat: 12 runs" in play.stdout  # one batch, 3 calls
    leftovers = subprocess.run(["pgrep", "-f", str(bin_dir)], capture_output=True, text=True)
    assert leftovers.stdout == "", "a server outlived its batch"


def test_a_misspelt_tag_fails_naming_the_valid_tags_and_runs_nothing(tmp_path, bin_dir):
    play = _play(tmp_path, bin_dir, "--tags", "rcta")
    assert play.returncode != 0
    assert "--tags rcta: not an experiment; the tags are pingpong_matrix, " in play.stdout
    assert not (tmp_path / "reports").exists() and not (tmp_path / "work").exists()


def test_bad_settings_fail_naming_the_key_path(tmp_path, bin_dir):
    play = _play(tmp_path, bin_dir, "-e", '{"rdma_experiments_settings": {"sizes": [12]}}')
    assert play.returncode != 0
    assert "rdma_experiments_settings.sizes[0]: 12 is not an integer in [4096" in play.stdout
    assert not (tmp_path / "work").exists()
