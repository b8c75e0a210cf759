/* Socket-ops tables: the kernel's socket calls and librdmacm's rsocket API. */
#define _GNU_SOURCE
#include "transport_sockops.h"

#include "common.h"
#include "transport.h"

#include <fcntl.h>
#include <rdma/rsocket.h>
#include <unistd.h>

static int kernel_socket(int addr_family, int type)
{
    return socket(addr_family, type | SOCK_CLOEXEC, 0);
}

int kernel_accept(int fd)
{
    return accept4(fd, NULL, NULL, SOCK_CLOEXEC);
}

const struct sock_ops sock_ops_kernel = {
    .socket = kernel_socket,
    .socket_call = "socket",
    KERNEL_SOCKET_CALLS,
};

/* rsockets have no SOCK_CLOEXEC (they are not kernel descriptors until fork
 * support maps them) and accept no flags on rsocket(). */
static int rsocket_open(int addr_family, int type)
{
    return rsocket(addr_family, type, 0);
}

static int rsocket_accept(int fd)
{
    return raccept(fd, NULL, NULL);
}

/* rsockets run over RDMA-CM: without an RDMA device rsocket() fails later
 * with a less telling errno, so say it up front (exit 77 in the programs). */
static int rsocket_available(void)
{
    return rdma_device_present();
}

const struct sock_ops sock_ops_rsocket = {
    .socket = rsocket_open,
    .bind = rbind,
    .listen = rlisten,
    .accept = rsocket_accept,
    .connect = rconnect,
    .send = rsend,
    .recv = rrecv,
    .poll = rpoll,
    .close = rclose,
    .setsockopt = rsetsockopt,
    .getsockname = rgetsockname,
    .fcntl = rfcntl,
    .available = rsocket_available,
    .socket_call = "rsocket",
    .bind_call = "rbind",
    .listen_call = "rlisten",
    .accept_call = "raccept",
    .connect_call = "rconnect",
    .send_call = "rsend",
    .recv_call = "rrecv",
};
