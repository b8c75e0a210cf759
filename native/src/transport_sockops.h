/* The socket calls the stream back-end (transport_tcp.c) makes, as a table, so
 * that one framing and progress engine runs over kernel TCP, AF_SMC and
 * librdmacm's rsockets. Each *_call string names the call in error messages
 * ("pingpong: rconnect: Connection refused"). */
#ifndef CXFAB_TRANSPORT_SOCKOPS_H
#define CXFAB_TRANSPORT_SOCKOPS_H

#include <poll.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

struct sock_ops {
    /* Opens a stream socket for an address of family addr_family (AF_INET/AF_INET6). */
    int (*socket)(int addr_family, int type);
    int (*bind)(int fd, const struct sockaddr *addr, socklen_t len);
    int (*listen)(int fd, int backlog);
    int (*accept)(int fd); /* the connected socket (close-on-exec where the API has it) */
    int (*connect)(int fd, const struct sockaddr *addr, socklen_t len);
    ssize_t (*send)(int fd, const void *buf, size_t len, int flags);
    ssize_t (*recv)(int fd, void *buf, size_t len, int flags);
    int (*poll)(struct pollfd *fds, nfds_t n, int timeout_ms);
    int (*close)(int fd);
    int (*setsockopt)(int fd, int level, int name, const void *value, socklen_t len);
    int (*getsockname)(int fd, struct sockaddr *addr, socklen_t *len);
    int (*fcntl)(int fd, int cmd, ...);
    /* NULL or: 1 when the API can work on this host, else 0 after saying why. */
    int (*available)(void);
    /* NULL or: a JSON object describing the connected socket, "" if nothing to say. */
    int (*describe)(int fd, char *buf, size_t len);
    const char *socket_call, *bind_call, *listen_call, *accept_call, *connect_call, *send_call,
        *recv_call;
};

extern const struct sock_ops sock_ops_kernel;  /* TCP through the kernel's socket calls */
extern const struct sock_ops sock_ops_smc;     /* AF_SMC (transport_smc.c) */
extern const struct sock_ops sock_ops_rsocket; /* librdmacm rsockets */

/* Kernel socket calls shared by sock_ops_kernel and sock_ops_smc. */
int kernel_accept(int fd);

/* The initialisers of every call after socket(): an AF_SMC socket takes the kernel's
 * calls exactly as a TCP one does, so both tables name them once, here. */
#define KERNEL_SOCKET_CALLS                                                                        \
    .bind = bind, .listen = listen, .accept = kernel_accept, .connect = connect, .send = send,     \
    .recv = recv, .poll = poll, .close = close, .setsockopt = setsockopt,                          \
    .getsockname = getsockname, .fcntl = fcntl, .bind_call = "bind", .listen_call = "listen",     \
    .accept_call = "accept", .connect_call = "connect", .send_call = "send", .recv_call = "recv"

#endif
