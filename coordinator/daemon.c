/* musterd's lifetime: state directory, signing key (and its public half
 * for agents), the first admin token, the store, the HTTP server and the
 * disconnect monitor. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "hostfsm.h"
#include "log.h"
#include "checkins.h"
#include "controllers.h"
#include "install.h"
#include "jwt.h"
#include "musterd.h"
#include "ratelimit.h"
#include "refresh.h"

/* Write text (and a newline after it when `newline`) to path with `mode`,
 * through path.tmp and a rename: a reader never sees half a file. */
static int write_file_atomic(const char *path, const char *text, bool newline, mode_t mode) {
        char tmp[PATH_MAX + 8];
        if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int) sizeof tmp)
                return -ENAMETOOLONG;
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        if (fd < 0)
                return -errno;
        size_t len = strlen(text);
        bool ok = write(fd, text, len) == (ssize_t) len && (!newline || write(fd, "\n", 1) == 1) && fsync(fd) == 0;
        int r = -errno;
        close(fd);
        if (!ok || rename(tmp, path) < 0) {
                r = ok ? -errno : r;
                unlink(tmp);
                return r;
        }
        return 0;
}

/* DIR/admin.token: root's infra-admin token (owner "admin"). It expires
 * like every person's token (ADMIN_TOKEN_TTL_S) and is written again, at a
 * start, only when it is missing, not ours, revoked, expired or within
 * ADMIN_TOKEN_RENEW_S of its expiry: revoking a leaked one and restarting
 * musterd replaces it. Mode 0600, atomically. */
#define ADMIN_TOKEN_TTL_S AUTH_DEFAULT_TTL_S
#define ADMIN_TOKEN_RENEW_S (90 * 86400)
static int write_admin_token(struct musterd *d, const char *dir) {
        char path[PATH_MAX], line[JWT_MAX_LEN + 2];
        _cleanup_free_ char *token = NULL;
        if (snprintf(path, sizeof path, "%s/admin.token", dir) >= (int) sizeof path)
                return -ENAMETOOLONG;
        FILE *f = fopen(path, "re");
        if (f) {
                struct principal p;
                int64_t now = (int64_t) time(NULL);
                bool keep = fgets(line, sizeof line, f) != NULL;
                fclose(f);
                line[strcspn(line, "\r\n")] = '\0';
                keep = keep && auth_check(d->key, line, now, &p) == 0 && p.kind == PRINCIPAL_ADMIN &&
                       p.role == ROLE_INFRA_ADMIN && p.expires_at - now > ADMIN_TOKEN_RENEW_S &&
                       store_token_check(d->store, p.jti) == 0;
                if (keep)
                        return 0;
                log_info("musterd", "Replacing %s: not a current token of this coordinator (from before tokens "
                         "expired, revoked, unknown to the store, or expiring within 90 days)", path);
        } else if (errno != ENOENT)
                return -errno;
        struct store_token rec;
        int r = api_issue_person_token(d, ROLE_INFRA_ADMIN, "admin", ADMIN_TOKEN_TTL_S, &token, &rec);
        if (r < 0)
                return r;
        log_info("musterd", "Wrote %s: infra-admin token %s, expires %s", path, rec.id, rec.expires_at);
        store_token_free(&rec);
        return write_file_atomic(path, token, true, 0600);
}

/* Whether the file at path holds exactly `text` (a short file). */
static bool file_holds(const char *path, const char *text) {
        size_t len = strlen(text);
        _cleanup_free_ char *buf = malloc(len + 2);
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0 || !buf) {
                if (fd >= 0)
                        close(fd);
                return false;
        }
        size_t got = 0;
        ssize_t n;
        while (got < len + 1 && (n = read(fd, buf + got, len + 1 - got)) > 0)
                got += (size_t) n;
        close(fd);
        return got == len && memcmp(buf, text, len) == 0;
}

/* DIR/signing-key.pub: the public half agents verify payloads with (the
 * same PEM as GET /signing-key), written atomically when it is missing or
 * differs. A start writes nothing that has not changed: on a full file
 * system musterd must still come up and serve reads. */
static int write_public_key(struct musterd *d, const char *dir) {
        char path[PATH_MAX];
        _cleanup_free_ char *pem = NULL;
        int r = crypto_key_public_pem(d->key, &pem);
        if (r < 0)
                return r;
        if (snprintf(path, sizeof path, "%s/signing-key.pub", dir) >= (int) sizeof path)
                return -ENAMETOOLONG;
        if (file_holds(path, pem))
                return 0;
        return write_file_atomic(path, pem, false, 0644);
}

/* Stale hosts are handled in batches, so a fleet going dark is one
 * transaction per batch. */
#define STALE_BATCH 500

/* Hosts in `mask` that have not checked in since `before`, a batch at a time,
 * handed to `act`, which returns how many it changed. Stops after a batch
 * that changes none or is short. Returns how many changed in all. */
static int for_stale_hosts(struct musterd *d, const char *before, uint32_t mask, const char *stage, bool stage_match,
                           int (*act)(struct musterd *d, const char *before, uint32_t mask, struct host_list *l)) {
        int total = 0;
        for (;;) {
                struct host_list l = { 0 };
                int r = store_host_list_stale(d->store, before, mask, stage, stage_match, STALE_BATCH, &l);
                if (r < 0 || l.n == 0) {
                        host_list_free(&l);
                        return r < 0 ? r : total;
                }
                r = act(d, before, mask, &l);
                size_t n = l.n;
                host_list_free(&l);
                if (r < 0)
                        return r;
                total += r;
                if (r == 0 || n < STALE_BATCH)
                        return total;
        }
}

/* A batch of hosts being installed that went silent: error (status_info
 * "Installation failed: <why>"), and their cluster with them. */
static int fail_silent(struct musterd *d, const char *before, uint32_t mask, struct host_list *l, const char *why,
                       int64_t after_s) {
        char info[256];
        snprintf(info, sizeof info, "Installation failed: %s", why);
        bool *changed = calloc(l->n, sizeof *changed);
        int r = changed ? store_host_mark_stale(d->store, l->v, l->n, before, mask, HOST_ERROR, info, changed)
                        : -ENOMEM;
        for (size_t i = 0; r > 0 && i < l->n; i++) {
                if (!changed[i])
                        continue;
                musterd_event(d, EVENT_ERROR, EVENT_CAT_SYSTEM, l->v[i].infra_env_id, l->v[i].cluster_id, l->v[i].id,
                              "host %s: %s -> error: %s (no check-in for %lld s)", l->v[i].id,
                              host_status_to_string(l->v[i].status), info, (long long) after_s);
                /* Now in error: only the cluster is left to fail. */
                l->v[i].status = HOST_ERROR;
                (void) install_fail_host(d, &l->v[i], NULL, why);
        }
        free(changed);
        return r;
}

/* Hosts that stopped checking in while writing their installation. */
static int fail_stale_installs(struct musterd *d, const char *before, uint32_t mask, struct host_list *l) {
        return fail_silent(d, before, mask, l, "Host stopped checking in during installation",
                           musterd_cfg(d)->host_disconnect_timeout_s);
}

/* Hosts whose installed system never checked in after the install step's
 * result (the firmware, the boot or the node agent failed). */
static int fail_first_boots(struct musterd *d, const char *before, uint32_t mask, struct host_list *l) {
        char why[160];
        snprintf(why, sizeof why, "The installed system did not check in within %lld s of the install",
                 (long long) musterd_cfg(d)->first_boot_timeout_s);
        return fail_silent(d, before, mask, l, why, musterd_cfg(d)->first_boot_timeout_s);
}

/* A batch of hosts that stopped checking in: disconnected. */
static int mark_disconnected(struct musterd *d, const char *before, uint32_t mask, struct host_list *l) {
        int r = store_host_mark_disconnected(d->store, l->v, l->n, before, mask,
                                             "The host has not checked in within the disconnect timeout");
        for (size_t i = 0; r > 0 && i < l->n; i++) {
                musterd_event(d, EVENT_WARNING, EVENT_CAT_SYSTEM, l->v[i].infra_env_id, l->v[i].cluster_id,
                              l->v[i].id, "host %s is disconnected: no check-in for %lld s", l->v[i].id,
                              (long long) musterd_cfg(d)->host_disconnect_timeout_s);
                /* A bound host going dark changes its cluster's verdict; once
                 * per cluster and batch. */
                bool seen = !l->v[i].cluster_id;
                for (size_t k = 0; k < i && !seen; k++)
                        seen = l->v[k].cluster_id && strcmp(l->v[k].cluster_id, l->v[i].cluster_id) == 0;
                if (!seen)
                        (void) refresh_cluster(d, l->v[i].cluster_id, NULL);
        }
        return r;
}

int musterd_monitor_pass(struct musterd *d) {
        char before[MODEL_TIME_LEN];
        int flushed = checkins_flush(d->checkins, d->store);
        if (flushed < 0)
                return flushed;
        int64_t cutoff = (int64_t) time(NULL) - musterd_cfg(d)->host_disconnect_timeout_s;
        const uint32_t installing = STORE_STATUS(HOST_INSTALLING) | STORE_STATUS(HOST_INSTALLING_IN_PROGRESS);
        uint32_t live = 0;

        model_time_format(cutoff, before);
        /* States the timeout moves to disconnected; those it moves to error
         * (an installation in progress) are fail_stale_installs()'s. */
        for (int s = 0; s < _HOST_STATUS_MAX; s++) {
                enum host_status to;
                if (hostfsm_apply((enum host_status) s, HOSTFSM_EV_CHECKIN_TIMEOUT, NULL, &to, NULL) == 0 &&
                    to != (enum host_status) s && to != HOST_ERROR)
                        live |= STORE_STATUS(s);
        }
        /* A host rebooting into its installed system is silent until that
         * system's node agent checks in: it has first_boot_timeout. */
        int failed = for_stale_hosts(d, before, installing, install_stage_to_string(INSTALL_STAGE_REBOOTING), false, fail_stale_installs);
        if (failed < 0)
                return failed;
        char boot_before[MODEL_TIME_LEN];
        model_time_format((int64_t) time(NULL) - musterd_cfg(d)->first_boot_timeout_s, boot_before);
        int unbooted = for_stale_hosts(d, boot_before, STORE_STATUS(HOST_INSTALLING_IN_PROGRESS),
                                       install_stage_to_string(INSTALL_STAGE_REBOOTING), true, fail_first_boots);
        if (unbooted < 0)
                return unbooted;
        int disconnected = for_stale_hosts(d, before, live, NULL, false, mark_disconnected);
        return disconnected < 0 ? disconnected : failed + unbooted + disconnected;
}

/* Every second: write the buffered check-ins; every monitor_interval: the
 * disconnect pass (which flushes first, so fresh check-ins count). */
int musterd_prune_events(struct musterd *d) {
        char before[MODEL_TIME_LEN];
        model_time_format((int64_t) time(NULL) - musterd_cfg(d)->events_max_age_s, before);
        return store_event_prune(d->store, before, musterd_cfg(d)->events_max_per_host, &d->events_pruned_to);
}

/* The periodic controllers (controllers.h), each when due; woken every
 * second, or at once to stop. */
static void *monitor_main(void *arg) {
        struct musterd *d = arg;
        pthread_mutex_lock(&d->lock);
        while (!d->stopping) {
                struct timespec until;
                clock_gettime(CLOCK_REALTIME, &until);
                until.tv_sec += 1;
                pthread_cond_timedwait(&d->wake, &d->lock, &until);
                if (d->stopping)
                        break;
                pthread_mutex_unlock(&d->lock);
                controllers_tick(d);
                pthread_mutex_lock(&d->lock);
        }
        pthread_mutex_unlock(&d->lock);
        return NULL;
}

/* Every connection is a descriptor, and the HTTP layer sizes its connection
 * limit from the file limit: take the hard limit (up to 65,536) rather than
 * the soft default of 1,024 that systemd and shells hand out, which would
 * hold fewer than 500 connections. */
static void raise_file_limit(void) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return;
        rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
        if (want <= rl.rlim_cur)
                return;
        rl.rlim_cur = want;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                log_warning_errno(errno, "musterd", "Failed to raise the file limit to %llu: %m",
                                  (unsigned long long) want);
}

int musterd_start(struct musterd *d, const struct muster_config *cfg) {
        char path[PATH_MAX];
        int r;

        memset(d, 0, sizeof *d);
        pthread_mutex_init(&d->lock, NULL);
        pthread_cond_init(&d->wake, NULL);
        struct musterd_config_snapshot *snap = calloc(1, sizeof *snap);
        if (!snap)
                return log_error_errno(ENOMEM, "musterd", "Out of memory: %m");
        snap->cfg = *cfg;
        atomic_init(&d->config, snap);
        cfg = &snap->cfg; /* the server keeps pointers into it (listen) */
        if (mkdir(cfg->state_dir, 0700) < 0 && errno != EEXIST)
                return log_error_errno(errno, "musterd", "Failed to create state dir %s: %m", cfg->state_dir);
        if (snprintf(path, sizeof path, "%s/signing-key.pem", cfg->state_dir) >= (int) sizeof path)
                return log_error_errno(ENAMETOOLONG, "musterd", "State dir path is too long: %s", cfg->state_dir);
        if ((r = crypto_key_load_or_create(path, &d->key)) < 0)
                return log_error_errno(r, "musterd", "Failed to load or create the signing key %s: %m", path);
        if ((r = write_public_key(d, cfg->state_dir)) < 0)
                return log_error_errno(r, "musterd", "Failed to write %s/signing-key.pub: %m", cfg->state_dir);
        /* The default releases folder, for admins to copy OS images into;
         * not fatal: an import names the folder it misses. */
        if (!cfg->releases_image_dir[0] && snprintf(path, sizeof path, "%s/images", cfg->state_dir) < (int) sizeof path &&
            mkdir(path, 0755) < 0 && errno != EEXIST)
                log_warning_errno(errno, "musterd", "Failed to create the releases folder %s: %m", path);
        if ((cfg->store[0] ? snprintf(path, sizeof path, "%s", cfg->store)
                           : snprintf(path, sizeof path, "sqlite:%s/muster.db", cfg->state_dir)) >= (int) sizeof path)
                return log_error_errno(ENAMETOOLONG, "musterd", "Store path is too long");
        if ((r = store_open(path, &d->store)) < 0)
                return log_error_errno(r, "musterd", "Failed to open store %s: %m", path);
        if ((r = write_admin_token(d, cfg->state_dir)) < 0)
                return log_error_errno(r, "musterd", "Failed to write %s/admin.token: %m", cfg->state_dir);
        if ((r = auth_cache_new(&d->auth_cache)) < 0 || (r = checkins_new(&d->checkins)) < 0 ||
            (r = ratelimit_new(&d->registrations)) < 0)
                return log_error_errno(r, "musterd", "Out of memory: %m");
        raise_file_limit();
        struct http_server_config hc = {
                .listen = cfg->listen, .threads = 4, .max_body_bytes = (size_t) cfg->max_body_bytes,
                .max_large_body_bytes = (size_t) cfg->max_release_bytes,
                .max_connections_per_address = (unsigned) cfg->max_connections_per_address,
                .header_timeout_s = (unsigned) cfg->header_timeout_s,
                .routes = musterd_routes, .n_routes = musterd_n_routes, .auth = musterd_auth,
                .auth_free = musterd_auth_free, .app = d,
        };
        if ((r = http_server_start(&hc, &d->http)) < 0)
                return log_error_errno(r, "musterd", "Failed to listen on %s: %m", cfg->listen);
        if ((r = -pthread_create(&d->monitor, NULL, monitor_main, d)) < 0)
                return log_error_errno(r, "musterd", "Failed to start the monitor: %m");
        d->monitor_running = true;
        return 0;
}

void musterd_stop(struct musterd *d) {
        if (d->monitor_running) {
                pthread_mutex_lock(&d->lock);
                d->stopping = true;
                pthread_cond_signal(&d->wake);
                pthread_mutex_unlock(&d->lock);
                pthread_join(d->monitor, NULL);
        }
        http_server_stop(d->http);
        if (d->checkins && d->store) {
                int r = checkins_flush(d->checkins, d->store);
                if (r < 0)
                        log_warning_errno(r, "musterd", "Failed to write the last check-ins: %m");
        }
        checkins_free(d->checkins);
        ratelimit_free(d->registrations);
        auth_cache_free(d->auth_cache);
        store_close(d->store);
        crypto_key_free(d->key);
        for (struct musterd_config_snapshot *s = atomic_load(&d->config), *older; s; s = older) {
                older = s->older;
                free(s);
        }
        pthread_cond_destroy(&d->wake);
        pthread_mutex_destroy(&d->lock);
        memset(d, 0, sizeof *d);
}
