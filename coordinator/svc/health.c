/* Whether the services can serve, what they are and what they count
 * (svc.h): the probe behind /readyz, the store's part of /version and the
 * services' part of /metrics. */
#include "svc/svc.h"

#include <errno.h>
#include <stdint.h>

#include "errmsg.h"
#include "growbuf.h"
#include "store/store.h"

int svc_ready(struct svc *sv, char *err, size_t errlen) {
        struct infra_env_list l = { 0 };
        struct list_page pg = { .limit = 1 };
        int r = store_infra_env_list(sv->store, NULL, &pg, &l);
        infra_env_list_free(&l);
        int64_t room = INT64_MAX;
        if (r < 0)
                return errmsg(err, errlen, r, "store is not ready");
        if (store_free_space(sv->store, &room) == 0 && room < STORE_MIN_FREE_BYTES)
                return errmsg(err, errlen, -ENOSPC,
                              "the store's file system is full (%lld bytes free, writes need %lld): "
                              "reads are served, writes are refused with 507",
                              (long long) room, (long long) STORE_MIN_FREE_BYTES);
        return 0;
}

int svc_version(struct svc *sv, struct svc_version *out) {
        *out = (struct svc_version) { .schema_built = store_schema_version_built(),
                                      .postgres = store_backend_built("postgres://") };
        int r = store_schema_version(sv->store);
        if (r < 0)
                return r;
        out->schema = r;
        return 0;
}

int svc_metrics(struct svc *sv, struct growbuf *out, size_t max) {
        int r = growbuf_printf(out, max, "# HELP muster_hosts Hosts by status.\n# TYPE muster_hosts gauge\n");
        int64_t counts[_HOST_STATUS_MAX];
        if (r == 0 && store_host_count_by_status(sv->store, counts) == 0)
                for (int s = 0; r == 0 && s < _HOST_STATUS_MAX; s++)
                        r = growbuf_printf(out, max, "muster_hosts{status=\"%s\"} %lld\n",
                                           host_status_to_string((enum host_status) s), (long long) counts[s]);
        struct store_latency w;
        store_write_latency(sv->store, &w);
        if (r == 0)
                r = growbuf_printf(out, max,
                                   "# HELP muster_store_write_seconds Store writes, lock wait to their durable answer.\n"
                                   "# TYPE muster_store_write_seconds histogram\n");
        uint64_t cum = 0;
        for (int b = 0; r == 0 && b < STORE_LATENCY_BUCKETS; b++) {
                cum += w.bucket[b];
                r = growbuf_printf(out, max, "muster_store_write_seconds_bucket{le=\"%g\"} %llu\n",
                                   store_latency_bounds[b], (unsigned long long) cum);
        }
        if (r == 0)
                r = growbuf_printf(out, max,
                                   "muster_store_write_seconds_bucket{le=\"+Inf\"} %llu\n"
                                   "muster_store_write_seconds_sum %.6f\nmuster_store_write_seconds_count %llu\n"
                                   "# HELP muster_store_commits_total Store commits (each makes a group of writes "
                                   "durable at once).\n# TYPE muster_store_commits_total counter\n"
                                   "muster_store_commits_total %llu\n",
                                   (unsigned long long) w.count, w.sum_s, (unsigned long long) w.count,
                                   (unsigned long long) w.commits);
        if (r == 0)
                r = growbuf_printf(out, max,
                                   "# HELP muster_cleanup_stalled_total Operand cleanups on uninstall that passed [cleanup] "
                                   "timeout with operands still pending.\n"
                                   "# TYPE muster_cleanup_stalled_total counter\nmuster_cleanup_stalled_total %llu\n",
                                   (unsigned long long) atomic_load(&sv->cleanup_stalled));
        return r;
}
