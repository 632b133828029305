/* The coordinator's resources in memory and as JSON. Read-only members
 * (ids, times, status) round-trip too, so musterctl parses what musterd
 * writes with the same code; the API decides what a client may set. */
#include "model.h"

#include "jsonread.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "cleanup.h"
#include "staticnet.h"
#include "json-cleanup.h"
#include "labelsel.h"
#include "rfc3339.h"

/* ---- time and ids ------------------------------------------------------ */

int model_time_format(int64_t unix_seconds, char buf[MODEL_TIME_LEN]) {
        time_t t = (time_t) unix_seconds;
        struct tm tm;

        if ((int64_t) t != unix_seconds || !gmtime_r(&t, &tm))
                return -EOVERFLOW;
        /* Four-digit years keep the texts sortable. */
        if (tm.tm_year < -1900 || tm.tm_year > 9999 - 1900)
                return -EOVERFLOW;
        /* The compiler cannot see the ranges: format wide, then copy. */
        char tmp[80];
        int n = snprintf(tmp, sizeof tmp, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                         tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        if (n < 0 || n >= MODEL_TIME_LEN)
                return -EOVERFLOW;
        memcpy(buf, tmp, (size_t) n + 1);
        return 0;
}

int model_now_rfc3339(char buf[MODEL_TIME_LEN]) {
        struct timespec ts;

        if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
                return -errno;
        return model_time_format(ts.tv_sec, buf);
}

/* The model's policy over the one RFC 3339 reader (rfc3339.h): whole
 * seconds, the fraction dropped, and a leap second read as :59 (the next
 * second is as good). */
int model_time_parse(const char *s, int64_t *out) {
        struct rfc3339_time t;
        int r = rfc3339_parse(s, 0, &t);
        if (r < 0)
                return r;
        int64_t sec = t.unix_ms / 1000 - (t.unix_ms % 1000 < 0);
        *out = sec - t.leap_second;
        return 0;
}

int model_time_normalize(const char *s, char buf[MODEL_TIME_LEN]) {
        int64_t t;
        int r = model_time_parse(s, &t);
        return r < 0 ? r : model_time_format(t, buf);
}

int model_new_id(char out[UUID_STR_LEN]) {
        uint8_t b[16];
        size_t got = 0;

        while (got < sizeof b) {
                ssize_t n = getrandom(b + got, sizeof b - got, 0);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                got += (size_t) n;
        }
        b[6] = (uint8_t) ((b[6] & 0x0f) | 0x40); /* version 4 */
        b[8] = (uint8_t) ((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
        snprintf(out, UUID_STR_LEN,
                 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
                 b[12], b[13], b[14], b[15]);
        return 0;
}

/* ---- enums ------------------------------------------------------------- */

const char *event_severity_to_string(enum event_severity s) {
        switch (s) {
        case EVENT_INFO: return "info";
        case EVENT_WARNING: return "warning";
        case EVENT_ERROR: return "error";
        case EVENT_CRITICAL: return "critical";
        case _EVENT_SEVERITY_MAX:
        case _EVENT_SEVERITY_INVALID:
                break;
        }
        return NULL;
}

const char *event_category_to_string(enum event_category c) {
        switch (c) {
        case EVENT_CAT_USER: return "user";
        case EVENT_CAT_SYSTEM: return "system";
        case EVENT_CAT_AGENT: return "agent";
        case EVENT_CAT_AUDIT: return "audit";
        case _EVENT_CATEGORY_MAX:
        case _EVENT_CATEGORY_INVALID:
                break;
        }
        return NULL;
}

const char *ha_mode_to_string(enum ha_mode m) {
        switch (m) {
        case HA_MODE_FULL: return "Full";
        case HA_MODE_NONE: return "None";
        case _HA_MODE_MAX:
        case _HA_MODE_INVALID:
                break;
        }
        return NULL;
}

static const char *sev_name(int i) { return event_severity_to_string((enum event_severity) i); }
static const char *cat_name(int i) { return event_category_to_string((enum event_category) i); }
static const char *ha_name(int i) { return ha_mode_to_string((enum ha_mode) i); }
static const char *role_name(int i) { return host_role_to_string((enum host_role) i); }
static const char *hstatus_name(int i) { return host_status_to_string((enum host_status) i); }
static const char *val_name(int i) { return validation_id_to_string((enum validation_id) i); }
static const char *vstatus_name(int i) { return validation_status_to_string((enum validation_status) i); }

enum event_severity event_severity_from_string(const char *s) {
        return (enum event_severity) enum_lookup(s, _EVENT_SEVERITY_MAX, sev_name);
}
enum event_category event_category_from_string(const char *s) {
        return (enum event_category) enum_lookup(s, _EVENT_CATEGORY_MAX, cat_name);
}
enum ha_mode ha_mode_from_string(const char *s) {
        return (enum ha_mode) enum_lookup(s, _HA_MODE_MAX, ha_name);
}

/* ---- JSON out ---------------------------------------------------------- */

static void put_str(json_object *o, const char *k, const char *v) {
        if (v)
                json_object_object_add(o, k, json_object_new_string(v));
}

static void put_i64(json_object *o, const char *k, int64_t v) {
        if (v != MODEL_UNSET)
                json_object_object_add(o, k, json_object_new_int64(v));
}

static void put_enum(json_object *o, const char *k, int v, const char *(*name)(int)) {
        if (v >= 0)
                put_str(o, k, name(v));
}

static void put_secret(json_object *o, const char *v, unsigned flags) {
        json_object_object_add(o, "pull_secret_set", json_object_new_boolean(v != NULL));
        if (flags & MODEL_JSON_SECRETS)
                put_str(o, "pull_secret", v);
}

/* ---- JSON in ----------------------------------------------------------- */

static bool jseen(json_object *o, const char *k) {
        return o && json_object_object_get_ex(o, k, NULL);
}

static void get_uuid(json_object *o, const char *k, char **out, struct jctx *c) {
        json_object *v = jget(o, k, json_type_string, c);
        char buf[UUID_STR_LEN];
        if (!v)
                return;
        if (uuid_normalize(json_object_get_string(v), buf) < 0)
                jfail(c, "field \"%s\" must be a UUID", k);
        else
                jset_str(out, buf, c);
}

static void get_time(json_object *o, const char *k, char **out, struct jctx *c) {
        json_object *v = jget(o, k, json_type_string, c);
        char buf[MODEL_TIME_LEN];
        if (!v)
                return;
        if (model_time_normalize(json_object_get_string(v), buf) < 0)
                jfail(c, "field \"%s\" must be an RFC 3339 time", k);
        else
                jset_str(out, buf, c);
}

static void get_enum(json_object *o, const char *k, int *out, int max, const char *(*name)(int),
                     struct jctx *c) {
        json_object *v = jget(o, k, json_type_string, c);
        if (!v)
                return;
        int x = enum_lookup(json_object_get_string(v), max, name);
        if (x < 0) {
                char list[256] = "";
                for (int i = 0; i < max; i++) {
                        const char *n = name(i);
                        size_t l = strlen(list);
                        snprintf(list + l, sizeof list - l, "%s%s", i ? "|" : "", n ? n : "");
                }
                jfail(c, "field \"%s\" must be one of %s", k, list);
        } else
                *out = x;
}

/* A pull secret is a JSON object (registries under "auths"); the refusal
 * never quotes it. */
static void check_pull_secret(const char *v, struct jctx *c) {
        if (!v || c->r < 0)
                return;
        json_object *o = json_tokener_parse(v);
        bool ok = json_object_is_type(o, json_type_object);
        json_object_put(o);
        if (!ok)
                jfail(c, "field \"pull_secret\" must be a JSON object such as {\"auths\": {...}} (its text is not "
                         "shown)");
}

static int jstart(json_object *o, const char *what, struct jctx *c) {
        if (c->err && c->errlen)
                c->err[0] = '\0';
        if (!json_object_is_type(o, json_type_object))
                jfail(c, "%s must be a JSON object", what);
        return c->r;
}

/* ---- validations ------------------------------------------------------- */

void validation_list_free(struct validation **v, size_t *n) {
        for (size_t i = 0; *v && i < *n; i++)
                free((*v)[i].message);
        free(*v);
        *v = NULL;
        *n = 0;
}

const struct validation *validation_list_find(const struct validation *v, size_t n, enum validation_id id) {
        for (size_t i = 0; i < n; i++)
                if (v[i].id == id)
                        return &v[i];
        return NULL;
}

int validation_list_set(struct validation **v, size_t *n, enum validation_id id,
                   enum validation_status status, const char *message) {
        char *m = NULL;
        if (message && !(m = strdup(message)))
                return -ENOMEM;
        struct validation *e = (struct validation *) validation_list_find(*v, *n, id);
        if (!e) {
                e = inv_array_append((void **) v, n, sizeof *e);
                if (!e) {
                        free(m);
                        return -ENOMEM;
                }
        }
        free(e->message);
        *e = (struct validation) { .id = id, .status = status, .message = m };
        return 0;
}

json_object *validation_list_to_json(const struct validation *v, size_t n) {
        json_object *a = json_object_new_array_ext((int) n);
        if (!a)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_new_object();
                put_enum(e, "id", v[i].id, val_name);
                put_enum(e, "status", v[i].status, vstatus_name);
                put_str(e, "message", v[i].message);
                json_object_array_add(a, e);
        }
        return a;
}

static void validation_list_parse(json_object *a, struct validation **v, size_t *n, struct jctx *c) {
        size_t len = json_object_array_length(a);
        validation_list_free(v, n);
        if (len > MODEL_MAX_VALIDATIONS) {
                jfail(c, "field \"validations\" has %zu entries, at most %d allowed", len,
                      MODEL_MAX_VALIDATIONS);
                return;
        }
        for (size_t i = 0; i < len && c->r == 0; i++) {
                json_object *e = json_object_array_get_idx(a, i);
                if (!json_object_is_type(e, json_type_object)) {
                        jfail(c, "entries of \"validations\" must be objects");
                        return;
                }
                struct validation *x = inv_array_append((void **) v, n, sizeof *x);
                if (!x) {
                        joom(c);
                        return;
                }
                x->id = _VAL_INVALID;
                x->status = _VSTATUS_INVALID;
                int id = -1, st = -1;
                get_enum(e, "id", &id, _VAL_MAX, val_name, c);
                get_enum(e, "status", &st, _VSTATUS_MAX, vstatus_name, c);
                jget_str(e, "message", &x->message, MODEL_MAX_MESSAGE, c);
                if (c->r == 0 && (id < 0 || st < 0))
                        jfail(c, "validations[%zu] needs an id and a status", i);
                if (c->r == 0 && validation_list_find(*v, *n - 1, (enum validation_id) id))
                        jfail(c, "validations[%zu]: \"%s\" listed twice", i, val_name(id));
                x->id = (enum validation_id) id;
                x->status = (enum validation_status) st;
        }
}

int validation_list_from_json(json_object *a, struct validation **v, size_t *n, char *err, size_t errlen) {
        struct jctx c = { .err = err, .errlen = errlen };
        if (err && errlen)
                err[0] = '\0';
        if (!json_object_is_type(a, json_type_array)) {
                jfail(&c, "field \"validations\" must be an array");
                return c.r;
        }
        validation_list_parse(a, v, n, &c);
        return c.r;
}

static void get_validations(json_object *o, struct validation **v, size_t *n, struct jctx *c) {
        json_object *a = jget(o, "validations", json_type_array, c);
        if (a)
                validation_list_parse(a, v, n, c);
}

/* ---- labels ------------------------------------------------------------ */

static void labels_free(struct model_label **l, size_t *n) {
        for (size_t i = 0; *l && i < *n; i++) {
                free((*l)[i].key);
                free((*l)[i].value);
        }
        free(*l);
        *l = NULL;
        *n = 0;
}

static int label_set(struct model_label **l, size_t *n, const char *key, const char *value) {
        if (!key || !*key || strlen(key) > MODEL_MAX_LABEL_KEY || !value ||
            strlen(value) > MODEL_MAX_LABEL_VALUE)
                return -EINVAL;
        char *v = strdup(value);
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < *n; i++)
                if (strcmp((*l)[i].key, key) == 0) {
                        free((*l)[i].value);
                        (*l)[i].value = v;
                        return 0;
                }
        if (*n >= MODEL_MAX_LABELS) {
                free(v);
                return -E2BIG;
        }
        char *k = strdup(key);
        struct model_label *e = k ? inv_array_append((void **) l, n, sizeof *e) : NULL;
        if (!e) {
                free(k);
                free(v);
                return -ENOMEM;
        }
        e->key = k;
        e->value = v;
        return 0;
}

json_object *labels_to_json(const struct model_label *l, size_t n) {
        json_object *o = json_object_new_object();
        for (size_t i = 0; o && i < n; i++)
                json_object_object_add(o, l[i].key, json_object_new_string(l[i].value));
        return o;
}

static void labels_parse(json_object *o, struct model_label **l, size_t *n, struct jctx *c) {
        labels_free(l, n);
        if (json_object_object_length(o) > MODEL_MAX_LABELS) {
                jfail(c, "field \"labels\" has more than %d entries", MODEL_MAX_LABELS);
                return;
        }
        json_object_object_foreach(o, key, val) {
                if (!json_object_is_type(val, json_type_string)) {
                        jfail(c, "label \"%.64s\" must be a string", key);
                        return;
                }
                int r = label_set(l, n, key, json_object_get_string(val));
                if (r == -ENOMEM) {
                        joom(c);
                        return;
                }
                if (r < 0) {
                        jfail(c, "label \"%.64s\": keys are 1-%d bytes, values at most %d", key,
                              MODEL_MAX_LABEL_KEY, MODEL_MAX_LABEL_VALUE);
                        return;
                }
                /* Kubernetes' rules, as selectors match them (labelsel.h). */
                char why[160];
                if (!labelsel_key_valid(key, why, sizeof why)) {
                        jfail(c, "label \"%.80s\": the key %s", key, why);
                        return;
                }
                if (!labelsel_value_valid(json_object_get_string(val), why, sizeof why)) {
                        jfail(c, "label %.80s: value \"%.80s\": %s", key, json_object_get_string(val), why);
                        return;
                }
        }
}

int labels_from_json(json_object *o, struct model_label **l, size_t *n, char *err, size_t errlen) {
        struct jctx c = { .err = err, .errlen = errlen };
        if (err && errlen)
                err[0] = '\0';
        if (!json_object_is_type(o, json_type_object)) {
                jfail(&c, "field \"labels\" must be an object");
                return c.r;
        }
        labels_parse(o, l, n, &c);
        return c.r;
}

/* ---- infra-env --------------------------------------------------------- */

void infra_env_init(struct infra_env *ie) {
        *ie = (struct infra_env) { .token_generation = MODEL_UNSET };
}

static void proxy_free(struct model_proxy *p) {
        free(p->http_proxy);
        free(p->https_proxy);
        free(p->no_proxy);
        *p = (struct model_proxy) { 0 };
}

void infra_env_free(struct infra_env *ie) {
        char **s[] = { &ie->id, &ie->name, &ie->owner, &ie->cluster_id, &ie->cpu_architecture,
                       &ie->pull_secret, &ie->ssh_authorized_key, &ie->created_at, &ie->updated_at,
                       &ie->static_network };
        for (size_t i = 0; i < sizeof s / sizeof *s; i++)
                free(*s[i]);
        proxy_free(&ie->proxy);
        strv_free(&ie->ntp_sources);
        infra_env_init(ie);
}

json_object *infra_env_to_json(const struct infra_env *ie, unsigned flags) {
        json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        put_str(o, "kind", "InfraEnv");
        put_str(o, "id", ie->id);
        put_str(o, "name", ie->name);
        put_str(o, "owner", ie->owner);
        put_str(o, "cluster_id", ie->cluster_id);
        put_str(o, "cpu_architecture", ie->cpu_architecture);
        put_secret(o, ie->pull_secret, flags);
        /* Like the pull secret: only whether it is set leaves musterd. */
        json_object_object_add(o, "ssh_authorized_key_set", json_object_new_boolean(ie->ssh_authorized_key != NULL));
        if (flags & MODEL_JSON_SECRETS)
                put_str(o, "ssh_authorized_key", ie->ssh_authorized_key);
        const struct model_proxy *p = &ie->proxy;
        if (p->http_proxy || p->https_proxy || p->no_proxy) {
                json_object *po = json_object_new_object();
                put_str(po, "http_proxy", p->http_proxy);
                put_str(po, "https_proxy", p->https_proxy);
                put_str(po, "no_proxy", p->no_proxy);
                json_object_object_add(o, "proxy", po);
        }
        if (ie->ntp_sources.n) {
                json_object *a = json_object_new_array_ext((int) ie->ntp_sources.n);
                for (size_t i = 0; a && i < ie->ntp_sources.n; i++)
                        json_object_array_add(a, json_object_new_string(ie->ntp_sources.v[i]));
                json_object_object_add(o, "ntp_sources", a);
        }
        if (ie->static_network) {
                json_object *sn = json_tokener_parse(ie->static_network);
                if (sn)
                        json_object_object_add(o, "static_network", sn);
        }
        put_i64(o, "token_generation", ie->token_generation);
        put_str(o, "created_at", ie->created_at);
        put_str(o, "updated_at", ie->updated_at);
        return o;
}

int infra_env_from_json(json_object *o, struct infra_env *ie, char *err, size_t errlen) {
        struct jctx c = { .err = err, .errlen = errlen };
        static const struct { const char *k; uint32_t bit; } bits[] = {
                { "id", IE_F_ID }, { "name", IE_F_NAME }, { "owner", IE_F_OWNER },
                { "cluster_id", IE_F_CLUSTER_ID }, { "cpu_architecture", IE_F_CPU_ARCHITECTURE },
                { "pull_secret", IE_F_PULL_SECRET }, { "ssh_authorized_key", IE_F_SSH_AUTHORIZED_KEY },
                { "proxy", IE_F_PROXY }, { "ntp_sources", IE_F_NTP_SOURCES },
                { "static_network", IE_F_STATIC_NETWORK },
                { "token_generation", IE_F_TOKEN_GENERATION }, { "created_at", IE_F_CREATED_AT },
                { "updated_at", IE_F_UPDATED_AT },
        };

        infra_env_init(ie);
        if (jstart(o, "infra-env", &c) < 0)
                return c.r;
        for (size_t i = 0; i < sizeof bits / sizeof *bits; i++)
                if (jseen(o, bits[i].k))
                        ie->present |= bits[i].bit;
        get_uuid(o, "id", &ie->id, &c);
        jget_str(o, "name", &ie->name, MODEL_MAX_STRING, &c);
        jget_str(o, "owner", &ie->owner, MODEL_MAX_STRING, &c);
        get_uuid(o, "cluster_id", &ie->cluster_id, &c);
        jget_str(o, "cpu_architecture", &ie->cpu_architecture, MODEL_MAX_STRING, &c);
        jget_str(o, "pull_secret", &ie->pull_secret, MODEL_MAX_SECRET, &c);
        check_pull_secret(ie->pull_secret, &c);
        jget_str(o, "ssh_authorized_key", &ie->ssh_authorized_key, MODEL_MAX_SSH_KEY, &c);
        json_object *p = jget(o, "proxy", json_type_object, &c);
        jget_str(p, "http_proxy", &ie->proxy.http_proxy, MODEL_MAX_STRING, &c);
        jget_str(p, "https_proxy", &ie->proxy.https_proxy, MODEL_MAX_STRING, &c);
        jget_str(p, "no_proxy", &ie->proxy.no_proxy, MODEL_MAX_STRING, &c);
        jget_strv(o, "ntp_sources", &ie->ntp_sources, MODEL_MAX_NTP_SOURCES, MODEL_MAX_STRING, &c);
        /* The agents use them for every fetch (the ISO's config carries them). */
        if (c.r == 0 && ie->proxy.http_proxy && !proxy_url_is_valid(ie->proxy.http_proxy))
                jfail(&c, "field \"proxy.http_proxy\" is not a proxy URL (http://HOST[:PORT], no path)");
        if (c.r == 0 && ie->proxy.https_proxy && !proxy_url_is_valid(ie->proxy.https_proxy))
                jfail(&c, "field \"proxy.https_proxy\" is not a proxy URL (http://HOST[:PORT], no path)");
        if (c.r == 0 && ie->proxy.no_proxy && !no_proxy_is_valid(ie->proxy.no_proxy))
                jfail(&c, "field \"proxy.no_proxy\" is not a comma-separated list of hosts, domains, addresses "
                          "and CIDR blocks (or \"*\")");
        /* Both end up in the installed hosts' files (agent/hostfiles.h). */
        for (size_t i = 0; c.r == 0 && i < ie->ntp_sources.n; i++)
                if (!ntp_source_is_valid(ie->ntp_sources.v[i]))
                        jfail(&c, "field \"ntp_sources\": \"%.64s\" is not a host name or address, with or without "
                                  ":port", ie->ntp_sources.v[i]);
        for (const char *s = ie->ssh_authorized_key; c.r == 0 && s && *s; s++)
                if (*s != '\n' && ((unsigned char) *s < 0x20 || (unsigned char) *s == 0x7f))
                        jfail(&c, "field \"ssh_authorized_key\" must be lines of printable characters (one key a "
                                  "line, no CR)");
        /* Checked whole (staticnet.h) and kept as canonical JSON; [] is none. */
        json_object *sn = NULL;
        if (c.r == 0 && json_object_object_get_ex(o, "static_network", &sn) && sn) {
                struct staticnet set;
                int r = staticnet_from_json(sn, &set, c.err, c.errlen);
                if (r < 0)
                        c.r = r;
                else {
                        json_object *canon = set.n ? staticnet_to_json(&set) : NULL;
                        if (set.n && (!canon || !(ie->static_network = strdup(json_object_to_json_string_ext(
                                                          canon, JSON_C_TO_STRING_PLAIN |
                                                                         JSON_C_TO_STRING_NOSLASHESCAPE)))))
                                c.r = -ENOMEM;
                        json_object_put(canon);
                        staticnet_free(&set);
                }
        }
        jget_i64(o, "token_generation", &ie->token_generation, INT64_MAX, &c);
        get_time(o, "created_at", &ie->created_at, &c);
        get_time(o, "updated_at", &ie->updated_at, &c);
        return c.r;
}

/* ---- host -------------------------------------------------------------- */

void inventory_facts_init(struct inventory_facts *f) {
        *f = (struct inventory_facts) { .cpu_count = MODEL_UNSET, .memory_bytes = MODEL_UNSET,
                                        .max_disk_bytes = MODEL_UNSET };
}

void inventory_facts_free(struct inventory_facts *f) {
        free(f->hostname);
        inventory_facts_init(f);
}

int inventory_facts_from(const struct inventory *inv, struct inventory_facts *f) {
        inventory_facts_free(f);
        if (inv->hostname && !(f->hostname = strdup(inv->hostname)))
                return -ENOMEM;
        f->cpu_count = inv->cpu.count;
        f->memory_bytes = inv->memory.physical_bytes != INV_UNSET ? inv->memory.physical_bytes
                                                                  : inv->memory.usable_bytes;
        f->max_disk_bytes = 0;
        for (size_t i = 0; i < inv->n_disks; i++)
                if (inv->disks[i].eligible && inv->disks[i].size_bytes > f->max_disk_bytes)
                        f->max_disk_bytes = inv->disks[i].size_bytes;
        return 0;
}

void host_init(struct host *h) {
        *h = (struct host) { .role = _ROLE_INVALID, .status = _HOST_STATUS_INVALID,
                             .progress = { .percent = MODEL_UNSET } };
        inventory_facts_init(&h->facts);
}

void host_free(struct host *h) {
        char **s[] = { &h->infra_env_id, &h->id, &h->owner, &h->cluster_id,
                       &h->requested_hostname, &h->installation_disk_id, &h->inventory_json,
                       &h->status_info, &h->progress.stage, &h->progress.info, &h->checked_in_at,
                       &h->registered_at, &h->discovery_agent_version, &h->created_at,
                       &h->updated_at, &h->step_results_json };
        for (size_t i = 0; i < sizeof s / sizeof *s; i++)
                free(*s[i]);
        if (h->inventory) {
                inventory_free(h->inventory);
                free(h->inventory);
        }
        inventory_facts_free(&h->facts);
        validation_list_free(&h->validations, &h->n_validations);
        host_init(h);
}

void host_set_parsed_inventory(struct host *h, struct inventory *inv) {
        if (h->inventory) {
                inventory_free(h->inventory);
                free(h->inventory);
        }
        h->inventory = inv;
}

int host_parse_inventory(struct host *h, char *err, size_t errlen) {
        if (h->inventory) {
                inventory_free(h->inventory);
                free(h->inventory);
                h->inventory = NULL;
        }
        if (!h->inventory_json) {
                if (err && errlen)
                        snprintf(err, errlen, "host has no inventory");
                return -ENODATA;
        }
        struct inventory *inv = malloc(sizeof *inv);
        if (!inv)
                return -ENOMEM;
        int r = inventory_from_string(h->inventory_json, inv, err, errlen);
        if (r < 0) {
                inventory_free(inv);
                free(inv);
                return r;
        }
        h->inventory = inv;
        return 0;
}

bool host_same(const struct host *a, const struct host *b) {
        return a->id && b->id && a->infra_env_id && b->infra_env_id && strcmp(a->id, b->id) == 0 &&
               strcmp(a->infra_env_id, b->infra_env_id) == 0;
}

const char *host_hostname(const struct host *h) {
        if (h->requested_hostname)
                return h->requested_hostname;
        if (h->inventory && h->inventory->hostname)
                return h->inventory->hostname;
        return h->facts.hostname;
}

json_object *host_to_json(const struct host *h, unsigned flags) {
        json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        put_str(o, "kind", "Host");
        put_str(o, "id", h->id);
        put_str(o, "infra_env_id", h->infra_env_id);
        put_str(o, "owner", h->owner);
        put_str(o, "cluster_id", h->cluster_id);
        put_enum(o, "role", h->role, role_name);
        put_str(o, "requested_hostname", h->requested_hostname);
        put_str(o, "installation_disk_id", h->installation_disk_id);
        if (h->inventory_json && !(flags & MODEL_JSON_NO_INVENTORY)) {
                json_object *inv = json_tokener_parse(h->inventory_json);
                if (inv)
                        json_object_object_add(o, "inventory", inv);
        }
        /* What lists without inventories still show: the effective
         * hostname and the hardware facts the pool is filtered on. */
        put_str(o, "hostname", host_hostname(h));
        const struct inventory_facts *f = &h->facts;
        if (f->cpu_count != MODEL_UNSET || f->memory_bytes != MODEL_UNSET || f->max_disk_bytes != MODEL_UNSET) {
                json_object *hw = json_object_new_object();
                put_i64(hw, "cpu_count", f->cpu_count);
                put_i64(hw, "memory_bytes", f->memory_bytes);
                put_i64(hw, "max_disk_bytes", f->max_disk_bytes);
                json_object_object_add(o, "hardware", hw);
        }
        put_enum(o, "status", h->status, hstatus_name);
        put_str(o, "status_info", h->status_info);
        json_object_object_add(o, "validations", validation_list_to_json(h->validations, h->n_validations));
        const struct host_progress *p = &h->progress;
        if (p->stage || p->info || p->percent != MODEL_UNSET) {
                json_object *po = json_object_new_object();
                put_str(po, "stage", p->stage);
                put_i64(po, "percent", p->percent);
                put_str(po, "info", p->info);
                json_object_object_add(o, "progress", po);
        }
        put_str(o, "checked_in_at", h->checked_in_at);
        put_str(o, "registered_at", h->registered_at);
        put_str(o, "discovery_agent_version", h->discovery_agent_version);
        json_object_object_add(o, "applied_revision",
                               json_object_new_int64(h->applied_revision > 0 ? h->applied_revision : 0));
        /* What the admin asked of its agent and it has not done yet. */
        if (h->pending_actions) {
                json_object *pa = json_object_new_array();
                if (pa && (h->pending_actions & HOST_ACTION_GATHER_LOGS))
                        json_object_array_add(pa, json_object_new_string("gather-logs"));
                if (pa && (h->pending_actions & HOST_ACTION_RECLAIM))
                        json_object_array_add(pa, json_object_new_string(
                                                          (h->pending_actions & HOST_ACTION_RECLAIM_WIPE) ? "reclaim-wipe"
                                                                                                           : "reclaim"));
                json_object_object_add(o, "pending_actions", pa);
        }
        put_str(o, "created_at", h->created_at);
        put_str(o, "updated_at", h->updated_at);
        return o;
}

static void get_inventory_text(json_object *o, char **out, struct jctx *c) {
        json_object *v;
        if (!o || !json_object_object_get_ex(o, "inventory", &v) ||
            json_object_is_type(v, json_type_null))
                return;
        if (json_object_is_type(v, json_type_string)) {
                _cleanup_json_ json_object *parsed = NULL;
                if ((size_t) json_object_get_string_len(v) > MODEL_MAX_INVENTORY)
                        jfail(c, "field \"inventory\" is larger than %d bytes", MODEL_MAX_INVENTORY);
                else if (!(parsed = json_tokener_parse(json_object_get_string(v))) ||
                         !json_object_is_type(parsed, json_type_object))
                        jfail(c, "field \"inventory\" must hold a JSON object");
                else
                        jset_str(out, json_object_get_string(v), c);
                return;
        }
        if (!json_object_is_type(v, json_type_object)) {
                jfail(c, "field \"inventory\" must be an object");
                return;
        }
        size_t len;
        const char *t = json_object_to_json_string_length(v, JSON_C_TO_STRING_PLAIN, &len);
        if (!t)
                joom(c);
        else if (len > MODEL_MAX_INVENTORY)
                jfail(c, "field \"inventory\" is larger than %d bytes", MODEL_MAX_INVENTORY);
        else
                jset_str(out, t, c);
}

int host_from_json(json_object *o, struct host *h, char *err, size_t errlen) {
        struct jctx c = { .err = err, .errlen = errlen };
        static const struct { const char *k; uint32_t bit; } bits[] = {
                { "id", HOST_F_ID }, { "infra_env_id", HOST_F_INFRA_ENV_ID },
                { "owner", HOST_F_OWNER }, { "cluster_id", HOST_F_CLUSTER_ID },
                { "role", HOST_F_ROLE }, { "requested_hostname", HOST_F_REQUESTED_HOSTNAME },
                { "installation_disk_id", HOST_F_INSTALLATION_DISK_ID },
                { "inventory", HOST_F_INVENTORY }, { "status", HOST_F_STATUS },
                { "status_info", HOST_F_STATUS_INFO }, { "validations", HOST_F_VALIDATIONS },
                { "progress", HOST_F_PROGRESS }, { "checked_in_at", HOST_F_CHECKED_IN_AT },
                { "registered_at", HOST_F_REGISTERED_AT },
                { "discovery_agent_version", HOST_F_DISCOVERY_AGENT_VERSION },
                { "created_at", HOST_F_CREATED_AT }, { "updated_at", HOST_F_UPDATED_AT },
                { "applied_revision", HOST_F_APPLIED_REVISION },
        };
        int role = -1, status = -1;

        host_init(h);
        if (jstart(o, "host", &c) < 0)
                return c.r;
        for (size_t i = 0; i < sizeof bits / sizeof *bits; i++)
                if (jseen(o, bits[i].k))
                        h->present |= bits[i].bit;
        get_uuid(o, "id", &h->id, &c);
        get_uuid(o, "infra_env_id", &h->infra_env_id, &c);
        jget_str(o, "owner", &h->owner, MODEL_MAX_STRING, &c);
        get_uuid(o, "cluster_id", &h->cluster_id, &c);
        get_enum(o, "role", &role, _ROLE_MAX, role_name, &c);
        h->role = (enum host_role) role;
        jget_str(o, "requested_hostname", &h->requested_hostname, MODEL_MAX_STRING, &c);
        jget_str(o, "installation_disk_id", &h->installation_disk_id, MODEL_MAX_STRING, &c);
        get_inventory_text(o, &h->inventory_json, &c);
        get_enum(o, "status", &status, _HOST_STATUS_MAX, hstatus_name, &c);
        h->status = (enum host_status) status;
        jget_str(o, "status_info", &h->status_info, MODEL_MAX_MESSAGE, &c);
        get_validations(o, &h->validations, &h->n_validations, &c);
        json_object *p = jget(o, "progress", json_type_object, &c);
        jget_str(p, "stage", &h->progress.stage, MODEL_MAX_STRING, &c);
        jget_i64(p, "percent", &h->progress.percent, 100, &c);
        jget_str(p, "info", &h->progress.info, MODEL_MAX_MESSAGE, &c);
        /* Derived members, read back so that JSON round trips. */
        if (!h->requested_hostname && !h->inventory_json)
                jget_str(o, "hostname", &h->facts.hostname, MODEL_MAX_STRING, &c);
        json_object *hw = jget(o, "hardware", json_type_object, &c);
        jget_i64(hw, "cpu_count", &h->facts.cpu_count, INT64_MAX, &c);
        jget_i64(hw, "memory_bytes", &h->facts.memory_bytes, INT64_MAX, &c);
        jget_i64(hw, "max_disk_bytes", &h->facts.max_disk_bytes, INT64_MAX, &c);
        get_time(o, "checked_in_at", &h->checked_in_at, &c);
        get_time(o, "registered_at", &h->registered_at, &c);
        jget_str(o, "discovery_agent_version", &h->discovery_agent_version, MODEL_MAX_STRING, &c);
        jget_i64(o, "applied_revision", &h->applied_revision, INT64_MAX, &c);
        get_time(o, "created_at", &h->created_at, &c);
        get_time(o, "updated_at", &h->updated_at, &c);
        return c.r;
}

/* ---- cluster ----------------------------------------------------------- */

/* ---- capabilities and conditions ---------------------------------------- */

static void cluster_cap_spec_free(struct cluster_cap_spec *sp) {
        free(sp->baseline_capability_set);
        strv_free(&sp->additional_enabled_capabilities);
        *sp = (struct cluster_cap_spec) { 0 };
}

void cluster_cap_status_free(struct cluster_cap_status *st) {
        strv_free(&st->enabled_capabilities);
        strv_free(&st->known_capabilities);
        strv_free(&st->implicit_capabilities);
}

static json_object *strv_json(const struct strv *v) {
        json_object *a = json_object_new_array_ext((int) v->n);
        for (size_t i = 0; a && i < v->n; i++)
                json_object_array_add(a, json_object_new_string(v->v[i]));
        return a;
}

json_object *cluster_cap_spec_to_json(const struct cluster_cap_spec *sp) {
        json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        json_object_object_add(o, "baseline_capability_set",
                               sp->baseline_capability_set ? json_object_new_string(sp->baseline_capability_set)
                                                           : NULL);
        json_object_object_add(o, "additional_enabled_capabilities", strv_json(&sp->additional_enabled_capabilities));
        return o;
}

static void cap_spec_parse(json_object *o, struct cluster_cap_spec *sp, struct jctx *c) {
        cluster_cap_spec_free(sp);
        jget_str(o, "baseline_capability_set", &sp->baseline_capability_set, MODEL_MAX_CAPABILITY_NAME, c);
        jget_strv(o, "additional_enabled_capabilities", &sp->additional_enabled_capabilities,
                  MODEL_MAX_CAPABILITIES, MODEL_MAX_CAPABILITY_NAME, c);
}

int cluster_cap_spec_from_json(json_object *o, struct cluster_cap_spec *sp, char *err, size_t errlen) {
        struct jctx c = { .err = err, .errlen = errlen };
        if (jstart(o, "capabilities.spec", &c) < 0)
                return c.r;
        cap_spec_parse(o, sp, &c);
        return c.r;
}

/* The store's form has implicit_capabilities too; the API's leaves it out. */
static json_object *cap_status_json(const struct cluster_cap_status *st, bool with_implicit) {
        json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        json_object_object_add(o, "enabled_capabilities", strv_json(&st->enabled_capabilities));
        json_object_object_add(o, "known_capabilities", strv_json(&st->known_capabilities));
        if (with_implicit)
                json_object_object_add(o, "implicit_capabilities", strv_json(&st->implicit_capabilities));
        return o;
}

json_object *cluster_cap_status_to_json(const struct cluster_cap_status *st) {
        return cap_status_json(st, true);
}

static void cap_status_parse(json_object *o, struct cluster_cap_status *st, struct jctx *c) {
        cluster_cap_status_free(st);
        jget_strv(o, "enabled_capabilities", &st->enabled_capabilities, MODEL_MAX_CAPABILITIES,
                  MODEL_MAX_CAPABILITY_NAME, c);
        jget_strv(o, "known_capabilities", &st->known_capabilities, MODEL_MAX_CAPABILITIES,
                  MODEL_MAX_CAPABILITY_NAME, c);
        jget_strv(o, "implicit_capabilities", &st->implicit_capabilities, MODEL_MAX_CAPABILITIES,
                  MODEL_MAX_CAPABILITY_NAME, c);
}

int cluster_cap_status_from_json(json_object *o, struct cluster_cap_status *st, char *err, size_t errlen) {
        struct jctx c = { .err = err, .errlen = errlen };
        if (jstart(o, "capabilities.status", &c) < 0)
                return c.r;
        cap_status_parse(o, st, &c);
        return c.r;
}

void model_condition_list_free(struct model_condition **v, size_t *n) {
        for (size_t i = 0; *v && i < *n; i++) {
                struct model_condition *x = &(*v)[i];
                free(x->type);
                free(x->status);
                free(x->reason);
                free(x->message);
                free(x->last_transition_time);
        }
        free(*v);
        *v = NULL;
        *n = 0;
}

json_object *model_condition_list_to_json(const struct model_condition *v, size_t n) {
        json_object *a = json_object_new_array_ext((int) n);
        for (size_t i = 0; a && i < n; i++) {
                json_object *e = json_object_new_object();
                put_str(e, "type", v[i].type);
                put_str(e, "status", v[i].status);
                put_str(e, "reason", v[i].reason);
                put_str(e, "message", v[i].message);
                put_str(e, "last_transition_time", v[i].last_transition_time);
                json_object_array_add(a, e);
        }
        return a;
}

static void conditions_parse(json_object *a, struct model_condition **v, size_t *n, struct jctx *c) {
        size_t len = json_object_array_length(a);
        model_condition_list_free(v, n);
        if (len > MODEL_MAX_CONDITIONS) {
                jfail(c, "field \"conditions\" has %zu entries, at most %d allowed", len, MODEL_MAX_CONDITIONS);
                return;
        }
        for (size_t i = 0; i < len && c->r == 0; i++) {
                json_object *e = jget_elem(a, i, "conditions", c);
                if (!e)
                        return;
                struct model_condition *x = inv_array_append((void **) v, n, sizeof *x);
                if (!x) {
                        joom(c);
                        return;
                }
                *x = (struct model_condition) { 0 };
                jget_str(e, "type", &x->type, MODEL_MAX_STRING, c);
                jget_str(e, "status", &x->status, MODEL_MAX_STRING, c);
                jget_str(e, "reason", &x->reason, MODEL_MAX_STRING, c);
                jget_str(e, "message", &x->message, MODEL_MAX_MESSAGE, c);
                get_time(e, "last_transition_time", &x->last_transition_time, c);
                if (c->r == 0 && (!x->type || !x->status))
                        jfail(c, "conditions[%zu] needs a type and a status", i);
        }
}

int model_condition_list_from_json(json_object *a, struct model_condition **v, size_t *n, char *err, size_t errlen) {
        struct jctx c = { .err = err, .errlen = errlen };
        if (err && errlen)
                err[0] = '\0';
        if (!json_object_is_type(a, json_type_array)) {
                jfail(&c, "field \"conditions\" must be an array");
                return c.r;
        }
        conditions_parse(a, v, n, &c);
        return c.r;
}

/* ---- cluster ----------------------------------------------------------- */

void cluster_init(struct cluster *c) {
        *c = (struct cluster) { .high_availability_mode = _HA_MODE_INVALID };
}

void cluster_free(struct cluster *c) {
        char **s[] = { &c->id, &c->name, &c->owner, &c->release_version, &c->base_dns_domain,
                       &c->machine_network_cidr, &c->api_vip, &c->ingress_vip, &c->pull_secret,
                       &c->status, &c->status_info, &c->created_at, &c->updated_at, &c->feature_set,
                       &c->cpu_architecture };
        for (size_t i = 0; i < sizeof s / sizeof *s; i++)
                free(*s[i]);
        labels_free(&c->labels, &c->n_labels);
        validation_list_free(&c->validations, &c->n_validations);
        cluster_cap_spec_free(&c->cap_spec);
        cluster_cap_status_free(&c->cap_status);
        model_condition_list_free(&c->conditions, &c->n_conditions);
        cluster_init(c);
}

const char *cluster_label_get(const struct cluster *c, const char *key) {
        for (size_t i = 0; key && i < c->n_labels; i++)
                if (strcmp(c->labels[i].key, key) == 0)
                        return c->labels[i].value;
        return NULL;
}

int cluster_label_set(struct cluster *c, const char *key, const char *value) {
        return label_set(&c->labels, &c->n_labels, key, value);
}

json_object *cluster_to_json(const struct cluster *c, unsigned flags) {
        json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        put_str(o, "kind", "Cluster");
        put_str(o, "id", c->id);
        put_str(o, "name", c->name);
        put_str(o, "owner", c->owner);
        put_str(o, "release_version", c->release_version);
        put_str(o, "base_dns_domain", c->base_dns_domain);
        put_str(o, "machine_network_cidr", c->machine_network_cidr);
        put_str(o, "api_vip", c->api_vip);
        put_str(o, "ingress_vip", c->ingress_vip);
        put_enum(o, "high_availability_mode", c->high_availability_mode, ha_name);
        put_secret(o, c->pull_secret, flags);
        json_object_object_add(o, "labels", labels_to_json(c->labels, c->n_labels));
        put_str(o, "status", c->status);
        put_str(o, "status_info", c->status_info);
        json_object_object_add(o, "validations", validation_list_to_json(c->validations, c->n_validations));
        json_object *caps = json_object_new_object();
        if (caps) {
                json_object_object_add(caps, "spec", cluster_cap_spec_to_json(&c->cap_spec));
                if (c->has_cap_status)
                        json_object_object_add(caps, "status", cap_status_json(&c->cap_status, false));
                json_object_object_add(o, "capabilities", caps);
        }
        json_object_object_add(o, "conditions", model_condition_list_to_json(c->conditions, c->n_conditions));
        json_object_object_add(o, "payload_revision",
                               json_object_new_int64(c->payload_revision > 0 ? c->payload_revision : 0));
        put_str(o, "feature_set", c->feature_set ? c->feature_set : "Default");
        put_str(o, "cpu_architecture", c->cpu_architecture ? c->cpu_architecture : "x86_64");
        put_str(o, "created_at", c->created_at);
        put_str(o, "updated_at", c->updated_at);
        return o;
}

int cluster_from_json(json_object *o, struct cluster *cl, char *err, size_t errlen) {
        struct jctx c = { .err = err, .errlen = errlen };
        static const struct { const char *k; uint32_t bit; } bits[] = {
                { "id", CL_F_ID }, { "name", CL_F_NAME }, { "owner", CL_F_OWNER },
                { "release_version", CL_F_RELEASE_VERSION },
                { "base_dns_domain", CL_F_BASE_DNS_DOMAIN },
                { "machine_network_cidr", CL_F_MACHINE_NETWORK_CIDR }, { "api_vip", CL_F_API_VIP },
                { "ingress_vip", CL_F_INGRESS_VIP }, { "high_availability_mode", CL_F_HA_MODE },
                { "pull_secret", CL_F_PULL_SECRET }, { "labels", CL_F_LABELS },
                { "status", CL_F_STATUS }, { "status_info", CL_F_STATUS_INFO },
                { "validations", CL_F_VALIDATIONS }, { "created_at", CL_F_CREATED_AT },
                { "updated_at", CL_F_UPDATED_AT }, { "conditions", CL_F_CONDITIONS },
                { "payload_revision", CL_F_PAYLOAD_REVISION }, { "feature_set", CL_F_FEATURE_SET },
                { "cpu_architecture", CL_F_CPU_ARCHITECTURE },
        };
        int ha = -1;

        cluster_init(cl);
        if (jstart(o, "cluster", &c) < 0)
                return c.r;
        for (size_t i = 0; i < sizeof bits / sizeof *bits; i++)
                if (jseen(o, bits[i].k))
                        cl->present |= bits[i].bit;
        get_uuid(o, "id", &cl->id, &c);
        jget_str(o, "name", &cl->name, MODEL_MAX_STRING, &c);
        jget_str(o, "owner", &cl->owner, MODEL_MAX_STRING, &c);
        jget_str(o, "release_version", &cl->release_version, MODEL_MAX_STRING, &c);
        jget_str(o, "base_dns_domain", &cl->base_dns_domain, MODEL_MAX_STRING, &c);
        jget_str(o, "machine_network_cidr", &cl->machine_network_cidr, MODEL_MAX_STRING, &c);
        jget_str(o, "api_vip", &cl->api_vip, MODEL_MAX_STRING, &c);
        jget_str(o, "ingress_vip", &cl->ingress_vip, MODEL_MAX_STRING, &c);
        get_enum(o, "high_availability_mode", &ha, _HA_MODE_MAX, ha_name, &c);
        cl->high_availability_mode = (enum ha_mode) ha;
        jget_str(o, "pull_secret", &cl->pull_secret, MODEL_MAX_SECRET, &c);
        check_pull_secret(cl->pull_secret, &c);
        json_object *l = jget(o, "labels", json_type_object, &c);
        if (l && c.r == 0)
                labels_parse(l, &cl->labels, &cl->n_labels, &c);
        jget_str(o, "status", &cl->status, MODEL_MAX_STRING, &c);
        jget_str(o, "status_info", &cl->status_info, MODEL_MAX_MESSAGE, &c);
        get_validations(o, &cl->validations, &cl->n_validations, &c);
        json_object *caps = jget(o, "capabilities", json_type_object, &c);
        json_object *spec = jget(caps, "spec", json_type_object, &c);
        json_object *status = jget(caps, "status", json_type_object, &c);
        if (spec && c.r == 0) {
                cl->present |= CL_F_CAPABILITIES;
                cap_spec_parse(spec, &cl->cap_spec, &c);
        }
        if (status && c.r == 0) {
                cl->present |= CL_F_CAP_STATUS;
                cl->has_cap_status = true;
                cap_status_parse(status, &cl->cap_status, &c);
        }
        json_object *conds = jget(o, "conditions", json_type_array, &c);
        if (conds && c.r == 0)
                conditions_parse(conds, &cl->conditions, &cl->n_conditions, &c);
        jget_i64(o, "payload_revision", &cl->payload_revision, INT64_MAX, &c);
        jget_str(o, "feature_set", &cl->feature_set, MODEL_MAX_CAPABILITY_NAME, &c);
        jget_str(o, "cpu_architecture", &cl->cpu_architecture, MODEL_MAX_STRING, &c);
        get_time(o, "created_at", &cl->created_at, &c);
        get_time(o, "updated_at", &cl->updated_at, &c);
        return c.r;
}

/* ---- event ------------------------------------------------------------- */

void event_init(struct event *e) {
        *e = (struct event) { .id = MODEL_UNSET, .severity = _EVENT_SEVERITY_INVALID,
                              .category = _EVENT_CATEGORY_INVALID };
}

void event_free(struct event *e) {
        free(e->time);
        free(e->infra_env_id);
        free(e->cluster_id);
        free(e->host_id);
        free(e->message);
        event_init(e);
}

json_object *event_to_json(const struct event *e, unsigned flags) {
        json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        put_i64(o, "id", e->id);
        put_str(o, "time", e->time);
        put_enum(o, "severity", e->severity, sev_name);
        put_enum(o, "category", e->category, cat_name);
        put_str(o, "infra_env_id", e->infra_env_id);
        put_str(o, "cluster_id", e->cluster_id);
        put_str(o, "host_id", e->host_id);
        put_str(o, "message", e->message);
        return o;
}

int event_from_json(json_object *o, struct event *e, char *err, size_t errlen) {
        struct jctx c = { .err = err, .errlen = errlen };
        int sev = -1, cat = -1;

        event_init(e);
        if (jstart(o, "event", &c) < 0)
                return c.r;
        jget_i64(o, "id", &e->id, INT64_MAX, &c);
        get_time(o, "time", &e->time, &c);
        get_enum(o, "severity", &sev, _EVENT_SEVERITY_MAX, sev_name, &c);
        e->severity = (enum event_severity) sev;
        get_enum(o, "category", &cat, _EVENT_CATEGORY_MAX, cat_name, &c);
        e->category = (enum event_category) cat;
        get_uuid(o, "infra_env_id", &e->infra_env_id, &c);
        get_uuid(o, "cluster_id", &e->cluster_id, &c);
        get_uuid(o, "host_id", &e->host_id, &c);
        jget_str(o, "message", &e->message, MODEL_MAX_MESSAGE, &c);
        return c.r;
}

/* ---- lists ------------------------------------------------------------- */

#define DEFINE_LIST(type)                                                       \
        void type##_list_free(struct type##_list *l) {                          \
                for (size_t i = 0; l->v && i < l->n; i++)                       \
                        type##_free(&l->v[i]);                                  \
                free(l->v);                                                     \
                *l = (struct type##_list) { 0 };                                \
        }                                                                       \
        json_object *type##_list_to_json(const struct type##_list *l, unsigned flags) { \
                json_object *a = json_object_new_array_ext((int) l->n);         \
                for (size_t i = 0; a && i < l->n; i++)                          \
                        json_object_array_add(a, type##_to_json(&l->v[i], flags)); \
                return a;                                                       \
        }

DEFINE_LIST(infra_env)
DEFINE_LIST(host)
DEFINE_LIST(cluster)
DEFINE_LIST(event)
