/* Tables and key/value blocks fitted into a width, and the units musterctl
 * reads and prints (table.h). Pure: strings in, strings out, so the fitting
 * rules are unit-tested without a server. */
#include "table.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define COL_GAP 2 /* spaces between columns */

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

static bool col_visible(const struct ctl_col *c, const struct ctl_fmt *f) {
        return !(c->flags & CTL_COL_WIDE) || f->wide;
}

/* Width of a cell as shown: ids are cut short unless wide. */
static size_t cell_width(const struct ctl_col *c, const char *s, const struct ctl_fmt *f) {
        size_t w = ctl_text_width(s);
        if ((c->flags & CTL_COL_ID) && !f->wide && w > CTL_SHORT_ID)
                w = CTL_SHORT_ID;
        return w;
}

/* Take `excess` columns from the visible columns matching `mask` (all when
 * 0), always from the one with the most room above its floor: a higher
 * floor keeps more of a column. Returns what is left. */
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
        unsigned *nat = calloc(t->ncols ? t->ncols : 1, sizeof *nat);
        unsigned *floor = calloc(t->ncols ? t->ncols : 1, sizeof *floor);
        bool *vis = calloc(t->ncols ? t->ncols : 1, sizeof *vis);
        if (!nat || !floor || !vis) {
                /* No memory to plan with: show everything at its header width. */
                for (size_t i = 0; i < t->ncols; i++)
                        widths[i] = col_visible(&t->cols[i], f) ? (unsigned) ctl_text_width(t->cols[i].header) : 0;
                goto out;
        }
        for (size_t i = 0; i < t->ncols; i++) {
                const struct ctl_col *c = &t->cols[i];
                vis[i] = col_visible(c, f);
                size_t hw = ctl_text_width(c->header), w = hw;
                if (!(c->flags & CTL_COL_FLEX) && c->min > w)
                        w = c->min;
                for (size_t r = 0; r < t->nrows; r++) {
                        size_t cw = cell_width(c, t->cells[r * t->ncols + i], f);
                        if (cw > w)
                                w = cw;
                }
                nat[i] = (unsigned) w;
                floor[i] = c->min ? c->min : (unsigned) hw;
                if (floor[i] > nat[i])
                        floor[i] = nat[i];
        }
        for (;;) {
                size_t total = 0, nvis = 0;
                for (size_t i = 0; i < t->ncols; i++) {
                        widths[i] = vis[i] ? nat[i] : 0;
                        if (vis[i]) {
                                total += nat[i];
                                nvis++;
                        }
                }
                total += nvis > 1 ? (nvis - 1) * COL_GAP : 0;
                if (!f->width || total <= f->width)
                        break;
                size_t excess = shrink(t, widths, floor, CTL_COL_FLEX, total - f->width);
                if (excess == 0)
                        break;
                size_t victim = t->ncols;
                for (size_t i = 0; i < t->ncols; i++)
                        if (vis[i] && t->cols[i].drop && (victim == t->ncols || t->cols[i].drop >= t->cols[victim].drop))
                                victim = i;
                if (victim < t->ncols) {
                        vis[victim] = false;
                        continue;
                }
                shrink(t, widths, floor, 0, excess);
                break;
        }
out:
        free(nat);
        free(floor);
        free(vis);
}

/* Cut the lines written since line_start to `width` columns each: the last
 * resort when even the floors do not fit. */
static void fit_lines(struct sbuf *b, size_t line_start, const struct ctl_fmt *f) {
        if (b->oom || !f->width)
                return;
        char *text = strdup(b->s + line_start);
        if (!text) {
                b->oom = true;
                return;
        }
        b->len = line_start;
        b->s[b->len] = '\0';
        char *save = NULL;
        bool first = true;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if (!first)
                        sb_put(b, "\n", 1);
                first = false;
                if (ctl_text_width(line) <= f->width) {
                        sb_puts(b, line);
                        continue;
                }
                char *cut = ctl_text_cut(line, f->width, f->ellipsis ? f->ellipsis : "~");
                if (!cut) {
                        b->oom = true;
                        break;
                }
                sb_puts(b, cut);
                free(cut);
        }
        free(text);
}

static void render_row(struct sbuf *b, const struct ctl_table *t, const struct ctl_fmt *f, const unsigned *w,
                       char *const *cells, bool header) {
        const char *ell = f->ellipsis ? f->ellipsis : "~";
        size_t last = t->ncols, start = b->len;
        for (size_t i = 0; i < t->ncols; i++)
                if (w[i])
                        last = i;
        bool first = true;
        for (size_t i = 0; i < t->ncols; i++) {
                if (!w[i])
                        continue;
                const struct ctl_col *c = &t->cols[i];
                if (!first)
                        sb_spaces(b, COL_GAP);
                first = false;
                const char *s = header ? c->header : cells[i];
                bool right = (c->flags & CTL_COL_RIGHT) != 0;
                size_t pad = i == last && !right ? 0 : w[i];
                if (!header && (c->flags & CTL_COL_ID) && !f->wide && ctl_text_width(s) > CTL_SHORT_ID) {
                        /* An id's head is unique enough; no ellipsis for it. */
                        char shortid[4 * CTL_SHORT_ID + 1];
                        snprintf(shortid, sizeof shortid, "%.*s", (int) prefix_bytes(s, CTL_SHORT_ID), s);
                        put_cell(b, shortid, w[i], ell, pad, right);
                } else if ((c->flags & CTL_COL_MIDDLE) && ctl_text_width(s) > w[i]) {
                        put_middle(b, s, w[i], ell);
                        if (pad > w[i])
                                sb_spaces(b, pad - w[i]);
                } else
                        put_cell(b, s, w[i], ell, pad, right);
        }
        sb_rstrip(b);
        fit_lines(b, start, f);
        sb_put(b, "\n", 1);
}

char *ctl_table_render(const struct ctl_table *t, const struct ctl_fmt *f) {
        struct sbuf b = { 0 };
        unsigned *w = calloc(t->ncols ? t->ncols : 1, sizeof *w);
        if (!w)
                return NULL;
        sb_put(&b, "", 0);
        ctl_table_layout(t, f, w);
        if (!f->no_header)
                render_row(&b, t, f, w, NULL, true);
        for (size_t r = 0; r < t->nrows; r++)
                render_row(&b, t, f, w, t->cells + r * t->ncols, false);
        free(w);
        return sb_take(&b);
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
        /* Keep at least 20 columns for values even with long keys. */
        size_t avail = f->width ? (f->width > keyw + 20 ? f->width - keyw : 20) : 0;
        for (size_t i = 0; i < kv->n; i++) {
                size_t start = b.len;
                sb_puts(&b, kv->keys[i]);
                sb_put(&b, ":", 1);
                sb_spaces(&b, keyw - ctl_text_width(kv->keys[i]) - 1);
                char *v;
                if (!avail || (kv->flags[i] & CTL_KV_ID))
                        v = strdup(kv->vals[i]);
                else if (kv->flags[i] & CTL_KV_WRAP)
                        v = ctl_text_wrap(kv->vals[i], avail, keyw);
                else
                        v = ctl_text_cut(kv->vals[i], avail, f->ellipsis ? f->ellipsis : "~");
                if (!v) {
                        b.oom = true;
                        break;
                }
                sb_puts(&b, v);
                free(v);
                sb_rstrip(&b);
                if (!(kv->flags[i] & CTL_KV_ID))
                        fit_lines(&b, start, f);
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
