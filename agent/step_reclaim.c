/* The reclaim step of an installed host's node agent: the discovery kernel
 * and initramfs fetched into the boot partition, the boot entry made the
 * next boot (reclaim.h); the loop reboots once the result is posted. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "client.h"
#include "errmsg.h"
#include "fdio.h"
#include "json-cleanup.h"
#include "jsonwrite.h"
#include "log.h"
#include "reclaim.h"
#include "run.h"
#include "steps.h"

/* A download into an open file, counted. */
struct file_sink {
        int fd;
        uint64_t n;
};

static int file_sink(void *userdata, const void *p, size_t n) {
        struct file_sink *f = userdata;
        int r = fd_write_full(f->fd, p, n);
        if (r >= 0)
                f->n += n;
        return r;
}

/* Stream a coordinator path into dir/name, through a temporary file
 * renamed once whole and synced. 0 and *bytes, or -errno with err. */
static int reclaim_fetch(struct client *cl, const char *url, const char *dir, const char *name, uint64_t *bytes,
                         char *err, size_t errlen) {
        _cleanup_free_ char *final = NULL, *tmp = NULL;
        if (asprintf(&final, "%s/%s", dir, name) < 0 || asprintf(&tmp, "%s/.%s.XXXXXX", dir, name) < 0) {
                final = tmp = NULL;
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        }
        struct file_sink f = { .fd = mkostemp(tmp, O_CLOEXEC) };
        if (f.fd < 0)
                return errmsg(err, errlen, -errno, "cannot create a file in %s: %s", dir, strerror(errno));
        _cleanup_json_ json_object *reply = NULL;
        struct client_stream s = { .sink = file_sink, .userdata = &f,
                                   .deadline_ms = step_mono_ms() + RUN_RECLAIM_FETCH_DEADLINE_MS };
        long status = 0;
        int r = client_get_stream(cl, url, &s, &status, &reply);
        char what[512];
        r = client_stream_result(cl, &s, r, status, reply, what, sizeof what);
        if (r < 0)
                errmsg(err, errlen, r, "fetching %s failed: %s", url, s.sink_error ? strerror(-r) : what);
        if (r >= 0 && (fchmod(f.fd, 0644) < 0 || fsync(f.fd) < 0))
                r = errmsg(err, errlen, -errno, "cannot write %s: %s", tmp, strerror(errno));
        if (close(f.fd) < 0 && r >= 0)
                r = errmsg(err, errlen, -errno, "cannot write %s: %s", tmp, strerror(errno));
        if (r >= 0 && rename(tmp, final) < 0)
                r = errmsg(err, errlen, -errno, "cannot rename %s to %s: %s", tmp, final, strerror(errno));
        if (r < 0) {
                unlink(tmp);
                return r;
        }
        *bytes = f.n;
        /* Best effort: the boot entry written next is synced on its own. */
        (void) fd_fsync_parent(final);
        return 0;
}

/* reclaim {"kernel_url", "initrd_url", "cmdline", "wipe", "installation_disk"?}
 * on an installed host's node agent: the discovery kernel and initramfs
 * into the boot partition, the boot entry made the next boot (reclaim.h),
 * then a reboot once the result is posted. With wipe the entry's command
 * line carries muster.reclaim_wipe=DISK for the discovery agent. */
void run_step_reclaim(const struct run_instruction *in, const struct run_step_context *ctx,
                      struct run_step_result *res) {
        const char *kurl = NULL, *iurl = NULL, *cmdline = NULL, *disk = NULL;
        bool wipe = false;
        json_object *v;
        char err[600] = "";
        res->exit_code = 1;
        if (json_object_object_get_ex(in->args, "kernel_url", &v) && json_object_is_type(v, json_type_string))
                kurl = json_object_get_string(v);
        if (json_object_object_get_ex(in->args, "initrd_url", &v) && json_object_is_type(v, json_type_string))
                iurl = json_object_get_string(v);
        if (json_object_object_get_ex(in->args, "cmdline", &v) && json_object_is_type(v, json_type_string))
                cmdline = json_object_get_string(v);
        if (json_object_object_get_ex(in->args, "wipe", &v) && json_object_is_type(v, json_type_boolean))
                wipe = json_object_get_boolean(v);
        if (json_object_object_get_ex(in->args, "installation_disk", &v) && json_object_is_type(v, json_type_string))
                disk = json_object_get_string(v);
        if (!kurl || !iurl || kurl[0] != '/' || iurl[0] != '/' || !cmdline) {
                res->error = step_printf("the arguments of step %s are not valid for reclaim: kernel_url and "
                                           "initrd_url must be coordinator paths, cmdline a string", in->step_id);
                return;
        }
        if (wipe && (!disk || disk[0] != '/' || strpbrk(disk, " \t\n\"'"))) {
                res->error = step_printf("reclaim with wipe needs the installation disk's path, and the coordinator "
                                           "sent none that can go on a command line");
                return;
        }
        if (!ctx->client || !ctx->boot_dir) {
                res->error = step_printf("no coordinator connection or boot folder for reclaim");
                return;
        }
        _cleanup_free_ char *dir = NULL, *line = NULL;
        if (asprintf(&dir, "%s/%s", ctx->boot_dir, RECLAIM_DIR) < 0 ||
            asprintf(&line, "%s%s%s", cmdline, wipe ? " muster.reclaim_wipe=" : "", wipe ? disk : "") < 0) {
                dir = line = NULL;
                res->error = step_printf("out of memory");
                return;
        }
        if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                res->error = step_printf("cannot make %s: %m", dir);
                return;
        }
        struct client cl;
        if (client_clone(&cl, ctx->client) < 0) {
                res->error = step_printf("out of memory");
                return;
        }
        cl.cancel = ctx->cancel;
        cl.cancel_userdata = ctx->cancel_userdata;
        uint64_t kb = 0, ib = 0;
        int r = reclaim_fetch(&cl, kurl, dir, RECLAIM_KERNEL, &kb, err, sizeof err);
        if (r >= 0)
                r = reclaim_fetch(&cl, iurl, dir, RECLAIM_INITRD, &ib, err, sizeof err);
        client_done(&cl);
        if (r >= 0)
                r = reclaim_write_entry(ctx->boot_dir, line, err, sizeof err);
        if (r < 0) {
                res->error = step_printf("reclaim failed: %s", err[0] ? err : "unknown error");
                return;
        }
        json_object *o = json_object_new_object();
        if (!o || jadd(o, "boot_dir", json_object_new_string(ctx->boot_dir)) < 0 ||
            jadd(o, "entry", json_object_new_string(RECLAIM_ENTRY_ID)) < 0 ||
            jadd(o, "kernel_bytes", json_object_new_int64((int64_t) kb)) < 0 ||
            jadd(o, "initrd_bytes", json_object_new_int64((int64_t) ib)) < 0 ||
            jadd(o, "wipe", json_object_new_boolean(wipe)) < 0 ||
            jadd(o, "reboot", json_object_new_boolean(ctx->reclaim_reboots)) < 0) {
                json_object_put(o);
                res->error = step_printf("out of memory");
                return;
        }
        log_warning("run", "Step %s: the discovery system (%llu + %llu bytes) is the next boot from %s%s", in->step_id,
                    (unsigned long long) kb, (unsigned long long) ib, ctx->boot_dir,
                    ctx->reclaim_reboots ? "; rebooting once the result is posted" : "; not rebooting (--boot-dir)");
        res->exit_code = 0;
        res->output = o;
        res->reboot = ctx->reclaim_reboots;
}
