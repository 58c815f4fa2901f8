/* SPDX-License-Identifier: Apache-2.0 */
/* server_routes.c - the work routes: /v1/prove, /v1/check, /v1/discover
 *
 * Each handler runs on a worker thread with that thread's prover session. It
 * decodes the body (prover_body.c) and hands /v1/prove and /v1/check to the
 * prover's job (prover_job.c), the same pipeline `proviso prove` and
 * `proviso check` run: the HTTP answer is byte-for-byte the object
 * `proviso prove --format json` prints (documents are named after their
 * fields, so diagnostics read "candidate:12:7: ..."). What stays here is
 * what is the service's own: the per-worker cache of compiled baselines and
 * boundaries, with the fast body decode it allows, and /v1/discover.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "common/pv_log.h"
#include "model/model.h"
#include "prover/prover.h"
#include "server/server.h"

struct server_ctx {
    struct server_config cfg;
    struct model_registry *reg;
    char *openapi_text;
    size_t openapi_len;
    char *tools_text;
    size_t tools_len;
};

/* A gateway proves many proposals against one baseline (and checks many
 * candidates against one boundary): each worker keeps the last few compiled
 * baselines and boundaries, keyed by the SHA-256 of the field name and the
 * exact bytes sent. Only policies that loaded cleanly are kept; the cache is
 * per thread, so nothing is shared and nothing needs a lock. */
#define CACHE_SLOTS 4

struct cache_entry {
    unsigned char key[SHA256_DIGEST_LENGTH];
    struct model_policy *p; /* owned */
    uint64_t used;
    char *span; /* owned: the raw object span the key hashes, of a body the
                 * decoder accepted; NULL for a string field */
    size_t nspan;
    const char *name; /* the field name the key hashes (static storage) */
};

struct server_worker {
    struct server_ctx *ctx;
    struct prover_session *ps;
    struct cache_entry cache[CACHE_SLOTS];
    uint64_t tick;
};

/* ===========================================================================
 * Context and workers
 * ========================================================================= */

pv_result server_ctx_new(const struct server_config *cfg, struct server_ctx **out)
{
    struct server_ctx *ctx = pv_calloc(1, sizeof(*ctx));
    struct model_diags *diags;
    json_t *api;
    json_t *tools;
    int err;

    PV_GUARD_PTR(ctx);
    ctx->cfg = *cfg;
    diags = model_diags_new();
    if (diags == NULL) {
        free(ctx);
        PV_BAIL(PV_ERR_NOMEM);
    }
    pv_errno = PV_OK;
    ctx->reg = model_registry_embedded(diags);
    /* the embedded registry is valid by construction: memory is the one
     * way it fails at run time, and the message should say so */
    err = pv_errno == PV_ERR_NOMEM ? PV_ERR_NOMEM : PV_ERR_INTERNAL;
    if (ctx->reg == NULL && model_diags_count(diags) > 0) {
        pv_log_warnx("%s: %s", __func__, model_diags_line(diags, 0));
    }
    model_diags_free(diags);
    if (ctx->reg == NULL) {
        server_ctx_free(ctx);
        PV_BAIL(err);
    }
    pv_errno = PV_OK;
    api = server_api_openapi();
    tools = api != NULL ? server_openapi_tools(api) : NULL;
    if (tools != NULL) {
        ctx->openapi_text = httpd_json_line(api, &ctx->openapi_len);
        ctx->tools_text = httpd_json_line(tools, &ctx->tools_len);
    }
    json_decref(api);
    json_decref(tools);
    if (ctx->openapi_text == NULL || ctx->tools_text == NULL) {
        err = pv_errno == PV_ERR_NOMEM ? PV_ERR_NOMEM : PV_ERR_INTERNAL;
        server_ctx_free(ctx);
        PV_BAIL(err);
    }
    *out = ctx;
    return PV_RESULT_OK;
}

void server_ctx_free(struct server_ctx *ctx)
{
    if (ctx == NULL) {
        return;
    }
    model_registry_free(ctx->reg);
    free(ctx->openapi_text);
    free(ctx->tools_text);
    free(ctx);
}

const struct server_config *server_ctx_config(const struct server_ctx *ctx)
{
    return &ctx->cfg;
}

const char *server_ctx_openapi_text(const struct server_ctx *ctx, size_t *len)
{
    *len = ctx->openapi_len;
    return ctx->openapi_text;
}

const char *server_ctx_tools_text(const struct server_ctx *ctx, size_t *len)
{
    *len = ctx->tools_len;
    return ctx->tools_text;
}

struct server_worker *server_worker_new(struct server_ctx *ctx)
{
    struct server_worker *w = pv_calloc(1, sizeof(*w));

    if (w == NULL) {
        return NULL;
    }
    w->ctx = ctx;
    w->ps = prover_session_new();
    if (w->ps == NULL) {
        server_worker_free(w);
        return NULL;
    }
    return w;
}

void server_worker_free(struct server_worker *w)
{
    if (w == NULL) {
        return;
    }
    prover_session_free(w->ps);
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
        model_policy_free(w->cache[i].p);
        free(w->cache[i].span);
    }
    free(w);
}

/* ===========================================================================
 * Replies
 * ========================================================================= */

void server_reply_error(struct server_reply *r, unsigned status, const char *code,
                        const char *detail)
{
    memset(r, 0, sizeof(*r));
    r->status = status;
    r->body = json_pack("{s:s,s:s}", "error", code, "detail", detail != NULL ? detail : "");
}

static enum server_verdict map_verdict(enum prover_verdict v)
{
    switch (v) {
    case PROVER_VERDICT_EMPTY:
        return SERVER_V_EMPTY;
    case PROVER_VERDICT_FINDINGS:
        return SERVER_V_FINDINGS;
    case PROVER_VERDICT_UNKNOWN:
        return SERVER_V_UNKNOWN;
    case PROVER_VERDICT_WITHIN:
        return SERVER_V_WITHIN;
    case PROVER_VERDICT_EXCEEDS:
        return SERVER_V_EXCEEDS;
    }
    return SERVER_V_UNKNOWN;
}

/* Move the job's answer 'a' into 'r' (and release 'a'). */
static void reply_answer(struct prover_answer *a, struct server_reply *r)
{
    memset(r, 0, sizeof(*r));
    r->status = a->status;
    r->body = a->body;
    a->body = NULL;
    if (a->result != NULL) {
        r->verdict = map_verdict(a->result->verdict);
        r->solver_timeout = a->result->unknown == PROVER_UNKNOWN_TIMEOUT;
    }
    prover_answer_free(a);
}

/* ===========================================================================
 * The worker's policy cache (the job's cache callback)
 * ========================================================================= */

/* What the cache callback needs besides the document: the worker, the
 * decoded field (for its JSON type) and the key the fast decode computed. */
struct cache_req {
    struct server_worker *w;
    const struct prover_doc *doc;
    const unsigned char *prekey; /* NULL: hash the bytes */
};

/* The cache key of field 'name' holding the bytes 'text': SHA-256 of the
 * name, a NUL and the bytes. False when hashing failed. */
static bool cache_key(const char *name, const char *text, size_t len,
                      unsigned char key[SHA256_DIGEST_LENGTH])
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    bool hashed = md != NULL && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 &&
                  EVP_DigestUpdate(md, name, strlen(name) + 1) == 1 &&
                  EVP_DigestUpdate(md, text, len) == 1 && EVP_DigestFinal_ex(md, key, NULL) == 1;

    EVP_MD_CTX_free(md);
    return hashed;
}

/* The cache entry of field 'name' whose raw object span is the bytes at
 * 'at' (up to 'avail' of them), or NULL. */
static const struct cache_entry *cache_span_at(const struct server_worker *w, const char *name,
                                               const char *at, size_t avail)
{
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
        const struct cache_entry *e = &w->cache[i];
        if (e->p != NULL && e->span != NULL && e->name == name && e->nspan <= avail &&
            memcmp(e->span, at, e->nspan) == 0) {
            return e;
        }
    }
    return NULL;
}

/* prover_job_cache_fn: load the baseline or boundary 'd' through the
 * worker's cache. Borrowed (valid until the next cached load on this
 * worker); when no key could be computed, an owned load in '*owned'. */
static const struct model_policy *cache_load(void *arg, const struct prover_job_doc *d,
                                             struct model_diags *diags, struct model_policy **owned)
{
    const struct cache_req *q = arg;
    struct server_worker *w = q->w;
    unsigned char key[SHA256_DIGEST_LENGTH];
    struct cache_entry *slot = &w->cache[0];
    struct model_policy *p;
    bool hashed = true;

    if (q->prekey != NULL) {
        memcpy(key, q->prekey, sizeof(key));
    } else {
        hashed = cache_key(d->name, d->text, d->len, key);
    }
    if (!hashed) {
        /* No key, no cache: an owned load the job frees. */
        *owned = model_policy_load(d->name, d->text, d->len, MODEL_FMT_AUTO, diags);
        return *owned;
    }
    w->tick++;
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
        struct cache_entry *e = &w->cache[i];
        if (e->p != NULL && memcmp(e->key, key, sizeof(key)) == 0) {
            e->used = w->tick;
            server_metrics_cache(true);
            return e->p;
        }
        if (e->p == NULL || (slot->p != NULL && e->used < slot->used)) {
            slot = e;
        }
    }
    server_metrics_cache(false);
    p = model_policy_load(d->name, d->text, d->len, MODEL_FMT_AUTO, diags);
    if (p == NULL) {
        return NULL;
    }
    model_policy_free(slot->p);
    free(slot->span);
    slot->span = NULL;
    slot->nspan = 0;
    if (!q->doc->is_string) {
        /* Failing to keep the span only costs the fast body decode. */
        slot->span = pv_malloc(d->len);
        if (slot->span != NULL) {
            memcpy(slot->span, d->text, d->len);
            slot->nspan = d->len;
        }
    }
    memcpy(slot->key, key, sizeof(key));
    slot->name = d->name;
    slot->p = p;
    slot->used = w->tick;
    return p;
}

/* ===========================================================================
 * Routes
 * ========================================================================= */

/* /v1/prove and /v1/check: the prover's job (prover_job.c), with this
 * worker's session, the embedded registry, the configured timeouts and the
 * worker's cache for the baseline (prove) or boundary (check). */
static void route_job(struct server_worker *w, enum server_route_id route,
                      const struct prover_body *b, const unsigned char *prekey,
                      struct server_reply *r)
{
    enum prover_body_kind kind = route == SERVER_R_CHECK ? PROVER_BODY_CHECK : PROVER_BODY_PROVE;
    enum prover_field cached = route == SERVER_R_CHECK ? PROVER_F_BOUNDARY : PROVER_F_BASELINE;
    struct cache_req q = {w, &b->f[cached], prekey};
    struct prover_job_env env;
    struct prover_answer a;

    memset(&env, 0, sizeof(env));
    env.reg = w->ctx->reg;
    env.timeout_ms = w->ctx->cfg.timeout_ms;
    env.max_timeout_ms = w->ctx->cfg.max_timeout_ms;
    env.cache = cache_load;
    env.cache_arg = &q;
    prover_job_run_body(w->ps, kind, b, &env, &a);
    reply_answer(&a, r);
}

/* The identity discovery decides as: 'binary', then 'ancestors' (as the
 * proxy's identity lists a process's ancestors, docs/semantics.md). */
static bool identity_of(const struct prover_body *b, const char **bins, size_t *nbins, char *err,
                        size_t errlen)
{
    const json_t *anc = b->f[PROVER_F_ANCESTORS].value;
    const json_t *v;
    size_t i;

    bins[0] = b->f[PROVER_F_BINARY].text;
    *nbins = 1;
    if (json_array_size(anc) >= MODEL_MAX_IDENTITY) {
        snprintf(err, errlen, "ancestors: at most %d paths", MODEL_MAX_IDENTITY - 1);
        return false;
    }
    json_array_foreach(anc, i, v)
    {
        const char *s = json_string_value(v);
        if (s == NULL || s[0] != '/') {
            snprintf(err, errlen, "ancestors[%zu]: expected an absolute path string", i);
            return false;
        }
        bins[(*nbins)++] = s;
    }
    return true;
}

static void route_discover(const struct prover_body *b, struct server_reply *r)
{
    const char *bins[MODEL_MAX_IDENTITY];
    size_t nbins = 0;
    const struct prover_doc *api = &b->f[PROVER_F_OPENAPI];
    const struct prover_doc *pd = &b->f[PROVER_F_POLICY];
    json_t *doc = NULL;
    const json_t *use = api->value;
    struct model_diags *diags = model_diags_new();
    struct model_policy *policy = NULL;
    char err[512];
    json_t *out;

    if (diags == NULL) {
        server_reply_error(r, 500, "internal", "out of memory");
        return;
    }
    pv_errno = PV_OK;
    policy = model_policy_load(prover_field_name(PROVER_F_POLICY), pd->text, pd->len,
                               MODEL_FMT_AUTO, diags);
    if (policy == NULL) {
        struct prover_answer a;

        prover_answer_diags(&a, "invalid_policy", prover_field_name(PROVER_F_POLICY), diags,
                            pv_errno ? pv_errno : PV_ERR_POLICY);
        reply_answer(&a, r);
        model_diags_free(diags);
        return;
    }
    model_diags_free(diags);
    if (api->is_string) {
        json_error_t jerr;
        doc = json_loadb(api->text, api->len, JSON_REJECT_DUPLICATES, &jerr);
        if (doc == NULL) {
            snprintf(err, sizeof(err), "openapi:%d:%d: %s", jerr.line < 1 ? 1 : jerr.line,
                     jerr.column < 1 ? 1 : jerr.column, jerr.text);
            server_reply_error(r, 400, "invalid_openapi", err);
            model_policy_free(policy);
            return;
        }
        use = doc;
    }
    if (!identity_of(b, bins, &nbins, err, sizeof(err))) {
        json_decref(doc);
        model_policy_free(policy);
        server_reply_error(r, 400, "invalid_request", err);
        return;
    }
    out = server_discover(use, policy, bins, nbins, b->test_loopback, err, sizeof(err));
    json_decref(doc);
    model_policy_free(policy);
    if (out == NULL) {
        server_reply_error(
            r, pv_error_category(pv_errno) == PV_CAT_INTERNAL ? 500 : 400,
            pv_error_category(pv_errno) == PV_CAT_INTERNAL ? "internal" : "invalid_openapi", err);
        return;
    }
    memset(r, 0, sizeof(*r));
    r->status = 200;
    r->body = out;
}

/* A 400 of /v1/prove or /v1/check is the CLI's invalid object: it also says
 * "verdict": "invalid". */
static void mark_invalid(enum server_route_id route, struct server_reply *r)
{
    if (r->status == 400 && route != SERVER_R_DISCOVER && r->body != NULL &&
        json_object_get(r->body, "verdict") == NULL) {
        json_object_set_new(r->body, "verdict", json_string("invalid"));
    }
    if (r->status == 400) {
        r->verdict = route != SERVER_R_DISCOVER ? SERVER_V_INVALID : SERVER_V_NONE;
    }
}

/* long: one proof request: parse once (cached), run, map to a reply; the body and its parse share
 * one exit */
void server_route_run(struct server_worker *w, enum server_route_id route, const char *body,
                      size_t len, struct server_reply *r)
{
    static const enum prover_body_kind kinds[SERVER_R__COUNT] = {
        [SERVER_R_PROVE] = PROVER_BODY_PROVE,
        [SERVER_R_CHECK] = PROVER_BODY_CHECK,
        [SERVER_R_DISCOVER] = PROVER_BODY_DISCOVER,
    };
    struct prover_body b;
    char err[512];
    pv_result res = PV_RESULT_OK;
    enum prover_field cached;
    unsigned char key[SHA256_DIGEST_LENGTH];
    bool haskey = false;
    char *copy = NULL;
    bool fast = false;
    size_t off = 0;
    size_t n = 0;

    memset(r, 0, sizeof(*r));
    if (w == NULL) {
        server_reply_error(r, 500, "internal", "prover session unavailable");
        return;
    }
    if (route != SERVER_R_PROVE && route != SERVER_R_CHECK && route != SERVER_R_DISCOVER) {
        server_reply_error(r, 500, "internal", "not a work route");
        return;
    }
    cached = route == SERVER_R_PROVE ? PROVER_F_BASELINE : PROVER_F_BOUNDARY;
    if (route != SERVER_R_DISCOVER && prover_body_object_at(body, len, cached, &off)) {
        const struct cache_entry *e =
            cache_span_at(w, prover_field_name(cached), body + off, len - off);
        if (e != NULL) {
            memcpy(key, e->key, sizeof(key));
            n = e->nspan;
            haskey = true;
            copy = pv_malloc(len - n + 2);
        }
    }
    if (copy != NULL) {
        /* The member's value starts with the bytes of a policy an earlier
         * body carried as the same top-level member and the decoder
         * accepted: a complete JSON object, so the value is exactly those
         * bytes (the decoder's span scan stops where it stopped then), and
         * JSON validity of a member value does not depend on its
         * surroundings: only the rest of the body needs parsing. Decode a
         * copy whose span is "{}", then point every raw span back at the
         * original bytes. Any failure decodes the original body, so errors
         * read exactly as before. */
        memcpy(copy, body, off);
        memcpy(copy + off, "{}", 2);
        memcpy(copy + off + 2, body + off + n, len - off - n);
        res = prover_body_decode(kinds[route], copy, len - n + 2, w->ctx->cfg.max_timeout_ms, &b,
                                 err, sizeof(err));
        if (pv_ok(res) && (!b.f[cached].present || b.f[cached].is_string ||
                           b.f[cached].text != copy + off || b.f[cached].len != 2)) {
            prover_body_free(&b);
            res = pv_fail(PV_ERR_INTERNAL, "span");
        }
        if (pv_ok(res)) {
            for (size_t i = 0; i < PROVER_F__COUNT; i++) {
                struct prover_doc *d = &b.f[i];
                size_t at;

                if (!d->present || d->is_string) {
                    continue;
                }
                at = (size_t)(d->text - copy);
                d->text = body + (at <= off ? at : at + n - 2);
            }
            b.f[cached].len = n;
            fast = true;
        }
        free(copy);
        copy = NULL;
    }
    if (!fast) {
        res = prover_body_decode(kinds[route], body, len, w->ctx->cfg.max_timeout_ms, &b, err,
                                 sizeof(err));
    }
    if (!pv_ok(res)) {
        struct prover_answer a;

        prover_answer_body_error(&a, res, err, route != SERVER_R_DISCOVER);
        reply_answer(&a, r);
        mark_invalid(route, r);
        return;
    }
    if (route == SERVER_R_DISCOVER) {
        route_discover(&b, r);
    } else {
        bool same = haskey && b.f[cached].present && !b.f[cached].is_string &&
                    b.f[cached].text == body + off && b.f[cached].len == n;

        route_job(w, route, &b, same ? key : NULL, r);
    }
    prover_body_free(&b);
    if (r->body == NULL) {
        server_reply_error(r, 500, "internal", "out of memory");
    }
    mark_invalid(route, r);
}
