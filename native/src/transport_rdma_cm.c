/* RDMA back-end, connection set-up: RDMA-CM address and route resolution, the
 * connect/accept exchange of sessions and buffer keys in the private data, the queue
 * pair and its registered buffers, and the host's RDMA devices. */
#define _GNU_SOURCE
#include "common.h"
#include "transport_rdma.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RESOLVE_TIMEOUT_MS 5000

struct conn_data {
    struct session session;
    uint64_t addr; /* receive buffers of the sender of this private data */
    uint32_t rkey;
    uint32_t reserved;
};
_Static_assert(sizeof(struct conn_data) <= 56, "RDMA_PS_TCP connect private data is 56 bytes");

static int set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return err_call("fcntl(O_NONBLOCK)", errno);
    return 0;
}

/* Waits for the next CM event; anything but `expected` is reported against `call`.
 * timeout_s < 0 waits forever. On success the caller must rdma_ack_cm_event(). */
static int wait_cm_event(struct rdma_transport *rt, enum rdma_cm_event_type expected,
                         const char *call, double timeout_s, struct rdma_cm_event **out)
{
    struct pollfd p = {.fd = rt->cm_channel->fd, .events = POLLIN};
    for (;;) {
        int n = poll(&p, 1, timeout_s < 0 ? -1 : (int)(timeout_s * 1000));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return err_call("poll", errno);
        if (n == 0)
            return err_msg("%s: %s", call, strerror(ETIMEDOUT));
        struct rdma_cm_event *ev;
        if (rdma_get_cm_event(rt->cm_channel, &ev) != 0) {
            if (errno == EAGAIN)
                continue;
            return err_call("rdma_get_cm_event", errno);
        }
        if (ev->event == expected) {
            *out = ev;
            return 0;
        }
        int status = ev->status;
        enum rdma_cm_event_type got = ev->event;
        rdma_ack_cm_event(ev);
        if (got == RDMA_CM_EVENT_REJECTED)
            return err_msg("%s: rejected by the peer (reason %d: no server listening, or "
                           "it refused the session)", call, status);
        if (status < 0)
            return err_msg("%s: %s (%s)", call, strerror(-status), rdma_event_str(got));
        return err_msg("%s: unexpected %s (status %d)", call, rdma_event_str(got), status);
    }
}

static int setup_qp(struct rdma_transport *rt, struct rdma_cm_id *id)
{
    const struct session *s = &rt->base.session;
    rt->slots = s->slots;
    rt->stride = ((size_t)s->slot_bytes + 4095) & ~(size_t)4095;
    rt->sq_depth = 2 * rt->slots + 4;
    rt->credits = rt->slots;

    rt->pd = ibv_alloc_pd(id->verbs);
    if (rt->pd == NULL)
        return err_call("ibv_alloc_pd", errno);
    rt->comp_channel = ibv_create_comp_channel(id->verbs);
    if (rt->comp_channel == NULL)
        return err_call("ibv_create_comp_channel", errno);
    if (set_nonblocking(rt->comp_channel->fd) != 0)
        return -1;
    rt->cq = ibv_create_cq(id->verbs, (int)(2 * rt->sq_depth), NULL, rt->comp_channel, 0);
    if (rt->cq == NULL)
        return err_call("ibv_create_cq", errno);
    struct ibv_qp_init_attr attr = {
        .send_cq = rt->cq,
        .recv_cq = rt->cq,
        .cap = {.max_send_wr = rt->sq_depth, .max_recv_wr = rt->sq_depth,
                .max_send_sge = 1, .max_recv_sge = 1},
        .qp_type = IBV_QPT_RC,
        .sq_sig_all = 1,
    };
    if (rdma_create_qp(id, rt->pd, &attr) != 0)
        return err_call("rdma_create_qp", errno);
    rt->qp_created = 1;

    size_t bytes = rt->stride * rt->slots;
    rt->send_mem = alloc_aligned(bytes);
    rt->recv_mem = alloc_aligned(bytes);
    if (rt->send_mem == NULL || rt->recv_mem == NULL)
        return -1;
    rt->send_mr = ibv_reg_mr(rt->pd, rt->send_mem, bytes, IBV_ACCESS_LOCAL_WRITE);
    if (rt->send_mr == NULL)
        return err_call("ibv_reg_mr(send)", errno);
    rt->recv_mr =
        ibv_reg_mr(rt->pd, rt->recv_mem, bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (rt->recv_mr == NULL)
        return err_call("ibv_reg_mr(recv)", errno);
    /* Writes with immediate need a posted receive but no receive buffer. */
    for (unsigned i = 0; i < rt->sq_depth; i++) {
        struct ibv_recv_wr wr = {.wr_id = WR_RECV}, *bad;
        int rc = ibv_post_recv(id->qp, &wr, &bad);
        if (rc != 0)
            return err_call("ibv_post_recv", rc);
    }
    return 0;
}

static void fill_conn_data(struct rdma_transport *rt, struct conn_data *cd)
{
    memset(cd, 0, sizeof(*cd));
    cd->session = rt->base.session;
    cd->addr = (uint64_t)(uintptr_t)rt->recv_mem;
    cd->rkey = rt->recv_mr->rkey;
}

static int open_cm(struct rdma_transport *rt, struct rdma_cm_id **id)
{
    rt->cm_channel = rdma_create_event_channel();
    if (rt->cm_channel == NULL)
        return err_call("rdma_create_event_channel", errno);
    if (set_nonblocking(rt->cm_channel->fd) != 0)
        return -1;
    if (rdma_create_id(rt->cm_channel, id, rt, RDMA_PS_TCP) != 0)
        return err_call("rdma_create_id", errno);
    return 0;
}

int rdma_transport_listen(struct transport *t, const char *addr, char *bound, size_t bound_len)
{
    struct rdma_transport *rt = rdma_of(t);
    struct addrinfo *res = NULL;
    int rc = -1;
    if (resolve_address(addr, 1, &res) != 0)
        return -1;
    if (open_cm(rt, &rt->listen_id) != 0)
        goto out;
    if (rdma_bind_addr(rt->listen_id, res->ai_addr) != 0) {
        err_call("rdma_bind_addr", errno);
        goto out;
    }
    if (rdma_listen(rt->listen_id, 1) != 0) {
        err_call("rdma_listen", errno);
        goto out;
    }
    char host[128];
    struct sockaddr *sa = rdma_get_local_addr(rt->listen_id);
    const void *ip = sa->sa_family == AF_INET6
                         ? (const void *)&((struct sockaddr_in6 *)sa)->sin6_addr
                         : (const void *)&((struct sockaddr_in *)sa)->sin_addr;
    inet_ntop(sa->sa_family, ip, host, sizeof(host));
    snprintf(bound, bound_len, sa->sa_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host,
             ntohs(rdma_get_src_port(rt->listen_id)));
    rc = 0;
out:
    freeaddrinfo(res);
    return rc;
}

int rdma_transport_accept(struct transport *t)
{
    struct rdma_transport *rt = rdma_of(t);
    struct rdma_cm_event *ev;
    if (wait_cm_event(rt, RDMA_CM_EVENT_CONNECT_REQUEST, "rdma_listen", -1, &ev) != 0)
        return -1;
    rt->id = ev->id;
    struct conn_data cd = {0};
    if (ev->param.conn.private_data != NULL && ev->param.conn.private_data_len >= sizeof(cd))
        memcpy(&cd, ev->param.conn.private_data, sizeof(cd));
    rdma_ack_cm_event(ev);
    const struct session *s = &cd.session;
    if (s->magic != SESSION_MAGIC || s->version != SESSION_VERSION || s->slots < 1 ||
        s->slots > MAX_SLOTS || s->slot_bytes == 0 || s->slot_bytes > (1u << 30)) {
        rdma_reject(rt->id, NULL, 0);
        return err_msg("rdma_accept: client sent an invalid session; rejected");
    }
    t->session = cd.session;
    rt->peer_addr = cd.addr;
    rt->peer_rkey = cd.rkey;
    if (setup_qp(rt, rt->id) != 0)
        return -1;
    fill_conn_data(rt, &cd);
    struct rdma_conn_param param = {.private_data = &cd, .private_data_len = sizeof(cd),
                                    .rnr_retry_count = 7, .retry_count = 7};
    if (rdma_accept(rt->id, &param) != 0)
        return err_call("rdma_accept", errno);
    if (wait_cm_event(rt, RDMA_CM_EVENT_ESTABLISHED, "rdma_accept", t->idle_timeout_s, &ev) != 0)
        return -1;
    rdma_ack_cm_event(ev);
    rt->connected = 1;
    rdma_destroy_id(rt->listen_id);
    rt->listen_id = NULL;
    return 0;
}

int rdma_transport_connect(struct transport *t, const char *addr)
{
    struct rdma_transport *rt = rdma_of(t);
    struct addrinfo *res = NULL;
    struct rdma_cm_event *ev;
    int rc = -1;
    if (resolve_address(addr, 0, &res) != 0)
        return -1;
    if (open_cm(rt, &rt->id) != 0)
        goto out;
    if (rdma_resolve_addr(rt->id, NULL, res->ai_addr, RESOLVE_TIMEOUT_MS) != 0) {
        err_call("rdma_resolve_addr", errno);
        goto out;
    }
    if (wait_cm_event(rt, RDMA_CM_EVENT_ADDR_RESOLVED, "rdma_resolve_addr",
                      RESOLVE_TIMEOUT_MS / 1000.0 + 1, &ev) != 0)
        goto out;
    rdma_ack_cm_event(ev);
    /* The ToS must be set before the route is resolved: the route carries it. */
    if (t->tos >= 0) {
        uint8_t tos = (uint8_t)t->tos;
        if (rdma_set_option(rt->id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos)) != 0) {
            err_call("rdma_set_option(RDMA_OPTION_ID_TOS)", errno);
            goto out;
        }
    }
    if (rdma_resolve_route(rt->id, RESOLVE_TIMEOUT_MS) != 0) {
        err_call("rdma_resolve_route", errno);
        goto out;
    }
    if (wait_cm_event(rt, RDMA_CM_EVENT_ROUTE_RESOLVED, "rdma_resolve_route",
                      RESOLVE_TIMEOUT_MS / 1000.0 + 1, &ev) != 0)
        goto out;
    rdma_ack_cm_event(ev);
    if (setup_qp(rt, rt->id) != 0)
        goto out;
    struct conn_data cd;
    fill_conn_data(rt, &cd);
    struct rdma_conn_param param = {.private_data = &cd, .private_data_len = sizeof(cd),
                                    .rnr_retry_count = 7, .retry_count = 7};
    if (rdma_connect(rt->id, &param) != 0) {
        err_call("rdma_connect", errno);
        goto out;
    }
    if (wait_cm_event(rt, RDMA_CM_EVENT_ESTABLISHED, "rdma_connect", t->idle_timeout_s, &ev))
        goto out;
    struct conn_data reply = {0};
    if (ev->param.conn.private_data != NULL && ev->param.conn.private_data_len >= sizeof(reply))
        memcpy(&reply, ev->param.conn.private_data, sizeof(reply));
    rdma_ack_cm_event(ev);
    if (reply.session.magic != SESSION_MAGIC || reply.rkey == 0) {
        err_msg("rdma_connect: server sent no buffer address");
        goto out;
    }
    rt->peer_addr = reply.addr;
    rt->peer_rkey = reply.rkey;
    rt->connected = 1;
    rc = 0;
out:
    freeaddrinfo(res);
    return rc;
}

int rdma_device_present(void)
{
    int count = 0;
    struct ibv_device **list = ibv_get_device_list(&count);
    if (list == NULL) {
        err_msg("no RDMA device on this host (ibv_get_device_list: %s)", strerror(errno));
        return 0;
    }
    ibv_free_device_list(list);
    if (count == 0)
        err_msg("no RDMA device on this host (ibv_get_device_list found none; load a driver, "
                "e.g. `rdma link add rxe0 type rxe netdev eth0`)");
    return count > 0;
}

int rdma_find_local_ipv4(char *buf, size_t len)
{
    int count = 0, found = -1;
    struct ibv_device **list = ibv_get_device_list(&count);
    if (list == NULL)
        return err_call("ibv_get_device_list", errno);
    for (int d = 0; d < count && found != 0; d++) {
        struct ibv_context *ctx = ibv_open_device(list[d]);
        struct ibv_port_attr port;
        if (ctx == NULL)
            continue;
        if (ibv_query_port(ctx, 1, &port) == 0) {
            for (int i = 0; i < port.gid_tbl_len && found != 0; i++) {
                union ibv_gid gid;
                static const unsigned char v4_prefix[12] = {0, 0, 0, 0, 0, 0,
                                                            0, 0, 0, 0, 0xff, 0xff};
                if (ibv_query_gid(ctx, 1, i, &gid) == 0 &&
                    memcmp(gid.raw, v4_prefix, sizeof(v4_prefix)) == 0) {
                    inet_ntop(AF_INET, gid.raw + 12, buf, (socklen_t)len);
                    found = 0;
                }
            }
        }
        ibv_close_device(ctx);
    }
    ibv_free_device_list(list);
    if (found != 0)
        err_msg("no RDMA device has an IPv4 address (give --server ADDR:PORT)");
    return found;
}
