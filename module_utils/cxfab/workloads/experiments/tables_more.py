"""The tables of rcat (seed 003), latency (002, 004), smc (002) and rsocket (004)."""

from __future__ import annotations

from . import seeds
from .tables import find, ratio, ratio_entry, table

SMC_LO_NOTE = (
    "SMC-D over the loopback device (seed 002's case) needs CONFIG_SMC_LO (Linux 6.10 and "
    "later), which Debian's kernels (6.1 in Debian 12, 6.12 in Debian 13) do not set: there "
    "an SMC socket on one host falls back to TCP, and the mode and the kernel's reason below "
    "say so. SMC-R between hosts needs a RoCE device the kernel pairs with the interface "
    "(a pnet ID, or SMC-Rv2 with a user EID)."
)


def rcat_table(records) -> dict:
    memcpy = find(records, experiment="rcat", tool="memcpy")
    link = find(records, experiment="rcat", tool="link_speed")
    rows, ratios = [], []
    keys = sorted(
        {
            (r["transport"], r["size_bytes"])
            for r in records
            if r.get("experiment") == "rcat" and r.get("tool") == "rcat"
        }
    )
    for transport, size in keys:
        found = {
            pipeline: find(
                records,
                experiment="rcat",
                tool="rcat",
                transport=transport,
                size_bytes=size,
                pipeline=pipeline,
            )
            for pipeline in (2, 1)
        }
        double = found[2]["bytes_per_s"] if found[2] else None
        row = {
            "transport": transport,
            "size_bytes": size,
            "double_buffered": double,
            "single_buffered": found[1]["bytes_per_s"] if found[1] else None,
            "seed_double": seeds.figure("003_rcat_double"),
            "seed_single": seeds.figure("003_rcat_single"),
        }
        row["double_over_single"] = ratio(double, row["single_buffered"])
        row["vs_memcpy"] = ratio(double, memcpy["bytes_per_s"] if memcpy else None)
        row["vs_link"] = ratio(double, link["bytes_per_s"] if link else None)
        rows.append(row)
        label = f"{transport} {size >> 20} MiB"
        ratios += [
            ratio_entry(
                f"{label}: double / single buffering",
                row["double_over_single"],
                seeds.figure("003_rcat_double") / seeds.figure("003_rcat_single"),
                True,
                "same transport both ways: measures the overlap of I/O and transfer",
            ),
            ratio_entry(
                f"{label}: rcat / memcpy",
                row["vs_memcpy"],
                None,
                transport == "tcp",
                "TCP: how far the stream is from copying the bytes once"
                if transport == "tcp"
                else "rxe copies every byte on the CPU too, so an RDMA "
                "figure near memcpy is the software path's, not the NIC's",
            ),
            ratio_entry(
                f"{label}: rcat / link rate",
                row["vs_link"],
                seeds.figure("003_rcat_double") / seeds.figure("003_link"),
                False,
                "a virtual NIC's link rate is nominal (none, or what the hypervisor "
                "or the lab reports), not a ceiling the bytes meet",
            ),
        ]
    return table("rcat", "rcat throughput (seed 003)", rows, ratios, records)


# Seed RTTs beside our pingpong rows (2 x a one-way figure where the seed gave one way).
_PINGPONG_RTT_SEEDS = {
    "tcp": (2 * seeds.figure("002_tcp_lo_latency"), "seed 002: sockperf 14 B, TCP loopback"),
    "smc": (2 * seeds.figure("002_smc_lo_latency"), "seed 002: sockperf 14 B, SMC-D loopback"),
    "rsocket": (seeds.figure("004_rsocket_rtt"), "seed 004: netperf TCP_RR 1 B, rsockets"),
}


def _latency_row(measurement, ours, seed=None):
    return {
        "measurement": measurement,
        "ours_s": ours,
        "seed_s": seed[0] if seed else None,
        "seed_conditions": seed[1] if seed else None,
    }


def latency_table(records) -> dict:
    e = "latency"
    rows = []
    for transport in ("tcp", "shm", "rdma", "rsocket", "smc"):
        rec = find(records, experiment=e, tool="pingpong", transport=transport)
        where = "one host" if transport == "shm" else "between the hosts"
        size = f"{rec['message_bytes']} B" if rec and rec.get("message_bytes") else "smallest grid"
        rows.append(
            _latency_row(
                f"pingpong {transport} RTT, {size} ({where})",
                rec["iteration_s"] if rec else None,
                _PINGPONG_RTT_SEEDS.get(transport),
            )
        )
    for tool, how in (("ib_write_lat", "2 x t_typical"), ("ib_read_lat", "t_typical")):
        rec = find(records, experiment=e, tool=tool)
        rows.append(_latency_row(f"{tool} RTT ({how}), 2 B", rec["rtt_s"] if rec else None))
    qperf = find(records, experiment=e, tool="qperf")
    for test in ("rc_lat", "tcp_lat"):
        one_way = qperf["tests"].get(test, {}).get("latency") if qperf else None
        rows.append(
            _latency_row(f"qperf {test} RTT (2 x latency), 1 B", 2 * one_way if one_way else None)
        )
    by = {r["measurement"].split(",")[0]: r["ours_s"] for r in rows}
    ratios = [
        ratio_entry(
            "RDMA RTT / TCP RTT (qperf rc_lat / tcp_lat)",
            ratio(by["qperf rc_lat RTT (2 x latency)"], by["qperf tcp_lat RTT (2 x latency)"]),
            None,
            False,
            "rxe latency is a software path; under TCG absolute times are meaningless too",
        ),
        ratio_entry(
            "rsocket RTT / our RDMA RTT (pingpong)",
            ratio(by["pingpong rsocket RTT"], by["pingpong rdma RTT"]),
            None,
            True,
            "both over the same rxe device: rsocket's copies and credits against direct writes",
        ),
    ]
    return table(e, "Small-message latency (seeds 002, 004)", rows, ratios, records)


def smc_table(records) -> dict:
    e = "smc"
    hosts = find(records, experiment=e, transport="smc", placement="local")
    loop = find(records, experiment=e, transport="smc", placement="loopback")
    tcp = find(records, experiment=e, transport="tcp")
    rows = []
    for label, rec, seed in (
        ("smc between the hosts", hosts, "002_smc_lo_bw"),
        ("smc on one host (loopback)", loop, "002_smc_lo_bw"),
        ("tcp between the hosts", tcp, "002_tcp_lo_bw"),
    ):
        connection = (rec or {}).get("connection", {})
        rows.append(
            {
                "transport": label,
                "ours": rec["bytes_per_s_total"] if rec else None,
                "seed": seeds.figure(seed),
                "mode": connection.get("mode") if label.startswith("smc") else "TCP",
                "fallback_reason": connection.get("fallback_reason"),
                "fallback_text": connection.get("fallback_text"),
            }
        )
    mode = rows[0]["mode"]
    ratios = [
        ratio_entry(
            "SMC / TCP throughput (between the hosts)",
            ratio(rows[0]["ours"], rows[2]["ours"]),
            seeds.figure("002_smc_lo_bw") / seeds.figure("002_tcp_lo_bw"),
            mode in ("SMC-R", "SMC-D"),
            f"the connection ran {mode or 'an unknown mode'}: only a connection that ran "
            "SMC compares; a TCP fallback measures TCP twice",
        )
    ]
    return table(e, "SMC vs TCP (seed 002)", rows, ratios, records, note=SMC_LO_NOTE)


def rsocket_table(records) -> dict:
    rows, ratios = [], []
    for size in sorted({r["size_bytes"] for r in records if r.get("experiment") == "rsocket"}):
        row = {"size_bytes": size}
        for transport in ("rsocket", "rdma", "tcp"):
            rec = find(records, experiment="rsocket", transport=transport, size_bytes=size)
            row[transport] = rec["bytes_per_s_total"] if rec else None
        # Seed 004's netperf stream: 39.4 Gb/s at 4-64 KiB messages, 25.8 above.
        seed_name = "004_rsocket_stream" if size <= 65536 else "004_rsocket_stream_large"
        row["seed_rsocket"] = seeds.figure(seed_name)
        rows.append(row)
        ratios.append(
            ratio_entry(
                f"rsocket / RDMA ceiling, {size >> 10} KiB (ours: our rdma transport; "
                "seed: its 40 Gb/s link)",
                ratio(row["rsocket"], row["rdma"]),
                seeds.figure(seed_name) / seeds.figure("004_link"),
                True,
                "both over the same rxe device: rsocket's extra copy and "
                "credits against direct writes",
            )
        )
    return table("rsocket", "rsockets vs our RDMA transport (seed 004)", rows, ratios, records)
