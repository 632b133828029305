/* `musterctl catalog add|list|show|delete`: operator catalogs. add reads a
 * file-based catalog directory (or one file) with catalog_read_dir, the
 * same reader musterd's parser was written for, and sends its files as
 * they are; show lists each package's channels with their versions. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cleanup.h"
#include "ctl.h"
#include "json-cleanup.h"
#include "protocol.h"
#include "semver.h"

#define CTL_MAX_CATALOG_BYTES (64 * 1024 * 1024) /* what `catalog add` sends at most */

/* ---- add ---------------------------------------------------------------------- */

/* --priority into *priority (required), then NAME and DIR|FILE. true to go
 * on; false with *rc the exit status (0 after --help). */
static bool parse_add_options(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, long *priority,
                              int *rc) {
        enum { O_PRIORITY = CTL_OPT_FIRST_LOCAL };
        static const struct option opts[] = {
                { "priority", required_argument, NULL, O_PRIORITY },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        bool have = false;
        int o;
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                switch (o) {
                case CTL_OPT_HELP: *rc = CTL_EXIT_OK; return false;
                case O_PRIORITY:
                        if (ctl_parse_long(optarg, -1000, 1000, priority) < 0) {
                                *rc = ctl_usage_error(cmd, "--priority takes a number from -1000 to 1000, not \"%s\"",
                                                      optarg);
                                return false;
                        }
                        have = true;
                        break;
                default: *rc = CTL_EXIT_USAGE; return false;
                }
        }
        if ((*rc = ctl_want_args(cmd, argc, argv, 2, "NAME and DIR|FILE")))
                return false;
        if (!have) {
                *rc = ctl_usage_error(cmd, "--priority is required: it never changes once the catalog is added");
                return false;
        }
        return true;
}

/* The request of an add: name, priority and the files as {path, content}.
 * NULL with the reason printed, also when it would be larger than an add
 * may carry. */
static json_object *add_body(const char *name, long priority, const struct catalog_file *v, size_t n,
                             const char *from) {
        _cleanup_json_ json_object *body = json_object_new_object();
        json_object *files = json_object_new_array_ext((int) n);
        if (!body || !files) {
                json_object_put(files);
                ctl_fail("out of memory");
                return NULL;
        }
        json_object_object_add(body, "name", json_object_new_string(name));
        json_object_object_add(body, "priority", json_object_new_int64(priority));
        json_object_object_add(body, "files", files);
        for (size_t i = 0; i < n; i++) {
                if (!ctl_text_is_utf8(v[i].content, v[i].len)) {
                        ctl_fail("%s/%s is not UTF-8 text", from, v[i].path);
                        return NULL;
                }
                json_object *f = json_object_new_object();
                if (!f || json_object_array_add(files, f) < 0) {
                        json_object_put(f);
                        ctl_fail("out of memory");
                        return NULL;
                }
                json_object_object_add(f, "path", json_object_new_string(v[i].path));
                json_object_object_add(f, "content", json_object_new_string_len(v[i].content, (int) v[i].len));
        }
        /* Escaping makes the request larger than the files; musterd's limit is on the request. */
        const char *text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
        if (!text) {
                ctl_fail("out of memory");
                return NULL;
        }
        if (strlen(text) > CTL_MAX_CATALOG_BYTES) {
                ctl_fail("the catalog in %s is %zu MiB as a request, more than the %d MiB an add may carry", from,
                         strlen(text) >> 20, CTL_MAX_CATALOG_BYTES >> 20);
                return NULL;
        }
        return TAKE_PTR(body);
}

static int print_added(struct ctl *c, json_object *a) {
        if (c->output == CTL_OUT_JSON)
                return ctl_print_json(a);
        _cleanup_free_ char *name = ctl_text_sanitize(ctl_jstr(a, "name") ?: "?");
        printf("catalog %s added (priority %lld): %lld packages, %lld channels, %lld bundles, %lld manifests from "
               "%lld files",
               name ?: "?", (long long) ctl_jint(a, "priority", 0), (long long) ctl_jint(a, "package_count", 0),
               (long long) ctl_jint(a, "channel_count", 0), (long long) ctl_jint(a, "bundle_count", 0),
               (long long) ctl_jint(a, "manifest_count", 0), (long long) ctl_jint(a, "file_count", 0));
        int64_t ignored = ctl_jint(a, "ignored_count", 0);
        if (ignored > 0)
                printf("; %lld ignored (blobs or properties of unknown types)", (long long) ignored);
        putchar('\n');
        return CTL_EXIT_OK;
}

int ctl_catalog_add(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        long priority = 0;
        int rc;
        if (!parse_add_options(c, cmd, argc, argv, &priority, &rc))
                return rc;
        const char *name = argv[optind], *from = argv[optind + 1];
        struct catalog_file *files;
        size_t n;
        char err[1024];
        if (catalog_read_dir(from, &files, &n, err, sizeof err) < 0)
                return ctl_fail("%s", err);
        _cleanup_json_ json_object *body = add_body(name, priority, files, n, from);
        catalog_files_free(files, n);
        if (!body)
                return CTL_EXIT_FAIL;
        struct ctl_reply r;
        rc = ctl_call_object(c, "POST", MUSTER_PATH_CATALOGS, body, &r) < 0 ? CTL_EXIT_FAIL : print_added(c, r.json);
        ctl_reply_free(&r);
        return rc;
}

/* ---- list ------------------------------------------------------------------------ */

static int catalog_row(struct ctl_table *t, json_object *e) {
        char size[32], age[16], created[32];
        const char *row[] = {
                ctl_jstr(e, "name"), ctl_jstr(e, "priority"), ctl_jstr(e, "package_count"),
                ctl_jstr(e, "channel_count"), ctl_jstr(e, "bundle_count"), ctl_jstr(e, "manifest_count"),
                ctl_jstr(e, "ignored_count"), ctl_format_size(ctl_jint(e, "size_bytes", -1), size, sizeof size),
                ctl_jstr(e, "id"), ctl_jstr(e, "digest"), ctl_jstr(e, "owner"),
                ctl_time(ctl_jstr(e, "created_at"), created, sizeof created),
                ctl_age(ctl_jstr(e, "created_at"), age, sizeof age),
        };
        return ctl_table_add(t, row);
}

int ctl_catalog_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct ctl_col cols[] = {
                { "NAME", CTL_COL_FLEX, 0, 12 },
                { "PRIORITY", CTL_COL_RIGHT, 0, 0 },
                { "PACKAGES", CTL_COL_RIGHT, 0, 0 },
                { "CHANNELS", CTL_COL_RIGHT, 3, 0 },
                { "BUNDLES", CTL_COL_RIGHT, 0, 0 },
                { "MANIFESTS", CTL_COL_RIGHT, 2, 0 },
                { "IGNORED", CTL_COL_RIGHT, 4, 0 },
                { "SIZE", CTL_COL_RIGHT, 5, 0 },
                { "ID", CTL_COL_WIDE | CTL_COL_ID, 0, 0 },
                { "DIGEST", CTL_COL_WIDE, 0, 0 },
                { "OWNER", CTL_COL_WIDE, 0, 0 },
                { "CREATED", CTL_COL_WIDE, 0, 0 },
                { "AGE", 0, 1, 0 },
        };
        return ctl_list_all(c, cmd, argc, argv, MUSTER_PATH_CATALOGS, cols, sizeof cols / sizeof *cols, catalog_row);
}

/* ---- show ---------------------------------------------------------------------------- */

/* The one CATALOG argument's object (by name or id), or NULL with *rc. */
static json_object *get_catalog(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, int *rc) {
        if (!ctl_plain_args(c, cmd, argc, argv, NULL, NULL, 1, "CATALOG", rc))
                return NULL;
        _cleanup_free_ char *esc = ctl_url_escape(argv[optind]), *path = NULL;
        *rc = CTL_EXIT_FAIL;
        if (!esc || asprintf(&path, MUSTER_PATH_CATALOG("%s"), esc) < 0) {
                path = NULL;
                ctl_fail("out of memory");
                return NULL;
        }
        struct ctl_reply r;
        json_object *o = NULL;
        if (ctl_call_object(c, "GET", path, NULL, &r) == 0) {
                o = json_object_get(r.json);
                *rc = CTL_EXIT_OK;
        }
        ctl_reply_free(&r);
        return o;
}

/* The versions of a channel's entries separated by spaces (malloc'd) and
 * the newest of them in *head (a pointer into the channel's JSON). */
static char *channel_versions(json_object *ch, const char **head) {
        json_object *ents = ctl_jget(ch, "entries");
        size_t n = ctl_jlen(ents), len = 0;
        char *s = calloc(1, n * 48 + 1);
        struct semver best = { 0 };
        *head = NULL;
        for (size_t i = 0; s && i < n; i++) {
                json_object *e = json_object_array_get_idx(ents, i);
                const char *v = ctl_jstr(e, "version") ?: ctl_jstr(e, "bundle") ?: "?";
                len += (size_t) snprintf(s + len, n * 48 + 1 - len, "%s%.40s", i ? " " : "", v);
                struct semver sv;
                if (semver_parse(v, &sv) == 0 && (!*head || semver_cmp(&sv, &best) > 0)) {
                        best = sv;
                        *head = v;
                }
        }
        return s;
}

static int add_channel_rows(struct ctl_table *t, json_object *pkg) {
        json_object *chans = ctl_jget(pkg, "channels");
        const char *def = ctl_jstr(pkg, "default_channel");
        for (size_t i = 0; i < ctl_jlen(chans); i++) {
                json_object *ch = json_object_array_get_idx(chans, i);
                const char *head, *name = ctl_jstr(ch, "name");
                _cleanup_free_ char *versions = channel_versions(ch, &head);
                char count[24];
                snprintf(count, sizeof count, "%zu", ctl_jlen(ctl_jget(ch, "entries")));
                const char *row[] = { ctl_jstr(pkg, "name"), name, def && name && !strcmp(def, name) ? "yes" : "",
                                      head, count, versions };
                if (!versions || ctl_table_add(t, row) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int print_catalog(struct ctl *c, json_object *o) {
        static const struct ctl_col cols[] = {
                { "PACKAGE", CTL_COL_FLEX, 0, 10 },
                { "CHANNEL", CTL_COL_FLEX, 0, 8 },
                { "DEFAULT", 0, 2, 0 },
                { "HEAD", CTL_COL_FLEX, 0, 8 },
                { "BUNDLES", CTL_COL_RIGHT, 3, 0 },
                { "VERSIONS", CTL_COL_FLEX, 1, 12 },
        };
        char size[32], when[64], files[64];
        struct ctl_kv kv = { 0 };
        snprintf(files, sizeof files, "%s (%s)", ctl_jstr(o, "file_count") ?: "?",
                 ctl_format_size(ctl_jint(o, "size_bytes", -1), size, sizeof size));
        ctl_kv_add(&kv, "Name", ctl_jstr(o, "name"), 0);
        ctl_kv_add(&kv, "ID", ctl_jstr(o, "id"), CTL_KV_ID);
        ctl_kv_add(&kv, "Priority", ctl_jstr(o, "priority"), 0);
        ctl_kv_add(&kv, "Packages", ctl_jstr(o, "package_count"), 0);
        ctl_kv_add(&kv, "Channels", ctl_jstr(o, "channel_count"), 0);
        ctl_kv_add(&kv, "Bundles", ctl_jstr(o, "bundle_count"), 0);
        ctl_kv_add(&kv, "Manifests", ctl_jstr(o, "manifest_count"), 0);
        ctl_kv_add(&kv, "Ignored", ctl_jstr(o, "ignored_count"), 0);
        ctl_kv_add(&kv, "Files", files, 0);
        ctl_kv_add(&kv, "Digest", ctl_jstr(o, "digest"), CTL_KV_ID);
        ctl_kv_add(&kv, "Added by", ctl_jstr(o, "owner"), 0);
        ctl_kv_add(&kv, "Created", ctl_when(ctl_jstr(o, "created_at"), when, sizeof when), 0);
        int r = ctl_print_kv(c, &kv);
        ctl_kv_free(&kv);
        json_object *pkgs = ctl_jget(o, "packages");
        struct ctl_table t;
        ctl_table_init(&t, cols, sizeof cols / sizeof *cols);
        for (size_t i = 0; i < ctl_jlen(pkgs) && r == 0; i++)
                if (add_channel_rows(&t, json_object_array_get_idx(pkgs, i)) < 0)
                        r = ctl_fail("out of memory");
        if (r == 0) {
                puts("");
                r = ctl_print_table(c, &t);
        }
        ctl_table_free(&t);
        return r;
}

int ctl_catalog_show(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        int rc;
        _cleanup_json_ json_object *o = get_catalog(c, cmd, argc, argv, &rc);
        if (!o)
                return rc;
        return c->output == CTL_OUT_JSON ? ctl_print_json(o) : print_catalog(c, o);
}

/* ---- delete ------------------------------------------------------------------------------ */

int ctl_catalog_delete(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        int rc;
        _cleanup_json_ json_object *o = get_catalog(c, cmd, argc, argv, &rc);
        if (!o)
                return rc;
        const char *id = ctl_jstr(o, "id");
        _cleanup_free_ char *path = NULL;
        if (!id)
                return ctl_fail("the server sent no catalog id");
        if (asprintf(&path, MUSTER_PATH_CATALOG("%s"), id) < 0) {
                path = NULL;
                return ctl_fail("out of memory");
        }
        struct ctl_reply r;
        rc = ctl_call(c, "DELETE", path, NULL, &r) < 0 ? CTL_EXIT_FAIL : CTL_EXIT_OK;
        ctl_reply_free(&r);
        if (rc == CTL_EXIT_OK && c->output != CTL_OUT_JSON) {
                _cleanup_free_ char *name = ctl_text_sanitize(ctl_jstr(o, "name") ?: argv[optind]);
                printf("catalog %s deleted\n", name ?: "?");
        }
        return rc;
}
