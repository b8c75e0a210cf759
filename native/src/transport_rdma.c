/* RDMA back-end (RDMA-CM + verbs, RC queue pair).
 *
 * Set up once: each side registers `slots` send and `slots` receive buffers;
 * the client's connect private data carries its session and the address/rkey
 * of its receive buffers, the server's accept private data carries its own.
 * Data: RDMA WRITE WITH IMMEDIATE from the local send slot into the peer's
 * receive slot (message m goes to slot m % slots); the immediate carries the
 * length. Flow control is rsocket's (seed 004): a sender holds one credit per
 * free peer slot and spends one per message; releasing a slot sends a
 * zero-length write whose immediate has the CREDIT bit set. Both kinds consume
 * a posted receive, so 2*slots receives stay posted. Waiting polls the CQ,
 * then sleeps on the completion channel together with the CM channel, so a
 * disconnect or a silent peer ends the wait. */
#define _GNU_SOURCE
#include "common.h"
#include "transport_rdma.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <time.h>

#define SPIN_SECONDS 50e-6
#define LINGER_SECONDS 2.0

static const char *wr_kind(uint64_t wr_id)
{
    return wr_id == WR_DATA ? "data write" : wr_id == WR_CREDIT ? "credit write" : "receive";
}

static int handle_completion(struct rdma_transport *rt, const struct ibv_wc *wc)
{
    if (wc->status != IBV_WC_SUCCESS) {
        /* A flushed credit or receive only means the connection is going away; whoever
         * still waits for something will find `disconnected` and report it. */
        if (wc->status == IBV_WC_WR_FLUSH_ERR && wc->wr_id != WR_DATA) {
            rt->disconnected = 1;
            if (wc->wr_id == WR_CREDIT)
                rt->sq_outstanding--;
            return 0;
        }
        return err_msg("ibv_poll_cq: %s (%s)", ibv_wc_status_str(wc->status), wr_kind(wc->wr_id));
    }
    if (wc->wr_id == WR_RECV) {
        uint32_t imm = ntohl(wc->imm_data);
        if (imm & CREDIT_BIT) {
            rt->credits += imm & ~CREDIT_BIT;
        } else {
            rt->recv_len[rt->recv_arrived % rt->slots] = imm;
            rt->recv_arrived++;
        }
        struct ibv_recv_wr wr = {.wr_id = WR_RECV}, *bad;
        int rc = ibv_post_recv(rt->id->qp, &wr, &bad);
        if (rc != 0)
            return err_call("ibv_post_recv", rc);
        return 0;
    }
    rt->sq_outstanding--;
    if (wc->wr_id == WR_DATA)
        rt->send_done++;
    return 0;
}

static int poll_cq(struct rdma_transport *rt, int *got)
{
    struct ibv_wc wcs[16];
    int n = ibv_poll_cq(rt->cq, 16, wcs);
    if (n < 0)
        return err_msg("ibv_poll_cq: failed (%d)", n);
    for (int i = 0; i < n; i++)
        if (handle_completion(rt, &wcs[i]) != 0)
            return -1;
    *got = n;
    return 0;
}

/* Makes one step of progress: at least one completion, or an error. */
static int progress(struct rdma_transport *rt, const char *what)
{
    int got = 0;
    double start = now_seconds();
    do {
        if (poll_cq(rt, &got) != 0)
            return -1;
        if (got)
            return 0;
    } while (now_seconds() - start < SPIN_SECONDS);
    if (rt->disconnected)
        return err_msg("%s: peer disconnected", what);
    for (;;) {
        if (ibv_req_notify_cq(rt->cq, 0) != 0)
            return err_call("ibv_req_notify_cq", errno);
        if (poll_cq(rt, &got) != 0)
            return -1;
        if (got)
            return 0;
        struct pollfd fds[2] = {{.fd = rt->comp_channel->fd, .events = POLLIN},
                                {.fd = rt->cm_channel->fd, .events = POLLIN}};
        int n = poll(fds, 2, (int)(rt->base.idle_timeout_s * 1000));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return err_call("poll", errno);
        if (n == 0)
            return err_msg("%s: peer silent for %.0f s (timed out)", what,
                           rt->base.idle_timeout_s);
        if (fds[0].revents) {
            struct ibv_cq *cq;
            void *ctx;
            if (ibv_get_cq_event(rt->comp_channel, &cq, &ctx) == 0)
                rt->cq_events_unacked++;
            if (rt->cq_events_unacked >= 64) {
                ibv_ack_cq_events(rt->cq, rt->cq_events_unacked);
                rt->cq_events_unacked = 0;
            }
        }
        if (fds[1].revents) {
            struct rdma_cm_event *ev;
            if (rdma_get_cm_event(rt->cm_channel, &ev) == 0) {
                enum rdma_cm_event_type type = ev->event;
                rdma_ack_cm_event(ev);
                if (type == RDMA_CM_EVENT_DISCONNECTED ||
                    type == RDMA_CM_EVENT_DEVICE_REMOVAL) {
                    rt->disconnected = 1;
                    /* Completions that arrived before the disconnect still count. */
                    if (poll_cq(rt, &got) != 0)
                        return -1;
                    if (got)
                        return 0;
                    return err_msg("%s: peer disconnected (%s)", what, rdma_event_str(type));
                }
            }
        }
    }
}

static int post_write(struct rdma_transport *rt, uint64_t kind, void *local, uint32_t len,
                      uint64_t remote, uint32_t imm)
{
    struct ibv_sge sge = {.addr = (uintptr_t)local, .length = len, .lkey = rt->send_mr->lkey};
    struct ibv_send_wr wr = {
        .wr_id = kind,
        .sg_list = len ? &sge : NULL,
        .num_sge = len ? 1 : 0,
        .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
        .imm_data = htonl(imm),
        .wr = {.rdma = {.remote_addr = remote, .rkey = rt->peer_rkey}},
    }, *bad;
    while (rt->sq_outstanding >= rt->sq_depth)
        if (progress(rt, "ibv_post_send") != 0)
            return -1;
    int rc = ibv_post_send(rt->id->qp, &wr, &bad);
    if (rc != 0)
        return err_call("ibv_post_send", rc);
    rt->sq_outstanding++;
    return 0;
}

static int rdma_acquire_send(struct transport *t, void **buf)
{
    struct rdma_transport *rt = rdma_of(t);
    while (rt->send_acquired - rt->send_done >= rt->slots)
        if (progress(rt, "send") != 0)
            return -1;
    *buf = rt->send_mem + (rt->send_acquired % rt->slots) * rt->stride;
    rt->send_acquired++;
    return 0;
}

static int rdma_post_send(struct transport *t, size_t len)
{
    struct rdma_transport *rt = rdma_of(t);
    if (len > t->session.slot_bytes)
        return err_msg("post_send: %zu bytes exceed the slot", len);
    while (rt->credits == 0)
        if (progress(rt, "send (waiting for a credit)") != 0)
            return -1;
    unsigned slot = rt->send_posted % rt->slots;
    if (post_write(rt, WR_DATA, rt->send_mem + slot * rt->stride, (uint32_t)len,
                   rt->peer_addr + slot * rt->stride, (uint32_t)len) != 0)
        return -1;
    rt->credits--;
    rt->send_posted++;
    return 0;
}

static int rdma_recv(struct transport *t, void **buf, size_t *len)
{
    struct rdma_transport *rt = rdma_of(t);
    while (rt->recv_arrived == rt->recv_taken)
        if (progress(rt, "recv") != 0)
            return -1;
    unsigned slot = rt->recv_taken % rt->slots;
    *buf = rt->recv_mem + slot * rt->stride;
    *len = rt->recv_len[slot];
    rt->recv_taken++;
    return 0;
}

static int rdma_release_recv(struct transport *t)
{
    struct rdma_transport *rt = rdma_of(t);
    if (rt->recv_released == rt->recv_taken)
        return err_msg("release_recv: nothing to release");
    rt->recv_released++;
    return post_write(rt, WR_CREDIT, NULL, 0, rt->peer_addr, CREDIT_BIT | 1u);
}

/* Every message this side posted has been consumed: the receiver handed back a
 * credit for each. Its data writes can then only be waiting for their completions. */
static int all_consumed(const struct rdma_transport *rt)
{
    return rt->send_posted > 0 && rt->credits == rt->slots;
}

static int rdma_flush(struct transport *t)
{
    struct rdma_transport *rt = rdma_of(t);
    /* A receiver that consumed everything may disconnect before the completion of
     * the last write reaches us (seen under TCG): that loses nothing, so it is no
     * error; anything else still outstanding must complete. */
    while (rt->sq_outstanding > 0 && !all_consumed(rt))
        if (progress(rt, "flush") != 0)
            return -1;
    return 0;
}

/* Lets the writes already posted (e.g. the last credit, which tells the sender its
 * data was consumed) leave before the disconnect flushes them; bounded, silent. */
static void linger(struct rdma_transport *rt)
{
    double deadline = now_seconds() + LINGER_SECONDS;
    while (rt->sq_outstanding > 0 && !rt->disconnected && now_seconds() < deadline) {
        int got = 0;
        if (poll_cq(rt, &got) != 0)
            return;
        if (!got) {
            struct timespec pause = {.tv_sec = 0, .tv_nsec = 1000000};
            nanosleep(&pause, NULL);
        }
    }
}

static void rdma_destroy(struct transport *t)
{
    struct rdma_transport *rt = rdma_of(t);
    if (rt->connected && !rt->disconnected) {
        linger(rt);
        rdma_disconnect(rt->id);
    }
    if (rt->qp_created)
        rdma_destroy_qp(rt->id);
    if (rt->send_mr)
        ibv_dereg_mr(rt->send_mr);
    if (rt->recv_mr)
        ibv_dereg_mr(rt->recv_mr);
    if (rt->cq) {
        if (rt->cq_events_unacked)
            ibv_ack_cq_events(rt->cq, rt->cq_events_unacked);
        ibv_destroy_cq(rt->cq);
    }
    if (rt->comp_channel)
        ibv_destroy_comp_channel(rt->comp_channel);
    if (rt->pd)
        ibv_dealloc_pd(rt->pd);
    if (rt->id)
        rdma_destroy_id(rt->id);
    if (rt->listen_id)
        rdma_destroy_id(rt->listen_id);
    if (rt->cm_channel)
        rdma_destroy_event_channel(rt->cm_channel);
    free(rt->send_mem);
    free(rt->recv_mem);
    free(rt);
}

static const struct transport_ops rdma_ops = {
    .name = "rdma",
    .listen = rdma_transport_listen,
    .accept = rdma_transport_accept,
    .connect = rdma_transport_connect,
    .acquire_send = rdma_acquire_send,
    .post_send = rdma_post_send,
    .recv = rdma_recv,
    .release_recv = rdma_release_recv,
    .flush = rdma_flush,
    .destroy = rdma_destroy,
};

int rdma_transport_create(struct transport **out)
{
    if (!rdma_device_present())
        return TRANSPORT_UNAVAILABLE;
    struct rdma_transport *rt = calloc(1, sizeof(*rt));
    if (rt == NULL)
        return err_call("calloc", errno);
    rt->base.ops = &rdma_ops;
    *out = &rt->base;
    return TRANSPORT_OK;
}
