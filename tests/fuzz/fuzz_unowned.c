/* libFuzzer target for unowned_helm_release_namespace (agent/unowned.c), the
 * libyaml walk to a HelmChart's spec.targetNamespace: any input gives 0 and
 * a non-empty name of at most MANIFEST_MAX_NAME printable bytes, or a clean
 * -EINVAL with nothing handed out. The first byte picks metadata.namespace
 * (none, "", or one); the rest is the content, in a buffer of exactly its
 * length so that a read past it is caught. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unowned.h"
#include "manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char *const namespaces[] = { NULL, "", "kube-system" };
        if (size == 0)
                return 0;
        const char *ns = namespaces[data[0] % 3];
        size_t len = size - 1;
        char *text = malloc(len ? len : 1);
        if (!text)
                return 0;
        memcpy(text, data + 1, len);
        char *out = (char *) text; /* must be overwritten */
        int r = unowned_helm_release_namespace(text, len, ns, &out);
        if (r == 0) {
                size_t n = out ? strlen(out) : 0;
                if (n == 0 || n > MANIFEST_MAX_NAME)
                        abort();
                for (size_t i = 0; i < n; i++)
                        if ((unsigned char) out[i] < 0x20 || out[i] == 0x7f)
                                abort();
                free(out);
        } else if (r != -EINVAL || out)
                abort();
        free(text);
        return 0;
}
