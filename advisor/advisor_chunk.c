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

#include "advisor/advisor.h"
#include "advisor/store.h"
#include "common/pv_dynbuf.h"
#include "common/pv_log.h"
#include "model/model.h"

#define REASON_MAX 1000u

/* ===========================================================================
 * Replies and payloads
 * ========================================================================= */

static void reply_pv(struct httpd_reply *r, pv_result res, const char *what)
{
    char detail[256];

    switch (res.err) {
    case PV_ERR_NOTFOUND:
        snprintf(detail, sizeof(detail), "%s not found", what);
        httpd_reply_error(r, 404, "not_found", detail);
        return;
    case PV_ERR_CONFLICT:
        httpd_reply_error(r, 409, "conflict",
                          "the chunk changed concurrently; refetch and try again");
        return;
    case PV_ERR_NOMEM:
        httpd_reply_error(r, 500, "internal", "out of memory");
        return;
    default:
        break;
    }
    pv_log_warnx("%s: %s failed: %s (%s)", what, pv_strerror(res.err),
                 pv_debug_str != NULL ? pv_debug_str : "?", "see the store's state");
    httpd_reply_error(r, 500, "internal", "the store failed; see the advisor's log");
}

static json_t *load_json(const char *text)
{
    json_t *j = text != NULL && text[0] != '\0' ? json_loads(text, 0, NULL) : NULL;
    return j != NULL ? j : json_null();
}

/* What an agent may read of its chunk's evidence (docs/advisor.md#wait):
 * the grants (without the credentials in scope, a reviewer's fact), the
 * envelope's note and the narrowed suggestion's rule, so that the next
 * proposal is the right one. */
static void agent_evidence(struct advisor_worker *w, const struct store_chunk *c, json_t *j)
{
    char *text = c->evidence[0] != '\0' ? store_blob_get(w->st, c->evidence, NULL) : NULL;
    json_t *ev = load_json(text);
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
static json_t *chunk_json(struct advisor_worker *w, const struct store_chunk *c, bool reviewer)
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
    if (reviewer) {
        json_t *ev = json_null();
        if (c->evidence[0] != '\0') {
            char *text = store_blob_get(w->st, c->evidence, NULL);
            json_decref(ev);
            ev = load_json(text);
            free(text);
        }
        if (c->approved_evidence[0] != '\0' && strcmp(c->approved_evidence, c->evidence) != 0) {
            /* What the approval rested on, beside the latest evaluation
             * (a suspended chunk shows both, docs/advisor.md#reproof). */
            char *text = store_blob_get(w->st, c->approved_evidence, NULL);
            json_object_set_new(j, "approved_evidence", load_json(text));
            free(text);
        }
        json_object_update_new(
            j, json_pack("{s:o,s:s,s:s,s:f,s:I,s:I,s:s,s:s,s:I,s:I,s:I,s:b,s:s,s:I,s:I,s:o}",
                         "proposed_rule", load_json(c->proposed_rule), "rationale", c->rationale,
                         "security_notes", c->security_notes, "confidence", c->confidence,
                         "hit_count", (json_int_t)c->hit_count, "draft_version",
                         (json_int_t)c->draft_version, "analysis_mode", c->analysis_mode, "stage",
                         c->stage, "created_ms", (json_int_t)c->created_ms, "decided_ms",
                         (json_int_t)c->decided_ms, "approved_seq", (json_int_t)c->approved_seq,
                         "auto_approved", c->auto_approved, "decided_by", c->decided_by,
                         "first_seen_ms", (json_int_t)c->first_seen_ms, "last_seen_ms",
                         (json_int_t)c->last_seen_ms, "evidence", ev));
    }
    return j;
}

/* ===========================================================================
 * Writing: revisions, chunk evaluations, events
 * ========================================================================= */

pv_result advisor_revision_write(struct advisor_worker *w, int64_t sandbox,
                                 const struct model_policy *p, const char *yaml_or_null,
                                 const char *cause, int64_t *rev, char hash[65])
{
    struct store_revision r;
    struct store_revision base;
    char *yaml = yaml_or_null != NULL ? NULL : model_policy_to_yaml_sha256(p, NULL, hash);
    const char *text = yaml_or_null != NULL ? yaml_or_null : yaml;
    char blob[65];
    pv_result res;

    PV_ENSURE(text != NULL, PV_ERR_NOMEM);
    res = yaml_or_null != NULL ? model_policy_sha256(p, hash) : PV_RESULT_OK;
    if (pv_ok(res)) {
        res = store_blob_put(w->st, text, strlen(text), blob);
    }
    free(yaml);
    PV_GUARD(res);
    PV_GUARD(store_base_latest(w->st, sandbox, &base));
    memset(&r, 0, sizeof(r));
    r.base_rev = base.rev;
    store_revision_clear(&base);
    r.blob = blob;
    r.hash = hash;
    r.cause = PV_UNCONST(cause);
    PV_GUARD(store_rev_put(w->st, sandbox, &r));
    *rev = r.rev;
    return PV_RESULT_OK;
}

/* Copy an evaluation into a chunk record (strings borrowed from 'e'). */
static void apply_eval(struct store_chunk *c, const struct advisor_eval *e, const char *current,
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

pv_result advisor_evidence_put(struct advisor_worker *w, const struct advisor_eval *e, char out[65])
{
    char *text;
    pv_result r;

    out[0] = '\0';
    if (e->evidence == NULL || json_object_size(e->evidence) == 0) {
        return PV_RESULT_OK;
    }
    text = json_dumps(e->evidence, JSON_COMPACT | JSON_SORT_KEYS);
    PV_ENSURE(text != NULL, PV_ERR_NOMEM);
    r = store_blob_put(w->st, text, strlen(text), out);
    free(text);
    return r;
}

static void log_line(const char *line)
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
    json_t *evidence = load_json(ev);
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
                  load_json(c->proposed_rule), "rule_name", c->rule_name, "credentials_blob", creds,
                  "boundary_blob", boundary, "evidence_blob", c->evidence, "validation_result",
                  c->validation_result, "prover_version", pv != NULL ? pv : "");
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
};

static void reconcile_collect(void *arg, const struct store_chunk *c)
{
    struct reconcile_ctx *x = arg;
    char **ids;
    char **names;
    char **rules;

    if (x->except != NULL && strcmp(c->id, x->except) == 0) {
        return;
    }
    ids = realloc(x->ids, (x->n + 1) * sizeof(*ids));
    if (ids == NULL) {
        return;
    }
    x->ids = ids;
    names = realloc(x->names, (x->n + 1) * sizeof(*names));
    if (names == NULL) {
        return;
    }
    x->names = names;
    rules = realloc(x->rules, (x->n + 1) * sizeof(*rules));
    if (rules == NULL) {
        return;
    }
    x->rules = rules;
    x->ids[x->n] = pv_strdup(c->id);
    x->names[x->n] = pv_strdup(c->rule_name);
    x->rules[x->n] = pv_strdup(c->proposed_rule);
    x->n++;
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
static pv_result system_reject(struct advisor_worker *w, const char *sandbox_name, int64_t sandbox,
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

static pv_result reconcile(struct advisor_worker *w, const char *sandbox_name, int64_t sandbox,
                           const struct model_policy *p, const char *hash, int64_t rev,
                           const char *except, int64_t now)
{
    struct reconcile_ctx x = {.except = except};
    pv_result res = store_chunk_each(w->st, sandbox, "pending", reconcile_collect, &x);

    for (size_t i = 0; i < x.n && pv_ok(res); i++) {
        char reason[128];
        if (x.ids[i] == NULL || !covered(p, hash, x.names[i], x.rules[i])) {
            continue;
        }
        snprintf(reason, sizeof(reason), "covered by active policy revision %lld", (long long)rev);
        res = system_reject(w, sandbox_name, sandbox, x.ids[i], reason, "reconcile", now);
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

/* Approve 'c' (status 'expect') into revision: write the candidate as the
 * next revision, mark the chunk, record the event, reconcile. Inside the
 * transaction, under the stripe lock, with 'snap' current. */
/* 'narrowed_from' (may be NULL) is the rule the chunk proposed when a
 * reviewer approves the narrowed suggestion instead: the record keeps
 * both. */
static pv_result approve_in_tx_as(struct advisor_worker *w, const struct advisor_snapshot *snap,
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
    {
        json_t *inputs = approval_inputs(w, snap, c, blob);
        json_t *comp = advisor_composition(w, snap->sandbox);
        json_t *extra;
        if (comp == NULL) {
            json_decref(inputs);
            inputs = NULL;
        }
        extra = inputs != NULL
                    ? json_pack("{s:s,s:b,s:s,s:s,s:s,s:I,s:s,s:o}", "chunk_id", c->id, "auto",
                                is_auto, "source", c->analysis_mode, "prover_delta",
                                e->empty ? "empty" : "findings", "resolved_from",
                                resolved_from != NULL ? resolved_from : "", "version",
                                (json_int_t)rev, "hash", hash, "inputs", inputs)
                    : NULL;
        if (extra != NULL && json_object_update(extra, comp) != 0) {
            json_decref(extra);
            extra = NULL;
        }
        json_decref(comp);
        if (extra != NULL && narrowed_from != NULL) {
            json_object_set_new(extra, "narrowed_from", load_json(narrowed_from));
        }
        PV_ENSURE(extra != NULL, PV_ERR_IO);
        PV_GUARD(advisor_event(w->st, snap->name, "CONFIG:APPROVED", line, extra));
    }
    return reconcile(w, snap->name, snap->sandbox, e->candidate, hash, rev, c->id, now);
}

static pv_result approve_in_tx(struct advisor_worker *w, const struct advisor_snapshot *snap,
                               struct store_chunk *c, const struct advisor_eval *e,
                               const char *expect, bool is_auto, const char *resolved_from,
                               char *line, size_t linelen)
{
    return approve_in_tx_as(w, snap, c, e, expect, is_auto, resolved_from, NULL, line, linelen);
}

/* ===========================================================================
 * Submit
 * ========================================================================= */

struct submit_out {
    json_t *ids;
    json_t *reasons;
    json_t *already; /* [{rule_name, covered_by, detail}] */
    int accepted;
    int rejected;
};

/* A proposal that adds nothing: proved, the verdict is empty and the
 * candidate is contained in the policy in force (no grant listed, or the
 * containment check says within; advisor_eval.c). Such a rule is never
 * stored: an
 * approval of it would carry authority the moment the rule that covers it
 * goes (docs/advisor.md#reproof). */
static bool adds_nothing(const struct advisor_eval *e)
{
    return e->candidate != NULL && e->application_error[0] == '\0' && e->empty && e->contained;
}

static void answer_already(struct submit_out *o, const struct advisor_snapshot *snap,
                           const char *name, const json_t *rule)
{
    json_t *by = advisor_rule_covering(snap->policy, rule);
    struct pv_dynbuf b;
    char *detail;
    size_t i;
    const json_t *n;

    pv_dynbuf_init(&b, 64u * 1024u);
    pv_dynbuf_putf(&b,
                   "the effective policy (revision %lld) already allows everything rule '%s' "
                   "would",
                   (long long)snap->rev, name);
    json_array_foreach(by, i, n)
    {
        pv_dynbuf_putf(&b, "%s'%s'", i == 0 ? ": covered by rule " : ", ", json_string_value(n));
    }
    pv_dynbuf_puts(&b, "; nothing was stored");
    detail = pv_dynbuf_finish(&b);
    json_array_append_new(o->already, json_pack("{s:s,s:o,s:s}", "rule_name", name, "covered_by",
                                                by != NULL ? by : json_array(), "detail",
                                                detail != NULL ? detail : "already allowed"));
    free(detail);
}

static void reject_early(struct submit_out *o, const char *reason)
{
    o->rejected++;
    json_array_append_new(o->reasons, json_string(reason));
}

/* Supersede the other pending chunks of the same key. An agent's
 * submission supersedes pending chunks of any mode; a mechanistic one never
 * supersedes an agent's own proposal. */
struct supersede_ctx {
    const struct store_chunk *by;
    char **ids;
    size_t n;
};

static void supersede_collect(void *arg, const struct store_chunk *c)
{
    struct supersede_ctx *x = arg;
    char **ids;

    if (strcmp(c->id, x->by->id) == 0) {
        return;
    }
    if (strcmp(x->by->analysis_mode, "mechanistic") == 0 &&
        strcmp(c->analysis_mode, "mechanistic") != 0) {
        return;
    }
    ids = realloc(x->ids, (x->n + 1) * sizeof(*ids));
    if (ids != NULL) {
        x->ids = ids;
        x->ids[x->n] = pv_strdup(c->id);
        if (x->ids[x->n] != NULL) {
            x->n++;
        }
    }
}

static pv_result supersede(struct advisor_worker *w, const char *sandbox_name,
                           const struct store_chunk *by)
{
    struct supersede_ctx x = {.by = by};
    char reason[128];
    pv_result res;

    if (by->host[0] == '\0' || by->port == 0 || by->binary[0] == '\0') {
        return PV_RESULT_OK;
    }
    res = store_chunk_each_key(w->st, by->sandbox, "pending", by->host, by->port, by->binary,
                               supersede_collect, &x);
    snprintf(reason, sizeof(reason), "superseded by chunk %s", by->id);
    for (size_t i = 0; i < x.n && pv_ok(res); i++) {
        res = system_reject(w, sandbox_name, by->sandbox, x.ids[i], reason, "supersede",
                            by->created_ms);
    }
    for (size_t i = 0; i < x.n; i++) {
        free(x.ids[i]);
    }
    free(x.ids);
    return res;
}

/* The commit of one submission, run by the store's group writer. 'w' is
 * the submitting worker; every write goes through the writer's connection
 * ('view' below), inside the group's transaction. */
struct submit_tx {
    struct advisor_worker *w;
    const struct advisor_snapshot *snap;
    const struct advisor_eval *e;
    const json_t *rule;
    const char *id;
    const char *name;
    const char *rule_text;
    const char *intent;
    const char *mode;
    const char *key;
    const char *host;
    int64_t port;
    const char *binary;
    const struct advisor_submit_meta *meta; /* the mapper's; NULL otherwise */
    bool may_approve;                       /* the caller holds the sandbox's stripe */
    /* out */
    bool stale;   /* the policy moved, or an approval needs the stripe */
    bool updated; /* dedup gave a pending chunk the wider rule */
    bool already; /* the rule adds nothing: nothing was stored */
    char chunk_id[37];
    char line[8192];
    char approved_line[8192];
};

static bool auto_gate(const struct advisor_eval *e)
{
    return e->empty && e->within_boundary && e->within_envelope && e->security_notes[0] == '\0' &&
           e->application_error[0] == '\0';
}

/* The mechanistic dedup: bump the hit count of the newest chunk of the same
 * key, unless it was rejected (a re-observed denial then makes a new
 * chunk). True when it was deduplicated (its id into x->chunk_id). */
/* A mechanistic submission whose key has a live chunk adds its hits to it.
 * When the mapper brings a wider rule for a pending chunk (samples a later
 * flush saw; advisor_mapper.c folds the chunk's own rules in), the chunk
 * takes that rule and its evaluation, and x->updated is set so the caller
 * applies the auto-approval gate to it. */
static bool dedup(struct advisor_worker *w, struct submit_tx *x, pv_result *res)
{
    struct store_chunk c;
    char evidence[65];
    bool done = false;

    *res = PV_RESULT_OK;
    if (!pv_ok(store_chunk_by_dedup(w->st, x->snap->sandbox, x->key, &c))) {
        return false;
    }
    if (strcmp(c.status, "approved") == 0 && x->meta != NULL && x->e->candidate != NULL &&
        !adds_nothing(x->e)) {
        /* Denials the approved rule does not cover: a client that needs two
         * requests (git asks for info/refs and, once that is allowed, POSTs
         * to upload-pack) would otherwise only add hits to the approved
         * chunk and never be proposed. They make a new chunk to decide. */
        store_chunk_clear(&c);
        return false;
    }
    if (strcmp(c.status, "rejected") != 0) {
        char *status = pv_strdup(c.status);
        bool widen = x->meta != NULL && strcmp(c.status, "pending") == 0 &&
                     strcmp(c.proposed_rule, x->rule_text) != 0 && x->e->candidate != NULL;
        struct store_chunk upd = c; /* c keeps its own strings; upd borrows */
        upd.hit_count += x->meta != NULL ? x->meta->hits : 1;
        upd.last_seen_ms = x->meta != NULL ? x->meta->last_seen_ms : advisor_now_ms();
        if (widen) {
            *res = advisor_evidence_put(w, x->e, evidence);
            upd.proposed_rule = PV_UNCONST(x->rule_text);
            upd.rationale = PV_UNCONST(x->intent != NULL ? x->intent : "");
            upd.confidence = x->meta->confidence;
            apply_eval(&upd, x->e, x->snap->hash, evidence);
        }
        if (pv_ok(*res)) {
            *res = status != NULL ? store_chunk_update(w->st, &upd, status)
                                  : pv_fail(PV_ERR_NOMEM, __func__);
        }
        if (pv_ok(*res) && widen) {
            char *summary = advisor_rule_summary(x->rule, c.rule_name);
            snprintf(x->line, sizeof(x->line),
                     "CONFIG:PROPOSED [INFO] mechanistic proposal chunk:%s %s (rule widened by "
                     "new denials)",
                     c.id, summary != NULL ? summary : "");
            free(summary);
            *res = advisor_event(w->st, x->snap->name, "CONFIG:PROPOSED", x->line,
                                 json_pack("{s:s,s:s,s:s,s:s,s:s,s:b}", "chunk_id", c.id,
                                           "analysis_mode", x->mode, "rule_name", c.rule_name,
                                           "validation_result", x->e->validation_result, "rule",
                                           x->rule_text, "updated", 1));
            x->updated = pv_ok(*res);
        }
        free(status);
        if (pv_ok(*res)) {
            snprintf(x->chunk_id, sizeof(x->chunk_id), "%s", c.id);
            done = true;
        }
    }
    store_chunk_clear(&c);
    return done;
}

static pv_result submit_tx(struct store *st, void *arg)
{
    struct submit_tx *x = arg;
    struct advisor_worker view = *x->w;
    struct advisor_worker *w = &view;
    const struct advisor_snapshot *snap = x->snap;
    const struct advisor_eval *e = x->e;
    struct store_revision cur;
    struct store_chunk c;
    char evidence[65];
    const char *resolved_from = "default";
    bool mechanistic = strcmp(x->mode, "mechanistic") == 0;
    int64_t now = advisor_now_ms();
    char *summary;
    pv_result res = PV_RESULT_OK;

    view.st = st;
    view.pol_cache = NULL;
    view.pol_json = NULL;
    x->stale = false;
    x->line[0] = '\0';
    x->approved_line[0] = '\0';
    PV_GUARD(store_rev_latest(st, snap->sandbox, &cur));
    x->stale = strcmp(cur.hash, snap->hash) != 0;
    store_revision_clear(&cur);
    if (x->stale) {
        PV_BAIL(PV_ERR_CONFLICT); /* evaluated against an old policy */
    }
    x->updated = false;
    x->already = false;
    if (mechanistic && dedup(w, x, &res)) {
        PV_GUARD(res);
        if (x->updated && x->may_approve && advisor_mode_auto(st, snap->name, &resolved_from) &&
            auto_gate(e)) {
            struct store_chunk copy;
            PV_GUARD(store_chunk_get(st, snap->sandbox, x->chunk_id, &copy));
            res = approve_in_tx(w, snap, &copy, e, "pending", true, resolved_from, x->approved_line,
                                sizeof(x->approved_line));
            store_chunk_clear(&copy);
            /* a peer moved since the evaluation: evaluate again */
            x->stale = res.err == PV_ERR_CONFLICT;
        }
        return res;
    }
    PV_GUARD(res);
    if (adds_nothing(e)) {
        /* A mechanistic observation of a live chunk still counted its hit
         * above; a new chunk that adds nothing is never stored. */
        x->already = true;
        return PV_RESULT_OK;
    }
    if (advisor_mode_auto(st, snap->name, &resolved_from) && auto_gate(e) && !x->may_approve) {
        /* An approval moves the policy: only under the sandbox's stripe. */
        x->stale = true;
        PV_BAIL(PV_ERR_CONFLICT);
    }
    PV_GUARD(advisor_evidence_put(w, e, evidence));
    memset(&c, 0, sizeof(c));
    c.id = PV_UNCONST(x->id);
    c.sandbox = snap->sandbox;
    c.draft_version = store_chunk_max_draft(st, snap->sandbox) + 1;
    c.status = PV_UNCONST("pending");
    c.rule_name = PV_UNCONST(x->name);
    c.proposed_rule = PV_UNCONST(x->rule_text);
    c.rationale = PV_UNCONST(x->intent != NULL ? x->intent : "");
    c.confidence = x->meta != NULL ? x->meta->confidence : mechanistic ? 0.5 : 0.75;
    c.created_ms = now;
    c.host = PV_UNCONST(x->host);
    c.port = x->port;
    c.binary = PV_UNCONST(x->binary);
    c.hit_count = x->meta != NULL ? x->meta->hits : 1;
    c.first_seen_ms = x->meta != NULL ? x->meta->first_seen_ms : now;
    c.last_seen_ms = x->meta != NULL ? x->meta->last_seen_ms : now;
    c.rejection_reason = PV_UNCONST("");
    c.analysis_mode = PV_UNCONST(x->mode);
    c.dedup_key = mechanistic ? PV_UNCONST(x->key) : PV_UNCONST("");
    c.stage = PV_UNCONST(x->meta != NULL ? x->meta->stage : mechanistic ? "mechanistic" : "agent");
    c.decided_by = PV_UNCONST("");
    apply_eval(&c, e, snap->hash, evidence);
    PV_GUARD(store_chunk_insert(st, &c));
    summary = advisor_rule_summary(x->rule, x->name);
    snprintf(x->line, sizeof(x->line), "CONFIG:PROPOSED [INFO] %s proposal chunk:%s %s", x->mode,
             x->id, summary != NULL ? summary : "");
    free(summary);
    {
        const char *env_note =
            json_string_value(json_object_get(json_object_get(e->evidence, "envelope"), "note"));
        PV_GUARD(advisor_event(st, snap->name, "CONFIG:PROPOSED", x->line,
                               json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "chunk_id", x->id,
                                         "analysis_mode", x->mode, "rule_name", x->name,
                                         "validation_result", e->validation_result, "rule",
                                         x->rule_text, "evidence_blob", c.evidence, "envelope_note",
                                         env_note != NULL ? env_note : "")));
    }
    PV_GUARD(supersede(w, snap->name, &c));
    snprintf(x->chunk_id, sizeof(x->chunk_id), "%s", x->id);
    if (x->may_approve && advisor_mode_auto(st, snap->name, &resolved_from) && auto_gate(e)) {
        struct store_chunk copy;
        PV_GUARD(store_chunk_get(st, snap->sandbox, x->id, &copy));
        res = approve_in_tx(w, snap, &copy, e, "pending", true, resolved_from, x->approved_line,
                            sizeof(x->approved_line));
        store_chunk_clear(&copy);
        /* a peer moved since the evaluation: evaluate again */
        x->stale = res.err == PV_ERR_CONFLICT;
        PV_GUARD(res);
    }
    return PV_RESULT_OK;
}

/* One operation of a submission: evaluate without any lock, commit through
 * the group writer. The commit re-checks that the policy is the one that was
 * evaluated; if it moved, the operation is evaluated again holding the
 * sandbox's stripe, so it cannot be overtaken twice (a busy sandbox costs
 * waiting, never a refusal). An approval (auto mode, empty delta) always
 * commits under the stripe: revisions move one at a time per sandbox. */
static pv_result submit_one(struct advisor_worker *w, const char *sandbox, const char *mode,
                            const struct advisor_submit_meta *meta, const char *intent,
                            const char *name, const json_t *rule, struct submit_out *o)
{
    struct advisor *a = w->a;
    char host[256];
    char binary[1024];
    char key[1400];
    char id[37];
    int64_t port = 0;
    char *rule_text = advisor_json_canonical(rule);
    pv_result res;

    PV_ENSURE(rule_text != NULL, PV_ERR_NOMEM);
    advisor_rule_key(rule, host, sizeof(host), &port, binary, sizeof(binary));
    snprintf(key, sizeof(key), "%s|%lld|%s", host, (long long)port, binary);
    res = advisor_uuid(id);
    for (int attempt = 0; pv_ok(res) && attempt < 3; attempt++) {
        struct advisor_snapshot snap;
        struct advisor_eval e;
        struct submit_tx x;
        pthread_mutex_t *held = NULL;
        const char *from;
        bool retry = false;

        if (attempt > 0) {
            int64_t sid = 0;
            res = advisor_sandbox_id(w, sandbox, &sid);
            if (!pv_ok(res)) {
                break;
            }
            held = advisor_stripe(a, sid);
            pthread_mutex_lock(held);
        }
        res = advisor_snapshot_take(w, sandbox, &snap);
        if (pv_ok(res)) {
            res = advisor_evaluate(w, &snap, name, rule, &e);
            if (!pv_ok(res)) {
                advisor_snapshot_clear(&snap);
            } else if (!auto_gate(&e)) {
                /* a reviewer's chunk: offer a narrower rule if one proves
                 * approvable (docs/advisor.md#suggestion) */
                advisor_suggest(w, &snap, name, rule, &e);
            }
        }
        if (!pv_ok(res)) {
            if (held != NULL) {
                pthread_mutex_unlock(held);
            }
            break;
        }
        if (strcmp(mode, "mechanistic") != 0 && e.candidate == NULL) {
            /* The rule does not merge or validate: the agent redrafts. */
            char reason[2300];
            snprintf(reason, sizeof(reason), "chunk '%s': %s", name, e.application_error);
            reject_early(o, reason);
        } else {
            if (held == NULL && auto_gate(&e) && advisor_mode_auto(w->st, snap.name, &from)) {
                held = advisor_stripe(a, snap.sandbox);
                pthread_mutex_lock(held);
            }
            memset(&x, 0, sizeof(x));
            x.w = w;
            x.snap = &snap;
            x.e = &e;
            x.rule = rule;
            x.id = id;
            x.name = name;
            x.rule_text = rule_text;
            x.intent = intent;
            x.mode = mode;
            x.key = key;
            x.host = host;
            x.port = port;
            x.binary = binary;
            x.meta = meta;
            x.may_approve = held != NULL;
            res = store_group_write(a->group, submit_tx, &x);
            if (!pv_ok(res) && x.stale) {
                res = PV_RESULT_OK;
                retry = true;
            } else if (pv_ok(res) && x.already) {
                answer_already(o, &snap, name, rule);
            } else if (pv_ok(res)) {
                json_array_append_new(o->ids, json_string(x.chunk_id));
                o->accepted++;
                if (x.line[0] != '\0') {
                    log_line(x.line);
                }
                if (x.approved_line[0] != '\0') {
                    log_line(x.approved_line);
                }
                advisor_changed(a);
            }
        }
        if (held != NULL) {
            pthread_mutex_unlock(held);
        }
        advisor_eval_clear(&e);
        advisor_snapshot_clear(&snap);
        if (!retry) {
            free(rule_text);
            return res;
        }
    }
    free(rule_text);
    if (pv_ok(res)) {
        /* Under the stripe only a peer that moved again can make it stale. */
        reject_early(o, "the sandbox's policy or a peer changed during evaluation; resubmit");
    }
    return res;
}

void advisor_submit(struct advisor_worker *w, const char *sandbox, const char *mode_arg,
                    const char *body, size_t len, struct httpd_reply *r)
{
    advisor_submit_meta(w, sandbox, mode_arg, NULL, body, len, r);
}

void advisor_submit_meta(struct advisor_worker *w, const char *sandbox, const char *mode_arg,
                         const struct advisor_submit_meta *meta, const char *body, size_t len,
                         struct httpd_reply *r)
{
    struct model_diags *d = model_diags_new();
    struct model_proposal *pr;
    struct submit_out o = {.ids = json_array(), .reasons = json_array(), .already = json_array()};
    json_t *root;
    json_t *ops;
    const char *mode =
        mode_arg != NULL && strcmp(mode_arg, "mechanistic") == 0 ? "mechanistic" : "agent_authored";
    pv_result res = PV_RESULT_OK;
    struct store_sandbox sb;

    if (d == NULL || o.ids == NULL || o.reasons == NULL || o.already == NULL) {
        httpd_reply_error(r, 500, "internal", "out of memory");
        goto out;
    }
    if (!pv_ok(store_sandbox_get(w->st, sandbox, &sb))) {
        httpd_reply_error(r, 404, "not_found", "sandbox not found");
        goto out;
    }
    store_sandbox_clear(&sb);
    if (!advisor_proposals_enabled(w->st, sandbox)) {
        httpd_reply_error(r, 404, "feature_disabled",
                          "agent-driven policy proposals are not enabled in this sandbox; set the "
                          "`agent_policy_proposals_enabled` setting to true to enable");
        goto out;
    }
    pr = model_proposal_load("proposal", body, len, d);
    if (pr == NULL) {
        json_t *diags = json_array();
        for (size_t i = 0; i < model_diags_count(d) && i < 50; i++) {
            json_array_append_new(diags, json_string(model_diags_line(d, i)));
        }
        httpd_reply_error(r, 400, "invalid_proposal",
                          model_diags_count(d) > 0 ? model_diags_msg(d, 0) : "invalid proposal");
        json_object_set_new(r->body, "diagnostics", diags);
        goto out;
    }
    root = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
    ops = json_object_get(root, "operations");
    if (json_array_size(ops) != model_proposal_nops(pr)) {
        /* The model accepts YAML too; the HTTP API takes JSON. */
        httpd_reply_error(r, 400, "invalid_proposal", "the proposal must be a JSON object");
        json_decref(root);
        model_proposal_free(pr);
        goto out;
    }
    for (size_t i = 0; i < model_proposal_nops(pr) && pv_ok(res); i++) {
        const char *name = model_proposal_rule_name(pr, i);
        const json_t *rule =
            json_object_get(json_object_get(json_array_get(ops, i), "addRule"), "rule");
        const char *blocked;
        char reason[1024];

        if (name == NULL || name[0] == '\0') {
            reject_early(&o, "chunk missing rule_name");
            continue;
        }
        if (strncmp(name, "_provider_", 10) == 0) {
            snprintf(reason, sizeof(reason),
                     "chunk '%s' uses reserved '_provider_' rule-name prefix", name);
            reject_early(&o, reason);
            continue;
        }
        if (!json_is_object(rule)) {
            snprintf(reason, sizeof(reason), "chunk '%s' missing proposed_rule", name);
            reject_early(&o, reason);
            continue;
        }
        blocked = advisor_rule_blocked_host(rule, w->a->cfg.test_allow_loopback);
        if (blocked != NULL) {
            snprintf(reason, sizeof(reason),
                     "chunk '%s': proposed rule endpoint host '%s' is an always-blocked "
                     "destination (loopback, link-local, cloud metadata or unspecified)",
                     name, blocked);
            reject_early(&o, reason);
            continue;
        }
        res = submit_one(w, sandbox, mode, meta, model_proposal_intent(pr), name, rule, &o);
    }
    json_decref(root);
    model_proposal_free(pr);
    if (!pv_ok(res)) {
        reply_pv(r, res, "sandbox");
        goto out;
    }
    httpd_reply_json(r, 202,
                     json_pack("{s:s,s:i,s:i,s:O,s:O,s:i,s:O}", "status",
                               o.accepted == 0 && o.rejected == 0 && json_array_size(o.already) > 0
                                   ? "already_allowed"
                                   : "submitted",
                               "accepted_chunks", o.accepted, "rejected_chunks", o.rejected,
                               "rejection_reasons", o.reasons, "accepted_chunk_ids", o.ids,
                               "already_allowed_chunks", (int)json_array_size(o.already),
                               "already_allowed", o.already));
out:
    json_decref(o.ids);
    json_decref(o.reasons);
    json_decref(o.already);
    model_diags_free(d);
}

/* ===========================================================================
 * Reading
 * ========================================================================= */

static void reply_chunk_missing(struct httpd_reply *r, const char *id)
{
    char detail[256];

    snprintf(detail, sizeof(detail), "chunk '%.64s' is not present in this sandbox's draft policy",
             id);
    httpd_reply_error(r, 404, "chunk_not_found", detail);
}

void advisor_chunk_show(struct advisor_worker *w, const char *sandbox, const char *id,
                        bool reviewer, struct httpd_reply *r)
{
    struct store_chunk c;
    int64_t sid;
    pv_result res = advisor_sandbox_id(w, sandbox, &sid);

    if (!pv_ok(res)) {
        reply_pv(r, res, "sandbox");
        return;
    }
    res = store_chunk_get(w->st, sid, id, &c);
    if (!pv_ok(res)) {
        if (res.err == PV_ERR_NOTFOUND) {
            reply_chunk_missing(r, id);
        } else {
            reply_pv(r, res, "chunk");
        }
        return;
    }
    httpd_reply_json(r, 200, chunk_json(w, &c, reviewer));
    store_chunk_clear(&c);
}

void advisor_chunk_wait(struct advisor_worker *w, const char *sandbox, const char *id,
                        unsigned timeout_s, struct advisor_hold *hold, struct httpd_reply *r)
{
    int64_t deadline = advisor_now_ms() + (int64_t)timeout_s * 1000;
    int64_t sid;
    pv_result res = advisor_sandbox_id(w, sandbox, &sid);

    if (!pv_ok(res)) {
        reply_pv(r, res, "sandbox");
        return;
    }
    for (;;) {
        uint64_t seen = advisor_change_count(w->a);
        struct store_chunk c;
        res = store_chunk_get(w->st, sid, id, &c);
        if (!pv_ok(res)) {
            if (res.err == PV_ERR_NOTFOUND) {
                reply_chunk_missing(r, id);
            } else {
                reply_pv(r, res, "chunk");
            }
            return;
        }
        if (strcmp(c.status, "pending") != 0 || advisor_now_ms() >= deadline ||
            advisor_stopping(w->a)) {
            json_t *j = chunk_json(w, &c, false);
            if (j != NULL && strcmp(c.status, "pending") == 0) {
                json_object_set_new(j, "timed_out", json_true());
            }
            httpd_reply_json(r, 200, j);
            store_chunk_clear(&c);
            return;
        }
        store_chunk_clear(&c);
        if (!advisor_hold_wait(w->a, hold, seen, deadline)) {
            deadline = 0; /* the client left: answer now, the reply is dropped */
        }
    }
}

struct list_ctx {
    struct advisor_worker *w;
    json_t *arr;
    bool reviewer;
};

static void list_one(void *arg, const struct store_chunk *c)
{
    struct list_ctx *x = arg;
    json_array_append_new(x->arr, chunk_json(x->w, c, x->reviewer));
}

void advisor_chunk_list(struct advisor_worker *w, const char *sandbox, const char *status,
                        bool reviewer, struct httpd_reply *r)
{
    struct list_ctx x = {.w = w, .arr = json_array(), .reviewer = reviewer};
    int64_t sid;
    pv_result res = advisor_sandbox_id(w, sandbox, &sid);

    if (pv_ok(res) && status != NULL && strcmp(status, "pending") != 0 &&
        strcmp(status, "approved") != 0 && strcmp(status, "rejected") != 0 &&
        strcmp(status, "suspended") != 0) {
        json_decref(x.arr);
        httpd_reply_error(r, 400, "invalid_request",
                          "status must be one of pending, approved, rejected, suspended");
        return;
    }
    if (pv_ok(res)) {
        res = store_chunk_each(w->st, sid, status, list_one, &x);
    }
    if (!pv_ok(res)) {
        json_decref(x.arr);
        reply_pv(r, res, "sandbox");
        return;
    }
    httpd_reply_json(r, 200, json_pack("{s:s,s:o}", "sandbox", sandbox, "chunks", x.arr));
}

struct history_ctx {
    json_t *arr;
};

static void history_one(void *arg, const struct store_chunk *c)
{
    struct history_ctx *x = arg;
    char msg[512];

    snprintf(msg, sizeof(msg), "Rule '%s' proposed (confidence: %d%%)", c->rule_name,
             (int)(c->confidence * 100.0 + 0.5));
    json_array_append_new(x->arr,
                          json_pack("{s:I,s:s,s:s,s:s}", "timestamp_ms", (json_int_t)c->created_ms,
                                    "event", "proposed", "chunk_id", c->id, "message", msg));
    if (c->decided_ms > 0 && strcmp(c->status, "pending") != 0) {
        snprintf(msg, sizeof(msg), "Rule '%s' %s%s%s", c->rule_name, c->status,
                 c->rejection_reason[0] != '\0' ? ": " : "", c->rejection_reason);
        json_array_append_new(x->arr, json_pack("{s:I,s:s,s:s,s:s}", "timestamp_ms",
                                                (json_int_t)c->decided_ms, "event", c->status,
                                                "chunk_id", c->id, "message", msg));
    }
}

static int by_time(const void *a, const void *b)
{
    json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "timestamp_ms"));
    json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "timestamp_ms"));
    return x < y ? -1 : x > y ? 1 : 0;
}

void advisor_history(struct advisor_worker *w, const char *sandbox, struct httpd_reply *r)
{
    struct history_ctx x = {.arr = json_array()};
    int64_t sid;
    pv_result res = advisor_sandbox_id(w, sandbox, &sid);
    size_t n;
    json_t **v;
    json_t *sorted = json_array();

    if (pv_ok(res)) {
        res = store_chunk_each(w->st, sid, NULL, history_one, &x);
    }
    if (!pv_ok(res) || sorted == NULL) {
        json_decref(x.arr);
        json_decref(sorted);
        reply_pv(r, res, "sandbox");
        return;
    }
    n = json_array_size(x.arr);
    v = pv_calloc(n + 1, sizeof(*v));
    for (size_t i = 0; v != NULL && i < n; i++) {
        v[i] = json_array_get(x.arr, i);
    }
    if (v != NULL) {
        /* Stable enough: entries of one chunk have increasing times. */
        qsort(v, n, sizeof(*v), by_time);
        for (size_t i = 0; i < n; i++) {
            json_array_append(sorted, v[i]);
        }
    }
    free(v);
    json_decref(x.arr);
    httpd_reply_json(r, 200, json_pack("{s:s,s:o}", "sandbox", sandbox, "history", sorted));
}

/* ===========================================================================
 * Reviewer decisions
 * ========================================================================= */

/* Parse an optional JSON object body ("" is {}). */
static json_t *body_object(const char *body, size_t len, struct httpd_reply *r)
{
    json_error_t je;
    json_t *j;

    if (len == 0) {
        return json_object();
    }
    j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    if (!json_is_object(j)) {
        char detail[256];
        json_decref(j);
        snprintf(detail, sizeof(detail), "body:%d:%d: %s", je.line, je.column,
                 j == NULL ? je.text : "expected a JSON object");
        httpd_reply_error(r, 400, "invalid_json", detail);
        return NULL;
    }
    return j;
}

/* Everything a reviewer decision on one chunk holds: the lock, the
 * snapshot, the chunk. */
struct decision {
    struct advisor_worker *w;
    pthread_mutex_t *mu;
    struct advisor_snapshot snap;
    struct store_chunk c;
    bool have_chunk;
};

static bool decision_open(struct decision *x, struct advisor_worker *w, const char *sandbox,
                          const char *id, struct httpd_reply *r)
{
    struct store_sandbox sb;
    pv_result res;

    memset(x, 0, sizeof(*x));
    x->w = w;
    res = store_sandbox_get(w->st, sandbox, &sb);
    if (!pv_ok(res)) {
        reply_pv(r, res, "sandbox");
        return false;
    }
    x->mu = advisor_stripe(w->a, sb.id);
    store_sandbox_clear(&sb);
    pthread_mutex_lock(x->mu);
    res = advisor_snapshot_take(w, sandbox, &x->snap);
    if (pv_ok(res) && id != NULL) {
        res = store_chunk_get(w->st, x->snap.sandbox, id, &x->c);
        x->have_chunk = pv_ok(res);
        if (res.err == PV_ERR_NOTFOUND) {
            reply_chunk_missing(r, id);
            pthread_mutex_unlock(x->mu);
            advisor_snapshot_clear(&x->snap);
            return false;
        }
    }
    if (!pv_ok(res)) {
        reply_pv(r, res, "sandbox");
        pthread_mutex_unlock(x->mu);
        advisor_snapshot_clear(&x->snap);
        return false;
    }
    return true;
}

static void decision_close(struct decision *x)
{
    pthread_mutex_unlock(x->mu);
    if (x->have_chunk) {
        store_chunk_clear(&x->c);
    }
    advisor_snapshot_clear(&x->snap);
}

/* Persist a refreshed evaluation of a pending or rejected chunk. */
static pv_result persist_eval(struct advisor_worker *w, struct store_chunk *c,
                              const struct advisor_eval *e, const char *current)
{
    char evidence[65];
    struct store_chunk copy = *c;

    PV_GUARD(store_begin(w->st));
    if (!pv_ok(advisor_evidence_put(w, e, evidence))) {
        store_rollback(w->st);
        PV_BAIL(PV_ERR_IO);
    }
    apply_eval(&copy, e, current, evidence);
    if (!pv_ok(store_chunk_update(w->st, &copy, c->status))) {
        store_rollback(w->st);
        PV_BAIL(PV_ERR_CONFLICT);
    }
    return store_commit(w->st);
}

static json_t *rule_of(const struct store_chunk *c)
{
    return json_loads(c->proposed_rule, 0, NULL);
}

/* A reviewer's approval of the chunk 'x' holds, on evaluation 'e': commit
 * it (compare-and-set on the status read), log and answer. 'narrowed_from'
 * (may be NULL) is the chunk's own rule when the narrowed suggestion is
 * approved instead; the answer then says "narrowed". */
static void reviewer_approve(struct advisor_worker *w, struct decision *x,
                             const struct advisor_eval *e, const char *narrowed_from,
                             struct httpd_reply *r)
{
    char line[8192];
    char *expect = pv_strdup(x->c.status);
    pv_result res = expect != NULL ? store_begin(w->st) : pv_fail(PV_ERR_NOMEM, __func__);
    json_t *out;

    if (pv_ok(res)) {
        res = approve_in_tx_as(w, &x->snap, &x->c, e, expect, false, NULL, narrowed_from, line,
                               sizeof(line));
        res = pv_ok(res) ? store_commit(w->st) : res;
        if (!pv_ok(res)) {
            store_rollback(w->st);
        }
    }
    free(expect);
    if (!pv_ok(res)) {
        reply_pv(r, res, "chunk");
        return;
    }
    log_line(line);
    advisor_changed(w->a);
    out =
        json_pack("{s:s,s:s,s:I,s:s}", "chunk_id", x->c.id, "status", "approved", "policy_version",
                  (json_int_t)x->c.approved_rev, "policy_hash", e->candidate_hash);
    if (out != NULL && narrowed_from != NULL) {
        json_object_set_new(out, "narrowed", json_true());
    }
    httpd_reply_json(r, 200, out);
}

/* Approve one chunk. In a batch (approve-all), an earlier approval of the
 * same batch moves the policy, so the live token cannot match the stored
 * one; the chunk is then approved only when its re-evaluation against the
 * moved policy reads exactly as the evaluation the reviewer saw (same
 * validation_result, same security notes, no error). */
static void approve_chunk(struct advisor_worker *w, const char *sandbox, const char *id,
                          const char *token, bool batch, struct httpd_reply *r)
{
    struct decision x;
    struct advisor_eval e;
    json_t *rule = NULL;
    const char *blocked;
    char detail[2300];
    pv_result res;

    if (!decision_open(&x, w, sandbox, id, r)) {
        return;
    }
    if (strcmp(x.c.status, "pending") != 0 && strcmp(x.c.status, "rejected") != 0 &&
        strcmp(x.c.status, "suspended") != 0) {
        /* The reference's words; a suspended chunk is approvable too. */
        snprintf(detail, sizeof(detail), "chunk status is '%s', expected 'pending' or 'rejected'",
                 x.c.status);
        httpd_reply_error(r, 409, "failed_precondition", detail);
        goto out;
    }
    if (strncmp(x.c.rule_name, "_provider_", 10) == 0) {
        httpd_reply_error(r, 400, "invalid_argument",
                          "chunk rule name uses the reserved '_provider_' prefix");
        goto out;
    }
    if (token == NULL || strcmp(token, x.c.review_token) != 0) {
        httpd_reply_error(r, 412, "failed_precondition",
                          "review token does not match the fetched proposal; refetch and review "
                          "again");
        goto out;
    }
    rule = rule_of(&x.c);
    if (rule == NULL) {
        httpd_reply_error(r, 500, "internal", "stored rule unreadable");
        goto out;
    }
    blocked = advisor_rule_blocked_host(rule, w->a->cfg.test_allow_loopback);
    if (blocked != NULL) {
        snprintf(detail, sizeof(detail),
                 "proposed rule endpoint host '%s' is an always-blocked destination", blocked);
        httpd_reply_error(r, 400, "invalid_argument", detail);
        goto out;
    }
    res = advisor_evaluate(w, &x.snap, x.c.rule_name, rule, &e);
    if (!pv_ok(res)) {
        reply_pv(r, res, "chunk");
        goto out;
    }
    if (e.application_error[0] != '\0') {
        (void)persist_eval(w, &x.c, &e, x.snap.hash);
        snprintf(detail, sizeof(detail), "proposal is not applicable: %s", e.application_error);
        httpd_reply_error(r, 409, "failed_precondition", detail);
        advisor_eval_clear(&e);
        goto out;
    }
    if (strcmp(e.review_token, x.c.review_token) != 0 &&
        !(batch && strcmp(e.validation_result, x.c.validation_result) == 0 &&
          strcmp(e.security_notes, x.c.security_notes) == 0)) {
        advisor_suggest(w, &x.snap, x.c.rule_name, rule, &e);
        (void)persist_eval(w, &x.c, &e, x.snap.hash);
        advisor_changed(w->a);
        httpd_reply_error(
            r, 412, "failed_precondition",
            "proposal inputs changed; evaluation refreshed, refetch and review again");
        advisor_eval_clear(&e);
        goto out;
    }
    reviewer_approve(w, &x, &e, NULL, r);
    advisor_eval_clear(&e);
out:
    json_decref(rule);
    decision_close(&x);
}

/* The suggestion stored in a chunk's evidence (a new reference), or NULL. */
static json_t *stored_suggestion(struct advisor_worker *w, const struct store_chunk *c)
{
    char *text = c->evidence[0] != '\0' ? store_blob_get(w->st, c->evidence, NULL) : NULL;
    json_t *ev = load_json(text);
    json_t *sug = json_incref(json_object_get(ev, "suggestion"));

    free(text);
    json_decref(ev);
    return sug;
}

void advisor_approve_suggestion(struct advisor_worker *w, const char *sandbox, const char *id,
                                const char *body, size_t len, struct httpd_reply *r)
{
    json_t *args = body_object(body, len, r);
    const char *token = json_string_value(json_object_get(args, "review_token"));
    struct decision x;
    struct advisor_eval e;
    json_t *sug = NULL;
    const json_t *rule;
    char *rule_text = NULL;
    char *original = NULL;
    pv_result res;

    if (args == NULL) {
        return;
    }
    if (!decision_open(&x, w, sandbox, id, r)) {
        json_decref(args);
        return;
    }
    if (strcmp(x.c.status, "pending") != 0 && strcmp(x.c.status, "rejected") != 0 &&
        strcmp(x.c.status, "suspended") != 0) {
        char detail[160];
        snprintf(detail, sizeof(detail), "chunk status is '%s', expected 'pending' or 'rejected'",
                 x.c.status);
        httpd_reply_error(r, 409, "failed_precondition", detail);
        goto out;
    }
    sug = stored_suggestion(w, &x.c);
    rule = json_object_get(sug, "rule");
    if (!json_is_object(rule)) {
        httpd_reply_error(r, 409, "failed_precondition",
                          "the chunk has no narrowed suggestion (none was proved approvable)");
        goto out;
    }
    if (token == NULL ||
        strcmp(token, json_string_value(json_object_get(sug, "review_token")) != NULL
                          ? json_string_value(json_object_get(sug, "review_token"))
                          : "") != 0) {
        httpd_reply_error(r, 412, "failed_precondition",
                          "review token does not match the fetched suggestion; refetch and review "
                          "again");
        goto out;
    }
    /* Proved again against the policy of now: the token names exactly the
     * evaluation the reviewer read. */
    res = advisor_evaluate(w, &x.snap, x.c.rule_name, rule, &e);
    if (!pv_ok(res)) {
        reply_pv(r, res, "chunk");
        goto out;
    }
    if (strcmp(e.review_token, token) != 0 || e.application_error[0] != '\0') {
        struct advisor_eval fresh;
        json_t *orig = rule_of(&x.c);
        /* refresh the chunk's own evaluation and its suggestion */
        if (orig != NULL && pv_ok(advisor_evaluate(w, &x.snap, x.c.rule_name, orig, &fresh))) {
            advisor_suggest(w, &x.snap, x.c.rule_name, orig, &fresh);
            (void)persist_eval(w, &x.c, &fresh, x.snap.hash);
            advisor_eval_clear(&fresh);
            advisor_changed(w->a);
        }
        json_decref(orig);
        httpd_reply_error(r, 412, "failed_precondition",
                          "suggestion inputs changed; evaluation refreshed, refetch and review "
                          "again");
        advisor_eval_clear(&e);
        goto out;
    }
    rule_text = advisor_json_canonical(rule);
    original = x.c.proposed_rule;
    x.c.proposed_rule = rule_text;
    if (rule_text == NULL) {
        httpd_reply_error(r, 500, "internal", "out of memory");
    } else {
        reviewer_approve(w, &x, &e, original, r);
    }
    advisor_eval_clear(&e);
    free(original);
out:
    json_decref(sug);
    json_decref(args);
    decision_close(&x);
}

void advisor_approve(struct advisor_worker *w, const char *sandbox, const char *id,
                     const char *body, size_t len, struct httpd_reply *r)
{
    json_t *args = body_object(body, len, r);

    if (args == NULL) {
        return;
    }
    approve_chunk(w, sandbox, id, json_string_value(json_object_get(args, "review_token")), false,
                  r);
    json_decref(args);
}

/* Sanitised reason: control characters dropped, at most REASON_MAX bytes. */
static char *clean_reason(const char *s)
{
    size_t n = s != NULL ? strlen(s) : 0;
    char *out = pv_malloc(n + 1);
    size_t o = 0;

    if (out == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n && o < REASON_MAX; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch != 0x7f) {
            out[o++] = (char)ch;
        }
    }
    /* Do not cut a UTF-8 sequence in half. */
    while (o > 0 && o == REASON_MAX && ((unsigned char)out[o - 1] & 0xc0) == 0x80) {
        o--;
    }
    if (o > 0 && o == REASON_MAX && ((unsigned char)out[o - 1] & 0xc0) == 0xc0) {
        o--;
    }
    out[o] = '\0';
    return out;
}

/* The chunk's own side of a reject or an undo: its new status, compare-and-
 * set on 'expect'. */
static pv_result chunk_leave(struct advisor_worker *w, struct store_chunk *c, bool undo,
                             const char *reason, const char *expect)
{
    free(c->status);
    free(c->decided_by);
    c->status = pv_strdup(undo ? "pending" : "rejected");
    c->decided_by = pv_strdup(undo ? "" : "reviewer");
    c->decided_ms = undo ? 0 : advisor_now_ms();
    c->approved_seq = 0;
    c->approved_rev = 0;
    c->auto_approved = false;
    if (undo || reason[0] != '\0') {
        free(c->rejection_reason);
        c->rejection_reason = pv_strdup(undo ? "" : reason);
    }
    free(c->suspension_reason);
    c->suspension_reason = pv_strdup("");
    if (c->status == NULL || c->decided_by == NULL || c->rejection_reason == NULL ||
        c->suspension_reason == NULL) {
        PV_BAIL(PV_ERR_NOMEM);
    }
    return store_chunk_update(w->st, c, expect);
}

/* Reject (from pending or approved) or undo (approved -> pending). */
static void remove_or_reject(struct advisor_worker *w, const char *sandbox, const char *id,
                             const char *body, size_t len, bool undo, struct httpd_reply *r)
{
    struct decision x;
    json_t *args = undo ? json_object() : body_object(body, len, r);
    char *reason = NULL;
    char detail[2300];
    char line[4096];
    char removed[4096] = "";
    char hash[65] = "";
    int64_t rev = 0;
    bool was_approved;
    pv_result res;
    char *expect = NULL;

    if (args == NULL) {
        return;
    }
    reason = clean_reason(json_string_value(json_object_get(args, "reason")));
    if (reason == NULL || !decision_open(&x, w, sandbox, id, r)) {
        if (reason == NULL) {
            httpd_reply_error(r, 500, "internal", "out of memory");
        }
        free(reason);
        json_decref(args);
        return;
    }
    was_approved = strcmp(x.c.status, "approved") == 0;
    if (undo ? !was_approved
             : (!was_approved && strcmp(x.c.status, "pending") != 0 &&
                strcmp(x.c.status, "suspended") != 0)) {
        snprintf(detail, sizeof(detail), "chunk status is '%s', expected %s", x.c.status,
                 undo ? "'approved'" : "'pending' or 'approved'");
        httpd_reply_error(r, 409, "failed_precondition", detail);
        goto out;
    }
    expect = pv_strdup(x.c.status);
    res = expect != NULL ? store_begin(w->st) : pv_fail(PV_ERR_NOMEM, __func__);
    if (!pv_ok(res)) {
        reply_pv(r, res, "chunk");
        goto out;
    }
    if (was_approved) {
        char cause[128];
        char err[1024] = "";
        char suffix[160];
        struct advisor_composed comp;
        snprintf(cause, sizeof(cause), "%s %s", undo ? "undo" : "reject", x.c.id);
        /* The chunk leaves first: the recomposition then sees it as what
         * it is now, not as an approved chunk to prove again. */
        memset(&comp, 0, sizeof(comp));
        res = chunk_leave(w, &x.c, undo, reason, expect);
        if (pv_ok(res)) {
            res = advisor_recompose(w, x.snap.sandbox, x.c.id, cause, &comp, err, sizeof(err));
        }
        rev = comp.rev;
        memcpy(hash, comp.hash, sizeof(hash));
        if (!pv_ok(res)) {
            advisor_composed_clear(&comp);
            store_rollback(w->st);
            if (err[0] != '\0') {
                snprintf(detail, sizeof(detail), "cannot remove the chunk's grant: %s", err);
                httpd_reply_error(r, 409, "failed_precondition", detail);
            } else {
                reply_pv(r, res, "chunk");
            }
            goto out;
        }
        advisor_event_suffix(suffix, sizeof(suffix), rev, hash);
        snprintf(removed, sizeof(removed),
                 "CONFIG:REMOVED [INFO] gateway %s approved draft chunk %s: remove-rule %s [%s]",
                 undo ? "reverted" : "removed previously", x.c.id, x.c.rule_name, suffix);
        res = advisor_event(w->st, x.snap.name, "CONFIG:REMOVED", removed,
                            json_pack("{s:s,s:I,s:s,s:s,s:O,s:O}", "chunk_id", x.c.id, "version",
                                      (json_int_t)rev, "hash", hash, "base_blob", comp.base_blob,
                                      "chunks", comp.chunks, "suspended", comp.suspended));
        advisor_composed_clear(&comp);
    } else {
        res = chunk_leave(w, &x.c, undo, reason, expect);
    }
    if (pv_ok(res) && !undo) {
        snprintf(line, sizeof(line), "CONFIG:REJECTED [LOW] chunk:%s rejected reason:\"%s\"",
                 x.c.id, reason[0] != '\0' ? reason : "(no guidance)");
        res = advisor_event(w->st, x.snap.name, "CONFIG:REJECTED", line,
                            json_pack("{s:s,s:s,s:s}", "chunk_id", x.c.id, "rejection_reason",
                                      x.c.rejection_reason, "decided_by", "reviewer"));
    }
    res = pv_ok(res) ? store_commit(w->st) : res;
    if (!pv_ok(res)) {
        store_rollback(w->st);
        reply_pv(r, res, "chunk");
        goto out;
    }
    if (removed[0] != '\0') {
        log_line(removed);
    }
    if (!undo) {
        log_line(line);
    }
    advisor_changed(w->a);
    {
        json_t *out = json_pack("{s:s,s:s}", "chunk_id", x.c.id, "status", x.c.status);
        if (out != NULL && rev > 0) {
            json_object_set_new(out, "policy_version", json_integer(rev));
            json_object_set_new(out, "policy_hash", json_string(hash));
        }
        httpd_reply_json(r, 200, out);
    }
out:
    free(expect);
    free(reason);
    json_decref(args);
    decision_close(&x);
}

void advisor_reject(struct advisor_worker *w, const char *sandbox, const char *id, const char *body,
                    size_t len, struct httpd_reply *r)
{
    remove_or_reject(w, sandbox, id, body, len, false, r);
}

void advisor_undo(struct advisor_worker *w, const char *sandbox, const char *id,
                  struct httpd_reply *r)
{
    remove_or_reject(w, sandbox, id, NULL, 0, true, r);
}

void advisor_edit(struct advisor_worker *w, const char *sandbox, const char *id, const char *body,
                  size_t len, struct httpd_reply *r)
{
    struct decision x;
    struct advisor_eval e;
    json_t *args = body_object(body, len, r);
    json_t *rule;
    char *text = NULL;
    char *rule_text = NULL;
    struct model_diags *d = NULL;
    struct model_proposal *pr = NULL;
    size_t tlen = 0;
    pv_result res;

    if (args == NULL) {
        return;
    }
    rule = json_object_get(args, "rule");
    if (!json_is_object(rule)) {
        httpd_reply_error(r, 400, "invalid_request", "body needs \"rule\": a NetworkPolicyRule");
        json_decref(args);
        return;
    }
    if (!decision_open(&x, w, sandbox, id, r)) {
        json_decref(args);
        return;
    }
    if (strcmp(x.c.status, "pending") != 0) {
        char detail[128];
        snprintf(detail, sizeof(detail), "chunk status is '%s', expected 'pending'", x.c.status);
        httpd_reply_error(r, 409, "failed_precondition", detail);
        goto out;
    }
    text = advisor_proposal_text(x.c.rule_name, rule, &tlen);
    d = model_diags_new();
    pr = text != NULL && d != NULL ? model_proposal_load("rule", text, tlen, d) : NULL;
    if (pr == NULL) {
        httpd_reply_error(r, 400, "invalid_proposal",
                          d != NULL && model_diags_count(d) > 0 ? model_diags_msg(d, 0)
                                                                : "invalid rule");
        goto out;
    }
    if (advisor_rule_blocked_host(rule, w->a->cfg.test_allow_loopback) != NULL) {
        httpd_reply_error(r, 400, "invalid_argument",
                          "the edited rule names an always-blocked destination");
        goto out;
    }
    res = advisor_evaluate(w, &x.snap, x.c.rule_name, rule, &e);
    if (!pv_ok(res)) {
        reply_pv(r, res, "chunk");
        goto out;
    }
    advisor_suggest(w, &x.snap, x.c.rule_name, rule, &e);
    rule_text = advisor_json_canonical(rule);
    free(x.c.proposed_rule);
    x.c.proposed_rule = rule_text;
    res = rule_text != NULL ? persist_eval(w, &x.c, &e, x.snap.hash)
                            : pv_fail(PV_ERR_NOMEM, __func__);
    advisor_eval_clear(&e);
    if (!pv_ok(res)) {
        reply_pv(r, res, "chunk");
        goto out;
    }
    {
        struct store_chunk fresh;
        advisor_changed(w->a);
        if (pv_ok(store_chunk_get(w->st, x.snap.sandbox, id, &fresh))) {
            httpd_reply_json(r, 200, chunk_json(w, &fresh, true));
            store_chunk_clear(&fresh);
        } else {
            httpd_reply_error(r, 500, "internal", "cannot read the edited chunk");
        }
    }
out:
    model_proposal_free(pr);
    model_diags_free(d);
    free(text);
    json_decref(args);
    decision_close(&x);
}

/* ===========================================================================
 * Approve-all and clear
 * ========================================================================= */

struct ids_ctx {
    char **ids;
    size_t n;
};

static void ids_collect(void *arg, const struct store_chunk *c)
{
    struct ids_ctx *x = arg;
    char **ids = realloc(x->ids, (x->n + 1) * sizeof(*ids));

    if (ids != NULL) {
        x->ids = ids;
        x->ids[x->n] = pv_strdup(c->id);
        if (x->ids[x->n] != NULL) {
            x->n++;
        }
    }
}

void advisor_approve_all(struct advisor_worker *w, const char *sandbox, const char *body,
                         size_t len, struct httpd_reply *r)
{
    json_t *args = body_object(body, len, r);
    const json_t *approvals;
    bool flagged;
    struct ids_ctx ids = {0};
    json_t *done = json_array();
    json_t *skipped = json_array();
    int64_t sid;
    pv_result res;

    if (args == NULL) {
        json_decref(done);
        json_decref(skipped);
        return;
    }
    approvals = json_object_get(args, "approvals");
    flagged = json_is_true(json_object_get(args, "include_security_flagged"));
    res = advisor_sandbox_id(w, sandbox, &sid);
    if (pv_ok(res) && approvals == NULL) {
        res = store_chunk_each(w->st, sid, "pending", ids_collect, &ids);
    }
    if (!pv_ok(res)) {
        reply_pv(r, res, "sandbox");
        goto out;
    }
    if (approvals != NULL && !json_is_array(approvals)) {
        httpd_reply_error(r, 400, "invalid_request",
                          "approvals must be a list of {chunk_id, review_token}");
        goto out;
    }
    {
        size_t n = approvals != NULL ? json_array_size(approvals) : ids.n;
        for (size_t i = 0; i < n; i++) {
            const json_t *a = approvals != NULL ? json_array_get(approvals, i) : NULL;
            const char *id =
                a != NULL ? json_string_value(json_object_get(a, "chunk_id")) : ids.ids[i];
            const char *tok =
                a != NULL ? json_string_value(json_object_get(a, "review_token")) : NULL;
            struct store_chunk c;
            struct httpd_reply one;

            if (id == NULL) {
                json_array_append_new(
                    skipped, json_pack("{s:s,s:s}", "chunk_id", "", "reason", "missing chunk_id"));
                continue;
            }
            if (!pv_ok(store_chunk_get(w->st, sid, id, &c))) {
                json_array_append_new(
                    skipped, json_pack("{s:s,s:s}", "chunk_id", id, "reason", "chunk not found"));
                continue;
            }
            if (strcmp(c.status, "pending") != 0) {
                json_array_append_new(
                    skipped, json_pack("{s:s,s:s}", "chunk_id", id, "reason", "not pending"));
                store_chunk_clear(&c);
                continue;
            }
            if (!flagged && c.security_notes[0] != '\0') {
                json_array_append_new(skipped, json_pack("{s:s,s:s}", "chunk_id", id, "reason",
                                                         "security notes (include_security_flagged "
                                                         "to approve)"));
                store_chunk_clear(&c);
                continue;
            }
            /* Without an explicit token the stored evaluation is what the
             * reviewer saw; approve_chunk checks it is still what holds. */
            memset(&one, 0, sizeof(one));
            approve_chunk(w, sandbox, id, tok != NULL ? tok : c.review_token, true, &one);
            store_chunk_clear(&c);
            if (one.status == 200) {
                json_array_append(done, one.body);
            } else {
                const char *detail = json_string_value(json_object_get(one.body, "detail"));
                json_array_append_new(skipped, json_pack("{s:s,s:s}", "chunk_id", id, "reason",
                                                         detail != NULL ? detail : "refused"));
            }
            json_decref(one.body);
        }
    }
    if (json_array_size(done) > 0) {
        char line[256];
        res = store_begin(w->st);
        snprintf(line, sizeof(line),
                 "CONFIG:MERGED [INFO] gateway bulk-approved %zu draft chunk(s) and skipped %zu",
                 json_array_size(done), json_array_size(skipped));
        if (pv_ok(res)) {
            res = advisor_event(w->st, sandbox, "CONFIG:MERGED", line, NULL);
            res = pv_ok(res) ? store_commit(w->st) : res;
            if (!pv_ok(res)) {
                store_rollback(w->st);
            } else {
                log_line(line);
            }
        }
    }
    httpd_reply_json(r, 200,
                     json_pack("{s:O,s:O,s:I,s:I}", "approved", done, "skipped", skipped,
                               "approved_chunks", (json_int_t)json_array_size(done),
                               "skipped_chunks", (json_int_t)json_array_size(skipped)));
out:
    for (size_t i = 0; i < ids.n; i++) {
        free(ids.ids[i]);
    }
    free(ids.ids);
    json_decref(done);
    json_decref(skipped);
    json_decref(args);
}

void advisor_clear(struct advisor_worker *w, const char *sandbox, struct httpd_reply *r)
{
    struct decision x;
    int64_t n = 0;
    char line[256];
    pv_result res;

    if (!decision_open(&x, w, sandbox, NULL, r)) {
        return;
    }
    res = store_begin(w->st);
    if (pv_ok(res)) {
        res = store_chunk_clear_pending(w->st, x.snap.sandbox, &n);
    }
    snprintf(line, sizeof(line),
             "CONFIG:REMOVED [INFO] gateway cleared %lld pending draft chunk(s)", (long long)n);
    if (pv_ok(res) && n > 0) {
        res = advisor_event(w->st, sandbox, "CONFIG:REMOVED", line,
                            json_pack("{s:I}", "cleared", (json_int_t)n));
    }
    res = pv_ok(res) ? store_commit(w->st) : res;
    if (!pv_ok(res)) {
        store_rollback(w->st);
        reply_pv(r, res, "sandbox");
    } else {
        if (n > 0) {
            log_line(line);
        }
        advisor_changed(w->a);
        httpd_reply_json(r, 200, json_pack("{s:I}", "cleared", (json_int_t)n));
    }
    decision_close(&x);
}

/* ===========================================================================
 * Base policy
 * ========================================================================= */

void advisor_base_set(struct advisor_worker *w, const char *sandbox, const char *text, size_t len,
                      const char *cause, struct httpd_reply *r)
{
    struct decision x;
    struct model_diags *d = model_diags_new();
    struct model_policy *p =
        d != NULL ? model_policy_load("policy", text, len, MODEL_FMT_AUTO, d) : NULL;
    char *yaml = p != NULL ? model_policy_to_yaml(p, NULL) : NULL;
    struct store_revision base;
    char blob[65];
    char hash[65];
    char err[1024] = "";
    char line[512];
    char suffix[160];
    int64_t rev = 0;
    struct advisor_composed comp;
    pv_result res;

    memset(&comp, 0, sizeof(comp));
    if (p == NULL || yaml == NULL) {
        json_t *diags = json_array();
        for (size_t i = 0; d != NULL && i < model_diags_count(d) && i < 50; i++) {
            json_array_append_new(diags, json_string(model_diags_line(d, i)));
        }
        httpd_reply_error(r, 400, "invalid_policy",
                          d != NULL && model_diags_count(d) > 0 ? model_diags_line(d, 0)
                                                                : "out of memory");
        json_object_set_new(r->body, "diagnostics", diags);
        goto done;
    }
    if (!decision_open(&x, w, sandbox, NULL, r)) {
        goto done;
    }
    memset(&base, 0, sizeof(base));
    res = store_begin(w->st);
    if (pv_ok(res)) {
        res = model_policy_sha256(p, hash);
    }
    if (pv_ok(res)) {
        res = store_blob_put(w->st, yaml, strlen(yaml), blob);
    }
    if (pv_ok(res)) {
        base.blob = blob;
        base.hash = hash;
        base.cause = PV_UNCONST(cause);
        res = store_base_put(w->st, x.snap.sandbox, &base);
    }
    memset(&comp, 0, sizeof(comp));
    if (pv_ok(res)) {
        res = advisor_recompose(w, x.snap.sandbox, NULL, "base", &comp, err, sizeof(err));
        rev = comp.rev;
        memcpy(hash, comp.hash, sizeof(hash));
    }
    advisor_event_suffix(suffix, sizeof(suffix), rev, hash);
    snprintf(line, sizeof(line), "CONFIG:MERGED [INFO] gateway set base policy revision %lld [%s]",
             (long long)base.rev, suffix);
    if (pv_ok(res)) {
        res = advisor_event(w->st, sandbox, "CONFIG:MERGED", line,
                            json_pack("{s:I,s:s,s:I,s:s,s:O,s:O}", "base_revision",
                                      (json_int_t)base.rev, "base_blob", blob, "version",
                                      (json_int_t)rev, "hash", hash, "chunks", comp.chunks,
                                      "suspended", comp.suspended));
    }
    if (pv_ok(res)) {
        struct model_policy *eff = advisor_compose(w, x.snap.sandbox, NULL, err, sizeof(err));
        res = eff != NULL
                  ? reconcile(w, sandbox, x.snap.sandbox, eff, hash, rev, NULL, advisor_now_ms())
                  : pv_fail(PV_ERR_POLICY, __func__);
        model_policy_free(eff);
    }
    res = pv_ok(res) ? store_commit(w->st) : res;
    if (!pv_ok(res)) {
        store_rollback(w->st);
        if (err[0] != '\0') {
            char detail[1200];
            snprintf(detail, sizeof(detail), "the base policy cannot be composed: %s", err);
            httpd_reply_error(r, 409, "failed_precondition", detail);
        } else {
            reply_pv(r, res, "sandbox");
        }
    } else {
        log_line(line);
        advisor_changed(w->a);
        httpd_reply_json(r, 200,
                         json_pack("{s:I,s:I,s:s,s:O}", "base_revision", (json_int_t)base.rev,
                                   "policy_version", (json_int_t)rev, "policy_hash", hash,
                                   "suspended",
                                   comp.suspended != NULL ? comp.suspended : json_array()));
    }
    decision_close(&x);
done:
    advisor_composed_clear(&comp);
    free(yaml);
    model_policy_free(p);
    model_diags_free(d);
}
