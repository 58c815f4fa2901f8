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

#include "advisor/advisor.h"
#include "advisor/advisor_int.h"
#include "model/model.h"

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
    } else {
        httpd_reply_json(r, 202, submission_json(&o));
    }
    advisor_submission_clear(&o);
}
