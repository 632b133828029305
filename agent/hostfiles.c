/* A host's settings written into its installed system (hostfiles.h). */
#include "hostfiles.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "errmsg.h"
#include "manifestdir.h"
#include "protocol.h"

/* rel's folder part into parent and its last component into *base; -1
 * when rel has no folder or it is too long. */
static int split_parent(const char *rel, char parent[256], const char **base) {
        const char *slash = strrchr(rel, '/');
        if (!slash || (size_t) (slash - rel) >= 256)
                return -1;
        memcpy(parent, rel, (size_t) (slash - rel));
        parent[slash - rel] = '\0';
        *base = slash + 1;
        return 0;
}

/* rel's folder (made as needed, `dir_mode` for new folders). */
static int open_parent(int rootfd, const char *rel, mode_t dir_mode, const char **base) {
        char parent[256];
        if (split_parent(rel, parent, base) < 0)
                return -ENAMETOOLONG;
        return manifestdir_mkdir_under(rootfd, parent, dir_mode);
}

static int put(int rootfd, const char *rel, const char *data, mode_t mode, mode_t dir_mode, struct strv *written,
               char *err, size_t errlen) {
        const char *base;
        _cleanup_close_ int dfd = open_parent(rootfd, rel, dir_mode, &base);
        if (dfd < 0)
                return errmsg(err, errlen, dfd, "cannot create the folder of /%s: %s", rel, strerror(-dfd));
        int r = manifestdir_write_atomic_at(dfd, base, data, strlen(data), mode);
        if (r < 0)
                return errmsg(err, errlen, r, "cannot write /%s: %s", rel, strerror(-r));
        (void) fsync(dfd);
        if (written) {
                char abs[300];
                snprintf(abs, sizeof abs, "/%s", rel);
                if (strv_push(written, abs) < 0)
                        return errmsg(err, errlen, -ENOMEM, "out of memory");
        }
        return 0;
}

/* A file muster owns that the settings no longer ask for goes. */
static int drop(int rootfd, const char *rel, char *err, size_t errlen) {
        char parent[256];
        const char *base;
        if (split_parent(rel, parent, &base) < 0)
                return 0;
        _cleanup_close_ int dfd = openat(rootfd, parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return 0;
        if (unlinkat(dfd, base, 0) < 0 && errno != ENOENT)
                return errmsg(err, errlen, -errno, "cannot remove /%s: %m", rel);
        return 0;
}

/* A memory stream's text, or NULL when a write to it failed. */
static char *memstream_done(FILE *f, char **buf, bool ok) {
        ok = !ferror(f) && ok;
        if (fclose(f) != 0)
                ok = false;
        if (!ok) {
                free(*buf);
                *buf = NULL;
        }
        return *buf;
}

/* The text of /etc/muster/host.env for v (malloc'd; NULL on ENOMEM). */
static char *hostfiles_env(const struct payload_host_view *v) {
        const struct {
                const char *key, *value;
        } vars[] = {
                { "MUSTER_HOST_ID", v->host_id },
                { "MUSTER_ROLE", v->role },
                { "MUSTER_HOSTNAME", v->hostname },
                { "MUSTER_CLUSTER_ID", v->cluster_id },
                { "MUSTER_CLUSTER_NAME", v->cluster_name },
                { "MUSTER_BASE_DOMAIN", v->base_dns_domain },
                { "MUSTER_API_VIP", v->api_vip },
                { "MUSTER_INGRESS_VIP", v->ingress_vip },
                { "MUSTER_PULL_SECRET_FILE", v->pull_secret ? "/" HOSTFILES_PULL_SECRET : NULL },
        };
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return NULL;
        fputs("# Written by muster-agent when it installed this host: its settings from the\n"
              "# cluster's signed payload, for units' EnvironmentFile=.\n", f);
        /* The payload check let through only names, addresses and ids: no
         * quoting is needed. */
        for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
                if (vars[i].value)
                        fprintf(f, "%s=%s\n", vars[i].key, vars[i].value);
        return memstream_done(f, &buf, true);
}

/* Whether text has line as one of its lines. */
static bool has_line(const char *text, const char *line) {
        size_t n = strlen(line);
        for (const char *p = text; p && *p;) {
                const char *nl = strchr(p, '\n');
                size_t l = nl ? (size_t) (nl - p) : strlen(p);
                if (l == n && memcmp(p, line, l) == 0)
                        return true;
                p = nl ? nl + 1 : p + l;
        }
        return false;
}

/* The image's authorized_keys with each of v's keys that it lacks added. */
static int authorized_keys(int rootfd, const char *keys, char **out, char *err, size_t errlen) {
        _cleanup_free_ char *cur = NULL, *copy = strdup(keys);
        char *buf = NULL, *save = NULL;
        size_t len = 0, blen = 0;
        int r;

        if (!copy)
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        _cleanup_close_ int dfd = openat(rootfd, "root/.ssh", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd >= 0 && (r = manifestdir_read_at(dfd, "authorized_keys", HOSTFILES_MAX_AUTHORIZED_KEYS, &cur, &len)) < 0 &&
            r != -ENOENT)
                return errmsg(err, errlen, r, "cannot read /" HOSTFILES_AUTHORIZED_KEYS " of the image: %s",
                              strerror(-r));
        FILE *f = open_memstream(&buf, &blen);
        if (!f)
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        if (cur && len) {
                fwrite(cur, 1, len, f);
                if (cur[len - 1] != '\n')
                        fputc('\n', f);
        }
        for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
                if (!has_line(cur, line))
                        fprintf(f, "%s\n", line);
        if (!(*out = memstream_done(f, &buf, true)))
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        return 0;
}

int hostfiles_write(int rootfd, const struct payload_host_view *v, struct strv *written, char *err, size_t errlen) {
        _cleanup_free_ char *env = NULL, *line = NULL, *keys = NULL, *ntp = NULL;
        int r;

        if (v->hostname) {
                if (asprintf(&line, "%s\n", v->hostname) < 0) {
                        line = NULL;
                        return errmsg(err, errlen, -ENOMEM, "out of memory");
                }
                if ((r = put(rootfd, HOSTFILES_HOSTNAME, line, 0644, 0755, written, err, errlen)) < 0)
                        return r;
                free(TAKE_PTR(line));
        }
        if (asprintf(&line, "%s\n", v->role) < 0) {
                line = NULL;
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        }
        if ((r = put(rootfd, HOSTFILES_ROLE, line, 0644, 0755, written, err, errlen)) < 0)
                return r;
        if (!(env = hostfiles_env(v)))
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        if ((r = put(rootfd, HOSTFILES_ENV, env, 0644, 0755, written, err, errlen)) < 0)
                return r;

        if (v->n_ntp_sources > 0) {
                size_t nlen = 0;
                FILE *f = open_memstream(&ntp, &nlen);
                if (!f)
                        return errmsg(err, errlen, -ENOMEM, "out of memory");
                /* timesyncd asks every server on port 123: the others are named
                 * in comments above the [Time] section. */
                char kept[PAYLOAD_MAX_NTP_SOURCES * 258] = "";
                size_t klen = 0;
                fputs("# Written by muster-agent: the NTP sources of the host's infra-env.\n", f);
                for (size_t i = 0; i < v->n_ntp_sources; i++) {
                        char host[256];
                        uint16_t port = 0;
                        if (ntp_source_split(v->ntp_sources[i], host, sizeof host, &port) < 0)
                                continue;
                        if (port && port != 123)
                                fprintf(f, "# left out: %s (timesyncd takes no port)\n", v->ntp_sources[i]);
                        else
                                klen += (size_t) snprintf(kept + klen, sizeof kept - klen, "%s%s", klen ? " " : "", host);
                }
                fprintf(f, "[Time]\nNTP=%s", kept);
                fputc('\n', f);
                if (!memstream_done(f, &ntp, true))
                        return errmsg(err, errlen, -ENOMEM, "out of memory");
                if ((r = put(rootfd, HOSTFILES_TIMESYNCD, ntp, 0644, 0755, written, err, errlen)) < 0)
                        return r;
        } else if ((r = drop(rootfd, HOSTFILES_TIMESYNCD, err, errlen)) < 0)
                return r;

        if (v->ssh_authorized_key && *v->ssh_authorized_key) {
                if ((r = authorized_keys(rootfd, v->ssh_authorized_key, &keys, err, errlen)) < 0)
                        return r;
                if ((r = put(rootfd, HOSTFILES_AUTHORIZED_KEYS, keys, 0600, 0700, written, err, errlen)) < 0)
                        return r;
                /* The image may have had the folder already, with another mode. */
                _cleanup_close_ int sfd = openat(rootfd, "root/.ssh", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sfd < 0 || fchmod(sfd, 0700) < 0)
                        return errmsg(err, errlen, -errno, "cannot make /root/.ssh private: %m");
        }

        if (v->pull_secret) {
                if ((r = put(rootfd, HOSTFILES_PULL_SECRET, v->pull_secret, 0600, 0755, written, err, errlen)) < 0 ||
                    (r = put(rootfd, HOSTFILES_CRIO,
                             "# Written by muster-agent: CRI-O pulls with the cluster's pull secret.\n"
                             "[crio.image]\nglobal_auth_file = \"/" HOSTFILES_PULL_SECRET "\"\n",
                             0644, 0755, written, err, errlen)) < 0)
                        return r;
        } else if ((r = drop(rootfd, HOSTFILES_PULL_SECRET, err, errlen)) < 0 ||
                   (r = drop(rootfd, HOSTFILES_CRIO, err, errlen)) < 0)
                return r;
        return 0;
}
