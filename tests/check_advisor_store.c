/* SPDX-License-Identifier: Apache-2.0 */
/* check_advisor_store.c - the store: schema, records, compare-and-set
 *
 * Each test opens a fresh store in a temporary directory. What a wrong store
 * would break: migrations refusing a newer schema, a duplicate sandbox name,
 * a status write that does not check the status it read, revision and event
 * numbering, content addressing, a rolled-back transaction leaving traces,
 * and a committed one not surviving a reopen. The same tests run on SQLite
 * and, with PV_TEST_STORE set (tests/advisor_store_pg.sh), on PostgreSQL.
 */
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "advisor/proc/proc.h"
#include "advisor/store/store.h"
#include "advisor/store/store_int.h" /* store_pg_connect: the connection's options */
#include "model/model.h"
#include "tests/check_store_util.h"

static char dir[64];

static struct store *fresh(void)
{
    struct store *s = NULL;
    char err[256];

    snprintf(dir, sizeof(dir), "/tmp/pv-store.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_msg(pv_ok(store_open(check_store_reset(dir), &s, err, sizeof(err))), "%s", err);
    return s;
}

static void wipe(struct store *s)
{
    char path[128];

    store_close(s);
    snprintf(path, sizeof(path), "%s/advisor.db", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/advisor.db-wal", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/advisor.db-shm", dir);
    unlink(path);
    rmdir(dir);
}

static int64_t make_sandbox(struct store *s, const char *name)
{
    struct store_sandbox sb;

    memset(&sb, 0, sizeof(sb));
    sb.name = PV_UNCONST(name);
    sb.token_sha256 = PV_UNCONST("00");
    sb.credentials = PV_UNCONST("");
    sb.boundary = PV_UNCONST("");
    ck_assert(pv_ok(store_sandbox_create(s, &sb)));
    ck_assert_int_gt(sb.id, 0);
    return sb.id;
}

static struct store_chunk chunk(const char *id, int64_t sandbox)
{
    struct store_chunk c;

    memset(&c, 0, sizeof(c));
    c.id = PV_UNCONST(id);
    c.sandbox = sandbox;
    c.status = PV_UNCONST("pending");
    c.rule_name = PV_UNCONST("r");
    c.proposed_rule = PV_UNCONST("{}");
    c.host = PV_UNCONST("example.com");
    c.port = 443;
    c.binary = PV_UNCONST("/usr/bin/curl");
    c.analysis_mode = PV_UNCONST("agent_authored");
    c.confidence = 0.75;
    c.hit_count = 1;
    return c;
}

START_TEST(test_sandbox_unique)
{
    struct store *s = fresh();
    struct store_sandbox sb;
    struct store_sandbox got;

    make_sandbox(s, "a");
    memset(&sb, 0, sizeof(sb));
    sb.name = PV_UNCONST("a");
    sb.token_sha256 = PV_UNCONST("11");
    ck_assert_int_eq(store_sandbox_create(s, &sb).err, PV_ERR_EXISTS);
    ck_assert_int_eq(store_sandbox_get(s, "b", &got).err, PV_ERR_NOTFOUND);
    ck_assert(pv_ok(store_sandbox_get(s, "a", &got)));
    ck_assert_str_eq(got.token_sha256, "00");
    ck_assert_str_eq(got.addresses, "[]");
    store_sandbox_clear(&got);
    wipe(s);
}
END_TEST

START_TEST(test_chunk_cas)
{
    struct store *s = fresh();
    int64_t sb = make_sandbox(s, "a");
    struct store_chunk c = chunk("c1", sb);
    struct store_chunk got;

    ck_assert(pv_ok(store_chunk_insert(s, &c)));
    ck_assert_int_eq(store_chunk_insert(s, &c).err, PV_ERR_EXISTS);
    c.status = PV_UNCONST("approved");
    c.approved_seq = 1;
    /* The write names the status it read: "rejected" is not what is stored. */
    ck_assert_int_eq(store_chunk_update(s, &c, "rejected").err, PV_ERR_CONFLICT);
    ck_assert(pv_ok(store_chunk_update(s, &c, "pending")));
    /* A second writer that read "pending" loses. */
    c.status = PV_UNCONST("rejected");
    ck_assert_int_eq(store_chunk_update(s, &c, "pending").err, PV_ERR_CONFLICT);
    ck_assert(pv_ok(store_chunk_get(s, sb, "c1", &got)));
    ck_assert_str_eq(got.status, "approved");
    ck_assert_int_eq(got.approved_seq, 1);
    ck_assert(got.confidence > 0.74 && got.confidence < 0.76);
    store_chunk_clear(&got);
    /* Another sandbox's chunk does not exist for this one. */
    ck_assert_int_eq(store_chunk_get(s, sb + 1, "c1", &got).err, PV_ERR_NOTFOUND);
    ck_assert_int_eq(store_chunk_max_seq(s, sb), 1);
    wipe(s);
}
END_TEST

START_TEST(test_revisions_and_blobs)
{
    struct store *s = fresh();
    int64_t sb = make_sandbox(s, "a");
    struct store_revision r;
    struct store_revision got;
    char sha[65];
    char sha2[65];
    size_t len = 0;
    char *b;

    ck_assert(pv_ok(store_blob_put(s, "hello", 5, sha)));
    ck_assert_str_eq(sha, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
    ck_assert(pv_ok(store_blob_put(s, "hello", 5, sha2)));
    ck_assert_str_eq(sha, sha2);
    b = store_blob_get(s, sha, &len);
    ck_assert_uint_eq(len, 5);
    ck_assert_str_eq(b, "hello");
    free(b);
    ck_assert_ptr_null(store_blob_get(s, "00", NULL));
    ck_assert_int_eq(store_rev_latest(s, sb, &got).err, PV_ERR_NOTFOUND);
    memset(&r, 0, sizeof(r));
    r.blob = sha;
    r.hash = PV_UNCONST("h1");
    r.cause = PV_UNCONST("create");
    ck_assert(pv_ok(store_rev_put(s, sb, &r)));
    ck_assert_int_eq(r.rev, 1);
    r.hash = PV_UNCONST("h2");
    ck_assert(pv_ok(store_rev_put(s, sb, &r)));
    ck_assert_int_eq(r.rev, 2);
    ck_assert(pv_ok(store_rev_latest(s, sb, &got)));
    ck_assert_int_eq(got.rev, 2);
    ck_assert_str_eq(got.hash, "h2");
    store_revision_clear(&got);
    ck_assert(pv_ok(store_rev_get(s, sb, 1, &got)));
    ck_assert_str_eq(got.hash, "h1");
    store_revision_clear(&got);
    ck_assert_int_eq(store_loaded_latest(s, sb), 0);
    ck_assert(pv_ok(store_loaded_put(s, sb, 2, "h2", 1)));
    ck_assert_int_eq(store_loaded_latest(s, sb), 2);
    wipe(s);
}
END_TEST

static void count_events(void *arg, const struct store_event *e)
{
    int64_t *last = arg;
    ck_assert_int_eq(e->seq, *last + 1);
    *last = e->seq;
}

START_TEST(test_transactions_and_events)
{
    struct store *s = fresh();
    struct store *again = NULL;
    struct store_event e;
    int64_t last = 0;
    char err[256];
    char *v;

    memset(&e, 0, sizeof(e));
    e.sandbox = PV_UNCONST("a");
    e.kind = PV_UNCONST("CONFIG:PROPOSED");
    e.line = PV_UNCONST("x");
    e.json = PV_UNCONST("{}");
    ck_assert(pv_ok(store_begin(s)));
    ck_assert(pv_ok(store_event_append(s, &e)));
    ck_assert(pv_ok(store_setting_put(s, "", "k", "true")));
    store_rollback(s);
    v = store_setting_get(s, "", "k");
    ck_assert_ptr_null(v);
    ck_assert(pv_ok(store_begin(s)));
    for (int i = 0; i < 3; i++) {
        ck_assert(pv_ok(store_event_append(s, &e)));
    }
    ck_assert(pv_ok(store_setting_put(s, "", "k", "true")));
    ck_assert(pv_ok(store_setting_put(s, "", "k", "false")));
    ck_assert(pv_ok(store_commit(s)));
    ck_assert_int_eq(e.seq, 3); /* the rolled-back event left no gap */
    /* A second connection sees the committed state. */
    ck_assert(pv_ok(store_open(check_store_loc(dir), &again, err, sizeof(err))));
    ck_assert(pv_ok(store_event_each(again, 0, 100, count_events, &last)));
    ck_assert_int_eq(last, 3);
    v = store_setting_get(again, "", "k");
    ck_assert_str_eq(v, "false");
    free(v);
    ck_assert_int_eq(store_setting_delete(again, "", "nope").err, PV_ERR_NOTFOUND);
    ck_assert(pv_ok(store_setting_delete(again, "", "k")));
    store_close(again);
    wipe(s);
}
END_TEST

START_TEST(test_newer_schema_refused)
{
    struct store *s = fresh();
    struct store *again = NULL;
    char path[128];
    char err[256];

    /* On PostgreSQL 's' stays open: its pool keeps an idle connection that
     * a new handle reuses, and the open must still read the version (a
     * replica's worker made again during a rolling upgrade). */
    if (check_store_pg() == NULL) {
        store_close(s);
        s = NULL;
    }
    ck_assert(
        check_store_sql(dir, "PRAGMA user_version = 99", "UPDATE schema_version SET version = 99"));
    ck_assert(!pv_ok(store_open(check_store_loc(dir), &again, err, sizeof(err))));
    ck_assert_ptr_nonnull(strstr(err, "newer than this build"));
    ck_assert(!pv_ok(store_open_own(check_store_loc(dir), &again, err, sizeof(err))));
    ck_assert_ptr_nonnull(strstr(err, "newer than this build"));
    store_close(s);
    ck_assert(!pv_ok(store_open("/nonexistent/dir", &again, err, sizeof(err))));
    ck_assert(pv_ok(store_open(check_store_loc(dir), &s, err, sizeof(err))) == false);
    snprintf(path, sizeof(path), "%s/advisor.db", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/advisor.db-wal", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/advisor.db-shm", dir);
    unlink(path);
    rmdir(dir);
}
END_TEST

START_TEST(test_delete_cascades)
{
    struct store *s = fresh();
    int64_t sb = make_sandbox(s, "a");
    struct store_chunk c = chunk("c1", sb);
    struct store_chunk got;
    int64_t n = 0;

    ck_assert(pv_ok(store_chunk_insert(s, &c)));
    ck_assert(pv_ok(store_setting_put(s, "a", "proposal_approval_mode", "\"auto\"")));
    ck_assert(pv_ok(store_sandbox_delete(s, sb)));
    ck_assert_int_eq(store_chunk_get(s, sb, "c1", &got).err, PV_ERR_NOTFOUND);
    ck_assert_ptr_null(store_setting_get(s, "a", "proposal_approval_mode"));
    ck_assert_int_eq(store_sandbox_delete(s, sb).err, PV_ERR_NOTFOUND);
    ck_assert(pv_ok(store_chunk_clear_pending(s, sb, &n)));
    ck_assert_int_eq(n, 0);
    wipe(s);
}
END_TEST

/* store_setting_read tells unset from a failed read: a caller bounding
 * something by a setting must not take a broken store for "unbounded". */
START_TEST(test_setting_read)
{
    struct store *s = fresh();
    char *v = PV_UNCONST("sentinel");

    ck_assert(pv_ok(store_setting_read(s, "a", "peer_address_ranges", &v)));
    ck_assert_ptr_null(v);
    ck_assert(pv_ok(store_setting_put(s, "a", "peer_address_ranges", "[\"10.0.0.0/8\"]")));
    ck_assert(pv_ok(store_setting_read(s, "a", "peer_address_ranges", &v)));
    ck_assert_str_eq(v, "[\"10.0.0.0/8\"]");
    free(v);
    ck_assert(check_store_sql(dir, "DROP TABLE settings", "DROP TABLE settings"));
    v = PV_UNCONST("sentinel");
    ck_assert_int_eq(store_setting_read(s, "a", "peer_address_ranges", &v).err, PV_ERR_IO);
    ck_assert_ptr_null(v);
    ck_assert_ptr_null(store_setting_get(s, "a", "peer_address_ranges"));
    wipe(s);
}
END_TEST

static bool admits(const struct advisor_ranges *r, const char *addr)
{
    struct model_ip ip;

    ck_assert(model_ip_parse_strict(addr, strlen(addr), &ip));
    return advisor_ranges_admit(r, &ip);
}

/* peer_address_ranges as the registration reads it: unset is unbounded, the
 * global value wins, a stored value that is not valid admits nothing. */
START_TEST(test_peer_ranges)
{
    struct store *s = fresh();
    struct advisor_ranges *r = NULL;

    ck_assert(pv_ok(advisor_ranges_get(s, "a", &r)));
    ck_assert_ptr_null(advisor_ranges_text(r));
    ck_assert_str_eq(advisor_ranges_from(r), "default");
    ck_assert(admits(r, "10.66.66.66"));
    advisor_ranges_free(r);

    ck_assert(pv_ok(store_setting_put(s, "a", ADVISOR_SET(PEER_RANGES),
                                      "[\"10.88.0.0/16\",\"fd00::/8\",\"192.0.2.7\"]")));
    ck_assert(pv_ok(advisor_ranges_get(s, "a", &r)));
    ck_assert_str_eq(advisor_ranges_from(r), "sandbox");
    ck_assert(admits(r, "10.88.1.2"));
    ck_assert(admits(r, "fd12::1"));
    ck_assert(admits(r, "192.0.2.7"));
    ck_assert(!admits(r, "192.0.2.8"));
    ck_assert(!admits(r, "10.66.66.66"));
    ck_assert(!admits(r, "10.89.0.1"));
    ck_assert(!admits(r, "::ffff:10.66.66.66"));
    ck_assert(admits(r, "::ffff:10.88.0.1")); /* the same address as 10.88.0.1 */
    advisor_ranges_free(r);
    ck_assert(pv_ok(advisor_ranges_get(s, "b", &r)));
    ck_assert(admits(r, "10.66.66.66")); /* a's ranges bound a only */
    advisor_ranges_free(r);

    ck_assert(pv_ok(store_setting_put(s, "", ADVISOR_SET(PEER_RANGES), "[\"10.66.0.0/16\"]")));
    ck_assert(pv_ok(advisor_ranges_get(s, "a", &r)));
    ck_assert_str_eq(advisor_ranges_from(r), "global");
    ck_assert(admits(r, "10.66.66.66"));
    ck_assert(!admits(r, "10.88.1.2"));
    advisor_ranges_free(r);

    ck_assert(pv_ok(store_setting_put(s, "", ADVISOR_SET(PEER_RANGES), "[\"db.internal\"]")));
    ck_assert(pv_ok(advisor_ranges_get(s, "a", &r)));
    ck_assert_str_eq(advisor_ranges_text(r), "[\"db.internal\"]");
    ck_assert(!admits(r, "10.66.66.66"));
    advisor_ranges_free(r);
    ck_assert(pv_ok(store_setting_put(s, "", ADVISOR_SET(PEER_RANGES), "not json")));
    ck_assert(pv_ok(advisor_ranges_get(s, "a", &r)));
    ck_assert(!admits(r, "10.66.66.66"));
    advisor_ranges_free(r);
    ck_assert(pv_ok(store_setting_put(s, "", ADVISOR_SET(PEER_RANGES), "[]")));
    ck_assert(pv_ok(advisor_ranges_get(s, "a", &r)));
    ck_assert(!admits(r, "10.66.66.66"));
    advisor_ranges_free(r);
    advisor_ranges_free(NULL);
    wipe(s);
}
END_TEST

/* Writers on separate connections (threads) never interleave a read and
 * the write that depends on it: a read-modify-write counter loses no
 * update, revision numbers and event seqs are contiguous, every event
 * names the seal of the one before it (one chain, no fork), and of the
 * writers that read a chunk as pending exactly one moves it. On SQLite
 * this is BEGIN IMMEDIATE; on PostgreSQL the writer lock (store_pg.c). */
#define WRITERS 4
#define ROUNDS 40

struct writer {
    int id;
    int64_t sandbox;
    int cas_won;
    int failed;
};

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    struct store *s = NULL;
    char err[256];

    if (!pv_ok(store_open(check_store_loc(dir), &s, err, sizeof(err)))) {
        w->failed++;
        return NULL;
    }
    for (int i = 0; i < ROUNDS; i++) {
        struct store_revision r;
        struct store_event e;
        struct store_chunk c;
        char head[65];
        char seal[65];
        char num[32];
        int64_t seq = 0;
        char *v;

        memset(&r, 0, sizeof(r));
        memset(&e, 0, sizeof(e));
        if (!pv_ok(store_begin(s))) {
            w->failed++;
            continue;
        }
        v = store_setting_get(s, "", "counter");
        snprintf(num, sizeof(num), "%lld", (v != NULL ? atoll(v) : 0) + 1);
        free(v);
        r.blob = PV_UNCONST("b");
        r.hash = PV_UNCONST("h");
        r.cause = PV_UNCONST("t");
        snprintf(seal, sizeof(seal), "%064d", w->id * 1000 + i);
        e.sandbox = PV_UNCONST("");
        e.kind = PV_UNCONST("T");
        e.line = PV_UNCONST("x");
        e.json = PV_UNCONST("{}");
        e.record = head;
        e.seal = seal;
        if (!pv_ok(store_setting_put(s, "", "counter", num)) ||
            !pv_ok(store_rev_put(s, w->sandbox, &r)) || !pv_ok(store_event_head(s, &seq, head)) ||
            !pv_ok(store_event_append(s, &e))) {
            store_rollback(s);
            w->failed++;
            continue;
        }
        if (i == ROUNDS / 2 && pv_ok(store_chunk_get(s, w->sandbox, "c1", &c))) {
            if (strcmp(c.status, "pending") == 0) {
                free(c.status);
                c.status = pv_strdup("approved");
                if (pv_ok(store_chunk_update(s, &c, "pending"))) {
                    w->cas_won++;
                }
            }
            store_chunk_clear(&c);
        }
        if (!pv_ok(store_commit(s))) {
            w->failed++;
        }
    }
    store_close(s);
    return NULL;
}

struct chain {
    int64_t n;
    int64_t last_seq;
    bool linked;
    char prev[65];
};

static void check_link(void *arg, const struct store_event *e)
{
    struct chain *ch = arg;

    ch->n++;
    if (e->seq != ch->last_seq + 1 || strcmp(e->record, ch->prev) != 0) {
        ch->linked = false;
    }
    ch->last_seq = e->seq;
    snprintf(ch->prev, sizeof(ch->prev), "%s", e->seal);
}

START_TEST(test_concurrent_writers)
{
    struct store *s = fresh();
    int64_t sb = make_sandbox(s, "a");
    struct store_chunk c = chunk("c1", sb);
    struct writer w[WRITERS];
    pthread_t th[WRITERS];
    struct store_revision r;
    struct chain ch = {.linked = true};
    int won = 0;
    char *v;

    ck_assert(pv_ok(store_chunk_insert(s, &c)));
    memset(ch.prev, '0', 64);
    for (int i = 0; i < WRITERS; i++) {
        w[i] = (struct writer){.id = i + 1, .sandbox = sb};
        ck_assert_int_eq(pthread_create(&th[i], NULL, writer_main, &w[i]), 0);
    }
    for (int i = 0; i < WRITERS; i++) {
        pthread_join(th[i], NULL);
        ck_assert_int_eq(w[i].failed, 0);
        won += w[i].cas_won;
    }
    ck_assert_int_eq(won, 1);
    v = store_setting_get(s, "", "counter");
    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(atoll(v), WRITERS * ROUNDS);
    free(v);
    ck_assert(pv_ok(store_rev_latest(s, sb, &r)));
    ck_assert_int_eq(r.rev, WRITERS * ROUNDS);
    store_revision_clear(&r);
    ck_assert(pv_ok(store_event_each(s, 0, 100000, check_link, &ch)));
    ck_assert_int_eq(ch.n, WRITERS * ROUNDS);
    ck_assert(ch.linked);
    wipe(s);
}
END_TEST

/* Migrations are the same on both back ends: a store at schema 4 (before
 * approved_evidence and suspension_reason) opens at 5, and an approved
 * chunk's approval rests on the evidence it held. */
START_TEST(test_migrate_4_to_5)
{
    struct store *s = fresh();
    int64_t sb = make_sandbox(s, "a");
    struct store_chunk c = chunk("c1", sb);
    struct store_chunk d = chunk("c2", sb);
    struct store_chunk got;
    char err[256];

    c.status = PV_UNCONST("approved");
    c.evidence = PV_UNCONST("ev1");
    d.evidence = PV_UNCONST("ev2");
    ck_assert(pv_ok(store_chunk_insert(s, &c)));
    ck_assert(pv_ok(store_chunk_insert(s, &d)));
    store_close(s);
    ck_assert(check_store_sql(dir,
                              "ALTER TABLE chunks DROP COLUMN approved_evidence;"
                              "ALTER TABLE chunks DROP COLUMN suspension_reason;"
                              "PRAGMA user_version = 4",
                              "ALTER TABLE chunks DROP COLUMN approved_evidence, "
                              "DROP COLUMN suspension_reason;"
                              "UPDATE schema_version SET version = 4"));
    ck_assert_msg(pv_ok(store_open(check_store_loc(dir), &s, err, sizeof(err))), "%s", err);
    ck_assert(pv_ok(store_chunk_get(s, sb, "c1", &got)));
    ck_assert_str_eq(got.approved_evidence, "ev1");
    ck_assert_str_eq(got.suspension_reason, "");
    store_chunk_clear(&got);
    ck_assert(pv_ok(store_chunk_get(s, sb, "c2", &got)));
    ck_assert_str_eq(got.approved_evidence, "");
    store_chunk_clear(&got);
    /* Migrated once: opening again changes nothing. */
    store_close(s);
    ck_assert(check_store_sql(dir, "UPDATE chunks SET approved_evidence = 'kept'",
                              "UPDATE chunks SET approved_evidence = 'kept'"));
    ck_assert(pv_ok(store_open(check_store_loc(dir), &s, err, sizeof(err))));
    ck_assert(pv_ok(store_chunk_get(s, sb, "c1", &got)));
    ck_assert_str_eq(got.approved_evidence, "kept");
    store_chunk_clear(&got);
    wipe(s);
}
END_TEST

/* Several connections opening one new store at once: one migrates, the
 * others wait and find it done; all open. */
static void *open_main(void *arg)
{
    struct store *s = NULL;
    char err[256];
    bool ok = pv_ok(store_open(check_store_loc(dir), &s, err, sizeof(err)));

    if (!ok) {
        fprintf(stderr, "open: %s\n", err);
    } else if (!(ok = pv_ok(store_setting_put(s, "", (const char *)arg, "1")))) {
        fprintf(stderr, "put: %s\n", store_errmsg(s));
    }
    store_close(s);
    return ok ? arg : NULL;
}

START_TEST(test_concurrent_open)
{
    static const char *const keys[] = {"k1", "k2", "k3", "k4"};
    pthread_t th[PV_ARRAY_LEN(keys)];
    struct store *s = fresh();
    char *v;

    /* An empty store: on SQLite a new directory, on PostgreSQL an empty
     * schema. */
    wipe(s);
    snprintf(dir, sizeof(dir), "/tmp/pv-store.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    (void)check_store_reset(dir);
    for (size_t i = 0; i < PV_ARRAY_LEN(keys); i++) {
        ck_assert_int_eq(pthread_create(&th[i], NULL, open_main, PV_UNCONST(keys[i])), 0);
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(keys); i++) {
        void *res = NULL;
        pthread_join(th[i], &res);
        ck_assert_ptr_nonnull(res);
    }
    s = NULL;
    {
        char err[256];
        ck_assert(pv_ok(store_open(check_store_loc(dir), &s, err, sizeof(err))));
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(keys); i++) {
        v = store_setting_get(s, "", keys[i]);
        ck_assert_ptr_nonnull(v);
        free(v);
    }
    wipe(s);
}
END_TEST

/* Notes from a listener, collected (store.h "Replicas"). */
struct notes {
    char text[1024];
    int n;
};

static void note(void *arg, const char *payload)
{
    struct notes *ns = arg;
    size_t used = strlen(ns->text);

    snprintf(ns->text + used, sizeof(ns->text) - used, "%s|", payload);
    ns->n++;
}

/* Wait up to 'ms' for at least 'want' notes. */
static void listen_for(struct store_listener *l, struct notes *ns, int want, int ms)
{
    for (int waited = 0; ns->n < want && waited < ms; waited += 50) {
        ck_assert(pv_ok(store_listener_wait(l, 50, note, ns)));
    }
}

START_TEST(test_change_notes)
{
    struct store *s = fresh();
    struct store_listener *l;
    struct notes ns;
    struct store_sandbox sb;
    char err[256];
    char want[128];
    int64_t id;

    l = store_listener_open(check_store_loc(dir), err, sizeof(err));
    if (check_store_pg() == NULL) {
        /* SQLite: one process owns the store; nothing to listen to. */
        ck_assert_ptr_null(l);
        ck_assert_str_eq(err, "");
        wipe(s);
        return;
    }
    ck_assert_msg(l != NULL, "%s", err);
    memset(&ns, 0, sizeof(ns));
    /* A committed write names the sandbox it created. */
    ck_assert(pv_ok(store_begin(s)));
    id = make_sandbox(s, "a");
    ck_assert(pv_ok(store_commit(s)));
    listen_for(l, &ns, 1, 2000);
    snprintf(want, sizeof(want), "state sandbox:%lld|", (long long)id);
    ck_assert_str_eq(ns.text, want);
    /* A rolled-back write sends nothing; a setting is named as such. */
    memset(&ns, 0, sizeof(ns));
    ck_assert(pv_ok(store_begin(s)));
    make_sandbox(s, "b");
    store_rollback(s);
    ck_assert(pv_ok(store_begin(s)));
    ck_assert(pv_ok(store_setting_put(s, "", "k", "1")));
    ck_assert(pv_ok(store_commit(s)));
    listen_for(l, &ns, 1, 2000);
    listen_for(l, &ns, 2, 200); /* nothing else arrives */
    ck_assert_str_eq(ns.text, "state settings|");
    /* A read transaction sends nothing; a rotated token is named. */
    memset(&ns, 0, sizeof(ns));
    ck_assert(pv_ok(store_begin_read(s)));
    ck_assert(pv_ok(store_sandbox_get(s, "a", &sb)));
    ck_assert(pv_ok(store_commit(s)));
    ck_assert(pv_ok(store_begin(s)));
    ck_assert(pv_ok(store_sandbox_update(s, &sb)));
    ck_assert(pv_ok(store_sandbox_delete(s, sb.id)));
    ck_assert(pv_ok(store_commit(s)));
    store_sandbox_clear(&sb);
    listen_for(l, &ns, 2, 300);
    snprintf(want, sizeof(want), "state settings sandbox:%lld|", (long long)id);
    ck_assert_str_eq(ns.text, want);
    /* More sandboxes than a note names: "sandboxes". */
    memset(&ns, 0, sizeof(ns));
    ck_assert(pv_ok(store_begin(s)));
    for (int i = 0; i < 20; i++) {
        char name[16];
        snprintf(name, sizeof(name), "m%d", i);
        make_sandbox(s, name);
    }
    ck_assert(pv_ok(store_commit(s)));
    listen_for(l, &ns, 1, 2000);
    ck_assert_msg(strncmp(ns.text, "state sandboxes sandbox:", 24) == 0, "%s", ns.text);
    store_listener_close(l);
    wipe(s);
}
END_TEST

START_TEST(test_session_lock)
{
    struct store *s = fresh();
    struct store *t = NULL;
    char err[256];
    bool got = false;

    ck_assert_msg(pv_ok(store_open(check_store_loc(dir), &t, err, sizeof(err))), "%s", err);
    ck_assert(pv_ok(store_try_lock(s, STORE_LOCK_MAPPER, &got)));
    ck_assert(got);
    ck_assert(pv_ok(store_try_lock(t, STORE_LOCK_MAPPER, &got)));
    /* On PostgreSQL one owner across connections; SQLite has one process. */
    ck_assert(got == (check_store_pg() == NULL));
    store_unlock(s, STORE_LOCK_MAPPER);
    ck_assert(pv_ok(store_try_lock(t, STORE_LOCK_MAPPER, &got)));
    ck_assert(got);
    /* The owner's session ends (a replica killed): the lock is free once
     * the server has ended the session, which it does after the client
     * left - asynchronously, so a few tries (at most 2 s). 's' asks from
     * inside a transaction begun before the close, so on a connection of
     * the pool other than the one 't' held: a pool that kept that
     * connection (and its lock) for the next borrower would never let it
     * go. */
    ck_assert(pv_ok(store_begin_read(s)));
    store_close(t);
    got = false;
    for (int i = 0; i < 200 && !got; i++) {
        ck_assert(pv_ok(store_try_lock(s, STORE_LOCK_MAPPER, &got)));
        if (!got) {
            usleep(10000);
        }
    }
    ck_assert(got);
    store_rollback(s);
    store_unlock(s, STORE_LOCK_MAPPER);
    wipe(s);
}
END_TEST

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void count_sandbox(void *arg, const struct store_sandbox *sb)
{
    (void)sb;
    (*(int *)arg)++;
}

/* One call on 'st' from a thread of its own: its result, its time and the
 * handle's error after. */
struct pool_call {
    struct store *st;
    pv_result r;
    int64_t ms;
    char err[512];
};

static void *pool_call(void *arg)
{
    struct pool_call *x = arg;
    int64_t t0 = mono_ms();
    int n = 0;

    x->r = store_sandbox_each(x->st, count_sandbox, &n);
    x->ms = mono_ms() - t0;
    snprintf(x->err, sizeof(x->err), "%s", store_errmsg(x->st));
    return NULL;
}

/* PostgreSQL's pool (store_pg_pool.c) at one connection: a handle holds it
 * from BEGIN to COMMIT; another thread waits for it and gets it at the
 * COMMIT; the wait is bounded and its failure names the setting; the
 * holding thread's own second handle is refused at once (it would wait on
 * itself); twenty handles take turns on the one connection. */
START_TEST(test_pool_bound)
{
    struct store *s;
    struct store *t = NULL;
    struct store *many[20];
    struct pool_call x = {0};
    pthread_t th;
    char err[256];
    int64_t t0;
    int n = 0;

    if (check_store_pg() == NULL) {
        return; /* SQLite: a handle is its connection */
    }
    store_set_connections(1, 300);
    s = fresh();
    ck_assert_msg(pv_ok(store_open(check_store_loc(dir), &t, err, sizeof(err))), "%s", err);
    make_sandbox(s, "pooled");

    ck_assert(pv_ok(store_begin(s)));
    t0 = mono_ms();
    ck_assert(!pv_ok(store_sandbox_each(t, count_sandbox, &n)));
    ck_assert_int_lt(mono_ms() - t0, 250);
    ck_assert_msg(strstr(store_errmsg(t), "in use, one of them by this thread") != NULL, "%s",
                  store_errmsg(t));

    x.st = t;
    ck_assert_int_eq(pthread_create(&th, NULL, pool_call, &x), 0);
    usleep(100000);
    ck_assert(pv_ok(store_commit(s)));
    pthread_join(th, NULL);
    ck_assert_msg(pv_ok(x.r), "%s", x.err);
    ck_assert_int_ge(x.ms, 50);

    ck_assert(pv_ok(store_begin_read(s)));
    ck_assert_int_eq(pthread_create(&th, NULL, pool_call, &x), 0);
    pthread_join(th, NULL);
    store_rollback(s);
    ck_assert(!pv_ok(x.r));
    ck_assert_int_ge(x.ms, 250);
    ck_assert_int_lt(x.ms, 10000);
    ck_assert_msg(strstr(x.err, "stayed in use for 300 ms (raise store_connections)") != NULL, "%s",
                  x.err);

    for (size_t i = 0; i < PV_ARRAY_LEN(many); i++) {
        ck_assert(pv_ok(store_open(check_store_loc(dir), &many[i], err, sizeof(err))));
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(many); i++) {
        n = 0;
        ck_assert(pv_ok(store_sandbox_each(many[i], count_sandbox, &n)));
        ck_assert_int_eq(n, 1);
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(many); i++) {
        store_close(many[i]);
    }
    store_set_connections(STORE_PG_POOL_MAX, STORE_PG_POOL_WAIT_MS);
    store_close(t);
    wipe(s);
}
END_TEST

static pv_result group_item(struct store *st, void *arg)
{
    (void)arg;
    return store_setting_put(st, "global", "pool_own", "1");
}

/* The handles others wait on have connections of their own
 * (store_open_own): with the pool at one connection, held by this thread
 * in a read transaction, a session lock on an own handle and the group
 * writer's commit both go through at once. */
START_TEST(test_pool_own)
{
    struct store *s;
    struct store *lock = NULL;
    struct store_group *g;
    char err[256];
    bool got = false;
    int n = 0;
    int64_t t0;

    if (check_store_pg() == NULL) {
        return;
    }
    store_set_connections(1, 300);
    s = fresh();
    ck_assert_msg(pv_ok(store_open_own(check_store_loc(dir), &lock, err, sizeof(err))), "%s", err);
    ck_assert(pv_ok(store_try_lock(lock, STORE_LOCK_MAPPER, &got)));
    ck_assert(got);
    ck_assert(pv_ok(store_sandbox_each(s, count_sandbox, &n)));
    g = store_group_open(check_store_loc(dir), err, sizeof(err));
    ck_assert_msg(g != NULL, "%s", err);
    ck_assert(pv_ok(store_begin_read(s)));
    t0 = mono_ms();
    ck_assert(pv_ok(store_group_write(g, group_item, NULL)));
    ck_assert_int_lt(mono_ms() - t0, 250);
    store_rollback(s);
    store_unlock(lock, STORE_LOCK_MAPPER);
    store_group_close(g);
    store_close(lock);
    store_set_connections(STORE_PG_POOL_MAX, STORE_PG_POOL_WAIT_MS);
    wipe(s);
}
END_TEST

/* The connection options the advisor asks libpq for: its defaults under
 * any location, the location's own values over them. No server is needed:
 * libpq reports a connection's options also when it could not connect. */
static const char *conn_option(PGconn *c, const char *key, char *buf, size_t len)
{
    PQconninfoOption *opts = PQconninfo(c);

    buf[0] = '\0';
    for (PQconninfoOption *o = opts; o != NULL && o->keyword != NULL; o++) {
        if (strcmp(o->keyword, key) == 0 && o->val != NULL) {
            snprintf(buf, len, "%s", o->val);
        }
    }
    PQconninfoFree(opts);
    return buf;
}

static const struct {
    bool own; /* on the location that sets three values of its own */
    const char *key;
    const char *want;
} conn_rows[] = {
    {false, "dbname", "proviso"},
    {false, "host", "/nonexistent-pv-sock"},
    {false, "connect_timeout", "10"},
    {false, "keepalives", "1"},
    {false, "keepalives_idle", "10"},
    {false, "keepalives_interval", "5"},
    {false, "keepalives_count", "3"},
    {false, "tcp_user_timeout", "30000"},
    {false, "application_name", "proviso-advisor"},
    {true, "dbname", "proviso"},
    {true, "keepalives_idle", "99"},
    {true, "application_name", "mine"},
    {true, "connect_timeout", "3"},
    {true, "keepalives_count", "3"},
};

START_TEST(test_pg_connection_defaults)
{
    char v[64];
    PGconn *c = store_pg_connect(conn_rows[_i].own
                                     ? "postgresql:///proviso?host=/nonexistent-pv-sock&"
                                       "keepalives_idle=99&application_name=mine&connect_timeout=3"
                                     : "postgresql:///proviso?host=/nonexistent-pv-sock");

    ck_assert_ptr_nonnull(c);
    ck_assert_int_ne(PQstatus(c), CONNECTION_OK);
    ck_assert_str_eq(conn_option(c, conn_rows[_i].key, v, sizeof(v)), conn_rows[_i].want);
    PQfinish(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("advisor_store");
    TCase *t = tcase_create("store");

    tcase_add_test(t, test_sandbox_unique);
    tcase_add_test(t, test_chunk_cas);
    tcase_add_test(t, test_revisions_and_blobs);
    tcase_add_test(t, test_transactions_and_events);
    tcase_add_test(t, test_newer_schema_refused);
    tcase_add_test(t, test_delete_cascades);
    tcase_add_test(t, test_setting_read);
    tcase_add_test(t, test_peer_ranges);
    tcase_add_test(t, test_concurrent_writers);
    tcase_add_test(t, test_migrate_4_to_5);
    tcase_add_test(t, test_concurrent_open);
    tcase_add_test(t, test_change_notes);
    tcase_add_test(t, test_session_lock);
    tcase_add_test(t, test_pool_bound);
    tcase_add_test(t, test_pool_own);
    tcase_add_loop_test(t, test_pg_connection_defaults, 0, (int)PV_ARRAY_LEN(conn_rows));
    tcase_set_timeout(t, 60);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *r = srunner_create(suite());
    int failed;

    srunner_run_all(r, CK_NORMAL);
    failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
