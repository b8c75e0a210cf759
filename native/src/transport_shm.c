/* Shared-memory back-end: the idea of SMC-D loopback (seed 002) in user space.
 *
 * The client creates one memfd holding two rings (client->server and
 * server->client) of `slots` message slots each and hands the descriptor to
 * the server over an abstract UNIX socket (SCM_RIGHTS). From then on data
 * moves without the kernel: the sender copies its message into the peer's
 * slot once (as a NIC's DMA would) and publishes it by advancing `head`; the
 * receiver gives the slot back by advancing `tail` (the credit). A side with
 * nothing to do spins briefly, then sleeps on a futex; the UNIX socket stays
 * open only so that a vanished peer is noticed (EOF) while waiting.
 * "shm-zc" hands out the peer's slot itself, so nothing is copied at all. */
#define _GNU_SOURCE
#include "common.h"
#include "transport.h"

#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define SPIN_SECONDS 1e-3 /* busy-wait this long before sleeping on the futex */
#define SLEEP_NS (20 * 1000 * 1000)

struct ring {
    _Atomic uint32_t head;        /* messages published by the producer */
    _Atomic uint32_t head_waiter; /* the consumer sleeps on head */
    char pad0[56];
    _Atomic uint32_t tail;        /* messages released by the consumer */
    _Atomic uint32_t tail_waiter; /* the producer sleeps on tail (no credit) */
    char pad1[56];
    uint32_t len[MAX_SLOTS];
};

struct shm_header {
    struct ring ring[2]; /* [0] client->server, [1] server->client */
};

struct shm_transport {
    struct transport base;
    int zero_copy;
    int listen_fd, sock_fd;
    int is_server;
    unsigned char *map;
    size_t map_bytes, stride;
    unsigned slots;
    struct ring *tx, *rx;
    unsigned char *tx_slots, *rx_slots;
    unsigned char *staging; /* copy mode: the caller fills this, post_send copies it */
    uint32_t tx_head, rx_taken, rx_released;
    int tx_acquired;
};

static struct shm_transport *shm_of(struct transport *t)
{
    return (struct shm_transport *)t;
}

static void futex_wake(_Atomic uint32_t *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static int peer_gone(struct shm_transport *st)
{
    char byte;
    ssize_t n = recv(st->sock_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* Waits until *word differs from `seen`. */
static int wait_change(struct shm_transport *st, _Atomic uint32_t *word, _Atomic uint32_t *waiter,
                       uint32_t seen, const char *what)
{
    double start = now_seconds();
    while (now_seconds() - start < SPIN_SECONDS) {
        for (int i = 0; i < 64; i++) {
            if (atomic_load_explicit(word, memory_order_acquire) != seen)
                return 0;
            __builtin_ia32_pause();
        }
    }
    for (;;) {
        atomic_store(waiter, 1);
        if (atomic_load(word) != seen) {
            atomic_store(waiter, 0);
            return 0;
        }
        struct timespec ts = {.tv_sec = 0, .tv_nsec = SLEEP_NS};
        syscall(SYS_futex, word, FUTEX_WAIT, seen, &ts, NULL, 0);
        atomic_store(waiter, 0);
        if (atomic_load(word) != seen)
            return 0;
        if (peer_gone(st))
            return err_msg("%s: shared-memory peer exited (its socket closed)", what);
        if (now_seconds() - start > st->base.idle_timeout_s)
            return err_msg("%s: peer silent for %.0f s (timed out)", what,
                           st->base.idle_timeout_s);
    }
}

static void publish(_Atomic uint32_t *word, _Atomic uint32_t *waiter, uint32_t value)
{
    atomic_store(word, value);
    if (atomic_load(waiter))
        futex_wake(word);
}

static void socket_name(const char *addr, struct sockaddr_un *sun, socklen_t *len)
{
    memset(sun, 0, sizeof(*sun));
    sun->sun_family = AF_UNIX;
    /* Abstract namespace: nothing to clean up in the file system after a crash. */
    int n = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1, "cxfab-shm/%s", addr);
    if (n > (int)sizeof(sun->sun_path) - 2)
        n = (int)sizeof(sun->sun_path) - 2;
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static int map_region(struct shm_transport *st, int fd, int is_server)
{
    const struct session *s = &st->base.session;
    st->slots = s->slots;
    st->stride = ((size_t)s->slot_bytes + 4095) & ~(size_t)4095;
    size_t header = (sizeof(struct shm_header) + 4095) & ~(size_t)4095;
    st->map_bytes = header + 2 * st->stride * st->slots;
    if (!is_server && ftruncate(fd, (off_t)st->map_bytes) != 0)
        return err_call("ftruncate", errno);
    void *map = mmap(NULL, st->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (map == MAP_FAILED)
        return err_call("mmap", errno);
    st->map = map;
    struct shm_header *h = map;
    unsigned char *c2s = st->map + header, *s2c = c2s + st->stride * st->slots;
    st->tx = &h->ring[is_server ? 1 : 0];
    st->rx = &h->ring[is_server ? 0 : 1];
    st->tx_slots = is_server ? s2c : c2s;
    st->rx_slots = is_server ? c2s : s2c;
    st->is_server = is_server;
    if (!st->zero_copy && (st->staging = alloc_aligned(st->stride)) == NULL)
        return -1;
    return 0;
}

static int shm_listen(struct transport *t, const char *addr, char *bound, size_t bound_len)
{
    struct shm_transport *st = shm_of(t);
    char name[80];
    /* The address is a rendezvous name; ":0" (as in --loopback) picks a unique one. */
    size_t alen = strlen(addr);
    if (alen >= 2 && strcmp(addr + alen - 2, ":0") == 0)
        snprintf(name, sizeof(name), "auto-%d-%ld", (int)getpid(), (long)(now_seconds() * 1e6));
    else
        snprintf(name, sizeof(name), "%s", addr);
    struct sockaddr_un sun;
    socklen_t len;
    socket_name(name, &sun, &len);
    st->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (st->listen_fd < 0)
        return err_call("socket(AF_UNIX)", errno);
    if (bind(st->listen_fd, (struct sockaddr *)&sun, len) != 0)
        return err_call("bind(shm rendezvous)", errno);
    if (listen(st->listen_fd, 1) != 0)
        return err_call("listen", errno);
    snprintf(bound, bound_len, "%s", name);
    return 0;
}

static int shm_accept(struct transport *t)
{
    struct shm_transport *st = shm_of(t);
    do
        st->sock_fd = accept4(st->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    while (st->sock_fd < 0 && errno == EINTR);
    if (st->sock_fd < 0)
        return err_call("accept", errno);
    close(st->listen_fd);
    st->listen_fd = -1;

    char control[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {.iov_base = &t->session, .iov_len = sizeof(t->session)};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                         .msg_controllen = sizeof(control)};
    ssize_t n = recvmsg(st->sock_fd, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0)
        return err_call("recvmsg", errno);
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    if (n != sizeof(t->session) || cm == NULL || cm->cmsg_type != SCM_RIGHTS)
        return err_msg("recvmsg: peer sent no session and memory descriptor");
    int fd;
    memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
    const struct session *s = &t->session;
    int rc = -1;
    if (s->magic != SESSION_MAGIC || s->version != SESSION_VERSION || s->slots < 1 ||
        s->slots > MAX_SLOTS || s->slot_bytes == 0 || s->slot_bytes > (1u << 30)) {
        err_msg("peer sent an invalid session");
        goto out;
    }
    if (map_region(st, fd, 1) != 0)
        goto out;
    char ack = 1;
    if (send(st->sock_fd, &ack, 1, MSG_NOSIGNAL) != 1) {
        err_call("send(ack)", errno);
        goto out;
    }
    rc = 0;
out:
    close(fd);
    return rc;
}

static int shm_connect(struct transport *t, const char *addr)
{
    struct shm_transport *st = shm_of(t);
    struct sockaddr_un sun;
    socklen_t len;
    socket_name(addr, &sun, &len);
    double deadline = now_seconds() + t->idle_timeout_s;
    for (;;) {
        st->sock_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (st->sock_fd < 0)
            return err_call("socket(AF_UNIX)", errno);
        if (connect(st->sock_fd, (struct sockaddr *)&sun, len) == 0)
            break;
        int e = errno;
        close(st->sock_fd);
        st->sock_fd = -1;
        if ((e != ECONNREFUSED && e != ENOENT) || now_seconds() > deadline)
            return err_call("connect(shm rendezvous)", e);
        usleep(20 * 1000);
    }
    int fd = memfd_create("cxfab-shm", MFD_CLOEXEC);
    if (fd < 0)
        return err_call("memfd_create", errno);
    int rc = -1;
    if (map_region(st, fd, 0) != 0)
        goto out;
    char control[CMSG_SPACE(sizeof(int))];
    memset(control, 0, sizeof(control));
    struct iovec iov = {.iov_base = &t->session, .iov_len = sizeof(t->session)};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                         .msg_controllen = sizeof(control)};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
    if (sendmsg(st->sock_fd, &msg, MSG_NOSIGNAL) < 0) {
        err_call("sendmsg", errno);
        goto out;
    }
    char ack;
    struct pollfd p = {.fd = st->sock_fd, .events = POLLIN};
    int n = poll(&p, 1, (int)(t->idle_timeout_s * 1000));
    if (n <= 0 || recv(st->sock_fd, &ack, 1, 0) != 1) {
        err_msg("recv(ack): server did not map the shared memory");
        goto out;
    }
    rc = 0;
out:
    close(fd);
    return rc;
}

static int wait_credit(struct shm_transport *st)
{
    for (;;) {
        uint32_t tail = atomic_load_explicit(&st->tx->tail, memory_order_acquire);
        if (st->tx_head - tail < st->slots)
            return 0;
        if (wait_change(st, &st->tx->tail, &st->tx->tail_waiter, tail, "send") != 0)
            return -1;
    }
}

static int shm_acquire_send(struct transport *t, void **buf)
{
    struct shm_transport *st = shm_of(t);
    if (st->tx_acquired)
        return err_msg("acquire_send: previous buffer not posted");
    if (st->zero_copy) {
        if (wait_credit(st) != 0)
            return -1;
        *buf = st->tx_slots + (st->tx_head % st->slots) * st->stride;
    } else {
        *buf = st->staging;
    }
    st->tx_acquired = 1;
    return 0;
}

static int shm_post_send(struct transport *t, size_t len)
{
    struct shm_transport *st = shm_of(t);
    if (len > t->session.slot_bytes)
        return err_msg("post_send: %zu bytes exceed the slot", len);
    unsigned slot = st->tx_head % st->slots;
    if (!st->zero_copy) {
        if (wait_credit(st) != 0)
            return -1;
        memcpy(st->tx_slots + slot * st->stride, st->staging, len);
    }
    st->tx->len[slot] = (uint32_t)len;
    st->tx_head++;
    st->tx_acquired = 0;
    publish(&st->tx->head, &st->tx->head_waiter, st->tx_head);
    return 0;
}

static int shm_recv(struct transport *t, void **buf, size_t *len)
{
    struct shm_transport *st = shm_of(t);
    while (atomic_load_explicit(&st->rx->head, memory_order_acquire) == st->rx_taken)
        if (wait_change(st, &st->rx->head, &st->rx->head_waiter, st->rx_taken, "recv") != 0)
            return -1;
    unsigned slot = st->rx_taken % st->slots;
    *buf = st->rx_slots + slot * st->stride;
    *len = st->rx->len[slot];
    st->rx_taken++;
    return 0;
}

static int shm_release_recv(struct transport *t)
{
    struct shm_transport *st = shm_of(t);
    if (st->rx_released == st->rx_taken)
        return err_msg("release_recv: nothing to release");
    st->rx_released++;
    publish(&st->rx->tail, &st->rx->tail_waiter, st->rx_released);
    return 0;
}

static int shm_flush(struct transport *t)
{
    (void)t; /* a published message is already in the peer's memory */
    return 0;
}

static void shm_destroy(struct transport *t)
{
    struct shm_transport *st = shm_of(t);
    if (st->map != NULL)
        munmap(st->map, st->map_bytes);
    if (st->sock_fd >= 0)
        close(st->sock_fd);
    if (st->listen_fd >= 0)
        close(st->listen_fd);
    free(st->staging);
    free(st);
}

static const struct transport_ops shm_ops = {
    .name = "shm",
    .listen = shm_listen,
    .accept = shm_accept,
    .connect = shm_connect,
    .acquire_send = shm_acquire_send,
    .post_send = shm_post_send,
    .recv = shm_recv,
    .release_recv = shm_release_recv,
    .flush = shm_flush,
    .destroy = shm_destroy,
};

int shm_transport_create(struct transport **out, int zero_copy)
{
    struct shm_transport *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return err_call("calloc", errno);
    st->base.ops = &shm_ops;
    st->zero_copy = zero_copy;
    st->listen_fd = st->sock_fd = -1;
    *out = &st->base;
    return TRANSPORT_OK;
}
