/* The discovery ISO's config area: encode (musterd) and decode (agent). */
#include "bootcfg.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "errmsg.h"
#include "json-cleanup.h"
#include "protocol.h"
#include "uuid.h"

static bool url_ok(const char *u) {
        return strncmp(u, "http://", 7) == 0 ? u[7] != '\0' : strncmp(u, "https://", 8) == 0 && u[8] != '\0';
}

static int add_str(json_object *o, const char *k, const char *v, size_t max, bool required) {
        if (!v)
                return required ? -EINVAL : 0;
        if (strlen(v) > max || (required && !*v))
                return -EINVAL;
        json_object *s = json_object_new_string(v);
        if (!s || json_object_object_add(o, k, s) < 0) {
                json_object_put(s);
                return -ENOMEM;
        }
        return 0;
}

/* c as its JSON object (a new one in *out). */
static int to_json(const struct bootcfg *c, json_object **out) {
        *out = NULL;
        if (!c->coordinator_url || !url_ok(c->coordinator_url) || !c->infra_env_id ||
            !uuid_is_valid(c->infra_env_id))
                return -EINVAL;
        json_object *o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        int r;
        if ((r = add_str(o, "coordinator_url", c->coordinator_url, BOOTCFG_URL_MAX, true)) < 0 ||
            (r = add_str(o, "infra_env_id", c->infra_env_id, 36, true)) < 0 ||
            (r = add_str(o, "token", c->token, BOOTCFG_TOKEN_MAX, true)) < 0 ||
            (r = add_str(o, "coordinator_key_pem", c->coordinator_key_pem, BOOTCFG_PEM_MAX, false)) < 0 ||
            (r = add_str(o, "ca_pem", c->ca_pem, BOOTCFG_PEM_MAX, false)) < 0 ||
            (r = add_str(o, "http_proxy", c->http_proxy, PROXY_URL_MAX, false)) < 0 ||
            (r = add_str(o, "https_proxy", c->https_proxy, PROXY_URL_MAX, false)) < 0 ||
            (r = add_str(o, "no_proxy", c->no_proxy, PROXY_URL_MAX, false)) < 0 ||
            (r = add_str(o, "ssh_authorized_key", c->ssh_authorized_key, BOOTCFG_SSH_KEY_MAX, false)) < 0) {
                json_object_put(o);
                return r;
        }
        if (c->static_network) {
                json_object *sn = json_tokener_parse(c->static_network);
                if (!json_object_is_type(sn, json_type_array) || json_object_object_add(o, "static_network", sn) < 0) {
                        json_object_put(sn);
                        json_object_put(o);
                        return -EINVAL;
                }
        }
        *out = o;
        return 0;
}

size_t bootcfg_size(const struct bootcfg *c) {
        json_object *o;
        if (!c || to_json(c, &o) < 0)
                return 0;
        size_t len = 0;
        const char *txt = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
        json_object_put(o);
        return txt ? BOOTCFG_MAGIC_LEN + len + 1 : 0;
}

int bootcfg_encode(const struct bootcfg *c, uint8_t *area, size_t size) {
        if (!c || !area)
                return -EINVAL;
        json_object *o;
        int r = to_json(c, &o);
        if (r < 0)
                return r;
        size_t len = 0;
        const char *txt = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
        if (!txt) {
                json_object_put(o);
                return -ENOMEM;
        }
        /* Leave at least one zero byte after the JSON. */
        if (BOOTCFG_MAGIC_LEN + len >= size) {
                json_object_put(o);
                return -E2BIG;
        }
        memcpy(area, BOOTCFG_MAGIC, BOOTCFG_MAGIC_LEN);
        memcpy(area + BOOTCFG_MAGIC_LEN, txt, len);
        memset(area + BOOTCFG_MAGIC_LEN + len, 0, size - BOOTCFG_MAGIC_LEN - len);
        json_object_put(o);
        return 0;
}

/* A string member: NULL when absent (or null); -EINVAL when of another type,
 * empty or over max. */
static int get_str(json_object *o, const char *k, size_t max, bool required, char **out, char *err, size_t errlen) {
        json_object *v = NULL;
        if (!json_object_object_get_ex(o, k, &v) || !v) {
                if (required)
                        return errmsg(err, errlen, -EINVAL, "config area: \"%s\" is missing", k);
                return 0;
        }
        if (!json_object_is_type(v, json_type_string))
                return errmsg(err, errlen, -EINVAL, "config area: \"%s\" is not a string", k);
        size_t n = (size_t) json_object_get_string_len(v);
        const char *s = json_object_get_string(v);
        if (n == 0 || n > max)
                return errmsg(err, errlen, -EINVAL, "config area: \"%s\" is %s", k, n ? "too long" : "empty");
        if (memchr(s, '\0', n))
                return errmsg(err, errlen, -EINVAL, "config area: \"%s\" holds a NUL byte", k);
        *out = strndup(s, n);
        return *out ? 0 : -ENOMEM;
}

int bootcfg_decode(const uint8_t *area, size_t size, struct bootcfg *out, char *err, size_t errlen) {
        if (!area || !out)
                return -EINVAL;
        memset(out, 0, sizeof *out);
        size_t nz = 0;
        while (nz < size && area[nz] == 0)
                nz++;
        if (nz == size)
                return errmsg(err, errlen, -ENODATA, "config area is empty (an unconfigured ISO)");
        if (size < BOOTCFG_MAGIC_LEN || memcmp(area, BOOTCFG_MAGIC, BOOTCFG_MAGIC_LEN) != 0)
                return errmsg(err, errlen, -EINVAL, "config area does not start with the muster config magic");
        const char *txt = (const char *) area + BOOTCFG_MAGIC_LEN;
        size_t room = size - BOOTCFG_MAGIC_LEN;
        const char *end = memchr(txt, '\0', room);
        if (!end)
                return errmsg(err, errlen, -EINVAL, "config area: the JSON is not followed by a zero byte");
        size_t len = (size_t) (end - txt);
        for (size_t i = len; i < room; i++)
                if (txt[i] != 0)
                        return errmsg(err, errlen, -EINVAL, "config area: non-zero byte at offset %zu after the JSON",
                                      BOOTCFG_MAGIC_LEN + i);
        if (len > INT32_MAX)
                return errmsg(err, errlen, -EINVAL, "config area: too large");
        _cleanup_json_tokener_ json_tokener *tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        json_object *o = json_tokener_parse_ex(tok, txt, (int) len);
        if (!o || json_tokener_get_error(tok) != json_tokener_success ||
            json_tokener_get_parse_end(tok) != len) {
                json_object_put(o);
                return errmsg(err, errlen, -EINVAL, "config area: not one JSON document");
        }
        int r = 0;
        if (!json_object_is_type(o, json_type_object))
                r = errmsg(err, errlen, -EINVAL, "config area: not a JSON object");
        if (r == 0)
                r = get_str(o, "coordinator_url", BOOTCFG_URL_MAX, true, &out->coordinator_url, err, errlen);
        if (r == 0)
                r = get_str(o, "infra_env_id", 36, true, &out->infra_env_id, err, errlen);
        if (r == 0)
                r = get_str(o, "token", BOOTCFG_TOKEN_MAX, true, &out->token, err, errlen);
        if (r == 0)
                r = get_str(o, "coordinator_key_pem", BOOTCFG_PEM_MAX, false, &out->coordinator_key_pem, err, errlen);
        if (r == 0)
                r = get_str(o, "ca_pem", BOOTCFG_PEM_MAX, false, &out->ca_pem, err, errlen);
        if (r == 0)
                r = get_str(o, "http_proxy", PROXY_URL_MAX, false, &out->http_proxy, err, errlen);
        if (r == 0)
                r = get_str(o, "https_proxy", PROXY_URL_MAX, false, &out->https_proxy, err, errlen);
        if (r == 0)
                r = get_str(o, "no_proxy", PROXY_URL_MAX, false, &out->no_proxy, err, errlen);
        if (r == 0)
                r = get_str(o, "ssh_authorized_key", BOOTCFG_SSH_KEY_MAX, false, &out->ssh_authorized_key, err,
                            errlen);
        if (r == 0 && out->http_proxy && !proxy_url_is_valid(out->http_proxy))
                r = errmsg(err, errlen, -EINVAL, "config area: http_proxy is not a proxy URL");
        if (r == 0 && out->https_proxy && !proxy_url_is_valid(out->https_proxy))
                r = errmsg(err, errlen, -EINVAL, "config area: https_proxy is not a proxy URL");
        if (r == 0 && out->no_proxy && !no_proxy_is_valid(out->no_proxy))
                r = errmsg(err, errlen, -EINVAL, "config area: no_proxy is not a list of hosts and addresses");
        json_object *sn;
        if (r == 0 && json_object_object_get_ex(o, "static_network", &sn) && sn) {
                if (!json_object_is_type(sn, json_type_array))
                        r = errmsg(err, errlen, -EINVAL, "config area: static_network is not an array");
                else if (!(out->static_network = strdup(json_object_to_json_string_ext(
                                 sn, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE))))
                        r = -ENOMEM;
        }
        for (const char *k = out->ssh_authorized_key; r == 0 && k && *k; k++)
                if (*k != '\n' && ((unsigned char) *k < 0x20 || *k == 0x7f))
                        r = errmsg(err, errlen, -EINVAL, "config area: ssh_authorized_key is not lines of printable "
                                                         "text");
        if (r == 0 && !url_ok(out->coordinator_url))
                r = errmsg(err, errlen, -EINVAL, "config area: coordinator_url is not an http(s):// URL");
        if (r == 0 && !uuid_is_valid(out->infra_env_id))
                r = errmsg(err, errlen, -EINVAL, "config area: infra_env_id is not a UUID");
        json_object_put(o);
        if (r < 0)
                bootcfg_free(out);
        return r;
}

void bootcfg_free(struct bootcfg *c) {
        if (!c)
                return;
        free(c->coordinator_url);
        free(c->infra_env_id);
        free(c->token);
        free(c->coordinator_key_pem);
        free(c->ca_pem);
        free(c->http_proxy);
        free(c->https_proxy);
        free(c->no_proxy);
        free(c->ssh_authorized_key);
        free(c->static_network);
        memset(c, 0, sizeof *c);
}
