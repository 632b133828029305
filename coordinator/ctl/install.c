/* `musterctl cluster install|upgrade|payload`: starting an install (and
 * saying which validations stop it), moving a cluster to another release,
 * and the signed payload revisions musterd built for it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "ctl.h"
#include "json-cleanup.h"
#include "protocol.h"

/* Validations that are not passing, "  id: message" a line on stderr. */
static size_t print_failing(json_object *validations) {
        size_t n = ctl_jlen(validations), k = 0;
        for (size_t i = 0; i < n; i++) {
                json_object *v = json_object_array_get_idx(validations, i);
                const char *st = ctl_jstr(v, "status") ?: "";
                if (strcmp(st, "success") == 0 || strcmp(st, "disabled") == 0)
                        continue;
                _cleanup_free_ char *id = ctl_text_sanitize(ctl_jstr(v, "id") ?: "?");
                _cleanup_free_ char *msg = ctl_text_sanitize(ctl_jstr(v, "message") ?: st);
                fprintf(stderr, "  %s: %s\n", id ?: "", msg ?: "");
                k++;
        }
        return k;
}

int ctl_cluster_install(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, NULL, NULL, 1, "CLUSTER", &rc))
                return rc;
        _cleanup_free_ char *id = NULL;
        _cleanup_free_ char *path = ctl_cluster_path(c, argv[optind], MUSTER_ACTION_INSTALL, &id);
        if (!path)
                return CTL_EXIT_FAIL;
        struct ctl_reply r;
        int k = ctl_request(c, "POST", path, NULL, &r);
        bool conflict = k == 0 && r.status == 409;
        if (ctl_report(c, "POST", path, k, &r) < 0) {
                /* Not ready: the validations that say why, the server's or the cluster's. */
                json_object *v = conflict ? ctl_jget(r.json, "validations") : NULL;
                if (conflict && !v) {
                        _cleanup_free_ char *cpath = NULL;
                        struct ctl_reply cl = { 0 };
                        if (asprintf(&cpath, MUSTER_PATH_CLUSTER("%s"), id) < 0)
                                cpath = NULL;
                        else if (ctl_request(c, "GET", cpath, NULL, &cl) == 0 && cl.status == 200)
                                print_failing(ctl_jget(cl.json, "validations"));
                        ctl_reply_free(&cl);
                } else if (v)
                        print_failing(v);
                ctl_reply_free(&r);
                return CTL_EXIT_FAIL;
        }
        if (c->output == CTL_OUT_JSON)
                rc = r.json ? ctl_print_json(r.json) : CTL_EXIT_OK;
        else {
                _cleanup_free_ char *name = ctl_text_sanitize(ctl_jstr(r.json, "name") ?: id);
                printf("cluster %s is installing (%s); payload revision %s\n", name ?: "",
                       ctl_jstr(r.json, "status") ?: "accepted", ctl_jstr(r.json, "payload_revision") ?: "1");
                printf("Follow it with: musterctl cluster watch %s\n", id);
                rc = CTL_EXIT_OK;
        }
        ctl_reply_free(&r);
        return rc;
}

/* cluster reset and cluster cancel: POST the action, say what comes next. */
static int reset_or_cancel(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, bool cancel) {
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, NULL, NULL, 1, "CLUSTER", &rc))
                return rc;
        _cleanup_free_ char *id = NULL;
        _cleanup_free_ char *path = ctl_cluster_path(c, argv[optind], cancel ? MUSTER_ACTION_CANCEL : MUSTER_ACTION_RESET, &id);
        if (!path)
                return CTL_EXIT_FAIL;
        struct ctl_reply r;
        int k = ctl_request(c, "POST", path, NULL, &r);
        if (ctl_report(c, "POST", path, k, &r) < 0) {
                ctl_reply_free(&r);
                return CTL_EXIT_FAIL;
        }
        if (c->output == CTL_OUT_JSON)
                rc = r.json ? ctl_print_json(r.json) : CTL_EXIT_OK;
        else {
                _cleanup_free_ char *name = ctl_text_sanitize(ctl_jstr(r.json, "name") ?: id);
                const char *status = ctl_jstr(r.json, "status") ?: "?";
                if (cancel)
                        printf("cluster %s: installation cancelled; it is %s\n"
                               "Its installing hosts are told to stop before writing more. To try again:\n"
                               "  musterctl cluster reset %s\n", name ?: "", status, id);
                else
                        printf("cluster %s was reset; it is %s\n"
                               "Its hosts register again and are checked anew; installed hosts must be booted\n"
                               "from the discovery ISO. Then install it again:\n  musterctl cluster install %s\n",
                               name ?: "", status, id);
                rc = CTL_EXIT_OK;
        }
        ctl_reply_free(&r);
        return rc;
}

int ctl_cluster_reset(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        return reset_or_cancel(c, cmd, argc, argv, false);
}

int ctl_cluster_cancel(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        return reset_or_cancel(c, cmd, argc, argv, true);
}

int ctl_cluster_upgrade(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct option opts[] = {
                { "release", required_argument, NULL, CTL_OPT_FIRST_LOCAL },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        const char *release = NULL;
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, opts, &release, 1, "CLUSTER", &rc))
                return rc;
        if (!release || !*release)
                return ctl_usage_error(cmd, "--release is required");
        _cleanup_free_ char *path = ctl_cluster_path(c, argv[optind], MUSTER_ACTION_UPGRADE, NULL);
        if (!path)
                return CTL_EXIT_FAIL;
        _cleanup_json_ json_object *body = json_object_new_object();
        if (!body)
                return ctl_fail("out of memory");
        json_object_object_add(body, "release_version", json_object_new_string(release));
        struct ctl_reply r;
        if (ctl_call_object(c, "POST", path, body, &r) < 0) {
                ctl_reply_free(&r);
                return CTL_EXIT_FAIL;
        }
        if (c->output == CTL_OUT_JSON)
                rc = ctl_print_json(r.json);
        else {
                _cleanup_free_ char *name = ctl_text_sanitize(ctl_jstr(r.json, "name") ?: "?");
                _cleanup_free_ char *rel = ctl_text_sanitize(ctl_jstr(r.json, "release_version") ?: release);
                printf("cluster %s is on release %s\n", name ?: "", rel ?: "");
                struct ctl_kv kv = { 0 };
                ctl_kv_add(&kv, "Status", ctl_jstr(r.json, "status"), 0);
                ctl_capabilities_kv(&kv, r.json, false);
                ctl_kv_add(&kv, "Payload revision", ctl_jstr(r.json, "payload_revision"), 0);
                rc = ctl_print_kv(c, &kv);
                ctl_kv_free(&kv);
                if (rc == 0)
                        ctl_print_implicit(&c->fmt, r.json, NULL);
        }
        ctl_reply_free(&r);
        return rc;
}

/* ---- payload revisions ------------------------------------------------------------ */

static int revision_row(struct ctl_table *t, json_object *e) {
        char created[32], age[16];
        const char *row[] = {
                ctl_jstr(e, "revision"), ctl_jstr(e, "release_version"), ctl_jstr(e, "manifest_count"),
                ctl_jstr(e, "digest"), ctl_time(ctl_jstr(e, "created_at"), created, sizeof created),
                ctl_age(ctl_jstr(e, "created_at"), age, sizeof age),
        };
        return ctl_table_add(t, row);
}

static int manifest_row(struct ctl_table *t, json_object *m) {
        _cleanup_free_ char *name = NULL;
        char size[32] = "";
        const char *content = ctl_jstr(m, "content");
        if (content)
                ctl_format_size((int64_t) strlen(content), size, sizeof size);
        if (asprintf(&name, "%s%s%s", ctl_jstr(m, "namespace") ?: "", ctl_jstr(m, "namespace") ? "/" : "",
                     ctl_jstr(m, "name") ?: "") < 0) {
                name = NULL;
                return -ENOMEM;
        }
        const char *row[] = { ctl_jstr(m, "path"), ctl_jstr(m, "kind"), name, ctl_jstr(m, "file"), ctl_jstr(m, "group"),
                              size };
        return ctl_table_add(t, row);
}

static int print_envelope(struct ctl *c, json_object *env, json_object *payload) {
        char size[32];
        struct ctl_kv kv = { 0 };
        json_object *ms = ctl_jget(payload, "manifests");
        char count[24];
        snprintf(count, sizeof count, "%zu", ctl_jlen(ms));
        _cleanup_free_ char *caps = ctl_join(ctl_jget(payload, "enabled_capabilities"), "none");
        ctl_kv_add(&kv, "Cluster", ctl_jstr(env, "cluster_id"), CTL_KV_ID);
        ctl_kv_add(&kv, "Revision", ctl_jstr(env, "revision"), 0);
        ctl_kv_add(&kv, "Release", ctl_jstr(payload, "release_version"), 0);
        ctl_kv_add(&kv, "Digest", ctl_jstr(env, "digest"), CTL_KV_ID);
        ctl_kv_add(&kv, "Signature", ctl_jstr(env, "signature"), CTL_KV_ID);
        ctl_kv_add(&kv, "Manifests", count, 0);
        ctl_kv_add(&kv, "Enabled caps", caps, 0);
        ctl_kv_add(&kv, "OS image", ctl_jstr(payload, "os_image.url"), CTL_KV_ID);
        ctl_kv_add(&kv, "Image SHA-256", ctl_jstr(payload, "os_image.sha256"), CTL_KV_ID);
        int64_t bytes = ctl_jint(payload, "os_image.size", -1);
        if (bytes >= 0)
                ctl_kv_add(&kv, "Image size", ctl_format_size(bytes, size, sizeof size), 0);
        ctl_kv_add(&kv, "Root label", ctl_jstr(payload, "os_image.root_label"), 0);
        int r = ctl_print_kv(c, &kv);
        ctl_kv_free(&kv);
        return r;
}

/* The revision's envelope and its payload object; CTL_EXIT_* . */
static int show_revision(struct ctl *c, const char *id, long rev, bool manifests) {
        static const struct ctl_col cols[] = {
                { "PATH", CTL_COL_FLEX | CTL_COL_MIDDLE, 0, 36 },
                { "KIND", CTL_COL_FLEX, 0, 10 },
                { "NAME", CTL_COL_FLEX, 1, 16 },
                { "FILE", CTL_COL_WIDE, 0, 0 },
                { "GROUP", CTL_COL_WIDE, 0, 0 },
                { "SIZE", CTL_COL_WIDE | CTL_COL_RIGHT, 0, 0 },
        };
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, MUSTER_PATH_CLUSTER_PAYLOAD("%s", "%ld"), id, rev) < 0) {
                path = NULL;
                return ctl_fail("out of memory");
        }
        struct ctl_reply r;
        if (ctl_call_object(c, "GET", path, NULL, &r) < 0) {
                ctl_reply_free(&r);
                return CTL_EXIT_FAIL;
        }
        json_object *payload = ctl_jget(r.json, "payload");
        _cleanup_json_ json_object *parsed = NULL;
        if (payload && json_object_is_type(payload, json_type_string))
                payload = parsed = json_tokener_parse(json_object_get_string(payload));
        _cleanup_json_ json_object *none = json_object_new_array();
        int rc;
        if (!none)
                rc = ctl_fail("out of memory");
        else if (!payload || !json_object_is_type(payload, json_type_object))
                rc = ctl_fail("GET %s: the envelope holds no payload object", path);
        else if (c->output == CTL_OUT_JSON)
                rc = ctl_print_json(payload);
        else if (manifests) {
                json_object *ms = ctl_jget(payload, "manifests");
                if (!ctl_jlen(ms))
                        ms = none;
                rc = ctl_print_rows(c, ms, cols, sizeof cols / sizeof *cols, manifest_row);
        }
        else
                rc = print_envelope(c, r.json, payload);
        ctl_reply_free(&r);
        return rc;
}

int ctl_cluster_payload(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        enum { O_REVISION = CTL_OPT_FIRST_LOCAL, O_MANIFESTS };
        static const struct option opts[] = {
                { "revision", required_argument, NULL, O_REVISION },
                { "manifests", no_argument, NULL, O_MANIFESTS },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        static const struct ctl_col cols[] = {
                { "REVISION", CTL_COL_RIGHT, 0, 0 },
                { "RELEASE", 0, 0, 0 },
                { "MANIFESTS", CTL_COL_RIGHT, 0, 0 },
                { "DIGEST", CTL_COL_FLEX, 2, 20 },
                { "CREATED", CTL_COL_WIDE, 0, 0 },
                { "AGE", 0, 1, 0 },
        };
        long rev = 0;
        bool manifests = false;
        int o;
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                switch (o) {
                case CTL_OPT_HELP: return CTL_EXIT_OK;
                case CTL_OPT_BAD: return CTL_EXIT_USAGE;
                case O_REVISION:
                        if (ctl_parse_long(optarg, 1, INT32_MAX, &rev) < 0)
                                return ctl_usage_error(cmd, "--revision needs a revision number (1, 2, ...), not "
                                                       "\"%s\"", optarg);
                        break;
                case O_MANIFESTS: manifests = true; break;
                default: return CTL_EXIT_USAGE;
                }
        }
        if (ctl_want_args(cmd, argc, argv, 1, "CLUSTER"))
                return CTL_EXIT_USAGE;
        _cleanup_free_ char *id = ctl_lookup_cluster(c, argv[optind]);
        if (!id)
                return CTL_EXIT_FAIL;
        if (rev == 0 && manifests) {
                /* The newest revision is the cluster's. */
                _cleanup_free_ char *path = NULL;
                struct ctl_reply r;
                if (asprintf(&path, MUSTER_PATH_CLUSTER("%s"), id) < 0) {
                        path = NULL;
                        return ctl_fail("out of memory");
                }
                if (ctl_call_object(c, "GET", path, NULL, &r) < 0) {
                        ctl_reply_free(&r);
                        return CTL_EXIT_FAIL;
                }
                rev = (long) ctl_jint(r.json, "payload_revision", 0);
                ctl_reply_free(&r);
                if (rev <= 0) {
                        c->fail_exit = CTL_EXIT_NOT_FOUND;
                        return ctl_fail("cluster %s has no payload yet (it is built at install)", argv[optind]);
                }
        }
        if (rev > 0)
                return show_revision(c, id, rev, manifests);
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, MUSTER_PATH_CLUSTER_PAYLOADS("%s"), id) < 0) {
                path = NULL;
                return ctl_fail("out of memory");
        }
        _cleanup_json_ json_object *rows = NULL;
        if (ctl_get_list(c, path, true, &rows, NULL) < 0)
                return CTL_EXIT_FAIL;
        return ctl_print_rows(c, rows, cols, sizeof cols / sizeof *cols, revision_row);
}
