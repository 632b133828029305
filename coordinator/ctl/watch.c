/* `musterctl cluster watch`: an install as it goes. Polls the cluster and
 * its hosts, redraws a block (a terminal) or prints one per change (a pipe
 * or file), and ends with the outcome: 0 installed, 1 error, an install
 * that stopped before it finished (back to insufficient or ready), timeout or
 * interrupted. The block is built by a pure function the unit tests call. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "ctl.h"
#include "json-cleanup.h"
#include "protocol.h"

#define BAR_WIDTH 20
#define MAX_TIMEOUT (7 * 24 * 3600.0)

static const char *hostname_of(json_object *h) {
        return ctl_jstr(h, "hostname") ?: ctl_jstr(h, "requested_hostname") ?: ctl_jstr(h, "inventory.hostname");
}

int ctl_watch_outcome(json_object *cluster, bool *started) {
        static const char *const running[] = { "preparing-for-installation", "installing", "finalizing" };
        static const char *const before[] = { "pending-for-input", "insufficient", "ready" };
        const char *st = ctl_jstr(cluster, "status") ?: "";
        if (strcmp(st, "installed") == 0)
                return 1;
        if (strcmp(st, "error") == 0)
                return -1;
        for (size_t i = 0; i < sizeof running / sizeof *running; i++)
                if (strcmp(st, running[i]) == 0)
                        *started = true;
        for (size_t i = 0; i < sizeof before / sizeof *before; i++)
                if (*started && strcmp(st, before[i]) == 0)
                        return -1; /* it fell back: the install stopped (a host failed a check, a cancel) */
        return 0;
}

char *ctl_watch_render(json_object *cluster, json_object *hosts, const struct ctl_fmt *f) {
        static const struct ctl_col cols[] = {
                /* The status and stage say the most: the hostname gives way
                 * first, then the role goes. */
                { "HOSTNAME", CTL_COL_FLEX, 0, 8 },
                { "ROLE", 0, 1, 0 },
                { "STATUS", CTL_COL_FLEX, 0, 22 },
                { "STAGE", 0, 0, 15 }, /* "writing-payload" */
                { "PROGRESS", 0, 0, BAR_WIDTH + 6 },
                { "ID", CTL_COL_WIDE | CTL_COL_ID, 0, 0 },
                { "STATUS-INFO", CTL_COL_WIDE, 0, 0 },
        };
        size_t n = ctl_jlen(hosts), done = 0;
        struct ctl_table t;
        int r = 0;
        ctl_table_init(&t, cols, sizeof cols / sizeof *cols);
        for (size_t i = 0; i < n && r == 0; i++) {
                json_object *h = json_object_array_get_idx(hosts, i);
                const char *st = ctl_jstr(h, "status") ?: "";
                char bar[64] = "";
                bool installed = strcmp(st, "installed") == 0;
                done += installed;
                if (ctl_jget(h, "progress.percent"))
                        ctl_progress_bar((int) ctl_jint(h, "progress.percent", 0), BAR_WIDTH, bar, sizeof bar);
                else if (installed)
                        ctl_progress_bar(100, BAR_WIDTH, bar, sizeof bar);
                const char *row[] = { hostname_of(h), ctl_jstr(h, "role"), st, ctl_jstr(h, "progress.stage"), bar,
                                      ctl_jstr(h, "id"), ctl_jstr(h, "status_info") };
                r = ctl_table_add(&t, row);
        }
        if (r < 0) {
                ctl_table_free(&t);
                return NULL;
        }
        char count[64];
        snprintf(count, sizeof count, "%zu of %zu", done, n);
        struct ctl_kv kv = { 0 };
        ctl_kv_add(&kv, "Cluster", ctl_jstr(cluster, "name") ?: ctl_jstr(cluster, "id") ?: "?", 0);
        ctl_kv_add(&kv, "Status", ctl_jstr(cluster, "status") ?: "?", 0);
        ctl_kv_add(&kv, "Status info", ctl_jstr(cluster, "status_info"), 0);
        ctl_kv_add(&kv, "Hosts installed", count, 0);
        char *head = ctl_kv_render(&kv, f), *table = ctl_table_render(&t, f), *out = NULL;
        ctl_kv_free(&kv);
        ctl_table_free(&t);
        if (head && table && asprintf(&out, "%s%s", head, n ? table : "No hosts are bound to the cluster.\n") < 0)
                out = NULL;
        free(head);
        free(table);
        return out;
}

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* The cluster and its hosts now. 0, -EIO/-ETIMEDOUT when musterd is not
 * reachable (quiet), other <0 printed. */
static int poll_once(struct ctl *c, const char *cpath, const char *hpath, json_object **cl, json_object **hosts) {
        struct ctl_reply r;
        int k = ctl_call_object(c, "GET", cpath, NULL, &r);
        if (k < 0) {
                ctl_reply_free(&r);
                return k;
        }
        k = ctl_get_list(c, hpath, true, hosts, NULL);
        if (k < 0) {
                ctl_reply_free(&r);
                return k;
        }
        *cl = json_object_get(r.json);
        ctl_reply_free(&r);
        return 0;
}

/* The failing hosts' words, after an install failed. */
static void tell_failure(json_object *cl, json_object *hosts) {
        _cleanup_free_ char *name = ctl_text_sanitize(ctl_jstr(cl, "name") ?: ctl_jstr(cl, "id") ?: "?");
        _cleanup_free_ char *info = ctl_text_sanitize(ctl_jstr(cl, "status_info") ?: "no reason given");
        ctl_fail("cluster %s failed: %s", name ?: "", info ?: "");
        size_t n = ctl_jlen(hosts);
        for (size_t i = 0; i < n; i++) {
                json_object *h = json_object_array_get_idx(hosts, i);
                const char *st = ctl_jstr(h, "status") ?: "";
                if (strcmp(st, "error") != 0 && strcmp(st, "insufficient") != 0)
                        continue;
                _cleanup_free_ char *hn = ctl_text_sanitize(hostname_of(h) ?: ctl_jstr(h, "id") ?: "?");
                _cleanup_free_ char *hi = ctl_text_sanitize(ctl_jstr(h, "status_info") ?: "no reason given");
                fprintf(stderr, "  host %s: %s\n", hn ?: "", hi ?: "");
        }
}

/* The options into *interval and *timeout, and the one CLUSTER. true to go
 * on; false with *rc the exit status (0 after --help). */
static bool parse_options(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, double *interval,
                          double *timeout, int *rc) {
        enum { O_INTERVAL = CTL_OPT_FIRST_LOCAL, O_TIMEOUT };
        static const struct option opts[] = {
                { "interval", required_argument, NULL, O_INTERVAL },
                { "timeout", required_argument, NULL, O_TIMEOUT },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        int o;
        *rc = CTL_EXIT_USAGE;
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                switch (o) {
                case CTL_OPT_HELP: *rc = CTL_EXIT_OK; return false;
                case CTL_OPT_BAD: return false;
                case O_INTERVAL:
                        if (ctl_opt_interval(cmd, optarg, interval))
                                return false;
                        break;
                case O_TIMEOUT:
                        if (ctl_parse_duration(optarg, MAX_TIMEOUT, timeout) < 0) {
                                ctl_usage_error(cmd, "--timeout needs a duration (90, 90s, 10m, 2h; at most a week), "
                                                "not \"%s\"", optarg);
                                return false;
                        }
                        break;
                default: return false;
                }
        }
        *rc = ctl_want_args(cmd, argc, argv, 1, "CLUSTER");
        return *rc == 0;
}

/* One watch of one cluster. */
struct watch {
        struct ctl *c;
        const char *id;    /* the cluster's */
        bool tty;          /* redraw in place */
        bool first;        /* nothing shown yet */
        char *shown;       /* the text last shown (owned) */
        bool started;      /* an install was seen running */
};

/* What is shown of the cluster and its hosts: one line of JSON with -o
 * json, else the block. malloc'd, NULL on ENOMEM. */
static char *watch_text(struct ctl *c, json_object *cl, json_object *hosts) {
        if (c->output != CTL_OUT_JSON)
                return ctl_watch_render(cl, hosts, &c->fmt);
        json_object *both = json_object_new_object();
        char *text = NULL;
        if (both) {
                json_object_object_add(both, "cluster", json_object_get(cl));
                json_object_object_add(both, "hosts", json_object_get(hosts));
                const char *s = json_object_to_json_string_ext(both, JSON_C_TO_STRING_PLAIN |
                                                                             JSON_C_TO_STRING_NOSLASHESCAPE);
                text = s ? strdup(s) : NULL;
                json_object_put(both);
        }
        return text;
}

/* Show the cluster and its hosts when they look other than last time: in
 * place on a terminal, else after a blank line. 0, or CTL_EXIT_FAIL. */
static int show(struct watch *w, json_object *cl, json_object *hosts) {
        struct ctl *c = w->c;
        _cleanup_free_ char *text = watch_text(c, cl, hosts);
        if (!text)
                return ctl_fail("out of memory");
        if (w->shown && strcmp(w->shown, text) == 0)
                return 0;
        if (w->tty)
                fputs("\033[H\033[J", stdout);
        else if (!w->first && c->output != CTL_OUT_JSON)
                fputs("\n", stdout);
        fputs(text, stdout);
        if (c->output == CTL_OUT_JSON)
                fputs("\n", stdout);
        fflush(stdout);
        free(w->shown);
        w->shown = TAKE_PTR(text);
        w->first = false;
        return 0;
}

/* One answer of musterd shown and judged: -1 to keep watching, else the
 * exit status (the install's outcome, told). */
static int look(struct watch *w, json_object *cl, json_object *hosts) {
        if (show(w, cl, hosts))
                return CTL_EXIT_FAIL;
        int outcome = ctl_watch_outcome(cl, &w->started);
        if (outcome > 0) {
                _cleanup_free_ char *name = ctl_text_sanitize(ctl_jstr(cl, "name") ?: w->id);
                if (w->c->output != CTL_OUT_JSON)
                        printf("cluster %s is installed\n", name ?: w->id);
                return CTL_EXIT_OK;
        }
        if (outcome < 0) {
                tell_failure(cl, hosts);
                return CTL_EXIT_FAIL;
        }
        return -1;
}

/* Poll every `interval` seconds until the outcome, `timeout` (0: never) or
 * a signal; quiet while musterd cannot be reached. The exit status. */
static int watch_loop(struct watch *w, const char *cpath, const char *hpath, double interval, double timeout,
                      const char *arg) {
        struct ctl *c = w->c;
        bool unreachable = false;
        double deadline = timeout > 0 ? now() + timeout : 0;
        c->quiet_unreachable = true;
        for (;;) {
                _cleanup_json_ json_object *cl = NULL;
                _cleanup_json_ json_object *hosts = NULL;
                int k = poll_once(c, cpath, hpath, &cl, &hosts);
                if (k == -EINTR || ctl_stop)
                        return ctl_fail("interrupted");
                if (k == -EIO || k == -ETIMEDOUT)
                        ctl_still_trying(c, &unreachable);
                else if (k < 0)
                        return CTL_EXIT_FAIL;
                else {
                        unreachable = false;
                        int rc = look(w, cl, hosts);
                        if (rc >= 0)
                                return rc;
                }
                double left = deadline > 0 ? deadline - now() : interval;
                if (left <= 0) {
                        const char *st = cl ? ctl_jstr(cl, "status") : NULL;
                        return ctl_fail("cluster %s is still %s after %gs", arg, st ?: "not answering", timeout);
                }
                ctl_nap(left < interval ? left : interval);
                if (ctl_stop)
                        return ctl_fail("interrupted");
        }
}

int ctl_cluster_watch(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        double interval = 2, timeout = 0;
        int rc;
        if (!parse_options(c, cmd, argc, argv, &interval, &timeout, &rc))
                return rc;
        _cleanup_free_ char *id = ctl_lookup_cluster(c, argv[optind]), *cpath = NULL, *hpath = NULL;
        if (!id)
                return CTL_EXIT_FAIL;
        if (asprintf(&cpath, MUSTER_PATH_CLUSTER("%s"), id) < 0 || asprintf(&hpath, MUSTER_PATH_HOSTS "?cluster_id=%s", id) < 0)
                return ctl_fail("out of memory");

        ctl_catch_stop(NULL, NULL);
        struct watch w = {
                .c = c,
                .id = id,
                .tty = isatty(STDOUT_FILENO) && c->output != CTL_OUT_JSON,
                .first = true,
        };
        rc = watch_loop(&w, cpath, hpath, interval, timeout, argv[optind]);
        free(w.shown);
        return rc;
}
