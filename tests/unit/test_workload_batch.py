"""The one path of a batch of runs (workloads and experiments): its clients, one run
after another with a run's clients together, judged by their exit status or their
reading; which runs are skipped for a server not listening; which servers are waited for."""

import json
import sys
import time

import pytest
from cxfab.workloads import batch
from cxfab.workloads import pair_runs as workloads

PRINT_TIME = (
    "import time, sys; time.sleep(0.6); print(time.monotonic()); sys.exit(int(sys.argv[1]))"
)


def test_a_runs_clients_run_together_and_runs_one_after_another():
    clients = [[sys.executable, "-c", PRINT_TIME, "0"] for _ in range(3)]
    started = time.monotonic()
    first, skipped, second = batch.run_groups(
        [{"clients": clients}, {"skip": "server not listening"}, {"clients": clients[:1]}], 30
    )
    elapsed = time.monotonic() - started
    ends = [float(c["stdout"]) for c in first["clients"]]
    assert max(ends) - min(ends) < 0.5, "the run's clients did not start together"
    assert float(second["clients"][0]["stdout"]) > max(ends) + 0.5, "runs overlapped"
    assert elapsed < 3 * 0.6 + 1.0
    assert skipped == {
        "clients": [],
        "skip": "server not listening",
        "error": "server not listening",
    }
    assert [c["rc"] for c in first["clients"]] == [0, 0, 0] and first["error"] == ""


def test_a_failing_or_hung_client_is_reported_and_the_next_run_goes_on():
    failed, hung, fine = batch.run_groups(
        [
            {"clients": [[sys.executable, "-c", PRINT_TIME, "3"]]},
            {"clients": [["sh", "-c", "sleep 600 & sleep 600"]]},
            {"clients": [["echo", "ok"]]},
        ],
        timeout=2,
    )
    assert failed["clients"][0]["rc"] == 3 and failed["error"] == "non-zero return code 3"
    # The forked sleep holds the output pipes: only a process-group kill ends the read.
    assert hung["clients"][0]["rc"] is None and hung["error"] == "timed out after 2 s"
    assert fine["clients"][0]["stdout"] == "ok\n" and fine["error"] == ""


def test_a_client_that_cannot_start_says_why():
    (run,) = batch.run_groups([{"clients": [["/nonexistent/iperf3", "-c", "x"]]}], 30)
    assert run["error"] == "/nonexistent/iperf3: No such file or directory"


def test_judged_by_its_reading_a_client_that_exits_0_without_a_figure_fails():
    # iperf3 -J exits 0 on a refused connection: the output, not the status, says so.
    refused = {"error": "unable to connect to server: Connection refused"}
    run = {"tool": "iperf3", "transport": "tcp", "size_bytes": None}
    silent = {**run, "clients": [["echo", json.dumps(refused)]]}
    fine = {**run, "clients": [["echo", json.dumps({"end": {"sum": {"bits_per_second": 5.0}}})]]}
    by_reading = batch.run_groups([silent, fine], 30, workloads.client_error)
    assert [r["error"] for r in by_reading] == [
        "iperf3: unable to connect to server: Connection refused",
        "",
    ]
    assert [r["error"] for r in batch.run_groups([silent], 30)] == [""]  # by exit status


@pytest.mark.parametrize(
    ("runs", "message"),
    [
        ("x", "runs: expected a list"),
        ([{"clients": []}], r"runs\[0\].clients: expected a non-empty list"),
        ([{"skip": "why"}, {"clients": [["a", 1]]}], r"runs\[1\].clients\[0\]: expected"),
    ],
)
def test_bad_runs_are_refused_naming_the_index(runs, message):
    with pytest.raises(ValueError, match=message):
        batch.check_client_runs(runs)


SERVERS = [
    {"tool": "t", "server": ["s0"], "listen": {"kind": "rdma_cm", "port": 18600}, "run": 0},
    {"tool": "t", "server": ["s1"], "listen": {"kind": "rdma_cm", "port": 18601}, "run": 0},
    {"tool": "t", "server": ["s2"], "listen": {"kind": "tcp", "port": 18602}, "run": 2},
]
RUNS = [
    {"clients": [["c0"], ["c1"]], "skip": ""},
    {"clients": [["c"]], "skip": "skipped: one NUMA node"},
    {"clients": [["c2"]], "skip": "", "tool": "iperf3"},
]


def test_a_run_whose_server_does_not_listen_is_skipped_naming_its_ports():
    missing = [
        {"kind": "rdma_cm", "port": 18600, "why": "its server exited without listening"},
        {"kind": "rdma_cm", "port": 18601, "why": "not listening"},
        {"kind": "tcp", "port": 18601, "why": "another kind on the same port"},
    ]
    first, second, third = batch.client_runs(RUNS, SERVERS, missing)
    assert first == {
        "clients": [],
        "skip": "server not listening on RDMA-CM port 18600, 18601: "
        "its server exited without listening",
    }
    assert second["skip"] == "skipped: one NUMA node" and second["clients"] == []
    assert third == {**RUNS[2], "skip": ""}  # the run's other keys stay for the judgement
    assert batch.client_runs(RUNS, SERVERS, [])[0] == RUNS[0]


def test_only_the_servers_of_runs_without_error_are_waited_for_and_outcomes_go_to_their_run():
    outcomes = [{"error": ""}, {"error": "skipped"}, {"error": "non-zero return code 1"}]
    assert batch.servers_to_wait_for(SERVERS, outcomes) == [0, 1]
    assert batch.servers_to_wait_for(SERVERS, [{"error": ""}] * 3) == [0, 1, 2]
    collected = [{"rc": 0}, {"rc": 1}, {"rc": None}]
    assert batch.servers_by_run(SERVERS, collected, 3) == [
        [{"rc": 0}, {"rc": 1}],
        [],
        [{"rc": None}],
    ]
    assert batch.servers_by_run(SERVERS, [], 3) == [[], [], []]  # check mode: none collected


def test_a_run_is_good_only_when_every_one_of_its_clients_exited_0():
    (run,) = batch.run_groups([{"clients": [["true"], ["sh", "-c", "exit 5"], ["true"]]}], 30)
    assert [c["rc"] for c in run["clients"]] == [0, 5, 0]
    assert run["error"] == "non-zero return code 5"
