/* SPDX-License-Identifier: Apache-2.0 */
/* check_advisor_listen.c - applying another replica's change note
 * (advisor_listen.c, docs/scale-out.md#replicas)
 *
 * What a wrong implementation would break: a sandbox created or rotated
 * on another replica not recognised here (its token refused), a deleted
 * one still accepted, long-polls not woken by a note, and a malformed
 * payload changing tokens or crashing the replica. Runs on SQLite (the
 * note parsing and the token updates do not depend on the back end) or,
 * with PV_TEST_STORE, on PostgreSQL.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/sha.h>

#include "advisor/proc/proc.h"
#include "advisor/store/store.h"
#include "tests/check_store_util.h"

static char dir[64];
static struct advisor a;
static struct store *st;

static void digest(const char *token, char out[65])
{
    unsigned char md[SHA256_DIGEST_LENGTH];

    SHA256((const unsigned char *)token, strlen(token), md);
    for (size_t i = 0; i < sizeof(md); i++) {
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    }
}

static void setup(void)
{
    char err[256];

    snprintf(dir, sizeof(dir), "/tmp/pv-listen.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    memset(&a, 0, sizeof(a));
    a.tokens = advisor_tokens_new();
    ck_assert_ptr_nonnull(a.tokens);
    pthread_mutex_init(&a.change_mu, NULL);
    pthread_cond_init(&a.change_cv, NULL);
    ck_assert_msg(pv_ok(store_open(check_store_reset(dir), &st, err, sizeof(err))), "%s", err);
}

static void teardown(void)
{
    char path[128];

    store_close(st);
    advisor_tokens_free(a.tokens);
    pthread_mutex_destroy(&a.change_mu);
    pthread_cond_destroy(&a.change_cv);
    snprintf(path, sizeof(path), "%s/advisor.db", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/advisor.db-wal", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/advisor.db-shm", dir);
    unlink(path);
    rmdir(dir);
}

/* A sandbox written as another replica would: straight into the store. */
static int64_t create(const char *name, const char *token)
{
    struct store_sandbox sb;
    char d[65];

    digest(token, d);
    memset(&sb, 0, sizeof(sb));
    sb.name = PV_UNCONST(name);
    sb.token_sha256 = d;
    ck_assert(pv_ok(store_begin(st)));
    ck_assert(pv_ok(store_sandbox_create(st, &sb)));
    ck_assert(pv_ok(store_commit(st)));
    return sb.id;
}

static int64_t find(const char *token)
{
    return advisor_tokens_find(a.tokens, token, strlen(token));
}

#define TOK1 "token-one-0123456789abcdef"
#define TOK2 "token-two-0123456789abcdef"
#define TOK3 "token-three-0123456789abcdef"

START_TEST(test_named_sandbox)
{
    char note[64];
    uint64_t before = advisor_change_count(&a);
    int64_t id = create("one", TOK1);

    ck_assert_int_eq(find(TOK1), -1); /* not known before the note */
    snprintf(note, sizeof(note), "state sandbox:%lld", (long long)id);
    advisor_listen_apply(&a, st, note);
    ck_assert_int_eq(find(TOK1), id);
    ck_assert_uint_eq(advisor_change_count(&a), before + 1); /* long-polls woken */
    /* Rotated on the other replica: the old token stops, the new one works. */
    {
        struct store_sandbox sb;
        char d[65];
        ck_assert(pv_ok(store_sandbox_get_id(st, id, &sb)));
        digest(TOK2, d);
        free(sb.token_sha256);
        sb.token_sha256 = pv_strdup(d);
        ck_assert(pv_ok(store_begin(st)));
        ck_assert(pv_ok(store_sandbox_update(st, &sb)));
        ck_assert(pv_ok(store_commit(st)));
        store_sandbox_clear(&sb);
    }
    advisor_listen_apply(&a, st, note);
    ck_assert_int_eq(find(TOK1), -1);
    ck_assert_int_eq(find(TOK2), id);
    /* Deleted there: refused here. */
    ck_assert(pv_ok(store_begin(st)));
    ck_assert(pv_ok(store_sandbox_delete(st, id)));
    ck_assert(pv_ok(store_commit(st)));
    advisor_listen_apply(&a, st, note);
    ck_assert_int_eq(find(TOK2), -1);
}
END_TEST

START_TEST(test_reload_all)
{
    int64_t one = create("one", TOK1);
    int64_t two = create("two", TOK2);

    /* A stale entry for a sandbox that no longer exists. */
    {
        char d[65];
        digest(TOK3, d);
        ck_assert(pv_ok(advisor_tokens_put(a.tokens, d, 999)));
    }
    ck_assert_int_eq(find(TOK3), 999);
    advisor_listen_apply(&a, st, "*"); /* after a reconnect: everything */
    ck_assert_int_eq(find(TOK1), one);
    ck_assert_int_eq(find(TOK2), two);
    ck_assert_int_eq(find(TOK3), -1);
    ck_assert(pv_ok(store_begin(st)));
    ck_assert(pv_ok(store_sandbox_delete(st, one)));
    ck_assert(pv_ok(store_commit(st)));
    advisor_listen_apply(&a, st, "state sandboxes");
    ck_assert_int_eq(find(TOK1), -1);
    ck_assert_int_eq(find(TOK2), two);
}
END_TEST

START_TEST(test_malformed)
{
    static const char *const bad[] = {
        "",
        "state",
        "settings",
        "sandbox:",
        "sandbox:abc",
        "sandbox:-5",
        "sandbox:0",
        "sandbox:12x",
        "sandbox:99999999999999999999999999999999",
        "sandbox: 1",
        "sandboxes:1",
        "SANDBOX:1",
        "   ",
        "sandbox:1sandbox:1",
    };
    int64_t id = create("one", TOK1);
    uint64_t before = advisor_change_count(&a);
    char big[9000];

    /* None of these names sandbox 'one': its token stays unknown. */
    for (size_t i = 0; i < PV_ARRAY_LEN(bad); i++) {
        advisor_listen_apply(&a, st, bad[i]);
        ck_assert_msg(find(TOK1) == -1, "payload [%s] loaded a token", bad[i]);
    }
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    advisor_listen_apply(&a, st, big);
    ck_assert_int_eq(find(TOK1), -1);
    /* Every note wakes the long-polls, whatever it names. */
    ck_assert_uint_eq(advisor_change_count(&a), before + PV_ARRAY_LEN(bad) + 1);
    /* Extra spaces between words are fine. */
    {
        char note[64];
        snprintf(note, sizeof(note), "state  settings   sandbox:%lld ", (long long)id);
        advisor_listen_apply(&a, st, note);
        ck_assert_int_eq(find(TOK1), id);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("advisor_listen");
    TCase *t = tcase_create("notes");
    SRunner *r;
    int failed;

    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, test_named_sandbox);
    tcase_add_test(t, test_reload_all);
    tcase_add_test(t, test_malformed);
    suite_add_tcase(s, t);
    r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
