/* Tables (printed by libsmartcols) and key/value blocks fitted into a
 * width, and the units musterctl reads and prints (table.h). Pure: strings
 * in, strings out, so the fitting rules are unit-tested without a server. */
#include "table.h"
#include "cleanup.h"
#include "units.h"

#include <libsmartcols.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- growable text ------------------------------------------------------ */

struct sbuf {
        char *s;
        size_t len, cap;
        bool oom;
};

static void sb_put(struct sbuf *b, const char *s, size_t n) {
        if (b->oom)
                return;
        if (b->len + n + 1 > b->cap) {
                size_t c = b->cap ? b->cap : 256;
                while (c < b->len + n + 1)
                        c *= 2;
                char *p = realloc(b->s, c);
                if (!p) {
                        b->oom = true;
                        return;
                }
                b->s = p;
                b->cap = c;
        }
        memcpy(b->s + b->len, s, n);
        b->len += n;
        b->s[b->len] = '\0';
}

static void sb_puts(struct sbuf *b, const char *s) {
        sb_put(b, s, strlen(s));
}

static void sb_spaces(struct sbuf *b, size_t n) {
        static const char sp[] = "                                ";
        while (n > 0) {
                size_t k = n < sizeof sp - 1 ? n : sizeof sp - 1;
                sb_put(b, sp, k);
                n -= k;
        }
}

/* Drop trailing spaces of the current line. */
static void sb_rstrip(struct sbuf *b) {
        while (b->len > 0 && b->s[b->len - 1] == ' ')
                b->s[--b->len] = '\0';
}

static char *sb_take(struct sbuf *b) {
        if (b->oom) {
                free(b->s);
                return NULL;
        }
        if (!b->s)
                return strdup("");
        return b->s;
}

/* ---- text ------------------------------------------------------------- */

size_t ctl_text_width(const char *s) {
        size_t w = 0;
        for (; s && *s; s++)
                if (((unsigned char) *s & 0xC0) != 0x80)
                        w++;
        return w;
}

/* Length of the valid UTF-8 sequence at p, or 0 if it is not one. */
static size_t utf8_seq(const unsigned char *p) {
        unsigned char c = p[0];
        if (c < 0x80)
                return 1;
        if (c >= 0xC2 && c <= 0xDF)
                return (p[1] & 0xC0) == 0x80 ? 2 : 0;
        if (c >= 0xE0 && c <= 0xEF) {
                unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
                return p[1] >= lo && p[1] <= hi && (p[2] & 0xC0) == 0x80 ? 3 : 0;
        }
        if (c >= 0xF0 && c <= 0xF4) {
                unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
                return p[1] >= lo && p[1] <= hi && (p[2] & 0xC0) == 0x80 && (p[3] & 0xC0) == 0x80 ? 4 : 0;
        }
        return 0;
}

char *ctl_text_sanitize(const char *s) {
        const unsigned char *p = (const unsigned char *) (s ? s : "");
        struct sbuf b = { 0 };
        sb_put(&b, "", 0);
        while (*p) {
                size_t n = utf8_seq(p);
                if (n == 0) {
                        sb_put(&b, "?", 1);
                        p++;
                } else if (n == 1 && (*p < 0x20 || *p == 0x7F)) {
                        sb_put(&b, *p == '\t' || *p == '\n' || *p == '\r' ? " " : "?", 1);
                        p++;
                } else if (n == 2 && p[0] == 0xC2 && p[1] < 0xA0) {
                        sb_put(&b, "?", 1); /* C1 controls */
                        p += 2;
                } else {
                        sb_put(&b, (const char *) p, n);
                        p += n;
                }
        }
        return sb_take(&b);
}

/* Bytes taken by the first `cols` code points of s. */
static size_t prefix_bytes(const char *s, size_t cols) {
        size_t i = 0, w = 0;
        while (s[i]) {
                if (((unsigned char) s[i] & 0xC0) != 0x80) {
                        if (w == cols)
                                break;
                        w++;
                }
                i++;
        }
        return i;
}

/* Append s cut to `width` columns (with the ellipsis) and padded to `pad`. */
static void put_cell(struct sbuf *b, const char *s, size_t width, const char *ellipsis, size_t pad, bool right) {
        size_t w = ctl_text_width(s);
        size_t ew = ctl_text_width(ellipsis);
        if (w > width) {
                size_t keep = width > ew ? width - ew : 0;
                if (right)
                        sb_spaces(b, pad > width ? pad - width : 0);
                sb_put(b, s, prefix_bytes(s, keep));
                sb_put(b, ellipsis, prefix_bytes(ellipsis, width - keep));
                if (!right)
                        sb_spaces(b, pad > width ? pad - width : 0);
                return;
        }
        if (right)
                sb_spaces(b, pad > w ? pad - w : 0);
        sb_puts(b, s);
        if (!right)
                sb_spaces(b, pad > w ? pad - w : 0);
}

/* s cut in the middle to `width` columns; as it is when it fits. */
static void put_middle(struct sbuf *b, const char *s, size_t width, const char *ellipsis) {
        size_t w = ctl_text_width(s), ew = ctl_text_width(ellipsis);
        if (w <= width) {
                sb_puts(b, s);
                return;
        }
        if (width <= ew + 1) {
                put_cell(b, s, width, ellipsis, 0, false);
                return;
        }
        size_t keep = width - ew, tail = keep / 2 + keep % 2, head = keep - tail;
        sb_put(b, s, prefix_bytes(s, head));
        sb_puts(b, ellipsis);
        sb_puts(b, s + prefix_bytes(s, w - tail));
}

char *ctl_text_cut_middle(const char *s, size_t width, const char *ellipsis) {
        struct sbuf b = { 0 };
        sb_put(&b, "", 0);
        put_middle(&b, s ? s : "", width, ellipsis ? ellipsis : "~");
        return sb_take(&b);
}

char *ctl_text_cut(const char *s, size_t width, const char *ellipsis) {
        struct sbuf b = { 0 };
        sb_put(&b, "", 0);
        put_cell(&b, s ? s : "", width, ellipsis ? ellipsis : "~", 0, false);
        return sb_take(&b);
}

char *ctl_text_wrap(const char *s, size_t width, size_t indent) {
        struct sbuf b = { 0 };
        size_t col = 0;
        sb_put(&b, "", 0);
        if (!s)
                return sb_take(&b);
        if (width == 0) {
                sb_puts(&b, s);
                return sb_take(&b);
        }
        const char *p = s;
        while (*p) {
                while (*p == ' ')
                        p++;
                if (!*p)
                        break;
                size_t wb = strcspn(p, " ");
                char *word = strndup(p, wb);
                if (!word) {
                        b.oom = true;
                        break;
                }
                p += wb;
                size_t ww = ctl_text_width(word);
                if (col > 0 && col + 1 + ww <= width) {
                        sb_put(&b, " ", 1);
                        sb_puts(&b, word);
                        col += 1 + ww;
                        free(word);
                        continue;
                }
                if (col > 0) {
                        sb_put(&b, "\n", 1);
                        sb_spaces(&b, indent);
                        col = 0;
                }
                const char *w = word;
                while (ww > width) {
                        size_t n = prefix_bytes(w, width);
                        sb_put(&b, w, n);
                        sb_put(&b, "\n", 1);
                        sb_spaces(&b, indent);
                        w += n;
                        ww -= width;
                }
                sb_puts(&b, w);
                col = ww;
                free(word);
        }
        return sb_take(&b);
}

/* ---- tables ------------------------------------------------------------ */

/* Tables are printed by libsmartcols. What is ours is the policy: which
 * columns show at a width (by their `drop` rank and floors, never by the
 * rows), how wide each one is, and what becomes of a cell wider than its
 * column: free text is wrapped at spaces into lines that libsmartcols
 * prints as one multi-line cell (scols_wrapnl_*), a path is cut in the
 * middle. libsmartcols is told not to fit anything itself: every cell it
 * gets fits its column. */

#define COL_SEP "  "
#define COL_GAP 2 /* the width of COL_SEP */

DEFINE_TRIVIAL_CLEANUP_FUNC(struct libscols_table *, scols_unref_table);

void ctl_table_init(struct ctl_table *t, const struct ctl_col *cols, size_t ncols) {
        memset(t, 0, sizeof *t);
        t->cols = cols;
        t->ncols = ncols;
}

int ctl_table_add(struct ctl_table *t, const char *const cells[]) {
        if (t->nrows + 1 > t->cap) {
                size_t c = t->cap ? t->cap * 2 : 16;
                char **p = reallocarray(t->cells, c * t->ncols, sizeof *p);
                if (!p)
                        return -ENOMEM;
                t->cells = p;
                t->cap = c;
        }
        char **row = t->cells + t->nrows * t->ncols;
        for (size_t i = 0; i < t->ncols; i++) {
                row[i] = ctl_text_sanitize(cells[i] && *cells[i] ? cells[i] : "-");
                if (!row[i]) {
                        while (i-- > 0)
                                free(row[i]);
                        return -ENOMEM;
                }
        }
        t->nrows++;
        return 0;
}

void ctl_table_free(struct ctl_table *t) {
        for (size_t i = 0; i < t->nrows * t->ncols; i++)
                free(t->cells[i]);
        free(t->cells);
        t->cells = NULL;
        t->nrows = t->cap = 0;
}

unsigned ctl_output_width(const char *columns, bool is_tty, unsigned tty_cols) {
        long v;
        if (columns && ctl_parse_long(columns, 1, CTL_MAX_WIDTH, &v) == 0)
                return (unsigned) v;
        if (!is_tty)
                return 0;
        return tty_cols ? tty_cols : 80;
}

/* The width tables and blocks are fitted into; 0: none. -o wide shows
 * everything in full. */
static unsigned fmt_width(const struct ctl_fmt *f) {
        return f->wide ? 0 : f->width;
}

size_t ctl_fmt_room(const struct ctl_fmt *f, size_t indent) {
        unsigned w = fmt_width(f);
        if (!w)
                return 0;
        return w > indent + 20 ? w - indent : 20;
}

static bool col_visible(const struct ctl_col *c, const struct ctl_fmt *f) {
        return !(c->flags & CTL_COL_WIDE) || f->wide;
}

/* The least a column is given, whatever the rows: its header, its declared
 * floor and, for an id, its short form. */
static size_t col_floor(const struct ctl_col *c, const struct ctl_fmt *f) {
        size_t w = ctl_text_width(c->header);
        if (c->min > w)
                w = c->min;
        if ((c->flags & CTL_COL_ID) && !f->wide && w < CTL_SHORT_ID)
                w = CTL_SHORT_ID;
        return w;
}

/* Which columns show: those of the output form, less the highest `drop`
 * ranks until the floors fit the width. The rows play no part, so a list
 * shows the same columns whatever it holds (DECISIONS.md D11). */
static void pick_columns(const struct ctl_table *t, const struct ctl_fmt *f, bool *vis) {
        unsigned width = fmt_width(f);
        for (size_t i = 0; i < t->ncols; i++)
                vis[i] = col_visible(&t->cols[i], f);
        while (width) {
                size_t total = 0, n = 0, victim = t->ncols;
                for (size_t i = 0; i < t->ncols; i++) {
                        if (!vis[i])
                                continue;
                        total += col_floor(&t->cols[i], f);
                        n++;
                        if (t->cols[i].drop && (victim == t->ncols || t->cols[i].drop >= t->cols[victim].drop))
                                victim = i;
                }
                total += n > 1 ? (n - 1) * COL_GAP : 0;
                if (total <= width || victim == t->ncols)
                        return;
                vis[victim] = false;
        }
}

/* Width of a cell as shown: ids are cut short unless wide. */
static size_t cell_width(const struct ctl_col *c, const char *s, const struct ctl_fmt *f) {
        size_t w = ctl_text_width(s);
        if ((c->flags & CTL_COL_ID) && !f->wide && w > CTL_SHORT_ID)
                w = CTL_SHORT_ID;
        return w;
}

/* Take `excess` columns from the columns matching `mask` (all when 0),
 * always from the one with the most room above its floor. Returns what is
 * left. */
static size_t shrink(const struct ctl_table *t, unsigned *w, const unsigned *floor, unsigned mask, size_t excess) {
        while (excess > 0) {
                size_t best = t->ncols;
                for (size_t i = 0; i < t->ncols; i++)
                        if (w[i] > floor[i] && (!mask || (t->cols[i].flags & mask)) &&
                            (best == t->ncols || w[i] - floor[i] > w[best] - floor[best]))
                                best = i;
                if (best == t->ncols)
                        break;
                w[best]--;
                excess--;
        }
        return excess;
}

void ctl_table_layout(const struct ctl_table *t, const struct ctl_fmt *f, unsigned *widths) {
        size_t n = t->ncols ? t->ncols : 1;
        _cleanup_free_ bool *vis = calloc(n, sizeof *vis);
        _cleanup_free_ unsigned *floor = calloc(n, sizeof *floor);
        if (!vis || !floor) {
                /* No memory to plan with: every column at its header's width. */
                for (size_t i = 0; i < t->ncols; i++)
                        widths[i] = col_visible(&t->cols[i], f) ? (unsigned) ctl_text_width(t->cols[i].header) : 0;
                return;
        }
        pick_columns(t, f, vis);
        size_t total = 0, nvis = 0;
        for (size_t i = 0; i < t->ncols; i++) {
                const struct ctl_col *c = &t->cols[i];
                widths[i] = floor[i] = 0;
                if (!vis[i])
                        continue;
                size_t w = ctl_text_width(c->header);
                if (!(c->flags & CTL_COL_FLEX) && c->min > w)
                        w = c->min;
                for (size_t r = 0; r < t->nrows; r++) {
                        size_t cw = cell_width(c, t->cells[r * t->ncols + i], f);
                        if (cw > w)
                                w = cw;
                }
                widths[i] = (unsigned) w;
                floor[i] = (unsigned) col_floor(c, f);
                if (floor[i] > widths[i])
                        floor[i] = widths[i];
                total += w;
                nvis++;
        }
        total += nvis > 1 ? (nvis - 1) * COL_GAP : 0;
        unsigned width = fmt_width(f);
        if (!width || total <= width)
                return;
        /* Free text wraps first, then any cell wider than its column's floor
         * wraps; only a width below the floors of the columns that cannot be
         * dropped takes columns under their floors. */
        size_t excess = shrink(t, widths, floor, CTL_COL_FLEX, total - width);
        excess = shrink(t, widths, floor, 0, excess);
        for (size_t i = 0; i < t->ncols; i++)
                floor[i] = widths[i] ? 1 : 0;
        shrink(t, widths, floor, 0, excess);
}

/* A cell as printed in a column `w` wide: an id in its short form unless
 * wide, and what is wider than the column wrapped into lines (free text,
 * at spaces) or, for a path, cut in the middle. malloc'd, NULL on ENOMEM. */
static char *cell_text(const struct ctl_col *c, const char *s, unsigned w, const struct ctl_fmt *f) {
        _cleanup_free_ char *shortid = NULL;
        if ((c->flags & CTL_COL_ID) && !f->wide && ctl_text_width(s) > CTL_SHORT_ID) {
                /* An id's head is unique enough; no ellipsis for it. */
                shortid = strndup(s, prefix_bytes(s, CTL_SHORT_ID));
                if (!shortid)
                        return NULL;
                s = shortid;
        }
        if (ctl_text_width(s) <= w)
                return strdup(s);
        if (c->flags & CTL_COL_MIDDLE)
                return ctl_text_cut_middle(s, w, f->ellipsis);
        return ctl_text_wrap(s, w, 0);
}

/* An empty table's header, which libsmartcols does not print. */
static char *render_header(const struct ctl_table *t, const struct ctl_fmt *f, const unsigned *w) {
        struct sbuf b = { 0 };
        sb_put(&b, "", 0);
        if (f->no_header)
                return sb_take(&b);
        bool first = true;
        for (size_t i = 0; i < t->ncols; i++) {
                if (!w[i])
                        continue;
                if (!first)
                        sb_puts(&b, COL_SEP);
                first = false;
                put_cell(&b, t->cols[i].header, w[i], f->ellipsis ? f->ellipsis : "~", 0, false);
        }
        sb_put(&b, "\n", 1);
        return sb_take(&b);
}

/* The libsmartcols table of t's shown columns, each cell fitted. */
static struct libscols_table *scols_of(const struct ctl_table *t, const struct ctl_fmt *f, const unsigned *w) {
        _cleanup_(scols_unref_tablep) struct libscols_table *tb = scols_new_table();
        const char *ell = f->ellipsis ? f->ellipsis : "~";
        if (!tb)
                return NULL;
        /* Never fitted again there, whether or not stdout is a terminal.
         * Its encoding stays on: in a locale that is not UTF-8 it shows what
         * the locale cannot as \x escapes, where unencoded text would have
         * no width it could count. */
        if (scols_table_set_termforce(tb, SCOLS_TERMFORCE_NEVER) < 0 ||
            scols_table_set_column_separator(tb, COL_SEP) < 0 || scols_table_enable_noheadings(tb, f->no_header) < 0)
                return NULL;
        for (size_t i = 0; i < t->ncols; i++) {
                if (!w[i])
                        continue;
                const struct ctl_col *c = &t->cols[i];
                _cleanup_free_ char *header = ctl_text_cut(c->header, w[i], ell);
                if (!header)
                        return NULL;
                /* Every column may hold a cell we wrapped: its lines are
                 * the chunks (scols_wrapnl_*), which need SCOLS_FL_WRAP and
                 * the newline kept out of the encoding. */
                int flags = SCOLS_FL_WRAP | (c->flags & CTL_COL_RIGHT ? SCOLS_FL_RIGHT : 0);
                struct libscols_column *cl = scols_table_new_column(tb, header, 0, flags);
                if (!cl || scols_column_set_wrapfunc(cl, scols_wrapnl_chunksize, scols_wrapnl_nextchunk, NULL) < 0 ||
                    scols_column_set_safechars(cl, "\n") < 0)
                        return NULL;
        }
        for (size_t r = 0; r < t->nrows; r++) {
                struct libscols_line *ln = scols_table_new_line(tb, NULL);
                if (!ln)
                        return NULL;
                for (size_t i = 0, k = 0; i < t->ncols; i++) {
                        if (!w[i])
                                continue;
                        char *s = cell_text(&t->cols[i], t->cells[r * t->ncols + i], w[i], f);
                        /* The line owns s from here. */
                        if (!s || scols_line_refer_data(ln, k++, s) < 0) {
                                free(s);
                                return NULL;
                        }
                }
        }
        return TAKE_PTR(tb);
}

/* s without the spaces at the ends of its lines, which libsmartcols pads
 * a wrapped row's shorter cells with. In place. */
static void strip_line_ends(char *s) {
        char *out = s;
        for (const char *p = s; *p;) {
                size_t n = strcspn(p, "\n"), keep = n;
                while (keep > 0 && p[keep - 1] == ' ')
                        keep--;
                memmove(out, p, keep);
                out += keep;
                p += n;
                if (*p == '\n')
                        *out++ = *p++;
        }
        *out = '\0';
}

char *ctl_table_render(const struct ctl_table *t, const struct ctl_fmt *f) {
        _cleanup_free_ unsigned *w = calloc(t->ncols ? t->ncols : 1, sizeof *w);
        if (!w)
                return NULL;
        ctl_table_layout(t, f, w);
        size_t shown = 0;
        for (size_t i = 0; i < t->ncols; i++)
                shown += w[i] != 0;
        if (t->nrows == 0 || shown == 0)
                return render_header(t, f, w);
        _cleanup_(scols_unref_tablep) struct libscols_table *tb = scols_of(t, f, w);
        char *text = NULL;
        if (!tb || scols_print_table_to_string(tb, &text) < 0 || !text) {
                free(text);
                return NULL;
        }
        strip_line_ends(text);
        size_t len = strlen(text);
        if (len > 0 && text[len - 1] == '\n')
                return text;
        char *out = realloc(text, len + 2);
        if (!out) {
                free(text);
                return NULL;
        }
        memcpy(out + len, "\n", 2);
        return out;
}

/* ---- key/value blocks --------------------------------------------------- */

int ctl_kv_add(struct ctl_kv *kv, const char *key, const char *val, unsigned flags) {
        if (!val)
                return 0;
        if (kv->n + 1 > kv->cap) {
                size_t c = kv->cap ? kv->cap * 2 : 16;
                char **k = reallocarray(kv->keys, c, sizeof *k);
                if (!k)
                        return -ENOMEM;
                kv->keys = k;
                char **v = reallocarray(kv->vals, c, sizeof *v);
                if (!v)
                        return -ENOMEM;
                kv->vals = v;
                unsigned *fl = reallocarray(kv->flags, c, sizeof *fl);
                if (!fl)
                        return -ENOMEM;
                kv->flags = fl;
                kv->cap = c;
        }
        char *k = ctl_text_sanitize(key), *v = ctl_text_sanitize(*val ? val : "-");
        if (!k || !v) {
                free(k);
                free(v);
                return -ENOMEM;
        }
        kv->keys[kv->n] = k;
        kv->vals[kv->n] = v;
        kv->flags[kv->n] = flags;
        kv->n++;
        return 0;
}

void ctl_kv_free(struct ctl_kv *kv) {
        for (size_t i = 0; i < kv->n; i++) {
                free(kv->keys[i]);
                free(kv->vals[i]);
        }
        free(kv->keys);
        free(kv->vals);
        free(kv->flags);
        memset(kv, 0, sizeof *kv);
}

char *ctl_kv_render(const struct ctl_kv *kv, const struct ctl_fmt *f) {
        struct sbuf b = { 0 };
        size_t keyw = 0;
        sb_put(&b, "", 0);
        for (size_t i = 0; i < kv->n; i++) {
                size_t w = ctl_text_width(kv->keys[i]) + 1;
                if (w > keyw)
                        keyw = w;
        }
        keyw += 1; /* a space after the colon */
        size_t avail = ctl_fmt_room(f, keyw);
        for (size_t i = 0; i < kv->n; i++) {
                sb_puts(&b, kv->keys[i]);
                sb_put(&b, ":", 1);
                sb_spaces(&b, keyw - ctl_text_width(kv->keys[i]) - 1);
                char *v = !avail || (kv->flags[i] & CTL_KV_ID) ? strdup(kv->vals[i])
                                                                : ctl_text_wrap(kv->vals[i], avail, keyw);
                if (!v) {
                        b.oom = true;
                        break;
                }
                sb_puts(&b, v);
                free(v);
                sb_rstrip(&b);
                sb_put(&b, "\n", 1);
        }
        return sb_take(&b);
}

/* ---- units -------------------------------------------------------------- */

int ctl_parse_size(const char *s, int64_t *out) {
        static const struct {
                const char *name;
                uint64_t mult;
        } units[] = {
                { "", 1 },
                { "b", 1 },
                { "k", 1ull << 10 }, { "kib", 1ull << 10 }, { "kb", 1000ull },
                { "m", 1ull << 20 }, { "mib", 1ull << 20 }, { "mb", 1000000ull },
                { "g", 1ull << 30 }, { "gib", 1ull << 30 }, { "gb", 1000000000ull },
                { "t", 1ull << 40 }, { "tib", 1ull << 40 }, { "tb", 1000000000000ull },
                { "p", 1ull << 50 }, { "pib", 1ull << 50 }, { "pb", 1000000000000000ull },
        };
        unsigned __int128 ip = 0, fp = 0, scale = 1;
        const char *p = s;
        if (!s)
                return -EINVAL;
        while (*p == ' ')
                p++;
        if (*p < '0' || *p > '9')
                return -EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
                ip = ip * 10 + (unsigned) (*p - '0');
                if (ip > INT64_MAX)
                        return -ERANGE;
        }
        if (*p == '.') {
                p++;
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                for (; *p >= '0' && *p <= '9'; p++)
                        if (scale < 1000000000000000000ull) { /* digits past 18 do not count */
                                fp = fp * 10 + (unsigned) (*p - '0');
                                scale *= 10;
                        }
        }
        while (*p == ' ')
                p++;
        size_t ul = strcspn(p, " ");
        const char *rest = p + ul;
        while (*rest == ' ')
                rest++;
        if (*rest || ul > 3)
                return -EINVAL;
        for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
                if (strlen(units[i].name) != ul || strncasecmp(p, units[i].name, ul) != 0)
                        continue;
                unsigned __int128 v = ip * units[i].mult + (fp * units[i].mult + scale / 2) / scale;
                if (v > INT64_MAX)
                        return -ERANGE;
                *out = (int64_t) v;
                return 0;
        }
        return -EINVAL;
}

char *ctl_format_size(int64_t bytes, char *buf, size_t n) {
        if (bytes < 0) {
                snprintf(buf, n, "-");
                return buf;
        }
        return units_format_bytes(bytes, buf, n);
}

char *ctl_format_age(int64_t seconds, char *buf, size_t n) {
        if (seconds < 0)
                snprintf(buf, n, "-");
        else if (seconds < 60)
                snprintf(buf, n, "%llds", (long long) seconds);
        else if (seconds < 3600)
                snprintf(buf, n, "%lldm", (long long) (seconds / 60));
        else if (seconds < 48 * 3600)
                snprintf(buf, n, "%lldh", (long long) (seconds / 3600));
        else
                snprintf(buf, n, "%lldd", (long long) (seconds / 86400));
        return buf;
}

int ctl_parse_long(const char *s, long min, long max, long *out) {
        char *end;
        if (!s || !*s || *s == ' ' || *s == '+')
                return -EINVAL;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (*end)
                return -EINVAL;
        if (errno == ERANGE || v < min || v > max)
                return -ERANGE;
        *out = v;
        return 0;
}

/* The unsigned number s starts with (a digit or '.' first: no sign, no
 * space) into *v, with *end after it. */
static int leading_number(const char *s, double *v, char **end) {
        if (!s || !((*s >= '0' && *s <= '9') || *s == '.'))
                return -EINVAL;
        errno = 0;
        *v = strtod(s, end);
        if (errno || *end == s)
                return -EINVAL;
        return 0;
}

int ctl_parse_interval(const char *s, double *out) {
        char *end;
        double v;
        if (leading_number(s, &v, &end) < 0)
                return -EINVAL;
        if (strcmp(end, "ms") == 0)
                v /= 1000;
        else if (*end && strcmp(end, "s") != 0)
                return -EINVAL;
        if (!isfinite(v) || v <= 0 || v > 3600)
                return -EINVAL;
        *out = v;
        return 0;
}

int ctl_parse_duration(const char *s, double max, double *out) {
        static const struct {
                const char *unit;
                double mult;
        } units[] = { { "", 1 }, { "s", 1 }, { "ms", 0.001 }, { "m", 60 }, { "h", 3600 } };
        char *end;
        double v;
        if (leading_number(s, &v, &end) < 0)
                return -EINVAL;
        for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
                if (strcmp(end, units[i].unit) != 0)
                        continue;
                v *= units[i].mult;
                if (!isfinite(v) || v <= 0 || v > max)
                        return -EINVAL;
                *out = v;
                return 0;
        }
        return -EINVAL;
}

bool ctl_text_is_utf8(const char *s, size_t n) {
        const unsigned char *p = (const unsigned char *) s, *e = p + n;
        while (p < e) {
                if (*p == 0)
                        return false;
                /* utf8_seq reads up to 4 bytes: never past the end. */
                unsigned char tmp[4] = { 0 };
                size_t avail = (size_t) (e - p);
                memcpy(tmp, p, avail < 4 ? avail : 4);
                size_t k = utf8_seq(tmp);
                if (k == 0 || k > avail)
                        return false;
                p += k;
        }
        return true;
}

char *ctl_progress_bar(int percent, unsigned width, char *buf, size_t n) {
        size_t k = 0;
        if (n == 0)
                return buf;
        if (percent < 0)
                percent = 0;
        if (percent > 100)
                percent = 100;
        unsigned done = (unsigned) ((unsigned long) percent * width / 100);
        if (k + 1 < n)
                buf[k++] = '[';
        for (unsigned i = 0; i < width && k + 1 < n; i++)
                buf[k++] = i < done ? '#' : '-';
        buf[k] = '\0';
        snprintf(buf + k, n - k, "]%4d%%", percent);
        return buf;
}

char *ctl_url_escape(const char *s) {
        static const char hex[] = "0123456789ABCDEF";
        size_t n = strlen(s);
        char *o = malloc(n * 3 + 1), *q = o;
        if (!o)
                return NULL;
        for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
                if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
                    *p == '.' || *p == '_' || *p == '~')
                        *q++ = (char) *p;
                else {
                        *q++ = '%';
                        *q++ = hex[*p >> 4];
                        *q++ = hex[*p & 15];
                }
        }
        *q = '\0';
        return o;
}
