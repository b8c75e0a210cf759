"""Parsers of the reference tools on recorded outputs (tests/unit/outputs, sources inside)."""

import json
from pathlib import Path

import pytest
from cxfab.workloads import pair_runs as workloads
from cxfab.workloads.experiments import parsers

OUTPUTS = Path(__file__).parent / "outputs"


def recorded(name: str) -> str:
    """A recorded output without its `# source` header (ended by `# ---`)."""
    text = (OUTPUTS / name).read_text()
    if name.endswith(".json"):
        return text
    header, sep, body = text.partition("# ---\n")
    assert sep and header.startswith("#"), f"{name} must name its source"
    return body


# ---------------------------------------------------------------- qperf


def test_qperf_verbose_tcp_bw_and_lat_with_cpu_use():
    out = parsers.qperf_results(recorded("qperf_tcp_v.txt"), ["tcp_bw", "tcp_lat"])
    assert out["tcp_bw"]["bw"] == pytest.approx(1.49e9)
    assert out["tcp_bw"]["send_cost"] == pytest.approx(1.33)  # sec/GB
    assert out["tcp_bw"]["send_cpus_used"] == 199
    assert out["tcp_bw"]["recv_cpus_used"] == 199
    assert out["tcp_lat"]["latency"] == pytest.approx(12.3e-6)
    assert out["tcp_lat"]["msg_rate"] == pytest.approx(81.3e3)
    assert out["tcp_lat"]["loc_cpus_used"] == 200


def test_qperf_unified_units_read_the_same_quantities():
    out = parsers.qperf_results(recorded("qperf_tcp_uu.txt"), ["tcp_bw"])["tcp_bw"]
    assert out["bw"] == 1835335680
    assert out["time"] == pytest.approx(1.0)
    assert out["send_cost"] == pytest.approx(1.086769635)  # 1086769635 ns/GB


def test_qperf_very_verbose_sizes_counts_and_split_cpu():
    out = parsers.qperf_results(recorded("qperf_tcp_vv.txt"), ["tcp_bw"])["tcp_bw"]
    assert out["msg_size"] == 65536  # "64 KiB (65,536)": the exact count
    assert out["send_msgs"] == 56638
    assert out["send_bytes"] == pytest.approx(3.71e9)
    assert out["send_cpus_user"] == pytest.approx(93.5)
    assert out["send_cpus_kernel"] == pytest.approx(66.5)


def test_qperf_infiniband_capture_rdma_read_with_cpu_per_side():
    out = parsers.qperf_results(recorded("qperf_ib_vv.txt"), ["rc_rdma_read_bw", "tcp_lat"])
    read = out["rc_rdma_read_bw"]
    assert read["bw"] == pytest.approx(3.51e9)
    assert read["send_cost"] == pytest.approx(0.023)
    assert read["recv_cpus_used"] == pytest.approx(63.1)
    assert read["send_msgs"] == pytest.approx(6.42e6)  # "6.42 million"
    assert read["recv_max_cqe"] == 21
    assert out["tcp_lat"]["rem_cpus_used"] == pytest.approx(41.1)
    assert out["tcp_lat"]["loc_send_msgs"] == 213395


def test_qperf_cm1_captured_on_the_lab_in_its_own_units():
    tests = ["rc_rdma_write_bw", "rc_rdma_read_bw", "tcp_bw", "rc_lat", "tcp_lat"]
    out = parsers.qperf_results(recorded("qperf_lab_cm1_vv.txt"), [*tests, "quit"])
    assert out["rc_rdma_write_bw"]["bw"] == pytest.approx(2.24e6)  # MB/sec
    assert out["rc_rdma_write_bw"]["msg_rate"] == 34  # "/sec"
    assert out["rc_rdma_write_bw"]["send_cost"] == pytest.approx(6.71)  # sec/GB
    # The read's CPU: both sides print one here, the reader (recv_) does the work.
    assert out["rc_rdma_read_bw"]["recv_cpus_used"] == pytest.approx(11.4)
    assert out["rc_rdma_read_bw"]["send_cpus_used"] == pytest.approx(0.5)
    assert out["rc_lat"]["latency"] == pytest.approx(14.1e-3)  # ms
    assert out["rc_lat"]["msg_size"] == 65536
    assert out["tcp_lat"]["rem_cpus_used"] == pytest.approx(15.4)
    assert out["quit"] == {}


def test_qperf_default_rdma_tests():
    out = parsers.qperf_results(
        recorded("qperf_rdma_default.txt"), ["rc_rdma_write_bw", "rc_rdma_read_bw", "rc_lat"]
    )
    assert out["rc_rdma_write_bw"]["bw"] == pytest.approx(4.67e9)
    assert out["rc_rdma_read_bw"]["bw"] == pytest.approx(4.62e9)
    assert out["rc_lat"]["latency"] == pytest.approx(12.2e-6)
    assert workloads.qperf_bps(recorded("qperf_rdma_default.txt"), "rc_rdma_read_bw") == (
        pytest.approx(4.62e9 * 8)
    )


def test_qperf_failed_test_reports_its_error_line():
    with pytest.raises(ValueError, match="rc_rdma_write_bw failed: failed to find any InfiniBand"):
        parsers.qperf_results(recorded("qperf_rdma_no_device.txt"), ["rc_rdma_write_bw"])


def test_qperf_missing_test_names_it_and_shows_the_output():
    with pytest.raises(ValueError, match=r"no result for rc_lat \(output: rc_rdma_write_bw:"):
        parsers.qperf_results(recorded("qperf_rdma_no_device.txt"), ["rc_lat"])


def test_qperf_unknown_unit_fails_closed():
    with pytest.raises(ValueError, match=r"tcp_bw\.bw: unknown unit 'furlongs/sec'"):
        parsers.qperf_results("tcp_bw:\n    bw  =  3 furlongs/sec\n")


def test_qperf_connection_failure():
    with pytest.raises(ValueError, match="tcp_bw failed: localhost: failed to connect"):
        parsers.qperf_results("tcp_bw:\nlocalhost: failed to connect\n", ["tcp_bw"])


# ---------------------------------------------------------------- perftest


def test_perftest_write_latency_captured_on_the_lab_every_column_in_seconds():
    (row,) = parsers.perftest_lat_rows(recorded("ib_write_lat_lab_rxe.txt"))
    assert row["bytes"] == 2 and row["iterations"] == 1000
    assert row["t_min_s"] == pytest.approx(3083.16e-6)
    assert row["t_max_s"] == pytest.approx(404689.98e-6)
    assert row["t_typical_s"] == pytest.approx(14757.01e-6)
    assert row["t_avg_s"] == pytest.approx(24193.92e-6)
    assert row["t_stdev_s"] == pytest.approx(5412.82e-6)
    assert row["percentile_99_s"] == pytest.approx(252470.46e-6)
    assert row["percentile_99.9_s"] == pytest.approx(404689.98e-6)


def test_perftest_read_latency_captured_on_the_lab():
    (row,) = parsers.perftest_lat_rows(recorded("ib_read_lat_lab_rxe.txt"), "ib_read_lat")
    assert (row["bytes"], row["iterations"]) == (2, 1000)
    assert row["t_typical_s"] == pytest.approx(28248.11e-6)
    assert row["percentile_99.9_s"] == pytest.approx(654725.78e-6)


def test_perftest_latency_duration_mode():
    (row,) = parsers.perftest_lat_rows(recorded("ib_read_lat_duration.txt"), "ib_read_lat")
    assert row == {
        "bytes": 64,
        "iterations": 1523012,
        "t_avg_s": pytest.approx(3.28e-6),
        "tps_average": pytest.approx(304602.40),
    }


def test_perftest_latency_without_table():
    with pytest.raises(ValueError, match=r"ib_read_lat: no latency table .*Couldn't connect"):
        parsers.perftest_lat_rows(" Couldn't connect to 10.0.0.2:18515\n", "ib_read_lat")


@pytest.mark.parametrize(
    "name", ["ib_write_lat_out_json_4.5-0.17.txt", "ib_write_lat_out_json_master.txt"]
)
def test_perftest_out_json_both_dialects(name):
    results = parsers.perftest_json_results(recorded(name), "ib_write_lat")
    assert results["MsgSize"] == 2
    assert results["n_iterations"] == 1000
    assert results["t_typical"] == pytest.approx(1.06)
    assert results["percentile_99.9"] == pytest.approx(5.32)


def test_perftest_old_dialect_is_not_json_and_new_one_carries_cpu():
    with pytest.raises(ValueError):
        json.loads(recorded("ib_write_lat_out_json_4.5-0.17.txt"))
    assert parsers.perftest_json_results(recorded("ib_write_lat_out_json_master.txt"))[
        "CPU_util"
    ] == pytest.approx(12.5)


def test_perftest_out_json_without_results():
    with pytest.raises(ValueError, match="no results object"):
        parsers.perftest_json_results('{"test_info": {}}', "ib_write_bw")
    with pytest.raises(ValueError, match="no results object"):
        parsers.perftest_json_results("", "ib_write_bw")


def test_perftest_bw_megabytes_are_binary():
    rows = parsers.perftest_bw_rows(recorded("ib_read_bw_mb.txt"), "ib_read_bw")
    assert [r["bytes"] for r in rows] == [2, 4, 8]
    assert rows[2]["bw_average_bps"] == pytest.approx(19.50 * 2**20 * 8)
    assert rows[2]["bw_peak_bps"] == pytest.approx(19.51 * 2**20 * 8)
    assert rows[0]["msg_rate_mpps"] == pytest.approx(2.450225)


def test_perftest_bw_gbits_row_with_tabs():
    (row,) = parsers.perftest_bw_rows(recorded("ib_write_bw_gbits.txt"))
    assert row["iterations"] == 224958464
    assert row["bw_average_bps"] == pytest.approx(0.48e9)
    assert workloads.perftest_bps(recorded("ib_write_bw_gbits.txt")) == pytest.approx(0.48e9)


def test_perftest_bw_cpu_util_column():
    text = (
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
        "    CPU_Util[%]\n"
        " 65536      10000            9.10               9.05   \t\t   0.017262\t    41.25\n"
    )
    (row,) = parsers.perftest_bw_rows(text)
    assert row["cpu_util_percent"] == pytest.approx(41.25)


# ---------------------------------------------------------------- iperf3


def test_iperf3_one_stream():
    out = parsers.iperf3_result(recorded("iperf3_p1.json"), streams=1)
    data = json.loads(recorded("iperf3_p1.json"))
    assert out["streams"] == 1
    assert out["bits_per_second"] == data["end"]["sum_received"]["bits_per_second"]
    assert out["per_stream"][0]["bits_per_second"] == out["bits_per_second"]
    assert set(out["cpu"]) >= {"host_total", "remote_total", "host_system"}


def test_iperf3_four_streams_sum_and_each_stream():
    out = parsers.iperf3_result(recorded("iperf3_p4.json"), streams=4)
    assert out["streams"] == 4
    assert sum(s["bits_per_second"] for s in out["per_stream"]) == pytest.approx(
        out["bits_per_second"], rel=0.02
    )
    assert out["cpu"]["remote_total"] == pytest.approx(54.859381701375945)
    assert workloads.iperf3_bps(recorded("iperf3_p4.json")) == out["bits_per_second"]


def test_iperf3_fewer_streams_than_asked():
    with pytest.raises(ValueError, match="1 streams reported, 4 asked for"):
        parsers.iperf3_result(recorded("iperf3_p1.json"), streams=4)


def test_iperf3_connection_refused_and_not_json():
    with pytest.raises(ValueError, match="unable to connect to server: Connection refused"):
        parsers.iperf3_result(
            '{"start": {}, "end": {}, "error": "unable to connect to server: Connection refused"}'
        )
    with pytest.raises(ValueError, match=r"iperf3: output is not JSON \(output: iperf3: error"):
        parsers.iperf3_result("iperf3: error - the server is busy running a test\n")


def test_perftest_zero_bandwidth_is_no_reading():
    # What ib_write_bw -F printed on a loaded TCG guest whose cycle counter it
    # could not calibrate: the iterations ran, the figure is not a measurement.
    text = (
        " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
        " 65536      50               0.00               0.00   \t\t   0.000000\n"
    )
    with pytest.raises(ValueError, match="could not calibrate"):
        parsers.perftest_bw_rows(text)
    run = {"tool": "ib_write_bw", "transport": "rdma", "size_bytes": 65536}
    assert "could not calibrate" in workloads.client_error(run, text)
