/* `musterctl wait host|cluster NAME --for FIELD=VALUE`, after kubectl wait
 * --for=jsonpath='{.status}'=installed: the object polled until the field
 * reads VALUE (0, "KIND/ID condition met"), or --timeout (1, naming the
 * last value seen); not found is 3, musterd unreachable 4. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "ctl.h"
#include "json-cleanup.h"
#include "protocol.h"
#include "waitfor.h"

#define WAIT_DEFAULT_TIMEOUT 30.0 /* kubectl wait's */
#define WAIT_MAX_TIMEOUT (7 * 24 * 3600.0)

static double mono_now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

struct wait_args {
        struct waitfor cond;
        bool have_cond;
        double timeout, interval;
};

/* The options into a, then KIND and NAME. true to go on; false with *rc the
 * exit status (0 after --help). */
static bool parse_args(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, struct wait_args *a,
                       int *rc) {
        enum { O_FOR = CTL_OPT_FIRST_LOCAL, O_TIMEOUT, O_INTERVAL };
        static const struct option opts[] = {
                { "for", required_argument, NULL, O_FOR },
                { "timeout", required_argument, NULL, O_TIMEOUT },
                { "interval", required_argument, NULL, O_INTERVAL },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        char why[512];
        int o;
        *rc = CTL_EXIT_USAGE;
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                switch (o) {
                case CTL_OPT_HELP: *rc = CTL_EXIT_OK; return false;
                case CTL_OPT_BAD: return false;
                case O_FOR: {
                        struct waitfor w;
                        int k = waitfor_parse(optarg, &w, why, sizeof why);
                        if (k == -ENOMEM) {
                                *rc = ctl_fail("out of memory");
                                return false;
                        }
                        if (k < 0) {
                                ctl_usage_error(cmd, "%s", why);
                                return false;
                        }
                        waitfor_free(&a->cond);
                        a->cond = w;
                        a->have_cond = true;
                        break;
                }
                case O_TIMEOUT:
                        if (ctl_parse_duration(optarg, WAIT_MAX_TIMEOUT, &a->timeout) < 0 || a->timeout <= 0) {
                                ctl_usage_error(cmd, "--timeout needs a duration (30, 30s, 10m, 2h; at most a "
                                                "week), not \"%s\"", optarg);
                                return false;
                        }
                        break;
                case O_INTERVAL:
                        if (ctl_opt_interval(cmd, optarg, &a->interval))
                                return false;
                        break;
                default: return false;
                }
        }
        if ((*rc = ctl_want_args(cmd, argc, argv, 2, "host|cluster NAME")))
                return false;
        const char *kind = argv[optind];
        if (strcmp(kind, "host") != 0 && strcmp(kind, "cluster") != 0) {
                *rc = ctl_usage_error(cmd, "wait for a host or a cluster, not \"%s\"", kind);
                return false;
        }
        if (!a->have_cond) {
                *rc = ctl_usage_error(cmd, "say what to wait for: --for FIELD=VALUE (.status=installed)");
                return false;
        }
        return true;
}

/* The object's path (malloc'd) and id (*id) for KIND NAME, looked up. NULL
 * with the failure printed (c->fail_exit: 3 not found, 4 unreachable). */
static char *object_path(struct ctl *c, const char *kind, const char *name, char **id) {
        char *path = NULL;
        *id = NULL;
        if (strcmp(kind, "host") == 0) {
                _cleanup_free_ char *ie = NULL;
                if (ctl_lookup_host(c, name, &ie, id) < 0)
                        return NULL;
                if (asprintf(&path, MUSTER_PATH_HOST("%s", "%s"), ie, *id) < 0)
                        path = NULL;
        } else {
                if (!(*id = ctl_lookup_cluster(c, name)))
                        return NULL;
                if (asprintf(&path, MUSTER_PATH_CLUSTER("%s"), *id) < 0)
                        path = NULL;
        }
        if (!path)
                ctl_fail("out of memory");
        return path;
}

int ctl_wait(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        struct wait_args a = { .timeout = WAIT_DEFAULT_TIMEOUT, .interval = 1 };
        int rc;
        if (!parse_args(c, cmd, argc, argv, &a, &rc)) {
                waitfor_free(&a.cond);
                return rc;
        }
        const char *kind = argv[optind], *name = argv[optind + 1];
        _cleanup_free_ char *id = NULL;
        _cleanup_free_ char *path = object_path(c, kind, name, &id);
        if (!path) {
                waitfor_free(&a.cond);
                return CTL_EXIT_FAIL;
        }
        double deadline = mono_now() + a.timeout;
        bool unreachable = false, answered = false;
        _cleanup_free_ char *seen = NULL;
        ctl_catch_stop(NULL, NULL);
        c->quiet_unreachable = true;
        rc = -1;
        while (rc < 0) {
                struct ctl_reply r = { 0 };
                int k = ctl_call_object(c, "GET", path, NULL, &r);
                if (k == -EINTR || ctl_stop)
                        rc = ctl_fail("interrupted");
                else if (k == -EIO || k == -ETIMEDOUT)
                        ctl_still_trying(c, &unreachable);
                else if (k < 0)
                        rc = CTL_EXIT_FAIL; /* told; 404 is 3 through c->fail_exit */
                else {
                        unreachable = false;
                        answered = true;
                        free(seen);
                        int met = waitfor_check(&a.cond, r.json, &seen);
                        if (met < 0)
                                rc = ctl_fail("out of memory");
                        else if (met > 0) {
                                printf("%s/%s condition met\n", kind, id);
                                rc = CTL_EXIT_OK;
                        }
                }
                ctl_reply_free(&r);
                if (rc >= 0)
                        break;
                double left = deadline - mono_now();
                if (left <= 0) {
                        if (!answered) {
                                ctl_fail("cannot reach musterd at %s: %s", c->server, c->errbuf);
                                rc = CTL_EXIT_UNREACHABLE;
                        } else {
                                _cleanup_free_ char *safe = seen ? ctl_text_sanitize(seen) : NULL;
                                if (seen)
                                        ctl_fail("timed out after %gs waiting for %s/%s: %s is \"%s\", not \"%s\"",
                                                 a.timeout, kind, id, a.cond.path, safe ?: "?", a.cond.value);
                                else
                                        ctl_fail("timed out after %gs waiting for %s/%s: it has no %s", a.timeout,
                                                 kind, id, a.cond.path);
                                rc = CTL_EXIT_FAIL;
                                c->fail_exit = 0;
                        }
                        break;
                }
                ctl_nap(left < a.interval ? left : a.interval);
                if (ctl_stop)
                        rc = ctl_fail("interrupted");
        }
        waitfor_free(&a.cond);
        return rc;
}
