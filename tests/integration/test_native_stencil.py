"""The stencil of native/pingpong against an independent NumPy reference.

The reference below is written from the formula in native/src/stencil.h, not
from the C code: one explicit diffusion step with zero outside the grid, then
the client's boundary step (outer ring forced to 0). Same operation order as
the C kernels, and their one fused multiply-add computed exactly (NumPy has
none): the grids must be bit-identical.
"""

import json
import math
import os
import random
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CXFAB_NATIVE_BUILD", REPO / "native" / "build"))
FACTOR = 0.01
KEEP = 1.0 - 4.0 * FACTOR  # stencil.h's STENCIL_KEEP, rounded as C rounds it
HALF_WIDTH = 10
INIT_VALUE = 1e4


@pytest.fixture(scope="module")
def native_build():
    sanitize = "1" if BUILD.name == "build-asan" else "0"
    subprocess.run(
        [
            "make",
            "-s",
            "-C",
            str(REPO / "native"),
            f"BUILD={BUILD.name}",
            f"SANITIZE={sanitize}",
            "all",
            "tests",
        ],
        check=True,
    )
    return BUILD


def grid_side(size_bytes: int) -> int:
    n = 8
    while (n + 8) * (n + 8) * 8 <= size_bytes:
        n += 8
    return n


def _split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Veltkamp's split: x = hi + lo exactly, each with 26 significant bits."""
    t = 134217729.0 * x  # 2**27 + 1
    hi = t - (t - x)
    return hi, x - hi


def fma(k: float, s: np.ndarray, c: np.ndarray) -> np.ndarray:
    """k * s + c rounded once, per element, as the C library's fma() and the vector
    FMA round it: Dekker's product gives k * s exactly as p + e (exact while nothing
    overflows or underflows), math.fsum rounds the exact sum of the three once."""
    p = k * s
    (kh, kl), (sh, sl) = _split(np.full_like(s, k)), _split(s)
    e = ((kh * sh - p) + kh * sl + kl * sh) + kl * sl
    terms = zip(p.ravel().tolist(), e.ravel().tolist(), c.ravel().tolist(), strict=True)
    return np.array([math.fsum(t) for t in terms]).reshape(s.shape)


def reference_grid(n: int, iterations: int) -> np.ndarray:
    grid = np.zeros((n, n))
    lo, hi = max(n // 2 - HALF_WIDTH, 1), min(n // 2 + HALF_WIDTH, n - 1)
    grid[lo:hi, lo:hi] = INIT_VALUE
    for _ in range(iterations):
        padded = np.pad(grid, 1)
        s = (padded[1:-1, :-2] + padded[1:-1, 2:]) + (padded[:-2, 1:-1] + padded[2:, 1:-1])
        grid = fma(FACTOR, s, KEEP * grid)
        grid[0, :] = grid[-1, :] = 0.0
        grid[:, 0] = grid[:, -1] = 0.0
    return grid


def checksum(grid: np.ndarray) -> str:
    """The position-weighted hash of native/src/common.c, recomputed with NumPy."""
    bits = np.ascontiguousarray(grid).view(np.uint64).ravel()
    x = bits + np.arange(bits.size, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    x ^= x >> np.uint64(31)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(29)
    return f"{int(x.sum(dtype=np.uint64)):016x}"


def cpu_isas() -> dict[str, bool]:
    flags = Path("/proc/cpuinfo").read_text().split()
    return {"scalar": True, "avx2": "avx2" in flags, "avx512": "avx512f" in flags}


def run_json(cmd: list[str]) -> dict:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_references_fma_is_rounded_once():
    """Guards the reference's fma(): against exact rational arithmetic (float() of a
    Fraction rounds it once, to nearest even), on values of the grids' range and on
    ties built to catch a second rounding."""
    rng = random.Random(7)
    s = [rng.uniform(0, 4e4) * 10.0 ** -rng.randint(0, 40) for _ in range(3000)]
    c = [rng.choice([-1, 1]) * rng.uniform(0, 1e4) * 10.0 ** -rng.randint(0, 40) for _ in s]
    s += [1.0 + 2.0**-52, 3.0, 1e4]
    c += [-FACTOR * (1.0 + 2.0**-52), -0.03, 2.0**-60]
    got = fma(FACTOR, np.array(s), np.array(c))
    want = [float(Fraction(FACTOR) * Fraction(a) + Fraction(b)) for a, b in zip(s, c, strict=True)]
    assert got.tolist() == want
    naive = (FACTOR * np.array(s) + np.array(c)).tolist()
    assert naive != want, "no case where one rounding differs from two: the guard proves nothing"


def test_reference_is_not_trivial():
    """Guards the reference itself: heat spreads and the boundary stays cold."""
    grid = reference_grid(64, 20)
    assert grid.sum() > 0
    assert np.count_nonzero(grid) > 20 * 20
    assert not grid[0].any() and not grid[:, -1].any()


@pytest.mark.parametrize("pipeline", [1, 3])
def test_pingpong_grid_matches_numpy(native_build, tmp_path, pipeline):
    size, iterations = 96 * 96 * 8, 25
    dump = tmp_path / "grid.bin"
    result = run_json(
        [
            str(native_build / "pingpong"),
            "--loopback",
            "--transport",
            "tcp",
            "--compute",
            "--size",
            str(size),
            "--iterations",
            str(iterations),
            "--pipeline",
            str(pipeline),
            "--dump",
            str(dump),
            "--json",
        ]
    )
    n = grid_side(size)
    assert result["grid_n"] == n == 96
    got = np.fromfile(dump, dtype="<f8").reshape(n, n)
    want = reference_grid(n, iterations)
    assert np.array_equal(got.view(np.uint64), want.view(np.uint64)), (
        f"max abs diff {np.abs(got - want).max()}"
    )
    assert result["checksum"] == checksum(want)


def test_a_grid_beyond_l1_takes_four_rows_per_pass_and_the_same_grid(native_build):
    """Rows of 11.6 KB: a two-row pass's window (six rows, 70 KB) is past any L1 data
    cache, so AVX-512 takes four rows per pass (stencil_rows_per_pass); its grid is the
    scalar kernel's, bit for bit (the scalar one is held to the NumPy reference below;
    a NumPy reference of this size takes seconds)."""
    if not cpu_isas()["avx512"]:
        pytest.skip("this CPU has no avx512 (/proc/cpuinfo)")
    runs = {
        isa: run_json(
            [
                str(native_build / "stencil-bench"),
                *("--isa", isa, "--size", str(1448 * 1448 * 8), "--iterations", "20"),
                *("--boundary", "--json"),
            ]
        )
        for isa in ("scalar", "avx512")
    }
    assert runs["avx512"]["grid_n"] == 1448
    assert (runs["scalar"]["rows_per_pass"], runs["avx512"]["rows_per_pass"]) == (1, 4)
    assert runs["avx512"]["checksum"] == runs["scalar"]["checksum"]


@pytest.mark.parametrize("isa", ["scalar", "avx2", "avx512"])
def test_every_isa_gives_the_reference_grid(native_build, tmp_path, isa):
    if not cpu_isas()[isa]:
        pytest.skip(f"this CPU has no {isa} (/proc/cpuinfo)")
    size, iterations = 136 * 136 * 8 + 100, 30  # n = 136: vector bodies plus scalar tails
    n = grid_side(size)
    want = checksum(reference_grid(n, iterations))
    dump = tmp_path / "grid.bin"
    bench = run_json(
        [
            str(native_build / "stencil-bench"),
            "--isa",
            isa,
            "--size",
            str(size),
            "--iterations",
            str(iterations),
            "--boundary",
            "--dump",
            str(dump),
            "--json",
        ]
    )
    assert bench["isa"] == isa
    assert bench["checksum"] == want
    pp = run_json(
        [
            str(native_build / "pingpong"),
            "--loopback",
            "--transport",
            "shm",
            "--compute",
            "--isa",
            isa,
            "--size",
            str(size),
            "--iterations",
            str(iterations),
            "--json",
        ]
    )
    assert pp["isa"] == isa
    assert pp["checksum"] == want


def test_kernels_match_the_per_cell_reference_at_every_seam(native_build):
    """stencil-test: every supported ISA's stencil_rows() against a per-cell scalar
    reference, bit for bit, on random grids, AVX-512 with one, two and four rows per
    pass: widths 2-67 (below one vector, not a multiple of 8), every row count and its
    remainder of four, ranges touching the top, the bottom or neither. Under ASan
    (build-asan) it also proves no load runs past a row."""
    proc = subprocess.run(
        [str(native_build / "stencil-test")], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stdout.startswith("ok ")


def test_missing_isa_is_refused(native_build):
    missing = [isa for isa, ok in cpu_isas().items() if not ok]
    if not missing:
        pytest.skip("this CPU supports every ISA, none can be refused")
    proc = subprocess.run(
        [str(native_build / "pingpong"), "--loopback", "--isa", missing[0], "--compute"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert f"--isa {missing[0]}" in proc.stderr
