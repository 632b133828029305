/* musterctl operand: the custom resources of the kinds a cluster's
 * operators own (DESIGN §9). apply sends manifest files as they
 * are for musterd to parse and put in the payload after their operator;
 * list shows those (managed) with the ones the node agents found on the
 * hosts; delete takes a managed one out again, named by id or by kind and
 * name, resolved through the list. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "ctl.h"
#include "json-cleanup.h"
#include "protocol.h"

#define CTL_MAX_OPERAND_FILES 1000                  /* files one apply sends */
#define CTL_MAX_OPERAND_FILE_BYTES (4 * 1024 * 1024) /* one of them */
#define CTL_MAX_OPERAND_BYTES (64 * 1024 * 1024)     /* all of them, as a request */

/* ---- shared ------------------------------------------------------------------- */

/* "ns/name", or "name" for a cluster-scoped object; into buf. */
static const char *ns_name(json_object *o, char *buf, size_t n) {
        const char *ns = ctl_jstr(o, "namespace"), *name = ctl_jstr(o, "name") ?: "?";
        if (ns && *ns)
                snprintf(buf, n, "%s/%s", ns, name);
        else
                snprintf(buf, n, "%s", name);
        return buf;
}

/* "group/version", or "version" for the core group; into buf. */
static const char *group_version(json_object *o, char *buf, size_t n) {
        const char *g = ctl_jstr(o, "group"), *v = ctl_jstr(o, "version") ?: "?";
        if (g && *g)
                snprintf(buf, n, "%s/%s", g, v);
        else
                snprintf(buf, n, "%s", v);
        return buf;
}

/* prefix and s as one text wrapped to the terminal's width, lines after
 * the first indented by `indent`. */
static void print_wrapped(const struct ctl *c, const char *prefix, const char *s, size_t indent) {
        _cleanup_free_ char *joined = NULL;
        if (asprintf(&joined, "%s%s", prefix, s ? s : "") < 0)
                joined = NULL;
        _cleanup_free_ char *clean = joined ? ctl_text_sanitize(joined) : NULL;
        _cleanup_free_ char *text = clean ? ctl_text_wrap(clean, ctl_fmt_room(&c->fmt, indent), indent) : NULL;
        printf("%s\n", text ? text : clean ? clean : "?");
}

/* The operands' path of the cluster named `cluster` (malloc'd), its id in
 * *id when id is not NULL; NULL with the reason printed. */
static char *operands_path(struct ctl *c, const char *cluster, char **id) {
        _cleanup_free_ char *cid = ctl_lookup_cluster(c, cluster);
        char *path;
        if (!cid)
                return NULL;
        if (asprintf(&path, MUSTER_PATH_CLUSTER_OPERANDS("%s"), cid) < 0) {
                ctl_fail("out of memory");
                return NULL;
        }
        if (id)
                *id = TAKE_PTR(cid);
        return path;
}

/* The operands of the cluster at `path` (its .../operands), as the server
 * answers: {items, owned_kinds}. NULL with the reason printed. */
static json_object *get_operands(struct ctl *c, const char *path) {
        struct ctl_reply r;
        json_object *o = NULL;
        if (ctl_call_object(c, "GET", path, NULL, &r) == 0) {
                o = json_object_get(r.json);
                json_object *items = ctl_jget(o, "items");
                if (items && !json_object_is_type(items, json_type_array)) {
                        ctl_fail("GET %s: \"items\" is not a list", path);
                        json_object_put(TAKE_PTR(o));
                }
        }
        ctl_reply_free(&r);
        return o;
}

/* ---- apply ---------------------------------------------------------------------- */

/* Every FILE argument is a file, not a directory, and no two share a base
 * name (the name musterd keeps and `operand list` shows): 0, or the usage
 * error's exit status. Nothing is read yet. */
static int check_files(const struct ctl_cmd *cmd, int argc, char **argv) {
        int n = argc - optind - 1;
        if (n < 1)
                return ctl_usage_error(cmd, "FILE is missing: name at least one manifest file");
        if (n > CTL_MAX_OPERAND_FILES)
                return ctl_usage_error(cmd, "%d files; at most %d in one apply", n, CTL_MAX_OPERAND_FILES);
        for (int i = optind + 1; i < argc; i++) {
                struct stat st;
                const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
                if (!*argv[i])
                        return ctl_usage_error(cmd, "an empty FILE name");
                if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
                        return ctl_usage_error(cmd, "%s is a directory; name the manifest files in it (%s/*.yaml)",
                                               argv[i], argv[i]);
                if (!*base)
                        return ctl_usage_error(cmd, "\"%s\" names no file", argv[i]);
                for (int j = optind + 1; j < i; j++) {
                        const char *other = strrchr(argv[j], '/') ? strrchr(argv[j], '/') + 1 : argv[j];
                        if (strcmp(base, other) == 0)
                                return ctl_usage_error(cmd, "%s and %s have the same base name, which "
                                                            "musterd keeps: rename one", argv[j], argv[i]);
                }
        }
        return 0;
}

/* {"files": [{path: base name, content}]} of the FILE arguments; NULL with
 * the reason printed. */
static json_object *apply_body(int argc, char **argv) {
        _cleanup_json_ json_object *body = json_object_new_object();
        json_object *files = json_object_new_array();
        if (!body || !files) {
                json_object_put(files);
                ctl_fail("out of memory");
                return NULL;
        }
        json_object_object_add(body, "files", files);
        size_t total = 0;
        for (int i = optind + 1; i < argc; i++) {
                _cleanup_free_ char *text = ctl_read_file(argv[i], CTL_MAX_OPERAND_FILE_BYTES, "manifest file");
                if (!text)
                        return NULL;
                size_t len = strlen(text);
                if (!ctl_text_is_utf8(text, len)) {
                        ctl_fail("manifest file %s is not UTF-8 text", argv[i]);
                        return NULL;
                }
                total += len;
                if (total > CTL_MAX_OPERAND_BYTES) {
                        ctl_fail("the manifest files are more than the %d MiB one apply may send",
                                 CTL_MAX_OPERAND_BYTES >> 20);
                        return NULL;
                }
                const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
                json_object *f = json_object_new_object();
                if (!f || json_object_array_add(files, f) < 0) {
                        json_object_put(f);
                        ctl_fail("out of memory");
                        return NULL;
                }
                json_object_object_add(f, "path", json_object_new_string(base));
                json_object_object_add(f, "content", json_object_new_string_len(text, (int) len));
        }
        return TAKE_PTR(body);
}

static int applied_row(struct ctl_table *t, json_object *e) {
        char nn[512], gv[256];
        const char *row[] = { ctl_jstr(e, "kind"), ns_name(e, nn, sizeof nn), ctl_jstr(e, "package"),
                              group_version(e, gv, sizeof gv), ctl_jstr(e, "file"), ctl_jstr(e, "id") };
        return ctl_table_add(t, row);
}

static int print_applied(struct ctl *c, const char *cluster, json_object *reply) {
        static const struct ctl_col cols[] = {
                { "KIND", 0, 0, 0 },
                { "NAMESPACE/NAME", CTL_COL_FLEX, 0, 14 },
                { "PACKAGE", CTL_COL_FLEX, 0, 8 },
                { "GROUP/VERSION", CTL_COL_WIDE, 0, 0 },
                { "FILE", CTL_COL_WIDE, 0, 0 },
                { "ID", CTL_COL_WIDE | CTL_COL_ID, 0, 0 },
        };
        if (c->output == CTL_OUT_JSON)
                return ctl_print_json(reply);
        json_object *items = ctl_jget(reply, "items");
        _cleanup_free_ char *name = ctl_text_sanitize(cluster);
        size_t n = ctl_jlen(items);
        printf("%zu operand%s applied to cluster %s\n", n, n == 1 ? "" : "s", name ?: "?");
        return n ? ctl_print_rows(c, items, cols, sizeof cols / sizeof *cols, applied_row) : CTL_EXIT_OK;
}

int ctl_operand_apply(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct option opts[] = { CTL_GLOBAL_OPTIONS, {} };
        int rc;
        for (int o; (o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END;)
                return o == CTL_OPT_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE; /* printed */
        if (optind >= argc)
                return ctl_usage_error(cmd, "CLUSTER is missing");
        if ((rc = check_files(cmd, argc, argv)))
                return rc;
        _cleanup_json_ json_object *body = apply_body(argc, argv);
        if (!body)
                return CTL_EXIT_FAIL;
        const char *cluster = argv[optind];
        _cleanup_free_ char *path = operands_path(c, cluster, NULL);
        if (!path)
                return CTL_EXIT_FAIL;
        struct ctl_reply r;
        rc = ctl_call_object(c, "POST", path, body, &r) < 0 ? CTL_EXIT_FAIL : print_applied(c, cluster, r.json);
        ctl_reply_free(&r);
        return rc;
}

/* ---- list ------------------------------------------------------------------------- */

static int operand_row(struct ctl_table *t, json_object *e) {
        char nn[512], gv[256], hosts[24] = "", age[16];
        const char *source = ctl_jstr(e, "source");
        if (source && strcmp(source, "found") == 0)
                snprintf(hosts, sizeof hosts, "%zu", ctl_jlen(ctl_jget(e, "hosts")));
        const char *row[] = {
                ctl_jstr(e, "id"),
                source,
                ctl_jstr(e, "package"),
                ctl_jstr(e, "kind"),
                group_version(e, gv, sizeof gv),
                ns_name(e, nn, sizeof nn),
                ctl_jstr(e, "file"),
                hosts,
                ctl_age(ctl_jstr(e, "created_at"), age, sizeof age),
        };
        return ctl_table_add(t, row);
}

/* "Owned kinds: Kind.group (package), ..." under the table. */
static void print_owned(struct ctl *c, json_object *owned) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&text, &len);
        if (!m) {
                ctl_fail("out of memory");
                return;
        }
        for (size_t i = 0; i < ctl_jlen(owned); i++) {
                json_object *k = json_object_array_get_idx(owned, i);
                const char *g = ctl_jstr(k, "group");
                fprintf(m, "%s%s%s%s (%s)", i ? ", " : "", ctl_jstr(k, "kind") ?: "?", g && *g ? "." : "",
                        g ? g : "", ctl_jstr(k, "package") ?: "?");
        }
        if (fclose(m) != 0) {
                ctl_fail("out of memory");
                return;
        }
        print_wrapped(c, "Owned kinds: ", ctl_jlen(owned) ? text : "none (the cluster has no operators)", 2);
}

int ctl_operand_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct ctl_col cols[] = {
                { "ID", CTL_COL_WIDE, 0, 0 },
                { "SOURCE", 0, 0, 0 },
                { "PACKAGE", CTL_COL_FLEX, 0, 8 },
                { "KIND", 0, 0, 0 },
                { "GROUP/VERSION", CTL_COL_WIDE, 0, 0 },
                { "NAMESPACE/NAME", CTL_COL_FLEX, 0, 14 },
                { "FILE", CTL_COL_FLEX | CTL_COL_MIDDLE, 2, 8 },
                { "HOSTS", CTL_COL_RIGHT, 1, 0 },
                { "AGE", CTL_COL_WIDE, 0, 0 },
        };
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, NULL, NULL, 1, "CLUSTER", &rc))
                return rc;
        const char *cluster = argv[optind];
        _cleanup_free_ char *path = operands_path(c, cluster, NULL);
        if (!path)
                return CTL_EXIT_FAIL;
        _cleanup_json_ json_object *o = get_operands(c, path);
        if (!o)
                return CTL_EXIT_FAIL;
        if (c->output == CTL_OUT_JSON)
                return ctl_print_json(o);
        json_object *items = ctl_jget(o, "items");
        if (ctl_jlen(items) == 0) {
                _cleanup_free_ char *name = ctl_text_sanitize(cluster);
                printf("cluster %s has no operands\n", name ?: "?");
        } else if ((rc = ctl_print_rows(c, items, cols, sizeof cols / sizeof *cols, operand_row)))
                return rc;
        print_owned(c, ctl_jget(o, "owned_kinds"));
        return CTL_EXIT_OK;
}

/* ---- delete -------------------------------------------------------------------------- */

static bool is_id_prefix(const char *s) {
        size_t n = strlen(s);
        return n >= 4 && n <= 36 && strspn(s, "0123456789abcdefABCDEF-") == n;
}

/* Whether `kind` as typed names e's kind: "EtcdCluster", any case, or
 * "EtcdCluster.etcd.database.coreos.com" with its group. */
static bool kind_is(json_object *e, const char *kind, size_t n) {
        const char *k = ctl_jstr(e, "kind"), *g = ctl_jstr(e, "group");
        if (!k)
                return false;
        size_t kl = strlen(k);
        if (n == kl)
                return strncasecmp(kind, k, n) == 0;
        return g && n == kl + 1 + strlen(g) && strncasecmp(kind, k, kl) == 0 && kind[kl] == '.' &&
               strncasecmp(kind + kl + 1, g, n - kl - 1) == 0;
}

/* Whether e is what `arg` names: a start of its id (pick_operand tries
 * whole ids first), KIND/NAME or KIND/NAMESPACE/NAME. */
static bool operand_is(json_object *e, const char *arg) {
        const char *s1 = strchr(arg, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
        const char *id = ctl_jstr(e, "id"), *ns = ctl_jstr(e, "namespace") ?: "", *name = ctl_jstr(e, "name");
        if (!s1)
                return id && is_id_prefix(arg) && strncasecmp(id, arg, strlen(arg)) == 0;
        if (!name || !kind_is(e, arg, (size_t) (s1 - arg)))
                return false;
        if (!s2)
                return strcmp(name, s1 + 1) == 0;
        return strlen(ns) == (size_t) (s2 - s1 - 1) && strncmp(ns, s1 + 1, (size_t) (s2 - s1 - 1)) == 0 &&
               strcmp(name, s2 + 1) == 0;
}

/* "Kind ns/name" of an operand, sanitized (malloc'd). */
static char *operand_label(json_object *e) {
        char nn[512];
        _cleanup_free_ char *s = NULL;
        if (asprintf(&s, "%s %s", ctl_jstr(e, "kind") ?: "?", ns_name(e, nn, sizeof nn)) < 0)
                return NULL;
        return ctl_text_sanitize(s);
}

/* The one managed operand of `items` that arg names; NULL with why printed
 * (none, or several: listed; a found one is named as such). */
static json_object *pick_operand(struct ctl *c, json_object *items, const char *arg, const char *cluster) {
        size_t n = ctl_jlen(items), k = 0, found = 0;
        _cleanup_free_ json_object **m = calloc(n + 1, sizeof *m);
        if (!m) {
                ctl_fail("out of memory");
                return NULL;
        }
        /* An exact id first: a prefix that is also another's full id is that one. */
        for (int pass = 0; pass < 2 && k == 0; pass++)
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(items, i);
                        const char *src = ctl_jstr(e, "source"), *id = ctl_jstr(e, "id");
                        bool managed = src && strcmp(src, "managed") == 0;
                        bool hit = pass == 0 ? id && strcasecmp(id, arg) == 0 : operand_is(e, arg);
                        if (hit && managed)
                                m[k++] = e;
                        else if (hit && pass == 1)
                                found++;
                }
        _cleanup_free_ char *a = ctl_text_sanitize(arg), *cl = ctl_text_sanitize(cluster);
        if (k == 1)
                return m[0];
        if (k == 0 && found)
                ctl_fail("\"%s\" is an operand the node agents found on cluster %s's hosts, not one applied through "
                         "musterd: operand delete removes only those applied (operand list shows the SOURCE)",
                         a ?: "?", cl ?: "?");
        else if (k == 0) {
                ctl_fail("no operand of cluster %s matches \"%s\" (an id, KIND/NAME or KIND/NAMESPACE/NAME; "
                         "operand list shows them)",
                         cl ?: "?", a ?: "?");
                c->fail_exit = CTL_EXIT_NOT_FOUND;
        }
        else {
                ctl_fail("\"%s\" matches %zu operands of cluster %s; give KIND/NAMESPACE/NAME or the id:", a ?: "?", k,
                         cl ?: "?");
                for (size_t i = 0; i < k && i < 5; i++) {
                        _cleanup_free_ char *l = operand_label(m[i]);
                        fprintf(stderr, "  %s  %s\n", ctl_jstr(m[i], "id") ?: "?", l ?: "?");
                }
                if (k > 5)
                        fprintf(stderr, "  ... and %zu more\n", k - 5);
        }
        return NULL;
}

int ctl_operand_delete(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, NULL, NULL, 2, "CLUSTER and OPERAND", &rc))
                return rc;
        const char *cluster = argv[optind], *arg = argv[optind + 1];
        if (!*arg)
                return ctl_usage_error(cmd, "OPERAND is empty");
        _cleanup_free_ char *cid = NULL;
        _cleanup_free_ char *path = operands_path(c, cluster, &cid);
        if (!path)
                return CTL_EXIT_FAIL;
        _cleanup_json_ json_object *o = get_operands(c, path);
        if (!o)
                return CTL_EXIT_FAIL;
        json_object *e = pick_operand(c, ctl_jget(o, "items"), arg, cluster);
        if (!e)
                return CTL_EXIT_FAIL;
        const char *id = ctl_jstr(e, "id");
        _cleanup_free_ char *esc = id ? ctl_url_escape(id) : NULL, *one = NULL;
        if (!esc || asprintf(&one, MUSTER_PATH_CLUSTER_OPERAND("%s", "%s"), cid, esc) < 0) {
                one = NULL;
                return ctl_fail("%s", id ? "out of memory" : "the server sent an operand without an id");
        }
        struct ctl_reply r;
        rc = ctl_call(c, "DELETE", one, NULL, &r) < 0 ? CTL_EXIT_FAIL : CTL_EXIT_OK;
        ctl_reply_free(&r);
        if (rc == CTL_EXIT_OK && c->output != CTL_OUT_JSON) {
                _cleanup_free_ char *label = operand_label(e), *cl = ctl_text_sanitize(cluster);
                printf("operand %s deleted from cluster %s\n", label ?: "?", cl ?: "?");
        }
        return rc;
}
