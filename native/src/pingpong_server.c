/* pingpong's server: one diffusion step per band received (or an echo without
 * --compute), or a --stream's messages taken and acknowledged. */
#define _GNU_SOURCE
#include "common.h"
#include "pingpong.h"
#include "stencil.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int send_stats(struct transport *t, int isa, struct cpu_usage start)
{
    struct cpu_usage used = cpu_usage_since(start);
    struct stats_msg stats = {.kind = MSG_STATS, .isa = (uint32_t)isa, .user_s = used.user_s,
                              .sys_s = used.sys_s};
    void *out;
    if (t->ops->acquire_send(t, &out) != 0)
        return -1;
    memcpy(out, &stats, sizeof(stats));
    if (t->ops->post_send(t, sizeof(stats)) != 0 || t->ops->flush(t) != 0)
        return -1;
    return 0;
}

/* --stream: take the warm-up lap (`slots` grids) and answer it, then take
 * `iterations` grids and answer once more with the statistics of those. */
static int serve_stream(struct transport *t)
{
    const struct session *s = &t->session;
    size_t want = sizeof(struct band_header) + (size_t)s->grid_n * s->grid_n * sizeof(double);
    struct cpu_usage start = cpu_usage_self();
    for (uint64_t m = 0; m < s->slots + (uint64_t)s->iterations; m++) {
        if (m == s->slots) {
            if (send_stats(t, ISA_SCALAR, start) != 0)
                return -1;
            start = cpu_usage_self();
        }
        void *in;
        size_t len;
        if (t->ops->recv(t, &in, &len) != 0)
            return -1;
        struct band_header hdr;
        memcpy(&hdr, in, sizeof(hdr));
        if (hdr.kind != MSG_STREAM || len != want)
            return err_msg("recv: malformed stream message (kind %u, %zu bytes of %zu)",
                           hdr.kind, len, want);
        if (t->ops->release_recv(t) != 0)
            return -1;
    }
    return send_stats(t, ISA_SCALAR, start);
}

int pingpong_serve(struct transport *t, int local_isa)
{
    const struct session *s = &t->session;
    if (s->app != APP_PINGPONG)
        return err_msg("client is not pingpong (app %u)", s->app);
    if (s->flags & SESSION_STREAM)
        return s->grid_n >= 8 && slot_bytes_for((int)s->grid_n, 1) <= s->slot_bytes
                   ? serve_stream(t)
                   : err_msg("client stream session is inconsistent (grid %u)", s->grid_n);
    int n = (int)s->grid_n, bands = s->slots;
    if (n < 8 || bands > n || slot_bytes_for(n, bands) > s->slot_bytes)
        return err_msg("client session is inconsistent (grid %d, pipeline %d)", n, bands);
    int isa = isa_resolve(s->isa != ISA_AUTO ? (enum isa)s->isa : (enum isa)local_isa);
    if (isa < 0)
        return -1;
    bool compute = s->flags & SESSION_COMPUTE;
    double *zero_row = alloc_aligned((size_t)n * sizeof(double));
    if (zero_row == NULL)
        return -1;
    int rc = -1;
    struct cpu_usage start = cpu_usage_self();
    uint64_t messages = (uint64_t)s->iterations * (uint64_t)bands;
    for (uint64_t m = 0; m < messages; m++) {
        void *in, *out;
        size_t len;
        if (t->ops->recv(t, &in, &len) != 0)
            goto out;
        struct band_header hdr;
        memcpy(&hdr, in, sizeof(hdr));
        int lo = (int)hdr.row_lo, hi = (int)hdr.row_hi;
        int in_lo = lo > 0 ? lo - 1 : 0, in_hi = hi < n ? hi + 1 : n;
        if (hdr.kind != MSG_BAND || lo >= hi || hi > n ||
            len != sizeof(hdr) + (size_t)(in_hi - in_lo) * n * sizeof(double)) {
            err_msg("recv: malformed band (kind %u, rows %d..%d, %zu bytes)", hdr.kind, lo, hi,
                    len);
            goto out;
        }
        if (t->ops->acquire_send(t, &out) != 0)
            goto out;
        if (compute)
            stencil_rows((enum isa)isa, (const double *)((char *)in + sizeof(hdr)),
                         (double *)((char *)out + sizeof(hdr)), lo, hi, n, zero_row);
        hdr.kind = MSG_RESULT;
        memcpy(out, &hdr, sizeof(hdr));
        if (t->ops->release_recv(t) != 0 ||
            t->ops->post_send(t, sizeof(hdr) + (size_t)(hi - lo) * n * sizeof(double)) != 0)
            goto out;
    }
    rc = send_stats(t, isa, start);
out:
    free(zero_row);
    return rc;
}
