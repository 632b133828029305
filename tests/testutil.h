/* Helpers shared by the Criterion suites: run real binaries, temp dirs,
 * musterd and agents started and stopped by their PIDs, URLs and JSON, the
 * fixture releases, network namespaces and the end-to-end suites' set-up on
 * them, musterctl. Those said to fail the test do so with a Criterion
 * assertion: call them from a test or its .init/.fini only. */
#pragma once
#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Path of the built muster-agent (from $MUSTER_AGENT set by ctest). */
const char *tu_agent_path(void);
/* Run argv, wait, return its stdout (malloc'd, NUL-terminated) and put the
 * exit status (or 128+signal) in *status. stderr goes to *err_out if non-NULL. */
char *tu_run(const char *const argv[], int *status, char **err_out);
/* Run a command line split on spaces (no quoting); the exit status, or -1
 * if it did not start. stdout and stderr on request (caller frees). */
int tu_runf(char **out, char **err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* tu_runf that must succeed: the test fails unless the command exits 0,
 * naming the command and its stderr. */
void tu_must(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* `muster-agent inventory [--sysroot DIR]` parsed; NULL if not JSON. */
json_object *tu_agent_inventory(const char *sysroot, int *status);
/* A new empty directory under $TMPDIR (malloc'd path). */
char *tu_mkdtemp(void);
/* A suite's temporary folder: tu_dir made by tu_dir_up (a .init), removed
 * and freed by tu_dir_down (its .fini). */
extern char *tu_dir;
void tu_dir_up(void);
void tu_dir_down(void);
/* "dir/rel", malloc'd (the test fails when out of memory). */
char *tu_path_in(const char *dir, const char *rel);
/* sh -c with the printf-formatted command: its exit status; stdout in *out
 * and stderr in *err when not NULL (caller frees); stderr is logged. */
int tu_sh(char **out, char **err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int tu_rm_rf(const char *path);
/* Write `text` to root/relpath, creating parent directories. */
int tu_write_file(const char *root, const char *relpath, const char *text);
int tu_write_bin(const char *root, const char *relpath, const void *data, size_t len);
int tu_symlink(const char *root, const char *relpath, const char *target);
/* A whole file's bytes (malloc'd, NUL-terminated after them) and, when len
 * is not NULL, their number; NULL if it cannot be opened or read. */
char *tu_read_file(const char *path, size_t *len);
/* The names in a directory, sorted, comma-joined, without those starting
 * with a dot (bookkeeping files); "" for an empty or missing one. Malloc'd. */
char *tu_listing(const char *path);
/* Path of an object's member by dotted path ("cpu.count", "disks.0.name"). */
json_object *tu_json_get(json_object *root, const char *dotted);
/* The string form of the member at a dotted path; NULL if there is none. */
const char *tu_jstr(json_object *o, const char *dotted);
/* The status of validation `id` in a host's (or a cluster's) "validations";
 * NULL if absent. */
const char *tu_validation(json_object *host, const char *id);
/* The member `key` of each element of arr (key NULL: the element itself) as
 * strings joined with ',' ("?" for one missing); malloc'd. */
char *tu_join(json_object *arr, const char *key);
/* The element of arr whose member `key` (a dotted path) is the string
 * `value`; NULL if none. */
json_object *tu_find_by(json_object *arr, const char *key, const char *value);
/* tu_join(arr, key) is `want`; the test fails otherwise, showing arr. */
void tu_assert_join(json_object *arr, const char *key, const char *want);
/* CLOCK_MONOTONIC in milliseconds, for bounded waits. */
int64_t tu_mono_ms(void);
/* Move this thread into the network namespace /run/netns/NAME. 0 or -errno. */
int tu_enter_netns(const char *name);
/* The next number of a xorshift64 generator (reproducible runs from a
 * fixed seed in *state). */
uint32_t tu_xorshift(uint64_t *state);

/* A discovery ISO template of random bytes (seeded: the same each time)
 * whose sidecar says where its kernel and initramfs are, what reclaim
 * fetches through the PXE routes: DIR/discovery.iso and its .json
 * ("[iso] template = DIR/discovery.iso"). Its bytes (malloc'd,
 * TU_TPL_SIZE); the test fails when it cannot be written. */
#define TU_TPL_SIZE (4 * 1024 * 1024)
#define TU_TPL_AREA_OFF (3 * 1024 * 1024)
#define TU_TPL_KERNEL_OFF (64 * 1024)
#define TU_TPL_KERNEL_SIZE 100003
#define TU_TPL_INITRD_OFF (1024 * 1024)
#define TU_TPL_INITRD_SIZE 300001
#define TU_TPL_CMDLINE "console=ttyS0,115200 quiet"
uint8_t *tu_pxe_template(const char *dir);

/* A "NAME: N kB" figure of /proc/PID/status (VmRSS, VmHWM) in bytes; the
 * test fails when it cannot be read. */
int64_t tu_proc_status_bytes(int pid, const char *name);

/* ---- musterd under test ------------------------------------------------ */

struct tu_musterd {
        int pid;
        unsigned port;
        char *state_dir;   /* owned */
        char base[64];     /* "http://127.0.0.1:PORT" */
        char *admin_token; /* read from STATE/admin.token */
        char *admin_token_path; /* that file (for musterctl --token-file) */
        char *log;         /* owned; its stdout+stderr go there (NULL: inherited) */
        /* Set before starting it: HTTPS with its own CA (base https://...;
         * tu_http then trusts STATE/tls/ca.pem, and musterctl finds it
         * beside admin.token). Else plain HTTP, asked for with
         * --insecure-http. */
        bool https;
        bool verbose; /* set before starting it: -v (debug logging) */
        /* With MUSTER_TEST_STORE=postgres: the database of its store on
         * MUSTER_TEST_PG's server (--store postgres://...), made at its
         * first start, kept across restarts, dropped by tu_musterd_free. */
        char pg_db[96];
};
/* The CA file tu_http and the other curl helpers trust for https:// URLs
 * (NULL: the system's). */
void tu_http_set_ca(const char *path);
/* A loopback TCP port that was free a moment ago (0 on failure). */
unsigned tu_free_port(void);
/* musterd.conf with low minimums, so that the captured QEMU server (4 CPUs,
 * 2 GiB) qualifies for every role and for a single-node cluster. */
#define TU_CONFIG_LOW_MINIMUMS                                  \
        "[requirements.any]\ncpu_cores = 1\nmemory = 1GiB\n"    \
        "[requirements.master]\ncpu_cores = 2\nmemory = 1GiB\n" \
        "[requirements.worker]\ncpu_cores = 1\nmemory = 1GiB\n" \
        "[requirements.sno]\ncpu_cores = 2\nmemory = 1GiB\n"
/* Start the real musterd on a free loopback port with `state_dir` (created
 * if needed) and optional config file; waits (up to 20 s) until /healthz
 * answers. 0 or -1. */
int tu_musterd_start(struct tu_musterd *m, const char *state_dir, const char *config);
/* tu_musterd_start with DIR/state, after writing config_text (unless NULL)
 * to DIR/musterd.conf. 0 or -1. */
int tu_musterd_start_in(struct tu_musterd *m, const char *dir, const char *config_text);
/* Start musterd listening on `listen` ("ADDR:PORT", e.g. inside a network
 * namespace; no other port is tried) with DIR/state, config_text (unless
 * NULL) written to DIR/musterd.conf, and its output appended to
 * DIR/musterd.log (m->log); waits (bounded) until /healthz answers and reads
 * the admin token. Again after a stop: the same state. 0 or -1. */
int tu_musterd_start_at(struct tu_musterd *m, const char *listen, const char *dir, const char *config_text);
/* Stop it by its PID with `sig` (SIGTERM: clean; SIGKILL: crash) and reap it,
 * as tu_stop_pid does (30 s): the test fails unless it exits 0 after SIGTERM
 * or SIGINT, and on a crash or a sanitizer report in its output. */
void tu_musterd_stop(struct tu_musterd *m, int sig);
/* The same, with its exit status (-1 if it was not running). */
int tu_musterd_stop_status(struct tu_musterd *m, int sig);
void tu_musterd_free(struct tu_musterd *m);

/* One HTTP request on loopback; returns the status (0 if none) and the body
 * in *out (malloc'd, may be NULL). body may be NULL. */
long tu_http(const char *method, const char *url, const char *token, const char *body, size_t body_len, char **out);
/* The same with the body as JSON text and the response parsed (NULL if not JSON). */
long tu_http_json(const char *method, const char *url, const char *token, const char *body, json_object **out);
/* GET m->base followed by the printf-formatted path, as m's admin: the
 * answer parsed (caller puts it); the test fails unless it is 200. */
json_object *tu_admin_get(const struct tu_musterd *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A new token of `role` for `owner`, made by m's admin (malloc'd); the test
 * fails unless musterd answers 201. */
char *tu_token(const struct tu_musterd *m, const char *role, const char *owner);
/* POST {"name": name} to base/api/v2/infra-envs with an admin token. The
 * HTTP status; on 201 the new id and agent token (malloc'd; either pointer
 * may be NULL when not wanted). */
long tu_create_infra_env(const char *base, const char *admin, const char *name, char **id, char **agent_token);
/* POST body to base/api/v2/clusters with token: the HTTP status; on 201 the
 * new cluster's id in *id (malloc'd). */
long tu_create_cluster(const char *base, const char *token, const char *body, char **id);
/* POST body to base+path with token; the test fails unless it answers 201.
 * The answer's string member `key` (malloc'd). */
char *tu_create(const char *base, const char *token, const char *path, const char *body, const char *key);
/* POST a step's result as the agent of (ie, host) does: {step_id, step_type,
 * exit_code, output (taken over; may be NULL), error (may be NULL)}. The
 * HTTP status. */
long tu_step_result(const char *base, const char *ie, const char *tok, const char *host, const char *step_id,
                    const char *type, int exit_code, json_object *output, const char *error);
/* A raw request's answer, for what tu_http does not tell. */
struct tu_http_reply {
        int curl;               /* the transfer's CURLcode (0: CURLE_OK) */
        long status;            /* 0 if none */
        char *body;             /* malloc'd, NUL-terminated, may hold NULs; caller frees */
        size_t len;
        char ctype[128];        /* Content-Type; "" if none */
        int64_t content_length; /* Content-Length; -1 if none */
};
/* One request with a body of any content type (ctype NULL: none added, so
 * curl's own for a body); the status, and all of the answer in *r. */
long tu_http_raw(const char *method, const char *url, const char *token, const char *ctype, const void *body,
                 size_t body_len, struct tu_http_reply *r);
/* base followed by the printf-formatted path. The text lives in one of four
 * per-thread buffers that are reused in turn: good for the next few calls. */
const char *tu_url(const char *base, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- processes under test (agent run) ------------------------------------ */

/* Start musterd again on m->port with m->state_dir (after a stop), e.g. to
 * see agents reconnect to the same address. Retries while the port is still
 * busy; waits (bounded) for /healthz and rereads the admin token. 0 or -1. */
int tu_musterd_restart(struct tu_musterd *m, const char *config);
/* Spawn argv with stdin from /dev/null and stdout+stderr appended to
 * log_path (or, when NULL, a temporary file of its own, removed when it is
 * reaped and printed if something was wrong). The pid, or -1.
 * Whichever of the helpers below reaps a process started here reads what it
 * wrote and fails the test if that holds a sanitizer report
 * (tu_sanitizer_report), if it died of a crash signal (SEGV, ABRT, BUS, FPE,
 * ILL, SYS, TRAP), if after SIGTERM or SIGINT it did not exit with the
 * expected status (0 unless tu_expect_exit says otherwise) or needed a
 * SIGKILL. Call them from a test or its .init/.fini. */
int tu_spawn(const char *const argv[], const char *log_path);
/* pid (started by tu_spawn) is to exit with `status` when asked to stop
 * with SIGTERM or SIGINT. */
void tu_expect_exit(int pid, int status);
/* The start of the line of the first sanitizer report in text ("ERROR:
 * AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "SUMMARY: "),
 * NULL if none. tu_run fails the test when a child's stderr holds one. */
const char *tu_sanitizer_report(const char *text);
/* Wait up to timeout_ms for pid to end: its exit status (128+signal when
 * killed), or -1 if it is still running then. */
int tu_wait_pid(int pid, int timeout_ms);
/* Send sig to pid and reap it; its exit status as tu_wait_pid's. */
int tu_kill_wait(int pid, int sig);
/* Send sig to pid, wait up to timeout_ms, then SIGKILL; reaped either way.
 * Its exit status as tu_wait_pid's; -1 if pid <= 0 or not a child. */
int tu_stop_pid(int pid, int sig, int timeout_ms);
/* tu_stop_pid(*pid, sig, 10 s), and *pid = -1: stopped and forgotten (a
 * second call does nothing). */
int tu_stop(int *pid, int sig);

/* ---- hosts and clusters as the API shows them ------------------------------ */

typedef bool (*tu_host_pred)(json_object *host, const void *arg);
/* The host's (or cluster's) "status" is the string arg. */
bool tu_status_is(json_object *host, const void *status);
/* The host's applied_revision is *(const int64_t *) rev. */
bool tu_applied(json_object *host, const void *rev);
/* The host is installing-in-progress at stage rebooting and musterd has
 * taken its install result ("Payload revision N written; waiting ..."): its
 * install is written (its applied revision recorded), it waits for its
 * installed system's first check-in. The agent's own progress report at
 * stage rebooting, which comes just before the result, is not enough. */
bool tu_written(json_object *host, const void *unused);
/* Poll the host (every 200 ms, as m's admin) until pred holds: that host
 * (caller puts it). After timeout_ms the test fails, saying it never became
 * `what`, with the last answer. */
json_object *tu_wait_host(const struct tu_musterd *m, const char *ie, const char *host_id, tu_host_pred pred,
                          const void *arg, int timeout_ms, const char *what);
/* Poll cluster `id` (every 200 ms, as m's admin; every answer must be 200)
 * until pred holds: that cluster (caller puts it). After timeout_ms the
 * test fails, saying it never became `what`, with the last answer. */
json_object *tu_wait_cluster(const struct tu_musterd *m, const char *id, tu_host_pred pred, const void *arg,
                             int timeout_ms, const char *what);

/* ---- fixtures ------------------------------------------------------------- */

/* Build the fixture release in folder src (tests/fixtures/releases/VERSION)
 * into out_dir with make-release.sh beside it; the test fails if that does. */
void tu_release_build(const char *src, const char *out_dir);
/* The POST /api/v2/releases body as musterctl sends it for a release dir:
 * release.yaml with the OS image path made absolute as "release_yaml", and
 * every other .yaml, .yml and .json file in name order as "files". */
json_object *tu_release_json(const char *release_dir);
/* POST tu_release_json(release_dir) to base with token: the HTTP status;
 * the answer on request (NULL if not JSON). */
long tu_release_import(const char *base, const char *token, const char *release_dir, json_object **out);
/* Copy a captured machine's root to `out` as if it were booted from the
 * discovery ISO: its disk (/dev/vda) not mounted; its address (192.0.2.2,
 * the build machine's) and hostname and MAC replaced. */
void tu_fixture_variant(const char *root, const char *out, const char *address, const char *hostname,
                        const char *mac);

/* ---- network namespaces ----------------------------------------------------- */

#define TU_FABRIC_MAX 8
/* A test network: namespace `coord` whose bridge br0 holds an address/24,
 * and per node a namespace whose eth0 (its address/24 and MAC) is a veth
 * to br0 (named pI in coord). Names: PREFIXc<pid>, PREFIXa<I>-<pid>. */
struct tu_fabric {
        char coord[32];
        char node[TU_FABRIC_MAX][32];
        int n;
        char prefix[8];
};
/* The coordinator's namespace and bridge with coord_addr; the test fails if
 * `ip` does. Not entered: tu_enter_netns(f->coord) does that. */
void tu_fabric_up(struct tu_fabric *f, const char *prefix, const char *coord_addr);
/* One more node with address and mac: its index in f->node. */
int tu_fabric_add(struct tu_fabric *f, const char *address, const char *mac);
/* Spawn argv in node i's namespace (`ip netns exec`, so in a mount
 * namespace of its own) with `hosts` bind-mounted over its /etc/hosts and
 * `resolv` (unless NULL) over its /etc/resolv.conf, and its output appended
 * to log (optional): the pid, or -1. */
int tu_fabric_spawn(const struct tu_fabric *f, int i, const char *hosts, const char *resolv, const char *const *argv,
                    const char *log);
/* Delete every namespace of f (safe on a partly built or zeroed one). */
void tu_fabric_down(struct tu_fabric *f);

/* ---- end to end: musterd and real agents on a fabric -------------------------- */

/* A machine whose agent a test runs on a fabric node. */
struct tu_node {
        const char *name;
        const char *host_id;
        const char *address;
        const char *mac;
};
/* How tu_e2e_agent starts a node's agent. */
struct tu_agent_run {
        const char *mode;         /* "run" (the node's machine by --sysroot) or "node" */
        const char *machine;      /* "run": the captured root it is a variant of */
        const char *coordinator;  /* musterd's base URL */
        const char *infra_env;
        const char *token_file;
        const char *key_file;     /* the coordinator's public key */
        const char *const *extra; /* more arguments, NULL-ended; may be NULL */
};
/* An end-to-end suite's .init: a new temp dir (returned), f up with the
 * coordinator's bridge at coord_addr and a node per nodes[0..n), in that
 * order, and this thread in the coordinator's namespace. */
char *tu_e2e_up(struct tu_fabric *f, const char *prefix, const char *coord_addr, const struct tu_node *nodes, int n);
/* muster-agent for nodes[i] in f's node i (tu_fabric_spawn) with DIR/hosts
 * and DIR/resolv.conf, its output in DIR/NAME-MODE.log; in mode "run" it
 * reads DIR/NAME-root, r->machine as if booted from the ISO with the node's
 * name, address and MAC (tu_fixture_variant, on first use). Its pid; the
 * test fails if it did not start. */
int tu_e2e_agent(const struct tu_fabric *f, const struct tu_node *nodes, int i, const char *dir,
                 const struct tu_agent_run *r);
/* An infra-env `name` on m (its id, malloc'd) whose hosts check their
 * clocks against a new SNTP server on musterd's address (this thread in its
 * namespace), logging in dir; *sntpd (stopped first if running) holds its
 * pid. `more` (NULL: none) are JSON members for the same PATCH as the NTP
 * source. Its agent token is written to DIR/agent.token. */
char *tu_e2e_infra_env(const struct tu_musterd *m, const char *name, const char *dir, int *sntpd, const char *more);
/* Names for a cluster c1 of base domain example.test on the e2e fabric:
 * DIR/hosts with api(-int).c1 at 192.0.2.100 (for tu_e2e_agent), and a DNS
 * server on coord_addr for *.apps.c1 at 192.0.2.101; its pid. */
int tu_e2e_c1_names(const char *dir, const char *coord_addr);
/* Fails the test unless MUSTER_TEST_STORE=postgres (a suite of replicas,
 * which share a PostgreSQL database). */
void tu_require_pg_store(void);
/* An end-to-end suite's .fini, safe on a partly built set-up: the n agents
 * in pids (each continued first, in case a test froze it), *sntpd, *dnsd and
 * m stopped (SIGTERM, as tu_stop), f's namespaces deleted and m freed; then
 * what a failed test left mounted under *dir is unmounted (lazily), and
 * *dir removed and freed. */
void tu_e2e_down(struct tu_fabric *f, struct tu_musterd *m, int *pids, int n, int *sntpd, int *dnsd, char **dir);

/* ---- musterctl ---------------------------------------------------------------- */

/* No MUSTER_TOKEN, MUSTER_TOKEN_FILE, MUSTER_SERVER nor COLUMNS in the
 * environment: only what each musterctl call passes counts, and its tables
 * on a pipe have no width. */
void tu_ctl_clean_env(void);
/* The built musterctl ($MUSTERCTL); the test fails if it is not set. */
const char *tu_ctl_path(void);
/* Run musterctl --server SERVER --token-file TOKEN_FILE ARGS... (args
 * NULL-terminated, at most 58 kept): its exit status; stdout and stderr on
 * request (caller frees). The test fails if it did not run or a sanitizer
 * spoke (a leak, a runtime error): failures exit 1 too. */
int tu_ctl(char **out, char **err, const char *server, const char *token_file, const char *const *args);
/* tu_ctl against m as its admin: the exit status; stdout in *out when out
 * is not NULL (caller frees). What it printed is logged when it fails. */
int tu_ctl_admin(char **out, const struct tu_musterd *m, const char *const *args);
/* tu_ctl_admin with -o json before ARGS (NULL-terminated, at most 56 kept):
 * what it printed, parsed (caller puts it). The test fails unless it exits
 * 0 and prints JSON. */
json_object *tu_ctl_json(const struct tu_musterd *m, const char *const *args);
/* `musterctl --help` fits 80 columns and lists each of cmds[0..n)
 * ({command, subcommand}), and each one's --help (against m, as its admin)
 * exits 0, says "Usage: musterctl COMMAND SUBCOMMAND" and fits 80 columns.
 * The test fails otherwise. */
void tu_ctl_assert_help(const struct tu_musterd *m, const char *const (*cmds)[2], size_t n);
/* Start the same with its stdout on a pipe (*out_fd) and SIGINT and SIGTERM
 * as a terminal delivers them, whatever the runner ignores: its pid. Its
 * stderr goes to a log checked as tu_spawn's are when it is reaped (exit 0
 * after SIGINT/SIGTERM, no sanitizer report). */
int tu_ctl_spawn(const char *server, const char *token_file, const char *const *args, int *out_fd);
/* Read fd into *buf (*len bytes, NUL-terminated) until it holds needle or
 * timeout_ms pass: whether it does. */
bool tu_read_until(int fd, char **buf, size_t *len, const char *needle, int timeout_ms);
/* Every line of s fits 80 columns (code points), but a line that is exactly
 * `token` (NULL: none): a token is not cut. The test fails otherwise. */
void tu_assert_fits(const char *s, const char *token);
/* musterctl ARGS (as tu_ctl) with COLUMNS=80, as on an 80-column terminal
 * (piped without it, its tables have no width): it exits 0 and what it
 * prints fits (tu_assert_fits). The test fails otherwise. */
void tu_ctl_assert_fits(const char *server, const char *token_file, const char *const *args);

/* Start the suites' SNTP server (tests/tools/muster-test-sntpd, named by
 * MUSTER_TEST_SNTPD) on IPv4 `addr` and a free UDP port, inside network
 * namespace `netns` unless NULL, its log in dir; waits (5 s) until it is
 * bound. Its pid (stop it with tu_stop: it exits 0 on SIGTERM) and in source
 * "ADDR:PORT" for an infra-env's ntp_sources; -1 on failure. */
int tu_sntpd_start(const char *netns, const char *addr, const char *dir, char source[64]);

/* Start the suites' DNS server (tests/tools/muster-test-dnsd, named by
 * MUSTER_TEST_DNSD) on IPv4 `addr` port 53 in this process's network
 * namespace, answering from DIR/dns.zone ("NAME ADDRESS" lines, NAME may
 * start with "*."; rewrite it to change an answer), and write
 * DIR/resolv.conf naming it (for tu_fabric_spawn). Waits (5 s) until it is
 * bound. Its pid (stop it with tu_stop), or -1. */
int tu_dnsd_start(const char *addr, const char *dir, const char *zone);

/* The token an installed system's /etc/muster/agent.conf (at conf_path)
 * holds, malloc'd; NULL when there is none. */
char *tu_agent_conf_token(const char *conf_path);

/* Change the bytes of a stored payload revision (`from` -> `to` in its
 * canonical text) in m's store (STATE_DIR/muster.db, or its PostgreSQL
 * database under MUSTER_TEST_STORE=postgres), as an attacker with write access
 * to the database would; musterd must be stopped. The one place a test
 * writes the store's file behind musterd's back (the on-disk format has its
 * own suite, test_store_sqlite): what it proves is that musterd serves
 * stored bytes as they are and agents refuse them. Asserts one row changed. */
void tu_tamper_stored_payload(const struct tu_musterd *m, const char *cluster_id, long revision, const char *from,
                              const char *to);
/* Runs sql on the store at url (sqlite:PATH or postgres://...) behind the
 * store's back, as a newer musterd or an admin with psql would; nothing of
 * the store's may have it open for writing. Fails the test on an error. */
void tu_store_exec(const char *url, const char *sql);

/* A new, empty PostgreSQL database on the server MUSTER_TEST_PG names (a
 * libpq connection string, scripts/with-pg-test-server sets it): its store
 * URL in out (postgres://...), its name in db (for tu_pg_drop). Asserts
 * MUSTER_TEST_PG is set and the database was made. */
void tu_pg_database(char *out, size_t n, char *db, size_t db_n);
/* The store URL of database db of MUSTER_TEST_PG. */
void tu_pg_url(const char *db, char *out, size_t n);
/* The first column of the first row of sql on MUSTER_TEST_PG's maintenance
 * database, as an integer. */
long tu_pg_count(const char *sql);
/* Drops database db of MUSTER_TEST_PG (nobody connected to it any more). */
void tu_pg_drop(const char *db);

/* An HTTP proxy on 127.0.0.1 that takes CONNECT to 127.0.0.1 ports alone (as
 * a client of an https:// URL uses one) and relays the tunnel; it counts
 * tunnels and refusals. Stopped (threads joined, tunnels closed) by
 * tu_proxy_stop. */
#define TU_PROXY_MAX_CONNS 256
struct tu_proxy {
        int lfd;
        unsigned port;
        bool running;
        atomic_bool stop;
        atomic_int connects; /* tunnels made */
        atomic_int refused;  /* requests that were not CONNECT to loopback */
        pthread_t thread;
        pthread_t threads[TU_PROXY_MAX_CONNS];
        int n_threads;
};
int tu_proxy_start(struct tu_proxy *p);
void tu_proxy_stop(struct tu_proxy *p);
