/* The RDMA back-end's state, shared by its two halves: transport_rdma_cm.c sets up
 * the connection (RDMA-CM, the queue pair, the registered buffers) and
 * transport_rdma.c moves the data (writes with immediate, credits, completions).
 * The design is described at the top of transport_rdma.c. */
#ifndef CXFAB_TRANSPORT_RDMA_H
#define CXFAB_TRANSPORT_RDMA_H

#include "transport.h"

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <stddef.h>
#include <stdint.h>

#define CREDIT_BIT 0x80000000u
#define WR_DATA 1
#define WR_CREDIT 2
#define WR_RECV 3

struct rdma_transport {
    struct transport base;
    struct rdma_event_channel *cm_channel;
    struct rdma_cm_id *listen_id, *id;
    struct ibv_pd *pd;
    struct ibv_comp_channel *comp_channel;
    struct ibv_cq *cq;
    struct ibv_mr *send_mr, *recv_mr;
    unsigned char *send_mem, *recv_mem;
    size_t stride;
    unsigned slots, sq_depth, sq_outstanding, cq_events_unacked;
    int qp_created, connected, disconnected;
    uint64_t peer_addr;
    uint32_t peer_rkey, credits;
    uint64_t send_acquired, send_posted, send_done;
    uint64_t recv_arrived, recv_taken, recv_released;
    uint32_t recv_len[MAX_SLOTS];
};

static inline struct rdma_transport *rdma_of(struct transport *t)
{
    return (struct rdma_transport *)t;
}

/* The transport_ops entries of the connection set-up (transport_rdma_cm.c). */
int rdma_transport_listen(struct transport *t, const char *addr, char *bound, size_t bound_len);
int rdma_transport_accept(struct transport *t);
int rdma_transport_connect(struct transport *t, const char *addr);

#endif
