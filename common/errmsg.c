/* The reason a call failed, into the caller's buffer (errmsg.h). */
#include "errmsg.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

int errmsg(char *err, size_t errlen, int r, const char *fmt, ...) {
        if (err && errlen) {
                int saved = errno;
                va_list ap;
                errno = r < 0 ? -r : r;
                va_start(ap, fmt);
                vsnprintf(err, errlen, fmt, ap);
                va_end(ap);
                errno = saved;
        }
        return r;
}
