/* musterd's lifetime: state directory, signing key (and its public half
 * for agents), the first admin token, the store, the services, the HTTP
 * server with the API, and the thread that runs the controllers. */
#include <dirent.h>
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
#include "fdio.h"
#include "daemon/controllers.h"
#include "growbuf.h"
#include "jwt.h"
#include "log.h"
#include "daemon/musterd.h"
#include "store/store.h"
#include "yamljson.h"

static int musterd_tls_refresh(struct musterd *d);

/* Write text (and a newline after it when `newline`) to path with `mode`,
 * through path.tmp and a rename: a reader never sees half a file. */
static int musterd_write_file(const char *path, const char *text, bool newline, mode_t mode) {
        _cleanup_free_ char *t = NULL;
        if (asprintf(&t, "%s%s", text, newline ? "\n" : "") < 0)
                return -ENOMEM;
        int r = fd_write_file_atomic(path, t, strlen(t), mode);
        explicit_bzero(t, strlen(t)); /* a token, maybe */
        return r;
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
        struct token_record rec;
        int r = svc_token_issue(&d->svc, ROLE_INFRA_ADMIN, "admin", ADMIN_TOKEN_TTL_S, &token, &rec);
        if (r < 0)
                return r;
        log_info("musterd", "Wrote %s: infra-admin token %s, expires %s", path, rec.id, rec.expires_at);
        token_record_free(&rec);
        return musterd_write_file(path, token, true, 0600);
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
        return musterd_write_file(path, pem, false, 0644);
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
                struct timespec mono;
                clock_gettime(CLOCK_MONOTONIC, &mono);
                if (mono.tv_sec - d->tls_checked >= 3600) {
                        d->tls_checked = mono.tv_sec;
                        (void) musterd_tls_refresh(d);
                }
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

/* The event sink: the services recorded the event; the daemon counts it
 * for /metrics (muster_events_total) and logs it with the ids it is about
 * (a host's registration, status changes, binding, install progress,
 * validations: `journalctl MUSTER_HOST_ID=ID`), its category as the
 * subsystem ("agent", "system", "user", "audit"). */
static void count_event(void *ctx, const struct event *e) {
        struct musterd *d = ctx;
        if ((int) e->severity >= 0 && e->severity < _EVENT_SEVERITY_MAX)
                atomic_fetch_add(&d->events[e->severity], 1);
        struct log_fields f = { .host = e->host_id, .cluster = e->cluster_id, .infra_env = e->infra_env_id };
        const char *sub = event_category_to_string(e->category);
        const char *msg = e->message ? e->message : "";
        sub = sub ? sub : "events";
        if (e->severity == EVENT_INFO)
                log_info_fields(sub, f, "%s", msg);
        else if (e->severity == EVENT_WARNING)
                log_warning_fields(sub, f, "%s", msg);
        else
                log_error_fields(sub, f, "%s", msg);
}

/* The open file descriptors (entries of /proc/self/fd but the one that
 * lists them), or -1. */
static long open_fds(void) {
        DIR *dir = opendir("/proc/self/fd");
        if (!dir)
                return -1;
        long n = 0;
        struct dirent *e;
        while ((e = readdir(dir)))
                if (e->d_name[0] != '.')
                        n++;
        closedir(dir);
        return n - 1;
}

/* What a Prometheus client library exports for a process (its standard
 * process_* names), and muster_build_info. */
static int process_metrics(struct musterd *d, struct growbuf *out, size_t max) {
        struct rusage ru;
        struct rlimit lim;
        long page = sysconf(_SC_PAGESIZE), vsz = 0, rss = 0;
        FILE *f = fopen("/proc/self/statm", "re");
        if (f) {
                if (fscanf(f, "%ld %ld", &vsz, &rss) != 2)
                        vsz = rss = 0;
                fclose(f);
        }
        double cpu = 0;
        if (getrusage(RUSAGE_SELF, &ru) == 0)
                cpu = (double) ru.ru_utime.tv_sec + (double) ru.ru_stime.tv_sec +
                      ((double) ru.ru_utime.tv_usec + (double) ru.ru_stime.tv_usec) / 1e6;
        long long max_fds = getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY ? (long long) lim.rlim_cur
                                                                                                  : -1;
        int r = growbuf_printf(out, max,
                               "# HELP muster_build_info musterd's version, API and store schema (always 1).\n"
                               "# TYPE muster_build_info gauge\n"
                               "muster_build_info{version=\"%s\",api=\"%s\",schema=\"%d\"} 1\n"
                               "# HELP process_start_time_seconds Start time of the process since the epoch.\n"
                               "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %lld\n"
                               "# HELP process_cpu_seconds_total User and system CPU time spent.\n"
                               "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %.3f\n"
                               "# HELP process_resident_memory_bytes Resident memory size.\n"
                               "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes %lld\n"
                               "# HELP process_virtual_memory_bytes Virtual memory size.\n"
                               "# TYPE process_virtual_memory_bytes gauge\nprocess_virtual_memory_bytes %lld\n"
                               "# HELP process_open_fds Open file descriptors.\n"
                               "# TYPE process_open_fds gauge\nprocess_open_fds %ld\n",
                               MUSTER_VERSION, MUSTER_API_VERSION, store_schema_version_built(),
                               (long long) d->started_at, cpu, (long long) rss * page, (long long) vsz * page,
                               open_fds());
        if (r == 0 && max_fds >= 0)
                r = growbuf_printf(out, max,
                                   "# HELP process_max_fds Maximum number of open file descriptors.\n"
                                   "# TYPE process_max_fds gauge\nprocess_max_fds %lld\n",
                                   max_fds);
        return r;
}

/* The daemon's part of /metrics: the controllers, the events counted, the
 * certificate's expiry, the build and the process. */
static int daemon_metrics(void *ctx, struct growbuf *out, size_t max) {
        struct musterd *d = ctx;
        int r = controllers_metrics(d, out, max);
        if (r == 0)
                r = growbuf_printf(out, max, "# HELP muster_events_total Events recorded since start, by severity.\n"
                                             "# TYPE muster_events_total counter\n");
        for (int i = 0; r == 0 && i < _EVENT_SEVERITY_MAX; i++)
                r = growbuf_printf(out, max, "muster_events_total{severity=\"%s\"} %llu\n",
                                   event_severity_to_string((enum event_severity) i),
                                   (unsigned long long) atomic_load(&d->events[i]));
        int64_t until = atomic_load(&d->tls_not_after);
        if (r == 0 && until > 0)
                r = growbuf_printf(out, max,
                                   "# HELP muster_tls_cert_expiry_timestamp_seconds When the certificate musterd "
                                   "serves HTTPS with expires (seconds since the epoch).\n"
                                   "# TYPE muster_tls_cert_expiry_timestamp_seconds gauge\n"
                                   "muster_tls_cert_expiry_timestamp_seconds %lld\n",
                                   (long long) until);
        if (r == 0)
                r = process_metrics(d, out, max);
        return r;
}

static void format_until(int64_t at, char out[32]) {
        time_t t = (time_t) at;
        struct tm tm;
        strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
}

/* HTTPS: load or issue the certificate again (tls.h: an operator's files
 * are read again, musterd's own is issued again when it misses a name or
 * expires within 30 days) and present it from the next handshake on when
 * it changed. 1 when it did, 0 when it is the same (or plain HTTP),
 * -errno (logged; the one served stays). A reload and an hourly check in
 * the monitor thread run it. */
static int musterd_tls_refresh(struct musterd *d) {
        const struct muster_config *cfg = svc_cfg(&d->svc); /* its TLS settings are the running ones */
        struct daemon_tls next;
        char err[1024], until[32];
        if (cfg->insecure_http || !d->api.http)
                return 0;
        pthread_mutex_lock(&d->tls_lock);
        int r = daemon_tls_setup(cfg, (int64_t) time(NULL), &next, err, sizeof err);
        if (r < 0)
                log_warning_errno(r, "musterd", "HTTPS: checking the certificate failed, the one served stays: %s", err);
        else if (d->tls.pair.cert_pem && strcmp(next.pair.cert_pem, d->tls.pair.cert_pem) == 0)
                r = 0;
        else if ((r = http_server_set_certificate(d->api.http, next.pair.cert_pem, next.pair.key_pem)) < 0)
                log_warning_errno(r, "musterd", "HTTPS: the new certificate cannot be used, the one served stays: %m");
        else {
                format_until(next.not_after, until);
                log_info("musterd", "HTTPS: serving a %s certificate from now on (expires %s)",
                         next.own ? "replaced" : "renewed", until);
                daemon_tls_free(&d->tls);
                d->tls = next;
                next = (struct daemon_tls) { 0 };
                atomic_store(&d->tls_not_after, d->tls.not_after);
                r = 1;
        }
        daemon_tls_free(&next);
        pthread_mutex_unlock(&d->tls_lock);
        return r;
}

/* HTTPS unless [server] insecure_http (--insecure-http): the operator's
 * certificate or one from musterd's own CA (tls.h). */
static int start_tls(struct musterd *d, const struct muster_config *cfg) {
        char err[1024];
        if (cfg->insecure_http) {
                log_warning("musterd", "Serving plain HTTP (--insecure-http): admin and agent tokens, pull secrets and "
                            "payloads cross the network unencrypted; for a lab only");
                return 0;
        }
        int r = daemon_tls_setup(cfg, (int64_t) time(NULL), &d->tls, err, sizeof err);
        if (r < 0)
                return log_error_errno(r, "musterd", "HTTPS: %s", err);
        char until[32];
        format_until(d->tls.not_after, until);
        atomic_store(&d->tls_not_after, d->tls.not_after);
        struct timespec mono;
        clock_gettime(CLOCK_MONOTONIC, &mono);
        d->tls_checked = mono.tv_sec;
        snprintf(d->svc.tls_ca_file, sizeof d->svc.tls_ca_file, "%s", d->tls.ca_path);
        if (d->tls.own)
                log_info("musterd", "HTTPS with %s (expires %s)", cfg->tls_cert, until);
        else
                log_info("musterd", "HTTPS with a certificate from musterd's CA %s (%s, expires %s, %zu names)",
                         d->tls.ca_path, d->tls.issued ? "issued now" : "kept", until, d->tls.names.n);
        return 0;
}

/* The state dir holds the signing key, admin.token and the TLS CA: made
 * 0700, and one more open than that is closed again (ours) with a warning,
 * or refused (another user's, or not a folder). 0 or -errno, logged. */
static int state_dir_private(const char *dir) {
        struct stat st;
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return log_error_errno(errno, "musterd", "Failed to create state dir %s: %m", dir);
        if (stat(dir, &st) < 0)
                return log_error_errno(errno, "musterd", "Failed to read state dir %s: %m", dir);
        if (!S_ISDIR(st.st_mode))
                return log_error_errno(ENOTDIR, "musterd", "State dir %s is not a folder", dir);
        if (!(st.st_mode & 077))
                return 0;
        if (st.st_uid != geteuid())
                return log_error_errno(EPERM, "musterd",
                                       "State dir %s is mode %04o and another user's (uid %u): it holds the signing "
                                       "key and admin.token; make it 0700 and this user's",
                                       dir, (unsigned) (st.st_mode & 07777), (unsigned) st.st_uid);
        if (chmod(dir, st.st_mode & 07700) < 0)
                return log_error_errno(errno, "musterd", "Failed to make state dir %s private (chmod): %m", dir);
        log_warning("musterd", "State dir %s was mode %04o: made it %04o (it holds the signing key and admin.token)",
                    dir, (unsigned) (st.st_mode & 07777), (unsigned) (st.st_mode & 07700));
        return 0;
}

/* The document is larger than any the API will need; a bound all the same. */
#define OPENAPI_MAX_BYTES (4u << 20)

/* [server] openapi_file and its JSON, made once here for every answer. Not
 * fatal: without it musterd serves all else, and the two routes say 404. */
static void load_openapi(struct musterd *d, const char *path) {
        char err[256];
        size_t len = 0;
        int r;
        if (!*path)
                return;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT) /* not installed: a build tree's musterd */
                log_info("musterd", "No OpenAPI document at %s: GET %s and %s answer 404", path,
                         MUSTER_API_PREFIX MUSTER_PATH_OPENAPI_JSON, MUSTER_API_PREFIX MUSTER_PATH_OPENAPI_YAML);
        if (fd < 0) {
                if (errno != ENOENT)
                        log_warning_errno(errno, "musterd", "Cannot read the OpenAPI document %s (not served): %m",
                                          path);
                return;
        }
        if ((r = fd_read_all(fd, 0, OPENAPI_MAX_BYTES, &d->openapi_yaml, &len)) < 0) {
                log_warning_errno(r, "musterd", "Cannot read the OpenAPI document %s (not served): %m", path);
                return;
        }
        json_object *doc = NULL;
        if ((r = yamljson_parse(d->openapi_yaml, len, &doc, err, sizeof err)) < 0 ||
            !(d->openapi_json = strdup(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN |
                                                                               JSON_C_TO_STRING_NOSLASHESCAPE)))) {
                if (r < 0)
                        log_warning("musterd", "The OpenAPI document %s is not served: %s", path, err);
                else
                        log_warning("musterd", "The OpenAPI document %s is not served: out of memory", path);
                free(d->openapi_yaml);
                d->openapi_yaml = NULL;
        }
        json_object_put(doc);
}

int musterd_start(struct musterd *d, const struct muster_config *cfg) {
        char path[PATH_MAX];
        int r;

        memset(d, 0, sizeof *d);
        d->started_at = (int64_t) time(NULL);
        atomic_init(&d->controllers.leader, -1);
        pthread_mutex_init(&d->lock, NULL);
        pthread_mutex_init(&d->tls_lock, NULL);
        pthread_cond_init(&d->wake, NULL);
        if ((r = state_dir_private(cfg->state_dir)) < 0)
                return r;
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
        if ((r = svc_init(&d->svc, d->store, d->key, cfg)) < 0)
                return log_error_errno(r, "musterd", "Out of memory: %m");
        d->svc_ready = true;
        d->svc.sink = (struct svc_event_sink) { count_event, d };
        cfg = svc_cfg(&d->svc); /* the server keeps pointers into it (listen) */
        if ((r = write_admin_token(d, cfg->state_dir)) < 0)
                return log_error_errno(r, "musterd", "Failed to write %s/admin.token: %m", cfg->state_dir);
        raise_file_limit();
        if ((r = start_tls(d, cfg)) < 0)
                return r;
        d->api = (struct api) { .svc = &d->svc, .metrics = daemon_metrics, .metrics_ctx = d,
                                .insecure_http = cfg->insecure_http };
        load_openapi(d, cfg->openapi_file);
        d->api.openapi_yaml = d->openapi_yaml;
        d->api.openapi_json = d->openapi_json;
        struct http_server_config hc = {
                .listen = cfg->listen, .threads = (unsigned) cfg->threads, .max_body_bytes = (size_t) cfg->max_body_bytes,
                .max_large_body_bytes = (size_t) cfg->max_release_bytes,
                .max_upload_bytes = (size_t) cfg->logs_max_upload_bytes,
                .max_body_memory = (size_t) cfg->max_body_memory,
                .max_connections_per_address = (unsigned) cfg->max_connections_per_address,
                .header_timeout_s = (unsigned) cfg->header_timeout_s,
                .routes = api_routes, .n_routes = api_n_routes, .auth = api_auth,
                .auth_free = api_auth_free, .after = api_after, .app = &d->api,
                .tls_cert_pem = d->tls.pair.cert_pem, .tls_key_pem = d->tls.pair.key_pem,
                .tls_priorities = cfg->tls_priorities,
        };
        /* api.http is set before the first request can arrive. */
        if ((r = http_server_start(&hc, &d->api.http)) < 0)
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
        http_server_stop(d->api.http);
        if (d->svc_ready) {
                int r = svc_flush_all_checkins(&d->svc);
                if (r < 0)
                        log_warning_errno(r, "musterd", "Failed to write the last check-ins: %m");
                svc_fini(&d->svc);
        }
        store_close(d->store);
        crypto_key_free(d->key);
        daemon_tls_free(&d->tls);
        free(d->openapi_yaml);
        free(d->openapi_json);
        pthread_mutex_destroy(&d->tls_lock);
        pthread_cond_destroy(&d->wake);
        pthread_mutex_destroy(&d->lock);
        memset(d, 0, sizeof *d);
}

int musterd_reload(struct musterd *d, const struct muster_config *next) {
        int n = svc_config_publish(&d->svc, next);
        if (n >= 0 && d->api.http)
                http_server_set_header_timeout(d->api.http, (unsigned) svc_cfg(&d->svc)->header_timeout_s);
        if (n >= 0)
                (void) musterd_tls_refresh(d); /* a certificate due for renewal, or the operator's replaced */
        return n;
}
