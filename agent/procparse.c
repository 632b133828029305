/* Pure text parsers for /proc, /sys and the udev database (procparse.h).
 * Inputs may be truncated or garbage: every parser skips what it cannot
 * read and never reads past the NUL. */
#include "procparse.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "inventory.h"
#include "sysroot.h"

/* Split `line` at the first ':' into trimmed key and value (in place). */
static bool split_kv(char *line, char **key, char **val) {
        char *colon = strchr(line, ':');
        if (!colon)
                return false;
        *colon = '\0';
        *key = line;
        str_rstrip(*key);
        while (isspace((unsigned char) **key))
                (*key)++;
        *val = colon + 1;
        while (isspace((unsigned char) **val))
                (*val)++;
        str_rstrip(*val);
        return true;
}

struct pair { int64_t a, b; };

#define CPUINFO_MAX_TOPO 8192

static bool pair_seen(const struct pair *p, size_t n, int64_t a, int64_t b) {
        for (size_t i = 0; i < n; i++)
                if (p[i].a == a && p[i].b == b)
                        return true;
        return false;
}

static bool parse_i64(const char *s, int64_t *out) {
        char *end;
        if (!*s)
                return false;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || *end)
                return false;
        *out = v;
        return true;
}

/* What cpuinfo_parse() keeps from stanza to stanza. */
struct cpuinfo_scan {
        struct pair *pkgs, *cores;   /* packages and (package, core) pairs seen */
        size_t npkgs, ncores;
        int64_t cur_pkg, cur_core;   /* of the stanza being read; -1 until given */
        bool first_done;             /* the first stanza has ended */
        bool have_flags;
        bool topo_missing;           /* a stanza without physical id or core id */
};

/* A stanza ended: count its package and core. */
static void cpuinfo_end_stanza(struct cpuinfo_scan *sc) {
        if (sc->cur_pkg < 0 || sc->cur_core < 0)
                sc->topo_missing = true;
        else {
                if (!pair_seen(sc->pkgs, sc->npkgs, sc->cur_pkg, 0) && sc->npkgs < CPUINFO_MAX_TOPO)
                        sc->pkgs[sc->npkgs++] = (struct pair) { sc->cur_pkg, 0 };
                if (!pair_seen(sc->cores, sc->ncores, sc->cur_pkg, sc->cur_core) && sc->ncores < CPUINFO_MAX_TOPO)
                        sc->cores[sc->ncores++] = (struct pair) { sc->cur_pkg, sc->cur_core };
        }
        sc->first_done = true;
}

/* One "key: value" line of a stanza. The flags are the first stanza's. 0
 * or -ENOMEM. */
static int cpuinfo_field(struct cpuinfo *ci, struct cpuinfo_scan *sc, const char *k, char *v) {
        if (strcmp(k, "model name") == 0 || strcmp(k, "cpu model") == 0 ||
            strcmp(k, "Model") == 0) {
                if (!ci->model_name && *v)
                        ci->model_name = strdup(v);
        } else if (strcmp(k, "vendor_id") == 0) {
                if (!ci->vendor_id && *v)
                        ci->vendor_id = strdup(v);
        } else if (strcmp(k, "physical id") == 0) {
                if (!parse_i64(v, &sc->cur_pkg))
                        sc->cur_pkg = -1;
        } else if (strcmp(k, "core id") == 0) {
                if (!parse_i64(v, &sc->cur_core))
                        sc->cur_core = -1;
        } else if (strcmp(k, "cpu MHz") == 0) {
                char *end;
                double mhz = strtod(v, &end);
                if (end != v && !*end && mhz > 0 && mhz < 1e6 && mhz > ci->max_mhz)
                        ci->max_mhz = mhz;
        } else if ((strcmp(k, "flags") == 0 || strcmp(k, "Features") == 0) &&
                   !sc->first_done && !sc->have_flags) {
                sc->have_flags = true;
                char *s2 = NULL;
                for (char *f = strtok_r(v, " \t", &s2); f && ci->flags.n < INV_MAX_CPU_FLAGS;
                     f = strtok_r(NULL, " \t", &s2))
                        if (strv_push(&ci->flags, f) < 0)
                                return -ENOMEM;
        } else if (strcmp(k, "CPU architecture") == 0 && !ci->arch_hint) {
                if (strcmp(v, "8") == 0 || strcmp(v, "AArch64") == 0)
                        ci->arch_hint = strdup("aarch64");
        }
        return 0;
}

int cpuinfo_parse(const char *text, struct cpuinfo *ci) {
        _cleanup_free_ char *copy = strdup(text ? text : "");
        _cleanup_free_ struct pair *pkgs = NULL, *cores = NULL;
        struct cpuinfo_scan sc = { .cur_pkg = -1, .cur_core = -1 };

        *ci = (struct cpuinfo) { .sockets = -1, .cores = -1, .max_mhz = -1 };
        if (!copy)
                return -ENOMEM;
        /* Topology of at most CPUINFO_MAX_TOPO CPUs is tracked. */
        pkgs = calloc(CPUINFO_MAX_TOPO, sizeof *pkgs);
        cores = calloc(CPUINFO_MAX_TOPO, sizeof *cores);
        if (!pkgs || !cores)
                return -ENOMEM;
        sc.pkgs = pkgs;
        sc.cores = cores;

        char *save = NULL;
        for (char *line = strtok_r(copy, "\n", &save);; line = strtok_r(NULL, "\n", &save)) {
                char *k = NULL, *v = NULL;
                /* A stanza ends at "processor" of the next one or at EOF. */
                bool new_proc = line && split_kv(line, &k, &v) && strcmp(k, "processor") == 0;
                if (!line || new_proc) {
                        if (ci->processors > 0)
                                cpuinfo_end_stanza(&sc);
                        if (!line)
                                break;
                        ci->processors++;
                        sc.cur_pkg = sc.cur_core = -1;
                        continue;
                }
                if (!k || !v)
                        continue;
                if (cpuinfo_field(ci, &sc, k, v) < 0)
                        return -ENOMEM;
        }
        if (!ci->arch_hint && ci->vendor_id && ci->flags.n) {
                if (strv_contains(&ci->flags, "lm"))
                        ci->arch_hint = strdup("x86_64");
                else
                        ci->arch_hint = strdup("i686");
        }
        if (!sc.topo_missing && sc.npkgs > 0) {
                ci->sockets = (int64_t) sc.npkgs;
                ci->cores = (int64_t) sc.ncores;
        }
        return 0;
}

void cpuinfo_free(struct cpuinfo *ci) {
        free(ci->model_name);
        free(ci->vendor_id);
        free(ci->arch_hint);
        strv_free(&ci->flags);
        *ci = (struct cpuinfo) { 0 };
}

int meminfo_get(const char *text, const char *key, int64_t *bytes) {
        size_t klen = strlen(key);
        for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
                if (strncmp(l, key, klen) != 0 || l[klen] != ':')
                        continue;
                const char *p = l + klen + 1;
                while (*p == ' ' || *p == '\t')
                        p++;
                char *end;
                errno = 0;
                unsigned long long v = strtoull(p, &end, 10);
                if (errno || end == p || *p == '-')
                        return -EINVAL;
                while (*end == ' ')
                        end++;
                uint64_t mult = 1;
                if (strncmp(end, "kB", 2) == 0)
                        mult = 1024;
                else if (*end && *end != '\n')
                        return -EINVAL;
                if (v > (uint64_t) INT64_MAX / mult)
                        return -ERANGE;
                *bytes = (int64_t) (v * mult);
                return 0;
        }
        return -ENOENT;
}

int cpulist_count(const char *text, int64_t max, int64_t *count) {
        int64_t n = 0;
        const char *p = text;
        while (isspace((unsigned char) *p))
                p++;
        if (!*p)
                return -EINVAL;
        while (*p && !isspace((unsigned char) *p)) {
                char *end;
                if (!isdigit((unsigned char) *p))
                        return -EINVAL;
                long a = strtol(p, &end, 10), b = a;
                p = end;
                if (*p == '-') {
                        if (!isdigit((unsigned char) p[1]))
                                return -EINVAL;
                        b = strtol(p + 1, &end, 10);
                        p = end;
                }
                /* b - a >= max - n, not b - a + 1 > max - n: strtol saturates at
                 * LONG_MAX, and "0-<huge>" must not overflow (found by fuzz_proc). */
                if (a < 0 || b < a || b - a >= max - n)
                        return -EINVAL;
                n += b - a + 1;
                if (*p == ',')
                        p++;
                else if (*p && !isspace((unsigned char) *p))
                        return -EINVAL;
        }
        *count = n;
        return 0;
}

char *cmdline_get(const char *cmdline, const char *key) {
        size_t klen = strlen(key);
        char *found = NULL;
        const char *p = cmdline;
        while (p && *p) {
                while (isspace((unsigned char) *p))
                        p++;
                if (!*p)
                        break;
                /* A word, with "..." quoting as the kernel allows. */
                const char *start = p;
                bool q = false;
                while (*p && (q || !isspace((unsigned char) *p))) {
                        if (*p == '"')
                                q = !q;
                        p++;
                }
                if ((size_t) (p - start) > klen && strncmp(start, key, klen) == 0 && start[klen] == '=') {
                        const char *v = start + klen + 1;
                        size_t vlen = (size_t) (p - v);
                        if (vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"') {
                                v++;
                                vlen -= 2;
                        }
                        free(found);
                        found = strndup(v, vlen);
                }
                if (strncmp(start, "--", 2) == 0 && (p - start) == 2)
                        break; /* the rest belongs to init */
        }
        return found;
}

/* Two hex digits at s: their value, or -1. (sscanf's %2x would take "-6"
 * or "+f" as a number too.) */
static int hex_byte(const char *s) {
        if (!isxdigit((unsigned char) s[0]) || !isxdigit((unsigned char) s[1]))
                return -1;
        char two[3] = { s[0], s[1], '\0' };
        return (int) strtol(two, NULL, 16);
}

/* Six bytes as hex pairs at s, s + 3, ..., each pair but the last followed
 * by sep; false if any is not. */
static bool mac_bytes(const char *s, char sep, unsigned b[6]) {
        for (int i = 0; i < 6; i++) {
                int v = hex_byte(s + 3 * i);
                if (v < 0 || (i < 5 && s[3 * i + 2] != sep))
                        return false;
                b[i] = (unsigned) v;
        }
        return true;
}

char *bootif_to_mac(const char *bootif) {
        unsigned b[6];
        if (!bootif)
                return NULL;
        size_t len = strlen(bootif);
        /* PXELINUX form: a hardware type (01: Ethernet) then six bytes, all
         * '-' separated; or the six bytes alone, ':' or '-' separated. */
        if (len == 20 && hex_byte(bootif) >= 0 && bootif[2] == '-') {
                if (!mac_bytes(bootif + 3, '-', b))
                        return NULL;
        } else if (len == 17 && (bootif[2] == ':' || bootif[2] == '-')) {
                if (!mac_bytes(bootif, bootif[2], b))
                        return NULL;
        } else
                return NULL;
        char *mac;
        if (asprintf(&mac, "%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4], b[5]) < 0)
                return NULL;
        return mac;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static char *unescape_octal(const char *s) {
        char *out = malloc(strlen(s) + 1), *o = out;
        if (!out)
                return NULL;
        while (*s) {
                if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
                    s[3] >= '0' && s[3] <= '7') {
                        *o++ = (char) (((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
                        s += 4;
                } else
                        *o++ = *s++;
        }
        *o = '\0';
        return out;
}

int mountinfo_parse(const char *text, struct mount_table *t) {
        _cleanup_free_ char *copy = strdup(text ? text : "");
        char *save = NULL;

        *t = (struct mount_table) { 0 };
        if (!copy)
                return -ENOMEM;
        for (char *line = strtok_r(copy, "\n", &save); line && t->n < 65536;
             line = strtok_r(NULL, "\n", &save)) {
                /* id parent maj:min root mountpoint opts [optional...] - fstype source superopts */
                char *f[6] = { 0 };
                char *s2 = NULL;
                char *tok = strtok_r(line, " ", &s2);
                int i = 0;
                for (; tok && i < 6; tok = strtok_r(NULL, " ", &s2))
                        f[i++] = tok;
                if (i < 6)
                        continue;
                unsigned ma, mi;
                if (devnum_parse(f[2], &ma, &mi) < 0)
                        continue;
                char *fstype = NULL, *source = NULL;
                for (; tok; tok = strtok_r(NULL, " ", &s2))
                        if (strcmp(tok, "-") == 0) {
                                fstype = strtok_r(NULL, " ", &s2);
                                source = fstype ? strtok_r(NULL, " ", &s2) : NULL;
                                break;
                        }
                struct mount_entry *e = inv_array_append((void **) &t->e, &t->n, sizeof *e);
                if (!e)
                        return -ENOMEM;
                e->major = ma;
                e->minor = mi;
                e->mountpoint = unescape_octal(f[4]);
                e->fstype = fstype ? strdup(fstype) : NULL;
                e->source = source ? unescape_octal(source) : NULL;
                if (!e->mountpoint)
                        return -ENOMEM;
        }
        return 0;
}

const struct mount_entry *mount_table_find(const struct mount_table *t, unsigned major, unsigned minor) {
        const struct mount_entry *best = NULL;
        /* Prefer the shortest mount point: "/" over a bind mount of it. */
        for (size_t i = 0; i < t->n; i++)
                if (t->e[i].major == major && t->e[i].minor == minor &&
                    (!best || strlen(t->e[i].mountpoint) < strlen(best->mountpoint)))
                        best = &t->e[i];
        return best;
}

void mount_table_free(struct mount_table *t) {
        for (size_t i = 0; i < t->n; i++) {
                free(t->e[i].mountpoint);
                free(t->e[i].fstype);
                free(t->e[i].source);
        }
        free(t->e);
        *t = (struct mount_table) { 0 };
}

int udev_record_parse(const char *text, struct udev_record *rec) {
        *rec = (struct udev_record) { 0 };
        for (const char *l = text; l && *l;) {
                const char *nl = strchr(l, '\n');
                size_t len = nl ? (size_t) (nl - l) : strlen(l);
                if (len > 2 && l[1] == ':' && (l[0] == 'E' || l[0] == 'S') && len < 8192) {
                        char *v = strndup(l + 2, len - 2);
                        if (!v)
                                return -ENOMEM;
                        if (l[0] == 'E' && !strchr(v, '='))
                                free(v);
                        else if (strv_consume(l[0] == 'E' ? &rec->props : &rec->links, v) < 0)
                                return -ENOMEM;
                }
                if (rec->props.n > 4096 || rec->links.n > 4096)
                        break;
                l = nl ? nl + 1 : NULL;
        }
        return 0;
}

const char *udev_record_get(const struct udev_record *rec, const char *key) {
        size_t klen = strlen(key);
        for (size_t i = 0; i < rec->props.n; i++)
                if (strncmp(rec->props.v[i], key, klen) == 0 && rec->props.v[i][klen] == '=')
                        return rec->props.v[i] + klen + 1;
        return NULL;
}

void udev_record_free(struct udev_record *rec) {
        strv_free(&rec->props);
        strv_free(&rec->links);
}

int devnum_parse(const char *s, unsigned *major, unsigned *minor) {
        unsigned a, b;
        int n = 0;
        if (!s || sscanf(s, "%u:%u%n", &a, &b, &n) != 2 || s[n] != '\0')
                return -EINVAL;
        *major = a;
        *minor = b;
        return 0;
}
