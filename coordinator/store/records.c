/* What the store's resource files (store/sql/) and its drivers share: the
 * store's own record types (releases, payload revisions, tokens, catalogs),
 * the write latency buckets, and the rule that an unknown status never
 * matches an expected mask. Kept apart from store.c, which picks the
 * back-ends, so that a driver uses it without calling back into its
 * caller. */
#include "store/store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/sql/sqldb.h"

const double store_latency_bounds[STORE_LATENCY_BUCKETS] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                             0.05, 0.1, 0.25, 0.5, 1 };

void store_release_init(struct store_release *r) {
        *r = (struct store_release) { 0 };
        release_info_init(&r->info);
}

void store_release_free(struct store_release *r) {
        release_info_free(&r->info);
        free(r->created_at);
        store_release_init(r);
}

void store_release_list_free(struct store_release_list *l) {
        for (size_t i = 0; l->v && i < l->n; i++)
                store_release_free(&l->v[i]);
        free(l->v);
        *l = (struct store_release_list) { 0 };
}

void store_payload_init(struct store_payload *p) {
        *p = (struct store_payload) { 0 };
}

void store_payload_free(struct store_payload *p) {
        free(p->cluster_id);
        free(p->digest);
        free(p->signature);
        free(p->canonical);
        free(p->release_version);
        free(p->created_at);
        store_payload_init(p);
}

void store_payload_list_free(struct store_payload_list *l) {
        for (size_t i = 0; l->v && i < l->n; i++)
                store_payload_free(&l->v[i]);
        free(l->v);
        *l = (struct store_payload_list) { 0 };
}

void store_token_init(struct store_token *t) {
        *t = (struct store_token) { 0 };
}

void store_token_free(struct store_token *t) {
        free(t->id);
        free(t->role);
        free(t->owner);
        free(t->created_at);
        free(t->expires_at);
        free(t->revoked_at);
        store_token_init(t);
}

void store_token_list_free(struct store_token_list *l) {
        for (size_t i = 0; l->v && i < l->n; i++)
                store_token_free(&l->v[i]);
        free(l->v);
        *l = (struct store_token_list) { 0 };
}

void store_catalog_init(struct store_catalog *c) {
        *c = (struct store_catalog) { 0 };
}

void store_catalog_free(struct store_catalog *c) {
        free(c->id);
        free(c->name);
        free(c->owner);
        free(c->digest);
        free(c->files);
        free(c->created_at);
        store_catalog_init(c);
}

void store_catalog_list_free(struct store_catalog_list *l) {
        for (size_t i = 0; l->v && i < l->n; i++)
                store_catalog_free(&l->v[i]);
        free(l->v);
        *l = (struct store_catalog_list) { 0 };
}

void store_subscription_init(struct store_subscription *s) {
        *s = (struct store_subscription) { 0 };
}

void store_subscription_free(struct store_subscription *s) {
        free(s->id);
        free(s->cluster_id);
        free(s->package);
        free(s->channel);
        free(s->catalog);
        free(s->version_range);
        free(s->uninstall);
        free(s->owner);
        free(s->created_at);
        store_subscription_init(s);
}

void store_subscription_list_free(struct store_subscription_list *l) {
        for (size_t i = 0; l->v && i < l->n; i++)
                store_subscription_free(&l->v[i]);
        free(l->v);
        *l = (struct store_subscription_list) { 0 };
}

void store_operand_init(struct store_operand *o) {
        *o = (struct store_operand) { 0 };
}

void store_operand_free(struct store_operand *o) {
        char **v[] = { &o->id, &o->cluster_id, &o->package, &o->group, &o->version, &o->kind, &o->namespace,
                       &o->name, &o->file, &o->content, &o->owner, &o->created_at };
        for (size_t i = 0; i < sizeof v / sizeof *v; i++)
                free(*v[i]);
        store_operand_init(o);
}

void store_operand_list_free(struct store_operand_list *l) {
        for (size_t i = 0; l->v && i < l->n; i++)
                store_operand_free(&l->v[i]);
        free(l->v);
        *l = (struct store_operand_list) { 0 };
}

void store_addon_proxy_init(struct store_addon_proxy *p) {
        *p = (struct store_addon_proxy) { 0 };
}

void store_addon_proxy_free(struct store_addon_proxy *p) {
        free(p->id);
        free(p->name);
        free(p->owner);
        free(p->spec);
        free(p->prev_spec);
        free(p->conditions);
        free(p->created_at);
        free(p->updated_at);
        store_addon_proxy_init(p);
}

void store_addon_proxy_list_free(struct store_addon_proxy_list *l) {
        for (size_t i = 0; l->v && i < l->n; i++)
                store_addon_proxy_free(&l->v[i]);
        free(l->v);
        *l = (struct store_addon_proxy_list) { 0 };
}

void store_addon_release_init(struct store_addon_release *r) {
        *r = (struct store_addon_release) { 0 };
}

void store_addon_release_free(struct store_addon_release *r) {
        free(r->proxy_id);
        free(r->cluster_id);
        free(r->content);
        free(r->prev_content);
        free(r->status);
        free(r->message);
        free(r->created_at);
        free(r->updated_at);
        store_addon_release_init(r);
}

void store_addon_release_list_free(struct store_addon_release_list *l) {
        for (size_t i = 0; l->v && i < l->n; i++)
                store_addon_release_free(&l->v[i]);
        free(l->v);
        *l = (struct store_addon_release_list) { 0 };
}

void store_host_found_list_free(struct store_host_found_list *l) {
        for (size_t i = 0; l->v && i < l->n; i++) {
                free(l->v[i].infra_env_id);
                free(l->v[i].host_id);
                free(l->v[i].cluster_id);
                free(l->v[i].found);
        }
        free(l->v);
        *l = (struct store_host_found_list) { 0 };
}

void store_latency_add(struct store_latency *l, double seconds) {
        size_t b = 0;
        while (b < STORE_LATENCY_BUCKETS && seconds > store_latency_bounds[b])
                b++;
        l->bucket[b]++;
        l->count++;
        l->sum_s += seconds;
}

int store_status_expected(enum host_status cur, uint32_t expect_mask) {
        return expect_mask && (cur < 0 || !(expect_mask & STORE_STATUS(cur))) ? -ESTALE : 0;
}
