/* Logging back-end: one line per call on stderr, errno text appended. */
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum log_level max_level = LOG_LVL_INFO;

void log_set_max_level(enum log_level lvl) { max_level = lvl; }
enum log_level log_get_max_level(void) { return max_level; }

int log_internal(enum log_level lvl, int err, const char *subsys, const char *fmt, ...) {
        static int journal = -1;
        char msg[2048];
        va_list ap;
        int saved = errno;

        if (journal < 0)
                journal = getenv("JOURNAL_STREAM") != NULL;
        if (err != 0)
                errno = abs(err); /* so %m in fmt names the error we were given */
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (journal)
                fprintf(stderr, "<%d>%s: %s\n", (int) lvl, subsys, msg);
        else
                fprintf(stderr, "%s: %s\n", subsys, msg);
        errno = saved;
        return -abs(err);
}
