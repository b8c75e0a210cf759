"""Workload output parsers and the plan of a host pair's runs."""

import json

import pytest
from cxfab import workloads

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
