/* Helpers shared by the Criterion suites: run real binaries, temp dirs. */
#pragma once
#include <json-c/json.h>
#include <stddef.h>

/* Path of the built muster-agent (from $MUSTER_AGENT set by ctest). */
const char *tu_agent_path(void);
/* Run argv, wait, return its stdout (malloc'd, NUL-terminated) and put the
 * exit status (or 128+signal) in *status. stderr goes to *err_out if non-NULL. */
char *tu_run(const char *const argv[], int *status, char **err_out);
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
