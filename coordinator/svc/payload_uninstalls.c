/* An uninstall as kept, and the deletions it puts in a payload
 * (payload_uninstalls.h). */
#include "svc/payload_uninstalls.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "json-cleanup.h"
#include "jsonwrite.h"
#include "payload.h"

void uninstall_free(struct uninstall *u) {
        free(u->by);
        cleanup_state_free(&u->st);
        *u = (struct uninstall) { 0 };
}

int uninstall_parse(const char *text, struct uninstall *out) {
        *out = (struct uninstall) { 0 };
        _cleanup_json_ json_object *o = text ? json_tokener_parse(text) : NULL;
        json_object *v, *cl;
        if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "cleanup", &cl))
                return -EINVAL;
        int r = cleanup_from_json(cl, &out->st);
        if (r < 0)
                return r;
        out->prune = json_object_object_get_ex(o, "prune", &v) && json_object_get_boolean(v);
        if (json_object_object_get_ex(o, "by", &v) && json_object_is_type(v, json_type_string) &&
            !(out->by = strdup(json_object_get_string(v)))) {
                uninstall_free(out);
                return -ENOMEM;
        }
        return 0;
}

char *uninstall_format(const struct uninstall *u) {
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o || jadd(o, "prune", json_object_new_boolean(u->prune)) < 0 || jadd_str_opt(o, "by", u->by) < 0 ||
            jadd(o, "cleanup", cleanup_to_json(&u->st)) < 0)
                return NULL;
        const char *t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        return t ? strdup(t) : NULL;
}

int uninstall_deletions(const struct subscription_record_list *subs, json_object **out) {
        struct payload_deletion *v = NULL;
        struct uninstall *us = calloc(subs->n ? subs->n : 1, sizeof *us);
        size_t n = 0;
        int r = us ? 0 : -ENOMEM;

        *out = NULL;
        for (size_t i = 0; r == 0 && i < subs->n; i++) {
                if (!subs->v[i].uninstall || uninstall_parse(subs->v[i].uninstall, &us[i]) < 0)
                        continue; /* none, or not one: nothing to delete */
                const struct cleanup_state *st = &us[i].st;
                if (st->phase != CLEANUP_WAITING || st->aborted || st->n == 0)
                        continue;
                struct payload_deletion *nv = realloc(v, (n + st->n) * sizeof *nv);
                if (!nv) {
                        r = -ENOMEM;
                        break;
                }
                v = nv;
                for (size_t k = 0; k < st->n && n < PAYLOAD_MAX_DELETIONS; k++)
                        v[n++] = (struct payload_deletion) { st->items[k].group, st->items[k].kind,
                                                             st->items[k].namespace, st->items[k].name };
        }
        if (r == 0 && n > 0 && !(*out = payload_deletions_to_json(v, n)))
                r = -ENOMEM;
        free(v);
        for (size_t i = 0; us && i < subs->n; i++)
                uninstall_free(&us[i]);
        free(us);
        return r;
}
