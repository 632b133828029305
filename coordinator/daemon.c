/* musterd's lifetime: state directory, signing key, the first admin token,
 * the store, the HTTP server and the disconnect monitor. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "hostfsm.h"
#include "log.h"
#include "checkins.h"
#include "musterd.h"
#include "refresh.h"

/* Write the infra-admin token once, mode 0600, atomically. */
static int write_admin_token(struct musterd *d, const char *dir) {
        char path[PATH_MAX], tmp[PATH_MAX + 8];
        _cleanup_free_ char *token = NULL;
        if (snprintf(path, sizeof path, "%s/admin.token", dir) >= (int) sizeof path)
                return -ENAMETOOLONG;
        if (access(path, F_OK) == 0)
                return 0;
        int r = auth_issue_admin(d->key, ROLE_INFRA_ADMIN, "admin", &token);
        if (r < 0)
                return r;
        if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int) sizeof tmp)
                return -ENAMETOOLONG;
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        size_t len = strlen(token);
        bool ok = write(fd, token, len) == (ssize_t) len && write(fd, "\n", 1) == 1 && fsync(fd) == 0;
        r = -errno;
        close(fd);
        if (!ok || rename(tmp, path) < 0) {
                r = ok ? -errno : r;
                unlink(tmp);
                return r;
        }
        return 0;
}

int musterd_monitor_pass(struct musterd *d) {
        char before[MODEL_TIME_LEN];
        int flushed = checkins_flush(d->checkins, d->store);
        if (flushed < 0)
                return flushed;
        int64_t cutoff = (int64_t) time(NULL) - d->cfg.host_disconnect_timeout_s;
        uint32_t live = 0;
        int total = 0;

        model_time_format(cutoff, before);
        for (int s = 0; s < _HOST_STATUS_MAX; s++) {
                enum host_status to;
                if (hostfsm_apply((enum host_status) s, HOSTFSM_EV_CHECKIN_TIMEOUT, NULL, &to, NULL) == 0 &&
                    to != (enum host_status) s)
                        live |= STORE_STATUS(s);
        }
        /* Batches of 500, so a fleet going dark is one transaction per batch. */
        for (;;) {
                struct host_list l = { 0 };
                int r = store_host_list_stale(d->store, before, live, 500, &l);
                if (r < 0 || l.n == 0) {
                        host_list_free(&l);
                        return r < 0 ? r : total;
                }
                r = store_host_mark_disconnected(d->store, l.v, l.n, before, live,
                                                 "The host has not checked in within the disconnect timeout");
                if (r > 0) {
                        total += r;
                        for (size_t i = 0; i < l.n; i++) {
                                musterd_event(d, EVENT_WARNING, EVENT_CAT_SYSTEM, l.v[i].infra_env_id, l.v[i].cluster_id,
                                              l.v[i].id, "host %s is disconnected: no check-in for %lld s", l.v[i].id,
                                              (long long) d->cfg.host_disconnect_timeout_s);
                                /* A bound host going dark changes its cluster's
                                 * verdict; once per cluster and batch. */
                                bool seen = !l.v[i].cluster_id;
                                for (size_t k = 0; k < i && !seen; k++)
                                        seen = l.v[k].cluster_id && strcmp(l.v[k].cluster_id, l.v[i].cluster_id) == 0;
                                if (!seen)
                                        (void) refresh_cluster(d, l.v[i].cluster_id, NULL);
                        }
                }
                size_t n = l.n;
                host_list_free(&l);
                if (r <= 0 || n < 500)
                        return r < 0 ? r : total;
        }
}

/* Every second: write the buffered check-ins; every monitor_interval: the
 * disconnect pass (which flushes first, so fresh check-ins count). */
static void *monitor_main(void *arg) {
        struct musterd *d = arg;
        int64_t every = d->cfg.monitor_interval_s > 0 ? d->cfg.monitor_interval_s : 1;
        struct timespec last;
        clock_gettime(CLOCK_MONOTONIC, &last);
        pthread_mutex_lock(&d->lock);
        while (!d->stopping) {
                struct timespec until, now;
                clock_gettime(CLOCK_REALTIME, &until);
                until.tv_sec += 1;
                pthread_cond_timedwait(&d->wake, &d->lock, &until);
                if (d->stopping)
                        break;
                pthread_mutex_unlock(&d->lock);
                clock_gettime(CLOCK_MONOTONIC, &now);
                if (now.tv_sec - last.tv_sec >= every) {
                        last = now;
                        int r = musterd_monitor_pass(d);
                        if (r < 0)
                                log_warning_errno(r, "monitor", "Disconnect check failed: %m");
                        else if (r > 0)
                                log_info("monitor", "%d host(s) marked disconnected", r);
                } else {
                        int r = checkins_flush(d->checkins, d->store);
                        if (r < 0)
                                log_warning_errno(r, "monitor", "Failed to write check-ins: %m");
                }
                pthread_mutex_lock(&d->lock);
        }
        pthread_mutex_unlock(&d->lock);
        return NULL;
}

int musterd_start(struct musterd *d, const struct muster_config *cfg) {
        char path[PATH_MAX];
        int r;

        memset(d, 0, sizeof *d);
        d->cfg = *cfg;
        pthread_mutex_init(&d->lock, NULL);
        pthread_cond_init(&d->wake, NULL);
        if (mkdir(cfg->state_dir, 0700) < 0 && errno != EEXIST)
                return log_error_errno(errno, "musterd", "Failed to create state dir %s: %m", cfg->state_dir);
        if (snprintf(path, sizeof path, "%s/signing-key.pem", cfg->state_dir) >= (int) sizeof path)
                return log_error_errno(ENAMETOOLONG, "musterd", "State dir path is too long: %s", cfg->state_dir);
        if ((r = crypto_key_load_or_create(path, &d->key)) < 0)
                return log_error_errno(r, "musterd", "Failed to load or create the signing key %s: %m", path);
        if ((r = write_admin_token(d, cfg->state_dir)) < 0)
                return log_error_errno(r, "musterd", "Failed to write %s/admin.token: %m", cfg->state_dir);
        if ((cfg->store[0] ? snprintf(path, sizeof path, "%s", cfg->store)
                           : snprintf(path, sizeof path, "sqlite:%s/muster.db", cfg->state_dir)) >= (int) sizeof path)
                return log_error_errno(ENAMETOOLONG, "musterd", "Store path is too long");
        if ((r = store_open(path, &d->store)) < 0)
                return log_error_errno(r, "musterd", "Failed to open store %s: %m", path);
        if ((r = auth_cache_new(&d->auth_cache)) < 0 || (r = checkins_new(&d->checkins)) < 0)
                return log_error_errno(r, "musterd", "Out of memory: %m");
        struct http_server_config hc = {
                .listen = cfg->listen, .threads = 4, .max_body_bytes = (size_t) cfg->max_body_bytes,
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
        auth_cache_free(d->auth_cache);
        store_close(d->store);
        crypto_key_free(d->key);
        pthread_cond_destroy(&d->wake);
        pthread_mutex_destroy(&d->lock);
        memset(d, 0, sizeof *d);
}
