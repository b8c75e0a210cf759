/* Stream-socket back-end: one non-blocking socket and a small progress engine,
 * so a posted send keeps moving while the caller waits for something else (no
 * deadlock when both sides have full socket buffers). Each message is an
 * 8-byte header {length, tag} followed by the payload.
 *
 * The same framing serves every stream socket API: kernel TCP, AF_SMC (which
 * keeps TCP's socket calls) and librdmacm's rsockets (rsocket/rsend/rpoll...).
 * They differ only in the socket-ops table (transport_sockops.c). */
#define _GNU_SOURCE
#include "common.h"
#include "transport.h"
#include "transport_sockops.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TCP_TAG 0x54435042u /* marks every message header */
#define HDR_BYTES 8u
#define SPIN_SECONDS 1e-3 /* busy-poll this long before sleeping in poll() */

struct tcp_transport {
    struct transport base;
    const struct sock_ops *so;
    int listen_fd;
    int fd;
    size_t slot_bytes, stride;
    unsigned slots;
    unsigned char *send_mem, *recv_mem;
    uint64_t send_acquired, send_posted, send_done;
    size_t send_off;
    uint32_t send_len[MAX_SLOTS];
    uint64_t recv_complete, recv_taken, recv_released;
    size_t recv_off;
    uint32_t recv_len[MAX_SLOTS];
    int peer_closed; /* EOF seen; messages already read stay valid */
};

static struct tcp_transport *tcp_of(struct transport *t)
{
    return (struct tcp_transport *)t;
}

static int set_nonblocking(const struct sock_ops *so, int fd)
{
    int flags = so->fcntl(fd, F_GETFL, 0);
    if (flags < 0 || so->fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return err_call("fcntl(O_NONBLOCK)", errno);
    return 0;
}

static int timeout_ms(const struct transport *t)
{
    return (int)(t->idle_timeout_s * 1000.0);
}

/* Waits for events on fd; a silent peer past the idle timeout is an error. */
static int wait_fd(struct transport *t, int fd, short events, const char *what)
{
    struct pollfd p = {.fd = fd, .events = events};
    for (;;) {
        int n = tcp_of(t)->so->poll(&p, 1, timeout_ms(t));
        if (n > 0)
            return 0;
        if (n == 0)
            return err_msg("%s: peer silent for %.0f s (timed out)", what, t->idle_timeout_s);
        if (errno != EINTR)
            return err_call("poll", errno);
    }
}

static int io_all(struct transport *t, int fd, void *buf, size_t len, int writing)
{
    unsigned char *p = buf;
    while (len > 0) {
        const struct sock_ops *so = tcp_of(t)->so;
        ssize_t n = writing ? so->send(fd, p, len, MSG_NOSIGNAL) : so->recv(fd, p, len, 0);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
        } else if (n == 0) {
            return err_msg("recv: peer closed the connection");
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (wait_fd(t, fd, writing ? POLLOUT : POLLIN, writing ? "send" : "recv") != 0)
                return -1;
        } else if (errno != EINTR) {
            return err_call(writing ? so->send_call : so->recv_call, errno);
        }
    }
    return 0;
}

static int setup_buffers(struct tcp_transport *tt)
{
    const struct session *s = &tt->base.session;
    tt->slot_bytes = s->slot_bytes;
    tt->slots = s->slots;
    tt->stride = (HDR_BYTES + tt->slot_bytes + 63) & ~(size_t)63;
    tt->send_mem = alloc_aligned(tt->stride * tt->slots);
    tt->recv_mem = alloc_aligned(tt->stride * tt->slots);
    if (tt->send_mem == NULL || tt->recv_mem == NULL)
        return -1;
    int one = 1;
    if (tt->so->setsockopt(tt->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
        return err_call("setsockopt(TCP_NODELAY)", errno);
    return 0;
}

static int tcp_listen(struct transport *t, const char *addr, char *bound, size_t bound_len)
{
    struct tcp_transport *tt = tcp_of(t);
    struct addrinfo *res = NULL;
    if (resolve_address(addr, 1, &res) != 0)
        return -1;
    int rc = -1, one = 1;
    tt->listen_fd = tt->so->socket(res->ai_family, SOCK_STREAM);
    if (tt->listen_fd < 0) {
        err_call(tt->so->socket_call, errno);
        goto out;
    }
    tt->so->setsockopt(tt->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (tt->so->bind(tt->listen_fd, res->ai_addr, res->ai_addrlen) != 0) {
        err_call(tt->so->bind_call, errno);
        goto out;
    }
    if (tt->so->listen(tt->listen_fd, 1) != 0) {
        err_call(tt->so->listen_call, errno);
        goto out;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char host[128], port[16];
    if (tt->so->getsockname(tt->listen_fd, (struct sockaddr *)&ss, &sl) != 0) {
        err_call("getsockname", errno);
        goto out;
    }
    int gai = getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), port, sizeof(port),
                          NI_NUMERICHOST | NI_NUMERICSERV);
    if (gai != 0) {
        err_msg("getnameinfo: %s", gai_strerror(gai));
        goto out;
    }
    snprintf(bound, bound_len, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
    rc = 0;
out:
    freeaddrinfo(res);
    return rc;
}

static int check_session(const struct session *s)
{
    if (s->magic != SESSION_MAGIC || s->version != SESSION_VERSION)
        return err_msg("peer sent no cxfab session (magic %08x, version %u)", s->magic,
                       s->version);
    if (s->slots < 1 || s->slots > MAX_SLOTS || s->slot_bytes == 0 || s->slot_bytes > (1u << 30))
        return err_msg("peer asked for %u slots of %u bytes: out of range", s->slots,
                       s->slot_bytes);
    return 0;
}

static int tcp_accept(struct transport *t)
{
    struct tcp_transport *tt = tcp_of(t);
    do
        tt->fd = tt->so->accept(tt->listen_fd);
    while (tt->fd < 0 && errno == EINTR);
    if (tt->fd < 0)
        return err_call(tt->so->accept_call, errno);
    tt->so->close(tt->listen_fd);
    tt->listen_fd = -1;
    if (set_nonblocking(tt->so, tt->fd) != 0 ||
        io_all(t, tt->fd, &t->session, sizeof(t->session), 0))
        return -1;
    if (check_session(&t->session) != 0)
        return -1;
    return setup_buffers(tt);
}

static int tcp_connect(struct transport *t, const char *addr)
{
    struct tcp_transport *tt = tcp_of(t);
    struct addrinfo *res = NULL;
    if (resolve_address(addr, 0, &res) != 0)
        return -1;
    int rc = -1;
    /* The server may still be starting: retry refused connections until the timeout. */
    double deadline = now_seconds() + t->idle_timeout_s;
    for (;;) {
        tt->fd = tt->so->socket(res->ai_family, SOCK_STREAM);
        if (tt->fd < 0) {
            err_call(tt->so->socket_call, errno);
            goto out;
        }
        if (tt->so->connect(tt->fd, res->ai_addr, res->ai_addrlen) == 0)
            break;
        int e = errno;
        tt->so->close(tt->fd);
        tt->fd = -1;
        if (e != ECONNREFUSED || now_seconds() > deadline) {
            err_call(tt->so->connect_call, e);
            goto out;
        }
        usleep(50 * 1000);
    }
    if (set_nonblocking(tt->so, tt->fd) != 0 ||
        io_all(t, tt->fd, &t->session, sizeof(t->session), 1))
        goto out;
    rc = setup_buffers(tt);
out:
    freeaddrinfo(res);
    return rc;
}

enum direction { SENDING, RECEIVING };

/* One non-blocking send or recv of msg[*off, want), retried on EINTR; moves *off on.
 * 1: bytes moved (a send of 0 bytes too); 0: the socket would block, or the peer
 * closed (then peer_closed is set); -1: failed, after saying why. */
static int move_bytes(struct tcp_transport *tt, enum direction direction, unsigned char *msg,
                      size_t *off, size_t want, int *progressed)
{
    for (;;) {
        ssize_t n = direction == SENDING
                        ? tt->so->send(tt->fd, msg + *off, want - *off, MSG_NOSIGNAL | MSG_DONTWAIT)
                        : tt->so->recv(tt->fd, msg + *off, want - *off, MSG_DONTWAIT);
        if (n == 0 && direction == RECEIVING) {
            tt->peer_closed = 1;
            return 0;
        }
        if (n >= 0) {
            *progressed = 1;
            *off += (size_t)n;
            return 1;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        if (errno != EINTR)
            return err_call(direction == SENDING ? tt->so->send_call : tt->so->recv_call, errno);
    }
}

/* Sends the posted messages the socket accepts now. 0 when it would block (or all
 * are sent), -1 on failure. */
static int pump_send(struct tcp_transport *tt, int *progressed)
{
    while (tt->send_done < tt->send_posted) {
        unsigned char *msg = tt->send_mem + (tt->send_done % tt->slots) * tt->stride;
        size_t total = HDR_BYTES + tt->send_len[tt->send_done % tt->slots];
        int moved = move_bytes(tt, SENDING, msg, &tt->send_off, total, progressed);
        if (moved <= 0)
            return moved;
        if (tt->send_off == total) {
            tt->send_done++;
            tt->send_off = 0;
        }
    }
    return 0;
}

/* Receives into the free slots what the socket holds now. 0 when it would block, the
 * peer closed or no slot is free; -1 on failure or a corrupt header. */
static int pump_recv(struct tcp_transport *tt, int *progressed)
{
    while (tt->recv_complete - tt->recv_released < tt->slots) {
        unsigned slot = tt->recv_complete % tt->slots;
        unsigned char *msg = tt->recv_mem + slot * tt->stride;
        size_t want = HDR_BYTES;
        if (tt->recv_off >= HDR_BYTES) {
            uint32_t len;
            memcpy(&len, msg, sizeof(len));
            want += len;
        }
        if (tt->recv_off < want) {
            if (tt->peer_closed)
                break;
            int moved = move_bytes(tt, RECEIVING, msg, &tt->recv_off, want, progressed);
            if (moved <= 0)
                return moved;
        }
        if (tt->recv_off == HDR_BYTES) {
            uint32_t len, tag;
            memcpy(&len, msg, sizeof(len));
            memcpy(&tag, msg + 4, sizeof(tag));
            if (tag != TCP_TAG || len > tt->slot_bytes)
                return err_msg("recv: corrupt message header (tag %08x, length %u)", tag, len);
        }
        if (tt->recv_off >= HDR_BYTES) {
            uint32_t len;
            memcpy(&len, msg, sizeof(len));
            if (tt->recv_off == HDR_BYTES + len) {
                tt->recv_len[slot] = len;
                tt->recv_complete++;
                tt->recv_off = 0;
            }
        }
    }
    return 0;
}

/* Moves whatever the socket accepts now, both ways. */
static int pump(struct tcp_transport *tt, int *progressed)
{
    if (pump_send(tt, progressed) != 0)
        return -1;
    return pump_recv(tt, progressed);
}

/* One step of progress. Polls the socket without sleeping for up to
 * SPIN_SECONDS (a peer on another CPU usually answers within that), then
 * blocks in poll(): on a busy machine a sleeping side can wait a whole
 * scheduler slice of someone else's task before it runs again. */
static int progress(struct tcp_transport *tt, const char *waiting_for)
{
    int progressed = 0;
    double spin_until = 0;
    for (;;) {
        if (pump(tt, &progressed) != 0)
            return -1;
        if (progressed)
            return 0;
        if (tt->peer_closed)
            break;
        double now = now_seconds();
        if (spin_until == 0)
            spin_until = now + SPIN_SECONDS;
        else if (now > spin_until)
            break;
        __builtin_ia32_pause();
    }
    if (tt->peer_closed)
        return err_msg("%s: peer closed the connection", waiting_for);
    short events = 0;
    if (tt->send_done < tt->send_posted)
        events |= POLLOUT;
    if (tt->recv_complete - tt->recv_released < tt->slots)
        events |= POLLIN;
    if (events == 0)
        return err_msg("%s: no progress possible (all slots held)", waiting_for);
    return wait_fd(&tt->base, tt->fd, events, waiting_for);
}

static int tcp_acquire_send(struct transport *t, void **buf)
{
    struct tcp_transport *tt = tcp_of(t);
    while (tt->send_acquired - tt->send_done >= tt->slots)
        if (progress(tt, "send") != 0)
            return -1;
    *buf = tt->send_mem + (tt->send_acquired % tt->slots) * tt->stride + HDR_BYTES;
    tt->send_acquired++;
    return 0;
}

static int tcp_post_send(struct transport *t, size_t len)
{
    struct tcp_transport *tt = tcp_of(t);
    unsigned slot = tt->send_posted % tt->slots;
    unsigned char *msg = tt->send_mem + slot * tt->stride;
    uint32_t len32 = (uint32_t)len, tag = TCP_TAG;
    if (len > tt->slot_bytes)
        return err_msg("post_send: %zu bytes exceed the %zu-byte slot", len, tt->slot_bytes);
    memcpy(msg, &len32, sizeof(len32));
    memcpy(msg + 4, &tag, sizeof(tag));
    tt->send_len[slot] = len32;
    tt->send_posted++;
    int progressed = 0;
    return pump(tt, &progressed);
}

static int tcp_recv(struct transport *t, void **buf, size_t *len)
{
    struct tcp_transport *tt = tcp_of(t);
    while (tt->recv_complete == tt->recv_taken)
        if (progress(tt, "recv") != 0)
            return -1;
    unsigned slot = tt->recv_taken % tt->slots;
    *buf = tt->recv_mem + slot * tt->stride + HDR_BYTES;
    *len = tt->recv_len[slot];
    tt->recv_taken++;
    return 0;
}

static int tcp_release_recv(struct transport *t)
{
    struct tcp_transport *tt = tcp_of(t);
    if (tt->recv_released == tt->recv_taken)
        return err_msg("release_recv: nothing to release");
    tt->recv_released++;
    return 0;
}

static int tcp_flush(struct transport *t)
{
    struct tcp_transport *tt = tcp_of(t);
    while (tt->send_done < tt->send_posted)
        if (progress(tt, "send") != 0)
            return -1;
    return 0;
}

static void tcp_destroy(struct transport *t)
{
    struct tcp_transport *tt = tcp_of(t);
    if (tt->fd >= 0)
        tt->so->close(tt->fd);
    if (tt->listen_fd >= 0)
        tt->so->close(tt->listen_fd);
    free(tt->send_mem);
    free(tt->recv_mem);
    free(tt);
}

static int tcp_describe(struct transport *t, char *buf, size_t len)
{
    struct tcp_transport *tt = tcp_of(t);
    if (tt->so->describe == NULL || tt->fd < 0) {
        buf[0] = '\0';
        return 0;
    }
    return tt->so->describe(tt->fd, buf, len);
}

#define STREAM_OPS(ops_name, label)                                                            \
    static const struct transport_ops ops_name = {                                             \
        .name = label,                                                                         \
        .listen = tcp_listen,                                                                  \
        .accept = tcp_accept,                                                                  \
        .connect = tcp_connect,                                                                \
        .acquire_send = tcp_acquire_send,                                                      \
        .post_send = tcp_post_send,                                                            \
        .recv = tcp_recv,                                                                      \
        .release_recv = tcp_release_recv,                                                      \
        .flush = tcp_flush,                                                                    \
        .describe = tcp_describe,                                                              \
        .destroy = tcp_destroy,                                                                \
    }
STREAM_OPS(tcp_ops, "tcp");
STREAM_OPS(smc_ops, "smc");
STREAM_OPS(rsocket_ops, "rsocket");

/* One back-end over the given socket API; `so->available` says why it cannot exist here. */
static int stream_transport_create(struct transport **out, const struct transport_ops *ops,
                                   const struct sock_ops *so)
{
    if (so->available != NULL && !so->available())
        return TRANSPORT_UNAVAILABLE;
    struct tcp_transport *tt = calloc(1, sizeof(*tt));
    if (tt == NULL)
        return err_call("calloc", errno);
    tt->base.ops = ops;
    tt->so = so;
    tt->listen_fd = tt->fd = -1;
    *out = &tt->base;
    return TRANSPORT_OK;
}

int tcp_transport_create(struct transport **out)
{
    return stream_transport_create(out, &tcp_ops, &sock_ops_kernel);
}

int smc_transport_create(struct transport **out)
{
    return stream_transport_create(out, &smc_ops, &sock_ops_smc);
}

int rsocket_transport_create(struct transport **out)
{
    return stream_transport_create(out, &rsocket_ops, &sock_ops_rsocket);
}
