"""Lossless RoCE: the pair's RDMA runs carry the fabric's ToS and the VLAN interface's GID."""

from __future__ import annotations

from cxfab.workloads import marking as workload_marking
from cxfab.workloads import pair_runs as workloads

from tests.unit.test_workloads import FABRIC

PAIR = {"name": "p", "client": "h1", "server": "h2", "vlan": 30}
LOSSLESS = {"roce": {"vlans": [30], "tos": 104, "gid_type": "RoCE v2", "dscp": 26}}


def structured(lossless=LOSSLESS):
    return {
        host: {"network": {"vlans": [{"id": 30, "name": "bond0.30"}]}, "lossless": lossless}
        for host in ("h1", "h2")
    }


def gid(index, kind="RoCE v2", device="rxe0"):
    return {"device": device, "port": 1, "index": index, "type": kind, "gid": "::ffff:x"}


GIDS = {
    "client": {"bond0.30": [gid(4, "IB/RoCE v1"), gid(5)]},
    "server": {"bond0.30": [gid(3, device="mlx5_1")]},
}


def plan(marking):
    return workloads.plan_pair(FABRIC, PAIR, "/b", 18500, 3, "/in", "/out", None, marking)


def by_tool(runs, tool, transport="rdma"):
    return [r for r in runs if r["tool"] == tool and r["transport"] == transport]


def test_no_marking_off_lossless_or_off_a_roce_vlan():
    assert workload_marking.roce_marking(structured(None), PAIR, GIDS) is None
    assert workload_marking.roce_marking(structured(), {**PAIR, "vlan": 10}, GIDS) is None
    runs = plan(None)
    assert all("marking" not in r for r in runs)
    assert all("--tos" not in r["client"] for r in runs if r["tool"] == "pingpong")
    perftest = by_tool(runs, "ib_write_bw")[0]
    assert perftest["server"][:2] == ["ib_write_bw", "-R"]
    assert "--tos" not in perftest["client"] and "-x" not in perftest["client"]


def test_perftest_gets_each_side_gid_index_and_the_traffic_class():
    marking = workload_marking.roce_marking(structured(), PAIR, GIDS)
    assert (marking["client"]["index"], marking["server"]["index"]) == (5, 3)
    runs = plan(marking)
    for perftest in by_tool(runs, "ib_write_bw"):
        assert perftest["server"][1:7] == ["-d", "mlx5_1", "-x", "3", "--tclass", "104"]
        assert perftest["client"][1:7] == ["-d", "rxe0", "-x", "5", "--tclass", "104"]
        assert "-R" not in perftest["client"]  # RDMA-CM would ignore -x
        assert perftest["client"][-1] == "12.0.30.2"
        assert perftest["marking"] == (
            "ToS 104, RoCE v2 GID (client rxe0 index 5, server mlx5_1 index 3)"
        )


def test_without_a_gid_of_the_type_perftest_falls_back_to_rdma_cm_with_its_tos():
    gids = {"client": GIDS["client"], "server": {"bond0.30": [gid(2, "IB/RoCE v1")]}}
    marking = workload_marking.roce_marking(structured(), PAIR, gids)
    assert marking["server"] is None
    perftest = by_tool(plan(marking), "ib_write_bw")[0]
    assert perftest["client"][1:4] == ["-R", "--tos", "104"]
    assert "-x" not in perftest["server"]
    assert perftest["marking"] == "ToS 104, GID chosen by RDMA-CM (no RoCE v2 GID read)"
    # No facts at all (rdma_workloads.yml run without verify): the same fallback.
    assert workload_marking.roce_marking(structured(), PAIR)["client"] is None


def test_native_clients_get_the_tos_and_qperf_is_recorded_unmarked():
    runs = plan(workload_marking.roce_marking(structured(), PAIR, GIDS))
    for run in by_tool(runs, "pingpong"):
        assert run["client"][-2:] == ["--tos", "104"] and "--tos" not in run["server"]
        assert run["marking"] == "ToS 104 (RDMA-CM)"
    assert all("--tos" not in r["client"] for r in by_tool(runs, "pingpong", "tcp"))
    rcat = by_tool(runs, "rcat")[0]
    assert "--client 12.0.30.2:" in rcat["client"][2] and rcat["client"][2].count("--tos 104") == 1
    assert "--tos" not in rcat["server"][2]
    qperf = by_tool(runs, "qperf")[0]
    assert qperf["marking"] == workload_marking.QPERF_UNMARKED
    assert all("tos" not in arg for arg in qperf["client"])


def test_the_record_keeps_the_marking():
    run = {"tool": "pingpong", "transport": "rdma", "size_bytes": 4096, "marking": "ToS 104"}
    out = '{"checksum": "00ff", "bytes_per_s_client_to_server": 1000.0}'
    assert workloads.run_result(run, out)["marking"] == "ToS 104"
