/* libcurl loaded on first use instead of linked: `inventory`, `--version`
 * and `--help` never talk HTTP and should not map libcurl's 30-odd
 * libraries (TLS, Kerberos, LDAP, ...) at every start; `run` and `node` call
 * curlload_open() before anything else touches curl (systemd's way with
 * optional libraries: dlopen() the soname, dlsym() each function into a
 * table). Only client.c, run.c and curlload.c include this header.
 *
 * Why the #defines at the end: they turn each curl_* call of the including
 * file into a call through curlload_api, so client.c keeps reading like
 * plain libcurl code. curl.h's type checks of curl_easy_setopt() and
 * curl_easy_getinfo() are macros that call the functions by name, which a
 * pointer cannot stand in for, so CURL_DISABLE_TYPECHECK turns them off
 * here; GCC builds compile client.c a second time with CURLLOAD_TYPECHECK
 * (the real names, the checks on and made visible; agent/CMakeLists.txt),
 * never linked, so a wrong argument type still fails the build. A curl
 * function used without an entry below is an undefined reference when
 * muster-agent links (it does not link libcurl): add it to
 * CURLLOAD_FUNCTIONS and to the #defines. */
#pragma once
#include <stddef.h>

#ifndef CURLLOAD_TYPECHECK
#define CURL_DISABLE_TYPECHECK
#endif
#include <curl/curl.h>

/* What is dlopen()ed (libcurl's ABI 4) and the package that ships it; also
 * in the binary's .note.dlopen ELF note, where iso/build.sh reads it. */
#define CURLLOAD_SONAME "libcurl.so.4"
#define CURLLOAD_PACKAGE_HINT "Debian: apt-get install libcurl4"

/* Every curl function the agent calls, by name without its curl_ prefix. */
#define CURLLOAD_FUNCTIONS(X)                                                                   \
        X(global_init) X(global_cleanup) X(easy_init) X(easy_cleanup) X(easy_reset) X(easy_setopt) \
        X(easy_getinfo) X(easy_perform) X(easy_strerror) X(slist_append) X(slist_free_all)

/* The table, typed after curl.h's own prototypes. Filled once by
 * curlload_open(); use it only after that returned 0. */
struct curlload_api {
#define CURLLOAD_FIELD(f) __typeof__(curl_##f) *f;
        CURLLOAD_FUNCTIONS(CURLLOAD_FIELD)
#undef CURLLOAD_FIELD
};
extern struct curlload_api curlload_api;

/* Load libcurl and fill curlload_api, once per process (thread-safe; later
 * calls only return the first outcome). 0, or -ELIBACC when the library
 * cannot be loaded and -ELIBBAD when it lacks a function, with the message
 * for the user in err (when not NULL): which library, dlerror()'s words and
 * how to install it. */
int curlload_open(char *err, size_t errlen);

#ifndef CURLLOAD_TYPECHECK
#undef curl_easy_setopt  /* curl.h's pass-through macros, even with the checks off */
#undef curl_easy_getinfo
#define curl_global_init (*curlload_api.global_init)
#define curl_global_cleanup (*curlload_api.global_cleanup)
#define curl_easy_init (*curlload_api.easy_init)
#define curl_easy_cleanup (*curlload_api.easy_cleanup)
#define curl_easy_reset (*curlload_api.easy_reset)
#define curl_easy_setopt (*curlload_api.easy_setopt)
#define curl_easy_getinfo (*curlload_api.easy_getinfo)
#define curl_easy_perform (*curlload_api.easy_perform)
#define curl_easy_strerror (*curlload_api.easy_strerror)
#define curl_slist_append (*curlload_api.slist_append)
#define curl_slist_free_all (*curlload_api.slist_free_all)
#endif
