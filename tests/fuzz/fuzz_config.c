/* libFuzzer target for musterd.conf (coordinator/domain/config.c) and the size and
 * duration values it shares with the command line: any text parses to 0 or
 * -EINVAL with "name:line: reason", and a parsed configuration diffs against
 * itself as equal. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "domain/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        struct muster_config cfg;
        config_defaults(&cfg);
        char err[512] = "";
        int r = config_parse(text, "fuzz.conf", &cfg, err, sizeof err);
        if (r != 0 && r != -EINVAL)
                abort();
        if (r == -EINVAL && strncmp(err, "fuzz.conf", 9) != 0)
                abort();
        if (r == 0 && config_diff(&cfg, &cfg, NULL, NULL) != 0)
                abort();
        int64_t v;
        r = config_parse_size(text, &v);
        if (r == 0 && v < 0)
                abort();
        r = config_parse_duration_ms(text, 1000, &v);
        if (r == 0 && v < 0)
                abort();
        free(text);
        return 0;
}
