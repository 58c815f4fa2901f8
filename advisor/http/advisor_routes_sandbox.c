/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_routes_sandbox.c - the sandbox routes: create, list, delete, a
 * sandbox's policy (and its long-poll), its credentials and boundary (and
 * the global boundary), what its proxy loaded, and the settings
 * (docs/advisor.md#api). The table and the dispatch are advisor_routes.c's.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/http/http.h"
#include "advisor/http/http_int.h"
#include "advisor/store/store.h"
#include "common/pv_log.h"
#include "model/model.h"

#define BOUNDARY_KEY "@auto_approval_boundary"

static void reply_diags(struct httpd_reply *r, const char *code, struct model_diags *d)
{
    json_t *list;

    if (model_diags_nomem(d)) {
        /* ours, not the document's: no "invalid" for a valid policy */
        httpd_reply_error(r, 500, "internal", "out of memory");
        return;
    }
    list = json_array();
    for (size_t i = 0; i < model_diags_count(d) && i < 50; i++) {
        json_array_append_new(list, json_string(model_diags_line(d, i)));
    }
    httpd_reply_error(r, 400, code,
                      model_diags_count(d) > 0 ? model_diags_line(d, 0) : "invalid document");
    json_object_set_new(r->body, "diagnostics", list);
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

/* The advisor keeps credential metadata only: a document that carries a
 * secret (`value`, as in the proxy's store) is refused, so that no value
 * ever reaches the store, the audit chain or an export. `value_file` names
 * a file and holds no secret: it is accepted. */
static const char *no_secret(void *arg, size_t i, const char *env, const char *value,
                             size_t value_len, const char *value_file)
{
    (void)arg;
    (void)i;
    (void)env;
    (void)value_len;
    (void)value_file;
    return value != NULL ? "the advisor keeps credential metadata only: remove `value` (the secret "
                           "belongs in the proxy's --credentials store)"
                         : NULL;
}

static bool creds_ok(const char *text, struct httpd_reply *r)
{
    struct model_diags *d = model_diags_new();
    struct model_credset *c =
        d != NULL
            ? model_credset_load_secrets("credentials", text, strlen(text), d, no_secret, NULL)
            : NULL;
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

json_t *advisor_route_sandbox_json(struct advisor_worker *w, const struct store_sandbox *sb)
{
    struct store_revision rev;
    json_t *j = json_pack("{s:s,s:I,s:b,s:b,s:o,s:I}", "name", sb->name, "created_ms",
                          (json_int_t)sb->created_ms, "has_credentials", sb->credentials[0] != '\0',
                          "has_boundary", sb->boundary[0] != '\0', "addresses",
                          json_loads(sb->addresses, 0, NULL), "loaded_revision",
                          (json_int_t)store_loaded_latest(w->st, sb->id));

    if (j != NULL && pv_ok(store_rev_latest(w->st, sb->id, &rev))) {
        char *text = advisor_rev_text(w->st, sb->name, &rev, NULL);
        json_object_set_new(j, "policy_version", json_integer(rev.rev));
        json_object_set_new(j, "policy_hash", json_string(rev.hash));
        /* docs/advisor.md#integrity: false while the latest revision's
         * text is not the policy its hash records (it is not served) */
        json_object_set_new(j, "policy_backed", json_boolean(text != NULL));
        free(text);
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
    json_array_append_new(x->arr, advisor_route_sandbox_json(x->w, sb));
}

void advisor_route_sandboxes(struct advisor_worker *w, struct httpd_reply *r)
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

/* long: the request's checks, then one transaction (sandbox,
 * base, effective revision, CREATED event) read top to bottom; splitting it
 * would pass a dozen locals between the pieces. */
void advisor_route_sandbox_create(struct advisor_worker *w, const struct httpd_req *rq,
                                  struct httpd_reply *r)
{
    json_t *body = advisor_route_body(rq, r);
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
    policy = advisor_route_doc_text(json_object_get(body, "policy"));
    if (policy == NULL) {
        httpd_reply_error(r, 400, "invalid_request", "policy is required (YAML/JSON text)");
        goto out;
    }
    yaml = policy_yaml("policy", policy, r);
    if (yaml == NULL) {
        goto out;
    }
    creds = advisor_route_doc_text(json_object_get(body, "credentials"));
    if (creds != NULL && !creds_ok(creds, r)) {
        goto out;
    }
    boundary = advisor_route_doc_text(json_object_get(body, "boundary"));
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
    if (pv_ok(res)) {
        /* the token is indexed after the commit: make sure it can be */
        res = advisor_tokens_reserve(w->a->tokens);
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

void advisor_route_sandbox_delete(struct advisor_worker *w, const char *name, struct httpd_reply *r)
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
/* A revision advisor_rev_text refused (or could not read). */
static void reply_unbacked(struct httpd_reply *r, const struct store_revision *rev)
{
    char detail[200];

    if (pv_errno != PV_ERR_CONFLICT) {
        httpd_reply_error(r, 500, "internal", "the revision cannot be read");
        return;
    }
    snprintf(detail, sizeof(detail),
             "revision %lld does not hold the policy its hash records; it is not served (see "
             "the advisor's log)",
             (long long)rev->rev);
    httpd_reply_error(r, 500, "revision_unbacked", detail);
}

void advisor_route_policy(struct advisor_worker *w, const struct httpd_req *rq, const char *name,
                          struct advisor_hold *hold, struct httpd_reply *r)
{
    const char *after_s = httpd_req_arg(rq, "after");
    const char *enabled_s = httpd_req_arg(rq, "enabled");
    unsigned timeout = advisor_route_arg_uint(rq, "timeout", 30, 0, ADVISOR_LONGPOLL_MAX_S);
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
            char *yaml = advisor_rev_text(w->st, name, &rev, NULL);
            if (yaml == NULL) {
                /* the proxy keeps what it enforces (docs/advisor.md#integrity) */
                reply_unbacked(r, &rev);
                store_revision_clear(&rev);
                break;
            }
            httpd_reply_json(r, 200,
                             json_pack("{s:s,s:I,s:s,s:s,s:s?,s:b,s:{s:b}}", "sandbox", name,
                                       "revision", (json_int_t)rev.rev, "hash", rev.hash, "format",
                                       "yaml", "policy_yaml", yaml, "changed", rev.rev > after,
                                       "settings", ADVISOR_SET(PROPOSALS), enabled));
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

/* long: credentials and boundaries (sandbox or global) share one
 * write-re-prove-record path whose branches differ by a line or two each. */
void advisor_route_sandbox_doc(struct advisor_worker *w, const struct httpd_req *rq,
                               const char *name, bool credentials, struct httpd_reply *r)
{
    json_t *body = advisor_route_body(rq, r);
    const char *field = credentials ? "credentials" : "boundary";
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
    text = advisor_route_doc_text(json_object_get(body, field));
    if (text == NULL) {
        char detail[96];
        snprintf(detail, sizeof(detail), "%s is required (\"\" clears it)", field);
        httpd_reply_error(r, 400, "invalid_request", detail);
        goto out;
    }
    if (text[0] != '\0') {
        if (credentials) {
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
            if (credentials) {
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

void advisor_route_loaded(struct advisor_worker *w, const struct httpd_req *rq, const char *name,
                          struct httpd_reply *r)
{
    json_t *body = advisor_route_body(rq, r);
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
            if (!match) {
                /* a proxy that refused the revision's text says so here
                 * (docs/advisor.md#integrity) */
                pv_log_warnx("INTEGRITY: sandbox %s's proxy reports revision v%lld with hash "
                             "%.64s, not the revision's %s: it does not enforce it",
                             name, (long long)revno, hash, rev.hash);
            }
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

void advisor_route_setting(struct advisor_worker *w, const struct httpd_req *rq,
                           const char *sandbox, const char *key, bool del, struct httpd_reply *r)
{
    json_t *body = del ? NULL : advisor_route_body(rq, r);
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
    if (pv_ok(res) && strcmp(key, ADVISOR_SET(PEER_RANGES)) == 0) {
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
