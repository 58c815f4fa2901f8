/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_routes_chunk.c - the proposal routes on the lifecycle's C API
 *
 * Each route parses its request once, calls the lifecycle
 * (advisor_submit.c, ...) and maps what it returns to an HTTP status and
 * JSON; nothing here decides anything (docs/architecture.md#advisor).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "advisor/http/http.h"
#include "advisor/http/http_int.h"
#include "common/pv_log.h"
#include "model/model.h"

/* A store failure as an answer: 404 "WHAT not found", 409 conflict, 500. */
static void advisor_reply_pv(struct httpd_reply *r, pv_result res, const char *what)
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

/* Why a submission stored nothing, in one sentence (the per-operation
 * reasons are in "operations"). */
static void why_none(const struct advisor_submission *o, char *buf, size_t len)
{
    size_t already = json_array_size(o->already);

    if (o->rejected == 0 && already == 0) {
        snprintf(buf, len, "no chunk was accepted: the proposal has no operations");
    } else if (o->rejected == 0) {
        snprintf(buf, len,
                 "no chunk was stored: the effective policy already allows everything the "
                 "proposal asks for; see already_allowed");
    } else if (already == 0) {
        snprintf(buf, len,
                 "no chunk was accepted: %d operation%s refused; see operations[].reason, redraft "
                 "and submit again",
                 o->rejected, o->rejected == 1 ? " was" : "s were");
    } else {
        snprintf(buf, len,
                 "no chunk was accepted: %d operation%s refused and %zu already allowed; see "
                 "operations[].reason",
                 o->rejected, o->rejected == 1 ? " was" : "s were", already);
    }
}

static json_t *submission_json(const struct advisor_submission *o)
{
    size_t already = json_array_size(o->already);
    json_t *j = json_pack("{s:s,s:i,s:i,s:O,s:O,s:i,s:O}", "status",
                          o->accepted == 0 && o->rejected == 0 && already > 0 ? "already_allowed"
                                                                              : "submitted",
                          "accepted_chunks", o->accepted, "rejected_chunks", o->rejected,
                          "rejection_reasons", o->reasons, "accepted_chunk_ids", o->ids,
                          "already_allowed_chunks", (int)already, "already_allowed", o->already);

    if (j != NULL && o->accepted == 0) {
        /* An answer that stores nothing says why (docs/advisor.md#submit). */
        char message[256];
        why_none(o, message, sizeof(message));
        json_object_set_new(j, "message", json_string(message));
        json_object_set(j, "operations", o->operations);
    }
    return j;
}

/* The model's reasons for refusing a body: 400 invalid_proposal. */
static void reply_invalid(struct httpd_reply *r, pv_result res, struct model_diags *d)
{
    json_t *diags;

    if (res.err == PV_ERR_NOMEM || model_diags_nomem(d)) {
        httpd_reply_error(r, 500, "internal", "out of memory");
        return;
    }
    if (res.err == PV_ERR_PARSE) {
        httpd_reply_error(r, 400, "invalid_proposal", "the proposal must be a JSON object");
        return;
    }
    diags = json_array();
    for (size_t i = 0; i < model_diags_count(d) && i < 50; i++) {
        json_array_append_new(diags, json_string(model_diags_line(d, i)));
    }
    httpd_reply_error(r, 400, "invalid_proposal",
                      model_diags_count(d) > 0 ? model_diags_msg(d, 0) : "invalid proposal");
    json_object_set_new(r->body, "diagnostics", diags);
}

/* The admission's refusal as an answer. */
static void reply_admit(struct httpd_reply *r, pv_result res)
{
    if (res.err == PV_ERR_USAGE) {
        httpd_reply_error(r, 404, "feature_disabled",
                          "agent-driven policy proposals are not enabled in this sandbox; set the "
                          "`agent_policy_proposals_enabled` setting to true to enable");
    } else if (res.err == PV_ERR_NOTFOUND) {
        httpd_reply_error(r, 404, "not_found", "sandbox not found");
    } else {
        advisor_reply_pv(r, res, "sandbox");
    }
}

void advisor_route_submit(struct advisor_worker *w, const char *sandbox, const char *mode,
                          const char *body, size_t len, struct httpd_reply *r)
{
    struct model_diags *d;
    struct advisor_proposal p;
    struct advisor_submission o;
    pv_result res = advisor_submit_admit(w, sandbox);

    if (!pv_ok(res)) {
        reply_admit(r, res);
        return;
    }
    d = model_diags_new();
    if (d == NULL) {
        httpd_reply_error(r, 500, "internal", "out of memory");
        return;
    }
    res = advisor_proposal_parse(body, len, &p, d);
    if (!pv_ok(res)) {
        reply_invalid(r, res, d);
        model_diags_free(d);
        return;
    }
    model_diags_free(d);
    res = advisor_submit(w, sandbox, mode, NULL, &p, &o);
    advisor_proposal_clear(&p);
    if (!pv_ok(res)) {
        reply_admit(r, res);
    } else if (o.incomplete) {
        /* what is stored stays; an answer that misses part of it is not given */
        httpd_reply_error(r, 500, "internal", "out of memory");
    } else {
        httpd_reply_json(r, 202, submission_json(&o));
    }
    advisor_submission_clear(&o);
}

/* ===========================================================================
 * A reviewer's decisions: approve, approve-suggestion, reject, undo
 * ========================================================================= */

/* Each refusal's status and error name. */
static const struct {
    unsigned status;
    const char *error;
} refusals[] = {
    [ADVISOR_DECIDED] = {200, ""},
    [ADVISOR_REFUSED_NOT_FOUND] = {404, "not_found"},
    [ADVISOR_REFUSED_NO_CHUNK] = {404, "chunk_not_found"},
    [ADVISOR_REFUSED_CONFLICT] = {409, "conflict"},
    [ADVISOR_REFUSED_PRECONDITION] = {409, "failed_precondition"},
    [ADVISOR_REFUSED_STALE] = {412, "failed_precondition"},
    [ADVISOR_REFUSED_INVALID] = {400, "invalid_argument"},
    [ADVISOR_REFUSED_INTERNAL] = {500, "internal"},
    [ADVISOR_REFUSED_BAD_REQUEST] = {400, "invalid_request"},
    [ADVISOR_REFUSED_INVALID_PROPOSAL] = {400, "invalid_proposal"},
    [ADVISOR_REFUSED_EXISTS] = {409, "already_exists"},
    [ADVISOR_REFUSED_INVALID_JSON] = {400, "invalid_json"},
    [ADVISOR_REFUSED_INVALID_OPENAPI] = {400, "invalid_openapi"},
    [ADVISOR_REFUSED_TOO_MANY_SERVERS] = {409, "too_many_servers"},
    [ADVISOR_REFUSED_UNBACKED] = {500, "revision_unbacked"},
    [ADVISOR_REFUSED_DISCOVERY] = {502, "discovery_failed"},
};

/* A refusal as an answer: its status and error name from the table. */
static void reply_refused(struct httpd_reply *r, enum advisor_refusal refusal, const char *detail)
{
    size_t k = refusal != ADVISOR_DECIDED && (size_t)refusal < PV_ARRAY_LEN(refusals)
                   ? (size_t)refusal
                   : (size_t)ADVISOR_REFUSED_INTERNAL;

    httpd_reply_error(r, refusals[k].status, refusals[k].error, detail);
}

void advisor_reply_decision(struct httpd_reply *r, const struct advisor_decision *d)
{
    if (d->refusal == ADVISOR_DECIDED) {
        httpd_reply_json(r, 200, advisor_decision_json(d));
    } else {
        reply_refused(r, d->refusal, d->detail);
    }
}

/* An optional JSON object body ("" is {}); NULL with a 400 in 'r'. */
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

enum decision_kind { APPROVE, APPROVE_SUGGESTION, REJECT };

static void route_decision(struct advisor_worker *w, const char *sandbox, const char *id,
                           const char *body, size_t len, enum decision_kind kind,
                           struct httpd_reply *r)
{
    json_t *args = body_object(body, len, r);
    struct advisor_decision d;
    pv_result res = PV_RESULT_OK;

    if (args == NULL) {
        return;
    }
    switch (kind) {
    case APPROVE:
        res = advisor_approve(w, sandbox, id,
                              json_string_value(json_object_get(args, "review_token")), &d);
        break;
    case APPROVE_SUGGESTION:
        res = advisor_approve_suggestion(
            w, sandbox, id, json_string_value(json_object_get(args, "review_token")), &d);
        break;
    case REJECT:
        res =
            advisor_reject(w, sandbox, id, json_string_value(json_object_get(args, "reason")), &d);
        break;
    }
    (void)res; /* a refusal is in 'd' */
    advisor_reply_decision(r, &d);
    json_decref(args);
}

void advisor_route_approve(struct advisor_worker *w, const char *sandbox, const char *id,
                           const char *body, size_t len, struct httpd_reply *r)
{
    route_decision(w, sandbox, id, body, len, APPROVE, r);
}

void advisor_route_approve_suggestion(struct advisor_worker *w, const char *sandbox, const char *id,
                                      const char *body, size_t len, struct httpd_reply *r)
{
    route_decision(w, sandbox, id, body, len, APPROVE_SUGGESTION, r);
}

void advisor_route_reject(struct advisor_worker *w, const char *sandbox, const char *id,
                          const char *body, size_t len, struct httpd_reply *r)
{
    route_decision(w, sandbox, id, body, len, REJECT, r);
}

void advisor_route_undo(struct advisor_worker *w, const char *sandbox, const char *id,
                        struct httpd_reply *r)
{
    struct advisor_decision d;
    pv_result res = advisor_undo(w, sandbox, id, &d);

    (void)res; /* a refusal is in 'd' */
    advisor_reply_decision(r, &d);
}

/* ===========================================================================
 * Reading: a chunk, the long-poll on it, the list
 * ========================================================================= */

void advisor_reply_view(struct httpd_reply *r, pv_result res, struct advisor_view *v)
{
    advisor_reply_view_as(r, 200, res, v);
}

void advisor_reply_view_as(struct httpd_reply *r, unsigned status, pv_result res,
                           struct advisor_view *v)
{
    if (pv_ok(res)) {
        httpd_reply_json(r, status, v->json);
        v->json = NULL; /* the reply owns it */
    } else {
        reply_refused(r, v->refusal, v->detail);
    }
    advisor_view_clear(v);
}

void advisor_reply_store_error(struct httpd_reply *r, pv_result res, const char *what)
{
    struct advisor_view v;

    memset(&v, 0, sizeof(v));
    advisor_reply_view(r, advisor_view_store_error(&v, res, what), &v);
}

void advisor_route_chunk_show(struct advisor_worker *w, const char *sandbox, const char *id,
                              bool reviewer, struct httpd_reply *r)
{
    struct advisor_view v;
    pv_result res = advisor_chunk_get(w, sandbox, id, reviewer, &v);

    advisor_reply_view(r, res, &v);
}

void advisor_route_chunk_wait(struct advisor_worker *w, const char *sandbox, const char *id,
                              unsigned timeout_s, struct advisor_hold *hold, struct httpd_reply *r)
{
    struct advisor_view v;
    pv_result res = advisor_chunk_wait(w, sandbox, id, timeout_s, hold, &v);

    advisor_reply_view(r, res, &v);
}

void advisor_route_chunk_list(struct advisor_worker *w, const char *sandbox, const char *status,
                              bool reviewer, struct httpd_reply *r)
{
    struct advisor_view v;
    pv_result res = advisor_chunk_list(w, sandbox, status, reviewer, &v);

    advisor_reply_view(r, res, &v);
}

void advisor_route_history(struct advisor_worker *w, const char *sandbox, bool reviewer,
                           struct httpd_reply *r)
{
    struct advisor_view v;
    pv_result res = advisor_history(w, sandbox, reviewer, &v);

    advisor_reply_view(r, res, &v);
}

void advisor_route_clear(struct advisor_worker *w, const char *sandbox, struct httpd_reply *r)
{
    struct advisor_decision d;

    if (!pv_ok(advisor_clear(w, sandbox, &d))) {
        reply_refused(r, d.refusal, d.detail);
        return;
    }
    httpd_reply_json(r, 200, json_pack("{s:I}", "cleared", (json_int_t)d.cleared));
}

void advisor_route_approve_all(struct advisor_worker *w, const char *sandbox, const char *body,
                               size_t len, struct httpd_reply *r)
{
    json_t *args = body_object(body, len, r);
    struct advisor_view v;
    pv_result res;

    if (args == NULL) {
        return;
    }
    res = advisor_approve_all(w, sandbox, json_object_get(args, "approvals"),
                              json_is_true(json_object_get(args, "include_security_flagged")), &v);
    advisor_reply_view(r, res, &v);
    json_decref(args);
}

void advisor_route_edit(struct advisor_worker *w, const char *sandbox, const char *id,
                        const char *body, size_t len, struct httpd_reply *r)
{
    json_t *args = body_object(body, len, r);
    const json_t *rule = json_object_get(args, "rule");
    struct advisor_view v;
    pv_result res;

    if (args == NULL) {
        return;
    }
    if (!json_is_object(rule)) {
        httpd_reply_error(r, 400, "invalid_request", "body needs \"rule\": a NetworkPolicyRule");
    } else {
        res = advisor_edit(w, sandbox, id, rule, &v);
        advisor_reply_view(r, res, &v);
    }
    json_decref(args);
}

void advisor_route_base_set(struct advisor_worker *w, const char *sandbox, const char *text,
                            size_t len, const char *cause, struct httpd_reply *r)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p =
        d != NULL ? model_policy_load("policy", text, len, MODEL_FMT_AUTO, d) : NULL;
    struct advisor_view v;
    pv_result res;

    if (p == NULL) {
        json_t *diags = json_array();
        for (size_t i = 0; d != NULL && i < model_diags_count(d) && i < 50; i++) {
            json_array_append_new(diags, json_string(model_diags_line(d, i)));
        }
        httpd_reply_error(r, 400, "invalid_policy",
                          d != NULL && model_diags_count(d) > 0 ? model_diags_line(d, 0)
                                                                : "out of memory");
        json_object_set_new(r->body, "diagnostics", diags);
    } else {
        res = advisor_base_set(w, sandbox, p, cause, &v);
        advisor_reply_view(r, res, &v);
    }
    model_policy_free(p);
    model_diags_free(d);
}
