/* Printing for the commands: JSON as the server sent it, tables and
 * key/value blocks through table.c, times for people, and the lookups into
 * the server's JSON that every resource file makes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "ctl.h"
#include "customcols.h"
#include "growbuf.h"
#include "jsonpath.h"
#include "jsonyaml.h"
#include "model.h"

static enum ctl_json_form json_form;
static const char *json_tpl, *json_resource = "";
static const struct customcols *json_cols;

void ctl_json_form_set(enum ctl_json_form form, const char *tpl, const struct customcols *cols) {
        json_form = form;
        json_tpl = tpl;
        json_cols = cols;
}

void ctl_json_resource_set(const char *resource) {
        json_resource = resource ? resource : "";
}

/* "host/ID": the record's kind (lower case) or the command's resource, and
 * its id, else its name or version. */
static void print_name(json_object *o) {
        const char *kind = ctl_jstr(o, "kind"), *id = ctl_jstr(o, "id");
        if (!id)
                id = ctl_jstr(o, "name");
        if (!id)
                id = ctl_jstr(o, "version");
        if (!id)
                return;
        char k[64];
        snprintf(k, sizeof k, "%s", kind ? kind : json_resource);
        for (char *p = k; *p; p++)
                if (*p >= 'A' && *p <= 'Z')
                        *p = (char) (*p - 'A' + 'a');
        _cleanup_free_ char *safe = ctl_text_sanitize(id);
        printf("%s/%s\n", k, safe ? safe : "?");
}

int ctl_print_json(json_object *o) {
        if (json_form == CTL_JSON_NAME) {
                if (json_object_is_type(o, json_type_array))
                        for (size_t i = 0; i < json_object_array_length(o); i++)
                                print_name(json_object_array_get_idx(o, i));
                else
                        print_name(o);
                return CTL_EXIT_OK;
        }
        if (json_form == CTL_JSON_PATH) {
                struct growbuf out = { 0 };
                char err[256];
                int r = jsonpath_render(json_tpl, o, &out, err, sizeof err);
                if (r == 0 && out.len)
                        fwrite(out.data, 1, out.len, stdout);
                free(out.data);
                return r == 0 ? CTL_EXIT_OK : ctl_fail("-o jsonpath: %s", err);
        }
        /* The same document in other words (DECISIONS.md D10). */
        if (json_form == CTL_JSON_YAML || json_form == CTL_JSON_COLUMNS) {
                struct growbuf out = { 0 };
                int r = json_form == CTL_JSON_YAML ? jsonyaml_emit(o, &out) : customcols_render(json_cols, o, &out);
                if (r == 0 && out.len)
                        fwrite(out.data, 1, out.len, stdout);
                free(out.data);
                if (r == -E2BIG)
                        return ctl_fail("-o %s: the output is too large", json_form == CTL_JSON_YAML ? "yaml"
                                                                                                   : "custom-columns");
                return r == 0 ? CTL_EXIT_OK : ctl_fail("-o %s: out of memory", json_form == CTL_JSON_YAML ? "yaml"
                                                                                                          : "custom-columns");
        }
        const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                  JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s)
                return ctl_fail("out of memory");
        puts(s);
        return CTL_EXIT_OK;
}

int ctl_print_table(struct ctl *c, const struct ctl_table *t) {
        char *s = ctl_table_render(t, &c->fmt);
        if (!s)
                return ctl_fail("out of memory");
        fputs(s, stdout);
        free(s);
        return CTL_EXIT_OK;
}

int ctl_print_kv(struct ctl *c, const struct ctl_kv *kv) {
        char *s = ctl_kv_render(kv, &c->fmt);
        if (!s)
                return ctl_fail("out of memory");
        fputs(s, stdout);
        free(s);
        return CTL_EXIT_OK;
}

json_object *ctl_jget(json_object *o, const char *path) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", path);
        json_object *cur = o;
        for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && cur; k = strtok_r(NULL, ".", &save)) {
                if (json_object_is_type(cur, json_type_array)) {
                        char *end;
                        long i = strtol(k, &end, 10);
                        cur = *end || i < 0 ? NULL : json_object_array_get_idx(cur, (size_t) i);
                } else if (!json_object_is_type(cur, json_type_object) || !json_object_object_get_ex(cur, k, &cur))
                        cur = NULL;
        }
        return cur && !json_object_is_type(cur, json_type_null) ? cur : NULL;
}

const char *ctl_jstr(json_object *o, const char *path) {
        json_object *v = ctl_jget(o, path);
        if (!v || json_object_is_type(v, json_type_object) || json_object_is_type(v, json_type_array))
                return NULL;
        return json_object_get_string(v);
}

int64_t ctl_jint(json_object *o, const char *path, int64_t def) {
        json_object *v = ctl_jget(o, path);
        if (!v || !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
                return def;
        return json_object_get_int64(v);
}

char *ctl_time(const char *rfc3339, char *buf, size_t n) {
        int64_t t;
        struct tm tm;
        time_t tt;
        if (!rfc3339 || model_time_parse(rfc3339, &t) < 0) {
                snprintf(buf, n, "%s", rfc3339 ? rfc3339 : "-");
                return buf;
        }
        tt = (time_t) t;
        if (!gmtime_r(&tt, &tm) || strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm) == 0)
                snprintf(buf, n, "%s", rfc3339);
        return buf;
}

char *ctl_age(const char *rfc3339, char *buf, size_t n) {
        int64_t t;
        if (!rfc3339 || model_time_parse(rfc3339, &t) < 0) {
                snprintf(buf, n, "-");
                return buf;
        }
        int64_t age = (int64_t) time(NULL) - t;
        return ctl_format_age(age < 0 ? 0 : age, buf, n);
}

char *ctl_when(const char *rfc3339, char *buf, size_t n) {
        char a[32], b[16];
        if (!rfc3339)
                return NULL;
        ctl_time(rfc3339, a, sizeof a);
        ctl_age(rfc3339, b, sizeof b);
        snprintf(buf, n, "%s UTC (%s ago)", a, b);
        return buf;
}

int ctl_print_validations(struct ctl *c, json_object *v) {
        static const struct ctl_col cols[] = {
                { "VALIDATION", 0, 0, 0 },
                { "STATUS", 0, 0, 0 },
                { "MESSAGE", CTL_COL_FLEX, 0, 20 },
        };
        struct ctl_table t;
        if (!v || !json_object_is_type(v, json_type_array) || json_object_array_length(v) == 0) {
                puts("Validations: none yet");
                return CTL_EXIT_OK;
        }
        ctl_table_init(&t, cols, 3);
        for (size_t i = 0; i < json_object_array_length(v); i++) {
                json_object *e = json_object_array_get_idx(v, i);
                const char *row[] = { ctl_jstr(e, "id"), ctl_jstr(e, "status"), ctl_jstr(e, "message") };
                if (ctl_table_add(&t, row) < 0) {
                        ctl_table_free(&t);
                        return ctl_fail("out of memory");
                }
        }
        puts("");
        int r = ctl_print_table(c, &t);
        ctl_table_free(&t);
        return r;
}

size_t ctl_jlen(json_object *a) {
        return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

char *ctl_join(json_object *a, const char *none) {
        return ctl_join_sep(a, ", ", none);
}

char *ctl_join_sep(json_object *a, const char *sep, const char *none) {
        size_t n = ctl_jlen(a), len = 1;
        for (size_t i = 0; i < n; i++)
                len += strlen(json_object_get_string(json_object_array_get_idx(a, i)) ?: "") + strlen(sep);
        if (n == 0)
                return strdup(none);
        char *s = malloc(len), *p = s;
        if (!s)
                return NULL;
        for (size_t i = 0; i < n; i++)
                p = stpcpy(stpcpy(p, i ? sep : ""), json_object_get_string(json_object_array_get_idx(a, i)) ?: "");
        *p = '\0';
        return s;
}

bool ctl_array_has(json_object *a, const char *s) {
        size_t n = ctl_jlen(a);
        for (size_t i = 0; i < n; i++) {
                const char *e = json_object_get_string(json_object_array_get_idx(a, i));
                if (e && strcmp(e, s) == 0)
                        return true;
        }
        return false;
}

/* The next name of a comma-separated list at *p: [*b, *e); false at the end. */
static bool csv_next(const char **p, const char **b, const char **e, bool *empty) {
        if (!*p)
                return false;
        size_t n = strcspn(*p, ",");
        *b = *p;
        *e = *p + n;
        while (*b < *e && (**b == ' ' || **b == '\t'))
                (*b)++;
        while (*e > *b && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
                (*e)--;
        *empty = *b == *e;
        *p = (*p)[n] ? *p + n + 1 : NULL;
        return true;
}

int ctl_csv_append(json_object *a, const char *csv) {
        const char *p, *b, *e;
        bool empty;
        if (!*csv)
                return 0;
        /* All or nothing: check every name before adding any. */
        size_t n = 0;
        for (p = csv; csv_next(&p, &b, &e, &empty); n++)
                if (empty)
                        return -EINVAL;
        if (json_object_array_length(a) + n > CTL_MAX_NAMES)
                return -E2BIG;
        for (p = csv; csv_next(&p, &b, &e, &empty);) {
                char *name = strndup(b, (size_t) (e - b));
                if (!name)
                        return -ENOMEM;
                if (!ctl_array_has(a, name))
                        json_object_array_add(a, json_object_new_string(name));
                free(name);
        }
        return 0;
}
