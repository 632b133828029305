/* The resource records' destructors and JSON (records.h). */
#include "records.h"

#include <stdlib.h>
#include <string.h>

void release_record_init(struct release_record *r) {
        *r = (struct release_record) { 0 };
        release_info_init(&r->info);
}

void release_record_free(struct release_record *r) {
        release_info_free(&r->info);
        free(r->created_at);
        release_record_init(r);
}

void release_record_list_free(struct release_record_list *l) {
        for (size_t i = 0; l->v && i < l->n; i++)
                release_record_free(&l->v[i]);
        free(l->v);
        *l = (struct release_record_list) { 0 };
}

void payload_record_init(struct payload_record *p) {
        *p = (struct payload_record) { 0 };
}

void payload_record_free(struct payload_record *p) {
        free(p->cluster_id);
        free(p->digest);
        free(p->signature);
        free(p->canonical);
        free(p->release_version);
        free(p->created_at);
        payload_record_init(p);
}

void payload_record_list_free(struct payload_record_list *l) {
        for (size_t i = 0; l->v && i < l->n; i++)
                payload_record_free(&l->v[i]);
        free(l->v);
        *l = (struct payload_record_list) { 0 };
}

void token_record_init(struct token_record *t) {
        *t = (struct token_record) { 0 };
}

void token_record_free(struct token_record *t) {
        free(t->id);
        free(t->role);
        free(t->owner);
        free(t->created_at);
        free(t->expires_at);
        free(t->revoked_at);
        token_record_init(t);
}

void token_record_list_free(struct token_record_list *l) {
        for (size_t i = 0; l->v && i < l->n; i++)
                token_record_free(&l->v[i]);
        free(l->v);
        *l = (struct token_record_list) { 0 };
}

void catalog_record_init(struct catalog_record *c) {
        *c = (struct catalog_record) { 0 };
}

void catalog_record_free(struct catalog_record *c) {
        free(c->id);
        free(c->name);
        free(c->owner);
        free(c->digest);
        free(c->files);
        free(c->created_at);
        catalog_record_init(c);
}

void catalog_record_list_free(struct catalog_record_list *l) {
        for (size_t i = 0; l->v && i < l->n; i++)
                catalog_record_free(&l->v[i]);
        free(l->v);
        *l = (struct catalog_record_list) { 0 };
}

void subscription_record_init(struct subscription_record *s) {
        *s = (struct subscription_record) { 0 };
}

void subscription_record_free(struct subscription_record *s) {
        free(s->id);
        free(s->cluster_id);
        free(s->package);
        free(s->channel);
        free(s->catalog);
        free(s->version_range);
        free(s->uninstall);
        free(s->owner);
        free(s->created_at);
        subscription_record_init(s);
}

void subscription_record_list_free(struct subscription_record_list *l) {
        for (size_t i = 0; l->v && i < l->n; i++)
                subscription_record_free(&l->v[i]);
        free(l->v);
        *l = (struct subscription_record_list) { 0 };
}

void operand_record_init(struct operand_record *o) {
        *o = (struct operand_record) { 0 };
}

void operand_record_free(struct operand_record *o) {
        char **v[] = { &o->id, &o->cluster_id, &o->package, &o->group, &o->version, &o->kind, &o->namespace,
                       &o->name, &o->file, &o->content, &o->owner, &o->created_at };
        for (size_t i = 0; i < sizeof v / sizeof *v; i++)
                free(*v[i]);
        operand_record_init(o);
}

void operand_record_list_free(struct operand_record_list *l) {
        for (size_t i = 0; l->v && i < l->n; i++)
                operand_record_free(&l->v[i]);
        free(l->v);
        *l = (struct operand_record_list) { 0 };
}

void addon_proxy_record_init(struct addon_proxy_record *p) {
        *p = (struct addon_proxy_record) { 0 };
}

void addon_proxy_record_free(struct addon_proxy_record *p) {
        free(p->id);
        free(p->name);
        free(p->owner);
        free(p->spec);
        free(p->prev_spec);
        free(p->conditions);
        free(p->created_at);
        free(p->updated_at);
        addon_proxy_record_init(p);
}

void addon_proxy_record_list_free(struct addon_proxy_record_list *l) {
        for (size_t i = 0; l->v && i < l->n; i++)
                addon_proxy_record_free(&l->v[i]);
        free(l->v);
        *l = (struct addon_proxy_record_list) { 0 };
}

void addon_release_record_init(struct addon_release_record *r) {
        *r = (struct addon_release_record) { 0 };
}

void addon_release_record_free(struct addon_release_record *r) {
        free(r->proxy_id);
        free(r->cluster_id);
        free(r->content);
        free(r->prev_content);
        free(r->status);
        free(r->message);
        free(r->created_at);
        free(r->updated_at);
        addon_release_record_init(r);
}

void addon_release_record_list_free(struct addon_release_record_list *l) {
        for (size_t i = 0; l->v && i < l->n; i++)
                addon_release_record_free(&l->v[i]);
        free(l->v);
        *l = (struct addon_release_record_list) { 0 };
}

void host_logs_record_free(struct host_logs_record *l) {
        if (!l)
                return;
        free(l->created_at);
        free(l->data);
        *l = (struct host_logs_record) { 0 };
}

json_object *token_record_to_json(const struct token_record *t) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "id", json_object_new_string(t->id));
        json_object_object_add(o, "role", json_object_new_string(t->role));
        json_object_object_add(o, "owner", json_object_new_string(t->owner));
        json_object_object_add(o, "created_at", json_object_new_string(t->created_at));
        json_object_object_add(o, "expires_at", json_object_new_string(t->expires_at));
        json_object_object_add(o, "revoked", json_object_new_boolean(t->revoked_at != NULL));
        json_object_object_add(o, "revoked_at", t->revoked_at ? json_object_new_string(t->revoked_at) : NULL);
        return o;
}

json_object *release_record_to_json(const struct release_record *r) {
        json_object *o = release_info_to_json(&r->info);
        if (!o)
                return NULL;
        json_object_object_add(o, "manifest_count", json_object_new_int64(r->manifest_count));
        if (r->created_at)
                json_object_object_add(o, "created_at", json_object_new_string(r->created_at));
        return o;
}

json_object *catalog_record_to_json(const struct catalog_record *c) {
        json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        json_object_object_add(o, "id", json_object_new_string(c->id));
        json_object_object_add(o, "name", json_object_new_string(c->name));
        json_object_object_add(o, "priority", json_object_new_int64(c->priority));
        json_object_object_add(o, "owner", json_object_new_string(c->owner));
        json_object_object_add(o, "digest", json_object_new_string(c->digest));
        json_object_object_add(o, "size_bytes", json_object_new_int64((int64_t) c->files_len));
        json_object_object_add(o, "file_count", json_object_new_int64(c->n_files));
        json_object_object_add(o, "package_count", json_object_new_int64(c->n_packages));
        json_object_object_add(o, "channel_count", json_object_new_int64(c->n_channels));
        json_object_object_add(o, "bundle_count", json_object_new_int64(c->n_bundles));
        json_object_object_add(o, "manifest_count", json_object_new_int64(c->n_manifests));
        json_object_object_add(o, "ignored_count", json_object_new_int64(c->n_ignored));
        json_object_object_add(o, "created_at", json_object_new_string(c->created_at));
        /* A catalog never changes: delete and add it again. */
        json_object_object_add(o, "updated_at", json_object_new_string(c->created_at));
        return o;
}
