/* What the user typed -> the ids the API wants. Tables show ids cut to 8
 * characters, so a unique prefix of an id works everywhere an id does, and
 * so does a name; a full id goes to the server untouched. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cleanup.h"
#include "ctl.h"
#include "json-cleanup.h"
#include "protocol.h"
#include "uuid.h"

static bool is_id_prefix(const char *s) {
        size_t n = strlen(s);
        return n >= 4 && n <= 36 && strspn(s, "0123456789abcdefABCDEF-") == n;
}

static void list_matches(json_object **m, size_t n, const char *name_key) {
        for (size_t i = 0; i < n && i < 5; i++) {
                _cleanup_free_ char *name = ctl_jstr(m[i], name_key) ? ctl_text_sanitize(ctl_jstr(m[i], name_key)) : NULL;
                fprintf(stderr, "  %s%s%s%s\n", ctl_jstr(m[i], "id"), name ? " (" : "", name ? name : "",
                        name ? ")" : "");
        }
        if (n > 5)
                fprintf(stderr, "  ... and %zu more\n", n - 5);
}

/* Pick the one row of `rows` whose name equals arg, else whose id starts with it. */
/* *not_found is set when nothing matches. */
static char *pick(json_object *rows, const char *arg, const char *kind, const char *name_key, bool *not_found) {
        size_t n = json_object_array_length(rows), nn = 0, np = 0;
        _cleanup_free_ json_object **by_name = calloc(n + 1, sizeof *by_name);
        _cleanup_free_ json_object **by_prefix = calloc(n + 1, sizeof *by_prefix);
        if (!by_name || !by_prefix) {
                ctl_fail("out of memory");
                return NULL;
        }
        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_array_get_idx(rows, i);
                const char *id = ctl_jstr(o, "id"), *name = ctl_jstr(o, name_key);
                if (!id)
                        continue;
                if (name && strcmp(name, arg) == 0)
                        by_name[nn++] = o;
                else if (is_id_prefix(arg) && strncasecmp(id, arg, strlen(arg)) == 0)
                        by_prefix[np++] = o;
        }
        json_object **m = nn ? by_name : by_prefix;
        size_t k = nn ? nn : np;
        if (k == 1)
                return strdup(ctl_jstr(m[0], "id"));
        if (k == 0) {
                ctl_fail("no %s matches \"%s\"", kind, arg);
                *not_found = true;
        } else {
                ctl_fail("\"%s\" matches %zu %ss; give more of the id:", arg, k, kind);
                list_matches(m, k, name_key);
        }
        return NULL;
}

static char *lookup(struct ctl *c, const char *arg, const char *path, const char *kind) {
        char id[UUID_STR_LEN];
        if (uuid_normalize(arg, id) == 0)
                return strdup(id);
        if (!*arg) {
                ctl_fail("an empty %s name", kind);
                return NULL;
        }
        _cleanup_json_ json_object *rows = NULL;
        if (ctl_get_list(c, path, true, &rows, NULL) < 0)
                return NULL;
        bool not_found = false;
        char *id_found = pick(rows, arg, kind, "name", &not_found);
        if (not_found)
                c->fail_exit = CTL_EXIT_NOT_FOUND;
        return id_found;
}

char *ctl_lookup_infra_env(struct ctl *c, const char *arg) {
        return lookup(c, arg, MUSTER_PATH_INFRA_ENVS, "infra-env");
}

char *ctl_lookup_cluster(struct ctl *c, const char *arg) {
        return lookup(c, arg, MUSTER_PATH_CLUSTERS, "cluster");
}

char *ctl_cluster_path(struct ctl *c, const char *arg, const char *suffix, char **id_out) {
        _cleanup_free_ char *id = ctl_lookup_cluster(c, arg);
        char *path;
        if (!id)
                return NULL;
        if (asprintf(&path, MUSTER_PATH_CLUSTER("%s") "%s", id, suffix) < 0) {
                ctl_fail("out of memory");
                return NULL;
        }
        if (id_out)
                *id_out = TAKE_PTR(id);
        return path;
}

int ctl_lookup_host(struct ctl *c, const char *arg, char **ie_id, char **host_id) {
        _cleanup_free_ char *ie = NULL;
        const char *slash = strchr(arg, '/');
        struct ctl_query q = { 0 };
        char id[UUID_STR_LEN];
        const char *h = arg;

        if (slash) {
                _cleanup_free_ char *iearg = strndup(arg, (size_t) (slash - arg));
                if (!iearg || !(ie = ctl_lookup_infra_env(c, iearg)))
                        return -ENOENT;
                h = slash + 1;
                if (uuid_normalize(h, id) == 0) {
                        *ie_id = TAKE_PTR(ie);
                        *host_id = strdup(id);
                        return 0;
                }
                ctl_query_add(&q, "infra_env_id", ie);
        }
        if (!*h) {
                ctl_fail("no host named in \"%s\"", arg);
                return -EINVAL;
        }
        bool full = uuid_normalize(h, id) == 0, by_name = !full && !is_id_prefix(h);
        if (full)
                ctl_query_add(&q, "id", id);
        else if (by_name)
                ctl_query_add(&q, "hostname", h); /* contains, on either hostname */
        _cleanup_free_ char *path = NULL;
        if (q.overflow || asprintf(&path, MUSTER_PATH_HOSTS "%s", q.buf) < 0) {
                path = NULL;
                ctl_fail("host \"%s\" is too long", arg);
                return -EINVAL;
        }
        _cleanup_json_ json_object *rows = NULL;
        if (ctl_get_list(c, path, true, &rows, NULL) < 0)
                return -EIO;
        size_t n = json_object_array_length(rows), k = 0;
        _cleanup_free_ json_object **m = calloc(n + 1, sizeof *m);
        if (!m) {
                ctl_fail("out of memory");
                return -ENOMEM;
        }
        /* An exact id, else an exact hostname, else an id prefix, else the
         * hosts whose hostname the server found to contain the text. */
        for (int pass = 0; pass < 4 && k == 0; pass++)
                for (size_t i = 0; i < n; i++) {
                        json_object *o = json_object_array_get_idx(rows, i);
                        const char *hid = ctl_jstr(o, "id"), *name = ctl_jstr(o, "requested_hostname");
                        if (!name)
                                name = ctl_jstr(o, "inventory.hostname");
                        if (!hid)
                                continue;
                        if ((pass == 0 && full && strcasecmp(hid, id) == 0) ||
                            (pass == 1 && name && strcmp(name, h) == 0) ||
                            (pass == 2 && !full && is_id_prefix(h) && strncasecmp(hid, h, strlen(h)) == 0) ||
                            (pass == 3 && by_name))
                                m[k++] = o;
                }
        if (k == 1) {
                *ie_id = strdup(ctl_jstr(m[0], "infra_env_id") ? ctl_jstr(m[0], "infra_env_id") : "");
                *host_id = strdup(ctl_jstr(m[0], "id"));
                return *ie_id && *host_id ? 0 : -ENOMEM;
        }
        if (k == 0) {
                ctl_fail("no host matches \"%s\"", arg);
                c->fail_exit = CTL_EXIT_NOT_FOUND;
                return -ENOENT;
        }
        ctl_fail("\"%s\" matches %zu hosts; give INFRA_ENV/HOST or more of the id:", arg, k);
        for (size_t i = 0; i < k && i < 5; i++)
                fprintf(stderr, "  %s/%s\n", ctl_jstr(m[i], "infra_env_id"), ctl_jstr(m[i], "id"));
        if (k > 5)
                fprintf(stderr, "  ... and %zu more\n", k - 5);
        return -EEXIST;
}
