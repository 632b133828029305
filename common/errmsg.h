/* The reason a call failed, written into the caller's err/errlen buffer:
 * the one printf-style helper behind the parsers' and the installer's
 * "fail with this message" returns. */
#pragma once
#include <stddef.h>

/* Format fmt into err (at most errlen bytes, cut to fit) and return r. err
 * may be NULL or errlen 0: then nothing is written. While fmt is formatted
 * errno is |r|, so "%m" names the error r carries; errno is kept. */
int errmsg(char *err, size_t errlen, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
