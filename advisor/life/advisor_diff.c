/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_diff.c - the policy diff of an evaluation's evidence
 * (docs/advisor.md#diff)
 *
 * A line diff of two canonical YAML texts in unified form: Myers' greedy
 * shortest edit script on the lines between the common head and tail, then
 * hunks with DIFF_CONTEXT lines of context each side, every line prefixed
 * ' ' (both), '-' (only the policy in force) or '+' (only the candidate).
 * Each hunk is headed "@@ PATH @@": the YAML keys enclosing its first
 * changed line, outermost first, joined by " > ", a list item named by its
 * first value in brackets ("network_policies > github > endpoints[api.github.com]
 * > rules"); "@@ top level @@" for a change at the top.
 *
 * Bounded: the script's memory grows with the square of its number of
 * edits, so past DIFF_MAX_EDITS the lines between head and tail are given
 * as they are, all '-' then all '+', in one hunk.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/life/life.h"
#include "common/pv_dynbuf.h"

#define DIFF_CONTEXT 3
#define DIFF_MAX_EDITS 1000
#define DIFF_MAX_DEPTH 16

enum { OP_SAME, OP_DEL, OP_ADD };

struct diff_line {
    const char *s;
    size_t n;
    uint32_t h;
};

struct diff_text {
    struct diff_line *l;
    size_t n;
};

static pv_result split_lines(const char *s, struct diff_text *t)
{
    size_t n = 0;

    for (const char *p = s; *p != '\0'; p++) {
        n += *p == '\n' || p[1] == '\0';
    }
    t->n = 0;
    t->l = pv_calloc(n + 1, sizeof(*t->l));
    PV_GUARD_PTR(t->l);
    while (*s != '\0') {
        struct diff_line *l = &t->l[t->n++];
        uint32_t h = 2166136261u; /* FNV-1a */
        size_t i = 0;

        /* the line's end by hand: strchr per line reads the whole rest of
         * the text under ASan's strict string checks (quadratic there) */
        for (; s[i] != '\0' && s[i] != '\n'; i++) {
            h = (h ^ (unsigned char)s[i]) * 16777619u;
        }
        l->s = s;
        l->n = i;
        l->h = h;
        s += i + (s[i] == '\n');
    }
    return PV_RESULT_OK;
}

static bool same_line(const struct diff_line *x, const struct diff_line *y)
{
    return x->h == y->h && x->n == y->n && memcmp(x->s, y->s, x->n) == 0;
}

/* The trace of d + 1 rounds: (d + 1)^2 entries, grown by doubling. */
static bool trace_room(int32_t **trace, size_t *cap, int32_t d)
{
    size_t need = ((size_t)d + 1) * ((size_t)d + 1);
    int32_t *v;

    if (need <= *cap) {
        return true;
    }
    need = need < 64 ? 64 : need * 2;
    v = pv_realloc(*trace, need * sizeof(*v));
    if (v == NULL) {
        free(*trace);
        *trace = NULL;
        return false;
    }
    *trace = v;
    *cap = need;
    return true;
}

/* Myers' forward pass over a[0..n) and b[0..m): trace[d * d + d + k] is the
 * furthest x on diagonal k after d edits. The number of edits, or -1 past
 * DIFF_MAX_EDITS (or out of memory: *trace NULL). */
static int32_t myers_trace(const struct diff_line *a, int32_t n, const struct diff_line *b,
                           int32_t m, int32_t **trace)
{
    int32_t dmax = n + m < DIFF_MAX_EDITS ? n + m : DIFF_MAX_EDITS;
    size_t cap = 0;

    *trace = NULL;
    for (int32_t d = 0; d <= dmax && trace_room(trace, &cap, d); d++) {
        const int32_t *prev = *trace + (d - 1) * (d - 1) + (d - 1);
        int32_t *cur = *trace + d * d + d;
        for (int32_t k = -d; k <= d; k += 2) {
            int32_t x;
            if (d == 0) {
                x = 0;
            } else if (k == -d || (k != d && prev[k - 1] < prev[k + 1])) {
                x = prev[k + 1]; /* down: an insertion */
            } else {
                x = prev[k - 1] + 1; /* right: a deletion */
            }
            while (x < n && x - k < m && same_line(&a[x], &b[x - k])) {
                x++;
            }
            cur[k] = x;
            if (x >= n && x - k >= m) {
                return d;
            }
        }
    }
    return -1;
}

/* The edit script of a[0..n) and b[0..m) into ops (n + m bytes at most),
 * its length into *len: the shortest, or all deletions then all insertions
 * past DIFF_MAX_EDITS. */
static pv_result edit_script(const struct diff_line *a, int32_t n, const struct diff_line *b,
                             int32_t m, unsigned char *ops, size_t *len)
{
    int32_t *v;
    int32_t d = myers_trace(a, n, b, m, &v);
    size_t pos = (size_t)n + (size_t)m;
    int32_t x = n;
    int32_t y = m;

    if (v == NULL) {
        PV_BAIL(PV_ERR_NOMEM);
    }
    if (d < 0) {
        free(v);
        memset(ops, OP_DEL, (size_t)n);
        memset(ops + n, OP_ADD, (size_t)m);
        *len = pos;
        return PV_RESULT_OK;
    }
    for (; d > 0; d--) { /* back from (n, m), the ops written from the end */
        const int32_t *prev = v + (d - 1) * (d - 1) + (d - 1);
        int32_t k = x - y;
        bool down = k == -d || (k != d && prev[k - 1] < prev[k + 1]);
        int32_t px = prev[down ? k + 1 : k - 1];
        int32_t py = px - (down ? k + 1 : k - 1);
        for (; x > px && y > py; x--, y--) {
            ops[--pos] = OP_SAME;
        }
        ops[--pos] = down ? OP_ADD : OP_DEL;
        x = px;
        y = py;
    }
    for (; x > 0; x--) {
        ops[--pos] = OP_SAME;
    }
    free(v);
    *len = (size_t)n + (size_t)m - pos;
    memmove(ops, ops + pos, *len);
    return PV_RESULT_OK;
}

/* A line's column as a parent: its indent, or for a list item ("- ...")
 * the indent plus one (its key sits at the indent). */
static size_t line_col(const struct diff_line *l, bool *item)
{
    size_t i = 0;

    while (i < l->n && l->s[i] == ' ') {
        i++;
    }
    *item = i < l->n && l->s[i] == '-' && (i + 1 == l->n || l->s[i + 1] == ' ');
    return i + *item;
}

/* The key of "KEY: ..." or "KEY:" from 'from' in l, and its value. */
static size_t line_key(const struct diff_line *l, size_t from, const char **value, size_t *vlen)
{
    for (size_t i = from; i < l->n; i++) {
        if (l->s[i] == ':' && (i + 1 == l->n || l->s[i + 1] == ' ')) {
            *value = l->s + (i + 1 < l->n ? i + 2 : i + 1);
            *vlen = i + 1 < l->n ? l->n - i - 2 : 0;
            return i - from;
        }
    }
    *value = NULL;
    *vlen = 0;
    return 0;
}

struct path_key {
    const char *s;
    size_t n;
    const char *label; /* the list item under this key that holds the line */
    size_t ln;
};

/* The header of a hunk whose first change is line 'at' of t. */
static void hunk_header(const struct diff_text *t, size_t at, struct pv_dynbuf *out)
{
    struct path_key keys[DIFF_MAX_DEPTH];
    size_t nkeys = 0;
    const char *label = NULL;
    size_t ln = 0;
    bool item;
    size_t c = line_col(&t->l[at], &item);

    for (size_t j = at; j-- > 0 && c > 0 && nkeys < DIFF_MAX_DEPTH;) {
        size_t lc = line_col(&t->l[j], &item);
        const char *value;
        size_t vlen;
        size_t klen;
        if (lc >= c || t->l[j].n == 0) {
            continue; /* not an enclosing line */
        }
        size_t from = lc + item; /* where its key starts */
        klen = line_key(&t->l[j], from, &value, &vlen);
        if (item && klen > 0 && vlen == 0 && c > lc + 1) {
            keys[nkeys++] = (struct path_key){t->l[j].s + from, klen, NULL, 0};
        } else if (klen > 0 && !item) {
            keys[nkeys++] = (struct path_key){t->l[j].s + from, klen, label, ln};
        }
        label = item && klen > 0 && vlen > 0 ? value : NULL;
        ln = label != NULL ? vlen : 0;
        c = lc;
    }
    pv_dynbuf_puts(out, "@@ ");
    if (nkeys == 0) {
        pv_dynbuf_puts(out, "top level");
    }
    while (nkeys-- > 0) {
        pv_dynbuf_put(out, keys[nkeys].s, keys[nkeys].n);
        if (keys[nkeys].label != NULL) {
            pv_dynbuf_putf(out, "[%.*s]", (int)keys[nkeys].ln, keys[nkeys].label);
        }
        pv_dynbuf_puts(out, nkeys > 0 ? " > " : "");
    }
    pv_dynbuf_puts(out, " @@\n");
}

/* Where the op at index 'to' starts in each text, walking from *at. */
struct diff_cursor {
    size_t op;
    size_t a;
    size_t b;
};

static void walk(const unsigned char *ops, struct diff_cursor *at, size_t to)
{
    for (; at->op < to; at->op++) {
        at->a += ops[at->op] != OP_ADD;
        at->b += ops[at->op] != OP_DEL;
    }
}

/* The end (an op index) of the hunk whose first change is ops[c]: past its
 * last change and DIFF_CONTEXT lines, changes closer than twice that
 * joined. */
static size_t hunk_end(const unsigned char *ops, size_t len, size_t c)
{
    for (;;) {
        size_t same = 0;
        while (c < len && ops[c] != OP_SAME) {
            c++;
        }
        while (c + same < len && ops[c + same] == OP_SAME && same <= 2 * DIFF_CONTEXT) {
            same++;
        }
        if (c + same == len || same > 2 * DIFF_CONTEXT) {
            return c + (same < DIFF_CONTEXT ? same : DIFF_CONTEXT);
        }
        c += same;
    }
}

static void put_hunks(const struct diff_text *a, const struct diff_text *b,
                      const unsigned char *ops, size_t len, struct pv_dynbuf *out)
{
    struct diff_cursor at = {0, 0, 0};
    size_t c = 0;

    for (;;) {
        while (c < len && ops[c] == OP_SAME) {
            c++;
        }
        if (c == len) {
            return;
        }
        size_t end = hunk_end(ops, len, c);
        struct diff_cursor first = at;
        walk(ops, &first, c);
        walk(ops, &at, c > at.op + DIFF_CONTEXT ? c - DIFF_CONTEXT : at.op);
        if (ops[c] == OP_DEL) {
            hunk_header(a, first.a, out);
        } else {
            hunk_header(b, first.b, out);
        }
        while (at.op < end) {
            const struct diff_line *l = ops[at.op] == OP_ADD ? &b->l[at.b] : &a->l[at.a];
            pv_dynbuf_putc(out, " -+"[ops[at.op]]);
            pv_dynbuf_put(out, l->s, l->n);
            pv_dynbuf_putc(out, '\n');
            walk(ops, &at, at.op + 1);
        }
        c = end;
    }
}

char *advisor_policy_diff(const char *old_yaml, const char *new_yaml)
{
    struct diff_text a = {NULL, 0};
    struct diff_text b = {NULL, 0};
    unsigned char *ops = NULL;
    size_t head = 0;
    size_t tail = 0;
    size_t mid = 0;
    struct pv_dynbuf out;

    pv_dynbuf_init(&out, 16u * 1024u * 1024u);
    if (!pv_ok(split_lines(old_yaml, &a)) || !pv_ok(split_lines(new_yaml, &b)) ||
        a.n > INT32_MAX / 2 || b.n > INT32_MAX / 2 || (ops = pv_malloc(a.n + b.n + 1)) == NULL) {
        out.failed = true;
        goto done;
    }
    while (head < a.n && head < b.n && same_line(&a.l[head], &b.l[head])) {
        ops[head++] = OP_SAME;
    }
    while (tail < a.n - head && tail < b.n - head &&
           same_line(&a.l[a.n - 1 - tail], &b.l[b.n - 1 - tail])) {
        tail++;
    }
    if (!pv_ok(edit_script(a.l + head, (int32_t)(a.n - head - tail), b.l + head,
                           (int32_t)(b.n - head - tail), ops + head, &mid))) {
        out.failed = true;
        goto done;
    }
    memset(ops + head + mid, OP_SAME, tail);
    put_hunks(&a, &b, ops, head + mid + tail, &out);
done:
    free(a.l);
    free(b.l);
    free(ops);
    return pv_dynbuf_finish(&out);
}
