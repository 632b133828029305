/* bench-addons (issue 16): what the add-on reconciler computes on a pass
 * over a fleet of 1,000 clusters and 50 proxies, after one label change and
 * after one template change: for every proxy and cluster, whether it
 * selects it, the values it renders (mustache, then the YAML check), and
 * whether they differ from the release kept for it. The peer, measured in
 * the same run: rendering the same templates for the same clusters alone
 * (mustache_render and nothing else). Prints the median of REPS passes of
 * each, the ratio, and the cost per cluster.
 *
 *   bench-addons [CLUSTERS [PROXIES [REPS]]]     (default 1000 50 7) */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/addon.h"
#include "benchstat.h"
#include "mustache.h"

#define MAX_LABELS 6

static const char *const envs[] = { "prod", "staging", "dev" };
static const char *const zones[] = { "eu-1", "eu-2", "us-1", "us-2", "ap-1" };

struct fleet {
        struct model_label (*labels)[MAX_LABELS];
        char (*text)[MAX_LABELS][2][48];
        struct addon_cluster *cl;
        char (*ids)[48], (*names)[32], (*vips)[32];
        size_t n;
        struct addon_spec *px;
        int64_t *gen;       /* each proxy's generation */
        size_t npx;
        struct addon_memo *memo;
        char **kept;        /* [proxy * n + cluster]: the content kept (JSON text), NULL: none */
};

static void set_label(struct fleet *f, size_t i, size_t k, const char *key, const char *value) {
        snprintf(f->text[i][k][0], sizeof f->text[i][k][0], "%s", key);
        snprintf(f->text[i][k][1], sizeof f->text[i][k][1], "%s", value);
        f->labels[i][k] = (struct model_label) { f->text[i][k][0], f->text[i][k][1] };
}

static void make_clusters(struct fleet *f, size_t n) {
        f->n = n;
        f->labels = calloc(n, sizeof *f->labels);
        f->text = calloc(n, sizeof *f->text);
        f->cl = calloc(n, sizeof *f->cl);
        f->ids = calloc(n, sizeof *f->ids);
        f->names = calloc(n, sizeof *f->names);
        f->vips = calloc(n, sizeof *f->vips);
        for (size_t i = 0; i < n; i++) {
                char v[16];
                snprintf(f->ids[i], sizeof f->ids[i], "00000000-0000-4000-8000-%012zx", i);
                snprintf(f->names[i], sizeof f->names[i], "cluster-%04zu", i);
                snprintf(f->vips[i], sizeof f->vips[i], "10.%zu.%zu.100", i / 256, i % 256);
                set_label(f, i, 0, "env", envs[i % 3]);
                set_label(f, i, 1, "topology.kubernetes.io/zone", zones[i % 5]);
                snprintf(v, sizeof v, "t%zu", i % 7);
                set_label(f, i, 2, "tenant", v);
                set_label(f, i, 3, "gpu", i % 4 == 0 ? "true" : "false");
                set_label(f, i, 4, "example.com/tier", i % 2 ? "gold" : "silver");
                f->cl[i] = (struct addon_cluster) {
                        .id = f->ids[i], .name = f->names[i], .base_domain = "example.test",
                        .machine_network_cidr = "10.0.0.0/16", .api_vip = f->vips[i], .ingress_vip = f->vips[i],
                        .release_version = "4.15.0", .labels = f->labels[i], .n_labels = 5, .host_count = 3 + (int64_t) (i % 5),
                };
        }
}

/* Proxy j: a selector of one of four shapes and a 25-line template using
 * every fact, a section and an inverted section. */
static void make_proxy(struct fleet *f, size_t j, const char *extra) {
        const char *v = j % 4 == 2 ? "true" : envs[j % 3];
        char sel[512], name[32], tmpl[4096], body[8192];
        switch (j % 4) {
        case 0:
                snprintf(sel, sizeof sel, "{\"match_labels\":{\"env\":\"%s\"}}", v);
                break;
        case 1:
                snprintf(sel, sizeof sel,
                         "{\"match_expressions\":[{\"key\":\"topology.kubernetes.io/zone\",\"operator\":\"In\","
                         "\"values\":[\"eu-1\",\"eu-2\",\"%s\"]}]}", v);
                break;
        case 2:
                snprintf(sel, sizeof sel,
                         "{\"match_labels\":{\"example.com/tier\":\"gold\"},\"match_expressions\":[{\"key\":\"gpu\","
                         "\"operator\":\"NotIn\",\"values\":[\"%s\"]}]}", v);
                break;
        default:
                snprintf(sel, sizeof sel,
                         "{\"match_expressions\":[{\"key\":\"tenant\",\"operator\":\"Exists\"},{\"key\":\"env\","
                         "\"operator\":\"NotIn\",\"values\":[\"%s\"]}]}", v);
                break;
        }
        snprintf(name, sizeof name, "addon-%02zu", j);
        snprintf(tmpl, sizeof tmpl,
                 "# %s for {{cluster.name}}\n"
                 "clusterName: {{cluster.name}}\nclusterID: {{cluster.id}}\n"
                 "domain: {{cluster.base_domain}}\nnetwork: {{cluster.machine_network_cidr}}\n"
                 "api:\n  vip: {{cluster.api_vip}}\n  port: 6443\n"
                 "ingress:\n  vip: {{cluster.ingress_vip}}\n  className: nginx\n"
                 "release: \"{{cluster.release_version}}\"\nreplicas: {{cluster.host_count}}\n"
                 "labels:\n  env: {{cluster.labels.env}}\n  tenant: {{cluster.labels.tenant}}\n"
                 "{{#cluster.labels.gpu}}gpu:\n  enabled: {{cluster.labels.gpu}}\n{{/cluster.labels.gpu}}"
                 "{{^cluster.labels.nothing}}defaults: true\n{{/cluster.labels.nothing}}"
                 "resources:\n  requests:\n    cpu: 100m\n    memory: 128Mi\n  limits:\n    memory: 512Mi\n"
                 "extra: \"%s\"\n",
                 name, extra);
        json_object *o = json_object_new_object();
        json_object_object_add(o, "name", json_object_new_string(name));
        json_object_object_add(o, "cluster_selector", json_tokener_parse(sel));
        json_object_object_add(o, "chart", json_tokener_parse("{\"repository\":\"https://charts.example.test\","
                                                              "\"name\":\"demo\",\"version\":\"1.0.0\"}"));
        json_object_object_add(o, "namespace", json_object_new_string(name));
        json_object_object_add(o, "values_template", json_object_new_string(tmpl));
        snprintf(body, sizeof body, "%s", json_object_to_json_string(o));
        json_object_put(o);
        char err[512];
        o = json_tokener_parse(body);
        addon_spec_free(&f->px[j]);
        f->gen[j]++;
        if (addon_spec_parse(o, &f->px[j], err, sizeof err) < 0) {
                fprintf(stderr, "bench-addons: proxy %zu: %s\n", j, err);
                exit(1);
        }
        json_object_put(o);
}

/* One reconciler pass's computation, as svc/addons.c does it: every
 * proxy's release for every cluster (addon_want: rendered again only where
 * the proxy's generation or the cluster's facts changed), compared with the
 * one kept (and kept from then on). How many releases changed. */
static size_t pass(struct fleet *f) {
        size_t changed = 0;
        json_object **ctx = calloc(f->n, sizeof *ctx);
        for (size_t j = 0; j < f->npx; j++)
                for (size_t i = 0; i < f->n; i++) {
                        char **kept = &f->kept[j * f->n + i];
                        if (!addon_selects(&f->px[j], &f->cl[i])) {
                                if (*kept) {
                                        free(*kept);
                                        *kept = NULL;
                                        changed++;
                                }
                                continue;
                        }
                        const char *t;
                        char id[32], err[512];
                        snprintf(id, sizeof id, "proxy-%zu", j);
                        if (addon_want(f->memo, id, f->gen[j], &f->px[j], &f->cl[i], &ctx[i], &t, err, sizeof err) < 0) {
                                fprintf(stderr, "bench-addons: %s\n", err);
                                exit(1);
                        }
                        if (!*kept || strcmp(*kept, t) != 0) {
                                free(*kept);
                                *kept = strdup(t);
                                changed++;
                        }
                }
        for (size_t i = 0; i < f->n; i++)
                json_object_put(ctx[i]);
        free(ctx);
        addon_memo_sweep(f->memo);
        return changed;
}

/* The peer: the same templates rendered for the same selected clusters. */
static size_t render_only(struct fleet *f) {
        size_t bytes = 0;
        json_object **ctx = calloc(f->n, sizeof *ctx);
        for (size_t j = 0; j < f->npx; j++)
                for (size_t i = 0; i < f->n; i++) {
                        if (!f->kept[j * f->n + i])
                                continue; /* the clusters the proxy selects */
                        if (!ctx[i])
                                ctx[i] = addon_cluster_context(&f->cl[i]);
                        char *out, err[256];
                        size_t len;
                        if (mustache_render(f->px[j].tmpl, ctx[i], &out, &len, err, sizeof err) < 0)
                                exit(1);
                        bytes += len;
                        free(out);
                }
        for (size_t i = 0; i < f->n; i++)
                json_object_put(ctx[i]);
        free(ctx);
        return bytes;
}

struct sample {
        double ms[64];
        size_t n;
};

static void add(struct sample *s, double ms) {
        if (s->n < 64)
                s->ms[s->n++] = ms;
}

int main(int argc, char **argv) {
        size_t nclusters = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
        size_t nproxies = argc > 2 ? strtoul(argv[2], NULL, 10) : 50;
        size_t reps = argc > 3 ? strtoul(argv[3], NULL, 10) : 7;
        struct fleet f = { 0 };
        struct sample label = { 0 }, tmpl = { 0 }, peer = { 0 }, cold = { 0 };
        size_t changed_label = 0, changed_tmpl = 0, selected = 0;

        if (nclusters == 0 || nproxies == 0 || reps == 0 || reps > 64) {
                fprintf(stderr, "usage: bench-addons [CLUSTERS [PROXIES [REPS<=64]]]\n");
                return 2;
        }
        make_clusters(&f, nclusters);
        f.npx = nproxies;
        f.px = calloc(nproxies, sizeof *f.px);
        f.kept = calloc(nproxies * nclusters, sizeof *f.kept);
        f.gen = calloc(nproxies, sizeof *f.gen);
        f.memo = addon_memo_new();
        for (size_t j = 0; j < nproxies; j++)
                make_proxy(&f, j, "v0");
        (void) pass(&f); /* the fleet as kept before the changes */
        for (size_t k = 0; k < nproxies * nclusters; k++)
                selected += f.kept[k] != NULL;

        for (size_t r = 0; r < reps; r++) {
                /* A pass with nothing remembered (musterd just started). */
                addon_memo_free(f.memo);
                f.memo = addon_memo_new();
                double t0 = bench_now_ms();
                (void) pass(&f);
                add(&cold, bench_now_ms() - t0);

                /* One label change: cluster r moves to another environment. */
                size_t c = (r * 37) % nclusters;
                set_label(&f, c, 0, "env", envs[(r + c + 1) % 3]);
                t0 = bench_now_ms();
                changed_label = pass(&f);
                add(&label, bench_now_ms() - t0);

                /* One template change: proxy r gets a new line. */
                char extra[16];
                snprintf(extra, sizeof extra, "v%zu", r + 1);
                make_proxy(&f, r % nproxies, extra);
                t0 = bench_now_ms();
                changed_tmpl = pass(&f);
                add(&tmpl, bench_now_ms() - t0);

                t0 = bench_now_ms();
                (void) render_only(&f);
                add(&peer, bench_now_ms() - t0);
        }
        double ml = bench_median(label.ms, label.n), mt = bench_median(tmpl.ms, tmpl.n),
               mp = bench_median(peer.ms, peer.n), mc = bench_median(cold.ms, cold.n);
        printf("bench-addons: %zu clusters, %zu proxies, %zu releases selected, median of %zu passes\n", nclusters,
               nproxies, selected, reps);
        printf("  render alone (peer)        %8.1f ms  %6.1f us/cluster\n", mp, mp * 1000 / (double) nclusters);
        printf("  a pass from nothing        %8.1f ms  %6.1f us/cluster  ratio %.2f\n", mc,
               mc * 1000 / (double) nclusters, mc / mp);
        printf("  after one label change     %8.1f ms  %6.1f us/cluster  ratio %.2f  (%zu release(s) changed)\n", ml,
               ml * 1000 / (double) nclusters, ml / mp, changed_label);
        printf("  after one template change  %8.1f ms  %6.1f us/cluster  ratio %.2f  (%zu release(s) changed)\n", mt,
               mt * 1000 / (double) nclusters, mt / mp, changed_tmpl);
        for (size_t k = 0; k < nproxies * nclusters; k++)
                free(f.kept[k]);
        for (size_t j = 0; j < nproxies; j++)
                addon_spec_free(&f.px[j]);
        free(f.kept);
        free(f.px);
        free(f.gen);
        addon_memo_free(f.memo);
        free(f.labels);
        free(f.text);
        free(f.cl);
        free(f.ids);
        free(f.names);
        free(f.vips);
        return 0;
}
