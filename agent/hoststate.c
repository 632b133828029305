/* The host id kept in the agent's state dir (run.h): read, and written
 * atomically so that a power cut leaves the old id or the new one. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "run.h"
#include "uuid.h"

int run_state_read_host_id(const char *state_dir, char out[UUID_STR_LEN]) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -1;
        char buf[128];
        ssize_t k;

        if (asprintf(&path, "%s/%s", state_dir, RUN_HOST_ID_FILE) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        do
                k = read(fd, buf, sizeof buf - 1);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return -errno;
        buf[k] = '\0';
        buf[strcspn(buf, " \t\r\n")] = '\0';
        return uuid_normalize(buf, out) < 0 ? -EINVAL : 0;
}

int run_state_write_host_id(const char *state_dir, const char *id) {
        _cleanup_free_ char *tmp = NULL, *path = NULL;
        _cleanup_close_ int dfd = -1;
        char line[UUID_STR_LEN + 1];
        int fd, r = 0;

        if (!uuid_is_valid(id))
                return -EINVAL;
        if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
                return -errno;
        if (asprintf(&path, "%s/%s", state_dir, RUN_HOST_ID_FILE) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        if (asprintf(&tmp, "%s/.%s.XXXXXX", state_dir, RUN_HOST_ID_FILE) < 0) {
                tmp = NULL;
                return -ENOMEM;
        }
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int n = snprintf(line, sizeof line, "%s\n", id);
        if (write(fd, line, (size_t) n) != n)
                r = errno ? -errno : -EIO;
        else if (fchmod(fd, 0644) < 0 || fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0) {
                unlink(tmp);
                return r;
        }
        /* The rename itself must survive a power cut. */
        dfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0)
                fsync(dfd);
        return 0;
}
