"""Workload output parsers and the plan of a host pair's runs."""

import json

import pytest
from cxfab.workloads import pair_runs as workloads

PERFTEST = """\
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF          Device         : rxe0
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      2741             0.12               0.09                0.000172
---------------------------------------------------------------------------------------
"""

QPERF = """\
rc_rdma_write_bw:
    bw  =  9.5 GB/sec
tcp_bw:
    bw  =  812 MB/sec
quit:
"""

FABRIC = {
    "hosts": {
        "h1": {
            "bond": {"address": "12.0.0.1/24"},
            "vlans": [{"id": 30, "address": "12.0.30.1/24"}],
        },
        "h2": {
            "bond": {"address": "12.0.0.2/24"},
            "vlans": [{"id": 30, "address": "12.0.30.2/24"}],
        },
    },
    "workloads": {
        "transports": ["tcp", "rdma", "shm"],
        "message_sizes": [4096, 65536],
        "iterations": 10,
        "pipeline": 2,
        "compute": True,
    },
}


def test_perftest_average_column_in_bits():
    assert workloads.perftest_bps(PERFTEST) == pytest.approx(0.09e9)


def test_perftest_without_table_says_so():
    with pytest.raises(ValueError, match="no result table"):
        workloads.perftest_bps("Couldn't connect to 10.0.0.1:18500\n")


def test_qperf_units_bytes_to_bits():
    assert workloads.qperf_bps(QPERF, "rc_rdma_write_bw") == pytest.approx(76e9)
    assert workloads.qperf_bps(QPERF, "tcp_bw") == pytest.approx(812e6 * 8)


def test_iperf3_receiver_sum_is_used():
    out = json.dumps(
        {"end": {"sum_sent": {"bits_per_second": 2e8}, "sum_received": {"bits_per_second": 1e8}}}
    )
    assert workloads.iperf3_bps(out) == 1e8


def test_iperf3_error_is_raised():
    with pytest.raises(ValueError, match="unable to connect"):
        workloads.iperf3_bps('{"error": "unable to connect to server"}')


def test_plan_addresses_ports_and_references():
    pair = {"name": "p", "client": "h1", "server": "h2", "vlan": 30}
    plan = workloads.plan_pair(FABRIC, pair, "/opt/x", 18500, 3, "/in", "/out", {"server": "2-3"})
    tools = [(r["tool"], r["transport"], r["size_bytes"]) for r in plan]
    assert tools[:4] == [
        ("pingpong", "tcp", 4096),
        ("pingpong", "tcp", 65536),
        ("pingpong", "rdma", 4096),
        ("pingpong", "rdma", 65536),
    ]
    assert {"iperf3", "ib_write_bw", "qperf", "rcat"} <= {r["tool"] for r in plan}
    qperf = next(r for r in plan if r["tool"] == "qperf")
    assert "-cm1" in qperf["client"], "qperf must use RDMA-CM to find RoCE GIDs"
    ports = [r["port"] for r in plan]
    assert len(set(ports)) == len(ports), "every run needs its own port"
    first = plan[0]
    assert "12.0.30.2:18500" in first["client"]
    assert first["server"][-2:] == ["--cpus", "2-3"]
    assert "--cpus" not in first["client"]
    shm = [r for r in plan if r["transport"] == "shm"]
    assert shm and all(r["server"] is None and "--loopback" in r["client"] for r in shm)


def test_plan_untagged_pair_uses_the_bond_address():
    pair = {"name": "p", "client": "h1", "server": "h2", "vlan": 1}
    plan = workloads.plan_pair(FABRIC, pair, "/b", 1, 1, "/i", "/o")
    assert any("12.0.0.2:1" in arg for arg in plan[0]["client"])


def test_result_of_pingpong_is_client_to_server_bits():
    run = {"tool": "pingpong", "transport": "tcp", "size_bytes": 4096}
    out = '{"checksum": "00ff", "bytes_per_s_client_to_server": 1000.0}'
    assert workloads.run_result(run, out) == {
        "tool": "pingpong",
        "transport": "tcp",
        "size_bytes": 4096,
        "bits_per_second": 8000.0,
        "checksum": "00ff",
    }


IPERF3_REFUSED = """{
  "start": {"connected": [], "version": "iperf 3.12"},
  "intervals": [],
  "end": {},
  "error": "unable to connect to server: Connection refused"
}"""


def test_client_error_sees_iperf3_refused_despite_exit_status_0():
    run = {"tool": "iperf3", "transport": "tcp", "size_bytes": None}
    assert "Connection refused" in workloads.client_error(run, IPERF3_REFUSED)


def test_client_error_is_empty_for_a_result():
    run = {"tool": "pingpong", "transport": "tcp", "size_bytes": 4096}
    out = '{"checksum": "00ff", "bytes_per_s_client_to_server": 1000.0}'
    assert workloads.client_error(run, out) == ""


def test_client_error_names_unparsable_output():
    run = {"tool": "ib_write_bw", "transport": "rdma", "size_bytes": 65536}
    assert "no result table" in workloads.client_error(run, "Couldn't connect to 12.0.30.2")
    run = {"tool": "pingpong", "transport": "rdma", "size_bytes": 65536}
    assert workloads.client_error(run, "")


# ---------------------------------------------------------------- records of a batch

PINGPONG = {"tool": "pingpong", "transport": "tcp", "size_bytes": 4096, "port": 1}
PINGPONG_OUT = '{"checksum": "00ff", "bytes_per_s_client_to_server": 1000.0}'


def _client(error="", stdout=PINGPONG_OUT, stderr=""):
    outcome = {"rc": 0 if not error else 1, "stdout": stdout, "stderr": stderr, "fault": ""}
    return {"clients": [outcome], "skip": "", "error": error}


def _server(error="", stderr="", killed=False):
    return {"rc": None, "stdout": "", "stderr": stderr, "killed": killed, "error": error}


def test_record_of_a_measured_run_keeps_the_keys_verify_reads():
    record = workloads.run_record("p1", PINGPONG, _client(), [_server()])
    keys = ["pair", "tool", "transport", "size_bytes", "bits_per_second", "checksum"]
    assert list(record) == keys
    assert record["pair"] == "p1" and record["bits_per_second"] == 8000.0


def test_record_of_a_client_without_reading_adds_the_server_own_failure():
    record = workloads.run_record(
        "p1",
        PINGPONG,
        _client("Expecting value: line 1 column 1 (char 0)", "", "pingpong: connect: refused\n"),
        [_server("non-zero return code 1", "pingpong: bind: Address already in use\n")],
    )
    assert record == {
        "pair": "p1",
        "tool": "pingpong",
        "transport": "tcp",
        "size_bytes": 4096,
        "bits_per_second": None,
        "error": "Run the client: Expecting value: line 1 column 1 (char 0) "
        "pingpong: connect: refused (server: non-zero return code 1 "
        "pingpong: bind: Address already in use)",
    }


def test_record_leaves_out_a_server_killed_for_want_of_a_client():
    killed = _server("still running without a client: killed", killed=True)
    record = workloads.run_record("p1", PINGPONG, _client("timed out after 5 s"), [killed])
    assert record["error"] == "Run the client: timed out after 5 s"


def test_record_of_a_server_that_failed_after_its_client_read_a_figure():
    server = _server("non-zero return code 2", "x" * 300 + "lost the peer\n")
    record = workloads.run_record("p1", PINGPONG, _client(), [server])
    assert record["bits_per_second"] is None
    # The end of the server's stderr, 200 characters at most, as the task rescue kept it.
    assert (
        record["error"]
        == "Wait for the server to finish: non-zero return code 2 "
        + ("x" * 300 + "lost the peer\n")[-200:].strip()
    )


def test_batch_records_in_plan_order_and_refuse_mismatched_outcomes():
    shm = {"tool": "pingpong", "transport": "shm", "size_bytes": 4096, "server": None}
    plan = [dict(PINGPONG, server=["s"]), shm]
    outcome = {"runs": [_client(), _client()], "servers": [[_server()], []]}
    records = workloads.batch_records(plan, outcome, "p1")
    assert [r["transport"] for r in records] == ["tcp", "shm"]
    assert all("error" not in r for r in records)
    # Check mode: no server outcome at all.
    checked = {"runs": [_client("not run in check mode")] * 2, "servers": [[], []]}
    assert [r["error"] for r in workloads.batch_records(plan, checked, "p1")] == [
        "Run the client: not run in check mode"
    ] * 2
    with pytest.raises(ValueError, match="p1: 2 planned runs, 1 client and 2 server outcomes"):
        workloads.batch_records(plan, {"runs": [_client()], "servers": [[], []]}, "p1")


def test_a_failed_batch_gives_every_run_its_reason():
    records = workloads.batch_records([PINGPONG], {"error": "Run the clients: unreachable"}, "p1")
    assert records == [
        {
            "pair": "p1",
            "tool": "pingpong",
            "transport": "tcp",
            "size_bytes": 4096,
            "bits_per_second": None,
            "error": "Run the clients: unreachable",
        }
    ]


def test_the_batch_of_a_plan_waits_for_each_server_on_its_port_as_it_listens():
    pair = {"name": "p", "client": "h1", "server": "h2", "vlan": 30}
    plan = workloads.plan_pair(FABRIC, pair, "/opt/x", 18500, 3, "/in", "/out")
    data = workloads.batch(plan)
    by_run = {e["run"]: e for e in data["servers"]}
    # Every run with a server, none without (shm loopback), each on the run's port.
    assert sorted(by_run) == [i for i, run in enumerate(plan) if run["server"]]
    assert all(e["listen"]["port"] == plan[i]["port"] for i, e in by_run.items())
    assert all(e["server"] == plan[i]["server"] for i, e in by_run.items())
    kinds = {
        (plan[i]["tool"], plan[i]["transport"]): e["listen"]["kind"] for i, e in by_run.items()
    }
    assert (
        kinds[("pingpong", "tcp")] == kinds[("iperf3", "tcp")] == kinds[("qperf", "rdma")] == "tcp"
    )
    # RDMA-CM has no TCP socket: pingpong and rcat over rdma, ib_write_bw with -R.
    assert kinds[("pingpong", "rdma")] == kinds[("rcat", "rdma")] == "rdma_cm"
    assert kinds[("ib_write_bw", "rdma")] == "rdma_cm"
    assert [r["clients"] for r in data["runs"]] == [[run["client"]] for run in plan]
    assert data["runs"][0]["tool"] == plan[0]["tool"]  # judged by its reading


def test_ib_write_bw_with_the_gid_index_listens_on_its_tcp_port():
    run = {"tool": "ib_write_bw", "transport": "rdma", "server": ["ib_write_bw", "-x", "3"]}
    assert workloads.listen_kind(run) == "tcp"
    assert workloads.listen_kind({**run, "server": ["ib_write_bw", "-R"]}) == "rdma_cm"


@pytest.mark.parametrize(
    ("runs", "message"),
    [
        ({"tool": "x"}, "runs: expected a list of runs, got dict"),
        ([{"client": ["c"]}], r"runs\[0\]: expected a run with a 'tool'"),
        ([{"tool": "t", "client": []}], r"runs\[0\].client: expected a non-empty list"),
        ([{"tool": "t", "client": ["c"], "server": "s"}], r"runs\[0\].server: expected"),
        ([{"tool": "t", "client": ["c", 1]}], r"runs\[0\].client: expected"),
    ],
)
def test_check_runs_names_the_bad_run(runs, message):
    with pytest.raises(ValueError, match=message):
        workloads.check_runs(runs)


def test_check_runs_accepts_the_plan():
    pair = {"name": "p", "client": "h1", "server": "h2", "vlan": 30}
    workloads.check_runs(workloads.plan_pair(FABRIC, pair, "/opt/x", 18500, 3, "/in", "/out"))


def test_qos_iperf3_server_is_a_foreground_server_on_the_target():
    run = workloads.qos_iperf3_server({"vlan": 20, "address": "10.20.0.2", "port": 5220})
    assert run == {"tool": "iperf3", "server": ["iperf3", "-s", "-B", "10.20.0.2", "-p", "5220"]}
    # What the servers module accepts (it checks servers only), and the clients' does not.
    workloads.check_runs([run], sides=("server",))
    with pytest.raises(ValueError, match=r"runs\[0\]\.client"):
        workloads.check_runs([run])


@pytest.mark.parametrize(
    "target", [{"address": "10.20.0.2"}, {"port": 5220}, {"address": "", "port": 1}]
)
def test_qos_iperf3_server_refuses_a_target_it_cannot_serve(target):
    with pytest.raises(ValueError, match="address and an integer port"):
        workloads.qos_iperf3_server(target)
