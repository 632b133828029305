/* Scoped cleanup for library handles: declare with _cleanup_(fn) and the
 * handle is released when it goes out of scope. */
#pragma once
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)                                \
        static inline __attribute__((unused)) void func##p(type *p) {          \
                if (*p)                                                        \
                        func(*p);                                              \
        }

static inline void freep(void *p) { free(*(void **) p); }
static inline void fclosep(FILE **f) { if (*f) fclose(*f); }
static inline void closedirp(DIR **d) { if (*d) closedir(*d); }
static inline void closep(int *fd) { if (*fd >= 0) close(*fd); }

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_closedir_ _cleanup_(closedirp)
#define _cleanup_close_ _cleanup_(closep)

/* Hand a pointer out of a cleanup scope. */
#define TAKE_PTR(p) ({ __typeof__(p) _p = (p); (p) = NULL; _p; })
