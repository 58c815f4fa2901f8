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

#include "advisor/advisor.h"
#include "advisor/store.h"
#include "audit/audit.h"
#include "common/pv_dynbuf.h"
#include "common/pv_log.h"
#include "common/pv_text.h"
#include "model/model.h"

enum route_id {
    R_HEALTHZ,
    R_OPENAPI,
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

#define BOUNDARY_KEY "@auto_approval_boundary"
#define LONGPOLL_MAX_S 300u
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

static unsigned arg_uint(const struct httpd_req *rq, const char *name, unsigned dflt, unsigned lo,
                         unsigned hi)
{
    const char *v = httpd_req_arg(rq, name);
    uint64_t n = 0;

    if (v == NULL || !pv_ok(pv_parse_u64(v, strlen(v), UINT64_MAX, &n))) {
        return dflt;
    }
    return n < lo ? lo : n > hi ? hi : (unsigned)n;
}

static json_t *parse_body(const struct httpd_req *rq, struct httpd_reply *r)
{
    json_error_t je;
    json_t *j = json_loadb(rq->body, rq->body_len, JSON_REJECT_DUPLICATES, &je);

    if (!json_is_object(j)) {
        char detail[256];
        snprintf(detail, sizeof(detail), "body:%d:%d: %s", je.line, je.column,
                 j == NULL ? je.text : "expected a JSON object");
        json_decref(j);
        httpd_reply_error(r, 400, "invalid_json", detail);
        return NULL;
    }
    return j;
}

/* A document member: a string (YAML or JSON text) as is, an object or
 * array serialised. NULL when absent or of another type. New string. */
static char *doc_text(const json_t *v)
{
    if (json_is_string(v)) {
        return pv_strdup(json_string_value(v));
    }
    if (json_is_object(v) || json_is_array(v)) {
        return json_dumps(v, JSON_COMPACT);
    }
    return NULL;
}

static void reply_diags(struct httpd_reply *r, const char *code, struct model_diags *d)
{
    json_t *list = json_array();

    for (size_t i = 0; i < model_diags_count(d) && i < 50; i++) {
        json_array_append_new(list, json_string(model_diags_line(d, i)));
    }
    httpd_reply_error(r, 400, code,
                      model_diags_count(d) > 0 ? model_diags_line(d, 0) : "invalid document");
    json_object_set_new(r->body, "diagnostics", list);
}

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

/* Validate a policy document; its canonical YAML (new) or NULL with a 400. */
static char *policy_yaml(const char *field, const char *text, struct httpd_reply *r)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p =
        d != NULL ? model_policy_load(field, text, strlen(text), MODEL_FMT_AUTO, d) : NULL;
    char *yaml = p != NULL ? model_policy_to_yaml(p, NULL) : NULL;

    if (p == NULL) {
        if (d != NULL) {
            reply_diags(r, "invalid_policy", d);
        } else {
            httpd_reply_error(r, 500, "internal", "out of memory");
        }
    } else if (yaml == NULL) {
        httpd_reply_error(r, 500, "internal", "out of memory");
    }
    model_policy_free(p);
    model_diags_free(d);
    return yaml;
}

static bool creds_ok(const char *text, struct httpd_reply *r)
{
    struct model_diags *d = model_diags_new();
    struct model_credset *c =
        d != NULL ? model_credset_load("credentials", text, strlen(text), d) : NULL;
    bool ok = c != NULL;

    if (!ok) {
        if (d != NULL) {
            reply_diags(r, "invalid_credentials", d);
        } else {
            httpd_reply_error(r, 500, "internal", "out of memory");
        }
    }
    model_credset_free(c);
    model_diags_free(d);
    return ok;
}

static void commit_or_fail(struct advisor_worker *w, pv_result *res)
{
    *res = pv_ok(*res) ? store_commit(w->st) : *res;
    if (!pv_ok(*res)) {
        store_rollback(w->st);
    }
}

/* ===========================================================================
 * Sandboxes
 * ========================================================================= */

static json_t *sandbox_json(struct advisor_worker *w, const struct store_sandbox *sb)
{
    struct store_revision rev;
    json_t *j = json_pack("{s:s,s:I,s:b,s:b,s:o,s:I}", "name", sb->name, "created_ms",
                          (json_int_t)sb->created_ms, "has_credentials", sb->credentials[0] != '\0',
                          "has_boundary", sb->boundary[0] != '\0', "addresses",
                          json_loads(sb->addresses, 0, NULL), "loaded_revision",
                          (json_int_t)store_loaded_latest(w->st, sb->id));

    if (j != NULL && pv_ok(store_rev_latest(w->st, sb->id, &rev))) {
        json_object_set_new(j, "policy_version", json_integer(rev.rev));
        json_object_set_new(j, "policy_hash", json_string(rev.hash));
        store_revision_clear(&rev);
    }
    return j;
}

struct list_sb {
    struct advisor_worker *w;
    json_t *arr;
};

static void list_sb_one(void *arg, const struct store_sandbox *sb)
{
    struct list_sb *x = arg;
    json_array_append_new(x->arr, sandbox_json(x->w, sb));
}

static void sandboxes_list(struct advisor_worker *w, struct httpd_reply *r)
{
    struct list_sb x = {.w = w, .arr = json_array()};
    pv_result res = store_sandbox_each(w->st, list_sb_one, &x);

    if (!pv_ok(res)) {
        json_decref(x.arr);
        advisor_reply_store_error(r, res, "sandbox");
        return;
    }
    httpd_reply_json(r, 200, json_pack("{s:o}", "sandboxes", x.arr));
}

static void sandbox_create(struct advisor_worker *w, const struct httpd_req *rq,
                           struct httpd_reply *r)
{
    json_t *body = parse_body(rq, r);
    const char *name;
    char *policy = NULL;
    char *yaml = NULL;
    char *creds = NULL;
    char *boundary = NULL;
    char *byaml = NULL;
    struct httpd_token tok = {0};
    struct store_sandbox sb;
    struct store_revision rev;
    struct model_diags *d = NULL;
    struct model_policy *p = NULL;
    char tokhash[65];
    char blob[65];
    char hash[65];
    char eblob[65];
    char ehash[65];
    char perr[1024] = "";
    char *eyaml = NULL;
    char line[256];
    pv_result res;

    if (body == NULL) {
        return;
    }
    name = json_string_value(json_object_get(body, "name"));
    if (name == NULL || !advisor_name_valid(name)) {
        httpd_reply_error(r, 400, "invalid_request",
                          "name must be 1-63 characters of a-z, 0-9, '.', '_', '-', starting "
                          "with a letter or digit");
        goto out;
    }
    policy = doc_text(json_object_get(body, "policy"));
    if (policy == NULL) {
        httpd_reply_error(r, 400, "invalid_request", "policy is required (YAML/JSON text)");
        goto out;
    }
    yaml = policy_yaml("policy", policy, r);
    if (yaml == NULL) {
        goto out;
    }
    creds = doc_text(json_object_get(body, "credentials"));
    if (creds != NULL && !creds_ok(creds, r)) {
        goto out;
    }
    boundary = doc_text(json_object_get(body, "boundary"));
    if (boundary != NULL && (byaml = policy_yaml("boundary", boundary, r)) == NULL) {
        goto out;
    }
    d = model_diags_new();
    p = d != NULL ? model_policy_load("policy", yaml, strlen(yaml), MODEL_FMT_YAML, d) : NULL;
    if (p == NULL || !pv_ok(model_policy_sha256(p, hash)) || !pv_ok(httpd_token_random(&tok))) {
        httpd_reply_error(r, 500, "internal", "cannot prepare the sandbox");
        goto out;
    }
    advisor_sha256_hex(tok.buf, tok.len, tokhash);
    memset(&sb, 0, sizeof(sb));
    sb.name = PV_UNCONST(name);
    sb.token_sha256 = tokhash;
    sb.credentials = creds != NULL ? creds : PV_UNCONST("");
    sb.boundary = byaml != NULL ? byaml : PV_UNCONST("");
    sb.addresses = PV_UNCONST("[]");
    res = store_begin(w->st);
    if (pv_ok(res)) {
        res = store_sandbox_create(w->st, &sb);
    }
    if (pv_ok(res)) {
        res = store_blob_put(w->st, yaml, strlen(yaml), blob);
    }
    memset(&rev, 0, sizeof(rev));
    rev.blob = blob;
    rev.hash = hash;
    rev.cause = PV_UNCONST("create");
    if (pv_ok(res)) {
        res = store_base_put(w->st, sb.id, &rev);
    }
    if (pv_ok(res)) {
        /* the effective policy has its target_sandbox peers resolved */
        res = advisor_resolve_peers(w, p, perr, sizeof(perr));
        eyaml = pv_ok(res) ? model_policy_to_yaml_sha256(p, NULL, ehash) : NULL;
        if (pv_ok(res) && eyaml == NULL) {
            res = pv_fail(PV_ERR_NOMEM, __func__);
        }
        if (pv_ok(res) && strcmp(ehash, hash) != 0) {
            res = store_blob_put(w->st, eyaml, strlen(eyaml), eblob);
            rev.blob = eblob;
            rev.hash = ehash;
        }
    }
    if (pv_ok(res)) {
        rev.base_rev = rev.rev;
        res = store_rev_put(w->st, sb.id, &rev);
    }
    snprintf(line, sizeof(line),
             "CONFIG:CREATED [INFO] gateway created sandbox %s [version:v%lld hash:sha256:%s]",
             name, (long long)rev.rev, rev.hash);
    if (pv_ok(res)) {
        res = advisor_event(w->st, name, "CONFIG:CREATED", line,
                            json_pack("{s:s,s:[],s:I,s:s}", "base_blob", blob, "chunks", "version",
                                      (json_int_t)rev.rev, "hash", rev.hash));
    }
    commit_or_fail(w, &res);
    if (!pv_ok(res)) {
        advisor_reply_store_error(r, res, "sandbox");
        goto out;
    }
    if (!pv_ok(advisor_tokens_put(w->a->tokens, tokhash, sb.id))) {
        pv_log_warnx("sandbox %s: cannot index its token (out of memory)", name);
    }
    advisor_changed(w->a);
    pv_log_info("OCSF %s", line);
    httpd_reply_json(r, 201,
                     json_pack("{s:s,s:s#,s:I,s:s}", "name", name, "token", (const char *)tok.buf,
                               (int)tok.len, "policy_version", (json_int_t)rev.rev, "policy_hash",
                               rev.hash));
out:
    free(eyaml);
    httpd_token_free(&tok);
    model_policy_free(p);
    model_diags_free(d);
    free(policy);
    free(yaml);
    free(creds);
    free(boundary);
    free(byaml);
    json_decref(body);
}

static void sandbox_delete(struct advisor_worker *w, const char *name, struct httpd_reply *r)
{
    struct store_sandbox sb;
    char line[256];
    pv_result res = store_sandbox_get(w->st, name, &sb);
    pthread_mutex_t *mu;

    if (!pv_ok(res)) {
        advisor_reply_store_error(r, res, "sandbox");
        return;
    }
    mu = advisor_stripe(w->a, sb.id);
    pthread_mutex_lock(mu);
    res = store_begin(w->st);
    if (pv_ok(res)) {
        res = store_sandbox_delete(w->st, sb.id);
    }
    snprintf(line, sizeof(line), "CONFIG:DELETED [INFO] gateway deleted sandbox %s", name);
    if (pv_ok(res)) {
        res = advisor_event(w->st, name, "CONFIG:DELETED", line, NULL);
    }
    if (pv_ok(res)) {
        /* its peers lose their addresses for it: target_sandbox goes unresolved */
        char err[1024];
        res = advisor_peers_push(w, name, "[]", sb.addresses, NULL, err, sizeof(err));
    }
    commit_or_fail(w, &res);
    pthread_mutex_unlock(mu);
    if (!pv_ok(res)) {
        advisor_reply_store_error(r, res, "sandbox");
    } else {
        advisor_tokens_drop(w->a->tokens, sb.id);
        advisor_changed(w->a);
        httpd_reply_json(r, 200, json_pack("{s:s,s:b}", "name", name, "deleted", true));
    }
    store_sandbox_clear(&sb);
}

/* Long-poll: answers when the effective revision passes 'after' or the
 * proposals setting differs from 'enabled', or at the timeout. */
static void policy_get(struct advisor_worker *w, const struct httpd_req *rq, const char *name,
                       struct advisor_hold *hold, struct httpd_reply *r)
{
    const char *after_s = httpd_req_arg(rq, "after");
    const char *enabled_s = httpd_req_arg(rq, "enabled");
    unsigned timeout = arg_uint(rq, "timeout", 30, 0, LONGPOLL_MAX_S);
    int64_t after = -1;
    int64_t deadline = advisor_now_ms() + (int64_t)timeout * 1000;
    struct store_sandbox sb;
    pv_result res = store_sandbox_get(w->st, name, &sb);

    if (!pv_ok(res)) {
        advisor_reply_store_error(r, res, "sandbox");
        return;
    }
    if (after_s != NULL) {
        uint64_t v = 0;
        if (!pv_ok(pv_parse_u64(after_s, strlen(after_s), INT64_MAX, &v))) {
            store_sandbox_clear(&sb);
            httpd_reply_error(r, 400, "invalid_request", "after must be a revision number");
            return;
        }
        after = (int64_t)v;
    }
    for (;;) {
        uint64_t seen = advisor_change_count(w->a);
        struct store_revision rev;
        bool enabled = advisor_proposals_enabled(w->st, name);
        bool flag_moved = enabled_s != NULL && (strcmp(enabled_s, "1") == 0) != enabled;

        res = store_rev_latest(w->st, sb.id, &rev);
        if (!pv_ok(res)) {
            advisor_reply_store_error(r, res, "policy");
            break;
        }
        if (after < 0 || rev.rev > after || flag_moved || advisor_now_ms() >= deadline ||
            advisor_stopping(w->a)) {
            char *yaml = store_blob_get(w->st, rev.blob, NULL);
            httpd_reply_json(r, 200,
                             json_pack("{s:s,s:I,s:s,s:s,s:s?,s:b,s:{s:b}}", "sandbox", name,
                                       "revision", (json_int_t)rev.rev, "hash", rev.hash, "format",
                                       "yaml", "policy_yaml", yaml, "changed", rev.rev > after,
                                       "settings", ADVISOR_SET_PROPOSALS, enabled));
            free(yaml);
            store_revision_clear(&rev);
            break;
        }
        store_revision_clear(&rev);
        if (!advisor_hold_wait(w->a, hold, seen, deadline)) {
            deadline = 0; /* answer what there is now */
        }
    }
    store_sandbox_clear(&sb);
}

static void sandbox_put_doc(struct advisor_worker *w, const struct httpd_req *rq, const char *name,
                            int which, struct httpd_reply *r)
{
    json_t *body = parse_body(rq, r);
    const char *field = which == R_CREDENTIALS ? "credentials" : "boundary";
    json_t *suspended = NULL;
    char *text = NULL;
    char *stored = NULL;
    struct store_sandbox sb;
    pv_result res;
    char line[256];

    if (body == NULL) {
        return;
    }
    suspended = json_array();
    text = doc_text(json_object_get(body, field));
    if (text == NULL) {
        char detail[96];
        snprintf(detail, sizeof(detail), "%s is required (\"\" clears it)", field);
        httpd_reply_error(r, 400, "invalid_request", detail);
        goto out;
    }
    if (text[0] != '\0') {
        if (which == R_CREDENTIALS) {
            if (!creds_ok(text, r)) {
                goto out;
            }
            stored = pv_strdup(text);
        } else if ((stored = policy_yaml(field, text, r)) == NULL) {
            goto out;
        }
    } else {
        stored = pv_strdup("");
    }
    if (stored == NULL) {
        httpd_reply_error(r, 500, "internal", "out of memory");
        goto out;
    }
    if (name == NULL) {
        /* The global auto-approval boundary. */
        res = store_begin(w->st);
        if (pv_ok(res)) {
            res = stored[0] != '\0' ? store_setting_put(w->st, "", BOUNDARY_KEY, stored)
                                    : store_setting_delete(w->st, "", BOUNDARY_KEY);
            if (res.err == PV_ERR_NOTFOUND) {
                res = PV_RESULT_OK;
            }
        }
        snprintf(line, sizeof(line),
                 "CONFIG:SETTING [INFO] gateway %s the global auto-approval "
                 "boundary",
                 stored[0] != '\0' ? "set" : "cleared");
        if (pv_ok(res)) {
            res = advisor_event(w->st, "", "CONFIG:SETTING", line, NULL);
        }
        if (pv_ok(res)) {
            /* Auto-approvals that rested on the old boundary are proved
             * again (docs/advisor.md#reproof). Each sandbox's stripe is not
             * held, as for a peer's push: the write transaction orders it
             * with every decision. */
            res = advisor_reprove_unbounded(w, "global boundary", suspended);
        }
        commit_or_fail(w, &res);
    } else {
        res = store_sandbox_get(w->st, name, &sb);
        if (pv_ok(res)) {
            pthread_mutex_t *mu = advisor_stripe(w->a, sb.id);
            char *old;
            pthread_mutex_lock(mu);
            if (which == R_CREDENTIALS) {
                old = sb.credentials;
                sb.credentials = stored;
            } else {
                old = sb.boundary;
                sb.boundary = stored;
            }
            res = store_begin(w->st);
            if (pv_ok(res)) {
                res = store_sandbox_update(w->st, &sb);
            }
            snprintf(line, sizeof(line), "CONFIG:SETTING [INFO] gateway %s %s of sandbox %s",
                     stored[0] != '\0' ? "set" : "cleared", field, name);
            if (pv_ok(res)) {
                res = advisor_event(w->st, name, "CONFIG:SETTING", line, NULL);
            }
            if (pv_ok(res)) {
                /* What each approval grants can change with the
                 * credentials or the boundary: prove them again
                 * (docs/advisor.md#reproof). */
                res = advisor_reprove_sandbox(w, sb.id, field, suspended);
            }
            commit_or_fail(w, &res);
            pthread_mutex_unlock(mu);
            stored = old; /* freed below; sb owns the new text */
            store_sandbox_clear(&sb);
        }
    }
    if (!pv_ok(res)) {
        advisor_reply_store_error(r, res, "sandbox");
    } else {
        pv_log_info("OCSF %s", line);
        advisor_changed(w->a);
        httpd_reply_json(
            r, 200,
            json_pack("{s:s,s:b,s:O}", "document", field, "updated", true, "suspended", suspended));
    }
out:
    json_decref(suspended);
    free(text);
    free(stored);
    json_decref(body);
}

static void loaded_put(struct advisor_worker *w, const struct httpd_req *rq, const char *name,
                       struct httpd_reply *r)
{
    json_t *body = parse_body(rq, r);
    json_int_t revno;
    const char *hash;
    struct store_sandbox sb;
    struct store_revision rev;
    char line[256];
    char suffix[160];
    pv_result res;

    if (body == NULL) {
        return;
    }
    revno = json_integer_value(json_object_get(body, "revision"));
    hash = json_string_value(json_object_get(body, "hash"));
    if (revno <= 0 || hash == NULL) {
        httpd_reply_error(r, 400, "invalid_request", "body needs revision (> 0) and hash");
        json_decref(body);
        return;
    }
    res = store_sandbox_get(w->st, name, &sb);
    if (pv_ok(res)) {
        res = store_rev_get(w->st, sb.id, revno, &rev);
        if (pv_ok(res)) {
            bool match = strcmp(rev.hash, hash) == 0;
            store_revision_clear(&rev);
            if (!match) {
                httpd_reply_error(r, 409, "hash_mismatch",
                                  "the hash does not match that revision's policy");
                store_sandbox_clear(&sb);
                json_decref(body);
                return;
            }
        }
    }
    if (pv_ok(res)) {
        res = store_begin(w->st);
        if (pv_ok(res)) {
            res = store_loaded_put(w->st, sb.id, revno, hash, advisor_now_ms());
        }
        advisor_event_suffix(suffix, sizeof(suffix), revno, hash);
        snprintf(line, sizeof(line), "CONFIG:LOADED [INFO] policy reloaded [%s]", suffix);
        if (pv_ok(res)) {
            res = advisor_event(w->st, name, "CONFIG:LOADED", line,
                                json_pack("{s:I,s:s}", "version", revno, "hash", hash));
        }
        commit_or_fail(w, &res);
        store_sandbox_clear(&sb);
    }
    if (!pv_ok(res)) {
        advisor_reply_store_error(r, res, "revision");
    } else {
        pv_log_info("OCSF %s", line);
        advisor_changed(w->a);
        httpd_reply_json(r, 200, json_pack("{s:I,s:b}", "revision", revno, "recorded", true));
    }
    json_decref(body);
}

/* ===========================================================================
 * Settings
 * ========================================================================= */

static void setting_write(struct advisor_worker *w, const struct httpd_req *rq, const char *sandbox,
                          const char *key, bool del, struct httpd_reply *r)
{
    json_t *body = del ? NULL : parse_body(rq, r);
    const json_t *value = body != NULL ? json_object_get(body, "value") : NULL;
    char msg[512];
    char line[512];
    char *text = NULL;
    char *global;
    const char *why;
    pv_result res;
    struct store_sandbox sb;

    if (!del && body == NULL) {
        return;
    }
    if (!del && value == NULL) {
        httpd_reply_error(r, 400, "invalid_argument", "body needs \"value\"");
        goto out;
    }
    if (!del) {
        why = advisor_setting_check(key, value, msg, sizeof(msg));
    } else {
        json_t *probe = json_false();
        why = advisor_setting_check(key, probe, msg, sizeof(msg));
        json_decref(probe);
        /* Any registered key may be deleted whatever its type. */
        if (why != NULL && strncmp(why, "unknown setting key", 19) != 0) {
            why = NULL;
        }
    }
    if (why != NULL) {
        httpd_reply_error(r, 400, "invalid_argument", why);
        goto out;
    }
    if (sandbox != NULL) {
        res = store_sandbox_get(w->st, sandbox, &sb);
        if (!pv_ok(res)) {
            advisor_reply_store_error(r, res, "sandbox");
            goto out;
        }
        store_sandbox_clear(&sb);
        global = store_setting_get(w->st, "", key);
        if (global != NULL) {
            free(global);
            snprintf(msg, sizeof(msg),
                     del ? "setting '%s' is managed globally; delete the global setting first"
                         : "setting '%s' is managed globally; delete the global setting before "
                           "sandbox update",
                     key);
            httpd_reply_error(r, 409, "failed_precondition", msg);
            goto out;
        }
    }
    text = del ? NULL : advisor_json_canonical(value);
    res = store_begin(w->st);
    if (pv_ok(res)) {
        res = del ? store_setting_delete(w->st, sandbox != NULL ? sandbox : "", key)
                  : store_setting_put(w->st, sandbox != NULL ? sandbox : "", key, text);
    }
    snprintf(line, sizeof(line), "CONFIG:SETTING [INFO] gateway %s %s setting %s%s%s",
             del ? "deleted" : "set", sandbox != NULL ? "sandbox" : "global", key, del ? "" : " = ",
             del ? "" : (text != NULL ? text : ""));
    if (pv_ok(res)) {
        res = advisor_event(w->st, sandbox != NULL ? sandbox : "", "CONFIG:SETTING", line,
                            json_pack("{s:s,s:s,s:s?}", "scope", sandbox != NULL ? sandbox : "",
                                      "key", key, "value", text));
    }
    if (pv_ok(res) && strcmp(key, ADVISOR_SET_PEER_RANGES) == 0) {
        /* the bound holds for what is registered too: addresses the new
         * ranges do not admit are dropped in this transaction
         * (docs/advisor.md#peers) */
        char err[1024];
        res = advisor_peers_bound(w, sandbox, err, sizeof(err));
    }
    commit_or_fail(w, &res);
    if (!pv_ok(res)) {
        advisor_reply_store_error(r, res, "setting");
    } else {
        pv_log_info("OCSF %s", line);
        advisor_changed(w->a);
        httpd_reply_json(r, 200, advisor_settings_json(w->st, sandbox));
    }
out:
    free(text);
    json_decref(body);
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
    unsigned limit = arg_uint(rq, "limit", 1000, 1, 10000);
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
        static const char ok[] = "{\"status\":\"ok\"}\n";
        r->status = 200;
        r->raw_static = ok;
        r->raw_len = sizeof(ok) - 1;
        r->content_type = "application/json";
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
    if (w == NULL || w->st == NULL) {
        httpd_reply_error(r, 500, "internal", "this worker has no store connection");
        return;
    }
    if (table[i].who == ADMIN && rq->principal != 0) {
        httpd_reply_error(r, 403, "forbidden", "this route needs the admin token");
        return;
    }
    if (table[i].who == OWNER && p0 != NULL && rq->principal != 0 && !owner_ok(w, rq, r)) {
        return;
    }
    switch ((enum route_id)rq->route->id) {
    case R_HEALTHZ:
    case R_OPENAPI:
    case R_UI:
    case R_UI_INDEX:
    case R_UI_JS:
    case R_UI_CSS:
        return;
    case R_SANDBOXES:
        sandboxes_list(w, r);
        return;
    case R_SANDBOX_CREATE:
        sandbox_create(w, rq, r);
        return;
    case R_SANDBOX: {
        struct store_sandbox sb;
        pv_result res = store_sandbox_get(w->st, p0, &sb);
        if (!pv_ok(res)) {
            advisor_reply_store_error(r, res, "sandbox");
            return;
        }
        httpd_reply_json(r, 200, sandbox_json(w, &sb));
        store_sandbox_clear(&sb);
        return;
    }
    case R_SANDBOX_DELETE:
        sandbox_delete(w, p0, r);
        return;
    case R_POLICY: {
        struct advisor_hold hold;
        if (httpd_req_arg(rq, "after") == NULL) {
            policy_get(w, rq, p0, NULL, r);
        } else if (hold_begin(a, &hold, ADVISOR_HOLD_POLICY, rq, r)) {
            policy_get(w, rq, p0, &hold, r);
            hold_end(a, &hold, r);
        }
        return;
    }
    case R_POLICY_SET: {
        json_t *body = parse_body(rq, r);
        char *text = body != NULL ? doc_text(json_object_get(body, "policy")) : NULL;
        if (body != NULL && text == NULL) {
            httpd_reply_error(r, 400, "invalid_request", "policy is required (YAML/JSON text)");
        } else if (text != NULL) {
            advisor_base_set(w, p0, text, strlen(text), "operator", r);
        }
        free(text);
        json_decref(body);
        return;
    }
    case R_CREDENTIALS:
    case R_BOUNDARY:
        sandbox_put_doc(w, rq, p0, rq->route->id, r);
        return;
    case R_GLOBAL_BOUNDARY:
        sandbox_put_doc(w, rq, NULL, R_BOUNDARY, r);
        return;
    case R_LOADED:
        loaded_put(w, rq, p0, r);
        return;
    case R_ADDRESSES:
        advisor_addresses_put(w, rq, p0, r);
        return;
    case R_SERVERS:
        advisor_server_list(w, p0, r);
        return;
    case R_SERVER_PUT:
        advisor_server_put(w, rq, p0, p1, r);
        return;
    case R_SERVER_DELETE:
        advisor_server_delete(w, p0, p1, r);
        return;
    case R_TOOLS:
        advisor_tools(w, rq, p0, r);
        return;
    case R_SB_SETTINGS: {
        struct store_sandbox sb;
        pv_result res = store_sandbox_get(w->st, p0, &sb);
        if (!pv_ok(res)) {
            advisor_reply_store_error(r, res, "sandbox");
            return;
        }
        store_sandbox_clear(&sb);
        httpd_reply_json(r, 200, advisor_settings_json(w->st, p0));
        return;
    }
    case R_SB_SETTING_PUT:
        setting_write(w, rq, p0, p1, false, r);
        return;
    case R_SB_SETTING_DELETE:
        setting_write(w, rq, p0, p1, true, r);
        return;
    case R_SETTINGS:
        httpd_reply_json(r, 200, advisor_settings_json(w->st, NULL));
        return;
    case R_SETTING_PUT:
        setting_write(w, rq, NULL, p0, false, r);
        return;
    case R_SETTING_DELETE:
        setting_write(w, rq, NULL, p0, true, r);
        return;
    case R_SUBMIT:
        advisor_route_submit(w, p0, httpd_req_arg(rq, "analysis_mode"), rq->body, rq->body_len, r);
        return;
    case R_LIST:
        advisor_chunk_list(w, p0, httpd_req_arg(rq, "status"), rq->principal == 0, r);
        return;
    case R_DENIALS: {
        struct store_sandbox sb;
        if (w->a->mapper == NULL) {
            httpd_reply_error(r, 503, "unavailable", "the mapper is not running");
        } else if (!pv_ok(store_sandbox_get(w->st, p0, &sb))) {
            httpd_reply_error(r, 404, "not_found", "sandbox not found");
        } else {
            store_sandbox_clear(&sb);
            advisor_mapper_ingest(w->a->mapper, p0, rq->body, rq->body_len, r);
        }
        return;
    }
    case R_APPROVE_ALL:
        advisor_approve_all(w, p0, rq->body, rq->body_len, r);
        return;
    case R_CLEAR:
        advisor_clear(w, p0, r);
        return;
    case R_CHUNK:
        advisor_chunk_show(w, p0, p1, rq->principal == 0, r);
        return;
    case R_EDIT:
        advisor_edit(w, p0, p1, rq->body, rq->body_len, r);
        return;
    case R_WAIT: {
        struct advisor_hold hold;
        if (hold_begin(a, &hold, ADVISOR_HOLD_WAIT, rq, r)) {
            advisor_chunk_wait(w, p0, p1, arg_uint(rq, "timeout", 60, 1, LONGPOLL_MAX_S), &hold, r);
            hold_end(a, &hold, r);
        }
        return;
    }
    case R_APPROVE:
        advisor_approve(w, p0, p1, rq->body, rq->body_len, r);
        return;
    case R_APPROVE_SUGGESTION:
        advisor_approve_suggestion(w, p0, p1, rq->body, rq->body_len, r);
        return;
    case R_REJECT:
        if (reason_ok(rq, r)) {
            advisor_reject(w, p0, p1, rq->body, rq->body_len, r);
        }
        return;
    case R_UNDO:
        advisor_undo(w, p0, p1, r);
        return;
    case R_HISTORY:
        advisor_history(w, p0, r);
        return;
    case R_EVENTS: {
        struct advisor_hold hold;
        if (httpd_req_arg(rq, "wait") == NULL) {
            events_list(w, rq, NULL, r);
        } else if (hold_begin(a, &hold, ADVISOR_HOLD_EVENTS, rq, r)) {
            events_list(w, rq, &hold, r);
            hold_end(a, &hold, r);
        }
        return;
    }
    case R_AUDIT_PUBKEY:
        audit_pubkey(r);
        return;
    case R_AUDIT_EXPORT:
        audit_export(w, rq, r);
        return;
    }
    httpd_reply_error(r, 500, "internal", "unhandled route");
}
