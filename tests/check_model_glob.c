/* SPDX-License-Identifier: Apache-2.0 */
/* check_model_glob.c - unit tests of model_glob.c (glob syntax and matching)
 *
 * Table-driven: matches per kind (docs/semantics.md#host-pattern,
 * #binary-glob, #path-glob, #query), syntax errors with their 'why',
 * literal detection and the accessors, and the interning cache (sharing,
 * reference counts, eviction, concurrent compiles from several threads, and
 * cached versus uncached automata on many strings). Randomised cross-checks
 * against an independent matcher live in check_model_dfa.c.
 */
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/model_dfa.h"

#define H MODEL_GLOB_HOST
#define P MODEL_GLOB_PATH
#define B MODEL_GLOB_BINARY
#define V MODEL_GLOB_VALUE

struct match_case {
    enum model_glob_kind kind;
    const char *pat;
    const char *input;
    bool expect;
};

static const struct match_case match_cases[] = {
    /* Hosts: '*' within one label, "**." = one or more labels. */
    {H, "*.example.com", "api.example.com", true},
    {H, "*.example.com", "example.com", false},
    {H, "*.example.com", "a.b.example.com", false},
    {H, "*.example.com", "api.example.com.evil", false},
    {H, "*.example.com", "apiexample.com", false},
    {H, "**.example.com", "a.example.com", true},
    {H, "**.example.com", "a.b.example.com", true},
    {H, "**.example.com", "x.y.z.example.com", true},
    {H, "**.example.com", "example.com", false},
    {H, "**.example.com", ".example.com", false},
    {H, "**.example.com", "a..example.com", false},
    {H, "**.example.com", "a.example.org", false},
    {H, "*-aiplatform.googleapis.com", "us-central1-aiplatform.googleapis.com", true},
    {H, "*-aiplatform.googleapis.com", "us-central1.aiplatform.googleapis.com", false},
    {H, "*-aiplatform.googleapis.com", "-aiplatform.googleapis.com", true},
    {H, "api.*.com", "api.x.com", true},
    {H, "api.*.com", "api.x.y.com", false},
    {H, "*", "com", true},
    {H, "*", "a.com", false},
    {H, "api.github.com", "api.github.com", true},
    {H, "api.github.com", "api.github.com.", false},
    {H, "api.github.com", "API.GITHUB.COM", false},
    {H, "api.github.com", "apixgithub.com", false},
    {H, "a?b.com", "a?b.com", true}, /* no '*': every byte is literal */
    {H, "a?b.com", "axb.com", false},
    {H, "[::1]", "[::1]", true},
    {H, "*.*.example.com", "a.b.example.com", true},
    {H, "*.*.example.com", "a.example.com", false},
    /* Paths: docs/semantics.md#path-glob. */
    {P, "/repos/**", "/repos/a/b", true},
    {P, "/repos/**", "/repos/", true},
    {P, "/repos/**", "/repos", false},
    {P, "/repos/**", "/reposx/a", false},
    {P, "/repos/*/issues", "/repos/o/issues", true},
    {P, "/repos/*/issues", "/repos/o/p/issues", false},
    {P, "/repos/*/issues", "/repos//issues", true},
    {P, "/repos/*/issues", "/repos/o/issues/", false},
    {P, "**", "", true},
    {P, "**", "/anything/x", true},
    {P, "**", "x", true},
    {P, "/**", "/", true},
    {P, "/**", "/a/b", true},
    {P, "/**", "", false},
    {P, "/**", "a", false},
    {P, "**/foo", "foo", true},
    {P, "**/foo", "/foo", true},
    {P, "**/foo", "/a/b/foo", true},
    {P, "**/foo", "/afoo", false},
    {P, "**/foo", "/foo/", false},
    {P, "/a/**/b", "/a/b", true},
    {P, "/a/**/b", "/a/x/b", true},
    {P, "/a/**/b", "/a/x/y/b", true},
    {P, "/a/**/b", "/ab", false},
    {P, "/a/**/b", "/a/xb", false},
    {P, "/a/**/b", "/a//b", true},
    {P, "/api/*", "/api/", true},
    {P, "/api/*", "/api", false},
    {P, "/api/*", "/api/a/b", false},
    {P, "/a?c", "/abc", true},
    {P, "/a?c", "/a/c", false},
    {P, "/a?c", "/ac", false},
    {P, "/[a-c]x", "/bx", true},
    {P, "/[a-c]x", "/dx", false},
    {P, "/[!a-c]x", "/dx", true},
    {P, "/[!a-c]x", "/bx", false},
    {P, "/[!a-c]x", "//x", false},
    {P, "/[^a]", "/b", true},
    {P, "/[^a]", "/a", false},
    {P, "/[]]", "/]", true},
    {P, "/[a-]", "/-", true},
    {P, "/[a-]", "/b", false},
    {P, "/[\\]]", "/]", true},
    {P, "/{foo,bar}/x", "/foo/x", true},
    {P, "/{foo,bar}/x", "/bar/x", true},
    {P, "/{foo,bar}/x", "/baz/x", false},
    {P, "/{foo,bar}/x", "/foobar/x", false},
    {P, "/{,a}b", "/b", true},
    {P, "/{,a}b", "/ab", true},
    {P, "/{a*,b}c", "/axyc", true},
    {P, "/{a*,b}c", "/ax/c", false},
    {P, "/a**b", "/axyb", true},
    {P, "/a**b", "/ax/yb", false},
    {P, "/a\\*b", "/a*b", true},
    {P, "/a\\*b", "/axb", false},
    {P, "/x/**/", "/x/", true},
    {P, "/x/**/", "/x/a/", true},
    {P, "/x/**/", "/x/a", false},
    {P, "/v1/{a,b}/**", "/v1/a/x/y", true},
    {P, "/v1/{a,b}/**", "/v1/c/x", false},
    {P, "/a,b", "/a,b", true},
    {P, "/CaSe", "/case", false},
    {P, "/x/**/**", "/x/a/b", true},
    {P, "/x/**/**", "/x", false},
    {P, "/a/*.txt", "/a/b.txt", true},
    {P, "/a/*.txt", "/a/b/c.txt", false},
    /* Binaries. */
    {B, "/usr/bin/*", "/usr/bin/curl", true},
    {B, "/usr/bin/*", "/usr/bin/subdir/node", false},
    {B, "/usr/**", "/usr/bin/x", true},
    {B, "/usr/bin/python3*", "/usr/bin/python3.11", true},
    {B, "/usr/bin/python3*", "/usr/bin/python", false},
    {B, "/usr/local/bin/my-tool", "/usr/local/bin/my-tool", true},
    {B, "/usr/local/bin/my-tool", "/usr/bin/node", false},
    {B, "**/node", "/opt/n/bin/node", true},
    /* Values: no separator. */
    {V, "foo-*", "foo-a", true},
    {V, "foo-*", "foo-", true},
    {V, "foo-*", "evil", false},
    {V, "*", "1.2", true},
    {V, "*", "", true},
    {V, "*", "a/b", true},
    {V, "?", "a", true},
    {V, "?", "/", true},
    {V, "?", "", false},
    {V, "?", "ab", false},
    {V, "v[0-9]", "v1", true},
    {V, "v[0-9]", "va", false},
    {V, "{a,b}*", "bcd", true},
    {V, "{a,b}*", "cd", false},
    {V, "a**b", "a/x/b", true},
    {V, "x", "x", true},
    {V, "x", "xx", false},
    {V, "", "", true},
    {V, "", "a", false},
};

START_TEST(test_match)
{
    const struct match_case *c = &match_cases[_i];
    const char *why = NULL;
    struct model_glob *g = model_glob_compile(c->kind, c->pat, strlen(c->pat), &why);
    ck_assert_msg(g != NULL, "compile '%s': %s", c->pat, why ? why : "?");
    ck_assert_msg(model_glob_match(g, c->input, strlen(c->input)) == c->expect,
                  "kind %d '%s' vs '%s': expected %d", (int)c->kind, c->pat, c->input,
                  (int)c->expect);
    model_glob_free(g);
}
END_TEST

struct error_case {
    enum model_glob_kind kind;
    const char *pat;
    const char *why; /* substring of the explanation; NULL = must compile */
};

static const struct error_case error_cases[] = {
    {H, "**", "entire first label"},
    {H, "a.**.com", "entire first label"},
    {H, "**com", "entire first label"},
    {H, "***.com", "entire first label"},
    {H, "*.?.com", "unsupported character"},
    {H, "*[a].com", "unsupported character"},
    {H, "*.{a,b}.com", "unsupported character"},
    {H, "*\\a.com", "unsupported character"},
    {H, "**.example.com", NULL},
    {H, "[a].com", NULL}, /* literal: no '*' */
    {P, "/[abc", "unclosed '['"},
    {P, "/[", "unclosed '['"},
    {P, "/[]", "unclosed '['"},
    {P, "/[a\\", "unclosed '['"},
    {P, "/{a,b", "unclosed '{'"},
    {P, "/{a", "unclosed '{'"},
    {P, "/{a,{b}}", "nested '{'"},
    {P, "/a}", "unmatched '}'"},
    {P, "/a\\", "dangling"},
    {P, "/[z-a]", "invalid range"},
    {P, "/[a-z]", NULL},
    {P, "/a,b]", NULL},
    {B, "/usr/[bin", "unclosed '['"},
    {V, "{x", "unclosed '{'"},
    {V, "x\\", "dangling"},
    {V, "[9-0]", "invalid range"},
    {V, "*a?????????????", "too complex"},
    {V, "*a??????", NULL},
};

START_TEST(test_errors)
{
    const struct error_case *c = &error_cases[_i];
    const char *why = NULL;
    pv_errno = 0;
    struct model_glob *g = model_glob_compile(c->kind, c->pat, strlen(c->pat), &why);
    if (c->why == NULL) {
        ck_assert_msg(g != NULL, "'%s' should compile: %s", c->pat, why ? why : "?");
        ck_assert_ptr_null(why);
    } else {
        ck_assert_msg(g == NULL, "'%s' should fail", c->pat);
        ck_assert_ptr_nonnull(why);
        ck_assert_msg(strstr(why, c->why) != NULL, "'%s': why '%s'", c->pat, why);
        ck_assert_int_eq(pv_errno, PV_ERR_PATTERN);
    }
    model_glob_free(g);
}
END_TEST

struct literal_case {
    enum model_glob_kind kind;
    const char *pat;
    bool literal;
};

static const struct literal_case literal_cases[] = {
    {H, "api.github.com", true},
    {H, "*.x.com", false},
    {H, "a?b", true},
    {H, "10.0.0.1", true},
    {P, "/a/b", true},
    {P, "/a/*", false},
    {P, "/a\\b", false},
    {P, "/a]", true},
    {P, "/a,b", true},
    {P, "/a?", false},
    {P, "/a{b,c}", false},
    {P, "/a[b]", false},
    {B, "/usr/bin/curl", true},
    {B, "/usr/**", false},
    {V, "abc", true},
    {V, "a?", false},
    {V, "", true},
};

START_TEST(test_literal)
{
    const struct literal_case *c = &literal_cases[_i];
    struct model_glob *g = model_glob_compile(c->kind, c->pat, strlen(c->pat), NULL);
    ck_assert_ptr_nonnull(g);
    ck_assert_msg(model_glob_is_literal(g) == c->literal, "'%s'", c->pat);
    ck_assert_str_eq(model_glob_text(g), c->pat);
    ck_assert_int_eq(model_glob_kind_of(g), c->kind);
    if (c->literal) {
        /* A literal matches exactly its text. */
        ck_assert(model_glob_match(g, c->pat, strlen(c->pat)));
        ck_assert(!model_glob_match(g, "zz", 2) || strcmp(c->pat, "zz") == 0);
    }
    model_glob_free(g);
}
END_TEST

START_TEST(test_bytes)
{
    /* NUL and high bytes are ordinary bytes: '*' and '?' cover them. */
    struct model_glob *g = model_glob_compile(V, "a*z", 3, NULL);
    ck_assert_ptr_nonnull(g);
    ck_assert(model_glob_match(g,
                               "a\0\xff"
                               "z",
                               4));
    ck_assert(!model_glob_match(g, "a\0\xff", 3));
    model_glob_free(g);

    g = model_glob_compile(P, "/a\0b", 4, NULL);
    ck_assert_ptr_nonnull(g);
    ck_assert(model_glob_match(g, "/a\0b", 4));
    ck_assert(!model_glob_match(g, "/a", 2));
    ck_assert_uint_eq(strlen(model_glob_text(g)), 2); /* text is NUL-terminated */
    model_glob_free(g);

    g = model_glob_compile(P, "/[!a]", 5, NULL);
    ck_assert_ptr_nonnull(g);
    ck_assert(model_glob_match(g, "/\xe9", 2));
    ck_assert(!model_glob_match(g, "//", 2));
    model_glob_free(g);

    /* NULL handling fails closed. */
    ck_assert(!model_glob_match(NULL, "a", 1));
    ck_assert(!model_glob_is_literal(NULL));
    model_glob_free(NULL);
    const char *why = NULL;
    ck_assert_ptr_null(model_glob_compile(V, NULL, 3, &why));
    ck_assert_ptr_nonnull(why);
    ck_assert_ptr_null(model_glob_compile((enum model_glob_kind)99, "a", 1, &why));
}
END_TEST

START_TEST(test_long)
{
    /* A long literal path and a long wildcard pattern stay usable. */
    char pat[2100];
    char in[2100];
    memset(pat, 'a', sizeof(pat));
    pat[0] = '/';
    pat[1000] = '*';
    memcpy(in, pat, sizeof(in));
    in[1000] = 'q';
    struct model_glob *g = model_glob_compile(P, pat, sizeof(pat), NULL);
    ck_assert_ptr_nonnull(g);
    ck_assert(!model_glob_is_literal(g));
    ck_assert(model_glob_match(g, in, sizeof(in)));
    ck_assert(!model_glob_match(g, in, sizeof(in) - 1));
    model_glob_free(g);

    /* A literal longer than the state bound still compiles. */
    char big[5000];
    memset(big, 'b', sizeof(big));
    big[0] = '/';
    g = model_glob_compile(P, big, sizeof(big), NULL);
    ck_assert_ptr_nonnull(g);
    ck_assert(model_glob_match(g, big, sizeof(big)));
    model_glob_free(g);

    /* ... up to a bound. */
    static char huge[10000];
    memset(huge, 'c', sizeof(huge));
    const char *why2 = NULL;
    ck_assert_ptr_null(model_glob_compile(V, huge, sizeof(huge), &why2));
    ck_assert_str_eq(why2, "pattern too long");
    ck_assert_int_eq(pv_errno, PV_ERR_PATTERN);

    /* More DFA states than the bound: a clear error, not a crash. */
    big[2500] = '*';
    const char *why = NULL;
    g = model_glob_compile(P, big, sizeof(big), &why);
    ck_assert_ptr_null(g);
    ck_assert_str_eq(why, "pattern too complex");
}
END_TEST

static unsigned long rng_state = 31337;

static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ul + 1442695040888963407ul;
    return (unsigned)((rng_state >> 33) % n);
}

START_TEST(test_garbage)
{
    /* Any byte string compiles or fails with a reason; compiled patterns
     * match without trouble and agree with their own literal text when they
     * are literal. */
    static const char alpha[] = "ab/.*?[]{},!^-\\\0\xff";
    const enum model_glob_kind kinds[] = {H, P, B, V};
    size_t ok = 0;
    for (int iter = 0; iter < 20000; iter++) {
        char pat[16];
        size_t n = rnd(sizeof(pat));
        for (size_t i = 0; i < n; i++) {
            pat[i] = alpha[rnd(sizeof(alpha) - 1)];
        }
        enum model_glob_kind kind = kinds[rnd(4)];
        const char *why = NULL;
        struct model_glob *g = model_glob_compile(kind, pat, n, &why);
        if (g == NULL) {
            ck_assert_ptr_nonnull(why);
            ck_assert_int_eq(pv_errno, PV_ERR_PATTERN);
            continue;
        }
        ok++;
        ck_assert_ptr_null(why);
        if (model_glob_is_literal(g)) {
            ck_assert(model_glob_match(g, pat, n));
        }
        for (int j = 0; j < 20; j++) {
            char in[12];
            size_t m = rnd(sizeof(in));
            for (size_t i = 0; i < m; i++) {
                in[i] = alpha[rnd(sizeof(alpha) - 1)];
            }
            (void)model_glob_match(g, in, m);
        }
        model_glob_free(g);
    }
    ck_assert_uint_gt(ok, 5000);
}
END_TEST

/* ---- Interning cache ---------------------------------------------------- */

struct cache_case {
    enum model_glob_kind kind;
    const char *pat;
};

static const struct cache_case cache_cases[] = {
    {H, "api.github.com"},
    {H, "*.example.com"},
    {H, "**.example.com"},
    {H, "*"},
    {H, ""},
    {P, "/repos/**"},
    {P, "**/x/*.txt"},
    {P, "/a/{b,c}/[!x]?"},
    {P, "/api/v1/users"},
    {B, "/usr/bin/python3*"},
    {B, "/opt/tools/**"},
    {B, "/usr/bin/curl"},
    {V, "*"},
    {V, "a?c*"},
    {V, "lit\\*eral"},
    {V, ""},
};

static const char *const cache_inputs[] = {
    "",
    "api.github.com",
    "x.example.com",
    "a.b.example.com",
    "example.com",
    "com",
    "/repos/a/b",
    "/repos",
    "x/y/x/a.txt",
    "/x/a.txt",
    "/a/b/yz",
    "/a/c/x1",
    "/a/d/yz",
    "/api/v1/users",
    "/usr/bin/python3",
    "/usr/bin/python3.11",
    "/usr/bin/python3/x",
    "/opt/tools/a/b",
    "/usr/bin/curl",
    "abc",
    "a?cdef",
    "lit*eral",
    "literal",
    "*",
    ".",
    "/",
    "//",
    "a.b",
    "\xff\x00",
};

/* Every input on which the cached and the uncached automaton agree; the
 * number of matches is returned so the callers can assert non-vacuity. */
static size_t same_language(const struct model_glob *a, const struct model_glob *b)
{
    size_t hits = 0;
    for (size_t i = 0; i < PV_ARRAY_LEN(cache_inputs); i++) {
        const char *in = cache_inputs[i];
        size_t n = strlen(in);
        bool ma = model_glob_match(a, in, n);
        ck_assert_msg(ma == model_glob_match(b, in, n), "'%s' vs '%s' on '%s'", model_glob_text(a),
                      model_glob_text(b), in);
        hits += ma ? 1u : 0u;
    }
    return hits;
}

START_TEST(test_cache_share)
{
    const struct cache_case *c = &cache_cases[_i];
    size_t len = strlen(c->pat);
    struct model_glob_cache_stats before;
    struct model_glob_cache_stats after;
    model_glob_cache_stats(&before);
    struct model_glob *a = model_glob_compile(c->kind, c->pat, len, NULL);
    struct model_glob *b = model_glob_compile(c->kind, c->pat, len, NULL);
    struct model_glob *u = model_glob_compile_uncached(c->kind, c->pat, len, NULL);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(u);
    ck_assert_ptr_eq(a, b); /* one shared automaton */
    ck_assert_ptr_ne(a, u);
    model_glob_cache_stats(&after);
    ck_assert_uint_ge(after.hits, before.hits + 1);
    (void)same_language(a, u);
    /* Freeing one reference keeps the other valid. */
    model_glob_free(a);
    ck_assert_str_eq(model_glob_text(b), c->pat);
    (void)same_language(b, u);
    /* Negative: another kind with the same text is another object. */
    enum model_glob_kind other = c->kind == V ? P : V;
    struct model_glob *o = model_glob_compile(other, c->pat, len, NULL);
    if (o != NULL) {
        ck_assert_ptr_ne(o, b);
        ck_assert_int_eq(model_glob_kind_of(o), other);
        model_glob_free(o);
    }
    /* Negative: a different text is another object. */
    struct model_glob *d = model_glob_compile(c->kind, "zz", 2, NULL);
    ck_assert_ptr_nonnull(d);
    ck_assert_ptr_ne(d, b);
    ck_assert(!model_glob_match(d, c->pat, len) || strcmp(c->pat, "zz") == 0);
    model_glob_free(d);
    model_glob_free(b);
    model_glob_free(u);
    /* Idle now: compiling again is a hit on the same language. */
    model_glob_cache_stats(&before);
    a = model_glob_compile(c->kind, c->pat, len, NULL);
    model_glob_cache_stats(&after);
    ck_assert_uint_eq(after.hits, before.hits + 1);
    ck_assert_uint_eq(after.misses, before.misses);
    model_glob_free(a);
    model_glob_cache_flush();
    model_glob_cache_stats(&after);
    ck_assert_uint_eq(after.entries, 0);
    ck_assert_uint_eq(after.idle, 0);
}
END_TEST

START_TEST(test_cache_errors)
{
    /* Bad patterns are not cached and report their reason every time. */
    for (int round = 0; round < 3; round++) {
        const char *why = NULL;
        struct model_glob *g = model_glob_compile(P, "/a/{b", 5, &why);
        ck_assert_ptr_null(g);
        ck_assert_ptr_nonnull(why);
        ck_assert_str_eq(why, "unclosed '{' in pattern");
    }
    const char *why = "stale";
    struct model_glob *g = model_glob_compile(P, "/ok", 3, &why);
    ck_assert_ptr_nonnull(g);
    ck_assert_ptr_null(why);
    struct model_glob *h = model_glob_compile(P, "/ok", 3, &why);
    ck_assert_ptr_eq(g, h);
    ck_assert_ptr_null(why);
    model_glob_free(g);
    model_glob_free(h);
    model_glob_cache_flush();
    struct model_glob_cache_stats st;
    model_glob_cache_stats(&st);
    ck_assert_uint_eq(st.entries, 0);
}
END_TEST

START_TEST(test_cache_evict)
{
    /* More idle globs than the bound: the oldest are evicted, live ones stay. */
    size_t n = MODEL_GLOB_CACHE_IDLE_MAX + 64;
    struct model_glob *keep = model_glob_compile(V, "keep*", 5, NULL);
    ck_assert_ptr_nonnull(keep);
    for (size_t i = 0; i < n; i++) {
        char pat[32];
        int len = snprintf(pat, sizeof(pat), "p%zu*", i);
        struct model_glob *g = model_glob_compile(V, pat, (size_t)len, NULL);
        ck_assert_ptr_nonnull(g);
        ck_assert(model_glob_match(g, pat, (size_t)len - 1));
        model_glob_free(g);
    }
    struct model_glob_cache_stats st;
    model_glob_cache_stats(&st);
    ck_assert_uint_le(st.idle, MODEL_GLOB_CACHE_IDLE_MAX);
    ck_assert_uint_ge(st.entries, 1);
    ck_assert(model_glob_match(keep, "keeper", 6));
    ck_assert(!model_glob_match(keep, "kee", 3));
    model_glob_cache_flush();
    model_glob_cache_stats(&st);
    ck_assert_uint_eq(st.entries, 1); /* 'keep' is still referenced */
    ck_assert(model_glob_match(keep, "keep", 4));
    model_glob_free(keep);
    model_glob_cache_flush();
    model_glob_cache_stats(&st);
    ck_assert_uint_eq(st.entries, 0);
}
END_TEST

#define CACHE_THREADS 4
#define CACHE_ROUNDS 300

struct cache_worker {
    unsigned seed;
    size_t failures;
};

static void *cache_thread(void *arg)
{
    struct cache_worker *w = arg;
    struct model_glob *held[PV_ARRAY_LEN(cache_cases)] = {NULL};
    for (int round = 0; round < CACHE_ROUNDS; round++) {
        w->seed = w->seed * 1103515245u + 12345u;
        size_t i = (w->seed >> 16) % PV_ARRAY_LEN(cache_cases);
        const struct cache_case *c = &cache_cases[i];
        struct model_glob *g = model_glob_compile(c->kind, c->pat, strlen(c->pat), NULL);
        if (g == NULL || strcmp(model_glob_text(g), c->pat) != 0 ||
            model_glob_kind_of(g) != c->kind) {
            w->failures++;
        }
        /* The shared automaton answers like a fresh uncached one. */
        struct model_glob *u = model_glob_compile_uncached(c->kind, c->pat, strlen(c->pat), NULL);
        for (size_t k = 0; g != NULL && u != NULL && k < PV_ARRAY_LEN(cache_inputs); k++) {
            size_t n = strlen(cache_inputs[k]);
            if (model_glob_match(g, cache_inputs[k], n) !=
                model_glob_match(u, cache_inputs[k], n)) {
                w->failures++;
            }
        }
        model_glob_free(u);
        /* Keep some references across rounds, drop others at once. */
        if ((w->seed >> 8) & 1u) {
            model_glob_free(held[i]);
            held[i] = g;
        } else {
            model_glob_free(g);
        }
        if (round % 97 == 0) {
            model_glob_cache_flush();
        }
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(held); i++) {
        model_glob_free(held[i]);
    }
    return NULL;
}

START_TEST(test_cache_threads)
{
    pthread_t th[CACHE_THREADS];
    struct cache_worker w[CACHE_THREADS];
    for (unsigned t = 0; t < CACHE_THREADS; t++) {
        w[t].seed = 7u + t * 7919u;
        w[t].failures = 0;
        ck_assert_int_eq(pthread_create(&th[t], NULL, cache_thread, &w[t]), 0);
    }
    for (unsigned t = 0; t < CACHE_THREADS; t++) {
        ck_assert_int_eq(pthread_join(th[t], NULL), 0);
        ck_assert_uint_eq(w[t].failures, 0);
    }
    /* Every reference was dropped: a flush empties the cache. */
    model_glob_cache_flush();
    struct model_glob_cache_stats st;
    model_glob_cache_stats(&st);
    ck_assert_uint_eq(st.entries, 0);
    ck_assert_uint_gt(st.hits, 0);
}
END_TEST

static Suite *glob_suite(void)
{
    Suite *s = suite_create("model_glob");
    TCase *tc = tcase_create("glob");
    tcase_add_loop_test(tc, test_match, 0, (int)PV_ARRAY_LEN(match_cases));
    tcase_add_loop_test(tc, test_errors, 0, (int)PV_ARRAY_LEN(error_cases));
    tcase_add_loop_test(tc, test_literal, 0, (int)PV_ARRAY_LEN(literal_cases));
    tcase_add_test(tc, test_bytes);
    tcase_add_test(tc, test_long);
    tcase_add_test(tc, test_garbage);
    suite_add_tcase(s, tc);
    TCase *tcc = tcase_create("cache");
    tcase_set_timeout(tcc, 60);
    tcase_add_loop_test(tcc, test_cache_share, 0, (int)PV_ARRAY_LEN(cache_cases));
    tcase_add_test(tcc, test_cache_errors);
    tcase_add_test(tcc, test_cache_evict);
    tcase_add_test(tcc, test_cache_threads);
    suite_add_tcase(s, tcc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(glob_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
