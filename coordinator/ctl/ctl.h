/* musterctl: the admin CLI over musterd's HTTP API (DESIGN §2). One struct
 * carries the global options and the HTTP session; each `RESOURCE VERB` is
 * a function over it that returns the exit status. */
#pragma once
#include <getopt.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "table.h"

#define CTL_DEFAULT_SERVER "https://127.0.0.1:8090"
#define CTL_DEFAULT_TOKEN_FILE "/var/lib/muster/admin.token"
#define CTL_MAX_TOKEN (16 * 1024)          /* a token file larger than this is not a token */
#define CTL_MAX_REPLY (256 * 1024 * 1024)  /* a reply larger than this is refused */
#define CTL_MAX_PAGES 100000               /* --all stops here whatever the server says */
#define CTL_MAX_RELEASE_BYTES (64 * 1024 * 1024) /* what `release import` sends at most */
#define CTL_MAX_RELEASE_FILES 20000        /* manifest files of one release */
#define CTL_MAX_NAMES 256                  /* capability or id names in one option */

/* The exit statuses (musterctl --help lists them): a failure is 1 unless
 * the command failed because something was not found (3) or musterd could
 * not be reached (4), which ctl_report and the lookups note in
 * ctl.fail_exit and run_command returns instead of 1. */
enum ctl_exit {
        CTL_EXIT_OK = 0,
        CTL_EXIT_FAIL = 1,        /* musterd refused it (4xx, 5xx), or another failure */
        CTL_EXIT_USAGE = 2,       /* bad usage: unknown command or option, bad value */
        CTL_EXIT_NOT_FOUND = 3,   /* HTTP 404, or no resource matches the name or id given */
        CTL_EXIT_UNREACHABLE = 4, /* no answer from musterd: connection, TLS, timeout */
};

enum ctl_output { CTL_OUT_TABLE, CTL_OUT_WIDE, CTL_OUT_JSON };
/* What ctl_print_json prints of the JSON (-o json, -o name, -o jsonpath=,
 * -o yaml, -o custom-columns=). */
enum ctl_json_form { CTL_JSON_AS_IS, CTL_JSON_NAME, CTL_JSON_PATH, CTL_JSON_YAML, CTL_JSON_COLUMNS };
/* Set by -o (tpl: the jsonpath template, kept by pointer; cols: the parsed
 * custom-columns, kept by pointer) and by the command run (its resource,
 * the KIND of -o name for records without one). */
struct customcols;
void ctl_json_form_set(enum ctl_json_form form, const char *tpl, const struct customcols *cols);
void ctl_json_resource_set(const char *resource);

struct ctl {
        char *server;            /* base URL without a trailing slash (owned) */
        const char *token_file;  /* NULL: $MUSTER_TOKEN, $MUSTER_TOKEN_FILE, then the default */
        const char *ca;          /* CA bundle for https (--ca), or NULL: ctl_ca() */
        char ca_found[4096];     /* the CA ctl_ca() found, "" */
        enum ctl_output output;
        struct ctl_fmt fmt;      /* how tables print: the width (setup), from
                                  * -o and --no-headers */
        char *token;             /* read on the first request */
        void *curl;              /* CURL *, made on the first request */
        char errbuf[256];        /* libcurl's words for a failed transfer */
        bool quiet_unreachable;  /* the caller says "cannot reach" itself */
        bool o_is_local;         /* -o after the command is the command's own
                                  * option (signing-key -o FILE), not the format */
        enum ctl_exit fail_exit; /* why the last failure failed (0: plain 1) */
};

/* The CA file an https server is checked with: --ca, else $MUSTER_CA,
 * else musterd's own CA beside the admin token file (DIR/tls/ca.pem, as
 * musterd makes it in its state dir) when that exists; NULL: the system's
 * CAs. */
const char *ctl_ca(struct ctl *c);

/* Set by SIGINT/SIGTERM while a command waits (event list --follow);
 * requests in flight are abandoned when it is set. */
extern volatile sig_atomic_t ctl_stop;

/* From now on SIGINT and SIGTERM set ctl_stop; the actions they had go to
 * *old_int and *old_term unless those are NULL. */
void ctl_catch_stop(struct sigaction *old_int, struct sigaction *old_term);
/* Sleep `seconds` (not at all when <= 0); less once ctl_stop is set. */
void ctl_nap(double seconds);

/* A command: `musterctl RESOURCE VERB ARGS`, or `musterctl RESOURCE ARGS`
 * when verb is "" (signing-key). */
struct ctl_cmd {
        const char *resource;
        const char *verb;
        const char *args;    /* synopsis after the verb */
        const char *summary; /* one line for the command list */
        const char *help;    /* the options, for --help */
        int (*run)(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
};

/* The whole CLI: parse, run, return the exit status. */
int ctl_main(int argc, char **argv);

/* ---- option parsing shared by the commands ------------------------------- */

/* Option codes of the global options (also accepted after the verb). */
enum {
        CTL_OPT_SERVER = 1000,
        CTL_OPT_TOKEN_FILE,
        CTL_OPT_CA,
        CTL_OPT_VERSION,
        CTL_OPT_NO_HEADERS,
        CTL_OPT_FIRST_LOCAL = 1100, /* commands number their options from here */
};
#define CTL_GLOBAL_OPTIONS                                                      \
        { "server", required_argument, NULL, CTL_OPT_SERVER },                  \
        { "token-file", required_argument, NULL, CTL_OPT_TOKEN_FILE },          \
        { "ca", required_argument, NULL, CTL_OPT_CA },                          \
        { "output", required_argument, NULL, 'o' },                             \
        { "no-headers", no_argument, NULL, CTL_OPT_NO_HEADERS },                \
        { "help", no_argument, NULL, 'h' }

/* What ctl_next_opt returns besides a command's own option codes. */
enum { CTL_OPT_END = -1, CTL_OPT_HELP = -2, CTL_OPT_BAD = -3 };

/* The next option of a command (getopt_long over argv, argv[0] the verb;
 * reset optind to 0 before the first call). Global options are applied here;
 * --help prints the command's help (CTL_OPT_HELP); a usage error is printed
 * (CTL_OPT_BAD). Positional arguments are left in argv[optind..]. -o is
 * the output format, unless c->o_is_local: then it is returned as 'o'. An
 * option of opts whose val is a letter is also that short option (-l). */
int ctl_next_opt(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, const struct option *opts);
/* Print "musterctl: MESSAGE" and the hint to the command's --help; returns
 * CTL_EXIT_USAGE. */
int ctl_usage_error(const struct ctl_cmd *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Positional arguments: exactly `n` of them (named for the error). */
int ctl_want_args(const struct ctl_cmd *cmd, int argc, char **argv, int n, const char *what);
/* The value of an --interval option (ctl_parse_interval) into *out: 0, or
 * CTL_EXIT_USAGE with the error printed. */
int ctl_opt_interval(const struct ctl_cmd *cmd, const char *arg, double *out);
/* The value of a --limit option, a number from 1 to max, into *out: 0, or
 * CTL_EXIT_USAGE with the error printed. */
int ctl_opt_limit(const struct ctl_cmd *cmd, const char *arg, long max, long *out);
/* The value of an option `opt` ("--enable") that takes names separated by
 * commas, appended to `array` as ctl_csv_append does; `what` ("names",
 * "capabilities") is what the usage error calls them. An empty value is a
 * usage error unless allow_empty. 0, or the exit status with the error
 * printed. */
int ctl_opt_names(const struct ctl_cmd *cmd, const char *opt, const char *what, json_object *array, const char *arg,
                  bool allow_empty);
/* A command with at most one option of its own: `opts` are it and the global
 * options (NULL: the global ones only) and its argument goes to *value; then
 * exactly `n` positional arguments. true to go on; false with *rc the exit
 * status to return (0 after --help). */
bool ctl_plain_args(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, const struct option *opts,
                    const char **value, int n, const char *what, int *rc);
/* A command whose one option is -o/--out FILE (sets c->o_is_local): FILE
 * into *out (left alone when not given; an empty one is a usage error
 * saying `empty_msg`), then exactly `n` positional arguments. As
 * ctl_plain_args: true to go on; false with *rc the exit status to return. */
bool ctl_out_args(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, const char *empty_msg,
                  const char **out, int n, const char *what, int *rc);
/* "musterctl: MESSAGE" on stderr; returns CTL_EXIT_FAIL. */
int ctl_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A whole file as text, byte for byte, at most `max` bytes; NULL with a
 * message printed. */
char *ctl_read_file(const char *path, size_t max, const char *what);
/* A one-line value kept in a file (a token, a pull secret, an SSH key):
 * ctl_read_file without its trailing newlines and spaces. */
char *ctl_read_value(const char *path, size_t max, const char *what);
/* body[key] = the text of the file at `path`, as ctl_read_value reads it
 * (CTL_FILE_VALUE) or as it is (CTL_FILE_AS_IS); our copy is wiped
 * afterwards (secrets). 0, or CTL_EXIT_FAIL, message printed. */
enum ctl_file_kind { CTL_FILE_AS_IS, CTL_FILE_VALUE };
int ctl_add_file(json_object *body, const char *key, const char *path, size_t max, const char *what,
                 enum ctl_file_kind kind);
/* Write `text` and a newline to a new 0600 file; 0 or -errno (message printed). */
int ctl_write_secret(const char *path, const char *text);

/* ---- HTTP (client.c) ----------------------------------------------------- */

struct ctl_reply {
        long status;        /* HTTP status, 0 if no answer */
        json_object *json;  /* the parsed body, or NULL */
        char *body;         /* the raw body (NUL-terminated), or NULL */
        char *next_after;   /* X-Next-After, or NULL */
};
void ctl_reply_free(struct ctl_reply *r);

/* One request to SERVER/api/v2 + path (path may carry a query). body may be
 * NULL (POST/PATCH then send {}). 0 with r->status set whatever it is, or
 * -errno when no answer came (then c->errbuf says why; -EINTR: ctl_stop). */
int ctl_request(struct ctl *c, const char *method, const char *path, json_object *body, struct ctl_reply *r);
/* What ctl_request's result k and reply r mean, printed the CLI's way when
 * it is a failure; 0 only on 2xx. */
int ctl_report(struct ctl *c, const char *method, const char *path, int k, const struct ctl_reply *r);
/* For a command that keeps polling through a restart of musterd: "cannot
 * reach musterd ...; still trying" on stderr, once until *unreachable is
 * cleared again, which this sets. */
void ctl_still_trying(struct ctl *c, bool *unreachable);
/* ctl_request + ctl_report. */
int ctl_call(struct ctl *c, const char *method, const char *path, json_object *body, struct ctl_reply *r);
/* ctl_call for a reply that must be a JSON object. */
int ctl_call_object(struct ctl *c, const char *method, const char *path, json_object *body, struct ctl_reply *r);
/* GET a list; with `all`, follow X-Next-After pages to the end. *out is the
 * concatenated array; *more (if not NULL) tells whether the server had more
 * rows than were fetched. 0, or <0 with the failure printed. */
int ctl_get_list(struct ctl *c, const char *path, bool all, json_object **out, bool *more);

/* Query strings: "?a=1&b=x%20y". */
struct ctl_query {
        char buf[4096];
        size_t len;
        bool overflow;
};
void ctl_query_add(struct ctl_query *q, const char *key, const char *value);

/* ---- resources: ids by prefix or name (lookup.c) ------------------------- */

/* An infra-env or cluster given as a full id, a unique id prefix or a name
 * -> its id (malloc'd). NULL with a message printed. */
char *ctl_lookup_infra_env(struct ctl *c, const char *arg);
char *ctl_lookup_cluster(struct ctl *c, const char *arg);
/* "/clusters/ID" + suffix for a CLUSTER argument (malloc'd); the id into
 * *id_out when not NULL. NULL with a message printed. */
char *ctl_cluster_path(struct ctl *c, const char *arg, const char *suffix, char **id_out);
/* HOST, IE/HOST, a unique host id prefix or hostname -> its infra-env and
 * id. 0, or <0 with a message printed. */
int ctl_lookup_host(struct ctl *c, const char *arg, char **ie_id, char **host_id);

/* ---- output (output.c) ---------------------------------------------------- */

/* Print an object or array on stdout: pretty JSON, or its names (-o name:
 * KIND/ID a line, for it or each element), or a jsonpath template over it. */
int ctl_print_json(json_object *o);
int ctl_print_table(struct ctl *c, const struct ctl_table *t);
int ctl_print_kv(struct ctl *c, const struct ctl_kv *kv);
/* Member by dotted path ("inventory.cpu.count"); NULL if absent. */
json_object *ctl_jget(json_object *o, const char *path);
/* The string at path, or NULL (numbers and booleans as text too). */
const char *ctl_jstr(json_object *o, const char *path);
int64_t ctl_jint(json_object *o, const char *path, int64_t def);
/* "2026-11-21 21:50:11" for an RFC 3339 time, into buf. */
char *ctl_time(const char *rfc3339, char *buf, size_t n);
/* "2026-11-21 21:50:11 (5m ago)" or, for tables, "5m". */
char *ctl_when(const char *rfc3339, char *buf, size_t n);
char *ctl_age(const char *rfc3339, char *buf, size_t n);
/* Validations as a table (one per line: id, status, message). */
int ctl_print_validations(struct ctl *c, json_object *validations);
/* The strings of a JSON array joined by ", " (malloc'd); `none` (copied)
 * when it is empty or absent; NULL on ENOMEM. */
char *ctl_join(json_object *array, const char *none);
/* The same with another separator. */
char *ctl_join_sep(json_object *array, const char *sep, const char *none);
/* The length of a JSON array; 0 for NULL or anything else. */
size_t ctl_jlen(json_object *array);
/* Whether the JSON array holds the string s. */
bool ctl_array_has(json_object *array, const char *s);

/* ---- pure helpers (unit-tested) --------------------------------------------- */

/* Append the names of a comma-separated list to `array` (a JSON array of
 * strings), each once, blanks around them dropped. "" appends nothing.
 * -EINVAL for an empty name ("a,,b"), -E2BIG past CTL_MAX_NAMES, -ENOMEM. */
int ctl_csv_append(json_object *array, const char *csv);

/* Where release.yaml's os_image.path value is: the byte range [*start,
 * *end) of the scalar as written (quotes included), its value (malloc'd)
 * and how it is quoted (0 plain, '\'' or '"'). 1 when found, 0 when the
 * file has no os_image.path (a url release), -EINVAL when the text is not
 * UTF-8 or not YAML libyaml reads, -ENOMEM. */
int ctl_release_find_path(const char *text, size_t len, size_t *start, size_t *end, char **value, int *quote);
/* text with [start, end) replaced by `path` written as a YAML scalar in the
 * same quoting where it can be (plain becomes double-quoted when the path
 * needs quotes); every other byte is kept. malloc'd, *out_len its length;
 * NULL on ENOMEM. */
char *ctl_release_splice_path(const char *text, size_t len, size_t start, size_t end, int quote, const char *path,
                              size_t *out_len);

/* `cluster watch`'s block: the cluster's name and status, then a table of
 * its hosts (hostname, role, status, stage, progress bar). malloc'd, NULL
 * on ENOMEM. */
char *ctl_watch_render(json_object *cluster, json_object *hosts, const struct ctl_fmt *f);
/* The cluster's install outcome for watch: 1 installed, -1 error or an
 * install that fell back to a status before it (insufficient, ready,
 * pending-for-input) after *started (set here once one runs), 0 not yet. */
int ctl_watch_outcome(json_object *cluster, bool *started);

/* The progress line of `infraenv download`: "[####------]  45%  27 MiB /
 * 60 MiB  31.2 MiB/s", or "27 MiB  31.2 MiB/s" when total is unknown (<= 0);
 * the rate is done / secs. At most 80 columns. Into buf. */
/* GET path into out (through out.part, renamed once whole and on disk; "-"
 * for standard output), its summary line on stderr; the response header
 * named `header` (NULL: none) into value[n] ("" when absent). 0 or an exit
 * code. */
int ctl_download_to(struct ctl *c, const char *path, const char *out, const char *header, char *value, size_t n);
char *ctl_download_line(int64_t done, int64_t total, double secs, char *buf, size_t n);

/* ---- verbs every resource has (resource.c) --------------------------------- */

/* Prints one resource object; `details` for `show` (validations, hardware). */
typedef int (*ctl_print_fn)(struct ctl *c, json_object *o, bool details);
/* Adds the table row of one list element; ctl_table_add's result. */
typedef int (*ctl_row_fn)(struct ctl_table *t, json_object *e);

/* A resource addressed as PATH/ID, named by the user as `arg`. */
struct ctl_kind {
        const char *name; /* "cluster", in messages */
        const char *arg;  /* "CLUSTER", in usage errors */
        const char *path; /* MUSTER_PATH_CLUSTERS: the list; PATH/ID one item */
        char *(*lookup)(struct ctl *c, const char *arg);
        ctl_print_fn print;
};

/* ctl_call_object, then print(c, reply, details); the exit status. */
int ctl_call_print(struct ctl *c, const char *method, const char *path, json_object *body, ctl_print_fn print,
                   bool details);
/* A list as JSON, or as a table of `cols` with a row per element. */
int ctl_print_rows(struct ctl *c, json_object *rows, const struct ctl_col *cols, size_t ncols, ctl_row_fn add_row);
/* `RESOURCE list` with no options of its own: every page of `path`, printed. */
int ctl_list_all(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, const char *path,
                 const struct ctl_col *cols, size_t ncols, ctl_row_fn add_row);
/* `RESOURCE show ID` and `RESOURCE delete ID` ("KIND ID deleted" unless -o json). */
int ctl_show_one(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, const struct ctl_kind *k);
int ctl_delete_one(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, const struct ctl_kind *k);

/* ---- commands --------------------------------------------------------------- */

int ctl_infra_env_create(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_infra_env_set(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_infra_env_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_infra_env_show(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_infra_env_delete(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_infra_env_rotate_token(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_infra_env_download(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_host_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_host_show(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_host_bind(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_host_unbind(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_host_set(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_host_delete(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_cluster_create(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_cluster_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_cluster_show(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_cluster_delete(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_event_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_token_create(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_token_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_token_revoke(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_cluster_set(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_cluster_capabilities(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_cluster_install(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_cluster_reset(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_cluster_cancel(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_host_install(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_host_rotate_token(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_host_logs(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_host_reclaim(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_cluster_upgrade(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_cluster_payload(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_operator_resolve(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_operator_subscribe(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_operator_unsubscribe(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_operator_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_operator_upgrade(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_operator_set(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_operator_show(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_operand_apply(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_operand_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_operand_delete(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_cluster_watch(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_wait(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_release_import(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_release_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_release_show(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_release_delete(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_signing_key(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_version(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_completion(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
/* The command table and the global options' help, for completion.c. */
const struct ctl_cmd *ctl_commands(size_t *n);
const char *ctl_global_help(void);
int ctl_catalog_add(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_catalog_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_catalog_show(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_catalog_delete(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_cluster_label(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_addon_create(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_addon_set(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_addon_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_addon_show(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_addon_delete(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_addon_releases(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);
int ctl_addon_rollout(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv);

/* ---- clusters' capabilities (capabilities.c) --------------------------------- */

/* The capability lines of a cluster object for a key/value block: baseline
 * set, additional, enabled, known (with `known`), conditions. */
void ctl_capabilities_kv(struct ctl_kv *kv, json_object *cluster, bool known);
/* When the implicit condition is True, a line on stdout naming what stays
 * enabled implicitly; and one for each capability of `wanted_off` (JSON
 * array, may be NULL) that stays enabled because the baseline set has it.
 * Wrapped to f->width. */
void ctl_print_implicit(const struct ctl_fmt *f, json_object *cluster, json_object *wanted_off);
