"""The runs of each experiment, one function each (called by plan.plan_experiments).

Each function adds its runs to the planner `p` (plan._Planner) from the settings `s`.
"""

from __future__ import annotations

from .settings import NETWORK_TRANSPORTS, iterations_for

LATENCY_BYTES = 4096  # pingpong's smallest message size (its grid is 16 x 16 doubles there)
QPERF_BW_TESTS = ["rc_rdma_write_bw", "rc_rdma_read_bw", "tcp_bw"]
QPERF_LAT_TESTS = ["rc_lat", "tcp_lat"]

# Link rate (Mb/s) of the interface that routes to the server; virtual NICs print -1.
_LINK_SPEED = (
    'dev=$(ip -o route get "$1" | sed -n "s/.* dev \\([^ ]*\\).*/\\1/p"); '
    'echo "$dev $(cat /sys/class/net/$dev/speed 2>/dev/null || echo -1)"'
)


def pingpong_matrix(p, s, work_dir):
    for transport in s["transports"]:
        for size in s["sizes"]:
            for pairs in s["pairs"]:
                for compute in s["compute"]:
                    p.pingpong("pingpong_matrix", transport, size, pairs, compute)


def _qperf(p, experiment, tests, extra, **fields):
    duration = str(p.s["duration"])
    p.both(
        experiment,
        "qperf",
        lambda port: ["qperf", "-lp", str(port)],
        # -cm1: connect through RDMA-CM, which finds the RoCE GID from the address;
        # the last test, quit, ends the server.
        lambda port: (
            [
                *("qperf", p.server_ip, "-lp", str(port), "-cm1", "-t", duration),
                *extra,
                *tests,
                "quit",
            ]
        ),
        transport="rdma+tcp",
        tests=tests,
        **fields,
    )


def _perftest(p, experiment, argv, size_bytes):
    """A perftest run (argv[0] the tool, with -R: through RDMA-CM), on the run's port;
    its client names the server."""
    p.both(
        experiment,
        argv[0],
        lambda port: [*argv, "-p", str(port)],
        lambda port: [*argv, "-p", str(port), p.server_ip],
        transport="rdma",
        size_bytes=size_bytes,
    )


def reference_tools(p, s, work_dir):
    largest = max(s["sizes"])
    for tool in ("ib_write_bw", "ib_read_bw"):
        # --cpu_util (duration mode only) adds the CPU column the report shows.
        argv = [tool, "-R", "-F", "--report_gbits", "--cpu_util", "-s", str(largest)]
        argv += ["-D", str(s["duration"])]
        _perftest(p, "reference_tools", argv, largest)
    # -vv: each side's CPU use; -m: the bandwidth tests' message size (the latency
    # tests of this run use it too, and the report says so).
    _qperf(
        p,
        "reference_tools",
        QPERF_BW_TESTS + QPERF_LAT_TESTS,
        ["-vv", "-m", str(largest)],
        size_bytes=largest,
    )
    for streams in (1, 4):
        p.iperf3("reference_tools", "local", processes=1, streams=streams)


def _no_far_cores(p) -> str:
    """Why the far runs cannot be pinned ('' when both hosts have far cores)."""
    unknown = [side for side in ("server", "client") if not p.place[side]["local"]]
    if unknown:
        return f"{' and '.join(unknown)} host: NIC-local cores unknown (no NUMA node for its NIC)"
    one_node = [side for side in ("server", "client") if not p.place[side]["far"]]
    if one_node:
        return f"{' and '.join(one_node)} host has one NUMA node: no far cores to pin to"
    return ""


def numa(p, s, work_dir):
    no_far = _no_far_cores(p)
    for processes in s["numa_processes"]:
        for placement in ("local", "far"):
            if placement == "far" and no_far:
                p.add(
                    {
                        "experiment": "numa",
                        "tool": "iperf3",
                        "placement": "far",
                        "transport": "tcp",
                        "processes": processes,
                        "servers": [],
                        "clients": [],
                        "skipped": no_far,
                    }
                )
                continue
            p.iperf3("numa", placement, processes=processes)


def rcat(p, s, work_dir):
    chunk = str(s["rcat_chunk"])
    memcpy = [f"{p.bin}/stencil-bench", "--isa", "scalar", "--size", chunk]
    p.add(
        {
            "experiment": "rcat",
            "tool": "memcpy",
            "servers": [],
            "size_bytes": s["rcat_chunk"],
            "clients": [p.pin("client", [*memcpy, "--iterations", "5", "--json"])],
        }
    )
    p.add(
        {
            "experiment": "rcat",
            "tool": "link_speed",
            "servers": [],
            "clients": [["sh", "-c", _LINK_SPEED, "link-speed", p.server_ip]],
        }
    )
    for transport in ("rdma", "tcp"):
        for mib in s["rcat_mib"]:
            for pipeline in (2, 1):
                src = f"{work_dir}/rcat-{mib}m.bin"
                common = ["--transport", transport, "--size", chunk]
                common += ["--pipeline", str(pipeline), "--json"]
                p.both(
                    "rcat",
                    "rcat",
                    lambda port, common=common: [
                        *["sh", "-c", 'exec "$@" > /dev/null', "rcat", f"{p.bin}/rcat"],
                        *[*common, "--server", f"0.0.0.0:{port}"],
                    ],
                    lambda port, common=common, src=src: [
                        *["sh", "-c", 'f=$1; shift; exec "$@" < "$f"', "rcat", src],
                        *[f"{p.bin}/rcat", *common, "--client", f"{p.server_ip}:{port}"],
                    ],
                    transport=transport,
                    size_bytes=mib << 20,
                    pipeline=pipeline,
                    input_file=src,
                )


def latency(p, s, work_dir):
    iterations = s["latency_iterations"]
    for transport in NETWORK_TRANSPORTS:
        p.pingpong("latency", transport, LATENCY_BYTES, iterations=iterations)
    p.loopback("latency", "shm", LATENCY_BYTES, iterations)
    for tool in ("ib_write_lat", "ib_read_lat"):
        _perftest(p, "latency", [tool, "-R", "-F", "-s", "2", "-n", str(iterations)], 2)
    _qperf(p, "latency", QPERF_LAT_TESTS, ["-v"])


def smc(p, s, work_dir):
    largest = max(s["sizes"])
    for transport in ("smc", "tcp"):
        p.pingpong("smc", transport, largest, compute=True)
    # Seed 002's case: both ends on one host. SMC-D over the loopback device needs
    # CONFIG_SMC_LO (Linux 6.10+); without it the kernel's fallback reason is the figure.
    p.loopback("smc", "smc", largest, iterations_for(s, largest), compute=True)


def rsocket(p, s, work_dir):
    for transport in ("rsocket", "rdma", "tcp"):
        for size in s["sizes"]:
            p.pingpong("rsocket", transport, size)
