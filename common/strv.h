/* Growable NULL-terminated string vectors, the list type of the inventory. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "cleanup.h"

struct strv {
        char **v;   /* NULL-terminated when n > 0 */
        size_t n;
        size_t cap;
};

/* Append a copy of s; -ENOMEM on failure. */
int strv_push(struct strv *s, const char *s_);
/* Append s, taking ownership (freed on failure). */
int strv_consume(struct strv *s, char *str);
bool strv_contains(const struct strv *s, const char *str);
void strv_sort(struct strv *s);
void strv_free(struct strv *s);
/* At most max strings of s joined by sep, then " and N more" for the rest;
 * malloc'd ("" for none), NULL on ENOMEM. */
char *strv_join(const struct strv *s, const char *sep, size_t max);

/* For _cleanup_strv_ struct strv v = { 0 }; */
static inline void strv_freep(struct strv *s) { strv_free(s); }
#define _cleanup_strv_ _cleanup_(strv_freep)
