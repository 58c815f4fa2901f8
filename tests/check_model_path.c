/* SPDX-License-Identifier: Apache-2.0 */
/* check_model_path.c - unit tests of model_path.c (canonical paths, hosts)
 *
 * A table of request-targets and their canonical form
 * (docs/semantics.md#canonical-path), the properties that the prover relies
 * on (idempotence; the outputs are exactly the CANONICAL_PATH domain,
 * checked exhaustively on short strings and on random long ones), and a
 * table of host normalisations (docs/semantics.md#hosts).
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/model_dfa.h"

#define OK MODEL_TARGET_OK
#define BAD MODEL_TARGET_BAD
#define TRAV MODEL_TARGET_TRAVERSAL
#define LONG MODEL_TARGET_TOO_LONG

struct canon_case {
    const char *in;
    enum model_target_status st;
    const char *out;   /* when OK */
    const char *query; /* NULL = no '?' */
    bool slash;
};

static const struct canon_case canon_cases[] = {
    {"/", OK, "/", NULL, false},
    {"", OK, "/", NULL, false},
    {"/a/b", OK, "/a/b", NULL, false},
    {"/a/b/", OK, "/a/b/", NULL, false},
    {"/a/./b", OK, "/a/b", NULL, false},
    {"/a/../b", OK, "/b", NULL, false},
    {"/a/b/..", OK, "/a/", NULL, false},
    {"/a/b/.", OK, "/a/b/", NULL, false},
    {"/.", OK, "/", NULL, false},
    {"/..", TRAV, NULL, NULL, false},
    {"/a/../..", TRAV, NULL, NULL, false},
    {"/../a", TRAV, NULL, NULL, false},
    {"/a/%2e%2e/b", OK, "/b", NULL, false},
    {"/a/%2E/b", OK, "/a/b", NULL, false},
    {"/a/.%2e/b", OK, "/b", NULL, false},
    {"/%2e%2e", TRAV, NULL, NULL, false},
    {"/a%2e", OK, "/a.", NULL, false},
    {"/a/%2e%2e%2e", OK, "/a/...", NULL, false},
    {"/a;x/b", OK, "/a/b", NULL, false},
    {"/a/..;x/b", OK, "/b", NULL, false},
    {"/a/.;x/b", OK, "/a/b", NULL, false},
    {"/a;b;c/d", OK, "/a/d", NULL, false},
    {"/;x", OK, "/", NULL, false},
    {"/a/b;x/..", OK, "/a/", NULL, false},
    {"/a/.%2E;p", OK, "/", NULL, false},
    {"/a/...;", OK, "/a/...", NULL, false},
    {"/a%3b", OK, "/a%3B", NULL, false},
    {"/a%3Bb/..", OK, "/", NULL, false},
    {"/a%2Fb", OK, "/a%2Fb", NULL, true},
    {"/a%2fb", OK, "/a%2Fb", NULL, true},
    {"/a/%2F../b", OK, "/a/%2F../b", NULL, true},
    {"/x/%2F/..", OK, "/x/", NULL, false},
    {"/x;%2F/y", OK, "/x/y", NULL, false},
    {"/a%zz", BAD, NULL, NULL, false},
    {"/a%2", BAD, NULL, NULL, false},
    {"/a%", BAD, NULL, NULL, false},
    {"/a%%41", BAD, NULL, NULL, false},
    {"/a%00", BAD, NULL, NULL, false},
    {"/a%0a", BAD, NULL, NULL, false},
    {"/a%1f", BAD, NULL, NULL, false},
    {"/a%7F", BAD, NULL, NULL, false},
    {"/a;%zz", BAD, NULL, NULL, false},
    {"/a/../%zz", BAD, NULL, NULL, false},
    {"/a%20b", OK, "/a%20b", NULL, false},
    {"/a%41", OK, "/aA", NULL, false},
    {"/a%7e", OK, "/a~", NULL, false},
    {"/a%25b", OK, "/a%25b", NULL, false},
    {"/a%ab", OK, "/a%AB", NULL, false},
    {"/a%c3%a9", OK, "/a%C3%A9", NULL, false},
    {"/a%3F", OK, "/a%3F", NULL, false},
    {"/a%23", OK, "/a%23", NULL, false},
    {"/a\"b", OK, "/a%22b", NULL, false},
    {"/a[b]", OK, "/a%5Bb%5D", NULL, false},
    {"/a{b}|^`\\<>", OK, "/a%7Bb%7D%7C%5E%60%5C%3C%3E", NULL, false},
    {"/~user/x-y_z.txt", OK, "/~user/x-y_z.txt", NULL, false},
    {"/!$&'()*+,=:@", OK, "/!$&'()*+,=:@", NULL, false},
    {"/a b", BAD, NULL, NULL, false},
    {"/a\tb", BAD, NULL, NULL, false},
    {"/a\rb", BAD, NULL, NULL, false},
    {"/a#b", BAD, NULL, NULL, false},
    {"/a\x80", BAD, NULL, NULL, false},
    {"/a\x7f", BAD, NULL, NULL, false},
    {"a/b", BAD, NULL, NULL, false},
    {"*", BAD, NULL, NULL, false},
    {"http://h/a", BAD, NULL, NULL, false},
    {"/a?x=1&y", OK, "/a", "x=1&y", false},
    {"?q", OK, "/", "q", false},
    {"/a?", OK, "/a", "", false},
    {"/a?b?c", OK, "/a", "b?c", false},
    {"/a?%zz/../..", OK, "/a", "%zz/../..", false},
    {"/a?#", BAD, NULL, NULL, false},
    {"/a?x y", BAD, NULL, NULL, false},
    /* step 1's byte check covers the query too (#canonical-path) */
    {"/a?x=\x01", BAD, NULL, NULL, false},
    {"/a?x=\x7f", BAD, NULL, NULL, false},
    {"/a?x=\xc3\xa9", BAD, NULL, NULL, false},
    {"/a?x=%C3%A9", OK, "/a", "x=%C3%A9", false},
    {"/a//b", OK, "/a/b", NULL, false},
    {"//", OK, "/", NULL, false},
    {"/a//", OK, "/a/", NULL, false},
    {"///a", OK, "/a", NULL, false},
    {"/a/b/../../c/./d/", OK, "/c/d/", NULL, false},
    {"/a/./../b", OK, "/b", NULL, false},
    {"/a/b/c/../../../d", OK, "/d", NULL, false},
};

START_TEST(test_canon_table)
{
    const struct canon_case *c = &canon_cases[_i];
    char out[MODEL_PATH_MAX + 1];
    size_t outl = 99;
    const char *q = (const char *)1;
    size_t qlen = 99;
    bool slash = true;
    enum model_target_status st =
        model_path_canonicalize(c->in, strlen(c->in), out, sizeof(out), &outl, &q, &qlen, &slash);
    ck_assert_msg(st == c->st, "'%s': status %d want %d", c->in, (int)st, (int)c->st);
    if (st != OK) {
        ck_assert_uint_eq(outl, 0);
        ck_assert_int_eq(slash, false);
        return;
    }
    ck_assert_msg(strcmp(out, c->out) == 0, "'%s' -> '%s' want '%s'", c->in, out, c->out);
    ck_assert_uint_eq(outl, strlen(c->out));
    ck_assert_int_eq(slash, c->slash);
    if (c->query == NULL) {
        ck_assert_ptr_null(q);
        ck_assert_uint_eq(qlen, 0);
    } else {
        ck_assert_ptr_nonnull(q);
        ck_assert_uint_eq(qlen, strlen(c->query));
        ck_assert(memcmp(q, c->query, qlen) == 0);
    }
    /* Idempotent, and the output is in the domain language. */
    char again[MODEL_PATH_MAX + 1];
    size_t al = 0;
    ck_assert_int_eq(
        model_path_canonicalize(out, outl, again, sizeof(again), &al, NULL, NULL, NULL), OK);
    ck_assert_str_eq(again, out);
    ck_assert(model_glob_match(model_dfa_domain(MODEL_DOMAIN_CANONICAL_PATH), out, outl));
}
END_TEST

START_TEST(test_canon_lengths)
{
    static char in[3 * MODEL_PATH_MAX];
    static char out[MODEL_PATH_MAX + 1];
    size_t outl = 0;
    in[0] = '/';
    memset(in + 1, 'a', MODEL_PATH_MAX - 1);
    /* Exactly 4096 bytes: accepted. */
    ck_assert_int_eq(
        model_path_canonicalize(in, MODEL_PATH_MAX, out, sizeof(out), &outl, NULL, NULL, NULL), OK);
    ck_assert_uint_eq(outl, MODEL_PATH_MAX);
    /* One more: too long. */
    in[MODEL_PATH_MAX] = 'a';
    ck_assert_int_eq(
        model_path_canonicalize(in, MODEL_PATH_MAX + 1, out, sizeof(out), &outl, NULL, NULL, NULL),
        LONG);
    /* The query does not count. */
    in[MODEL_PATH_MAX] = '?';
    memset(in + MODEL_PATH_MAX + 1, 'q', 1000);
    ck_assert_int_eq(model_path_canonicalize(in, MODEL_PATH_MAX + 1001, out, sizeof(out), &outl,
                                             NULL, NULL, NULL),
                     OK);
    /* A short raw path whose canonical form is over the limit. */
    memset(in + 1, '"', 2000);
    ck_assert_int_eq(model_path_canonicalize(in, 2001, out, sizeof(out), &outl, NULL, NULL, NULL),
                     LONG);
    /* ... unless dot segments remove it again. */
    memcpy(in + 2001, "/..", 3);
    ck_assert_int_eq(model_path_canonicalize(in, 2004, out, sizeof(out), &outl, NULL, NULL, NULL),
                     OK);
    ck_assert_str_eq(out, "/");
    /* Many segments. */
    for (size_t i = 0; i < MODEL_PATH_MAX; i += 2) {
        in[i] = '/';
        in[i + 1] = 'x';
    }
    ck_assert_int_eq(
        model_path_canonicalize(in, MODEL_PATH_MAX, out, sizeof(out), &outl, NULL, NULL, NULL), OK);
    ck_assert_uint_eq(outl, MODEL_PATH_MAX);
    /* A small output buffer is reported, never overrun. */
    char small[4];
    memset(small, 'z', sizeof(small));
    ck_assert_int_eq(model_path_canonicalize("/abc", 4, small, 4, &outl, NULL, NULL, NULL), LONG);
    ck_assert_int_eq(model_path_canonicalize("/ab", 3, small, 4, &outl, NULL, NULL, NULL), OK);
    ck_assert_str_eq(small, "/ab");
    ck_assert_int_eq(model_path_canonicalize("/a", 2, NULL, 0, &outl, NULL, NULL, NULL), BAD);
    ck_assert_int_eq(model_path_canonicalize(NULL, 2, small, 4, &outl, NULL, NULL, NULL), BAD);
}
END_TEST

/* s in the CANONICAL_PATH domain  <=>  canonicalize(s) == s. Exhaustive over
 * short strings of an alphabet with every interesting byte. */
static bool fixed_point(const char *s, size_t len)
{
    char out[64];
    size_t outl = 0;
    return model_path_canonicalize(s, len, out, sizeof(out), &outl, NULL, NULL, NULL) == OK &&
           outl == len && memcmp(out, s, len) == 0;
}

START_TEST(test_canon_domain_exhaustive)
{
    static const char alpha[] = "/a.%2FE;";
    const struct model_glob *dom = model_dfa_domain(MODEL_DOMAIN_CANONICAL_PATH);
    ck_assert_ptr_nonnull(dom);
    size_t na = strlen(alpha);
    char s[8];
    size_t idx[8];
    size_t in_domain = 0;
    for (size_t len = 0; len <= 6; len++) {
        memset(idx, 0, sizeof(idx));
        for (;;) {
            for (size_t i = 0; i < len; i++) {
                s[i] = alpha[idx[i]];
            }
            bool d = model_glob_match(dom, s, len);
            in_domain += d;
            ck_assert_msg(d == fixed_point(s, len), "'%.*s': domain %d", (int)len, s, (int)d);
            size_t pos = len;
            while (pos > 0 && idx[pos - 1] == na - 1) {
                idx[--pos] = 0;
            }
            if (pos == 0) {
                break;
            }
            idx[pos - 1]++;
        }
    }
    ck_assert_uint_gt(in_domain, 1000);
}
END_TEST

static unsigned long rng = 4242;

static unsigned rnd(unsigned n)
{
    rng = rng * 6364136223846793005ul + 1442695040888963407ul;
    return (unsigned)((rng >> 33) % n);
}

START_TEST(test_canon_random)
{
    static const char *const pieces[] = {
        "/",   "/",      "/", "a",  "b",   ".",   "..",  "%2e", "%2E", "%2f",
        "%2F", "%3b",    ";", ";p", "%41", "%25", "%zz", "%",   "%00", "\"",
        "~",   "%c3%a9", "?", "=",  "&",   "%7F", "%20", "[",
    };
    const struct model_glob *dom = model_dfa_domain(MODEL_DOMAIN_CANONICAL_PATH);
    size_t ok = 0;
    for (int iter = 0; iter < 100000; iter++) {
        char in[128];
        size_t n = 0;
        if (rnd(8) != 0) {
            in[n++] = '/';
        }
        size_t np = rnd(12);
        for (size_t i = 0; i < np; i++) {
            const char *p = pieces[rnd(PV_ARRAY_LEN(pieces))];
            memcpy(in + n, p, strlen(p));
            n += strlen(p);
        }
        char out[512];
        size_t outl = 0;
        bool slash = false;
        enum model_target_status st =
            model_path_canonicalize(in, n, out, sizeof(out), &outl, NULL, NULL, &slash);
        if (st != OK) {
            continue;
        }
        ok++;
        ck_assert_msg(model_glob_match(dom, out, outl), "'%.*s' -> '%s' not canonical", (int)n, in,
                      out);
        ck_assert_int_eq(slash, strstr(out, "%2F") != NULL);
        char again[512];
        size_t al = 0;
        bool slash2 = false;
        ck_assert_int_eq(
            model_path_canonicalize(out, outl, again, sizeof(again), &al, NULL, NULL, &slash2), OK);
        ck_assert_msg(al == outl && memcmp(again, out, outl) == 0, "'%s' -> '%s'", out, again);
        ck_assert_int_eq(slash2, slash);
    }
    ck_assert_uint_gt(ok, 10000);
}
END_TEST

/* ===========================================================================
 * Hosts
 * ========================================================================= */

struct host_case {
    const char *in;
    const char *out; /* NULL = invalid */
    bool is_ip;
};

static const struct host_case host_cases[] = {
    {"API.GITHUB.COM.", "api.github.com", false},
    {"api.github.com", "api.github.com", false},
    {"a", "a", false},
    {"a_b-c.example", "a_b-c.example", false},
    {"xn--bcher-kva.example", "xn--bcher-kva.example", false},
    {"08.com", "08.com", false},
    {"1.2.3.x", "1.2.3.x", false},
    {"localhost", "localhost", false},
    {"Metadata.Google.Internal.", "metadata.google.internal", false},
    {"1.2.3.4", "1.2.3.4", true},
    {"1.2.3.4.", "1.2.3.4", true},
    {"123", "0.0.0.123", true},
    {"2852039166", "169.254.169.254", true},
    {"0xA9.254.169.254", "169.254.169.254", true},
    {"0XA9FEA9FE", "169.254.169.254", true},
    {"0251.0376.0251.0376", "169.254.169.254", true},
    {"127.1", "127.0.0.1", true},
    {"[::1]", "::1", true},
    {"::1", "::1", true},
    {"[FE80::1]", "fe80::1", true},
    {"::FFFF:10.0.0.1", "10.0.0.1", true},
    {"[::ffff:a9fe:a9fe]", "169.254.169.254", true},
    {"", NULL, false},
    {".", NULL, false},
    {"..", NULL, false},
    {"api.github.com..", NULL, false},
    {"a..b", NULL, false},
    {".a", NULL, false},
    {"example.123", NULL, false},
    {"4a", NULL, false},
    {"a.4a", NULL, false},
    {"1.2.3.4.5", NULL, false},
    {"256.0.0.1", NULL, false},
    {"08", NULL, false},
    {"a b.com", NULL, false},
    {"a/b", NULL, false},
    {"ex*ample.com", NULL, false},
    {"a:b", NULL, false},
    {"[fe80::1%25eth0]", NULL, false},
    {"[::1]:443", NULL, false},
    {"caf\xc3\xa9.com", NULL, false},
};

START_TEST(test_hosts)
{
    const struct host_case *c = &host_cases[_i];
    char out[300];
    size_t outl = 99;
    bool is_ip = true;
    struct model_ip ip;
    size_t len = strlen(c->in);
    bool ok = model_host_normalize(c->in, len, out, sizeof(out), &outl, &is_ip, &ip);
    ck_assert_msg(ok == (c->out != NULL), "'%s'", c->in);
    if (!ok) {
        ck_assert_uint_eq(outl, 0);
        ck_assert(!is_ip);
        return;
    }
    ck_assert_str_eq(out, c->out);
    ck_assert_uint_eq(outl, strlen(c->out));
    ck_assert_int_eq(is_ip, c->is_ip);
    if (c->is_ip) {
        char txt[46];
        model_ip_format(&ip, txt, sizeof(txt));
        ck_assert_str_eq(txt, c->out);
    } else {
        /* A valid DNS name is in the prover's DNS domain. */
        ck_assert(model_glob_match(model_dfa_domain(MODEL_DOMAIN_DNS_NAME), out, outl));
    }
    /* Normalising again changes nothing. */
    char again[300];
    size_t al = 0;
    ck_assert(model_host_normalize(out, outl, again, sizeof(again), &al, NULL, NULL));
    ck_assert_str_eq(again, out);
}
END_TEST

START_TEST(test_host_lengths)
{
    char name[300];
    char out[300];
    size_t outl = 0;
    /* 253 bytes: labels of 63. */
    memset(name, 'a', sizeof(name));
    name[63] = name[127] = name[191] = '.';
    ck_assert(model_host_normalize(name, 253, out, sizeof(out), &outl, NULL, NULL));
    ck_assert_uint_eq(outl, 253);
    /* With its trailing dot: still fine. */
    name[253] = '.';
    ck_assert(model_host_normalize(name, 254, out, sizeof(out), &outl, NULL, NULL));
    /* 254 bytes of name: too long. */
    name[253] = 'a';
    ck_assert(!model_host_normalize(name, 254, out, sizeof(out), &outl, NULL, NULL));
    ck_assert(!model_host_normalize(name, 280, out, sizeof(out), &outl, NULL, NULL));
    /* Output buffer too small. */
    ck_assert(!model_host_normalize("abc", 3, out, 3, &outl, NULL, NULL));
    ck_assert(model_host_normalize("abc", 3, out, 4, &outl, NULL, NULL));
    ck_assert(!model_host_normalize("2001:db8::1", 11, out, 5, &outl, NULL, NULL));
    ck_assert(!model_host_normalize(NULL, 3, out, 4, &outl, NULL, NULL));
    ck_assert(!model_host_normalize("a\0b", 3, out, 4, &outl, NULL, NULL));
    ck_assert(!model_host_normalize("abc", 3, NULL, 4, &outl, NULL, NULL));
}
END_TEST

static Suite *path_suite(void)
{
    Suite *s = suite_create("model_path");
    TCase *tc = tcase_create("path");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_canon_table, 0, (int)PV_ARRAY_LEN(canon_cases));
    tcase_add_test(tc, test_canon_lengths);
    tcase_add_test(tc, test_canon_domain_exhaustive);
    tcase_add_test(tc, test_canon_random);
    tcase_add_loop_test(tc, test_hosts, 0, (int)PV_ARRAY_LEN(host_cases));
    tcase_add_test(tc, test_host_lengths);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(path_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
