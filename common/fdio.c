/* Reading a file descriptor to the end (fdio.h). */
#include "fdio.h"

#include <errno.h>
#include <unistd.h>

ssize_t fd_read_full(int fd, void *buf, size_t n) {
        size_t got = 0;
        while (got < n) {
                ssize_t k = read(fd, (char *) buf + got, n - got);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                got += (size_t) k;
        }
        return (ssize_t) got;
}
