/* Helpers shared by the Criterion suites: run real binaries, temp dirs,
 * musterd and agents started and stopped by their PIDs, URLs and JSON. */
#pragma once
#include <json-c/json.h>
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
/* `muster-agent inventory [--sysroot DIR]` parsed; NULL if not JSON. */
json_object *tu_agent_inventory(const char *sysroot, int *status);
/* A new empty directory under $TMPDIR (malloc'd path). */
char *tu_mkdtemp(void);
int tu_rm_rf(const char *path);
/* Write `text` to root/relpath, creating parent directories. */
int tu_write_file(const char *root, const char *relpath, const char *text);
int tu_write_bin(const char *root, const char *relpath, const void *data, size_t len);
int tu_symlink(const char *root, const char *relpath, const char *target);
/* Path of an object's member by dotted path ("cpu.count", "disks.0.name"). */
json_object *tu_json_get(json_object *root, const char *dotted);
/* The string form of the member at a dotted path; NULL if there is none. */
const char *tu_jstr(json_object *o, const char *dotted);
/* The status of validation `id` in a host's "validations"; NULL if absent. */
const char *tu_validation(json_object *host, const char *id);
/* CLOCK_MONOTONIC in milliseconds, for bounded waits. */
int64_t tu_mono_ms(void);
/* Move this thread into the network namespace /run/netns/NAME. 0 or -errno. */
int tu_enter_netns(const char *name);

/* ---- musterd under test ------------------------------------------------ */

struct tu_musterd {
        int pid;
        unsigned port;
        char *state_dir;   /* owned */
        char base[64];     /* "http://127.0.0.1:PORT" */
        char *admin_token; /* read from STATE/admin.token */
};
/* Start the real musterd on a free loopback port with `state_dir` (created
 * if needed) and optional config file; waits (bounded) until /healthz
 * answers. 0 or -1. */
int tu_musterd_start(struct tu_musterd *m, const char *state_dir, const char *config);
/* Stop it by its PID with `sig` (SIGTERM: clean; SIGKILL: crash) and reap it. */
void tu_musterd_stop(struct tu_musterd *m, int sig);
void tu_musterd_free(struct tu_musterd *m);

/* One HTTP request on loopback; returns the status (0 if none) and the body
 * in *out (malloc'd, may be NULL). body may be NULL. */
long tu_http(const char *method, const char *url, const char *token, const char *body, size_t body_len, char **out);
/* The same with the body as JSON text and the response parsed (NULL if not JSON). */
long tu_http_json(const char *method, const char *url, const char *token, const char *body, json_object **out);
/* POST {"name": name} to base/api/v2/infra-envs with an admin token. The
 * HTTP status; on 201 the new id and agent token (malloc'd; either pointer
 * may be NULL when not wanted). */
long tu_create_infra_env(const char *base, const char *admin, const char *name, char **id, char **agent_token);
/* base followed by the printf-formatted path. The text lives in one of four
 * per-thread buffers that are reused in turn: good for the next few calls. */
const char *tu_url(const char *base, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- processes under test (agent run) ------------------------------------ */

/* Start musterd again on m->port with m->state_dir (after a stop), e.g. to
 * see agents reconnect to the same address. Retries while the port is still
 * busy; waits (bounded) for /healthz and rereads the admin token. 0 or -1. */
int tu_musterd_restart(struct tu_musterd *m, const char *config);
/* Spawn argv with stdin from /dev/null and stdout+stderr appended to
 * log_path (or inherited when NULL). The pid, or -1. */
int tu_spawn(const char *const argv[], const char *log_path);
/* Wait up to timeout_ms for pid to end: its exit status (128+signal when
 * killed), or -1 if it is still running then. */
int tu_wait_pid(int pid, int timeout_ms);
/* Send sig to pid and reap it; its exit status as tu_wait_pid's. */
int tu_kill_wait(int pid, int sig);
/* Send sig to pid, wait up to timeout_ms, then SIGKILL; reaped either way.
 * Its exit status as tu_wait_pid's; -1 if pid <= 0. */
int tu_stop_pid(int pid, int sig, int timeout_ms);
