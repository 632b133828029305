/* libcurl on first use (curlload.h): one dlopen() per process, one dlsym()
 * per function, and an ELF note that names the library for whoever packs
 * the agent, since ldd no longer shows it. */
#include "curlload.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

struct curlload_api curlload_api;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_result;
static char load_error[512];

/* The message for a load that failed with r; `why` is dlerror()'s, copied
 * before the next dl* call can free it. Returns r. */
static int failed(int r, const char *why) {
        snprintf(load_error, sizeof load_error,
                 "libcurl (" CURLLOAD_SONAME ") could not be loaded: %s; muster-agent needs it to talk to the "
                 "coordinator (" CURLLOAD_PACKAGE_HINT ")",
                 why ? why : "unknown error");
        return r;
}

/* Once per process. A loaded library is never dlclose()d: the handles and
 * libcurl's global state live until the process exits. */
static void load(void) {
        struct curlload_api api;
        void *dl;

        dl = dlopen(CURLLOAD_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (!dl) {
                load_result = failed(-ELIBACC, dlerror());
                return;
        }
#define CURLLOAD_SYM(f)                                                   \
        *(void **) &api.f = dlsym(dl, "curl_" #f);                        \
        if (!api.f) {                                                     \
                load_result = failed(-ELIBBAD, dlerror());                \
                dlclose(dl);                                              \
                return;                                                   \
        }
        CURLLOAD_FUNCTIONS(CURLLOAD_SYM)
#undef CURLLOAD_SYM
        curlload_api = api;
        load_result = 0;
}

int curlload_open(char *err, size_t errlen) {
        pthread_once(&load_once, load);
        if (load_result < 0 && err && errlen > 0)
                snprintf(err, errlen, "%s", load_error);
        return load_result;
}

/* ---- the ELF note ------------------------------------------------------- */

/* What this binary dlopen()s, in the "ELF dlopen metadata" format systemd
 * and distributions read (uapi-group.org: a note of owner "FDO", type
 * 0x407c0c0a, in section .note.dlopen, whose descriptor is a JSON array).
 * iso/build.sh takes the sonames from it to put libcurl's package in the
 * live image. `readelf -p .note.dlopen muster-agent` shows it. */
#define NOTE_DLOPEN_OWNER "FDO"
#define NOTE_DLOPEN_TYPE UINT32_C(0x407c0c0a)
#define NOTE_DLOPEN_JSON                                                                                     \
        "[{\"feature\":\"curl\",\"description\":\"HTTP(S) to the coordinator (muster-agent run and node)\","  \
        "\"priority\":\"required\",\"soname\":[\"" CURLLOAD_SONAME "\"]}]"

/* Not instrumented: ASan's redzones would pad the section with bytes that
 * are no note (GCC leaves globals with a section alone; clang needs telling). */
#ifdef __clang__
#define NOTE_NO_ASAN __attribute__((no_sanitize("address")))
#else
#define NOTE_NO_ASAN
#endif

__attribute__((used, section(".note.dlopen"))) NOTE_NO_ASAN _Alignas(uint32_t) static const struct {
        struct {
                uint32_t n_namesz, n_descsz, n_type;
        } nhdr;
        char name[sizeof NOTE_DLOPEN_OWNER];
        _Alignas(uint32_t) char desc[sizeof NOTE_DLOPEN_JSON];
} dlopen_note = {
        .nhdr = { sizeof NOTE_DLOPEN_OWNER, sizeof NOTE_DLOPEN_JSON, NOTE_DLOPEN_TYPE },
        .name = NOTE_DLOPEN_OWNER,
        .desc = NOTE_DLOPEN_JSON,
};
