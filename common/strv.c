/* String vectors: the one list-of-strings type shared by model and probes. */
#include "strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int strv_consume(struct strv *s, char *str) {
        if (!str)
                return -ENOMEM;
        if (s->n + 2 > s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 8;
                char **v = realloc(s->v, cap * sizeof *v);
                if (!v) {
                        free(str);
                        return -ENOMEM;
                }
                s->v = v;
                s->cap = cap;
        }
        s->v[s->n++] = str;
        s->v[s->n] = NULL;
        return 0;
}

int strv_push(struct strv *s, const char *str) {
        return strv_consume(s, strdup(str));
}

bool strv_contains(const struct strv *s, const char *str) {
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->v[i], str) == 0)
                        return true;
        return false;
}

static int cmp(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

void strv_sort(struct strv *s) {
        if (s->n > 1)
                qsort(s->v, s->n, sizeof *s->v, cmp);
}

void strv_free(struct strv *s) {
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i]);
        free(s->v);
        *s = (struct strv) { 0 };
}

char *strv_join(const struct strv *s, const char *sep, size_t max) {
        size_t len = 1, shown = s->n < max ? s->n : max;
        for (size_t i = 0; i < shown; i++)
                len += strlen(s->v[i]) + strlen(sep);
        len += 32; /* " and N more" */
        char *t = malloc(len), *p = t;
        if (!t)
                return NULL;
        *p = 0;
        for (size_t i = 0; i < shown; i++)
                p += sprintf(p, "%s%s", i ? sep : "", s->v[i]);
        if (s->n > shown)
                sprintf(p, " and %zu more", s->n - shown);
        return t;
}
