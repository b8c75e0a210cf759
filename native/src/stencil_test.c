/* stencil-test: every ISA's stencil_rows() against a plain per-cell reference,
 * bit for bit, on random grids.
 *
 * The kernels compute blocks of rows with vectors, so what can go wrong is at the
 * seams: an odd row count (the last row alone), a block at the top or bottom of the
 * grid (a zero row outside), a partial range [lo, hi) as the pingpong server gets,
 * widths that are not a multiple of the vector (scalar tails) or smaller than one
 * vector. Random values, not the hot-square grid, so every lane and every
 * neighbour matters to the result. Exit 0 and "ok N cases" when all match. */
#include "common.h"
#include "stencil.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The formula of stencil.h, one cell at a time, zero outside the grid. */
static void reference(const double *grid, double *out, int lo, int hi, int n)
{
    for (int i = lo; i < hi; i++)
        for (int j = 0; j < n; j++) {
            double a = grid[(size_t)i * n + j];
            double left = j > 0 ? grid[(size_t)i * n + j - 1] : 0.0;
            double right = j + 1 < n ? grid[(size_t)i * n + j + 1] : 0.0;
            double up = i > 0 ? grid[(size_t)(i - 1) * n + j] : 0.0;
            double down = i + 1 < n ? grid[(size_t)(i + 1) * n + j] : 0.0;
            double s = (left + right) + (up + down);
            out[(size_t)(i - lo) * n + j] = fma(STENCIL_FACTOR, s, STENCIL_KEEP * a);
        }
}

static uint64_t rng_state = 0x243F6A8885A308D3u;

static double random_value(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * 0x1p-53 * 2.0 - 0.5;
}

/* Checks rows [lo, hi) of an n x n grid for one ISA and rows per pass; returns 0 if
 * bit-identical. */
static int check(enum isa isa, int rows_per_pass, const double *grid, int lo, int hi, int n)
{
    size_t row = (size_t)n * sizeof(double);
    int in_lo = lo > 0 ? lo - 1 : 0, in_hi = hi < n ? hi + 1 : n;
    /* The kernel sees only its input rows, as on the server, in a buffer of exactly
     * that size so ASan catches a read past it. */
    double *in = malloc((size_t)(in_hi - in_lo) * row);
    double *out = malloc((size_t)(hi - lo) * row), *want = malloc((size_t)(hi - lo) * row);
    double *zero_row = calloc((size_t)n, sizeof(double));
    int rc = -1;
    if (in == NULL || out == NULL || want == NULL || zero_row == NULL) {
        err_msg("out of memory");
        goto out;
    }
    memcpy(in, grid + (size_t)in_lo * n, (size_t)(in_hi - in_lo) * row);
    stencil_rows_grouped(isa, in, out, lo, hi, n, zero_row, rows_per_pass);
    reference(grid, want, lo, hi, n);
    for (size_t c = 0; c < (size_t)(hi - lo) * n; c++)
        if (memcmp(&out[c], &want[c], sizeof(double)) != 0) {
            err_msg("isa %s, %d rows per pass, n %d rows [%d, %d): cell (%zu, %zu) is %a, "
                    "reference %a",
                    isa_names[isa], rows_per_pass, n, lo, hi, (size_t)lo + c / (size_t)n,
                    c % (size_t)n, out[c], want[c]);
            goto out;
        }
    rc = 0;
out:
    free(in);
    free(out);
    free(want);
    free(zero_row);
    return rc;
}

int main(void)
{
    g_prog = "stencil-test";
    static const int widths[] = {2, 3, 5, 7, 8, 9, 12, 15, 16, 17, 23, 24, 31, 33, 40, 64, 67};
    int cases = 0, failed = 0;
    for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
        int n = widths[w];
        double *grid = malloc((size_t)n * n * sizeof(double));
        if (grid == NULL)
            return err_msg("out of memory") ? 1 : 1;
        for (size_t c = 0; c < (size_t)n * n; c++)
            grid[c] = random_value();
        /* Every kernel on every width, whatever stencil_rows() would pick for it: one
         * row at a time for each ISA, and AVX-512's two and four rows per pass. */
        static const struct {
            enum isa isa;
            int rows_per_pass;
        } kernels[] = {{ISA_SCALAR, 1}, {ISA_AVX2, 1}, {ISA_AVX512, 1}, {ISA_AVX512, 2},
                       {ISA_AVX512, 4}};
        for (size_t kern = 0; kern < sizeof(kernels) / sizeof(kernels[0]); kern++) {
            enum isa isa = kernels[kern].isa;
            if (!isa_supported(isa))
                continue;
            /* Whole grid, every single row, then ranges of every length from a few
             * starting rows: odd and even counts, touching the top, the bottom or
             * neither, and every remainder of four. */
            for (int lo = 0; lo < n; lo++)
                for (int hi = lo + 1; hi <= n; hi++) {
                    if (lo > 3 && lo < n - 4 && hi > lo + 8 && hi < n)
                        continue; /* the middle adds nothing the rest does not cover */
                    cases++;
                    failed += check(isa, kernels[kern].rows_per_pass, grid, lo, hi, n) != 0;
                }
        }
        free(grid);
    }
    if (failed) {
        fprintf(stderr, "stencil-test: %d of %d cases differ\n", failed, cases);
        return 1;
    }
    printf("ok %d cases\n", cases);
    return 0;
}
