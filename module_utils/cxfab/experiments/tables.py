"""Seed-shaped tables from the run records, with the seed's numbers beside ours.

Absolute figures depend on the machine; the ratios listed under each table are
the ones that carry across machines. Each ratio says whether it means anything
on soft-RoCE (rxe: RDMA carried out by the CPU over UDP), where RDMA costs CPU like
TCP does and there is no link rate.
"""

from __future__ import annotations

from . import seeds

SOFT_ROCE_NOTE = (
    "Soft-RoCE (rxe) runs RDMA in the kernel on the CPU, over UDP: RDMA saves no CPU and "
    "no copy there, so RDMA/TCP ratios, CPU per GB and latencies say nothing about a "
    "ConnectX. Ratios between runs of the same transport (pairs, compute, double vs "
    "single buffering, local vs far cores with a real NUMA host) keep their meaning."
)


def _find(records, **match):
    for rec in records:
        if all(rec.get(k) == v for k, v in match.items()) and "error" not in rec:
            return rec
    return None


def _errors(records, experiment):
    return [
        f"{r['id']}: {r['error']}"
        for r in records
        if r.get("experiment") == experiment and "error" in r
    ]


def _ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


def _ratio_entry(name, ours, seed, meaningful, why):
    return {
        "name": name,
        "ours": ours,
        "seed": seed,
        "soft_roce_meaningful": meaningful,
        "why": why,
    }


def pingpong_table(records) -> dict:
    rows, ratios = [], []
    keys = sorted(
        {
            (r["size_bytes"], r["pairs"], r["compute"])
            for r in records
            if r.get("experiment") == "pingpong_matrix"
        }
    )
    for size, pairs, compute in keys:
        row = {"size_bytes": size, "pairs": pairs, "compute": compute}
        for transport in ("rdma", "tcp"):
            rec = _find(
                records,
                experiment="pingpong_matrix",
                transport=transport,
                size_bytes=size,
                pairs=pairs,
                compute=compute,
            )
            seed = seeds.seed_000_row(transport, compute, size, pairs)
            row[f"{transport}_iteration_s"] = rec["iteration_s"] if rec else None
            row[f"seed_{transport}_iteration_s"] = seed["iteration_s"] if seed else None
            if rec:
                per_gb = 1e9 / (rec["bytes_moved"] / pairs)
                for col in ("client_user_s", "client_sys_s", "server_user_s", "server_sys_s"):
                    row[f"{transport}_{col[:-2]}_s_per_GB"] = rec[col] * per_gb
            if seed:
                for col in ("client_user_s", "client_sys_s", "server_user_s", "server_sys_s"):
                    row[f"seed_{transport}_{col[:-2]}_s_per_GB"] = seed[col] / 20.96
        row["rdma_over_tcp"] = _ratio(row["tcp_iteration_s"], row["rdma_iteration_s"])
        row["seed_rdma_over_tcp"] = _ratio(
            row["seed_tcp_iteration_s"], row["seed_rdma_iteration_s"]
        )
        rows.append(row)
        ratios.append(
            _ratio_entry(
                f"RDMA/TCP throughput, {size >> 10} KiB, {pairs} pair(s), compute "
                f"{'on' if compute else 'off'}",
                row["rdma_over_tcp"],
                row["seed_rdma_over_tcp"],
                False,
                "rxe's RDMA is CPU work over UDP: no offload to compare",
            )
        )
    return {
        "id": "pingpong_matrix",
        "title": "Stencil ping-pong: RDMA vs TCP (seed 000)",
        "rows": rows,
        "ratios": ratios,
        "errors": _errors(records, "pingpong_matrix"),
    }


def _qperf(records, experiment, test, key):
    rec = _find(records, experiment=experiment, tool="qperf")
    return rec["tests"].get(test, {}).get(key) if rec else None


def reference_table(records) -> dict:
    e = "reference_tools"
    rows = []

    def add(label, value, seed_name=None, cpu=None):
        rows.append(
            {
                "measurement": label,
                "ours": value,
                "seed": seeds.figure(seed_name) if seed_name else None,
                "cpu": cpu,
            }
        )

    for tool in ("ib_write_bw", "ib_read_bw"):
        rec = _find(records, experiment=e, tool=tool)
        add(
            f"{tool} (B/s)",
            rec["bytes_per_s"] if rec else None,
            cpu=rec.get("cpu_util_percent") if rec else None,
        )
    for test, seed_name in (
        ("rc_rdma_write_bw", "000_qperf_rc_rdma_write_bw"),
        ("rc_rdma_read_bw", "000_qperf_rc_rdma_read_bw"),
        ("tcp_bw", None),
    ):
        cpu = _qperf(records, e, test, "send_cpus_used")
        add(f"qperf {test} (B/s)", _qperf(records, e, test, "bw"), seed_name, cpu)
    for test in ("rc_lat", "tcp_lat"):
        add(
            f"qperf {test} (s, one way)",
            _qperf(records, e, test, "latency"),
            cpu=_qperf(records, e, test, "loc_cpus_used"),
        )
    for streams in (1, 4):
        rec = _find(records, experiment=e, tool="iperf3", streams=streams)
        add(
            f"iperf3 -P {streams} (B/s)",
            rec["bits_per_second"] / 8 if rec else None,
            f"000_iperf_{streams}",
            rec["cpu"].get("host_total") if rec else None,
        )
    by = {r["measurement"]: r["ours"] for r in rows}
    ratios = [
        _ratio_entry(
            "RDMA write / TCP (qperf rc_rdma_write_bw / iperf3 -P 1)",
            _ratio(by["qperf rc_rdma_write_bw (B/s)"], by["iperf3 -P 1 (B/s)"]),
            seeds.figure("000_qperf_rc_rdma_write_bw") / seeds.figure("000_iperf_1"),
            False,
            "rxe: the CPU does the RDMA work",
        ),
        _ratio_entry(
            "iperf3 -P 4 / -P 1",
            _ratio(by["iperf3 -P 4 (B/s)"], by["iperf3 -P 1 (B/s)"]),
            seeds.figure("000_iperf_4") / seeds.figure("000_iperf_1"),
            True,
            "TCP on both: how far one stream is from what the host can push",
        ),
    ]
    return {
        "id": "reference_tools",
        "title": "Reference tools (seed 000)",
        "rows": rows,
        "ratios": ratios,
        "errors": _errors(records, e),
    }


def numa_table(records) -> dict:
    local = _find(records, experiment="numa", placement="local")
    far = _find(records, experiment="numa", placement="far")
    rows = [
        {
            "placement": p,
            "ours": r["bits_per_second"] / 8 if r else None,
            "seed": seeds.figure(f"001_numa_{p}_1"),
        }
        for p, r in (("local", local), ("far", far))
    ]
    ratio = _ratio(rows[0]["ours"], rows[1]["ours"])
    return {
        "id": "numa",
        "title": "NUMA placement: NIC-local vs far cores (seed 001)",
        "rows": rows,
        "ratios": [
            _ratio_entry(
                "local / far (iperf3, 1 stream)",
                ratio,
                seeds.figure("001_numa_local_1") / seeds.figure("001_numa_far_1"),
                False,
                "needs a host with two nodes and a NIC on one; lab "
                "guests under TCG have NUMA nodes without their memory cost",
            )
        ],
        "errors": _errors(records, "numa"),
    }


def rcat_table(records) -> dict:
    memcpy = _find(records, experiment="rcat", tool="memcpy")
    link = _find(records, experiment="rcat", tool="link_speed")
    rows, ratios = [], []
    keys = sorted(
        {
            (r["transport"], r["size_bytes"])
            for r in records
            if r.get("experiment") == "rcat" and r.get("tool") == "rcat"
        }
    )
    for transport, size in keys:
        double = _find(
            records,
            experiment="rcat",
            tool="rcat",
            transport=transport,
            size_bytes=size,
            pipeline=2,
        )
        single = _find(
            records,
            experiment="rcat",
            tool="rcat",
            transport=transport,
            size_bytes=size,
            pipeline=1,
        )
        d = double["bytes_per_s"] if double else None
        row = {
            "transport": transport,
            "size_bytes": size,
            "double_buffered": d,
            "single_buffered": single["bytes_per_s"] if single else None,
            "seed_double": seeds.figure("003_rcat_double"),
            "seed_single": seeds.figure("003_rcat_single"),
        }
        row["double_over_single"] = _ratio(d, row["single_buffered"])
        row["vs_memcpy"] = _ratio(d, memcpy["bytes_per_s"] if memcpy else None)
        row["vs_link"] = _ratio(d, link["bytes_per_s"] if link else None)
        rows.append(row)
        ratios += [
            _ratio_entry(
                f"{transport} {size >> 20} MiB: double / single buffering",
                row["double_over_single"],
                seeds.figure("003_rcat_double") / seeds.figure("003_rcat_single"),
                True,
                "same transport both ways: measures the overlap of I/O and transfer",
            ),
            _ratio_entry(
                f"{transport} {size >> 20} MiB: rcat / memcpy",
                row["vs_memcpy"],
                None,
                transport == "tcp",
                "rxe copies every byte on the CPU too, so an RDMA "
                "figure near memcpy is the software path's, not the NIC's",
            ),
            _ratio_entry(
                f"{transport} {size >> 20} MiB: rcat / link rate",
                row["vs_link"],
                seeds.figure("003_rcat_double") / seeds.figure("003_link"),
                False,
                "virtual NICs have no link rate",
            ),
        ]
    return {
        "id": "rcat",
        "title": "rcat throughput (seed 003)",
        "rows": rows,
        "ratios": ratios,
        "errors": _errors(records, "rcat"),
    }


def latency_table(records) -> dict:
    rows = []
    for transport in ("tcp", "shm", "rdma", "rsocket", "smc"):
        rec = _find(records, experiment="latency", tool="pingpong", transport=transport)
        seed = {
            "rsocket": seeds.figure("004_rsocket_rtt"),
            "tcp": 2 * seeds.figure("002_tcp_lo_latency"),
        }.get(transport)
        rows.append(
            {
                "measurement": f"pingpong {transport} RTT, 4 KiB",
                "ours_s": rec["iteration_s"] if rec else None,
                "seed_s": seed,
            }
        )
    lat = _find(records, experiment="latency", tool="ib_write_lat")
    rows.append(
        {
            "measurement": "ib_write_lat RTT (2 x t_typical), 2 B",
            "ours_s": lat["rtt_s"] if lat else None,
            "seed_s": None,
        }
    )
    for test in ("rc_lat", "tcp_lat"):
        one_way = _qperf(records, "latency", test, "latency")
        rows.append(
            {
                "measurement": f"qperf {test} RTT (2 x latency), 1 B",
                "ours_s": 2 * one_way if one_way else None,
                "seed_s": None,
            }
        )
    by = {r["measurement"]: r["ours_s"] for r in rows}
    ratios = [
        _ratio_entry(
            "RDMA RTT / TCP RTT (qperf)",
            _ratio(
                by["qperf rc_lat RTT (2 x latency), 1 B"],
                by["qperf tcp_lat RTT (2 x latency), 1 B"],
            ),
            None,
            False,
            "rxe latency is a software path; under TCG absolute times are meaningless too",
        )
    ]
    return {
        "id": "latency",
        "title": "Small-message latency (seeds 002, 004)",
        "rows": rows,
        "ratios": ratios,
        "errors": _errors(records, "latency"),
    }


def smc_table(records) -> dict:
    smc = _find(records, experiment="smc", transport="smc")
    tcp = _find(records, experiment="smc", transport="tcp")
    connection = (smc or {}).get("connection", {})
    rows = [
        {
            "transport": "smc",
            "ours": smc["bytes_per_s_total"] if smc else None,
            "seed": seeds.figure("002_smc_lo_bw"),
            "mode": connection.get("mode"),
            "fallback_reason": connection.get("fallback_reason"),
            "fallback_text": connection.get("fallback_text"),
        },
        {
            "transport": "tcp",
            "ours": tcp["bytes_per_s_total"] if tcp else None,
            "seed": seeds.figure("002_tcp_lo_bw"),
        },
    ]
    ratio = _ratio(rows[0]["ours"], rows[1]["ours"])
    return {
        "id": "smc",
        "title": "SMC vs TCP (seed 002)",
        "rows": rows,
        "ratios": [
            _ratio_entry(
                "SMC / TCP throughput",
                ratio,
                seeds.figure("002_smc_lo_bw") / seeds.figure("002_tcp_lo_bw"),
                connection.get("mode") == "SMC-R",
                "only a connection that ran SMC (see mode) compares; a TCP "
                "fallback measures TCP twice",
            )
        ],
        "errors": _errors(records, "smc"),
    }


def rsocket_table(records) -> dict:
    rows, ratios = [], []
    for size in sorted({r["size_bytes"] for r in records if r.get("experiment") == "rsocket"}):
        row = {"size_bytes": size}
        for transport in ("rsocket", "rdma", "tcp"):
            rec = _find(records, experiment="rsocket", transport=transport, size_bytes=size)
            row[transport] = rec["bytes_per_s_total"] if rec else None
        rows.append(row)
        ratios.append(
            _ratio_entry(
                f"rsocket / rdma, {size >> 10} KiB",
                _ratio(row["rsocket"], row["rdma"]),
                None,
                True,
                "both over the same rxe device: rsocket's extra copy and "
                "credits against direct writes",
            )
        )
    return {
        "id": "rsocket",
        "title": "rsockets vs our RDMA transport (seed 004)",
        "rows": rows,
        "ratios": ratios,
        "errors": _errors(records, "rsocket"),
    }


BUILDERS = {
    "pingpong_matrix": pingpong_table,
    "reference_tools": reference_table,
    "numa": numa_table,
    "rcat": rcat_table,
    "latency": latency_table,
    "smc": smc_table,
    "rsocket": rsocket_table,
}


def build_tables(records: list[dict]) -> list[dict]:
    """One table per experiment present in the records, in the plan's order."""
    present = []
    for rec in records:
        if rec.get("experiment") in BUILDERS and rec["experiment"] not in present:
            present.append(rec["experiment"])
    return [BUILDERS[e](records) for e in present]
