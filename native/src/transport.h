/* One interface for every way the grid travels: TCP, shared memory and RDMA.
 *
 * Message model (the same on every back-end, as a NIC's queue pairs):
 *   - the session fixes `slots` in-flight messages per direction of at most
 *     `slot_bytes` each; the client sends it when connecting;
 *   - acquire_send() hands out the buffer of the next send slot (it may wait
 *     for the slot's previous send to complete or for a credit); the caller
 *     fills it and post_send() starts the transfer without waiting for it;
 *   - recv() returns the next message in order, in place, until
 *     release_recv() gives the oldest slot back (that is the credit the peer
 *     waits for before it may reuse the slot).
 * Every call returns 0 or -1 after printing "call: cause". */
#ifndef CXFAB_TRANSPORT_H
#define CXFAB_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#define SESSION_MAGIC 0x43584642u /* "CXFB" */
#define SESSION_VERSION 2 /* 2: --stream opens with an acknowledged warm-up lap */
#define MAX_SLOTS 64

/* Sent by the client at connection time (TCP/shm: first bytes; RDMA: CM private
 * data, which is why it stays small). Both ends are little-endian x86-64. */
struct session {
    uint32_t magic;
    uint8_t version;
    uint8_t app;   /* which program: pingpong or rcat */
    uint8_t isa;   /* pingpong: requested stencil ISA */
    uint8_t flags; /* pingpong: SESSION_COMPUTE */
    uint32_t slot_bytes;
    uint16_t slots;
    uint16_t reserved;
    uint32_t grid_n;
    uint32_t iterations;
};
_Static_assert(sizeof(struct session) == 24, "session must stay 24 bytes on the wire");

struct transport;

struct transport_ops {
    const char *name;
    /* Server: bind and listen on addr; writes the address actually bound (port 0 resolved). */
    int (*listen)(struct transport *t, const char *addr, char *bound, size_t bound_len);
    /* Server: wait for one client, receive its session into t->session, set up buffers. */
    int (*accept)(struct transport *t);
    /* Client: connect to addr and send t->session; set up buffers. */
    int (*connect)(struct transport *t, const char *addr);
    int (*acquire_send)(struct transport *t, void **buf);
    int (*post_send)(struct transport *t, size_t len);
    int (*recv)(struct transport *t, void **buf, size_t *len);
    int (*release_recv)(struct transport *t);
    /* Wait until every posted send has left this process's buffers. */
    int (*flush)(struct transport *t);
    /* Optional (NULL): a JSON object saying how the connection really runs
     * (smc: SMC-R, SMC-D or TCP fallback and why); "" when there is nothing to say. */
    int (*describe)(struct transport *t, char *buf, size_t len);
    void (*destroy)(struct transport *t);
};

struct transport {
    const struct transport_ops *ops;
    struct session session;
    double idle_timeout_s; /* a peer silent for this long is reported as gone */
    /* rdma client: IP ToS byte (DSCP << 2) asked of RDMA-CM, so a lossless fabric
     * classifies the RoCE packets into its PFC priority; -1 = the kernel default. */
    int tos;
};

enum { TRANSPORT_OK = 0, TRANSPORT_ERROR = -1, TRANSPORT_UNAVAILABLE = 1 };

/* --tos not given (the option's range is 0..255). */
#define TOS_UNSET UINT64_MAX

/* Names accepted by --transport, NULL-terminated. */
extern const char *const transport_names[];

/* The option rows of a program that connects a server and a client (its struct
 * config has transport, server_addr, server and client_addr; OFF() is its offsetof),
 * each with the program's own help text. */
#define OPT_ROWS_CONNECT(transport_help, server_help, client_help)                          \
    {"transport", "NAME", OPT_CHOICE, OFF(transport), 0, 0, 0, transport_names,            \
     transport_help},                                                                      \
        {"server", "ADDR:PORT", OPT_OPTSTRING, OFF(server_addr), OFF(server), 0, 0, NULL,  \
         server_help},                                                                     \
        {"client", "ADDR:PORT", OPT_STRING, OFF(client_addr), 0, 0, 0, NULL, client_help}

/* Creates the named back-end. Returns TRANSPORT_UNAVAILABLE (message printed)
 * when it cannot exist on this machine (no RDMA device). */
int transport_create(const char *name, double idle_timeout_s, struct transport **out);

/* 0 when --tos fits the role and transport (an rdma client), else -1 after saying why. */
int transport_check_tos(const char *name, uint64_t tos, int client);

int tcp_transport_create(struct transport **out);
int shm_transport_create(struct transport **out, int zero_copy);
int rdma_transport_create(struct transport **out);
int smc_transport_create(struct transport **out);
int rsocket_transport_create(struct transport **out);
/* 1 when an RDMA device exists, else 0 after printing why (rsocket needs one too). */
int rdma_device_present(void);
/* First IPv4 address of an RDMA device (for --loopback); 0 or -1. */
int rdma_find_local_ipv4(char *buf, size_t len);

#endif
