/* musterctl's output for humans, pure: a table fitted into a width (columns
 * dropped by rank, free text wrapped within its column; printed by
 * libsmartcols), key/value blocks with wrapped text, and sizes and ages both
 * ways. No I/O, no locale: the caller says how wide and which ellipsis. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTL_SHORT_ID 8      /* ids are cut to this many characters unless wide */
#define CTL_MAX_WIDTH 10000 /* a larger $COLUMNS is not a width */

enum ctl_col_flag {
        CTL_COL_WIDE = 1u << 0,  /* shown only with -o wide */
        CTL_COL_ID = 1u << 1,    /* an id: cut to CTL_SHORT_ID characters unless wide */
        CTL_COL_FLEX = 1u << 2,  /* free text: wraps within its column before other cells do */
        CTL_COL_RIGHT = 1u << 3, /* right-aligned (numbers) */
        CTL_COL_MIDDLE = 1u << 4, /* cut in the middle, keeping both ends (paths) */
};

struct ctl_col {
        const char *header;
        unsigned flags;
        unsigned drop; /* 0: always kept; else dropped when the floors do not fit
                        * the width, highest first */
        unsigned min;  /* the column's floor (with its header's width and an id's
                        * short form): what decides which columns fit. A FLEX
                        * column wraps down to it; any other is at least this
                        * wide */
};

struct ctl_table {
        const struct ctl_col *cols;
        size_t ncols;
        char **cells; /* nrows * ncols, owned, sanitized */
        size_t nrows;
        size_t cap;
};

struct ctl_fmt {
        unsigned width;          /* 0: unlimited, every cell whole on its line */
        bool wide;               /* -o wide: every column, ids in full, no width */
        const char *ellipsis;    /* marks a cut path or header: "…" or "~" */
        bool no_header;          /* --no-headers */
};

/* The width musterctl's output fits: $COLUMNS (`columns`) when it is a
 * number from 1 to CTL_MAX_WIDTH, else the terminal's when stdout is one
 * (tty_cols; 0 when its size is unknown: 80), else 0 (no limit). */
unsigned ctl_output_width(const char *columns, bool is_tty, unsigned tty_cols);
/* The columns left for text after `indent` columns within f's width, at
 * least 20; 0 when the width is unlimited (-o wide, or no width). */
size_t ctl_fmt_room(const struct ctl_fmt *f, size_t indent);

void ctl_table_init(struct ctl_table *t, const struct ctl_col *cols, size_t ncols);
/* Append a row of t->ncols cells; NULL or "" cells show as "-". 0 or -ENOMEM. */
int ctl_table_add(struct ctl_table *t, const char *const cells[]);
void ctl_table_free(struct ctl_table *t);
/* The width of each column as it will be printed, 0 for a hidden one. Within
 * f->width (when it is not 0): columns are dropped by their `drop` rank
 * until the floors fit, whatever the rows; then free-text columns shrink to
 * their floors, then any column does, and only then below its floor. */
void ctl_table_layout(const struct ctl_table *t, const struct ctl_fmt *f, unsigned *widths);
/* The table as text, the header and then the rows; a cell wider than its
 * column is wrapped onto more lines (at spaces; a path is cut in the
 * middle), so no line is wider than f->width. Width 0: a line per row, whole
 * cells. An empty table is its header. malloc'd, NULL on ENOMEM. */
char *ctl_table_render(const struct ctl_table *t, const struct ctl_fmt *f);

/* Key/value blocks for `show`: "Key:   value" lines; a value longer than
 * the width wraps at spaces onto indented lines. */
enum ctl_kv_flag {
        CTL_KV_ID = 1u << 0, /* never wrapped (an id or digest the user may copy) */
};
struct ctl_kv {
        char **keys, **vals;
        unsigned *flags;
        size_t n, cap;
};
/* NULL values are skipped. 0 or -ENOMEM. */
int ctl_kv_add(struct ctl_kv *kv, const char *key, const char *val, unsigned flags);
void ctl_kv_free(struct ctl_kv *kv);
/* Width 0 (or -o wide): every value whole on its line. */
char *ctl_kv_render(const struct ctl_kv *kv, const struct ctl_fmt *f);

/* Text helpers. Display width is counted in code points. */
size_t ctl_text_width(const char *s);
/* A copy that is valid UTF-8 without control characters (tabs and newlines
 * become spaces, anything else '?'). NULL on ENOMEM. */
char *ctl_text_sanitize(const char *s);
/* s cut to at most `width` columns, the last one `ellipsis` when cut. */
char *ctl_text_cut(const char *s, size_t width, const char *ellipsis);
/* The same, keeping the start and the end of s around the ellipsis
 * ("0000_30_cluster-b…deployment.0.yaml"). */
char *ctl_text_cut_middle(const char *s, size_t width, const char *ellipsis);
/* s in lines of at most `width` columns of text, broken at spaces (a longer
 * word is broken hard); lines after the first are prefixed by `indent`
 * spaces, not counted in width. width 0: s as it is. */
char *ctl_text_wrap(const char *s, size_t width, size_t indent);

/* "16GiB", "100GB", "1.5 TiB", "512", "512B"; K/M/G/T/P alone are binary
 * (16G = 16GiB), KB/MB/... decimal, KiB/MiB/... binary; case-insensitive.
 * 0, -EINVAL (malformed) or -ERANGE (over INT64_MAX). */
int ctl_parse_size(const char *s, int64_t *out);
/* Binary units for humans: "16 GiB", "931.5 GiB", "512 B"; "-" if negative. */
char *ctl_format_size(int64_t bytes, char *buf, size_t n);
/* An age in the largest fitting unit: "45s", "12m", "5h", "3d"; "-" if negative. */
char *ctl_format_age(int64_t seconds, char *buf, size_t n);
/* A whole number in min..max: 0 or -EINVAL / -ERANGE. */
int ctl_parse_long(const char *s, long min, long max, long *out);
/* Seconds, with an optional fraction and unit "s" or "ms": "1", "0.5", "250ms".
 * 0 or -EINVAL; the value is in (0, 3600]. */
int ctl_parse_interval(const char *s, double *out);
/* A duration: seconds with an optional fraction and unit ms, s, m or h
 * ("90", "1.5m", "2h", "250ms"). 0 or -EINVAL; the value is in (0, max]. */
int ctl_parse_duration(const char *s, double max, double *out);
/* Whether s[0..n) is valid UTF-8 without NUL bytes. */
bool ctl_text_is_utf8(const char *s, size_t n);
/* "[#########-----------]  45%": `width` cells of '#' for the part done
 * (rounded down; full only at 100) and '-' for the rest, then the percent
 * right-aligned in 4 columns. percent is clamped to 0..100. Into buf. */
char *ctl_progress_bar(int percent, unsigned width, char *buf, size_t n);
/* Percent-encode a query value (RFC 3986 unreserved characters stay). */
char *ctl_url_escape(const char *s);
