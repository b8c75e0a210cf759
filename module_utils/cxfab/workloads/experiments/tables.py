"""Seed-shaped tables from the run records, with the seed's numbers beside ours.

Absolute figures depend on the machine; the ratios listed under each table are
the ones that carry across machines. Each ratio says whether it means anything
on soft-RoCE (rxe: RDMA carried out by the CPU over UDP), where RDMA costs CPU like
TCP does and there is no link rate. The tables of rcat, latency, smc and rsocket
are in tables_more.py; report.build_tables picks the builder of each experiment.
"""

from __future__ import annotations

from . import seeds

SOFT_ROCE_NOTE = (
    "Soft-RoCE (rxe) runs RDMA in the kernel on the CPU, over UDP: RDMA saves no CPU and "
    "no copy there, so RDMA/TCP ratios, CPU per GB and latencies say nothing about a "
    "ConnectX. Ratios between runs of the same transport (pairs, compute, double vs "
    "single buffering, local vs far cores with a real NUMA host) keep their meaning."
)
# Seed 000 moved 10.48 GB each way per pair (2500 x 4 MiB = 10000 x 1 MiB ...).
SEED_000_GB_PER_PAIR_BOTH_WAYS = 20.96
_CPU_COLUMNS = ("client_user_s", "client_sys_s", "server_user_s", "server_sys_s")


def find(records, **match):
    for rec in records:
        if all(rec.get(k) == v for k, v in match.items()) and "error" not in rec:
            return rec
    return None


def errors(records, experiment):
    return [
        f"{r['id']}: {r['error']}"
        for r in records
        if r.get("experiment") == experiment and "error" in r
    ]


def ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


def ratio_entry(name, ours, seed, meaningful, why):
    return {
        "name": name,
        "ours": ours,
        "seed": seed,
        "soft_roce_meaningful": meaningful,
        "why": why,
    }


def table(table_id, title, rows, ratios, records, note=""):
    out = {
        "id": table_id,
        "title": title,
        "rows": rows,
        "ratios": ratios,
        "errors": errors(records, table_id),
    }
    if note:
        out["note"] = note
    return out


def _transports(records, experiment, order=("rdma", "tcp", "rsocket", "smc")):
    present = {r.get("transport") for r in records if r.get("experiment") == experiment}
    return [t for t in order if t in present]


def _pingpong_row(records, transport, size, pairs, compute) -> dict:
    """One row in seed 000's shape: a transport at a size, pair count and compute flag,
    its time per round trip and CPU per GB moved (both ways, per pair), the seed's beside."""
    rec = find(
        records,
        experiment="pingpong_matrix",
        transport=transport,
        size_bytes=size,
        pairs=pairs,
        compute=compute,
    )
    seed = seeds.seed_000_row(transport, compute, size, pairs)
    row = {
        "transport": transport,
        "size_bytes": size,
        "pairs": pairs,
        "compute": compute,
        "iteration_s": rec["iteration_s"] if rec else None,
        "seed_iteration_s": seed["iteration_s"] if seed else None,
    }
    per_gb = 1e9 / (rec["bytes_moved"] / pairs) if rec else None
    for col in _CPU_COLUMNS:
        row[f"{col[:-2]}_s_per_GB"] = rec[col] * per_gb if rec else None
    for col in _CPU_COLUMNS:
        row[f"seed_{col[:-2]}_s_per_GB"] = (
            seed[col] / SEED_000_GB_PER_PAIR_BOTH_WAYS if seed else None
        )
    return row


def pingpong_table(records) -> dict:
    e = "pingpong_matrix"
    rows, ratios = [], []
    transports = _transports(records, e)
    keys = sorted(
        {(r["size_bytes"], r["pairs"], r["compute"]) for r in records if r.get("experiment") == e}
    )
    for size, pairs, compute in keys:
        by = {t: _pingpong_row(records, t, size, pairs, compute) for t in transports}
        rows += by.values()
        label = f"{size >> 10} KiB, {pairs} pair(s), compute {'on' if compute else 'off'}"
        tcp = by.get("tcp", {})
        if "rdma" in by and tcp:
            ratios.append(
                ratio_entry(
                    f"RDMA/TCP throughput, {label}",
                    ratio(tcp["iteration_s"], by["rdma"]["iteration_s"]),
                    ratio(tcp["seed_iteration_s"], by["rdma"]["seed_iteration_s"]),
                    False,
                    "rxe's RDMA is CPU work over UDP: no offload to compare",
                )
            )
        for other in (t for t in ("rsocket", "smc") if t in by and tcp):
            ratios.append(
                ratio_entry(
                    f"{other}/TCP throughput, {label}",
                    ratio(tcp["iteration_s"], by[other]["iteration_s"]),
                    None,
                    other == "smc",
                    "no seed ran this transport in the stencil ping-pong"
                    + ("; smc: see the smc table for whether it ran SMC" if other == "smc" else ""),
                )
            )
    return table(e, "Stencil ping-pong: RDMA vs TCP (seed 000)", rows, ratios, records)


def _qperf(records, experiment, test, key):
    rec = find(records, experiment=experiment, tool="qperf")
    return rec["tests"].get(test, {}).get(key) if rec else None


# The side of a qperf test that does its work (qperf -vv prints that side's CPU use):
# a write or a send costs the sender, an RDMA read the side that reads (recv_*).
QPERF_CPU_KEY = {
    "rc_rdma_write_bw": "send_cpus_used",
    "rc_rdma_read_bw": "recv_cpus_used",
    "tcp_bw": "send_cpus_used",
    "rc_lat": "loc_cpus_used",
    "tcp_lat": "loc_cpus_used",
}


def reference_table(records) -> dict:
    e = "reference_tools"
    rows = []

    def add(label, value, seed_name=None, cpu=None):
        rows.append(
            {
                "measurement": label,
                "ours": value,
                "seed": seeds.figure(seed_name) if seed_name else None,
                "cpu_percent": cpu,
            }
        )

    for tool in ("ib_write_bw", "ib_read_bw"):
        rec = find(records, experiment=e, tool=tool)
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
        cpu = _qperf(records, e, test, QPERF_CPU_KEY[test])
        add(f"qperf {test} (B/s)", _qperf(records, e, test, "bw"), seed_name, cpu)
    qperf = find(records, experiment=e, tool="qperf")
    size = (
        f"{qperf['size_bytes'] >> 10} KiB messages" if qperf and qperf.get("size_bytes") else "-m"
    )
    for test in ("rc_lat", "tcp_lat"):
        add(
            f"qperf {test} (s, one way, {size})",
            _qperf(records, e, test, "latency"),
            cpu=_qperf(records, e, test, QPERF_CPU_KEY[test]),
        )
    for streams in (1, 4):
        rec = find(records, experiment=e, tool="iperf3", streams=streams)
        add(
            f"iperf3 -P {streams} (B/s)",
            rec["bits_per_second"] / 8 if rec else None,
            f"000_iperf_{streams}",
            rec["cpu"].get("host_total") if rec else None,
        )
    ours = {r["measurement"]: r["ours"] for r in rows}
    seed = {r["measurement"]: r["seed"] for r in rows}

    def versus(name, top, bottom, meaningful, why):
        """Our ratio of two rows beside the seed's ratio of the same two rows."""
        return ratio_entry(
            name, ratio(ours[top], ours[bottom]), seed[top] / seed[bottom], meaningful, why
        )

    ratios = [
        versus(
            "RDMA write / TCP (qperf rc_rdma_write_bw / iperf3 -P 1)",
            "qperf rc_rdma_write_bw (B/s)",
            "iperf3 -P 1 (B/s)",
            False,
            "rxe: the CPU does the RDMA work",
        ),
        versus(
            "iperf3 -P 4 / -P 1",
            "iperf3 -P 4 (B/s)",
            "iperf3 -P 1 (B/s)",
            True,
            "TCP on both: how far one stream is from what the host can push",
        ),
    ]
    return table(e, "Reference tools (seed 000)", rows, ratios, records)


def numa_table(records) -> dict:
    e = "numa"
    rows, ratios = [], []
    counts = sorted({r.get("processes", 1) for r in records if r.get("experiment") == e})
    for processes in counts:
        by = {}
        for placement in ("local", "far"):
            rec = find(records, experiment=e, placement=placement, processes=processes)
            seed_name = f"001_numa_{placement}_{processes}"
            by[placement] = rec["bits_per_second"] / 8 if rec else None
            rows.append(
                {
                    "processes": processes,
                    "placement": placement,
                    "ours": by[placement],
                    "seed": seeds.figure(seed_name) if seed_name in seeds.SEED_FIGURES else None,
                }
            )
        seed_pair = (f"001_numa_local_{processes}", f"001_numa_far_{processes}")
        ratios.append(
            ratio_entry(
                f"local / far (iperf3, {processes} process(es))",
                ratio(by["local"], by["far"]),
                seeds.figure(seed_pair[0]) / seeds.figure(seed_pair[1])
                if all(n in seeds.SEED_FIGURES for n in seed_pair)
                else None,
                False,
                "needs a host with two nodes and a NIC on one; lab "
                "guests under TCG have NUMA nodes without their memory cost",
            )
        )
    return table(e, "NUMA placement: NIC-local vs far cores (seed 001)", rows, ratios, records)
