/* SPDX-License-Identifier: Apache-2.0 */
/* check_audit_state.c - the state a chain implies (audit/audit_state.c) and
 * the recomputation of effective revisions (cli/cli_recompute.c)
 *
 * The fold and the comparison are driven by rows: a chain of records as
 * compact JSON (one per line, only the fields the fold reads), the store's
 * state, the number of disagreements and the first one's words. The
 * recomputation is checked on records built here the way the advisor
 * writes them: a creation, approvals, a peer's registration, each with the
 * hash the model's composition gives, then with one field wrong.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "cli/cli_replay.h"
#include "model/model.h"

/* ===========================================================================
 * Fold and compare
 * ========================================================================= */

#define REC(seq, kind, data) \
    "{\"seq\":" #seq ",\"kind\":\"CONFIG:" kind "\",\"sandbox\":\"s\",\"data\":" data "}\n"
#define CREATED REC(1, "CREATED", "{\"version\":1,\"hash\":\"h1\"}")
/* A global record (sandbox ""), and a creation that binds inputs. */
#define GREC(seq, kind, data) \
    "{\"seq\":" #seq ",\"kind\":\"CONFIG:" kind "\",\"sandbox\":\"\",\"data\":" data "}\n"
#define CREATED_IN(in) \
    REC(1, "CREATED",  \
        "{\"version\":1,\"hash\":\"h1\",\"base_blob\":\"b1\",\"decision_inputs\":" in "}")
#define ACT_IN(sb, gl)                                                                        \
    "{\"s\":{\"version\":1,\"hash\":\"h1\",\"base_blob\":\"b1\",\"chunks\":{},\"inputs\":" sb \
    "},\"\":{\"inputs\":" gl "}}"

static const struct {
    const char *name;
    const char *chain;
    const char *actual;
    size_t want;
    const char *words; /* in the first disagreement; NULL when none */
} fold_rows[] = {
    {"created only", CREATED, "{\"s\":{\"version\":1,\"hash\":\"h1\",\"chunks\":{}}}", 0, NULL},
    {"approved",
     CREATED REC(2, "PROPOSED", "{\"chunk_id\":\"a\"}")
         REC(3, "APPROVED", "{\"chunk_id\":\"a\",\"version\":2,\"hash\":\"h2\"}"),
     "{\"s\":{\"version\":2,\"hash\":\"h2\",\"chunks\":{\"a\":\"approved\"}}}", 0, NULL},
    {"flipped chunk",
     CREATED REC(2, "PROPOSED", "{\"chunk_id\":\"a\"}") REC(3, "REJECTED", "{\"chunk_id\":\"a\"}"),
     "{\"s\":{\"version\":1,\"hash\":\"h1\",\"chunks\":{\"a\":\"approved\"}}}", 1,
     "a|approved|rejected|3"},
    {"revision rewritten", CREATED, "{\"s\":{\"version\":2,\"hash\":\"hx\",\"chunks\":{}}}", 1,
     "-|revision v2 hash hx|revision v1 hash h1|1"},
    {"undo",
     CREATED REC(2, "PROPOSED", "{\"chunk_id\":\"a\"}")
         REC(3, "APPROVED", "{\"chunk_id\":\"a\",\"version\":2,\"hash\":\"h2\"}")
             REC(4, "REMOVED", "{\"chunk_id\":\"a\",\"version\":3,\"hash\":\"h1\"}"),
     "{\"s\":{\"version\":3,\"hash\":\"h1\",\"chunks\":{\"a\":\"pending\"}}}", 0, NULL},
    {"clear deletes the pending",
     CREATED REC(2, "PROPOSED", "{\"chunk_id\":\"a\"}") REC(3, "PROPOSED", "{\"chunk_id\":\"b\"}")
         REC(4, "REJECTED", "{\"chunk_id\":\"b\"}") REC(5, "REMOVED", "{\"cleared\":1}"),
     "{\"s\":{\"version\":1,\"hash\":\"h1\",\"chunks\":{\"b\":\"rejected\"}}}", 0, NULL},
    {"a cleared chunk still in the store",
     CREATED REC(2, "PROPOSED", "{\"chunk_id\":\"a\"}") REC(3, "REMOVED", "{\"cleared\":1}"),
     "{\"s\":{\"version\":1,\"hash\":\"h1\",\"chunks\":{\"a\":\"pending\"}}}", 1,
     "a|pending|deleted|3"},
    {"suspended",
     CREATED REC(2, "PROPOSED", "{\"chunk_id\":\"a\"}")
         REC(3, "SUSPENDED", "{\"chunk_ids\":[\"a\"],\"version\":2,\"hash\":\"h2\"}"),
     "{\"s\":{\"version\":2,\"hash\":\"h2\",\"chunks\":{\"a\":\"suspended\"}}}", 0, NULL},
    {"a chunk without records", CREATED,
     "{\"s\":{\"version\":1,\"hash\":\"h1\",\"chunks\":{\"z\":\"approved\"}}}", 1,
     "z|approved|(no record of this chunk)|0"},
    {"a deleted pending chunk", CREATED REC(2, "PROPOSED", "{\"chunk_id\":\"a\"}"),
     "{\"s\":{\"version\":1,\"hash\":\"h1\",\"chunks\":{}}}", 1, "a|(no such chunk)|pending|2"},
    {"the sandbox deleted", CREATED REC(2, "DELETED", "{}"), "{}", 0, NULL},
    {"a sandbox without records", "", "{\"s\":{\"version\":1,\"hash\":\"h1\",\"chunks\":{}}}", 1,
     "-|the sandbox exists|(no such sandbox)|0"},
    {"a loaded record writes nothing", CREATED REC(2, "LOADED", "{\"version\":7,\"hash\":\"h7\"}"),
     "{\"s\":{\"version\":1,\"hash\":\"h1\",\"chunks\":{}}}", 0, NULL},
    /* issue 36 item 5: the inputs of decisions (docs/audit.md#inputs) */
    {"inputs as bound", CREATED_IN("{\"credentials\":\"c1\"}"),
     ACT_IN("{\"credentials\":\"c1\"}", "{}"), 0, NULL},
    {"credentials cleared", CREATED_IN("{\"credentials\":\"c1\"}"), ACT_IN("{}", "{}"), 1,
     "-|input credentials unset|input credentials sha256 c1...|1"},
    {"credentials replaced", CREATED_IN("{\"credentials\":\"c1\"}"),
     ACT_IN("{\"credentials\":\"c2\"}", "{}"), 1,
     "-|input credentials sha256 c2...|input credentials sha256 c1...|1"},
    {"a global setting changed",
     CREATED_IN("{}") GREC(2, "SETTING", "{\"decision_inputs\":{\"setting:m\":\"d1\"}}"),
     ACT_IN("{}", "{\"setting:m\":\"d2\"}"), 1,
     "-|input setting:m sha256 d2...|input setting:m sha256 d1...|2"},
    {"a global setting never recorded", CREATED_IN("{}"), ACT_IN("{}", "{\"setting:m\":\"d2\"}"), 1,
     "-|input setting:m sha256 d2...|input setting:m unset|1"},
    {"a global setting deleted as recorded",
     CREATED_IN("{}") GREC(2, "SETTING", "{\"decision_inputs\":{\"setting:m\":\"d1\"}}")
         GREC(3, "SETTING", "{\"decision_inputs\":{}}"),
     ACT_IN("{}", "{}"), 0, NULL},
    {"a chain from before the binding", CREATED, ACT_IN("{\"credentials\":\"c1\"}", "{}"), 0, NULL},
    {"an export from before the binding", CREATED_IN("{\"credentials\":\"c1\"}"),
     "{\"s\":{\"version\":1,\"hash\":\"h1\",\"chunks\":{}}}", 0, NULL},
    {"the base policy replaced", CREATED_IN("{}"),
     "{\"s\":{\"version\":1,\"hash\":\"h1\",\"base_blob\":\"b2\",\"chunks\":{},\"inputs\":{}},"
     "\"\":{\"inputs\":{}}}",
     1, "-|base policy blob b2...|base policy blob b1...|1"},
    {"an approved rule edited",
     CREATED REC(2, "PROPOSED", "{\"chunk_id\":\"a\"}")
         REC(3, "APPROVED",
             "{\"chunk_id\":\"a\",\"version\":2,\"hash\":\"h2\",\"inputs\":{\"rule_name\":\"r\","
             "\"rule\":{\"x\":1}}}"),
     "{\"s\":{\"version\":2,\"hash\":\"h2\",\"chunks\":{\"a\":\"approved\"},\"rules\":{\"a\":"
     "\"edited\"}}}",
     1, NULL},
    {"an approved rule from an older export",
     CREATED REC(2, "PROPOSED", "{\"chunk_id\":\"a\"}")
         REC(3, "APPROVED",
             "{\"chunk_id\":\"a\",\"version\":2,\"hash\":\"h2\",\"inputs\":{\"rule_name\":\"r\","
             "\"rule\":{\"x\":1}}}"),
     "{\"s\":{\"version\":2,\"hash\":\"h2\",\"chunks\":{\"a\":\"approved\"}}}", 0, NULL},
};

struct seen {
    size_t n;
    char first[512];
};

static void note(void *arg, const char *sandbox, const char *chunk, const char *store,
                 const char *chain, int64_t seq)
{
    struct seen *s = arg;

    ck_assert(strcmp(sandbox, "s") == 0 || strcmp(sandbox, "(global)") == 0);
    if (s->n++ == 0) {
        snprintf(s->first, sizeof(s->first), "%s|%s|%s|%lld", chunk != NULL ? chunk : "-", store,
                 chain, (long long)seq);
    }
}

START_TEST(test_fold)
{
    json_t *implied = audit_state_new();
    json_t *actual = json_loads(fold_rows[_i].actual, 0, NULL);
    const char *p = fold_rows[_i].chain;
    struct seen s = {0, ""};

    ck_assert_ptr_nonnull(actual);
    while (*p != '\0') {
        const char *nl = strchr(p, '\n');
        json_t *rec = json_loadb(p, (size_t)(nl - p), 0, NULL);
        ck_assert_msg(rec != NULL, "%s: a row's record does not parse", fold_rows[_i].name);
        ck_assert(pv_ok(audit_state_fold(implied, rec)));
        json_decref(rec);
        p = nl + 1;
    }
    ck_assert_uint_eq(audit_state_compare(implied, actual, note, &s), fold_rows[_i].want);
    ck_assert_uint_eq(s.n, fold_rows[_i].want);
    if (fold_rows[_i].words != NULL) {
        ck_assert_str_eq(s.first, fold_rows[_i].words);
    }
    json_decref(implied);
    json_decref(actual);
}
END_TEST

/* ===========================================================================
 * Recomputation
 * ========================================================================= */

static const char base_yaml[] = "version: 1\n"
                                "network_policies:\n"
                                "  gh:\n"
                                "    endpoints:\n"
                                "      - host: api.github.com\n"
                                "        port: 443\n"
                                "    binaries:\n"
                                "      - path: /usr/bin/curl\n";

static const char *const rules[] = {
    "{\"endpoints\":[{\"host\":\"example.com\",\"port\":443}],"
    "\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}",
    "{\"endpoints\":[{\"target_sandbox\":\"db\",\"port\":5432}],"
    "\"binaries\":[{\"path\":\"/usr/bin/psql\"}]}",
};

/* The hash of the base with rules[0..n) merged, peers "db" at 'addr'
 * (NULL: none). */
static const char *db_addr;

static const char *const *lookup(void *arg, const char *name)
{
    static const char *one[2];

    (void)arg;
    if (strcmp(name, "db") != 0 || db_addr == NULL) {
        return NULL;
    }
    one[0] = db_addr;
    one[1] = NULL;
    return one;
}

static void composed_hash(size_t n, const char *addr, char out[65])
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p =
        model_policy_load("base", base_yaml, strlen(base_yaml), MODEL_FMT_AUTO, d);

    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < n; i++) {
        json_t *rule = json_loads(rules[i], 0, NULL);
        char name[8];
        struct model_policy *next;
        snprintf(name, sizeof(name), "r%zu", i);
        next = model_policy_merge_rule(p, name, rule, d);
        ck_assert_msg(next != NULL, "rule %zu: %s", i,
                      model_diags_count(d) > 0 ? model_diags_line(d, 0) : "?");
        json_decref(rule);
        model_policy_free(p);
        p = next;
    }
    db_addr = addr;
    ck_assert(pv_ok(model_policy_resolve_peers(p, lookup, NULL, d)));
    ck_assert(pv_ok(model_policy_sha256(p, out)));
    model_policy_free(p);
    model_diags_free(d);
}

enum mutation { M_NONE, M_HASH, M_UNAPPROVED, M_LEGACY, M_PARTIAL, M_PEER_MOVED };

static const struct {
    enum mutation m;
    bool bad;
    size_t recomputed;
    size_t legacy;
    const char *words;
} rec_rows[] = {
    {M_NONE, false, 4, 0, NULL},
    {M_HASH, true, 1, 0, "seq 3|compose to"},
    {M_UNAPPROVED, true, 1, 0, "seq 3|chunk c9 is composed, but no CONFIG:APPROVED"},
    {M_LEGACY, false, 3, 1, NULL},
    {M_PARTIAL, false, 0, 2, NULL},
    {M_PEER_MOVED, true, 3, 0, "seq 6|compose to"},
};

/* A record of sandbox 's' writing revision 'version' from the base and the
 * first 'n' chunks c0, c1, ... (steals 'extra'). */
static json_t *rev_record(int seq, const char *kind, int version, size_t n, const char *hash,
                          const char *base_sha, json_t *extra)
{
    json_t *chunks = json_array();
    json_t *data = extra != NULL ? extra : json_object();

    for (size_t i = 0; i < n; i++) {
        char id[8];
        snprintf(id, sizeof(id), "c%zu", i);
        json_array_append_new(chunks, json_string(id));
    }
    json_object_set_new(data, "version", json_integer(version));
    json_object_set_new(data, "hash", json_string(hash));
    json_object_set_new(data, "base_blob", json_string(base_sha));
    json_object_set_new(data, "chunks", chunks);
    return json_pack("{s:s,s:I,s:s,s:s,s:o}", "type", "record", "seq", (json_int_t)seq, "kind",
                     kind, "sandbox", "s", "data", data);
}

static json_t *approval(int seq, int version, size_t i, const char *hash, const char *base_sha)
{
    char id[8];
    char name[8];

    snprintf(id, sizeof(id), "c%zu", i);
    snprintf(name, sizeof(name), "r%zu", i);
    return rev_record(seq, "CONFIG:APPROVED", version, i + 1, hash, base_sha,
                      json_pack("{s:s,s:{s:s,s:o}}", "chunk_id", id, "inputs", "rule_name", name,
                                "rule", json_loads(rules[i], 0, NULL)));
}

START_TEST(test_recompute)
{
    enum mutation m = rec_rows[_i].m;
    json_t *records = json_array();
    json_t *blobs = json_object();
    struct cli_recompute out;
    char base_sha[65];
    char h0[65];
    char h1[65];
    char h2[65];
    char h3[65];

    audit_sha256_hex(base_yaml, strlen(base_yaml), base_sha);
    json_object_set_new(blobs, base_sha, json_string(base_yaml));
    composed_hash(0, NULL, h0);
    composed_hash(1, NULL, h1);
    composed_hash(2, NULL, h2);
    composed_hash(2, "10.1.2.3", h3);
    /* 1 created, 2 the peer db created, 3 c0 approved, 4 c1 (a rule for
     * db) approved while db has no address (unresolved), 5 db registers,
     * 6 the sandbox is resolved again. */
    json_array_append_new(records, rev_record(1, "CONFIG:CREATED", 1, 0, h0, base_sha, NULL));
    json_array_append_new(records, json_pack("{s:I,s:s,s:s,s:{}}", "seq", (json_int_t)2, "kind",
                                             "CONFIG:CREATED", "sandbox", "db", "data"));
    json_array_append_new(records, approval(3, 2, 0, m == M_HASH ? h2 : h1, base_sha));
    json_array_append_new(records, approval(4, 3, 1, h2, base_sha));
    json_array_append_new(records,
                          json_pack("{s:I,s:s,s:s,s:{s:[s]}}", "seq", (json_int_t)5, "kind",
                                    "CONFIG:REGISTERED", "sandbox", "db", "data", "addresses",
                                    m == M_PEER_MOVED ? "10.9.9.9" : "10.1.2.3"));
    json_array_insert_new(
        records, 5,
        rev_record(6, "CONFIG:RESOLVED", 4, 2, h3, base_sha, json_pack("{s:s}", "peer", "db")));
    if (m == M_UNAPPROVED) {
        json_t *data = json_object_get(json_array_get(records, 2), "data");
        json_array_set_new(json_object_get(data, "chunks"), 0, json_string("c9"));
    }
    if (m == M_LEGACY) {
        json_object_del(json_object_get(json_array_get(records, 0), "data"), "base_blob");
    }
    if (m == M_PARTIAL) {
        json_array_remove(records, 2); /* the export starts after c0's approval */
        json_array_remove(records, 0);
        json_array_remove(records, 0);
    }
    cli_recompute(records, blobs, m == M_PARTIAL, &out);
    ck_assert_msg(out.bad == rec_rows[_i].bad, "row %d: %s", _i, out.reason);
    ck_assert_uint_eq(out.recomputed, rec_rows[_i].recomputed);
    ck_assert_uint_eq(out.legacy, rec_rows[_i].legacy);
    if (rec_rows[_i].words != NULL) {
        char seq[16];
        const char *bar = strchr(rec_rows[_i].words, '|');
        snprintf(seq, sizeof(seq), "seq %lld", (long long)out.bad_seq);
        ck_assert_int_eq(strncmp(seq, rec_rows[_i].words, (size_t)(bar - rec_rows[_i].words)), 0);
        ck_assert_msg(strstr(out.reason, bar + 1) != NULL, "%s", out.reason);
    }
    json_decref(records);
    json_decref(blobs);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("audit_state");
    TCase *f = tcase_create("fold");
    TCase *r = tcase_create("recompute");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(f, test_fold, 0, (int)PV_ARRAY_LEN(fold_rows));
    suite_add_tcase(s, f);
    tcase_add_loop_test(r, test_recompute, 0, (int)PV_ARRAY_LEN(rec_rows));
    suite_add_tcase(s, r);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
