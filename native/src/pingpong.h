/* pingpong's wire format and the server's half (pingpong_server.c), shared with
 * the client and the roles in pingpong.c. */
#ifndef CXFAB_PINGPONG_H
#define CXFAB_PINGPONG_H

#include "transport.h"

#include <stddef.h>
#include <stdint.h>

#define APP_PINGPONG 1
#define SESSION_COMPUTE 1u
#define SESSION_STREAM 2u

enum msg_kind { MSG_BAND = 1, MSG_RESULT = 2, MSG_STATS = 3, MSG_STREAM = 4 };

struct band_header {
    uint32_t kind;
    uint32_t row_lo, row_hi; /* rows the receiver computes / receives */
    uint32_t step;
};

struct stats_msg {
    uint32_t kind;
    uint32_t isa;
    double user_s, sys_s;
};

static inline void band_rows(int k, int bands, int n, int *lo, int *hi)
{
    *lo = (int)((int64_t)k * n / bands);
    *hi = (int)((int64_t)(k + 1) * n / bands);
}

static inline size_t slot_bytes_for(int n, int bands)
{
    int rows = (n + bands - 1) / bands + 2;
    return sizeof(struct band_header) + (size_t)rows * (size_t)n * sizeof(double);
}

/* Serves one connected client to the end of its session (compute, echo or stream). */
int pingpong_serve(struct transport *t, int local_isa);

#endif
