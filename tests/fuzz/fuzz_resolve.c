/* libFuzzer target for common/resolve.c over hostile catalogs: the input is
 * a catalog (JSON or YAML stream); when it parses and checks, its first
 * packages are subscribed to (the first with skip_dependencies, the second
 * pinned to its package's first channel) and resolved, with its first
 * bundle taken as installed and an upgrade of everything asked. Invariants:
 * the call never fails but for ENOENT/EINVAL/E2BIG/ENOMEM; a plan that is
 * ok lists each package once and never a problem; one that is not has
 * problems with text; the JSON form is built; the same request twice gives
 * the same JSON. */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "resolve.h"

#define MAX_SUBS 3

static char *plan_json(const struct resolve_plan *p) {
        struct json_object *j = NULL;
        if (resolve_plan_to_json(p, &j) < 0)
                return NULL;
        char *s = strdup(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
        json_object_put(j);
        return s;
}

static void check_plan(const struct resolve_plan *p) {
        if (p->ok && p->n_problems)
                abort();
        if (!p->ok && !p->n_problems)
                abort();
        for (size_t i = 0; i < p->n_problems; i++)
                if (!p->problems[i].text)
                        abort();
        for (size_t i = 0; i < p->n_steps; i++)
                for (size_t j = i + 1; j < p->n_steps; j++)
                        if (strcmp(p->steps[i].package, p->steps[j].package) == 0)
                                abort();
}

static void run(const struct resolve_request *q) {
        struct resolve_plan a, b;
        char err[256];
        int r = resolve(q, &a, err, sizeof err);
        if (r < 0) {
                if (r != -ENOENT && r != -EINVAL && r != -E2BIG && r != -ENOMEM)
                        abort();
                return;
        }
        check_plan(&a);
        if (resolve(q, &b, err, sizeof err) < 0)
                abort();
        char *x = plan_json(&a), *y = plan_json(&b);
        if (x && y && strcmp(x, y) != 0)
                abort();
        free(x);
        free(y);
        resolve_plan_free(&a);
        resolve_plan_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct catalog c = { 0 };
        char err[256];
        if (size > (1u << 20) || catalog_parse((const char *) data, size, "fuzz.json", &c, err, sizeof err) < 0 ||
            catalog_check(&c, err, sizeof err) < 0) {
                catalog_free(&c);
                return 0;
        }
        struct resolve_catalog cats[] = { { "fuzz", 0, &c } };
        struct resolve_subscription subs[MAX_SUBS] = { 0 };
        size_t n = 0;
        for (size_t i = 0; i < c.n_packages && n < MAX_SUBS; i++, n++) {
                subs[n].package = c.packages[i].name;
                subs[n].skip_dependencies = n == 0;
                if (n == 1 && c.packages[i].n_channels)
                        subs[n].channel = c.channels[c.packages[i].channels[0]].name;
        }
        struct resolve_installed inst[1];
        struct resolve_request q = { .catalogs = cats, .n_catalogs = 1, .subscriptions = subs, .n_subscriptions = n };
        run(&q);
        if (c.n_bundles) {
                inst[0] = (struct resolve_installed) { "fuzz", c.bundles[0].package, c.bundles[0].name, false };
                q.installed = inst;
                q.n_installed = 1;
                q.upgrade_all = true;
                run(&q);
                q.prune = true;
                q.n_subscriptions = 0;
                run(&q);
        }
        catalog_free(&c);
        return 0;
}
