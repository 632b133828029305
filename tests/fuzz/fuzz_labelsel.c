/* libFuzzer target for Kubernetes label selectors (common/labelsel.c): the
 * input is parsed as JSON, then as a selector, and matched against a fixed
 * label set. A selector parses or is refused with a message; a parsed one's
 * canonical JSON parses back to an equal selector that matches the same. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "labelsel.h"

static const char *const keys[] = {"env", "tier", "example.com/zone", "a", "empty"};
static const char *const values[] = {"prod", "web", "eu-1", "x", ""};
#define NLABELS (sizeof keys / sizeof *keys)

static void check_round_trip(const struct labelsel *s) {
        json_object *j = labelsel_to_json(s);
        if (!j && !s->nothing)
                return; /* out of memory */
        struct labelsel *s2 = NULL;
        char err[256] = "";
        int r = labelsel_parse(j, &s2, err, sizeof err);
        if (r == -ENOMEM) {
                json_object_put(j);
                return;
        }
        if (r != 0 || !labelsel_equal(s, s2))
                abort();
        if (labelsel_matches(s, keys, values, NLABELS) != labelsel_matches(s2, keys, values, NLABELS))
                abort();
        json_object_put(j);
        labelsel_free(s2);
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
        struct labelsel *s = NULL;
        char err[256] = "";
        int r = labelsel_parse(o, &s, err, sizeof err);
        if (r != 0 && r != -EINVAL && r != -E2BIG && r != -ENOMEM)
                abort();
        if ((r == -EINVAL || r == -E2BIG) && (!err[0] || s))
                abort();
        if (r == 0) {
                (void) labelsel_matches(s, keys, values, NLABELS);
                (void) labelsel_matches(s, NULL, NULL, 0);
                check_round_trip(s);
                labelsel_free(s);
        }
        json_object_put(o);
        return 0;
}
