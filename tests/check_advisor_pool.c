/* SPDX-License-Identifier: Apache-2.0 */
/* check_advisor_pool.c - choosing a prover of the pool (advisor_pool.c)
 *
 * What a wrong pool would break: every proof on one member (no spreading,
 * or a proof and its check alternating so that proofs all land on one), a
 * busy member chosen over an idle one, a failed member still chosen, a call
 * sent twice to the member that just failed it, a stale failure (from a
 * child's previous address) taking the new address out, an error that does
 * not say which prover is out and why, metrics that lie or break the
 * Prometheus text format, a prober started without its client (it never
 * probed a member back in). No network: the one prober started has no
 * member to probe.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/proc/proc.h"
#include "common/pv_dynbuf.h"

static struct advisor_pool *three(void)
{
    struct advisor_pool *p = advisor_pool_new();

    ck_assert_ptr_nonnull(p);
    ck_assert(pv_ok(advisor_pool_add(p, NULL, "http://127.0.0.1:1", "t1")));
    ck_assert(pv_ok(advisor_pool_add(p, NULL, "http://127.0.0.1:2/", "t2")));
    ck_assert(pv_ok(advisor_pool_add(p, "third", "http://127.0.0.1:3", "t3")));
    return p;
}

static size_t take(struct advisor_pool *p, const char *kind, uint32_t tried)
{
    struct advisor_pool_lease l;
    char why[512];

    ck_assert_msg(advisor_pool_acquire(p, kind, tried, &l, why, sizeof(why)), "%s", why);
    return l.i;
}

/* Calls one after the other: each member in turn, per kind of call (with
 * one cursor for all, two members and a proof then its check, every proof
 * would go to the first). */
START_TEST(test_round_robin)
{
    struct advisor_pool *p = advisor_pool_new();
    struct advisor_pool_lease l;
    char why[512];
    unsigned seen[2] = {0, 0};

    ck_assert(pv_ok(advisor_pool_add(p, NULL, "http://127.0.0.1:1", "t1")));
    ck_assert(pv_ok(advisor_pool_add(p, NULL, "http://127.0.0.1:2", "t2")));
    for (int k = 0; k < 6; k++) {
        ck_assert(advisor_pool_acquire(p, "/v1/prove", 0, &l, why, sizeof(why)));
        seen[l.i]++;
        advisor_pool_release(p, &l, true, "");
        ck_assert(advisor_pool_acquire(p, "/v1/check", 0, &l, why, sizeof(why)));
        advisor_pool_release(p, &l, true, "");
    }
    ck_assert_uint_eq(seen[0], 3);
    ck_assert_uint_eq(seen[1], 3);
    advisor_pool_free(p);
}
END_TEST

/* The lease carries the member's address (trailing slash dropped) and token. */
START_TEST(test_lease_copies)
{
    struct advisor_pool *p = three();
    struct advisor_pool_lease l;
    char why[512];

    ck_assert(advisor_pool_acquire(p, "x", 1u, &l, why, sizeof(why)));
    ck_assert_uint_eq(l.i, 1);
    ck_assert_str_eq(l.url, "http://127.0.0.1:2");
    ck_assert_str_eq(l.token, "t2");
    ck_assert_str_eq(l.label, "http://127.0.0.1:2/");
    advisor_pool_release(p, &l, true, "");
    advisor_pool_free(p);
}
END_TEST

/* Calls in flight: the idle member wins over a busy one. */
START_TEST(test_least_outstanding)
{
    struct advisor_pool *p = three();
    struct advisor_pool_lease a;
    struct advisor_pool_lease b;
    struct advisor_pool_lease c;
    char why[512];

    ck_assert(advisor_pool_acquire(p, "k", 0, &a, why, sizeof(why)));
    ck_assert(advisor_pool_acquire(p, "k", 0, &b, why, sizeof(why)));
    ck_assert_uint_ne(a.i, b.i);
    ck_assert(advisor_pool_acquire(p, "k", 0, &c, why, sizeof(why)));
    ck_assert_uint_ne(c.i, a.i);
    ck_assert_uint_ne(c.i, b.i);
    /* all busy once; 'a' ends: its member is the idle one */
    advisor_pool_release(p, &a, true, "");
    ck_assert_uint_eq(take(p, "other", 0), a.i);
    /* left busy: every member has one call again; 'b' ends */
    advisor_pool_release(p, &b, true, "");
    ck_assert_uint_eq(take(p, "k", 0), b.i);
    advisor_pool_free(p);
}
END_TEST

/* A failure takes the member out; the reason is kept for the error. */
START_TEST(test_failure_out)
{
    struct advisor_pool *p = three();
    struct advisor_pool_lease l;
    char why[512];
    size_t failed;

    ck_assert(advisor_pool_acquire(p, "k", 0, &l, why, sizeof(why)));
    failed = l.i;
    advisor_pool_release(p, &l, false, "answered 503");
    for (int k = 0; k < 10; k++) {
        ck_assert_uint_ne(take(p, "k", 0), failed);
    }
    advisor_pool_free(p);
}
END_TEST

/* The tried mask: a call is not sent twice to one member; when every
 * member is tried or out, the error names each with its reason. */
START_TEST(test_tried_and_why)
{
    struct advisor_pool *p = three();
    struct advisor_pool_lease l;
    char why[512];

    ck_assert_uint_eq(take(p, "k", 1u | 4u), 1);
    ck_assert(advisor_pool_acquire(p, "k", 2u | 4u, &l, why, sizeof(why)));
    ck_assert_uint_eq(l.i, 0);
    advisor_pool_release(p, &l, false, "unreachable: Connection refused");
    ck_assert(!advisor_pool_acquire(p, "k", 2u | 4u, &l, why, sizeof(why)));
    ck_assert_ptr_nonnull(strstr(why, "no other prover is up"));
    ck_assert_ptr_nonnull(strstr(why, "http://127.0.0.1:1: unreachable: Connection refused"));
    ck_assert_ptr_nonnull(strstr(why, "http://127.0.0.1:2/: failed this call"));
    ck_assert_ptr_nonnull(strstr(why, "third: failed this call"));
    advisor_pool_free(p);
}
END_TEST

/* The child's member: out while none runs, in at its new address, and a
 * failure from its previous address does not take the new one out. */
START_TEST(test_child_generation)
{
    struct advisor_pool *p = advisor_pool_new();
    struct advisor_pool_lease old;
    struct advisor_pool_lease l;
    char why[512];

    ck_assert(pv_ok(advisor_pool_add(p, "child", "", "")));
    ck_assert(!advisor_pool_acquire(p, "k", 0, &l, why, sizeof(why)));
    ck_assert_str_eq(why, "no prover is up (child: no prover child is running)");
    advisor_pool_set(p, 0, "http://127.0.0.1:10", "a");
    ck_assert(advisor_pool_acquire(p, "k", 0, &old, why, sizeof(why)));
    advisor_pool_set(p, 0, "http://127.0.0.1:11", "b");
    advisor_pool_release(p, &old, false, "unreachable");
    ck_assert(advisor_pool_acquire(p, "k", 0, &l, why, sizeof(why)));
    ck_assert_str_eq(l.url, "http://127.0.0.1:11");
    ck_assert_str_eq(l.token, "b");
    advisor_pool_release(p, &l, false, "answered 500");
    ck_assert(!advisor_pool_acquire(p, "k", 0, &l, why, sizeof(why)));
    ck_assert_str_eq(why, "no prover is up (child: answered 500)");
    advisor_pool_free(p);
}
END_TEST

/* Negative rows: no pool, an empty one, too many members, a long URL. */
START_TEST(test_refusals)
{
    struct advisor_pool *p = advisor_pool_new();
    struct advisor_pool_lease l;
    char why[512];
    char url[ADVISOR_POOL_URL_MAX + 8];

    ck_assert(!advisor_pool_acquire(NULL, "k", 0, &l, why, sizeof(why)));
    ck_assert_str_eq(why, "no prover is configured");
    ck_assert(!advisor_pool_acquire(p, "k", 0, &l, why, sizeof(why)));
    memset(url, 'a', sizeof(url) - 1);
    url[sizeof(url) - 1] = '\0';
    ck_assert(!pv_ok(advisor_pool_add(p, NULL, url, "t")));
    for (int i = 0; i < ADVISOR_POOL_MAX; i++) {
        char u[64];
        snprintf(u, sizeof(u), "http://127.0.0.1:%d", 100 + i);
        ck_assert(pv_ok(advisor_pool_add(p, NULL, u, "t")));
    }
    ck_assert(!pv_ok(advisor_pool_add(p, NULL, "http://127.0.0.1:99", "t")));
    ck_assert_uint_eq(advisor_pool_size(p), ADVISOR_POOL_MAX);
    advisor_pool_free(p);
    advisor_pool_free(NULL);
}
END_TEST

/* Metrics: the counts, and a label with a quote cannot break the format. */
START_TEST(test_render)
{
    struct advisor_pool *p = advisor_pool_new();
    struct advisor_pool_lease l;
    struct pv_dynbuf b;
    char why[512];
    char *text;
    size_t len = 0;

    ck_assert(pv_ok(advisor_pool_add(p, "a\"b\\c", "http://127.0.0.1:1", "t")));
    ck_assert(pv_ok(advisor_pool_add(p, NULL, "http://127.0.0.1:2", "t")));
    ck_assert(advisor_pool_acquire(p, "k", 2u, &l, why, sizeof(why)));
    advisor_pool_release(p, &l, false, "answered 502");
    ck_assert(advisor_pool_acquire(p, "k", 0, &l, why, sizeof(why)));
    pv_dynbuf_init(&b, 1u << 20);
    ck_assert(pv_ok(advisor_pool_render(p, &b)));
    text = pv_dynbuf_take(&b, &len);
    ck_assert_ptr_nonnull(strstr(text, "proviso_advisor_prover_up{prover=\"a\\\"b\\\\c\"} 0\n"));
    ck_assert_ptr_nonnull(
        strstr(text, "proviso_advisor_prover_up{prover=\"http://127.0.0.1:2\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(text, "proviso_advisor_prover_failures_total{prover=\"a\\\"b\\\\c\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(text, "proviso_advisor_prover_requests_total{prover=\"http://127.0.0.1:2\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(text, "proviso_advisor_prover_outstanding{prover=\"http://127.0.0.1:2\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(text, "# TYPE proviso_advisor_prover_up gauge\n"));
    free(text);
    advisor_pool_release(p, &l, true, "");
    advisor_pool_free(p);
}
END_TEST

/* advisor_pool_start makes the prober's client before its thread, and
 * refuses (out of memory) when it cannot: a client that failed in the
 * thread left a prober that never probed a member back in, for the
 * process's life. PV_FAIL_ALLOC (common/pv_error.c) is read at a process's
 * first checked allocation: Check runs each test in a process of its own,
 * where the first is the pool and the second the client. */
START_TEST(test_start_makes_probe_client)
{
    const char *fork_env = getenv("CK_FORK");
    struct advisor_pool *p;
    pv_result r;

    if (fork_env != NULL && strcmp(fork_env, "no") == 0) {
        return; /* one process for every test: the count is not this test's */
    }
    ck_assert_int_eq(setenv("PV_FAIL_ALLOC", "2", 1), 0);
    p = advisor_pool_new();
    ck_assert_ptr_nonnull(p);
    r = advisor_pool_start(p);
    ck_assert_msg(!pv_ok(r), "a prober started without its client");
    ck_assert_int_eq(r.err, PV_ERR_NOMEM);
    advisor_pool_free(p);
    p = advisor_pool_new();
    ck_assert_ptr_nonnull(p);
    ck_assert(pv_ok(advisor_pool_start(p)));
    advisor_pool_free(p);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("advisor_pool");
    TCase *tc = tcase_create("pool");

    tcase_add_test(tc, test_round_robin);
    tcase_add_test(tc, test_lease_copies);
    tcase_add_test(tc, test_least_outstanding);
    tcase_add_test(tc, test_failure_out);
    tcase_add_test(tc, test_tried_and_why);
    tcase_add_test(tc, test_child_generation);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_render);
    tcase_add_test(tc, test_start_makes_probe_client);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
