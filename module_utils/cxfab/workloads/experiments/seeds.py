"""The seeds' published figures, with their conditions, to print beside ours.

Numbers are transcribed from the seed reports in /work/shared/seeds (000: stencil
ping-pong over ConnectX-4 EDR VPI cards in Ethernet mode, 100 GbE RoCE, PCIe 3.0 x8;
001: NUMA placement on a 40 GbE NIC; 002: SMC-D loopback patch set; 003: "RDMA cat"
on ConnectX-2 QDR InfiniBand at PCIe 2.0 x8; 004: rsockets on ConnectX-3 40 Gb/s).
Only figures the report compares are kept; each carries where it comes from.
"""

from __future__ import annotations

# Seed 000: time (s) of 10.48 GB each way per pair, averaged over 3 x pairs runs.
# (transport, compute, buffer bytes, iterations, pairs) -> (client real, client user,
# client sys, server user, server sys)
SEED_000_PINGPONG = {
    ("rdma", True, 4194304, 2500, 1): (7.412, 1.240, 0.171, 2.520, 0.056),
    ("rdma", True, 4194304, 2500, 2): (11.038, 1.724, 0.130, 2.770, 0.093),
    ("rdma", True, 4194304, 2500, 4): (17.412, 3.068, 0.076, 3.073, 0.100),
    ("rdma", False, 4194304, 2500, 1): (4.435, 0.175, 0.281, 0.190, 0.196),
    ("rdma", False, 4194304, 2500, 2): (5.386, 0.275, 0.252, 0.213, 0.207),
    ("rdma", False, 4194304, 2500, 4): (7.821, 0.245, 0.249, 0.190, 0.218),
    ("rdma", True, 1048576, 10000, 1): (6.616, 1.122, 0.109, 2.116, 0.145),
    ("rdma", True, 1048576, 10000, 2): (7.863, 1.615, 0.093, 2.183, 0.141),
    ("rdma", True, 1048576, 10000, 4): (7.652, 1.599, 0.077, 1.647, 0.115),
    ("rdma", True, 1048576, 10000, 8): (14.718, 2.935, 0.175, 1.979, 0.138),
    ("rdma", False, 1048576, 10000, 1): (3.618, 0.061, 0.070, 0.159, 0.196),
    ("rdma", False, 1048576, 10000, 2): (3.910, 0.074, 0.073, 0.169, 0.192),
    ("rdma", False, 1048576, 10000, 4): (6.257, 0.066, 0.075, 0.110, 0.140),
    ("rdma", False, 1048576, 10000, 8): (12.841, 0.146, 0.143, 0.101, 0.119),
    ("rdma", True, 262144, 40000, 1): (6.508, 1.257, 0.186, 1.405, 0.296),
    ("rdma", True, 262144, 40000, 2): (7.430, 1.581, 0.221, 1.433, 0.329),
    ("rdma", True, 262144, 40000, 4): (9.367, 1.898, 0.276, 1.506, 0.325),
    ("rdma", False, 262144, 40000, 1): (4.579, 0.291, 0.280, 0.288, 0.409),
    ("rdma", False, 262144, 40000, 2): (5.618, 0.424, 0.404, 0.268, 0.475),
    ("rdma", False, 262144, 40000, 4): (7.417, 0.289, 0.298, 0.302, 0.450),
    ("tcp", True, 4194304, 2500, 1): (9.427, 0.899, 4.923, 1.875, 5.126),
    ("tcp", True, 4194304, 2500, 2): (10.830, 1.034, 6.712, 1.876, 5.381),
    ("tcp", True, 4194304, 2500, 4): (17.676, 2.319, 10.833, 2.168, 5.617),
    ("tcp", False, 4194304, 2500, 1): (6.396, 0.015, 3.940, 0.006, 4.239),
    ("tcp", False, 4194304, 2500, 2): (7.701, 0.019, 5.671, 0.005, 4.496),
    ("tcp", False, 4194304, 2500, 4): (12.500, 0.026, 9.108, 0.014, 4.599),
    ("tcp", True, 1048576, 10000, 1): (10.887, 0.474, 4.343, 1.417, 5.407),
    ("tcp", True, 1048576, 10000, 2): (11.897, 0.820, 5.189, 1.346, 5.085),
    ("tcp", True, 1048576, 10000, 4): (16.817, 1.696, 9.079, 1.510, 5.379),
    ("tcp", True, 1048576, 10000, 8): (29.408, 2.353, 11.684, 1.870, 5.657),
    ("tcp", False, 1048576, 10000, 1): (8.805, 0.022, 3.797, 0.013, 4.709),
    ("tcp", False, 1048576, 10000, 2): (9.402, 0.046, 5.936, 0.014, 4.622),
    ("tcp", False, 1048576, 10000, 4): (13.118, 0.051, 7.484, 0.023, 4.714),
    ("tcp", False, 1048576, 10000, 8): (22.877, 0.050, 10.305, 0.035, 4.873),
    ("tcp", True, 262144, 40000, 1): (13.731, 0.490, 3.886, 0.966, 4.315),
    ("tcp", True, 262144, 40000, 2): (15.007, 0.520, 4.458, 0.864, 4.456),
    ("tcp", True, 262144, 40000, 4): (18.499, 0.626, 5.549, 0.914, 4.659),
    ("tcp", False, 262144, 40000, 1): (13.175, 0.046, 3.508, 0.026, 3.972),
    ("tcp", False, 262144, 40000, 2): (13.979, 0.063, 4.130, 0.052, 4.256),
    ("tcp", False, 262144, 40000, 4): (17.554, 0.066, 5.216, 0.048, 4.398),
}


def seed_000_row(transport: str, compute: bool, size: int, pairs: int) -> dict | None:
    """Seed 000's row for these conditions: times and the per-iteration round trip."""
    for (t, c, s, iterations, p), times in SEED_000_PINGPONG.items():
        if (t, c, s, p) == (transport, compute, size, pairs):
            real, cu, cs, su, ss = times
            return {
                "client_real_s": real,
                "client_user_s": cu,
                "client_sys_s": cs,
                "server_user_s": su,
                "server_sys_s": ss,
                "iteration_s": real / iterations,
                "iterations": iterations,
            }
    return None


# Other seeds' headline figures: name -> (value, unit, source and conditions).
SEED_FIGURES = {
    "000_qperf_rc_rdma_write_bw": (
        7.25e9,
        "B/s",
        "seed 000: qperf -cm1 -m 1M, ConnectX-4 at 100 GbE",
    ),
    "000_qperf_rc_rdma_read_bw": (
        6.47e9,
        "B/s",
        "seed 000: qperf -cm1 -m 1M, ConnectX-4 at 100 GbE",
    ),
    "000_iperf_1": (4.80e9, "B/s", "seed 000: iperf TCP, 1 stream, 10 s"),
    "000_iperf_4": (6.90e9, "B/s", "seed 000: iperf TCP, 4 streams, 10 s"),
    "000_pcie_ceiling": (63.008e9 / 8, "B/s", "seed 000: PCIe 8 GT/s x8 (kernel message)"),
    "001_numa_local_1": (14.7e9 / 8, "B/s", "seed 001: iperf, 1 process, NIC-local cores"),
    "001_numa_far_1": (2.00e9 / 8, "B/s", "seed 001: iperf, 1 process, far-node cores"),
    "001_numa_local_12": (37.9e9 / 8, "B/s", "seed 001: iperf, 12 processes, NIC-local"),
    "001_numa_far_12": (4.84e9 / 8, "B/s", "seed 001: iperf, 12 processes, far node"),
    "002_tcp_lo_latency": (6.122e-6, "s", "seed 002: sockperf pp 14 B, TCP loopback"),
    "002_smc_lo_latency": (3.174e-6, "s", "seed 002: sockperf pp 14 B, SMC-D loopback"),
    "002_tcp_lo_bw": (5169.250e6, "B/s", "seed 002: sockperf tp 64000 B, TCP loopback"),
    "002_smc_lo_bw": (8007.080e6, "B/s", "seed 002: sockperf tp 64000 B, SMC-D loopback"),
    "003_link": (3.3e9, "B/s", "seed 003: PCIe 2.0 x8 ceiling of the QDR HCA"),
    "003_rcat_double": (2.8e9, "B/s", "seed 003: rcat, read overlapped with send"),
    "003_rcat_single": (1.78e9, "B/s", "seed 003: rcat, 8 MiB messages, no overlap"),
    "003_iperf3": (2.9e9, "B/s", "seed 003: iperf3 over IPoIB"),
    "004_rsocket_rtt": (1.9e-6, "s", "seed 004: netperf TCP_RR 1 B over rsockets"),
    "004_rsocket_stream": (39.4e9 / 8, "B/s", "seed 004: netperf stream 4-64 KiB, rsockets"),
    "004_rsocket_stream_large": (25.8e9 / 8, "B/s", "seed 004: netperf stream >= 64 KiB"),
    "004_link": (40e9 / 8, "B/s", "seed 004: ConnectX-3 port rate 40 Gb/s"),
}


def figure(name: str) -> float:
    return SEED_FIGURES[name][0]
