/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_eval.c - evaluating a chunk: merge, validate, prove, token, diff
 *
 * Evaluation is a pure function of its inputs - the current effective
 * policy (by hash), the rule, the credentials and the boundary - captured
 * once in a snapshot. The candidate is the model's merge of the rule into
 * that policy (validated and compiled by the merge); the prover is asked,
 * over HTTP, what the candidate grants beyond the current policy. The
 * review token digests every input, so a reviewer's approval names exactly
 * the evaluation they read; if any input changes, the token changes.
 *
 * Failures of the inputs (a rule that does not merge or validate) and of
 * the prover (unreachable, an error status, `unknown`) never fail the
 * evaluation: they become application_error, which keeps the chunk out of
 * auto-approval.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/life/life.h"
#include "advisor/store/store.h"
#include "common/pv_dynbuf.h"
#include "model/model.h"

#define BOUNDARY_KEY "@auto_approval_boundary"

/* ===========================================================================
 * Snapshot
 * ========================================================================= */

void advisor_snapshot_clear(struct advisor_snapshot *s)
{
    free(s->name);
    free(s->yaml);
    free(s->credentials);
    free(s->boundary);
    if (s->w != NULL && s->w->pol_cache == NULL && s->policy != NULL && s->yaml_json != NULL) {
        s->w->pol_cache = s->policy;
        s->w->pol_json = s->yaml_json;
        memcpy(s->w->pol_hash, s->hash, sizeof(s->hash));
        memcpy(s->w->pol_blob, s->blob, sizeof(s->blob));
    } else {
        model_policy_free(s->policy);
        free(s->yaml_json);
    }
    memset(s, 0, sizeof(*s));
}

/* 'text' as a JSON string literal (quotes and escapes), or NULL. */
static char *json_string_literal(const char *text)
{
    json_t *j = json_string(text);
    char *s = j != NULL ? json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;

    json_decref(j);
    return s;
}

/* Nothing is decided on a revision whose text is not the policy it records
 * (docs/advisor.md#integrity): checked when the text is parsed, so a cache
 * hit (same hash and blob) was checked when it was parsed. */
static pv_result snapshot_backed(struct advisor_snapshot *out)
{
    char content[65];
    struct store_revision rev = {.rev = out->rev, .blob = out->blob, .hash = out->hash};

    if (pv_ok(model_policy_sha256(out->policy, content)) && strcmp(content, out->hash) == 0) {
        return PV_RESULT_OK;
    }
    /* logs and counts the refusal */
    free(advisor_rev_text(out->w->st, out->name, &rev, NULL));
    model_policy_free(out->policy); /* never into the worker's cache */
    out->policy = NULL;
    advisor_snapshot_clear(out);
    PV_BAIL(PV_ERR_IO); /* "the store failed; see the advisor's log" */
}

pv_result advisor_snapshot_take(struct advisor_worker *w, const char *sandbox,
                                struct advisor_snapshot *out)
{
    struct store_sandbox sb;
    struct store_revision rev;
    struct model_diags *d;
    size_t len = 0;

    memset(out, 0, sizeof(*out));
    /* nothing is decided on inputs the chain does not back
     * (docs/audit.md#inputs); logged there, answered as a store failure */
    PV_ENSURE(advisor_inputs_backed(w->st, sandbox), PV_ERR_IO);
    PV_GUARD(store_sandbox_get(w->st, sandbox, &sb));
    out->sandbox = sb.id;
    out->name = sb.name;
    out->credentials = sb.credentials;
    sb.name = NULL;
    sb.credentials = NULL;
    if (sb.boundary[0] != '\0') {
        out->boundary = sb.boundary;
        sb.boundary = NULL;
    } else {
        out->boundary = store_setting_get(w->st, "", BOUNDARY_KEY);
        if (out->boundary == NULL) {
            out->boundary = pv_strdup("");
        }
    }
    store_sandbox_clear(&sb);
    if (!pv_ok(store_rev_latest(w->st, out->sandbox, &rev))) {
        advisor_snapshot_clear(out);
        PV_BAIL(PV_ERR_IO);
    }
    out->rev = rev.rev;
    snprintf(out->hash, sizeof(out->hash), "%s", rev.hash);
    snprintf(out->blob, sizeof(out->blob), "%s", rev.blob);
    out->yaml = store_blob_get(w->st, rev.blob, &len);
    store_revision_clear(&rev);
    out->w = w;
    if (out->yaml == NULL || out->boundary == NULL) {
        advisor_snapshot_clear(out);
        PV_BAIL(PV_ERR_NOMEM);
    }
    if (w->pol_cache != NULL && strcmp(w->pol_hash, out->hash) == 0 &&
        strcmp(w->pol_blob, out->blob) == 0) {
        out->policy = w->pol_cache;
        out->yaml_json = w->pol_json;
        w->pol_cache = NULL;
        w->pol_json = NULL;
        return PV_RESULT_OK;
    }
    model_policy_free(w->pol_cache); /* another revision: parse this one */
    free(w->pol_json);
    w->pol_cache = NULL;
    w->pol_json = NULL;
    out->yaml_json = json_string_literal(out->yaml);
    if (out->yaml_json == NULL) {
        advisor_snapshot_clear(out);
        PV_BAIL(PV_ERR_NOMEM);
    }
    d = model_diags_new();
    if (d == NULL) {
        advisor_snapshot_clear(out);
        PV_BAIL(PV_ERR_NOMEM);
    }
    out->policy = model_policy_load("effective", out->yaml, len, MODEL_FMT_YAML, d);
    model_diags_free(d);
    if (out->policy == NULL) {
        advisor_snapshot_clear(out);
        PV_BAIL(PV_ERR_POLICY);
    }
    return snapshot_backed(out);
}

pv_result advisor_snapshot_set_policy(struct advisor_snapshot *s, struct model_policy *p)
{
    char hash[65];
    char *yaml = p != NULL ? model_policy_to_yaml_sha256(p, NULL, hash) : NULL;
    char *lit = yaml != NULL ? json_string_literal(yaml) : NULL;

    if (lit == NULL) {
        free(yaml);
        model_policy_free(p);
        PV_BAIL(PV_ERR_NOMEM);
    }
    model_policy_free(s->policy);
    free(s->yaml);
    free(s->yaml_json);
    s->policy = p;
    s->yaml = yaml;
    s->yaml_json = lit;
    memcpy(s->hash, hash, sizeof(s->hash));
    advisor_sha256_hex(yaml, strlen(yaml), s->blob);
    return PV_RESULT_OK;
}

/* ===========================================================================
 * Helpers
 * ========================================================================= */

/* Every diagnostic message, one line each (for one_line). */
static char *diag_text(struct model_diags *d)
{
    struct pv_dynbuf b;
    char *text;
    char *one;

    pv_dynbuf_init(&b, 1u << 20);
    for (size_t i = 0; i < model_diags_count(d); i++) {
        pv_dynbuf_putf(&b, "%s\n", model_diags_msg(d, i));
    }
    text = pv_dynbuf_finish(&b);
    one = text != NULL ? advisor_one_line(text) : NULL;
    free(text);
    return one;
}

static void token_of(struct advisor_eval *e, const char *name, const char *rule_text,
                     const struct advisor_snapshot *snap)
{
    struct pv_dynbuf b;
    char creds[65];
    char bound[65];

    advisor_sha256_hex(snap->credentials, strlen(snap->credentials), creds);
    advisor_sha256_hex(snap->boundary, strlen(snap->boundary), bound);
    pv_dynbuf_init(&b, 64u * 1024u * 1024u);
    if (e->application_error[0] == '\0') {
        pv_dynbuf_puts(&b, "proviso-proposal-evaluator-v1");
        pv_dynbuf_putc(&b, '\0');
        pv_dynbuf_putf(&b, "%s%c%s%c%s%c%s%c%s%c%s", name, 0, rule_text, 0, snap->hash, 0,
                       e->candidate_hash, 0, creds, 0, bound);
    } else {
        pv_dynbuf_puts(&b, "proviso-proposal-evaluator-v1-failed");
        pv_dynbuf_putc(&b, '\0');
        pv_dynbuf_putf(&b, "%s%c%s%c%s%c%s", name, 0, rule_text, 0, snap->hash, 0,
                       e->application_error);
    }
    e->review_token = b.failed ? NULL : pv_malloc(65);
    if (e->review_token != NULL) {
        advisor_sha256_hex(b.buf != NULL ? b.buf : "", b.len, e->review_token);
    }
    pv_dynbuf_free(&b);
}

/* application_error = prefix + detail. */
static void set_error(struct advisor_eval *e, const char *prefix, const char *detail,
                      const char *suffix)
{
    char buf[2048];

    snprintf(buf, sizeof(buf), "%s%s%s", prefix, detail, suffix);
    free(e->application_error);
    e->application_error = pv_strdup(buf);
    /* every step says so in these words (pv_strerror(PV_ERR_NOMEM)) */
    if (strstr(detail, pv_strerror(PV_ERR_NOMEM)) != NULL) {
        e->nomem = true;
    }
}

/* POST a JSON body to the prover; the answer or NULL with 'err' set. */
static json_t *ask_text(struct advisor_worker *w, const char *path, const char *text, char *err,
                        size_t errlen)
{
    json_t *answer = NULL;
    long status = 0;
    pv_result r;

    r = advisor_prover_post(w->pc, path, text, strlen(text), &status, &answer, err, errlen);
    if (!pv_ok(r)) {
        return NULL;
    }
    if (status != 200 || !json_is_object(answer)) {
        const char *detail = json_string_value(json_object_get(answer, "detail"));
        snprintf(err, errlen, "prover answered %ld%s%s", status, detail != NULL ? ": " : "",
                 detail != NULL ? detail : "");
        json_decref(answer);
        return NULL;
    }
    return answer;
}

static json_t *ask(struct advisor_worker *w, const char *path, json_t *body /* steals */, char *err,
                   size_t errlen)
{
    char *text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
    json_t *answer;

    json_decref(body);
    if (text == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    answer = ask_text(w, path, text, err, errlen);
    free(text);
    return answer;
}

/* ===========================================================================
 * Evaluate
 * ========================================================================= */

void advisor_eval_clear(struct advisor_eval *e)
{
    model_policy_free(e->candidate);
    free(e->candidate_yaml);
    free(e->validation_result);
    free(e->application_error);
    free(e->security_notes);
    free(e->review_token);
    free(e->diff);
    json_decref(e->evidence);
    memset(e, 0, sizeof(*e));
}

/* Does the rule name a peer sandbox? Its candidate is then the resolved one
 * (docs/semantics.md#target-sandbox), which the prover's own merge of the
 * bare proposal would not reproduce. */
static bool rule_names_peer(const json_t *rule)
{
    const json_t *eps = json_object_get(rule, "endpoints");
    const json_t *ep;
    size_t i;

    json_array_foreach(eps, i, ep)
    {
        if (json_object_get(ep, "target_sandbox") != NULL) {
            return true;
        }
    }
    return false;
}

/* Same endpoints and binaries, in order (the rules' fingerprints). */
static bool rule_same(const struct model_rule *a, const struct model_rule *b)
{
    size_t la = 0;
    size_t lb = 0;
    uint64_t ha = 0;
    uint64_t hb = 0;
    const char *fa = model_rule_fp(a, &la, &ha);
    const char *fb = model_rule_fp(b, &lb, &hb);

    return fa != NULL && fb != NULL && ha == hb && la == lb && memcmp(fa, fb, la) == 0;
}

/* The peer of a candidate rule that names a target_sandbox and is not
 * exactly a rule of the current policy, or NULL. The merge may fold a rule
 * that never says target_sandbox into a peer rule (a new binary, port or
 * path): the peer gains reach the moment it registers, and an unresolved
 * peer proves `empty`, so such a change is a reviewer's call too. */
static const char *changed_peer(const struct model_policy *base, const struct model_policy *cand)
{
    for (size_t i = 0; i < model_policy_nrules(cand); i++) {
        const struct model_rule *r = model_policy_rule(cand, i);
        const struct model_rule *b;
        const char *peer = model_rule_peer(r);

        if (peer == NULL) {
            continue;
        }
        b = model_policy_find_rule(base, model_rule_key(r));
        if (b == NULL || !rule_same(b, r)) {
            return peer;
        }
    }
    return NULL;
}

/* Add the peer note when the candidate changes a peer rule. */
static void note_changed_peer(const struct advisor_snapshot *snap, struct advisor_eval *e)
{
    const char *peer = changed_peer(snap->policy, e->candidate);
    char line[400];
    char *notes;
    size_t n;

    if (peer == NULL) {
        return;
    }
    snprintf(line, sizeof(line),
             "Endpoint reaches peer sandbox '%.128s' (target_sandbox): peer reach is never "
             "approved automatically.",
             peer);
    if (strstr(e->security_notes, line) != NULL) {
        return;
    }
    n = strlen(e->security_notes) + strlen(line) + 2;
    notes = pv_malloc(n);
    if (notes == NULL) {
        free(e->application_error);
        e->application_error = pv_strdup("out of memory");
        e->nomem = true;
        return;
    }
    snprintf(notes, n, "%s%s%s", e->security_notes, e->security_notes[0] != '\0' ? " " : "", line);
    free(e->security_notes);
    e->security_notes = notes;
}

/* 'proposal' NULL: send the candidate the advisor composed instead. */
static void prove(struct advisor_worker *w, const struct advisor_snapshot *snap,
                  const char *proposal, struct advisor_eval *e)
{
    char err[1024];
    /* The prover is sent the baseline and the proposal, and merges them
     * itself with the same model merge (its compiled baseline is cached, so
     * it parses only the one-rule proposal); the candidate the advisor
     * merged is what the audit record keeps, and a replay proves it against
     * the baseline, so the two merges are checked against each other. The
     * baseline's escaped text comes with the snapshot (the same for every
     * proposal against a revision) and the body is put together around it.
     * A rule naming a peer sandbox is sent as the resolved candidate. */
    char *cand = json_string_literal(proposal != NULL ? proposal : e->candidate_yaml);
    char *creds = snap->credentials[0] != '\0' ? json_string_literal(snap->credentials) : NULL;
    struct pv_dynbuf b;
    char *body = NULL;
    json_t *answer;
    const char *verdict;
    const char *vr;

    pv_dynbuf_init(&b, SIZE_MAX / 2);
    if (cand != NULL && snap->yaml_json != NULL &&
        (snap->credentials[0] == '\0' || creds != NULL)) {
        pv_dynbuf_puts(&b, "{\"baseline\":");
        pv_dynbuf_puts(&b, snap->yaml_json);
        pv_dynbuf_puts(&b, proposal != NULL ? ",\"proposal\":" : ",\"candidate\":");
        pv_dynbuf_puts(&b, cand);
        if (creds != NULL) {
            pv_dynbuf_puts(&b, ",\"credentials\":");
            pv_dynbuf_puts(&b, creds);
        }
        pv_dynbuf_putc(&b, '}');
        body = pv_dynbuf_finish(&b);
    } else {
        pv_dynbuf_free(&b);
    }
    free(cand);
    free(creds);
    answer = body != NULL ? ask_text(w, "/v1/prove", body, err, sizeof(err)) : NULL;
    if (body == NULL) {
        snprintf(err, sizeof(err), "out of memory");
    }
    free(body);
    if (answer == NULL) {
        free(e->validation_result);
        e->validation_result = pv_strdup("validation unavailable");
        set_error(e, "prover validation unavailable; proposal cannot be reviewed (", err, ")");
        return;
    }
    verdict = json_string_value(json_object_get(answer, "verdict"));
    vr = json_string_value(json_object_get(answer, "validation_result"));
    e->prover_version = NULL;
    json_object_set(e->evidence, "prover", answer);
    free(e->validation_result);
    e->validation_result = pv_strdup(vr != NULL ? vr : "validation unavailable");
    if (verdict == NULL || vr == NULL) {
        set_error(e, "prover answer without a verdict", "", "");
    } else if (strcmp(verdict, "unknown") == 0) {
        const char *why = json_string_value(json_object_get(answer, "reason"));
        set_error(e, "prover could not decide (", why != NULL ? why : "unknown",
                  "); a reviewer must decide");
    } else {
        e->empty = strcmp(verdict, "empty") == 0;
    }
    json_decref(answer);
}

static void check_boundary(struct advisor_worker *w, const struct advisor_snapshot *snap,
                           struct advisor_eval *e)
{
    char err[1024];
    json_t *answer;
    const char *verdict;

    if (snap->boundary[0] == '\0') {
        e->within_boundary = true;
        return;
    }
    answer = ask(w, "/v1/check",
                 json_pack("{s:s,s:s}", "candidate", e->candidate_yaml, "boundary", snap->boundary),
                 err, sizeof(err));
    if (answer == NULL) {
        json_object_set_new(e->evidence, "boundary", json_pack("{s:s}", "error", err));
        return;
    }
    verdict = json_string_value(json_object_get(answer, "verdict"));
    e->within_boundary = verdict != NULL && strcmp(verdict, "within") == 0;
    json_object_set_new(e->evidence, "boundary", answer);
}

/* Does the candidate allow anything the policy in force does not? With an
 * empty verdict and grants listed (units that differ in their text), the
 * containment check decides it exactly: a rule the policy already covers
 * through another rule, a host glob or a wider path is contained, and an
 * approval of it would grant nothing until that cover goes
 * (docs/advisor.md#reproof). Without grants the candidate's units are the
 * policy's own: contained without asking. */
static void check_contained(struct advisor_worker *w, const struct advisor_snapshot *snap,
                            const json_t *rule, struct advisor_eval *e)
{
    const json_t *grants = json_object_get(json_object_get(e->evidence, "prover"), "grants");
    char err[1024];
    json_t *answer;
    const char *verdict;

    e->contained = false;
    if (!e->empty || e->application_error[0] != '\0' || !json_is_array(grants)) {
        return;
    }
    if (json_array_size(grants) == 0) {
        e->contained = true;
        return;
    }
    if (advisor_rule_blocked_host(rule, false) != NULL) {
        /* A loopback host, admitted only by --test-allow-loopback: a proof
         * sees it as blocked (it admits nothing), the test proxy does not. */
        return;
    }
    if (rule_names_peer(rule) || changed_peer(snap->policy, e->candidate) != NULL) {
        /* A peer's reach follows its registration (#peers): what it admits
         * now (nothing, while it is unresolved) says nothing about later. */
        return;
    }
    answer = ask(w, "/v1/check",
                 json_pack("{s:s,s:s}", "candidate", e->candidate_yaml, "boundary", snap->yaml),
                 err, sizeof(err));
    verdict = json_string_value(json_object_get(answer, "verdict"));
    e->contained = verdict != NULL && strcmp(verdict, "within") == 0;
    if (answer != NULL) {
        json_object_set_new(e->evidence, "containment",
                            json_pack("{s:s}", "verdict", verdict != NULL ? verdict : "?"));
    }
    json_decref(answer);
}

/* Is the candidate within 'bound''s candidate (POST /v1/check, bound's
 * candidate as the boundary)? A narrowed suggestion must be
 * (docs/advisor.md#suggestion): when it is not, or the check could not say,
 * application_error names why and nothing more is asked. */
static bool check_within_bound(struct advisor_worker *w, const struct advisor_eval *bound,
                               struct advisor_eval *e)
{
    char err[1024] = "";
    json_t *answer = NULL;
    const char *verdict;

    if (bound->candidate_yaml == NULL || bound->application_error[0] != '\0') {
        set_error(e, "not within the proposal: ", "the proposal has no candidate", "");
        return false;
    }
    answer = ask(
        w, "/v1/check",
        json_pack("{s:s,s:s}", "candidate", e->candidate_yaml, "boundary", bound->candidate_yaml),
        err, sizeof(err));
    verdict = json_string_value(json_object_get(answer, "verdict"));
    if (verdict != NULL && strcmp(verdict, "within") == 0) {
        json_object_set_new(e->evidence, "within_proposal", json_pack("{s:s}", "verdict", verdict));
        json_decref(answer);
        return true;
    }
    set_error(e, "not within the proposal: ",
              verdict != NULL ? verdict : (err[0] != '\0' ? err : "no verdict"), "");
    json_decref(answer);
    return false;
}

bool advisor_eval_exceeds(struct advisor_worker *w, const char *candidate, const char *boundary)
{
    char err[1024];
    json_t *answer =
        ask(w, "/v1/check", json_pack("{s:s,s:s}", "candidate", candidate, "boundary", boundary),
            err, sizeof(err));
    const char *verdict = json_string_value(json_object_get(answer, "verdict"));
    bool exceeds = verdict != NULL && strcmp(verdict, "exceeds") == 0;

    json_decref(answer);
    return exceeds;
}

/* The boundary check, or - for an evaluation within 'bound' (may be NULL)
 * whose own candidate stayed within the boundary - its answer by
 * transitivity: within the proposal, which is within the boundary. */
static void check_boundary_or_bound(struct advisor_worker *w, const struct advisor_snapshot *snap,
                                    const struct advisor_eval *bound, struct advisor_eval *e)
{
    if (bound == NULL || !bound->within_boundary || snap->boundary[0] == '\0') {
        check_boundary(w, snap, e);
        return;
    }
    e->within_boundary = true;
    json_object_set_new(e->evidence, "boundary",
                        json_pack("{s:s,s:s}", "verdict", "within", "by",
                                  "within the proposal, whose candidate is within the boundary"));
}

/* The auto-approval envelope (advisor_envelope.c): its answer goes into
 * the evidence, so the reviewer, the CLI and the agent read the clause and
 * the grant that keep a chunk from being approved automatically. */
static void check_envelope(struct advisor_worker *w, const struct advisor_snapshot *snap,
                           const json_t *rule, struct advisor_eval *e)
{
    struct advisor_envelope env;
    const json_t *grants = json_object_get(json_object_get(e->evidence, "prover"), "grants");
    char note[1400];

    advisor_envelope_get(w->st, snap->name, &env);
    e->within_envelope =
        advisor_envelope_within(&env, snap->policy, rule, grants, note, sizeof(note));
    json_object_set_new(
        e->evidence, "envelope",
        json_pack("{s:b,s:b,s:s}", "on", env.on, "within", e->within_envelope, "note", note));
}

/* Everything asked of the prover about a merged candidate: within 'bound'
 * first when there is one (nothing else is asked when it is not), the
 * proof, the boundary, then - unless a re-proof - containment and the
 * envelope. */
static void run_checks(struct advisor_worker *w, const struct advisor_snapshot *snap,
                       const json_t *rule, const char *text, unsigned flags,
                       const struct advisor_eval *bound, struct advisor_eval *out)
{
    if (bound != NULL && !check_within_bound(w, bound, out)) {
        return;
    }
    prove(w, snap, rule_names_peer(rule) ? NULL : text, out);
    check_boundary_or_bound(w, snap, bound, out);
    if ((flags & ADVISOR_EVAL_PROOF_ONLY) == 0) {
        check_contained(w, snap, rule, out);
        check_envelope(w, snap, rule, out);
    }
}

bool advisor_eval_adds_nothing(const struct advisor_eval *e)
{
    return e->candidate != NULL && e->application_error[0] == '\0' && e->empty && e->contained;
}

pv_result advisor_evaluate(struct advisor_worker *w, const struct advisor_snapshot *snap,
                           const char *name, const json_t *rule, struct advisor_eval *out)
{
    return advisor_evaluate_reuse(w, snap, name, rule, NULL, 0, out);
}

static pv_result evaluate(struct advisor_worker *w, const struct advisor_snapshot *snap,
                          const char *name, const json_t *rule, const char *known_token,
                          unsigned flags, const struct advisor_eval *bound,
                          struct advisor_eval *out);

pv_result advisor_evaluate_reuse(struct advisor_worker *w, const struct advisor_snapshot *snap,
                                 const char *name, const json_t *rule, const char *known_token,
                                 unsigned flags, struct advisor_eval *out)
{
    return evaluate(w, snap, name, rule, known_token, flags, NULL, out);
}

pv_result advisor_evaluate_within(struct advisor_worker *w, const struct advisor_snapshot *snap,
                                  const char *name, const json_t *rule,
                                  const struct advisor_eval *bound, struct advisor_eval *out)
{
    return evaluate(w, snap, name, rule, NULL, 0, bound, out);
}

static pv_result evaluate(struct advisor_worker *w, const struct advisor_snapshot *snap,
                          const char *name, const json_t *rule, const char *known_token,
                          unsigned flags, const struct advisor_eval *bound,
                          struct advisor_eval *out)
{
    struct model_diags *d = model_diags_new();
    struct model_proposal *pr = NULL;
    char *text = NULL;
    char *rule_text = advisor_json_canonical(rule);
    char peer_err[1024] = "";
    size_t len = 0;

    memset(out, 0, sizeof(*out));
    out->validation_result = pv_strdup("");
    out->application_error = pv_strdup("");
    out->security_notes = advisor_rule_security_notes(rule);
    out->evidence = json_object();
    if (d == NULL || rule_text == NULL || out->validation_result == NULL ||
        out->application_error == NULL || out->security_notes == NULL || out->evidence == NULL) {
        goto nomem;
    }
    text = advisor_proposal_text(name, rule, &len);
    if (text == NULL) {
        goto nomem;
    }
    pr = model_proposal_load("proposal", text, len, d);
    if (pr != NULL) {
        out->candidate = model_policy_merge(snap->policy, pr, true, d);
    }
    if (out->candidate != NULL &&
        !pv_ok(advisor_resolve_peers(w, out->candidate, peer_err, sizeof(peer_err)))) {
        model_policy_free(out->candidate);
        out->candidate = NULL;
    }
    if (out->candidate == NULL && peer_err[0] != '\0') {
        set_error(out, "", peer_err, "");
    } else if (out->candidate == NULL && (model_diags_nomem(d) || model_diags_count(d) == 0)) {
        goto nomem; /* ours, not the candidate's */
    } else if (out->candidate == NULL) {
        char *why = diag_text(d);
        set_error(out, pr == NULL ? "candidate invalid: " : "merge failed: ",
                  why != NULL ? why : "out of memory", "");
        free(why);
    } else {
        out->candidate_yaml =
            model_policy_to_yaml_sha256(out->candidate, NULL, out->candidate_hash);
        if (out->candidate_yaml == NULL) {
            goto nomem;
        }
        out->diff = advisor_policy_diff(snap->yaml, out->candidate_yaml);
        if (out->diff == NULL ||
            json_object_set_new(out->evidence, "diff", json_string(out->diff)) != 0) {
            goto nomem;
        }
        note_changed_peer(snap, out);
        if (known_token != NULL && out->application_error[0] == '\0') {
            /* The same inputs as an evaluation already stored: its token
             * names them all, so its proof stands (docs/advisor.md#reproof). */
            token_of(out, name, rule_text, snap);
            if (out->review_token != NULL && strcmp(out->review_token, known_token) == 0) {
                out->reused = true;
                goto done;
            }
            free(out->review_token);
            out->review_token = NULL;
        }
        run_checks(w, snap, rule, text, flags, bound, out);
    }
    /* a step that could not copy its text leaves NULL: out of memory, not
     * an evaluation to store or approve on */
    if (out->application_error == NULL || out->validation_result == NULL ||
        out->security_notes == NULL) {
        goto nomem;
    }
    if (out->application_error[0] != '\0') {
        out->empty = false;
    }
    token_of(out, name, rule_text, snap);
done:
    if (out->review_token == NULL) {
        goto nomem;
    }
    model_proposal_free(pr);
    model_diags_free(d);
    free(text);
    free(rule_text);
    return PV_RESULT_OK;
nomem:
    model_proposal_free(pr);
    model_diags_free(d);
    free(text);
    free(rule_text);
    advisor_eval_clear(out);
    PV_BAIL(PV_ERR_NOMEM);
}

/* ===========================================================================
 * Composition: base + approved chunks in approval order
 * ========================================================================= */

struct approved_list {
    char **ids;
    char **names;
    char **rules;
    size_t n;
    size_t cap;
    bool oom;
};

static void collect(void *arg, const struct store_chunk *c)
{
    struct approved_list *l = arg;

    if (l->oom) {
        return;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap == 0 ? 16 : 2 * l->cap;
        char **a = pv_realloc(l->ids, cap * sizeof(*a));
        char **b = a != NULL ? pv_realloc(l->names, cap * sizeof(*b)) : NULL;
        char **r = b != NULL ? pv_realloc(l->rules, cap * sizeof(*r)) : NULL;
        if (a != NULL) {
            l->ids = a;
        }
        if (b != NULL) {
            l->names = b;
        }
        if (r == NULL) {
            l->oom = true;
            return;
        }
        l->rules = r;
        l->cap = cap;
    }
    l->ids[l->n] = pv_strdup(c->id);
    l->names[l->n] = pv_strdup(c->rule_name);
    l->rules[l->n] = pv_strdup(c->proposed_rule);
    l->n++;
    if (l->ids[l->n - 1] == NULL || l->names[l->n - 1] == NULL || l->rules[l->n - 1] == NULL) {
        l->oom = true;
    }
}

static void approved_free(struct approved_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->ids[i]);
        free(l->names[i]);
        free(l->rules[i]);
    }
    free(l->ids);
    free(l->names);
    free(l->rules);
}

struct model_policy *advisor_compose(struct advisor_worker *w, int64_t sandbox, const char *skip,
                                     char *err, size_t errlen)
{
    struct store_revision base;
    struct approved_list l;
    struct model_policy *p = NULL;
    struct model_diags *d = model_diags_new();
    char *yaml = NULL;
    size_t len = 0;

    memset(&l, 0, sizeof(l));
    if (d == NULL || !pv_ok(store_base_latest(w->st, sandbox, &base))) {
        snprintf(err, errlen, "the sandbox has no base policy");
        model_diags_free(d);
        return NULL;
    }
    yaml = store_blob_get(w->st, base.blob, &len);
    store_revision_clear(&base);
    if (yaml != NULL) {
        p = model_policy_load("base", yaml, len, MODEL_FMT_YAML, d);
    }
    free(yaml);
    if (p == NULL || !pv_ok(store_chunk_each_approved(w->st, sandbox, collect, &l)) || l.oom) {
        snprintf(err, errlen, "cannot read the base policy or the approved chunks");
        goto fail;
    }
    for (size_t i = 0; i < l.n; i++) {
        json_t *rule;
        struct model_policy *next;

        if (skip != NULL && strcmp(l.ids[i], skip) == 0) {
            continue;
        }
        rule = json_loads(l.rules[i], 0, NULL);
        next = rule != NULL ? model_policy_merge_rule(p, l.names[i], rule, d) : NULL;
        json_decref(rule);
        if (next == NULL) {
            char *why = diag_text(d);
            snprintf(err, errlen, "approved chunk %s no longer merges: %s", l.ids[i],
                     why != NULL ? why : "out of memory");
            free(why);
            goto fail;
        }
        model_policy_free(p);
        p = next;
    }
    approved_free(&l);
    model_diags_free(d);
    if (!pv_ok(advisor_resolve_peers(w, p, err, errlen))) {
        model_policy_free(p);
        return NULL;
    }
    return p;
fail:
    approved_free(&l);
    model_diags_free(d);
    model_policy_free(p);
    return NULL;
}
