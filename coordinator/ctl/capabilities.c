/* `musterctl cluster capabilities`: a cluster's capability spec (baseline
 * set and additional capabilities), what musterd made of it (enabled and
 * known) and the ImplicitlyEnabledCapabilities condition; --enable and
 * --disable edit the additional list. A capability once enabled stays
 * enabled (DESIGN §7), so a --disable can leave it on: that is said. A
 * --disable of a capability that is not additional is refused (exit 1). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "ctl.h"
#include "json-cleanup.h"

#define IMPLICIT_CONDITION "ImplicitlyEnabledCapabilities"

static json_object *condition(json_object *cluster, const char *type) {
        json_object *conds = ctl_jget(cluster, "conditions");
        size_t n = ctl_jlen(conds);
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(conds, i);
                if (strcmp(ctl_jstr(e, "type") ?: "", type) == 0)
                        return e;
        }
        return NULL;
}

void ctl_capabilities_kv(struct ctl_kv *kv, json_object *cl, bool known) {
        json_object *spec = ctl_jget(cl, "capabilities.spec"), *status = ctl_jget(cl, "capabilities.status");
        if (spec) {
                const char *base = ctl_jstr(spec, "baseline_capability_set");
                _cleanup_free_ char *add = ctl_join(ctl_jget(spec, "additional_enabled_capabilities"), "none");
                ctl_kv_add(kv, "Baseline set", base ?: "vCurrent (not set)", 0);
                ctl_kv_add(kv, "Additional caps", add, 0);
        }
        if (status) {
                _cleanup_free_ char *en = ctl_join(ctl_jget(status, "enabled_capabilities"), "none");
                ctl_kv_add(kv, "Enabled caps", en, 0);
                if (known) {
                        _cleanup_free_ char *kn = ctl_join(ctl_jget(status, "known_capabilities"), "none");
                        ctl_kv_add(kv, "Known caps", kn, 0);
                }
        }
        json_object *conds = ctl_jget(cl, "conditions");
        size_t n = ctl_jlen(conds);
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(conds, i);
                _cleanup_free_ char *line = NULL;
                if (asprintf(&line, "%s=%s%s%s%s%s%s", ctl_jstr(e, "type") ?: "?", ctl_jstr(e, "status") ?: "?",
                             ctl_jstr(e, "reason") ? " (" : "", ctl_jstr(e, "reason") ?: "",
                             ctl_jstr(e, "reason") ? ")" : "", ctl_jstr(e, "message") ? ": " : "",
                             ctl_jstr(e, "message") ?: "") < 0)
                        line = NULL;
                ctl_kv_add(kv, "Condition", line, 0);
        }
}

/* Whether `name` is one of the names listed after the colon of an
 * implicit condition's message ("...could not be disabled: A, B"). */
static bool message_names(const char *msg, const char *name) {
        const char *p = msg ? strrchr(msg, ':') : NULL;
        size_t n = strlen(name);
        if (!p)
                return false;
        for (p++; *p;) {
                p += strspn(p, " ,");
                size_t k = strcspn(p, ",");
                while (k > 0 && p[k - 1] == ' ')
                        k--;
                if (k == n && strncmp(p, name, n) == 0)
                        return true;
                p += k;
                p += strcspn(p, ",");
        }
        return false;
}

void ctl_print_implicit(const struct ctl_fmt *f, json_object *cluster, json_object *wanted_off) {
        json_object *cond = condition(cluster, IMPLICIT_CONDITION);
        bool implicit = cond && strcmp(ctl_jstr(cond, "status") ?: "", "True") == 0;
        const char *msg = implicit ? ctl_jstr(cond, "message") : NULL;
        if (implicit) {
                /* The names the message ends with, else the message itself. */
                const char *names = msg && strrchr(msg, ':') ? strrchr(msg, ':') + 1 : msg;
                _cleanup_free_ char *line = NULL;
                if (asprintf(&line, "Capabilities stay enabled implicitly: %s",
                             names ? names + strspn(names, " ") : "some could not be disabled") < 0)
                        line = NULL;
                _cleanup_free_ char *clean = line ? ctl_text_sanitize(line) : NULL;
                _cleanup_free_ char *wrapped = clean ? ctl_text_wrap(clean, ctl_fmt_room(f, 2), 2) : NULL;
                if (wrapped)
                        puts(wrapped);
        }
        json_object *enabled = ctl_jget(cluster, "capabilities.status.enabled_capabilities");
        size_t n = wanted_off ? json_object_array_length(wanted_off) : 0;
        for (size_t i = 0; i < n; i++) {
                const char *name = json_object_get_string(json_object_array_get_idx(wanted_off, i));
                if (!ctl_array_has(enabled, name) || (implicit && message_names(msg, name)))
                        continue;
                _cleanup_free_ char *line = NULL;
                if (asprintf(&line, "%s stays enabled: the baseline set %s has it", name,
                             ctl_jstr(cluster, "capabilities.spec.baseline_capability_set") ?: "vCurrent") < 0)
                        line = NULL;
                _cleanup_free_ char *clean = line ? ctl_text_sanitize(line) : NULL;
                _cleanup_free_ char *wrapped = clean ? ctl_text_wrap(clean, ctl_fmt_room(f, 2), 2) : NULL;
                if (wrapped)
                        puts(wrapped);
        }
}

static int print_capabilities(struct ctl *c, json_object *cl, json_object *wanted_off, bool changed) {
        if (c->output == CTL_OUT_JSON)
                return ctl_print_json(cl);
        struct ctl_kv kv = { 0 };
        ctl_kv_add(&kv, "Cluster", ctl_jstr(cl, "name"), 0);
        ctl_kv_add(&kv, "ID", ctl_jstr(cl, "id"), CTL_KV_ID);
        ctl_kv_add(&kv, "Release", ctl_jstr(cl, "release_version") ?: "not set", 0);
        if (!ctl_jget(cl, "capabilities"))
                ctl_kv_add(&kv, "Capabilities", "none yet (set an imported release)", 0);
        ctl_capabilities_kv(&kv, cl, true);
        int r = ctl_print_kv(c, &kv);
        ctl_kv_free(&kv);
        if (r == 0 && changed)
                ctl_print_implicit(&c->fmt, cl, wanted_off);
        return r;
}

/* The options into *baseline, enable and disable, and the one CLUSTER.
 * true to go on; false with *rc the exit status (0 after --help). */
static bool parse_options(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, const char **baseline,
                          json_object *enable, json_object *disable, int *rc) {
        enum { O_BASELINE = CTL_OPT_FIRST_LOCAL, O_ENABLE, O_DISABLE };
        static const struct option opts[] = {
                { "baseline", required_argument, NULL, O_BASELINE },
                { "enable", required_argument, NULL, O_ENABLE },
                { "disable", required_argument, NULL, O_DISABLE },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        int o;
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                *rc = CTL_EXIT_USAGE;
                switch (o) {
                case CTL_OPT_HELP: *rc = CTL_EXIT_OK; return false;
                case CTL_OPT_BAD: return false;
                case O_BASELINE:
                        if (!*optarg) {
                                *rc = ctl_usage_error(cmd, "--baseline takes a capability set (None, v4.11, ..., "
                                                      "vCurrent)");
                                return false;
                        }
                        *baseline = optarg;
                        break;
                case O_ENABLE:
                case O_DISABLE:
                        *rc = ctl_opt_names(cmd, o == O_ENABLE ? "--enable" : "--disable", "capabilities",
                                            o == O_ENABLE ? enable : disable, optarg, false);
                        if (*rc)
                                return false;
                        break;
                default: return false;
                }
        }
        if ((*rc = ctl_want_args(cmd, argc, argv, 1, "CLUSTER")))
                return false;
        size_t nd = json_object_array_length(disable);
        for (size_t i = 0; i < nd; i++) {
                const char *s = json_object_get_string(json_object_array_get_idx(disable, i));
                if (ctl_array_has(enable, s)) {
                        *rc = ctl_usage_error(cmd, "%s is both enabled and disabled", s);
                        return false;
                }
        }
        return true;
}

/* 0 when every capability of `disable` is one of the additional ones
 * (`old_add`); only those can be taken off the list. Else CTL_EXIT_FAIL,
 * the first other one told. */
static int check_disable(json_object *old_add, json_object *disable, const char *cluster) {
        size_t nd = json_object_array_length(disable);
        for (size_t i = 0; i < nd; i++) {
                const char *s = json_object_get_string(json_object_array_get_idx(disable, i));
                if (!ctl_array_has(old_add, s)) {
                        _cleanup_free_ char *t = ctl_text_sanitize(s);
                        _cleanup_free_ char *list = ctl_join(old_add, "none");
                        _cleanup_free_ char *tl = list ? ctl_text_sanitize(list) : NULL;
                        return ctl_fail("%s is not one of the additional capabilities of %s (%s): nothing changed",
                                        t ?: "", cluster, tl ?: "none");
                }
        }
        return 0;
}

/* The PATCH body: the cluster's current spec, edited. The additional list
 * loses `disable` and gains `enable`; the baseline set becomes `baseline`
 * when it is given. NULL with the reason printed: then nothing is sent,
 * as for a refused request. */
static json_object *edited_spec(json_object *cluster, const char *baseline, json_object *enable,
                                json_object *disable, const char *arg) {
        json_object *old_add = ctl_jget(cluster, "capabilities.spec.additional_enabled_capabilities");
        json_object *add = json_object_new_array(), *spec = json_object_new_object(), *caps = json_object_new_object();
        _cleanup_json_ json_object *body = json_object_new_object();
        if (!add || !spec || !caps || !body) {
                json_object_put(add);
                json_object_put(spec);
                json_object_put(caps);
                ctl_fail("out of memory");
                return NULL;
        }
        size_t no = ctl_jlen(old_add), ne = json_object_array_length(enable);
        for (size_t i = 0; i < no; i++) {
                const char *s = json_object_get_string(json_object_array_get_idx(old_add, i));
                if (s && !ctl_array_has(disable, s) && !ctl_array_has(add, s))
                        json_object_array_add(add, json_object_new_string(s));
        }
        for (size_t i = 0; i < ne; i++) {
                const char *s = json_object_get_string(json_object_array_get_idx(enable, i));
                if (!ctl_array_has(add, s))
                        json_object_array_add(add, json_object_new_string(s));
        }
        if (check_disable(old_add, disable, arg)) {
                json_object_put(add);
                json_object_put(spec);
                json_object_put(caps);
                return NULL;
        }
        json_object *old_base = ctl_jget(cluster, "capabilities.spec.baseline_capability_set");
        json_object_object_add(spec, "baseline_capability_set",
                               baseline ? json_object_new_string(baseline) : json_object_get(old_base));
        json_object_object_add(spec, "additional_enabled_capabilities", add);
        json_object_object_add(caps, "spec", spec);
        json_object_object_add(body, "capabilities", caps);
        return TAKE_PTR(body);
}

int ctl_cluster_capabilities(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        _cleanup_json_ json_object *enable = json_object_new_array();
        _cleanup_json_ json_object *disable = json_object_new_array();
        const char *baseline = NULL;
        int rc;

        if (!enable || !disable)
                return ctl_fail("out of memory");
        if (!parse_options(c, cmd, argc, argv, &baseline, enable, disable, &rc))
                return rc;
        _cleanup_free_ char *path = ctl_cluster_path(c, argv[optind], "", NULL);
        if (!path)
                return CTL_EXIT_FAIL;
        struct ctl_reply cur;
        if (ctl_call_object(c, "GET", path, NULL, &cur) < 0) {
                ctl_reply_free(&cur);
                return CTL_EXIT_FAIL;
        }
        if (!baseline && json_object_array_length(enable) == 0 && json_object_array_length(disable) == 0) {
                rc = print_capabilities(c, cur.json, NULL, false);
                ctl_reply_free(&cur);
                return rc;
        }
        _cleanup_json_ json_object *body = edited_spec(cur.json, baseline, enable, disable, argv[optind]);
        ctl_reply_free(&cur);
        if (!body)
                return CTL_EXIT_FAIL;

        struct ctl_reply r;
        rc = ctl_call_object(c, "PATCH", path, body, &r) < 0 ? CTL_EXIT_FAIL
                                                              : print_capabilities(c, r.json, disable, true);
        ctl_reply_free(&r);
        return rc;
}
