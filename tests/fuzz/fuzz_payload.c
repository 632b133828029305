/* libFuzzer target for the signed payload envelope the agent fetches
 * (common/payload.c payload_verify): any envelope is refused with a
 * documented code (the fuzzer cannot forge a fresh key's signature), and a
 * refusal hands out nothing. The same bytes as a payload object go through
 * the readers of a verified payload (payload_host_settings for host "h",
 * payload_deletions): what they accept is safe to write into a host's
 * files (a role of master or worker, no line break in any one-line value). */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "payload.h"

static struct crypto_key *key;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (!key && crypto_key_generate(&key) < 0)
                abort();
        char *env = malloc(size ? size : 1);
        if (!env)
                return 0;
        memcpy(env, data, size);
        json_object *payload = NULL;
        char err[256] = "";
        int r = payload_verify(env, size, key, NULL, 0, &payload, err, sizeof err);
        if (r == 0 || payload)
                abort();
        if (r != -EBADMSG && r != -EINVAL && r != -E2BIG && r != -ENOMEM)
                abort();
        free(env);

        json_tokener *tok = json_tokener_new_ex(32);
        json_object *p = tok ? json_tokener_parse_ex(tok, (const char *) data, (int) (size < 65536 ? size : 65536)) : NULL;
        json_tokener_free(tok);
        struct payload_host_view v;
        r = payload_host_settings(p, "h", &v, err, sizeof err);
        if (r != 0 && r != -ENODATA && r != -ENOENT && r != -EINVAL)
                abort();
        if (r == 0) {
                const char *one_line[] = { v.role, v.hostname, v.cluster_name, v.base_dns_domain, v.api_vip,
                                           v.ingress_vip };
                if (strcmp(v.role, "master") != 0 && strcmp(v.role, "worker") != 0)
                        abort();
                for (size_t i = 0; i < sizeof one_line / sizeof *one_line; i++)
                        if (one_line[i] && strpbrk(one_line[i], "\n\r= \"'"))
                                abort();
                for (size_t i = 0; i < v.n_ntp_sources; i++)
                        if (strpbrk(v.ntp_sources[i], "\n\r \"'"))
                                abort();
                if (v.n_ntp_sources > PAYLOAD_MAX_NTP_SOURCES)
                        abort();
        }
        struct payload_deletion *del = NULL;
        size_t n_del = 0;
        r = payload_deletions(p, &del, &n_del, err, sizeof err);
        if ((r != 0 && ((r != -EINVAL && r != -ENOMEM) || del || n_del)) || n_del > PAYLOAD_MAX_DELETIONS)
                abort();
        free(del);
        json_object_put(p);
        return 0;
}
