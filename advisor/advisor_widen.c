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
 *     Within: done.
 *  2. Each counterexample is decided by the concrete evaluator on the
 *     composition's steps - the base, then each kept chunk merged in
 *     approval order - and the first step that allows it names the chunk
 *     that gains it; that chunk is suspended with the witness as the
 *     reason, and the caller composes again.
 *  3. A counterexample the base alone allows is the operator's authority.
 *     Then N is checked against O and the base side by side (their rules in
 *     one policy: it allows no request that neither allows, since a deny
 *     rule of either applies to both), and step 2 repeats.
 *  4. What cannot be decided - the prover is unreachable or answers
 *     unknown, a counterexample no step allows (a GraphQL operation the
 *     evaluator is not given), or a counterexample the base allows but
 *     the side-by-side policy hides - suspends every kept chunk: the base
 *     alone is always within. The proof errs towards suspension.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/advisor.h"
#include "advisor/store.h"
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
 * The proofs
 * ========================================================================= */

/* O's and the base's rules side by side (keys prefixed so they cannot
 * meet): a request is allowed only when one of them allows it and no deny
 * rule of either refuses it, so this policy allows no more than the two.
 * Canonical YAML, or NULL. */
static char *side_by_side(const struct model_policy *before, const struct model_policy *base)
{
    const struct model_policy *two[2] = {before, base};
    static const char *const prefix[2] = {"before.", "base."};
    json_t *np = json_object();
    json_t *doc = json_pack("{s:i}", "version", 1);
    struct model_policy *p = NULL;
    char *text = NULL;
    char *yaml = NULL;

    for (size_t s = 0; s < 2 && np != NULL && doc != NULL; s++) {
        char *js = model_policy_to_json(two[s], NULL);
        json_t *j = js != NULL ? json_loads(js, 0, NULL) : NULL;
        const char *k;
        json_t *v;

        free(js);
        json_object_foreach(json_object_get(j, "network_policies"), k, v)
        {
            char key[512];
            snprintf(key, sizeof(key), "%s%.400s", prefix[s], k);
            json_object_set(np, key, v);
        }
        json_decref(j);
    }
    if (np != NULL && doc != NULL && json_object_set(doc, "network_policies", np) == 0) {
        text = json_dumps(doc, JSON_COMPACT);
    }
    if (text != NULL) {
        struct model_diags *d = model_diags_new();
        p = d != NULL ? model_policy_load("side-by-side", text, strlen(text), MODEL_FMT_JSON, d)
                      : NULL;
        model_diags_free(d);
    }
    yaml = p != NULL ? model_policy_to_yaml(p, NULL) : NULL;
    model_policy_free(p);
    free(text);
    json_decref(np);
    json_decref(doc);
    return yaml;
}

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

/* Every kept chunk, each with 'why'. */
static pv_result blame_all(const json_t *chunks, const char *why, json_t *culprits)
{
    size_t i;
    const json_t *id;

    json_array_foreach(chunks, i, id)
    {
        PV_ENSURE(json_array_append_new(culprits,
                                        json_pack("{s:O,s:s}", "chunk_id", id, "reason", why)) == 0,
                  PV_ERR_NOMEM);
    }
    return PV_RESULT_OK;
}

/* The chunks the counterexamples of 'answer' name (each once) into
 * 'culprits'; '*base' when one of them is the base's own, '*lost' when one
 * is allowed by no step. */
static pv_result blame(struct advisor_worker *w, const struct advisor_widen_in *in,
                       const json_t *answer, json_t *culprits, bool *base, bool *lost)
{
    size_t i;
    const json_t *f;

    json_array_foreach(json_object_get(answer, "findings"), i, f)
    {
        size_t j;
        const json_t *path;
        json_array_foreach(json_object_get(f, "paths"), j, path)
        {
            const json_t *wit = json_object_get(path, "witness");
            struct wit_req x;
            long k = wit_request(wit, &x) ? first_step(w, in->sandbox, in->base, in->chunks, &x)
                                          : STEP_NONE;
            char what[1200];
            char why[1600];

            *base = *base || k == STEP_BASE;
            *lost = *lost || k == STEP_NONE;
            if (k < 0) {
                continue;
            }
            wit_text(wit, what, sizeof(what));
            snprintf(why, sizeof(why),
                     "widened by %.200s: now grants %s, which the policy before did not", in->cause,
                     what);
            PV_ENSURE(
                json_array_append_new(culprits, json_pack("{s:O,s:s}", "chunk_id",
                                                          json_array_get(in->chunks, (size_t)k),
                                                          "reason", why)) == 0,
                PV_ERR_NOMEM);
        }
    }
    return PV_RESULT_OK;
}

/* One check and its blame; '*done' when it answered within. */
static pv_result prove_against(struct advisor_worker *w, const struct advisor_widen_in *in,
                               const char *bound, json_t *culprits, bool *done, bool *base,
                               bool *lost)
{
    char err[900];
    char why[1200];
    json_t *answer = check(w, in->now_yaml, bound, err, sizeof(err));
    const char *v = json_string_value(json_object_get(answer, "verdict"));
    pv_result r;

    *done = false;
    if (answer == NULL) {
        snprintf(why, sizeof(why),
                 "could not be proved again: the policy after %.200s could not be proved against "
                 "the policy before (%s)",
                 in->cause, err);
        return blame_all(in->chunks, why, culprits);
    }
    if (strcmp(v, "within") == 0) {
        *done = true;
        json_decref(answer);
        return PV_RESULT_OK;
    }
    r = blame(w, in, answer, culprits, base, lost);
    json_decref(answer);
    return r;
}

pv_result advisor_widening(struct advisor_worker *w, const struct advisor_widen_in *in,
                           json_t *culprits)
{
    bool done = false;
    bool base = false;
    bool lost = false;
    char *both;
    pv_result r;

    if (json_array_size(in->chunks) == 0 || strcmp(in->now_hash, in->before_hash) == 0) {
        return PV_RESULT_OK; /* the base alone, or nothing moved */
    }
    PV_GUARD(prove_against(w, in, in->before_yaml, culprits, &done, &base, &lost));
    if (done || json_array_size(culprits) > 0) {
        return PV_RESULT_OK;
    }
    if (!lost) {
        both = side_by_side(in->before, in->base);
        if (both == NULL) {
            return blame_all(in->chunks,
                             "could not be proved again: the policies before and after the "
                             "change could not be put side by side",
                             culprits);
        }
        base = false;
        r = prove_against(w, in, both, culprits, &done, &base, &lost);
        free(both);
        PV_GUARD(r);
        if (done || json_array_size(culprits) > 0) {
            return PV_RESULT_OK;
        }
    }
    return blame_all(in->chunks,
                     lost ? "widened: the policy after the change grants a request the policy "
                            "before did not, and no step of the composition could be named"
                          : "widened: the base now grants a request the policy before did not, "
                            "and what the approved chunks add beside it could not be told apart",
                     culprits);
}
