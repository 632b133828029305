/* Add-ons across clusters (DESIGN §10), pure: an AddonProxy's
 * spec (parsed, validated, patched, as canonical JSON), which clusters it
 * selects, the values it renders for each from the cluster's facts, the
 * HelmChart object that carries a release in a payload (DESIGN §6 part 3),
 * and the rules of a staged rollout: how many clusters may start now, when
 * a release in flight counts as applied, failed or soaked. No I/O: the
 * service (svc/addons.c) reads and writes the store and builds payloads.
 *
 * A proxy spec, as clients send it and the store keeps it:
 *   {name, cluster_selector{match_labels, match_expressions}|null,
 *    chart{repository, name, version}, release_name, namespace,
 *    values_template, reconcile_strategy: Continuous|InstallOnce,
 *    rollout{max_concurrent, max_failures, soak_seconds, timeout_seconds}}
 * max_concurrent 0: no limit; max_failures 0: never pause. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "labelsel.h"
#include "model.h"
#include "mustache.h"

#define ADDON_MAX_NAME 63               /* proxy, release and namespace names (DNS-1123 labels) */
#define ADDON_MAX_CHART_FIELD 1024      /* repository URL, chart name, version */
#define ADDON_MAX_TEMPLATE (256 * 1024)  /* a values template */
#define ADDON_MAX_VALUES (1024 * 1024)  /* one cluster's rendered values */
#define ADDON_MAX_CONCURRENT 100000
#define ADDON_MAX_SOAK_S (7 * 24 * 3600)
#define ADDON_DEFAULT_TIMEOUT_S 600
#define ADDON_DEFAULT_MAX_FAILURES 1
/* Manifest directory names of add-on releases: after the release's and the
 * operators' (9000_operators_...). */
#define ADDON_FILE_PREFIX "9500_addon_"
#define HELMCHART_API_VERSION "helm.cattle.io/v1"
#define HELMCHART_GROUP "helm.cattle.io"
#define HELMCHART_KIND "HelmChart"

enum addon_strategy {
        ADDON_CONTINUOUS,
        ADDON_INSTALL_ONCE,
        _ADDON_STRATEGY_MAX,
        _ADDON_STRATEGY_INVALID = -1,
};

enum addon_status {
        ADDON_PENDING,   /* kept for a cluster that is not installed yet, or not in a payload yet */
        ADDON_ROLLING,   /* in a payload revision the cluster's hosts have not all applied */
        ADDON_APPLIED,   /* every host applied it */
        ADDON_FAILED,    /* an agent failed it, none reported in time, or an out-of-band release holds its name */
        ADDON_REMOVING,  /* left out of the payload; gone once every host applied that */
        _ADDON_STATUS_MAX,
        _ADDON_STATUS_INVALID = -1,
};
const char *addon_status_to_string(enum addon_status s);
enum addon_status addon_status_from_string(const char *s);

struct addon_chart {
        char *repository;
        char *name;
        char *version;
};

struct addon_rollout {
        int64_t max_concurrent;
        int64_t max_failures;
        int64_t soak_seconds;
        int64_t timeout_seconds;
};

struct addon_spec {
        char *name;
        struct labelsel *selector;      /* never NULL once parsed; ->nothing for null */
        struct addon_chart chart;
        char *release_name;
        char *namespace;
        char *values_template;
        enum addon_strategy strategy;
        struct addon_rollout rollout;
        struct mustache *tmpl;          /* values_template parsed */
};
void addon_spec_free(struct addon_spec *s);

/* A new proxy's spec from a client's JSON: name, cluster_selector (present;
 * null selects none, {} every cluster), chart (all three), namespace
 * required; release_name defaults to name, values_template to "",
 * reconcile_strategy to Continuous, rollout members to 0, 1, 0 and
 * ADDON_DEFAULT_TIMEOUT_S. Unknown members are refused. -EINVAL with err
 * naming the member (a template that does not parse: its line and column;
 * one past the limits: the limit). */
int addon_spec_parse(json_object *o, struct addon_spec *out, char *err, size_t errlen);
/* cur with a PATCH applied: cluster_selector, values_template,
 * reconcile_strategy replace; chart and rollout members given replace
 * theirs; name, release_name and namespace cannot change (-EINVAL). An
 * empty patch is -EINVAL ("nothing to change"). */
int addon_spec_patch(const struct addon_spec *cur, json_object *patch, struct addon_spec *out, char *err,
                     size_t errlen);
/* The spec as JSON (every member; the selector canonical). NULL on ENOMEM. */
json_object *addon_spec_to_json(const struct addon_spec *s);
/* Whether a and b render the same releases (selector, chart, names,
 * template, strategy); the rollout settings do not count. */
bool addon_spec_same_output(const struct addon_spec *a, const struct addon_spec *b);

/* The facts of a cluster that select it and fill its templates. */
struct addon_cluster {
        const char *id;
        const char *name;
        const char *base_domain;
        const char *machine_network_cidr;
        const char *api_vip;
        const char *ingress_vip;
        const char *release_version;
        const struct model_label *labels;
        size_t n_labels;
        int64_t host_count;
};
void addon_cluster_from_model(const struct cluster *c, int64_t host_count, struct addon_cluster *out);
/* The template context {cluster: {id, name, labels{}, base_domain,
 * machine_network_cidr, api_vip, ingress_vip, release_version,
 * host_count}}; absent facts are left out (they render empty). */
json_object *addon_cluster_context(const struct addon_cluster *c);
bool addon_selects(const struct addon_spec *s, const struct addon_cluster *c);

/* The reconciler's memory of what each proxy generation rendered for each
 * cluster, so that a pass renders again only where the proxy's output or
 * the cluster's facts changed. Entries not used since the last sweep go. */
struct addon_memo;
struct addon_memo *addon_memo_new(void);
void addon_memo_free(struct addon_memo *m);
/* Drop what the passes since the previous sweep did not use. */
void addon_memo_sweep(struct addon_memo *m);

/* What a release holds: what goes into the HelmChart. */
struct addon_content {
        struct addon_chart chart;
        char *release_name;
        char *namespace;
        char *values;
};
void addon_content_free(struct addon_content *c);
bool addon_content_equal(const struct addon_content *a, const struct addon_content *b);
/* {chart{repository,name,version}, release_name, namespace, values} and back. */
json_object *addon_content_to_json(const struct addon_content *c);
int addon_content_from_json(json_object *o, struct addon_content *out);

/* The release spec s renders for a cluster with context ctx
 * (addon_cluster_context): the template rendered and checked to be YAML
 * whose document is empty or a mapping. -EINVAL with err naming the
 * cluster and, for bad YAML, the line; -E2BIG past ADDON_MAX_VALUES or when
 * the values' aliases expand past yscan_alias_cap() (yamlscan.h). */
int addon_render(const struct addon_spec *s, const struct addon_cluster *c, json_object *ctx,
                 struct addon_content *out, char *err, size_t errlen);

/* The content (addon_content_to_json as plain JSON text) proxy s, of id
 * proxy_id at generation gen, wants on cluster c: from the memo when this
 * generation rendered it for c's facts before, else rendered
 * (addon_render, with *ctx made on first need; the caller puts it) and
 * remembered. *content points into the memo: valid until the next call or
 * sweep. -EINVAL with err as addon_render's; -ENOMEM. */
int addon_want(struct addon_memo *m, const char *proxy_id, int64_t gen, const struct addon_spec *s,
               const struct addon_cluster *c, json_object **ctx, const char **content, char *err, size_t errlen);

/* The HelmChart object (YAML text) of a release: metadata.name the
 * release, metadata.namespace and spec.targetNamespace its namespace,
 * spec.chart/repo/version, spec.valuesContent the values; labelled with the
 * proxy and the revision. NULL on ENOMEM. */
char *addon_helmchart_yaml(const struct addon_content *c, const char *proxy, int64_t revision);
/* Its file name in a manifest directory: ADDON_FILE_PREFIX<proxy>.yaml. */
int addon_helmchart_file(const char *proxy, char *buf, size_t len);

/* ---- the staged rollout ------------------------------------------------------ */

/* How many more clusters may start the proxy's change now, given in_flight
 * (releases rolling or still soaking) and failures (failed since the budget
 * was last reset): SIZE_MAX for no limit. *pause is set when failures have
 * reached max_failures (then 0). */
size_t addon_rollout_slots(const struct addon_rollout *ro, size_t in_flight, size_t failures, bool *pause);

/* One release in flight, as the service sees it on a pass. */
struct addon_track_in {
        enum addon_status status;
        int64_t payload_revision;   /* the cluster revision that carries it; 0: none yet */
        int64_t min_applied;        /* the lowest applied revision among the cluster's hosts; 0: none */
        int64_t hosts;              /* hosts bound to the cluster (installed) */
        int64_t failed_revision;    /* the highest revision a host reported failing, 0: none */
        const char *failed_host;    /* which host, and why */
        const char *failed_why;
        const char *lagging_host;   /* a host below payload_revision, for the message */
        const char *disconnected_host; /* a host of the cluster that is disconnected now; NULL: none */
        int64_t started_s;          /* when it started rolling (unix seconds) */
        int64_t applied_s;          /* when it was applied */
        int64_t now_s;
        const struct addon_rollout *ro;
};
/* What happens to it: its new status and message (into msg, "" for
 * none); whether it still takes a rollout slot (rolling, or applied and
 * soaking). */
struct addon_track_out {
        enum addon_status status;
        bool in_flight;
        bool removed;               /* a removal every host applied: the release is gone */
};
void addon_track(const struct addon_track_in *in, struct addon_track_out *out, char *msg, size_t msglen);
