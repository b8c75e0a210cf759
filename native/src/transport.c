#include "transport.h"

#include "common.h"

#include <string.h>

const char *const transport_names[] = {"tcp", "shm", "shm-zc", "rdma", "smc", "rsocket", NULL};

int transport_create(const char *name, double idle_timeout_s, struct transport **out)
{
    int rc;
    *out = NULL;
    if (strcmp(name, "tcp") == 0)
        rc = tcp_transport_create(out);
    else if (strcmp(name, "shm") == 0)
        rc = shm_transport_create(out, 0);
    else if (strcmp(name, "shm-zc") == 0)
        rc = shm_transport_create(out, 1);
    else if (strcmp(name, "rdma") == 0)
        rc = rdma_transport_create(out);
    else if (strcmp(name, "smc") == 0)
        rc = smc_transport_create(out);
    else if (strcmp(name, "rsocket") == 0)
        rc = rsocket_transport_create(out);
    else
        return err_msg("unknown transport '%s'", name);
    if (rc == TRANSPORT_OK) {
        (*out)->idle_timeout_s = idle_timeout_s;
        (*out)->tos = -1;
    }
    return rc;
}

int transport_check_tos(const char *name, uint64_t tos, int client)
{
    if (tos == TOS_UNSET)
        return 0;
    /* Only RDMA-CM takes a ToS per connection here; TCP would need IP_TOS, not wired. */
    if (strcmp(name, "rdma") != 0)
        return err_msg("--tos: only --transport rdma sets a ToS (RDMA-CM), not %s", name);
    /* The passive side's QP follows the path of the client's connection request. */
    if (!client)
        return err_msg("--tos: a client option (the server answers on the client's path)");
    return 0;
}
