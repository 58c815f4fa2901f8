/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_routes.c - the advisor's HTTP API on libhttpd (docs/advisor.md#api)
 *
 * Three kinds of caller, told apart by the bearer token:
 *  - the admin (principal 0): reviewers and operators, every route;
 *  - a sandbox (principal = its id): its proxy and, through the proxy's
 *    policy.local, its agents - only its own sandbox's policy, settings and
 *    proposals; another sandbox answers 404, as if it did not exist;
 *  - nobody: /healthz only.
 * The table below is the whole surface; each row names who may call it.
 */
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/http/http.h"
#include "advisor/http/http_int.h"
#include "advisor/store/store.h"
#include "audit/audit.h"
#include "common/pv_dynbuf.h"
#include "common/pv_log.h"
#include "common/pv_text.h"
#include "model/model.h"

enum route_id {
    R_HEALTHZ,
    R_OPENAPI,
    R_METRICS,
    R_SANDBOXES,
    R_SANDBOX_CREATE,
    R_SANDBOX,
    R_SANDBOX_DELETE,
    R_POLICY,
    R_POLICY_SET,
    R_CREDENTIALS,
    R_BOUNDARY,
    R_LOADED,
    R_ADDRESSES,
    R_SERVERS,
    R_SERVER_PUT,
    R_SERVER_DELETE,
    R_TOOLS,
    R_SB_SETTINGS,
    R_SB_SETTING_PUT,
    R_SB_SETTING_DELETE,
    R_SETTINGS,
    R_SETTING_PUT,
    R_SETTING_DELETE,
    R_GLOBAL_BOUNDARY,
    R_SUBMIT,
    R_LIST,
    R_APPROVE_ALL,
    R_CLEAR,
    R_CHUNK,
    R_EDIT,
    R_WAIT,
    R_APPROVE,
    R_APPROVE_SUGGESTION,
    R_REJECT,
    R_UNDO,
    R_HISTORY,
    R_EVENTS,
    R_DENIALS,
    R_UI,
    R_UI_INDEX,
    R_UI_JS,
    R_UI_CSS,
    R_AUDIT_PUBKEY,
    R_AUDIT_EXPORT,
};

enum who { ADMIN, OWNER };

static const struct {
    struct httpd_route route;
    enum who who;
} table[] = {
    {{"GET", "/healthz", R_HEALTHZ, HTTPD_PUBLIC | HTTPD_INLINE}, ADMIN},
    {{"GET", "/openapi.json", R_OPENAPI, HTTPD_INLINE}, OWNER},
    {{"GET", "/metrics", R_METRICS, HTTPD_INLINE}, ADMIN},
    {{"GET", "/v1/sandboxes", R_SANDBOXES, 0}, ADMIN},
    {{"POST", "/v1/sandboxes", R_SANDBOX_CREATE, HTTPD_BODY}, ADMIN},
    {{"GET", "/v1/sandboxes/*", R_SANDBOX, 0}, OWNER},
    {{"DELETE", "/v1/sandboxes/*", R_SANDBOX_DELETE, 0}, ADMIN},
    {{"GET", "/v1/sandboxes/*/policy", R_POLICY, 0}, OWNER},
    {{"PUT", "/v1/sandboxes/*/policy", R_POLICY_SET, HTTPD_BODY}, ADMIN},
    {{"PUT", "/v1/sandboxes/*/credentials", R_CREDENTIALS, HTTPD_BODY}, ADMIN},
    {{"PUT", "/v1/sandboxes/*/boundary", R_BOUNDARY, HTTPD_BODY}, ADMIN},
    {{"POST", "/v1/sandboxes/*/loaded", R_LOADED, HTTPD_BODY}, OWNER},
    {{"PUT", "/v1/sandboxes/*/addresses", R_ADDRESSES, HTTPD_BODY}, OWNER},
    {{"GET", "/v1/sandboxes/*/servers", R_SERVERS, 0}, OWNER},
    {{"PUT", "/v1/sandboxes/*/servers/*", R_SERVER_PUT, HTTPD_BODY}, ADMIN},
    {{"DELETE", "/v1/sandboxes/*/servers/*", R_SERVER_DELETE, 0}, ADMIN},
    {{"GET", "/v1/sandboxes/*/tools", R_TOOLS, 0}, OWNER},
    {{"POST", "/v1/sandboxes/*/tools", R_TOOLS, HTTPD_BODY}, OWNER},
    {{"GET", "/v1/sandboxes/*/settings", R_SB_SETTINGS, 0}, OWNER},
    {{"PUT", "/v1/sandboxes/*/settings/*", R_SB_SETTING_PUT, HTTPD_BODY}, ADMIN},
    {{"DELETE", "/v1/sandboxes/*/settings/*", R_SB_SETTING_DELETE, 0}, ADMIN},
    {{"GET", "/v1/settings", R_SETTINGS, 0}, ADMIN},
    {{"PUT", "/v1/settings/*", R_SETTING_PUT, HTTPD_BODY}, ADMIN},
    {{"DELETE", "/v1/settings/*", R_SETTING_DELETE, 0}, ADMIN},
    {{"PUT", "/v1/boundary", R_GLOBAL_BOUNDARY, HTTPD_BODY}, ADMIN},
    {{"POST", "/v1/sandboxes/*/proposals", R_SUBMIT, HTTPD_BODY}, OWNER},
    {{"GET", "/v1/sandboxes/*/proposals", R_LIST, 0}, OWNER},
    {{"DELETE", "/v1/sandboxes/*/proposals", R_CLEAR, 0}, ADMIN},
    {{"POST", "/v1/sandboxes/*/proposals/approve-all", R_APPROVE_ALL, HTTPD_BODY}, ADMIN},
    {{"GET", "/v1/sandboxes/*/proposals/*", R_CHUNK, 0}, OWNER},
    {{"PUT", "/v1/sandboxes/*/proposals/*", R_EDIT, HTTPD_BODY}, ADMIN},
    {{"GET", "/v1/sandboxes/*/proposals/*/wait", R_WAIT, 0}, OWNER},
    {{"POST", "/v1/sandboxes/*/proposals/*/approve", R_APPROVE, HTTPD_BODY}, ADMIN},
    {{"POST", "/v1/sandboxes/*/proposals/*/approve-suggestion", R_APPROVE_SUGGESTION, HTTPD_BODY},
     ADMIN},
    {{"POST", "/v1/sandboxes/*/proposals/*/reject", R_REJECT, HTTPD_BODY}, ADMIN},
    {{"POST", "/v1/sandboxes/*/proposals/*/undo", R_UNDO, 0}, ADMIN},
    {{"GET", "/v1/sandboxes/*/history", R_HISTORY, 0}, OWNER},
    {{"GET", "/v1/events", R_EVENTS, 0}, ADMIN},
    {{"POST", "/v1/sandboxes/*/denials", R_DENIALS, HTTPD_BODY}, OWNER},
    /* The reviewer inbox's static files: public, they hold no data. */
    {{"GET", "/", R_UI, HTTPD_PUBLIC | HTTPD_INLINE}, ADMIN},
    {{"GET", "/ui", R_UI, HTTPD_PUBLIC | HTTPD_INLINE}, ADMIN},
    {{"GET", "/ui/", R_UI_INDEX, HTTPD_PUBLIC | HTTPD_INLINE}, ADMIN},
    {{"GET", "/ui/app.js", R_UI_JS, HTTPD_PUBLIC | HTTPD_INLINE}, ADMIN},
    {{"GET", "/ui/app.css", R_UI_CSS, HTTPD_PUBLIC | HTTPD_INLINE}, ADMIN},
    {{"GET", "/v1/audit/pubkey", R_AUDIT_PUBKEY, 0}, ADMIN},
    {{"GET", "/v1/audit/export", R_AUDIT_EXPORT, 0}, ADMIN},
};

#define EVENTS_WAIT_MAX_S 60u

static struct httpd_route routes[PV_ARRAY_LEN(table)];

const struct httpd_route *advisor_routes(size_t *n)
{
    for (size_t i = 0; i < PV_ARRAY_LEN(table); i++) {
        routes[i] = table[i].route;
    }
    *n = PV_ARRAY_LEN(table);
    return routes;
}

/* ===========================================================================
 * Helpers
 * ========================================================================= */

/* A reviewer's free text that agents and other reviewers read (a rejection
 * reason): refused, not stripped, when it holds a Unicode format character
 * (General Category Cf - bidi controls, zero-width characters) or is not
 * UTF-8, so what is stored is exactly what the reviewer typed. The proposal's
 * own strings are checked by the model (model_proposal.c). True when 'body'
 * may go on; otherwise a 400 is in 'r'. */
static bool reason_ok(const struct httpd_req *rq, struct httpd_reply *r)
{
    json_t *j = json_loadb(rq->body, rq->body_len, 0, NULL);
    const json_t *v = json_object_get(j, "reason");
    uint32_t cp = 0;
    size_t off = 0;
    char detail[128] = "";
    enum pv_text_verdict verdict = PV_TEXT_OK;

    if (json_is_string(v)) {
        verdict = pv_text_check((const unsigned char *)json_string_value(v), json_string_length(v),
                                &cp, &off);
    }
    json_decref(j);
    switch (verdict) {
    case PV_TEXT_OK:
        return true;
    case PV_TEXT_BAD_UTF8:
        snprintf(detail, sizeof(detail), "reason is not valid UTF-8 (byte %zu)", off);
        break;
    case PV_TEXT_FORMAT_CHAR:
        snprintf(detail, sizeof(detail),
                 "reason contains U+%04X (a Unicode format character) at byte %zu", (unsigned)cp,
                 off);
        break;
    }
    httpd_reply_error(r, 400, "invalid_request", detail);
    return false;
}

/* ===========================================================================
 * Events
 * ========================================================================= */

static void event_one(void *arg, const struct store_event *e)
{
    json_t *arr = arg;
    json_t *j = json_loads(e->json, 0, NULL);

    json_array_append_new(arr,
                          json_pack("{s:I,s:I,s:s,s:s,s:s,s:o}", "seq", (json_int_t)e->seq, "ts_ms",
                                    (json_int_t)e->ts_ms, "sandbox", e->sandbox, "kind", e->kind,
                                    "line", e->line, "record", j != NULL ? j : json_null()));
}

/* GET /v1/events?since=SEQ[&limit=N][&wait=S]: the events after SEQ. With
 * 'wait' (seconds, at most EVENTS_WAIT_MAX_S) and nothing newer yet, it
 * holds until an event commits (every committing writer calls
 * advisor_changed) or the wait ends, then answers what there is - possibly
 * nothing. 'next_since' is the SEQ to ask with next time. */
static void events_list(struct advisor_worker *w, const struct httpd_req *rq,
                        struct advisor_hold *hold, struct httpd_reply *r)
{
    const char *since_s = httpd_req_arg(rq, "since");
    const char *wait_s = httpd_req_arg(rq, "wait");
    uint64_t since = 0;
    uint64_t wait = 0;
    unsigned limit = advisor_route_arg_uint(rq, "limit", 1000, 1, 10000);
    int64_t deadline;
    json_t *arr = NULL;
    json_t *last;
    pv_result res;

    if (since_s != NULL && !pv_ok(pv_parse_u64(since_s, strlen(since_s), INT64_MAX, &since))) {
        httpd_reply_error(r, 400, "invalid_request", "since must be a sequence number");
        return;
    }
    if (wait_s != NULL && !pv_ok(pv_parse_u64(wait_s, strlen(wait_s), EVENTS_WAIT_MAX_S, &wait))) {
        httpd_reply_error(r, 400, "invalid_request", "wait must be 0..60 (seconds)");
        return;
    }
    deadline = advisor_now_ms() + (int64_t)wait * 1000;
    for (;;) {
        uint64_t seen = advisor_change_count(w->a);
        arr = json_array();
        res = arr != NULL ? store_event_each(w->st, (int64_t)since, limit, event_one, arr)
                          : pv_fail(PV_ERR_NOMEM, __func__);
        if (!pv_ok(res)) {
            json_decref(arr);
            advisor_reply_store_error(r, res, "events");
            return;
        }
        if (json_array_size(arr) > 0 || advisor_now_ms() >= deadline || advisor_stopping(w->a)) {
            break;
        }
        json_decref(arr);
        if (!advisor_hold_wait(w->a, hold, seen, deadline)) {
            deadline = 0;
        }
    }
    last = json_array_get(arr, json_array_size(arr) - 1);
    httpd_reply_json(r, 200,
                     json_pack("{s:o,s:I}", "events", arr, "next_since",
                               last != NULL ? json_integer_value(json_object_get(last, "seq"))
                                            : (json_int_t)since));
}

/* The audit key's public half (docs/audit.md#key). */
static void audit_pubkey(struct httpd_reply *r)
{
    char b64[AUDIT_PUB_B64_LEN];
    const struct audit_key *k = advisor_audit_key();
    char *pem = k != NULL ? audit_key_pub_pem(k) : NULL;

    if (pem == NULL || !pv_ok(audit_key_pub_b64(k, b64))) {
        free(pem);
        httpd_reply_error(r, 500, "internal", "the audit key is not available");
        return;
    }
    httpd_reply_json(
        r, 200, json_pack("{s:s,s:s,s:s}", "algorithm", "ed25519", "public_key", b64, "pem", pem));
    free(pem);
}

/* The export (docs/audit.md#format) as application/x-ndjson. */
static void audit_export(struct advisor_worker *w, const struct httpd_req *rq,
                         struct httpd_reply *r)
{
    const char *since_s = httpd_req_arg(rq, "since");
    uint64_t since = 0;
    struct pv_dynbuf b;
    char err[256];
    pv_result res;

    if (since_s != NULL && !pv_ok(pv_parse_u64(since_s, strlen(since_s), INT64_MAX, &since))) {
        httpd_reply_error(r, 400, "invalid_request", "since must be a sequence number");
        return;
    }
    pv_dynbuf_init(&b, AUDIT_FILE_MAX);
    res = advisor_audit_export(w->st, (int64_t)since, &b, err, sizeof(err));
    if (!pv_ok(res)) {
        pv_dynbuf_free(&b);
        httpd_reply_error(r, res.err == PV_ERR_NOTFOUND ? 404 : 500,
                          res.err == PV_ERR_NOTFOUND ? "not_found" : "internal", err);
        return;
    }
    r->status = 200;
    r->raw = pv_dynbuf_take(&b, &r->raw_len);
    r->content_type = "application/x-ndjson";
    if (r->raw == NULL) {
        httpd_reply_error(r, 500, "internal", "out of memory");
    }
}

/* ===========================================================================
 * Dispatch
 * ========================================================================= */

/* The sandbox named in the path, checked against the caller. */
static bool owner_ok(struct advisor_worker *w, const struct httpd_req *rq, struct httpd_reply *r)
{
    struct store_sandbox sb;
    pv_result res;
    bool ok;

    if (rq->principal == 0) {
        return true;
    }
    res = store_sandbox_get(w->st, rq->params[0], &sb);
    if (!pv_ok(res) && res.err != PV_ERR_NOTFOUND) {
        /* ours (the store, memory), not the caller's: no 404 */
        advisor_reply_store_error(r, res, "sandbox");
        return false;
    }
    ok = pv_ok(res) && sb.id == rq->principal;
    if (pv_ok(res)) {
        /* Found, whoever owns it: its strings are ours to free. */
        store_sandbox_clear(&sb);
    }
    if (!ok) {
        /* Another sandbox's resources do not exist for this caller. */
        httpd_reply_error(r, 404, "not_found", "sandbox not found");
    }
    return ok;
}

/* Take a long-poll slot of 'kind' into 'h', or fill 'r' with the refusal:
 * 503 when the kind's budget is full, 429 when the caller holds its share
 * (docs/advisor.md#wait). Both say Retry-After: 1. */
static bool hold_begin(struct advisor *a, struct advisor_hold *h, enum advisor_hold_kind kind,
                       const struct httpd_req *rq, struct httpd_reply *r)
{
    unsigned status = advisor_hold_begin(a, h, kind, rq);

    if (status == 429) {
        httpd_reply_error(r, 429, "too_many_waits",
                          "this sandbox holds its share of /wait long-polls; retry later");
        r->retry_after_s = 1;
    } else if (status != 0) {
        httpd_reply_error(r, 503, "overloaded", "too many long-polls; retry later");
    }
    return status == 0;
}

/* Give the slot back; a long-poll that ended early says why in the access
 * log. */
static void hold_end(struct advisor *a, struct advisor_hold *h, struct httpd_reply *r)
{
    advisor_hold_end(a, h);
    if (h->ended != NULL) {
        r->label = h->ended;
    }
}

/* GET /v1/sandboxes/{name}, or its settings ('settings'). */
static void sandbox_get(struct advisor_worker *w, const char *name, bool settings,
                        struct httpd_reply *r)
{
    struct store_sandbox sb;
    pv_result res = store_sandbox_get(w->st, name, &sb);

    if (!pv_ok(res)) {
        advisor_reply_store_error(r, res, "sandbox");
        return;
    }
    httpd_reply_json(
        r, 200, settings ? advisor_settings_json(w->st, name) : advisor_route_sandbox_json(w, &sb));
    store_sandbox_clear(&sb);
}

/* The sandbox, policy, document, peer, tool and settings routes. */
/* long: one case per route id of this family, each a call and its reply; one switch over our
 * enum lets -Wswitch find a new route */
static bool route_sandboxes(struct advisor *a, struct advisor_worker *w, const struct httpd_req *rq,
                            const char *p0, const char *p1, struct httpd_reply *r)
{
    (void)a;
    (void)p1;
    switch ((enum route_id)rq->route->id) {
    case R_HEALTHZ:
    case R_OPENAPI:
    case R_METRICS:
    case R_UI:
    case R_UI_INDEX:
    case R_UI_JS:
    case R_UI_CSS:
        return true;
    case R_SANDBOXES:
        advisor_route_sandboxes(w, r);
        return true;
    case R_SANDBOX_CREATE:
        advisor_route_sandbox_create(w, rq, r);
        return true;
    case R_SANDBOX:
        sandbox_get(w, p0, false, r);
        return true;
    case R_SANDBOX_DELETE:
        advisor_route_sandbox_delete(w, p0, r);
        return true;
    case R_POLICY: {
        struct advisor_hold hold;
        if (httpd_req_arg(rq, "after") == NULL) {
            advisor_route_policy(w, rq, p0, NULL, r);
        } else if (hold_begin(a, &hold, ADVISOR_HOLD_POLICY, rq, r)) {
            advisor_route_policy(w, rq, p0, &hold, r);
            hold_end(a, &hold, r);
        }
        return true;
    }
    case R_POLICY_SET: {
        json_t *body = advisor_route_body(rq, r);
        char *text = body != NULL ? advisor_route_doc_text(json_object_get(body, "policy")) : NULL;
        if (body != NULL && text == NULL) {
            httpd_reply_error(r, 400, "invalid_request", "policy is required (YAML/JSON text)");
        } else if (text != NULL) {
            advisor_route_base_set(w, p0, text, strlen(text), "operator", r);
        }
        free(text);
        json_decref(body);
        return true;
    }
    case R_CREDENTIALS:
    case R_BOUNDARY:
        advisor_route_sandbox_doc(w, rq, p0, rq->route->id == R_CREDENTIALS, r);
        return true;
    case R_GLOBAL_BOUNDARY:
        advisor_route_sandbox_doc(w, rq, NULL, false, r);
        return true;
    case R_LOADED:
        advisor_route_loaded(w, rq, p0, r);
        return true;
    case R_ADDRESSES: {
        struct advisor_view v;
        pv_result res =
            advisor_addresses_put(w, p0, rq->body, rq->body_len, rq->principal == 0, &v);
        advisor_reply_view(r, res, &v);
        return true;
    }
    case R_SERVERS: {
        struct advisor_view v;
        pv_result res = advisor_server_list(w, p0, &v);
        advisor_reply_view(r, res, &v);
        return true;
    }
    case R_SERVER_PUT: {
        struct advisor_view v;
        pv_result res = advisor_server_put(w, p0, p1, rq->body, rq->body_len, &v);
        advisor_reply_view(r, res, &v);
        return true;
    }
    case R_SERVER_DELETE: {
        struct advisor_view v;
        pv_result res = advisor_server_delete(w, p0, p1, &v);
        advisor_reply_view(r, res, &v);
        return true;
    }
    case R_TOOLS: {
        struct advisor_tools_query q = {.post = strcmp(rq->method, "POST") == 0,
                                        .body = rq->body,
                                        .len = rq->body_len,
                                        .binary = httpd_req_arg(rq, "binary"),
                                        .revision = httpd_req_arg(rq, "revision")};
        struct advisor_view v;
        pv_result res = advisor_tools(w, p0, &q, &v);
        advisor_reply_view(r, res, &v);
        return true;
    }
    case R_SB_SETTINGS:
        sandbox_get(w, p0, true, r);
        return true;
    case R_SB_SETTING_PUT:
        advisor_route_setting(w, rq, p0, p1, false, r);
        return true;
    case R_SB_SETTING_DELETE:
        advisor_route_setting(w, rq, p0, p1, true, r);
        return true;
    case R_SETTINGS:
        httpd_reply_json(r, 200, advisor_settings_json(w->st, NULL));
        return true;
    case R_SETTING_PUT:
        advisor_route_setting(w, rq, NULL, p0, false, r);
        return true;
    case R_SETTING_DELETE:
        advisor_route_setting(w, rq, NULL, p0, true, r);
        return true;
    default:
        return false;
    }
}

/* The proposal, history, event and audit routes. */
static bool route_proposals(struct advisor *a, struct advisor_worker *w, const struct httpd_req *rq,
                            const char *p0, const char *p1, struct httpd_reply *r)
{
    (void)a;
    (void)p1;
    switch ((enum route_id)rq->route->id) {
    case R_SUBMIT:
        advisor_route_submit(w, p0, httpd_req_arg(rq, "analysis_mode"), rq->body, rq->body_len, r);
        return true;
    case R_LIST:
        advisor_route_chunk_list(w, p0, httpd_req_arg(rq, "status"), rq->principal == 0, r);
        return true;
    case R_DENIALS: {
        struct store_sandbox sb;
        if (w->a->mapper == NULL) {
            httpd_reply_error(r, 503, "unavailable", "the mapper is not running");
        } else if (!pv_ok(store_sandbox_get(w->st, p0, &sb))) {
            httpd_reply_error(r, 404, "not_found", "sandbox not found");
        } else {
            struct advisor_view v;
            pv_result res;
            store_sandbox_clear(&sb);
            res = advisor_mapper_ingest(w->a->mapper, p0, rq->body, rq->body_len, &v);
            advisor_reply_view_as(r, 202, res, &v);
        }
        return true;
    }
    case R_APPROVE_ALL:
        advisor_route_approve_all(w, p0, rq->body, rq->body_len, r);
        return true;
    case R_CLEAR:
        advisor_route_clear(w, p0, r);
        return true;
    case R_CHUNK:
        advisor_route_chunk_show(w, p0, p1, rq->principal == 0, r);
        return true;
    case R_EDIT:
        advisor_route_edit(w, p0, p1, rq->body, rq->body_len, r);
        return true;
    case R_WAIT: {
        struct advisor_hold hold;
        if (hold_begin(a, &hold, ADVISOR_HOLD_WAIT, rq, r)) {
            advisor_route_chunk_wait(
                w, p0, p1, advisor_route_arg_uint(rq, "timeout", 60, 1, ADVISOR_LONGPOLL_MAX_S),
                &hold, r);
            hold_end(a, &hold, r);
        }
        return true;
    }
    case R_APPROVE:
        advisor_route_approve(w, p0, p1, rq->body, rq->body_len, r);
        return true;
    case R_APPROVE_SUGGESTION:
        advisor_route_approve_suggestion(w, p0, p1, rq->body, rq->body_len, r);
        return true;
    case R_REJECT:
        if (reason_ok(rq, r)) {
            advisor_route_reject(w, p0, p1, rq->body, rq->body_len, r);
        }
        return true;
    case R_UNDO:
        advisor_route_undo(w, p0, p1, r);
        return true;
    case R_HISTORY:
        advisor_route_history(w, p0, rq->principal == 0, r);
        return true;
    case R_EVENTS: {
        struct advisor_hold hold;
        if (httpd_req_arg(rq, "wait") == NULL) {
            events_list(w, rq, NULL, r);
        } else if (hold_begin(a, &hold, ADVISOR_HOLD_EVENTS, rq, r)) {
            events_list(w, rq, &hold, r);
            hold_end(a, &hold, r);
        }
        return true;
    }
    case R_AUDIT_PUBKEY:
        audit_pubkey(r);
        return true;
    case R_AUDIT_EXPORT:
        audit_export(w, rq, r);
        return true;
    default:
        return false;
    }
}

/* GET /metrics: the admin's only (a sandbox token sees nothing global). */
static void reply_metrics(struct advisor *a, const struct httpd_req *rq, struct httpd_reply *r)
{
    if (rq->principal != 0) {
        httpd_reply_error(r, 403, "forbidden", "this route needs the admin token");
        return;
    }
    r->raw = httpd_metrics_render(a->metrics, &r->raw_len);
    if (r->raw != NULL) {
        /* the prover pool's series after the requests' */
        struct pv_dynbuf b;
        pv_dynbuf_init(&b, SIZE_MAX / 2);
        pv_dynbuf_put(&b, r->raw, r->raw_len);
        free(r->raw);
        pv_dynbuf_putf(&b,
                       "# HELP proviso_advisor_revisions_unbacked_total Revisions not served "
                       "because their text is not the policy their hash records.\n"
                       "# TYPE proviso_advisor_revisions_unbacked_total counter\n"
                       "proviso_advisor_revisions_unbacked_total %llu\n",
                       (unsigned long long)advisor_unbacked_total());
        r->raw = pv_ok(advisor_pool_render(a->pool, &b)) ? pv_dynbuf_take(&b, &r->raw_len) : NULL;
        pv_dynbuf_free(&b);
    }
    if (r->raw == NULL) {
        httpd_reply_error(r, 500, "internal", "out of memory");
        return;
    }
    r->status = 200;
    r->content_type = "text/plain; version=0.0.4; charset=utf-8";
}

void advisor_handle(void *ctx, void *worker, const struct httpd_req *rq, struct httpd_reply *r)
{
    struct advisor *a = ctx;
    struct advisor_worker *w = worker;
    const char *p0 = rq->nparams > 0 ? rq->params[0] : NULL;
    const char *p1 = rq->nparams > 1 ? rq->params[1] : NULL;
    size_t i = 0;

    (void)a;
    while (i < PV_ARRAY_LEN(table) && table[i].route.id != rq->route->id) {
        i++;
    }
    if (rq->route->id == R_HEALTHZ) {
        httpd_reply_healthz(r);
        return;
    }
    if (rq->route->id >= R_UI && rq->route->id <= R_UI_CSS) {
        advisor_ui_reply(rq->path, r);
        return;
    }
    if (rq->route->id == R_OPENAPI) {
        r->status = 200;
        r->raw_static = advisor_api_text(&r->raw_len);
        r->content_type = "application/json";
        return;
    }
    if (rq->route->id == R_METRICS) {
        reply_metrics(a, rq, r);
        return;
    }
    if (w == NULL) {
        /* advisor_worker_new failed (logged); the pool tries again before
         * this thread's next job */
        httpd_reply_error(r, 500, "internal", "this worker has no store handle or prover client");
        return;
    }
    if (table[i].who == ADMIN && rq->principal != 0) {
        httpd_reply_error(r, 403, "forbidden", "this route needs the admin token");
        return;
    }
    if (table[i].who == OWNER && p0 != NULL && rq->principal != 0 && !owner_ok(w, rq, r)) {
        return;
    }
    if (!route_sandboxes(a, w, rq, p0, p1, r) && !route_proposals(a, w, rq, p0, p1, r)) {
        httpd_reply_error(r, 500, "internal", "unhandled route");
    }
}
