/* The discovery ISO's config area (DESIGN §11): a fixed-size region of the
 * ISO template, zero-filled in the template, into which musterd writes one
 * infra-env's config as it streams the ISO. The agent reads it back from its
 * boot medium.
 *
 * Layout of the area (BOOTCFG_AREA_SIZE bytes):
 *   "MUSTERCFG1\n"  (BOOTCFG_MAGIC, 11 bytes)
 *   one JSON object {"coordinator_url", "infra_env_id", "token",
 *                    "coordinator_key_pem"?, "ca_pem"?, "http_proxy"?,
 *                    "https_proxy"?, "no_proxy"?, "ssh_authorized_key"?,
 *                    "static_network"? (an array)}
 *   zero bytes up to the end of the area.
 * An area of all zero bytes is an unconfigured template (-ENODATA). */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define BOOTCFG_AREA_SIZE (256 * 1024)
#define BOOTCFG_MAGIC "MUSTERCFG1\n"
#define BOOTCFG_MAGIC_LEN 11
/* Field limits (bytes). */
#define BOOTCFG_URL_MAX 2048
#define BOOTCFG_TOKEN_MAX 4096
#define BOOTCFG_PEM_MAX (200 * 1024)
#define BOOTCFG_SSH_KEY_MAX (16 * 1024)

struct bootcfg {
        char *coordinator_url;     /* required: http(s)://HOST[:PORT] */
        char *infra_env_id;        /* required: a UUID */
        char *token;               /* required: the infra-env's agent token */
        char *coordinator_key_pem; /* optional: musterd's public key (payload signatures) */
        char *ca_pem;              /* optional: CA certificates to verify the coordinator with */
        /* optional, the infra-env's: the proxies the agent fetches through
         * (protocol.h: proxy_url_is_valid, no_proxy_is_valid) */
        char *http_proxy;
        char *https_proxy;
        char *no_proxy;
        char *ssh_authorized_key;  /* optional: root's key(s) for the live system's SSH server, a line each */
        char *static_network;      /* optional: the per-host network configs, JSON text (staticnet.h),
                                    * carried as a JSON array */
};

/* Write c into area[0..size): magic, JSON, then zeros to the end.
 * 0; -EINVAL (a required field missing or a field over its limit, not
 * valid UTF-8 free of NUL is not checked: json-c escapes), -E2BIG (does
 * not fit in size), -ENOMEM. */
int bootcfg_encode(const struct bootcfg *c, uint8_t *area, size_t size);

/* Read an area back. 0 and *out filled (free with bootcfg_free); -ENODATA
 * when the area is all zeros (an unconfigured ISO); -EINVAL with a reason in
 * err (no magic, bad JSON, bytes after the JSON that are not zero, a
 * required field missing, wrong type, over its limit, an id that is not a
 * UUID, a URL that is not http(s)://); -ENOMEM. */
int bootcfg_decode(const uint8_t *area, size_t size, struct bootcfg *out, char *err, size_t errlen);

void bootcfg_free(struct bootcfg *c);

/* The bytes c takes in an area (magic, JSON and the zero byte after it),
 * however large; 0 when it cannot be encoded at all (-EINVAL's cases). */
size_t bootcfg_size(const struct bootcfg *c);
