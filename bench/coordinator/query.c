/* bench-query: host queries at scale, the last phase of the coordinator
 * benchmark (bench/coordinator/run --hosts 100000). For each filter of
 * GET /api/v2/hosts (unbound, min_memory_bytes, min_cpu_cores,
 * min_disk_bytes, hostname, status) it asks for pages of 100, one request
 * at a time on one kept-alive connection (as musterctl or a dashboard
 * would), bounded in count and in time, and prints the latency of each
 * filter: one "query filter=NAME ok=N errors=N rows=N p50_ms=X p99_ms=X
 * max_ms=X" line each. Not a test. Run with --help. */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


#define MAX_REQUESTS 100000u
#define MAX_BODY (64u << 20)

static int64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct body {
        size_t len;
        size_t rows; /* "id" keys seen at depth 2: rough, counts the page's hosts */
};

/* Counts the hosts of a page without parsing it: each host of the list has
 * one "infra_env_id" key (a key split across two reads is missed; the count
 * is for the printout only). */
static size_t on_data(char *data, size_t size, size_t n, void *userdata) {
        struct body *b = userdata;
        size_t len = size * n;
        if (b->len + len > MAX_BODY)
                return 0;
        static const char key[] = "\"infra_env_id\"";
        for (size_t i = 0; i + sizeof key - 1 <= len; i++)
                if (data[i] == '"' && memcmp(data + i, key, sizeof key - 1) == 0)
                        b->rows++;
        b->len += len;
        return len;
}

static int cmp_i64(const void *a, const void *b) {
        int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
        return (x > y) - (x < y);
}

static double pct_ms(const int64_t *v, size_t n, double p) {
        if (!n)
                return 0;
        size_t k = (size_t) (p * (double) n + 0.999999);
        if (k < 1)
                k = 1;
        if (k > n)
                k = n;
        return (double) v[k - 1] / 1e6;
}

static int read_token(const char *path, char *out, size_t len) {
        FILE *f = fopen(path, "re");
        if (!f)
                return -errno;
        bool ok = fgets(out, (int) len, f) != NULL;
        fclose(f);
        if (!ok)
                return -EINVAL;
        out[strcspn(out, "\r\n")] = 0;
        return *out ? 0 : -EINVAL;
}

static void usage(FILE *f) {
        fputs("usage: bench-query --url URL --admin-token-file F [--requests N] [--max-seconds S]\n"
              "                   [--hostname TEXT] [--min-memory BYTES] [--min-cpu N] [--min-disk BYTES]\n"
              "\n"
              "Asks GET /api/v2/hosts?FILTER&limit=100 N times per filter (default 200), one\n"
              "request at a time on one kept-alive connection, each filter for at most S seconds\n"
              "(default 30), and prints per filter: requests answered 200, errors, hosts in the\n"
              "last page, p50/p99/max latency in ms. Filters: unbound=true, min_memory_bytes\n"
              "(default 16 GiB), min_cpu_cores (default 2), min_disk_bytes (default 10 GB),\n"
              "hostname (a name to look for, default bench-host-00000042),\n"
              "status=known-unbound,insufficient-unbound.\n"
              "URL must be a loopback http:// or https:// address (https: no certificate check).\n",
              f);
}

int main(int argc, char **argv) {
        const char *url = NULL, *token_file = NULL, *hostname = "bench-host-00000042";
        unsigned long requests = 200, max_s = 30;
        unsigned long long min_mem = 16ull << 30, min_cpu = 2, min_disk = 10000000000ull;
        static const struct option opts[] = {
                { "url", required_argument, NULL, 'u' },        { "admin-token-file", required_argument, NULL, 't' },
                { "requests", required_argument, NULL, 'n' },   { "max-seconds", required_argument, NULL, 's' },
                { "hostname", required_argument, NULL, 'H' },   { "min-memory", required_argument, NULL, 'm' },
                { "min-cpu", required_argument, NULL, 'c' },    { "min-disk", required_argument, NULL, 'd' },
                { "help", no_argument, NULL, 'h' },             {},
        };
        int o;
        char *end;
        while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                errno = 0;
                switch (o) {
                case 'u': url = optarg; break;
                case 't': token_file = optarg; break;
                case 'H': hostname = optarg; break;
                case 'n':
                case 's':
                case 'm':
                case 'c':
                case 'd': {
                        unsigned long long v = strtoull(optarg, &end, 10);
                        if (errno || end == optarg || *end || (o == 'n' && (v < 1 || v > MAX_REQUESTS)) ||
                            (o == 's' && (v < 1 || v > 3600))) {
                                fprintf(stderr, "bench-query: bad value \"%s\"\n", optarg);
                                return 2;
                        }
                        if (o == 'n')
                                requests = (unsigned long) v;
                        else if (o == 's')
                                max_s = (unsigned long) v;
                        else if (o == 'm')
                                min_mem = v;
                        else if (o == 'c')
                                min_cpu = v;
                        else
                                min_disk = v;
                        break;
                }
                case 'h': usage(stdout); return 0;
                default: usage(stderr); return 2;
                }
        }
        if (!url || !token_file || optind != argc) {
                usage(stderr);
                return 2;
        }
        if (strncmp(url, "http://127.", 11) != 0 && strncmp(url, "https://127.", 12) != 0 &&
            strncmp(url, "http://localhost", 16) != 0 && strncmp(url, "https://localhost", 17) != 0) {
                fprintf(stderr, "bench-query: %s is not a loopback address\n", url);
                return 2;
        }
        char token[4096], auth[4200];
        if (read_token(token_file, token, sizeof token) < 0) {
                fprintf(stderr, "bench-query: cannot read a token from %s\n", token_file);
                return 2;
        }
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);

        char q_mem[64], q_cpu[64], q_disk[64], q_name[256];
        snprintf(q_mem, sizeof q_mem, "min_memory_bytes=%llu", min_mem);
        snprintf(q_cpu, sizeof q_cpu, "min_cpu_cores=%llu", min_cpu);
        snprintf(q_disk, sizeof q_disk, "min_disk_bytes=%llu", min_disk);
        snprintf(q_name, sizeof q_name, "hostname=%s", hostname);
        const struct {
                const char *name, *query;
        } filters[] = {
                { "unbound", "unbound=true" }, { "min_memory", q_mem },    { "min_cpu", q_cpu },
                { "min_disk", q_disk },        { "hostname", q_name },     { "status", "status=known-unbound,insufficient-unbound" },
        };

        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                return 1;
        CURL *c = curl_easy_init();
        struct curl_slist *hdr = curl_slist_append(NULL, auth);
        int64_t *lat = calloc(requests, sizeof *lat);
        if (!c || !hdr || !lat) {
                fprintf(stderr, "bench-query: out of memory\n");
                return 1;
        }
        int rc = 0;
        for (size_t f = 0; f < sizeof filters / sizeof *filters; f++) {
                char full[1024];
                snprintf(full, sizeof full, "%s/api/v2/hosts?%s&limit=100", url, filters[f].query);
                curl_easy_reset(c);
                curl_easy_setopt(c, CURLOPT_URL, full);
                curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
                curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
                curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
                curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
                curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
                size_t ok = 0, errors = 0, rows = 0;
                int64_t t_end = now_ns() + (int64_t) max_s * 1000000000;
                for (unsigned long i = 0; i < requests && now_ns() < t_end; i++) {
                        struct body b = { 0 };
                        curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
                        int64_t t0 = now_ns();
                        CURLcode res = curl_easy_perform(c);
                        int64_t t1 = now_ns();
                        long status = 0;
                        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
                        if (res == CURLE_OK && status == 200) {
                                lat[ok++] = t1 - t0;
                                rows = b.rows;
                        } else
                                errors++;
                }
                qsort(lat, ok, sizeof *lat, cmp_i64);
                printf("query filter=%s ok=%zu errors=%zu rows=%zu p50_ms=%.2f p99_ms=%.2f max_ms=%.2f\n",
                       filters[f].name, ok, errors, rows, pct_ms(lat, ok, 0.50), pct_ms(lat, ok, 0.99),
                       ok ? (double) lat[ok - 1] / 1e6 : 0.0);
                fflush(stdout);
                if (errors)
                        rc = 3;
        }
        free(lat);
        curl_slist_free_all(hdr);
        curl_easy_cleanup(c);
        curl_global_cleanup();
        return rc;
}
