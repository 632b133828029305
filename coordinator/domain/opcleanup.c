/* Operand cleanup's state machine (opcleanup.h). */
#include "domain/opcleanup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "json-cleanup.h"
#include "jsonwrite.h"

static const char *cleanup_phase_to_string(enum cleanup_phase p) {
        switch (p) {
        case CLEANUP_NONE: return "None";
        case CLEANUP_WAITING: return "Cleanup";
        case CLEANUP_DONE: return "Done";
        case _CLEANUP_PHASE_MAX:
        case _CLEANUP_PHASE_INVALID: break;
        }
        return NULL;
}

static enum cleanup_phase cleanup_phase_from_string(const char *s) {
        for (int i = 0; s && i < _CLEANUP_PHASE_MAX; i++)
                if (strcmp(s, cleanup_phase_to_string(i)) == 0)
                        return i;
        return _CLEANUP_PHASE_INVALID;
}

static void item_free(struct cleanup_item *it) {
        free(it->group);
        free(it->kind);
        free(it->namespace);
        free(it->name);
        strv_free(&it->gone_on);
        *it = (struct cleanup_item) { 0 };
}

void cleanup_state_free(struct cleanup_state *st) {
        for (size_t i = 0; i < st->n; i++)
                item_free(&st->items[i]);
        free(st->items);
        strv_free(&st->lagging);
        *st = (struct cleanup_state) { 0 };
}

void cleanup_step_free(struct cleanup_step *s) {
        strv_free(&s->lagging);
        *s = (struct cleanup_step) { 0 };
}

static bool str_eq(const char *a, const char *b) {
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The same object: group, kind, namespace and name. */
static bool same(const struct cleanup_item *it, const struct cleanup_operand *o) {
        return str_eq(it->group, o->group ? o->group : "") && str_eq(it->kind, o->kind) &&
               str_eq(it->namespace, o->namespace) && str_eq(it->name, o->name);
}

static int item_set(struct cleanup_item *it, const struct cleanup_operand *o) {
        *it = (struct cleanup_item) {
                .group = strdup(o->group ? o->group : ""),
                .kind = strdup(o->kind ? o->kind : ""),
                .namespace = o->namespace ? strdup(o->namespace) : NULL,
                .name = strdup(o->name ? o->name : ""),
                .managed = o->managed,
        };
        if (!it->group || !it->kind || !it->name || (o->namespace && !it->namespace)) {
                item_free(it);
                return -ENOMEM;
        }
        return 0;
}

int cleanup_start(struct cleanup_state *st, bool enabled, const struct cleanup_operand *ops, size_t n, int64_t now_s) {
        if (st->phase != CLEANUP_NONE)
                return -EALREADY;
        if (enabled && n > CLEANUP_MAX_ITEMS)
                return -E2BIG;
        st->started_s = now_s;
        st->aborted = st->stalled = false;
        if (!enabled || n == 0) {
                st->phase = CLEANUP_DONE;
                st->total = 0;
                return 0;
        }
        struct cleanup_item *v = calloc(n, sizeof *v);
        size_t k = 0;
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                bool dup = false;
                for (size_t j = 0; j < k && !dup; j++)
                        dup = same(&v[j], &ops[i]);
                if (dup)
                        continue; /* managed and found: one object */
                if (item_set(&v[k], &ops[i]) < 0) {
                        for (size_t j = 0; j < k; j++)
                                item_free(&v[j]);
                        free(v);
                        return -ENOMEM;
                }
                k++;
        }
        st->items = v;
        st->n = k;
        st->total = (int64_t) k;
        st->phase = CLEANUP_WAITING;
        return 0;
}

int cleanup_report(struct cleanup_state *st, const char *host, const struct cleanup_operand *present, size_t n) {
        int changed = 0;
        if (st->phase != CLEANUP_WAITING || !host)
                return 0;
        for (size_t i = 0; i < st->n; i++) {
                struct cleanup_item *it = &st->items[i];
                bool there = false;
                for (size_t k = 0; k < n && !there; k++)
                        there = same(it, &present[k]);
                if (there || strv_contains(&it->gone_on, host))
                        continue;
                if (strv_push(&it->gone_on, host) < 0)
                        return -ENOMEM;
                changed++;
        }
        return changed;
}

int cleanup_advance(struct cleanup_state *st, const char *const *hosts, size_t n_hosts, int64_t now_s,
                    int64_t timeout_s, struct cleanup_step *out) {
        *out = (struct cleanup_step) { 0 };
        if (st->phase != CLEANUP_WAITING)
                return 0;
        size_t k = 0;
        for (size_t i = 0; i < st->n; i++) {
                struct cleanup_item *it = &st->items[i];
                bool everywhere = true;
                for (size_t h = 0; h < n_hosts; h++) {
                        if (strv_contains(&it->gone_on, hosts[h]))
                                continue;
                        everywhere = false;
                        if (!strv_contains(&out->lagging, hosts[h]) && strv_push(&out->lagging, hosts[h]) < 0)
                                return -ENOMEM;
                }
                /* With no host at all, nothing can report: it stays pending. */
                if (everywhere && n_hosts > 0) {
                        item_free(it);
                        continue;
                }
                st->items[k++] = *it;
        }
        st->n = k;
        strv_sort(&out->lagging);
        strv_free(&st->lagging);
        for (size_t h = 0; h < out->lagging.n; h++)
                if (strv_push(&st->lagging, out->lagging.v[h]) < 0)
                        return -ENOMEM;
        if (k == 0) {
                st->phase = CLEANUP_DONE;
                out->done_now = true;
                return 0;
        }
        if (!st->stalled && now_s - st->started_s >= timeout_s) {
                st->stalled = true;
                out->stalled_now = true;
        }
        return 0;
}

int cleanup_abort(struct cleanup_state *st) {
        if (st->phase != CLEANUP_WAITING)
                return 0;
        for (size_t i = 0; i < st->n; i++)
                item_free(&st->items[i]);
        free(st->items);
        st->items = NULL;
        st->n = 0;
        strv_free(&st->lagging);
        st->phase = CLEANUP_DONE;
        st->aborted = true;
        return 1;
}

char *cleanup_message(const struct cleanup_state *st) {
        char *m = NULL;
        if (st->phase != CLEANUP_WAITING)
                return NULL;
        if (asprintf(&m, "waiting for operator to finish cleanup for %zu CRs", st->n) < 0)
                return NULL;
        return m;
}

/* At most max strings of v as a JSON array; NULL on ENOMEM. */
static json_object *strv_json(const struct strv *v, size_t max) {
        _cleanup_json_ json_object *a = json_object_new_array();
        for (size_t i = 0; a && i < v->n && i < max; i++)
                if (json_object_array_add(a, json_object_new_string(v->v[i])) < 0)
                        return NULL;
        return TAKE_PTR(a);
}

static json_object *str_or_null(const char *s) {
        return s ? json_object_new_string(s) : NULL;
}

json_object *cleanup_status_json(const struct cleanup_state *st) {
        _cleanup_json_ json_object *o = json_object_new_object(), *kinds = json_object_new_array();
        if (!o || !kinds)
                return NULL;
        for (size_t i = 0; i < st->n; i++) {
                const struct cleanup_item *it = &st->items[i];
                json_object *k = NULL;
                for (size_t j = 0; j < json_object_array_length(kinds) && !k; j++) {
                        json_object *e = json_object_array_get_idx(kinds, j);
                        if (!strcmp(json_object_get_string(json_object_object_get(e, "kind")), it->kind) &&
                            !strcmp(json_object_get_string(json_object_object_get(e, "group")), it->group))
                                k = e;
                }
                if (!k) {
                        _cleanup_json_ json_object *nk = json_object_new_object();
                        if (!nk || jadd(nk, "group", json_object_new_string(it->group)) < 0 ||
                            jadd(nk, "kind", json_object_new_string(it->kind)) < 0 ||
                            jadd(nk, "names", json_object_new_array()) < 0 ||
                            jadd(nk, "count", json_object_new_int64(0)) < 0 || json_object_array_add(kinds, nk) < 0)
                                return NULL;
                        k = TAKE_PTR(nk);
                }
                json_object *names = json_object_object_get(k, "names");
                int64_t count = json_object_get_int64(json_object_object_get(k, "count")) + 1;
                if (jadd(k, "count", json_object_new_int64(count)) < 0)
                        return NULL;
                if (json_object_array_length(names) < CLEANUP_NAMES_PER_KIND) {
                        char n[600];
                        snprintf(n, sizeof n, "%s%s%s", it->namespace ? it->namespace : "", it->namespace ? "/" : "",
                                 it->name);
                        if (json_object_array_add(names, json_object_new_string(n)) < 0)
                                return NULL;
                }
        }
        if (jadd(o, "phase", json_object_new_string(cleanup_phase_to_string(st->phase))) < 0 ||
            jadd(o, "aborted", json_object_new_boolean(st->aborted)) < 0 ||
            jadd(o, "stalled", json_object_new_boolean(st->stalled)) < 0 ||
            jadd(o, "total", json_object_new_int64(st->total)) < 0 ||
            jadd(o, "pending_count", json_object_new_int64((int64_t) st->n)) < 0 ||
            jadd(o, "pending_deletion", TAKE_PTR(kinds)) < 0 ||
            jadd(o, "lagging_hosts", strv_json(&st->lagging, CLEANUP_NAMES_PER_KIND)) < 0 ||
            jadd(o, "lagging_count", json_object_new_int64((int64_t) st->lagging.n)) < 0)
                return NULL;
        if (st->revision > 0 && jadd(o, "revision", json_object_new_int64(st->revision)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

json_object *cleanup_to_json(const struct cleanup_state *st) {
        _cleanup_json_ json_object *o = json_object_new_object(), *items = json_object_new_array();
        if (!o || !items)
                return NULL;
        for (size_t i = 0; i < st->n; i++) {
                const struct cleanup_item *it = &st->items[i];
                json_object *e = json_object_new_object(), *gone = json_object_new_array();
                if (!e || !gone || json_object_array_add(items, e) < 0) {
                        json_object_put(e);
                        json_object_put(gone);
                        return NULL;
                }
                for (size_t h = 0; h < it->gone_on.n; h++)
                        if (json_object_array_add(gone, json_object_new_string(it->gone_on.v[h])) < 0) {
                                json_object_put(gone);
                                return NULL;
                        }
                if (jadd(e, "group", json_object_new_string(it->group)) < 0 ||
                    jadd(e, "kind", json_object_new_string(it->kind)) < 0 ||
                    json_object_object_add(e, "namespace", str_or_null(it->namespace)) < 0 ||
                    jadd(e, "name", json_object_new_string(it->name)) < 0 ||
                    jadd(e, "managed", json_object_new_boolean(it->managed)) < 0 || jadd(e, "gone_on", gone) < 0)
                        return NULL;
        }
        if (jadd(o, "phase", json_object_new_string(cleanup_phase_to_string(st->phase))) < 0 ||
            jadd(o, "aborted", json_object_new_boolean(st->aborted)) < 0 ||
            jadd(o, "stalled", json_object_new_boolean(st->stalled)) < 0 ||
            jadd(o, "started_s", json_object_new_int64(st->started_s)) < 0 ||
            jadd(o, "revision", json_object_new_int64(st->revision)) < 0 ||
            jadd(o, "lagging", strv_json(&st->lagging, CLEANUP_MAX_ITEMS)) < 0 ||
            jadd(o, "total", json_object_new_int64(st->total)) < 0 || jadd(o, "items", TAKE_PTR(items)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static const char *get_str(json_object *o, const char *k) {
        json_object *v;
        return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : NULL;
}

int cleanup_from_json(json_object *o, struct cleanup_state *out) {
        json_object *items, *v;
        *out = (struct cleanup_state) { 0 };
        if (!json_object_is_type(o, json_type_object) ||
            (out->phase = cleanup_phase_from_string(get_str(o, "phase"))) == _CLEANUP_PHASE_INVALID ||
            !json_object_object_get_ex(o, "items", &items) || !json_object_is_type(items, json_type_array) ||
            json_object_array_length(items) > CLEANUP_MAX_ITEMS) {
                *out = (struct cleanup_state) { 0 };
                return -EINVAL;
        }
        out->aborted = json_object_object_get_ex(o, "aborted", &v) && json_object_get_boolean(v);
        out->stalled = json_object_object_get_ex(o, "stalled", &v) && json_object_get_boolean(v);
        out->started_s = json_object_object_get_ex(o, "started_s", &v) ? json_object_get_int64(v) : 0;
        out->total = json_object_object_get_ex(o, "total", &v) ? json_object_get_int64(v) : 0;
        out->revision = json_object_object_get_ex(o, "revision", &v) ? json_object_get_int64(v) : 0;
        json_object *lag;
        size_t nl = json_object_object_get_ex(o, "lagging", &lag) && json_object_is_type(lag, json_type_array)
                            ? json_object_array_length(lag)
                            : 0;
        for (size_t h = 0; h < nl && h < CLEANUP_MAX_ITEMS; h++) {
                const char *host = json_object_get_string(json_object_array_get_idx(lag, h));
                if (!host || strv_push(&out->lagging, host) < 0) {
                        cleanup_state_free(out);
                        return host ? -ENOMEM : -EINVAL;
                }
        }
        size_t n = json_object_array_length(items);
        out->items = calloc(n ? n : 1, sizeof *out->items);
        if (!out->items)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(items, i), *gone;
                struct cleanup_operand op = { get_str(e, "group"), get_str(e, "kind"), get_str(e, "namespace"),
                                              get_str(e, "name"),
                                              json_object_object_get_ex(e, "managed", &v) && json_object_get_boolean(v) };
                int r = !op.group || !op.kind || !op.name ? -EINVAL : item_set(&out->items[i], &op);
                if (r < 0) {
                        cleanup_state_free(out);
                        return r;
                }
                out->n++;
                size_t ng = json_object_object_get_ex(e, "gone_on", &gone) && json_object_is_type(gone, json_type_array)
                                    ? json_object_array_length(gone)
                                    : 0;
                for (size_t h = 0; h < ng; h++) {
                        const char *host = json_object_get_string(json_object_array_get_idx(gone, h));
                        if (!host || strv_push(&out->items[i].gone_on, host) < 0) {
                                cleanup_state_free(out);
                                return host ? -ENOMEM : -EINVAL;
                        }
                }
        }
        return 0;
}

int cleanup_kinds_dropped(const struct cleanup_kind *before, size_t n_before, const struct cleanup_kind *after,
                          size_t n_after, struct strv *dropped) {
        for (size_t i = 0; i < n_before; i++) {
                bool kept = false;
                for (size_t j = 0; j < n_after && !kept; j++)
                        kept = str_eq(before[i].group, after[j].group) && str_eq(before[i].kind, after[j].kind);
                if (kept)
                        continue;
                char *k = NULL;
                if (asprintf(&k, "%s%s%s", before[i].kind ? before[i].kind : "",
                             before[i].group && *before[i].group ? "." : "", before[i].group ? before[i].group : "") < 0)
                        return -ENOMEM;
                if (strv_contains(dropped, k)) {
                        free(k);
                        continue;
                }
                if (strv_consume(dropped, k) < 0)
                        return -ENOMEM;
        }
        return 0;
}
