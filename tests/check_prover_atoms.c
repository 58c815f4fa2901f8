/* SPDX-License-Identifier: Apache-2.0 */
/* check_prover_atoms.c - string dimensions cut into atoms (prover_atoms.c)
 *
 * For each row the atoms must be a partition of the domain on which every
 * pattern is constant: witnesses lie in the domain, bitsets equal the
 * patterns' matches on the witness, no two atoms share a bitset, and every
 * probe string of the row falls in some atom with its own match bitset.
 * Rows also pin the exact atom count, deduplication by pattern text,
 * literals outside the domain, the %2F language, and the work budget.
 */
#include "config.h"

#include "prover/prover_int.h"
#include "tests/check_prover_util.h"

#define MAXP 6

static const struct {
    const char *name;
    enum model_domain domain;
    enum model_glob_kind kind;
    const char *pats[MAXP];
    bool special; /* add the "contains %2F" language */
    size_t want_pats;
    size_t want_atoms; /* exact count */
    const char *probes[MAXP];
} rows[] = {
    {"host wildcards",
     MODEL_DOMAIN_DNS_NAME,
     MODEL_GLOB_HOST,
     {"api.github.com", "*.github.com", "**.github.com"},
     false,
     3,
     4,
     {"api.github.com", "x.github.com", "a.b.github.com", "github.com", "example.org"}},
    {"host duplicates dedupe",
     MODEL_DOMAIN_DNS_NAME,
     MODEL_GLOB_HOST,
     {"*.x.com", "*.x.com", "a.x.com"},
     false,
     2,
     3,
     {"a.x.com", "b.x.com", "x.com"}},
    {"disjoint literals",
     MODEL_DOMAIN_DNS_NAME,
     MODEL_GLOB_HOST,
     {"a.example.com", "b.example.com"},
     false,
     2,
     3,
     {"a.example.com", "b.example.com", "c.example.com"}},
    {"binary glob and literal",
     MODEL_DOMAIN_ABS_PATH,
     MODEL_GLOB_BINARY,
     {"/usr/bin/*", "/usr/bin/git"},
     false,
     2,
     3,
     {"/usr/bin/git", "/usr/bin/x", "/opt/y"}},
    {"binary recursive",
     MODEL_DOMAIN_ABS_PATH,
     MODEL_GLOB_BINARY,
     {"/opt/**", "/opt/*/bin"},
     false,
     2,
     3,
     {"/opt/a/bin", "/opt/a", "/usr/x"}},
    {"paths with encoded slash",
     MODEL_DOMAIN_CANONICAL_PATH,
     MODEL_GLOB_PATH,
     {"/x/**", "/*", "/x"},
     true,
     4,
     0,
     {"/", "/x", "/x/", "/x/y", "/z%2Fq", "/x/%2F"}},
    /* '{a,b}' is a metacharacter of path globs: the literal prefix of
     * "/v1/{b,aa}*" is "/v1/", so the cheap test must not call it disjoint
     * from "/v1/a*" - both match "/v1/aa" */
    {"path alternation",
     MODEL_DOMAIN_CANONICAL_PATH,
     MODEL_GLOB_PATH,
     {"/v1/a*", "/v1/{b,aa}*"},
     false,
     2,
     4,
     {"/v1/aa", "/v1/ab", "/v1/b", "/"}},
    {"value alternation",
     MODEL_DOMAIN_QUERY_VALUE,
     MODEL_GLOB_VALUE,
     {"a*", "{b,aa}*"},
     false,
     2,
     4,
     {"aa", "ab", "b", ""}},
    /* negative: a literal outside the domain yields no atom of its own */
    {"non-canonical literal",
     MODEL_DOMAIN_CANONICAL_PATH,
     MODEL_GLOB_PATH,
     {"/a/../b"},
     false,
     1,
     1,
     {"/", "/b"}},
    {"query values",
     MODEL_DOMAIN_QUERY_VALUE,
     MODEL_GLOB_VALUE,
     {"a*", "b", "*"},
     false,
     3,
     3,
     {"", "ab", "b", "zz"}},
};

static bool pats_match(const struct prover_dim *d, const char *s, size_t len, uint64_t *bits)
{
    memset(bits, 0, sizeof(uint64_t));
    for (size_t i = 0; i < d->npats; i++) {
        if (prover_pat_match(&d->pats[i], s, len)) {
            bits[0] |= (uint64_t)1 << i;
        }
    }
    return true;
}

START_TEST(test_atoms)
{
    struct prover_dim d;
    struct model_glob *g[MAXP] = {NULL};
    size_t budget = 1000;
    size_t idx;
    const char *why;
    size_t np = 0;

    prover_dim_init(&d, rows[_i].domain);
    for (size_t i = 0; i < MAXP && rows[_i].pats[i] != NULL; i++) {
        g[i] = model_glob_compile(rows[_i].kind, rows[_i].pats[i], strlen(rows[_i].pats[i]), &why);
        ck_assert_ptr_nonnull(g[i]);
        ck_assert(pv_ok(prover_dim_add(&d, g[i], &idx)));
        np++;
    }
    if (rows[_i].special) {
        ck_assert(pv_ok(prover_dim_add_special(&d, &idx)));
    }
    ck_assert_uint_eq(d.npats, rows[_i].want_pats);
    ck_assert(pv_ok(prover_dim_atoms(&d, &budget)));
    if (rows[_i].want_atoms != 0) {
        ck_assert_uint_eq(d.natoms, rows[_i].want_atoms);
    }
    for (size_t a = 0; a < d.natoms; a++) {
        uint64_t bits;

        pats_match(&d, d.atoms[a].w, d.atoms[a].wlen, &bits);
        ck_assert_msg(bits == d.atoms[a].bits[0], "%s: atom %zu '%s' bits", rows[_i].name, a,
                      d.atoms[a].w);
        for (size_t b = a + 1; b < d.natoms; b++) {
            ck_assert_msg(d.atoms[a].bits[0] != d.atoms[b].bits[0], "%s: atoms %zu %zu share",
                          rows[_i].name, a, b);
        }
    }
    for (size_t k = 0; k < MAXP && rows[_i].probes[k] != NULL; k++) {
        uint64_t bits;
        bool found = false;
        const char *pr = rows[_i].probes[k];

        pats_match(&d, pr, strlen(pr), &bits);
        for (size_t a = 0; a < d.natoms && !found; a++) {
            found = d.atoms[a].bits[0] == bits;
        }
        ck_assert_msg(found, "%s: probe '%s' falls in no atom", rows[_i].name, pr);
    }
    if (strcmp(rows[_i].name, "non-canonical literal") == 0) {
        ck_assert_uint_eq(d.atoms[0].bits[0], 0);
    }
    prover_dim_free(&d);
    for (size_t i = 0; i < np; i++) {
        model_glob_free(g[i]);
    }
}
END_TEST

/* Many globs, mostly disjoint, and literals inside and outside them (a
 * whole-policy slice): the atoms are still exactly the Venn cells, each
 * literal an atom of its own, and the cheap disjointness and sample
 * witnesses keep the automaton products to about one per pattern (the
 * recursive split alone used to spend one per region and glob). */
START_TEST(test_many_globs)
{
    enum { NSVC = 200, NCDN = 100, NINSIDE = 50 };
    struct prover_dim d;
    struct prover_lang_memo memo;
    struct model_glob *g[NSVC + NCDN + 1 + NINSIDE + NSVC + 1];
    size_t ng = 0;
    size_t budget = 100000;
    size_t spent;
    size_t idx;
    const char *why;
    char buf[64];
    uint64_t *bits;

    memset(&memo, 0, sizeof(memo));
    prover_dim_init(&d, MODEL_DOMAIN_DNS_NAME);
    d.memo = &memo;
#define ADD(...)                                                             \
    do {                                                                     \
        (void)snprintf(buf, sizeof(buf), __VA_ARGS__);                       \
        g[ng] = model_glob_compile(MODEL_GLOB_HOST, buf, strlen(buf), &why); \
        ck_assert_ptr_nonnull(g[ng]);                                        \
        ck_assert(pv_ok(prover_dim_add(&d, g[ng], &idx)));                   \
        ng++;                                                                \
    } while (0)
    for (int i = 0; i < NSVC; i++) {
        ADD("*.svc%d.example.com", i);
    }
    for (int i = 0; i < NCDN; i++) {
        ADD("**.cdn%d.example.org", i);
    }
    ADD("**.example.com");
    for (int i = 0; i < NINSIDE; i++) {
        ADD("a.svc%d.example.com", i); /* inside *.svc<i>.example.com */
    }
    for (int i = 0; i < NSVC; i++) {
        ADD("svc%d.example.com", i); /* inside **.example.com only */
    }
    ADD("lone.example.net"); /* outside every glob */
#undef ADD
    ck_assert(pv_ok(prover_dim_atoms(&d, &budget)));
    spent = 100000 - budget;
    ck_assert_msg(spent <= d.npats + 16, "%zu products for %zu patterns", spent, d.npats);
    /* svc cells, cdn cells, the rest of **.example.com, the outside, and
     * one atom per literal */
    ck_assert_uint_eq(d.natoms, NSVC + NCDN + 1 + 1 + NINSIDE + NSVC + 1);
    bits = calloc(d.words, sizeof(uint64_t));
    ck_assert_ptr_nonnull(bits);
    for (size_t a = 0; a < d.natoms; a++) {
        memset(bits, 0, d.words * sizeof(uint64_t));
        for (size_t i = 0; i < d.npats; i++) {
            if (prover_pat_match(&d.pats[i], d.atoms[a].w, d.atoms[a].wlen)) {
                bits[i / 64] |= (uint64_t)1 << (i % 64);
            }
        }
        ck_assert_msg(memcmp(bits, d.atoms[a].bits, d.words * sizeof(uint64_t)) == 0,
                      "atom %zu '%s': bits", a, d.atoms[a].w);
        for (size_t b = a + 1; b < d.natoms; b++) {
            ck_assert_msg(memcmp(d.atoms[a].bits, d.atoms[b].bits, d.words * sizeof(uint64_t)),
                          "atoms %zu '%s' and %zu '%s' share a cell", a, d.atoms[a].w, b,
                          d.atoms[b].w);
        }
    }
    free(bits);
    prover_dim_free(&d);
    prover_lang_memo_free(&memo);
    for (size_t i = 0; i < ng; i++) {
        model_glob_free(g[i]);
    }
}
END_TEST

/* Exhausting the work budget is a LIMIT, never a partial answer. */
START_TEST(test_budget)
{
    struct prover_dim d;
    struct model_glob *g[3];
    const char *pats[3] = {"*.a.com", "x*.a.com", "*y.a.com"};
    const char *why;
    size_t budget = 2;
    size_t idx;

    prover_dim_init(&d, MODEL_DOMAIN_DNS_NAME);
    for (int i = 0; i < 3; i++) {
        g[i] = model_glob_compile(MODEL_GLOB_HOST, pats[i], strlen(pats[i]), &why);
        ck_assert_ptr_nonnull(g[i]);
        ck_assert(pv_ok(prover_dim_add(&d, g[i], &idx)));
    }
    ck_assert_int_eq(prover_dim_atoms(&d, &budget).err, PV_ERR_LIMIT);
    prover_dim_free(&d);
    for (int i = 0; i < 3; i++) {
        model_glob_free(g[i]);
    }
}
END_TEST

START_TEST(test_special_match)
{
    struct prover_pat p;

    memset(&p, 0, sizeof(p));
    ck_assert(prover_pat_match(&p, "/a%2Fb", 6));
    ck_assert(!prover_pat_match(&p, "/a%2fb", 6)); /* canonical hex is upper-case */
    ck_assert(!prover_pat_match(&p, "/a/b", 4));
    ck_assert(!prover_pat_match(&p, "%2", 2));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("prover_atoms");
    TCase *tc = tcase_create("atoms");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, test_atoms, 0, (int)PV_ARRAY_LEN(rows));
    tcase_add_test(tc, test_budget);
    tcase_add_test(tc, test_many_globs);
    tcase_add_test(tc, test_special_match);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
