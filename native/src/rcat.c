/* rcat: stdin on one host -> stdout on another (seed 003's "RDMA cat").
 *
 * The sender reads the next chunk into a free send slot while earlier slots
 * are still on the wire; the receiver writes slot k to stdout while slot k+1
 * arrives (--pipeline 2 = double buffering). A zero-length message ends the
 * stream. Works over every transport; tcp is the comparison for rdma. */
#define _GNU_SOURCE
#include "common.h"
#include "options.h"
#include "transport.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define APP_RCAT 2
#define DEFAULT_ADDR "0.0.0.0:7472"

struct config {
    int transport;
    const char *server_addr;
    bool server;
    const char *client_addr;
    uint64_t size, pipeline, timeout, tos;
    bool json;
};

#define OFF(field) offsetof(struct config, field)
static const struct opt_spec options[] = {
    OPT_ROWS_CONNECT("how the bytes travel",
                     "receive one stream and write it to stdout (default " DEFAULT_ADDR ")",
                     "send stdin to a server"),
    {"size", "BYTES", OPT_BYTES, OFF(size), 0, 4096, 1ull << 30, NULL, "chunk size"},
    {"pipeline", "N", OPT_UINT, OFF(pipeline), 0, 1, MAX_SLOTS, NULL,
     "chunks in flight (2 = double buffering)"},
    {"timeout", "SECONDS", OPT_UINT, OFF(timeout), 0, 1, 3600, NULL,
     "a peer silent this long is reported as gone"},
    {"tos", "BYTE", OPT_UINT, OFF(tos), 0, 0, 255, NULL,
     "rdma client: IP ToS byte of the RoCE packets (DSCP x 4), set through RDMA-CM"},
    {"json", "", OPT_FLAG, OFF(json), 0, 0, 0, NULL, "print statistics as JSON on stderr"},
};
#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

static ssize_t read_chunk(int fd, unsigned char *buf, size_t size)
{
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, buf + got, size - got);
        if (n == 0)
            break;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return err_call("read(stdin)", errno);
        }
        got += (size_t)n;
    }
    return (ssize_t)got;
}

static int write_all(int fd, const unsigned char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return err_call("write(stdout)", errno);
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static void report(const struct config *cfg, const char *role, uint64_t bytes, double wall)
{
    if (!cfg->json)
        return;
    fprintf(stderr,
            "{\"role\": \"%s\", \"transport\": \"%s\", \"bytes\": %" PRIu64
            ", \"wall_s\": %.6f, \"bytes_per_s\": %.1f, \"chunk_bytes\": %" PRIu64
            ", \"pipeline\": %" PRIu64 "}\n",
            role, transport_names[cfg->transport], bytes, wall, wall > 0 ? bytes / wall : 0.0,
            cfg->size, cfg->pipeline);
}

static int receive_stream(struct transport *t, const struct config *cfg)
{
    uint64_t bytes = 0;
    double start = now_seconds();
    for (;;) {
        void *buf;
        size_t len;
        if (t->ops->recv(t, &buf, &len) != 0)
            return -1;
        if (len == 0) {
            t->ops->release_recv(t);
            break;
        }
        if (write_all(STDOUT_FILENO, buf, len) != 0 || t->ops->release_recv(t) != 0)
            return -1;
        bytes += len;
    }
    report(cfg, "receiver", bytes, now_seconds() - start);
    return 0;
}

static int send_stream(struct transport *t, const struct config *cfg)
{
    uint64_t bytes = 0;
    double start = now_seconds();
    for (;;) {
        void *buf;
        if (t->ops->acquire_send(t, &buf) != 0)
            return -1;
        ssize_t n = read_chunk(STDIN_FILENO, buf, cfg->size);
        if (n < 0)
            return -1;
        if (t->ops->post_send(t, (size_t)n) != 0)
            return -1;
        bytes += (uint64_t)n;
        if (n == 0)
            break; /* the zero-length message just posted ends the stream */
    }
    if (t->ops->flush(t) != 0)
        return -1;
    report(cfg, "sender", bytes, now_seconds() - start);
    return 0;
}

int main(int argc, char **argv)
{
    g_prog = "rcat";
    struct config cfg = {.size = 1u << 20, .pipeline = 2, .timeout = 30, .server_addr = "",
                         .tos = TOS_UNSET};
    const char *synopsis =
        "--transport rdma|tcp (--server [ADDR:PORT] > out | --client ADDR:PORT < in) [options]";
    int rc = options_main(options, N_OPTIONS, &cfg, argc, argv, synopsis);
    if (rc != OPTIONS_GO_ON)
        return rc;
    if (cfg.server == (cfg.client_addr != NULL)) {
        err_msg("choose exactly one of --server, --client (see --help)");
        return EXIT_USAGE;
    }
    if (transport_check_tos(transport_names[cfg.transport], cfg.tos, cfg.client_addr != NULL))
        return EXIT_USAGE;
    signal(SIGPIPE, SIG_IGN);
    struct transport *t = NULL;
    rc = transport_create(transport_names[cfg.transport], (double)cfg.timeout, &t);
    if (rc != TRANSPORT_OK)
        return rc == TRANSPORT_UNAVAILABLE ? EXIT_SKIP : 1;
    rc = 1;
    if (cfg.server) {
        char bound[160];
        if (t->ops->listen(t, cfg.server_addr[0] ? cfg.server_addr : DEFAULT_ADDR, bound,
                           sizeof(bound)) != 0)
            goto out;
        fprintf(stderr, "rcat: listening on %s\n", bound);
        if (t->ops->accept(t) != 0)
            goto out;
        if (t->session.app != APP_RCAT) {
            err_msg("peer is not rcat (app %u)", t->session.app);
            goto out;
        }
        cfg.size = t->session.slot_bytes; /* the sender chose the chunk size */
        cfg.pipeline = t->session.slots;
        if (receive_stream(t, &cfg) != 0)
            goto out;
    } else {
        t->session = (struct session){.magic = SESSION_MAGIC, .version = SESSION_VERSION,
                                      .app = APP_RCAT, .slot_bytes = (uint32_t)cfg.size,
                                      .slots = (uint16_t)cfg.pipeline};
        if (cfg.tos != TOS_UNSET)
            t->tos = (int)cfg.tos;
        if (t->ops->connect(t, cfg.client_addr) != 0 || send_stream(t, &cfg) != 0)
            goto out;
    }
    rc = 0;
out:
    t->ops->destroy(t);
    return rc;
}
