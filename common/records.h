/* The coordinator's resource records besides hosts, clusters, infra-envs
 * and events (model.h): releases, payload revisions, people's tokens,
 * operator catalogs, subscriptions and operands, add-on proxies and
 * releases, and a host's logs upload; and what a list asks for (a page,
 * the host and event filters). The store fills them in, the services work
 * on them, and the API answers them with the JSON built here. Strings are
 * owned (malloc'd); *_free releases what a record holds and leaves it
 * empty. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "release.h"

/* A release holds at most this many manifests. */
#define RELEASE_MAX_MANIFESTS 20000

/* An imported release (DESIGN §3): what its release info says, and how
 * many manifests it holds. */
struct release_record {
        struct release_info info;
        int64_t manifest_count;
        char *created_at;
        int64_t seq;                     /* list order and cursor */
};
void release_record_init(struct release_record *r);
void release_record_free(struct release_record *r);
struct release_record_list { struct release_record *v; size_t n; int64_t next_after; };
void release_record_list_free(struct release_record_list *l);
/* A release as the API answers it: its release info, manifest count and
 * import time. NULL on ENOMEM. */
json_object *release_record_to_json(const struct release_record *r);

/* A cluster's signed payload revision (DESIGN §6). */
struct payload_record {
        char *cluster_id;
        int64_t revision;
        char *digest;                /* "sha256:<hex>" */
        char *signature;             /* base64url r||s */
        char *canonical;             /* the signed bytes (NULL in lists) */
        size_t canonical_len;
        char *release_version;
        int64_t manifest_count;
        char *created_at;
};
void payload_record_init(struct payload_record *p);
void payload_record_free(struct payload_record *p);
struct payload_record_list { struct payload_record *v; size_t n; };
void payload_record_list_free(struct payload_record_list *l);

/* What musterd remembers of a person's token (never the token itself). */
struct token_record {
        char *id;          /* the token's jti, a UUID */
        char *role;        /* "infra-admin" | "cluster-creator" */
        char *owner;
        char *created_at;  /* RFC 3339 */
        char *expires_at;  /* RFC 3339 */
        char *revoked_at;  /* RFC 3339, NULL while not revoked */
};
void token_record_init(struct token_record *t);
void token_record_free(struct token_record *t);
struct token_record_list { struct token_record *v; size_t n; int64_t next_after; };
void token_record_list_free(struct token_record_list *l);
/* A token's record as the API answers it (never the token itself). */
json_object *token_record_to_json(const struct token_record *t);

/* A catalog as musterd keeps it: the files it was added from (their
 * canonical form, catalog_files_to_canonical) and what they hold. */
struct catalog_record {
        char *id;
        char *name;         /* unique */
        int64_t priority;   /* lower number = higher priority; never changes */
        char *owner;        /* who added it */
        char *digest;       /* "sha256:<hex>" of files */
        char *files;        /* NUL-terminated; NULL in lists */
        size_t files_len;   /* bytes of files (in lists too) */
        int64_t n_files, n_packages, n_channels, n_bundles, n_manifests, n_ignored;
        char *created_at;
};
void catalog_record_init(struct catalog_record *c);
void catalog_record_free(struct catalog_record *c);
struct catalog_record_list { struct catalog_record *v; size_t n; };
void catalog_record_list_free(struct catalog_record_list *l);
/* The summary of a catalog, as every answer has it (without its files).
 * NULL on ENOMEM. */
json_object *catalog_record_to_json(const struct catalog_record *c);

/* A cluster's subscription to an operator package: one per package. */
struct subscription_record {
        char *id;
        char *cluster_id;
        char *package;
        char *channel;        /* NULL: the package's default channel */
        char *catalog;        /* NULL: any catalog */
        char *version_range;  /* NULL: any version */
        bool skip_dependencies;
        bool cleanup;         /* cleanup.enabled: delete its operands before it on uninstall (DESIGN §9) */
        char *uninstall;      /* JSON text of the uninstall under way (the services'); NULL: none */
        char *owner;
        char *created_at;
};
void subscription_record_init(struct subscription_record *s);
void subscription_record_free(struct subscription_record *s);
struct subscription_record_list { struct subscription_record *v; size_t n; };
void subscription_record_list_free(struct subscription_record_list *l);

/* A custom resource a creator applied through musterd, of a kind one of the
 * cluster's operators owns: one per (cluster, group, kind, namespace, name). */
struct operand_record {
        char *id;
        char *cluster_id;
        char *package;        /* the operator that owns its kind */
        char *group, *version, *kind;
        char *namespace;      /* NULL: cluster-scoped */
        char *name;
        char *file;           /* the file it came from (a plain name) */
        char *content;        /* the document's bytes */
        char *owner;
        char *created_at;
};
void operand_record_init(struct operand_record *o);
void operand_record_free(struct operand_record *o);
struct operand_record_list { struct operand_record *v; size_t n; };
void operand_record_list_free(struct operand_record_list *l);

/* An AddonProxy as kept: its spec as JSON text (the domain parses it), the
 * spec before the last change (what a rollback returns to), and the
 * rollout's state. */
struct addon_proxy_record {
        char *id;
        char *name;            /* unique */
        char *owner;
        char *spec;            /* JSON text */
        char *prev_spec;       /* JSON text; NULL: nothing to roll back to */
        int64_t generation;    /* 1 at creation; every spec change adds one */
        int64_t rollback_generation; /* the generation a rollback made (its changes are not staged); 0 */
        bool paused;
        int64_t failure_base;  /* failures forgiven by the last resume */
        bool deleting;         /* deleted: its releases are being removed */
        char *conditions;      /* JSON array text; NULL: none yet */
        char *created_at;
        char *updated_at;
        int64_t seq;
};
void addon_proxy_record_init(struct addon_proxy_record *p);
void addon_proxy_record_free(struct addon_proxy_record *p);
struct addon_proxy_record_list { struct addon_proxy_record *v; size_t n; };
void addon_proxy_record_list_free(struct addon_proxy_record_list *l);

/* An AddonRelease: what musterd put (or is putting) on one cluster for one
 * proxy, the inventory that removal and updates go by. */
struct addon_release_record {
        char *proxy_id;
        char *cluster_id;
        char *content;          /* JSON text: addon_content_to_json */
        char *prev_content;     /* the content before the last update; NULL: none */
        int64_t revision;       /* 1 when created; every change of content adds one */
        int64_t applied_revision; /* the revision every host applied; 0: none */
        int64_t payload_revision; /* the cluster payload revision that carries revision (or its removal) */
        int64_t generation;     /* the proxy generation content was rendered from */
        char *status;           /* addon_status_to_string */
        char *message;
        bool conflict;          /* an out-of-band release holds its name on the cluster */
        int64_t started_at;     /* unix seconds it started rolling; 0 */
        int64_t applied_at;     /* unix seconds it was applied; 0 */
        char *created_at;
        char *updated_at;
        int64_t seq;
};
void addon_release_record_init(struct addon_release_record *r);
void addon_release_record_free(struct addon_release_record *r);
struct addon_release_record_list { struct addon_release_record *v; size_t n; int64_t next_after; };
void addon_release_record_list_free(struct addon_release_record_list *l);

/* A host's newest logs upload, and how many are kept. */
struct host_logs_record {
        char *created_at;
        void *data;     /* malloc'd */
        size_t len;
        int64_t count;  /* uploads kept for the host */
};
void host_logs_record_free(struct host_logs_record *l);

/* ---- what a list asks for ------------------------------------------------ */

/* Pages: list calls return up to `limit` rows (0 = STORE_DEFAULT_LIMIT,
 * more than STORE_MAX_LIMIT is -EINVAL: store.h) in creation order, skipping `offset`
 * rows, and starting after the keyset cursor `after` (0 = from the start;
 * the previous list's next_after). Prefer the cursor: it is stable while
 * rows come and go. */
struct list_page {
        unsigned limit;
        unsigned offset;
        int64_t after;
};

/* Filters are ANDed; zero/NULL members do not filter. */
struct host_filter {
        const char *infra_env_id;
        const char *cluster_id;
        const char *host_id;           /* that host id, in any infra-env */
        bool unbound_only;
        uint32_t status_mask;          /* STORE_STATUS() bits: 1 << enum host_status */
        int64_t min_cpu_cores;
        int64_t min_memory_bytes;
        int64_t min_disk_bytes;        /* the largest eligible disk */
        const char *hostname_contains; /* case-insensitive, on requested or inventory hostname */
        const char *owner;             /* hosts of this owner's infra-envs */
        const char *cluster_owner;     /* unbound hosts, and hosts of this owner's clusters */
        const char *checked_in_before; /* RFC 3339 */
        bool no_inventory;             /* leave inventory_json NULL (lighter lists) */
};

/* Events to list, oldest first. */
struct event_filter {
        const char *infra_env_id;
        const char *cluster_id;
        const char *host_id;
        enum event_severity min_severity; /* 0 (info) = all */
        const char *category;             /* event_category_to_string(); NULL: any but audit (kept
                                           * apart: asked for by name) */
        int64_t since_id;                 /* events with a larger id */
        unsigned limit;                   /* 0 = STORE_DEFAULT_LIMIT, <= STORE_MAX_LIMIT */
};
