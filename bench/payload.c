/* Payload benchmark: what a release import and an install cost musterd and
 * the agent, on an OpenShift-sized synthetic release (by default 900
 * manifests, 1 in 3 a CRD with a long description), each step next to the
 * floor it cannot beat, measured in the same run on the same bytes:
 *   parse   manifest_parse_file on every file  vs  a bare libyaml event scan
 *   filter  filter_release (capabilities)      vs  -
 *   sign    payload_build + payload_sign       vs  canonjson alone + SHA-256
 *   verify  payload_verify (agent)             vs  json-c parse + SHA-256 + one ECDSA verify
 * Usage: bench-payload [MANIFESTS] [ROUNDS]. Prints medians of ROUNDS. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yaml.h>

#include "canonjson.h"
#include "capability.h"
#include "crypto.h"
#include "manifest.h"
#include "payload.h"
#include "benchstat.h"

struct file {
        char name[64];
        char *text;
        size_t len;
};

static const char *const caps[] = { "baremetal", "Console", "Insights", "marketplace", "openshift-samples", "Storage" };

/* File i of the synthetic release. */
static void make_file(struct file *f, int i) {
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        if (i % 3 == 0) {
                snprintf(f->name, sizeof f->name, "0000_%02d_crd-%04d.crd.yaml", i % 90, i);
                fprintf(m, "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"
                           "  name: things%04d.example.openshift.io\n  annotations:\n"
                           "    include.release.openshift.io/self-managed-high-availability: \"true\"\n"
                           "spec:\n  group: example.openshift.io\n  versions:\n    - name: v1\n      schema:\n"
                           "        openAPIV3Schema:\n          description: |\n", i);
                for (int l = 0; l < 400; l++)
                        fprintf(m, "            Line %d of a long field description, as real CRDs carry them.\n", l);
        } else {
                snprintf(f->name, sizeof f->name, "0000_%02d_operator-%04d.yaml", i % 90, i);
                for (int d = 0; d < 2; d++)
                        fprintf(m, "%sapiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: operator-%04d-%d\n"
                                   "  namespace: openshift-op-%04d\n  annotations:\n"
                                   "    capability.openshift.io/name: %s\n"
                                   "    include.release.openshift.io/self-managed-high-availability: \"true\"\n"
                                   "spec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n"
                                   "        - name: operator\n          image: quay.io/openshift/op:%d\n",
                                d ? "---\n" : "", i, d, i, caps[i % 6], i);
        }
        fclose(m);
        f->text = buf;
        f->len = len;
}

static int yaml_scan(const char *text, size_t len) {
        yaml_parser_t p;
        yaml_event_t ev;
        int events = 0;
        yaml_parser_initialize(&p);
        yaml_parser_set_input_string(&p, (const unsigned char *) text, len);
        for (;;) {
                if (!yaml_parser_parse(&p, &ev)) {
                        events = -1;
                        break;
                }
                int done = ev.type == YAML_STREAM_END_EVENT;
                yaml_event_delete(&ev);
                events++;
                if (done)
                        break;
        }
        yaml_parser_delete(&p);
        return events;
}

int main(int argc, char **argv) {
        int n = argc > 1 ? atoi(argv[1]) : 900, rounds = argc > 2 ? atoi(argv[2]) : 7;
        if (n < 1 || rounds < 1 || rounds > 101) {
                fprintf(stderr, "usage: bench-payload [MANIFESTS] [ROUNDS<=101]\n");
                return 2;
        }
        struct file *files = calloc(n, sizeof *files);
        size_t total = 0;
        for (int i = 0; i < n; i++) {
                make_file(&files[i], i);
                total += files[i].len;
        }
        struct crypto_key *key;
        if (crypto_key_generate(&key) < 0)
                return 1;
        struct strv known = { 0 }, enabled = { 0 };
        for (size_t i = 0; i < sizeof caps / sizeof *caps; i++) {
                strv_push(&known, caps[i]);
                if (i % 2 == 0)
                        strv_push(&enabled, caps[i]);
        }
        strv_sort(&known);
        strv_sort(&enabled);
        struct release_os_image img = { .url = "https://example.invalid/os.img",
                                        .sha256 = "0000000000000000000000000000000000000000000000000000000000000000",
                                        .size = 1 << 30, .root_label = "root" };
        double t_parse[101], t_scan[101], t_filter[101], t_sign[101], t_canon[101], t_verify[101], t_floor[101];
        size_t docs = 0, included = 0, payload_bytes = 0;
        char err[512];

        for (int r = 0; r < rounds; r++) {
                double t0 = bench_now_ms();
                for (int i = 0; i < n; i++)
                        if (yaml_scan(files[i].text, files[i].len) < 0)
                                return fprintf(stderr, "libyaml refused %s\n", files[i].name), 1;
                t_scan[r] = bench_now_ms() - t0;

                struct manifest_list ml = { 0 };
                t0 = bench_now_ms();
                for (int i = 0; i < n; i++)
                        if (manifest_parse_file(files[i].name, files[i].text, files[i].len, &ml, err, sizeof err) < 0)
                                return fprintf(stderr, "%s\n", err), 1;
                t_parse[r] = bench_now_ms() - t0;
                docs = ml.n;

                struct filter_context ctx = { .enabled = &enabled, .known = &known };
                struct filter_result *fr;
                t0 = bench_now_ms();
                if (filter_release(&ml, &ctx, &fr) < 0)
                        return 1;
                t_filter[r] = bench_now_ms() - t0;
                const struct manifest **inc = calloc(ml.n, sizeof *inc);
                included = 0;
                for (size_t i = 0; i < ml.n; i++) {
                        if (fr[i].reason == FILTER_INCLUDED)
                                inc[included++] = &ml.v[i];
                        filter_result_free(&fr[i]);
                }
                free(fr);

                struct payload_signed ps;
                t0 = bench_now_ms();
                json_object *p = payload_build("7c0ffee0-0000-4000-8000-000000000001", 1, "4.16.0", img.url, &img,
                                               &enabled, inc, included, NULL);
                if (!p || payload_sign(p, key, &ps) < 0)
                        return 1;
                t_sign[r] = bench_now_ms() - t0;
                payload_bytes = ps.len;

                /* floor of signing: canonical bytes and their digest alone */
                char *canon;
                size_t clen;
                uint8_t dg[CRYPTO_SHA256_LEN], sig[CRYPTO_SIG_LEN];
                t0 = bench_now_ms();
                if (canonjson_serialize(p, &canon, &clen) < 0 || crypto_sha256(canon, clen, dg) < 0)
                        return 1;
                t_canon[r] = bench_now_ms() - t0;
                free(canon);
                json_object_put(p);

                char *env = payload_envelope("7c0ffee0-0000-4000-8000-000000000001", 1, ps.digest, ps.signature,
                                             ps.canonical, ps.len);
                size_t elen = strlen(env);
                json_object *out = NULL;
                t0 = bench_now_ms();
                if (payload_verify(env, elen, key, "7c0ffee0-0000-4000-8000-000000000001", 1, &out, err, sizeof err) < 0)
                        return fprintf(stderr, "%s\n", err), 1;
                t_verify[r] = bench_now_ms() - t0;
                json_object_put(out);

                /* floor of verifying: parse the envelope, hash the payload bytes, one ECDSA verify */
                crypto_sign_digest(key, dg, sig);
                t0 = bench_now_ms();
                json_object *o = json_tokener_parse(env);
                crypto_sha256(ps.canonical, ps.len, dg);
                crypto_verify_digest(key, dg, sig);
                t_floor[r] = bench_now_ms() - t0;
                json_object_put(o);

                free(env);
                payload_signed_free(&ps);
                free(inc);
                manifest_list_free(&ml);
        }
        double scan = bench_median(t_scan, rounds), parse = bench_median(t_parse, rounds), filt = bench_median(t_filter, rounds),
               sign = bench_median(t_sign, rounds), canon = bench_median(t_canon, rounds), ver = bench_median(t_verify, rounds),
               floor_v = bench_median(t_floor, rounds);
        printf("release: %d files, %zu documents, %.1f MiB; payload: %zu manifests, %.1f MiB; median of %d rounds\n", n,
               docs, total / 1048576.0, included, payload_bytes / 1048576.0, rounds);
        printf("%-8s %10s %10s %8s  %s\n", "step", "muster ms", "floor ms", "ratio", "floor");
        printf("%-8s %10.1f %10.1f %8.2f  %s\n", "parse", parse, scan, parse / scan, "bare libyaml event scan");
        printf("%-8s %10.1f %10s %8s  %s\n", "filter", filt, "-", "-", "");
        printf("%-8s %10.1f %10.1f %8.2f  %s\n", "sign", sign, canon, sign / canon, "canonical JSON + SHA-256 only");
        printf("%-8s %10.1f %10.1f %8.2f  %s\n", "verify", ver, floor_v, ver / floor_v,
               "json-c parse + SHA-256 + 1 ECDSA verify");
        printf("verify throughput: %.0f MiB/s of payload\n", payload_bytes / 1048576.0 / (ver / 1e3));
        for (int i = 0; i < n; i++)
                free(files[i].text);
        free(files);
        strv_free(&known);
        strv_free(&enabled);
        crypto_key_free(key);
        return 0;
}
