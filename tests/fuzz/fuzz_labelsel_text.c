/* libFuzzer target for label selectors in kubectl's text form
 * (labelsel_parse_text, common/labelsel.c): a selector parses or is
 * refused with a message; a parsed one's canonical JSON parses back to an
 * equal selector that matches a fixed label set the same. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "labelsel.h"

static const char *const keys[] = {"env", "tier", "example.com/zone", "a", "empty"};
static const char *const values[] = {"prod", "web", "eu-1", "x", ""};
#define NLABELS (sizeof keys / sizeof *keys)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > LABELSEL_MAX_TEXT + 16)
                return 0;
        char *text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        struct labelsel *s = NULL;
        char err[512] = "";
        int r = labelsel_parse_text(text, &s, err, sizeof err);
        if (r == 0) {
                if (!s || s->nothing)
                        abort();
                json_object *j = labelsel_to_json(s);
                struct labelsel *s2 = NULL;
                if (j && labelsel_parse(j, &s2, NULL, 0) == 0) {
                        if (!labelsel_equal(s, s2) ||
                            labelsel_matches(s, keys, values, NLABELS) != labelsel_matches(s2, keys, values, NLABELS))
                                abort();
                        labelsel_free(s2);
                }
                json_object_put(j);
                labelsel_free(s);
        } else if (s || (r != -ENOMEM && !err[0]))
                abort();
        free(text);
        return 0;
}
