/* The line syntax musterd.conf and agent.conf share (confline.h). */
#include "confline.h"

#include <stdbool.h>
#include <string.h>

char *confline_trim(char *s) {
        char *e;

        while (*s == ' ' || *s == '\t')
                s++;
        e = s + strlen(s);
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
                *--e = '\0';
        return s;
}

/* Cut a comment: '#' at the start or after a blank, outside double quotes. */
static void strip_comment(char *s) {
        bool quoted = false;

        for (char *p = s; *p; p++) {
                if (*p == '"')
                        quoted = !quoted;
                else if (*p == '#' && !quoted && (p == s || p[-1] == ' ' || p[-1] == '\t')) {
                        *p = '\0';
                        return;
                }
        }
}

enum confline_kind confline_parse(char *line, unsigned flags, struct confline *out) {
        char *s, *eq, *value;
        size_t n;

        out->key = out->value = NULL;
        strip_comment(line);
        s = confline_trim(line);
        if (*s == '\0')
                return CONFLINE_BLANK;

        if ((flags & CONFLINE_SECTIONS) && *s == '[') {
                n = strlen(s);
                if (s[n - 1] != ']')
                        return CONFLINE_ERR_SECTION;
                s[n - 1] = '\0';
                out->key = confline_trim(s + 1);
                return CONFLINE_SECTION;
        }

        eq = strchr(s, '=');
        if (!eq)
                return CONFLINE_ERR_NO_EQUALS;
        *eq = '\0';
        out->key = confline_trim(s);
        value = confline_trim(eq + 1);
        if (*out->key == '\0')
                return CONFLINE_ERR_NO_KEY;

        n = strlen(value);
        if (n == 0)
                return CONFLINE_ERR_NO_VALUE;
        if (value[0] == '"') {
                if (n < 2 || value[n - 1] != '"' || memchr(value + 1, '"', n - 2))
                        return CONFLINE_ERR_QUOTES;
                value[n - 1] = '\0';
                value++;
        }
        out->value = value;
        return CONFLINE_PAIR;
}
