/* bench-ceiling: the ceiling of the coordinator benchmark. A libmicrohttpd
 * server in musterd's mode (coordinator/http/http.c: internal epoll threads, a
 * pool of 4, the same connection limits) that reads and drops any request
 * body and answers every request at once with a fixed JSON body of the size
 * musterd answers it with: no auth, no routing, no store. What it sustains
 * is what this HTTP stack can do on this machine; bench/coordinator/run
 * reports musterd as a fraction of it. Not a test. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define MAX_BODY_BYTES (1u << 20)

enum reply { REPLY_GET, REPLY_REGISTER, REPLY_POST, _REPLY_MAX };

struct ceiling {
        struct MHD_Response *reply[_REPLY_MAX];
        char *body[_REPLY_MAX];
};

/* A JSON object of exactly n bytes: {"pad":"xxx"} or, below its size, "{}"
 * and spaces. */
static char *json_of_size(size_t n) {
        static const char head[] = "{\"pad\":\"", tail[] = "\"}";
        size_t fixed = sizeof head - 1 + sizeof tail - 1;
        char *b = malloc(n + 1);
        if (!b)
                return NULL;
        if (n >= fixed) {
                memcpy(b, head, sizeof head - 1);
                memset(b + sizeof head - 1, 'x', n - fixed);
                memcpy(b + n - (sizeof tail - 1), tail, sizeof tail - 1);
        } else {
                memset(b, ' ', n);
                if (n >= 2)
                        memcpy(b, "{}", 2);
        }
        b[n] = '\0';
        return b;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls) {
        static int started;
        struct ceiling *c = cls;

        if (!*con_cls) {
                *con_cls = &started;
                return MHD_YES;
        }
        if (*upload_size) {
                *upload_size = 0; /* read and dropped */
                return MHD_YES;
        }
        enum reply k = REPLY_GET;
        if (strcmp(method, "GET") != 0) {
                size_t l = strlen(url);
                k = l >= 6 && strcmp(url + l - 6, "/hosts") == 0 ? REPLY_REGISTER : REPLY_POST;
        }
        return MHD_queue_response(conn, k == REPLY_REGISTER ? MHD_HTTP_CREATED : MHD_HTTP_OK, c->reply[k]);
}

static int parse_size(const char *s, size_t *out) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || end == s || *end || *s == '-' || v > MAX_BODY_BYTES)
                return -EINVAL;
        *out = (size_t) v;
        return 0;
}

/* "127.0.0.1:PORT" or "[::1]:PORT": loopback only. */
static int parse_listen(const char *s, struct sockaddr_storage *ss) {
        char host[64];
        const char *colon = strrchr(s, ':');
        memset(ss, 0, sizeof *ss);
        if (!colon || (size_t) (colon - s) >= sizeof host)
                return -EINVAL;
        memcpy(host, s, (size_t) (colon - s));
        host[colon - s] = '\0';
        char *end;
        long port = strtol(colon + 1, &end, 10);
        if (colon[1] == '\0' || *end || port < 0 || port > 65535)
                return -EINVAL;
        struct sockaddr_in *in4 = (struct sockaddr_in *) ss;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) ss;
        size_t hl = strlen(host);
        if (inet_pton(AF_INET, host, &in4->sin_addr) == 1 && (ntohl(in4->sin_addr.s_addr) >> 24) == 127) {
                in4->sin_family = AF_INET;
                in4->sin_port = htons((uint16_t) port);
                return 0;
        }
        if (hl > 2 && host[0] == '[' && host[hl - 1] == ']') {
                host[hl - 1] = '\0';
                if (inet_pton(AF_INET6, host + 1, &in6->sin6_addr) == 1 && IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) {
                        in6->sin6_family = AF_INET6;
                        in6->sin6_port = htons((uint16_t) port);
                        return 0;
                }
        }
        return -EINVAL;
}

static void usage(FILE *f) {
        fputs("usage: bench-ceiling [--listen 127.0.0.1:PORT] [--get-bytes N] [--register-bytes N]\n"
              "                     [--post-bytes N] [--threads N] [--max-seconds SEC]\n"
              "\n"
              "Answers every request with a fixed JSON body: GET with --get-bytes (default 79,\n"
              "musterd's empty instructions reply), POST .../hosts with --register-bytes (201),\n"
              "any other request with --post-bytes. Request bodies are read and dropped.\n"
              "Listens on loopback only (default 127.0.0.1:0, an ephemeral port) and logs\n"
              "\"serving on ADDR (port N)\" to stderr. Stops on SIGINT/SIGTERM or after\n"
              "--max-seconds (default 1800).\n",
              f);
}

int main(int argc, char **argv) {
        static const struct option opts[] = {
                { "listen", required_argument, NULL, 'l' },     { "get-bytes", required_argument, NULL, 'g' },
                { "register-bytes", required_argument, NULL, 'r' }, { "post-bytes", required_argument, NULL, 'p' },
                { "threads", required_argument, NULL, 't' },    { "max-seconds", required_argument, NULL, 'm' },
                { "help", no_argument, NULL, 'h' },             {},
        };
        const char *listen = "127.0.0.1:0";
        size_t sizes[_REPLY_MAX] = { 79, 400, 2 }, threads = 4, max_s = 1800;
        struct ceiling c = { 0 };
        struct sockaddr_storage ss;
        int opt, rc = 1;

        while ((opt = getopt_long(argc, argv, "h", opts, NULL)) >= 0) {
                switch (opt) {
                case 'l': listen = optarg; break;
                case 'g':
                case 'r':
                case 'p':
                        if (parse_size(optarg, &sizes[opt == 'g' ? REPLY_GET : opt == 'r' ? REPLY_REGISTER : REPLY_POST]) < 0)
                                goto bad;
                        break;
                case 't':
                        if (parse_size(optarg, &threads) < 0 || threads < 1 || threads > 64)
                                goto bad;
                        break;
                case 'm':
                        if (parse_size(optarg, &max_s) < 0 || max_s < 1)
                                goto bad;
                        break;
                case 'h': usage(stdout); return 0;
                default: usage(stderr); return 2;
                }
        }
        if (optind < argc || parse_listen(listen, &ss) < 0) {
                fprintf(stderr, "bench-ceiling: --listen wants a loopback 127.x.x.x:PORT or [::1]:PORT\n");
                return 2;
        }
        for (int k = 0; k < _REPLY_MAX; k++) {
                c.body[k] = json_of_size(sizes[k]);
                c.reply[k] = c.body[k] ? MHD_create_response_from_buffer(sizes[k], c.body[k], MHD_RESPMEM_PERSISTENT)
                                       : NULL;
                if (!c.reply[k] || MHD_add_response_header(c.reply[k], MHD_HTTP_HEADER_CONTENT_TYPE,
                                                           "application/json") != MHD_YES) {
                        fprintf(stderr, "bench-ceiling: out of memory\n");
                        goto out;
                }
        }

        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &set, NULL); /* before MHD's threads start */
        signal(SIGPIPE, SIG_IGN);

        unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_EPOLL;
        struct MHD_Daemon *d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, &c,
                                                MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &ss,
                                                MHD_OPTION_THREAD_POOL_SIZE, (unsigned) threads,
                                                MHD_OPTION_CONNECTION_LIMIT, (unsigned) 20000,
                                                MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) 60,
                                                MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned) 1,
                                                MHD_OPTION_END);
        if (!d) {
                fprintf(stderr, "bench-ceiling: cannot listen on %s\n", listen);
                goto out;
        }
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
        fprintf(stderr, "bench-ceiling: serving on %s (port %u), replies %zu/%zu/%zu bytes\n", listen,
                info ? info->port : 0, sizes[REPLY_GET], sizes[REPLY_REGISTER], sizes[REPLY_POST]);
        struct timespec limit = { .tv_sec = (time_t) max_s };
        int sig = sigtimedwait(&set, NULL, &limit);
        if (sig > 0)
                fprintf(stderr, "bench-ceiling: signal %d: stopping\n", sig);
        else
                fprintf(stderr, "bench-ceiling: %zu s are up: stopping\n", max_s);
        MHD_stop_daemon(d);
        rc = 0;
out:
        for (int k = 0; k < _REPLY_MAX; k++) {
                if (c.reply[k])
                        MHD_destroy_response(c.reply[k]);
                free(c.body[k]);
        }
        return rc;
bad:
        fprintf(stderr, "bench-ceiling: bad value \"%s\"\n", optarg);
        return 2;
}
