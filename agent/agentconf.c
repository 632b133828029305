/* The agent's config sources (agentconf.h): the boot config area, agent.conf
 * and the kernel command line parsed from bytes, one setter that checks
 * every value, a merge that lays one source over another, and a thin
 * reader of the files. */
#include "agentconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bootcfg.h"
#include "cleanup.h"
#include "client.h"
#include "confline.h"
#include "crypto.h"
#include "errmsg.h"
#include "fdio.h"
#include "protocol.h"
#include "uuid.h"

/* The string members and the setting each belongs to. */
static const struct field {
        enum agentconf_setting setting;
        size_t off;
        bool secret; /* wiped before it is freed */
} fields[] = {
        { AGENTCONF_COORDINATOR, offsetof(struct agentconf, coordinator), false },
        { AGENTCONF_INFRA_ENV, offsetof(struct agentconf, infra_env_id), false },
        { AGENTCONF_TOKEN, offsetof(struct agentconf, token), true },
        { AGENTCONF_TOKEN, offsetof(struct agentconf, token_file), false },
        { AGENTCONF_CA, offsetof(struct agentconf, ca_pem), false },
        { AGENTCONF_CA, offsetof(struct agentconf, ca_file), false },
        { AGENTCONF_KEY, offsetof(struct agentconf, coordinator_key_pem), false },
        { AGENTCONF_KEY, offsetof(struct agentconf, coordinator_key_file), false },
        { AGENTCONF_STATE_DIR, offsetof(struct agentconf, state_dir), false },
        { AGENTCONF_INSTALL_TARGET, offsetof(struct agentconf, install_target), false },
        { AGENTCONF_HTTP_PROXY, offsetof(struct agentconf, http_proxy), false },
        { AGENTCONF_HTTPS_PROXY, offsetof(struct agentconf, https_proxy), false },
        { AGENTCONF_NO_PROXY, offsetof(struct agentconf, no_proxy), false },
        { AGENTCONF_RECLAIM_WIPE, offsetof(struct agentconf, reclaim_wipe), false },
};
#define N_FIELDS (sizeof fields / sizeof *fields)

static char **field_ptr(const struct agentconf *c, const struct field *f) {
        return (char **) ((char *) c + f->off);
}

static void clear_setting(struct agentconf *c, enum agentconf_setting s) {
        for (size_t i = 0; i < N_FIELDS; i++) {
                char **p = field_ptr(c, &fields[i]);
                if (fields[i].setting != s || !*p)
                        continue;
                if (fields[i].secret)
                        explicit_bzero(*p, strlen(*p));
                free(*p);
                *p = NULL;
        }
        if (s == AGENTCONF_MIN_DISK)
                c->min_disk_bytes = 0;
        free(c->origin[s]);
        c->origin[s] = NULL;
        c->from[s] = AGENTCONF_SRC_NONE;
}

void agentconf_free(struct agentconf *c) {
        if (!c)
                return;
        for (int s = 0; s < _AGENTCONF_SETTING_MAX; s++)
                clear_setting(c, (enum agentconf_setting) s);
}

const char *agentconf_setting_to_string(enum agentconf_setting s) {
        switch (s) {
        case AGENTCONF_COORDINATOR:
                return "coordinator";
        case AGENTCONF_INFRA_ENV:
                return "infra-env";
        case AGENTCONF_TOKEN:
                return "token";
        case AGENTCONF_CA:
                return "CA";
        case AGENTCONF_KEY:
                return "coordinator key";
        case AGENTCONF_STATE_DIR:
                return "state dir";
        case AGENTCONF_INSTALL_TARGET:
                return "install target";
        case AGENTCONF_MIN_DISK:
                return "min disk bytes";
        case AGENTCONF_HTTP_PROXY:
                return "http proxy";
        case AGENTCONF_HTTPS_PROXY:
                return "https proxy";
        case AGENTCONF_NO_PROXY:
                return "no_proxy";
        case AGENTCONF_RECLAIM_WIPE:
                return "reclaim wipe";
        case _AGENTCONF_SETTING_MAX:
                break;
        }
        return "?";
}

/* Replace setting s with one string member (at off) or, value NULL, the
 * number. The copies are made before anything is dropped. */
static int put(struct agentconf *c, enum agentconf_setting s, size_t off, const char *value, int64_t num,
               enum agentconf_source src, const char *origin) {
        char *v = NULL, *o = strdup(origin);
        if (!o || (value && !(v = strdup(value)))) {
                free(o);
                free(v);
                return -ENOMEM;
        }
        clear_setting(c, s);
        if (value)
                *(char **) ((char *) c + off) = v;
        else
                c->min_disk_bytes = num;
        c->from[s] = src;
        c->origin[s] = o;
        return 0;
}

/* ---- one setting ----------------------------------------------------------- */

enum kind { K_URL, K_UUID, K_TOKEN, K_PATH, K_BYTES, K_PROXY, K_NO_PROXY };

static const struct key {
        const char *name;
        enum agentconf_setting setting;
        enum kind kind;
        size_t off;
        bool cmdline; /* also muster.NAME= on the kernel command line */
} keys[] = {
        { "coordinator", AGENTCONF_COORDINATOR, K_URL, offsetof(struct agentconf, coordinator), true },
        { "infra_env", AGENTCONF_INFRA_ENV, K_UUID, offsetof(struct agentconf, infra_env_id), true },
        { "token", AGENTCONF_TOKEN, K_TOKEN, offsetof(struct agentconf, token), true },
        { "token_file", AGENTCONF_TOKEN, K_PATH, offsetof(struct agentconf, token_file), false },
        { "ca_file", AGENTCONF_CA, K_PATH, offsetof(struct agentconf, ca_file), true },
        { "coordinator_key_file", AGENTCONF_KEY, K_PATH, offsetof(struct agentconf, coordinator_key_file), true },
        { "state_dir", AGENTCONF_STATE_DIR, K_PATH, offsetof(struct agentconf, state_dir), true },
        { "install_target", AGENTCONF_INSTALL_TARGET, K_PATH, offsetof(struct agentconf, install_target), false },
        { "min_disk_bytes", AGENTCONF_MIN_DISK, K_BYTES, 0, false },
        { "http_proxy", AGENTCONF_HTTP_PROXY, K_PROXY, offsetof(struct agentconf, http_proxy), true },
        { "https_proxy", AGENTCONF_HTTPS_PROXY, K_PROXY, offsetof(struct agentconf, https_proxy), true },
        { "no_proxy", AGENTCONF_NO_PROXY, K_NO_PROXY, offsetof(struct agentconf, no_proxy), true },
        /* Set by a reclaim's boot entry (run only): the disk wiped before
         * the host registers (agent/reclaim.h). */
        { "reclaim_wipe", AGENTCONF_RECLAIM_WIPE, K_PATH, offsetof(struct agentconf, reclaim_wipe), true },
};
#define N_KEYS (sizeof keys / sizeof *keys)

static const struct key *find_key(const char *name, bool cmdline) {
        for (size_t i = 0; i < N_KEYS; i++)
                if (strcmp(keys[i].name, name) == 0 && (!cmdline || keys[i].cmdline))
                        return &keys[i];
        return NULL;
}

static bool has_control(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

/* Check value for k; 0 and *num for a number, or -EINVAL with the reason
 * (never the value of a token). */
static int check_value(const struct key *k, const char *value, enum agentconf_source src, int64_t *num, char *err,
                       size_t errlen) {
        int r;

        switch (k->kind) {
        case K_URL:
                if (!client_url_is_valid(value))
                        return errmsg(err, errlen, -EINVAL, "\"%s\" is not an http:// or https:// URL with a host",
                                      value);
                return 0;
        case K_PROXY:
                if (!proxy_url_is_valid(value))
                        return errmsg(err, errlen, -EINVAL, "\"%.200s\" is not a proxy URL (http://HOST[:PORT])", value);
                return 0;
        case K_NO_PROXY:
                if (!no_proxy_is_valid(value))
                        return errmsg(err, errlen, -EINVAL,
                                      "\"%.200s\" is not a comma-separated list of hosts, domains and addresses", value);
                return 0;
        case K_UUID:
                if (!uuid_is_valid(value))
                        return errmsg(err, errlen, -EINVAL, "\"%s\" is not a UUID", value);
                return 0;
        case K_TOKEN:
                r = client_check_token(value);
                if (r == -E2BIG)
                        return errmsg(err, errlen, -EINVAL, "the token is longer than %d bytes", CLIENT_TOKEN_MAX);
                if (r < 0)
                        return errmsg(err, errlen, -EINVAL,
                                      "the token is empty or not a token (spaces or control characters inside)");
                return 0;
        case K_PATH:
                if (!*value)
                        return errmsg(err, errlen, -EINVAL, "empty path");
                if (strlen(value) > AGENTCONF_PATH_MAX)
                        return errmsg(err, errlen, -EINVAL, "path longer than %d bytes", AGENTCONF_PATH_MAX);
                if (has_control(value))
                        return errmsg(err, errlen, -EINVAL, "path with control characters");
                if (src != AGENTCONF_SRC_FLAG && value[0] != '/')
                        return errmsg(err, errlen, -EINVAL, "\"%s\" is not an absolute path", value);
                return 0;
        case K_BYTES: {
                char *end;
                errno = 0;
                long long v = strtoll(value, &end, 10);
                if (errno || end == value || *end || v <= 0)
                        return errmsg(err, errlen, -EINVAL, "needs a positive number of bytes, not \"%s\"", value);
                *num = v;
                return 0;
        }
        }
        return -EINVAL;
}

static int set_key(struct agentconf *c, const struct key *k, const char *value, enum agentconf_source src,
                   const char *origin, char *err, size_t errlen) {
        int64_t num = 0;
        int r = check_value(k, value, src, &num, err, errlen);
        if (r < 0)
                return r;
        return put(c, k->setting, k->off, k->kind == K_BYTES ? NULL : value, num, src, origin);
}

int agentconf_set(struct agentconf *c, const char *key, const char *value, enum agentconf_source src,
                  const char *origin, char *err, size_t errlen) {
        const struct key *k = key ? find_key(key, false) : NULL;
        if (!k)
                return errmsg(err, errlen, -EINVAL, "unknown setting \"%s\"", key ? key : "");
        if (!value || !origin)
                return errmsg(err, errlen, -EINVAL, "no value");
        return set_key(c, k, value, src, origin, err, errlen);
}

/* ---- the boot config area ---------------------------------------------------- */

int agentconf_parse_boot(struct agentconf *c, const uint8_t *area, size_t size, const char *name, char *err,
                         size_t errlen) {
        _cleanup_free_ char *origin = NULL;
        struct bootcfg b;
        char why[256] = "";
        int r;

        if (size > BOOTCFG_AREA_SIZE)
                size = BOOTCFG_AREA_SIZE;
        r = bootcfg_decode(area, size, &b, why, sizeof why);
        if (r == -ENODATA || r == -ENOMEM)
                return r;
        if (r < 0)
                return errmsg(err, errlen, -EINVAL, "%s: %s", name, why[0] ? why : "not a config area");

        /* What the decoder lets through but the agent could not use. */
        if (!client_url_is_valid(b.coordinator_url))
                r = errmsg(err, errlen, -EINVAL, "%s: config area: coordinator_url \"%s\" is not a usable URL", name,
                           b.coordinator_url);
        else if (client_check_token(b.token) < 0)
                r = errmsg(err, errlen, -EINVAL,
                           "%s: config area: the token is not a token (spaces or control characters inside)", name);
        else if (b.coordinator_key_pem) {
                struct crypto_key *k = NULL;
                if (crypto_pubkey_load_pem(b.coordinator_key_pem, &k) < 0)
                        r = errmsg(err, errlen, -EINVAL,
                                   "%s: config area: coordinator_key_pem is not a PEM P-256 public key", name);
                crypto_key_free(k);
        }
        if (r == 0 && b.ca_pem && !strstr(b.ca_pem, "-----BEGIN CERTIFICATE-----"))
                r = errmsg(err, errlen, -EINVAL, "%s: config area: ca_pem holds no PEM certificate", name);
        if (r == 0 && asprintf(&origin, "boot config %s", name) < 0) {
                origin = NULL;
                r = -ENOMEM;
        }
        if (r == 0)
                r = put(c, AGENTCONF_COORDINATOR, offsetof(struct agentconf, coordinator), b.coordinator_url, 0,
                        AGENTCONF_SRC_BOOT, origin);
        if (r == 0)
                r = put(c, AGENTCONF_INFRA_ENV, offsetof(struct agentconf, infra_env_id), b.infra_env_id, 0,
                        AGENTCONF_SRC_BOOT, origin);
        if (r == 0)
                r = put(c, AGENTCONF_TOKEN, offsetof(struct agentconf, token), b.token, 0, AGENTCONF_SRC_BOOT, origin);
        if (r == 0 && b.coordinator_key_pem)
                r = put(c, AGENTCONF_KEY, offsetof(struct agentconf, coordinator_key_pem), b.coordinator_key_pem, 0,
                        AGENTCONF_SRC_BOOT, origin);
        if (r == 0 && b.ca_pem)
                r = put(c, AGENTCONF_CA, offsetof(struct agentconf, ca_pem), b.ca_pem, 0, AGENTCONF_SRC_BOOT, origin);
        if (r == 0 && b.http_proxy)
                r = put(c, AGENTCONF_HTTP_PROXY, offsetof(struct agentconf, http_proxy), b.http_proxy, 0,
                        AGENTCONF_SRC_BOOT, origin);
        if (r == 0 && b.https_proxy)
                r = put(c, AGENTCONF_HTTPS_PROXY, offsetof(struct agentconf, https_proxy), b.https_proxy, 0,
                        AGENTCONF_SRC_BOOT, origin);
        if (r == 0 && b.no_proxy)
                r = put(c, AGENTCONF_NO_PROXY, offsetof(struct agentconf, no_proxy), b.no_proxy, 0, AGENTCONF_SRC_BOOT,
                        origin);
        explicit_bzero(b.token, strlen(b.token));
        bootcfg_free(&b);
        return r;
}

/* ---- agent.conf ---------------------------------------------------------------- */

int agentconf_parse_file(struct agentconf *c, const char *text, size_t len, const char *name, char *err,
                         size_t errlen) {
        unsigned seen_line[N_KEYS] = { 0 };
        unsigned setting_line[_AGENTCONF_SETTING_MAX] = { 0 };
        const char *setting_key[_AGENTCONF_SETTING_MAX] = { 0 };
        _cleanup_free_ char *buf = NULL;
        unsigned lineno = 0;
        int r = 0;

        if (len > AGENTCONF_TEXT_MAX)
                return errmsg(err, errlen, -EINVAL, "%s: longer than %d bytes", name, AGENTCONF_TEXT_MAX);
        const char *nul = memchr(text, '\0', len);
        if (nul) {
                unsigned at = 1;
                for (const char *p = text; p < nul; p++)
                        at += *p == '\n';
                return errmsg(err, errlen, -EINVAL, "%s:%u: NUL byte", name, at);
        }
        if (!(buf = strndup(text, len)))
                return -ENOMEM;

        for (char *line = buf, *next; line && r == 0; line = next) {
                char origin[AGENTCONF_PATH_MAX + 32], why[256];
                char *nl = strchr(line, '\n');
                next = nl ? nl + 1 : NULL;
                if (nl)
                        *nl = '\0';
                lineno++;

                /* agent.conf has no sections: a "[" line is a malformed pair. */
                struct confline cl;
                switch (confline_parse(line, 0, &cl)) {
                case CONFLINE_BLANK:
                        continue;
                case CONFLINE_PAIR:
                        break;
                case CONFLINE_SECTION:
                case CONFLINE_ERR_SECTION:
                case CONFLINE_ERR_NO_EQUALS:
                        return errmsg(err, errlen, -EINVAL, "%s:%u: expected \"key = value\"", name, lineno);
                case CONFLINE_ERR_NO_KEY:
                        return errmsg(err, errlen, -EINVAL, "%s:%u: missing key before '='", name, lineno);
                case CONFLINE_ERR_QUOTES:
                        return errmsg(err, errlen, -EINVAL, "%s:%u: unbalanced quotes in the value of %s", name,
                                      lineno, cl.key);
                case CONFLINE_ERR_NO_VALUE:
                        return errmsg(err, errlen, -EINVAL, "%s:%u: missing value for %s", name, lineno, cl.key);
                }
                const char *key = cl.key, *value = cl.value;

                const struct key *k = find_key(key, false);
                if (!k)
                        return errmsg(err, errlen, -EINVAL, "%s:%u: unknown key \"%s\"", name, lineno, key);
                size_t ki = (size_t) (k - keys);
                if (seen_line[ki])
                        return errmsg(err, errlen, -EINVAL, "%s:%u: %s given again (first on line %u)", name, lineno,
                                      key, seen_line[ki]);
                if (setting_line[k->setting])
                        return errmsg(err, errlen, -EINVAL, "%s:%u: %s and %s (line %u) both given; keep one", name,
                                      lineno, key, setting_key[k->setting], setting_line[k->setting]);
                seen_line[ki] = setting_line[k->setting] = lineno;
                setting_key[k->setting] = k->name;

                snprintf(origin, sizeof origin, "%s:%u", name, lineno);
                r = set_key(c, k, value, AGENTCONF_SRC_FILE, origin, why, sizeof why);
                if (r == -EINVAL)
                        return errmsg(err, errlen, r, "%s:%u: %s: %s", name, lineno, key, why);
        }
        return r;
}

/* ---- the kernel command line ----------------------------------------------------- */

static bool blank(char ch) {
        return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* The next word of *p as the kernel splits its command line: blanks end a
 * word only outside double quotes. The word is cut out in place (NUL), its
 * quotes as the kernel drops them: a leading one with the word's last
 * character when that is a quote, and one opening the value (after the first
 * '=') with the last character likewise. *value is NULL when there is no '='.
 * NULL at the end. */
static char *next_word(char **p, char **value) {
        char *s = *p;
        bool in_quote = false, quoted = false;
        size_t i, eq = 0;
        bool have_eq = false;

        while (blank(*s))
                s++;
        if (!*s)
                return NULL;
        if (*s == '"') {
                s++;
                in_quote = quoted = true;
        }
        for (i = 0; s[i]; i++) {
                if (blank(s[i]) && !in_quote)
                        break;
                if (!have_eq && s[i] == '=') {
                        have_eq = true;
                        eq = i;
                }
                if (s[i] == '"')
                        in_quote = !in_quote;
        }
        *p = s[i] ? s + i + 1 : s + i;
        s[i] = '\0';
        *value = NULL;
        if (have_eq) {
                s[eq] = '\0';
                *value = s + eq + 1;
                if (**value == '"') {
                        (*value)++;
                        if (s[i - 1] == '"')
                                s[i - 1] = '\0';
                }
        }
        if (quoted && i > 0 && s[i - 1] == '"')
                s[i - 1] = '\0';
        return s;
}

int agentconf_parse_cmdline(struct agentconf *c, const char *text, size_t len, const char *name, char *err,
                            size_t errlen) {
        _cleanup_free_ char *buf = NULL, *origin = NULL;
        char why[256];
        char *p, *word, *value;

        if (len > AGENTCONF_TEXT_MAX)
                return errmsg(err, errlen, -EINVAL, "%s: longer than %d bytes", name, AGENTCONF_TEXT_MAX);
        if (memchr(text, '\0', len))
                return errmsg(err, errlen, -EINVAL, "%s: NUL byte in the command line", name);
        if (!(buf = strndup(text, len)))
                return -ENOMEM;
        if (asprintf(&origin, "kernel command line %s", name) < 0) {
                origin = NULL;
                return -ENOMEM;
        }
        p = buf;
        while ((word = next_word(&p, &value))) {
                if (!value && strcmp(word, "--") == 0)
                        break; /* the rest is init's */
                if (strncmp(word, "muster.", 7) != 0)
                        continue;
                const struct key *k = find_key(word + 7, true);
                if (!k)
                        continue;
                if (!value)
                        return errmsg(err, errlen, -EINVAL, "%s: %s: needs a value (%s=...)", name, word, word);
                int r = set_key(c, k, value, AGENTCONF_SRC_CMDLINE, origin, why, sizeof why);
                if (r == -EINVAL)
                        return errmsg(err, errlen, r, "%s: %s: %s", name, word, why);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- merging ------------------------------------------------------------------ */

static int copy_setting(struct agentconf *dst, const struct agentconf *src, enum agentconf_setting s) {
        char *v[N_FIELDS] = { 0 };
        char *o = NULL;
        int r = 0;

        for (size_t i = 0; i < N_FIELDS; i++) {
                const char *sv = *field_ptr(src, &fields[i]);
                if (fields[i].setting == s && sv && !(v[i] = strdup(sv)))
                        r = -ENOMEM;
        }
        if (src->origin[s] && !(o = strdup(src->origin[s])))
                r = -ENOMEM;
        if (r < 0) {
                for (size_t i = 0; i < N_FIELDS; i++) {
                        if (v[i] && fields[i].secret)
                                explicit_bzero(v[i], strlen(v[i]));
                        free(v[i]);
                }
                free(o);
                return r;
        }
        clear_setting(dst, s);
        for (size_t i = 0; i < N_FIELDS; i++)
                if (fields[i].setting == s)
                        *field_ptr(dst, &fields[i]) = v[i];
        if (s == AGENTCONF_MIN_DISK)
                dst->min_disk_bytes = src->min_disk_bytes;
        dst->from[s] = src->from[s];
        dst->origin[s] = o;
        return 0;
}

int agentconf_merge(struct agentconf *dst, const struct agentconf *src) {
        for (int s = 0; s < _AGENTCONF_SETTING_MAX; s++) {
                if (src->from[s] == AGENTCONF_SRC_NONE)
                        continue;
                int r = copy_setting(dst, src, (enum agentconf_setting) s);
                if (r < 0)
                        return r;
        }
        return 0;
}

unsigned agentconf_missing(const struct agentconf *c, bool node) {
        unsigned m = 0;
        if (!c->coordinator)
                m |= 1u << AGENTCONF_COORDINATOR;
        if (!c->infra_env_id)
                m |= 1u << AGENTCONF_INFRA_ENV;
        if (!c->token && !c->token_file)
                m |= 1u << AGENTCONF_TOKEN;
        if (node && !c->coordinator_key_pem && !c->coordinator_key_file)
                m |= 1u << AGENTCONF_KEY;
        return m;
}

/* printf at buf+*at, never past len; *at stays at the end of what fits. */
static void append(char *buf, size_t len, size_t *at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t len, size_t *at, const char *fmt, ...) {
        if (*at >= len)
                return;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(buf + *at, len - *at, fmt, ap);
        va_end(ap);
        if (n < 0)
                return;
        *at = (size_t) n >= len - *at ? len - 1 : *at + (size_t) n;
}

static const char *origin_of(const struct agentconf *c, enum agentconf_setting s) {
        return c->origin[s] ? c->origin[s] : "-";
}

/* A proxy URL as logged: its user and password (if any) as "***". */
static const char *proxy_shown(const char *url, char *buf, size_t n) {
        const char *at = strrchr(url, '@'), *host = strstr(url, "://");
        if (!at || !host)
                return url;
        snprintf(buf, n, "%.*s***%s", (int) (host + 3 - url), url, at);
        return buf;
}

void agentconf_describe(const struct agentconf *c, char *buf, size_t len) {
        size_t at = 0;

        if (!buf || !len)
                return;
        buf[0] = '\0';
        append(buf, len, &at, "coordinator %s (%s); infra-env %s (%s); ", c->coordinator ? c->coordinator : "none",
               origin_of(c, AGENTCONF_COORDINATOR), c->infra_env_id ? c->infra_env_id : "none",
               origin_of(c, AGENTCONF_INFRA_ENV));
        if (c->token)
                append(buf, len, &at, "token inline (%s); ", origin_of(c, AGENTCONF_TOKEN));
        else if (c->token_file)
                append(buf, len, &at, "token from %s (%s); ", c->token_file, origin_of(c, AGENTCONF_TOKEN));
        else
                append(buf, len, &at, "no token; ");
        if (c->coordinator_key_pem)
                append(buf, len, &at, "coordinator key PEM (%s); ", origin_of(c, AGENTCONF_KEY));
        else if (c->coordinator_key_file)
                append(buf, len, &at, "coordinator key %s (%s); ", c->coordinator_key_file, origin_of(c, AGENTCONF_KEY));
        else
                append(buf, len, &at, "no coordinator key (installs refused); ");
        if (c->ca_pem)
                append(buf, len, &at, "CA PEM (%s)", origin_of(c, AGENTCONF_CA));
        else if (c->ca_file)
                append(buf, len, &at, "CA %s (%s)", c->ca_file, origin_of(c, AGENTCONF_CA));
        else
                append(buf, len, &at, "the system's CAs");
        if (c->http_proxy || c->https_proxy) {
                char shown[PROXY_URL_MAX + 8];
                append(buf, len, &at, "; proxy");
                if (c->http_proxy)
                        append(buf, len, &at, " http %s (%s)", proxy_shown(c->http_proxy, shown, sizeof shown),
                               origin_of(c, AGENTCONF_HTTP_PROXY));
                if (c->https_proxy)
                        append(buf, len, &at, " https %s (%s)", proxy_shown(c->https_proxy, shown, sizeof shown),
                               origin_of(c, AGENTCONF_HTTPS_PROXY));
                if (c->no_proxy)
                        append(buf, len, &at, ", none for %s (%s)", c->no_proxy, origin_of(c, AGENTCONF_NO_PROXY));
        } else
                append(buf, len, &at, "; no proxy");
}

/* ---- reading the files ------------------------------------------------------------ */

/* Up to max bytes of path into a new buffer (*n of them); -ENOENT when it
 * (or a directory on its way) does not exist. */
static int read_upto(const char *path, size_t max, char **out, size_t *n) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        _cleanup_free_ char *buf = NULL;

        *out = NULL;
        *n = 0;
        if (fd < 0)
                return errno == ENOTDIR ? -ENOENT : -errno;
        if (!(buf = malloc(max ? max : 1)))
                return -ENOMEM;
        ssize_t k = fd_read_full(fd, buf, max);
        if (k < 0)
                return (int) k;
        *n = (size_t) k;
        *out = TAKE_PTR(buf);
        return 0;
}

/* The boot config's file: the initramfs's (a PXE boot) when there is one,
 * else the boot medium's. */
static const char *boot_path(const struct agentconf_paths *paths) {
        const char *initrd = paths && paths->initrd_config ? paths->initrd_config : AGENTCONF_DEFAULT_INITRD_CONFIG;
        const char *boot = paths && paths->boot_config ? paths->boot_config : AGENTCONF_DEFAULT_BOOT_CONFIG;
        struct stat st;
        return stat(initrd, &st) == 0 || (errno != ENOENT && errno != ENOTDIR) ? initrd : boot;
}

int agentconf_read_boot(const struct agentconf_paths *paths, uint8_t **data, size_t *n, const char **path) {
        *path = boot_path(paths);
        return read_upto(*path, BOOTCFG_AREA_SIZE, (char **) data, n);
}

/* Read source `which` (its file at path; a missing one is skipped) and lay it
 * over out. */
static int load_one(struct agentconf *out, enum agentconf_source which, const char *path, char *err,
                    size_t errlen) {
        static const char *const what[_AGENTCONF_SRC_MAX] = {
                [AGENTCONF_SRC_BOOT] = "boot config",
                [AGENTCONF_SRC_FILE] = "agent config",
                [AGENTCONF_SRC_CMDLINE] = "kernel command line",
        };
        _cleanup_free_ char *data = NULL;
        struct agentconf part = { 0 };
        size_t n;
        int r;

        /* One byte over the limit tells the text parsers a text is too long. */
        r = read_upto(path, which == AGENTCONF_SRC_BOOT ? BOOTCFG_AREA_SIZE : AGENTCONF_TEXT_MAX + 1, &data, &n);
        if (r == -ENOENT)
                return 0;
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return errmsg(err, errlen, r, "Failed to read %s %s: %s", what[which], path, strerror(-r));
        if (which == AGENTCONF_SRC_BOOT) {
                r = agentconf_parse_boot(&part, (const uint8_t *) data, n, path, err, errlen);
                if (r == -ENODATA)
                        r = 0; /* an unconfigured ISO */
        } else if (which == AGENTCONF_SRC_FILE)
                r = agentconf_parse_file(&part, data, n, path, err, errlen);
        else
                r = agentconf_parse_cmdline(&part, data, n, path, err, errlen);
        if (r == 0)
                r = agentconf_merge(out, &part);
        agentconf_free(&part);
        return r;
}

int agentconf_load(struct agentconf *out, const struct agentconf_paths *paths, const struct agentconf *flags,
                   char *err, size_t errlen) {
        const char *conf = paths && paths->agent_conf ? paths->agent_conf : AGENTCONF_DEFAULT_AGENT_CONF;
        const char *cmdline = paths && paths->cmdline ? paths->cmdline : AGENTCONF_DEFAULT_CMDLINE;
        int r;

        agentconf_free(out);
        if ((r = load_one(out, AGENTCONF_SRC_BOOT, boot_path(paths), err, errlen)) < 0 ||
            (r = load_one(out, AGENTCONF_SRC_FILE, conf, err, errlen)) < 0 ||
            (r = load_one(out, AGENTCONF_SRC_CMDLINE, cmdline, err, errlen)) < 0 ||
            (flags && (r = agentconf_merge(out, flags)) < 0)) {
                if (r == -ENOMEM)
                        errmsg(err, errlen, r, "Out of memory reading the agent's configuration");
                agentconf_free(out);
                return r;
        }
        return 0;
}
