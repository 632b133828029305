/* The verbs that infra-envs, clusters and hosts share: list every row as a
 * table or JSON, show one object, delete one by its looked-up id, and print
 * the object a request answers with. Each resource file says only what is
 * its own (columns, how a row and an object print, its path). */
#include <stdio.h>
#include <stdlib.h>

#include "cleanup.h"
#include "ctl.h"
#include "json-cleanup.h"
#include "protocol.h"

int ctl_call_print(struct ctl *c, const char *method, const char *path, json_object *body, ctl_print_fn print,
                   bool details) {
        struct ctl_reply r;
        int rc = ctl_call_object(c, method, path, body, &r) < 0 ? CTL_EXIT_FAIL : print(c, r.json, details);
        ctl_reply_free(&r);
        return rc;
}

int ctl_print_rows(struct ctl *c, json_object *rows, const struct ctl_col *cols, size_t ncols, ctl_row_fn add_row) {
        if (c->output == CTL_OUT_JSON)
                return ctl_print_json(rows);
        struct ctl_table t;
        int r = 0;
        ctl_table_init(&t, cols, ncols);
        for (size_t i = 0; i < json_object_array_length(rows) && r == 0; i++)
                r = add_row(&t, json_object_array_get_idx(rows, i));
        r = r < 0 ? ctl_fail("out of memory") : ctl_print_table(c, &t);
        ctl_table_free(&t);
        return r;
}

int ctl_list_all(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, const char *path,
                 const struct ctl_col *cols, size_t ncols, ctl_row_fn add_row) {
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, NULL, NULL, 0, "", &rc))
                return rc;
        _cleanup_json_ json_object *rows = NULL;
        if (ctl_get_list(c, path, true, &rows, NULL) < 0)
                return CTL_EXIT_FAIL;
        return ctl_print_rows(c, rows, cols, ncols, add_row);
}

/* The one argument of a show/delete, looked up: its id (*id) and path. NULL
 * with *rc the exit status. */
static char *one_path(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, const struct ctl_kind *k,
                      char **id, int *rc) {
        char *path;
        if (!ctl_plain_args(c, cmd, argc, argv, NULL, NULL, 1, k->arg, rc))
                return NULL;
        *rc = CTL_EXIT_FAIL;
        if (!(*id = k->lookup(c, argv[optind])))
                return NULL;
        if (asprintf(&path, MUSTER_PATH_ITEM("%s", "%s"), k->path, *id) < 0) {
                ctl_fail("out of memory");
                return NULL;
        }
        *rc = CTL_EXIT_OK;
        return path;
}

int ctl_show_one(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, const struct ctl_kind *k) {
        int rc;
        _cleanup_free_ char *id = NULL;
        _cleanup_free_ char *path = one_path(c, cmd, argc, argv, k, &id, &rc);
        if (!path)
                return rc;
        return ctl_call_print(c, "GET", path, NULL, k->print, true);
}

int ctl_delete_one(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, const struct ctl_kind *k) {
        int rc;
        _cleanup_free_ char *id = NULL;
        _cleanup_free_ char *path = one_path(c, cmd, argc, argv, k, &id, &rc);
        if (!path)
                return rc;
        struct ctl_reply r;
        rc = ctl_call(c, "DELETE", path, NULL, &r) < 0 ? CTL_EXIT_FAIL : CTL_EXIT_OK;
        ctl_reply_free(&r);
        if (rc == CTL_EXIT_OK && c->output != CTL_OUT_JSON)
                printf("%s %s deleted\n", k->name, id);
        return rc;
}
