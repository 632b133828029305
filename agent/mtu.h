/* connectivity-check's MTU probe (mtu.c), after the reachability probes
 * (reach.h): every target that answered ICMP echo gets an echo as large as
 * the MTU of the interface the route to it leaves by, don't fragment. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "reach.h"

/* Probe every reached ICMP target with one echo of its interface's MTU,
 * don't fragment, twice CONN_INTERVAL_MS apart; no answer within
 * timeout_ns of the last is a failure; the outcome in each target's mtu
 * members. 0 or -errno. */
int mtu_probe_all(struct conn_target *targets, size_t n, int64_t timeout_ns);
