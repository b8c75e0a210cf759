"""Run outputs -> records -> seed-shaped tables and the report files."""

import json
from pathlib import Path

import pytest
from cxfab.workloads.experiments import plan, report, results, seeds, tables, tables_more

OUTPUTS = Path(__file__).parent / "outputs"
FABRIC = {"hosts": {"h2": {"bond": {"address": "12.0.0.2/24"}}}}
PAIR = {"name": "p1", "client": "h1", "server": "h2", "vlan": 1}


def body(name):
    return (OUTPUTS / name).read_text().partition("# ---\n")[2]


def client(stdout, rc=0, stderr="", fault=""):
    return {"rc": rc, "stdout": stdout, "stderr": stderr, "fault": fault}


def pingpong_lines():
    return (OUTPUTS / "pingpong_tcp_65536.jsonl").read_text().splitlines()


def planned(experiment, **match):
    runs = plan.plan_experiments(FABRIC, PAIR, {"experiments": [experiment]}, "/b", "/w")
    return next(r for r in runs if all(r.get(k) == v for k, v in match.items()))


# ---------------------------------------------------------------- records


def test_pingpong_record_sums_pairs_averages_cpu_and_reads_the_message_bytes():
    idle, _ = pingpong_lines()
    run = {"id": "1", "experiment": "pingpong_matrix", "tool": "pingpong", "pairs": 2}
    rec = results.record(run, [client(idle), client(idle)], [])
    one = json.loads(idle)
    assert rec["bytes_per_s_total"] == pytest.approx(2 * one["bytes_per_s_total"])
    assert rec["iteration_s"] == pytest.approx(one["iteration_s"])
    assert rec["client_sys_s"] == pytest.approx(one["cpu"]["client"]["sys_s"])
    assert rec["checksums"] == [one["checksum"]]
    # 65536 B asked for: the grid is 88 x 88 doubles; each message adds a 16-byte header.
    assert rec["message_bytes"] == 88 * 88 * 8 == one["bytes_client_to_server"] // 20 - 16


def test_record_of_a_failed_or_unreadable_run_carries_the_reason():
    run = {"id": "2", "experiment": "reference_tools", "tool": "qperf", "tests": ["rc_lat"]}
    rec = results.record(run, [client(body("qperf_rdma_no_device.txt"), rc=1)], [])
    assert rec["error"].startswith("client exited 1: rc_rdma_write_bw:")
    rec = results.record(run, [client(body("qperf_rdma_no_device.txt"))], [])
    assert "no result for rc_lat" in rec["error"]
    assert "bytes_per_s" not in rec


def test_a_timed_out_client_and_its_failed_server_are_both_named():
    run = {"id": "3", "experiment": "latency", "tool": "pingpong"}
    server = {"rc": 1, "stderr": "pingpong: bind: Address already in use\n", "killed": False}
    server["error"] = "non-zero return code 1"
    rec = results.record(run, [client("", rc=None, fault="timed out after 180 s")], [server])
    assert rec["error"] == (
        "client timed out after 180 s: (empty output) (server: non-zero return code 1: "
        "pingpong: bind: Address already in use)"
    )


def test_rcat_record_reads_the_receiver_and_checks_the_byte_count():
    run = {"id": "3", "experiment": "rcat", "tool": "rcat", "size_bytes": 1048576}
    stderr = (
        'rcat: listening on 0.0.0.0:1\n{"role": "receiver", "transport": "tcp", '
        '"bytes": 1048576, "wall_s": 0.01, "bytes_per_s": 1.0e8}\n'
    )
    assert results.record(run, [client("")], [client("", stderr=stderr)])["bytes_per_s"] == 1e8
    short = stderr.replace('"bytes": 1048576', '"bytes": 4096')
    rec = results.record(run, [client("")], [client("", stderr=short)])
    assert "receiver got 4096 bytes of 1048576" in rec["error"]


def test_link_speed_of_a_virtual_nic_is_an_error_not_zero():
    run = {"id": "4", "experiment": "rcat", "tool": "link_speed"}
    assert results.record(run, [client("bond0.30 25000\n")], [])["bytes_per_s"] == 25e9 / 8
    assert "link speed unknown for eth1" in results.record(run, [client("eth1 -1\n")], [])["error"]


def test_numa_processes_add_up_and_each_must_have_its_figure():
    p1 = (OUTPUTS / "iperf3_p1.json").read_text()
    rate = json.loads(p1)["end"]["sum_received"]["bits_per_second"]
    run = planned("numa", processes=12, placement="local")
    rec = results.record(run, [client(p1)] * 12, [])
    assert rec["bits_per_second"] == pytest.approx(12 * rate)
    assert rec["per_process"] == [pytest.approx(rate)] * 12
    broken = results.record(run, [client(p1)] * 11 + [client('{"error": "busy"}')], [])
    assert broken["error"] == "iperf3: busy"


# ---------------------------------------------------------------- tables


def matrix_records(transports=(("tcp", 1.0), ("rdma", 0.5))):
    idle, busy = (json.loads(line) for line in pingpong_lines())
    recs = []
    for transport, scale in transports:
        for compute, out in ((False, idle), (True, busy)):
            out = {**out, "iteration_s": out["iteration_s"] * scale}
            run = {
                "id": f"{transport}{compute}",
                "experiment": "pingpong_matrix",
                "tool": "pingpong",
                "transport": transport,
                "size_bytes": 1048576,
                "pairs": 1,
                "compute": compute,
            }
            recs.append(results.record(run, [client(json.dumps(out))], []))
    return recs


def test_pingpong_table_in_the_seeds_shape_with_the_ratio_beside_the_seeds():
    (table,) = report.build_tables(matrix_records())
    rows = {(r["transport"], r["compute"]): r for r in table["rows"]}
    assert len(table["rows"]) == 4
    idle_tcp, idle_rdma = rows[("tcp", False)], rows[("rdma", False)]
    assert idle_tcp["seed_iteration_s"] == pytest.approx(8.805 / 10000)
    assert idle_rdma["seed_iteration_s"] == pytest.approx(3.618 / 10000)
    assert idle_tcp["seed_client_sys_s_per_GB"] == pytest.approx(3.797 / 20.96)
    one = json.loads(pingpong_lines()[0])
    moved = one["bytes_client_to_server"] + one["bytes_server_to_client"]
    assert idle_tcp["client_sys_s_per_GB"] == pytest.approx(
        one["cpu"]["client"]["sys_s"] * 1e9 / moved
    )
    ratio = table["ratios"][0]
    assert ratio["name"] == "RDMA/TCP throughput, 1024 KiB, 1 pair(s), compute off"
    assert ratio["ours"] == pytest.approx(2.0) and ratio["seed"] == pytest.approx(8.805 / 3.618)
    assert ratio["soft_roce_meaningful"] is False and "rxe" in ratio["why"]


def test_pingpong_table_keeps_rsocket_and_smc_rows():
    recs = matrix_records((("tcp", 1.0), ("rdma", 0.5), ("rsocket", 0.8), ("smc", 1.0)))
    table = tables.pingpong_table(recs)
    transports = [r["transport"] for r in table["rows"] if not r["compute"]]
    assert transports == ["rdma", "tcp", "rsocket", "smc"]
    rsocket = next(r for r in table["rows"] if r["transport"] == "rsocket")
    assert rsocket["client_sys_s_per_GB"] is not None and rsocket["seed_iteration_s"] is None
    by = {r["name"]: r["ours"] for r in table["ratios"]}
    assert by["rsocket/TCP throughput, 1024 KiB, 1 pair(s), compute off"] == pytest.approx(1.25)
    assert by["smc/TCP throughput, 1024 KiB, 1 pair(s), compute on"] == pytest.approx(1.0)


def test_reference_table_from_recorded_outputs_with_each_tools_cpu():
    qperf_run = planned("reference_tools", tool="qperf")
    ib_run = planned("reference_tools", tool="ib_write_bw")
    # rc_lat from another capture; later blocks of one test replace earlier ones.
    seed_log = body("qperf_rdma_default.txt") + body("qperf_seed000_cm1_vv.txt")
    seed_log += body("qperf_tcp_v.txt")
    recs = [
        results.record(qperf_run, [client(seed_log)], []),
        results.record(
            planned("reference_tools", tool="iperf3", streams=1),
            [client((OUTPUTS / "iperf3_p1.json").read_text())],
            [],
        ),
        results.record(
            planned("reference_tools", tool="iperf3", streams=4),
            [client((OUTPUTS / "iperf3_p4.json").read_text())],
            [],
        ),
        results.record(ib_run, [client("Couldn't connect\n")], []),
    ]
    table = tables.reference_table(recs)
    by = {r["measurement"]: r for r in table["rows"]}
    assert by["qperf rc_rdma_write_bw (B/s)"]["ours"] == pytest.approx(7.25e9)
    # The read's CPU is the reading side's (recv_cpus_used): the seed prints no send_ line.
    assert by["qperf rc_rdma_read_bw (B/s)"]["cpu_percent"] == pytest.approx(1.5)
    assert by["qperf tcp_bw (B/s)"]["cpu_percent"] == 199
    assert by["qperf tcp_lat (s, one way, 1024 KiB messages)"]["ours"] == pytest.approx(12.3e-6)
    p1 = json.loads((OUTPUTS / "iperf3_p1.json").read_text())["end"]["sum_received"]
    rdma_over_tcp = table["ratios"][0]
    assert rdma_over_tcp["ours"] == pytest.approx(7.25e9 / (p1["bits_per_second"] / 8))
    assert rdma_over_tcp["seed"] == pytest.approx(7.25 / 4.80)
    assert table["errors"] and "ib_write_bw: no result table" in table["errors"][0]


def test_reference_table_shows_perftest_cpu_column():
    rec = {"id": "a", "experiment": "reference_tools", "tool": "ib_read_bw", "bytes_per_s": 1e9}
    rec["cpu_util_percent"] = 41.5
    row = next(
        r for r in tables.reference_table([rec])["rows"] if r["measurement"].startswith("ib_read")
    )
    assert row["cpu_percent"] == 41.5


def test_numa_table_has_the_twelve_process_rows_beside_the_seed():
    recs = [
        {"id": f"{p}{n}", "experiment": "numa", "tool": "iperf3", "placement": p, "processes": n}
        | {"bits_per_second": rate}
        for p, n, rate in (
            ("local", 1, 8e8),
            ("far", 1, 4e8),
            ("local", 12, 1.2e9),
            ("far", 12, 1e9),
        )
    ]
    table = tables.numa_table(recs)
    assert [(r["processes"], r["placement"]) for r in table["rows"]] == [
        (1, "local"),
        (1, "far"),
        (12, "local"),
        (12, "far"),
    ]
    assert table["rows"][2]["seed"] == pytest.approx(37.9e9 / 8)
    twelve = table["ratios"][1]
    assert twelve["ours"] == pytest.approx(1.2) and twelve["seed"] == pytest.approx(37.9 / 4.84)


def test_rcat_table_ratios_against_memcpy_link_and_seed():
    recs = [
        {"id": "a", "experiment": "rcat", "tool": "memcpy", "bytes_per_s": 4e9},
        {"id": "b", "experiment": "rcat", "tool": "link_speed", "bytes_per_s": 1.25e9},
    ] + [
        {
            "id": f"c{pipeline}",
            "experiment": "rcat",
            "tool": "rcat",
            "transport": "tcp",
            "size_bytes": 16 << 20,
            "pipeline": pipeline,
            "bytes_per_s": rate,
        }
        for pipeline, rate in ((2, 1e9), (1, 0.5e9))
    ]
    table = tables_more.rcat_table(recs)
    (row,) = table["rows"]
    assert (row["double_over_single"], row["vs_memcpy"], row["vs_link"]) == (2.0, 0.25, 0.8)
    assert table["ratios"][0]["seed"] == pytest.approx(seeds.figure("003_rcat_double") / 1.78e9)
    assert table["ratios"][0]["soft_roce_meaningful"] is True


def test_latency_rows_name_the_real_payload_and_carry_the_seeds():
    idle, _ = pingpong_lines()
    recs = [
        results.record(
            {"id": t, "experiment": "latency", "tool": "pingpong", "transport": t},
            [client(idle)],
            [],
        )
        for t in ("tcp", "rdma", "rsocket", "smc")
    ]
    table = tables_more.latency_table(recs)
    by = {r["measurement"]: r for r in table["rows"]}
    smc = by["pingpong smc RTT, 61952 B (between the hosts)"]
    assert smc["seed_s"] == pytest.approx(2 * 3.174e-6)
    assert "SMC-D loopback" in smc["seed_conditions"]
    assert by["pingpong rsocket RTT, 61952 B (between the hosts)"]["seed_s"] == 1.9e-6
    assert by["pingpong shm RTT, smallest grid (one host)"]["ours_s"] is None
    assert table["ratios"][1]["ours"] == pytest.approx(1.0)  # rsocket / rdma


def test_smc_table_reports_mode_and_reason_on_both_rows_and_the_loopback_note():
    fallback = {
        "mode": "TCP (fallback)",
        "fallback_reason": "0x03030000",
        "fallback_text": "no SMC device found",
    }
    recs = [
        {
            "id": "s",
            "experiment": "smc",
            "transport": "smc",
            "placement": "local",
            "bytes_per_s_total": 2e9,
            "connection": fallback,
        },
        {
            "id": "l",
            "experiment": "smc",
            "transport": "smc",
            "placement": "loopback",
            "bytes_per_s_total": 3e9,
            "connection": {**fallback, "fallback_reason": "0x03030001"},
        },
        {"id": "t", "experiment": "smc", "transport": "tcp", "placement": "local"}
        | {"bytes_per_s_total": 2e9},
    ]
    table = tables_more.smc_table(recs)
    hosts, loop, tcp = table["rows"]
    assert hosts["fallback_reason"] == "0x03030000" and loop["fallback_reason"] == "0x03030001"
    assert loop["mode"] == "TCP (fallback)" and tcp["mode"] == "TCP"
    assert table["ratios"][0]["soft_roce_meaningful"] is False
    assert "TCP (fallback)" in table["ratios"][0]["why"]
    assert "CONFIG_SMC_LO" in table["note"]


def test_rsocket_table_has_the_seed_stream_figure_per_size():
    recs = [
        {"id": f"{t}{s}", "experiment": "rsocket", "transport": t, "size_bytes": s}
        | {"bytes_per_s_total": rate}
        for s in (65536, 1048576)
        for t, rate in (("rsocket", 1e8), ("rdma", 2e8), ("tcp", 3e8))
    ]
    table = tables_more.rsocket_table(recs)
    assert [r["seed_rsocket"] for r in table["rows"]] == [39.4e9 / 8, 25.8e9 / 8]
    assert table["ratios"][0]["ours"] == pytest.approx(0.5)
    assert table["ratios"][0]["seed"] == pytest.approx(39.4 / 40)


# ---------------------------------------------------------------- the report


def test_report_files_hold_every_table_ratio_note_and_error(tmp_path):
    recs = [
        *matrix_records(),
        {
            "id": "9",
            "experiment": "numa",
            "tool": "iperf3",
            "placement": "far",
            "processes": 1,
            "error": "skipped: one NUMA node",
        },
        {"id": "10", "experiment": "smc", "transport": "smc", "error": "client exited 77: no"},
    ]
    cores = {"server": {"local": "1", "online": "0-1"}, "client": {"local": "", "online": "0"}}
    meta = {"pair": "p1", "server": "h2", "client": "h1", "cores": cores}
    written = report.write(str(tmp_path), recs, meta)
    assert written["tables"] == 3 and written["runs_without_figure"] == 2
    md = (tmp_path / "report.md").read_text()
    assert "RDMA/TCP throughput, 1024 KiB, 1 pair(s), compute off | 2 | 2.43 | no" in md
    assert "- 9: skipped: one NUMA node" in md
    assert "> SMC-D over the loopback device" in md
    assert "server h2: NIC-local 1 of 0-1; client h1: NIC-local unknown of 0" in md
    page = (tmp_path / "report.html").read_text()
    assert page.count("<svg") == 3 and "Soft-RoCE (rxe)" in page and "CONFIG_SMC_LO" in page
    data = json.loads((tmp_path / "report.json").read_text())
    assert [t["id"] for t in data["tables"]] == ["pingpong_matrix", "numa", "smc"]
