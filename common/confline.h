/* One line of a "key = value" configuration file, as musterd.conf and
 * agent.conf write them: blanks, '#' comments, an optionally double-quoted
 * value and (musterd.conf) "[section]" headers. Pure: the line is cut in
 * place; what a key means and the messages are the caller's. */
#pragma once

/* What a line is. The ERR_ kinds are malformed lines. */
enum confline_kind {
        CONFLINE_BLANK,         /* nothing but blanks and a comment */
        CONFLINE_SECTION,       /* "[name]" (CONFLINE_SECTIONS only): name in key, trimmed, maybe "" */
        CONFLINE_PAIR,          /* "key = value": key and value, trimmed, value's quotes removed */
        CONFLINE_ERR_SECTION,   /* a "[" line without the closing "]" (CONFLINE_SECTIONS only) */
        CONFLINE_ERR_NO_EQUALS, /* neither a pair nor a header */
        CONFLINE_ERR_NO_KEY,    /* nothing before the '=' */
        CONFLINE_ERR_QUOTES,    /* key set; the value opens a quote that does not close at its end, or
                                 * holds another */
        CONFLINE_ERR_NO_VALUE,  /* key set; nothing after the '=' */
};

/* flags: a line starting with '[' is a section header. Without it such a
 * line is read as any other. */
#define CONFLINE_SECTIONS 1u

struct confline {
        char *key;   /* into the line: the key or the section name */
        char *value; /* into the line: CONFLINE_PAIR's value */
};

/* Classify line (one line, no '\n') and cut it in place. A comment is a '#'
 * at the start or after a blank, outside double quotes; blanks are spaces
 * and tabs, and a trailing '\r' goes too. */
enum confline_kind confline_parse(char *line, unsigned flags, struct confline *out);

/* s without leading spaces and tabs or trailing spaces, tabs and '\r' (cut
 * in place). */
char *confline_trim(char *s);
