/* SPDX-License-Identifier: Apache-2.0 */
/* check_advisor_hold.c - the long-poll budgets (advisor_util.c, docs/advisor.md#wait)
 *
 * What a wrong budget would break: agents' /wait or the inbox's event waits
 * refusing a proxy's policy long-poll (one shared budget), one sandbox
 * taking every /wait slot (no share), an agent crowding its proxy out of
 * the policy sync (a refused newest policy long-poll instead of a
 * superseded oldest one), a slot never given back.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/proc/proc.h"

#define MAX_HOLDS 80

struct row {
    unsigned workers;
    enum advisor_hold_kind held_kind; /* what the others hold */
    unsigned others;                  /* held by other sandboxes, one each */
    unsigned mine;                    /* held by the caller (of 'kind') */
    enum advisor_hold_kind kind;
    int principal; /* the caller; 0 is the admin token */
    unsigned want;
    bool supersedes;           /* the caller's oldest is superseded */
    unsigned policy_longpolls; /* config policy_longpolls; 0: W/2 */
};

static const struct row rows[] = {
    {64, ADVISOR_HOLD_WAIT, 0, 0, ADVISOR_HOLD_WAIT, 1, 0, false, 0},
    {64, ADVISOR_HOLD_WAIT, 0, 3, ADVISOR_HOLD_WAIT, 1, 0, false, 0},
    /* a sandbox's share of /wait is a quarter of 16 */
    {64, ADVISOR_HOLD_WAIT, 0, 4, ADVISOR_HOLD_WAIT, 1, 429, false, 0},
    {64, ADVISOR_HOLD_WAIT, 12, 3, ADVISOR_HOLD_WAIT, 1, 0, false, 0},
    {64, ADVISOR_HOLD_WAIT, 13, 3, ADVISOR_HOLD_WAIT, 1, 503, false, 0},
    {64, ADVISOR_HOLD_WAIT, 16, 0, ADVISOR_HOLD_WAIT, 1, 503, false, 0},
    /* the admin token has no share */
    {64, ADVISOR_HOLD_WAIT, 0, 8, ADVISOR_HOLD_WAIT, 0, 0, false, 0},
    /* agents' waits and event waits never refuse a policy long-poll */
    {64, ADVISOR_HOLD_WAIT, 16, 0, ADVISOR_HOLD_POLICY, 1, 0, false, 0},
    {64, ADVISOR_HOLD_EVENTS, 8, 0, ADVISOR_HOLD_POLICY, 1, 0, false, 0},
    {64, ADVISOR_HOLD_POLICY, 31, 0, ADVISOR_HOLD_POLICY, 1, 0, false, 0},
    {64, ADVISOR_HOLD_POLICY, 32, 0, ADVISOR_HOLD_POLICY, 1, 503, false, 0},
    /* past two per sandbox the newest wins, even at the budget */
    {64, ADVISOR_HOLD_POLICY, 0, 1, ADVISOR_HOLD_POLICY, 1, 0, false, 0},
    {64, ADVISOR_HOLD_POLICY, 0, 2, ADVISOR_HOLD_POLICY, 1, 0, true, 0},
    {64, ADVISOR_HOLD_POLICY, 30, 2, ADVISOR_HOLD_POLICY, 1, 0, true, 0},
    /* with the budget full, a sandbox's newest takes its own oldest's slot */
    {64, ADVISOR_HOLD_POLICY, 31, 1, ADVISOR_HOLD_POLICY, 1, 0, true, 0},
    /* the admin token neither supersedes nor is superseded */
    {64, ADVISOR_HOLD_POLICY, 0, 4, ADVISOR_HOLD_POLICY, 0, 0, false, 0},
    {64, ADVISOR_HOLD_POLICY, 28, 4, ADVISOR_HOLD_POLICY, 0, 503, false, 0},
    /* ... and policy long-polls never refuse the others */
    {64, ADVISOR_HOLD_POLICY, 32, 0, ADVISOR_HOLD_WAIT, 1, 0, false, 0},
    {64, ADVISOR_HOLD_POLICY, 32, 0, ADVISOR_HOLD_EVENTS, 0, 0, false, 0},
    {64, ADVISOR_HOLD_EVENTS, 7, 0, ADVISOR_HOLD_EVENTS, 0, 0, false, 0},
    {64, ADVISOR_HOLD_EVENTS, 8, 0, ADVISOR_HOLD_EVENTS, 0, 503, false, 0},
    /* tiny pools: every budget and share is at least one */
    {2, ADVISOR_HOLD_WAIT, 0, 0, ADVISOR_HOLD_WAIT, 1, 0, false, 0},
    {2, ADVISOR_HOLD_WAIT, 0, 1, ADVISOR_HOLD_WAIT, 1, 429, false, 0},
    {2, ADVISOR_HOLD_WAIT, 1, 0, ADVISOR_HOLD_WAIT, 1, 503, false, 0},
    {2, ADVISOR_HOLD_EVENTS, 1, 0, ADVISOR_HOLD_EVENTS, 0, 503, false, 0},
    /* issue 36 item 7: the policy budget is the operator's figure: 36 of
     * 64 workers hold 36 sandboxes' syncs, and refuse the 37th */
    {64, ADVISOR_HOLD_POLICY, 35, 0, ADVISOR_HOLD_POLICY, 1, 0, false, 36},
    {64, ADVISOR_HOLD_POLICY, 36, 0, ADVISOR_HOLD_POLICY, 1, 503, false, 36},
    /* ... at most W - W/4 - W/8 - 1 (39 of 64), whatever is configured */
    {64, ADVISOR_HOLD_POLICY, 38, 0, ADVISOR_HOLD_POLICY, 1, 0, false, 500},
    {64, ADVISOR_HOLD_POLICY, 39, 0, ADVISOR_HOLD_POLICY, 1, 503, false, 500},
    /* ... and it still leaves the agents' /wait budget alone */
    {64, ADVISOR_HOLD_POLICY, 39, 0, ADVISOR_HOLD_WAIT, 1, 0, false, 39},
    /* a smaller figure than W/2 */
    {64, ADVISOR_HOLD_POLICY, 8, 0, ADVISOR_HOLD_POLICY, 1, 503, false, 8},
};

static struct advisor a;
static struct advisor_hold holds[MAX_HOLDS];
static struct httpd_req reqs[MAX_HOLDS];

static void setup(unsigned workers)
{
    memset(&a, 0, sizeof(a));
    a.cfg.http.workers = workers;
    pthread_mutex_init(&a.change_mu, NULL);
    pthread_cond_init(&a.change_cv, NULL);
}

static void teardown(void)
{
    pthread_cond_destroy(&a.change_cv);
    pthread_mutex_destroy(&a.change_mu);
}

static unsigned take(size_t i, enum advisor_hold_kind kind, int principal)
{
    memset(&reqs[i], 0, sizeof(reqs[i]));
    reqs[i].principal = principal;
    return advisor_hold_begin(&a, &holds[i], kind, &reqs[i]);
}

START_TEST(test_budgets)
{
    const struct row *r = &rows[_i];
    size_t n = 0;
    size_t first_mine = 0;
    struct advisor_hold *newest;
    unsigned got;

    setup(r->workers);
    a.cfg.policy_longpolls = r->policy_longpolls;
    for (unsigned k = 0; k < r->others; k++, n++) {
        ck_assert_uint_eq(take(n, r->held_kind, 100 + (int)k), 0);
    }
    first_mine = n;
    for (unsigned k = 0; k < r->mine; k++, n++) {
        ck_assert_uint_eq(take(n, r->kind, r->principal), 0);
    }
    got = take(n, r->kind, r->principal);
    ck_assert_msg(got == r->want, "row %d: got %u, want %u", _i, got, r->want);
    /* A refusal registers nothing; a success does, newest first. */
    newest = a.holds;
    ck_assert(r->want == 0 ? newest == &holds[n] : newest != &holds[n]);
    ck_assert_msg(r->mine == 0 || holds[first_mine].superseded == r->supersedes,
                  "row %d: the oldest superseded is %d", _i, holds[first_mine].superseded);
    for (size_t k = first_mine + 1; k < n; k++) {
        ck_assert(!holds[k].superseded);
    }
    teardown();
}
END_TEST

/* A slot given back is free again; one that is not stays taken. */
START_TEST(test_end_frees)
{
    setup(64);
    for (size_t k = 0; k < 4; k++) {
        ck_assert_uint_eq(take(k, ADVISOR_HOLD_WAIT, 7), 0);
    }
    ck_assert_uint_eq(take(4, ADVISOR_HOLD_WAIT, 7), 429);
    advisor_hold_end(&a, &holds[1]);
    ck_assert_uint_eq(a.held[ADVISOR_HOLD_WAIT], 3);
    ck_assert_uint_eq(take(4, ADVISOR_HOLD_WAIT, 7), 0);
    ck_assert_uint_eq(take(5, ADVISOR_HOLD_WAIT, 7), 429);
    for (size_t k = 0; k < 5; k++) {
        if (k != 1) {
            advisor_hold_end(&a, &holds[k]);
        }
    }
    ck_assert_uint_eq(a.held[ADVISOR_HOLD_WAIT], 0);
    ck_assert_ptr_null(a.holds);
    teardown();
}
END_TEST

/* A superseded policy long-poll stops counting against its sandbox at
 * once and gives its slot back when it ends. */
START_TEST(test_superseded_chain)
{
    setup(64);
    ck_assert_uint_eq(take(0, ADVISOR_HOLD_POLICY, 3), 0);
    ck_assert_uint_eq(take(1, ADVISOR_HOLD_POLICY, 3), 0);
    ck_assert_uint_eq(take(2, ADVISOR_HOLD_POLICY, 3), 0);
    ck_assert(holds[0].superseded && !holds[1].superseded && !holds[2].superseded);
    ck_assert_uint_eq(take(3, ADVISOR_HOLD_POLICY, 3), 0);
    ck_assert(holds[1].superseded && !holds[2].superseded && !holds[3].superseded);
    ck_assert_uint_eq(a.held[ADVISOR_HOLD_POLICY], 4);
    advisor_hold_end(&a, &holds[0]);
    advisor_hold_end(&a, &holds[1]);
    ck_assert_uint_eq(a.held[ADVISOR_HOLD_POLICY], 2);
    /* another sandbox is not affected */
    ck_assert_uint_eq(take(4, ADVISOR_HOLD_POLICY, 4), 0);
    ck_assert(!holds[2].superseded && !holds[3].superseded);
    advisor_hold_end(&a, &holds[2]);
    advisor_hold_end(&a, &holds[3]);
    advisor_hold_end(&a, &holds[4]);
    ck_assert_ptr_null(a.holds);
    teardown();
}
END_TEST

/* A full policy budget: a sandbox that holds none takes the oldest
 * policy long-poll of a sandbox that holds two; with none to take, 503. */
START_TEST(test_policy_surplus)
{
    setup(8); /* policy budget 4 */
    ck_assert_uint_eq(take(0, ADVISOR_HOLD_POLICY, 1), 0);
    ck_assert_uint_eq(take(1, ADVISOR_HOLD_POLICY, 2), 0);
    ck_assert_uint_eq(take(2, ADVISOR_HOLD_POLICY, 2), 0);
    ck_assert_uint_eq(take(3, ADVISOR_HOLD_POLICY, 3), 0);
    ck_assert_uint_eq(take(4, ADVISOR_HOLD_POLICY, 4), 0);
    ck_assert(holds[1].superseded);
    ck_assert(!holds[0].superseded && !holds[2].superseded && !holds[3].superseded);
    advisor_hold_end(&a, &holds[1]);
    ck_assert_uint_eq(take(5, ADVISOR_HOLD_POLICY, 5), 503);
    ck_assert_uint_eq(a.held[ADVISOR_HOLD_POLICY], 4);
    for (size_t k = 0; k < 5; k++) {
        if (k != 1) {
            advisor_hold_end(&a, &holds[k]);
        }
    }
    ck_assert_ptr_null(a.holds);
    teardown();
}
END_TEST

START_TEST(test_caps)
{
    setup(64);
    ck_assert_uint_eq(advisor_hold_cap(&a, ADVISOR_HOLD_POLICY), 32);
    ck_assert_uint_eq(advisor_hold_cap(&a, ADVISOR_HOLD_WAIT), 16);
    ck_assert_uint_eq(advisor_hold_cap(&a, ADVISOR_HOLD_EVENTS), 8);
    ck_assert_uint_eq(advisor_hold_share(&a, ADVISOR_HOLD_WAIT), 4);
    ck_assert_uint_eq(advisor_hold_share(&a, ADVISOR_HOLD_POLICY), ADVISOR_POLICY_SHARE);
    teardown();
    setup(3);
    ck_assert_uint_eq(advisor_hold_cap(&a, ADVISOR_HOLD_POLICY), 1);
    ck_assert_uint_eq(advisor_hold_cap(&a, ADVISOR_HOLD_WAIT), 1);
    ck_assert_uint_eq(advisor_hold_cap(&a, ADVISOR_HOLD_EVENTS), 1);
    ck_assert_uint_eq(advisor_hold_share(&a, ADVISOR_HOLD_WAIT), 1);
    teardown();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("advisor_hold");
    TCase *t = tcase_create("hold");
    SRunner *r;
    int failed;

    tcase_add_loop_test(t, test_budgets, 0, (int)(sizeof(rows) / sizeof(rows[0])));
    tcase_add_test(t, test_end_frees);
    tcase_add_test(t, test_superseded_chain);
    tcase_add_test(t, test_policy_surplus);
    tcase_add_test(t, test_caps);
    suite_add_tcase(s, t);
    r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
