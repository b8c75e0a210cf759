/* The 2-D diffusion stencil of seed 000, as a scalar reference and AVX2 /
 * AVX-512 versions picked at run time.
 *
 * One explicit time step, for every cell with the four neighbours (zero
 * outside the grid), a + k*(left + right + up + down - 4a) written as
 *     s = (left + right) + (up + down);  out = fma(k, s, (1 - 4k)*a)
 * with one rounding in the fused multiply-add. Three adds, not four: the
 * adds are what bounds the kernel in cache (docs/native-vs-memcpy.md). Every version
 * evaluates exactly this expression in this order (the build uses
 * -ffp-contract=off so nothing else is fused), and an FMA is correctly
 * rounded wherever it runs (the vector instruction, or the C library's fma()
 * on a CPU without one), so all ISAs give bit-identical grids. */
#ifndef CXFAB_STENCIL_H
#define CXFAB_STENCIL_H

#include <stddef.h>

enum isa { ISA_SCALAR, ISA_AVX2, ISA_AVX512, ISA_AUTO };
extern const char *const isa_names[]; /* indexed by enum isa, NULL-terminated */

#define STENCIL_FACTOR 0.01 /* diffusion number k (stable for k <= 0.25) */
#define STENCIL_KEEP (1.0 - 4.0 * STENCIL_FACTOR) /* what a cell keeps of itself */
#define INIT_HALF_WIDTH 10  /* the initial hot square is 2*10 cells wide, as in seed 000 */
#define INIT_VALUE 1e4

int isa_supported(enum isa isa);
/* auto -> the best supported ISA; a forced ISA the CPU lacks -> -1 with a message. */
int isa_resolve(enum isa requested);

/* Largest multiple of 8 (>= 8) whose n*n doubles fit in `bytes`; 0 if none. */
int grid_side_for_bytes(size_t bytes);

void grid_init(double *grid, int n);

/* Computes rows [lo, hi) of the next step. `in` holds input rows [in_lo, in_hi)
 * with in_lo = max(lo - 1, 0) and in_hi = min(hi + 1, n); `out` receives rows
 * [lo, hi). `zero_row` must hold n zeros (the outside of the grid). */
void stencil_rows(enum isa isa, const double *in, double *out, int lo, int hi, int n,
                  const double *zero_row);

/* How many rows stencil_rows() computes per pass over a row: 1 for scalar and AVX2;
 * for AVX-512 2 while a pass's window (four input rows, two output rows) fits in the
 * L1 data cache, else 4, which re-read from L2 half as many rows per output row
 * (docs/native-vs-memcpy.md). */
int stencil_rows_per_pass(enum isa isa, int n);

/* stencil_rows() with the rows per pass given (1, 2 or 4; AVX-512 only, other ISAs
 * take one row at a time): stencil-test checks every kernel on the same grids. */
void stencil_rows_grouped(enum isa isa, const double *in, double *out, int lo, int hi, int n,
                          const double *zero_row, int rows_per_pass);

/* The client's half of seed 000's step: copy rows [lo, hi) into the grid and
 * force the Dirichlet boundary (outer ring = 0). */
void grid_apply_boundary(double *grid, const double *rows, int lo, int hi, int n);

#endif
