/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_widen.c - a removal never widens (docs/advisor.md#reproof)
 *
 * A recomposition (an undo, a reject of an approved chunk, a base change, new
 * credentials, a boundary, a peer's move) proves every approved chunk again
 * and holds its new evidence against the evidence its approval rested on
 * (advisor_reprove.c). That comparison reads grant text and finding keys:
 * "GET anything" folded into an endpoint whose deny rule came from another chunk
 * reads the same after that chunk is undone, though it now allows what the
 * deny rule refused. So the recomposed policy N is also proved against the
 * policy in force before, O, request by request: N may grant nothing that
 * neither O nor the base it starts from (the operator's own decision)
 * grants.
 *
 *  1. `POST /v1/check` with N as the candidate and O as the boundary.
 *     Within: done (no call at all when N is O).
 *  2. Each counterexample is decided by the concrete evaluator on the
 *     composition's steps - the base, then each kept chunk merged in
 *     approval order - and the first step that allows it names the chunk
 *     that gains it; that chunk is suspended with the witness as the
 *     reason, and the caller composes again.
 *  3. A counterexample the base alone allows is the operator's authority.
 *     Then what the chunks touched (N without the rules it holds exactly as
 *     the base does; it allows all of N minus the base) is checked against
 *     O, and then against O and the base side by side (their rules in one
 *     policy, which allows no request neither allows); within either way:
 *     done. Counterexamples get the blame of step 2.
 *  4. A counterexample still not placed (the base allows it, or the
 *     evaluator cannot rebuild it: a GraphQL operation) suspends the
 *     chunks whose own rule reaches its binary, host and port, or every
 *     kept chunk when none does; a check the prover cannot answer suspends
 *     every kept chunk. The base alone is always within: the proof errs
 *     towards suspension.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/life/life.h"
#include "advisor/store/store.h"
#include "model/model.h"

/* The first step of the composition that allows a counterexample. */
enum { STEP_NONE = -2, STEP_BASE = -1 };

/* ===========================================================================
 * The counterexample as a request
 * ========================================================================= */

struct wit_req {
    const char *bin;
    char target[4096];
    struct model_ip ip;
    struct model_request rq;
};

/* The prover's witness {binary, host, port, method, path, query, ip} as a
 * request for model_decide; false when it is not one. */
static bool wit_request(const json_t *wit, struct wit_req *x)
{
    const char *host = json_string_value(json_object_get(wit, "host"));
    const char *method = json_string_value(json_object_get(wit, "method"));
    const char *path = json_string_value(json_object_get(wit, "path"));
    const char *query = json_string_value(json_object_get(wit, "query"));
    const char *ip = json_string_value(json_object_get(wit, "ip"));
    json_int_t port = json_integer_value(json_object_get(wit, "port"));

    memset(x, 0, sizeof(*x));
    x->bin = json_string_value(json_object_get(wit, "binary"));
    if (x->bin == NULL || host == NULL || port <= 0 || port > 65535) {
        return false;
    }
    x->rq.binaries = &x->bin;
    x->rq.nbinaries = 1;
    x->rq.host = host;
    x->rq.host_len = strlen(host);
    x->rq.port = (uint16_t)port;
    if (method != NULL) {
        snprintf(x->target, sizeof(x->target), "%s%s%s", path != NULL ? path : "/",
                 query != NULL && query[0] != '\0' ? "?" : "", query != NULL ? query : "");
        x->rq.method = method;
        x->rq.target = x->target;
        x->rq.target_len = strlen(x->target);
    }
    if (ip != NULL && model_ip_parse(ip, strlen(ip), &x->ip)) {
        x->rq.dest = &x->ip;
    }
    return true;
}

static bool allows(const struct model_policy *p, const struct wit_req *x)
{
    struct model_decision d;

    model_decide(p, &x->rq, &d);
    return d.allow;
}

/* "GET api.example.com:443/admin/x by /usr/bin/curl", for a reason. */
static void wit_text(const json_t *wit, char *out, size_t len)
{
    const char *m = json_string_value(json_object_get(wit, "method"));
    const char *h = json_string_value(json_object_get(wit, "host"));
    const char *p = json_string_value(json_object_get(wit, "path"));
    const char *q = json_string_value(json_object_get(wit, "query"));
    const char *b = json_string_value(json_object_get(wit, "binary"));

    snprintf(out, len, "%.16s %.200s:%lld%.300s%s%.200s by %.300s", m != NULL ? m : "CONNECT",
             h != NULL ? h : "?", (long long)json_integer_value(json_object_get(wit, "port")),
             p != NULL ? p : "", q != NULL && q[0] != '\0' ? "?" : "", q != NULL ? q : "",
             b != NULL ? b : "?");
}

/* ===========================================================================
 * The composition's steps
 * ========================================================================= */

/* The next step: approved chunk 'id' merged into 'cur' (resolved as the
 * recomposition resolves it); NULL when it cannot be composed. */
static struct model_policy *step(struct advisor_worker *w, int64_t sandbox,
                                 const struct model_policy *cur, const char *id)
{
    struct store_chunk c;
    struct model_diags *d = model_diags_new();
    json_t *rule = NULL;
    struct model_policy *next = NULL;
    char err[256];

    if (d != NULL && pv_ok(store_chunk_get(w->st, sandbox, id, &c))) {
        rule = json_loads(c.proposed_rule, 0, NULL);
        next = rule != NULL ? model_policy_merge_rule(cur, c.rule_name, rule, d) : NULL;
        store_chunk_clear(&c);
    }
    json_decref(rule);
    model_diags_free(d);
    if (next != NULL && !pv_ok(advisor_resolve_peers(w, next, err, sizeof(err)))) {
        model_policy_free(next);
        next = NULL;
    }
    return next;
}

/* The index in 'chunks' of the first step that allows 'x': STEP_BASE for
 * the base itself, STEP_NONE when no step does (or one cannot be built). */
static long first_step(struct advisor_worker *w, int64_t sandbox, const struct model_policy *base,
                       const json_t *chunks, const struct wit_req *x)
{
    struct model_policy *cur = NULL;
    long found = STEP_NONE;

    if (allows(base, x)) {
        return STEP_BASE;
    }
    for (size_t i = 0; i < json_array_size(chunks) && found == STEP_NONE; i++) {
        struct model_policy *next = step(w, sandbox, cur != NULL ? cur : base,
                                         json_string_value(json_array_get(chunks, i)));
        model_policy_free(cur);
        cur = next;
        if (cur == NULL) {
            break;
        }
        if (allows(cur, x)) {
            found = (long)i;
        }
    }
    model_policy_free(cur);
    return found;
}

/* ===========================================================================
 * The policies the proofs compare
 * ========================================================================= */

/* The network_policies of 'p' as a JSON object (new reference), or NULL. */
static json_t *rules_of(const struct model_policy *p)
{
    char *js = model_policy_to_json(p, NULL);
    json_t *j = js != NULL ? json_loads(js, 0, NULL) : NULL;
    json_t *np = json_incref(json_object_get(j, "network_policies"));

    free(js);
    json_decref(j);
    if (!json_is_object(np)) {
        json_decref(np);
        return NULL;
    }
    return np;
}

/* The policy holding rules 'np' (borrowed), loaded and validated by the
 * model, as canonical YAML; NULL when it does not load. */
static char *policy_yaml(const json_t *np)
{
    json_t *doc = json_pack("{s:i,s:O}", "version", 1, "network_policies", np);
    char *text = doc != NULL ? json_dumps(doc, JSON_COMPACT) : NULL;
    struct model_diags *d = model_diags_new();
    struct model_policy *p = NULL;
    char *yaml;

    if (text != NULL && d != NULL) {
        p = model_policy_load("widen", text, strlen(text), MODEL_FMT_JSON, d);
    }
    yaml = p != NULL ? model_policy_to_yaml(p, NULL) : NULL;
    model_policy_free(p);
    model_diags_free(d);
    free(text);
    json_decref(doc);
    return yaml;
}

/* O's and the base's rules side by side (keys prefixed so they cannot
 * meet): a request is allowed only when one of them allows it and no deny
 * rule of either refuses it, so this policy allows no more than the two
 * (it may allow less: a deny rule of O also covers the base's rules).
 * Canonical YAML, or NULL. */
static char *side_by_side(const struct model_policy *before, const struct model_policy *base)
{
    const struct model_policy *two[2] = {before, base};
    static const char *const prefix[2] = {"before.", "base."};
    json_t *np = json_object();
    char *yaml = NULL;
    bool ok = np != NULL;

    for (size_t s = 0; s < 2 && ok; s++) {
        json_t *rules = rules_of(two[s]);
        const char *k;
        json_t *v;

        ok = rules != NULL;
        json_object_foreach(rules, k, v)
        {
            char key[512];
            snprintf(key, sizeof(key), "%s%.400s", prefix[s], k);
            ok = ok && json_object_set(np, key, v) == 0;
        }
        json_decref(rules);
    }
    yaml = ok ? policy_yaml(np) : NULL;
    json_decref(np);
    return yaml;
}

/* N without the rules it holds exactly as the base does: what the chunks
 * touched. A request N allows and the base does not is granted by a unit
 * a chunk added or changed (the merge only adds: rules, binaries, ports,
 * deny rules), and such a unit grants it here too, with no more deny rules
 * and no more inspection in its way; so this policy allows every request
 * of N minus the base (it may allow others: the deny rules of the rules
 * left out are gone). "" when N holds no rule the base does not; N's own
 * YAML when the rules cannot be compared. */
static char *touched(const struct advisor_widen_in *in)
{
    json_t *now = rules_of(in->now);
    json_t *base = rules_of(in->base);
    json_t *np = json_object();
    const char *k;
    json_t *v;
    char *yaml = NULL;
    bool ok = now != NULL && base != NULL && np != NULL;

    json_object_foreach(now, k, v)
    {
        const json_t *b = json_object_get(base, k);
        if (ok && (b == NULL || !json_equal(b, v))) {
            ok = json_object_set(np, k, v) == 0;
        }
    }
    if (ok && json_object_size(np) == 0) {
        yaml = pv_strdup(""); /* N is the base: nothing beside it */
    } else if (ok) {
        yaml = policy_yaml(np);
    }
    json_decref(now);
    json_decref(base);
    json_decref(np);
    return yaml != NULL ? yaml : pv_strdup(in->now_yaml);
}

/* ===========================================================================
 * The proofs
 * ========================================================================= */

/* POST /v1/check: is 'cand' within 'bound'? The answer, or NULL with 'err'
 * set (unreachable, an error status, no verdict, unknown). */
static json_t *check(struct advisor_worker *w, const char *cand, const char *bound, char *err,
                     size_t errlen)
{
    json_t *body = json_pack("{s:s,s:s}", "candidate", cand, "boundary", bound);
    char *text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
    json_t *answer = NULL;
    long status = 0;
    const char *v;

    json_decref(body);
    snprintf(err, errlen, "out of memory");
    if (text == NULL || !pv_ok(advisor_prover_post(w->pc, "/v1/check", text, strlen(text), &status,
                                                   &answer, err, errlen))) {
        free(text);
        return NULL;
    }
    free(text);
    v = json_string_value(json_object_get(answer, "verdict"));
    if (status != 200 || v == NULL || (strcmp(v, "within") != 0 && strcmp(v, "exceeds") != 0)) {
        const char *why = json_string_value(json_object_get(answer, "reason"));
        snprintf(err, errlen, "the prover answered %ld%s%.300s", status,
                 v != NULL ? ", verdict " : "", v != NULL ? v : "");
        if (why != NULL) {
            snprintf(err + strlen(err), errlen - strlen(err), " (%.300s)", why);
        }
        json_decref(answer);
        return NULL;
    }
    return answer;
}

static pv_result blame_one(json_t *culprits, const json_t *id, const char *why)
{
    PV_ENSURE(
        json_array_append_new(culprits, json_pack("{s:O,s:s}", "chunk_id", id, "reason", why)) == 0,
        PV_ERR_NOMEM);
    return PV_RESULT_OK;
}

/* Every kept chunk, each with 'why'. */
static pv_result blame_all(const json_t *chunks, const char *why, json_t *culprits)
{
    size_t i;
    const json_t *id;

    json_array_foreach(chunks, i, id)
    {
        PV_GUARD(blame_one(culprits, id, why));
    }
    return PV_RESULT_OK;
}

/* The reason a chunk is suspended for counterexample 'wit'. */
static void widened_why(const struct advisor_widen_in *in, const json_t *wit, const char *how,
                        char *why, size_t len)
{
    char what[1200];

    wit_text(wit, what, sizeof(what));
    snprintf(why, len, "widened by %.200s: now grants %s, which the policy before did not%s",
             in->cause, what, how);
}

/* The chunks a counterexample names into 'culprits'; the counterexamples
 * no chunk's step is the first to allow (the base's own, or none) into
 * 'open'. */
static pv_result blame(struct advisor_worker *w, const struct advisor_widen_in *in,
                       const json_t *answer, json_t *culprits, json_t *open)
{
    size_t i;
    const json_t *f;

    json_array_foreach(json_object_get(answer, "findings"), i, f)
    {
        size_t j;
        const json_t *path;
        json_array_foreach(json_object_get(f, "paths"), j, path)
        {
            json_t *wit = json_object_get(path, "witness");
            struct wit_req x;
            long k = wit_request(wit, &x) ? first_step(w, in->sandbox, in->base, in->chunks, &x)
                                          : STEP_NONE;
            char why[1600];

            if (k < 0) {
                PV_ENSURE(json_array_append(open, wit) == 0, PV_ERR_NOMEM);
                continue;
            }
            widened_why(in, wit, "", why, sizeof(why));
            PV_GUARD(blame_one(culprits, json_array_get(in->chunks, (size_t)k), why));
        }
    }
    return PV_RESULT_OK;
}

/* One check and its blame; '*done' when it answered within. A check that
 * cannot be made blames every chunk. */
static pv_result prove_against(struct advisor_worker *w, const struct advisor_widen_in *in,
                               const char *cand, const char *bound, json_t *culprits, json_t *open,
                               bool *done)
{
    char err[900];
    char why[1200];
    json_t *answer = check(w, cand, bound, err, sizeof(err));
    pv_result r;

    *done = false;
    PV_ENSURE(json_array_clear(open) == 0, PV_ERR_NOMEM);
    if (answer == NULL) {
        snprintf(why, sizeof(why),
                 "could not be proved again: the policy after %.200s could not be proved against "
                 "the policy before (%s)",
                 in->cause, err);
        return blame_all(in->chunks, why, culprits);
    }
    if (strcmp(json_string_value(json_object_get(answer, "verdict")), "within") == 0) {
        *done = true;
        json_decref(answer);
        return PV_RESULT_OK;
    }
    r = blame(w, in, answer, culprits, open);
    json_decref(answer);
    return r;
}

/* Does approved chunk 'id''s own rule reach the counterexample's binary,
 * host and port? */
static bool reaches(struct advisor_worker *w, int64_t sandbox, const char *id,
                    const struct wit_req *x)
{
    struct model_policy *empty = model_policy_new_empty();
    struct model_policy *own = empty != NULL ? step(w, sandbox, empty, id) : NULL;
    struct wit_req conn = *x;
    struct model_decision d;
    bool hit = false;

    if (own != NULL) {
        conn.rq.binaries = &conn.bin;
        conn.rq.method = NULL;
        conn.rq.target = NULL;
        conn.rq.target_len = 0;
        conn.rq.dest = NULL;
        model_decide(own, &conn.rq, &d);
        hit = d.reason != MODEL_REASON_NO_ENDPOINT && d.reason != MODEL_REASON_BINARY &&
              d.reason != MODEL_REASON_NO_POLICY;
    }
    model_policy_free(own);
    model_policy_free(empty);
    return hit;
}

/* The counterexamples no step names (the base allows them, or they were
 * found in what the chunks touched and the evaluator cannot place them):
 * the chunks whose own rule reaches each one's binary, host and port are
 * suspended; when no chunk's rule does (a binary a merge added to another
 * rule's endpoints), every kept chunk is. */
static pv_result blame_near(struct advisor_worker *w, const struct advisor_widen_in *in,
                            const json_t *open, json_t *culprits)
{
    size_t i;
    const json_t *wit;
    char why[1600];

    if (json_array_size(open) == 0) {
        return blame_all(in->chunks,
                         "widened: the policy after the change grants a request the policy "
                         "before did not, and the prover named none",
                         culprits);
    }
    json_array_foreach(open, i, wit)
    {
        struct wit_req x;
        size_t before = json_array_size(culprits);

        widened_why(in, wit,
                    ", and what the approved chunks on that host add beside the base could "
                    "not be told apart",
                    why, sizeof(why));
        for (size_t k = 0; wit_request(wit, &x) && k < json_array_size(in->chunks); k++) {
            const json_t *id = json_array_get(in->chunks, k);
            if (reaches(w, in->sandbox, json_string_value(id), &x)) {
                PV_GUARD(blame_one(culprits, id, why));
            }
        }
        if (json_array_size(culprits) == before) {
            return blame_all(in->chunks, why, culprits);
        }
    }
    return PV_RESULT_OK;
}

pv_result advisor_widening(struct advisor_worker *w, const struct advisor_widen_in *in,
                           json_t *culprits)
{
    json_t *open = json_array();
    char *cand = NULL;
    char *both = NULL;
    bool done = false;
    pv_result r;

    if (json_array_size(in->chunks) == 0 || strcmp(in->now_hash, in->before_hash) == 0) {
        json_decref(open);
        return PV_RESULT_OK; /* the base alone, or nothing moved */
    }
    PV_ENSURE(open != NULL, PV_ERR_NOMEM);
    /* N against O; then what the chunks touched against O (N minus the
     * base lies in it); then against O and the base side by side */
    r = prove_against(w, in, in->now_yaml, in->before_yaml, culprits, open, &done);
    if (pv_ok(r) && !done && json_array_size(culprits) == 0) {
        cand = touched(in);
        done = cand != NULL && cand[0] == '\0';
        r = cand == NULL ? pv_fail(PV_ERR_NOMEM, __func__)
            : done       ? PV_RESULT_OK
                         : prove_against(w, in, cand, in->before_yaml, culprits, open, &done);
    }
    if (pv_ok(r) && !done && json_array_size(culprits) == 0) {
        both = side_by_side(in->before, in->base);
        r = both != NULL ? prove_against(w, in, cand, both, culprits, open, &done)
                         : blame_all(in->chunks,
                                     "could not be proved again: the policies before and after "
                                     "the change could not be put side by side",
                                     culprits);
    }
    if (pv_ok(r) && !done && json_array_size(culprits) == 0) {
        r = blame_near(w, in, open, culprits);
    }
    free(cand);
    free(both);
    json_decref(open);
    return r;
}
