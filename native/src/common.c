#define _GNU_SOURCE
#include "common.h"

#include <errno.h>
#include <netdb.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

const char *g_prog = "native";

int err_call(const char *call, int errnum)
{
    fprintf(stderr, "%s: %s: %s\n", g_prog, call, strerror(errnum));
    return -1;
}

int err_msg(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", g_prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return -1;
}

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct cpu_usage cpu_usage_self(void)
{
    struct rusage ru;
    struct cpu_usage usage = {0, 0};
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        usage.user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
        usage.sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    }
    return usage;
}

struct cpu_usage cpu_usage_since(struct cpu_usage start)
{
    struct cpu_usage now = cpu_usage_self();
    now.user_s -= start.user_s;
    now.sys_s -= start.sys_s;
    return now;
}

static int parse_cpu_number(const char *text, char **end, const char *whole)
{
    errno = 0;
    long value = strtol(text, end, 10);
    if (*end == text || errno != 0 || value < 0 || value >= CPU_SETSIZE) {
        err_msg("--cpus: '%s' is not a CPU list such as 0,2-3 (CPUs 0..%d)", whole,
                CPU_SETSIZE - 1);
        return -1;
    }
    return (int)value;
}

int parse_cpu_list(const char *text, int *cpus, int max_cpus)
{
    int count = 0;
    const char *p = text;
    while (*p != '\0') {
        char *end;
        int first = parse_cpu_number(p, &end, text);
        if (first < 0)
            return -1;
        int last = first;
        if (*end == '-') {
            last = parse_cpu_number(end + 1, &end, text);
            if (last < 0)
                return -1;
            if (last < first)
                return err_msg("--cpus: range %d-%d is reversed", first, last);
        }
        for (int cpu = first; cpu <= last; cpu++) {
            if (count == max_cpus)
                return err_msg("--cpus: more than %d CPUs listed", max_cpus);
            cpus[count++] = cpu;
        }
        if (*end == ',')
            end++;
        else if (*end != '\0')
            return err_msg("--cpus: unexpected '%c' in '%s'", *end, text);
        p = end;
    }
    if (count == 0)
        return err_msg("--cpus: empty CPU list");
    return count;
}

int pin_to_cpus(const int *cpus, int count)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < count; i++)
        CPU_SET(cpus[i], &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0)
        return err_call("sched_setaffinity", errno);
    return 0;
}

uint64_t grid_checksum(const double *grid, size_t count)
{
    /* sum_i mix(bits_i + i * golden) mod 2^64, mix = one xorshift-multiply round. */
    uint64_t sum = 0;
    for (size_t i = 0; i < count; i++) {
        uint64_t bits;
        memcpy(&bits, &grid[i], sizeof(bits));
        uint64_t x = bits + (uint64_t)i * 0x9E3779B97F4A7C15ull;
        x ^= x >> 31;
        x *= 0xBF58476D1CE4E5B9ull;
        x ^= x >> 29;
        sum += x;
    }
    return sum;
}

int split_host_port(const char *text, char *host, size_t host_len, char *port, size_t port_len)
{
    const char *colon = strrchr(text, ':');
    if (colon == NULL || colon[1] == '\0')
        return err_msg("address '%s' has no port (expected ADDR:PORT)", text);
    size_t hlen = (size_t)(colon - text);
    if (hlen >= host_len || strlen(colon + 1) >= port_len)
        return err_msg("address '%s' is too long", text);
    /* Accept "[v6addr]:port" as well as "v4addr:port". */
    if (hlen >= 2 && text[0] == '[' && text[hlen - 1] == ']') {
        memcpy(host, text + 1, hlen - 2);
        host[hlen - 2] = '\0';
    } else {
        memcpy(host, text, hlen);
        host[hlen] = '\0';
    }
    strcpy(port, colon + 1);
    return 0;
}

int resolve_address(const char *addr, int passive, struct addrinfo **res)
{
    char host[256], port[32];
    if (split_host_port(addr, host, sizeof(host), port, sizeof(port)) != 0)
        return -1;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC};
    if (passive)
        hints.ai_flags = AI_PASSIVE;
    int rc = getaddrinfo(host[0] && strcmp(host, "*") != 0 ? host : NULL, port, &hints, res);
    if (rc != 0)
        return err_msg("getaddrinfo %s: %s", addr, gai_strerror(rc));
    return 0;
}

void *alloc_aligned(size_t bytes)
{
    void *ptr = NULL;
    int rc = posix_memalign(&ptr, 4096, bytes ? bytes : 1);
    if (rc != 0) {
        err_call("posix_memalign", rc);
        return NULL;
    }
    memset(ptr, 0, bytes);
    return ptr;
}
