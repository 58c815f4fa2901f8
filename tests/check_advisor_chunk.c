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

#include "advisor/advisor.h"
#include "advisor/store.h"
#include "model/model.h"

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
    advisor_chunk_show(w, "sb", id, true, &r);
    ck_assert_uint_eq(r.status, 200);
    return r.body;
}

static const char *str(const json_t *j, const char *k)
{
    const char *s = json_string_value(json_object_get(j, k));
    ck_assert_msg(s != NULL, "no string '%s'", k);
    return s;
}

/* Submit one rule; the new chunk id into 'id'. */
static void submit(const char *name, const char *host, const char *method, const char *path,
                   char id[64])
{
    char body[1024];
    struct httpd_reply r;

    snprintf(body, sizeof(body),
             "{\"operations\":[{\"addRule\":{\"ruleName\":\"%s\",\"rule\":{\"endpoints\":[{"
             "\"host\":\"%s\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":\"enforce\","
             "\"rules\":[{\"allow\":{\"method\":\"%s\",\"path\":\"%s\"}}]}],\"binaries\":[{"
             "\"path\":\"/usr/bin/curl\"}]}}}]}",
             name, host, method, path);
    memset(&r, 0, sizeof(r));
    advisor_submit(w, "sb", NULL, body, strlen(body), &r);
    ck_assert_uint_eq(r.status, 202);
    ck_assert_int_eq(json_integer_value(json_object_get(r.body, "accepted_chunks")), 1);
    snprintf(id, 64, "%s", json_string_value(json_array_get(
                               json_object_get(r.body, "accepted_chunk_ids"), 0)));
    json_decref(r.body);
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

static void set_setting(const char *scope, const char *key, const char *json)
{
    ck_assert(pv_ok(store_setting_put(w->st, scope, key, json)));
}

static void setup(void)
{
    char err[512];
    char exe[1024];
    const char *build = getenv("PV_BUILDDIR");
    struct store_sandbox sb;
    struct store_revision rev;
    char blob[65];
    char hash[65];
    struct model_diags *d = model_diags_new();
    struct model_policy *p;

    snprintf(dir, sizeof(dir), "/tmp/pv-chunk.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    memset(&a, 0, sizeof(a));
    snprintf(a.cfg.data_dir, sizeof(a.cfg.data_dir), "%s", dir);
    a.cfg.prover_timeout_ms = 30000;
    pthread_mutex_init(&a.prover_mu, NULL);
    pthread_mutex_init(&a.change_mu, NULL);
    pthread_cond_init(&a.change_cv, NULL);
    for (size_t i = 0; i < ADVISOR_LOCK_STRIPES; i++) {
        pthread_mutex_init(&a.stripes[i], NULL);
    }
    a.tokens = advisor_tokens_new();
    ck_assert_msg(pv_ok(advisor_audit_open(dir, err, sizeof(err))), "%s", err);
    a.group = store_group_open(dir, err, sizeof(err));
    ck_assert_msg(a.group != NULL, "%s", err);
    snprintf(exe, sizeof(exe), "%s/proviso-prover", build != NULL ? build : ".");
    child = advisor_child_start(&a, exe, err, sizeof(err));
    ck_assert_msg(child != NULL, "%s", err);
    w = advisor_worker_new(&a);
    ck_assert_ptr_nonnull(w->st);
    /* A sandbox "sb" with the base policy as revision 1. */
    p = model_policy_load("base", base_policy, strlen(base_policy), MODEL_FMT_YAML, d);
    ck_assert_ptr_nonnull(p);
    {
        char *yaml = model_policy_to_yaml(p, NULL);
        ck_assert(pv_ok(model_policy_sha256(p, hash)));
        ck_assert(pv_ok(store_begin(w->st)));
        memset(&sb, 0, sizeof(sb));
        sb.name = (char *)"sb";
        sb.token_sha256 = (char *)"00";
        sb.credentials = (char *)"credentials:\n  - {name: gh, type: github, target_hosts: "
                                 "[api.github.com]}\n";
        sb.boundary = (char *)"";
        ck_assert(pv_ok(store_sandbox_create(w->st, &sb)));
        ck_assert(pv_ok(store_blob_put(w->st, yaml, strlen(yaml), blob)));
        memset(&rev, 0, sizeof(rev));
        rev.blob = blob;
        rev.hash = hash;
        rev.cause = (char *)"create";
        ck_assert(pv_ok(store_base_put(w->st, sb.id, &rev)));
        rev.base_rev = rev.rev;
        ck_assert(pv_ok(store_rev_put(w->st, sb.id, &rev)));
        ck_assert(pv_ok(store_commit(w->st)));
        free(yaml);
    }
    model_policy_free(p);
    model_diags_free(d);
    set_setting("", ADVISOR_SET_PROPOSALS, "true");
}

static void teardown(void)
{
    char cmd[128];

    advisor_worker_free(w);
    advisor_child_stop(child, 5000);
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
    json_decref(call(advisor_approve, c1, "{\"review_token\":\"nope\"}", 412));
    json_decref(call(advisor_approve, c1, body, 200));
    h1 = policy_hash();
    ck_assert_str_ne(h0, h1);
    /* approved -> approved is refused */
    json_decref(call(advisor_approve, c1, body, 409));
    /* approved -> pending (undo) restores the exact policy */
    {
        struct httpd_reply r;
        memset(&r, 0, sizeof(r));
        advisor_undo(w, "sb", c1, &r);
        ck_assert_uint_eq(r.status, 200);
        json_decref(r.body);
    }
    {
        char *h = policy_hash();
        ck_assert_str_eq(h, h0);
        free(h);
    }
    /* pending -> rejected, with the reason kept */
    json_decref(call(advisor_reject, c1, "{\"reason\":\"not now\"}", 200));
    j = show(c1);
    ck_assert_str_eq(str(j, "status"), "rejected");
    ck_assert_str_eq(str(j, "rejection_reason"), "not now");
    snprintf(body, sizeof(body), "{\"review_token\":\"%s\"}", str(j, "review_token"));
    json_decref(j);
    /* rejected -> approved clears the stale reason */
    {
        struct httpd_reply r;
        memset(&r, 0, sizeof(r));
        advisor_approve(w, "sb", c1, body, strlen(body), &r);
        if (r.status == 412) { /* the evaluation was refreshed by undo: refetch */
            json_decref(r.body);
            j = show(c1);
            snprintf(body, sizeof(body), "{\"review_token\":\"%s\"}", str(j, "review_token"));
            json_decref(j);
            memset(&r, 0, sizeof(r));
            advisor_approve(w, "sb", c1, body, strlen(body), &r);
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
    json_decref(call(advisor_reject, c1, "{}", 200));
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
        advisor_clear(w, "sb", &r);
        ck_assert_uint_eq(r.status, 200);
        ck_assert_int_eq(json_integer_value(json_object_get(r.body, "cleared")), 1);
        json_decref(r.body);
        memset(&r, 0, sizeof(r));
        advisor_chunk_show(w, "sb", c2, true, &r);
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
    json_decref(call(advisor_approve, c1, body, 200));
    /* Undo inverts the folded merge exactly. */
    {
        struct httpd_reply r;
        char *h;
        memset(&r, 0, sizeof(r));
        advisor_undo(w, "sb", c1, &r);
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
        advisor_submit(w, "sb", NULL, b5, strlen(b5), &r);
        ck_assert_uint_eq(r.status, 202);
        c5 = json_string_value(json_array_get(json_object_get(r.body, "accepted_chunk_ids"), 0));
        ck_assert_ptr_nonnull(c5);
        j = show(c5);
        snprintf(body, sizeof(body), "{\"review_token\":\"%s\"}", str(j, "review_token"));
        json_decref(j);
        json_decref(call(advisor_approve, c5, body, 200));
        json_decref(r.body);
        j = show(c4);
        ck_assert_str_eq(str(j, "status"), "rejected");
        ck_assert(strncmp(str(j, "rejection_reason"), "covered by active policy revision ",
                          34) == 0);
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
    set_setting("sb", ADVISOR_SET_MODE, "\"auto\"");
    submit("a1", "one.example.com", "GET", "/x", c1);
    j = show(c1);
    ck_assert_str_eq(str(j, "status"), "approved");
    ck_assert(json_is_true(json_object_get(j, "auto_approved")));
    json_decref(j);
    /* a global manual wins over the sandbox's auto */
    set_setting("", ADVISOR_SET_MODE, "\"manual\"");
    submit("a2", "two.example.com", "GET", "/x", c2);
    j = show(c2);
    ck_assert_str_eq(str(j, "status"), "pending");
    json_decref(j);
    /* an unknown stored value reads as manual */
    set_setting("", ADVISOR_SET_MODE, "\"AUTO\"");
    {
        const char *from;
        ck_assert(!advisor_mode_auto(w->st, "sb", &from));
        ck_assert_str_eq(from, "gateway");
    }
    /* the flag off refuses submissions at the gateway */
    set_setting("", ADVISOR_SET_PROPOSALS, "false");
    {
        struct httpd_reply r;
        const char *body = "{\"operations\":[]}";
        memset(&r, 0, sizeof(r));
        advisor_submit(w, "sb", NULL, body, strlen(body), &r);
        ck_assert_uint_eq(r.status, 404);
        ck_assert_str_eq(str(r.body, "error"), "feature_disabled");
        json_decref(r.body);
    }
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
