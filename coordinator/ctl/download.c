/* `musterctl infraenv download`: an infra-env's discovery ISO, streamed to
 * FILE.part and renamed to FILE once it is whole and on disk (or to stdout
 * with -o -), with a progress bar when stderr is a terminal; or, with --pxe
 * DIR, its PXE files (vmlinuz, initrd, boot.ipxe) into DIR the same way
 * (DIR made if missing). Every file is written 0600: they hold the agent
 * token (and a host's logs, its journal). Nothing is held in memory. */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "ctl.h"
#include "fdio.h"
#include "protocol.h"

#define ERROR_BODY_MAX (64 * 1024) /* of a refusal's JSON; the rest is dropped */
#define BAR_CELLS 20

char *ctl_download_line(int64_t done, int64_t total, double secs, char *buf, size_t n) {
        char a[32], b[32], rate[32], bar[64];
        double r = secs > 0 ? (double) done / secs : 0;
        ctl_format_size(done, a, sizeof a);
        ctl_format_size(r > 0 && r < 9e18 ? (int64_t) r : 0, rate, sizeof rate);
        if (total > 0) {
                int pct = done >= total ? 100 : (int) ((double) done * 100.0 / (double) total);
                ctl_progress_bar(pct, BAR_CELLS, bar, sizeof bar);
                ctl_format_size(total, b, sizeof b);
                snprintf(buf, n, "%s  %s / %s  %s/s", bar, a, b, rate);
        } else
                snprintf(buf, n, "%s  %s/s", a, rate);
        return buf;
}

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

struct transfer {
        CURL *h;
        int fd;               /* where the ISO goes */
        const char *target;   /* its name, for messages */
        int64_t written;
        int write_errno;      /* a failed write, or 0 */
        long status;          /* known from the first body byte on */
        char *err;            /* a refusal's body (not the ISO) */
        size_t err_len;
        bool tty;             /* draw the progress bar */
        double t0, last_draw;
        int64_t total;        /* Content-Length, or -1 */
        bool drawn;
        const char *header;   /* a response header to keep, or NULL */
        char header_value[128];
};

static size_t on_data(char *p, size_t sz, size_t nm, void *u) {
        struct transfer *t = u;
        size_t k = sz * nm;
        if (!t->status)
                curl_easy_getinfo(t->h, CURLINFO_RESPONSE_CODE, &t->status);
        if (t->status != 200) {
                /* A refusal: keep the start of its reason, not in the file. */
                size_t room = ERROR_BODY_MAX - t->err_len, take = k < room ? k : room;
                char *e = realloc(t->err, t->err_len + take + 1);
                if (!e)
                        return 0;
                t->err = e;
                memcpy(t->err + t->err_len, p, take);
                t->err_len += take;
                t->err[t->err_len] = '\0';
                return k;
        }
        int r = fd_write_full(t->fd, p, k);
        if (r < 0) {
                t->write_errno = -r;
                return 0; /* CURLE_WRITE_ERROR */
        }
        t->written += (int64_t) k;
        return k;
}

static void draw(struct transfer *t, bool last) {
        char line[160];
        double now = now_s();
        if (!t->tty || t->status != 200 || (!last && now - t->last_draw < 0.1))
                return;
        t->last_draw = now;
        ctl_download_line(t->written, t->total, now - t->t0, line, sizeof line);
        fprintf(stderr, "\r%s\033[K%s", line, last ? "\n" : "");
        t->drawn = true;
}

static int on_progress(void *u, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
        struct transfer *t = u;
        if (ctl_stop)
                return 1;
        if (dltotal > 0)
                t->total = (int64_t) dltotal;
        draw(t, false);
        return 0;
}

/* GET the image into t->fd. 0, or CTL_EXIT_FAIL with the reason printed. */
static int fetch(struct ctl *c, const char *path, struct transfer *t) {
        _cleanup_free_ char *url = NULL, *auth = NULL;
        if (asprintf(&url, "%s%s%s", c->server, MUSTER_API_PREFIX, path) < 0 ||
            asprintf(&auth, "Authorization: Bearer %s", c->token) < 0) {
                url = auth = NULL;
                return ctl_fail("out of memory");
        }
        struct curl_slist *hdrs = NULL, *l;
        if ((l = curl_slist_append(hdrs, auth)))
                hdrs = l;
        if ((l = curl_slist_append(hdrs, "Accept: application/x-iso9660-image, application/json")))
                hdrs = l;
        CURL *h = t->h = c->curl;
        c->errbuf[0] = '\0';
        curl_easy_reset(h);
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
        curl_easy_setopt(h, CURLOPT_USERAGENT, "musterctl/" MUSTER_VERSION);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, t);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
        /* No overall limit (an ISO over a slow link takes long); a stall is
         * under 1 KiB/s for a minute. */
        curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1024L);
        curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L);
        curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(h, CURLOPT_XFERINFODATA, t);
        if (ctl_ca(c)) { /* that CA alone, not also the system's folder of CAs */
                curl_easy_setopt(h, CURLOPT_CAINFO, ctl_ca(c));
                curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
        }
        t->t0 = t->last_draw = now_s();
        CURLcode cr = curl_easy_perform(h);
        curl_slist_free_all(hdrs);
        explicit_bzero(auth, strlen(auth));
        if (t->tty && (t->drawn || cr == CURLE_OK))
                draw(t, true);
        if (cr == CURLE_ABORTED_BY_CALLBACK && ctl_stop)
                return ctl_fail("interrupted");
        if (cr == CURLE_WRITE_ERROR && t->write_errno)
                return ctl_fail("cannot write %s: %s", t->target, strerror(t->write_errno));
        if (cr != CURLE_OK && !(t->status && t->status != 200)) {
                if (t->status == 200)
                        return ctl_fail("the download of %s broke off after %lld bytes: %s", path,
                                        (long long) t->written, c->errbuf[0] ? c->errbuf : curl_easy_strerror(cr));
                return ctl_fail("cannot reach musterd at %s: %s", c->server,
                                c->errbuf[0] ? c->errbuf : curl_easy_strerror(cr));
        }
        if (!t->status)
                curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &t->status);
        struct curl_header *hv = NULL;
        if (t->header && curl_easy_header(h, t->header, 0, CURLH_HEADER, -1, &hv) == CURLHE_OK && hv->value)
                snprintf(t->header_value, sizeof t->header_value, "%s", hv->value);
        if (t->status != 200) {
                /* The server's reason, the CLI's way. */
                struct ctl_reply r = { .status = t->status, .body = t->err };
                r.json = t->err ? json_tokener_parse(t->err) : NULL;
                ctl_report(c, "GET", path, 0, &r);
                json_object_put(r.json);
                return CTL_EXIT_FAIL;
        }
        curl_off_t cl = -1;
        curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
        if (cl >= 0 && cl != t->written)
                return ctl_fail("the download of %s ended after %lld of %lld bytes", path, (long long) t->written,
                                (long long) cl);
        return 0;
}

int ctl_download_to(struct ctl *c, const char *path, const char *out, const char *header, char *value, size_t n) {
        bool to_stdout = strcmp(out, "-") == 0;
        /* Something there that is not a regular file (/dev/null, a FIFO, a
         * terminal) is written into as it is, never replaced by a rename. */
        struct stat st;
        _cleanup_close_ int in_place = -1;
        if (!to_stdout && stat(out, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
                in_place = open(out, O_WRONLY | O_CLOEXEC | O_NOCTTY);
                if (in_place < 0)
                        return ctl_fail("cannot write %s: %s", out, strerror(errno));
                to_stdout = true;
        }
        _cleanup_free_ char *part = NULL;
        if (!to_stdout && asprintf(&part, "%s.part", out) < 0) {
                part = NULL;
                return ctl_fail("out of memory");
        }
        struct transfer t = { .fd = in_place >= 0 ? in_place : STDOUT_FILENO,
                              .target = in_place >= 0 ? out : "standard output", .total = -1,
                              .tty = isatty(STDERR_FILENO) == 1, .header = header };
        if (value && n)
                value[0] = '\0';
        if (!to_stdout) {
                /* 0600: an ISO or initrd carries the agent token, a logs
                 * archive the host's journal. An old FILE.part keeps its
                 * mode through O_CREAT: made private too. */
                t.fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (t.fd < 0)
                        return ctl_fail("cannot write %s: %s", part, strerror(errno));
                if (fchmod(t.fd, 0600) < 0) {
                        int e = errno;
                        close(t.fd);
                        return ctl_fail("cannot make %s private: %s", part, strerror(e));
                }
                t.target = part;
        }
        struct sigaction old_int, old_term;
        ctl_catch_stop(&old_int, &old_term);
        double t0 = now_s();
        int rc = fetch(c, path, &t);
        double secs = now_s() - t0;
        free(t.err);
        if (value && n)
                snprintf(value, n, "%s", t.header_value);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        char size[32];
        if (to_stdout) {
                if (rc == 0)
                        fprintf(stderr, "wrote %s: %lld bytes (%s) in %.2f s\n", t.target, (long long) t.written,
                                ctl_format_size(t.written, size, sizeof size), secs);
                return rc;
        }
        if (rc == 0 && fsync(t.fd) < 0)
                rc = ctl_fail("cannot write %s: %s", part, strerror(errno));
        if (close(t.fd) < 0 && rc == 0)
                rc = ctl_fail("cannot write %s: %s", part, strerror(errno));
        if (rc == 0 && rename(part, out) < 0)
                rc = ctl_fail("cannot rename %s to %s: %s", part, out, strerror(errno));
        if (rc != 0) {
                unlink(part);
                return rc;
        }
        int s = fd_fsync_parent(out);
        if (s < 0)
                return ctl_fail("cannot sync the directory of %s: %s", out, strerror(-s));
        fprintf(stderr, "wrote %s: %lld bytes (%s) in %.2f s\n", out, (long long) t.written,
                ctl_format_size(t.written, size, sizeof size), secs);
        return CTL_EXIT_OK;
}

enum { OPT_PXE = CTL_OPT_FIRST_LOCAL };

int ctl_infra_env_download(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct option opts[] = {
                { "server", required_argument, NULL, CTL_OPT_SERVER },
                { "token-file", required_argument, NULL, CTL_OPT_TOKEN_FILE },
                { "ca", required_argument, NULL, CTL_OPT_CA },
                { "out", required_argument, NULL, 'o' },
                { "pxe", required_argument, NULL, OPT_PXE },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *out = NULL, *pxe = NULL;
        int o, rc;
        c->o_is_local = true;
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                switch (o) {
                case CTL_OPT_HELP:
                        return CTL_EXIT_OK;
                case 'o':
                        if (!*optarg)
                                return ctl_usage_error(cmd, "-o needs a file name (- for standard output)");
                        out = optarg;
                        break;
                case OPT_PXE:
                        if (!*optarg)
                                return ctl_usage_error(cmd, "--pxe needs a folder");
                        pxe = optarg;
                        break;
                default: /* CTL_OPT_BAD, message printed */
                        return CTL_EXIT_USAGE;
                }
        }
        if ((rc = ctl_want_args(cmd, argc, argv, 1, "INFRA_ENV")) != 0)
                return rc;
        if (!out == !pxe)
                return ctl_usage_error(cmd, "give -o FILE (the ISO; - for standard output) or --pxe DIR (the PXE "
                                            "files), one of them");
        if (out && strcmp(out, "-") == 0 && isatty(STDOUT_FILENO))
                return ctl_fail("standard output is a terminal: give -o FILE, or redirect it");
        if (pxe) {
                /* The folder is made (0755, for a TFTP or HTTP server to
                 * list; its files are 0600), its parent must be there. */
                struct stat st;
                if (mkdir(pxe, 0755) < 0 && errno != EEXIST)
                        return ctl_fail("--pxe %s: cannot make the folder: %s", pxe, strerror(errno));
                if (stat(pxe, &st) < 0 || !S_ISDIR(st.st_mode))
                        return ctl_fail("--pxe %s: not a folder", pxe);
        }

        _cleanup_free_ char *id = ctl_lookup_infra_env(c, argv[optind]);
        _cleanup_free_ char *ie_path = NULL;
        if (!id)
                return CTL_EXIT_FAIL;
        if (asprintf(&ie_path, MUSTER_PATH_INFRA_ENV("%s"), id) < 0) {
                ie_path = NULL;
                return ctl_fail("out of memory");
        }
        /* Is it there and ours? (Also the session: token and handle.) */
        struct ctl_reply r;
        int k = ctl_call_object(c, "GET", ie_path, NULL, &r);
        ctl_reply_free(&r);
        if (k < 0)
                return CTL_EXIT_FAIL;
        if (!c->token || !c->curl)
                return ctl_fail("no session with musterd");

        if (out) {
                _cleanup_free_ char *path = NULL;
                if (asprintf(&path, MUSTER_PATH_INFRA_ENV_IMAGE("%s"), id) < 0) {
                        path = NULL;
                        return ctl_fail("out of memory");
                }
                return ctl_download_to(c, path, out, NULL, NULL, 0);
        }
        /* The script names the other two relative to itself: serve the folder
         * as it is (TFTP or HTTP). */
        static const char *const files[] = { "vmlinuz", "initrd", "boot.ipxe" };
        for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
                _cleanup_free_ char *path = NULL, *file = NULL;
                if (asprintf(&path, MUSTER_PATH_INFRA_ENV_PXE("%s", "%s"), id, files[i]) < 0 ||
                    asprintf(&file, "%s/%s", pxe, files[i]) < 0) {
                        path = file = NULL;
                        return ctl_fail("out of memory");
                }
                if ((rc = ctl_download_to(c, path, file, NULL, NULL, 0)) != 0)
                        return rc;
        }
        return CTL_EXIT_OK;
}
