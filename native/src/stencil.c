#define _GNU_SOURCE /* sysconf(_SC_LEVEL1_DCACHE_SIZE) */
#include "stencil.h"

#include "common.h"

#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

const char *const isa_names[] = {"scalar", "avx2", "avx512", "auto", NULL};

int isa_supported(enum isa isa)
{
    __builtin_cpu_init();
    switch (isa) {
    case ISA_SCALAR:
        return 1;
    case ISA_AVX2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case ISA_AVX512:
        return __builtin_cpu_supports("avx512f");
    case ISA_AUTO:
        return 1;
    }
    return 0;
}

int isa_resolve(enum isa requested)
{
    if (requested == ISA_AUTO) {
        if (isa_supported(ISA_AVX512))
            return ISA_AVX512;
        if (isa_supported(ISA_AVX2))
            return ISA_AVX2;
        return ISA_SCALAR;
    }
    if (!isa_supported(requested))
        return err_msg("--isa %s: this CPU does not support it", isa_names[requested]);
    return (int)requested;
}

int grid_side_for_bytes(size_t bytes)
{
    size_t n = 8;
    while ((n + 8) * (n + 8) * sizeof(double) <= bytes)
        n += 8;
    return n * n * sizeof(double) <= bytes ? (int)n : 0;
}

void grid_init(double *grid, int n)
{
    memset(grid, 0, (size_t)n * (size_t)n * sizeof(double));
    int lo = n / 2 - INIT_HALF_WIDTH, hi = n / 2 + INIT_HALF_WIDTH;
    if (lo < 1)
        lo = 1;
    if (hi > n - 1)
        hi = n - 1;
    for (int i = lo; i < hi; i++)
        for (int j = lo; j < hi; j++)
            grid[(size_t)i * n + j] = INIT_VALUE;
}

static inline double cell(double a, double left, double right, double up, double down)
{
    return fma(STENCIL_FACTOR, (left + right) + (up + down), STENCIL_KEEP * a);
}

/* The two edge columns of a row, shared by every ISA so the order never differs. */
static inline void row_edges(const double *a, const double *up, const double *down, double *out,
                             int n)
{
    out[0] = cell(a[0], 0.0, a[1], up[0], down[0]);
    out[n - 1] = cell(a[n - 1], a[n - 2], 0.0, up[n - 1], down[n - 1]);
}

/* What a vector loop left over (n is a multiple of 8 in pingpong; kept for any other
 * caller), then the edges. The loops give their last vector a zero right neighbour,
 * so when cells follow it (n not a multiple of the width) its last lane is computed
 * again here with the real one. */
static inline void row_tail(const double *a, const double *up, const double *down, double *out,
                            int j, int n)
{
    if (j > 0 && j < n)
        j--;
    for (; j < n; j++)
        out[j] = cell(a[j], j > 0 ? a[j - 1] : 0.0, j + 1 < n ? a[j + 1] : 0.0, up[j], down[j]);
    row_edges(a, up, down, out, n);
}

/* One vector of cells in cell()'s order: out = fma(k, (left + right) + (up + down), keep * c),
 * `up` and `down` vectors. A macro, not a function, because each ISA's intrinsics compile
 * only inside a function of that target; P is the intrinsic prefix (_mm256, _mm512). */
#define STENCIL_BLOCK(P, c, left, right, up, down, out, keep, k)                                   \
    P##_storeu_pd(out, P##_fmadd_pd(k, P##_add_pd(P##_add_pd(left, right), P##_add_pd(up, down)), \
                                    P##_mul_pd(keep, c)))

static void row_scalar(const double *a, const double *up, const double *down, double *out, int n)
{
    for (int j = 1; j < n - 1; j++)
        out[j] = cell(a[j], a[j - 1], a[j + 1], up[j], down[j]);
    row_edges(a, up, down, out, n);
}

/* As row_avx512 below: neighbours come from the blocks in registers (a lane
 * swap across the two 128-bit halves, then an in-lane shuffle), not from
 * loads that straddle cache lines. */
__attribute__((target("avx2,fma"))) static void row_avx2(const double *a, const double *up,
                                                         const double *down, double *out, int n)
{
    const __m256d keep = _mm256_set1_pd(STENCIL_KEEP), k = _mm256_set1_pd(STENCIL_FACTOR);
    /* A row narrower than one vector is all tail: nothing may be loaded past it. */
    __m256d prev = _mm256_setzero_pd(), c = n >= 4 ? _mm256_loadu_pd(a) : _mm256_setzero_pd();
    int j = 0;
    for (; j + 4 <= n; j += 4) {
        __m256d next = j + 8 <= n ? _mm256_loadu_pd(a + j + 4) : _mm256_setzero_pd();
        /* {p2,p3,c0,c1} -> left {p3,c0,c1,c2}; {c2,c3,n0,n1} -> right {c1,c2,c3,n0} */
        __m256d left = _mm256_shuffle_pd(_mm256_permute2f128_pd(prev, c, 0x21), c, 0x5);
        __m256d right = _mm256_shuffle_pd(c, _mm256_permute2f128_pd(c, next, 0x21), 0x5);
        STENCIL_BLOCK(_mm256, c, left, right, _mm256_loadu_pd(up + j), _mm256_loadu_pd(down + j),
                      out + j, keep, k);
        prev = c;
        c = next;
    }
    row_tail(a, up, down, out, j, n);
}

/* Whole aligned blocks of 8: a[j-1..j+6] and a[j+1..j+8] are built from the
 * blocks already in registers (valignq) instead of two more loads that would
 * each straddle a cache line. Lanes 0 and n-1 see a zero neighbour, exactly
 * what row_edges() gives them; it rewrites them anyway, so every ISA shares
 * one edge routine. The arithmetic per cell is the scalar order. */
#define AVX512_LOAD(p) _mm512_castpd_si512(_mm512_loadu_pd(p))
#define AVX512_LEFT(cur, prev) _mm512_castsi512_pd(_mm512_alignr_epi64(cur, prev, 7))
#define AVX512_RIGHT(next, cur) _mm512_castsi512_pd(_mm512_alignr_epi64(next, cur, 1))

__attribute__((target("avx512f"))) static void row_avx512(const double *a, const double *up,
                                                          const double *down, double *out, int n)
{
    const __m512d keep = _mm512_set1_pd(STENCIL_KEEP), k = _mm512_set1_pd(STENCIL_FACTOR);
    __m512i prev = _mm512_setzero_si512();
    __m512i cur = n >= 8 ? AVX512_LOAD(a) : _mm512_setzero_si512();
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        __m512i next = j + 16 <= n ? AVX512_LOAD(a + j + 8) : _mm512_setzero_si512();
        STENCIL_BLOCK(_mm512, _mm512_castsi512_pd(cur), AVX512_LEFT(cur, prev),
                      AVX512_RIGHT(next, cur), _mm512_loadu_pd(up + j), _mm512_loadu_pd(down + j),
                      out + j, keep, k);
        prev = cur;
        cur = next;
    }
    row_tail(a, up, down, out, j, n);
}

/* The address `lines` cache lines after p, as an integer: near a row's end it lies past
 * the buffer, where C allows no pointer, but a prefetch there is harmless. */
#define PREFETCH_AHEAD(p, lines)                                                                   \
    _mm_prefetch((const char *)((uintptr_t)(p) + (lines) * 64u), _MM_HINT_T0)
/* Four rows take twice as long per line as two, so they ask fewer lines ahead
 * (docs/native-vs-memcpy.md: 8/8 best for two rows, 6 or 3 for four). */
#define PREFETCH_LINES_2ROWS 8
#define PREFETCH_LINES_4ROWS 6
#define MAX_ROWS_PER_PASS 4
/* The loops over the pass's rows, unrolled: with `rows` a constant the arrays below
 * are registers. */
#define FOR_EACH_ROW(r, first) _Pragma("GCC unroll 4") for (int r = (first); r < rows; r++)

/* `rows` rows a0, a0 + n, ... at once, from rows up (above the first) and down (below
 * the last): each input row is loaded once for every output row it touches, where one
 * row at a time loads three rows per output row. Out of cache that is what costs
 * (docs/native-vs-memcpy.md: 16 MiB 0.45 -> 0.6 of memcpy). Inlined with a constant
 * `rows`, so the arrays are registers. */
__attribute__((target("avx512f"), always_inline)) static inline void
rows_avx512(const double *a0, const double *up, const double *down, double *out, int n,
            const int rows, const int lines_ahead)
{
    const __m512d keep = _mm512_set1_pd(STENCIL_KEEP), k = _mm512_set1_pd(STENCIL_FACTOR);
    const __m512d one = _mm512_set1_pd(1.0);
    __m512i prev[MAX_ROWS_PER_PASS], cur[MAX_ROWS_PER_PASS], next[MAX_ROWS_PER_PASS];
    FOR_EACH_ROW(r, 0) {
        prev[r] = _mm512_setzero_si512();
        cur[r] = n >= 8 ? AVX512_LOAD(a0 + (size_t)r * n) : _mm512_setzero_si512();
    }
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        /* Ask for the lines this pass is the first to read (every row but the first,
         * and down) and the lines it will write: at 4 MiB the loop waited on L3 for
         * them (docs/native-vs-memcpy.md: 0.75 -> 0.81 of memcpy). */
        FOR_EACH_ROW(r, 1)
            PREFETCH_AHEAD(a0 + (size_t)r * n + j, lines_ahead);
        PREFETCH_AHEAD(down + j, lines_ahead);
        FOR_EACH_ROW(r, 0)
            PREFETCH_AHEAD(out + (size_t)r * n + j, lines_ahead);
        int more = j + 16 <= n;
        FOR_EACH_ROW(r, 0)
            next[r] = more ? AVX512_LOAD(a0 + (size_t)r * n + j + 8) : _mm512_setzero_si512();
        /* Every load before the first store. Where a row is a multiple of 4 KiB long
         * (n = 512: 2 MiB) every row's line j sits at the same offset in its page; with
         * a store first, the same instructions were 12 % slower there (docs/native-vs-
         * memcpy.md; our reading: the load waits on the store, 4 KiB aliasing). The
         * compiler keeps this order: `out` may alias the input as far as it knows. */
        __m512d first_above = _mm512_loadu_pd(up + j), last_below = _mm512_loadu_pd(down + j);
        __m512d result[MAX_ROWS_PER_PASS];
        FOR_EACH_ROW(r, 0) {
            __m512d c = _mm512_castsi512_pd(cur[r]);
            __m512d above = r == 0 ? first_above : _mm512_castsi512_pd(cur[r > 0 ? r - 1 : 0]);
            __m512d below = r == rows - 1 ? last_below
                                          : _mm512_castsi512_pd(cur[r + 1 < rows ? r + 1 : r]);
            /* left + right as fma(left, 1, right): the product is exact, so the one
             * rounding is the add's and the grid is bit-identical. Measured faster in
             * L1 (2.96 -> 2.89 TSC ticks per vector) and 0.5-2 % at 4 MiB; our reading,
             * without counters, is that it moves an add off the busier add pipes
             * (docs/native-vs-memcpy.md). */
            __m512d sides = _mm512_fmadd_pd(AVX512_LEFT(cur[r], prev[r]), one,
                                            AVX512_RIGHT(next[r], cur[r]));
            result[r] = _mm512_fmadd_pd(k, _mm512_add_pd(sides, _mm512_add_pd(above, below)),
                                        _mm512_mul_pd(keep, c));
        }
        FOR_EACH_ROW(r, 0)
            _mm512_storeu_pd(out + (size_t)r * n + j, result[r]);
        FOR_EACH_ROW(r, 0) {
            prev[r] = cur[r];
            cur[r] = next[r];
        }
    }
    FOR_EACH_ROW(r, 0)
        row_tail(a0 + (size_t)r * n, r == 0 ? up : a0 + (size_t)(r - 1) * n,
                 r == rows - 1 ? down : a0 + (size_t)(r + 1) * n, out + (size_t)r * n, j, n);
}
#undef FOR_EACH_ROW

__attribute__((target("avx512f"))) static void rows2_avx512(const double *a0, const double *up,
                                                           const double *down, double *out,
                                                           int n)
{
    rows_avx512(a0, up, down, out, n, 2, PREFETCH_LINES_2ROWS);
}

__attribute__((target("avx512f"))) static void rows4_avx512(const double *a0, const double *up,
                                                           const double *down, double *out,
                                                           int n)
{
    rows_avx512(a0, up, down, out, n, 4, PREFETCH_LINES_4ROWS);
}

int stencil_rows_per_pass(enum isa isa, int n)
{
    if (isa != ISA_AVX512)
        return 1;
    long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE); /* glibc's figure from startup: 4 ns */
    if (l1 <= 0)
        l1 = 32 * 1024; /* unknown: the smaller of the 32 and 48 KiB AVX-512 cores have */
    /* A pass of two rows reads four rows and writes two. */
    return 6 * (size_t)n * sizeof(double) > (size_t)l1 ? 4 : 2;
}

typedef void (*row_fn)(const double *, const double *, const double *, double *, int);

void stencil_rows_grouped(enum isa isa, const double *in, double *out, int lo, int hi, int n,
                          const double *zero_row, int rows_per_pass)
{
    row_fn row = isa == ISA_AVX512 ? row_avx512 : isa == ISA_AVX2 ? row_avx2 : row_scalar;
    int in_lo = lo > 0 ? lo - 1 : 0;
    int i = lo;
#define ROW_IN(i) (in + (size_t)((i) - in_lo) * n)
#define ROW_UP(i) ((i) > 0 ? ROW_IN(i) - n : zero_row)
#define ROW_BELOW(i, rows) ((i) + (rows) < n ? ROW_IN((i) + (rows)) : zero_row)
#define ROW_OUT(i) (out + (size_t)((i) - lo) * n)
    if (isa == ISA_AVX512 && rows_per_pass >= 4)
        for (; i + 3 < hi; i += 4)
            rows4_avx512(ROW_IN(i), ROW_UP(i), ROW_BELOW(i, 4), ROW_OUT(i), n);
    if (isa == ISA_AVX512 && rows_per_pass >= 2)
        for (; i + 1 < hi; i += 2)
            rows2_avx512(ROW_IN(i), ROW_UP(i), ROW_BELOW(i, 2), ROW_OUT(i), n);
    for (; i < hi; i++)
        row(ROW_IN(i), ROW_UP(i), ROW_BELOW(i, 1), ROW_OUT(i), n);
#undef ROW_IN
#undef ROW_UP
#undef ROW_BELOW
#undef ROW_OUT
}

void stencil_rows(enum isa isa, const double *in, double *out, int lo, int hi, int n,
                  const double *zero_row)
{
    stencil_rows_grouped(isa, in, out, lo, hi, n, zero_row, stencil_rows_per_pass(isa, n));
}

void grid_apply_boundary(double *grid, const double *rows, int lo, int hi, int n)
{
    double *dst = grid + (size_t)lo * n;
    memcpy(dst, rows, (size_t)(hi - lo) * n * sizeof(double));
    if (lo == 0)
        memset(grid, 0, (size_t)n * sizeof(double));
    if (hi == n)
        memset(grid + (size_t)(n - 1) * n, 0, (size_t)n * sizeof(double));
    for (int i = lo; i < hi; i++) {
        grid[(size_t)i * n] = 0.0;
        grid[(size_t)i * n + n - 1] = 0.0;
    }
}
