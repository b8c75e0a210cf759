"""The workload role's runs (tasks_from: run) for real, with the controller as both hosts.

The plan holds the runs that need no RDMA device: pingpong over TCP at two sizes,
pingpong over shared memory (no server), iperf3. The first run's port is held by
this test, so its pingpong server cannot listen: that run must be recorded with the
server's reason while every later run still gets its figure. The test's listener
hangs up on every connection, so the run's client fails at once (refused, it would
retry its connect for 30 s). One ansible-playbook
run (local connection) also shows the batch's cost: three module calls per pair
(roles/rdma_workloads/tasks/batch.yml, the experiments' path too).
In check mode nothing runs and every run is recorded as not run.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.integration import workloads_lab  # noqa: E402

pytestmark = workloads_lab.MARKS

SUCCESS_KEYS = {"pair", "tool", "transport", "size_bytes", "bits_per_second"}
FAILURE_KEYS = SUCCESS_KEYS | {"error"}


def _fabric() -> dict:
    return {
        "hosts": {
            "h1": {"bond": {"address": "127.0.0.1/8"}},
            "h2": {"bond": {"address": "127.0.0.1/8"}},
        },
        "workloads": {
            "transports": ["tcp", "shm"],
            "message_sizes": [4096, 65536],
            "iterations": 20,
            "pairs": [{"name": "p1", "client": "h1", "server": "h2", "vlan": 1}],
        },
    }


def _play(tmp_path: Path, bin_dir: Path, port: int, *extra: str) -> subprocess.CompletedProcess:
    variables = {
        "cxfab_fabric": _fabric(),
        "rdma_workloads_dir": str(workloads_lab.installed_opt(tmp_path, bin_dir)),
        "rdma_workloads_port_base": port,
        "rdma_workloads_duration": 1,
        "rdma_workloads_listen_timeout": 10,
        "rdma_workloads_timeout": 60,
    }
    return workloads_lab.run_play(tmp_path, variables, "-v", *extra, timeout=120)


def test_a_batch_records_every_run_and_a_failed_server_does_not_stop_the_next(tmp_path, bin_dir):
    # The first run's port: its server cannot listen there, its client is hung up on.
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(8)
    port_base = holder.getsockname()[1]
    with workloads_lab.hanging_up(holder):
        run = _play(tmp_path, bin_dir, port_base)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    results = json.loads((tmp_path / "build" / "workloads" / "results.json").read_text())
    runs = [(r["tool"], r["transport"], r["size_bytes"]) for r in results]
    assert runs == [
        ("pingpong", "tcp", 4096),
        ("pingpong", "tcp", 65536),
        ("pingpong", "shm", 4096),
        ("pingpong", "shm", 65536),
        ("iperf3", "tcp", None),
    ]
    failed, *measured = results
    assert set(failed) == FAILURE_KEYS and failed["bits_per_second"] is None
    # The client's reason first, then the server's own: it could not listen.
    assert failed["error"].startswith("Run the client: "), failed["error"]
    assert re.search(r"\) pingpong: (send|recv): ", failed["error"]), failed["error"]
    assert re.search(r"\(server: non-zero return code 1 .*in use", failed["error"]), failed
    for record in measured:
        expected = SUCCESS_KEYS | ({"checksum"} if record["tool"] == "pingpong" else set())
        assert set(record) == expected, record
        assert record["pair"] == "p1" and record["bits_per_second"] > 0, record
    # Same data, same checksum, whichever transport carried it.
    assert measured[0]["checksum"] == measured[2]["checksum"]
    # The whole pair in three module calls on its hosts; the servers' directory is gone.
    calls = re.findall(r"^TASK \[rdma_workloads : (.+?)\]", run.stdout, re.M)
    assert calls.count("Start the servers") == 1
    assert calls.count("Run the clients") == 1
    assert calls.count("Wait for the servers to finish") == 1
    assert not (tmp_path / "opt" / "servers" / "p1").exists()


def test_check_mode_runs_nothing_and_records_every_run_as_not_run(tmp_path, bin_dir):
    run = _play(tmp_path, bin_dir, 18500, "--check")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    results = json.loads((tmp_path / "playbooks" / "results.json").read_text())
    assert len(results) == 5
    assert {r["error"] for r in results} == {"Run the client: not run in check mode"}
    assert not (tmp_path / "opt" / "servers").exists()
