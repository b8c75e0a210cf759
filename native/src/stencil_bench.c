/* stencil-bench: the stencil kernel against memcpy of the same buffer, in one
 * process (the reference for `stencil_vs_memcpy`), and a plain way to compute
 * a reference grid (--dump) without any transport.
 *
 * --copy-slots N makes the memcpy rounds write N destination buffers in turn:
 * the reference for a transport with N messages in flight, whose every copy
 * lands in a slot last written N messages earlier. Copying into one buffer
 * keeps 2 x size hot; a 4-slot ring cycles through 5 x size, and at 4 MiB
 * that is the difference between L3 and memory (docs/native-vs-memcpy.md). */
#define _GNU_SOURCE
#include "common.h"
#include "options.h"
#include "stencil.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct config {
    uint64_t size, iterations, copy_slots;
    int isa;
    bool json, boundary;
    const char *dump;
};

#define ROUNDS 10u /* stencil/memcpy alternations */

#define OFF(field) offsetof(struct config, field)
static const struct opt_spec options[] = {
    {"size", "BYTES", OPT_BYTES, OFF(size), 0, 4096, 1ull << 30, NULL, "grid buffer size"},
    {"iterations", "N", OPT_UINT, OFF(iterations), 0, 1, 1000000000, NULL, "time steps"},
    {"copy-slots", "N", OPT_UINT, OFF(copy_slots), 0, 1, 64, NULL,
     "memcpy writes N destination buffers in turn (a transport's N in-flight slots)"},
    OPT_ROW_ISA,
    {"boundary", "", OPT_FLAG, OFF(boundary), 0, 0, 0, NULL,
     "apply pingpong's boundary step after every step (same grid as pingpong --compute)"},
    {"json", "", OPT_FLAG, OFF(json), 0, 0, 0, NULL, "print one JSON object"},
    OPT_ROW_DUMP("write the final grid as raw little-endian doubles"),
};
#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

int main(int argc, char **argv)
{
    g_prog = "stencil-bench";
    struct config cfg = {.size = 4u << 20, .iterations = 50, .copy_slots = 1,
                          .isa = ISA_AUTO};
    int rc = options_main(options, N_OPTIONS, &cfg, argc, argv, "[options]");
    if (rc != OPTIONS_GO_ON)
        return rc;
    int isa = isa_resolve((enum isa)cfg.isa);
    if (isa < 0)
        return EXIT_USAGE;
    int n = grid_side_for_bytes(cfg.size);
    size_t bytes = (size_t)n * n * sizeof(double);
    size_t cells = (size_t)n * n;
    double *a = alloc_aligned(bytes), *b = alloc_aligned(bytes);
    double *copy = alloc_aligned(bytes * cfg.copy_slots);
    double *zero_row = alloc_aligned((size_t)n * sizeof(double));
    rc = 1;
    if (a == NULL || b == NULL || copy == NULL || zero_row == NULL)
        goto out;
    grid_init(a, n);
    /* Warm both buffers so neither measurement pays first-touch page faults. */
    memcpy(b, a, bytes);
    for (uint64_t k = 0; k < cfg.copy_slots; k++)
        memcpy(copy + k * cells, a, bytes);

    /* Stencil and memcpy alternate in rounds and each keeps its fastest round:
     * a burst of load from elsewhere (the machine is shared) then spoils one
     * round of one of them, not the whole comparison. */
    uint64_t rounds = cfg.iterations < ROUNDS ? cfg.iterations : ROUNDS;
    double stencil_s = 1e30, memcpy_s = 1e30;
    uint64_t done = 0, copies = 0;
    for (uint64_t r = 0; r < rounds; r++) {
        uint64_t steps = cfg.iterations * (r + 1) / rounds - done;
        double t0 = now_seconds();
        for (uint64_t i = 0; i < steps; i++) {
            stencil_rows((enum isa)isa, a, b, 0, n, n, zero_row);
            if (cfg.boundary)
                grid_apply_boundary(a, b, 0, n, n);
            else {
                double *tmp = a;
                a = b;
                b = tmp;
            }
        }
        double t1 = now_seconds();
        for (uint64_t i = 0; i < steps; i++) {
            memcpy(copy + (copies++ % cfg.copy_slots) * cells, a, bytes);
            /* Keep the copy observable so it cannot be optimised away. */
            __asm__ volatile("" : : "r"(copy) : "memory");
        }
        double t2 = now_seconds();
        if ((t1 - t0) / (double)steps < stencil_s)
            stencil_s = (t1 - t0) / (double)steps;
        if ((t2 - t1) / (double)steps < memcpy_s)
            memcpy_s = (t2 - t1) / (double)steps;
        done += steps;
    }
    uint64_t checksum = grid_checksum(a, (size_t)n * n);
    if (cfg.dump != NULL) {
        FILE *f = fopen(cfg.dump, "wb");
        if (f == NULL) {
            err_call(cfg.dump, errno);
            goto out;
        }
        size_t w = fwrite(a, sizeof(double), (size_t)n * n, f);
        if (fclose(f) != 0 || w != (size_t)n * n) {
            err_msg("%s: short write", cfg.dump);
            goto out;
        }
    }
    double stencil_bps = (double)bytes / stencil_s;
    double memcpy_bps = (double)bytes / memcpy_s;
    if (cfg.json)
        printf("{\"isa\": \"%s\", \"rows_per_pass\": %d, \"size_bytes\": %" PRIu64
               ", \"grid_n\": %d, "
               "\"iterations\": %" PRIu64 ", \"copy_slots\": %" PRIu64 ", "
               "\"stencil_bytes_per_s\": %.1f, "
               "\"memcpy_bytes_per_s\": %.1f, \"stencil_vs_memcpy\": %.4f, "
               "\"checksum\": \"%016" PRIx64 "\"}\n",
               isa_names[isa], stencil_rows_per_pass((enum isa)isa, n), cfg.size, n,
               cfg.iterations, cfg.copy_slots, stencil_bps, memcpy_bps, stencil_bps / memcpy_bps,
               checksum);
    else
        printf("%-7s %10s %6s %10s %16s %16s %8s  %-16s\n%-7s %10" PRIu64 " %6d %10" PRIu64
               " %16.1f %16.1f %8.3f  %016" PRIx64 "\n",
               "isa", "size[B]", "grid", "iterations", "stencil[MB/s]", "memcpy[MB/s]", "ratio",
               "checksum", isa_names[isa], cfg.size, n, cfg.iterations, stencil_bps / 1e6,
               memcpy_bps / 1e6, stencil_bps / memcpy_bps, checksum);
    rc = 0;
out:
    free(a);
    free(b);
    free(copy);
    free(zero_row);
    return rc;
}
