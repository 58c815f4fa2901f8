/* SPDX-License-Identifier: Apache-2.0 */
/* check_prover_units.c - pairing the rules of B and C against collecting all
 *
 * prover_units_pair leaves out the units of the rules the candidate kept and
 * adds back only those the slice may keep. It must change nothing else: the
 * same delta, the same slice (the same units, in the same order, which the
 * encoding reads) and the same lang-check budget spent as collecting every
 * unit (prover_units_collect). Table rows name the change and how many C
 * rules must be paired; rows where nothing may be paired (binaries
 * reordered, contents swapped between keys) are there too. Random rows
 * then mutate generated policies (add, delete, rename, duplicate, swap,
 * edit a host, a port or a binary) and compare the two ways (PV_UNITS_N
 * rows, default 150).
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_prover_util.h"
#include "prover/prover_int.h"

/* ---------------------------------------------------------------------------
 * The comparison
 * ------------------------------------------------------------------------- */

struct outcome {
    struct prover_units us;
    size_t budget;
    pv_result r;
};

static void run_full(struct outcome *o, const struct model_policy *b, const struct model_policy *c)
{
    memset(o, 0, sizeof(*o));
    o->budget = PROVER_MAX_LANG_CHECKS;
    o->r = prover_units_collect(&o->us, b, PROVER_SIDE_B);
    if (pv_ok(o->r)) {
        o->r = prover_units_collect(&o->us, c, PROVER_SIDE_C);
    }
    prover_units_seal(&o->us);
    if (pv_ok(o->r)) {
        o->r = prover_units_delta(&o->us);
    }
    if (pv_ok(o->r) && o->us.ndelta > 0) {
        o->r = prover_units_slice(&o->us, &o->budget, prover_now_ms() + 60000.0, NULL, NULL);
    }
}

static void run_paired(struct outcome *o, const struct model_policy *b,
                       const struct model_policy *c)
{
    memset(o, 0, sizeof(*o));
    o->budget = PROVER_MAX_LANG_CHECKS;
    ck_assert(prover_units_pairable(b, c));
    o->r = prover_units_pair(&o->us, b, c, prover_now_ms() + 60000.0);
    if (pv_ok(o->r)) {
        o->r = prover_units_delta(&o->us);
    }
    if (pv_ok(o->r) && o->us.ndelta > 0) {
        o->r = prover_units_slice(&o->us, &o->budget, prover_now_ms() + 60000.0, NULL, NULL);
    }
}

/* The units the slice keeps, in order, with their delta marks. */
static void same_slice(const struct outcome *f, const struct outcome *p, const char *name)
{
    size_t i = 0;
    size_t j = 0;

    ck_assert_msg(pv_ok(f->r) && pv_ok(p->r), "%s: a run failed", name);
    ck_assert_msg(f->us.ndelta == p->us.ndelta, "%s: delta %zu, paired %zu", name, f->us.ndelta,
                  p->us.ndelta);
    if (f->us.ndelta == 0) {
        return;
    }
    ck_assert_msg(f->us.nrel == p->us.nrel, "%s: slice %zu, paired %zu", name, f->us.nrel,
                  p->us.nrel);
    ck_assert_msg(f->budget == p->budget, "%s: budget left %zu, paired %zu", name, f->budget,
                  p->budget);
    for (;;) {
        const struct prover_unit *a;
        const struct prover_unit *b;

        while (i < f->us.n && !f->us.u[i].rel) {
            i++;
        }
        while (j < p->us.n && !p->us.u[j].rel) {
            j++;
        }
        if (i == f->us.n || j == p->us.n) {
            break;
        }
        a = &f->us.u[i++];
        b = &p->us.u[j++];
        ck_assert_msg(a->rule == b->rule && a->ep == b->ep && a->bin == b->bin &&
                          a->side == b->side && a->delta == b->delta,
                      "%s: slice unit %zu differs", name, i - 1);
    }
    ck_assert_msg(i == f->us.n && j == p->us.n, "%s: slices of different lengths", name);
}

static size_t npaired(const struct outcome *p, const struct model_policy *c)
{
    size_t n = 0;

    for (size_t j = 0; j < model_policy_nrules(c); j++) {
        n += p->us.pair[j] != SIZE_MAX;
    }
    return n;
}

static void compare(const char *name, const char *yb, const char *yc, size_t want_pairs)
{
    struct model_policy *b = tp_policy("base", yb);
    struct model_policy *c = tp_policy("cand", yc);
    struct outcome f, p;

    run_full(&f, b, c);
    run_paired(&p, b, c);
    same_slice(&f, &p, name);
    if (want_pairs != SIZE_MAX) {
        ck_assert_msg(npaired(&p, c) == want_pairs, "%s: %zu pairs, want %zu", name, npaired(&p, c),
                      want_pairs);
    }
    prover_units_free(&f.us);
    prover_units_free(&p.us);
    model_policy_free(b);
    model_policy_free(c);
}

/* ---------------------------------------------------------------------------
 * Table rows
 * ------------------------------------------------------------------------- */

#define HDR "version: 1\nnetwork_policies:\n"
#define RULE(key, host, port, bins)                                                    \
    "  " key ":\n    endpoints:\n      - host: \"" host "\"\n        port: " port "\n" \
    "    binaries:\n" bins
#define BIN(p) "      - path: \"" p "\"\n"
#define A RULE("a", "a.example.com", "443", BIN("/usr/bin/curl"))
#define B RULE("b", "*.example.com", "443", BIN("/usr/bin/git") BIN("/usr/bin/curl"))
#define C RULE("c", "10.0.0.5", "8080", BIN("/usr/bin/*"))
#define D RULE("d", "x.other.org", "443", BIN("/usr/bin/curl"))
#define HOSTLESS                                                                       \
    "  h:\n    endpoints:\n      - port: 443\n        allowed_ips: [\"10.0.0.0/8\"]\n" \
    "    binaries:\n" BIN("/usr/bin/curl")

static const struct {
    const char *name;
    const char *base;
    const char *cand;
    size_t pairs; /* C rules paired */
} rows[] = {
    {"no change: every rule paired", HDR A B C D, HDR A B C D, 4},
    {"appended rule", HDR A B C, HDR A B C D, 3},
    {"appended rule overlapping a kept one", HDR A C D, HDR A B C D, 3},
    {"deleted rule in the middle", HDR A B C D, HDR A C D, 3},
    {"renamed rule is paired by its content", HDR A D,
     HDR A RULE("e", "x.other.org", "443", BIN("/usr/bin/curl")), 2},
    {"duplicate under a new key: no delta", HDR A B,
     HDR A B RULE("bb", "*.example.com", "443", BIN("/usr/bin/git") BIN("/usr/bin/curl")), 2},
    {"binaries reordered: not paired, no delta", HDR A B,
     HDR A RULE("b", "*.example.com", "443", BIN("/usr/bin/curl") BIN("/usr/bin/git")), 1},
    {"contents swapped between keys: not paired", HDR A D,
     HDR RULE("a", "x.other.org", "443", BIN("/usr/bin/curl"))
         RULE("d", "a.example.com", "443", BIN("/usr/bin/curl")),
     0},
    {"changed host", HDR A B C D, HDR A B C RULE("d", "y.example.com", "443", BIN("/usr/bin/curl")),
     3},
    {"changed port", HDR A B C D, HDR A B RULE("c", "10.0.0.5", "443", BIN("/usr/bin/*")) D, 3},
    {"added binary", HDR A B C D,
     HDR RULE("a", "a.example.com", "443", BIN("/usr/bin/curl") BIN("/usr/bin/git")) B C D, 3},
    {"hostless delta meets every port", HDR A B C D, HDR A B C D HOSTLESS, 4},
    {"hostless rule kept", HDR A B HOSTLESS, HDR A B D HOSTLESS, 3},
    {"removed everything", HDR A B C D, "version: 1\n", 0},
    {"from nothing", "version: 1\n", HDR A B C D, 0},
};

START_TEST(test_rows)
{
    compare(rows[_i].name, rows[_i].base, rows[_i].cand, rows[_i].pairs);
}
END_TEST

/* ---------------------------------------------------------------------------
 * Random rows
 * ------------------------------------------------------------------------- */

static const char *const R_HOST[] = {"a.example.com",  "b.example.com",   "*.example.com",
                                     "**.example.com", "x.a.example.com", "10.0.0.5",
                                     "c.example.org",  "*.c.example.org", ""};
static const char *const R_BIN[] = {"/usr/bin/curl", "/usr/bin/git", "/usr/bin/*", "/opt/**"};
static const char *const R_PORT[] = {"443", "8080"};

struct r_rule {
    unsigned key, host, port, bins; /* bins: a bit mask over R_BIN */
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static void r_gen(struct r_rule *r)
{
    r->key = rnd(100000);
    r->host = rnd(sizeof(R_HOST) / sizeof(R_HOST[0]));
    r->port = rnd(2);
    r->bins = 1 + rnd(15);
}

static char *r_emit(const struct r_rule *rs, size_t n)
{
    size_t cap = 256 + n * 256;
    char *s = calloc(1, cap);
    size_t len = 0;

    ck_assert_ptr_nonnull(s);
    len += (size_t)snprintf(s, cap, "version: 1\n%s", n > 0 ? "network_policies:\n" : "");
    for (size_t i = 0; i < n; i++) {
        const char *h = R_HOST[rs[i].host];

        len += (size_t)snprintf(s + len, cap - len, "  k%05u_%zu:\n    endpoints:\n      - ",
                                rs[i].key, i);
        if (h[0] != '\0') {
            len += (size_t)snprintf(s + len, cap - len, "host: \"%s\"\n        ", h);
        } else {
            len += (size_t)snprintf(s + len, cap - len, "allowed_ips: [\"10.0.0.0/8\"]\n        ");
        }
        len +=
            (size_t)snprintf(s + len, cap - len, "port: %s\n    binaries:\n", R_PORT[rs[i].port]);
        for (unsigned k = 0; k < 4; k++) {
            if (rs[i].bins & (1u << k)) {
                len += (size_t)snprintf(s + len, cap - len, "      - path: \"%s\"\n", R_BIN[k]);
            }
        }
    }
    ck_assert(len < cap);
    return s;
}

/* One small change to 'rs' (n rules, room for one more). */
static void r_mutate(struct r_rule *rs, size_t *n)
{
    size_t i = *n > 0 ? rnd((unsigned)*n) : 0;

    switch (*n == 0 ? 0 : rnd(7)) {
    case 0:
        r_gen(&rs[(*n)++]);
        break;
    case 1:
        rs[i] = rs[--(*n)];
        break;
    case 2:
        rs[i].key = rnd(100000); /* renamed: moves in key order */
        break;
    case 3:
        rs[*n] = rs[i];
        rs[(*n)++].key = rnd(100000); /* duplicate */
        break;
    case 4:
        rs[i].host = rnd(sizeof(R_HOST) / sizeof(R_HOST[0]));
        break;
    case 5:
        rs[i].port ^= 1;
        break;
    default:
        rs[i].bins = 1 + rnd(15);
        break;
    }
}

static size_t env_size(const char *name, size_t dflt)
{
    const char *v = getenv(name);
    uint64_t n;

    if (v == NULL || !pv_ok(pv_parse_u64(v, strlen(v), UINT64_MAX / 2, &n))) {
        return dflt;
    }
    return (size_t)n;
}

START_TEST(test_random)
{
    size_t n = env_size("PV_UNITS_N", 150);

    for (size_t it = 0; it < n; it++) {
        struct r_rule rb[48], rc[56];
        size_t nb = rnd(40);
        size_t nc;
        unsigned changes = rnd(4);
        char name[64];
        char *yb, *yc;

        for (size_t i = 0; i < nb; i++) {
            r_gen(&rb[i]);
        }
        memcpy(rc, rb, sizeof(rb));
        nc = nb;
        for (unsigned k = 0; k < changes && nc < 48; k++) {
            r_mutate(rc, &nc);
        }
        yb = r_emit(rb, nb);
        yc = r_emit(rc, nc);
        (void)snprintf(name, sizeof(name), "random %zu", it);
        compare(name, yb, yc, SIZE_MAX);
        free(yb);
        free(yc);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("prover_units");
    TCase *tc = tcase_create("pairs");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_rows, 0, (int)(sizeof(rows) / sizeof(rows[0])));
    tcase_add_test(tc, test_random);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    prover_finalize();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
