/* libFuzzer target for catalog_parse, catalog_check,
 * catalog_parse_dependencies and catalog_load_files: any input gives 0 or a
 * clean -EINVAL/-E2BIG, a refused file leaves the catalog as it was, and
 * everything is freed. The text goes through catalog_parse twice into one
 * catalog (the second time as another file), so duplicates reach
 * catalog_check too. Then the input is read as a catalog directory: "== PATH"
 * lines start a file, the bytes up to the next such line are its content;
 * loading it in the given order and in reverse must give the same result and
 * the same error, and its canonical form must read back. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"

#define MAX_FUZZ_FILES 64

static void expect_clean(int r) {
        if (r != 0 && r != -EINVAL && r != -E2BIG)
                abort();
}

static void parse_twice(const char *text, size_t size) {
        struct catalog c = { 0 };
        char err[512];
        int r = catalog_parse(text, size, "fuzz.json", &c, err, sizeof err);
        expect_clean(r);
        if (r < 0 && (c.n_packages || c.n_channels || c.n_bundles || c.n_files || c.n_ignored))
                abort();
        size_t nb = c.n_bundles;
        r = catalog_parse(text, size, "again.yaml", &c, err, sizeof err);
        expect_clean(r);
        if (r < 0 && c.n_bundles != nb)
                abort();
        expect_clean(catalog_check(&c, err, sizeof err));
        struct catalog_bundle b = { 0 };
        r = catalog_parse_dependencies(text, size, "dependencies.yaml", &b, err, sizeof err);
        expect_clean(r);
        if (r < 0 && (b.requires_packages || b.requires_gvks))
                abort();
        if (b.requires_packages || b.requires_gvks) {
                c.bundles = realloc(c.bundles, (c.n_bundles + 1) * sizeof *c.bundles);
                if (!c.bundles)
                        abort();
                c.bundles[c.n_bundles++] = b; /* so catalog_free frees it */
        }
        catalog_free(&c);
}

/* The "== PATH" files of the input (paths copied, contents borrowed). */
static size_t split_files(const char *text, size_t size, struct catalog_file *v) {
        size_t n = 0, i = 0;
        while (i + 3 <= size && n < MAX_FUZZ_FILES) {
                const char *at = i == 0 && !memcmp(text, "== ", 3) ? text : memmem(text + i, size - i, "\n== ", 4);
                if (!at)
                        break;
                const char *p = at + (at == text ? 3 : 4);
                const char *nl = memchr(p, '\n', (size_t) (text + size - p));
                const char *end = nl ? nl : text + size;
                v[n].path = strndup(p, (size_t) (end - p));
                v[n].content = nl ? nl + 1 : end;
                const char *next = memmem(v[n].content, (size_t) (text + size - v[n].content), "\n== ", 4);
                v[n].len = (size_t) ((next ? next : text + size) - v[n].content);
                if (!v[n].path)
                        abort();
                i = (size_t) ((next ? next : text + size) - text);
                n++;
        }
        return n;
}

static void load_both_ways(const char *text, size_t size) {
        struct catalog_file v[MAX_FUZZ_FILES], w[MAX_FUZZ_FILES];
        size_t n = split_files(text, size, v);
        for (size_t i = 0; i < n; i++)
                w[i] = v[n - 1 - i];
        struct catalog a, b;
        char ea[512], eb[512];
        int ra = catalog_load_files(v, n, &a, ea, sizeof ea);
        int rb = catalog_load_files(w, n, &b, eb, sizeof eb);
        expect_clean(ra);
        if (ra != rb || (ra < 0 && strcmp(ea, eb) != 0) || a.n_bundles != b.n_bundles || a.n_ignored != b.n_ignored)
                abort();
        if (ra < 0 && (a.bundles || a.packages || a.n_files))
                abort();
        for (size_t i = 0; i < a.n_bundles; i++)
                if (a.bundles[i].n_manifests != b.bundles[i].n_manifests)
                        abort();
        catalog_free(&a);
        catalog_free(&b);
        char *canon;
        size_t len;
        if (ra == 0 && catalog_files_to_canonical(v, n, &canon, &len) == 0) {
                struct catalog_file *back;
                size_t nb;
                if (catalog_files_from_canonical(canon, len, &back, &nb) != 0 || nb != n)
                        abort();
                catalog_files_free(back, nb);
                free(canon);
        }
        for (size_t i = 0; i < n; i++)
                free((char *) v[i].path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        parse_twice((const char *) data, size);
        load_both_ways((const char *) data, size);
        return 0;
}
