/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_chunk.c - the proposal lifecycle (docs/advisor.md#lifecycle)
 *
 *   new -> pending           submit (agent_authored or mechanistic)
 *   pending -> approved      reviewer approve, auto-approval, approve-all
 *   rejected -> approved     reviewer approve
 *   pending -> rejected      reviewer reject, supersede, reconcile
 *   approved -> rejected     reviewer reject (the chunk's grant is removed)
 *   approved -> pending      undo (the chunk's grant is removed)
 *   pending -> (deleted)     clear
 *
 * How a decision is made safe:
 *  - Every operation that can change a sandbox's effective policy holds the
 *    sandbox's stripe lock from its snapshot to its commit, and re-checks
 *    inside the transaction that the effective revision is still the one it
 *    evaluated against. So a chunk is approved (automatically or not) only
 *    with the verdict computed for exactly the policy it is merged into.
 *  - Every status write is compare-and-set on the status it read; a lost
 *    race is a 409, never a ledger that disagrees with the policy.
 *  - Removing a chunk (reject after approve, undo) recomposes the effective
 *    policy from the base revision and the remaining approved chunks, so it
 *    removes exactly what the chunk granted and nothing else.
 *  - The state change and its event commit in one transaction.
 *
 * Submissions evaluate outside the lock (the prover call is the slow part)
 * and take the lock only to commit; a submission whose snapshot went stale
 * meanwhile is evaluated again.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "advisor/life/life.h"
#include "advisor/life/life_int.h"
#include "advisor/store/store.h"
#include "common/pv_dynbuf.h"
#include "common/pv_log.h"
#include "model/model.h"

/* ===========================================================================
 * Replies and payloads
 * ========================================================================= */

/* What an agent may read of its chunk's evidence (docs/advisor.md#wait):
 * the grants (without the credentials in scope, a reviewer's fact), the
 * envelope's note and the narrowed suggestion's rule, so that the next
 * proposal is the right one. */
static void agent_evidence(struct advisor_worker *w, const struct store_chunk *c, json_t *j)
{
    char *text = c->evidence[0] != '\0' ? store_blob_get(w->st, c->evidence, NULL) : NULL;
    json_t *ev = advisor_load_json(text);
    const json_t *grants = json_object_get(json_object_get(ev, "prover"), "grants");
    const json_t *sug = json_object_get(json_object_get(ev, "suggestion"), "rule");
    const char *note = json_string_value(json_object_get(json_object_get(ev, "envelope"), "note"));

    free(text);
    if (json_is_array(grants)) {
        json_t *out = json_deep_copy(grants);
        size_t i;
        json_t *g;
        json_array_foreach(out, i, g)
        {
            json_object_del(g, "credentials");
        }
        json_object_set_new(j, "grants", out);
    }
    if (note != NULL && note[0] != '\0') {
        json_object_set_new(j, "envelope_note", json_string(note));
    }
    if (json_is_object(sug)) {
        json_object_set(j, "suggested_rule", PV_UNCONST(sug));
    }
    json_decref(ev);
}

/* The chunk as agents (policy.local) and reviewers read it. Without
 * 'reviewer' this is the agent view, the only one a sandbox's token gets
 * (show, wait, list): status, names, the prover's verdict text and the
 * hashes, plus what the agent needs for its next proposal (agent_evidence:
 * grants without credentials, the envelope's note, the suggested rule). The
 * reviewer-only fields - evidence (credential names and scopes, paths,
 * witnesses), security_notes, rationale, the proposed rule, confidence and
 * the decision metadata - are added only for the admin. */
json_t *advisor_chunk_json(struct advisor_worker *w, const struct store_chunk *c, bool reviewer)
{
    json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:s,s:s,s:s,s:s,s:s,s:s,s:I}", "chunk_id",
                          c->id, "status", c->status, "rule_name", c->rule_name, "binary",
                          c->binary, "host", c->host, "port", (json_int_t)c->port,
                          "rejection_reason", c->rejection_reason, "validation_result",
                          c->validation_result, "application_error", c->application_error,
                          "review_token", c->review_token, "current_effective_policy_hash",
                          c->current_hash, "candidate_effective_policy_hash", c->candidate_hash,
                          "approved_revision", (json_int_t)c->approved_rev);

    if (j == NULL) {
        return NULL;
    }
    if (strcmp(c->status, "suspended") == 0) {
        json_object_set_new(j, "suspension_reason", json_string(c->suspension_reason));
    }
    if (strcmp(c->status, "approved") == 0) {
        json_object_set_new(
            j, "policy_reloaded",
            json_boolean(c->approved_rev > 0 &&
                         store_loaded_latest(w->st, c->sandbox) >= c->approved_rev));
    }
    agent_evidence(w, c, j);
    if (!reviewer && json_object_get(j, "suggested_rule") != NULL &&
        strcmp(c->status, "pending") == 0) {
        /* the text an agent reads first names the rule it carries */
        struct pv_dynbuf b;
        char *text;

        pv_dynbuf_init(&b, 1u << 20);
        pv_dynbuf_putf(&b,
                       "%s; a narrower rule was proved approvable: it is in suggested_rule "
                       "(propose it instead, or wait for a reviewer)",
                       c->validation_result);
        text = pv_dynbuf_finish(&b);
        if (text != NULL) {
            json_object_set_new(j, "validation_result", json_string(text));
            free(text);
        }
    }
    if (reviewer) {
        json_t *ev = json_null();
        if (c->evidence[0] != '\0') {
            char *text = store_blob_get(w->st, c->evidence, NULL);
            json_decref(ev);
            ev = advisor_load_json(text);
            free(text);
        }
        if (c->approved_evidence[0] != '\0' && strcmp(c->approved_evidence, c->evidence) != 0) {
            /* What the approval rested on, beside the latest evaluation
             * (a suspended chunk shows both, docs/advisor.md#reproof). */
            char *text = store_blob_get(w->st, c->approved_evidence, NULL);
            json_object_set_new(j, "approved_evidence", advisor_load_json(text));
            free(text);
        }
        json_object_update_new(
            j, json_pack("{s:o,s:s,s:s,s:f,s:I,s:I,s:s,s:s,s:I,s:I,s:I,s:b,s:s,s:I,s:I,s:o}",
                         "proposed_rule", advisor_load_json(c->proposed_rule), "rationale",
                         c->rationale, "security_notes", c->security_notes, "confidence",
                         c->confidence, "hit_count", (json_int_t)c->hit_count, "draft_version",
                         (json_int_t)c->draft_version, "analysis_mode", c->analysis_mode, "stage",
                         c->stage, "created_ms", (json_int_t)c->created_ms, "decided_ms",
                         (json_int_t)c->decided_ms, "approved_seq", (json_int_t)c->approved_seq,
                         "auto_approved", c->auto_approved, "decided_by", c->decided_by,
                         "first_seen_ms", (json_int_t)c->first_seen_ms, "last_seen_ms",
                         (json_int_t)c->last_seen_ms, "evidence", ev));
        if (strcmp(c->status, "approved") != 0) {
            /* was the stored evaluation made against the policy in force?
             * (docs/advisor.md#review-tokens: when not, an approval proves
             * it again and holds it to what the reviewer read) */
            struct store_revision rv;

            memset(&rv, 0, sizeof(rv));
            if (pv_ok(store_rev_latest(w->st, c->sandbox, &rv)) && rv.hash != NULL) {
                json_object_set_new(j, "evaluated_on_current_policy",
                                    json_boolean(strcmp(rv.hash, c->current_hash) == 0));
            }
            store_revision_clear(&rv);
        }
    }
    return j;
}

/* ===========================================================================
 * Writing: chunk evaluations, events (revisions: advisor_revision.c)
 * ========================================================================= */

/* Copy an evaluation into a chunk record (strings borrowed from 'e'). */
void advisor_apply_eval(struct store_chunk *c, const struct advisor_eval *e, const char *current,
                        char evidence[65])
{
    c->validation_result = e->validation_result;
    c->application_error = e->application_error;
    c->security_notes = e->security_notes;
    c->review_token = e->review_token;
    c->current_hash = PV_UNCONST(current);
    c->candidate_hash = PV_UNCONST(e->candidate_hash);
    c->evidence = evidence;
}

void advisor_log_line(const char *line)
{
    pv_log_info("OCSF %s", line);
}

/* The inputs a replay of an approval needs (docs/advisor.md#events). */
static json_t *approval_inputs(struct advisor_worker *w, const struct advisor_snapshot *snap,
                               const struct store_chunk *c, const char *candidate_blob)
{
    char creds[65] = "";
    char boundary[65] = "";
    char *ev = c->evidence[0] != '\0' ? store_blob_get(w->st, c->evidence, NULL) : NULL;
    json_t *evidence = advisor_load_json(ev);
    const char *pv =
        json_string_value(json_object_get(json_object_get(evidence, "prover"), "prover_version"));
    json_t *j;

    free(ev);
    /* An input that cannot be stored fails the approval: a decision is
     * never recorded without what it rested on. */
    if ((snap->credentials[0] != '\0' &&
         !pv_ok(store_blob_put(w->st, snap->credentials, strlen(snap->credentials), creds))) ||
        (snap->boundary[0] != '\0' &&
         !pv_ok(store_blob_put(w->st, snap->boundary, strlen(snap->boundary), boundary)))) {
        json_decref(evidence);
        return NULL;
    }
    j = json_pack("{s:s,s:s,s:s,s:o,s:s,s:s,s:s,s:s,s:s,s:s}", "baseline_blob", snap->blob,
                  "baseline_hash", snap->hash, "candidate_blob", candidate_blob, "rule",
                  advisor_load_json(c->proposed_rule), "rule_name", c->rule_name,
                  "credentials_blob", creds, "boundary_blob", boundary, "evidence_blob",
                  c->evidence, "validation_result", c->validation_result, "prover_version",
                  pv != NULL ? pv : "");
    json_decref(evidence);
    return j;
}

/* Reject every other pending chunk the new effective policy already covers
 * (merging it changes nothing). Inside the transaction. */
struct reconcile_ctx {
    const char *except;
    char **ids;
    char **names;
    char **rules;
    size_t n;
    bool oom; /* a chunk could not be kept: reconcile none, fail the transaction */
};

static void reconcile_collect(void *arg, const struct store_chunk *c)
{
    struct reconcile_ctx *x = arg;
    char **ids;
    char **names;
    char **rules;

    if (x->oom || (x->except != NULL && strcmp(c->id, x->except) == 0)) {
        return; /* after a failure the pass is void: nothing more to keep */
    }
    x->oom = true; /* until this chunk is kept whole */
    ids = pv_realloc(x->ids, (x->n + 1) * sizeof(*ids));
    if (ids == NULL) {
        return;
    }
    x->ids = ids;
    names = pv_realloc(x->names, (x->n + 1) * sizeof(*names));
    if (names == NULL) {
        return;
    }
    x->names = names;
    rules = pv_realloc(x->rules, (x->n + 1) * sizeof(*rules));
    if (rules == NULL) {
        return;
    }
    x->rules = rules;
    x->ids[x->n] = pv_strdup(c->id);
    x->names[x->n] = pv_strdup(c->rule_name);
    x->rules[x->n] = pv_strdup(c->proposed_rule);
    x->n++;
    x->oom = x->ids[x->n - 1] == NULL || x->names[x->n - 1] == NULL || x->rules[x->n - 1] == NULL;
}

static bool covered(const struct model_policy *p, const char *hash, const char *name,
                    const char *rule_text)
{
    json_t *rule = rule_text != NULL ? json_loads(rule_text, 0, NULL) : NULL;
    size_t len = 0;
    char *text = rule != NULL ? advisor_proposal_text(name, rule, &len) : NULL;
    struct model_diags *d = model_diags_new();
    struct model_proposal *pr =
        text != NULL && d != NULL ? model_proposal_load("proposal", text, len, d) : NULL;
    struct model_policy *m = pr != NULL ? model_policy_merge(p, pr, true, d) : NULL;
    char h[65];
    bool same = m != NULL && pv_ok(model_policy_sha256(m, h)) && strcmp(h, hash) == 0;

    model_policy_free(m);
    model_proposal_free(pr);
    model_diags_free(d);
    free(text);
    json_decref(rule);
    return same;
}

/* A system decision (reconcile, supersede): reject pending chunk 'id' with
 * 'reason', compare-and-set on "pending", and record the event. Inside the
 * transaction. */
pv_result advisor_system_reject(struct advisor_worker *w, const char *sandbox_name, int64_t sandbox,
                                const char *id, const char *reason, const char *decided_by,
                                int64_t when)
{
    struct store_chunk c;
    char line[512];
    pv_result res;

    PV_GUARD(store_chunk_get(w->st, sandbox, id, &c));
    free(c.status);
    free(c.rejection_reason);
    free(c.decided_by);
    c.status = pv_strdup("rejected");
    c.rejection_reason = pv_strdup(reason);
    c.decided_by = pv_strdup(decided_by);
    c.decided_ms = when;
    res = c.status != NULL && c.rejection_reason != NULL && c.decided_by != NULL
              ? store_chunk_update(w->st, &c, "pending")
              : pv_fail(PV_ERR_NOMEM, __func__);
    if (pv_ok(res)) {
        snprintf(line, sizeof(line), "CONFIG:REJECTED [LOW] chunk:%s rejected reason:\"%s\"", c.id,
                 reason);
        res = advisor_event(w->st, sandbox_name, "CONFIG:REJECTED", line,
                            json_pack("{s:s,s:s,s:s}", "chunk_id", c.id, "rejection_reason", reason,
                                      "decided_by", decided_by));
    }
    store_chunk_clear(&c);
    return res;
}

pv_result advisor_reconcile(struct advisor_worker *w, const char *sandbox_name, int64_t sandbox,
                            const struct model_policy *p, const char *hash, int64_t rev,
                            const char *except, int64_t now)
{
    struct reconcile_ctx x = {.except = except};
    pv_result res = store_chunk_each(w->st, sandbox, "pending", reconcile_collect, &x);

    if (pv_ok(res) && x.oom) {
        res = pv_fail(PV_ERR_NOMEM, __func__);
    }
    for (size_t i = 0; i < x.n && pv_ok(res); i++) {
        char reason[128];
        if (!covered(p, hash, x.names[i], x.rules[i])) {
            continue;
        }
        snprintf(reason, sizeof(reason), "covered by active policy revision %lld", (long long)rev);
        res = advisor_system_reject(w, sandbox_name, sandbox, x.ids[i], reason, "reconcile", now);
    }
    for (size_t i = 0; i < x.n; i++) {
        free(x.ids[i]);
        free(x.names[i]);
        free(x.rules[i]);
    }
    free(x.ids);
    free(x.names);
    free(x.rules);
    return res;
}

/* The candidate names peers exactly as they are registered now: a peer
 * that moved after the evaluation (its push writes only the dependents'
 * current revisions) would otherwise be approved at its old address, which
 * nothing would ever correct. Inside the transaction. */
static pv_result peers_unchanged(struct advisor_worker *w, const struct advisor_eval *e)
{
    struct model_policy *copy;
    char err[1024];
    char hash[65];
    bool peers = false;
    pv_result r;

    for (size_t i = 0; !peers && i < model_policy_nrules(e->candidate); i++) {
        peers = model_rule_peer(model_policy_rule(e->candidate, i)) != NULL;
    }
    if (!peers) {
        return PV_RESULT_OK;
    }
    copy = model_policy_copy(e->candidate);
    PV_ENSURE(copy != NULL, PV_ERR_NOMEM);
    r = advisor_resolve_peers(w, copy, err, sizeof(err));
    if (pv_ok(r)) {
        r = model_policy_sha256(copy, hash);
    }
    model_policy_free(copy);
    PV_GUARD(r);
    PV_ENSURE(strcmp(hash, e->candidate_hash) == 0, PV_ERR_CONFLICT);
    return PV_RESULT_OK;
}

/* The CONFIG:APPROVED event of an approval written in revision 'rev'
 * ('line' its shorthand): the decision, the inputs a replay needs and the
 * composition. Inside the transaction. */
static pv_result approval_event(struct advisor_worker *w, const struct advisor_snapshot *snap,
                                const struct store_chunk *c, const struct advisor_eval *e,
                                const char *candidate_blob, int64_t rev, const char *hash,
                                const char *resolved_from, const char *narrowed_from,
                                const char *line)
{
    json_t *inputs = approval_inputs(w, snap, c, candidate_blob);
    json_t *comp = advisor_composition(w, snap->sandbox);
    json_t *extra;

    if (comp == NULL) {
        json_decref(inputs);
        inputs = NULL;
    }
    extra = inputs != NULL ? json_pack("{s:s,s:b,s:s,s:s,s:s,s:I,s:s,s:o}", "chunk_id", c->id,
                                       "auto", c->auto_approved, "source", c->analysis_mode,
                                       "prover_delta", e->empty ? "empty" : "findings",
                                       "resolved_from", resolved_from != NULL ? resolved_from : "",
                                       "version", (json_int_t)rev, "hash", hash, "inputs", inputs)
                           : NULL;
    if (extra != NULL && json_object_update(extra, comp) != 0) {
        json_decref(extra);
        extra = NULL;
    }
    json_decref(comp);
    if (extra != NULL && narrowed_from != NULL) {
        json_object_set_new(extra, "narrowed_from", advisor_load_json(narrowed_from));
    }
    PV_ENSURE(extra != NULL, PV_ERR_IO);
    return advisor_event(w->st, snap->name, "CONFIG:APPROVED", line, extra);
}

/* Approve 'c' (status 'expect') into revision: write the candidate as the
 * next revision, mark the chunk, record the event, reconcile. Inside the
 * transaction, under the stripe lock, with 'snap' current. */
/* 'narrowed_from' (may be NULL) is the rule the chunk proposed when a
 * reviewer approves the narrowed suggestion instead: the record keeps
 * both. */
pv_result advisor_approve_in_tx_as(struct advisor_worker *w, const struct advisor_snapshot *snap,
                                   struct store_chunk *c, const struct advisor_eval *e,
                                   const char *expect, bool is_auto, const char *resolved_from,
                                   const char *narrowed_from, char *line, size_t linelen)
{
    int64_t rev = 0;
    char hash[65];
    char cause[128];
    char blob[65];
    char suffix[160];
    char evidence[65];
    char *desc;
    json_t *rule;
    int64_t now = advisor_now_ms();

    snprintf(cause, sizeof(cause), "approve %s", c->id);
    {
        /* The revision must still be the one the evaluation used: a peer's
         * push or a global boundary's re-proof recomposes a sandbox without
         * its stripe, and the candidate would bring back what that
         * recomposition suspended. */
        struct store_revision cur;
        bool moved;
        PV_GUARD(store_rev_latest(w->st, snap->sandbox, &cur));
        moved = strcmp(cur.hash, snap->hash) != 0;
        store_revision_clear(&cur);
        PV_ENSURE(!moved, PV_ERR_CONFLICT);
    }
    PV_GUARD(peers_unchanged(w, e));
    PV_GUARD(advisor_revision_write(w, snap->sandbox, e->candidate, e->candidate_yaml, cause, &rev,
                                    hash));
    PV_GUARD(store_blob_put(w->st, e->candidate_yaml, strlen(e->candidate_yaml), blob));
    /* The chunk keeps the evaluation it was approved on (in a batch, the
     * one against the moved policy), and that evidence is what every later
     * re-proof is held against (docs/advisor.md#reproof). */
    PV_GUARD(advisor_evidence_put(w, e, evidence));
    free(c->status);
    free(c->decided_by);
    free(c->approved_evidence);
    free(c->suspension_reason);
    free(c->validation_result);
    free(c->application_error);
    free(c->security_notes);
    free(c->review_token);
    free(c->current_hash);
    free(c->candidate_hash);
    free(c->evidence);
    c->status = pv_strdup("approved");
    c->decided_by = pv_strdup(is_auto ? "auto" : "reviewer");
    c->approved_evidence = pv_strdup(evidence);
    c->suspension_reason = pv_strdup("");
    c->validation_result = pv_strdup(e->validation_result);
    c->application_error = pv_strdup(e->application_error);
    c->security_notes = pv_strdup(e->security_notes);
    c->review_token = pv_strdup(e->review_token);
    c->current_hash = pv_strdup(snap->hash);
    c->candidate_hash = pv_strdup(e->candidate_hash);
    c->evidence = pv_strdup(evidence);
    PV_ENSURE(c->status != NULL && c->decided_by != NULL && c->approved_evidence != NULL &&
                  c->suspension_reason != NULL && c->validation_result != NULL &&
                  c->application_error != NULL && c->security_notes != NULL &&
                  c->review_token != NULL && c->current_hash != NULL && c->candidate_hash != NULL &&
                  c->evidence != NULL,
              PV_ERR_NOMEM);
    c->decided_ms = now;
    c->approved_seq = store_chunk_max_seq(w->st, snap->sandbox) + 1;
    c->approved_rev = rev;
    c->auto_approved = is_auto;
    if (strcmp(expect, "pending") != 0) {
        /* No stale reason survives an approval (unlike the reference). */
        free(c->rejection_reason);
        c->rejection_reason = pv_strdup("");
        PV_ENSURE(c->rejection_reason != NULL, PV_ERR_NOMEM);
    }
    PV_GUARD(store_chunk_update(w->st, c, expect));
    rule = json_loads(c->proposed_rule, 0, NULL);
    desc = rule != NULL ? advisor_rule_describe(rule) : NULL;
    json_decref(rule);
    PV_ENSURE(desc != NULL, PV_ERR_NOMEM);
    advisor_event_suffix(suffix, sizeof(suffix), rev, hash);
    if (is_auto) {
        /* The dash is U+2014, as in the reference. */
        snprintf(line, linelen,
                 "CONFIG:APPROVED [INFO] auto-approved: no new prover findings (source=%s) "
                 "\xe2\x80\x94 chunk %s: add-rule %s %s [auto:true source:%s prover_delta:empty "
                 "resolved_from:%s %s]",
                 c->analysis_mode, c->id, c->rule_name, desc, c->analysis_mode, resolved_from,
                 suffix);
    } else {
        snprintf(line, linelen,
                 "CONFIG:APPROVED [INFO] gateway approved draft chunk %s: add-rule %s %s [%s]",
                 c->id, c->rule_name, desc, suffix);
    }
    free(desc);
    PV_GUARD(approval_event(w, snap, c, e, blob, rev, hash, resolved_from, narrowed_from, line));
    return advisor_reconcile(w, snap->name, snap->sandbox, e->candidate, hash, rev, c->id, now);
}

pv_result advisor_approve_in_tx(struct advisor_worker *w, const struct advisor_snapshot *snap,
                                struct store_chunk *c, const struct advisor_eval *e,
                                const char *expect, bool is_auto, const char *resolved_from,
                                char *line, size_t linelen)
{
    return advisor_approve_in_tx_as(w, snap, c, e, expect, is_auto, resolved_from, NULL, line,
                                    linelen);
}
