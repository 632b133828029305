/* getaddrinfo() bounded by a deadline, for the steps that resolve names
 * (ntp-synchronizer's sources, domain-resolution). getaddrinfo cannot be
 * interrupted, so each lookup runs on a detached thread; the caller waits
 * until the deadline and leaves, and a late thread frees what it had. */
#pragma once
#include <netdb.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lookup {
        int rc;                 /* getaddrinfo's result; EAI_AGAIN with timed_out */
        int sys_errno;          /* with EAI_SYSTEM */
        bool timed_out;
        struct addrinfo *res;   /* caller frees */
};

/* Look up all `nodes` at once; out[i] gets each result or timed_out. 0 or
 * -ENOMEM (then nothing was started). */
int lookup_all(const char *const *nodes, size_t n, int family, int socktype, int64_t timeout_ms,
               struct lookup *out);
/* Why a lookup has no address, in words (buf holds them when needed), or
 * NULL when it has some. */
const char *lookup_error(const struct lookup *l, char *buf, size_t n);
