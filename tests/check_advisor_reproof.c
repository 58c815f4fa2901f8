/* SPDX-License-Identifier: Apache-2.0 */
/* check_advisor_reproof.c - a removal never widens (docs/advisor.md#reproof)
 *
 * A recomposition that removes or rejects something - an undo, a reject of
 * an approved chunk, a new base revision - may not grant a request that
 * neither the effective policy before it nor the new base grants; a chunk
 * that would gain one is suspended with the witness as its reason. Driven
 * through the advisor's own functions on a scratch store, with the real
 * proviso-prover from the build as its child (as check_advisor_chunk.c).
 * The attack of issue 36 item 1 is one case; the property test runs random
 * sequences of approvals, undos, rejects and base changes and checks every
 * removal against the concrete evaluator (model_decide) on a grid of
 * requests - not only the cases someone thought of.
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

/* The base of the attack: curl may GET under /repos/ on a credentialed host. */
static const char base_repos[] = "version: 1\n"
                                 "network_policies:\n"
                                 "  gh:\n"
                                 "    name: gh\n"
                                 "    endpoints:\n"
                                 "      - host: api.github.com\n"
                                 "        port: 443\n"
                                 "        protocol: rest\n"
                                 "        enforcement: enforce\n"
                                 "        rules:\n"
                                 "          - allow: {method: GET, path: \"/repos/**\"}\n"
                                 "    binaries:\n"
                                 "      - path: /usr/bin/curl\n";

static void setup(void)
{
    char err[512];
    char exe[1024];
    const char *build = getenv("PV_BUILDDIR");

    snprintf(dir, sizeof(dir), "/tmp/pv-reproof.XXXXXX");
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
    check_make_sandbox(w->st, "sb", base_repos);
    /* as the advisor writes a setting: with its CONFIG:SETTING record, which
     * binds the scope's inputs to the chain (docs/audit.md#inputs) */
    ck_assert(pv_ok(store_begin(w->st)));
    ck_assert(pv_ok(store_setting_put(w->st, "", ADVISOR_SET(PROPOSALS), "true")));
    ck_assert(
        pv_ok(advisor_event(w->st, "", "CONFIG:SETTING", "CONFIG:SETTING [INFO] test", NULL)));
    ck_assert(pv_ok(store_commit(w->st)));
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

/* ===========================================================================
 * Helpers
 * ========================================================================= */

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

static bool status_of(const char *id, const char *want)
{
    json_t *j = show(id);
    bool same = strcmp(str(j, "status"), want) == 0;

    json_decref(j);
    return same;
}

/* Submit a one-rule proposal (curl, 'endpoint' the endpoint's members);
 * the chunk id into 'id', "" when nothing was stored (already allowed). */
static void submit(const char *name, const char *endpoint, char id[64])
{
    char body[2048];
    struct httpd_reply r;
    const char *got;

    snprintf(body, sizeof(body),
             "{\"operations\":[{\"addRule\":{\"ruleName\":\"%s\",\"rule\":{\"endpoints\":[{"
             "%s}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}}}]}",
             name, endpoint);
    memset(&r, 0, sizeof(r));
    advisor_route_submit(w, "sb", NULL, body, strlen(body), &r);
    ck_assert_msg(r.status == 202, "submit: %u %s", r.status,
                  r.body != NULL ? json_dumps(r.body, 0) : "");
    got = json_string_value(json_array_get(json_object_get(r.body, "accepted_chunk_ids"), 0));
    snprintf(id, 64, "%s", got != NULL ? got : "");
    json_decref(r.body);
}

/* The approve body with chunk 'id''s current review token. */
static void token_of(const char *id, char *body, size_t len)
{
    json_t *j = show(id);

    snprintf(body, len, "{\"review_token\":\"%s\"}", str(j, "review_token"));
    json_decref(j);
}

static int64_t rev_now(void)
{
    struct store_sandbox sb;
    struct store_revision rev;
    int64_t n;

    ck_assert(pv_ok(store_sandbox_get(w->st, "sb", &sb)));
    ck_assert(pv_ok(store_rev_latest(w->st, sb.id, &rev)));
    n = rev.rev;
    store_revision_clear(&rev);
    store_sandbox_clear(&sb);
    return n;
}

/* Approve 'id' with its current token, once more after a 412 refresh; the
 * final status code. */
static unsigned approve(const char *id)
{
    unsigned status = 412;

    for (int i = 0; i < 2 && status == 412; i++) {
        struct httpd_reply r;
        char body[256];

        token_of(id, body, sizeof(body));
        memset(&r, 0, sizeof(r));
        advisor_route_approve(w, "sb", id, body, strlen(body), &r);
        status = r.status;
        json_decref(r.body);
    }
    return status;
}

static void undo(const char *id)
{
    struct httpd_reply r;

    memset(&r, 0, sizeof(r));
    advisor_route_undo(w, "sb", id, &r);
    ck_assert_msg(r.status == 200, "undo: %u %s", r.status,
                  r.body != NULL ? json_dumps(r.body, 0) : "");
    json_decref(r.body);
}

static void reject(const char *id)
{
    struct httpd_reply r;
    const char body[] = "{\"reason\":\"no\"}";

    memset(&r, 0, sizeof(r));
    advisor_route_reject(w, "sb", id, body, strlen(body), &r);
    ck_assert_msg(r.status == 200, "reject: %u %s", r.status,
                  r.body != NULL ? json_dumps(r.body, 0) : "");
    json_decref(r.body);
}

static void base_set(const char *text)
{
    struct httpd_reply r;

    memset(&r, 0, sizeof(r));
    advisor_route_base_set(w, "sb", text, strlen(text), "operator", &r);
    ck_assert_msg(r.status == 200, "base: %u %s", r.status,
                  r.body != NULL ? json_dumps(r.body, 0) : "");
    json_decref(r.body);
}

static struct model_policy *load_blob(const char *blob)
{
    size_t len = 0;
    char *yaml = store_blob_get(w->st, blob, &len);
    struct model_diags *d = model_diags_new();
    struct model_policy *p;

    ck_assert_ptr_nonnull(yaml);
    p = model_policy_load("blob", yaml, len, MODEL_FMT_YAML, d);
    ck_assert_ptr_nonnull(p);
    free(yaml);
    model_diags_free(d);
    return p;
}

/* The effective policy in force ('base' false) or the latest base. */
static struct model_policy *policy_now(bool base)
{
    struct store_sandbox sb;
    struct store_revision rev;
    struct model_policy *p;

    ck_assert(pv_ok(store_sandbox_get(w->st, "sb", &sb)));
    ck_assert(
        pv_ok(base ? store_base_latest(w->st, sb.id, &rev) : store_rev_latest(w->st, sb.id, &rev)));
    p = load_blob(rev.blob);
    store_revision_clear(&rev);
    store_sandbox_clear(&sb);
    return p;
}

static bool allowed(const struct model_policy *p, const char *host, const char *method,
                    const char *path)
{
    const char *bins[1] = {"/usr/bin/curl"};
    struct model_request rq;
    struct model_decision d;

    memset(&rq, 0, sizeof(rq));
    rq.binaries = bins;
    rq.nbinaries = 1;
    rq.host = host;
    rq.host_len = strlen(host);
    rq.port = 443;
    rq.method = method;
    rq.target = path;
    rq.target_len = strlen(path);
    model_decide(p, &rq, &d);
    return d.allow;
}

static const char ep_l7[] = "\"host\":\"api.github.com\",\"port\":443,\"protocol\":\"rest\","
                            "\"enforcement\":\"enforce\",";

/* The base widened: GET of anything on the same endpoint. */
static const char base_all[] = "version: 1\n"
                               "network_policies:\n"
                               "  gh:\n"
                               "    name: gh\n"
                               "    endpoints:\n"
                               "      - host: api.github.com\n"
                               "        port: 443\n"
                               "        protocol: rest\n"
                               "        enforcement: enforce\n"
                               "        rules:\n"
                               "          - allow: {method: GET, path: \"/**\"}\n"
                               "    binaries:\n"
                               "      - path: /usr/bin/curl\n";

/* ===========================================================================
 * The attack (issue 36 item 1)
 * ========================================================================= */

/* Chunk A adds GET under /a/ with a deny rule for GET under /admin/; chunk
 * B (GET anything) folds into the same endpoint. GET /admin/x is denied. Undoing A must not
 * make it allowed: B's grant reads the same text as when it was approved,
 * but the request it stands for grew, so B is suspended with the witness. */
START_TEST(test_undo_never_widens_another_chunk)
{
    char ca[64];
    char cb[64];
    char ep[1024];
    struct model_policy *p;
    json_t *j;

    snprintf(ep, sizeof(ep),
             "%s\"rules\":[{\"allow\":{\"method\":\"GET\",\"path\":\"/a/**\"}}],"
             "\"deny_rules\":[{\"method\":\"GET\",\"path\":\"/admin/**\"}]",
             ep_l7);
    submit("a", ep, ca);
    ck_assert_uint_eq(approve(ca), 200);
    snprintf(ep, sizeof(ep), "%s\"rules\":[{\"allow\":{\"method\":\"GET\",\"path\":\"/**\"}}]",
             ep_l7);
    submit("b", ep, cb);
    ck_assert_uint_eq(approve(cb), 200);
    p = policy_now(false);
    ck_assert(!allowed(p, "api.github.com", "GET", "/admin/x"));
    ck_assert(allowed(p, "api.github.com", "GET", "/b/x"));
    model_policy_free(p);
    undo(ca);
    p = policy_now(false);
    ck_assert_msg(!allowed(p, "api.github.com", "GET", "/admin/x"),
                  "the undo widened chunk b: GET /admin/x is allowed");
    model_policy_free(p);
    j = show(cb);
    ck_assert_str_eq(str(j, "status"), "suspended");
    ck_assert_msg(strstr(str(j, "suspension_reason"), "/admin/") != NULL, "%s",
                  str(j, "suspension_reason"));
    {
        /* the reason starts with the change that suspended it */
        char want[160];
        snprintf(want, sizeof(want), "after the undo of chunk %s: ", ca);
        ck_assert_msg(strncmp(str(j, "suspension_reason"), want, strlen(want)) == 0, "%s",
                      str(j, "suspension_reason"));
    }
    json_decref(j);
    /* the same through a reject of A after B is approved again */
    ck_assert_uint_eq(approve(ca), 200);
    ck_assert_uint_eq(approve(cb), 200);
    reject(ca);
    p = policy_now(false);
    ck_assert(!allowed(p, "api.github.com", "GET", "/admin/x"));
    model_policy_free(p);
    ck_assert(status_of(cb, "suspended"));
}
END_TEST

/* A base change that removes the base's own deny rule: the approved GET of
 * anything folded into its endpoint now reaches /admin/, which neither the policy
 * before nor the new base allows. */
START_TEST(test_base_deny_removed_suspends)
{
    static const char base_deny[] = "version: 1\n"
                                    "network_policies:\n"
                                    "  gh:\n"
                                    "    name: gh\n"
                                    "    endpoints:\n"
                                    "      - host: api.github.com\n"
                                    "        port: 443\n"
                                    "        protocol: rest\n"
                                    "        enforcement: enforce\n"
                                    "        rules:\n"
                                    "          - allow: {method: GET, path: \"/repos/**\"}\n"
                                    "        deny_rules:\n"
                                    "          - {method: GET, path: \"/admin/**\"}\n"
                                    "    binaries:\n"
                                    "      - path: /usr/bin/curl\n";
    char cb[64];
    char ep[1024];
    struct model_policy *p;

    base_set(base_deny);
    snprintf(ep, sizeof(ep), "%s\"rules\":[{\"allow\":{\"method\":\"GET\",\"path\":\"/**\"}}]",
             ep_l7);
    submit("b", ep, cb);
    ck_assert_uint_eq(approve(cb), 200);
    p = policy_now(false);
    ck_assert(!allowed(p, "api.github.com", "GET", "/admin/x"));
    model_policy_free(p);
    base_set(base_repos);
    p = policy_now(false);
    ck_assert(!allowed(p, "api.github.com", "GET", "/admin/x"));
    model_policy_free(p);
    ck_assert(status_of(cb, "suspended"));
}
END_TEST

/* ===========================================================================
 * The property: random recompositions against the evaluator
 * ========================================================================= */

/* The rules a sandbox asks for: deny rules, folds, L4 copies, another host. */
static const char *const pool[] = {
    "\"rules\":[{\"allow\":{\"method\":\"GET\",\"path\":\"/a/**\"}}],"
    "\"deny_rules\":[{\"method\":\"GET\",\"path\":\"/admin/**\"}]",
    "\"rules\":[{\"allow\":{\"method\":\"GET\",\"path\":\"/**\"}}]",
    "\"rules\":[{\"allow\":{\"method\":\"GET\",\"path\":\"/admin/**\"}}]",
    "\"rules\":[{\"allow\":{\"method\":\"POST\",\"path\":\"/a/**\"}}],"
    "\"deny_rules\":[{\"method\":\"*\",\"path\":\"/x/secret/**\"}]",
    "\"rules\":[{\"allow\":{\"method\":\"*\",\"path\":\"/x/**\"}}]",
    "\"rules\":[{\"allow\":{\"method\":\"DELETE\",\"path\":\"/repos/**\"}}],"
    "\"deny_rules\":[{\"method\":\"GET\",\"path\":\"/repos/private/**\"}]",
    "L4",
    "OTHER",
};

static const char *const bases[] = {
    base_repos,
    "version: 1\nnetwork_policies:\n  gh:\n    name: gh\n    endpoints:\n"
    "      - {host: api.github.com, port: 443, protocol: rest, enforcement: enforce,\n"
    "         rules: [{allow: {method: GET, path: \"/**\"}}],\n"
    "         deny_rules: [{method: GET, path: \"/admin/**\"}]}\n"
    "    binaries: [{path: /usr/bin/curl}]\n",
    "version: 1\nnetwork_policies:\n  gh:\n    name: gh\n    endpoints:\n"
    "      - {host: api.github.com, port: 443, protocol: rest, enforcement: enforce,\n"
    "         rules: [{allow: {method: GET, path: \"/**\"}}]}\n"
    "    binaries: [{path: /usr/bin/curl}]\n",
    "version: 1\nnetwork_policies:\n  other:\n    name: other\n    endpoints:\n"
    "      - {host: example.org, port: 443, protocol: rest, enforcement: enforce,\n"
    "         rules: [{allow: {method: GET, path: \"/**\"}}],\n"
    "         deny_rules: [{method: GET, path: \"/p/**\"}]}\n"
    "    binaries: [{path: /usr/bin/curl}]\n",
};

static const char *const hosts[] = {"api.github.com", "example.org"};
static const char *const methods[] = {"GET", "POST", "DELETE"};
static const char *const paths[] = {
    "/repos/x", "/repos/private/y", "/a/x", "/admin/x", "/x/secret/1", "/x/y", "/p/q", "/"};

/* Every request of the grid the new policy allows, the policy before or
 * the new base allows too. */
static void never_widened(const struct model_policy *before, const char *what, unsigned seed,
                          int stepno)
{
    struct model_policy *now = policy_now(false);
    struct model_policy *base = policy_now(true);

    for (size_t h = 0; h < PV_ARRAY_LEN(hosts); h++) {
        for (size_t m = 0; m < PV_ARRAY_LEN(methods); m++) {
            for (size_t p = 0; p < PV_ARRAY_LEN(paths); p++) {
                bool n = allowed(now, hosts[h], methods[m], paths[p]);
                ck_assert_msg(!n || allowed(before, hosts[h], methods[m], paths[p]) ||
                                  allowed(base, hosts[h], methods[m], paths[p]),
                              "seed %u step %d (%s) widened: %s %s%s", seed, stepno, what,
                              methods[m], hosts[h], paths[p]);
            }
        }
    }
    model_policy_free(now);
    model_policy_free(base);
}

/* How many sequences, how long: on the code before the proof against the
 * policy before, these find the undo that widens within a few seeds. */
#define SEEDS 12
#define STEPS 40

static unsigned next_rand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 16) & 0x7fffu;
}

/* A random approved chunk's id into 'id' ("" when none). */
static void pick_approved(unsigned *s, char id[64])
{
    struct advisor_view v;
    const json_t *chunks;
    size_t n;

    id[0] = '\0';
    ck_assert(pv_ok(advisor_chunk_list(w, "sb", "approved", true, &v)));
    chunks = json_object_get(v.json, "chunks");
    n = json_array_size(chunks);
    if (n > 0) {
        const json_t *c = json_array_get(chunks, next_rand(s) % n);
        const char *x = json_string_value(json_object_get(c, "id"));
        if (x == NULL) {
            x = json_string_value(json_object_get(c, "chunk_id"));
        }
        snprintf(id, 64, "%s", x != NULL ? x : "");
    }
    advisor_view_clear(&v);
}

static void propose_and_approve(unsigned *s, int stepno)
{
    const char *rule = pool[next_rand(s) % PV_ARRAY_LEN(pool)];
    char ep[1024];
    char name[32];
    char id[64];

    if (strcmp(rule, "L4") == 0) {
        snprintf(ep, sizeof(ep), "\"host\":\"api.github.com\",\"port\":443");
    } else if (strcmp(rule, "OTHER") == 0) {
        snprintf(ep, sizeof(ep),
                 "\"host\":\"example.org\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":"
                 "\"enforce\",\"rules\":[{\"allow\":{\"method\":\"GET\",\"path\":\"/p/**\"}}]");
    } else {
        snprintf(ep, sizeof(ep), "%s%s", ep_l7, rule);
    }
    snprintf(name, sizeof(name), "r%d", stepno);
    submit(name, ep, id);
    if (id[0] != '\0') {
        (void)approve(id);
    }
}

/* New credentials: the github one alone, or one on example.org as well
 * (every approved chunk is proved again; a suspension can widen others). */
static void credentials_set(bool other)
{
    struct store_sandbox sb;

    ck_assert(pv_ok(store_sandbox_get(w->st, "sb", &sb)));
    free(sb.credentials);
    sb.credentials = strdup(other ? "credentials:\n  - {name: gh, type: github, target_hosts: "
                                    "[api.github.com]}\n  - {name: org, type: api-key, "
                                    "target_hosts: [example.org]}\n"
                                  : "credentials:\n  - {name: gh, type: github, target_hosts: "
                                    "[api.github.com]}\n");
    ck_assert(pv_ok(store_begin(w->st)));
    ck_assert(pv_ok(store_sandbox_update(w->st, &sb)));
    ck_assert(
        pv_ok(advisor_event(w->st, "sb", "CONFIG:SETTING", "CONFIG:SETTING [INFO] test", NULL)));
    ck_assert(pv_ok(advisor_reprove_sandbox(w, sb.id, "credentials", NULL)));
    ck_assert(pv_ok(store_commit(w->st)));
    store_sandbox_clear(&sb);
}

/* One random step; true when it removed something (checked). */
static bool random_step(unsigned *s, int stepno, char what[64])
{
    unsigned op = next_rand(s) % 12;
    char id[64];

    if (op < 4) {
        snprintf(what, 64, "approve");
        propose_and_approve(s, stepno);
        return false;
    }
    if (op < 8) {
        pick_approved(s, id);
        if (id[0] == '\0') {
            return false;
        }
        snprintf(what, 64, "%s %.40s", op < 6 ? "undo" : "reject", id);
        if (op < 6) {
            undo(id);
        } else {
            reject(id);
        }
        return true;
    }
    if (op < 10) {
        snprintf(what, 64, "base %u", op);
        base_set(bases[next_rand(s) % PV_ARRAY_LEN(bases)]);
        return true;
    }
    snprintf(what, 64, "credentials %u", op);
    credentials_set(op == 11);
    return true;
}

START_TEST(test_property_removals_never_widen)
{
    unsigned seed = 36u + 7919u * (unsigned)_i;
    unsigned s = seed;

    for (int stepno = 0; stepno < STEPS; stepno++) {
        struct model_policy *before = policy_now(false);
        char what[64] = "";

        if (random_step(&s, stepno, what)) {
            never_widened(before, what, seed, stepno);
        }
        model_policy_free(before);
    }
}
END_TEST

/* An undo that only returns what the base itself grants suspends nothing:
 * the base's GET of anything came back when the chunk's deny rule left. */
START_TEST(test_undo_back_to_base_keeps_others)
{
    char ca[64];
    char cw[64];
    char ep[1024];

    base_set(base_all);
    snprintf(ep, sizeof(ep),
             "%s\"rules\":[{\"allow\":{\"method\":\"POST\",\"path\":\"/a/**\"}}],"
             "\"deny_rules\":[{\"method\":\"GET\",\"path\":\"/admin/**\"}]",
             ep_l7);
    submit("a", ep, ca);
    ck_assert_uint_eq(approve(ca), 200);
    submit("w", "\"host\":\"example.org\",\"port\":443", cw);
    ck_assert_uint_eq(approve(cw), 200);
    undo(ca);
    ck_assert(status_of(cw, "approved"));
}
END_TEST

/* The operator removes a deny rule of its own: the base now grants what
 * the policy before refused. A chunk elsewhere gains nothing and stays
 * approved (what the chunks touched is proved on its own). */
START_TEST(test_base_deny_removed_elsewhere_keeps)
{
    static const char base_deny_all[] = "version: 1\n"
                                        "network_policies:\n"
                                        "  gh:\n"
                                        "    name: gh\n"
                                        "    endpoints:\n"
                                        "      - host: api.github.com\n"
                                        "        port: 443\n"
                                        "        protocol: rest\n"
                                        "        enforcement: enforce\n"
                                        "        rules:\n"
                                        "          - allow: {method: GET, path: \"/**\"}\n"
                                        "        deny_rules:\n"
                                        "          - {method: GET, path: \"/admin/**\"}\n"
                                        "    binaries:\n"
                                        "      - path: /usr/bin/curl\n";
    char cw[64];
    struct model_policy *p;

    base_set(base_deny_all);
    submit("w",
           "\"host\":\"example.org\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":"
           "\"enforce\",\"rules\":[{\"allow\":{\"method\":\"GET\",\"path\":\"/p/**\"}}]",
           cw);
    ck_assert_uint_eq(approve(cw), 200);
    base_set(base_all);
    p = policy_now(false);
    ck_assert(allowed(p, "api.github.com", "GET", "/admin/x"));
    ck_assert(allowed(p, "example.org", "GET", "/p/q"));
    model_policy_free(p);
    ck_assert(status_of(cw, "approved"));
}
END_TEST

/* ===========================================================================
 * Approving what the policy already allows
 * ========================================================================= */

/* A pending chunk that became contained (the base now allows everything it
 * asks for) is answered already_allowed, as a submission of it would be: it
 * is not approved, no revision is written, and it leaves the inbox as
 * covered. */
START_TEST(test_approve_contained_already_allowed)
{
    char cp[64];
    char ep[1024];
    char body[256];
    struct httpd_reply r;
    int64_t rev;
    json_t *j;

    snprintf(ep, sizeof(ep), "%s\"rules\":[{\"allow\":{\"method\":\"GET\",\"path\":\"/b/x\"}}]",
             ep_l7);
    submit("p", ep, cp);
    ck_assert(status_of(cp, "pending"));
    base_set(base_all);
    ck_assert(status_of(cp, "pending"));
    ck_assert_uint_eq(approve(cp), 200);
    j = show(cp);
    ck_assert_str_eq(str(j, "status"), "rejected");
    ck_assert_msg(strstr(str(j, "rejection_reason"), "covered by active policy revision") != NULL,
                  "%s", str(j, "rejection_reason"));
    json_decref(j);
    /* the answer itself */
    rev = rev_now();
    token_of(cp, body, sizeof(body));
    memset(&r, 0, sizeof(r));
    advisor_route_approve(w, "sb", cp, body, strlen(body), &r);
    ck_assert_uint_eq(r.status, 200);
    ck_assert_str_eq(str(r.body, "status"), "already_allowed");
    ck_assert_int_eq(json_integer_value(json_object_get(r.body, "policy_version")), rev);
    json_decref(r.body);
    ck_assert_int_eq(rev_now(), rev);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("advisor_reproof");
    TCase *t = tcase_create("removals");

    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 300);
    tcase_add_test(t, test_undo_never_widens_another_chunk);
    tcase_add_test(t, test_base_deny_removed_suspends);
    tcase_add_test(t, test_undo_back_to_base_keeps_others);
    tcase_add_test(t, test_base_deny_removed_elsewhere_keeps);
    tcase_add_test(t, test_approve_contained_already_allowed);
    tcase_add_loop_test(t, test_property_removals_never_widen, 0, SEEDS);
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
