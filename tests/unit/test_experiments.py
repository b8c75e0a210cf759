"""The experiments' settings, --tags, plan (what runs, pinned where, listening how) and batches."""

import pytest
from cxfab.workloads.experiments import batches, plan

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
EVERY_TRANSPORT = {"transports": list(plan.NETWORK_TRANSPORTS)}


def make_plan(settings=None, cpus=CPUS):
    return plan.plan_experiments(FABRIC, PAIR, settings or {}, "/opt/x/bin", "/opt/x/w", cpus)


def arg(argv, flag):
    return argv[argv.index(flag) + 1]


# ---------------------------------------------------------------- settings and tags


def test_defaults_plan_every_experiment_with_unique_ids_and_ports():
    runs = make_plan(EVERY_TRANSPORT)
    assert {r["experiment"] for r in runs} == set(plan.EXPERIMENTS)
    assert len({r["id"] for r in runs}) == len(runs)
    ports = [p for r in runs for p in r["listen"]["ports"]]
    assert len(ports) == len(set(ports)), "two servers would listen on one port"
    assert sum(len(r["servers"]) for r in runs) == len(ports)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"sizes": [1024]}, r"experiments_settings.sizes\[0\]: 1024 is not an integer in \[4096"),
        ({"pairs": []}, "experiments_settings.pairs: must be a non-empty list"),
        ({"duration": "5"}, "experiments_settings.duration: '5' is not an integer"),
        ({"mib_per_pair": 0}, r"experiments_settings.mib_per_pair: 0 is not an integer in \[1,"),
        ({"numa_processes": [0]}, r"experiments_settings.numa_processes\[0\]: 0 is not"),
        ({"experiments": ["numa", "warp"]}, r"experiments_settings.experiments\[1\]: 'warp'"),
        ({"transports": ["ib"]}, r"experiments_settings.transports\[0\]: 'ib' is not one of"),
        ({"compute": ["yes"]}, r"experiments_settings.compute\[0\]: 'yes' is not true or false"),
        ({"sise": [4096]}, "experiments_settings.sise: unknown setting"),
        ({"iterations": 20}, "experiments_settings.iterations: unknown setting"),
    ],
)
def test_bad_settings_name_the_key_path(settings, message):
    with pytest.raises(ValueError, match=message):
        plan.settings_with_defaults(settings)


def test_tags_select_experiments_and_a_misspelt_tag_fails_naming_the_valid_ones():
    assert plan.experiments_from_tags(["all"]) == list(plan.EXPERIMENTS)
    assert plan.experiments_from_tags(["all"], {"experiments": ["rcat"]}) == ["rcat"]
    assert plan.experiments_from_tags(["smc", "rcat"]) == ["rcat", "smc"]
    assert plan.experiments_from_tags(["always", "latency"]) == ["latency"]
    assert plan.unknown_tags(["rcta", "smc", "all"]) == ["rcta"]
    with pytest.raises(ValueError, match=r"--tags rcta: not an experiment; the tags are "):
        plan.experiments_from_tags(["rcta", "smc"])
    with pytest.raises(ValueError, match="pingpong_matrix, reference_tools, numa, rcat"):
        plan.experiments_from_tags(["latncy"])


# ---------------------------------------------------------------- how servers are seen listening


def test_no_rdma_cm_server_is_waited_for_on_a_tcp_port():
    runs = [r for r in make_plan(EVERY_TRANSPORT) if r["servers"]]
    for run in runs:
        servers = " ".join(" ".join(argv) for argv in run["servers"])
        rdma_cm = (
            run["tool"].startswith("ib_")
            or "--transport rdma " in servers
            or "--transport rsocket " in servers
        )
        assert run["listen"]["kind"] == ("rdma_cm" if rdma_cm else "tcp"), run["id"]
        assert len(run["listen"]["ports"]) == len(run["servers"])
    kinds = {(r["tool"], r["transport"], r["listen"]["kind"]) for r in runs}
    assert ("pingpong", "rsocket", "rdma_cm") in kinds
    assert ("rcat", "rdma", "rdma_cm") in kinds
    assert ("ib_read_lat", "rdma", "rdma_cm") in kinds
    assert ("pingpong", "smc", "tcp") in kinds  # AF_SMC listens on a TCP socket
    assert ("qperf", "rdma+tcp", "tcp") in kinds  # its control connection is TCP


def test_each_server_listens_on_the_port_its_run_is_waited_on():
    for run in make_plan(EVERY_TRANSPORT):
        for argv, port in zip(run["servers"], run["listen"]["ports"], strict=True):
            text = " ".join(argv)
            assert f":{port}" in text or f"-p {port}" in text or f"-lp {port}" in text, text


# ---------------------------------------------------------------- the runs of each experiment


def test_matrix_covers_transports_sizes_pairs_compute_and_pins_nic_local_cores():
    runs = [r for r in make_plan() if r["experiment"] == "pingpong_matrix"]
    assert len(runs) == 2 * 2 * 2 * 2
    two = next(r for r in runs if r["pairs"] == 2 and r["transport"] == "rdma" and r["compute"])
    assert len(two["servers"]) == len(two["clients"]) == 2
    client = two["clients"][1]
    assert arg(client, "--client").startswith("12.0.30.2:")
    assert arg(client, "--cpus") == "2-3" and arg(two["servers"][0], "--cpus") == "0-1"
    assert "--compute" in client


def test_iterations_move_the_same_data_per_pair_at_every_size_like_the_seed():
    runs = make_plan({"experiments": ["pingpong_matrix"], "sizes": [65536, 4194304]})
    by_size = {r["size_bytes"]: r for r in runs}
    assert by_size[65536]["iterations"] == 8 * 16 and by_size[4194304]["iterations"] == 2
    assert arg(by_size[65536]["clients"][0], "--iterations") == "128"
    big = make_plan({"experiments": ["pingpong_matrix"], "sizes": [8 << 20], "mib_per_pair": 1})
    assert big[0]["iterations"] == 1  # never zero round trips


def test_reference_tools_keep_every_tool_with_cpu_use_and_pin_with_taskset():
    runs = [r for r in make_plan() if r["experiment"] == "reference_tools"]
    assert [r["tool"] for r in runs] == ["ib_write_bw", "ib_read_bw", "qperf", "iperf3", "iperf3"]
    assert all("--cpu_util" in r["clients"][0] for r in runs[:2])
    qperf = runs[2]["clients"][0]
    assert qperf[:3] == ["taskset", "-c", "2-3"]
    assert "-vv" in qperf and qperf[-1] == "quit"
    for test in ("rc_rdma_write_bw", "rc_rdma_read_bw", "tcp_bw", "rc_lat", "tcp_lat"):
        assert test in qperf
    assert [arg(r["clients"][0], "-P") for r in runs[3:]] == ["1", "4"]


def test_numa_runs_one_and_twelve_processes_local_and_far():
    runs = [r for r in make_plan() if r["experiment"] == "numa"]
    assert [(r["processes"], r["placement"]) for r in runs] == [
        (1, "local"),
        (1, "far"),
        (12, "local"),
        (12, "far"),
    ]
    one_far, twelve_far = runs[1], runs[3]
    assert one_far["clients"][0][:3] == ["taskset", "-c", "0-1"]
    assert one_far["servers"][0][:3] == ["taskset", "-c", "2-3"]
    assert len(twelve_far["servers"]) == len(twelve_far["clients"]) == 12
    assert len({arg(c, "-p") for c in twelve_far["clients"]}) == 12


def test_numa_far_runs_are_skipped_with_the_reason_on_one_node():
    one_node = {side: {"local": "0-3", "online": "0-3"} for side in ("server", "client")}
    far = [r for r in make_plan(cpus=one_node) if r["experiment"] == "numa"][1]
    assert "one NUMA node" in far["skipped"] and far["clients"] == far["servers"] == []
    assert far["listen"]["ports"] == []


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


def test_latency_covers_every_transport_and_the_reference_tools():
    runs = make_plan({"experiments": ["latency"]})
    pingpong = [(r["transport"], r["placement"]) for r in runs if r["tool"] == "pingpong"]
    assert pingpong == [
        ("rdma", "local"),
        ("tcp", "local"),
        ("rsocket", "local"),
        ("smc", "local"),
        ("shm", "loopback"),
    ]
    assert [r["tool"] for r in runs if r["tool"] != "pingpong"] == [
        "ib_write_lat",
        "ib_read_lat",
        "qperf",
    ]
    qperf = runs[-1]["clients"][0]
    assert "-m" not in qperf  # the default 1-byte messages


def test_smc_runs_between_the_hosts_and_on_one_host():
    runs = make_plan({"experiments": ["smc"]})
    assert [(r["transport"], r["placement"]) for r in runs] == [
        ("smc", "local"),
        ("tcp", "local"),
        ("smc", "loopback"),
    ]
    loop = runs[2]
    assert loop["servers"] == [] and "--loopback" in loop["clients"][0]
    assert "--compute" in loop["clients"][0]


# ---------------------------------------------------------------- batches


def test_batches_follow_the_plan_and_cap_the_waiting_servers():
    runs = make_plan({"pairs": [1, 8], "experiments": ["pingpong_matrix", "numa"]})
    grouped = batches.batches(runs, max_servers=20)
    assert [run for b in grouped for run in b["runs"]] == runs
    assert all(b["servers"] <= 20 for b in grouped)
    assert [b["index"] for b in grouped] == list(range(len(grouped)))
    for batch in grouped:
        assert batch["servers"] == sum(len(r["servers"]) for r in batch["runs"])
        assert batch["experiments"] == list(dict.fromkeys(r["experiment"] for r in batch["runs"]))
    # A batch takes the next experiment's runs while there is room (fewer module calls).
    assert any(b["experiments"] == ["pingpong_matrix", "numa"] for b in grouped)
    small = batches.batches(make_plan({"experiments": ["rcat", "smc"]}))
    assert [b["experiments"] for b in small] == [["rcat", "smc"]]
    huge = batches.batches(make_plan({"pairs": [30], "experiments": ["pingpong_matrix"]}), 20)
    assert [len(b["runs"]) for b in huge] == [1] * len(huge)  # a run never splits


def one_batch(settings):
    (batch,) = batches.batches(make_plan(settings), max_servers=100)
    return batch


def test_a_batch_lists_its_servers_and_how_each_listens_with_its_run():
    batch = one_batch({"experiments": ["rsocket"], "sizes": [65536]})
    entries = batches.batch_data(batch)["servers"]
    assert len(entries) == 3 and all(e["tool"] == "pingpong" for e in entries)
    rsocket, rdma, tcp = (r["listen"]["ports"][0] for r in batch["runs"])
    assert [(e["server"][2], e["server"][e["server"].index("--server") + 1]) for e in entries] == [
        ("rsocket", f"0.0.0.0:{rsocket}"),
        ("rdma", f"0.0.0.0:{rdma}"),
        ("tcp", f"0.0.0.0:{tcp}"),
    ]
    assert [(e["listen"], e["run"]) for e in entries] == [
        ({"kind": "rdma_cm", "port": rsocket}, 0),
        ({"kind": "rdma_cm", "port": rdma}, 1),
        ({"kind": "tcp", "port": tcp}, 2),
    ]


def test_a_parallel_run_has_one_server_entry_per_pair_each_on_its_port():
    batch = one_batch({"experiments": ["pingpong_matrix"], "pairs": [2], "compute": [False]})
    data = batches.batch_data(batch)
    first = [e for e in data["servers"] if e["run"] == 0]
    assert [e["listen"]["port"] for e in first] == batch["runs"][0]["listen"]["ports"]
    assert [e["server"] for e in first] == batch["runs"][0]["servers"]
    assert data["runs"][0] == {"clients": batch["runs"][0]["clients"], "skip": ""}


def test_a_run_whose_server_did_not_listen_keeps_the_servers_own_failure():
    batch = one_batch({"experiments": ["rsocket"], "sizes": [65536]})
    skip = "server not listening on RDMA-CM port 18600: its server exited without listening"
    ended = {"rc": 77, "error": "non-zero return code 77", "stderr": "pingpong: no RDMA device\n"}
    outcome = {
        "runs": [{"clients": [], "skip": skip, "error": skip}]
        + [{"clients": [], "skip": "x", "error": "x"}] * 2,
        "servers": [[ended], [], []],
    }
    (rec, *_) = batches.records(batch, outcome)
    assert rec["error"] == f"{skip} (server: non-zero return code 77: pingpong: no RDMA device)"


def test_skipped_runs_start_no_server_and_keep_their_reason():
    one_node = {side: {"local": "0-3", "online": "0-3"} for side in ("server", "client")}
    runs = plan.plan_experiments(FABRIC, PAIR, {"experiments": ["numa"]}, "/b", "/w", one_node)
    (batch,) = batches.batches(runs)
    data = batches.batch_data(batch)
    assert len(data["servers"]) == 1 + 12  # the local runs only
    skip = [r["skip"] for r in data["runs"]]
    assert skip[0] == "" and skip[1].startswith("skipped: ") and "one NUMA node" in skip[1]
    outcome = {
        "runs": [{"clients": [], "skip": s, "error": s} for s in skip],
        "servers": [[] for _ in skip],
    }
    records = batches.records(batch, outcome)
    assert records[1]["error"].startswith("skipped: ")
    assert records[0]["error"] == "no client output"


def test_a_failed_batch_records_every_run_with_the_reason():
    batch = one_batch({"experiments": ["smc"]})
    records = batches.records(batch, {"error": "Start the servers: host unreachable"})
    assert [r["error"] for r in records] == ["Start the servers: host unreachable"] * 3
    assert [r["id"] for r in records] == [r["id"] for r in batch["runs"]]
