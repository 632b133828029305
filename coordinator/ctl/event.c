/* `musterctl event list [--follow]`: the event log, oldest first. The API
 * pages forward with since_id, so the newest N are found by reading to the
 * end; --follow then polls with the last id seen until SIGINT/SIGTERM. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "ctl.h"
#include "json-cleanup.h"
#include "model.h"
#include "protocol.h"
#include "uuid.h"

#define EVENT_PAGE "1000" /* rows asked for per request, when the server allows it */

static const struct ctl_col cols[] = {
        { "ID", CTL_COL_WIDE | CTL_COL_RIGHT, 0, 0 },
        { "TIME", 0, 0, 19 },
        { "SEVERITY", 0, 0, 8 },
        { "CATEGORY", CTL_COL_WIDE, 0, 8 },
        { "INFRA-ENV", CTL_COL_WIDE | CTL_COL_ID, 0, 36 },
        { "CLUSTER", CTL_COL_WIDE | CTL_COL_ID, 0, 36 },
        { "HOST", CTL_COL_WIDE | CTL_COL_ID, 0, 36 },
        { "MESSAGE", CTL_COL_FLEX, 0, 20 },
};

struct follow {
        struct ctl *c;
        char *base;          /* "/events?filters" */
        bool paged;          /* the server took limit=EVENT_PAGE */
        int64_t last_id;
        bool header_done;
};

/* Every event after f->last_id (all pages) appended to rows, keeping only
 * the last `keep` (0: all). 0 or <0 (printed, or -EINTR). */
static int fetch(struct follow *f, json_object *rows, size_t keep) {
        for (unsigned page = 0; page < CTL_MAX_PAGES;) {
                _cleanup_free_ char *path = NULL;
                if (asprintf(&path, "%s%ssince_id=%lld%s", f->base, strchr(f->base, '?') ? "&" : "?",
                             (long long) f->last_id, f->paged ? "&limit=" EVENT_PAGE : "") < 0) {
                        path = NULL;
                        ctl_fail("out of memory");
                        return -ENOMEM;
                }
                struct ctl_reply r;
                int k = ctl_request(f->c, "GET", path, NULL, &r);
                if (k == 0 && f->paged && r.status == 400 && strstr(ctl_jstr(r.json, "reason") ?: "", "limit")) {
                        /* A server configured with smaller pages: use its default size. */
                        ctl_reply_free(&r);
                        f->paged = false;
                        continue;
                }
                k = ctl_report(f->c, "GET", path, k, &r);
                if (k == 0 && (!r.json || !json_object_is_type(r.json, json_type_array))) {
                        ctl_fail("GET %s: the reply is not a JSON array", path);
                        k = -EBADMSG;
                }
                if (k < 0) {
                        ctl_reply_free(&r);
                        return k;
                }
                size_t n = json_object_array_length(r.json);
                int64_t before = f->last_id;
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(r.json, i);
                        int64_t id = ctl_jint(e, "id", 0);
                        if (id <= f->last_id)
                                continue; /* never twice, whatever the server does */
                        f->last_id = id;
                        json_object_array_add(rows, json_object_get(e));
                }
                ctl_reply_free(&r);
                size_t have = json_object_array_length(rows);
                if (keep && have > keep)
                        json_object_array_del_idx(rows, 0, have - keep);
                if (n == 0 || f->last_id == before)
                        return 0;
                page++;
        }
        return 0;
}

static int print_events(struct follow *f, json_object *rows, bool follow) {
        struct ctl *c = f->c;
        size_t n = json_object_array_length(rows);
        if (c->output == CTL_OUT_JSON) {
                if (!follow)
                        return ctl_print_json(rows);
                /* Following: one event per line, as it comes. */
                for (size_t i = 0; i < n; i++)
                        puts(json_object_to_json_string_ext(json_object_array_get_idx(rows, i),
                                                            JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
                return CTL_EXIT_OK;
        }
        if (n == 0 && f->header_done)
                return CTL_EXIT_OK;
        struct ctl_table t;
        int r = 0;
        ctl_table_init(&t, cols, sizeof cols / sizeof *cols);
        for (size_t i = 0; i < n && r == 0; i++) {
                json_object *e = json_object_array_get_idx(rows, i);
                char when[32];
                const char *row[] = {
                        ctl_jstr(e, "id"), ctl_time(ctl_jstr(e, "time"), when, sizeof when), ctl_jstr(e, "severity"),
                        ctl_jstr(e, "category"), ctl_jstr(e, "infra_env_id"), ctl_jstr(e, "cluster_id"),
                        ctl_jstr(e, "host_id"), ctl_jstr(e, "message"),
                };
                r = ctl_table_add(&t, row);
        }
        if (r < 0) {
                ctl_table_free(&t);
                return ctl_fail("out of memory");
        }
        struct ctl_fmt fmt = c->fmt;
        fmt.no_header = f->header_done;
        char *s = ctl_table_render(&t, &fmt);
        ctl_table_free(&t);
        if (!s)
                return ctl_fail("out of memory");
        fputs(s, stdout);
        free(s);
        f->header_done = true;
        return CTL_EXIT_OK;
}

/* What `event list` was asked for. */
struct event_opts {
        const char *ie, *cluster, *host, *sev, *cat; /* as given */
        long limit;
        double interval;
        bool follow;
};

/* The options, and no argument. true to go on; false with *rc the exit
 * status (0 after --help). */
static bool parse_options(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, struct event_opts *eo,
                          int *rc) {
        enum { O_IE = CTL_OPT_FIRST_LOCAL, O_CLUSTER, O_HOST, O_SEV, O_LIMIT, O_FOLLOW, O_INTERVAL, O_CAT };
        static const struct option opts[] = {
                { "infra-env", required_argument, NULL, O_IE },
                { "cluster", required_argument, NULL, O_CLUSTER },
                { "host", required_argument, NULL, O_HOST },
                { "severity", required_argument, NULL, O_SEV },
                { "category", required_argument, NULL, O_CAT },
                { "limit", required_argument, NULL, O_LIMIT },
                { "follow", no_argument, NULL, O_FOLLOW },
                { "interval", required_argument, NULL, O_INTERVAL },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        int o;
        *rc = CTL_EXIT_USAGE;
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                switch (o) {
                case CTL_OPT_HELP: *rc = CTL_EXIT_OK; return false;
                case CTL_OPT_BAD: return false;
                case O_IE: eo->ie = optarg; break;
                case O_CLUSTER: eo->cluster = optarg; break;
                case O_HOST: eo->host = optarg; break;
                case O_SEV:
                        if (event_severity_from_string(optarg) == _EVENT_SEVERITY_INVALID) {
                                *rc = ctl_usage_error(cmd, "--severity takes info, warning, error or critical, "
                                                      "not \"%s\"", optarg);
                                return false;
                        }
                        eo->sev = optarg;
                        break;
                case O_CAT:
                        if (event_category_from_string(optarg) == _EVENT_CATEGORY_INVALID) {
                                *rc = ctl_usage_error(cmd, "--category takes user, system, agent or audit, not \"%s\"",
                                                      optarg);
                                return false;
                        }
                        eo->cat = optarg;
                        break;
                case O_LIMIT:
                        if (ctl_opt_limit(cmd, optarg, 1000000, &eo->limit))
                                return false;
                        break;
                case O_FOLLOW: eo->follow = true; break;
                case O_INTERVAL:
                        if (ctl_opt_interval(cmd, optarg, &eo->interval))
                                return false;
                        break;
                default: return false;
                }
        }
        *rc = ctl_want_args(cmd, argc, argv, 0, "");
        return *rc == 0;
}

/* "/events?filters": the infra-env, cluster and host looked up, their ids
 * and the severity in the query (malloc'd). NULL with a message printed. */
static char *events_path(struct ctl *c, const struct event_opts *eo) {
        _cleanup_free_ char *ie_id = NULL, *cluster_id = NULL, *host_id = NULL, *host_ie = NULL;
        char *base;
        if (eo->ie && !(ie_id = ctl_lookup_infra_env(c, eo->ie)))
                return NULL;
        if (eo->cluster && !(cluster_id = ctl_lookup_cluster(c, eo->cluster)))
                return NULL;
        if (eo->host) {
                char id[UUID_STR_LEN];
                /* Events outlive their host: a full id needs no lookup. */
                if (uuid_normalize(eo->host, id) == 0)
                        host_id = strdup(id);
                else if (ctl_lookup_host(c, eo->host, &host_ie, &host_id) < 0)
                        return NULL;
                if (!host_id) {
                        ctl_fail("out of memory");
                        return NULL;
                }
        }
        struct ctl_query q = { 0 };
        ctl_query_add(&q, "infra_env_id", ie_id);
        ctl_query_add(&q, "cluster_id", cluster_id);
        ctl_query_add(&q, "host_id", host_id);
        ctl_query_add(&q, "severity", eo->sev);
        ctl_query_add(&q, "category", eo->cat);
        if (q.overflow || asprintf(&base, MUSTER_PATH_EVENTS "%s", q.buf) < 0) {
                ctl_fail("out of memory");
                return NULL;
        }
        return base;
}

/* --follow after the first rows: new events every `interval` seconds until
 * SIGINT/SIGTERM. Keeps following through a restart of musterd; stops on
 * what it refuses. The exit status. */
static int follow_events(struct follow *f, double interval) {
        struct ctl *c = f->c;
        bool unreachable = false;
        c->quiet_unreachable = true;
        while (!ctl_stop) {
                ctl_nap(interval);
                if (ctl_stop)
                        break;
                json_object *fresh = json_object_new_array();
                if (!fresh)
                        return ctl_fail("out of memory");
                int k = fetch(f, fresh, 0);
                int r = print_events(f, fresh, true); /* what came before a failure too */
                json_object_put(fresh);
                if (k == -EINTR)
                        break;
                if (k == -EIO || k == -ETIMEDOUT) {
                        ctl_still_trying(c, &unreachable);
                        continue;
                }
                unreachable = false;
                if (k < 0 || r != CTL_EXIT_OK)
                        return CTL_EXIT_FAIL;
                fflush(stdout);
        }
        return CTL_EXIT_OK;
}

int ctl_event_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        struct event_opts eo = { .limit = 100, .interval = 1 };
        int rc;
        if (!parse_options(c, cmd, argc, argv, &eo, &rc))
                return rc;
        _cleanup_free_ char *base = events_path(c, &eo);
        if (!base)
                return CTL_EXIT_FAIL;

        struct follow f = { .c = c, .base = base, .paged = true };
        if (eo.follow) {
                /* Set before the first request so an early signal is not lost. */
                ctl_catch_stop(NULL, NULL);
                sigset_t ss;
                sigemptyset(&ss);
                sigaddset(&ss, SIGINT);
                sigaddset(&ss, SIGTERM);
                sigprocmask(SIG_UNBLOCK, &ss, NULL);
        }
        _cleanup_json_ json_object *rows = json_object_new_array();
        if (!rows)
                return ctl_fail("out of memory");
        int k = fetch(&f, rows, (size_t) eo.limit);
        if (k == -EINTR)
                return CTL_EXIT_OK;
        if (k < 0)
                return CTL_EXIT_FAIL;
        int r = print_events(&f, rows, eo.follow);
        if (!eo.follow || r != CTL_EXIT_OK)
                return r;
        fflush(stdout);
        return follow_events(&f, eo.interval);
}
