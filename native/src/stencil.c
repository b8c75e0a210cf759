#include "stencil.h"

#include "common.h"

#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

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

/* The address 8 cache lines after p, as an integer: near a row's end it lies past
 * the buffer, where C allows no pointer, but a prefetch there is harmless. */
#define PREFETCH_LINES_AHEAD 8
#define PREFETCH_AHEAD(p)                                                                          \
    _mm_prefetch((const char *)((uintptr_t)(p) + PREFETCH_LINES_AHEAD * 64u), _MM_HINT_T0)

/* Rows a0 and a1 = a0 + n at once, from rows up (above a0) and down (below a1):
 * each of the four input rows is loaded once for two output rows, where one row
 * at a time loads three rows per output row. Out of cache that is what costs
 * (docs/native-vs-memcpy.md: 16 MiB 0.45 -> 0.6 of memcpy). */
__attribute__((target("avx512f"))) static void rows2_avx512(const double *a0, const double *up,
                                                           const double *down, double *out,
                                                           int n)
{
    const __m512d keep = _mm512_set1_pd(STENCIL_KEEP), k = _mm512_set1_pd(STENCIL_FACTOR);
    const __m512d one = _mm512_set1_pd(1.0);
    const double *a1 = a0 + n;
    __m512i prev0 = _mm512_setzero_si512(), prev1 = _mm512_setzero_si512();
    __m512i cur0 = n >= 8 ? AVX512_LOAD(a0) : _mm512_setzero_si512();
    __m512i cur1 = n >= 8 ? AVX512_LOAD(a1) : _mm512_setzero_si512();
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        /* Ask for the lines this pass is the first to read (rows a1 and down) and
         * the lines it will write, 8 lines ahead: at 4 MiB the loop waited on L3
         * for them (docs/native-vs-memcpy.md: 0.75 -> 0.81 of memcpy). */
        PREFETCH_AHEAD(a1 + j);
        PREFETCH_AHEAD(down + j);
        PREFETCH_AHEAD(out + j);
        PREFETCH_AHEAD(out + n + j);
        int more = j + 16 <= n;
        __m512i next0 = more ? AVX512_LOAD(a0 + j + 8) : _mm512_setzero_si512();
        __m512i next1 = more ? AVX512_LOAD(a1 + j + 8) : _mm512_setzero_si512();
        __m512d c0 = _mm512_castsi512_pd(cur0), c1 = _mm512_castsi512_pd(cur1);
        /* left + right as fma(left, 1, right): the product is exact, so the one
         * rounding is the add's and the grid is bit-identical; the add moves from
         * the two FP add pipes, which bound this loop in L1, to the two FMA pipes
         * (docs/native-vs-memcpy.md: 0.5-2 % faster at 4 MiB). */
        __m512d sides0 =
            _mm512_fmadd_pd(AVX512_LEFT(cur0, prev0), one, AVX512_RIGHT(next0, cur0));
        __m512d sides1 =
            _mm512_fmadd_pd(AVX512_LEFT(cur1, prev1), one, AVX512_RIGHT(next1, cur1));
        __m512d vertical0 = _mm512_add_pd(_mm512_loadu_pd(up + j), c1);
        __m512d vertical1 = _mm512_add_pd(c0, _mm512_loadu_pd(down + j));
        _mm512_storeu_pd(out + j, _mm512_fmadd_pd(k, _mm512_add_pd(sides0, vertical0),
                                                  _mm512_mul_pd(keep, c0)));
        _mm512_storeu_pd(out + n + j, _mm512_fmadd_pd(k, _mm512_add_pd(sides1, vertical1),
                                                      _mm512_mul_pd(keep, c1)));
        prev0 = cur0;
        cur0 = next0;
        prev1 = cur1;
        cur1 = next1;
    }
    row_tail(a0, up, a1, out, j, n);
    row_tail(a1, a0, down, out + n, j, n);
}

typedef void (*row_fn)(const double *, const double *, const double *, double *, int);

void stencil_rows(enum isa isa, const double *in, double *out, int lo, int hi, int n,
                  const double *zero_row)
{
    row_fn row = isa == ISA_AVX512 ? row_avx512 : isa == ISA_AVX2 ? row_avx2 : row_scalar;
    int in_lo = lo > 0 ? lo - 1 : 0;
    int i = lo;
    if (isa == ISA_AVX512) {
        for (; i + 1 < hi; i += 2) {
            const double *a = in + (size_t)(i - in_lo) * n;
            const double *up = i > 0 ? a - n : zero_row;
            const double *down = i + 1 < n - 1 ? a + 2 * (size_t)n : zero_row;
            rows2_avx512(a, up, down, out + (size_t)(i - lo) * n, n);
        }
    }
    for (; i < hi; i++) {
        const double *a = in + (size_t)(i - in_lo) * n;
        const double *up = i > 0 ? a - n : zero_row;
        const double *down = i < n - 1 ? a + n : zero_row;
        row(a, up, down, out + (size_t)(i - lo) * n, n);
    }
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
