/* AF_SMC sockets (SMC-R over RoCE, SMC-D over ISM or the loopback device).
 *
 * An SMC socket is used with TCP's calls, so it shares the stream back-end;
 * only socket() differs. Whether a connection really runs SMC is decided in
 * the CLC handshake and may silently fall back to TCP: describe() reads the
 * kernel's answer from the SMC sock_diag interface (NETLINK_SOCK_DIAG,
 * family AF_SMC), matching our socket by inode, and reports the mode and the
 * fallback reason (the CLC decline code) instead of guessing. */
#define _GNU_SOURCE
#include "common.h"
#include "transport_sockops.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/smc.h>
#include <linux/smc_diag.h>
#include <linux/sock_diag.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The protocol numbers of socket(AF_SMC, ...): the kernel's af_smc.c defines
 * them; not every uapi header release exports them. */
#ifndef SMCPROTO_SMC
#define SMCPROTO_SMC 0  /* SMC over IPv4 */
#define SMCPROTO_SMC6 1 /* SMC over IPv6 */
#endif

static int smc_socket(int addr_family, int type)
{
    int protocol = addr_family == AF_INET6 ? SMCPROTO_SMC6 : SMCPROTO_SMC;
    return socket(AF_SMC, type | SOCK_CLOEXEC, protocol);
}

static int smc_available(void)
{
    int fd = socket(AF_SMC, SOCK_STREAM | SOCK_CLOEXEC, SMCPROTO_SMC);
    if (fd >= 0) {
        close(fd);
        return 1;
    }
    if (errno == EAFNOSUPPORT)
        err_msg("AF_SMC sockets are not available in this kernel (socket(AF_SMC): %s): "
                "it needs CONFIG_SMC, module smc",
                strerror(errno));
    else
        err_call("socket(AF_SMC)", errno);
    return 0;
}

/* CLC decline codes (the kernel's net/smc/smc_clc.h), worded for a report. */
static const struct {
    unsigned code;
    const char *text;
} decline_codes[] = {
    {0x01010000, "insufficient memory"},
    {0x02010000, "timeout waiting for the SMC-R confirm-link"},
    {0x02020000, "timeout waiting for the SMC-R add-link"},
    {0x03000000, "configuration error"},
    {0x03010000, "the peer did not offer SMC (plain TCP peer, or SMC disabled there)"},
    {0x03020000, "IPsec in use"},
    {0x03030000, "no SMC device found (neither SMC-R nor SMC-D)"},
    {0x03030001, "no SMC-D device found"},
    {0x03030002, "no SMC-R device found (no RoCE device with a matching pnet ID / subnet)"},
    {0x03030003, "hardware has no ISMv2 support"},
    {0x03030004, "the peer sent no CLC v2 extension"},
    {0x03030005, "the peer sent no SMC-Dv2 extension"},
    {0x03030006, "the peer sent no system EID"},
    {0x03030007, "no SMC-Dv2 device found"},
    {0x03030008, "the peer sent no user EID"},
    {0x03040000, "SMC modes do not match (R or D)"},
    {0x03050000, "the peer's RMBE has an eye catcher"},
    {0x03060000, "a socket option SMC does not support (e.g. TCP fast open)"},
    {0x03070000, "IP prefix / subnet mismatch between the peers"},
    {0x03080000, "cannot get the VLAN of the IP device"},
    {0x03090000, "cannot register the VLAN on the ISM device"},
    {0x030a0000, "no active SMC-R link in the link group"},
    {0x030b0000, "SMC-R link from the server not found"},
    {0x030c0000, "SMC version mismatch"},
    {0x030d0000, "SMC-D DMB limit exceeded"},
    {0x030e0000, "SMC-Rv2: no route to the peer"},
    {0x030f0000, "SMC-Rv2: indirect route mismatch"},
    {0x04000000, "synchronization error"},
    {0x05000000, "the peer declined during the handshake"},
    {0x09990000, "internal error"},
    {0x09990001, "internal error: rtoken handling failed"},
    {0x09990002, "internal error: RDMA ready-link failed"},
    {0x09990003, "internal error: registering RDMA buffers failed"},
};

static const char *decline_text(unsigned code)
{
    for (size_t i = 0; i < sizeof(decline_codes) / sizeof(decline_codes[0]); i++)
        if (decline_codes[i].code == code)
            return decline_codes[i].text;
    return code == 0 ? "none" : "unknown code";
}

static int describe_error(char *buf, size_t len, const char *what, int errnum)
{
    snprintf(buf, len, "{\"mode\": \"unknown\", \"diag_error\": \"%s: %s\"}", what,
             strerror(errnum));
    return 0;
}

/* Walks one netlink reply; returns 1 once our socket's record was formatted. */
static int find_record(const char *data, size_t got, unsigned long inode, char *buf, size_t len,
                       int *done, int *error)
{
    for (const struct nlmsghdr *h = (const struct nlmsghdr *)data; NLMSG_OK(h, got);
         h = NLMSG_NEXT(h, got)) {
        if (h->nlmsg_type == NLMSG_DONE) {
            *done = 1;
            return 0;
        }
        if (h->nlmsg_type == NLMSG_ERROR) {
            const struct nlmsgerr *e = NLMSG_DATA(h);
            *error = -e->error;
            return 0;
        }
        const struct smc_diag_msg *m = NLMSG_DATA(h);
        if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)) || m->diag_inode != inode)
            continue;
        struct smc_diag_fallback fb = {0};
        int have_fb = 0;
        int attr_len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*m));
        for (const struct rtattr *a =
                 (const struct rtattr *)((const char *)m + NLMSG_ALIGN(sizeof(*m)));
             RTA_OK(a, attr_len); a = RTA_NEXT(a, attr_len)) {
            if (a->rta_type == SMC_DIAG_FALLBACK && RTA_PAYLOAD(a) >= sizeof(fb)) {
                memcpy(&fb, RTA_DATA(a), sizeof(fb));
                have_fb = 1;
            }
        }
        const char *mode = m->diag_mode == SMC_DIAG_MODE_SMCR          ? "SMC-R"
                           : m->diag_mode == SMC_DIAG_MODE_SMCD        ? "SMC-D"
                           : m->diag_mode == SMC_DIAG_MODE_FALLBACK_TCP ? "TCP (fallback)"
                                                                        : "unknown";
        if (have_fb)
            snprintf(buf, len,
                     "{\"mode\": \"%s\", \"fallback_reason\": \"0x%08x\", "
                     "\"fallback_text\": \"%s\", \"peer_diagnosis\": \"0x%08x\", "
                     "\"peer_diagnosis_text\": \"%s\"}",
                     mode, fb.reason, decline_text(fb.reason), fb.peer_diagnosis,
                     decline_text(fb.peer_diagnosis));
        else
            snprintf(buf, len, "{\"mode\": \"%s\", \"fallback_reason\": null}", mode);
        return 1;
    }
    return 0;
}

static int smc_describe(int fd, char *buf, size_t len)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return describe_error(buf, len, "fstat", errno);
    int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (nl < 0)
        return describe_error(buf, len, "socket(NETLINK_SOCK_DIAG)", errno);
    struct {
        struct nlmsghdr h;
        struct smc_diag_req r;
    } req = {
        .h = {.nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
              .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1},
        .r = {.diag_family = AF_SMC},
    };
    if (send(nl, &req, sizeof(req), 0) != (ssize_t)sizeof(req)) {
        int e = errno;
        close(nl);
        return describe_error(buf, len, "send(sock_diag)", e);
    }
    static char data[32768];
    int done = 0, error = 0, found = 0;
    while (!done && !error && !found) {
        ssize_t got = recv(nl, data, sizeof(data), 0);
        if (got <= 0) {
            error = got < 0 ? errno : EPROTO;
            break;
        }
        found = find_record(data, (size_t)got, (unsigned long)st.st_ino, buf, len, &done, &error);
    }
    close(nl);
    if (found)
        return 0;
    if (error)
        /* ENOENT: no handler for AF_SMC, i.e. the smc_diag module is missing. */
        return describe_error(buf, len, "sock_diag(AF_SMC)", error);
    snprintf(buf, len, "{\"mode\": \"unknown\", \"diag_error\": \"sock_diag(AF_SMC) listed "
                       "no socket with our inode\"}");
    return 0;
}

const struct sock_ops sock_ops_smc = {
    .socket = smc_socket,
    .socket_call = "socket(AF_SMC)",
    .available = smc_available,
    .describe = smc_describe,
    KERNEL_SOCKET_CALLS,
};
