/* `musterctl signing-key`: the public half of the key musterd signs
 * payloads with, as PEM: what agents get as --coordinator-key. Here -o
 * names a file (the key is not secret; the file is 0644). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "ctl.h"
#include "fdio.h"
#include "json-cleanup.h"
#include "protocol.h"

#define PEM_BEGIN "-----BEGIN PUBLIC KEY-----"

static int write_key(const char *path, const char *pem) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return ctl_fail("cannot write %s: %s", path, strerror(errno));
        int r = fd_write_full(fd, pem, strlen(pem));
        if (r < 0)
                return ctl_fail("cannot write %s: %s", path, strerror(-r));
        r = close(fd);
        fd = -1;
        if (r < 0)
                return ctl_fail("cannot write %s: %s", path, strerror(errno));
        return 0;
}

int ctl_signing_key(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        const char *out = NULL;
        int rc;
        if (!ctl_out_args(c, cmd, argc, argv, "-o needs a file name", &out, 0, "", &rc))
                return rc;
        struct ctl_reply r;
        if (ctl_call(c, "GET", MUSTER_PATH_SIGNING_KEY, NULL, &r) < 0) {
                ctl_reply_free(&r);
                return CTL_EXIT_FAIL;
        }
        const char *pem = r.body ? strstr(r.body, PEM_BEGIN) : NULL;
        _cleanup_free_ char *text = NULL;
        rc = CTL_EXIT_OK;
        if (!pem || !strstr(pem, "-----END PUBLIC KEY-----"))
                rc = ctl_fail("GET /signing-key: the reply is not a PEM public key");
        else {
                /* One trailing newline, whatever the server sent. */
                size_t n = strlen(pem);
                while (n > 0 && (pem[n - 1] == '\n' || pem[n - 1] == '\r' || pem[n - 1] == ' '))
                        n--;
                if (asprintf(&text, "%.*s\n", (int) n, pem) < 0) {
                        text = NULL;
                        rc = ctl_fail("out of memory");
                }
        }
        if (rc == CTL_EXIT_OK && out) {
                rc = write_key(out, text);
                if (rc == CTL_EXIT_OK && c->output != CTL_OUT_JSON)
                        printf("signing key written to %s\n", out);
        } else if (rc == CTL_EXIT_OK && c->output == CTL_OUT_JSON) {
                _cleanup_json_ json_object *o2 = json_object_new_object();
                if (!o2)
                        rc = ctl_fail("out of memory");
                else {
                        json_object_object_add(o2, "public_key", json_object_new_string(text));
                        rc = ctl_print_json(o2);
                }
        } else if (rc == CTL_EXIT_OK)
                fputs(text, stdout);
        ctl_reply_free(&r);
        return rc;
}
