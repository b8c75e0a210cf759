"""The experiments' plan, the parsing of run outputs into records, and the report tables."""

import json
from pathlib import Path

import pytest
from cxfab.experiments import plan, report, results, seeds, tables

OUTPUTS = Path(__file__).parent / "outputs"
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
    }
}
PAIR = {"name": "p1", "client": "h1", "server": "h2", "vlan": 30}
CPUS = {"server": {"local": "0-1", "online": "0-3"}, "client": {"local": "2-3", "online": "0-3"}}


def make_plan(settings=None, cpus=CPUS):
    return plan.plan_experiments(FABRIC, PAIR, settings or {}, "/opt/x/bin", "/opt/x/w", cpus)


def body(name):
    return (OUTPUTS / name).read_text().partition("# ---\n")[2]


# ---------------------------------------------------------------- settings and plan


def test_defaults_plan_every_experiment_with_unique_ids_and_ports():
    runs = make_plan()
    assert {r["experiment"] for r in runs} == set(plan.EXPERIMENTS)
    assert len({r["id"] for r in runs}) == len(runs)
    ports = [a[a.index("--server") + 1] for r in runs for a in r["servers"] if "--server" in a]
    assert len(ports) == len(set(ports)), "two servers would listen on one port"


def test_matrix_covers_transports_sizes_pairs_compute_and_pins_nic_local_cores():
    runs = [r for r in make_plan() if r["experiment"] == "pingpong_matrix"]
    assert len(runs) == 2 * 2 * 2 * 2
    two = next(r for r in runs if r["pairs"] == 2 and r["transport"] == "rdma" and r["compute"])
    assert len(two["servers"]) == len(two["clients"]) == 2
    client = two["clients"][1]
    assert client[client.index("--client") + 1].startswith("12.0.30.2:")
    assert client[client.index("--cpus") + 1] == "2-3"
    assert two["servers"][0][two["servers"][0].index("--cpus") + 1] == "0-1"
    assert "--compute" in client


def test_reference_tools_keep_every_tool_and_pin_with_taskset():
    runs = [r for r in make_plan() if r["experiment"] == "reference_tools"]
    assert [r["tool"] for r in runs] == ["ib_write_bw", "ib_read_bw", "qperf", "iperf3", "iperf3"]
    qperf = runs[2]["clients"][0]
    assert qperf[:3] == ["taskset", "-c", "2-3"]
    for test in ("rc_rdma_write_bw", "rc_rdma_read_bw", "tcp_bw", "rc_lat", "tcp_lat"):
        assert test in qperf
    assert [r["clients"][0][-1] for r in runs[3:]] == ["1", "4"]  # -P 1 and -P 4


def test_numa_pins_far_cores_and_skips_with_reason_on_one_node():
    local, far = [r for r in make_plan() if r["experiment"] == "numa"]
    assert local["clients"][0][:3] == ["taskset", "-c", "2-3"]
    assert far["clients"][0][:3] == ["taskset", "-c", "0-1"]
    assert far["servers"][0][:3] == ["taskset", "-c", "2-3"]
    one_node = {side: {"local": "0-3", "online": "0-3"} for side in ("server", "client")}
    far = [r for r in make_plan(cpus=one_node) if r["experiment"] == "numa"][1]
    assert "one NUMA node" in far["skipped"] and far["clients"] == []


def test_rcat_runs_double_and_single_buffering_per_size_and_lists_its_inputs():
    runs = make_plan({"rcat_mib": [16, 64], "experiments": ["rcat"]})
    rcat = [r for r in runs if r["tool"] == "rcat"]
    assert {(r["transport"], r["size_bytes"] >> 20, r["pipeline"]) for r in rcat} == {
        (t, m, p) for t in ("rdma", "tcp") for m in (16, 64) for p in (1, 2)
    }
    assert plan.rcat_inputs(runs) == [
        {"path": "/opt/x/w/rcat-16m.bin", "mib": 16},
        {"path": "/opt/x/w/rcat-64m.bin", "mib": 64},
    ]
    assert {r["tool"] for r in runs} == {"rcat", "memcpy", "link_speed"}


def test_selected_experiments_only():
    runs = make_plan({"experiments": ["latency", "smc"]})
    assert {r["experiment"] for r in runs} == {"latency", "smc"}
    latency = [
        r["transport"] for r in runs if r["experiment"] == "latency" and r["tool"] == "pingpong"
    ]
    assert latency == ["rdma", "tcp", "rsocket", "smc", "shm"]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"sizes": [1024]}, r"experiments_settings.sizes\[0\]: 1024 is not an integer in \[4096"),
        ({"pairs": []}, "experiments_settings.pairs: must be a non-empty list"),
        ({"duration": "5"}, "experiments_settings.duration: '5' is not an integer"),
        ({"experiments": ["numa", "warp"]}, r"experiments_settings.experiments\[1\]: 'warp'"),
        ({"transports": ["ib"]}, r"experiments_settings.transports\[0\]: 'ib' is not one of"),
        ({"compute": ["yes"]}, r"experiments_settings.compute\[0\]: 'yes' is not true or false"),
        ({"sise": [4096]}, "experiments_settings.sise: unknown setting"),
    ],
)
def test_bad_settings_name_the_key_path(settings, message):
    with pytest.raises(ValueError, match=message):
        plan.settings_with_defaults(settings)


# ---------------------------------------------------------------- records


def client(stdout, rc=0, stderr=""):
    return {"rc": rc, "stdout": stdout, "stderr": stderr}


def pingpong_lines():
    return (OUTPUTS / "pingpong_tcp_65536.jsonl").read_text().splitlines()


def test_pingpong_record_sums_pairs_and_averages_cpu():
    idle, _ = pingpong_lines()
    run = {
        "id": "1",
        "experiment": "pingpong_matrix",
        "tool": "pingpong",
        "transport": "tcp",
        "size_bytes": 65536,
        "pairs": 2,
        "compute": False,
    }
    rec = results.record(run, [client(idle), client(idle)], [])
    one = json.loads(idle)
    assert rec["bytes_per_s_total"] == pytest.approx(2 * one["bytes_per_s_total"])
    assert rec["iteration_s"] == pytest.approx(one["iteration_s"])
    assert rec["client_sys_s"] == pytest.approx(one["cpu"]["client"]["sys_s"])
    assert rec["checksums"] == [one["checksum"]]


def test_record_of_a_failed_or_unreadable_run_carries_the_reason():
    run = {"id": "2", "experiment": "reference_tools", "tool": "qperf", "tests": ["rc_lat"]}
    rec = results.record(run, [client(body("qperf_rdma_no_device.txt"), rc=1, stderr="")], [])
    assert rec["error"].startswith("client exited 1: rc_rdma_write_bw:")
    rec = results.record(run, [client(body("qperf_rdma_no_device.txt"))], [])
    assert "no result for rc_lat" in rec["error"]
    assert "bytes_per_s" not in rec


def test_rcat_record_reads_the_receiver_and_checks_the_byte_count():
    run = {
        "id": "3",
        "experiment": "rcat",
        "tool": "rcat",
        "transport": "tcp",
        "size_bytes": 1048576,
        "pipeline": 2,
    }
    stderr = (
        'rcat: listening on 0.0.0.0:1\n{"role": "receiver", "transport": "tcp", '
        '"bytes": 1048576, "wall_s": 0.01, "bytes_per_s": 1.0e8}\n'
    )
    assert results.record(run, [client("")], [client("", stderr=stderr)])["bytes_per_s"] == 1e8
    short = stderr.replace('"bytes": 1048576', '"bytes": 4096')
    assert (
        "receiver got 4096 bytes of 1048576"
        in results.record(run, [client("")], [client("", stderr=short)])["error"]
    )


def test_link_speed_of_a_virtual_nic_is_an_error_not_zero():
    run = {"id": "4", "experiment": "rcat", "tool": "link_speed"}
    assert results.record(run, [client("bond0.30 25000\n")], [])["bytes_per_s"] == 25e9 / 8
    assert "link speed unknown for eth1" in results.record(run, [client("eth1 -1\n")], [])["error"]


# ---------------------------------------------------------------- tables and report


def matrix_records():
    idle, busy = (json.loads(line) for line in pingpong_lines())
    recs = []
    for transport, scale in (("tcp", 1.0), ("rdma", 0.5)):
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


def test_pingpong_table_ratio_beside_the_seed_with_cpu_per_gb():
    (table,) = tables.build_tables(matrix_records())
    row = next(r for r in table["rows"] if not r["compute"])
    assert row["rdma_over_tcp"] == pytest.approx(2.0)
    assert row["seed_rdma_over_tcp"] == pytest.approx(8.805 / 3.618)
    assert row["seed_tcp_client_sys_s_per_GB"] == pytest.approx(3.797 / 20.96)
    assert row["tcp_client_sys_s_per_GB"] >= 0
    ratio = table["ratios"][0]
    assert ratio["soft_roce_meaningful"] is False and "rxe" in ratio["why"]


def test_reference_table_from_recorded_outputs():
    runs = {
        r["tool"] + str(r.get("streams", "")): r
        for r in make_plan()
        if r["experiment"] == "reference_tools"
    }
    recs = [
        results.record(
            runs["qperf"], [client(body("qperf_rdma_default.txt") + body("qperf_tcp_v.txt"))], []
        ),
        results.record(runs["iperf31"], [client((OUTPUTS / "iperf3_p1.json").read_text())], []),
        results.record(runs["iperf34"], [client((OUTPUTS / "iperf3_p4.json").read_text())], []),
        results.record(runs["ib_write_bw"], [client("Couldn't connect\n")], []),
    ]
    table = tables.reference_table(recs)
    by = {r["measurement"]: r for r in table["rows"]}
    assert by["qperf rc_rdma_write_bw (B/s)"]["ours"] == pytest.approx(4.67e9)
    assert by["qperf rc_rdma_write_bw (B/s)"]["seed"] == pytest.approx(7.25e9)
    assert by["qperf tcp_bw (B/s)"]["cpu"] == 199
    p1 = json.loads((OUTPUTS / "iperf3_p1.json").read_text())["end"]["sum_received"]
    rdma_over_tcp = table["ratios"][0]
    assert rdma_over_tcp["ours"] == pytest.approx(4.67e9 / (p1["bits_per_second"] / 8))
    assert rdma_over_tcp["seed"] == pytest.approx(7.25 / 4.80)
    assert table["errors"] and "ib_write_bw: no result table" in table["errors"][0]


def test_rcat_table_ratios_against_memcpy_link_and_seed():
    recs = [
        {"id": "a", "experiment": "rcat", "tool": "memcpy", "bytes_per_s": 4e9},
        {"id": "b", "experiment": "rcat", "tool": "link_speed", "bytes_per_s": 1.25e9},
        {
            "id": "c",
            "experiment": "rcat",
            "tool": "rcat",
            "transport": "tcp",
            "size_bytes": 16 << 20,
            "pipeline": 2,
            "bytes_per_s": 1e9,
        },
        {
            "id": "d",
            "experiment": "rcat",
            "tool": "rcat",
            "transport": "tcp",
            "size_bytes": 16 << 20,
            "pipeline": 1,
            "bytes_per_s": 0.5e9,
        },
    ]
    (row,) = tables.rcat_table(recs)["rows"]
    assert (row["double_over_single"], row["vs_memcpy"], row["vs_link"]) == (2.0, 0.25, 0.8)
    ratios = tables.rcat_table(recs)["ratios"]
    assert ratios[0]["seed"] == pytest.approx(seeds.figure("003_rcat_double") / 1.78e9)
    assert ratios[0]["soft_roce_meaningful"] is True


def test_smc_table_reports_mode_and_only_trusts_a_real_smc_connection():
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
            "bytes_per_s_total": 2e9,
            "connection": fallback,
        },
        {"id": "t", "experiment": "smc", "transport": "tcp", "bytes_per_s_total": 2e9},
    ]
    table = tables.smc_table(recs)
    assert table["rows"][0]["fallback_reason"] == "0x03030000"
    assert table["ratios"][0]["soft_roce_meaningful"] is False


def test_report_files_hold_every_table_ratio_and_error(tmp_path):
    recs = [
        *matrix_records(),
        {
            "id": "9",
            "experiment": "numa",
            "tool": "iperf3",
            "placement": "far",
            "error": "skipped: one NUMA node",
        },
    ]
    written = report.write(str(tmp_path), recs, {"pair": "p1", "server": "h2", "client": "h1"})
    assert written["tables"] == 2 and written["runs_without_figure"] == 1
    md = (tmp_path / "report.md").read_text()
    assert "RDMA/TCP throughput, 1024 KiB, 1 pair(s), compute off | 2 | 2.43 | no" in md
    assert "- 9: skipped: one NUMA node" in md
    page = (tmp_path / "report.html").read_text()
    assert page.count("<svg") == 2 and "Soft-RoCE (rxe)" in page
    data = json.loads((tmp_path / "report.json").read_text())
    assert [t["id"] for t in data["tables"]] == ["pingpong_matrix", "numa"]
