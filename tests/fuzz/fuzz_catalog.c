/* libFuzzer target for catalog_parse, catalog_check and
 * catalog_parse_dependencies: any input gives 0 or a clean -EINVAL/-E2BIG,
 * a refused file leaves the catalog as it was, and everything is freed. The
 * text goes through catalog_parse twice into one catalog (the second time
 * as another file), so duplicates reach catalog_check too. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"

static void expect_clean(int r) {
        if (r != 0 && r != -EINVAL && r != -E2BIG)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *text = (const char *) data;
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
        return 0;
}
