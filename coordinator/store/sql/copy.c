/* Copying a store into an empty one (store_copy): every table, parents first,
 * then a check that both read the same. */
#include "store/sql/sqlstore.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "json-cleanup.h"

/* Every table with its columns and their kinds (i integer, t text, b bytes),
 * parents first. What triggers derive is left out: host_names, and
 * infra_envs.host_count, which the destination counts as hosts go in. */
static const struct copy_table {
        const char *name;
        const char *cols;
        const char *kinds;
        const char *id; /* a column the database makes, else NULL */
} copy_tables[] = {
        { "clusters",
          "seq, id, name, owner, release_version, base_dns_domain, machine_network_cidr, api_vip, ingress_vip, "
          "high_availability_mode, pull_secret, labels, status, status_info, validations, created_at, updated_at, "
          "capabilities_spec_json, capabilities_status_json, conditions_json, payload_revision, feature_set, "
          "cpu_architecture",
          "i" "ttttttttttttttttttt" "itt", "seq" },
        { "infra_envs",
          "seq, id, name, owner, cluster_id, cpu_architecture, pull_secret, ssh_authorized_key, http_proxy, "
          "https_proxy, no_proxy, ntp_sources, token_generation, created_at, updated_at, static_network",
          "itttttttttttittt", "seq" },
        { "hosts",
          "seq, infra_env_id, id, owner, cluster_id, role, requested_hostname, installation_disk_id, inv_hostname, "
          "inv_cpu_count, inv_memory_bytes, inv_max_disk_bytes, status, status_info, validations, progress_stage, "
          "progress_percent, progress_info, checked_in_at, registered_at, discovery_agent_version, "
          "reregister_pending, created_at, updated_at, step_results, applied_revision, token_generation, stop_pending, "
          "pending_actions",
          "itttttttti" "iitttt" "itttt" "itttiii" "i", "seq" },
        { "host_inventories", "host_seq, inventory", "it", NULL },
        { "host_found", "infra_env_id, host_id, found, updated_at", "tttt", NULL },
        { "host_logs", "seq, infra_env_id, host_id, created_at, size, data", "itttib", "seq" },
        { "events", "id, time, severity, category, infra_env_id, cluster_id, host_id, message", "ittttttt", "id" },
        { "releases", "rowid, version, info_json, created_at", "ittt", "rowid" },
        { "release_manifests",
          "release_version, seq, file, doc_index, path, api_version, \"group\", version, kind, namespace, name, "
          "annotations_json, content",
          "titittttttttt", NULL },
        { "payload_revisions",
          "cluster_id, revision, digest, signature, canonical, release_version, manifest_count, created_at",
          "titttt" "it", NULL },
        { "tokens", "seq, id, role, owner, created_at, expires_at, revoked_at", "itttttt", "seq" },
        { "catalogs",
          "seq, id, name, priority, owner, digest, files, n_files, n_packages, n_channels, n_bundles, n_manifests, "
          "n_ignored, created_at",
          "ittittbiiiiiit", "seq" },
        { "subscriptions",
          "seq, id, cluster_id, package, channel, catalog, version_range, skip_dependencies, owner, created_at, "
          "cleanup, uninstall",
          "itttttti" "ttit", "seq" },
        { "addon_proxies",
          "seq, id, name, owner, spec, prev_spec, generation, rollback_generation, paused, failure_base, deleting, "
          "conditions, created_at, updated_at",
          "itttttiiiiittt", "seq" },
        { "addon_releases",
          "seq, proxy_id, cluster_id, content, prev_content, revision, applied_revision, payload_revision, "
          "generation, status, message, conflict, started_at, applied_at, created_at, updated_at",
          "ittttiiiittiiitt", "seq" },
        { "operands",
          "seq, id, cluster_id, package, grp, version, kind, namespace, name, file, content, owner, created_at",
          "itttttttttttt", "seq" },
};

static int count_rows(struct dbconn *c, const char *table, int64_t *n) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r = stmt(c, sql, &st);
        if (r >= 0 && (r = step_row(c, st)) >= 0)
                *n = r ? db_col_int64(st, 0) : 0;
        return r < 0 ? r : 0;
}

/* One column of the source's row, bound as the destination's parameter i. */
static int copy_value(struct dbstmt *from, struct dbstmt *to, int i, char kind) {
        if (db_col_null(from, i))
                return to->drv->bind_null(to, i + 1);
        switch (kind) {
        case 'i': return db_bind_int64(to, i + 1, db_col_int64(from, i));
        case 'b': {
                const void *v = db_col_blob(from, i);
                return db_bind_blob(to, i + 1, v ? v : "", db_col_bytes(from, i));
        }
        default: {
                const unsigned char *t = db_col_text(from, i);
                return db_bind_text(to, i + 1, (const char *) t, db_col_bytes(from, i));
        }
        }
}

/* Every row of t from src (a read connection) into dst (the write's). */
static int copy_rows(struct dbconn *src, struct dbconn *dst, const struct copy_table *t, int64_t *rows) {
        char select[1024], insert[1400];
        size_t n = strlen(t->kinds);
        snprintf(select, sizeof select, "SELECT %s FROM %s", t->cols, t->name);
        int k = snprintf(insert, sizeof insert, "INSERT INTO %s (%s) VALUES (", t->name, t->cols);
        for (size_t i = 0; i < n && k > 0 && (size_t) k < sizeof insert; i++)
                k += snprintf(insert + k, sizeof insert - (size_t) k, "%s?%zu", i ? ", " : "", i + 1);
        if (k < 0 || (size_t) k + 2 >= sizeof insert)
                return -ENOBUFS;
        strcat(insert, ")");
        _cleanup_reset_ struct dbstmt *rd = NULL;
        int r = stmt(src, select, &rd);
        *rows = 0;
        while (r >= 0 && (r = step_row(src, rd)) > 0) {
                _cleanup_reset_ struct dbstmt *wr = NULL;
                if ((r = stmt(dst, insert, &wr)) < 0)
                        break;
                for (size_t i = 0; i < n && r >= 0; i++)
                        r = copy_value(rd, wr, (int) i, t->kinds[i]);
                if (r >= 0 && (r = step_done(dst, wr)) >= 0)
                        (*rows)++;
        }
        return r < 0 ? r : 0;
}

static bool same_str(const char *a, const char *b) {
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Every host of from read from both, the same: 0, or -EIO naming it. */
static int check_hosts(struct store *from, struct store *to, int64_t *checked, char *err, size_t errlen) {
        struct strv ies = { 0 }, ids = { 0 };
        int r;
        {
                struct dbconn *c = conn_get(from);
                _cleanup_reset_ struct dbstmt *st = NULL;
                r = stmt(c, "SELECT infra_env_id, id FROM hosts ORDER BY seq", &st);
                while (r >= 0 && (r = step_row(c, st)) > 0)
                        if ((r = strv_push(&ies, (const char *) db_col_text(st, 0))) >= 0)
                                r = strv_push(&ids, (const char *) db_col_text(st, 1));
                stmt_resetp(&st);
                st = NULL;
                conn_put(from, c);
        }
        for (size_t i = 0; r >= 0 && i < ids.n; i++) {
                struct host a, b;
                host_init(&a);
                host_init(&b);
                if ((r = sql_host_get(from, ies.v[i], ids.v[i], false, &a)) >= 0 &&
                    (r = sql_host_get(to, ies.v[i], ids.v[i], false, &b)) >= 0) {
                        bool same = a.status == b.status && a.role == b.role && same_str(a.cluster_id, b.cluster_id) &&
                                    same_str(a.requested_hostname, b.requested_hostname) &&
                                    same_str(a.inventory_json, b.inventory_json) &&
                                    same_str(a.checked_in_at, b.checked_in_at) &&
                                    same_str(a.status_info, b.status_info) &&
                                    a.n_validations == b.n_validations && a.applied_revision == b.applied_revision &&
                                    a.facts.memory_bytes == b.facts.memory_bytes;
                        if (!same) {
                                snprintf(err, errlen, "host %s of infra-env %s reads differently after the copy",
                                         ids.v[i], ies.v[i]);
                                r = -EIO;
                        } else
                                (*checked)++;
                } else if (r == -ENOENT)
                        snprintf(err, errlen, "host %s of infra-env %s is missing after the copy", ids.v[i], ies.v[i]);
                host_free(&a);
                host_free(&b);
        }
        strv_free(&ies);
        strv_free(&ids);
        return r < 0 ? r : 0;
}

static int sql_copy(struct store *from, struct store *to, struct store_copy_report *rep, char *err, size_t errlen) {
        const size_t n_tables = sizeof copy_tables / sizeof *copy_tables;
        _Static_assert(sizeof copy_tables / sizeof *copy_tables <= STORE_COPY_MAX_TABLES, "report room");
        int r;

        if (sql_drv(from)->schema_version(from) != sql_drv(to)->schema_version(to)) {
                snprintf(err, errlen, "the stores are at schema versions %d and %d", sql_drv(from)->schema_version(from),
                         sql_drv(to)->schema_version(to));
                return -EPROTO;
        }
        for (size_t i = 0; i < n_tables; i++) {
                size_t cols = 1;
                for (const char *p = copy_tables[i].cols; *p; p++)
                        cols += *p == ',';
                if (cols != strlen(copy_tables[i].kinds))
                        return -EINVAL; /* this table's entry is wrong */
        }
        struct dbconn *src = conn_get(from), *dst;
        if ((r = write_begin(to, &dst)) < 0) {
                conn_put(from, src);
                snprintf(err, errlen, "the destination could not be written");
                return r;
        }
        for (size_t i = 0; i < n_tables && r >= 0; i++) {
                int64_t there = 0;
                if ((r = count_rows(dst, copy_tables[i].name, &there)) >= 0 && there > 0) {
                        snprintf(err, errlen, "the destination is not empty: %s has %lld row(s)", copy_tables[i].name,
                                 (long long) there);
                        r = -ENOTEMPTY;
                }
        }
        for (size_t i = 0; i < n_tables && r >= 0; i++) {
                const struct copy_table *t = &copy_tables[i];
                rep->tables[i].table = t->name;
                if ((r = copy_rows(src, dst, t, &rep->tables[i].rows)) < 0)
                        snprintf(err, errlen, "copying %s failed", t->name);
                else if (t->id && (r = dst->drv->ids_copied(dst, t->name, t->id)) < 0)
                        snprintf(err, errlen, "setting the next id of %s failed", t->name);
                rep->n_tables = i + 1;
        }
        conn_put(from, src);
        r = write_end(to, dst, r);
        if (r < 0) {
                if (!err[0])
                        snprintf(err, errlen, "the copy could not be committed");
                return r;
        }
        /* Both hold as many rows of each table, and the hosts read the same. */
        struct dbconn *a = conn_get(from), *b = conn_get(to);
        for (size_t i = 0; i < n_tables && r >= 0; i++) {
                int64_t na = 0, nb = 0;
                if ((r = count_rows(a, copy_tables[i].name, &na)) >= 0 &&
                    (r = count_rows(b, copy_tables[i].name, &nb)) >= 0 &&
                    (na != nb || nb != rep->tables[i].rows)) {
                        snprintf(err, errlen, "%s: %lld row(s) in the source, %lld copied, %lld in the destination",
                                 copy_tables[i].name, (long long) na, (long long) rep->tables[i].rows, (long long) nb);
                        r = -EIO;
                }
        }
        int64_t names = 0, hosts = 0;
        if (r >= 0 && (r = count_rows(b, "host_names", &names)) >= 0 && (r = count_rows(b, "hosts", &hosts)) >= 0 &&
            names != hosts) {
                snprintf(err, errlen, "host_names: %lld row(s) for %lld host(s)", (long long) names, (long long) hosts);
                r = -EIO;
        }
        conn_put(from, a);
        conn_put(to, b);
        if (r >= 0)
                r = check_hosts(from, to, &rep->hosts_checked, err, errlen);
        return r;
}

int store_copy(struct store *from, struct store *to, struct store_copy_report *rep, char *err, size_t errlen) {
        memset(rep, 0, sizeof *rep);
        if (err && errlen)
                err[0] = '\0';
        if (!from || !to || from == to)
                return -EINVAL;
        return sql_copy(from, to, rep, err, errlen);
}
