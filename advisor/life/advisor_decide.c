/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_decide.c - a reviewer's decisions on chunks (approve, approve the
 * narrowed suggestion, reject, undo, edit, approve-all, clear) and a new base
 * policy from the operator (docs/advisor.md#lifecycle).
 */
#include "config.h"

#include <stdarg.h>
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

#define REASON_MAX 1000u

/* ===========================================================================
 * Reviewer decisions
 * ========================================================================= */

/* A decision refused: why ('why') and the message ('fmt'). */
static void refuse(struct advisor_decision *d, enum advisor_refusal why, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void refuse(struct advisor_decision *d, enum advisor_refusal why, const char *fmt, ...)
{
    va_list ap;

    d->refusal = why;
    va_start(ap, fmt);
    vsnprintf(d->detail, sizeof(d->detail), fmt, ap);
    va_end(ap);
}

/* The store failed under a decision on 'what' ("sandbox", "chunk"): the
 * same refusal for every caller (advisor_reply_pv answers it alike). */
static void store_failed(struct advisor_decision *d, pv_result res, const char *what)
{
    switch (res.err) {
    case PV_ERR_NOTFOUND:
        refuse(d, ADVISOR_REFUSED_NOT_FOUND, "%s not found", what);
        return;
    case PV_ERR_CONFLICT:
        refuse(d, ADVISOR_REFUSED_CONFLICT,
               "the chunk changed concurrently; refetch and try again");
        return;
    case PV_ERR_NOMEM:
        refuse(d, ADVISOR_REFUSED_INTERNAL, "out of memory");
        return;
    default:
        break;
    }
    pv_log_warnx("%s: %s failed: %s (%s)", what, pv_strerror(res.err),
                 pv_debug_str != NULL ? pv_debug_str : "?", "see the store's state");
    refuse(d, ADVISOR_REFUSED_INTERNAL, "the store failed; see the advisor's log");
}

static void decision_init(struct advisor_decision *d)
{
    memset(d, 0, sizeof(*d));
    d->refusal = ADVISOR_REFUSED_INTERNAL; /* until decided */
    snprintf(d->detail, sizeof(d->detail), "out of memory");
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
                          const char *id, struct advisor_decision *d)
{
    struct store_sandbox sb;
    pv_result res;

    memset(x, 0, sizeof(*x));
    x->w = w;
    res = store_sandbox_get(w->st, sandbox, &sb);
    if (!pv_ok(res)) {
        store_failed(d, res, "sandbox");
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
            refuse(d, ADVISOR_REFUSED_NO_CHUNK,
                   "chunk '%.64s' is not present in this sandbox's draft policy", id);
            pthread_mutex_unlock(x->mu);
            advisor_snapshot_clear(&x->snap);
            return false;
        }
    }
    if (!pv_ok(res)) {
        store_failed(d, res, "sandbox");
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
    advisor_apply_eval(&copy, e, current, evidence);
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
                             struct advisor_decision *d)
{
    char line[8192];
    char *expect = pv_strdup(x->c.status);
    pv_result res = expect != NULL ? store_begin(w->st) : pv_fail(PV_ERR_NOMEM, __func__);

    if (pv_ok(res)) {
        res = advisor_approve_in_tx_as(w, &x->snap, &x->c, e, expect, false, NULL, narrowed_from,
                                       line, sizeof(line));
        res = pv_ok(res) ? store_commit(w->st) : res;
        if (!pv_ok(res)) {
            store_rollback(w->st);
        }
    }
    free(expect);
    if (!pv_ok(res)) {
        store_failed(d, res, "chunk");
        return;
    }
    advisor_log_line(line);
    advisor_changed(w->a);
    d->refusal = ADVISOR_DECIDED;
    snprintf(d->chunk_id, sizeof(d->chunk_id), "%s", x->c.id);
    d->status = "approved";
    d->policy_version = x->c.approved_rev;
    snprintf(d->policy_hash, sizeof(d->policy_hash), "%s", e->candidate_hash);
    d->narrowed = narrowed_from != NULL;
}

/* The chunk adds nothing to the policy of now (a submission of it would be
 * answered already_allowed, advisor_submit.c): approving it would grant
 * nothing today and carry authority the day its cover goes
 * (docs/advisor.md#reproof). It is not approved; it is rejected as covered,
 * as reconcile rejects a pending chunk the policy covers, and the answer
 * says already_allowed. */
static void approve_already_allowed(struct advisor_worker *w, struct decision *x,
                                    struct advisor_decision *d)
{
    char reason[160];
    char line[512];
    struct store_chunk upd = x->c; /* borrows x->c's strings */
    pv_result res;

    snprintf(reason, sizeof(reason),
             "covered by active policy revision %lld: the policy already allows everything the "
             "rule would",
             (long long)x->snap.rev);
    upd.status = PV_UNCONST("rejected");
    upd.rejection_reason = reason;
    upd.decided_by = PV_UNCONST("reviewer");
    upd.decided_ms = advisor_now_ms();
    snprintf(line, sizeof(line), "CONFIG:REJECTED [LOW] chunk:%s rejected reason:\"%s\"", x->c.id,
             reason);
    res = store_begin(w->st);
    if (pv_ok(res)) {
        res = store_chunk_update(w->st, &upd, x->c.status);
        res = pv_ok(res)
                  ? advisor_event(w->st, x->snap.name, "CONFIG:REJECTED", line,
                                  json_pack("{s:s,s:s,s:s}", "chunk_id", x->c.id,
                                            "rejection_reason", reason, "decided_by", "reviewer"))
                  : res;
        res = pv_ok(res) ? store_commit(w->st) : res;
        if (!pv_ok(res)) {
            store_rollback(w->st);
        }
    }
    if (!pv_ok(res)) {
        store_failed(d, res, "chunk");
        return;
    }
    advisor_log_line(line);
    advisor_changed(w->a);
    d->refusal = ADVISOR_DECIDED;
    snprintf(d->chunk_id, sizeof(d->chunk_id), "%s", x->c.id);
    d->status = "already_allowed";
    d->policy_version = x->snap.rev;
    snprintf(d->policy_hash, sizeof(d->policy_hash), "%s", x->snap.hash);
}

/* Does the fresh evaluation 'e' still read as the stored one the reviewer
 * saw (docs/advisor.md#review-tokens)? The one rule for approve, approve
 * without a token and approve-all: everything it grants and every finding
 * path is covered by the stored evidence (advisor_evidence_covered, the
 * test that keeps an approved chunk at re-proof), and its
 * validation_result and security notes are the same text. Then a moved
 * policy (another approval, a base change that left this chunk alone) does
 * not make the reviewer read it again. */
static bool still_as_reviewed(struct advisor_worker *w, const struct store_chunk *c,
                              const struct advisor_eval *e)
{
    char *text = c->evidence[0] != '\0' ? store_blob_get(w->st, c->evidence, NULL) : NULL;
    json_t *ev = advisor_load_json(text);
    char why[1200];
    bool same = ev != NULL && strcmp(e->validation_result, c->validation_result) == 0 &&
                strcmp(e->security_notes, c->security_notes) == 0 &&
                advisor_evidence_covered(ev, e, false, why, sizeof(why));

    free(text);
    json_decref(ev);
    return same;
}

/* Approve one chunk: the token must name the stored evaluation; the chunk
 * is evaluated again against the policy of now and approved when that
 * evaluation is the stored one or still reads as it (still_as_reviewed),
 * else the fresh evaluation is stored and the answer is 412. A batch
 * (approve-all) holds each chunk to the same rule. */
static void approve_chunk(struct advisor_worker *w, const char *sandbox, const char *id,
                          const char *token, struct advisor_decision *d)
{
    struct decision x;
    struct advisor_eval e;
    json_t *rule = NULL;
    const char *blocked;
    pv_result res;

    if (!decision_open(&x, w, sandbox, id, d)) {
        return;
    }
    if (strcmp(x.c.status, "pending") != 0 && strcmp(x.c.status, "rejected") != 0 &&
        strcmp(x.c.status, "suspended") != 0) {
        /* The reference's words; a suspended chunk is approvable too. */
        refuse(d, ADVISOR_REFUSED_PRECONDITION,
               "chunk status is '%s', expected 'pending' or 'rejected'", x.c.status);
        goto out;
    }
    if (strncmp(x.c.rule_name, "_provider_", 10) == 0) {
        refuse(d, ADVISOR_REFUSED_INVALID, "chunk rule name uses the reserved '_provider_' prefix");
        goto out;
    }
    if (token == NULL || strcmp(token, x.c.review_token) != 0) {
        refuse(d, ADVISOR_REFUSED_STALE,
               "review token does not match the fetched proposal; refetch and review again");
        goto out;
    }
    rule = rule_of(&x.c);
    if (rule == NULL) {
        refuse(d, ADVISOR_REFUSED_INTERNAL, "stored rule unreadable");
        goto out;
    }
    blocked = advisor_rule_blocked_host(rule, w->a->cfg.test_allow_loopback);
    if (blocked != NULL) {
        refuse(d, ADVISOR_REFUSED_INVALID,
               "proposed rule endpoint host '%s' is an always-blocked destination", blocked);
        goto out;
    }
    res = advisor_evaluate(w, &x.snap, x.c.rule_name, rule, &e);
    if (!pv_ok(res)) {
        store_failed(d, res, "chunk");
        goto out;
    }
    if (e.nomem) {
        /* the evaluation could not be made: nothing to store or refuse on */
        refuse(d, ADVISOR_REFUSED_INTERNAL, "out of memory");
        advisor_eval_clear(&e);
        goto out;
    }
    if (e.application_error[0] != '\0') {
        (void)persist_eval(w, &x.c, &e, x.snap.hash);
        refuse(d, ADVISOR_REFUSED_PRECONDITION, "proposal is not applicable: %s",
               e.application_error);
        advisor_eval_clear(&e);
        goto out;
    }
    if (strcmp(e.review_token, x.c.review_token) != 0 && !still_as_reviewed(w, &x.c, &e)) {
        advisor_suggest(w, &x.snap, x.c.rule_name, rule, &e);
        (void)persist_eval(w, &x.c, &e, x.snap.hash);
        advisor_changed(w->a);
        refuse(d, ADVISOR_REFUSED_STALE,
               "proposal inputs changed; evaluation refreshed, refetch and review again");
        advisor_eval_clear(&e);
        goto out;
    }
    if (advisor_eval_adds_nothing(&e)) {
        approve_already_allowed(w, &x, d);
    } else {
        reviewer_approve(w, &x, &e, NULL, d);
    }
    advisor_eval_clear(&e);
out:
    json_decref(rule);
    decision_close(&x);
}

/* The suggestion stored in a chunk's evidence (a new reference), or NULL. */
static json_t *stored_suggestion(struct advisor_worker *w, const struct store_chunk *c)
{
    char *text = c->evidence[0] != '\0' ? store_blob_get(w->st, c->evidence, NULL) : NULL;
    json_t *ev = advisor_load_json(text);
    json_t *sug = json_incref(json_object_get(ev, "suggestion"));

    free(text);
    json_decref(ev);
    return sug;
}

/* Was suggestion 'sug' proved within the evaluation the chunk holds now?
 * advisor_suggest proved it within the proposal's candidate of the
 * evaluation whose review token it keeps as proposal_token; the same token
 * names the same proposal and policy, so that proof stands. A suggestion
 * without it (stored before suggestions were held to their proposal) or
 * from another evaluation is refreshed instead of approved. */
static bool suggestion_bound(const json_t *sug, const struct store_chunk *c)
{
    const char *t = json_string_value(json_object_get(sug, "proposal_token"));

    return t != NULL && strcmp(t, c->review_token) == 0;
}

/* The chunk's own evaluation and its suggestion, evaluated again and
 * stored; the reviewer is asked to look again (412). */
static void refresh_suggestion(struct advisor_worker *w, struct decision *x,
                               struct advisor_decision *d)
{
    struct advisor_eval fresh;
    json_t *orig = rule_of(&x->c);

    if (orig != NULL && pv_ok(advisor_evaluate(w, &x->snap, x->c.rule_name, orig, &fresh))) {
        advisor_suggest(w, &x->snap, x->c.rule_name, orig, &fresh);
        (void)persist_eval(w, &x->c, &fresh, x->snap.hash);
        advisor_eval_clear(&fresh);
        advisor_changed(w->a);
    }
    json_decref(orig);
    refuse(d, ADVISOR_REFUSED_STALE,
           "suggestion inputs changed; evaluation refreshed, refetch and review again");
}

/* The chunk's host, port and binary from the rule it now holds: what every
 * reader (the list, the agent's view, the history) shows of an approved
 * suggestion is the narrowed rule, not the proposal it replaced. */
static pv_result chunk_take_key(struct store_chunk *c, const json_t *rule) PV_WUR;
static pv_result chunk_take_key(struct store_chunk *c, const json_t *rule)
{
    char host[256];
    char binary[1024];
    int64_t port = 0;
    char *h;
    char *b;

    advisor_rule_key(rule, host, sizeof(host), &port, binary, sizeof(binary));
    h = pv_strdup(host);
    b = pv_strdup(binary);
    if (h == NULL || b == NULL) {
        free(h);
        free(b);
        PV_BAIL(PV_ERR_NOMEM);
    }
    free(c->host);
    free(c->binary);
    c->host = h;
    c->binary = b;
    c->port = port;
    return PV_RESULT_OK;
}

pv_result advisor_approve_suggestion(struct advisor_worker *w, const char *sandbox, const char *id,
                                     const char *token, struct advisor_decision *d)
{
    struct decision x;
    struct advisor_eval e;
    json_t *sug = NULL;
    const json_t *rule;
    char *rule_text = NULL;
    char *original = NULL;
    pv_result res;

    decision_init(d);
    if (!decision_open(&x, w, sandbox, id, d)) {
        return advisor_refusal_result(d->refusal);
    }
    if (strcmp(x.c.status, "pending") != 0 && strcmp(x.c.status, "rejected") != 0 &&
        strcmp(x.c.status, "suspended") != 0) {
        refuse(d, ADVISOR_REFUSED_PRECONDITION,
               "chunk status is '%s', expected 'pending' or 'rejected'", x.c.status);
        goto out;
    }
    sug = stored_suggestion(w, &x.c);
    rule = json_object_get(sug, "rule");
    if (!json_is_object(rule)) {
        refuse(d, ADVISOR_REFUSED_PRECONDITION,
               "the chunk has no narrowed suggestion (none was proved approvable)");
        goto out;
    }
    if (token == NULL ||
        strcmp(token, json_string_value(json_object_get(sug, "review_token")) != NULL
                          ? json_string_value(json_object_get(sug, "review_token"))
                          : "") != 0) {
        refuse(d, ADVISOR_REFUSED_STALE,
               "review token does not match the fetched suggestion; refetch and review again");
        goto out;
    }
    if (!suggestion_bound(sug, &x.c)) {
        refresh_suggestion(w, &x, d);
        goto out;
    }
    /* Proved again against the policy of now: the token names exactly the
     * evaluation the reviewer read. */
    res = advisor_evaluate(w, &x.snap, x.c.rule_name, rule, &e);
    if (!pv_ok(res)) {
        store_failed(d, res, "chunk");
        goto out;
    }
    if (strcmp(e.review_token, token) != 0 || e.application_error[0] != '\0') {
        refresh_suggestion(w, &x, d);
        advisor_eval_clear(&e);
        goto out;
    }
    rule_text = advisor_json_canonical(rule);
    original = x.c.proposed_rule;
    x.c.proposed_rule = rule_text;
    if (rule_text == NULL || !pv_ok(chunk_take_key(&x.c, rule))) {
        refuse(d, ADVISOR_REFUSED_INTERNAL, "out of memory");
    } else {
        reviewer_approve(w, &x, &e, original, d);
    }
    advisor_eval_clear(&e);
    free(original);
out:
    json_decref(sug);
    decision_close(&x);
    return advisor_refusal_result(d->refusal);
}

pv_result advisor_approve(struct advisor_worker *w, const char *sandbox, const char *id,
                          const char *token, struct advisor_decision *d)
{
    decision_init(d);
    approve_chunk(w, sandbox, id, token, d);
    return advisor_refusal_result(d->refusal);
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
/* long: reject and undo share one transaction (open, move, re-prove, record); their branches
 * differ by a line or two */
static pv_result remove_or_reject(struct advisor_worker *w, const char *sandbox, const char *id,
                                  const char *reason_arg, bool undo, struct advisor_decision *d)
{
    struct decision x;
    char *reason = NULL;
    char line[4096];
    char removed[4096] = "";
    char hash[65] = "";
    int64_t rev = 0;
    bool was_approved;
    pv_result res;
    char *expect = NULL;

    decision_init(d);
    reason = clean_reason(undo ? NULL : reason_arg);
    if (reason == NULL || !decision_open(&x, w, sandbox, id, d)) {
        free(reason);
        return advisor_refusal_result(d->refusal);
    }
    was_approved = strcmp(x.c.status, "approved") == 0;
    if (undo ? !was_approved
             : (!was_approved && strcmp(x.c.status, "pending") != 0 &&
                strcmp(x.c.status, "suspended") != 0)) {
        refuse(d, ADVISOR_REFUSED_PRECONDITION, "chunk status is '%s', expected %s", x.c.status,
               undo ? "'approved'" : "'pending' or 'approved'");
        goto out;
    }
    expect = pv_strdup(x.c.status);
    res = expect != NULL ? store_begin(w->st) : pv_fail(PV_ERR_NOMEM, __func__);
    if (!pv_ok(res)) {
        store_failed(d, res, "chunk");
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
                refuse(d, ADVISOR_REFUSED_PRECONDITION, "cannot remove the chunk's grant: %s", err);
            } else {
                store_failed(d, res, "chunk");
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
        store_failed(d, res, "chunk");
        goto out;
    }
    if (removed[0] != '\0') {
        advisor_log_line(removed);
    }
    if (!undo) {
        advisor_log_line(line);
    }
    advisor_changed(w->a);
    d->refusal = ADVISOR_DECIDED;
    snprintf(d->chunk_id, sizeof(d->chunk_id), "%s", x.c.id);
    d->status = undo ? "pending" : "rejected";
    d->policy_version = rev;
    memcpy(d->policy_hash, hash, sizeof(d->policy_hash));
out:
    free(expect);
    free(reason);
    decision_close(&x);
    return advisor_refusal_result(d->refusal);
}

pv_result advisor_reject(struct advisor_worker *w, const char *sandbox, const char *id,
                         const char *reason, struct advisor_decision *d)
{
    return remove_or_reject(w, sandbox, id, reason, false, d);
}

pv_result advisor_undo(struct advisor_worker *w, const char *sandbox, const char *id,
                       struct advisor_decision *d)
{
    return remove_or_reject(w, sandbox, id, NULL, true, d);
}

/* A view refused with the decision's refusal (same kinds, same words). */
static pv_result view_from(struct advisor_view *v, const struct advisor_decision *d)
{
    v->refusal = d->refusal;
    snprintf(v->detail, sizeof(v->detail), "%s", d->detail);
    return advisor_refusal_result(d->refusal);
}

pv_result advisor_edit(struct advisor_worker *w, const char *sandbox, const char *id,
                       const json_t *rule, struct advisor_view *out)
{
    struct advisor_decision dd;
    struct decision x;
    struct advisor_eval e;
    char *text = NULL;
    char *rule_text = NULL;
    struct model_diags *d = NULL;
    struct model_proposal *pr = NULL;
    size_t tlen = 0;
    pv_result res;

    memset(out, 0, sizeof(*out));
    decision_init(&dd);
    if (!decision_open(&x, w, sandbox, id, &dd)) {
        return view_from(out, &dd);
    }
    if (strcmp(x.c.status, "pending") != 0) {
        refuse(&dd, ADVISOR_REFUSED_PRECONDITION, "chunk status is '%s', expected 'pending'",
               x.c.status);
        goto out;
    }
    text = advisor_proposal_text(x.c.rule_name, rule, &tlen);
    d = model_diags_new();
    pr = text != NULL && d != NULL ? model_proposal_load("rule", text, tlen, d) : NULL;
    if (pr == NULL) {
        refuse(&dd, ADVISOR_REFUSED_INVALID_PROPOSAL, "%s",
               d != NULL && model_diags_count(d) > 0 ? model_diags_msg(d, 0) : "invalid rule");
        goto out;
    }
    if (advisor_rule_blocked_host(rule, w->a->cfg.test_allow_loopback) != NULL) {
        refuse(&dd, ADVISOR_REFUSED_INVALID, "the edited rule names an always-blocked destination");
        goto out;
    }
    res = advisor_evaluate(w, &x.snap, x.c.rule_name, rule, &e);
    if (!pv_ok(res)) {
        store_failed(&dd, res, "chunk");
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
        store_failed(&dd, res, "chunk");
        goto out;
    }
    {
        struct store_chunk fresh;
        advisor_changed(w->a);
        if (pv_ok(store_chunk_get(w->st, x.snap.sandbox, id, &fresh))) {
            out->json = advisor_chunk_json(w, &fresh, true);
            store_chunk_clear(&fresh);
            dd.refusal = ADVISOR_DECIDED;
        } else {
            refuse(&dd, ADVISOR_REFUSED_INTERNAL, "cannot read the edited chunk");
        }
    }
out:
    model_proposal_free(pr);
    model_diags_free(d);
    free(text);
    decision_close(&x);
    return view_from(out, &dd);
}

/* ===========================================================================
 * Approve-all and clear
 * ========================================================================= */

static void ids_collect(void *arg, const struct store_chunk *c)
{
    advisor_ids_add(arg, c->id);
}

/* long: the batch reads as one pass (collect, skip what may not
 * be approved, approve each in order through approve_chunk, record, report). */
pv_result advisor_approve_all(struct advisor_worker *w, const char *sandbox,
                              const json_t *approvals, bool flagged, struct advisor_view *out)
{
    struct advisor_ids ids = {0};
    json_t *done = json_array();
    json_t *skipped = json_array();
    int64_t sid;
    pv_result res;

    memset(out, 0, sizeof(*out));
    out->refusal = ADVISOR_REFUSED_INTERNAL;
    snprintf(out->detail, sizeof(out->detail), "out of memory");
    res = advisor_sandbox_id(w, sandbox, &sid);
    if (pv_ok(res) && approvals == NULL) {
        res = store_chunk_each(w->st, sid, "pending", ids_collect, &ids);
        if (pv_ok(res) && ids.oom) {
            res = pv_fail(PV_ERR_NOMEM, __func__);
        }
    }
    if (!pv_ok(res)) {
        struct advisor_decision d;
        store_failed(&d, res, "sandbox");
        out->refusal = d.refusal;
        snprintf(out->detail, sizeof(out->detail), "%.200s", d.detail);
        goto out;
    }
    if (approvals != NULL && !json_is_array(approvals)) {
        out->refusal = ADVISOR_REFUSED_BAD_REQUEST;
        snprintf(out->detail, sizeof(out->detail),
                 "approvals must be a list of {chunk_id, review_token}");
        res = pv_fail(PV_ERR_USAGE, __func__);
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
            struct advisor_decision one;

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
            decision_init(&one);
            approve_chunk(w, sandbox, id, tok != NULL ? tok : c.review_token, &one);
            store_chunk_clear(&c);
            if (one.refusal == ADVISOR_DECIDED && strcmp(one.status, "approved") != 0) {
                json_array_append_new(skipped, json_pack("{s:s,s:s}", "chunk_id", id, "reason",
                                                         "already allowed by the policy in force"));
            } else if (one.refusal == ADVISOR_DECIDED) {
                json_array_append_new(done, advisor_decision_json(&one));
            } else {
                json_array_append_new(skipped,
                                      json_pack("{s:s,s:s}", "chunk_id", id, "reason", one.detail));
            }
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
                advisor_log_line(line);
            }
        }
    }
    out->json = json_pack("{s:O,s:O,s:I,s:I}", "approved", done, "skipped", skipped,
                          "approved_chunks", (json_int_t)json_array_size(done), "skipped_chunks",
                          (json_int_t)json_array_size(skipped));
    res = out->json != NULL ? PV_RESULT_OK : pv_fail(PV_ERR_NOMEM, __func__);
    if (pv_ok(res)) {
        out->refusal = ADVISOR_DECIDED;
        out->detail[0] = '\0';
    }
out:
    advisor_ids_free(&ids);
    json_decref(done);
    json_decref(skipped);
    return res;
}

pv_result advisor_clear(struct advisor_worker *w, const char *sandbox, struct advisor_decision *d)
{
    struct decision x;
    int64_t n = 0;
    char line[256];
    pv_result res;

    decision_init(d);
    if (!decision_open(&x, w, sandbox, NULL, d)) {
        return advisor_refusal_result(d->refusal);
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
        store_failed(d, res, "sandbox");
    } else {
        if (n > 0) {
            advisor_log_line(line);
        }
        advisor_changed(w->a);
        d->refusal = ADVISOR_DECIDED;
        d->cleared = n;
    }
    decision_close(&x);
    return advisor_refusal_result(d->refusal);
}

/* ===========================================================================
 * Base policy
 * ========================================================================= */

pv_result advisor_base_set(struct advisor_worker *w, const char *sandbox,
                           const struct model_policy *p, const char *cause,
                           struct advisor_view *out)
{
    struct advisor_decision dd;
    struct decision x;
    char *yaml = model_policy_to_yaml(p, NULL);
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
    memset(out, 0, sizeof(*out));
    decision_init(&dd);
    if (yaml == NULL) {
        goto done; /* out of memory */
    }
    if (!decision_open(&x, w, sandbox, NULL, &dd)) {
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
        res = eff != NULL ? advisor_reconcile(w, sandbox, x.snap.sandbox, eff, hash, rev, NULL,
                                              advisor_now_ms())
                          : pv_fail(PV_ERR_POLICY, __func__);
        model_policy_free(eff);
    }
    res = pv_ok(res) ? store_commit(w->st) : res;
    if (!pv_ok(res)) {
        store_rollback(w->st);
        if (err[0] != '\0') {
            refuse(&dd, ADVISOR_REFUSED_PRECONDITION, "the base policy cannot be composed: %.1100s",
                   err);
        } else {
            store_failed(&dd, res, "sandbox");
        }
    } else {
        advisor_log_line(line);
        advisor_changed(w->a);
        out->json = json_pack("{s:I,s:I,s:s,s:O}", "base_revision", (json_int_t)base.rev,
                              "policy_version", (json_int_t)rev, "policy_hash", hash, "suspended",
                              comp.suspended != NULL ? comp.suspended : json_array());
        if (out->json != NULL) {
            dd.refusal = ADVISOR_DECIDED;
        }
    }
    decision_close(&x);
done:
    advisor_composed_clear(&comp);
    free(yaml);
    return view_from(out, &dd);
}

json_t *advisor_decision_json(const struct advisor_decision *d)
{
    json_t *j = json_pack("{s:s,s:s}", "chunk_id", d->chunk_id, "status",
                          d->status != NULL ? d->status : "");

    if (j != NULL && d->policy_version > 0) {
        json_object_set_new(j, "policy_version", json_integer(d->policy_version));
        json_object_set_new(j, "policy_hash", json_string(d->policy_hash));
    }
    if (j != NULL && d->narrowed) {
        json_object_set_new(j, "narrowed", json_true());
    }
    return j;
}
