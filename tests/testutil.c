/* Test helpers: process spawning with captured output, temp trees, the
 * real musterd and agents by PID, HTTP on loopback, JSON paths. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <limits.h>
#include <poll.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <signal.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <time.h>
#include <curl/curl.h>

extern char **environ;

const char *tu_agent_path(void) {
        const char *p = getenv("MUSTER_AGENT");
        return p && *p ? p : "muster-agent";
}

static int append(char **buf, size_t *len, size_t *cap, const char *data, size_t n) {
        if (*len + n + 1 > *cap) {
                size_t c = *cap ? *cap : 65536;
                while (c < *len + n + 1)
                        c *= 2;
                char *b = realloc(*buf, c);
                if (!b)
                        return -1;
                *buf = b;
                *cap = c;
        }
        memcpy(*buf + *len, data, n);
        *len += n;
        (*buf)[*len] = '\0';
        return 0;
}

char *tu_run(const char *const argv[], int *status, char **err_out) {
        int out[2], err[2];
        posix_spawn_file_actions_t fa;
        pid_t pid;
        char *obuf = NULL, *ebuf = NULL;
        size_t olen = 0, ocap = 0, elen = 0, ecap = 0;

        if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
                return NULL;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        posix_spawn_file_actions_adddup2(&fa, err[1], 2);
        if (posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *) argv, environ) != 0) {
                posix_spawn_file_actions_destroy(&fa);
                return NULL;
        }
        posix_spawn_file_actions_destroy(&fa);
        close(out[1]);
        close(err[1]);
        struct pollfd p[2] = { { out[0], POLLIN, 0 }, { err[0], POLLIN, 0 } };
        int open_fds = 2;
        append(&obuf, &olen, &ocap, "", 0);
        append(&ebuf, &elen, &ecap, "", 0);
        while (open_fds > 0) {
                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                for (int i = 0; i < 2; i++) {
                        if (p[i].fd < 0 || !p[i].revents)
                                continue;
                        char chunk[65536];
                        ssize_t k = read(p[i].fd, chunk, sizeof chunk);
                        if (k <= 0) {
                                close(p[i].fd);
                                p[i].fd = -1;
                                open_fds--;
                                continue;
                        }
                        if (i == 0)
                                append(&obuf, &olen, &ocap, chunk, (size_t) k);
                        else
                                append(&ebuf, &elen, &ecap, chunk, (size_t) k);
                }
        }
        int st = 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
        if (status)
                *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (err_out)
                *err_out = ebuf;
        else
                free(ebuf);
        return obuf;
}

int tu_runf(char **out, char **err, const char *fmt, ...) {
        char *line = NULL, *argv[64], *save = NULL, *e = NULL;
        size_t n = 0;
        int status = -1;
        va_list ap;

        va_start(ap, fmt);
        int k = vasprintf(&line, fmt, ap);
        va_end(ap);
        if (k < 0)
                return -1;
        for (char *t = strtok_r(line, " ", &save); t && n < 63; t = strtok_r(NULL, " ", &save))
                argv[n++] = t;
        argv[n] = NULL;
        char *o = n ? tu_run((const char *const *) argv, &status, &e) : NULL;
        if (!o)
                status = -1;
        if (out)
                *out = o;
        else
                free(o);
        if (err)
                *err = e;
        else
                free(e);
        free(line);
        return status;
}

json_object *tu_agent_inventory(const char *sysroot, int *status) {
        const char *argv[] = { tu_agent_path(), "inventory", sysroot ? "--sysroot" : NULL, sysroot, NULL };
        char *err = NULL;
        char *out = tu_run(argv, status, &err);
        if (err && *err)
                fprintf(stderr, "%s", err);
        free(err);
        if (!out)
                return NULL;
        json_object *o = json_tokener_parse(out);
        free(out);
        return o;
}

char *tu_mkdtemp(void) {
        const char *t = getenv("TMPDIR");
        char *p;
        if (asprintf(&p, "%s/muster-test.XXXXXX", t && *t ? t : "/tmp") < 0)
                return NULL;
        if (!mkdtemp(p)) {
                free(p);
                return NULL;
        }
        return p;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

int tu_rm_rf(const char *path) {
        return nftw(path, rm_one, 64, FTW_DEPTH | FTW_PHYS);
}

static int mkparents(const char *path) {
        char buf[PATH_MAX];
        snprintf(buf, sizeof buf, "%s", path);
        for (char *p = buf + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                        return -1;
                *p = '/';
        }
        return 0;
}

int tu_write_bin(const char *root, const char *relpath, const void *data, size_t len) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", root, relpath);
        if (mkparents(path) < 0)
                return -1;
        FILE *f = fopen(path, "we");
        if (!f)
                return -1;
        size_t w = fwrite(data, 1, len, f);
        return fclose(f) == 0 && w == len ? 0 : -1;
}

int tu_write_file(const char *root, const char *relpath, const char *text) {
        return tu_write_bin(root, relpath, text, strlen(text));
}

int tu_symlink(const char *root, const char *relpath, const char *target) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", root, relpath);
        if (mkparents(path) < 0)
                return -1;
        return symlink(target, path);
}

json_object *tu_json_get(json_object *root, const char *dotted) {
        char buf[512];
        snprintf(buf, sizeof buf, "%s", dotted);
        json_object *cur = root;
        for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok && cur;
             tok = strtok_r(NULL, ".", &save)) {
                if (json_object_is_type(cur, json_type_array)) {
                        char *end;
                        long i = strtol(tok, &end, 10);
                        cur = *end ? NULL : json_object_array_get_idx(cur, (size_t) i);
                } else if (!json_object_object_get_ex(cur, tok, &cur))
                        cur = NULL;
        }
        return cur;
}

const char *tu_jstr(json_object *o, const char *dotted) {
        return json_object_get_string(tu_json_get(o, dotted));
}

const char *tu_validation(json_object *host, const char *id) {
        json_object *a = tu_json_get(host, "validations");
        for (size_t i = 0; a && i < json_object_array_length(a); i++) {
                json_object *v = json_object_array_get_idx(a, i);
                if (strcmp(tu_jstr(v, "id"), id) == 0)
                        return tu_jstr(v, "status");
        }
        return NULL;
}

int64_t tu_mono_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int tu_enter_netns(const char *name) {
        char path[128];
        snprintf(path, sizeof path, "/run/netns/%s", name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int r = setns(fd, CLONE_NEWNET) < 0 ? -errno : 0;
        close(fd);
        return r;
}

/* ---- musterd under test ------------------------------------------------ */

/* STATE/admin.token's first line replaces m->admin_token when there is one.
 * 0 if m has a token then, else -1. */
static int read_admin_token(struct tu_musterd *m) {
        char path[4096], tok[4096];
        snprintf(path, sizeof path, "%s/admin.token", m->state_dir);
        FILE *f = fopen(path, "re");
        if (!f)
                return -1;
        if (fgets(tok, sizeof tok, f)) {
                tok[strcspn(tok, "\n")] = '\0';
                free(m->admin_token);
                m->admin_token = strdup(tok);
        }
        fclose(f);
        return m->admin_token ? 0 : -1;
}

static unsigned free_port(void) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof a;
        if (fd < 0 || bind(fd, (struct sockaddr *) &a, sizeof a) < 0 || getsockname(fd, (struct sockaddr *) &a, &len) < 0) {
                if (fd >= 0)
                        close(fd);
                return 0;
        }
        close(fd);
        return ntohs(a.sin_port);
}

static void tu_sleep_ms(long ms) {
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* Spawn musterd on m->port with m->state_dir and wait up to 10 s for
 * /healthz: 1 when it answers; 0 when it exited (the port taken?) or never
 * answered (then it is killed); -1 when it could not be spawned. */
static int spawn_musterd(struct tu_musterd *m, const char *config) {
        const char *bin = getenv("MUSTERD");
        char listen[64], url[128];
        snprintf(listen, sizeof listen, "127.0.0.1:%u", m->port);
        snprintf(url, sizeof url, "%s/healthz", m->base);
        const char *argv[] = { bin && *bin ? bin : "musterd", "--listen", listen, "--state-dir", m->state_dir,
                               config ? "--config" : NULL, config, NULL };
        pid_t pid;
        if (posix_spawnp(&pid, argv[0], NULL, NULL, (char *const *) argv, environ) != 0)
                return -1;
        m->pid = pid;
        for (int i = 0; i < 200; i++) {
                int st;
                if (tu_http("GET", url, NULL, NULL, 0, NULL) == 200)
                        return 1;
                if (waitpid(pid, &st, WNOHANG) == pid) {
                        m->pid = 0;
                        return 0;
                }
                tu_sleep_ms(50);
        }
        tu_musterd_stop(m, SIGKILL);
        return 0;
}

int tu_musterd_start(struct tu_musterd *m, const char *state_dir, const char *config) {
        if (!m->state_dir)
                m->state_dir = strdup(state_dir);
        /* A free port may be taken before musterd binds it: try another. */
        for (int attempt = 0; attempt < 5; attempt++) {
                m->port = free_port();
                snprintf(m->base, sizeof m->base, "http://127.0.0.1:%u", m->port);
                int r = spawn_musterd(m, config);
                if (r < 0)
                        return -1;
                if (r > 0) {
                        free(m->admin_token);
                        m->admin_token = NULL;
                        return read_admin_token(m);
                }
        }
        return -1;
}

void tu_musterd_stop(struct tu_musterd *m, int sig) {
        if (m->pid <= 0)
                return;
        kill(m->pid, sig);
        int st;
        while (waitpid(m->pid, &st, 0) < 0 && errno == EINTR)
                ;
        m->pid = 0;
}

void tu_musterd_free(struct tu_musterd *m) {
        tu_musterd_stop(m, SIGTERM);
        free(m->state_dir);
        free(m->admin_token);
        memset(m, 0, sizeof *m);
}

struct tu_buf {
        char *d;
        size_t n;
};

static size_t tu_sink(char *p, size_t sz, size_t nm, void *u) {
        struct tu_buf *b = u;
        char *d = realloc(b->d, b->n + sz * nm + 1);
        if (!d)
                return 0;
        b->d = d;
        memcpy(b->d + b->n, p, sz * nm);
        b->n += sz * nm;
        b->d[b->n] = '\0';
        return sz * nm;
}

long tu_http(const char *method, const char *url, const char *token, const char *body, size_t body_len, char **out) {
        CURL *c = curl_easy_init();
        struct curl_slist *h = NULL;
        struct tu_buf b = { 0 };
        char hdr[8300];
        long code = 0;
        if (!c)
                return 0;
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, tu_sink);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        if (token) {
                snprintf(hdr, sizeof hdr, "Authorization: Bearer %s", token);
                h = curl_slist_append(h, hdr);
        }
        if (body) {
                h = curl_slist_append(h, "Content-Type: application/json");
                curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
                curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) body_len);
        }
        h = curl_slist_append(h, "Expect:");
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        if (curl_easy_perform(c) == CURLE_OK)
                curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
        if (out)
                *out = b.d;
        else
                free(b.d);
        return code;
}

long tu_http_json(const char *method, const char *url, const char *token, const char *body, json_object **out) {
        char *text = NULL;
        long code = tu_http(method, url, token, body, body ? strlen(body) : 0, &text);
        if (out)
                *out = text ? json_tokener_parse(text) : NULL;
        free(text);
        return code;
}

long tu_create_infra_env(const char *base, const char *admin, const char *name, char **id, char **agent_token) {
        json_object *body = json_object_new_object(), *o = NULL;
        json_object_object_add(body, "name", json_object_new_string(name));
        long code = tu_http_json("POST", tu_url(base, "/api/v2/infra-envs"), admin, json_object_to_json_string(body), &o);
        const char *v;
        if (code == 201 && id)
                *id = (v = tu_jstr(o, "id")) ? strdup(v) : NULL;
        if (code == 201 && agent_token)
                *agent_token = (v = tu_jstr(o, "agent_token")) ? strdup(v) : NULL;
        json_object_put(o);
        json_object_put(body);
        return code;
}

const char *tu_url(const char *base, const char *fmt, ...) {
        static _Thread_local char buf[4][1024];
        static _Thread_local int i;
        char path[900];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(path, sizeof path, fmt, ap);
        va_end(ap);
        i = (i + 1) % 4;
        snprintf(buf[i], sizeof buf[i], "%s%s", base, path);
        return buf[i];
}

/* ---- processes under test (agent run) ------------------------------------ */

int tu_musterd_restart(struct tu_musterd *m, const char *config) {
        if (m->pid > 0 || !m->port || !m->state_dir)
                return -1;
        /* Up to 10 attempts: the old listener's port may linger briefly. */
        for (int attempt = 0; attempt < 10; attempt++) {
                int r = spawn_musterd(m, config);
                if (r < 0)
                        return -1;
                if (r > 0)
                        return read_admin_token(m);
                tu_sleep_ms(200);
        }
        return -1;
}

int tu_spawn(const char *const argv[], const char *log_path) {
        posix_spawn_file_actions_t fa;
        pid_t pid;
        int r;

        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        if (log_path) {
                posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
                posix_spawn_file_actions_adddup2(&fa, 1, 2);
        }
        r = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *) argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        return r == 0 ? (int) pid : -1;
}

static int tu_status(int st) {
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int tu_wait_pid(int pid, int timeout_ms) {
        for (int waited = 0;; waited += 20) {
                int st;
                pid_t r = waitpid(pid, &st, WNOHANG);
                if (r == pid)
                        return tu_status(st);
                if (r < 0 && errno != EINTR)
                        return -1;
                if (waited >= timeout_ms)
                        return -1;
                tu_sleep_ms(20);
        }
}

int tu_kill_wait(int pid, int sig) {
        int st;
        if (pid <= 0)
                return -1;
        kill(pid, sig);
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        return -1;
        return tu_status(st);
}

int tu_stop_pid(int pid, int sig, int timeout_ms) {
        if (pid <= 0)
                return -1;
        kill(pid, sig);
        int st = tu_wait_pid(pid, timeout_ms);
        return st >= 0 ? st : tu_kill_wait(pid, SIGKILL);
}
