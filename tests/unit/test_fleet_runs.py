"""The generated plan on its way through verify.yml: published once, each host's test of a
round found, a test's two runs planned like a pair's, its records turned into figures."""

import json

import pytest
from cxfab.workloads import fleet_plan, fleet_runs


def fabric(transports=("tcp", "rdma", "shm"), hosts=4):
    return {
        "hosts": {
            f"h{i}": {
                "bond": {"switch_pair": "rack1"},
                "vlans": [{"id": 10, "address": f"10.0.10.{i + 1}/24"}],
            }
            for i in range(hosts)
        },
        "workloads": {
            "pairs": [],
            "plan": "generated",
            "fleet": {"budget_s": 60, "test_s": 10},
            "transports": list(transports),
            "message_sizes": [65536, 1048576],
            "iterations": 50,
            "pipeline": 1,
        },
    }


def published(transports=("tcp", "rdma", "shm"), hosts=4):
    plan = fleet_plan.plan_for_fabric(fabric(transports, hosts), cpus={"h0": "0-3"})
    return plan, fleet_runs.publish(plan, fabric(transports, hosts))


def test_every_planned_test_is_found_once_on_its_client_in_its_round():
    plan, out = published(hosts=6)
    assert out["rounds"] == len(plan["rounds"]) == 6 and out["tests"] == plan["tests"] == 14
    assert out["hosts"] == [f"h{i}" for i in range(6)] and json.loads(out["plan"]) == plan
    for number, tests in enumerate(plan["rounds"]):
        found = [fleet_runs.test_of(out, h, number) for h in out["hosts"]]
        found = [t for t in found if t]
        assert sorted(t["name"] for t in found) == sorted(t["name"] for t in tests)
        assert sorted(t["slot"] for t in found) == list(range(len(tests)))
        assert all(t["round"] == number and t["round_tests"] == len(tests) for t in found)


def test_a_host_without_a_test_in_a_round_gets_none():
    _, out = published(hosts=3)  # an odd ring: each round leaves a host out
    assert any(fleet_runs.test_of(out, h, 0) == {} for h in out["hosts"])
    assert fleet_runs.test_of(out, "nobody", 0) == {}


def test_with_rdma_a_test_is_ib_write_bw_and_pingpong_at_the_largest_size_on_its_slot_ports():
    _, out = published()
    test = fleet_runs.test_of(out, "h1", 0)
    assert test["address"] == "10.0.10.1" and test["server"] == "h0"
    runs = fleet_runs.test_runs(out, {**test, "slot": 3}, "/opt/b", 18500, 2, {"server": "0-3"})
    assert [(r["tool"], r["transport"], r["size_bytes"]) for r in runs] == [
        ("pingpong", "rdma", 1048576),
        ("ib_write_bw", "rdma", 1048576),
    ]
    assert [r["port"] for r in runs] == [18506, 18507]
    assert runs[0]["server"][-2:] == ["--cpus", "0-3"] and "10.0.10.1:18506" in runs[0]["client"]
    assert runs[1]["client"][-1] == "10.0.10.1" and "-D" in runs[1]["client"]


def test_without_rdma_a_test_is_iperf3_and_pingpong_over_tcp():
    _, out = published(("tcp",))
    runs = fleet_runs.test_runs(out, fleet_runs.test_of(out, "h1", 0), "/opt/b", 18500, 2)
    assert [(r["tool"], r["transport"]) for r in runs] == [("pingpong", "tcp"), ("iperf3", "tcp")]


TEST = {"name": "h0~h1", "server": "h0", "client": "h1", "round": 2, "vlan": 10, "phase": "ring"}


def test_a_result_has_the_reference_bandwidth_our_transport_and_its_time_per_exchange():
    size = 1048576
    records = [
        {"tool": "pingpong", "transport": "rdma", "size_bytes": size, "bits_per_second": 8e10},
        {"tool": "ib_write_bw", "transport": "rdma", "size_bytes": size, "bits_per_second": 9e10},
    ]
    result = fleet_runs.test_result(TEST, records)
    assert result["gbps"] == 90.0 and result["transport_gbps"] == 80.0
    assert result["latency_us"] == pytest.approx(8 * 1048576 / 8e10 * 1e6, rel=1e-3)
    assert result["tool"] == "ib_write_bw" and "error" not in result


def test_a_test_whose_reference_has_no_figure_carries_its_error_and_no_bandwidth():
    records = [
        {"tool": "pingpong", "transport": "tcp", "size_bytes": 4096, "bits_per_second": None,
         "error": "Run the client: refused"},
        {"tool": "iperf3", "transport": "tcp", "size_bytes": None, "bits_per_second": None,
         "error": "iperf3: unable to connect"},
    ]  # fmt: skip
    result = fleet_runs.test_result(TEST, records)
    assert "gbps" not in result and result["error"] == "iperf3: unable to connect"
    assert result["transport_error"] == "Run the client: refused"


def test_a_server_without_an_address_on_the_vlan_gives_a_test_without_runs_and_its_reason():
    bare = fabric(hosts=2)
    del bare["hosts"]["h0"]["vlans"][0]["address"]
    out = fleet_runs.publish(fleet_plan.plan_for_fabric(bare), bare)
    test = fleet_runs.test_of(out, "h1", 0)
    assert test["error"].startswith("h0: no address on VLAN 10")
    assert fleet_runs.test_runs(out, test, "/opt/b", 18500, 2) == []
    result = fleet_runs.test_result(test, [])
    assert "gbps" not in result and result["error"] == test["error"]


def _workload_filters():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "filter_plugins" / "cxfab_workloads.py"
    spec = importlib.util.spec_from_file_location("cxfab_workloads_filter", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FilterModule().filters()


def test_the_filter_plans_once_with_each_hosts_numa_local_cpus_and_the_fabric_settings():
    filters = _workload_filters()
    out = filters["cxfab_fleet_plan"](fabric(hosts=4), {"h0": "0-3", "h1": "8-11"})
    plan = json.loads(out["plan"])
    assert plan["cpus"] == {"h0": "0-3", "h1": "8-11", "h2": "", "h3": ""}
    assert (out["budget_s"], out["test_s"], out["rounds"]) == (60, 10, 3)
    assert out["workloads"]["transports"] == ["tcp", "rdma", "shm"]
    test = filters["cxfab_fleet_test_of"](out, "h1", 0)
    assert test["server"] == "h0" and test["address"] == "10.0.10.1"
    assert [r["tool"] for r in filters["cxfab_fleet_test_runs"](out, test, "/b", 1, 1)] == [
        "pingpong",
        "ib_write_bw",
    ]
