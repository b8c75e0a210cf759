/* pingpong: seed 000's experiment, pipelined.
 *
 * The client owns an n x n grid. Each iteration the grid goes to the server,
 * which computes one diffusion step, and comes back; the client applies the
 * boundary condition. With --pipeline N the grid travels as N row bands (each
 * with its one-row halo) in N in-flight buffers: the server computes band k
 * while band k+1 is still on the wire, and the client sends band k-1 of the
 * next step as soon as bands k-2..k of this step are back. N = 1 is the
 * seed's stop-and-wait. The arithmetic is per cell, so every N, transport and
 * ISA gives the same final grid.
 *
 * --stream measures the transport alone, one way: the client sends the grid
 * `iterations` times with N messages in flight and nothing comes back until the
 * server has them all. A round trip costs two wake-ups of a sleeping peer, which
 * on a shared machine dwarf the copies; a stream pays them once, before the clock
 * starts: a first, untimed lap of N messages warms every in-flight buffer (as a
 * memcpy reference warms its buffers) and the server's answer to it shows it awake. */
#define _GNU_SOURCE
#include "common.h"
#include "options.h"
#include "pingpong.h"
#include "stencil.h"
#include "transport.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFAULT_ADDR "0.0.0.0:7471"

struct config {
    int transport;
    const char *server_addr;
    bool server;
    const char *client_addr;
    bool loopback;
    uint64_t size, iterations, pipeline, timeout, tos;
    bool compute, json, stream;
    const char *cpus;
    int isa;
    const char *dump;
};

#define OFF(field) offsetof(struct config, field)
static const struct opt_spec options[] = {
    OPT_ROWS_CONNECT("how the grid travels",
                     "serve one client (default " DEFAULT_ADDR "; shm: a rendezvous name)",
                     "connect to a server"),
    {"loopback", "", OPT_FLAG, OFF(loopback), 0, 0, 0, NULL,
     "run server and client here (two processes; --server picks the address)"},
    {"size", "BYTES", OPT_BYTES, OFF(size), 0, 4096, 1ull << 30, NULL,
     "grid buffer size; the grid is the largest n x n doubles that fit, n % 8 == 0"},
    {"iterations", "N", OPT_UINT, OFF(iterations), 0, 1, 1000000000, NULL, "round trips"},
    {"compute", "", OPT_FLAG, OFF(compute), 0, 0, 0, NULL, "run the stencil (else echo only)"},
    {"stream", "", OPT_FLAG, OFF(stream), 0, 0, 0, NULL,
     "send the grid one way `iterations` times, --pipeline in flight (no compute)"},
    {"pipeline", "N", OPT_UINT, OFF(pipeline), 0, 1, MAX_SLOTS, NULL,
     "in-flight buffers per direction (1 = stop-and-wait)"},
    {"cpus", "LIST", OPT_STRING, OFF(cpus), 0, 0, 0, NULL,
     "pin to CPUs, e.g. 0,1 (loopback: client on the first, server on the second)"},
    OPT_ROW_ISA,
    {"timeout", "SECONDS", OPT_UINT, OFF(timeout), 0, 1, 3600, NULL,
     "a peer silent this long is reported as gone"},
    {"tos", "BYTE", OPT_UINT, OFF(tos), 0, 0, 255, NULL,
     "rdma client: IP ToS byte of the RoCE packets (DSCP x 4), set through RDMA-CM"},
    {"json", "", OPT_FLAG, OFF(json), 0, 0, 0, NULL, "print one JSON object instead of a table"},
    OPT_ROW_DUMP("client: write the final grid as raw little-endian doubles"),
};
#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

struct result {
    uint64_t bytes_c2s, bytes_s2c;
    double wall_s;
    struct cpu_usage client, server;
    int isa_used;
    uint64_t checksum;
};

/* ---------------------------------------------------------------- client */

struct client_state {
    struct transport *t;
    double *grid;
    int n, bands;
    bool compute;
    uint64_t bytes_sent;
};

static int send_band(struct client_state *c, int k, uint32_t step)
{
    int lo, hi;
    band_rows(k, c->bands, c->n, &lo, &hi);
    int in_lo = lo > 0 ? lo - 1 : 0, in_hi = hi < c->n ? hi + 1 : c->n;
    size_t payload = (size_t)(in_hi - in_lo) * c->n * sizeof(double);
    void *buf;
    if (c->t->ops->acquire_send(c->t, &buf) != 0)
        return -1;
    struct band_header hdr = {MSG_BAND, (uint32_t)lo, (uint32_t)hi, step};
    memcpy(buf, &hdr, sizeof(hdr));
    if (c->compute)
        memcpy((char *)buf + sizeof(hdr), c->grid + (size_t)in_lo * c->n, payload);
    c->bytes_sent += sizeof(hdr) + payload;
    return c->t->ops->post_send(c->t, sizeof(hdr) + payload);
}

/* The server's CPU use and ISA: its last message, sent once it has everything. */
static int recv_stats(struct transport *t, struct result *res)
{
    void *buf;
    size_t len;
    if (t->ops->recv(t, &buf, &len) != 0)
        return -1;
    struct stats_msg stats;
    if (len != sizeof(stats))
        return err_msg("recv: expected the server's statistics (%zu bytes)", len);
    memcpy(&stats, buf, sizeof(stats));
    if (stats.kind != MSG_STATS)
        return err_msg("recv: expected the server's statistics (kind %u)", stats.kind);
    res->server.user_s = stats.user_s;
    res->server.sys_s = stats.sys_s;
    res->isa_used = (int)stats.isa;
    return t->ops->release_recv(t);
}

static int send_grids(struct transport *t, int n, uint64_t count)
{
    size_t len = sizeof(struct band_header) + (size_t)n * n * sizeof(double);
    for (uint64_t m = 0; m < count; m++) {
        void *buf;
        if (t->ops->acquire_send(t, &buf) != 0)
            return -1;
        struct band_header hdr = {MSG_STREAM, 0, (uint32_t)n, (uint32_t)m};
        memcpy(buf, &hdr, sizeof(hdr));
        if (t->ops->post_send(t, len) != 0)
            return -1;
    }
    return 0;
}

/* --stream: the grid `iterations` times one way (untouched, as without --compute),
 * --pipeline messages in flight; the server's statistics are its acknowledgement.
 * The clock starts after the warm-up lap is acknowledged: that lap's copies go to
 * buffers not yet in any cache (on shm 12-14 GB/s against 40-45 GB/s later at
 * 1 MiB) and it wakes a server asleep since the connection (docs/native.md). */
static int run_stream(struct transport *t, const struct config *cfg, int n, struct result *res)
{
    size_t len = sizeof(struct band_header) + (size_t)n * n * sizeof(double);
    double *grid = alloc_aligned((size_t)n * n * sizeof(double));
    if (grid == NULL)
        return -1;
    grid_init(grid, n);
    int rc = -1;
    if (send_grids(t, n, cfg->pipeline) != 0 || recv_stats(t, res) != 0)
        goto out;
    double start = now_seconds();
    struct cpu_usage usage0 = cpu_usage_self();
    if (send_grids(t, n, cfg->iterations) != 0 || recv_stats(t, res) != 0)
        goto out;
    res->wall_s = now_seconds() - start;
    res->client = cpu_usage_since(usage0);
    res->bytes_c2s = cfg->iterations * len;
    res->bytes_s2c = 0;
    res->checksum = grid_checksum(grid, (size_t)n * n);
    rc = 0;
out:
    free(grid);
    return rc;
}

static int run_client(struct transport *t, const struct config *cfg, int n, struct result *res)
{
    if (cfg->stream)
        return run_stream(t, cfg, n, res);
    struct client_state c = {.t = t, .n = n, .bands = (int)cfg->pipeline,
                             .compute = cfg->compute};
    c.grid = alloc_aligned((size_t)n * n * sizeof(double));
    if (c.grid == NULL)
        return -1;
    grid_init(c.grid, n);
    int rc = -1;
    uint64_t iterations = cfg->iterations, received = 0;
    double start = now_seconds();
    struct cpu_usage usage0 = cpu_usage_self();
    for (int k = 0; k < c.bands; k++)
        if (send_band(&c, k, 0) != 0)
            goto out;
    for (uint64_t r = 0; r < iterations * (uint64_t)c.bands; r++) {
        uint64_t step = r / (uint64_t)c.bands;
        int k = (int)(r % (uint64_t)c.bands), lo, hi;
        band_rows(k, c.bands, n, &lo, &hi);
        void *buf;
        size_t len;
        if (t->ops->recv(t, &buf, &len) != 0)
            goto out;
        struct band_header hdr;
        memcpy(&hdr, buf, sizeof(hdr));
        if (hdr.kind != MSG_RESULT || (int)hdr.row_lo != lo || (int)hdr.row_hi != hi ||
            len != sizeof(hdr) + (size_t)(hi - lo) * n * sizeof(double)) {
            err_msg("recv: unexpected result (kind %u, rows %u..%u, %zu bytes; wanted %d..%d)",
                    hdr.kind, hdr.row_lo, hdr.row_hi, len, lo, hi);
            goto out;
        }
        if (c.compute)
            grid_apply_boundary(c.grid, (const double *)((char *)buf + sizeof(hdr)), lo, hi, n);
        received += len;
        if (t->ops->release_recv(t) != 0)
            goto out;
        if (step + 1 < iterations) {
            if (k >= 1 && send_band(&c, k - 1, (uint32_t)(step + 1)) != 0)
                goto out;
            if (k == c.bands - 1 && send_band(&c, k, (uint32_t)(step + 1)) != 0)
                goto out;
        }
    }
    res->wall_s = now_seconds() - start;
    res->client = cpu_usage_since(usage0);
    res->bytes_c2s = c.bytes_sent;
    res->bytes_s2c = received;
    if (recv_stats(t, res) != 0)
        goto out;
    res->checksum = grid_checksum(c.grid, (size_t)n * n);
    if (cfg->dump != NULL) {
        FILE *f = fopen(cfg->dump, "wb");
        if (f == NULL) {
            err_call(cfg->dump, errno);
            goto out;
        }
        size_t w = fwrite(c.grid, sizeof(double), (size_t)n * n, f);
        if (fclose(f) != 0 || w != (size_t)n * n) {
            err_msg("%s: short write", cfg->dump);
            goto out;
        }
    }
    rc = 0;
out:
    free(c.grid);
    return rc;
}

/* ---------------------------------------------------------------- output */

static void print_result(const struct config *cfg, int n, const struct result *r,
                         const char *connection)
{
    const char *transport = transport_names[cfg->transport];
    double c2s = (double)r->bytes_c2s / r->wall_s, s2c = (double)r->bytes_s2c / r->wall_s;
    if (cfg->json) {
        printf("{\"transport\": \"%s\", \"size_bytes\": %" PRIu64 ", \"grid_n\": %d, "
               "\"iterations\": %" PRIu64 ", \"pipeline\": %" PRIu64 ", \"compute\": %s, "
               "\"stream\": %s, "
               "\"isa\": \"%s\", \"bytes_client_to_server\": %" PRIu64 ", "
               "\"bytes_server_to_client\": %" PRIu64 ", \"wall_s\": %.6f, "
               "\"bytes_per_s_client_to_server\": %.1f, \"bytes_per_s_server_to_client\": %.1f, "
               "\"bytes_per_s_total\": %.1f, \"iteration_s\": %.9f, "
               "\"cpu\": {\"client\": {\"user_s\": %.3f, \"sys_s\": %.3f}, "
               "\"server\": {\"user_s\": %.3f, \"sys_s\": %.3f}}, "
               "\"checksum\": \"%016" PRIx64 "\"%s%s}\n",
               transport, cfg->size, n, cfg->iterations, cfg->pipeline,
               cfg->compute ? "true" : "false", cfg->stream ? "true" : "false",
               isa_names[r->isa_used], r->bytes_c2s,
               r->bytes_s2c, r->wall_s, c2s, s2c, c2s + s2c,
               r->wall_s / (double)cfg->iterations, r->client.user_s, r->client.sys_s,
               r->server.user_s, r->server.sys_s, r->checksum,
               connection[0] ? ", \"connection\": " : "", connection);
        return;
    }
    printf("%-9s %10s %6s %4s %7s %-6s %10s %9s %11s %11s %13s %13s  %-16s\n", "transport",
           "size[B]", "grid", "pipe", "compute", "isa", "iterations", "wall[s]", "c->s[MB/s]",
           "s->c[MB/s]", "cli usr/sys[s]", "srv usr/sys[s]", "checksum");
    char cli[32], srv[32];
    snprintf(cli, sizeof(cli), "%.2f/%.2f", r->client.user_s, r->client.sys_s);
    snprintf(srv, sizeof(srv), "%.2f/%.2f", r->server.user_s, r->server.sys_s);
    printf("%-9s %10" PRIu64 " %6d %4" PRIu64 " %7s %-6s %10" PRIu64
           " %9.3f %11.1f %11.1f %13s %13s  %016" PRIx64 "\n",
           transport, cfg->size, n, cfg->pipeline, cfg->compute ? "yes" : "no",
           isa_names[r->isa_used], cfg->iterations, r->wall_s, c2s / 1e6, s2c / 1e6, cli, srv,
           r->checksum);
}

/* ---------------------------------------------------------------- roles */

static int server_role(const struct config *cfg, const char *addr, int ready_fd)
{
    struct transport *t = NULL;
    int rc = transport_create(transport_names[cfg->transport], (double)cfg->timeout, &t);
    if (rc != TRANSPORT_OK)
        return rc == TRANSPORT_UNAVAILABLE ? EXIT_SKIP : 1;
    char bound[160];
    rc = 1;
    if (t->ops->listen(t, addr, bound, sizeof(bound)) != 0)
        goto out;
    if (ready_fd >= 0) {
        ssize_t w = write(ready_fd, bound, strlen(bound) + 1);
        close(ready_fd);
        if (w <= 0)
            goto out;
    } else {
        printf("listening on %s\n", bound);
        fflush(stdout);
    }
    if (t->ops->accept(t) != 0 || pingpong_serve(t, cfg->isa) != 0)
        goto out;
    rc = 0;
out:
    t->ops->destroy(t);
    return rc;
}

static int client_role(const struct config *cfg, const char *addr, int n)
{
    struct transport *t = NULL;
    int rc = transport_create(transport_names[cfg->transport], (double)cfg->timeout, &t);
    if (rc != TRANSPORT_OK)
        return rc == TRANSPORT_UNAVAILABLE ? EXIT_SKIP : 1;
    t->session = (struct session){
        .magic = SESSION_MAGIC, .version = SESSION_VERSION, .app = APP_PINGPONG,
        .isa = (uint8_t)cfg->isa,
        .flags = (uint8_t)((cfg->compute ? SESSION_COMPUTE : 0) | (cfg->stream ? SESSION_STREAM : 0)),
        .slot_bytes = (uint32_t)slot_bytes_for(n, cfg->stream ? 1 : (int)cfg->pipeline),
        .slots = (uint16_t)cfg->pipeline, .grid_n = (uint32_t)n,
        .iterations = (uint32_t)cfg->iterations};
    if (cfg->tos != TOS_UNSET)
        t->tos = (int)cfg->tos;
    struct result res = {0};
    rc = 1;
    if (t->ops->connect(t, addr) != 0 || run_client(t, cfg, n, &res) != 0)
        goto out;
    /* How the connection really ran (smc: SMC-R/SMC-D or TCP fallback and why). */
    char connection[512] = "";
    if (t->ops->describe != NULL && t->ops->describe(t, connection, sizeof(connection)) != 0)
        goto out;
    print_result(cfg, n, &res, connection);
    if (!cfg->json && connection[0])
        printf("connection: %s\n", connection);
    rc = 0;
out:
    t->ops->destroy(t);
    return rc;
}

static int loopback(const struct config *cfg, const int *cpus, int ncpus, int n)
{
    char addr[160];
    const char *name = transport_names[cfg->transport];
    if (cfg->server && cfg->server_addr[0] != '\0') {
        snprintf(addr, sizeof(addr), "%s", cfg->server_addr);
    } else if (strcmp(name, "rdma") == 0 || strcmp(name, "rsocket") == 0) {
        struct transport *probe;
        int rc = transport_create(name, 1, &probe);
        if (rc != TRANSPORT_OK)
            return rc == TRANSPORT_UNAVAILABLE ? EXIT_SKIP : 1;
        probe->ops->destroy(probe);
        char ip[64];
        if (rdma_find_local_ipv4(ip, sizeof(ip)) != 0)
            return 1;
        snprintf(addr, sizeof(addr), "%s:0", ip);
    } else {
        snprintf(addr, sizeof(addr), "127.0.0.1:0");
    }
    int pipefd[2];
    if (pipe(pipefd) != 0)
        return err_call("pipe", errno), 1;
    fflush(stdout);
    pid_t child = fork();
    if (child < 0)
        return err_call("fork", errno), 1;
    if (child == 0) {
        close(pipefd[0]);
        if (ncpus > 0 && pin_to_cpus(&cpus[ncpus > 1 ? 1 : 0], 1) != 0)
            _exit(1);
        _exit(server_role(cfg, addr, pipefd[1]));
    }
    close(pipefd[1]);
    char bound[160] = "";
    ssize_t got = read(pipefd[0], bound, sizeof(bound) - 1);
    close(pipefd[0]);
    int rc = 1;
    if (got > 0) {
        if (ncpus > 0 && pin_to_cpus(cpus, 1) != 0)
            kill(child, SIGTERM);
        else
            rc = client_role(cfg, bound, n);
    }
    if (rc != 0)
        kill(child, SIGTERM);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    int child_rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (got <= 0)
        return child_rc ? child_rc : 1;
    if (rc == 0 && child_rc != 0) {
        err_msg("server process failed (exit status %d)", child_rc);
        return 1;
    }
    return rc;
}

int main(int argc, char **argv)
{
    g_prog = "pingpong";
    struct config cfg = {.size = 4u << 20, .iterations = 100, .pipeline = 1, .timeout = 30,
                         .isa = ISA_AUTO, .server_addr = "", .tos = TOS_UNSET};
    const char *synopsis = "--transport tcp|shm|shm-zc|rdma|smc|rsocket (--server [ADDR:PORT] | --client "
                           "ADDR:PORT | --loopback) [options]";
    int rc = options_main(options, N_OPTIONS, &cfg, argc, argv, synopsis);
    if (rc != OPTIONS_GO_ON)
        return rc;
    int roles = (cfg.server && !cfg.loopback) + (cfg.client_addr != NULL) + cfg.loopback;
    if (roles != 1) {
        err_msg("choose exactly one of --server, --client, --loopback (see --help)");
        return EXIT_USAGE;
    }
    if (cfg.stream && cfg.compute) {
        err_msg("--stream sends the grid untouched: it takes no --compute");
        return EXIT_USAGE;
    }
    if (transport_check_tos(transport_names[cfg.transport], cfg.tos,
                            cfg.client_addr != NULL || cfg.loopback) != 0)
        return EXIT_USAGE;
    int n = grid_side_for_bytes(cfg.size);
    /* Bands need rows; a stream's in-flight messages are whole grids (MAX_SLOTS caps them). */
    if (!cfg.stream && cfg.pipeline > (uint64_t)n / 2) {
        err_msg("--pipeline: %" PRIu64 " bands do not fit a %d-row grid (at most %d)",
                cfg.pipeline, n, n / 2);
        return EXIT_USAGE;
    }
    if (cfg.loopback && isa_resolve((enum isa)cfg.isa) < 0)
        return EXIT_USAGE;
    int cpus[CPU_SETSIZE_LIMIT], ncpus = 0;
    if (cfg.cpus != NULL && (ncpus = parse_cpu_list(cfg.cpus, cpus, CPU_SETSIZE_LIMIT)) < 0)
        return EXIT_USAGE;
    signal(SIGPIPE, SIG_IGN);
    if (cfg.loopback)
        return loopback(&cfg, cpus, ncpus, n);
    if (ncpus > 0 && pin_to_cpus(cpus, ncpus) != 0)
        return 1;
    if (cfg.client_addr != NULL)
        return client_role(&cfg, cfg.client_addr, n);
    return server_role(&cfg, cfg.server_addr[0] ? cfg.server_addr : DEFAULT_ADDR, -1);
}
