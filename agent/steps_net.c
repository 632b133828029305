/* The network steps (steps_net.h): connectivity-check (the probes of
 * reach.c and mtu.c), ntp-synchronizer (one SNTP exchange with every source
 * at once, sntp.h) and domain-resolution (lookup.h), each from its JSON
 * args to its JSON output; then the step table's functions (steps.h) that
 * run them. */
#include "steps_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "json-cleanup.h"
#include "lookup.h"
#include "mtu.h"
#include "netutil.h"
#include "protocol.h"
#include "reach.h"
#include "run.h"
#include "steps.h"

/* ---- small helpers ------------------------------------------------------ */

/* Milliseconds as a JSON number with three decimals (json-c would otherwise
 * print 17 significant digits). */
static json_object *json_ms(double ms) {
        char buf[48];
        snprintf(buf, sizeof buf, "%.3f", ms);
        return json_object_new_double_s(ms, buf);
}

static json_object *json_str_or_null(const char *s) {
        return s ? json_object_new_string(s) : NULL;
}

/* Optional integer member: `def` when absent or null, -EINVAL when not an
 * integer or outside [min, max]. */
static int arg_int(json_object *args, const char *key, int64_t def, int64_t min, int64_t max, int64_t *out) {
        json_object *v = NULL;
        if (!json_object_object_get_ex(args, key, &v) || !v) {
                *out = def;
                return 0;
        }
        if (!json_object_is_type(v, json_type_int))
                return -EINVAL;
        int64_t x = json_object_get_int64(v);
        if (x < min || x > max)
                return -EINVAL;
        *out = x;
        return 0;
}

/* Optional boolean member: `def` when absent or null, -EINVAL when not a boolean. */
static int arg_bool(json_object *args, const char *key, bool def, bool *out) {
        json_object *v = NULL;
        if (!json_object_object_get_ex(args, key, &v) || !v) {
                *out = def;
                return 0;
        }
        if (!json_object_is_type(v, json_type_boolean))
                return -EINVAL;
        *out = json_object_get_boolean(v);
        return 0;
}

/* Optional string member: NULL when absent or null, -EINVAL when not a string. */
static int arg_string(json_object *args, const char *key, const char **out) {
        json_object *v = NULL;
        *out = NULL;
        if (!json_object_object_get_ex(args, key, &v) || !v)
                return 0;
        if (!json_object_is_type(v, json_type_string))
                return -EINVAL;
        *out = json_object_get_string(v);
        return 0;
}

/* Optional array member of at most `max` elements: NULL when absent or null. */
static int arg_array(json_object *args, const char *key, size_t max, json_object **out) {
        json_object *v = NULL;
        *out = NULL;
        if (!json_object_object_get_ex(args, key, &v) || !v)
                return 0;
        if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) > max)
                return -EINVAL;
        *out = v;
        return 0;
}

static void sockaddr_to_text(const struct sockaddr *sa, char *buf, size_t n) {
        buf[0] = '\0';
        if (getnameinfo(sa, sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in),
                        buf, (socklen_t) n, NULL, 0, NI_NUMERICHOST) != 0)
                snprintf(buf, n, "?");
}

/* ---- connectivity-check ------------------------------------------------- */

static json_object *conn_address_json(const struct conn_target *t, unsigned count) {
        static const char *const method[_LANE_MAX] = { "icmp", "icmp", "tcp" };
        json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        json_object_object_add(o, "address", json_object_new_string(t->address));
        json_object_object_add(o, "reachable", json_object_new_boolean(t->received > 0));
        json_object_object_add(o, "method", t->lane >= 0 ? json_object_new_string(method[t->lane]) : NULL);
        json_object_object_add(o, "sent", json_object_new_int((int) t->sent));
        json_object_object_add(o, "received", json_object_new_int((int) t->received));
        json_object_object_add(o, "loss_pct", json_ms(100.0 * (count - t->received) / count));
        if (t->received > 0) {
                json_object_object_add(o, "rtt_min_ms", json_ms((double) t->rtt_min / NS_PER_MS));
                json_object_object_add(o, "rtt_avg_ms", json_ms((double) t->rtt_sum / t->received / NS_PER_MS));
                json_object_object_add(o, "rtt_max_ms", json_ms((double) t->rtt_max / NS_PER_MS));
        }
        const char *why = t->why ? t->why : t->err && t->received == 0 ? strerror(t->err) : NULL;
        json_object_object_add(o, "error", json_str_or_null(why));
        if (t->mtu_state != MTU_NOT_PROBED || t->mtu_why) {
                bool probed = t->mtu_state == MTU_PASSED || t->mtu_state == MTU_FAILED;
                json_object_object_add(o, "mtu", t->mtu > 0 ? json_object_new_int(t->mtu) : NULL);
                json_object_object_add(o, "mtu_ok", probed ? json_object_new_boolean(t->mtu_state == MTU_PASSED) : NULL);
                json_object_object_add(o, "path_mtu", t->path_mtu > 0 ? json_object_new_int(t->path_mtu) : NULL);
                json_object_object_add(o, "mtu_error", json_str_or_null(t->mtu_state == MTU_PASSED ? NULL : t->mtu_why));
        }
        return o;
}

static int conn_output(json_object *peers, const struct conn_target *targets, unsigned count, bool with_mtu,
                       json_object **out) {
        _cleanup_json_ json_object *res = json_object_new_object();
        json_object *arr = json_object_new_array();
        size_t ti = 0;
        if (!res || !arr) {
                json_object_put(arr);
                return -ENOMEM;
        }
        json_object_object_add(res, "peers", arr);
        for (size_t i = 0; i < json_object_array_length(peers); i++) {
                json_object *peer = json_object_array_get_idx(peers, i), *hid = NULL, *addrs = NULL;
                json_object_object_get_ex(peer, "host_id", &hid);
                json_object_object_get_ex(peer, "addresses", &addrs);
                json_object *po = json_object_new_object(), *pa = json_object_new_array();
                if (!po || !pa) {
                        json_object_put(po);
                        json_object_put(pa);
                        return -ENOMEM;
                }
                json_object_array_add(arr, po);
                json_object_object_add(po, "host_id", json_object_get(hid));
                double best_loss = 100.0, best_rtt = -1;
                bool reachable = false;
                const struct conn_target *mtu_pass = NULL, *mtu_fail = NULL;
                size_t na = addrs ? json_object_array_length(addrs) : 0;
                for (size_t a = 0; a < na; a++, ti++) {
                        const struct conn_target *t = &targets[ti];
                        json_object *ao = conn_address_json(t, count);
                        if (!ao)
                                return -ENOMEM;
                        json_object_array_add(pa, ao);
                        double loss = 100.0 * (count - t->received) / count;
                        if (loss < best_loss)
                                best_loss = loss;
                        if (t->received > 0) {
                                double avg = (double) t->rtt_sum / t->received / NS_PER_MS;
                                reachable = true;
                                if (best_rtt < 0 || avg < best_rtt)
                                        best_rtt = avg;
                        }
                        if (t->mtu_state == MTU_FAILED && !mtu_fail)
                                mtu_fail = t;
                        else if (t->mtu_state == MTU_PASSED && (!mtu_pass || t->mtu < mtu_pass->mtu))
                                mtu_pass = t;
                }
                json_object_object_add(po, "reachable", json_object_new_boolean(reachable));
                json_object_object_add(po, "loss_pct", json_ms(best_loss));
                json_object_object_add(po, "rtt_avg_ms", best_rtt >= 0 ? json_ms(best_rtt) : NULL);
                if (with_mtu) {
                        /* Every address probed must pass; the peer's mtu is
                         * the failing one's, else the smallest that passed. */
                        const struct conn_target *m = mtu_fail ? mtu_fail : mtu_pass;
                        json_object_object_add(po, "mtu_ok", m ? json_object_new_boolean(!mtu_fail) : NULL);
                        json_object_object_add(po, "mtu", m && m->mtu > 0 ? json_object_new_int(m->mtu) : NULL);
                        json_object_object_add(po, "path_mtu",
                                               mtu_fail && mtu_fail->path_mtu > 0 ? json_object_new_int(mtu_fail->path_mtu)
                                                                                  : NULL);
                }
                json_object_object_add(po, "addresses", pa);
        }
        *out = TAKE_PTR(res);
        return 0;
}

/* Check the args' shape; counts the addresses. */
static int conn_validate(json_object *peers, size_t *n_targets) {
        size_t n = 0;
        for (size_t i = 0; i < json_object_array_length(peers); i++) {
                json_object *peer = json_object_array_get_idx(peers, i), *hid = NULL, *addrs = NULL;
                if (!json_object_is_type(peer, json_type_object))
                        return -EINVAL;
                if (!json_object_object_get_ex(peer, "host_id", &hid) || !json_object_is_type(hid, json_type_string) ||
                    json_object_get_string_len(hid) == 0 || json_object_get_string_len(hid) > 64)
                        return -EINVAL;
                int r = arg_array(peer, "addresses", CONN_MAX_ADDRESSES, &addrs);
                if (r < 0)
                        return r;
                for (size_t a = 0; addrs && a < json_object_array_length(addrs); a++) {
                        json_object *v = json_object_array_get_idx(addrs, a);
                        if (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) > 255)
                                return -EINVAL;
                        n++;
                }
        }
        *n_targets = n;
        return 0;
}

int step_connectivity_check(json_object *args, json_object **out) {
        json_object *peers = NULL;
        const char *method = NULL;
        int64_t count, timeout_ms, tcp_port;
        size_t n_targets = 0;
        bool mtu_probe = true;
        int r;

        if (!out)
                return -EINVAL;
        *out = NULL;
        if (!json_object_is_type(args, json_type_object))
                return -EINVAL;
        if ((r = arg_array(args, "peers", CONN_MAX_PEERS, &peers)) < 0 ||
            (r = arg_int(args, "count", 3, 1, CONN_MAX_COUNT, &count)) < 0 ||
            (r = arg_int(args, "timeout_ms", 1000, 10, 30000, &timeout_ms)) < 0 ||
            (r = arg_int(args, "tcp_port", 0, 1, 65535, &tcp_port)) < 0 ||
            (r = arg_string(args, "method", &method)) < 0 ||
            (r = arg_bool(args, "mtu_probe", true, &mtu_probe)) < 0)
                return r;
        if (!peers)
                return -EINVAL;
        bool want_icmp = true, want_tcp = true;
        if (method && strcmp(method, "icmp") == 0)
                want_tcp = false;
        else if (method && strcmp(method, "tcp") == 0)
                want_icmp = false;
        else if (method && strcmp(method, "auto") != 0)
                return -EINVAL;
        if (!want_icmp && tcp_port == 0)
                return -EINVAL;
        if (!want_tcp || tcp_port == 0)
                want_tcp = false;
        if ((r = conn_validate(peers, &n_targets)) < 0)
                return r;

        _cleanup_free_ struct conn_target *targets = calloc(n_targets ? n_targets : 1, sizeof *targets);
        if (!targets)
                return -ENOMEM;
        size_t ti = 0;
        for (size_t i = 0; i < json_object_array_length(peers); i++) {
                json_object *addrs = NULL;
                json_object_object_get_ex(json_object_array_get_idx(peers, i), "addresses", &addrs);
                for (size_t k = 0; addrs && k < json_object_array_length(addrs); k++)
                        targets[ti++].address = json_object_get_string(json_object_array_get_idx(addrs, k));
        }
        struct reach_args ra = { .count = (unsigned) count, .timeout_ns = timeout_ms * NS_PER_MS,
                                 .tcp_port = (uint16_t) tcp_port, .want_icmp = want_icmp, .want_tcp = want_tcp };
        if ((r = reach_probe_all(targets, n_targets, &ra)) < 0)
                return r;
        if (mtu_probe && n_targets > 0 && (r = mtu_probe_all(targets, n_targets, ra.timeout_ns)) < 0)
                return r;
        return conn_output(peers, targets, (unsigned) count, mtu_probe, out);
}

/* ---- ntp-synchronizer --------------------------------------------------- */

struct ntp_source {
        const char *text;
        char host[DNS_NAME_MAX + 2];
        uint16_t port;
        bool needs_lookup;
        struct sockaddr_storage sa;
        socklen_t salen;
        char address[INET6_ADDRSTRLEN + IFNAMSIZ + 2];
        int fd;
        uint64_t tx;             /* our transmit timestamp: T1 */
        int64_t sent_mono;
        bool done, ok;
        const char *why;         /* fixed reason, or ... */
        char whybuf[384];        /* ... one written here */
        struct sntp_packet reply;
        int64_t offset_ns, delay_ns;
};

/* A source as ntp_source_split() reads it; no port: SNTP's. */
static int ntp_parse_source(const char *s, char *host, size_t hostlen, uint16_t *port) {
        int r = ntp_source_split(s, host, hostlen, port);
        if (r == 0 && *port == 0)
                *port = SNTP_PORT;
        return r;
}

static void ntp_send(struct ntp_source *s) {
        uint8_t pkt[SNTP_PACKET_SIZE];
        struct sntp_packet req;
        uint16_t noise;

        s->fd = socket(s->sa.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (s->fd < 0 || connect(s->fd, (struct sockaddr *) &s->sa, s->salen) < 0) {
                snprintf(s->whybuf, sizeof s->whybuf, "%s", strerror(errno));
                s->why = s->whybuf;
                s->done = true;
                return;
        }
        /* Our transmit time with random low bits (15 µs at most): a reply
         * must echo it, which an off-path sender cannot guess. */
        random_bytes(&noise, sizeof noise);
        s->sent_mono = clock_ns(CLOCK_MONOTONIC);
        s->tx = (sntp_ts_from_unix_ns(clock_ns(CLOCK_REALTIME)) & ~0xffffULL) | noise;
        sntp_request_init(&req, s->tx);
        sntp_packet_encode(&req, pkt);
        if (send(s->fd, pkt, sizeof pkt, 0) != (ssize_t) sizeof pkt) {
                snprintf(s->whybuf, sizeof s->whybuf, "%s", strerror(errno));
                s->why = s->whybuf;
                s->done = true;
        }
}

static void ntp_receive(struct ntp_source *s) {
        uint8_t buf[512];
        for (;;) {
                ssize_t n = recv(s->fd, buf, sizeof buf, 0);
                int64_t now = clock_ns(CLOCK_MONOTONIC);
                struct sntp_packet rep;
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN || errno == EWOULDBLOCK)
                                return;
                        snprintf(s->whybuf, sizeof s->whybuf, "%s", strerror(errno));
                        s->why = s->whybuf;
                        s->done = true;
                        return;
                }
                if (sntp_packet_decode(buf, (size_t) n, &rep) < 0) {
                        s->why = "short reply";
                        continue;
                }
                enum sntp_verdict v = sntp_reply_check(&rep, s->tx);
                if (v == SNTP_BAD_MODE || v == SNTP_ORIGIN_MISMATCH) { /* not ours: keep waiting */
                        s->why = sntp_verdict_to_string(v);
                        continue;
                }
                s->done = true;
                if (v == SNTP_KISS_OF_DEATH) {
                        char code[5];
                        for (int i = 0; i < 4; i++) {
                                char c = (char) (rep.ref_id >> (24 - 8 * i));
                                code[i] = c >= 0x21 && c <= 0x7e ? c : '?';
                        }
                        code[4] = '\0';
                        snprintf(s->whybuf, sizeof s->whybuf, "kiss-o'-death %s", code);
                        s->why = s->whybuf;
                        return;
                }
                if (v != SNTP_VALID) {
                        s->why = sntp_verdict_to_string(v);
                        return;
                }
                uint64_t t4 = s->tx + sntp_interval(now - s->sent_mono);
                s->reply = rep;
                sntp_offset_delay(s->tx, rep.rx_ts, rep.tx_ts, t4, &s->offset_ns, &s->delay_ns);
                if (s->delay_ns < 0)
                        s->delay_ns = 0;
                s->ok = true;
                s->why = NULL;
                return;
        }
}

static int ntp_query_all(struct ntp_source *src, size_t n, int64_t timeout_ms) {
        struct pollfd pfd[NTP_MAX_SOURCES];
        size_t idx[NTP_MAX_SOURCES];
        for (size_t i = 0; i < n; i++)
                if (!src[i].done)
                        ntp_send(&src[i]);
        int64_t deadline = clock_ns(CLOCK_MONOTONIC) + timeout_ms * NS_PER_MS;
        for (;;) {
                nfds_t k = 0;
                for (size_t i = 0; i < n; i++)
                        if (!src[i].done) {
                                pfd[k] = (struct pollfd) { .fd = src[i].fd, .events = POLLIN };
                                idx[k++] = i;
                        }
                int64_t left = deadline - clock_ns(CLOCK_MONOTONIC);
                if (k == 0 || left <= 0)
                        break;
                int r = poll(pfd, k, (int) ((left + NS_PER_MS - 1) / NS_PER_MS));
                if (r < 0 && errno != EINTR)
                        return -errno;
                for (nfds_t i = 0; r > 0 && i < k; i++)
                        if (pfd[i].revents)
                                ntp_receive(&src[idx[i]]);
        }
        for (size_t i = 0; i < n; i++) {
                if (!src[i].done) {
                        src[i].done = true;
                        if (!src[i].why)
                                src[i].why = "timed out";
                        else {
                                char tmp[sizeof src[i].whybuf];
                                snprintf(tmp, sizeof tmp, "timed out (%s)", src[i].why);
                                memcpy(src[i].whybuf, tmp, sizeof tmp);
                                src[i].why = src[i].whybuf;
                        }
                }
                if (src[i].fd >= 0)
                        close(src[i].fd);
                src[i].fd = -1;
        }
        return 0;
}

static int ntp_resolve(struct ntp_source *src, size_t n, int64_t timeout_ms) {
        const char *nodes[NTP_MAX_SOURCES] = { 0 };
        size_t which[NTP_MAX_SOURCES], k = 0;
        struct lookup res[NTP_MAX_SOURCES];
        for (size_t i = 0; i < n; i++)
                if (src[i].needs_lookup) {
                        nodes[k] = src[i].host;
                        which[k++] = i;
                }
        int r = lookup_all(nodes, k, AF_UNSPEC, SOCK_DGRAM, timeout_ms, res);
        if (r < 0)
                return r;
        for (size_t j = 0; j < k; j++) {
                struct ntp_source *s = &src[which[j]];
                const struct addrinfo *ai = res[j].res;
                while (ai && ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
                              ai->ai_addrlen > sizeof s->sa))
                        ai = ai->ai_next;
                if (!ai) {
                        char ebuf[64];
                        const char *e = lookup_error(&res[j], ebuf, sizeof ebuf);
                        snprintf(s->whybuf, sizeof s->whybuf, "cannot resolve %s: %s", s->host,
                                 e ? e : "no address");
                        s->why = s->whybuf;
                        s->done = true;
                } else {
                        memcpy(&s->sa, ai->ai_addr, ai->ai_addrlen);
                        s->salen = ai->ai_addrlen;
                }
                if (res[j].res)
                        freeaddrinfo(res[j].res);
        }
        return 0;
}

static json_object *ntp_source_json(const struct ntp_source *s) {
        json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        json_object_object_add(o, "source", json_object_new_string(s->text));
        json_object_object_add(o, "address", s->address[0] ? json_object_new_string(s->address) : NULL);
        json_object_object_add(o, "reachable", json_object_new_boolean(s->ok));
        json_object_object_add(o, "offset_ms", s->ok ? json_ms((double) s->offset_ns / NS_PER_MS) : NULL);
        json_object_object_add(o, "delay_ms", s->ok ? json_ms((double) s->delay_ns / NS_PER_MS) : NULL);
        json_object_object_add(o, "stratum", s->ok ? json_object_new_int(s->reply.stratum) : NULL);
        json_object_object_add(o, "error", json_str_or_null(s->why));
        return o;
}

/* The coordinator's clock when the step started, from its Date (IMF
 * fixdate or RFC 3339) received age_ms ago. 0 or -EINVAL. */
static int ntp_coordinator_ms(const char *date, int64_t age_ms, int64_t *date_ms) {
        int64_t s;
        bool sub = false;

        if (date_parse_imf_fixdate(date, &s) == 0)
                *date_ms = s * 1000;
        else if (date_parse_rfc3339(date, date_ms, &sub) < 0)
                return -EINVAL;
        /* A whole second was printed: the coordinator's clock was
         * somewhere in [D, D+1), the middle is the best guess. */
        if (!sub)
                *date_ms += 500;
        *date_ms += age_ms;
        return 0;
}

/* The n sources of the args into src: each an address, a name to look up,
 * or done with the reason it is neither. -EINVAL when one is not a string
 * of at most NTP_MAX_SOURCE_LEN bytes. */
static int ntp_read_sources(json_object *sources, size_t n, struct ntp_source *src) {
        for (size_t i = 0; i < n; i++) {
                json_object *v = json_object_array_get_idx(sources, i);
                if (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) > NTP_MAX_SOURCE_LEN)
                        return -EINVAL;
        }
        for (size_t i = 0; i < n; i++) {
                struct ntp_source *s = &src[i];
                s->text = json_object_get_string(json_object_array_get_idx(sources, i));
                s->fd = -1;
                if (ntp_parse_source(s->text, s->host, sizeof s->host, &s->port) < 0) {
                        s->why = "not a host, host:port or [address]:port";
                        s->done = true;
                } else if (parse_numeric_address(s->host, &s->sa, &s->salen) == 0) {
                        /* an address */
                } else if (dns_name_check(s->host, false) == 0) {
                        s->needs_lookup = true;
                } else {
                        s->why = "not a valid host name or address";
                        s->done = true;
                }
        }
        return 0;
}

/* The step's output: every source, and the offset of the nearest one that
 * answered, else of the coordinator's Date when there is one. */
static int ntp_output(const struct ntp_source *src, size_t n, bool have_date, int64_t date_ms,
                      int64_t max_offset_ms, json_object **out) {
        const struct ntp_source *best = NULL;
        for (size_t i = 0; i < n; i++)
                if (src[i].ok && (!best || src[i].delay_ns < best->delay_ns))
                        best = &src[i];

        _cleanup_json_ json_object *res = json_object_new_object();
        json_object *list = json_object_new_array();
        if (!res || !list) {
                json_object_put(list);
                return -ENOMEM;
        }
        json_object_object_add(res, "sources", list);
        for (size_t i = 0; i < n; i++) {
                json_object *o = ntp_source_json(&src[i]);
                if (!o)
                        return -ENOMEM;
                json_object_array_add(list, o);
        }
        double offset_ms = 0;
        const char *method = NULL, *source = NULL, *error = NULL;
        if (best) {
                offset_ms = (double) best->offset_ns / NS_PER_MS;
                method = "sntp";
                source = best->text;
        } else if (have_date) {
                offset_ms = (double) (date_ms - clock_ns(CLOCK_REALTIME) / NS_PER_MS);
                method = "coordinator-date";
                source = "coordinator";
        } else {
                error = "no NTP source answered and no coordinator_date was given";
        }
        /* Synced means to an NTP source; the coordinator's Date is information. */
        bool synced = best && offset_ms <= (double) max_offset_ms && offset_ms >= -(double) max_offset_ms;
        json_object_object_add(res, "synced", json_object_new_boolean(synced));
        json_object_object_add(res, "offset_ms", method ? json_ms(offset_ms) : NULL);
        json_object_object_add(res, "source", json_str_or_null(source));
        json_object_object_add(res, "method", json_str_or_null(method));
        json_object_object_add(res, "max_offset_ms", json_object_new_int64(max_offset_ms));
        json_object_object_add(res, "error", json_str_or_null(error));
        *out = TAKE_PTR(res);
        return 0;
}

int step_ntp_synchronizer(json_object *args, json_object **out) {
        json_object *sources = NULL;
        const char *date = NULL;
        int64_t timeout_ms, max_offset_ms, date_age_ms, date_ms = 0;
        bool have_date = false;
        int r;

        if (!out)
                return -EINVAL;
        *out = NULL;
        if (!json_object_is_type(args, json_type_object))
                return -EINVAL;
        if ((r = arg_array(args, "ntp_sources", NTP_MAX_SOURCES, &sources)) < 0 ||
            (r = arg_string(args, "coordinator_date", &date)) < 0 ||
            (r = arg_int(args, "timeout_ms", 2000, 10, 60000, &timeout_ms)) < 0 ||
            (r = arg_int(args, "max_offset_ms", 500, 1, 3600000, &max_offset_ms)) < 0 ||
            (r = arg_int(args, "coordinator_date_age_ms", 0, 0, 3600000, &date_age_ms)) < 0)
                return r;
        if (date) {
                if (ntp_coordinator_ms(date, date_age_ms, &date_ms) < 0)
                        return -EINVAL;
                have_date = true;
        }
        size_t n = sources ? json_object_array_length(sources) : 0;
        if (n == 0 && !have_date)
                return -EINVAL;

        struct ntp_source src[NTP_MAX_SOURCES];
        memset(src, 0, sizeof src);
        if ((r = ntp_read_sources(sources, n, src)) < 0)
                return r;
        if ((r = ntp_resolve(src, n, timeout_ms)) < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (!src[i].done) {
                        sockaddr_set_port(&src[i].sa, src[i].port);
                        sockaddr_to_text((struct sockaddr *) &src[i].sa, src[i].address, sizeof src[i].address);
                }
        if ((r = ntp_query_all(src, n, timeout_ms)) < 0)
                return r;
        return ntp_output(src, n, have_date, date_ms, max_offset_ms, out);
}

/* ---- domain-resolution -------------------------------------------------- */

/* Append the address as text unless it is there already. */
static int add_unique_address(json_object *arr, const struct sockaddr *sa) {
        char buf[INET6_ADDRSTRLEN];
        const void *a = sa->sa_family == AF_INET ? (const void *) &((const struct sockaddr_in *) sa)->sin_addr
                                                 : (const void *) &((const struct sockaddr_in6 *) sa)->sin6_addr;
        if (!inet_ntop(sa->sa_family, a, buf, sizeof buf))
                return 0;
        for (size_t i = 0; i < json_object_array_length(arr); i++)
                if (strcmp(json_object_get_string(json_object_array_get_idx(arr, i)), buf) == 0)
                        return 0;
        json_object *s = json_object_new_string(buf);
        if (!s || json_object_array_add(arr, s) < 0) {
                json_object_put(s);
                return -ENOMEM;
        }
        return 0;
}

/* The name to look up for `name` into queried: itself, or with its
 * wildcard label replaced by a random one. NULL, or why it is not looked
 * up. */
static const char *dns_query_name(const char *name, char *queried, size_t n) {
        snprintf(queried, n, "%s", name);
        if (dns_name_check(name, true) < 0)
                return "not a valid host name";
        if (name[0] == '*') {
                uint8_t rnd[6];
                random_bytes(rnd, sizeof rnd);
                if (dns_name_expand_wildcard(name, rnd, queried, n) < 0)
                        return "name too long once the wildcard is replaced";
        }
        return NULL;
}

/* One name's entry of the output, appended to list: its addresses from
 * the lookup l (NULL when it was not looked up, because of why). */
static int dns_resolution_json(json_object *list, const char *name, const char *queried, const char *why,
                               const struct lookup *l) {
        json_object *o = json_object_new_object(), *v4 = json_object_new_array(), *v6 = json_object_new_array();
        char ebuf[96];
        const char *err = why;

        if (!o || !v4 || !v6 || json_object_array_add(list, o) < 0) {
                json_object_put(o);
                json_object_put(v4);
                json_object_put(v6);
                return -ENOMEM;
        }
        json_object_object_add(o, "name", json_object_new_string(name));
        json_object_object_add(o, "queried_name", json_object_new_string(queried));
        json_object_object_add(o, "ipv4_addresses", v4);
        json_object_object_add(o, "ipv6_addresses", v6);
        if (l) {
                err = lookup_error(l, ebuf, sizeof ebuf);
                for (const struct addrinfo *ai = l->res; ai; ai = ai->ai_next) {
                        int r = 0;
                        if (ai->ai_family == AF_INET)
                                r = add_unique_address(v4, ai->ai_addr);
                        else if (ai->ai_family == AF_INET6)
                                r = add_unique_address(v6, ai->ai_addr);
                        if (r < 0)
                                return r;
                }
        }
        json_object_object_add(o, "error", json_str_or_null(err));
        return 0;
}

int step_domain_resolution(json_object *args, json_object **out) {
        json_object *names = NULL;
        int64_t timeout_ms;
        int r;

        if (!out)
                return -EINVAL;
        *out = NULL;
        if (!json_object_is_type(args, json_type_object))
                return -EINVAL;
        if ((r = arg_array(args, "names", DNS_MAX_NAMES, &names)) < 0 ||
            (r = arg_int(args, "timeout_ms", 5000, 10, 60000, &timeout_ms)) < 0)
                return r;
        if (!names)
                return -EINVAL;
        size_t n = json_object_array_length(names);
        for (size_t i = 0; i < n; i++) {
                json_object *v = json_object_array_get_idx(names, i);
                if (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) > DNS_NAME_MAX + 1)
                        return -EINVAL;
        }

        char queried[DNS_MAX_NAMES][DNS_NAME_MAX + 2];
        const char *why[DNS_MAX_NAMES] = { 0 };
        const char *nodes[DNS_MAX_NAMES];
        size_t which[DNS_MAX_NAMES], k = 0;
        struct lookup res[DNS_MAX_NAMES];
        for (size_t i = 0; i < n; i++) {
                const char *name = json_object_get_string(json_object_array_get_idx(names, i));
                if ((why[i] = dns_query_name(name, queried[i], sizeof queried[i])))
                        continue;
                nodes[k] = queried[i];
                which[k++] = i;
        }
        if ((r = lookup_all(nodes, k, AF_UNSPEC, SOCK_STREAM, timeout_ms, res)) < 0)
                return r;

        _cleanup_json_ json_object *result = json_object_new_object();
        json_object *list = json_object_new_array();
        if (!result || !list) {
                json_object_put(list);
                r = -ENOMEM;
                goto finish;
        }
        json_object_object_add(result, "resolutions", list);
        for (size_t i = 0, j = 0; i < n; i++) {
                const char *name = json_object_get_string(json_object_array_get_idx(names, i));
                bool looked_up = j < k && which[j] == i;
                if ((r = dns_resolution_json(list, name, queried[i], why[i], looked_up ? &res[j] : NULL)) < 0)
                        goto finish;
                if (looked_up)
                        j++;
        }
        *out = TAKE_PTR(result);
        r = 0;
finish:
        for (size_t j = 0; j < k; j++)
                if (res[j].res)
                        freeaddrinfo(res[j].res);
        return r;
}

/* ---- the table's step functions (steps.h) -------------------------------- */

#define NTP_MAX_DATE_AGE_MS 3600000

json_object *run_ntp_args(json_object *args, const char *date, int64_t age_ms) {
        json_object *copy = NULL, *v;

        if (args) {
                if (json_object_deep_copy(args, &copy, NULL) < 0)
                        return NULL;
        } else if (!(copy = json_object_new_object()))
                return NULL;
        if (!date || !*date || !json_object_is_type(copy, json_type_object))
                return copy;
        if (json_object_object_get_ex(copy, "coordinator_date", &v) && v)
                return copy; /* the coordinator said what to compare with */
        if (age_ms < 0)
                age_ms = 0;
        if (age_ms > NTP_MAX_DATE_AGE_MS)
                age_ms = NTP_MAX_DATE_AGE_MS;
        json_object *d = json_object_new_string(date), *a = json_object_new_int64(age_ms);
        if (!d || !a || json_object_object_add(copy, "coordinator_date", d) < 0) {
                json_object_put(d);
                json_object_put(a);
                json_object_put(copy);
                return NULL;
        }
        if (json_object_object_add(copy, "coordinator_date_age_ms", a) < 0) {
                json_object_put(a);
                json_object_put(copy);
                return NULL;
        }
        return copy;
}

/* One of the runners above on args, its answer as the step's result. */
static void net_step(const struct run_instruction *in, json_object *args, int (*runner)(json_object *, json_object **),
                     struct run_step_result *res) {
        json_object *out = NULL;
        int r = runner(args, &out);
        if (r < 0) {
                json_object_put(out);
                res->exit_code = 1;
                res->error = r == -EINVAL ? step_printf("the arguments of step %s are not valid for %s", in->step_id,
                                                        in->step_type)
                                          : (errno = -r, step_printf("step %s failed: %m", in->step_type));
                return;
        }
        res->exit_code = 0;
        res->output = out;
}

void run_step_connectivity_check(const struct run_instruction *in, const struct run_step_context *ctx,
                                 struct run_step_result *res) {
        net_step(in, in->args, step_connectivity_check, res);
}

/* With the coordinator's Date of the instructions reply, aged, unless the
 * args name a date of their own (run_ntp_args). */
void run_step_ntp_synchronizer(const struct run_instruction *in, const struct run_step_context *ctx,
                               struct run_step_result *res) {
        _cleanup_json_ json_object *args = run_ntp_args(in->args, ctx->coordinator_date,
                                                        ctx->coordinator_date ? step_mono_ms() - ctx->date_received_ms
                                                                              : 0);
        if (!args) {
                res->exit_code = 1;
                res->error = step_printf("out of memory");
                return;
        }
        net_step(in, args, step_ntp_synchronizer, res);
}

void run_step_domain_resolution(const struct run_instruction *in, const struct run_step_context *ctx,
                                struct run_step_result *res) {
        net_step(in, in->args, step_domain_resolution, res);
}
