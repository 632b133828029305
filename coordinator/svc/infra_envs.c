/* Infra-envs (infra_envs.h): the rules of creating one (its architecture
 * must have a discovery ISO), changing and deleting one (never from under
 * an installation or another owner), and its agent tokens. */
#include "svc/infra_envs.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "svc/downloads.h"
#include "svc/iso.h"
#include "domain/ratelimit.h"
#include "svc/refresh.h"
#include "store/store.h"

int svc_infra_env_get(struct svc *sv, const char *id, struct infra_env *out) {
        return store_infra_env_get(sv->store, id, out);
}

int svc_infra_env_list(struct svc *sv, const char *owner, const struct list_page *pg, struct infra_env_list *out) {
        return store_infra_env_list(sv->store, owner, pg, out);
}

/* An infra-env's hosts boot the discovery ISO: its architecture must be the
 * template's ([iso] template's sidecar). Without a readable template (agents
 * started by hand, `make run`), only musterd's own architecture. 0, or
 * -EINVAL with err. */
static int arch_has_iso(struct svc *sv, const char *arch, char *err, size_t errlen) {
        struct iso_template t;
        char why[512], path[CONFIG_PATH_MAX];
        snprintf(path, sizeof path, "%s", svc_cfg(sv)->iso_template);
        if (iso_template_open(path, &t, why, sizeof why) == 0) {
                char have[sizeof t.cpu_architecture];
                snprintf(have, sizeof have, "%s", t.cpu_architecture);
                iso_template_close(&t);
                if (strcmp(have, arch) == 0)
                        return 0;
                return errmsg(err, errlen, -EINVAL, "no discovery ISO for %s: the ISO template %s boots %s hosts", arch,
                              path, have);
        }
        if (strcmp(arch, CPU_ARCH_BUILD) == 0)
                return 0;
        return errmsg(err, errlen, -EINVAL, "no discovery ISO for %s: %s; without one only %s (musterd's own) is accepted",
                      arch, why, CPU_ARCH_BUILD);
}

int svc_infra_env_create(struct svc *sv, struct infra_env *ie, const char *by, char **token, char *err,
                         size_t errlen) {
        int r;
        *token = NULL;
        if (!ie->name || !*ie->name)
                return errmsg(err, errlen, -EINVAL, "field \"name\" is required");
        if (ie->present & (IE_F_ID | IE_F_OWNER | IE_F_TOKEN_GENERATION | IE_F_CLUSTER_ID))
                return errmsg(err, errlen, -EINVAL,
                              "fields id, owner, cluster_id and token_generation are set by the server");
        free(ie->owner);
        ie->owner = strdup(by);
        const char *arch = cpu_arch_canonical(ie->cpu_architecture ? ie->cpu_architecture : "x86_64");
        if (!arch)
                return errmsg(err, errlen, -EINVAL,
                              "field \"cpu_architecture\" must be x86_64, aarch64, ppc64le or s390x");
        if ((r = arch_has_iso(sv, arch, err, errlen)) < 0)
                return r;
        free(ie->cpu_architecture);
        ie->cpu_architecture = strdup(arch);
        if ((r = svc_iso_config_fits(sv, ie, err, errlen)) < 0)
                return r;
        if ((r = store_infra_env_create(sv->store, ie)) < 0)
                return r;
        if (auth_issue_agent(sv->key, ie->id, ie->token_generation, token) < 0)
                return errmsg(err, errlen, -EIO, "could not sign the agent token");
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, ie->id, NULL, NULL, "infra-env %s (%s) created by %s", ie->name,
                  ie->id, ie->owner);
        return 0;
}

int svc_infra_env_update(struct svc *sv, const char *id, struct infra_env *in, const char *by,
                         struct infra_env *out, char *err, size_t errlen) {
        const uint32_t allowed = IE_F_NAME | IE_F_PULL_SECRET | IE_F_SSH_AUTHORIZED_KEY | IE_F_PROXY |
                                 IE_F_NTP_SOURCES | IE_F_STATIC_NETWORK;
        int r;
        infra_env_init(out);
        if (in->present & ~allowed)
                return errmsg(err, errlen, -EINVAL,
                              "only name, pull_secret, ssh_authorized_key, proxy, ntp_sources and static_network "
                              "can be changed");
        if (!in->present)
                return errmsg(err, errlen, -EINVAL, "nothing to change");
        if ((in->present & IE_F_NAME) && (!in->name || !*in->name))
                return errmsg(err, errlen, -EINVAL, "field \"name\" cannot be empty");
        free(in->id);
        in->id = strdup(id);
        /* What goes into its ISOs must still fit there. */
        if (in->present & (IE_F_SSH_AUTHORIZED_KEY | IE_F_PROXY | IE_F_STATIC_NETWORK)) {
                struct infra_env now;
                if ((r = store_infra_env_get(sv->store, id, &now)) < 0)
                        return r;
                struct infra_env merged = now;
                if (in->present & IE_F_SSH_AUTHORIZED_KEY)
                        merged.ssh_authorized_key = in->ssh_authorized_key;
                if (in->present & IE_F_PROXY)
                        merged.proxy = in->proxy;
                if (in->present & IE_F_STATIC_NETWORK)
                        merged.static_network = in->static_network;
                r = svc_iso_config_fits(sv, &merged, err, errlen);
                infra_env_free(&now);
                if (r < 0)
                        return r;
        }
        if ((r = store_infra_env_update(sv->store, in, in->present)) < 0 ||
            (r = store_infra_env_get(sv->store, in->id, out)) < 0)
                return r;
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, out->id, NULL, NULL, "infra-env %s updated by %s", out->id, by);
        return 0;
}

/* Why a host keeps its infra-env (store_infra_env_delete's rule), in words. */
static void blocker_words(struct svc *sv, const struct infra_env *ie, const struct host *h, char *buf, size_t n) {
        if (host_status_is_installing(h->status)) {
                snprintf(buf, n, "host %s is %s", h->id, host_status_to_string(h->status));
                return;
        }
        struct cluster c;
        cluster_init(&c);
        if (h->cluster_id && store_cluster_get(sv->store, h->cluster_id, &c) == 0 &&
            cluster_status_is_installing(cluster_status_from_string(c.status)))
                snprintf(buf, n, "host %s is bound to cluster %s, which is %s", h->id, c.id, c.status);
        else if (h->cluster_id && c.owner && ie->owner && strcmp(c.owner, ie->owner) != 0)
                snprintf(buf, n, "host %s is bound to cluster %s of owner %s", h->id, c.id, c.owner);
        else
                snprintf(buf, n, "host %s is %s (cluster %s)", h->id, host_status_to_string(h->status),
                         h->cluster_id ? h->cluster_id : "none");
        cluster_free(&c);
}

/* -EBUSY with err naming the first four hosts that keep ie (and how many
 * more). */
static int delete_blocked(struct svc *sv, const struct infra_env *ie, const struct host_list *blocked, char *err,
                          size_t errlen) {
        char why[4096], one[512];
        size_t len = 0;
        why[0] = '\0';
        for (size_t i = 0; i < blocked->n && i < 4; i++) {
                blocker_words(sv, ie, &blocked->v[i], one, sizeof one);
                len += (size_t) snprintf(why + len, sizeof why - len, "%s%s", i ? "; " : "", one);
                if (len >= sizeof why)
                        len = sizeof why - 1;
        }
        if (blocked->n > 4)
                snprintf(why + len, sizeof why - len, "; and %zu more", blocked->n - 4);
        return errmsg(err, errlen, -EBUSY, "infra-env %s cannot be deleted: %s", ie->id, why);
}

/* An infra-env goes with its hosts, but never a host being installed or one
 * lent to another owner's cluster: deleting those would leave a cluster
 * installing without hosts, or take a host from under someone else. */
int svc_infra_env_delete(struct svc *sv, const struct infra_env *ie, const char *by, char *err, size_t errlen) {
        struct host_list blocked = { 0 }, unbound = { 0 };
        const uint32_t installing = STORE_STATUS(HOST_PREPARING_FOR_INSTALLATION) | STORE_STATUS(HOST_INSTALLING) |
                                    STORE_STATUS(HOST_INSTALLING_IN_PROGRESS);
        int r = store_infra_env_delete(sv->store, ie->id, installing, &blocked, &unbound);
        if (r == -EBUSY)
                r = delete_blocked(sv, ie, &blocked, err, errlen);
        if (r < 0)
                goto out;
        for (size_t i = 0; i < unbound.n; i++)
                svc_event(sv, EVENT_WARNING, EVENT_CAT_USER, ie->id, unbound.v[i].cluster_id, unbound.v[i].id,
                          "host %s (%s) unbound from cluster %s and deleted: its infra-env %s was deleted by %s",
                          unbound.v[i].id, host_status_to_string(unbound.v[i].status), unbound.v[i].cluster_id,
                          ie->id, by);
        /* Each cluster that lost hosts decides its state again, once. */
        for (size_t i = 0; i < unbound.n; i++) {
                bool seen = false;
                for (size_t k = 0; k < i && !seen; k++)
                        seen = strcmp(unbound.v[k].cluster_id, unbound.v[i].cluster_id) == 0;
                if (!seen)
                        (void) refresh_cluster(sv, unbound.v[i].cluster_id, NULL);
        }
        ratelimit_forget(sv->registrations, ie->id);
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, NULL, NULL, "infra-env %s deleted by %s%s", ie->id, by,
                  unbound.n ? " with hosts bound to clusters; they were unbound" : "");
        r = 0;
out:
        host_list_free(&unbound);
        host_list_free(&blocked);
        return r;
}

int svc_infra_env_rotate_token(struct svc *sv, struct infra_env *ie, char **token, char *err, size_t errlen) {
        int64_t gen;
        *token = NULL;
        int r = store_infra_env_bump_token(sv->store, ie->id, &gen);
        if (r < 0)
                return r;
        if (auth_issue_agent(sv->key, ie->id, gen, token) < 0)
                return errmsg(err, errlen, -EIO, "could not sign the agent token");
        ie->token_generation = gen;
        svc_event(sv, EVENT_WARNING, EVENT_CAT_USER, ie->id, NULL, NULL,
                  "agent tokens of infra-env %s rotated to generation %lld; older ones are revoked", ie->id,
                  (long long) gen);
        return 0;
}
