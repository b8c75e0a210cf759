"""native/bench/rows.py: the bench rows from measurements (a recording stand-in for the bench)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "native" / "bench"))

import rows  # native/bench, put on sys.path above


class RecordingBench:
    """Hands out the figures it was given, in order, and records how it was asked."""

    def __init__(self, pingpongs, memcpy, repeats=5):
        self.pingpongs = list(pingpongs)
        self.memcpy = dict(memcpy)
        self.repeats = repeats
        self.calls = []

    def pingpong(self, transport, size, **kwargs):
        self.calls.append(("pingpong", transport, size, kwargs))
        return self.pingpongs.pop(0)

    def stencil(self, isa, size, iterations, copy_slots=1):
        self.calls.append(("stencil", isa, size, iterations, copy_slots))
        return {"memcpy_bytes_per_s": self.memcpy[size]}


def stream_run(bytes_per_s):
    return {"bytes_per_s_total": bytes_per_s}


def test_shm_is_judged_one_way_against_memcpy_of_the_same_size_worst_size_counts():
    repeats = rows.SHM_STREAM_REPEATS
    small = [stream_run(1e9 * (i + 1)) for i in range(repeats)]  # best: repeats GB/s
    big = [stream_run(2e9) for _ in range(repeats)]
    bench = RecordingBench(small + big, {65536: 10e9, 4 << 20: 2.5e9})
    sweep = [
        {"transport": "shm", "size_bytes": 65536, "bytes_per_s_total": 0.1e9},
        {"transport": "tcp", "size_bytes": 65536, "bytes_per_s_total": 5e9},
    ]
    result = rows.shm_vs_memcpy(bench, [65536, 4 << 20], sweep)
    first = result["per_size"][65536]
    assert first["shm_bytes_per_s"] == repeats * 1e9
    assert first["ratio"] == pytest.approx(repeats * 1e9 / 10e9)
    assert first["round_trip_ratio"] == pytest.approx(0.01)  # the stop-and-wait figure
    second = result["per_size"][4 << 20]
    assert second["ratio"] == pytest.approx(0.8) and second["round_trip_ratio"] is None
    assert result["worst_size"] == 65536 and result["ratio"] == first["ratio"]
    streams = [c for c in bench.calls if c[0] == "pingpong"]
    assert len(streams) == 2 * repeats
    for _, transport, size, kwargs in streams:
        assert transport == "shm" and kwargs["stream"] is True
        assert kwargs["pipeline"] == rows.SHM_STREAM_DEPTH and kwargs["cpus"] == "0,1"
        assert kwargs["iterations"] == max(8, rows.SHM_STREAM_BYTES // size)
    references = {c[2] for c in bench.calls if c[0] == "stencil"}
    assert references == {65536, 4 << 20}, "memcpy must be of the same sizes"
    slots = {c[4] for c in bench.calls if c[0] == "stencil"}
    assert slots == {1, rows.SHM_STREAM_DEPTH}, "judged into the ring's slots, one buffer beside"
    for c in bench.calls:
        if c[0] == "stencil" and c[4] > 1:
            assert c[3] % c[4] == 0 and c[3] >= 10 * c[4], "every round writes every slot"
    assert first["memcpy_copy_slots"] == rows.SHM_STREAM_DEPTH
    assert first["ratio_one_buffer"] == pytest.approx(first["ratio"])  # same stand-in figure


def test_memcpy_reference_is_the_best_of_its_runs():
    bench = RecordingBench([], {4096: 3e9}, repeats=5)
    assert rows.memcpy_bytes_per_s(bench, 4096) == 3e9
    assert [c[0] for c in bench.calls] == ["stencil"] * 3


def test_latency_keeps_the_best_round_trip_of_each_transport():
    times = [3e-3, 1e-3, 2e-3, 9e-4, 5e-4, 7e-4]
    bench = RecordingBench([{"iteration_s": t} for t in times], {}, repeats=3)
    out = rows.latency(bench)
    assert out["tcp"] == {"rtt_s": 1e-3, "all_rtt_s": [3e-3, 1e-3, 2e-3]}
    assert out["shm"]["rtt_s"] == 5e-4
    sizes = {c[2] for c in bench.calls}
    assert sizes == {rows.LATENCY_BYTES}


def test_seed_table_puts_our_ratios_beside_the_seeds():
    latency = {"tcp": {"rtt_s": 20e-6}, "shm": {"rtt_s": 5e-6}}
    rcat = {"double_over_single": 1.5, "double_vs_memcpy": 0.4}
    table = {r["figure"]: r for r in rows.seed_table({"shm_vs_tcp": 3.0}, latency, rcat)}
    assert table["rcat double / single buffering"]["seed"] == pytest.approx(2.8 / 1.78)
    assert table["rcat (double) / ceiling"]["seed"] == pytest.approx(2.8 / 3.3)
    assert table["TCP loopback round trip, 4 KiB [us]"]["ours"] == pytest.approx(20.0)
    assert table["shm round trip / TCP round trip, 4 KiB"]["ours"] == pytest.approx(0.25)
    assert table["shared memory / TCP throughput (information)"]["ours"] == 3.0
    without = rows.seed_table({}, latency, rcat)
    assert "shared memory / TCP throughput (information)" not in {r["figure"] for r in without}


def stencil_run(stencil_gbps, memcpy_gbps):
    return {
        "stencil_bytes_per_s": stencil_gbps * 1e9,
        "memcpy_bytes_per_s": memcpy_gbps * 1e9,
        "stencil_vs_memcpy": stencil_gbps / memcpy_gbps,
    }


def test_a_disturbed_memcpy_repeat_does_not_flatter_the_stencil():
    quiet = [stencil_run(35, 45), stencil_run(36, 46), stencil_run(34, 44)]
    disturbed = stencil_run(35, 30)  # another tenant slowed this repeat's memcpy
    judged = rows.best_of_each_side([*quiet, disturbed])
    assert judged["stencil_vs_memcpy"] == pytest.approx(36 / 46)
    assert judged["stencil_bytes_per_s"] == 36e9
    assert judged["memcpy_bytes_per_s"] == 46e9
    assert len(judged["repeats"]) == 4
    assert judged["median_of_paired_ratios"] == pytest.approx((35 / 45 + 36 / 46) / 2)
