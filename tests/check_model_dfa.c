/* SPDX-License-Identifier: Apache-2.0 */
/* check_model_dfa.c - unit tests of model_dfa.c (automata and emptiness checks)
 *
 * 1. Random globs against an independent backtracking matcher: patterns are
 *    generated as token lists, rendered to text, compiled, and every short
 *    string over a small alphabet must get the same answer from the DFA and
 *    from the matcher below (which reads the tokens, not the text).
 * 2. model_lang_check: a table of fixed cases with their shortest witness;
 *    random term sets whose witnesses must satisfy every term and the domain,
 *    be no longer than any brute-force solution, and whose EMPTY answers must
 *    agree with brute-force enumeration of all strings up to length 5.
 * 3. The domain automata against their definitions.
 */
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/model_dfa.h"

/* ===========================================================================
 * Random globs and the reference matcher
 * ========================================================================= */

enum tk { TK_LIT, TK_STAR, TK_QMARK, TK_CLASS, TK_ALT, TK_RSTAR, TK_ALL, TK_DIRS, TK_LABELS };

struct stok {
    enum tk k;
    char c;      /* TK_LIT */
    char set[6]; /* TK_CLASS members (NUL-terminated) */
    bool neg;    /* TK_CLASS */
    bool range;  /* TK_CLASS rendered as "a-b" */
    bool escape; /* TK_LIT rendered with a backslash */
};

struct tok {
    struct stok s;
    struct stok alt[3][3];
    int altn[3];
    int nalt;
};

#define MAXTOK 8

struct pat {
    enum model_glob_kind kind;
    struct tok t[MAXTOK];
    int n;
    char text[128];
};

static unsigned long rng_state = 12345;

static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ul + 1442695040888963407ul;
    return (unsigned)((rng_state >> 33) % n);
}

static const char path_alpha[] = "ab/.*";
static const char host_alpha[] = "ab.";

static void gen_stok(struct stok *s, enum model_glob_kind kind, bool allow_star)
{
    memset(s, 0, sizeof(*s));
    unsigned r = rnd(10);
    if (kind == MODEL_GLOB_HOST) {
        if (r < 3 && allow_star) {
            s->k = TK_STAR;
        } else {
            s->k = TK_LIT;
            s->c = host_alpha[rnd(3)];
        }
        return;
    }
    if (r < 2 && allow_star) {
        s->k = TK_STAR;
    } else if (r < 3) {
        s->k = TK_QMARK;
    } else if (r < 4) {
        s->k = TK_CLASS;
        s->neg = rnd(2) == 0;
        size_t n = 0;
        if (rnd(3) == 0) {
            s->range = true;
            s->set[n++] = 'a';
            s->set[n++] = 'b';
        } else {
            for (const char *c = "ab/."; *c != '\0'; c++) {
                if (rnd(2) == 0) {
                    s->set[n++] = *c;
                }
            }
            if (n == 0) {
                s->set[n++] = 'a';
            }
        }
        s->set[n] = '\0';
    } else {
        s->k = TK_LIT;
        s->c = path_alpha[rnd(5)];
        s->escape = s->c == '*' || (s->c == 'a' && rnd(4) == 0);
    }
}

static void render_stok(const struct stok *s, char *buf, size_t *o)
{
    switch (s->k) {
    case TK_LIT:
        if (s->escape) {
            buf[(*o)++] = '\\';
        }
        buf[(*o)++] = s->c;
        break;
    case TK_STAR:
        buf[(*o)++] = '*';
        break;
    case TK_QMARK:
        buf[(*o)++] = '?';
        break;
    case TK_CLASS:
        buf[(*o)++] = '[';
        if (s->neg) {
            buf[(*o)++] = '!';
        }
        if (s->range) {
            buf[(*o)++] = 'a';
            buf[(*o)++] = '-';
            buf[(*o)++] = 'b';
        } else {
            for (const char *c = s->set; *c != '\0'; c++) {
                buf[(*o)++] = *c;
            }
        }
        buf[(*o)++] = ']';
        break;
    default:
        break;
    }
}

static bool is_star_like(const struct tok *t)
{
    return t->s.k == TK_STAR || t->s.k == TK_RSTAR;
}

static void gen_pat(struct pat *p, enum model_glob_kind kind, int maxtok)
{
    memset(p, 0, sizeof(*p));
    p->kind = kind;
    int n = (int)rnd((unsigned)maxtok) + 1;
    int i = 0;
    if (kind == MODEL_GLOB_HOST && rnd(3) == 0) {
        p->t[i++].s.k = TK_LABELS;
    }
    for (; i < n; i++) {
        struct tok *t = &p->t[i];
        bool prev_star = i > 0 && is_star_like(&p->t[i - 1]);
        unsigned r = rnd(12);
        if (kind != MODEL_GLOB_HOST && r == 0 && !prev_star) {
            t->s.k = TK_RSTAR;
        } else if (kind != MODEL_GLOB_HOST && r == 1) {
            t->s.k = TK_ALT;
            t->nalt = (int)rnd(2) + 2;
            for (int a = 0; a < t->nalt; a++) {
                t->altn[a] = (int)rnd(3);
                for (int j = 0; j < t->altn[a]; j++) {
                    bool ps = j > 0 && t->alt[a][j - 1].k == TK_STAR;
                    gen_stok(&t->alt[a][j], kind, !ps);
                }
            }
        } else {
            gen_stok(&t->s, kind,
                     !prev_star &&
                         !(kind == MODEL_GLOB_HOST && i > 0 && p->t[i - 1].s.k == TK_LABELS));
        }
    }
    p->n = n;

    /* Render, then resolve what each "**" means from its neighbours. */
    size_t o = 0;
    for (i = 0; i < p->n; i++) {
        struct tok *t = &p->t[i];
        if (t->s.k == TK_LABELS) {
            memcpy(p->text + o, "**.", 3);
            o += 3;
        } else if (t->s.k == TK_RSTAR) {
            memcpy(p->text + o, "**", 2);
            o += 2;
        } else if (t->s.k == TK_ALT) {
            p->text[o++] = '{';
            for (int a = 0; a < t->nalt; a++) {
                if (a > 0) {
                    p->text[o++] = ',';
                }
                for (int j = 0; j < t->altn[a]; j++) {
                    render_stok(&t->alt[a][j], p->text, &o);
                }
            }
            p->text[o++] = '}';
        } else {
            render_stok(&t->s, p->text, &o);
        }
    }
    p->text[o] = '\0';
    for (i = 0; i < p->n; i++) {
        struct tok *t = &p->t[i];
        if (t->s.k != TK_RSTAR) {
            continue;
        }
        bool sep_before = i == 0 || (p->t[i - 1].s.k == TK_LIT && p->t[i - 1].s.c == '/' &&
                                     !p->t[i - 1].s.escape);
        bool at_end = i == p->n - 1;
        bool sep_after = !at_end && p->t[i + 1].s.k == TK_LIT && p->t[i + 1].s.c == '/';
        if (kind == MODEL_GLOB_VALUE || !sep_before) {
            t->s.k = TK_STAR;
        } else if (at_end) {
            t->s.k = TK_ALL;
        } else if (sep_after) {
            t->s.k = TK_DIRS;
        } else {
            t->s.k = TK_STAR;
        }
    }
}

/* A flat token sequence (alternations expanded). */
struct flat {
    struct stok t[MAXTOK * 3];
    int n;
};

static bool stok_byte(const struct stok *s, enum model_glob_kind kind, char c)
{
    char sep = kind == MODEL_GLOB_HOST ? '.' : kind == MODEL_GLOB_VALUE ? '\0' : '/';
    bool has_sep = kind != MODEL_GLOB_VALUE;
    switch (s->k) {
    case TK_LIT:
        return c == s->c;
    case TK_QMARK:
        return !has_sep || c != sep;
    case TK_CLASS: {
        bool in = c != '\0' && strchr(s->set, c) != NULL;
        return (in != s->neg) && (!has_sep || c != sep);
    }
    default:
        return false;
    }
}

static bool ref_match(const struct flat *f, enum model_glob_kind kind, int ti, const char *s,
                      int len, int si)
{
    char sep = kind == MODEL_GLOB_HOST ? '.' : '/';
    bool has_sep = kind != MODEL_GLOB_VALUE;
    if (ti == f->n) {
        return si == len;
    }
    const struct stok *t = &f->t[ti];
    switch (t->k) {
    case TK_STAR:
        for (int k = si;; k++) {
            if (ref_match(f, kind, ti + 1, s, len, k)) {
                return true;
            }
            if (k == len || (has_sep && s[k] == sep)) {
                return false;
            }
        }
    case TK_ALL:
        for (int k = si; k <= len; k++) {
            if (ref_match(f, kind, ti + 1, s, len, k)) {
                return true;
            }
        }
        return false;
    case TK_DIRS:
        if (ref_match(f, kind, ti + 1, s, len, si)) {
            return true;
        }
        for (int k = si; k < len; k++) {
            if (s[k] == '/' && ref_match(f, kind, ti + 1, s, len, k + 1)) {
                return true;
            }
        }
        return false;
    case TK_LABELS: {
        int k = si;
        while (k < len && s[k] != '.') {
            k++;
        }
        if (k == si || k == len) {
            return false;
        }
        return ref_match(f, kind, ti + 1, s, len, k + 1) || ref_match(f, kind, ti, s, len, k + 1);
    }
    default:
        return si < len && stok_byte(t, kind, s[si]) && ref_match(f, kind, ti + 1, s, len, si + 1);
    }
}

/* Expand alternations from token i on, matching each flat sequence. */
static bool ref_expand(const struct pat *p, int i, struct flat *f, const char *s, int len)
{
    if (i == p->n) {
        return ref_match(f, p->kind, 0, s, len, 0);
    }
    const struct tok *t = &p->t[i];
    int save = f->n;
    if (t->s.k == TK_ALT) {
        for (int a = 0; a < t->nalt; a++) {
            f->n = save;
            for (int j = 0; j < t->altn[a]; j++) {
                f->t[f->n++] = t->alt[a][j];
            }
            if (ref_expand(p, i + 1, f, s, len)) {
                f->n = save;
                return true;
            }
        }
        f->n = save;
        return false;
    }
    f->t[f->n++] = t->s;
    int next = i + 1;
    if (t->s.k == TK_DIRS) {
        next++; /* the separator after "**" belongs to it */
    }
    bool r = ref_expand(p, next, f, s, len);
    f->n = save;
    return r;
}

static bool ref_glob(const struct pat *p, const char *s, int len)
{
    struct flat f;
    f.n = 0;
    return ref_expand(p, 0, &f, s, len);
}

/* Enumerate every string over 'alpha' of length <= maxlen; call fn. */
static bool enumerate(const char *alpha, int maxlen, bool (*fn)(const char *, int, void *),
                      void *ctx)
{
    int na = (int)strlen(alpha);
    char buf[16];
    int idx[16];
    for (int len = 0; len <= maxlen; len++) {
        for (int i = 0; i < len; i++) {
            idx[i] = 0;
            buf[i] = alpha[0];
        }
        for (;;) {
            if (!fn(buf, len, ctx)) {
                return false;
            }
            int pos = len - 1;
            while (pos >= 0 && idx[pos] == na - 1) {
                idx[pos] = 0;
                buf[pos] = alpha[0];
                pos--;
            }
            if (pos < 0) {
                break;
            }
            idx[pos]++;
            buf[pos] = alpha[idx[pos]];
        }
    }
    return true;
}

struct cross_ctx {
    const struct pat *p;
    const struct model_glob *g;
    char bad[16];
    int badlen;
};

static bool cross_one(const char *s, int len, void *vctx)
{
    struct cross_ctx *c = vctx;
    if (model_glob_match(c->g, s, (size_t)len) != ref_glob(c->p, s, len)) {
        memcpy(c->bad, s, (size_t)len);
        c->badlen = len;
        return false;
    }
    return true;
}

static const enum model_glob_kind cross_kinds[] = {MODEL_GLOB_PATH, MODEL_GLOB_BINARY,
                                                   MODEL_GLOB_VALUE, MODEL_GLOB_HOST};

START_TEST(test_cross_random)
{
    enum model_glob_kind kind = cross_kinds[_i];
    rng_state = 1000 + (unsigned long)_i;
    for (int iter = 0; iter < 1500; iter++) {
        struct pat p;
        gen_pat(&p, kind, 6);
        const char *why = NULL;
        struct model_glob *g = model_glob_compile(kind, p.text, strlen(p.text), &why);
        ck_assert_msg(g != NULL, "compile '%s': %s", p.text, why ? why : "?");
        struct cross_ctx ctx = {&p, g, {0}, 0};
        const char *alpha = kind == MODEL_GLOB_HOST ? "ab." : "ab/.*";
        bool ok = enumerate(alpha, kind == MODEL_GLOB_HOST ? 6 : 5, cross_one, &ctx);
        ck_assert_msg(ok, "kind %d pattern '%s' input '%.*s': dfa %d", (int)kind, p.text,
                      ctx.badlen, ctx.bad, (int)model_glob_match(g, ctx.bad, (size_t)ctx.badlen));
        model_glob_free(g);
    }
}
END_TEST

/* ===========================================================================
 * model_lang_check
 * ========================================================================= */

struct term_spec {
    enum model_glob_kind kind;
    const char *pat; /* NULL = contains %2F */
    bool positive;
};

struct lang_case {
    enum model_domain dom;
    struct term_spec t[3];
    size_t n;
    enum model_lang_result res;
    const char *witness;
};

#define TP(k, s, pos)          \
    {                          \
        MODEL_GLOB_##k, s, pos \
    }
#define PCT(pos)                    \
    {                               \
        MODEL_GLOB_VALUE, NULL, pos \
    }

static const struct lang_case lang_cases[] = {
    {MODEL_DOMAIN_ANY,
     {TP(PATH, "/a/*", true), TP(PATH, "/a/b", false)},
     2,
     MODEL_LANG_NONEMPTY,
     "/a/"},
    {MODEL_DOMAIN_CANONICAL_PATH,
     {TP(PATH, "/a/**", true), TP(PATH, "/a/*", false)},
     2,
     MODEL_LANG_NONEMPTY,
     "/a/a/"},
    {MODEL_DOMAIN_ANY,
     {TP(PATH, "/a/**", true), TP(PATH, "/a/*", false)},
     2,
     MODEL_LANG_NONEMPTY,
     "/a//"},
    {MODEL_DOMAIN_ABS_PATH,
     {TP(PATH, "**", true), TP(PATH, "/**", false)},
     2,
     MODEL_LANG_EMPTY,
     NULL},
    {MODEL_DOMAIN_CANONICAL_PATH, {PCT(true)}, 1, MODEL_LANG_NONEMPTY, "/%2F"},
    {MODEL_DOMAIN_DNS_NAME,
     {TP(HOST, "*.example.com", true)},
     1,
     MODEL_LANG_NONEMPTY,
     "a.example.com"},
    {MODEL_DOMAIN_DNS_NAME,
     {TP(HOST, "**.example.com", true), TP(HOST, "*.example.com", false)},
     2,
     MODEL_LANG_NONEMPTY,
     "a.a.example.com"},
    {MODEL_DOMAIN_QUERY_VALUE, {TP(VALUE, "*", false)}, 1, MODEL_LANG_EMPTY, NULL},
    {MODEL_DOMAIN_QUERY_VALUE, {{MODEL_GLOB_VALUE, NULL, true}}, 0, MODEL_LANG_NONEMPTY, ""},
    {MODEL_DOMAIN_DNS_NAME, {{MODEL_GLOB_VALUE, NULL, true}}, 0, MODEL_LANG_NONEMPTY, "a"},
    {MODEL_DOMAIN_CANONICAL_PATH, {{MODEL_GLOB_VALUE, NULL, true}}, 0, MODEL_LANG_NONEMPTY, "/"},
    {MODEL_DOMAIN_ABS_PATH,
     {TP(BINARY, "/usr/bin/*", true), TP(BINARY, "/usr/bin/curl", false)},
     2,
     MODEL_LANG_NONEMPTY,
     "/usr/bin/a"},
    {MODEL_DOMAIN_DNS_NAME, {TP(HOST, "10.*.*.*", true)}, 1, MODEL_LANG_NONEMPTY, "10.a.a.a"},
    {MODEL_DOMAIN_DNS_NAME, {TP(HOST, "*.*.*.1", true)}, 1, MODEL_LANG_EMPTY, NULL},
    {MODEL_DOMAIN_DNS_NAME,
     {TP(HOST, "*", true), TP(HOST, "a*", false)},
     2,
     MODEL_LANG_NONEMPTY,
     "b"},
    {MODEL_DOMAIN_CANONICAL_PATH,
     {TP(PATH, "/a/*", true), PCT(false)},
     2,
     MODEL_LANG_NONEMPTY,
     "/a/"},
    {MODEL_DOMAIN_CANONICAL_PATH,
     {TP(PATH, "/a/*", true), TP(PATH, "/a/", false), PCT(false)},
     3,
     MODEL_LANG_NONEMPTY,
     "/a/a"},
    {MODEL_DOMAIN_CANONICAL_PATH, {TP(PATH, "/x/..", true)}, 1, MODEL_LANG_EMPTY, NULL},
    {MODEL_DOMAIN_CANONICAL_PATH, {TP(PATH, "/x/.", true)}, 1, MODEL_LANG_EMPTY, NULL},
    {MODEL_DOMAIN_CANONICAL_PATH, {TP(PATH, "/x/...", true)}, 1, MODEL_LANG_NONEMPTY, "/x/..."},
    {MODEL_DOMAIN_CANONICAL_PATH, {TP(PATH, "/x/%2e", true)}, 1, MODEL_LANG_EMPTY, NULL},
    {MODEL_DOMAIN_CANONICAL_PATH, {TP(PATH, "/x/%41", true)}, 1, MODEL_LANG_EMPTY, NULL},
    {MODEL_DOMAIN_CANONICAL_PATH, {TP(PATH, "/x/%1F", true)}, 1, MODEL_LANG_EMPTY, NULL},
    {MODEL_DOMAIN_CANONICAL_PATH, {TP(PATH, "/x/%3B", true)}, 1, MODEL_LANG_NONEMPTY, "/x/%3B"},
    {MODEL_DOMAIN_CANONICAL_PATH, {TP(PATH, "/x/;", true)}, 1, MODEL_LANG_EMPTY, NULL},
    {MODEL_DOMAIN_CANONICAL_PATH, {TP(PATH, "/a//b", true)}, 1, MODEL_LANG_EMPTY, NULL},
    {MODEL_DOMAIN_CANONICAL_PATH, {TP(PATH, "/{a,b}/[0-9]", true)}, 1, MODEL_LANG_NONEMPTY, "/a/0"},
    {MODEL_DOMAIN_CANONICAL_PATH, {TP(PATH, "/%*", true)}, 1, MODEL_LANG_NONEMPTY, "/%20"},
    {MODEL_DOMAIN_ANY,
     {TP(VALUE, "a*", true), TP(VALUE, "*b", true), TP(VALUE, "*c*", true)},
     3,
     MODEL_LANG_NONEMPTY,
     "acb"},
    {MODEL_DOMAIN_QUERY_VALUE, {TP(VALUE, "\xff*", true)}, 1, MODEL_LANG_EMPTY, NULL},
    {MODEL_DOMAIN_QUERY_VALUE, {TP(VALUE, "\xc3?", true)}, 1, MODEL_LANG_NONEMPTY, "\xc3\x80"},
    {MODEL_DOMAIN_QUERY_VALUE, {TP(VALUE, "?", true)}, 1, MODEL_LANG_NONEMPTY, "a"},
    {MODEL_DOMAIN_ANY, {TP(PATH, "/a", true), TP(PATH, "/a", false)}, 2, MODEL_LANG_EMPTY, NULL},
    {MODEL_DOMAIN_ANY, {TP(VALUE, "[0-9]", true)}, 1, MODEL_LANG_NONEMPTY, "0"},
    {MODEL_DOMAIN_ANY, {TP(VALUE, "[A-Z]", true)}, 1, MODEL_LANG_NONEMPTY, "A"},
    {MODEL_DOMAIN_ABS_PATH, {TP(VALUE, "/\\*", true)}, 1, MODEL_LANG_NONEMPTY, "/*"},
};

START_TEST(test_lang_table)
{
    const struct lang_case *c = &lang_cases[_i];
    struct model_lang_term terms[3];
    struct model_glob *gs[3] = {NULL, NULL, NULL};
    for (size_t i = 0; i < c->n; i++) {
        if (c->t[i].pat != NULL) {
            gs[i] = model_glob_compile(c->t[i].kind, c->t[i].pat, strlen(c->t[i].pat), NULL);
            ck_assert_ptr_nonnull(gs[i]);
        }
        terms[i].g = gs[i];
        terms[i].positive = c->t[i].positive;
    }
    char *w = NULL;
    size_t wlen = 99;
    enum model_lang_result r = model_lang_check(c->dom, terms, c->n, 100000, &w, &wlen);
    ck_assert_msg(r == c->res, "case %d: result %d, witness '%s'", _i, (int)r, w ? w : "-");
    if (c->witness != NULL) {
        ck_assert_ptr_nonnull(w);
        ck_assert_str_eq(w, c->witness);
        ck_assert_uint_eq(wlen, strlen(c->witness));
    } else {
        ck_assert_ptr_null(w);
        ck_assert_uint_eq(wlen, 0);
    }
    free(w);
    /* Without a witness pointer the answer is the same. */
    ck_assert_int_eq(model_lang_check(c->dom, terms, c->n, 100000, NULL, NULL), c->res);
    for (size_t i = 0; i < 3; i++) {
        model_glob_free(gs[i]);
    }
}
END_TEST

START_TEST(test_lang_limit)
{
    struct model_glob *a = model_glob_compile(MODEL_GLOB_VALUE, "*a?????????", 11, NULL);
    struct model_glob *b = model_glob_compile(MODEL_GLOB_VALUE, "*b????????", 10, NULL);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    struct model_lang_term t[2] = {{a, true}, {b, false}};
    char *w = PV_UNCONST("unchanged");
    ck_assert_int_eq(model_lang_check(MODEL_DOMAIN_ANY, t, 2, 10, &w, NULL), MODEL_LANG_LIMIT);
    ck_assert_ptr_null(w);
    /* 0 = the default bound, large enough here. */
    ck_assert_int_eq(model_lang_check(MODEL_DOMAIN_ANY, t, 2, 0, &w, NULL), MODEL_LANG_NONEMPTY);
    ck_assert_ptr_nonnull(w);
    ck_assert(model_glob_match(a, w, strlen(w)) && !model_glob_match(b, w, strlen(w)));
    free(w);
    /* Bad arguments fail as "unknown", never as a definite answer. */
    ck_assert_int_eq(model_lang_check((enum model_domain)42, t, 2, 0, NULL, NULL),
                     MODEL_LANG_LIMIT);
    ck_assert_int_eq(model_lang_check(MODEL_DOMAIN_ANY, NULL, 2, 0, NULL, NULL), MODEL_LANG_LIMIT);
    model_glob_free(a);
    model_glob_free(b);
}
END_TEST

struct sat_ctx {
    const struct model_lang_term *t;
    size_t n;
    const struct model_glob *dom;
    int found_len; /* length of the first solution, -1 = none */
};

static bool contains_pct2f(const char *s, size_t len)
{
    for (size_t i = 0; i + 3 <= len; i++) {
        if (s[i] == '%' && s[i + 1] == '2' && s[i + 2] == 'F') {
            return true;
        }
    }
    return false;
}

static bool satisfies(const struct sat_ctx *c, const char *s, size_t len)
{
    if (!model_glob_match(c->dom, s, len)) {
        return false;
    }
    for (size_t i = 0; i < c->n; i++) {
        bool in = c->t[i].g != NULL ? model_glob_match(c->t[i].g, s, len) : contains_pct2f(s, len);
        if (in != c->t[i].positive) {
            return false;
        }
    }
    return true;
}

static bool sat_one(const char *s, int len, void *vctx)
{
    struct sat_ctx *c = vctx;
    if (satisfies(c, s, (size_t)len)) {
        c->found_len = len;
        return false;
    }
    return true;
}

static const enum model_domain rand_domains[] = {MODEL_DOMAIN_ANY, MODEL_DOMAIN_ABS_PATH,
                                                 MODEL_DOMAIN_CANONICAL_PATH};

START_TEST(test_lang_random)
{
    rng_state = 777;
    int nonempty = 0;
    int empty = 0;
    for (int iter = 0; iter < 400; iter++) {
        struct pat pats[3];
        struct model_glob *gs[3] = {NULL, NULL, NULL};
        struct model_lang_term t[3];
        size_t n = rnd(3) + 1;
        for (size_t i = 0; i < n; i++) {
            if (rnd(8) == 0) {
                t[i].g = NULL;
            } else {
                gen_pat(&pats[i], MODEL_GLOB_PATH, 5);
                gs[i] =
                    model_glob_compile(MODEL_GLOB_PATH, pats[i].text, strlen(pats[i].text), NULL);
                ck_assert_ptr_nonnull(gs[i]);
                t[i].g = gs[i];
            }
            t[i].positive = rnd(3) != 0;
        }
        enum model_domain d = rand_domains[rnd(3)];
        struct sat_ctx ctx = {t, n, model_dfa_domain(d), -1};
        char *w = NULL;
        size_t wlen = 0;
        enum model_lang_result r = model_lang_check(d, t, n, 200000, &w, &wlen);
        ck_assert_int_ne(r, MODEL_LANG_LIMIT);
        const char *alpha = "a/.%2F";
        if (r == MODEL_LANG_NONEMPTY) {
            nonempty++;
            ck_assert_ptr_nonnull(w);
            ck_assert_msg(satisfies(&ctx, w, wlen), "iter %d: witness '%s' fails", iter, w);
            /* Shortest: no brute-force solution is shorter. */
            int maxlen = wlen > 0 ? (int)wlen - 1 : -1;
            if (maxlen > 5) {
                maxlen = 5;
            }
            if (maxlen >= 0) {
                enumerate(alpha, maxlen, sat_one, &ctx);
                ck_assert_msg(ctx.found_len < 0, "iter %d: shorter solution than '%s'", iter, w);
            }
        } else {
            empty++;
            ck_assert_ptr_null(w);
            enumerate(alpha, 5, sat_one, &ctx);
            ck_assert_msg(ctx.found_len < 0, "iter %d: EMPTY but a solution of length %d exists",
                          iter, ctx.found_len);
        }
        free(w);
        for (size_t i = 0; i < 3; i++) {
            model_glob_free(gs[i]);
        }
    }
    /* The generator must exercise both answers. */
    ck_assert_int_gt(nonempty, 50);
    ck_assert_int_gt(empty, 20);
}
END_TEST

/* ===========================================================================
 * Domains against their definitions
 * ========================================================================= */

struct dom_case {
    enum model_domain dom;
    const char *s;
    size_t len; /* 0 = strlen */
    bool in;
};

static const struct dom_case dom_cases[] = {
    {MODEL_DOMAIN_DNS_NAME, "api.github.com", 0, true},
    {MODEL_DOMAIN_DNS_NAME, "a", 0, true},
    {MODEL_DOMAIN_DNS_NAME, "a_b-c.d9", 0, true},
    {MODEL_DOMAIN_DNS_NAME, "10.0.0.1", 0, false},
    {MODEL_DOMAIN_DNS_NAME, "1.2.3.x", 0, true},
    {MODEL_DOMAIN_DNS_NAME, "example.123", 0, false},
    {MODEL_DOMAIN_DNS_NAME, "a..b", 0, false},
    {MODEL_DOMAIN_DNS_NAME, ".a", 0, false},
    {MODEL_DOMAIN_DNS_NAME, "a.", 0, false},
    {MODEL_DOMAIN_DNS_NAME, "", 0, false},
    {MODEL_DOMAIN_DNS_NAME, "A.com", 0, false},
    {MODEL_DOMAIN_DNS_NAME, "a*b", 0, false},
    {MODEL_DOMAIN_CANONICAL_PATH, "/", 0, true},
    {MODEL_DOMAIN_CANONICAL_PATH, "/a/b/", 0, true},
    {MODEL_DOMAIN_CANONICAL_PATH, "/a//b", 0, false},
    {MODEL_DOMAIN_CANONICAL_PATH, "//", 0, false},
    {MODEL_DOMAIN_CANONICAL_PATH, "", 0, false},
    {MODEL_DOMAIN_CANONICAL_PATH, "a", 0, false},
    {MODEL_DOMAIN_CANONICAL_PATH, "/./", 0, false},
    {MODEL_DOMAIN_CANONICAL_PATH, "/..", 0, false},
    {MODEL_DOMAIN_CANONICAL_PATH, "/.../.a/a.", 0, true},
    {MODEL_DOMAIN_CANONICAL_PATH, "/%2F%3B%25%20%FF", 0, true},
    {MODEL_DOMAIN_CANONICAL_PATH, "/%2f", 0, false},
    {MODEL_DOMAIN_CANONICAL_PATH, "/%2E", 0, false},
    {MODEL_DOMAIN_CANONICAL_PATH, "/%41", 0, false},
    {MODEL_DOMAIN_CANONICAL_PATH, "/%7F", 0, false},
    {MODEL_DOMAIN_CANONICAL_PATH, "/%1F", 0, false},
    {MODEL_DOMAIN_CANONICAL_PATH, "/%2", 0, false},
    {MODEL_DOMAIN_CANONICAL_PATH, "/a;b", 0, false},
    {MODEL_DOMAIN_CANONICAL_PATH, "/a b", 0, false},
    {MODEL_DOMAIN_CANONICAL_PATH, "/~!$&'()*+,=:@-._", 0, true},
    {MODEL_DOMAIN_ABS_PATH, "/usr/bin/x", 0, true},
    /* docs/semantics.md#identity: canonical paths only */
    {MODEL_DOMAIN_ABS_PATH, "/", 0, false},
    {MODEL_DOMAIN_ABS_PATH, "/usr//x", 0, false},
    {MODEL_DOMAIN_ABS_PATH, "/usr/./x", 0, false},
    {MODEL_DOMAIN_ABS_PATH, "/usr/../x", 0, false},
    {MODEL_DOMAIN_ABS_PATH, "/usr/x/", 0, false},
    {MODEL_DOMAIN_ABS_PATH, "/usr/x/.", 0, false},
    {MODEL_DOMAIN_ABS_PATH, "/usr/x/..", 0, false},
    {MODEL_DOMAIN_ABS_PATH, "/.../.x/..y/x.", 0, true},
    {MODEL_DOMAIN_ABS_PATH, "/a", 0, true},
    {MODEL_DOMAIN_ABS_PATH, "usr", 0, false},
    {MODEL_DOMAIN_ABS_PATH, "/a\0b", 4, false},
    {MODEL_DOMAIN_QUERY_VALUE, "", 0, true},
    {MODEL_DOMAIN_QUERY_VALUE, "caf\xc3\xa9", 0, true},
    {MODEL_DOMAIN_QUERY_VALUE, "\xf0\x9f\x98\x80", 0, true},
    {MODEL_DOMAIN_QUERY_VALUE, "\xc3", 0, false},
    {MODEL_DOMAIN_QUERY_VALUE, "\xc0\x80", 0, false},
    {MODEL_DOMAIN_QUERY_VALUE, "\xed\xa0\x80", 0, false},
    {MODEL_DOMAIN_QUERY_VALUE, "\xf4\x90\x80\x80", 0, false},
    {MODEL_DOMAIN_QUERY_VALUE, "a\0", 2, false},
    {MODEL_DOMAIN_ANY, "a\0\xff", 3, true},
};

START_TEST(test_domains)
{
    const struct dom_case *c = &dom_cases[_i];
    const struct model_glob *g = model_dfa_domain(c->dom);
    ck_assert_ptr_nonnull(g);
    size_t len = c->len != 0 ? c->len : strlen(c->s);
    ck_assert_msg(model_glob_match(g, c->s, len) == c->in, "domain %d '%s'", (int)c->dom, c->s);
    /* The emptiness check agrees: domain plus an exact literal term. */
    char pat[64];
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (strchr("*?[]{}\\", c->s[i]) != NULL) {
            pat[o++] = '\\';
        }
        pat[o++] = c->s[i];
    }
    struct model_glob *lit = model_glob_compile(MODEL_GLOB_VALUE, pat, o, NULL);
    ck_assert_ptr_nonnull(lit);
    struct model_lang_term t = {lit, true};
    ck_assert_int_eq(model_lang_check(c->dom, &t, 1, 1000, NULL, NULL),
                     c->in ? MODEL_LANG_NONEMPTY : MODEL_LANG_EMPTY);
    model_glob_free(lit);
}
END_TEST

START_TEST(test_literal_equivalence)
{
    /* A literal compiled directly and the same language through the NFA
     * (an escaped, hence non-literal, spelling) are equal: both
     * differences are empty, and a one-byte change is not. */
    rng_state = 4711;
    for (int iter = 0; iter < 300; iter++) {
        char lit[16];
        char esc[40];
        size_t n = rnd(12) + 1;
        size_t o = 0;
        for (size_t i = 0; i < n; i++) {
            lit[i] = "ab/.%xyz"[rnd(8)];
            if (i == 0 || rnd(3) == 0) {
                esc[o++] = '\\';
            }
            esc[o++] = lit[i];
        }
        enum model_glob_kind kind = rnd(2) ? MODEL_GLOB_PATH : MODEL_GLOB_VALUE;
        struct model_glob *a = model_glob_compile(kind, lit, n, NULL);
        struct model_glob *b = model_glob_compile(kind, esc, o, NULL);
        ck_assert_ptr_nonnull(a);
        ck_assert_ptr_nonnull(b);
        ck_assert(model_glob_is_literal(a));
        ck_assert(!model_glob_is_literal(b));
        struct model_lang_term t1[2] = {{a, true}, {b, false}};
        struct model_lang_term t2[2] = {{a, false}, {b, true}};
        ck_assert_int_eq(model_lang_check(MODEL_DOMAIN_ANY, t1, 2, 0, NULL, NULL),
                         MODEL_LANG_EMPTY);
        ck_assert_int_eq(model_lang_check(MODEL_DOMAIN_ANY, t2, 2, 0, NULL, NULL),
                         MODEL_LANG_EMPTY);
        char *w = NULL;
        size_t wlen = 0;
        struct model_lang_term t3[1] = {{b, true}};
        ck_assert_int_eq(model_lang_check(MODEL_DOMAIN_ANY, t3, 1, 0, &w, &wlen),
                         MODEL_LANG_NONEMPTY);
        ck_assert_uint_eq(wlen, n);
        ck_assert(memcmp(w, lit, n) == 0);
        free(w);
        lit[rnd((unsigned)n)] = 'q';
        ck_assert(!model_glob_match(a, lit, n)); /* 'q' is not in the alphabet */
        ck_assert(!model_glob_match(b, lit, n));
        model_glob_free(a);
        model_glob_free(b);
    }
}
END_TEST

static void *thread_main(void *arg)
{
    (void)arg;
    char *w = NULL;
    enum model_lang_result r = model_lang_check(MODEL_DOMAIN_DNS_NAME, NULL, 0, 0, &w, NULL);
    bool ok = r == MODEL_LANG_NONEMPTY && w != NULL && strcmp(w, "a") == 0;
    free(w);
    return ok ? arg : NULL;
}

START_TEST(test_threads)
{
    /* The built-ins are initialised once, safely, by whichever thread is first. */
    pthread_t th[4];
    int tag[4];
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(pthread_create(&th[i], NULL, thread_main, &tag[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        void *ret = NULL;
        ck_assert_int_eq(pthread_join(th[i], &ret), 0);
        ck_assert_ptr_eq(ret, &tag[i]);
    }
}
END_TEST

static Suite *dfa_suite(void)
{
    Suite *s = suite_create("model_dfa");
    TCase *tc = tcase_create("dfa");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_threads);
    tcase_add_loop_test(tc, test_cross_random, 0, (int)PV_ARRAY_LEN(cross_kinds));
    tcase_add_loop_test(tc, test_lang_table, 0, (int)PV_ARRAY_LEN(lang_cases));
    tcase_add_test(tc, test_lang_limit);
    tcase_add_test(tc, test_literal_equivalence);
    tcase_add_test(tc, test_lang_random);
    tcase_add_loop_test(tc, test_domains, 0, (int)PV_ARRAY_LEN(dom_cases));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(dfa_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
