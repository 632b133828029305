/* What the store's resource files (store/sql/) and its drivers share: the
 * host-found list's destructor, the write latency buckets, and the rule
 * that an unknown status never matches an expected mask (the resource
 * records are common/records.h's). Kept apart from store.c, which picks the
 * back-ends, so that a driver uses it without calling back into its
 * caller. */
#include "store/store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/sql/sqldb.h"

const double store_latency_bounds[STORE_LATENCY_BUCKETS] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                             0.05, 0.1, 0.25, 0.5, 1 };

void store_host_found_list_free(struct store_host_found_list *l) {
        for (size_t i = 0; l->v && i < l->n; i++) {
                free(l->v[i].infra_env_id);
                free(l->v[i].host_id);
                free(l->v[i].cluster_id);
                free(l->v[i].found);
        }
        free(l->v);
        *l = (struct store_host_found_list) { 0 };
}

void store_latency_add(struct store_latency *l, double seconds) {
        size_t b = 0;
        while (b < STORE_LATENCY_BUCKETS && seconds > store_latency_bounds[b])
                b++;
        l->bucket[b]++;
        l->count++;
        l->sum_s += seconds;
}

int store_status_expected(enum host_status cur, uint32_t expect_mask) {
        return expect_mask && (cur < 0 || !(expect_mask & STORE_STATUS(cur))) ? -ESTALE : 0;
}
