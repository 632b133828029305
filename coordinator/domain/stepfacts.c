/* Step results -> validation facts (stepfacts.h). The agent is not trusted:
 * every member is type-checked, and anything odd reads as "not received". */
#include "domain/stepfacts.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cleanup.h"
#include "json-cleanup.h"
#include "protocol.h"

static json_object *member(json_object *o, const char *key, json_type t) {
        json_object *v;
        if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v) ||
            !json_object_is_type(v, t))
                return NULL;
        return v;
}

static bool number(json_object *o, const char *key, double *out) {
        json_object *v;
        if (!o || !json_object_object_get_ex(o, key, &v))
                return false;
        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
                return false;
        *out = json_object_get_double(v);
        return isfinite(*out);
}

/* An MTU-sized integer member (68-65535 bytes), else 0. */
static int64_t small_int(json_object *o, const char *key) {
        json_object *v = member(o, key, json_type_int);
        int64_t x = v ? json_object_get_int64(v) : 0;
        return x >= 68 && x <= 65535 ? x : 0;
}

static int parse_connectivity(json_object *res, struct step_facts *sf) {
        json_object *peers = member(res, "peers", json_type_array);
        if (!peers)
                return 0;
        size_t n = json_object_array_length(peers);
        if (n > 1000)
                n = 1000;
        sf->peers = calloc(n ? n : 1, sizeof *sf->peers);
        if (!sf->peers)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *p = json_object_array_get_idx(peers, i);
                json_object *id = member(p, "host_id", json_type_string);
                json_object *reach = member(p, "reachable", json_type_boolean);
                if (!id || !reach)
                        continue;
                if (strv_push(&sf->peer_ids, json_object_get_string(id)) < 0)
                        return -ENOMEM;
                struct peer_connectivity *pc = &sf->peers[sf->n_peers++];
                pc->reachable = json_object_get_boolean(reach);
                pc->latency_ms = NAN;
                pc->loss_pct = NAN;
                number(p, "rtt_avg_ms", &pc->latency_ms);
                number(p, "loss_pct", &pc->loss_pct);
                /* The MTU probe: a verdict only with a plausible MTU tried. */
                json_object *ok = member(p, "mtu_ok", json_type_boolean);
                pc->mtu = small_int(p, "mtu");
                pc->path_mtu = small_int(p, "path_mtu");
                if (ok && pc->mtu > 0)
                        pc->mtu_result = json_object_get_boolean(ok) ? PEER_MTU_PASSED : PEER_MTU_FAILED;
                else
                        pc->mtu = pc->path_mtu = 0;
        }
        /* strv may have moved while growing: point at the final strings. */
        for (size_t i = 0; i < sf->n_peers; i++)
                sf->peers[i].peer_host_id = sf->peer_ids.v[i];
        sf->have_connectivity = true;
        return 0;
}

static int parse_ntp(json_object *res, struct step_facts *sf) {
        json_object *method = NULL;
        if (!res)
                return 0;
        json_object *src = member(res, "sources", json_type_array);
        for (size_t i = 0; src && i < json_object_array_length(src) && sf->ntp_tried.n < 16; i++) {
                json_object *t = member(json_object_array_get_idx(src, i), "source", json_type_string);
                const char *s = t ? json_object_get_string(t) : NULL;
                if (s && strlen(s) <= 255 && strv_push(&sf->ntp_tried, s) < 0)
                        return -ENOMEM;
        }
        bool has_method = json_object_object_get_ex(res, "method", &method) &&
                          json_object_is_type(method, json_type_string);
        /* Neither a method nor a source tried: the step measured nothing;
         * a method without its offset is garbage. */
        if (!has_method && !src)
                return 0;
        sf->ntp_has_offset = has_method && number(res, "offset_ms", &sf->ntp_offset_ms);
        if (has_method && !sf->ntp_has_offset) {
                strv_free(&sf->ntp_tried);
                return 0;
        }
        sf->ntp_synced = sf->ntp_has_offset && strcmp(json_object_get_string(method), "sntp") == 0;
        sf->have_ntp = true;
        return 0;
}

static int push_addresses(json_object *r, const char *key, struct strv *out) {
        json_object *a = member(r, key, json_type_array);
        for (size_t i = 0; a && i < json_object_array_length(a) && out->n < 64; i++) {
                json_object *s = json_object_array_get_idx(a, i);
                if (json_object_is_type(s, json_type_string) && strv_push(out, json_object_get_string(s)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* The agent's reason, kept printable and short: it is shown to users. */
static char *clean_error(json_object *r) {
        json_object *e = member(r, "error", json_type_string);
        if (!e)
                return NULL;
        const char *s = json_object_get_string(e);
        size_t n = strnlen(s, STEP_FACTS_ERROR_MAX);
        char *c = strndup(s, n);
        for (size_t i = 0; c && i < n; i++)
                if ((unsigned char) c[i] < 0x20 || (unsigned char) c[i] > 0x7e)
                        c[i] = '?';
        return c;
}

static int parse_dns(json_object *res, const char *cluster_domain, struct step_facts *sf) {
        json_object *list = member(res, "resolutions", json_type_array);
        char names[_DNS_NAME_MAX][300];
        if (!list || !cluster_domain || strlen(cluster_domain) > 253)
                return 0;
        for (int k = 0; k < _DNS_NAME_MAX; k++)
                snprintf(names[k], sizeof names[k], "%s.%s", cluster_dns_prefix((enum cluster_dns_name) k),
                         cluster_domain);
        for (size_t i = 0; i < json_object_array_length(list) && i < 64; i++) {
                json_object *r = json_object_array_get_idx(list, i);
                json_object *name = member(r, "name", json_type_string);
                if (!name)
                        continue;
                for (int k = 0; k < _DNS_NAME_MAX; k++) {
                        if (sf->dns[k].present || strcasecmp(json_object_get_string(name), names[k]) != 0)
                                continue;
                        int e;
                        if ((e = push_addresses(r, "ipv4_addresses", &sf->dns[k].addresses)) < 0 ||
                            (e = push_addresses(r, "ipv6_addresses", &sf->dns[k].addresses)) < 0)
                                return e;
                        if (member(r, "error", json_type_string) && !(sf->dns[k].error = clean_error(r)))
                                return -ENOMEM;
                        sf->dns[k].present = true;
                }
        }
        return 0;
}

static int parse_disk_speed(json_object *res, struct step_facts *sf) {
        json_object *disk = NULL;
        if (!res)
                return 0;
        if (json_object_object_get_ex(res, "disk", &disk) && disk) {
                if (!json_object_is_type(disk, json_type_string) || json_object_get_string_len(disk) > 4096)
                        return 0;
                if (!(sf->disk_speed_disk = strdup(json_object_get_string(disk))))
                        return -ENOMEM;
        }
        json_object *failed = member(res, "failed", json_type_boolean);
        if (failed && json_object_get_boolean(failed)) {
                json_object *e = member(res, "error", json_type_string);
                if (e && !(sf->disk_speed_error = strndup(json_object_get_string(e), 512)))
                        return -ENOMEM;
                sf->disk_speed_failed = true;
        } else if (!number(res, "p99_ms", &sf->disk_speed_p99_ms) || sf->disk_speed_p99_ms < 0) {
                free(sf->disk_speed_disk);
                sf->disk_speed_disk = NULL;
                return 0;
        }
        sf->have_disk_speed = true;
        return 0;
}

bool step_facts_has(const char *text, enum step_type t) {
        const char *name = step_type_to_string(t);
        if (!text || !name)
                return false;
        _cleanup_json_ json_object *o = json_tokener_parse(text);
        return json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, name, NULL);
}

int step_facts_parse(const char *text, const char *cluster_domain, struct step_facts *out) {
        *out = (struct step_facts) { 0 };
        if (!text)
                return 0;
        _cleanup_json_ json_object *o = json_tokener_parse(text);
        if (!o || !json_object_is_type(o, json_type_object))
                return 0;
        int r;
        if ((r = parse_connectivity(member(o, step_type_to_string(STEP_CONNECTIVITY_CHECK), json_type_object), out)) < 0 ||
            (r = parse_dns(member(o, step_type_to_string(STEP_DOMAIN_RESOLUTION), json_type_object), cluster_domain, out)) < 0 ||
            (r = parse_ntp(member(o, step_type_to_string(STEP_NTP_SYNCHRONIZER), json_type_object), out)) < 0 ||
            (r = parse_disk_speed(member(o, step_type_to_string(STEP_INSTALLATION_DISK_SPEED_CHECK), json_type_object),
                                  out)) < 0) {
                step_facts_free(out);
                return r;
        }
        return 0;
}

void step_facts_free(struct step_facts *sf) {
        free(sf->peers);
        strv_free(&sf->peer_ids);
        for (int k = 0; k < _DNS_NAME_MAX; k++) {
                strv_free(&sf->dns[k].addresses);
                free(sf->dns[k].error);
        }
        strv_free(&sf->ntp_tried);
        free(sf->disk_speed_error);
        free(sf->disk_speed_disk);
        *sf = (struct step_facts) { 0 };
}

void step_facts_keep_disk(struct step_facts *sf, const char *install_disk) {
        const char *was = sf->disk_speed_disk;
        if (!sf->have_disk_speed || (!was && !install_disk) || (was && install_disk && strcmp(was, install_disk) == 0))
                return;
        sf->have_disk_speed = false;
        sf->disk_speed_failed = false;
        free(sf->disk_speed_error);
        free(sf->disk_speed_disk);
        sf->disk_speed_error = sf->disk_speed_disk = NULL;
}

void step_facts_apply(const struct step_facts *sf, struct host_facts *f) {
        f->connectivity.present = sf->have_connectivity;
        f->connectivity.peers = sf->peers;
        f->connectivity.n_peers = sf->n_peers;
        f->ntp.present = sf->have_ntp;
        f->ntp.synced = sf->ntp_synced;
        f->ntp.offset_ms = sf->ntp_offset_ms;
        f->ntp.has_offset = sf->ntp_has_offset;
        f->ntp.tried = (const char *const *) sf->ntp_tried.v;
        f->ntp.n_tried = sf->ntp_tried.n;
        for (int k = 0; k < _DNS_NAME_MAX; k++)
                f->dns[k] = (struct dns_fact) {
                        .present = sf->dns[k].present,
                        .addresses = (const char *const *) sf->dns[k].addresses.v,
                        .n_addresses = sf->dns[k].addresses.n,
                        .error = sf->dns[k].error,
                };
        f->disk_speed.present = sf->have_disk_speed;
        f->disk_speed.failed = sf->disk_speed_failed;
        f->disk_speed.error = sf->disk_speed_error;
        f->disk_speed.disk = sf->disk_speed_disk;
        f->disk_speed.fsync_ms = sf->disk_speed_p99_ms;
}
