/* Heap counting for bench-resolve: the program's own malloc family, each a
 * thin wrapper over glibc's allocator (__libc_malloc & co.), so that the
 * peak heap of one resolve() or one raw libsolv solve can be read exactly.
 * glibc supports replacing malloc this way and routes its own internal calls
 * through the replacement. Counting is off outside mem_track_start/stop, so
 * the timed rounds pay one branch per call. Single-threaded use only. */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <string.h>

#include "resolve-bench.h"

#if defined(__SANITIZE_ADDRESS__)
#define MEM_HOOKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define MEM_HOOKS 0
#endif
#endif
#if !defined(MEM_HOOKS) && defined(__GLIBC__)
#define MEM_HOOKS 1
#endif
#ifndef MEM_HOOKS
#define MEM_HOOKS 0
#endif

static bool tracking;
static int64_t live, peak;
static uint64_t n_allocs, n_bytes;

#if MEM_HOOKS
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void __libc_free(void *p);

/* p, a new block (or a resized one that held old bytes), counted. */
static void *noted_resized(void *p, size_t old) {
        if (tracking && p) {
                size_t s = malloc_usable_size(p);
                live += (int64_t) s - (int64_t) old;
                if (live > peak)
                        peak = live;
                n_allocs++;
                n_bytes += s > old ? s - old : 0;
        }
        return p;
}

static void *noted(void *p) {
        return noted_resized(p, 0);
}

void *malloc(size_t n) {
        return noted(__libc_malloc(n));
}

void *calloc(size_t n, size_t size) {
        return noted(__libc_calloc(n, size));
}

void free(void *p) {
        if (tracking && p)
                live -= (int64_t) malloc_usable_size(p);
        __libc_free(p);
}

void *realloc(void *p, size_t n) {
        size_t old = tracking && p ? malloc_usable_size(p) : 0;
        void *q = __libc_realloc(p, n);
        if (tracking && !q && n == 0)
                live -= (int64_t) old; /* realloc(p, 0) freed p */
        return noted_resized(q, old);
}

void *reallocarray(void *p, size_t n, size_t size) {
        if (size && n > SIZE_MAX / size) {
                errno = ENOMEM;
                return NULL;
        }
        return realloc(p, n * size);
}

void *memalign(size_t align, size_t n) {
        return noted(__libc_memalign(align, n));
}

void *aligned_alloc(size_t align, size_t n) {
        return memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n) {
        if (align < sizeof(void *) || (align & (align - 1)))
                return EINVAL;
        void *p = memalign(align, n);
        if (!p)
                return ENOMEM;
        *out = p;
        return 0;
}

void *valloc(size_t n) {
        return memalign(4096, n);
}
#endif

void mem_track_start(void) {
        live = peak = 0;
        n_allocs = n_bytes = 0;
        tracking = MEM_HOOKS;
}

void mem_track_stop(struct mem_track *out) {
        tracking = false;
        *out = (struct mem_track){ .available = MEM_HOOKS, .peak_bytes = peak, .net_bytes = live,
                                   .allocations = n_allocs, .bytes_allocated = n_bytes };
}
