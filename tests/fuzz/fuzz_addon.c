/* libFuzzer target for add-on proxy specs (coordinator/domain/addon.c, as
 * POST and PATCH /addon-proxies read them): the input is parsed as JSON,
 * then as a spec; a parsed spec is patched with itself (no change of
 * output), rendered for a fixed cluster through the memo (twice: the second
 * is remembered and equal), and a rendered release's HelmChart must read
 * back as one manifest of its name and namespace. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/addon.h"
#include "manifest.h"

static struct model_label labels[] = { { "env", "prod" }, { "example.com/tier", "gold" } };

static void check_chart(const struct addon_spec *s, const char *content) {
        json_object *o = json_tokener_parse(content);
        struct addon_content c;
        if (addon_content_from_json(o, &c) < 0)
                abort();
        json_object_put(o);
        char *y = addon_helmchart_yaml(&c, s->name, 3), file[300], err[256];
        if (!y) {
                addon_content_free(&c);
                return; /* out of memory */
        }
        if (addon_helmchart_file(s->name, file, sizeof file) < 0)
                abort();
        struct manifest_list l = { 0 };
        int r = manifest_parse_file(file, y, strlen(y), &l, err, sizeof err);
        if (r == 0 && (l.n != 1 || strcmp(l.v[0].name, c.release_name) != 0 ||
                       !l.v[0].namespace || strcmp(l.v[0].namespace, c.namespace) != 0))
                abort();
        if (r < 0 && r != -ENOMEM && r != -E2BIG) {
                fprintf(stderr, "%s\n---\n%s\n", err, y);
                abort(); /* what we write must read back */
        }
        manifest_list_free(&l);
        free(y);
        addon_content_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        json_tokener *tok = json_tokener_new_ex(64);
        if (!tok)
                return 0;
        json_object *o = json_tokener_parse_ex(tok, (const char *) data, (int) (size > 1 << 20 ? 1 << 20 : size));
        bool ok = json_tokener_get_error(tok) == json_tokener_success;
        json_tokener_free(tok);
        if (!ok) {
                json_object_put(o);
                return 0;
        }
        struct addon_spec s, p;
        char err[512];
        if (addon_spec_parse(o, &s, err, sizeof err) < 0) {
                if (!err[0])
                        abort(); /* a refusal says why */
                json_object_put(o);
                return 0;
        }
        json_object_put(o);
        json_object *back = addon_spec_to_json(&s);
        if (back && addon_spec_patch(&s, back, &p, err, sizeof err) == 0) {
                if (!addon_spec_same_output(&s, &p))
                        abort();
                addon_spec_free(&p);
        }
        json_object_put(back);
        struct addon_cluster c = { .id = "11111111-1111-4111-8111-111111111111", .name = "east",
                                   .base_domain = "example.test", .api_vip = "192.0.2.100", .labels = labels,
                                   .n_labels = 2, .host_count = 3 };
        if (addon_selects(&s, &c)) {
                struct addon_memo *m = addon_memo_new();
                json_object *ctx = NULL;
                const char *t1 = NULL, *t2 = NULL;
                if (m && addon_want(m, "p", 1, &s, &c, &ctx, &t1, err, sizeof err) == 0) {
                        char *keep = strdup(t1);
                        if (keep && addon_want(m, "p", 1, &s, &c, &ctx, &t2, err, sizeof err) == 0 &&
                            strcmp(keep, t2) != 0)
                                abort();
                        if (keep)
                                check_chart(&s, keep);
                        free(keep);
                }
                json_object_put(ctx);
                addon_memo_free(m);
        }
        addon_spec_free(&s);
        return 0;
}
