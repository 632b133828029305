/* bench-loadgen: the load generator of the coordinator benchmark. It plays
 * N simulated agents against musterd (or against bench-ceiling), or against
 * several musterd replicas at once (connections spread over their URLs),
 * over loopback with one libcurl multi handle, bounded in count and in
 * time, and prints per-phase figures; `verify` checks after a crash that
 * what was acknowledged is still in the store. Used by
 * bench/coordinator/run; not a test. Run with --help for the modes and
 * options. */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "json-cleanup.h"

#define API "/api/v2"
#define MAX_FILE_BYTES (16u << 20)
#define MAX_HOSTS 1000000u
#define MAX_CONCURRENCY 4096u
#define MAX_TEMPLATES 64
#define MAX_MACS 64          /* distinct MACs rewritten per inventory */
#define URL_MAX 512
#define MAX_URLS 16          /* servers one load is spread over (replicas) */
#define UUID_LEN 36
#define HOSTNAME_FMT "bench-host-%08u"
#define HOSTNAME_LEN 19      /* "bench-host-" + 8 digits */
#define LIST_PAGE 1000       /* the coordinator's largest page */

static int64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- simulated hosts and their recorded inventories --------------------- */

struct sim_host {
        char id[UUID_LEN + 1];
        char hostname[HOSTNAME_LEN + 1];
        bool registered;  /* registration acknowledged (200/201) */
        bool inventoried; /* inventory acknowledged (200) */
};

/* A place in a template body that is rewritten per host. */
enum patch_kind { PATCH_HOST_ID, PATCH_HOSTNAME, PATCH_MAC };
struct patch {
        size_t off;
        enum patch_kind kind;
        unsigned mac_index;
};

/* A recorded inventory as a whole step-result body, with placeholders for
 * what makes a host distinct: its id, hostname and MAC addresses. A host's
 * body is a copy with the placeholders overwritten, same length. */
struct inv_template {
        char *text;
        size_t len;
        struct patch *patches;
        size_t n_patches;
};

static const char host_id_placeholder[] = "5a5a5a5a-5a5a-4a5a-9a5a-5a5a5a5a5a5a";
static const char hostname_placeholder[] = "bench-host-########";

static void mac_placeholder(unsigned k, char out[18]) {
        snprintf(out, 18, "0e:%02x:ee:ee:ee:ee", k);
}

static int read_file(const char *path, char **out, size_t *len) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        struct stat st;
        if (!f)
                return -errno;
        if (fstat(fileno(f), &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        if ((uint64_t) st.st_size > MAX_FILE_BYTES)
                return -EFBIG;
        char *b = malloc((size_t) st.st_size + 1);
        if (!b)
                return -ENOMEM;
        size_t n = fread(b, 1, (size_t) st.st_size, f);
        b[n] = '\0';
        *out = b;
        *len = n;
        return 0;
}

/* The first line of a token file, without trailing whitespace. */
static int read_token(const char *path, char **out) {
        char *b;
        size_t len;
        int r = read_file(path, &b, &len);
        if (r < 0)
                return r;
        b[strcspn(b, "\r\n")] = '\0';
        if (!*b) {
                free(b);
                return -EINVAL;
        }
        *out = b;
        return 0;
}

static int add_patches(struct inv_template *t, const char *needle, enum patch_kind kind, unsigned mac_index) {
        size_t nl = strlen(needle);
        bool found = false;
        for (const char *p = t->text; (p = strstr(p, needle)); p += nl) {
                struct patch *np = realloc(t->patches, (t->n_patches + 1) * sizeof *np);
                if (!np)
                        return -ENOMEM;
                t->patches = np;
                t->patches[t->n_patches++] = (struct patch) { (size_t) (p - t->text), kind, mac_index };
                found = true;
        }
        return found ? 0 : -EINVAL;
}

/* Load one recorded inventory (tests/fixtures/<machine>/expected.json). */
static int template_load(const char *path, struct inv_template *t) {
        _cleanup_json_ json_object *inv = json_object_from_file(path);
        char macs[MAX_MACS][18];
        unsigned n_macs = 0;
        json_object *ifs;
        int r;

        memset(t, 0, sizeof *t);
        if (!inv || !json_object_is_type(inv, json_type_object))
                return -EINVAL;
        json_object_object_add(inv, "host_id", json_object_new_string(host_id_placeholder));
        json_object_object_add(inv, "hostname", json_object_new_string(hostname_placeholder));
        /* Interfaces that share a MAC (a bond and its first slave, a VLAN and
         * its parent) keep sharing one after the rewrite. */
        if (json_object_object_get_ex(inv, "interfaces", &ifs) && json_object_is_type(ifs, json_type_array)) {
                for (size_t i = 0; i < json_object_array_length(ifs); i++) {
                        json_object *nic = json_object_array_get_idx(ifs, i), *mac;
                        if (!json_object_object_get_ex(nic, "mac_address", &mac) ||
                            !json_object_is_type(mac, json_type_string) || json_object_get_string_len(mac) != 17)
                                continue;
                        unsigned k = 0;
                        while (k < n_macs && strcasecmp(macs[k], json_object_get_string(mac)) != 0)
                                k++;
                        if (k == n_macs) {
                                if (n_macs == MAX_MACS)
                                        continue;
                                snprintf(macs[n_macs++], 18, "%s", json_object_get_string(mac));
                        }
                        char ph[18];
                        mac_placeholder(k, ph);
                        json_object_object_add(nic, "mac_address", json_object_new_string(ph));
                }
        }
        const char *inv_text = json_object_to_json_string_ext(inv, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        static const char head[] = "{\"step_id\":\"inventory-bench\",\"step_type\":\"inventory\",\"exit_code\":0,\"output\":";
        t->len = strlen(head) + strlen(inv_text) + 1;
        t->text = malloc(t->len + 1);
        if (!t->text)
                return -ENOMEM;
        snprintf(t->text, t->len + 1, "%s%s}", head, inv_text);
        if ((r = add_patches(t, host_id_placeholder, PATCH_HOST_ID, 0)) < 0 ||
            (r = add_patches(t, hostname_placeholder, PATCH_HOSTNAME, 0)) < 0)
                return r;
        for (unsigned k = 0; k < n_macs; k++) {
                char ph[18];
                mac_placeholder(k, ph);
                if ((r = add_patches(t, ph, PATCH_MAC, k)) < 0)
                        return r;
        }
        return 0;
}

static void template_free(struct inv_template *t) {
        free(t->text);
        free(t->patches);
}

/* Host i's body into buf (t->len bytes, not NUL-terminated). */
static void template_render(const struct inv_template *t, const struct sim_host *h, size_t i, char *buf) {
        memcpy(buf, t->text, t->len);
        for (size_t p = 0; p < t->n_patches; p++) {
                char tmp[24];
                const struct patch *pa = &t->patches[p];
                switch (pa->kind) {
                case PATCH_HOST_ID:
                        memcpy(buf + pa->off, h->id, UUID_LEN);
                        break;
                case PATCH_HOSTNAME:
                        memcpy(buf + pa->off, h->hostname, HOSTNAME_LEN);
                        break;
                case PATCH_MAC: {
                        uint32_t v = (uint32_t) i;
                        snprintf(tmp, sizeof tmp, "0e:%02x:%02x:%02x:%02x:%02x", pa->mac_index & 0xff, v >> 24,
                                 (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff);
                        memcpy(buf + pa->off, tmp, 17);
                        break;
                }
                }
        }
}

/* A random (version 4) UUID. */
static int uuid_random(char out[UUID_LEN + 1]) {
        uint8_t b[16];
        if (getrandom(b, sizeof b, 0) != (ssize_t) sizeof b)
                return -errno;
        b[6] = (uint8_t) ((b[6] & 0x0f) | 0x40);
        b[8] = (uint8_t) ((b[8] & 0x3f) | 0x80);
        snprintf(out, UUID_LEN + 1, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
        return 0;
}

/* ---- phases ---------------------------------------------------------------- */

enum req_kind { RQ_REGISTER, RQ_INVENTORY, RQ_POLL, RQ_HOST_GET };

static const char *req_kind_to_string(enum req_kind k) {
        switch (k) {
        case RQ_REGISTER: return "register";
        case RQ_INVENTORY: return "inventory";
        case RQ_POLL: return "polls";
        case RQ_HOST_GET: return "host-get";
        }
        return "?";
}

struct phase {
        const char *name;
        enum req_kind kind;
        const size_t *order;   /* host indices, issued in this order (cycled) */
        size_t n_order;
        size_t total;          /* requests to issue */
        double min_s;          /* closed loop: go on past `total` until this long */
        double interval_s;     /* > 0: open loop, each host of `order` every interval_s */
        double cap_s;          /* hard wall-clock cap */
        bool keep_body;        /* responses are checked (verify) */
        /* results */
        size_t issued, ok, http_err, net_err, unfinished, late;
        uint32_t *lat_us;      /* of the ok requests */
        size_t n_lat, lat_cap;
        uint64_t resp_bytes;   /* of the ok requests */
        double wall_s;
        bool capped;
        long first_status;
        char first_error[CURL_ERROR_SIZE + 128];
        size_t checked_ok, checked_bad; /* verify */
        size_t ok_by_url[MAX_URLS];     /* with several URLs: ok per URL */
};

struct slot {
        CURL *easy;
        unsigned url_index;    /* the URL of g->bases this slot's requests go to */
        size_t host;
        int64_t t0;            /* latency origin: the send time (closed loop) or the scheduled time (open) */
        char url[URL_MAX];
        char *body;            /* request body buffer */
        size_t body_cap;
        char *resp;            /* kept response body (keep_body) */
        size_t resp_len, resp_cap;
        bool keep;
        char err[CURL_ERROR_SIZE];
};

struct loadgen {
        const char *const *bases; /* the servers' URLs; slot i sends to bases[i % n_bases] */
        size_t n_bases;
        unsigned next_url;        /* several URLs: the one the next request should go to */
        const char *infra_env;
        unsigned concurrency;
        CURLM *multi;
        struct slot *slots;
        unsigned *free_slots;
        unsigned n_free;
        struct curl_slist *get_hdrs, *post_hdrs;
        struct sim_host *hosts;
        size_t n_hosts;
        struct inv_template tmpl[MAX_TEMPLATES];
        size_t n_tmpl;
        FILE *acks;
};

static size_t on_data(char *data, size_t size, size_t n, void *userdata) {
        struct slot *s = userdata;
        size_t len = size * n;
        if (s->keep) {
                if (s->resp_len + len + 1 > s->resp_cap) {
                        size_t cap = s->resp_cap ? s->resp_cap : 16384;
                        while (cap < s->resp_len + len + 1)
                                cap *= 2;
                        char *b = realloc(s->resp, cap);
                        if (!b)
                                return 0; /* fails the transfer */
                        s->resp = b;
                        s->resp_cap = cap;
                }
                memcpy(s->resp + s->resp_len, data, len);
                s->resp[s->resp_len + len] = '\0';
        }
        s->resp_len += len;
        return len;
}

static int slot_body(struct slot *s, size_t len) {
        if (len <= s->body_cap)
                return 0;
        char *b = realloc(s->body, len);
        if (!b)
                return -ENOMEM;
        s->body = b;
        s->body_cap = len;
        return 0;
}

/* Point slot s at request `kind` for host h. */
static int prepare(struct loadgen *g, struct phase *ph, struct slot *s, size_t h) {
        const struct sim_host *host = &g->hosts[h];
        const char *base = g->bases[s->url_index];
        int n;

        s->host = h;
        s->resp_len = 0;
        s->keep = ph->keep_body;
        if (s->resp)
                s->resp[0] = '\0';
        s->err[0] = '\0';
        switch (ph->kind) {
        case RQ_REGISTER:
                n = snprintf(s->url, sizeof s->url, "%s" API "/infra-envs/%s/hosts", base, g->infra_env);
                if (slot_body(s, 128) < 0)
                        return -ENOMEM;
                snprintf(s->body, s->body_cap, "{\"host_id\":\"%s\",\"discovery_agent_version\":\"bench-loadgen\"}",
                         host->id);
                curl_easy_setopt(s->easy, CURLOPT_POSTFIELDS, s->body);
                curl_easy_setopt(s->easy, CURLOPT_POSTFIELDSIZE, (long) strlen(s->body));
                curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, g->post_hdrs);
                break;
        case RQ_INVENTORY: {
                const struct inv_template *t = &g->tmpl[h % g->n_tmpl];
                n = snprintf(s->url, sizeof s->url, "%s" API "/infra-envs/%s/hosts/%s/instructions", base,
                             g->infra_env, host->id);
                if (slot_body(s, t->len) < 0)
                        return -ENOMEM;
                template_render(t, host, h, s->body);
                curl_easy_setopt(s->easy, CURLOPT_POSTFIELDS, s->body);
                curl_easy_setopt(s->easy, CURLOPT_POSTFIELDSIZE, (long) t->len);
                curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, g->post_hdrs);
                break;
        }
        case RQ_POLL:
        case RQ_HOST_GET:
                n = snprintf(s->url, sizeof s->url, "%s" API "/infra-envs/%s/hosts/%s%s", base, g->infra_env,
                             host->id, ph->kind == RQ_POLL ? "/instructions" : "");
                curl_easy_setopt(s->easy, CURLOPT_HTTPGET, 1L);
                curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, g->get_hdrs);
                break;
        default:
                return -EINVAL;
        }
        if (n < 0 || (size_t) n >= sizeof s->url)
                return -ENAMETOOLONG;
        curl_easy_setopt(s->easy, CURLOPT_URL, s->url);
        return 0;
}

static int latcmp(const void *a, const void *b) {
        uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
        return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of the sorted latencies, in ms. */
static double pct_ms(const struct phase *ph, double p) {
        if (!ph->n_lat)
                return NAN;
        size_t rank = (size_t) ceil(p / 100.0 * (double) ph->n_lat);
        if (rank < 1)
                rank = 1;
        return ph->lat_us[rank - 1] / 1000.0;
}

/* Does the host GET of verify show the inventory that was acknowledged? */
static bool check_host_reply(const struct slot *s, const struct sim_host *h) {
        _cleanup_json_ json_object *o = s->resp ? json_tokener_parse(s->resp) : NULL;
        json_object *inv, *hn;
        return o && json_object_object_get_ex(o, "id", &hn) && strcasecmp(json_object_get_string(hn), h->id) == 0 &&
               json_object_object_get_ex(o, "inventory", &inv) && json_object_object_get_ex(inv, "hostname", &hn) &&
               strcmp(json_object_get_string(hn), h->hostname) == 0;
}

static void complete(struct loadgen *g, struct phase *ph, struct slot *s, CURLcode res, int64_t now) {
        long status = 0;
        curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);
        struct sim_host *h = &g->hosts[s->host];
        if (res != CURLE_OK) {
                if (!ph->net_err++ && !ph->first_error[0])
                        snprintf(ph->first_error, sizeof ph->first_error, "%s: %s", curl_easy_strerror(res),
                                 s->err);
                return;
        }
        if (status < 200 || status > 299) {
                if (!ph->http_err++ && !ph->first_status)
                        ph->first_status = status;
                return;
        }
        ph->ok++;
        ph->ok_by_url[s->url_index]++;
        ph->resp_bytes += s->resp_len;
        int64_t us = (now - s->t0) / 1000;
        if (ph->n_lat == ph->lat_cap) {
                size_t cap = ph->lat_cap ? 2 * ph->lat_cap : 4096;
                uint32_t *v = realloc(ph->lat_us, cap * sizeof *v);
                if (!v)
                        return; /* counted, not sampled */
                ph->lat_us = v;
                ph->lat_cap = cap;
        }
        ph->lat_us[ph->n_lat++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t) us;
        switch (ph->kind) {
        case RQ_REGISTER:
                h->registered = true;
                if (g->acks)
                        fprintf(g->acks, "reg %s\n", h->id);
                break;
        case RQ_INVENTORY:
                h->inventoried = true;
                if (g->acks)
                        fprintf(g->acks, "inv %s %s\n", h->id, h->hostname);
                break;
        case RQ_HOST_GET:
                if (check_host_reply(s, h))
                        ph->checked_ok++;
                else
                        ph->checked_bad++;
                break;
        case RQ_POLL:
                break;
        }
}

/* A free slot for the next request (there is one). With one URL, the
 * slot freed last, as ever. With several, a free slot of the URL whose turn
 * it is, so that paced requests go round-robin; when none of that URL is
 * free (closed loop: the slot that just completed is the only one), the
 * slot freed last, so each connection keeps its own closed loop. */
static struct slot *take_slot(struct loadgen *g) {
        unsigned k = g->n_free - 1;
        if (g->n_bases > 1) {
                for (unsigned i = 0; i < g->n_free; i++)
                        if (g->slots[g->free_slots[i]].url_index == g->next_url) {
                                k = i;
                                break;
                        }
        }
        unsigned idx = g->free_slots[k];
        g->free_slots[k] = g->free_slots[--g->n_free];
        struct slot *s = &g->slots[idx];
        if (g->n_bases > 1)
                g->next_url = (s->url_index + 1) % (unsigned) g->n_bases;
        return s;
}

/* Closed loop with min_s: a run that is over before min_s goes on, cycling
 * over the hosts, so a fast server is measured for as long as a slow one. */
static bool want_more(const struct phase *ph, int64_t elapsed_ns) {
        if (ph->issued < ph->total)
                return true;
        return ph->interval_s <= 0 && ph->n_order && ph->min_s > 0 && (double) elapsed_ns < ph->min_s * 1e9;
}

/* Issue ph->total requests over ph->order with at most g->concurrency in
 * flight: back to back (closed loop), or when ph->interval_s > 0 on a fixed
 * schedule, N/interval per second (open loop; latency then counts from the
 * scheduled time, so a server that falls behind is not flattered). Stops at
 * ph->cap_s whatever is left. */
static int run_phase(struct loadgen *g, struct phase *ph) {
        if (!ph->n_order)
                ph->total = 0;
        unsigned in_flight = 0;
        int64_t start = now_ns(), deadline = start + (int64_t) (ph->cap_s * 1e9), last = start;
        double gap_ns = ph->interval_s > 0 ? ph->interval_s * 1e9 / (double) ph->n_order : 0;

        for (;;) {
                int64_t now = now_ns();
                if (now >= deadline) {
                        ph->capped = ph->issued < ph->total || in_flight > 0;
                        break;
                }
                /* Start what is due. */
                while (want_more(ph, now - start) && g->n_free) {
                        int64_t due = start + (int64_t) (gap_ns * (double) ph->issued);
                        if (gap_ns > 0 && due > now)
                                break;
                        struct slot *s = take_slot(g);
                        int r = prepare(g, ph, s, ph->order[ph->issued % ph->n_order]);
                        if (r < 0)
                                return r;
                        s->t0 = gap_ns > 0 ? due : now;
                        if (gap_ns > 0 && now - due > 10000000)
                                ph->late++; /* waited for a free connection */
                        CURLMcode mc = curl_multi_add_handle(g->multi, s->easy);
                        if (mc != CURLM_OK) {
                                fprintf(stderr, "bench-loadgen: curl_multi_add_handle: %s\n", curl_multi_strerror(mc));
                                return -EIO;
                        }
                        ph->issued++;
                        in_flight++;
                }
                if (!in_flight && !want_more(ph, now_ns() - start))
                        break;
                int running;
                CURLMcode mc = curl_multi_perform(g->multi, &running);
                if (mc != CURLM_OK) {
                        fprintf(stderr, "bench-loadgen: curl_multi_perform: %s\n", curl_multi_strerror(mc));
                        return -EIO;
                }
                CURLMsg *msg;
                int left;
                bool done_any = false;
                while ((msg = curl_multi_info_read(g->multi, &left))) {
                        if (msg->msg != CURLMSG_DONE)
                                continue;
                        struct slot *s;
                        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **) &s);
                        int64_t t = now_ns();
                        CURLcode res = msg->data.result;
                        curl_multi_remove_handle(g->multi, s->easy);
                        complete(g, ph, s, res, t);
                        g->free_slots[g->n_free++] = (unsigned) (s - g->slots);
                        in_flight--;
                        last = t;
                        done_any = true;
                }
                if (done_any)
                        continue; /* refill at once */
                int timeout_ms = 100;
                if (gap_ns > 0 && ph->issued < ph->total && g->n_free) {
                        int64_t due = start + (int64_t) (gap_ns * (double) ph->issued) - now_ns();
                        timeout_ms = due <= 0 ? 0 : due < 100000000 ? (int) (due / 1000000) + 1 : 100;
                }
                if (timeout_ms > 0 && running) {
                        mc = curl_multi_poll(g->multi, NULL, 0, timeout_ms, NULL);
                        if (mc != CURLM_OK) {
                                fprintf(stderr, "bench-loadgen: curl_multi_poll: %s\n", curl_multi_strerror(mc));
                                return -EIO;
                        }
                } else if (timeout_ms > 0)
                        nanosleep(&(struct timespec) { .tv_nsec = (long) timeout_ms * 1000000 }, NULL);
        }
        /* Abandon what is still in flight at the cap. */
        for (unsigned i = 0; i < g->concurrency; i++) {
                bool is_free = false;
                for (unsigned k = 0; k < g->n_free; k++)
                        if (g->free_slots[k] == i)
                                is_free = true;
                if (!is_free) {
                        curl_multi_remove_handle(g->multi, g->slots[i].easy);
                        g->free_slots[g->n_free++] = i;
                        ph->unfinished++;
                }
        }
        ph->unfinished += ph->issued < ph->total ? ph->total - ph->issued : 0;
        ph->wall_s = (double) ((ph->capped ? now_ns() : last) - start) / 1e9;
        if (ph->n_lat)
                qsort(ph->lat_us, ph->n_lat, sizeof *ph->lat_us, latcmp);
        if (g->acks)
                fflush(g->acks);
        return 0;
}

static int loadgen_init(struct loadgen *g, const char *token, unsigned concurrency) {
        g->concurrency = concurrency;
        if (!g->n_bases)
                return -EINVAL;
        g->multi = curl_multi_init();
        g->slots = calloc(concurrency, sizeof *g->slots);
        g->free_slots = calloc(concurrency, sizeof *g->free_slots);
        if (!g->multi || !g->slots || !g->free_slots)
                return -ENOMEM;
        /* Keep-alive connections, at most `concurrency` of them, all kept. */
        curl_multi_setopt(g->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long) concurrency);
        curl_multi_setopt(g->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long) concurrency);
        curl_multi_setopt(g->multi, CURLMOPT_MAXCONNECTS, (long) concurrency);
        curl_multi_setopt(g->multi, CURLMOPT_PIPELINING, (long) CURLPIPE_NOTHING);

        char auth[4096];
        if (snprintf(auth, sizeof auth, "Authorization: Bearer %s", token) >= (int) sizeof auth)
                return -E2BIG;
        /* No "Expect: 100-continue": bodies go out with the headers. */
        g->get_hdrs = curl_slist_append(NULL, auth);
        g->post_hdrs = curl_slist_append(NULL, auth);
        g->post_hdrs = curl_slist_append(g->post_hdrs, "Content-Type: application/json");
        g->post_hdrs = curl_slist_append(g->post_hdrs, "Expect:");
        if (!g->get_hdrs || !g->post_hdrs)
                return -ENOMEM;
        for (unsigned i = 0; i < concurrency; i++) {
                struct slot *s = &g->slots[i];
                if (!(s->easy = curl_easy_init()))
                        return -ENOMEM;
                s->url_index = i % (unsigned) g->n_bases;
                curl_easy_setopt(s->easy, CURLOPT_PRIVATE, (char *) s);
                curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, on_data);
                curl_easy_setopt(s->easy, CURLOPT_WRITEDATA, s);
                curl_easy_setopt(s->easy, CURLOPT_ERRORBUFFER, s->err);
                curl_easy_setopt(s->easy, CURLOPT_NOSIGNAL, 1L);
                curl_easy_setopt(s->easy, CURLOPT_USERAGENT, "muster-bench-loadgen");
                curl_easy_setopt(s->easy, CURLOPT_PROXY, ""); /* loopback only, whatever the environment */
                curl_easy_setopt(s->easy, CURLOPT_PROTOCOLS_STR, "http");
                g->free_slots[g->n_free++] = i;
        }
        return 0;
}

static void loadgen_done(struct loadgen *g) {
        for (unsigned i = 0; g->slots && i < g->concurrency; i++) {
                curl_easy_cleanup(g->slots[i].easy);
                free(g->slots[i].body);
                free(g->slots[i].resp);
        }
        if (g->multi)
                curl_multi_cleanup(g->multi);
        curl_slist_free_all(g->get_hdrs);
        curl_slist_free_all(g->post_hdrs);
        free(g->slots);
        free(g->free_slots);
        for (size_t i = 0; i < g->n_tmpl; i++)
                template_free(&g->tmpl[i]);
        free(g->hosts);
}

/* ---- output ------------------------------------------------------------------ */

enum out_format { OUT_TEXT, OUT_KV, OUT_JSON };

static double rps(const struct phase *ph) {
        return ph->wall_s > 0 ? (double) ph->ok / ph->wall_s : 0;
}

/* "a,b,c": the ok requests per URL, when there are several. */
static void ok_by_url(const struct phase *p, size_t n_urls, char *out, size_t len) {
        size_t l = 0;
        out[0] = '\0';
        for (size_t u = 0; u < n_urls && l < len; u++)
                l += (size_t) snprintf(out + l, len - l, "%s%zu", u ? "," : "", p->ok_by_url[u]);
}

static void print_phases(const struct phase *ph, size_t n, size_t n_urls, enum out_format fmt) {
        if (fmt == OUT_JSON)
                printf("{\"phases\":[");
        else if (fmt == OUT_TEXT)
                printf("%-10s %8s %7s %10s %9s %9s %9s %9s %7s  %s\n", "phase", "ok", "errors", "req/s", "p50 ms",
                       "p99 ms", "max ms", "wall s", "resp B", "note");
        for (size_t i = 0; i < n; i++) {
                const struct phase *p = &ph[i];
                size_t errors = p->http_err + p->net_err;
                double bytes = p->ok ? (double) p->resp_bytes / (double) p->ok : 0;
                /* Several URLs add the split, one URL prints as it always did. */
                char by_url[MAX_URLS * 22 + 1];
                ok_by_url(p, n_urls, by_url, sizeof by_url);
                if (fmt == OUT_KV) {
                        printf("phase=%s ok=%zu errors=%zu http_errors=%zu net_errors=%zu unfinished=%zu late=%zu "
                               "wall_s=%.3f rps=%.1f p50_ms=%.3f p99_ms=%.3f max_ms=%.3f resp_bytes=%.0f capped=%d",
                               p->name, p->ok, errors, p->http_err, p->net_err, p->unfinished, p->late, p->wall_s,
                               rps(p), pct_ms(p, 50), pct_ms(p, 99), pct_ms(p, 100), bytes, p->capped);
                        if (n_urls > 1)
                                printf(" url_ok=%s", by_url);
                        putchar('\n');
                } else if (fmt == OUT_JSON) {
                        printf("%s{\"phase\":\"%s\",\"ok\":%zu,\"errors\":%zu,\"http_errors\":%zu,\"net_errors\":%zu,"
                               "\"unfinished\":%zu,\"late\":%zu,\"wall_s\":%.3f,\"rps\":%.1f,\"p50_ms\":%.3f,"
                               "\"p99_ms\":%.3f,\"max_ms\":%.3f,\"resp_bytes\":%.0f,\"capped\":%s",
                               i ? "," : "", p->name, p->ok, errors, p->http_err, p->net_err, p->unfinished, p->late,
                               p->wall_s, rps(p), p->n_lat ? pct_ms(p, 50) : 0, p->n_lat ? pct_ms(p, 99) : 0,
                               p->n_lat ? pct_ms(p, 100) : 0, bytes, p->capped ? "true" : "false");
                        if (n_urls > 1)
                                printf(",\"url_ok\":[%s]", by_url);
                        putchar('}');
                } else {
                        char note[1024] = "";
                        size_t l = 0;
                        if (p->capped)
                                l += (size_t) snprintf(note + l, sizeof note - l, "hit the %.0f s cap; ", p->cap_s);
                        if (p->unfinished && l < sizeof note)
                                l += (size_t) snprintf(note + l, sizeof note - l, "%zu unfinished; ", p->unfinished);
                        if (p->late && l < sizeof note)
                                l += (size_t) snprintf(note + l, sizeof note - l, "%zu sent >10 ms late; ", p->late);
                        if (p->first_status && l < sizeof note)
                                l += (size_t) snprintf(note + l, sizeof note - l, "first HTTP error %ld; ",
                                                       p->first_status);
                        if (n_urls > 1 && l < sizeof note)
                                l += (size_t) snprintf(note + l, sizeof note - l, "ok per URL %s; ", by_url);
                        if (p->first_error[0] && l < sizeof note)
                                snprintf(note + l, sizeof note - l, "%s", p->first_error);
                        printf("%-10s %8zu %7zu %10.1f %9.2f %9.2f %9.2f %9.2f %7.0f  %s\n", p->name, p->ok, errors,
                               rps(p), pct_ms(p, 50), pct_ms(p, 99), pct_ms(p, 100), p->wall_s, bytes, note);
                }
        }
        if (fmt == OUT_JSON)
                printf("]}\n");
        fflush(stdout);
}

/* ---- modes ---------------------------------------------------------------------- */

struct options {
        const char *urls[MAX_URLS]; /* url: the first, for setup and the admin host list */
        size_t n_urls;
        const char *url, *infra_env, *token_file, *admin_token_file, *acks, *token_out, *name;
        const char *inventories[MAX_TEMPLATES];
        size_t n_inventories;
        char phases[128];
        size_t hosts, polls;
        unsigned concurrency;
        double paced_interval, paced_duration, phase_cap, polls_min_s;
        enum out_format fmt;
};

static void usage(FILE *f) {
        fputs("usage: bench-loadgen setup  --url URL --admin-token-file F --token-out F [--name NAME]\n"
              "       bench-loadgen load   --url URL... --infra-env ID --token-file F --inventory FILE... [options]\n"
              "       bench-loadgen verify --url URL --infra-env ID --token-file F --admin-token-file F --acks F\n"
              "\n"
              "setup:  creates an infra-env with the admin token; prints infra_env_id=ID and\n"
              "        writes its agent token to --token-out.\n"
              "load:   simulated agents, one libcurl multi handle, keep-alive connections:\n"
              "          register   POST .../infra-envs/ID/hosts, once per host\n"
              "          inventory  POST .../hosts/H/instructions with a recorded inventory, once per\n"
              "                     registered host (register + inventory = the boot storm)\n"
              "          polls      GET .../hosts/H/instructions back to back, --polls in all\n"
              "          paced      every host polls once per --paced-interval for --paced-duration,\n"
              "                     on a schedule (open loop; latency from the scheduled time)\n"
              "        Each phase stops at --phase-cap seconds whatever is left. Without a\n"
              "        register phase every host counts as registered (for bench-ceiling).\n"
              "verify: checks that every registration (and inventory) the acks file lists as\n"
              "        acknowledged is in the coordinator: the host list of the infra-env, then\n"
              "        each inventoried host's inventory.hostname.\n"
              "\n"
              "options:\n"
              "  --url URL               http://127.0.0.1:PORT (loopback only). Repeat it (at most 16)\n"
              "                          to spread the load over several servers, such as musterd\n"
              "                          replicas on one database: connection i sends to URL i mod N\n"
              "                          (each URL gets C/N of the connections, each in its own closed\n"
              "                          loop), paced requests go to the URLs in turn, and the figures\n"
              "                          add the acknowledged requests per URL (url_ok=a,b). setup and\n"
              "                          verify's host list use the first URL\n"
              "  --infra-env ID          the infra-env of the simulated hosts\n"
              "  --token-file F          agent token (first line of F)\n"
              "  --admin-token-file F    admin token (musterd's STATE/admin.token)\n"
              "  --inventory FILE        a recorded inventory (repeat; hosts take them in turn)\n"
              "  --hosts N               simulated hosts (default 10000)\n"
              "  --polls M               requests of the polls phase (default 3 x hosts)\n"
              "  --polls-min-seconds SEC the polls phase goes on past M requests until SEC have\n"
              "                          passed, so a fast server is measured as long (default 5)\n"
              "  --concurrency C         requests in flight = connections, over all URLs (default 128)\n"
              "  --phases LIST           comma list of register,inventory,polls,paced (default all)\n"
              "  --paced-interval SEC    poll interval of each host in the paced phase (default 60)\n"
              "  --paced-duration SEC    length of the paced phase (default 60)\n"
              "  --phase-cap SEC         hard wall-clock cap per phase (default 300)\n"
              "  --acks FILE             load: write acknowledged \"reg ID\" / \"inv ID HOSTNAME\" lines;\n"
              "                          verify: read them\n"
              "  --kv | --json           machine-readable figures (default: a text table)\n",
              f);
}

static bool is_loopback_url(const char *url) {
        static const char *const ok[] = { "http://127.", "http://[::1]", "http://localhost:", "http://localhost/" };
        for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
                if (strncmp(url, ok[i], strlen(ok[i])) == 0)
                        return true;
        return false;
}

static int parse_count(const char *s, size_t max, size_t *out) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || end == s || *end || v == 0 || v > max || *s == '-')
                return -EINVAL;
        *out = (size_t) v;
        return 0;
}

static int parse_secs(const char *s, double *out) {
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (errno || end == s || *end || !(v > 0) || v > 86400)
                return -EINVAL;
        *out = v;
        return 0;
}

static int mode_setup(const struct options *o) {
        _cleanup_free_ char *admin = NULL;
        char url[URL_MAX], body[512], auth[4096];
        int r;

        if (!o->admin_token_file || !o->token_out) {
                fprintf(stderr, "bench-loadgen setup: --admin-token-file and --token-out are required\n");
                return 2;
        }
        if ((r = read_token(o->admin_token_file, &admin)) < 0) {
                fprintf(stderr, "bench-loadgen: cannot read %s: %s\n", o->admin_token_file, strerror(-r));
                return 1;
        }
        snprintf(url, sizeof url, "%s" API "/infra-envs", o->url);
        snprintf(body, sizeof body, "{\"name\":\"%s\"}", o->name ? o->name : "bench");
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", admin);
        CURL *c = curl_easy_init();
        struct curl_slist *hdrs = curl_slist_append(NULL, auth);
        hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
        struct slot s = { .keep = true };
        if (!c || !hdrs)
                return 1;
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_PROXY, "");
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
        CURLcode res = curl_easy_perform(c);
        long status = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_cleanup(c);
        curl_slist_free_all(hdrs);
        _cleanup_free_ char *resp = s.resp;
        if (res != CURLE_OK || status != 201) {
                fprintf(stderr, "bench-loadgen: POST %s: %s %ld %s\n", url, curl_easy_strerror(res), status,
                        resp ? resp : "");
                return 1;
        }
        _cleanup_json_ json_object *reply = json_tokener_parse(resp);
        json_object *id, *tok;
        if (!reply || !json_object_object_get_ex(reply, "id", &id) ||
            !json_object_object_get_ex(reply, "agent_token", &tok)) {
                fprintf(stderr, "bench-loadgen: unexpected reply: %s\n", resp);
                return 1;
        }
        _cleanup_fclose_ FILE *f = fopen(o->token_out, "we");
        if (!f || fprintf(f, "%s\n", json_object_get_string(tok)) < 0) {
                fprintf(stderr, "bench-loadgen: cannot write %s: %m\n", o->token_out);
                return 1;
        }
        printf("infra_env_id=%s\n", json_object_get_string(id));
        return 0;
}

static bool has_phase(const char *list, const char *name) {
        size_t n = strlen(name);
        for (const char *p = list; (p = strstr(p, name)); p += n)
                if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
                        return true;
        return false;
}

static int mode_load(const struct options *o, const char *token) {
        struct loadgen g = { .bases = o->urls, .n_bases = o->n_urls, .infra_env = o->infra_env };
        struct phase ph[4];
        size_t n_ph = 0, n_reg = 0;
        _cleanup_free_ size_t *all = NULL, *reg = NULL;
        _cleanup_fclose_ FILE *acks = NULL;
        int r, rc = 1;

        if (!o->n_inventories && has_phase(o->phases, "inventory")) {
                fprintf(stderr, "bench-loadgen: --inventory FILE is needed for the inventory phase\n");
                return 2;
        }
        for (const char *p = o->phases; *p;) {
                size_t n = strcspn(p, ",");
                static const char *const known[] = { "register", "inventory", "polls", "paced" };
                bool ok = false;
                for (size_t i = 0; i < 4; i++)
                        ok |= n == strlen(known[i]) && strncmp(p, known[i], n) == 0;
                if (!ok) {
                        fprintf(stderr, "bench-loadgen: unknown phase \"%.*s\"\n", (int) n, p);
                        return 2;
                }
                p += n + (p[n] == ',');
        }
        if (o->acks && !(acks = fopen(o->acks, "we"))) {
                fprintf(stderr, "bench-loadgen: cannot write %s: %m\n", o->acks);
                return 1;
        }
        g.acks = acks;
        if ((r = loadgen_init(&g, token, o->concurrency)) < 0) {
                fprintf(stderr, "bench-loadgen: init: %s\n", strerror(-r));
                goto out;
        }
        for (size_t i = 0; i < o->n_inventories; i++) {
                if ((r = template_load(o->inventories[i], &g.tmpl[g.n_tmpl])) < 0) {
                        template_free(&g.tmpl[g.n_tmpl]);
                        fprintf(stderr, "bench-loadgen: %s: not a usable inventory (%s)\n", o->inventories[i],
                                strerror(-r));
                        goto out;
                }
                g.n_tmpl++;
        }
        g.n_hosts = o->hosts;
        g.hosts = calloc(g.n_hosts, sizeof *g.hosts);
        all = calloc(g.n_hosts, sizeof *all);
        reg = calloc(g.n_hosts, sizeof *reg);
        if (!g.hosts || !all || !reg)
                goto out;
        for (size_t i = 0; i < g.n_hosts; i++) {
                if ((r = uuid_random(g.hosts[i].id)) < 0) {
                        fprintf(stderr, "bench-loadgen: getrandom: %s\n", strerror(-r));
                        goto out;
                }
                snprintf(g.hosts[i].hostname, sizeof g.hosts[i].hostname, HOSTNAME_FMT, (unsigned) (i % 100000000));
                all[i] = i;
        }
        bool registered_here = has_phase(o->phases, "register");
        /* Without a register phase the hosts are taken as registered already
         * (a server that needs none, such as bench-ceiling). */
        if (!registered_here)
                for (size_t i = 0; i < g.n_hosts; i++)
                        g.hosts[i].registered = true;

        static const char *const order[] = { "register", "inventory", "polls", "paced" };
        for (size_t k = 0; k < 4; k++) {
                if (!has_phase(o->phases, order[k]))
                        continue;
                struct phase *p = &ph[n_ph++];
                *p = (struct phase) { .name = order[k], .cap_s = o->phase_cap };
                if (k == 0) {
                        p->kind = RQ_REGISTER;
                        p->order = all;
                        p->n_order = p->total = g.n_hosts;
                } else {
                        n_reg = 0;
                        for (size_t i = 0; i < g.n_hosts; i++)
                                if (g.hosts[i].registered)
                                        reg[n_reg++] = i;
                        p->order = reg;
                        p->n_order = n_reg;
                        if (k == 1) {
                                p->kind = RQ_INVENTORY;
                                p->total = n_reg;
                        } else if (k == 2) {
                                p->kind = RQ_POLL;
                                p->total = o->polls ? o->polls : 3 * n_reg;
                                p->min_s = o->polls_min_s;
                        } else {
                                p->kind = RQ_POLL;
                                p->interval_s = o->paced_interval;
                                p->total = (size_t) floor(o->paced_duration / o->paced_interval * (double) n_reg);
                                if (p->cap_s < o->paced_duration + 30)
                                        p->cap_s = o->paced_duration + 30;
                        }
                }
                fprintf(stderr, "bench-loadgen: %s: %zu requests (%s, %u in flight%s)\n", p->name, p->total,
                        req_kind_to_string(p->kind), g.concurrency, p->interval_s > 0 ? ", paced" : "");
                if ((r = run_phase(&g, p)) < 0) {
                        fprintf(stderr, "bench-loadgen: %s: %s\n", p->name, strerror(-r));
                        goto out;
                }
                fprintf(stderr, "bench-loadgen: %s: %zu ok, %zu errors in %.2f s\n", p->name, p->ok,
                        p->http_err + p->net_err, p->wall_s);
        }
        if (acks && (fflush(acks) != 0 || fsync(fileno(acks)) < 0)) {
                fprintf(stderr, "bench-loadgen: cannot write %s: %m\n", o->acks);
                goto out;
        }
        print_phases(ph, n_ph, o->n_urls, o->fmt);
        rc = 0;
out:
        for (size_t i = 0; i < n_ph; i++)
                free(ph[i].lat_us);
        loadgen_done(&g);
        return rc;
}

static int idcmp(const void *a, const void *b) {
        return strcmp(((const struct sim_host *) a)->id, ((const struct sim_host *) b)->id);
}

static int strcmpp(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The X-Next-After header of a list reply, if any. */
struct list_state {
        char next_after[32];
};

static size_t on_header(char *data, size_t size, size_t n, void *userdata) {
        struct list_state *ls = userdata;
        size_t len = size * n;
        static const char name[] = "X-Next-After:";
        if (len > sizeof name && strncasecmp(data, name, sizeof name - 1) == 0) {
                const char *v = data + sizeof name - 1;
                size_t vl = len - (sizeof name - 1);
                while (vl && (*v == ' ' || *v == '\t'))
                        v++, vl--;
                while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
                        vl--;
                if (vl < sizeof ls->next_after) {
                        memcpy(ls->next_after, v, vl);
                        ls->next_after[vl] = '\0';
                }
        }
        return len;
}

/* The ids of every host of the infra-env, from the admin host list: follows
 * the X-Next-After cursor when the server sends one, else pages by offset. */
static int list_hosts(const struct options *o, const char *admin, char ***ids, size_t *n_ids) {
        char auth[4096], url[URL_MAX];
        size_t offset = 0, cap = 0;
        bool cursor = false;
        int r = 0;

        snprintf(auth, sizeof auth, "Authorization: Bearer %s", admin);
        CURL *c = curl_easy_init();
        struct curl_slist *hdrs = curl_slist_append(NULL, auth);
        if (!c || !hdrs)
                return -ENOMEM;
        curl_easy_setopt(c, CURLOPT_PROXY, "");
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
        snprintf(url, sizeof url, "%s" API "/hosts?infra_env_id=%s&limit=%d&offset=0", o->url, o->infra_env,
                 LIST_PAGE);
        for (size_t page = 0; page < MAX_HOSTS / LIST_PAGE + 2; page++) {
                struct list_state ls = { "" };
                struct slot s = { .keep = true };
                curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
                curl_easy_setopt(c, CURLOPT_HEADERDATA, &ls);
                curl_easy_setopt(c, CURLOPT_URL, url);
                CURLcode res = curl_easy_perform(c);
                long status = 0;
                curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
                _cleanup_free_ char *resp = s.resp;
                if (res != CURLE_OK || status != 200) {
                        fprintf(stderr, "bench-loadgen: GET %s: %s %ld\n", url, curl_easy_strerror(res), status);
                        r = -EIO;
                        break;
                }
                _cleanup_json_ json_object *arr = resp ? json_tokener_parse(resp) : NULL;
                if (!arr || !json_object_is_type(arr, json_type_array)) {
                        r = -EBADMSG;
                        break;
                }
                size_t n = json_object_array_length(arr);
                for (size_t i = 0; i < n; i++) {
                        json_object *id;
                        if (!json_object_object_get_ex(json_object_array_get_idx(arr, i), "id", &id))
                                continue;
                        if (*n_ids == cap) {
                                cap = cap ? cap * 2 : 4096;
                                char **v = realloc(*ids, cap * sizeof *v);
                                if (!v)
                                        return -ENOMEM;
                                *ids = v;
                        }
                        (*ids)[(*n_ids)++] = strdup(json_object_get_string(id));
                }
                if (ls.next_after[0]) {
                        cursor = true;
                        snprintf(url, sizeof url, "%s" API "/hosts?infra_env_id=%s&limit=%d&after=%s", o->url,
                                 o->infra_env, LIST_PAGE, ls.next_after);
                        continue;
                }
                if (cursor || n < LIST_PAGE)
                        break;
                offset += n;
                snprintf(url, sizeof url, "%s" API "/hosts?infra_env_id=%s&limit=%d&offset=%zu", o->url, o->infra_env,
                         LIST_PAGE, offset);
        }
        curl_easy_cleanup(c);
        curl_slist_free_all(hdrs);
        return r;
}

static int mode_verify(const struct options *o, const char *token) {
        _cleanup_free_ char *admin = NULL, *text = NULL;
        struct loadgen g = { .bases = o->urls, .n_bases = o->n_urls, .infra_env = o->infra_env };
        char **ids = NULL;
        size_t n_ids = 0, len, n_inv = 0, inv_unknown = 0, reg_found = 0;
        _cleanup_free_ size_t *inv = NULL;
        struct phase ph = { .name = "verify", .kind = RQ_HOST_GET, .keep_body = true, .cap_s = o->phase_cap };
        int r, rc = 1;

        if (!o->admin_token_file || !o->acks) {
                fprintf(stderr, "bench-loadgen verify: --admin-token-file and --acks are required\n");
                return 2;
        }
        if ((r = read_token(o->admin_token_file, &admin)) < 0 || (r = read_file(o->acks, &text, &len)) < 0) {
                fprintf(stderr, "bench-loadgen: cannot read the admin token or %s: %s\n", o->acks, strerror(-r));
                return 1;
        }
        /* "reg ID" lines make the hosts, "inv ID HOSTNAME" lines mark them. */
        size_t cap = 0;
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
                if (strncmp(line, "reg ", 4) != 0)
                        continue;
                if (g.n_hosts == cap) {
                        cap = cap ? cap * 2 : 4096;
                        struct sim_host *v = realloc(g.hosts, cap * sizeof *v);
                        if (!v)
                                goto out;
                        g.hosts = v;
                }
                struct sim_host *h = &g.hosts[g.n_hosts++];
                memset(h, 0, sizeof *h);
                snprintf(h->id, sizeof h->id, "%s", line + 4);
                h->registered = true;
        }
        qsort(g.hosts, g.n_hosts, sizeof *g.hosts, idcmp);
        free(text);
        if ((r = read_file(o->acks, &text, &len)) < 0)
                goto out;
        inv = calloc(g.n_hosts ? g.n_hosts : 1, sizeof *inv);
        if (!inv)
                goto out;
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
                char id[UUID_LEN + 1], hn[HOSTNAME_LEN + 1];
                if (sscanf(line, "inv %36s %19s", id, hn) != 2)
                        continue;
                struct sim_host key;
                snprintf(key.id, sizeof key.id, "%s", id);
                struct sim_host *h = bsearch(&key, g.hosts, g.n_hosts, sizeof *g.hosts, idcmp);
                if (!h || h->inventoried) {
                        inv_unknown += !h;
                        continue;
                }
                h->inventoried = true;
                snprintf(h->hostname, sizeof h->hostname, "%s", hn);
                inv[n_inv++] = (size_t) (h - g.hosts);
        }

        /* 1: registrations, from the host list. */
        if ((r = list_hosts(o, admin, &ids, &n_ids)) < 0) {
                fprintf(stderr, "bench-loadgen: listing the hosts failed: %s\n", strerror(-r));
                goto out;
        }
        qsort(ids, n_ids, sizeof *ids, strcmpp);
        for (size_t i = 0; i < g.n_hosts; i++) {
                const char *key = g.hosts[i].id;
                if (bsearch(&key, ids, n_ids, sizeof *ids, strcmpp))
                        reg_found++;
        }
        /* 2: inventories, one GET per inventoried host. */
        if ((r = loadgen_init(&g, token, o->concurrency)) < 0)
                goto out;
        ph.order = inv;
        ph.n_order = ph.total = n_inv;
        if ((r = run_phase(&g, &ph)) < 0) {
                fprintf(stderr, "bench-loadgen: verify: %s\n", strerror(-r));
                goto out;
        }
        size_t inv_errors = ph.http_err + ph.net_err + ph.unfinished;
        if (o->fmt == OUT_TEXT) {
                printf("registrations acknowledged %zu, in the store %zu (store holds %zu hosts of the infra-env)\n",
                       g.n_hosts, reg_found, n_ids);
                printf("inventories acknowledged %zu, stored with the acknowledged hostname %zu, wrong %zu, "
                       "unreadable %zu\n",
                       n_inv, ph.checked_ok, ph.checked_bad, inv_errors);
        } else if (o->fmt == OUT_JSON) {
                printf("{\"reg_acked\":%zu,\"reg_found\":%zu,\"store_hosts\":%zu,\"inv_acked\":%zu,\"inv_found\":%zu,"
                       "\"inv_wrong\":%zu,\"inv_errors\":%zu}\n",
                       g.n_hosts, reg_found, n_ids, n_inv, ph.checked_ok, ph.checked_bad, inv_errors);
        } else {
                printf("verify reg_acked=%zu reg_found=%zu store_hosts=%zu inv_acked=%zu inv_found=%zu inv_wrong=%zu "
                       "inv_errors=%zu\n",
                       g.n_hosts, reg_found, n_ids, n_inv, ph.checked_ok, ph.checked_bad, inv_errors);
        }
        if (inv_unknown)
                fprintf(stderr, "bench-loadgen: %zu inventory acks name no acknowledged registration\n", inv_unknown);
        rc = reg_found == g.n_hosts && ph.checked_ok == n_inv ? 0 : 3;
out:
        for (size_t i = 0; i < n_ids; i++)
                free(ids[i]);
        free(ids);
        free(ph.lat_us);
        loadgen_done(&g);
        return rc;
}

int main(int argc, char **argv) {
        enum { O_URL = 256, O_IE, O_TOKEN, O_ADMIN, O_INV, O_HOSTS, O_POLLS, O_CONC, O_PHASES, O_PI, O_PD, O_CAP,
               O_ACKS, O_KV, O_JSON, O_TOKEN_OUT, O_NAME, O_PMIN };
        static const struct option opts[] = {
                { "url", required_argument, NULL, O_URL },
                { "infra-env", required_argument, NULL, O_IE },
                { "token-file", required_argument, NULL, O_TOKEN },
                { "admin-token-file", required_argument, NULL, O_ADMIN },
                { "inventory", required_argument, NULL, O_INV },
                { "hosts", required_argument, NULL, O_HOSTS },
                { "polls", required_argument, NULL, O_POLLS },
                { "polls-min-seconds", required_argument, NULL, O_PMIN },
                { "concurrency", required_argument, NULL, O_CONC },
                { "phases", required_argument, NULL, O_PHASES },
                { "paced-interval", required_argument, NULL, O_PI },
                { "paced-duration", required_argument, NULL, O_PD },
                { "phase-cap", required_argument, NULL, O_CAP },
                { "acks", required_argument, NULL, O_ACKS },
                { "kv", no_argument, NULL, O_KV },
                { "json", no_argument, NULL, O_JSON },
                { "token-out", required_argument, NULL, O_TOKEN_OUT },
                { "name", required_argument, NULL, O_NAME },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct options o = {
                .hosts = 10000, .concurrency = 128, .paced_interval = 60, .paced_duration = 60, .phase_cap = 300,
                .polls_min_s = 5,
                .fmt = OUT_TEXT,
        };
        snprintf(o.phases, sizeof o.phases, "register,inventory,polls,paced");
        size_t v;
        int c;

        if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
                usage(argc < 2 ? stderr : stdout);
                return argc < 2 ? 2 : 0;
        }
        const char *mode = argv[1];
        optind = 2;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) >= 0) {
                switch (c) {
                case O_URL:
                        if (o.n_urls == MAX_URLS) {
                                fprintf(stderr, "bench-loadgen: at most %d --url\n", MAX_URLS);
                                return 2;
                        }
                        o.urls[o.n_urls++] = optarg;
                        o.url = o.urls[0];
                        break;
                case O_IE: o.infra_env = optarg; break;
                case O_TOKEN: o.token_file = optarg; break;
                case O_ADMIN: o.admin_token_file = optarg; break;
                case O_INV:
                        if (o.n_inventories == MAX_TEMPLATES) {
                                fprintf(stderr, "bench-loadgen: at most %d inventories\n", MAX_TEMPLATES);
                                return 2;
                        }
                        o.inventories[o.n_inventories++] = optarg;
                        break;
                case O_HOSTS:
                        if (parse_count(optarg, MAX_HOSTS, &o.hosts) < 0)
                                goto bad;
                        break;
                case O_POLLS:
                        if (parse_count(optarg, 100 * (size_t) MAX_HOSTS, &o.polls) < 0)
                                goto bad;
                        break;
                case O_CONC:
                        if (parse_count(optarg, MAX_CONCURRENCY, &v) < 0)
                                goto bad;
                        o.concurrency = (unsigned) v;
                        break;
                case O_PHASES:
                        if (snprintf(o.phases, sizeof o.phases, "%s", optarg) >= (int) sizeof o.phases)
                                goto bad;
                        break;
                case O_PI:
                        if (parse_secs(optarg, &o.paced_interval) < 0)
                                goto bad;
                        break;
                case O_PD:
                        if (parse_secs(optarg, &o.paced_duration) < 0)
                                goto bad;
                        break;
                case O_PMIN:
                        if (parse_secs(optarg, &o.polls_min_s) < 0)
                                goto bad;
                        break;
                case O_CAP:
                        if (parse_secs(optarg, &o.phase_cap) < 0)
                                goto bad;
                        break;
                case O_ACKS: o.acks = optarg; break;
                case O_KV: o.fmt = OUT_KV; break;
                case O_JSON: o.fmt = OUT_JSON; break;
                case O_TOKEN_OUT: o.token_out = optarg; break;
                case O_NAME: o.name = optarg; break;
                case 'h': usage(stdout); return 0;
                default: usage(stderr); return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "bench-loadgen: unexpected argument \"%s\"\n", argv[optind]);
                return 2;
        }
        if (!o.n_urls) {
                fprintf(stderr, "bench-loadgen: --url must be a loopback http:// URL\n");
                return 2;
        }
        for (size_t i = 0; i < o.n_urls; i++) {
                if (!is_loopback_url(o.urls[i])) {
                        fprintf(stderr, "bench-loadgen: --url must be a loopback http:// URL\n");
                        return 2;
                }
                if (strlen(o.urls[i]) > 128) {
                        fprintf(stderr, "bench-loadgen: --url or --infra-env is too long\n");
                        return 2;
                }
        }
        if (o.concurrency < o.n_urls) {
                fprintf(stderr, "bench-loadgen: --concurrency must be at least the number of --url\n");
                return 2;
        }
        if (o.infra_env && strlen(o.infra_env) > UUID_LEN) {
                fprintf(stderr, "bench-loadgen: --url or --infra-env is too long\n");
                return 2;
        }
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                return 1;
        int rc;
        if (strcmp(mode, "setup") == 0)
                rc = mode_setup(&o);
        else if (strcmp(mode, "load") == 0 || strcmp(mode, "verify") == 0) {
                _cleanup_free_ char *token = NULL;
                int r;
                if (!o.infra_env || !o.token_file) {
                        fprintf(stderr, "bench-loadgen %s: --infra-env and --token-file are required\n", mode);
                        rc = 2;
                } else if ((r = read_token(o.token_file, &token)) < 0) {
                        fprintf(stderr, "bench-loadgen: cannot read %s: %s\n", o.token_file, strerror(-r));
                        rc = 1;
                } else
                        rc = mode[0] == 'l' ? mode_load(&o, token) : mode_verify(&o, token);
        } else {
                usage(stderr);
                rc = 2;
        }
        curl_global_cleanup();
        return rc;
bad:
        fprintf(stderr, "bench-loadgen: bad value \"%s\" for an option\n", optarg);
        return 2;
}
