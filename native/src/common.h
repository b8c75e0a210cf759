/* Shared helpers for the native workloads: error reporting, time, CPU usage,
 * pinning and the grid checksum. */
#ifndef CXFAB_COMMON_H
#define CXFAB_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* Exit status tests skip on when no RDMA device exists (automake convention). */
#define EXIT_SKIP 77
#define EXIT_USAGE 2

#define CPU_SETSIZE_LIMIT 1024 /* CPUs accepted by --cpus */

extern const char *g_prog; /* program name used as the prefix of every message */

/* "prog: call: strerror(errnum)" on stderr; returns -1 so callers can `return err_call(...)`. */
int err_call(const char *call, int errnum);
/* "prog: formatted message" on stderr; returns -1. */
int err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

double now_seconds(void);

struct cpu_usage {
    double user_s;
    double sys_s;
};
struct cpu_usage cpu_usage_self(void);
struct cpu_usage cpu_usage_since(struct cpu_usage start);

/* Parses "0,2-3" into a CPU list; returns the count or -1 (message printed). */
int parse_cpu_list(const char *text, int *cpus, int max_cpus);
/* Pins the calling process to the given CPUs. */
int pin_to_cpus(const int *cpus, int count);

/* Position-weighted 64-bit hash of a buffer of 64-bit words. Simple enough for
 * NumPy to recompute independently (see tests/integration/test_native_stencil.py). */
uint64_t grid_checksum(const double *grid, size_t count);

/* Splits "ADDR:PORT" at the last colon. Copies ADDR into host and PORT into port. */
int split_host_port(const char *text, char *host, size_t host_len, char *port, size_t port_len);

struct addrinfo;
/* Resolves "ADDR:PORT" for a stream socket (ADDR empty or "*" with passive: any
 * address); the caller frees *res with freeaddrinfo(). -1 with a message on failure. */
int resolve_address(const char *addr, int passive, struct addrinfo **res);

void *alloc_aligned(size_t bytes); /* page aligned, zeroed, NULL with message on failure */

#endif
