/* The coordinator's resources (DESIGN §3): infra-envs, hosts, clusters and
 * events, with their JSON in both directions (json-c). Strings are owned and
 * NULL when unset; numbers use MODEL_UNSET, enums their _INVALID value. Unset
 * values are left out of the JSON, never invented. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inventory.h"
#include "protocol.h"
#include "strv.h"
#include "uuid.h"

#define MODEL_UNSET INT64_C(-1)
#define MODEL_TIME_LEN 32

/* Caps on what a client controls (STYLE: every size has a limit). */
#define MODEL_MAX_STRING 1024              /* names, hostnames, URLs, versions */
#define MODEL_MAX_MESSAGE 4096             /* status_info, event messages, validation messages */
#define MODEL_MAX_SECRET (64 * 1024)       /* pull secrets */
#define MODEL_MAX_SSH_KEY (16 * 1024)
#define MODEL_MAX_STATIC_NETWORK (256 * 1024) /* its JSON; what fits an ISO's config area is less */
#define MODEL_MAX_INVENTORY (4 * 1024 * 1024)
#define MODEL_MAX_NTP_SOURCES 32
#define MODEL_MAX_LABELS 128
#define MODEL_MAX_LABEL_KEY 317            /* 253-character prefix + '/' + 63 */
#define MODEL_MAX_LABEL_VALUE 63
#define MODEL_MAX_VALIDATIONS 64
#define MODEL_MAX_CAPABILITIES 256         /* names in a capability list (release.h's cap) */
#define MODEL_MAX_CAPABILITY_NAME 128
#define MODEL_MAX_CONDITIONS 16

/* to_json flags. */
enum {
        MODEL_JSON_SECRETS = 1u << 0,      /* include pull_secret and ssh_authorized_key (else only
                                            * pull_secret_set, ssh_authorized_key_set) */
        MODEL_JSON_NO_INVENTORY = 1u << 1, /* leave a host's inventory out */
};

/* ---- time and ids ------------------------------------------------------ */

/* Now as RFC 3339 UTC with seconds, "2026-11-21T21:50:11Z". These texts sort
 * in time order, which the store relies on. */
int model_now_rfc3339(char buf[MODEL_TIME_LEN]);
/* Unix seconds -> the same form; -EOVERFLOW outside years 0000-9999. */
int model_time_format(int64_t unix_seconds, char buf[MODEL_TIME_LEN]);
/* Any RFC 3339 date-time (fraction and offset allowed) -> Unix seconds
 * (fraction dropped); -EINVAL if malformed. */
int model_time_parse(const char *s, int64_t *out);
/* Parse and re-format to the canonical UTC form above. */
int model_time_normalize(const char *s, char buf[MODEL_TIME_LEN]);
/* A new random (version 4) UUID in lower case. */
int model_new_id(char out[UUID_STR_LEN]);

/* ---- enums the protocol header does not have --------------------------- */

enum event_severity { EVENT_INFO, EVENT_WARNING, EVENT_ERROR, EVENT_CRITICAL,
                      _EVENT_SEVERITY_MAX, _EVENT_SEVERITY_INVALID = -1 };
const char *event_severity_to_string(enum event_severity s);
enum event_severity event_severity_from_string(const char *s);

/* audit: a person's change through the API (who, with which role, what,
 * the answer), kept apart from the rest by retention ([events]
 * audit_max_age). */
enum event_category { EVENT_CAT_USER, EVENT_CAT_SYSTEM, EVENT_CAT_AGENT, EVENT_CAT_AUDIT,
                      _EVENT_CATEGORY_MAX, _EVENT_CATEGORY_INVALID = -1 };
const char *event_category_to_string(enum event_category c);
enum event_category event_category_from_string(const char *s);

enum ha_mode { HA_MODE_FULL, HA_MODE_NONE, _HA_MODE_MAX, _HA_MODE_INVALID = -1 };
const char *ha_mode_to_string(enum ha_mode m);    /* "Full" | "None" */
enum ha_mode ha_mode_from_string(const char *s);

/* ---- validations: {id, status, message} -------------------------------- */

struct validation {
        enum validation_id id;
        enum validation_status status;
        char *message;
};

void validation_list_free(struct validation **v, size_t *n);
/* Insert or replace the entry for `id`; 0 or -ENOMEM. */
int validation_list_set(struct validation **v, size_t *n, enum validation_id id,
                   enum validation_status status, const char *message);
const struct validation *validation_list_find(const struct validation *v, size_t n, enum validation_id id);
json_object *validation_list_to_json(const struct validation *v, size_t n);
/* A JSON array -> list (replacing *v); -EINVAL with a reason naming the
 * bad entry. */
int validation_list_from_json(json_object *a, struct validation **v, size_t *n, char *err, size_t errlen);

/* ---- infra-env --------------------------------------------------------- */

struct model_proxy {
        char *http_proxy;
        char *https_proxy;
        char *no_proxy;
};

/* Member bits: which members a from_json saw (a JSON null counts: it asks to
 * clear), and which members an update writes. */
enum infra_env_field {
        IE_F_ID = 1u << 0,
        IE_F_NAME = 1u << 1,
        IE_F_OWNER = 1u << 2,
        IE_F_CLUSTER_ID = 1u << 3,
        IE_F_CPU_ARCHITECTURE = 1u << 4,
        IE_F_PULL_SECRET = 1u << 5,
        IE_F_SSH_AUTHORIZED_KEY = 1u << 6,
        IE_F_PROXY = 1u << 7,
        IE_F_NTP_SOURCES = 1u << 8,
        IE_F_TOKEN_GENERATION = 1u << 9,
        IE_F_CREATED_AT = 1u << 10,
        IE_F_UPDATED_AT = 1u << 11,
        IE_F_STATIC_NETWORK = 1u << 12,
};

struct infra_env {
        char *id;
        char *name;
        char *owner;
        char *cluster_id;
        char *cpu_architecture;
        char *pull_secret;
        char *ssh_authorized_key;
        struct model_proxy proxy;   /* all NULL: no proxy */
        struct strv ntp_sources;    /* empty: none */
        char *static_network;       /* per-host network configs (staticnet.h) as canonical JSON; NULL: none */
        int64_t token_generation;
        char *created_at;
        char *updated_at;
        uint32_t present;           /* IE_F_* seen by infra_env_from_json */
};

void infra_env_init(struct infra_env *ie);
void infra_env_free(struct infra_env *ie);
json_object *infra_env_to_json(const struct infra_env *ie, unsigned flags);
/* JSON -> model. 0, or -EINVAL with a reason naming the field in `err`. The
 * model is always left freeable. Unknown fields are ignored; ids must be
 * UUIDs (stored lower case), times RFC 3339. Required fields are the
 * caller's business (a PATCH body has few). */
int infra_env_from_json(json_object *o, struct infra_env *ie, char *err, size_t errlen);

/* ---- host -------------------------------------------------------------- */

struct host_progress {
        char *stage;
        int64_t percent;  /* 0-100, MODEL_UNSET */
        char *info;
};

/* What the store derives from an inventory to filter on. */
struct inventory_facts {
        char *hostname;
        int64_t cpu_count;       /* logical CPUs */
        int64_t memory_bytes;    /* physical, else usable */
        int64_t max_disk_bytes;  /* largest eligible installation disk, 0 if none */
};
void inventory_facts_init(struct inventory_facts *f);
void inventory_facts_free(struct inventory_facts *f);
int inventory_facts_from(const struct inventory *inv, struct inventory_facts *f);

enum host_field {
        HOST_F_ID = 1u << 0,
        HOST_F_INFRA_ENV_ID = 1u << 1,
        HOST_F_OWNER = 1u << 2,
        HOST_F_CLUSTER_ID = 1u << 3,
        HOST_F_ROLE = 1u << 4,
        HOST_F_REQUESTED_HOSTNAME = 1u << 5,
        HOST_F_INSTALLATION_DISK_ID = 1u << 6,
        HOST_F_INVENTORY = 1u << 7,
        HOST_F_STATUS = 1u << 8,
        HOST_F_STATUS_INFO = 1u << 9,
        HOST_F_VALIDATIONS = 1u << 10,
        HOST_F_PROGRESS = 1u << 11,
        HOST_F_CHECKED_IN_AT = 1u << 12,
        HOST_F_REGISTERED_AT = 1u << 13,
        HOST_F_DISCOVERY_AGENT_VERSION = 1u << 14,
        HOST_F_CREATED_AT = 1u << 15,
        HOST_F_UPDATED_AT = 1u << 16,
        HOST_F_APPLIED_REVISION = 1u << 17,
};

struct host {
        char *infra_env_id;
        char *id;
        char *owner;                 /* the infra-env's owner */
        char *cluster_id;            /* NULL: in the unbound pool */
        enum host_role role;
        char *requested_hostname;
        char *installation_disk_id;
        char *inventory_json;        /* raw text as the agent sent it */
        struct inventory *inventory; /* NULL until host_parse_inventory() */
        struct inventory_facts facts;/* derived by the store; not in the JSON */
        enum host_status status;
        char *status_info;
        struct validation *validations;
        size_t n_validations;
        struct host_progress progress;
        char *checked_in_at;
        char *registered_at;
        char *discovery_agent_version;
        char *created_at;
        char *updated_at;
        /* Bound or unbound since the agent last registered: its next
         * instructions must say post_step_action=exit (once). Internal, not
         * in the JSON. */
        bool reregister_pending;
        /* The latest network step results since the host was bound, as the
         * store keeps them: {"connectivity-check": output, "ntp-synchronizer":
         * output, "domain-resolution": output}. Internal, not in the JSON. */
        char *step_results_json;
        /* The cluster payload revision the host's agent last applied
         * (install or day-2 apply); 0: none yet. */
        int64_t applied_revision;
        uint32_t present;            /* HOST_F_* seen by host_from_json */
        /* Whether it has an inventory, set by every store read (also those
         * that leave inventory_json NULL). Internal, not in the JSON. */
        bool has_inventory;
        /* Read by store_host_get_brief: inventory_json is NULL and
         * validations are empty whatever the host has. Internal. */
        bool brief;
        /* What the admin asked of the host's agent and it has not done yet
         * (HOST_ACTION_*). Internal; the JSON shows it as
         * "pending_actions": ["gather-logs", "reclaim"]. */
        unsigned pending_actions;
};

/* A host's pending actions (struct host.pending_actions). */
#define HOST_ACTION_GATHER_LOGS 1u  /* send logs-gather until its logs are uploaded */
#define HOST_ACTION_RECLAIM 2u      /* send reclaim to its node agent */
#define HOST_ACTION_RECLAIM_WIPE 4u /* ... and wipe the installation disk from discovery */
#define HOST_ACTION_RECLAIM_STARTED 8u /* the reclaim step was handed out: too late to withdraw it */

void host_init(struct host *h);
void host_free(struct host *h);
/* Give h the inventory already parsed from its inventory_json (h takes
 * inv, a malloc'ed struct; the one it had is freed). */
void host_set_parsed_inventory(struct host *h, struct inventory *inv);
/* Parse inventory_json into h->inventory (replacing it). */
int host_parse_inventory(struct host *h, char *err, size_t errlen);
/* The same host: equal (infra_env_id, id) keys. */
bool host_same(const struct host *a, const struct host *b);
/* requested_hostname, else the inventory's hostname, else NULL. */
const char *host_hostname(const struct host *h);
json_object *host_to_json(const struct host *h, unsigned flags);
/* "inventory" may be an object or a JSON text; either way it is kept as text. */
int host_from_json(json_object *o, struct host *h, char *err, size_t errlen);

/* ---- cluster ----------------------------------------------------------- */

struct model_label {
        char *key;
        char *value;
};

enum cluster_field {
        CL_F_ID = 1u << 0,
        CL_F_NAME = 1u << 1,
        CL_F_OWNER = 1u << 2,
        CL_F_RELEASE_VERSION = 1u << 3,
        CL_F_BASE_DNS_DOMAIN = 1u << 4,
        CL_F_MACHINE_NETWORK_CIDR = 1u << 5,
        CL_F_API_VIP = 1u << 6,
        CL_F_INGRESS_VIP = 1u << 7,
        CL_F_HA_MODE = 1u << 8,
        CL_F_PULL_SECRET = 1u << 9,
        CL_F_LABELS = 1u << 10,
        CL_F_STATUS = 1u << 11,
        CL_F_STATUS_INFO = 1u << 12,
        CL_F_VALIDATIONS = 1u << 13,
        CL_F_CREATED_AT = 1u << 14,
        CL_F_UPDATED_AT = 1u << 15,
        CL_F_CAPABILITIES = 1u << 16,     /* capabilities.spec */
        CL_F_CAP_STATUS = 1u << 17,       /* capabilities.status (server-set) */
        CL_F_CONDITIONS = 1u << 18,       /* server-set */
        CL_F_PAYLOAD_REVISION = 1u << 19, /* server-set */
        CL_F_FEATURE_SET = 1u << 20,
        CL_F_CPU_ARCHITECTURE = 1u << 21,
};

/* capabilities.spec (DESIGN §7). */
struct cluster_cap_spec {
        char *baseline_capability_set;          /* NULL: vCurrent */
        struct strv additional_enabled_capabilities;
};

/* capabilities.status: what musterd computed from the spec and the release.
 * implicit (enabled but neither in the baseline nor additional) is kept
 * for the condition and the store; it is not in the JSON. */
struct cluster_cap_status {
        struct strv enabled_capabilities;       /* sorted */
        struct strv known_capabilities;         /* sorted */
        struct strv implicit_capabilities;      /* sorted */
};

/* A Kubernetes-style condition: {type, status, reason, message,
 * last_transition_time}. */
struct model_condition {
        char *type;
        char *status;                           /* "True" | "False" | "Unknown" */
        char *reason;
        char *message;
        char *last_transition_time;             /* RFC 3339 */
};
void model_condition_list_free(struct model_condition **v, size_t *n);
json_object *model_condition_list_to_json(const struct model_condition *v, size_t n);
/* A JSON array of conditions -> list (replacing *v); -EINVAL with a reason. */
int model_condition_list_from_json(json_object *a, struct model_condition **v, size_t *n, char *err, size_t errlen);
/* capabilities.status as the store keeps it: {enabled_capabilities,
 * known_capabilities, implicit_capabilities}. */
json_object *cluster_cap_status_to_json(const struct cluster_cap_status *st);
int cluster_cap_status_from_json(json_object *o, struct cluster_cap_status *st, char *err, size_t errlen);
void cluster_cap_status_free(struct cluster_cap_status *st);
/* {baseline_capability_set: ..|null, additional_enabled_capabilities: [..]}. */
json_object *cluster_cap_spec_to_json(const struct cluster_cap_spec *sp);
int cluster_cap_spec_from_json(json_object *o, struct cluster_cap_spec *sp, char *err, size_t errlen);

struct cluster {
        char *id;
        char *name;
        char *owner;
        char *release_version;
        char *base_dns_domain;
        char *machine_network_cidr;
        char *api_vip;
        char *ingress_vip;
        enum ha_mode high_availability_mode;
        char *pull_secret;
        struct model_label *labels;
        size_t n_labels;
        char *status;
        char *status_info;
        struct validation *validations;
        size_t n_validations;
        char *created_at;
        char *updated_at;
        struct cluster_cap_spec cap_spec;
        bool has_cap_status;         /* the release was imported when it was computed */
        struct cluster_cap_status cap_status;
        struct model_condition *conditions;
        size_t n_conditions;
        int64_t payload_revision;    /* latest payload revision; 0: none yet */
        char *feature_set;           /* NULL: "Default" */
        char *cpu_architecture;      /* NULL: x86_64 (cpu_arch_canonical names) */
        uint32_t present;            /* CL_F_* seen by cluster_from_json */
};

void cluster_init(struct cluster *c);
void cluster_free(struct cluster *c);
const char *cluster_label_get(const struct cluster *c, const char *key);
/* Insert or replace; -EINVAL for a key or value over the caps, -E2BIG past
 * MODEL_MAX_LABELS, -ENOMEM. */
int cluster_label_set(struct cluster *c, const char *key, const char *value);
json_object *labels_to_json(const struct model_label *l, size_t n);
int labels_from_json(json_object *o, struct model_label **l, size_t *n, char *err, size_t errlen);
json_object *cluster_to_json(const struct cluster *c, unsigned flags);
int cluster_from_json(json_object *o, struct cluster *c, char *err, size_t errlen);

/* ---- event ------------------------------------------------------------- */

struct event {
        int64_t id;                  /* assigned by the store, increasing; MODEL_UNSET */
        char *time;
        enum event_severity severity;
        enum event_category category;
        char *infra_env_id;
        char *cluster_id;
        char *host_id;
        char *message;
};

void event_init(struct event *e);
void event_free(struct event *e);
json_object *event_to_json(const struct event *e, unsigned flags);
int event_from_json(json_object *o, struct event *e, char *err, size_t errlen);

/* ---- lists, as the store returns them ---------------------------------- */

/* next_after: the cursor for the following page (pass it as
 * list_page.after), 0 when this page is the last. For events it is the id
 * of the last event (pass as since_id). */
struct infra_env_list { struct infra_env *v; size_t n; int64_t next_after; };
struct host_list { struct host *v; size_t n; int64_t next_after; };
struct cluster_list { struct cluster *v; size_t n; int64_t next_after; };
struct event_list { struct event *v; size_t n; int64_t next_after; };

void infra_env_list_free(struct infra_env_list *l);
void host_list_free(struct host_list *l);
void cluster_list_free(struct cluster_list *l);
void event_list_free(struct event_list *l);
/* JSON arrays of the members' to_json. */
json_object *infra_env_list_to_json(const struct infra_env_list *l, unsigned flags);
json_object *host_list_to_json(const struct host_list *l, unsigned flags);
json_object *cluster_list_to_json(const struct cluster_list *l, unsigned flags);
json_object *event_list_to_json(const struct event_list *l, unsigned flags);
