/* Store fixtures (storeutil.h). */
#include "storeutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "svc/catalogs.h"
#include "crypto.h"
#include "svc/svc.h"
#include "testutil.h"

char *tu_store_infra_env(struct store *st, const char *owner, const char *name) {
        struct infra_env ie;
        infra_env_init(&ie);
        ie.name = strdup(name);
        ie.owner = strdup(owner);
        ie.cpu_architecture = strdup("x86_64");
        ie.pull_secret = strdup("{\"auths\":{}}");
        cr_assert_eq(store_infra_env_create(st, &ie), 0);
        char *id = strdup(ie.id);
        infra_env_free(&ie);
        return id;
}

char *tu_store_cluster(struct store *st, const char *owner, const char *name) {
        struct cluster c;
        cluster_init(&c);
        c.name = strdup(name);
        c.owner = strdup(owner);
        cr_assert_eq(store_cluster_create(st, &c), 0);
        char *id = strdup(c.id);
        cluster_free(&c);
        return id;
}

/* The release of tu_store_release: two files, three documents. */
static const char release_yaml[] = "version: \"%s\"\n"
                                   "os_image:\n  url: https://images.example.test/os.img\n"
                                   "  sha256: \"0000000000000000000000000000000000000000000000000000000000000000\"\n"
                                   "  size: 1024\n"
                                   "known_capabilities: [Console, Insights]\n"
                                   "capability_sets:\n  None: []\n  v4.11: [Console]\n";
static const char file_a[] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n"
                             "  annotations:\n    capability.openshift.io/name: Console\n"
                             "    include.release.openshift.io/self-managed-high-availability: \"true\"\n"
                             "data:\n  k: v\n";
static const char file_b[] = "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: b0\n"
                             "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: b1\n";

void tu_store_release(const char *version, struct release_info *info, struct manifest_list *ms) {
        char y[1024], err[256] = "";
        snprintf(y, sizeof y, release_yaml, version);
        release_info_init(info);
        cr_assert_eq(release_info_parse_yaml(y, strlen(y), info, err, sizeof err), 0, "%s", err);
        *ms = (struct manifest_list) { 0 };
        cr_assert_eq(manifest_parse_file("a.yaml", file_a, strlen(file_a), ms, err, sizeof err), 0, "%s", err);
        cr_assert_eq(manifest_parse_file("b.yaml", file_b, strlen(file_b), ms, err, sizeof err), 0, "%s", err);
        cr_assert_eq(ms->n, 3);
}

void tu_store_token(struct store *st, const char *id, const char *role, const char *owner) {
        struct token_record t = { .id = (char *) id, .role = (char *) role, .owner = (char *) owner,
                                 .created_at = "2026-01-01T00:00:00Z", .expires_at = "2027-01-01T00:00:00Z" };
        cr_assert_eq(store_token_add(st, &t), 0, "%s", id);
}

char *tu_store_catalog(struct store *st, const char *name, int64_t priority, const char *files) {
        struct catalog_record c;
        catalog_record_init(&c);
        c.name = strdup(name);
        c.owner = strdup("admin");
        c.priority = priority;
        c.files = strdup(files ? files : "[{\"content\":\"schema: olm.package\",\"path\":\"a.yaml\"}]");
        c.files_len = strlen(c.files);
        c.digest = strdup("sha256:0000");
        c.n_files = 1;
        c.n_packages = 2;
        c.n_channels = 3;
        c.n_bundles = 4;
        c.n_manifests = 5;
        c.n_ignored = 6;
        cr_assert_eq(store_catalog_create(st, &c), 0, "%s", name);
        char *id = strdup(c.id);
        catalog_record_free(&c);
        return id;
}

/* The host's status and status_info again, with p or applied_revision
 * (< 0: kept), only while the status is still the one read. */
static int install_state_as_is(struct store *st, const char *infra_env_id, const char *host_id,
                               const struct host_progress *p, int64_t applied_revision) {
        struct host h;
        host_init(&h);
        int r = store_host_get_brief(st, infra_env_id, host_id, &h);
        if (r >= 0)
                r = store_host_set_install_state(st, infra_env_id, host_id, h.status, h.status_info, p,
                                                 applied_revision, STORE_STATUS(h.status));
        host_free(&h);
        return r;
}

int tu_store_host_set_progress(struct store *st, const char *infra_env_id, const char *host_id,
                               const struct host_progress *p) {
        return install_state_as_is(st, infra_env_id, host_id, p, -1);
}

int tu_store_host_set_applied_revision(struct store *st, const char *infra_env_id, const char *host_id,
                                       int64_t applied_revision) {
        return install_state_as_is(st, infra_env_id, host_id, NULL, applied_revision);
}

void tu_svc_open(struct svc *sv, struct store **st, struct crypto_key **key, struct muster_config *cfg, char **dir) {
        char path[4200];
        *dir = tu_mkdtemp();
        cr_assert_not_null(*dir);
        snprintf(path, sizeof path, "%s/muster.db", *dir);
        cr_assert_eq(store_open(path, st), 0);
        cr_assert_eq(crypto_key_generate(key), 0);
        snprintf(cfg->state_dir, sizeof cfg->state_dir, "%s", *dir);
        cr_assert_eq(svc_init(sv, *st, *key, cfg), 0);
}

void tu_svc_close(struct svc *sv, struct store *st, struct crypto_key *key, char *dir) {
        svc_fini(sv);
        store_close(st);
        crypto_key_free(key);
        tu_rm_rf(dir);
        free(dir);
}

void tu_svc_add_fixture_catalog(struct svc *sv, const char *name, int priority) {
        char path[4096], err[1024];
        struct catalog_file *files = NULL;
        size_t n = 0;
        struct catalog_record rec;
        snprintf(path, sizeof path, "%s/catalogs/%s", MUSTER_FIXTURES_DIR, name);
        cr_assert_eq(catalog_read_dir(path, &files, &n, err, sizeof err), 0, "%s", err);
        cr_assert_eq(svc_catalog_add(sv, name, priority, files, n, "admin", &rec, err, sizeof err), 0, "%s", err);
        svc_catalog_record_free(&rec);
        catalog_files_free(files, n);
}
