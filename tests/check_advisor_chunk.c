/* SPDX-License-Identifier: Apache-2.0 */
/* check_advisor_chunk.c - the lifecycle state machine, in process
 *
 * Every transition of docs/advisor.md#lifecycle, driven through the
 * advisor's own functions (advisor_submit, advisor_approve, ...) on a store
 * in a scratch directory, with the real proviso-prover from the build as
 * the child the advisor runs (proofs go over HTTP, as in production). What
 * a wrong lifecycle would break: a status reached from a state it may not
 * be reached from, an approval with a stale token, an undo or a reject that
 * does not restore the exact policy (folded merge included), a supersede or
 * reconcile that is not recorded, a global setting that does not win.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "advisor/proc/proc.h"
#include "advisor/store/store.h"
#include "model/model.h"
#include "tests/check_store_util.h"

static struct advisor a;
static struct advisor_worker *w;
static struct advisor_child *child;
static char dir[64];

static const char base_policy[] = "version: 1\n"
                                  "network_policies:\n"
                                  "  gh:\n"
                                  "    name: gh\n"
                                  "    endpoints:\n"
                                  "      - host: api.github.com\n"
                                  "        port: 443\n"
                                  "        protocol: rest\n"
                                  "        enforcement: enforce\n"
                                  "        access: read-only\n"
                                  "    binaries:\n"
                                  "      - path: /usr/bin/curl\n";

static json_t *call(void (*fn)(struct advisor_worker *, const char *, const char *, const char *,
                               size_t, struct httpd_reply *),
                    const char *id, const char *body, unsigned want)
{
    struct httpd_reply r;

    memset(&r, 0, sizeof(r));
    fn(w, "sb", id, body, strlen(body), &r);
    ck_assert_msg(r.status == want, "status %u, want %u: %s", r.status, want,
                  r.body != NULL ? json_dumps(r.body, 0) : "");
    return r.body;
}

static json_t *show(const char *id)
{
    struct httpd_reply r;

    memset(&r, 0, sizeof(r));
    advisor_route_chunk_show(w, "sb", id, true, &r);
    ck_assert_uint_eq(r.status, 200);
    return r.body;
}

static const char *str(const json_t *j, const char *k)
{
    const char *s = json_string_value(json_object_get(j, k));
    ck_assert_msg(s != NULL, "no string '%s'", k);
    return s;
}

/* Submit 'body' in 'mode' (NULL: agent_authored); the reply body. */
static json_t *submit_body(const char *sandbox, const char *mode, const char *body, unsigned want)
{
    struct httpd_reply r;

    memset(&r, 0, sizeof(r));
    advisor_route_submit(w, sandbox, mode, body, strlen(body), &r);
    ck_assert_msg(r.status == want, "submit: status %u, want %u: %s", r.status, want,
                  r.body != NULL ? json_dumps(r.body, 0) : "");
    return r.body;
}

/* The JSON body of a one-rule proposal: 'endpoint' is the endpoint object's
 * members, 'binary' the one binary. */
static void rule_body(char *buf, size_t len, const char *name, const char *endpoint,
                      const char *binary)
{
    snprintf(buf, len,
             "{\"operations\":[{\"addRule\":{\"ruleName\":\"%s\",\"rule\":{\"endpoints\":[{"
             "%s}],\"binaries\":[{\"path\":\"%s\"}]}}}]}",
             name, endpoint, binary);
}

/* Submit one rule in 'mode'; the accepted chunk id into 'id'. */
static void submit_rule(const char *mode, const char *name, const char *endpoint,
                        const char *binary, char id[64])
{
    char body[2048];
    json_t *j;

    rule_body(body, sizeof(body), name, endpoint, binary);
    j = submit_body("sb", mode, body, 202);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "accepted_chunks")), 1);
    snprintf(id, 64, "%s",
             json_string_value(json_array_get(json_object_get(j, "accepted_chunk_ids"), 0)));
    json_decref(j);
}

/* Submit one L7 rule on port 443 (curl); the new chunk id into 'id'. */
static void submit(const char *name, const char *host, const char *method, const char *path,
                   char id[64])
{
    char ep[512];

    snprintf(ep, sizeof(ep),
             "\"host\":\"%s\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":\"enforce\","
             "\"rules\":[{\"allow\":{\"method\":\"%s\",\"path\":\"%s\"}}]",
             host, method, path);
    submit_rule(NULL, name, ep, "/usr/bin/curl", id);
}

static char *policy_hash(void)
{
    struct store_revision rev;
    struct store_sandbox sb;
    char *h;

    ck_assert(pv_ok(store_sandbox_get(w->st, "sb", &sb)));
    ck_assert(pv_ok(store_rev_latest(w->st, sb.id, &rev)));
    h = strdup(rev.hash);
    store_revision_clear(&rev);
    store_sandbox_clear(&sb);
    return h;
}

/* A setting written as the advisor writes one: with its CONFIG:SETTING
 * record, which binds the inputs of its scope to the chain (nothing is
 * decided on inputs the chain does not back, docs/audit.md#inputs). */
static void set_setting(const char *scope, const char *key, const char *json)
{
    ck_assert(pv_ok(store_begin(w->st)));
    ck_assert(pv_ok(store_setting_put(w->st, scope, key, json)));
    ck_assert(
        pv_ok(advisor_event(w->st, scope, "CONFIG:SETTING", "CONFIG:SETTING [INFO] test", NULL)));
    ck_assert(pv_ok(store_commit(w->st)));
}

static void setup(void)
{
    char err[512];
    char exe[1024];
    const char *build = getenv("PV_BUILDDIR");

    snprintf(dir, sizeof(dir), "/tmp/pv-chunk.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    memset(&a, 0, sizeof(a));
    snprintf(a.cfg.data_dir, sizeof(a.cfg.data_dir), "%s", dir);
    snprintf(a.cfg.store, sizeof(a.cfg.store), "%s", check_store_reset(dir));
    a.cfg.prover_timeout_ms = 30000;
    a.pool = advisor_pool_new();
    ck_assert_ptr_nonnull(a.pool);
    pthread_mutex_init(&a.change_mu, NULL);
    pthread_cond_init(&a.change_cv, NULL);
    for (size_t i = 0; i < ADVISOR_LOCK_STRIPES; i++) {
        pthread_mutex_init(&a.stripes[i], NULL);
    }
    a.tokens = advisor_tokens_new();
    ck_assert_msg(pv_ok(advisor_audit_open(dir, NULL, err, sizeof(err))), "%s", err);
    a.group = store_group_open(a.cfg.store, err, sizeof(err));
    ck_assert_msg(a.group != NULL, "%s", err);
    snprintf(exe, sizeof(exe), "%s/proviso-prover", build != NULL ? build : ".");
    child = advisor_child_start(&a, exe, err, sizeof(err));
    ck_assert_msg(child != NULL, "%s", err);
    a.recent = advisor_recent_new();
    a.mapper = advisor_mapper_new(&a, 3600000, false);
    ck_assert_ptr_nonnull(a.mapper);
    w = advisor_worker_new(&a);
    ck_assert_ptr_nonnull(w->st);
    check_make_sandbox(w->st, "sb", base_policy);
    set_setting("", ADVISOR_SET(PROPOSALS), "true");
}

static void teardown(void)
{
    char cmd[128];

    advisor_worker_free(w);
    advisor_mapper_free(a.mapper);
    advisor_recent_free(a.recent);
    advisor_child_stop(child, 5000);
    advisor_pool_free(a.pool);
    store_group_close(a.group);
    advisor_audit_close();
    advisor_tokens_free(a.tokens);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_manual_transitions)
{
    char c1[64];
    char c2[64];
    char *h0 = policy_hash();
    char *h1;
    char body[256];
    json_t *j;

    /* new -> pending (manual: the default mode) */
    submit("ex", "example.com", "GET", "/x", c1);
    j = show(c1);
    ck_assert_str_eq(str(j, "status"), "pending");
    ck_assert_str_eq(str(j, "validation_result"), "prover: no new findings");
    snprintf(body, sizeof(body), "{\"review_token\":\"%s\"}", str(j, "review_token"));
    json_decref(j);
    /* pending -> approved needs the fetched token */
    json_decref(call(advisor_route_approve, c1, "{\"review_token\":\"nope\"}", 412));
    json_decref(call(advisor_route_approve, c1, body, 200));
    h1 = policy_hash();
    ck_assert_str_ne(h0, h1);
    /* approved -> approved is refused */
    json_decref(call(advisor_route_approve, c1, body, 409));
    /* approved -> pending (undo) restores the exact policy */
    {
        struct httpd_reply r;
        memset(&r, 0, sizeof(r));
        advisor_route_undo(w, "sb", c1, &r);
        ck_assert_uint_eq(r.status, 200);
        json_decref(r.body);
    }
    {
        char *h = policy_hash();
        ck_assert_str_eq(h, h0);
        free(h);
    }
    /* pending -> rejected, with the reason kept */
    json_decref(call(advisor_route_reject, c1, "{\"reason\":\"not now\"}", 200));
    j = show(c1);
    ck_assert_str_eq(str(j, "status"), "rejected");
    ck_assert_str_eq(str(j, "rejection_reason"), "not now");
    snprintf(body, sizeof(body), "{\"review_token\":\"%s\"}", str(j, "review_token"));
    json_decref(j);
    /* rejected -> approved clears the stale reason */
    {
        struct httpd_reply r;
        memset(&r, 0, sizeof(r));
        advisor_route_approve(w, "sb", c1, body, strlen(body), &r);
        if (r.status == 412) { /* the evaluation was refreshed by undo: refetch */
            json_decref(r.body);
            j = show(c1);
            snprintf(body, sizeof(body), "{\"review_token\":\"%s\"}", str(j, "review_token"));
            json_decref(j);
            memset(&r, 0, sizeof(r));
            advisor_route_approve(w, "sb", c1, body, strlen(body), &r);
        }
        ck_assert_uint_eq(r.status, 200);
        json_decref(r.body);
    }
    j = show(c1);
    ck_assert_str_eq(str(j, "status"), "approved");
    ck_assert_str_eq(str(j, "rejection_reason"), "");
    json_decref(j);
    {
        char *h = policy_hash();
        ck_assert_str_eq(h, h1);
        free(h);
    }
    /* approved -> rejected removes the grant */
    json_decref(call(advisor_route_reject, c1, "{}", 200));
    {
        char *h = policy_hash();
        ck_assert_str_eq(h, h0);
        free(h);
    }
    /* pending -> deleted (clear) */
    submit("ex2", "example.org", "GET", "/y", c2);
    {
        struct httpd_reply r;
        memset(&r, 0, sizeof(r));
        advisor_route_clear(w, "sb", &r);
        ck_assert_uint_eq(r.status, 200);
        ck_assert_int_eq(json_integer_value(json_object_get(r.body, "cleared")), 1);
        json_decref(r.body);
        memset(&r, 0, sizeof(r));
        advisor_route_chunk_show(w, "sb", c2, true, &r);
        ck_assert_uint_eq(r.status, 404);
        json_decref(r.body);
    }
    free(h0);
    free(h1);
}
END_TEST

START_TEST(test_folded_undo_and_reconcile)
{
    char c1[64];
    char c2[64];
    char c3[64];
    char body[256];
    char *h0 = policy_hash();
    json_t *j;

    /* A PUT on the credentialed host folds into rule 'gh': capability. */
    submit("ghw", "api.github.com", "PUT", "/repos/o/r/contents/**", c1);
    j = show(c1);
    ck_assert_str_eq(str(j, "validation_result"),
                     "prover: 1 new finding\n  capability_expansion: PUT on api.github.com:443 "
                     "via /usr/bin/curl");
    snprintf(body, sizeof(body), "{\"review_token\":\"%s\"}", str(j, "review_token"));
    json_decref(j);
    /* Two identical proposals of another key: c3 supersedes c2. */
    submit("rd", "example.net", "GET", "/a", c2);
    submit("rd", "example.net", "GET", "/a", c3);
    j = show(c2);
    ck_assert_str_eq(str(j, "status"), "rejected");
    ck_assert(strstr(str(j, "rejection_reason"), "superseded by chunk ") != NULL);
    json_decref(j);
    json_decref(call(advisor_route_approve, c1, body, 200));
    /* Undo inverts the folded merge exactly. */
    {
        struct httpd_reply r;
        char *h;
        memset(&r, 0, sizeof(r));
        advisor_route_undo(w, "sb", c1, &r);
        ck_assert_uint_eq(r.status, 200);
        json_decref(r.body);
        h = policy_hash();
        ck_assert_str_eq(h, h0);
        free(h);
    }
    /* Reconcile: once an approval covers a pending chunk, the chunk is
     * rejected as covered. c4 (curl) is pending; c5 names python3 first (a
     * different key, so no supersede) and curl, with the same endpoint. */
    {
        char c4[64];
        const char *b5 = "{\"operations\":[{\"addRule\":{\"ruleName\":\"cov2\",\"rule\":{"
                         "\"endpoints\":[{\"host\":\"example.net\",\"port\":443,\"protocol\":"
                         "\"rest\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{"
                         "\"method\":\"GET\",\"path\":\"/a\"}}]}],\"binaries\":[{\"path\":"
                         "\"/usr/bin/python3\"},{\"path\":\"/usr/bin/curl\"}]}}}]}";
        struct httpd_reply r;
        const char *c5;

        submit("cov", "example.net", "GET", "/a", c4); /* supersedes c3 */
        j = show(c3);
        ck_assert_str_eq(str(j, "status"), "rejected");
        json_decref(j);
        memset(&r, 0, sizeof(r));
        advisor_route_submit(w, "sb", NULL, b5, strlen(b5), &r);
        ck_assert_uint_eq(r.status, 202);
        c5 = json_string_value(json_array_get(json_object_get(r.body, "accepted_chunk_ids"), 0));
        ck_assert_ptr_nonnull(c5);
        j = show(c5);
        snprintf(body, sizeof(body), "{\"review_token\":\"%s\"}", str(j, "review_token"));
        json_decref(j);
        json_decref(call(advisor_route_approve, c5, body, 200));
        json_decref(r.body);
        j = show(c4);
        ck_assert_str_eq(str(j, "status"), "rejected");
        ck_assert(strncmp(str(j, "rejection_reason"), "covered by active policy revision ", 34) ==
                  0);
        json_decref(j);
    }
    free(h0);
}
END_TEST

START_TEST(test_auto_mode_precedence)
{
    char c1[64];
    char c2[64];
    json_t *j;

    /* sandbox auto, no global: auto-approved, resolved_from sandbox */
    set_setting("sb", ADVISOR_SET(MODE), "\"auto\"");
    submit("a1", "one.example.com", "GET", "/x", c1);
    j = show(c1);
    ck_assert_str_eq(str(j, "status"), "approved");
    ck_assert(json_is_true(json_object_get(j, "auto_approved")));
    json_decref(j);
    /* a global manual wins over the sandbox's auto */
    set_setting("", ADVISOR_SET(MODE), "\"manual\"");
    submit("a2", "two.example.com", "GET", "/x", c2);
    j = show(c2);
    ck_assert_str_eq(str(j, "status"), "pending");
    json_decref(j);
    /* an unknown stored value reads as manual */
    set_setting("", ADVISOR_SET(MODE), "\"AUTO\"");
    {
        const char *from;
        ck_assert(!advisor_mode_auto(w->st, "sb", &from));
        ck_assert_str_eq(from, "gateway");
    }
    /* the flag off refuses submissions at the gateway */
    set_setting("", ADVISOR_SET(PROPOSALS), "false");
    {
        struct httpd_reply r;
        const char *body = "{\"operations\":[]}";
        memset(&r, 0, sizeof(r));
        advisor_route_submit(w, "sb", NULL, body, strlen(body), &r);
        ck_assert_uint_eq(r.status, 404);
        ck_assert_str_eq(str(r.body, "error"), "feature_disabled");
        json_decref(r.body);
    }
}
END_TEST

/* call()-shaped wrappers for the decisions that take no body or no id. */
static void advisor_undo_call(struct advisor_worker *wk, const char *sb, const char *id,
                              const char *body, size_t len, struct httpd_reply *r)
{
    (void)body;
    (void)len;
    advisor_route_undo(wk, sb, id, r);
}

static void approve_all_call(struct advisor_worker *wk, const char *sb, const char *id,
                             const char *body, size_t len, struct httpd_reply *r)
{
    (void)id;
    advisor_route_approve_all(wk, sb, body, len, r);
}

/* ---------------------------------------------------------------------------
 * The reference gateway's acceptance vectors (docs/advisor.md#vectors), one
 * test each. Where proviso deliberately differs, the test pins proviso's
 * behaviour and says so.
 * ------------------------------------------------------------------------- */

static const char ep_gh_l4[] = "\"host\":\"api.github.com\",\"port\":443";

/* The approve body carrying the chunk's current review token. */
static void token_body(const char *id, char *body, size_t len)
{
    json_t *j = show(id);

    snprintf(body, len, "{\"review_token\":\"%s\"}", str(j, "review_token"));
    json_decref(j);
}

static void approve_ok(const char *id)
{
    char body[256];

    token_body(id, body, sizeof(body));
    json_decref(call(advisor_route_approve, id, body, 200));
}

static void status_is(const char *id, const char *want)
{
    json_t *j = show(id);

    ck_assert_msg(strcmp(str(j, "status"), want) == 0, "chunk %s is %s, want %s", id,
                  str(j, "status"), want);
    json_decref(j);
}

static int64_t rev_now(void)
{
    struct store_revision rev;
    struct store_sandbox sb;
    int64_t n;

    ck_assert(pv_ok(store_sandbox_get(w->st, "sb", &sb)));
    ck_assert(pv_ok(store_rev_latest(w->st, sb.id, &rev)));
    n = rev.rev;
    store_revision_clear(&rev);
    store_sandbox_clear(&sb);
    return n;
}

static json_t *history_as(bool reviewer)
{
    struct httpd_reply r;
    json_t *h;

    memset(&r, 0, sizeof(r));
    advisor_route_history(w, "sb", reviewer, &r);
    ck_assert_uint_eq(r.status, 200);
    h = json_incref(json_object_get(r.body, "history"));
    json_decref(r.body);
    return h;
}

static json_t *history(void)
{
    return history_as(true);
}

static void history_is(const char *e0, const char *e1)
{
    json_t *h = history();
    size_t n = (size_t)(e0 != NULL) + (size_t)(e1 != NULL);

    ck_assert_uint_eq(json_array_size(h), n);
    if (e0 != NULL) {
        ck_assert_str_eq(str(json_array_get(h, 0), "event"), e0);
    }
    if (e1 != NULL) {
        ck_assert_str_eq(str(json_array_get(h, 1), "event"), e1);
    }
    json_decref(h);
}

struct last_event {
    const char *kind;
    char line[2048];
};

static void last_event_cb(void *arg, const struct store_event *e)
{
    struct last_event *x = arg;

    if (strcmp(e->kind, x->kind) == 0) {
        snprintf(x->line, sizeof(x->line), "%s", e->line);
    }
}

/* The newest event line of 'kind' ("" when none). */
static void last_line(const char *kind, struct last_event *x)
{
    x->kind = kind;
    x->line[0] = '\0';
    ck_assert(pv_ok(store_event_each(w->st, 0, 100000, last_event_cb, x)));
}

/* Lifecycle round trip: submit -> pending v1; approve -> history
 * [proposed, approved]; undo -> pending, [proposed]; clear -> all gone. */
START_TEST(test_vec_lifecycle_round_trip)
{
    char id[64];
    char ep[256];
    int64_t r0 = rev_now();
    json_t *j;

    /* proviso takes allow_uninspected_credentials from operators only */
    snprintf(ep, sizeof(ep), "%s,\"allow_uninspected_credentials\":true", ep_gh_l4);
    {
        char body[1024];
        rule_body(body, sizeof(body), "gh_l4", ep, "/usr/bin/curl");
        json_decref(submit_body("sb", NULL, body, 400));
    }
    /* (an L4 rule for curl on api.github.com:443 would fold into the L7
     * endpoint of 'gh' and change nothing: use a host of its own) */
    submit_rule(NULL, "org_l4", "\"host\":\"example.org\",\"port\":443", "/usr/bin/curl", id);
    j = show(id);
    ck_assert_str_eq(str(j, "status"), "pending");
    ck_assert_int_eq(json_integer_value(json_object_get(j, "draft_version")), 1);
    json_decref(j);
    approve_ok(id);
    ck_assert_int_eq(rev_now(), r0 + 1);
    history_is("proposed", "approved");
    json_decref(call(advisor_undo_call, id, "", 200));
    status_is(id, "pending");
    ck_assert_int_eq(rev_now(), r0 + 2);
    history_is("proposed", NULL);
    {
        struct httpd_reply r;
        memset(&r, 0, sizeof(r));
        advisor_route_clear(w, "sb", &r);
        ck_assert_int_eq(json_integer_value(json_object_get(r.body, "cleared")), 1);
        json_decref(r.body);
        memset(&r, 0, sizeof(r));
        advisor_route_chunk_list(w, "sb", NULL, true, &r);
        ck_assert_uint_eq(json_array_size(json_object_get(r.body, "chunks")), 0);
        json_decref(r.body);
    }
    history_is(NULL, NULL);
}
END_TEST

/* A reviewer's reason round-trips; an uncredentialed rule has no findings. */
START_TEST(test_vec_reject_reason_round_trips)
{
    char id[64];
    json_t *j;

    submit("ex", "example.com", "GET", "/x", id);
    json_decref(call(advisor_route_reject, id, "{\"reason\":\"use the internal mirror\"}", 200));
    j = show(id);
    ck_assert_str_eq(str(j, "status"), "rejected");
    ck_assert_str_eq(str(j, "rejection_reason"), "use the internal mirror");
    ck_assert_str_eq(str(j, "validation_result"), "prover: no new findings");
    json_decref(j);
}
END_TEST

/* reject(reason) -> approve -> undo leaves no stale reason. (proviso clears
 * the reason already at approval; the reference only at undo.) */
START_TEST(test_vec_undo_after_reject_clears_reason)
{
    char id[64];
    json_t *j;

    submit("ex", "example.com", "GET", "/x", id);
    json_decref(call(advisor_route_reject, id, "{\"reason\":\"no\"}", 200));
    approve_ok(id);
    json_decref(call(advisor_undo_call, id, "", 200));
    j = show(id);
    ck_assert_str_eq(str(j, "status"), "pending");
    ck_assert_str_eq(str(j, "rejection_reason"), "");
    json_decref(j);
}
END_TEST

/* A system reject (supersede) moves pending chunks only: an approved chunk
 * of the same key survives a resubmission of the same rule. */
START_TEST(test_vec_conditional_reject_spares_approved)
{
    char c1[64];
    char c2[64];
    int64_t r1;

    char body[1024];
    json_t *j;

    submit("ex", "example.com", "GET", "/x", c1);
    approve_ok(c1);
    r1 = rev_now();
    /* The same rule again adds nothing: answered already_allowed, naming
     * the rule that covers it, and never stored (docs/advisor.md#reproof). */
    rule_body(body, sizeof(body), "ex2",
              "\"host\":\"example.com\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":"
              "\"enforce\",\"rules\":[{\"allow\":{\"method\":\"GET\",\"path\":\"/x\"}}]",
              "/usr/bin/curl");
    j = submit_body("sb", NULL, body, 202);
    ck_assert_str_eq(str(j, "status"), "already_allowed");
    ck_assert_int_eq(json_integer_value(json_object_get(j, "accepted_chunks")), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "already_allowed_chunks")), 1);
    ck_assert_str_eq(
        json_string_value(json_array_get(
            json_object_get(json_array_get(json_object_get(j, "already_allowed"), 0), "covered_by"),
            0)),
        "ex");
    json_decref(j);
    (void)c2;
    status_is(c1, "approved");
    ck_assert_int_eq(rev_now(), r1);
}
END_TEST

/* Chunk ids of another sandbox are not found, for every decision. */
START_TEST(test_vec_cross_sandbox_not_found)
{
    char id[64];
    struct httpd_reply r;

    check_make_sandbox(w->st, "other", base_policy);
    submit("ex", "example.com", "GET", "/x", id);
    memset(&r, 0, sizeof(r));
    advisor_route_chunk_show(w, "other", id, true, &r);
    ck_assert_uint_eq(r.status, 404);
    json_decref(r.body);
    memset(&r, 0, sizeof(r));
    advisor_route_approve(w, "other", id, "{}", 2, &r);
    ck_assert_uint_eq(r.status, 404);
    json_decref(r.body);
    memset(&r, 0, sizeof(r));
    advisor_route_reject(w, "other", id, "{}", 2, &r);
    ck_assert_uint_eq(r.status, 404);
    json_decref(r.body);
    memset(&r, 0, sizeof(r));
    advisor_route_undo(w, "other", id, &r);
    ck_assert_uint_eq(r.status, 404);
    json_decref(r.body);
    status_is(id, "pending");
}
END_TEST

/* Auto mode, an exact L7 rule with no credential in scope: approved. */
START_TEST(test_vec_exact_l7_auto_approved)
{
    char id[64];
    json_t *j;

    set_setting("sb", ADVISOR_SET(MODE), "\"auto\"");
    submit("put", "example.com", "PUT", "/items/1", id);
    j = show(id);
    ck_assert_str_eq(str(j, "status"), "approved");
    ck_assert_str_eq(str(j, "validation_result"), "prover: no new findings");
    json_decref(j);
}
END_TEST

/* An agent's proposal supersedes a pending mechanistic chunk of the same
 * host|port|binary; both carry credential findings and stay pending in auto. */
START_TEST(test_vec_agent_supersedes_mechanistic)
{
    char m[64];
    char ag[64];
    char ep[512];
    json_t *j;

    set_setting("sb", ADVISOR_SET(MODE), "\"auto\"");
    submit_rule("mechanistic", "allow_api_github_com_443", ep_gh_l4, "/usr/bin/python3", m);
    j = show(m);
    ck_assert_str_eq(str(j, "status"), "pending");
    ck_assert(strstr(str(j, "validation_result"), "credential_reach_expansion") != NULL);
    json_decref(j);
    snprintf(ep, sizeof(ep),
             "%s,\"protocol\":\"rest\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":"
             "{\"method\":\"PUT\",\"path\":\"/repos/o/r\"}}]",
             ep_gh_l4);
    submit_rule(NULL, "gh_put", ep, "/usr/bin/python3", ag);
    j = show(ag);
    ck_assert_str_eq(str(j, "status"), "pending");
    ck_assert(strstr(str(j, "validation_result"), "credential_reach_expansion") != NULL);
    json_decref(j);
    j = show(m);
    ck_assert_str_eq(str(j, "status"), "rejected");
    ck_assert(strstr(str(j, "rejection_reason"), "superseded") != NULL);
    ck_assert(strstr(str(j, "rejection_reason"), ag) != NULL);
    json_decref(j);
}
END_TEST

/* The gate is proposer-agnostic: a mechanistic empty delta auto-approves. */
START_TEST(test_vec_mechanistic_empty_delta_auto)
{
    char id[64];
    json_t *j;

    set_setting("sb", ADVISOR_SET(MODE), "\"auto\"");
    submit_rule("mechanistic", "allow_example_com_443",
                "\"host\":\"example.com\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":"
                "\"enforce\",\"rules\":[{\"allow\":{\"method\":\"GET\",\"path\":\"/j/*\"}}]",
                "/usr/bin/curl", id);
    j = show(id);
    ck_assert_str_eq(str(j, "status"), "approved");
    ck_assert_str_eq(str(j, "analysis_mode"), "mechanistic");
    json_decref(j);
}
END_TEST

/* access: full with a credential in scope: a reach finding, pending in auto. */
START_TEST(test_vec_l7_full_credential_reach)
{
    char id[64];
    char ep[256];
    json_t *j;
    const char *v;

    set_setting("sb", ADVISOR_SET(MODE), "\"auto\"");
    snprintf(ep, sizeof(ep),
             "%s,\"protocol\":\"rest\",\"enforcement\":\"enforce\",\"access\":"
             "\"full\"",
             ep_gh_l4);
    submit_rule(NULL, "gh_full", ep, "/usr/bin/python3", id);
    j = show(id);
    v = str(j, "validation_result");
    ck_assert_str_eq(str(j, "status"), "pending");
    ck_assert_msg(
        strstr(v, "credential_reach_expansion: api.github.com:443 via /usr/bin/python3") != NULL,
        "%s", v);
    ck_assert_msg(strstr(v, "capability_expansion") == NULL, "%s", v);
    json_decref(j);
}
END_TEST

/* An empty delta waits unless the mode resolves to auto: unset, an unknown
 * stored string and an explicit manual all leave it pending. */
START_TEST(test_vec_empty_delta_needs_auto)
{
    static const char *const modes[] = {NULL, "\"autom\"", "\"manual\""};
    char id[64];
    char name[16];

    for (size_t i = 0; i < PV_ARRAY_LEN(modes); i++) {
        if (modes[i] != NULL) {
            set_setting("sb", ADVISOR_SET(MODE), modes[i]);
        }
        snprintf(name, sizeof(name), "m%zu", i);
        {
            char host[64];
            snprintf(host, sizeof(host), "h%zu.example.com", i);
            submit(name, host, "GET", "/x", id);
        }
        status_is(id, "pending");
    }
}
END_TEST

/* A global auto applies to every sandbox; the event says where it came from. */
START_TEST(test_vec_gateway_scope_auto)
{
    char id[64];
    struct last_event ev;

    set_setting("", ADVISOR_SET(MODE), "\"auto\"");
    submit("g", "example.com", "GET", "/x", id);
    status_is(id, "approved");
    last_line("CONFIG:APPROVED", &ev);
    ck_assert_msg(strstr(ev.line, "[auto:true source:agent_authored prover_delta:empty "
                                  "resolved_from:gateway version:v") != NULL,
                  "%s", ev.line);
}
END_TEST

/* An L4 rule to a credentialed host: a finding naming the host and binary;
 * the same rule to a host without a credential: none. */
START_TEST(test_vec_l4_credential_finding)
{
    char c1[64];
    char c2[64];
    json_t *j;
    const char *v;

    submit_rule(NULL, "gh_l4", ep_gh_l4, "/usr/bin/python3", c1);
    j = show(c1);
    v = str(j, "validation_result");
    ck_assert_msg(strncmp(v, "prover: ", 8) == 0 && strstr(v, " new finding") != NULL, "%s", v);
    ck_assert(strstr(v, "credential_reach_expansion") != NULL);
    ck_assert(strstr(v, "api.github.com:443") != NULL);
    json_decref(j);
    submit_rule(NULL, "plain_l4", "\"host\":\"example.org\",\"port\":443", "/usr/bin/python3", c2);
    j = show(c2);
    ck_assert_str_eq(str(j, "validation_result"), "prover: no new findings");
    json_decref(j);
}
END_TEST

/* Issue #22: show, wait and list answer a sandbox's token (reviewer false)
 * one agent view: no evidence, security_notes, rationale, proposed rule,
 * confidence or decision metadata anywhere; the admin's list and show have
 * them (issue #36 item 6 added the rest of the reviewer-only fields). */
static void agent_view_is(const json_t *c, bool reviewer)
{
    static const char *const hidden[] = {
        "evidence",   "security_notes", "rationale",     "proposed_rule", "confidence",
        "hit_count",  "decided_by",     "auto_approved", "approved_seq",  "analysis_mode",
        "created_ms", "decided_ms",     "draft_version", "first_seen_ms", "last_seen_ms",
    };

    ck_assert_str_eq(str(c, "status"), "pending");
    ck_assert_str_eq(str(c, "rule_name"), "gh_l4");
    ck_assert(json_object_get(c, "validation_result") != NULL);
    ck_assert(json_object_get(c, "rejection_reason") != NULL);
    for (size_t i = 0; i < PV_ARRAY_LEN(hidden); i++) {
        ck_assert_msg((json_object_get(c, hidden[i]) != NULL) == reviewer, "%s (reviewer %d)",
                      hidden[i], reviewer);
    }
}

START_TEST(test_vec_agent_view)
{
    static const char body[] =
        "{\"intent_summary\":\"reach the GitHub API\",\"operations\":[{\"addRule\":{"
        "\"ruleName\":\"gh_l4\",\"rule\":{\"endpoints\":[{\"host\":\"api.github.com\","
        "\"port\":443}],\"binaries\":[{\"path\":\"/usr/bin/python3\"}]}}}]}";
    char id[64];
    json_t *j = submit_body("sb", NULL, body, 202);

    snprintf(id, sizeof(id), "%s",
             json_string_value(json_array_get(json_object_get(j, "accepted_chunk_ids"), 0)));
    json_decref(j);
    for (int reviewer = 0; reviewer < 2; reviewer++) {
        struct httpd_reply r;
        memset(&r, 0, sizeof(r));
        advisor_route_chunk_list(w, "sb", NULL, reviewer != 0, &r);
        ck_assert_uint_eq(r.status, 200);
        ck_assert_uint_eq(json_array_size(json_object_get(r.body, "chunks")), 1);
        agent_view_is(json_array_get(json_object_get(r.body, "chunks"), 0), reviewer != 0);
        json_decref(r.body);
        memset(&r, 0, sizeof(r));
        advisor_route_chunk_show(w, "sb", id, reviewer != 0, &r);
        ck_assert_uint_eq(r.status, 200);
        agent_view_is(r.body, reviewer != 0);
        if (reviewer != 0) {
            ck_assert_str_eq(str(r.body, "rationale"), "reach the GitHub API");
            ck_assert(json_is_object(json_object_get(r.body, "evidence")));
        }
        json_decref(r.body);
    }
    {
        struct httpd_reply r;
        memset(&r, 0, sizeof(r));
        advisor_route_chunk_wait(w, "sb", id, 1, NULL, &r);
        ck_assert_uint_eq(r.status, 200);
        agent_view_is(r.body, false);
        json_decref(r.body);
    }
    /* Issue #36 item 6: the history is written from the same view, so the
     * confidence is the reviewer's only. */
    for (int reviewer = 0; reviewer < 2; reviewer++) {
        json_t *h = history_as(reviewer != 0);
        const char *msg = str(json_array_get(h, 0), "message");
        ck_assert_uint_eq(json_array_size(h), 1);
        ck_assert_msg((strstr(msg, "confidence") != NULL) == (reviewer != 0), "%s", msg);
        ck_assert(strstr(msg, "Rule 'gh_l4' proposed") == msg);
        json_decref(h);
    }
}
END_TEST

/* Link-local and metadata destinations: the reference records a
 * link_local_reach finding; proviso refuses them at submission, stores
 * nothing, and says why. */
START_TEST(test_vec_link_local_refused)
{
    static const char *const eps[] = {
        "\"host\":\"169.254.169.254\",\"port\":80",
        "\"host\":\"metadata.google.internal\",\"port\":80",
        "\"host\":\"**.google.internal\",\"port\":443",
    };
    char body[1024];
    struct httpd_reply r;

    for (size_t i = 0; i < PV_ARRAY_LEN(eps); i++) {
        json_t *j;
        rule_body(body, sizeof(body), "md", eps[i], "/usr/bin/curl");
        j = submit_body("sb", NULL, body, 202);
        ck_assert_int_eq(json_integer_value(json_object_get(j, "accepted_chunks")), 0);
        ck_assert_int_eq(json_integer_value(json_object_get(j, "rejected_chunks")), 1);
        ck_assert_msg(
            strstr(json_string_value(json_array_get(json_object_get(j, "rejection_reasons"), 0)),
                   "link-local") != NULL,
            "%s", json_dumps(j, 0));
        json_decref(j);
    }
    /* an always-blocked allowed_ips range fails the proposal's validation */
    {
        json_t *j;
        rule_body(body, sizeof(body), "md",
                  "\"host\":\"example.com\",\"port\":443,\"allowed_ips\":[\"169.254.0.0/16\"]",
                  "/usr/bin/curl");
        j = submit_body("sb", NULL, body, 400);
        ck_assert(strstr(str(j, "detail"), "always-blocked range") != NULL);
        json_decref(j);
    }
    memset(&r, 0, sizeof(r));
    advisor_route_chunk_list(w, "sb", NULL, true, &r);
    ck_assert_uint_eq(json_array_size(json_object_get(r.body, "chunks")), 0);
    json_decref(r.body);
}
END_TEST

/* Security notes block auto-approval even when the delta is empty. */
START_TEST(test_vec_security_flagged_not_auto)
{
    char id[64];
    json_t *j;

    set_setting("sb", ADVISOR_SET(MODE), "\"auto\"");
    submit_rule(NULL, "db", "\"host\":\"db.example.com\",\"port\":5432", "/usr/bin/psql", id);
    j = show(id);
    ck_assert_str_eq(str(j, "status"), "pending");
    ck_assert_str_eq(str(j, "validation_result"), "prover: no new findings");
    ck_assert(strstr(str(j, "security_notes"), "well-known database/service port") != NULL);
    json_decref(j);
}
END_TEST

/* A clean mechanistic duplicate, submitted under auto, does not approve the
 * reviewer-edited (credentialed) rule stored under the same key, and writes
 * no revision. */
START_TEST(test_vec_mechanistic_dedup_rechecks_edited_rule)
{
    char m[64];
    char again[64];
    int64_t r0;
    json_t *j;
    const char *plain = "\"host\":\"example.org\",\"port\":443";
    const char *edit = "{\"rule\":{\"endpoints\":[{\"host\":\"api.github.com\",\"port\":443}],"
                       "\"binaries\":[{\"path\":\"/usr/bin/python3\"}]}}";

    submit_rule("mechanistic", "allow_example_org_443", plain, "/usr/bin/python3", m);
    json_decref(call(advisor_route_edit, m, edit, 200));
    set_setting("sb", ADVISOR_SET(MODE), "\"auto\"");
    r0 = rev_now();
    submit_rule("mechanistic", "allow_example_org_443", plain, "/usr/bin/python3", again);
    ck_assert_str_eq(again, m);
    j = show(m);
    ck_assert_str_eq(str(j, "status"), "pending");
    ck_assert_int_eq(json_integer_value(json_object_get(j, "hit_count")), 2);
    ck_assert(strstr(str(j, "validation_result"), "credential_reach_expansion") != NULL);
    json_decref(j);
    ck_assert_int_eq(rev_now(), r0);
}
END_TEST

/* An invalid candidate is rejected before it reaches the inbox. */
START_TEST(test_vec_invalid_candidate_rejected)
{
    char body[1024];
    json_t *j;
    struct httpd_reply r;
    const char *reason;

    /* Valid alone, but it folds into the enforced REST endpoint of 'gh' and
     * the merged candidate is invalid (tls: skip under enforcement). */
    rule_body(body, sizeof(body), "bad",
              "\"host\":\"api.github.com\",\"port\":443,\"tls\":\"skip\"", "/usr/bin/curl");
    j = submit_body("sb", NULL, body, 202);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "rejected_chunks")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "accepted_chunks")), 0);
    reason = json_string_value(json_array_get(json_object_get(j, "rejection_reasons"), 0));
    ck_assert_msg(strncmp(reason, "chunk 'bad': ", 13) == 0 &&
                      strstr(reason, "tls: skip cannot be enforced") != NULL,
                  "%s", reason);
    json_decref(j);
    memset(&r, 0, sizeof(r));
    advisor_route_chunk_list(w, "sb", NULL, true, &r);
    ck_assert_uint_eq(json_array_size(json_object_get(r.body, "chunks")), 0);
    json_decref(r.body);
}
END_TEST

/* New credentials of sandbox sb: an api-key on example.org. With
 * 'suspended', the approved chunks are proved again in the same
 * transaction, as the credentials route does (their ids join it). */
static void set_org_credentials(json_t *suspended)
{
    struct store_sandbox sb;

    ck_assert(pv_ok(store_sandbox_get(w->st, "sb", &sb)));
    free(sb.credentials);
    sb.credentials = strdup("credentials:\n  - {name: org, type: api-key, target_hosts: "
                            "[example.org]}\n");
    ck_assert(pv_ok(store_begin(w->st)));
    ck_assert(pv_ok(store_sandbox_update(w->st, &sb)));
    if (suspended != NULL) {
        ck_assert(pv_ok(advisor_reprove_sandbox(w, sb.id, "credentials", suspended)));
    }
    ck_assert(pv_ok(store_commit(w->st)));
    store_sandbox_clear(&sb);
}

/* One rule for review tokens (docs/advisor.md#review-tokens): a policy
 * that moved under a pending chunk without changing what it reads (a new
 * base revision about another host) leaves its token good: the approval
 * proves it again and goes through. A move that changes what it reads (new
 * credentials on its host: a new finding) is refused with "inputs changed",
 * the evaluation is refreshed, and the new token works. */
START_TEST(test_vec_changed_inputs_refresh_token)
{
    char id[64];
    char id2[64];
    char old[256];
    char fresh[256];
    struct httpd_reply r;
    static const char base2[] = "version: 1\n"
                                "network_policies:\n"
                                "  gh:\n"
                                "    name: gh\n"
                                "    endpoints:\n"
                                "      - host: api.github.com\n"
                                "        port: 443\n"
                                "        protocol: rest\n"
                                "        enforcement: enforce\n"
                                "        access: read-write\n"
                                "    binaries:\n"
                                "      - path: /usr/bin/curl\n";

    submit("ex", "example.com", "GET", "/x", id);
    token_body(id, old, sizeof(old));
    memset(&r, 0, sizeof(r));
    advisor_route_base_set(w, "sb", base2, strlen(base2), "operator", &r);
    ck_assert_uint_eq(r.status, 200);
    json_decref(r.body);
    /* the base moved, what the chunk grants did not: the old token approves */
    json_decref(call(advisor_route_approve, id, old, 200));
    status_is(id, "approved");

    /* new credentials on the host of a pending chunk: it now reads a finding */
    submit_rule(NULL, "plain", "\"host\":\"example.org\",\"port\":443", "/usr/bin/curl", id2);
    token_body(id2, old, sizeof(old));
    set_org_credentials(NULL);
    memset(&r, 0, sizeof(r));
    advisor_route_approve(w, "sb", id2, old, strlen(old), &r);
    ck_assert_uint_eq(r.status, 412);
    ck_assert(strstr(json_string_value(json_object_get(r.body, "detail")), "inputs changed") !=
              NULL);
    json_decref(r.body);
    status_is(id2, "pending");
    token_body(id2, fresh, sizeof(fresh));
    ck_assert_str_ne(old, fresh);
    json_decref(call(advisor_route_approve, id2, fresh, 200));
}
END_TEST

/* The reserved '_provider_' prefix: refused at submission (proviso: the
 * whole proposal, 400; the reference: the chunk, 202), and a stored
 * chunk that carries it (however it got there) is never approved. */
START_TEST(test_vec_reserved_provider_prefix)
{
    char body[1024];
    char id[64];
    struct store_chunk c;
    struct store_sandbox sb;
    json_t *j;

    rule_body(body, sizeof(body), "_provider_github", "\"host\":\"example.com\",\"port\":443",
              "/usr/bin/curl");
    /* The model refuses the whole proposal (400, the reference's words). */
    j = submit_body("sb", NULL, body, 400);
    ck_assert_str_eq(str(j, "detail"),
                     "chunk '_provider_github' uses reserved '_provider_' rule-name prefix");
    json_decref(j);
    submit("ex", "example.com", "GET", "/x", id);
    ck_assert(pv_ok(store_sandbox_get(w->st, "sb", &sb)));
    ck_assert(pv_ok(store_chunk_get(w->st, sb.id, id, &c)));
    free(c.rule_name);
    c.rule_name = strdup("_provider_sneaky");
    ck_assert(pv_ok(store_chunk_update(w->st, &c, "pending")));
    store_chunk_clear(&c);
    store_sandbox_clear(&sb);
    token_body(id, body, sizeof(body));
    j = call(advisor_route_approve, id, body, 400);
    ck_assert(strstr(json_string_value(json_object_get(j, "detail")), "'_provider_'") != NULL);
    json_decref(j);
    status_is(id, "pending");
}
END_TEST

/* Agent-authored proposals never dedup (a new id each, the older pending
 * one superseded); mechanistic ones dedup into one chunk, which keeps its
 * approval when the same endpoint is seen again. */
START_TEST(test_vec_dedup)
{
    char a1[64];
    char a2[64];
    char m1[64];
    char m2[64];
    char m3[64];
    const char *ep = "\"host\":\"example.org\",\"port\":443";
    json_t *j;

    submit_rule(NULL, "ag", ep, "/usr/bin/curl", a1);
    submit_rule(NULL, "ag", ep, "/usr/bin/curl", a2);
    ck_assert_str_ne(a1, a2);
    submit_rule("mechanistic", "allow_example_org_443", ep, "/usr/bin/wget", m1);
    submit_rule("mechanistic", "allow_example_org_443", ep, "/usr/bin/wget", m2);
    ck_assert_str_eq(m1, m2);
    approve_ok(m1);
    submit_rule("mechanistic", "allow_example_org_443", ep, "/usr/bin/wget", m3);
    ck_assert_str_eq(m1, m3);
    j = show(m1);
    ck_assert_str_eq(str(j, "status"), "approved");
    ck_assert_int_eq(json_integer_value(json_object_get(j, "hit_count")), 3);
    json_decref(j);
}
END_TEST

/* approve-all: every pending chunk is approved in order, flagged ones only
 * when included; an explicit stale token applies nothing. proviso writes
 * one revision per approved chunk (each the candidate that was proved, see
 * docs/advisor.md#approve-all); the reference writes the batch once. */
START_TEST(test_vec_approve_all)
{
    char c1[64];
    char c2[64];
    char c3[64];
    char body[512];
    int64_t r0 = rev_now();
    json_t *j;

    submit("one", "one.example.com", "GET", "/x", c1);
    submit("two", "two.example.com", "GET", "/x", c2);
    submit_rule(NULL, "db", "\"host\":\"db.example.com\",\"port\":5432", "/usr/bin/psql", c3);
    snprintf(body, sizeof(body),
             "{\"approvals\":[{\"chunk_id\":\"%s\",\"review_token\":\"stale\"}]}", c1);
    j = call(approve_all_call, NULL, body, 200);
    json_decref(j);
    status_is(c1, "pending");
    ck_assert_int_eq(rev_now(), r0);
    json_decref(call(approve_all_call, NULL, "{}", 200));
    status_is(c1, "approved");
    status_is(c2, "approved");
    status_is(c3, "pending");
    ck_assert_int_eq(rev_now(), r0 + 2);
    json_decref(call(approve_all_call, NULL, "{\"include_security_flagged\":true}", 200));
    status_is(c3, "approved");
    ck_assert_int_eq(rev_now(), r0 + 3);
}
END_TEST

/* Editing a pending chunk recomputes its security notes before any read. */
START_TEST(test_vec_edit_recomputes_notes)
{
    char id[64];
    json_t *j;
    const char *edit = "{\"rule\":{\"endpoints\":[{\"host\":\"db.example.com\",\"port\":6379}],"
                       "\"binaries\":[{\"path\":\"/usr/bin/redis-cli\"}]}}";

    submit("ex", "example.com", "GET", "/x", id);
    j = show(id);
    ck_assert_str_eq(str(j, "security_notes"), "");
    json_decref(j);
    json_decref(call(advisor_route_edit, id, edit, 200));
    j = show(id);
    ck_assert_str_eq(str(j, "security_notes"), "Port 6379 is a well-known database/service port.");
    json_decref(j);
}
END_TEST

/* The event lines a human and an automatic approval leave. */
START_TEST(test_vec_audit_lines)
{
    char c1[64];
    char c2[64];
    char prefix[256];
    struct last_event ev;

    submit("ex", "example.com", "GET", "/x", c1);
    approve_ok(c1);
    last_line("CONFIG:APPROVED", &ev);
    snprintf(prefix, sizeof(prefix),
             "CONFIG:APPROVED [INFO] gateway approved draft chunk %s: "
             "add-rule ex endpoints=[example.com:443 protocol=rest "
             "enforcement=enforce allow=[GET /x]] binaries=[/usr/bin/curl] "
             "[version:v",
             c1);
    ck_assert_msg(strncmp(ev.line, prefix, strlen(prefix)) == 0, "%s", ev.line);
    ck_assert(strstr(ev.line, " hash:sha256:") != NULL);
    set_setting("sb", ADVISOR_SET(MODE), "\"auto\"");
    submit("ey", "example.net", "GET", "/y", c2);
    last_line("CONFIG:APPROVED", &ev);
    snprintf(prefix, sizeof(prefix),
             "CONFIG:APPROVED [INFO] auto-approved: no new prover findings "
             "(source=agent_authored) \xe2\x80\x94 chunk %s: add-rule ey ",
             c2);
    ck_assert_msg(strncmp(ev.line, prefix, strlen(prefix)) == 0, "%s", ev.line);
    ck_assert(strstr(ev.line, "[auto:true source:agent_authored prover_delta:empty "
                              "resolved_from:sandbox version:v") != NULL);
}
END_TEST

/* ===========================================================================
 * Approvals that stay proven (docs/advisor.md#reproof)
 * ========================================================================= */

static const char base_other[] = "version: 1\n"
                                 "network_policies:\n"
                                 "  other:\n"
                                 "    name: other\n"
                                 "    endpoints:\n"
                                 "      - host: other.example.com\n"
                                 "        port: 443\n"
                                 "    binaries:\n"
                                 "      - path: /usr/bin/wget\n";

static void base_set(const char *text)
{
    struct httpd_reply r;

    memset(&r, 0, sizeof(r));
    advisor_route_base_set(w, "sb", text, strlen(text), "operator", &r);
    ck_assert_msg(r.status == 200, "base: %u %s", r.status,
                  r.body != NULL ? json_dumps(r.body, 0) : "");
    json_decref(r.body);
}

/* Approve 'id' however its inputs moved: a 412 refreshes the evaluation,
 * the second try uses the refreshed token. */
static void approve_fresh(const char *id)
{
    char body[256];
    struct httpd_reply r;

    token_body(id, body, sizeof(body));
    memset(&r, 0, sizeof(r));
    advisor_route_approve(w, "sb", id, body, strlen(body), &r);
    json_decref(r.body);
    if (r.status == 412) {
        approve_ok(id);
    } else {
        ck_assert_uint_eq(r.status, 200);
    }
}

/* The same L4 rule as the policy in force: answered already_allowed, with
 * the covering rule, and nothing stored - whatever the mode. */
START_TEST(test_reproof_l4_copy_already_allowed)
{
    char body[1024];
    json_t *j;
    int64_t r0 = rev_now();

    set_setting("", ADVISOR_SET(MODE), "\"auto\"");
    rule_body(body, sizeof(body), "mine", ep_gh_l4, "/usr/bin/curl");
    j = submit_body("sb", NULL, body, 202);
    ck_assert_str_eq(str(j, "status"), "already_allowed");
    ck_assert_uint_eq(json_array_size(json_object_get(j, "accepted_chunk_ids")), 0);
    ck_assert_str_eq(
        json_string_value(json_array_get(
            json_object_get(json_array_get(json_object_get(j, "already_allowed"), 0), "covered_by"),
            0)),
        "gh");
    json_decref(j);
    /* A narrower rule the policy covers through a wider path (a changed
     * unit, so the grants list is not empty): contained, so the same. */
    rule_body(body, sizeof(body), "narrow",
              "\"host\":\"api.github.com\",\"port\":443,\"protocol\":\"rest\","
              "\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{\"method\":\"GET\","
              "\"path\":\"/repos/x\"}}]",
              "/usr/bin/curl");
    j = submit_body("sb", NULL, body, 202);
    ck_assert_str_eq(str(j, "status"), "already_allowed");
    json_decref(j);
    /* covered_by names the rule however the host is spelt (the evaluator's
     * host test: case, a trailing dot) and with a port list */
    rule_body(body, sizeof(body), "spelt",
              "\"host\":\"API.GitHub.com.\",\"ports\":[443],\"protocol\":\"rest\","
              "\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{\"method\":\"GET\","
              "\"path\":\"/repos/y\"}}]",
              "/usr/bin/curl");
    j = submit_body("sb", NULL, body, 202);
    ck_assert_str_eq(str(j, "status"), "already_allowed");
    ck_assert_str_eq(
        json_string_value(json_array_get(
            json_object_get(json_array_get(json_object_get(j, "already_allowed"), 0), "covered_by"),
            0)),
        "gh");
    json_decref(j);
    ck_assert_int_eq(rev_now(), r0);
    j = history();
    ck_assert_uint_eq(json_array_size(j), 0);
    json_decref(j);
}
END_TEST

/* An operation's outcome in a submission answer: operations[i]. */
static const json_t *op_of(const json_t *j, size_t i)
{
    const json_t *o = json_array_get(json_object_get(j, "operations"), i);
    ck_assert_msg(o != NULL, "no operations[%zu]: %s", i, json_dumps(j, 0));
    return o;
}

/* A 202 that stores nothing says why: a message and each operation's
 * outcome and reason (issue #26 item 6). An answer that stores a chunk
 * keeps the reference's shape, without either. */
START_TEST(test_submit_zero_accepted_says_why)
{
    char body[2048];
    json_t *j;

    /* one refused operation (always-blocked host) */
    rule_body(body, sizeof(body), "md", "\"host\":\"169.254.169.254\",\"port\":80",
              "/usr/bin/curl");
    j = submit_body("sb", NULL, body, 202);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "accepted_chunks")), 0);
    ck_assert_msg(strstr(str(j, "message"), "1 operation was refused") != NULL, "%s",
                  str(j, "message"));
    ck_assert_uint_eq(json_array_size(json_object_get(j, "operations")), 1);
    ck_assert_str_eq(str(op_of(j, 0), "rule_name"), "md");
    ck_assert_str_eq(str(op_of(j, 0), "outcome"), "rejected");
    ck_assert(strstr(str(op_of(j, 0), "reason"), "always-blocked") != NULL);
    ck_assert_ptr_null(json_object_get(op_of(j, 0), "chunk_id"));
    json_decref(j);
    /* two refused for two different reasons, in order, each with its own */
    snprintf(body, sizeof(body),
             "{\"operations\":[{\"addRule\":{\"ruleName\":\"bad\",\"rule\":{"
             "\"endpoints\":[{\"host\":\"api.github.com\",\"port\":443,\"tls\":\"skip\"}],"
             "\"binaries\":[{"
             "\"path\":\"/usr/bin/curl\"}]}}},{\"addRule\":{\"ruleName\":\"meta\",\"rule\":{"
             "\"endpoints\":[{\"host\":\"metadata.google.internal\",\"port\":80}],"
             "\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}]}");
    j = submit_body("sb", NULL, body, 202);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "rejected_chunks")), 2);
    ck_assert(strstr(str(j, "message"), "2 operations were refused") != NULL);
    ck_assert_str_eq(str(op_of(j, 0), "rule_name"), "bad");
    ck_assert(strstr(str(op_of(j, 0), "reason"), "chunk 'bad': ") != NULL);
    ck_assert_str_eq(str(op_of(j, 1), "rule_name"), "meta");
    ck_assert(strstr(str(op_of(j, 1), "reason"), "always-blocked") != NULL);
    json_decref(j);
    /* one accepted, one refused: the reference's shape, no message */
    snprintf(body, sizeof(body),
             "{\"operations\":[{\"addRule\":{\"ruleName\":\"ok\",\"rule\":{"
             "\"endpoints\":[{\"host\":\"a.example.com\",\"port\":443}],\"binaries\":[{"
             "\"path\":\"/usr/bin/curl\"}]}}},{\"addRule\":{\"ruleName\":\"meta\",\"rule\":{"
             "\"endpoints\":[{\"host\":\"metadata.google.internal\",\"port\":80}],"
             "\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}]}");
    j = submit_body("sb", NULL, body, 202);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "accepted_chunks")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "rejected_chunks")), 1);
    ck_assert_ptr_null(json_object_get(j, "message"));
    ck_assert_ptr_null(json_object_get(j, "operations"));
    json_decref(j);
}
END_TEST

/* Already allowed: the message says nothing was stored, the operation
 * names the rule that covers it. */
START_TEST(test_submit_already_allowed_says_why)
{
    char body[1024];
    json_t *j;

    rule_body(body, sizeof(body), "mine", ep_gh_l4, "/usr/bin/curl");
    j = submit_body("sb", NULL, body, 202);
    ck_assert_str_eq(str(j, "status"), "already_allowed");
    ck_assert(strstr(str(j, "message"), "already allows everything") != NULL);
    ck_assert_str_eq(str(op_of(j, 0), "outcome"), "already_allowed");
    ck_assert(strstr(str(op_of(j, 0), "reason"), "covered by rule 'gh'") != NULL);
    json_decref(j);
}
END_TEST

/* The lifecycle as a C API: a parsed proposal in, outcomes out, with no
 * HTTP in between (the mapper's path). */
START_TEST(test_submit_c_api)
{
    static const char good[] =
        "{\"operations\":[{\"addRule\":{\"ruleName\":\"c1\",\"rule\":{\"endpoints\":[{"
        "\"host\":\"c.example.com\",\"port\":443}],\"binaries\":[{\"path\":\"/usr/bin/"
        "curl\"}]}}},{\"addRule\":{\"ruleName\":\"c2\",\"rule\":{\"endpoints\":[{\"host\":"
        "\"169.254.1.1\",\"port\":443}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}]}";
    static const char yaml[] = "operations:\n  - addRule:\n      ruleName: y\n      rule:\n"
                               "        endpoints: [{host: y.example.com, port: 443}]\n"
                               "        binaries: [{path: /usr/bin/curl}]\n";
    struct model_diags *d = model_diags_new();
    struct advisor_proposal p;
    struct advisor_submission o;

    ck_assert(pv_ok(advisor_proposal_parse(good, strlen(good), &p, d)));
    ck_assert(pv_ok(advisor_submit(w, "sb", NULL, NULL, &p, &o)));
    ck_assert_int_eq(o.accepted, 1);
    {
        json_t *wrap = json_pack("{s:O}", "operations", o.operations);
        ck_assert_str_eq(str(op_of(wrap, 0), "outcome"), "accepted");
        ck_assert_str_eq(str(op_of(wrap, 0), "chunk_id"),
                         json_string_value(json_array_get(o.ids, 0)));
        ck_assert_str_eq(str(op_of(wrap, 1), "outcome"), "rejected");
        json_decref(wrap);
    }
    advisor_submission_clear(&o);
    /* unknown sandbox and a sandbox without proposals: refused, nothing stored */
    ck_assert_int_eq(advisor_submit(w, "nosuch", NULL, NULL, &p, &o).err, PV_ERR_NOTFOUND);
    advisor_submission_clear(&o);
    advisor_proposal_clear(&p);
    /* the lifecycle takes JSON only; garbage is the model's diagnostic */
    ck_assert_int_eq(advisor_proposal_parse(yaml, strlen(yaml), &p, d).err, PV_ERR_POLICY);
    ck_assert_ptr_null(p.model);
    ck_assert_int_eq(advisor_proposal_parse("{\"operations\":", 14, &p, d).err, PV_ERR_POLICY);
    ck_assert_uint_gt(model_diags_count(d), 0);
    model_diags_free(d);
}
END_TEST

/* The decisions as a C API: outcomes and refusals as data, no HTTP. Each
 * refusal kind is the one its route maps (a wrong kind would answer the
 * wrong status). */
START_TEST(test_decision_c_api)
{
    struct advisor_decision d;
    char id[64];
    char token[80];
    json_t *j;
    int64_t r0;

    submit("capi", "api.github.com", "POST", "/repos/capi", id);
    j = show(id);
    snprintf(token, sizeof(token), "%s", str(j, "review_token"));
    json_decref(j);
    /* refusals */
    ck_assert_int_eq(advisor_approve(w, "sb", id, "nope", &d).err, PV_ERR_CONFLICT);
    ck_assert_int_eq(d.refusal, ADVISOR_REFUSED_STALE);
    ck_assert(strstr(d.detail, "review token does not match") != NULL);
    ck_assert_int_eq(advisor_undo(w, "sb", id, &d).err, PV_ERR_CONFLICT);
    ck_assert_int_eq(d.refusal, ADVISOR_REFUSED_PRECONDITION);
    ck_assert_str_eq(d.detail, "chunk status is 'pending', expected 'approved'");
    ck_assert_int_eq(advisor_approve(w, "sb", "no-such-chunk", token, &d).err, PV_ERR_NOTFOUND);
    ck_assert_int_eq(d.refusal, ADVISOR_REFUSED_NO_CHUNK);
    ck_assert_int_eq(advisor_reject(w, "nosuch", id, NULL, &d).err, PV_ERR_NOTFOUND);
    ck_assert_int_eq(d.refusal, ADVISOR_REFUSED_NOT_FOUND);
    ck_assert_str_eq(d.detail, "sandbox not found");
    ck_assert_int_eq(advisor_approve_suggestion(w, "sb", id, token, &d).err, PV_ERR_CONFLICT);
    ck_assert(strstr(d.detail, "no narrowed suggestion") != NULL);
    status_is(id, "pending"); /* no refusal changed anything */
    /* approve: the outcome names the revision written */
    r0 = rev_now();
    ck_assert(pv_ok(advisor_approve(w, "sb", id, token, &d)));
    ck_assert_int_eq(d.refusal, ADVISOR_DECIDED);
    ck_assert_str_eq(d.chunk_id, id);
    ck_assert_str_eq(d.status, "approved");
    ck_assert_int_eq(d.policy_version, rev_now());
    ck_assert_int_gt(d.policy_version, r0);
    ck_assert_uint_eq(strlen(d.policy_hash), 64);
    ck_assert(!d.narrowed);
    /* reject an approved chunk: its grant leaves, a new revision */
    ck_assert(pv_ok(advisor_reject(w, "sb", id, "not\x01 now", &d)));
    ck_assert_str_eq(d.status, "rejected");
    ck_assert_int_eq(d.policy_version, rev_now());
    ck_assert_int_gt(d.policy_version, r0 + 1);
    j = show(id);
    ck_assert_str_eq(str(j, "rejection_reason"), "not now"); /* control bytes dropped */
    json_decref(j);
    /* the same decision twice: refused, not repeated */
    ck_assert_int_eq(advisor_reject(w, "sb", id, "again", &d).err, PV_ERR_CONFLICT);
    ck_assert_int_eq(d.refusal, ADVISOR_REFUSED_PRECONDITION);
    /* the views: data in, refusals as kinds */
    {
        struct advisor_view v;
        ck_assert(pv_ok(advisor_chunk_get(w, "sb", id, false, &v)));
        ck_assert_str_eq(str(v.json, "status"), "rejected");
        ck_assert_ptr_null(json_object_get(v.json, "evidence")); /* the agent view */
        advisor_view_clear(&v);
        ck_assert(!pv_ok(advisor_chunk_get(w, "sb", "no-such-chunk", true, &v)));
        ck_assert_int_eq(v.refusal, ADVISOR_REFUSED_NO_CHUNK);
        ck_assert_ptr_null(v.json);
        ck_assert(!pv_ok(advisor_chunk_list(w, "sb", "approvedx", true, &v)));
        ck_assert_int_eq(v.refusal, ADVISOR_REFUSED_BAD_REQUEST);
        ck_assert(!pv_ok(advisor_chunk_list(w, "nosuch", NULL, true, &v)));
        ck_assert_int_eq(v.refusal, ADVISOR_REFUSED_NOT_FOUND);
        ck_assert_str_eq(v.detail, "sandbox not found");
        ck_assert(pv_ok(advisor_chunk_list(w, "sb", "rejected", true, &v)));
        ck_assert_uint_eq(json_array_size(json_object_get(v.json, "chunks")), 1);
        advisor_view_clear(&v);
    }
}
END_TEST

/* The dormant-authority attack, through a reviewer: an L4 rule that an L7
 * rule folds away (it grants nothing at this moment) is approved anyway,
 * and the L7 rule is then undone. The approval is answered already_allowed
 * and the chunk stays rejected as covered (issue 36: before, it was
 * approved and only the re-proof at the undo suspended it), so the undo
 * returns the policy to the base. */
START_TEST(test_reproof_dormant_never_approved)
{
    char l4[64];
    char ro[64];
    char *h_base;
    char *h_now;
    char body[256];
    json_t *j;

    base_set(base_other);
    h_base = policy_hash();
    submit_rule(NULL, "l4", ep_gh_l4, "/usr/bin/curl", l4);
    submit("ro", "api.github.com", "GET", "/repos/**", ro);
    approve_ok(ro);
    /* reconcile rejected the L4 chunk (the L7 rule covers it); the
     * reviewer approves it anyway: it grants nothing at this moment */
    status_is(l4, "rejected");
    approve_fresh(l4);
    token_body(l4, body, sizeof(body));
    j = call(advisor_route_approve, l4, body, 200);
    ck_assert_str_eq(str(j, "status"), "already_allowed");
    json_decref(j);
    j = show(l4);
    ck_assert_str_eq(str(j, "status"), "rejected");
    ck_assert_msg(strstr(str(j, "rejection_reason"), "covered by active policy revision") != NULL,
                  "%s", str(j, "rejection_reason"));
    json_decref(j);
    json_decref(call(advisor_undo_call, ro, "", 200));
    status_is(ro, "pending");
    status_is(l4, "rejected");
    h_now = policy_hash();
    ck_assert_str_eq(h_now, h_base);
    free(h_base);
    free(h_now);
}
END_TEST

/* New credentials on a host an approved L4 rule reaches: the rule is
 * proved again and suspended; the answer lists it. */
START_TEST(test_reproof_credentials_suspend)
{
    char id[64];
    int64_t r1;
    json_t *suspended = json_array();

    submit_rule(NULL, "plain", "\"host\":\"example.org\",\"port\":443", "/usr/bin/curl", id);
    approve_ok(id);
    r1 = rev_now();
    set_org_credentials(suspended);
    ck_assert_uint_eq(json_array_size(suspended), 1);
    ck_assert_str_eq(json_string_value(json_array_get(suspended, 0)), id);
    json_decref(suspended);
    status_is(id, "suspended");
    ck_assert_int_eq(rev_now(), r1 + 1);
}
END_TEST

/* A change of context that grows nothing keeps the approval: an unrelated
 * base rule, and an approval reviewed with findings. No prover call is
 * needed when nothing moved under a chunk (its token names its inputs). */
START_TEST(test_reproof_unrelated_base_keeps)
{
    char id[64];
    static const char base3[] = "version: 1\n"
                                "network_policies:\n"
                                "  gh:\n"
                                "    name: gh\n"
                                "    endpoints:\n"
                                "      - host: api.github.com\n"
                                "        port: 443\n"
                                "        protocol: rest\n"
                                "        enforcement: enforce\n"
                                "        access: read-only\n"
                                "    binaries:\n"
                                "      - path: /usr/bin/curl\n"
                                "  other:\n"
                                "    name: other\n"
                                "    endpoints:\n"
                                "      - host: other.example.com\n"
                                "        port: 443\n"
                                "    binaries:\n"
                                "      - path: /usr/bin/wget\n";
    json_t *j;

    submit("wr", "api.github.com", "POST", "/repos/x", id);
    j = show(id);
    ck_assert_msg(strstr(str(j, "validation_result"), "capability_expansion") != NULL, "%s",
                  str(j, "validation_result"));
    ck_assert_ptr_nonnull(json_object_get(json_object_get(j, "evidence"), "envelope"));
    json_decref(j);
    approve_ok(id);
    base_set(base3);
    status_is(id, "approved");
    /* proved again in the new context with the proof only: the gate's
     * checks (containment, envelope) are not asked (ADVISOR_EVAL_PROOF_ONLY) */
    j = show(id);
    ck_assert_ptr_nonnull(json_object_get(json_object_get(j, "evidence"), "prover"));
    ck_assert_ptr_null(json_object_get(json_object_get(j, "evidence"), "envelope"));
    ck_assert_ptr_null(json_object_get(json_object_get(j, "evidence"), "containment"));
    json_decref(j);
    base_set(base_policy);
    status_is(id, "approved");
}
END_TEST

/* ===========================================================================
 * The auto-approval envelope (docs/advisor.md#envelope)
 * ========================================================================= */

/* The envelope's answer in a chunk's evidence. */
static void envelope_is(const char *id, bool within, const char *clause)
{
    json_t *j = show(id);
    const json_t *env = json_object_get(json_object_get(j, "evidence"), "envelope");
    const char *note = json_string_value(json_object_get(env, "note"));

    ck_assert_msg(json_is_true(json_object_get(env, "within")) == within, "envelope %s: %s",
                  within ? "within" : "outside", note != NULL ? note : "(none)");
    if (clause != NULL) {
        ck_assert_msg(note != NULL && strstr(note, clause) != NULL, "note lacks %s: %s", clause,
                      note != NULL ? note : "(none)");
    }
    json_decref(j);
}

/* The pastebin-style wide grant: no finding, yet never approved by itself;
 * the note names the clause and the grant. */
START_TEST(test_envelope_wide_grant_pending)
{
    char id[64];

    set_setting("", ADVISOR_SET(MODE), "\"auto\"");
    submit_rule(NULL, "paste", "\"host\":\"**.pastebin.com\",\"port\":443,\"access\":\"full\"",
                "/usr/bin/**", id);
    status_is(id, "pending");
    envelope_is(id, false,
                "(exact_binary): the binary is a glob: /usr/bin/** -> **.pastebin.com:443");
}
END_TEST

/* A narrow exact-binary GET rule to a public host is still approved
 * automatically. */
START_TEST(test_envelope_narrow_auto)
{
    char id[64];

    set_setting("", ADVISOR_SET(MODE), "\"auto\"");
    submit("items", "api.example.org", "GET", "/v1/items", id);
    envelope_is(id, true, NULL);
    status_is(id, "approved");
}
END_TEST

/* Each clause: opaque L4, a preset, a `*` method, a new port on a host the
 * policy reaches; a relaxed clause lets the same shape through. */
START_TEST(test_envelope_clauses)
{
    char id[64];
    char ep[512];

    set_setting("", ADVISOR_SET(MODE), "\"auto\"");
    submit_rule(NULL, "l4", "\"host\":\"example.org\",\"port\":443", "/usr/bin/curl", id);
    status_is(id, "pending");
    envelope_is(id, false, "(inspected_route): an opaque route is not inspected");
    snprintf(ep, sizeof(ep),
             "\"host\":\"docs.example.org\",\"port\":443,\"protocol\":\"rest\","
             "\"enforcement\":\"enforce\",\"access\":\"read-only\"");
    submit_rule(NULL, "ro", ep, "/usr/bin/curl", id);
    status_is(id, "pending");
    envelope_is(id, false, "(explicit_rules): access: read-only is a preset");
    submit("star", "star.example.org", "*", "/x", id);
    status_is(id, "pending");
    envelope_is(id, false, "(explicit_rules)");
    snprintf(ep, sizeof(ep),
             "\"host\":\"api.github.com\",\"port\":8443,\"protocol\":\"rest\","
             "\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{\"method\":"
             "\"GET\",\"path\":\"/x\"}}]");
    submit_rule(NULL, "port", ep, "/usr/bin/curl", id);
    status_is(id, "pending");
    envelope_is(id, false, "(no_new_port)");
    /* the new port beside one the host already has */
    snprintf(ep, sizeof(ep),
             "\"host\":\"api.github.com\",\"ports\":[443,8443],\"protocol\":"
             "\"rest\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{"
             "\"method\":\"GET\",\"path\":\"/y\"}}]");
    submit_rule(NULL, "ports", ep, "/usr/bin/curl", id);
    status_is(id, "pending");
    envelope_is(id, false, "(no_new_port)");
    /* a switch that widens the operator's path rules once merged */
    snprintf(ep, sizeof(ep),
             "\"host\":\"api.github.com\",\"port\":443,\"protocol\":\"rest\","
             "\"enforcement\":\"enforce\",\"allow_encoded_slash\":true,\"rules\":[{"
             "\"allow\":{\"method\":\"GET\",\"path\":\"/z\"}}]");
    submit_rule(NULL, "slash", ep, "/usr/bin/curl", id);
    status_is(id, "pending");
    envelope_is(id, false, "(no_endpoint_flags)");
    set_setting("", ADVISOR_SET(ENV_UNINSPECTED), "true");
    submit_rule(NULL, "l4b", "\"host\":\"example.net\",\"port\":443", "/usr/bin/curl", id);
    status_is(id, "approved");
    set_setting("", ADVISOR_SET(ENVELOPE), "false");
    submit_rule(NULL, "l4c", "\"host\":\"*.example.com\",\"port\":443", "/usr/bin/wget", id);
    envelope_is(id, true, NULL);
}
END_TEST

/* issue 36 item 3, through a submission: the policy reaches
 * *.wild.example:443 (a reviewer approved it); in auto mode a new port on a
 * name under it waits for a reviewer, as it does for an exact host, and
 * the reached port is still approved by itself. Every spelling is in
 * tests/check_advisor_envelope.c. */
START_TEST(test_envelope_wildcard_new_port)
{
    static const char rules[] = ",\"protocol\":\"rest\",\"enforcement\":\"enforce\",\"rules\":[{"
                                "\"allow\":{\"method\":\"GET\",\"path\":\"/x\"}}]";
    char id[64];
    char ep[512];

    snprintf(ep, sizeof(ep), "\"host\":\"*.wild.example\",\"port\":443%s", rules);
    submit_rule(NULL, "wild", ep, "/usr/bin/curl", id);
    approve_ok(id);
    set_setting("", ADVISOR_SET(MODE), "\"auto\"");
    snprintf(ep, sizeof(ep), "\"host\":\"a.wild.example\",\"port\":8443%s", rules);
    submit_rule(NULL, "alt", ep, "/usr/bin/curl", id);
    envelope_is(id, false, "(no_new_port): a new port on a host the policy reaches (port 8443");
    status_is(id, "pending");
    snprintf(ep, sizeof(ep), "\"host\":\"a.wild.example\",\"port\":443%s", rules);
    submit_rule(NULL, "same", ep, "/usr/bin/wget", id);
    envelope_is(id, true, NULL);
    status_is(id, "approved");
}
END_TEST

/* GraphQL grants: explicit means a named operation type and named root
 * fields. An exact query rule is approved by itself; a `*` type, a rule
 * without fields and a field glob each wait for a reviewer. */
START_TEST(test_envelope_graphql)
{
    static const struct {
        const char *host;
        const char *allow;
        const char *clause; /* NULL: within, approved */
    } cases[] = {
        {"g1.example.org", "{\"operation_type\":\"query\",\"fields\":[\"viewer\"]}", NULL},
        {"g2.example.org", "{\"operation_type\":\"*\",\"fields\":[\"viewer\"]}",
         "(explicit_rules)"},
        {"g3.example.org", "{\"operation_type\":\"mutation\"}",
         "(explicit_rules): a GraphQL rule without fields allows every root field"},
        {"g4.example.org", "{\"operation_type\":\"mutation\",\"fields\":[\"create*\"]}",
         "(explicit_rules): a GraphQL field glob"},
        {"g5.example.org",
         "{\"operation_type\":\"mutation\",\"fields\":[\"createIssue\",\"[a-z]*\"]}",
         "(explicit_rules): a GraphQL field glob"},
    };
    char id[64];
    char ep[512];

    set_setting("", ADVISOR_SET(MODE), "\"auto\"");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(ep, sizeof(ep),
                 "\"host\":\"%s\",\"port\":443,\"path\":\"/graphql\",\"protocol\":"
                 "\"graphql\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":%s}]",
                 cases[i].host, cases[i].allow);
        submit_rule(NULL, cases[i].host, ep, "/usr/bin/gh", id);
        envelope_is(id, cases[i].clause == NULL, cases[i].clause);
        status_is(id, cases[i].clause == NULL ? "approved" : "pending");
    }
}
END_TEST

/* ===========================================================================
 * Narrowed suggestions (docs/advisor.md#suggestion)
 * ========================================================================= */

static void deny(const char *host, const char *bin, const char *method, const char *path)
{
    char body[1024];
    struct advisor_view v;

    snprintf(body, sizeof(body),
             "{\"events\":[{\"host\":\"%s\",\"port\":443,\"binary\":\"%s\",\"stage\":\"l7\","
             "\"method\":\"%s\",\"path\":\"%s\"}],\"dropped\":0}",
             host, bin, method, path);
    ck_assert(pv_ok(advisor_mapper_ingest(a.mapper, "sb", body, strlen(body), &v)));
    advisor_view_clear(&v);
}

/* A wide rule outside the envelope gets the narrower rule the denials
 * show, proved approvable; the reviewer approves it in one action with its
 * own token; the result proves empty. */
START_TEST(test_suggestion_proved_and_approved)
{
    char id[64];
    char body[512];
    json_t *j;
    const json_t *sug;
    char *rule_text;

    set_setting("", ADVISOR_SET(MODE), "\"auto\"");
    deny("api.example.org", "/usr/bin/curl", "GET", "/v1/items/1");
    deny("api.example.org", "/usr/bin/curl", "GET", "/v1/items/2");
    deny("other.example.net", "/usr/bin/wget", "GET", "/x");
    submit_rule(NULL, "wide", "\"host\":\"*.example.org\",\"port\":443", "/usr/bin/**", id);
    status_is(id, "pending");
    j = show(id);
    sug = json_object_get(json_object_get(j, "evidence"), "suggestion");
    ck_assert_msg(json_is_object(sug), "no suggestion");
    rule_text = json_dumps(json_object_get(sug, "rule"), JSON_SORT_KEYS | JSON_COMPACT);
    ck_assert_str_eq(rule_text,
                     "{\"binaries\":[{\"path\":\"/usr/bin/curl\"}],\"endpoints\":[{\"enforcement\":"
                     "\"enforce\",\"host\":\"api.example.org\",\"port\":443,\"protocol\":\"rest\","
                     "\"rules\":[{\"allow\":{\"method\":\"GET\",\"path\":\"/v1/items/**\"}},{"
                     "\"allow\":{\"method\":\"HEAD\",\"path\":\"/v1/items/**\"}}]}]}");
    free(rule_text);
    ck_assert_str_eq(str(sug, "validation_result"), "prover: no new findings");
    {
        /* the agent reads the grants, the envelope's note and the
         * suggested rule in /wait's answer (never the credentials) */
        struct httpd_reply r;
        memset(&r, 0, sizeof(r));
        advisor_route_chunk_wait(w, "sb", id, 1, NULL, &r);
        ck_assert_uint_eq(r.status, 200);
        ck_assert(json_is_true(json_object_get(r.body, "timed_out")));
        ck_assert(
            json_equal(json_object_get(r.body, "suggested_rule"), json_object_get(sug, "rule")));
        /* the text it reads first names the rule it carries */
        ck_assert_ptr_nonnull(strstr(str(r.body, "validation_result"),
                                     "a narrower rule was proved approvable: it is in "
                                     "suggested_rule"));
        ck_assert_uint_eq(json_array_size(json_object_get(r.body, "grants")), 1);
        ck_assert_ptr_null(
            json_object_get(json_array_get(json_object_get(r.body, "grants"), 0), "credentials"));
        ck_assert(strstr(str(r.body, "envelope_note"), "(exact_binary)") != NULL);
        ck_assert_ptr_null(json_object_get(r.body, "evidence"));
        json_decref(r.body);
    }
    /* a stale or foreign token applies nothing */
    json_decref(call(advisor_route_approve_suggestion, id, "{\"review_token\":\"00\"}", 412));
    snprintf(body, sizeof(body), "{\"review_token\":\"%s\"}", str(sug, "review_token"));
    json_decref(j);
    json_decref(call(advisor_route_approve_suggestion, id, body, 200));
    j = show(id);
    ck_assert_str_eq(str(j, "status"), "approved");
    ck_assert_str_eq(str(j, "validation_result"), "prover: no new findings");
    ck_assert_str_eq(str(json_object_get(json_object_get(j, "evidence"), "prover"), "verdict"),
                     "empty");
    /* every reader shows what was approved: the narrowed binary and host,
     * the narrowed rule, and the grants of the narrowed rule */
    ck_assert_str_eq(str(j, "binary"), "/usr/bin/curl");
    ck_assert_str_eq(str(j, "host"), "api.example.org");
    ck_assert_int_eq(json_integer_value(json_object_get(j, "port")), 443);
    rule_text = json_dumps(json_object_get(j, "proposed_rule"), JSON_SORT_KEYS | JSON_COMPACT);
    ck_assert_ptr_nonnull(rule_text);
    ck_assert_ptr_nonnull(strstr(rule_text, "\"api.example.org\""));
    ck_assert_ptr_null(strstr(rule_text, "*.example.org"));
    free(rule_text);
    ck_assert_str_eq(
        str(json_array_get(json_object_get(
                               json_object_get(json_object_get(j, "evidence"), "prover"), "grants"),
                           0),
            "binary"),
        "/usr/bin/curl");
    json_decref(j);
}
END_TEST

/* Nothing the denials show narrows it: no suggestion rather than a guess. */
START_TEST(test_suggestion_none_without_denials)
{
    char id[64];
    json_t *j;

    set_setting("", ADVISOR_SET(MODE), "\"auto\"");
    submit_rule(NULL, "wide", "\"host\":\"*.example.org\",\"port\":443", "/usr/bin/**", id);
    j = show(id);
    ck_assert_ptr_null(json_object_get(json_object_get(j, "evidence"), "suggestion"));
    json_decref(j);
    json_decref(call(advisor_route_approve_suggestion, id, "{\"review_token\":\"00\"}", 409));
}
END_TEST

/* A GraphQL grant is never "narrowed" into a REST rule (which would allow
 * other requests than the operations asked for and not merge into the
 * graphql endpoint): a `*` operation type gives no suggestion; explicit
 * GraphQL rules are kept while the binary glob is narrowed. */
START_TEST(test_suggestion_graphql)
{
    char id[64];
    json_t *j;
    const json_t *sug;
    char *rule_text;

    set_setting("", ADVISOR_SET(MODE), "\"auto\"");
    deny("gql.example.org", "/usr/bin/gh", "POST", "/graphql");
    submit_rule(NULL, "gqlwide",
                "\"host\":\"gql.example.org\",\"port\":443,\"path\":\"/graphql\",\"protocol\":"
                "\"graphql\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{"
                "\"operation_type\":\"*\"}}]",
                "/usr/bin/**", id);
    status_is(id, "pending");
    j = show(id);
    ck_assert_ptr_null(json_object_get(json_object_get(j, "evidence"), "suggestion"));
    json_decref(j);
    submit_rule(NULL, "gqlbin",
                "\"host\":\"gql.example.org\",\"port\":443,\"path\":\"/graphql\",\"protocol\":"
                "\"graphql\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{"
                "\"operation_type\":\"mutation\",\"fields\":[\"createIssue\"]}}]",
                "/usr/bin/**", id);
    status_is(id, "pending");
    j = show(id);
    sug = json_object_get(json_object_get(j, "evidence"), "suggestion");
    ck_assert_msg(json_is_object(sug), "no suggestion");
    rule_text = json_dumps(json_object_get(sug, "rule"), JSON_SORT_KEYS | JSON_COMPACT);
    ck_assert_str_eq(rule_text,
                     "{\"binaries\":[{\"path\":\"/usr/bin/gh\"}],\"endpoints\":[{\"enforcement\":"
                     "\"enforce\",\"host\":\"gql.example.org\",\"path\":\"/graphql\",\"port\":443,"
                     "\"protocol\":\"graphql\",\"rules\":[{\"allow\":{\"fields\":[\"createIssue\"],"
                     "\"operation_type\":\"mutation\"}}]}]}");
    free(rule_text);
    json_decref(j);
}
END_TEST

/* Does curl's 'method path' to 'host':443 pass under 'p'? */
static bool policy_allows(const struct model_policy *p, const char *host, const char *method,
                          const char *path)
{
    const char *bin = "/usr/bin/curl";
    struct model_request rq;
    struct model_decision d;

    memset(&rq, 0, sizeof(rq));
    rq.binaries = &bin;
    rq.nbinaries = 1;
    rq.host = host;
    rq.host_len = strlen(host);
    rq.port = 443;
    rq.method = method;
    rq.target = path;
    rq.target_len = strlen(path);
    model_decide(p, &rq, &d);
    return d.grant;
}

/* ... under the base policy with 'rule' merged in. */
static bool rule_allows(const json_t *rule, const char *host, const char *method, const char *path)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *base =
        model_policy_load("base", base_policy, strlen(base_policy), MODEL_FMT_YAML, d);
    struct model_policy *p = base != NULL ? model_policy_merge_rule(base, "r", rule, d) : NULL;
    bool ok;

    ck_assert_ptr_nonnull(p);
    ok = policy_allows(p, host, method, path);
    model_policy_free(p);
    model_policy_free(base);
    model_diags_free(d);
    return ok;
}

/* ... under the sandbox's effective policy. */
static bool effective_allows(const char *host, const char *method, const char *path)
{
    struct store_sandbox sb;
    struct store_revision rev;
    struct model_diags *d = model_diags_new();
    struct model_policy *p;
    size_t len = 0;
    char *yaml;
    bool ok;

    ck_assert(pv_ok(store_sandbox_get(w->st, "sb", &sb)));
    ck_assert(pv_ok(store_rev_latest(w->st, sb.id, &rev)));
    yaml = store_blob_get(w->st, rev.blob, &len);
    ck_assert_ptr_nonnull(yaml);
    p = model_policy_load("effective", yaml, len, MODEL_FMT_YAML, d);
    ck_assert_ptr_nonnull(p);
    ok = policy_allows(p, host, method, path);
    model_policy_free(p);
    model_diags_free(d);
    free(yaml);
    store_revision_clear(&rev);
    store_sandbox_clear(&sb);
    return ok;
}

/* The chunk's suggestion (a new reference), or NULL. */
static json_t *suggestion_of(const char *id)
{
    json_t *j = show(id);
    json_t *sug = json_incref(json_object_get(json_object_get(j, "evidence"), "suggestion"));

    json_decref(j);
    return sug;
}

/* issue 36 item 2: denials outside the proposal never steer its
 * suggestion. The sandbox reports GET /admin/secret/1 and /2, then
 * proposes any method under /x/: no suggestion (before, GET and HEAD
 * under /admin/secret/ was offered and approving it allowed
 * /admin/secret/3). Denials inside
 * the proposal shape one, within it, and approving it still denies the
 * admin path. */
START_TEST(test_suggestion_inside_proposal)
{
    static const char ep[] =
        "\"host\":\"api.example.org\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":"
        "\"enforce\",\"rules\":[{\"allow\":{\"method\":\"*\",\"path\":\"/x/**\"}}]";
    char id[64];
    char body[512];
    json_t *sug;
    struct httpd_reply r;

    set_setting("", ADVISOR_SET(MODE), "\"auto\"");
    deny("api.example.org", "/usr/bin/curl", "GET", "/admin/secret/1");
    deny("api.example.org", "/usr/bin/curl", "GET", "/admin/secret/2");
    submit_rule(NULL, "x", ep, "/usr/bin/curl", id);
    status_is(id, "pending");
    ck_assert_ptr_null(suggestion_of(id));
    memset(&r, 0, sizeof(r));
    advisor_route_chunk_wait(w, "sb", id, 1, NULL, &r);
    ck_assert_uint_eq(r.status, 200);
    ck_assert_ptr_null(json_object_get(r.body, "suggested_rule"));
    json_decref(r.body);
    /* denials inside the proposal: the suggestion is theirs, within it */
    deny("api.example.org", "/usr/bin/curl", "GET", "/x/a/1");
    deny("api.example.org", "/usr/bin/curl", "GET", "/x/a/2");
    submit_rule(NULL, "x", ep, "/usr/bin/curl", id);
    sug = suggestion_of(id);
    ck_assert_msg(sug != NULL, "no suggestion");
    ck_assert(rule_allows(json_object_get(sug, "rule"), "api.example.org", "GET", "/x/a/3"));
    ck_assert(
        !rule_allows(json_object_get(sug, "rule"), "api.example.org", "GET", "/admin/secret/3"));
    ck_assert(!rule_allows(json_object_get(sug, "rule"), "api.example.org", "GET", "/x/b"));
    snprintf(body, sizeof(body), "{\"review_token\":\"%s\"}", str(sug, "review_token"));
    json_decref(sug);
    json_decref(call(advisor_route_approve_suggestion, id, body, 200));
    ck_assert(effective_allows("api.example.org", "GET", "/x/a/3"));
    ck_assert(!effective_allows("api.example.org", "GET", "/admin/secret/3"));
}
END_TEST

/* `access: full` with a deny rule: the deny rule's requests neither shape
 * the suggestion nor pass it; the suggestion keeps the deny rule. */
START_TEST(test_suggestion_keeps_deny_rule)
{
    json_t *sug;
    char id[64];

    set_setting("", ADVISOR_SET(MODE), "\"auto\"");
    deny("api2.example.org", "/usr/bin/curl", "GET", "/v1/admin/x");
    deny("api2.example.org", "/usr/bin/curl", "GET", "/v1/items/1");
    submit_rule(NULL, "full",
                "\"host\":\"api2.example.org\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":"
                "\"enforce\",\"access\":\"full\",\"deny_rules\":[{\"method\":\"GET\",\"path\":"
                "\"/v1/admin/**\"}]",
                "/usr/bin/curl", id);
    status_is(id, "pending");
    sug = suggestion_of(id);
    ck_assert_msg(sug != NULL, "no suggestion");
    ck_assert(rule_allows(json_object_get(sug, "rule"), "api2.example.org", "GET", "/v1/items/2"));
    ck_assert(!rule_allows(json_object_get(sug, "rule"), "api2.example.org", "GET", "/v1/admin/y"));
    ck_assert(!rule_allows(json_object_get(sug, "rule"), "api2.example.org", "GET", "/v1/other"));
    json_decref(sug);
}
END_TEST

/* An endpoint path scope: denials outside it steer nothing, and the
 * suggestion keeps the scope (before, the admin denials made it GET and
 * HEAD under /admin/secret/ without a scope). */
START_TEST(test_suggestion_keeps_path_scope)
{
    static const char ep[] =
        "\"host\":\"api3.example.org\",\"port\":443,\"path\":\"/x/**\",\"protocol\":\"rest\","
        "\"enforcement\":\"enforce\",\"access\":\"full\"";
    json_t *sug;
    const json_t *rule;
    char id[64];

    set_setting("", ADVISOR_SET(MODE), "\"auto\"");
    deny("api3.example.org", "/usr/bin/curl", "GET", "/admin/secret/1");
    deny("api3.example.org", "/usr/bin/curl", "GET", "/admin/secret/2");
    for (int round = 0; round < 2; round++) {
        submit_rule(NULL, "scoped", ep, "/usr/bin/curl", id);
        status_is(id, "pending");
        sug = suggestion_of(id);
        ck_assert_msg(sug != NULL, "no suggestion");
        rule = json_object_get(sug, "rule");
        ck_assert_str_eq(json_string_value(json_object_get(
                             json_array_get(json_object_get(rule, "endpoints"), 0), "path")),
                         "/x/**");
        ck_assert(!rule_allows(rule, "api3.example.org", "GET", "/admin/secret/3"));
        ck_assert(!rule_allows(rule, "api3.example.org", "POST", "/x/a/1"));
        /* the second round: a denial inside the scope shapes the path */
        ck_assert(rule_allows(rule, "api3.example.org", "GET", "/x/b") == (round == 0));
        json_decref(sug);
        deny("api3.example.org", "/usr/bin/curl", "GET", "/x/a/1");
    }
}
END_TEST

/* Denials inside the proposal can still shape a rule wider than it (two
 * paths share a parent the proposal does not allow): the prover's
 * containment check keeps it from being offered. */
START_TEST(test_suggestion_within_proposal_proved)
{
    char id[64];

    set_setting("", ADVISOR_SET(MODE), "\"auto\"");
    deny("api4.example.org", "/usr/bin/curl", "GET", "/x/a/1");
    deny("api4.example.org", "/usr/bin/curl", "GET", "/x/b/1");
    submit_rule(NULL, "two",
                "\"host\":\"api4.example.org\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":"
                "\"enforce\",\"rules\":[{\"allow\":{\"method\":\"*\",\"path\":\"/x/a/**\"}},{"
                "\"allow\":{\"method\":\"*\",\"path\":\"/x/b/**\"}}]",
                "/usr/bin/curl", id);
    status_is(id, "pending");
    ck_assert_ptr_null(suggestion_of(id));
}
END_TEST

/* A suggestion must be narrower, not only within: GET on every path but
 * one, spelt with a `*` rule that a deny rule cancels, is outside the
 * envelope; its rewrite (GET and HEAD on every path, the deny rule kept)
 * allows exactly the same requests, so the prover finds nothing the
 * proposal allows beyond it and nothing is offered (before, the deny rule
 * was dropped and the wider rule offered). */
START_TEST(test_suggestion_narrower_only)
{
    char id[64];

    set_setting("", ADVISOR_SET(MODE), "\"auto\"");
    deny("eq.example.org", "/usr/bin/curl", "GET", "/1");
    submit_rule(
        NULL, "same",
        "\"host\":\"eq.example.org\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":"
        "\"enforce\",\"rules\":[{\"allow\":{\"method\":\"GET\",\"path\":\"/**\"}},{\"allow\":"
        "{\"method\":\"*\",\"path\":\"/only\"}}],\"deny_rules\":[{\"method\":\"*\",\"path\":"
        "\"/only\"}]",
        "/usr/bin/curl", id);
    status_is(id, "pending");
    ck_assert_ptr_null(suggestion_of(id));
}
END_TEST

/* A worker is whole or NULL: without its store (a store that was down,
 * out of memory) advisor_worker_new says so with NULL, which the pool and
 * the mapper's flusher make again later, instead of a worker that answers
 * 500 for the process's life (or one without its prover client, whose
 * first proof read through NULL). */
START_TEST(test_worker_whole_or_null)
{
    char keep[sizeof(a.cfg.store)];
    struct advisor_worker *w2;

    memcpy(keep, a.cfg.store, sizeof(keep));
    snprintf(a.cfg.store, sizeof(a.cfg.store), "%s/missing", dir);
    w2 = advisor_worker_new(&a);
    memcpy(a.cfg.store, keep, sizeof(keep));
    ck_assert_msg(w2 == NULL, "a worker without its store (st %p)", (void *)w2->st);
    w2 = advisor_worker_new(&a);
    ck_assert_ptr_nonnull(w2);
    ck_assert_ptr_nonnull(w2->st);
    ck_assert_ptr_nonnull(w2->pc);
    advisor_worker_free(w2);
}
END_TEST

struct mech_count {
    size_t n;
};

static void mech_one(void *arg, const struct store_chunk *c)
{
    struct mech_count *x = arg;

    if (strcmp(c->analysis_mode, "mechanistic") == 0) {
        x->n++;
    }
}

/* The mechanistic chunks of sandbox "sb". */
static size_t mech_chunks(void)
{
    struct store_sandbox sb;
    struct mech_count x = {0};

    ck_assert(pv_ok(store_sandbox_get(w->st, "sb", &sb)));
    ck_assert(pv_ok(store_chunk_each(w->st, sb.id, NULL, mech_one, &x)));
    store_sandbox_clear(&sb);
    return x.n;
}

/* The mapper's flusher whose worker could not be made at its start (the
 * store's directory was away) makes it at the next flush that has denials:
 * the denial becomes a mechanistic chunk, not a table never flushed. */
START_TEST(test_flusher_worker_made_again)
{
    char away[sizeof(dir) + 8];
    const char *ev = "{\"events\":[{\"host\":\"flush.example.com\",\"port\":443,\"binary\":"
                     "\"/usr/bin/curl\",\"method\":\"GET\",\"path\":\"/x\"}]}";
    struct advisor_mapper *m;
    struct advisor_view v;
    size_t n = 0;

    if (check_store_pg() != NULL) {
        return; /* the store is not a directory that can be moved away */
    }
    snprintf(away, sizeof(away), "%s.away", dir);
    ck_assert_int_eq(rename(dir, away), 0);
    m = advisor_mapper_new(&a, 50, true);
    usleep(300 * 1000); /* the flusher's start: store_open fails */
    ck_assert_int_eq(rename(away, dir), 0);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(mech_chunks(), 0);
    ck_assert(pv_ok(advisor_mapper_ingest(m, "sb", ev, strlen(ev), &v)));
    advisor_view_clear(&v);
    for (int i = 0; i < 300 && n == 0; i++) {
        usleep(50 * 1000);
        n = mech_chunks();
    }
    advisor_mapper_free(m);
    ck_assert_msg(n == 1, "the denial was not flushed: %zu mechanistic chunks", n);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("advisor_chunk");
    TCase *t = tcase_create("lifecycle");

    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_manual_transitions);
    tcase_add_test(t, test_folded_undo_and_reconcile);
    tcase_add_test(t, test_auto_mode_precedence);
    suite_add_tcase(s, t);
    t = tcase_create("vectors");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_vec_lifecycle_round_trip);
    tcase_add_test(t, test_vec_reject_reason_round_trips);
    tcase_add_test(t, test_vec_undo_after_reject_clears_reason);
    tcase_add_test(t, test_vec_conditional_reject_spares_approved);
    tcase_add_test(t, test_vec_cross_sandbox_not_found);
    tcase_add_test(t, test_vec_exact_l7_auto_approved);
    tcase_add_test(t, test_vec_agent_supersedes_mechanistic);
    tcase_add_test(t, test_vec_mechanistic_empty_delta_auto);
    tcase_add_test(t, test_vec_l7_full_credential_reach);
    tcase_add_test(t, test_vec_empty_delta_needs_auto);
    tcase_add_test(t, test_vec_gateway_scope_auto);
    tcase_add_test(t, test_vec_l4_credential_finding);
    tcase_add_test(t, test_vec_agent_view);
    tcase_add_test(t, test_vec_link_local_refused);
    tcase_add_test(t, test_vec_security_flagged_not_auto);
    tcase_add_test(t, test_vec_mechanistic_dedup_rechecks_edited_rule);
    tcase_add_test(t, test_vec_invalid_candidate_rejected);
    tcase_add_test(t, test_vec_changed_inputs_refresh_token);
    tcase_add_test(t, test_vec_reserved_provider_prefix);
    tcase_add_test(t, test_vec_dedup);
    tcase_add_test(t, test_reproof_l4_copy_already_allowed);
    tcase_add_test(t, test_submit_zero_accepted_says_why);
    tcase_add_test(t, test_submit_already_allowed_says_why);
    tcase_add_test(t, test_submit_c_api);
    tcase_add_test(t, test_decision_c_api);
    tcase_add_test(t, test_reproof_dormant_never_approved);
    tcase_add_test(t, test_reproof_credentials_suspend);
    tcase_add_test(t, test_reproof_unrelated_base_keeps);
    tcase_add_test(t, test_envelope_wide_grant_pending);
    tcase_add_test(t, test_envelope_narrow_auto);
    tcase_add_test(t, test_envelope_clauses);
    tcase_add_test(t, test_envelope_graphql);
    tcase_add_test(t, test_envelope_wildcard_new_port);
    tcase_add_test(t, test_suggestion_proved_and_approved);
    tcase_add_test(t, test_suggestion_none_without_denials);
    tcase_add_test(t, test_suggestion_graphql);
    tcase_add_test(t, test_suggestion_inside_proposal);
    tcase_add_test(t, test_suggestion_keeps_deny_rule);
    tcase_add_test(t, test_suggestion_keeps_path_scope);
    tcase_add_test(t, test_suggestion_within_proposal_proved);
    tcase_add_test(t, test_suggestion_narrower_only);
    tcase_add_test(t, test_vec_approve_all);
    tcase_add_test(t, test_vec_edit_recomputes_notes);
    tcase_add_test(t, test_vec_audit_lines);
    suite_add_tcase(s, t);
    t = tcase_create("workers");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_worker_whole_or_null);
    tcase_add_test(t, test_flusher_worker_made_again);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *r = srunner_create(suite());
    int failed;

    curl_global_init(CURL_GLOBAL_DEFAULT);
    srunner_run_all(r, CK_NORMAL);
    failed = srunner_ntests_failed(r);
    srunner_free(r);
    curl_global_cleanup();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
