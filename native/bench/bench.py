"""`make bench`: native workloads against references measured in the same run.

Every figure is a ratio against a reference taken on the same machine in the
same run, so the absolute speed of the machine (and of whatever else shares
its cores) cancels out as far as possible. Each measurement is repeated and
the repeats are interleaved with the reference's; the best repeat counts
(the least disturbed one). Writes <out>/latest.json, <out>/latest.md and PNG
plots.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import rows  # noqa: E402  (sibling modules, path set just above)
from lab import lab_rdma_comparison  # noqa: E402
from report import markdown, plot  # noqa: E402

# shm_vs_tcp is information only: it measures this CPU's memcpy against its TCP copy
# path (1.5-1.6 on an AMD EPYC without AVX-512, 6.3 where it was tuned), not our code.
# shm_vs_memcpy is judged instead: the worst message size against memcpy of that size.
TARGETS = {
    "shm_vs_memcpy": rows.SHM_VS_MEMCPY_TARGET,
    "tcp_vs_iperf3": 0.9,
    # Issue 30's target; it had been lowered to 0.5 (docs/native-vs-memcpy.md: how it was reached).
    "stencil_vs_memcpy": 0.8,
}
SWEEP_SIZES = [64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20]
SWEEP_TRANSPORTS = ["tcp", "shm", "shm-zc"]
MAIN_SIZE = 4 << 20
PIPELINE_ITERATIONS = 60


def run_json(argv: list[str], timeout: float = 120) -> dict:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def listening(port: int) -> bool:
    """True when a TCP socket listens on `port` (from /proc/net/tcp, no connection made)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A" and int(fields[1].split(":")[1], 16) == port:
            return True
    return False


def paired_median(measured: list[float], reference: list[float]) -> float:
    """Median of measured[i] / reference[i]: repeat i of both ran back to back."""
    return statistics.median(m / r for m, r in zip(measured, reference, strict=True))


def raise_priority() -> int:
    """Nice -20 (inherited by every program the bench starts, reference or ours alike),
    so that other tenants of a shared machine disturb the measurements less. Returns
    the niceness in effect (0 when not permitted)."""
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, 0, -20)
    return os.getpriority(os.PRIO_PROCESS, 0)


class Bench:
    def __init__(self, build: Path, repeats: int, total_bytes: int):
        self.build = build
        self.repeats = repeats
        self.total_bytes = total_bytes

    def pingpong(
        self,
        transport: str,
        size: int,
        compute=False,
        pipeline=1,
        iterations=None,
        cpus=None,
        stream=False,
    ):
        if iterations is None:
            iterations = max(4, self.total_bytes // (2 * size))
        argv = [
            str(self.build / "pingpong"),
            "--loopback",
            "--transport",
            transport,
            "--size",
            str(size),
            "--iterations",
            str(iterations),
            "--pipeline",
            str(pipeline),
            "--json",
        ]
        if compute:
            argv.append("--compute")
        if stream:
            argv.append("--stream")
        if cpus:
            argv += ["--cpus", cpus]
        return run_json(argv)

    def iperf3(self, nbytes: int, bidir: bool = False) -> dict:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        server = subprocess.Popen(
            ["iperf3", "-s", "-1", "-p", str(port), "-B", "127.0.0.1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            # Wait until the server listens without connecting: a probe connection would
            # use up the single test of `iperf3 -s -1`.
            for _ in range(100):
                if listening(port) or server.poll() is not None:
                    break
                time.sleep(0.05)
            proc = subprocess.run(
                ["iperf3", "-c", "127.0.0.1", "-p", str(port), "-n", str(nbytes), "-J"]
                + (["--bidir"] if bidir else []),
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            out = json.loads(proc.stdout)
            if "error" in out:
                raise RuntimeError(f"iperf3: {out['error']}")
        finally:
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        # --bidir: one stream each way; both directions' bytes count, as for pingpong.
        sums = [
            out["end"][k] for k in ("sum_received", "sum_received_bidir_reverse") if k in out["end"]
        ]
        return {
            "bytes": sum(r["bytes"] for r in sums),
            "bytes_per_s": sum(r["bits_per_second"] for r in sums) / 8,
        }

    def stencil(self, isa: str, size: int, iterations: int, copy_slots: int = 1) -> dict:
        return run_json(
            [
                str(self.build / "stencil-bench"),
                "--isa",
                isa,
                "--size",
                str(size),
                "--iterations",
                str(iterations),
                "--copy-slots",
                str(copy_slots),
                "--json",
            ]
        )

    def best(self, runs: list[dict], key: str, lowest=False) -> dict:
        return (min if lowest else max)(runs, key=lambda r: r[key])


def cpu_isas() -> list[str]:
    flags = Path("/proc/cpuinfo").read_text().split()
    return ["scalar"] + [
        isa for isa, flag in (("avx2", "avx2"), ("avx512", "avx512f")) if flag in flags
    ]


def measure(bench: Bench, with_lab: bool) -> dict:
    results: dict = {"ratios": {}, "details": {}, "sweep": [], "skipped": {}}
    ratios, details = results["ratios"], results["details"]

    # tcp_vs_iperf3 and shm_vs_tcp: the seed's stop-and-wait, no compute, 4 MiB messages.
    # Bytes: pingpong counts what crossed its one connection, both directions summed
    # (client->server + server->client); iperf3 moves that many bytes one way. On
    # loopback every byte costs the same (one copy in, one copy out, the two CPUs
    # shared), which iperf3 --bidir (both directions' sum, same bytes) confirms in the
    # same run: it reaches the one-way rate. Repeats alternate their order (ABBA).
    tcp_runs, shm_runs, zc_runs, iperf_runs, bidir_runs = [], [], [], [], []
    for repeat in range(bench.repeats):
        steps = [
            lambda: tcp_runs.append(bench.pingpong("tcp", MAIN_SIZE)),
            lambda: iperf_runs.append(bench.iperf3(bench.total_bytes)),
            lambda: bidir_runs.append(bench.iperf3(bench.total_bytes // 2, bidir=True)),
            lambda: shm_runs.append(bench.pingpong("shm", MAIN_SIZE)),
            lambda: zc_runs.append(bench.pingpong("shm-zc", MAIN_SIZE)),
        ]
        for step in steps if repeat % 2 == 0 else steps[::-1]:
            step()
    tcp = bench.best(tcp_runs, "bytes_per_s_total")
    iperf = bench.best(iperf_runs, "bytes_per_s")
    bidir = bench.best(bidir_runs, "bytes_per_s")
    shm = bench.best(shm_runs, "bytes_per_s_total")
    zc = bench.best(zc_runs, "bytes_per_s_total")
    ratios["tcp_vs_iperf3"] = tcp["bytes_per_s_total"] / iperf["bytes_per_s"]
    ratios["shm_vs_tcp"] = shm["bytes_per_s_total"] / tcp["bytes_per_s_total"]
    ratios["shm_zc_vs_tcp"] = zc["bytes_per_s_total"] / tcp["bytes_per_s_total"]
    details["tcp_vs_iperf3"] = {
        "pingpong_tcp": tcp,
        "iperf3": iperf,
        "iperf3_bidir": bidir,
        "iperf3_bidir_vs_one_way": bidir["bytes_per_s"] / iperf["bytes_per_s"],
        "median_of_paired_ratios": paired_median(
            [r["bytes_per_s_total"] for r in tcp_runs], [r["bytes_per_s"] for r in iperf_runs]
        ),
        "all_pingpong_bytes_per_s": [r["bytes_per_s_total"] for r in tcp_runs],
        "all_iperf3_bytes_per_s": [r["bytes_per_s"] for r in iperf_runs],
        "note": "pingpong --pipeline 1 (stop-and-wait): bytes of both directions over wall "
        "time; iperf3: one stream, one way, the same byte count (-n)",
    }
    details["shm_vs_tcp"] = {"shm": shm, "tcp": tcp}
    details["shm_zc_vs_tcp"] = {
        "shm-zc": zc,
        "tcp": tcp,
        "note": "zero-copy: nothing is copied without --compute, so this is a ceiling, "
        "not a like-for-like figure",
    }

    # stencil_vs_memcpy: kernel throughput against memcpy of the same buffer, same process.
    per_isa = {}
    for isa in cpu_isas():
        runs = [bench.stencil(isa, MAIN_SIZE, 100) for _ in range(bench.repeats)]
        per_isa[isa] = rows.best_of_each_side(runs)
    best_isa = max(per_isa, key=lambda isa: per_isa[isa]["stencil_vs_memcpy"])
    ratios["stencil_vs_memcpy"] = per_isa[best_isa]["stencil_vs_memcpy"]
    details["stencil_vs_memcpy"] = {"best_isa": best_isa, "per_isa": per_isa}
    missing = {"avx2", "avx512"} - set(per_isa)
    for isa in sorted(missing):
        results["skipped"][f"stencil_{isa}"] = f"this CPU has no {isa} (/proc/cpuinfo)"

    # pipeline_gain: iteration time, compute on, --pipeline 1 vs 2. Overlap needs the
    # client and the server on different CPUs at the same time: left to itself the
    # scheduler often wakes the peer on the waker's CPU (a sync wake-up on loopback),
    # which suits stop-and-wait and serialises a pipeline. So --pipeline 2 runs pinned
    # (client CPU 0, server CPU 1), and the baseline is the better of stop-and-wait
    # pinned and unpinned, so that pinning cannot flatter the gain.
    gains = {}
    configs = [
        ("pipeline_1", 1, None),
        ("pipeline_1_pinned", 1, "0,1"),
        ("pipeline_2_pinned", 2, "0,1"),
    ]
    for transport in ("tcp", "shm"):
        runs: dict[str, list[dict]] = {name: [] for name, _, _ in configs}
        for repeat in range(bench.repeats):
            for name, depth, cpus in configs if repeat % 2 == 0 else configs[::-1]:
                runs[name].append(
                    bench.pingpong(
                        transport,
                        MAIN_SIZE,
                        compute=True,
                        pipeline=depth,
                        iterations=PIPELINE_ITERATIONS,
                        cpus=cpus,
                    )
                )
        best = {name: bench.best(r, "iteration_s", lowest=True) for name, r in runs.items()}
        if len({b["checksum"] for b in best.values()}) != 1:
            raise RuntimeError(f"{transport}: pipeline depths disagree on the grid")
        one = min(best["pipeline_1"], best["pipeline_1_pinned"], key=lambda r: r["iteration_s"])
        two = best["pipeline_2_pinned"]
        gains[transport] = {
            "gain": one["iteration_s"] / two["iteration_s"],
            "pipeline_1": one,
            "pipeline_2": two,
            "best_iteration_s": {name: b["iteration_s"] for name, b in best.items()},
            "median_of_paired_gains": paired_median(
                [
                    min(x["iteration_s"], y["iteration_s"])
                    for x, y in zip(runs["pipeline_1"], runs["pipeline_1_pinned"], strict=True)
                ],
                [r["iteration_s"] for r in runs["pipeline_2_pinned"]],
            ),
        }
    ratios["pipeline_gain"] = gains["tcp"]["gain"]
    ratios["pipeline_gain_shm"] = gains["shm"]["gain"]
    details["pipeline_gain"] = gains

    # Bandwidth against size, per transport (the seed's graphs), no compute.
    for size in SWEEP_SIZES:
        for transport in SWEEP_TRANSPORTS:
            runs = [bench.pingpong(transport, size) for _ in range(max(1, bench.repeats - 1))]
            best = bench.best(runs, "bytes_per_s_total")
            results["sweep"].append(
                {
                    "transport": transport,
                    "size_bytes": size,
                    "bytes_per_s_total": best["bytes_per_s_total"],
                }
            )

    shm_memcpy = rows.shm_vs_memcpy(bench, SWEEP_SIZES, results["sweep"])
    ratios["shm_vs_memcpy"] = shm_memcpy["ratio"]
    details["shm_vs_memcpy"] = shm_memcpy
    results["latency"] = rows.latency(bench)
    results["rcat"] = rows.rcat(bench)
    ratios["rcat_double_over_single"] = results["rcat"]["double_over_single"]
    results["seed_table"] = rows.seed_table(ratios, results["latency"], results["rcat"])

    if with_lab:
        lab = lab_rdma_comparison(bench.build, MAIN_SIZE)
        if "skipped" in lab:
            results["skipped"]["rdma_vs_ib_write_bw"] = lab["skipped"]
        else:
            ratios["rdma_vs_ib_write_bw"] = lab["ratio"]
            details["rdma_vs_ib_write_bw"] = lab
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=REPO / "native" / "build")
    parser.add_argument("--out", type=Path, default=REPO / "reports" / "bench")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--total-bytes",
        type=int,
        default=512 << 20,
        help="bytes moved (both directions) per sweep run",
    )
    parser.add_argument("--no-lab", action="store_true", help="skip the lab RDMA comparison")
    args = parser.parse_args()
    for tool in ("iperf3",):
        if shutil.which(tool) is None:
            print(f"bench: {tool} not found (make setup installs it)", file=sys.stderr)
            return 1
    args.out.mkdir(parents=True, exist_ok=True)
    niceness = raise_priority()
    load_before = os.getloadavg()
    started = time.monotonic()
    report = {
        "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpu": platform.processor() or platform.machine(),
            "cpus": len(os.sched_getaffinity(0)),
            "kernel": platform.release(),
            "nice": niceness,
            "load_average_1_5_15_min_before": load_before,
        },
        "repeats": args.repeats,
        "targets": TARGETS,
        "results": measure(Bench(args.build, args.repeats, args.total_bytes), not args.no_lab),
    }
    report["duration_s"] = time.monotonic() - started
    report["machine"]["load_average_1_5_15_min_after"] = os.getloadavg()
    plots = plot(report["results"], args.out)
    (args.out / "latest.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "latest.md").write_text(markdown(report, plots))
    for name, value in report["results"]["ratios"].items():
        print(f"{name:22s} {value:8.2f}")
    for name, reason in report["results"]["skipped"].items():
        print(f"{name:22s} skipped: {reason}")
    print(f"bench: wrote {args.out / 'latest.json'} and latest.md in {report['duration_s']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
