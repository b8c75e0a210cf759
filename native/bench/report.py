"""`make bench`'s outputs: the plots and latest.md, from the report bench.py measured.

The sweep's transports and sizes are read from the results (in the order bench.py
ran them), the targets from the report, so this module holds no figure of its own.
"""

from __future__ import annotations

from pathlib import Path


def sweep_transports(results: dict) -> list[str]:
    """The sweep's transports in the order they ran."""
    return list(dict.fromkeys(point["transport"] for point in results["sweep"]))


def plot(results: dict, out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for transport in sweep_transports(results):
        points = [p for p in results["sweep"] if p["transport"] == transport]
        ax.plot(
            [p["size_bytes"] / 1024 for p in points],
            [p["bytes_per_s_total"] / 1e9 for p in points],
            marker="o",
            label=transport,
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size [KiB]")
    ax.set_ylabel("bandwidth, both directions [GB/s]")
    ax.set_title("pingpong loopback, no compute, --pipeline 1")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    name = "bandwidth_vs_size.png"
    fig.savefig(out / name, dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    labels, values = [], []
    for transport, gain in results["details"]["pipeline_gain"].items():
        for depth in ("pipeline_1", "pipeline_2"):
            labels.append(f"{transport}\n{depth.replace('_', ' ')}")
            values.append(gain[depth]["iteration_s"] * 1e3)
    ax.bar(labels, values, color=["#4c72b0", "#55a868"] * (len(values) // 2))
    ax.set_ylabel("iteration time [ms]")
    ax.set_title("4 MiB grid, compute on: stop-and-wait vs two bands in flight")
    fig.tight_layout()
    name2 = "pipeline_gain.png"
    fig.savefig(out / name2, dpi=110)
    plt.close(fig)
    return [name, name2]


def markdown(report: dict, plots: list[str]) -> str:
    transports = sweep_transports(report["results"])
    ratios = report["results"]["ratios"]
    lines = [
        "# Native benchmark",
        "",
        f"Run {report['started']} on {report['machine']['cpu']} "
        f"({report['machine']['cpus']} CPUs), {report['duration_s']:.0f} s. "
        "Each figure is a ratio against a reference measured in the same run "
        f"(best of {report['repeats']} interleaved repeats).",
        "",
        "| ratio | value | target | meaning |",
        "|---|---:|---:|---|",
    ]
    meaning = {
        "tcp_vs_iperf3": "pingpong TCP loopback (4 MiB, no compute, stop-and-wait; bytes of "
        "both directions) vs iperf3 one stream one way, same bytes",
        "shm_vs_tcp": "shared memory (one copy per message) vs our TCP loopback (information)",
        "shm_vs_memcpy": "shm one way (--stream, 4 in flight, pinned) vs memcpy of the same "
        "size into 4 buffers in turn (the ring's working set): worst of the sweep sizes",
        "rcat_double_over_single": "TCP rcat, 64 MiB: --pipeline 2 vs 1 (information)",
        "shm_zc_vs_tcp": "zero-copy shared memory vs TCP (ceiling, nothing copied)",
        "stencil_vs_memcpy": "stencil bytes/s vs memcpy of the same buffer, same process",
        "pipeline_gain": "TCP iteration time, compute on: best stop-and-wait (pinned or not) / "
        "--pipeline 2 (client CPU 0, server CPU 1)",
        "pipeline_gain_shm": "same on shared memory",
        "rdma_vs_ib_write_bw": "our RDMA transport vs ib_write_bw between the lab guests",
    }
    for name, value in ratios.items():
        target = report["targets"].get(name)
        verdict = "" if target is None else (" (met)" if value >= target else " (MISSED)")
        target_text = "" if target is None else f">= {target}{verdict}"
        lines.append(f"| `{name}` | {value:.2f} | {target_text} | {meaning.get(name, '')} |")
    for name, reason in report["results"]["skipped"].items():
        lines.append(f"| `{name}` | skipped | | {reason} |")
    details = report["results"]["details"]
    st = details["stencil_vs_memcpy"]
    lines += [
        "",
        "## Stencil per ISA (4 MiB grid, 100 steps)",
        "",
        "| isa | stencil [GB/s] | memcpy [GB/s] | ratio |",
        "|---|---:|---:|---:|",
    ]
    for isa, r in st["per_isa"].items():
        lines.append(
            f"| {isa} | {r['stencil_bytes_per_s'] / 1e9:.2f} | "
            f"{r['memcpy_bytes_per_s'] / 1e9:.2f} | {r['stencil_vs_memcpy']:.2f} |"
        )
    lines += [
        "",
        "## Bandwidth against message size (both directions, GB/s)",
        "",
        "| size | " + " | ".join(transports) + " |",
        "|---:|" + "---:|" * len(transports),
    ]
    for size in sorted({p["size_bytes"] for p in report["results"]["sweep"]}):
        row = [p for p in report["results"]["sweep"] if p["size_bytes"] == size]
        by_t = {p["transport"]: p["bytes_per_s_total"] / 1e9 for p in row}
        lines.append(
            f"| {size // 1024} KiB | " + " | ".join(f"{by_t[t]:.2f}" for t in transports) + " |"
        )
    res = report["results"]
    lines += [
        "",
        "## shm against memcpy per size (target >= 0.8 at every size)",
        "",
        "| size | shm one way [GB/s] | memcpy, 4 buffers [GB/s] | ratio "
        "| memcpy, 1 buffer [GB/s] | ratio to it | round trip / memcpy |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size, r in details["shm_vs_memcpy"]["per_size"].items():
        before = r["round_trip_ratio"]
        one = r.get("memcpy_one_buffer_bytes_per_s")
        one_text = "- | -" if one is None else f"{one / 1e9:.2f} | {r['ratio_one_buffer']:.2f}"
        lines.append(
            f"| {int(size) // 1024} KiB | {r['shm_bytes_per_s'] / 1e9:.2f} | "
            f"{r['memcpy_bytes_per_s'] / 1e9:.2f} | {r['ratio']:.2f} | {one_text} | "
            f"{'-' if before is None else f'{before:.3f}'} |"
        )
    lat, rc = res["latency"], res["rcat"]
    lines += [
        "",
        "## Latency and rcat",
        "",
        "| row | value |",
        "|---|---:|",
        f"| tcp round trip, 4 KiB [us] | {lat['tcp']['rtt_s'] * 1e6:.1f} |",
        f"| shm round trip, 4 KiB [us] | {lat['shm']['rtt_s'] * 1e6:.1f} |",
        f"| rcat tcp double-buffered [GB/s] | {rc['double_bytes_per_s'] / 1e9:.2f} |",
        f"| rcat tcp single-buffered [GB/s] | {rc['single_bytes_per_s'] / 1e9:.2f} |",
        f"| memcpy of a 1 MiB chunk [GB/s] | {rc['memcpy_bytes_per_s'] / 1e9:.2f} |",
        f"| rcat double / memcpy | {rc['double_vs_memcpy']:.2f} |",
        "",
        "## Beside the seeds (ratios that carry across machines)",
        "",
        "| figure | ours | seed | note |",
        "|---|---:|---:|---|",
    ]
    lines += [
        f"| {r['figure']} | {r['ours']:.2f} | {r['seed']:.2f} | {r['note']} |"
        for r in res["seed_table"]
    ]
    lines += [""] + [f"![{p}]({p})" for p in plots] + [""]
    return "\n".join(lines)
