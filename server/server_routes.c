/* SPDX-License-Identifier: Apache-2.0 */
/* server_routes.c - the work routes: /v1/prove, /v1/check, /v1/discover
 *
 * Each handler runs on a worker thread with that thread's prover session. It
 * decodes the body (server_body.c), loads every document with the model's
 * loaders under the field's name (so diagnostics read "candidate:12:7: ..."),
 * runs the prover and returns prover_result_to_json() unchanged: the HTTP
 * answer is byte-for-byte the object `proviso prove --format json` prints.
 * Invalid input is a 400 whose body is prover_invalid_json() (the CLI's
 * invalid object: {"verdict":"invalid","error","detail"}) plus the full
 * "diagnostics" list. Errors are mapped from pv_error categories in one table.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "model/model.h"
#include "prover/prover.h"
#include "server/server.h"

#define MAX_DIAGNOSTICS 50

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
    struct model_policy *empty; /* the empty policy, a proposal's default base */
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

    PV_GUARD_PTR(ctx);
    ctx->cfg = *cfg;
    diags = model_diags_new();
    if (diags == NULL) {
        free(ctx);
        PV_BAIL(PV_ERR_NOMEM);
    }
    ctx->reg = model_registry_embedded(diags);
    model_diags_free(diags);
    if (ctx->reg == NULL) {
        server_ctx_free(ctx);
        PV_BAIL(PV_ERR_INTERNAL);
    }
    api = server_api_openapi();
    tools = api != NULL ? server_openapi_tools(api) : NULL;
    if (tools != NULL) {
        ctx->openapi_text = httpd_json_line(api, &ctx->openapi_len);
        ctx->tools_text = httpd_json_line(tools, &ctx->tools_len);
    }
    json_decref(api);
    json_decref(tools);
    if (ctx->openapi_text == NULL || ctx->tools_text == NULL) {
        server_ctx_free(ctx);
        PV_BAIL(PV_ERR_INTERNAL);
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
    w->empty = model_policy_new_empty();
    if (w->ps == NULL || w->empty == NULL) {
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
    model_policy_free(w->empty);
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

/* pv_error category -> (status, code). */
static const struct {
    enum pv_category cat;
    unsigned status;
    const char *code;
} cat_map[] = {
    {PV_CAT_OK, 500, "internal"},         {PV_CAT_USAGE, 400, "invalid_request"},
    {PV_CAT_PARSE, 400, "invalid_policy"}, {PV_CAT_POLICY, 400, "invalid_policy"},
    {PV_CAT_SOLVER, 500, "internal"},     {PV_CAT_IO, 500, "internal"},
    {PV_CAT_PROTO, 400, "invalid_request"}, {PV_CAT_INTERNAL, 500, "internal"},
};

/* A loader failed: 400 with the model's diagnostics, or 500 when it failed
 * for a reason of ours (out of memory). */
static void reply_diags(struct server_reply *r, const char *field, const char *code,
                        struct model_diags *diags, int err)
{
    size_t n = diags != NULL ? model_diags_count(diags) : 0;
    char detail[512];
    json_t *list;

    if (n == 0) {
        enum pv_category cat = pv_error_category(err);
        for (size_t i = 0; i < PV_ARRAY_LEN(cat_map); i++) {
            if (cat_map[i].cat == cat) {
                snprintf(detail, sizeof(detail), "%s: %s", field, pv_strerror(err));
                server_reply_error(r, cat_map[i].status,
                                   cat_map[i].status == 400 ? code : cat_map[i].code, detail);
                r->verdict = cat_map[i].status == 400 ? SERVER_V_INVALID : SERVER_V_NONE;
                return;
            }
        }
        server_reply_error(r, 500, "internal", field);
        return;
    }
    memset(r, 0, sizeof(*r));
    r->status = 400;
    r->verdict = SERVER_V_INVALID;
    r->body = prover_invalid_json(code, model_diags_line(diags, 0));
    list = json_array();
    for (size_t i = 0; i < n && i < MAX_DIAGNOSTICS && list != NULL; i++) {
        json_array_append_new(list, json_string(model_diags_line(diags, i)));
    }
    if (r->body == NULL || list == NULL ||
        json_object_set_new(r->body, "diagnostics", list) != 0) {
        json_decref(r->body);
        server_reply_error(r, 500, "internal", "out of memory");
    }
}

static void reply_body_error(struct server_reply *r, pv_result res, const char *msg)
{
    switch (pv_error_category(res.err)) {
    case PV_CAT_PARSE:
        server_reply_error(r, 400, "invalid_json", msg);
        r->verdict = SERVER_V_INVALID;
        return;
    case PV_CAT_USAGE:
        server_reply_error(r, 400, "invalid_request", msg);
        r->verdict = SERVER_V_INVALID;
        return;
    case PV_CAT_OK:
    case PV_CAT_POLICY:
    case PV_CAT_SOLVER:
    case PV_CAT_IO:
    case PV_CAT_PROTO:
    case PV_CAT_INTERNAL:
        break;
    }
    server_reply_error(r, 500, "internal", msg);
}

/* ===========================================================================
 * Loading the documents of a body
 * ========================================================================= */

struct loaded {
    struct model_diags *diags;
    const struct model_policy *baseline; /* borrowed from the worker's cache */
    struct model_policy *candidate;
    const struct model_policy *boundary; /* borrowed from the worker's cache */
    struct model_policy *uncached; /* a baseline or boundary the cache could not take */
    struct model_proposal *proposal;
    struct model_credset *creds;
    const unsigned char *prekey; /* the cached field's key, when already computed */
};

static void loaded_free(struct loaded *l)
{
    model_policy_free(l->candidate);
    model_policy_free(l->uncached);
    model_proposal_free(l->proposal);
    model_credset_free(l->creds);
    model_diags_free(l->diags);
    memset(l, 0, sizeof(*l));
}

/* Load policy field 'f'; on failure fill 'r' and return NULL. */
static struct model_policy *load_policy(const struct server_body *b, enum server_field f,
                                        struct loaded *l, struct server_reply *r)
{
    const struct server_doc *d = &b->f[f];
    struct model_policy *p;

    pv_errno = PV_OK;
    p = model_policy_load(server_field_name(f), d->text, d->len, MODEL_FMT_AUTO, l->diags);
    if (p == NULL) {
        reply_diags(r, server_field_name(f), "invalid_policy", l->diags,
                    pv_errno ? pv_errno : PV_ERR_POLICY);
    }
    return p;
}

/* The cache key of field 'name' holding the bytes 'text': SHA-256 of the
 * name, a NUL and the bytes. False when hashing failed. */
static bool cache_key(const char *name, const char *text, size_t len,
                      unsigned char key[SHA256_DIGEST_LENGTH])
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    bool hashed = md != NULL && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 &&
                  EVP_DigestUpdate(md, name, strlen(name) + 1) == 1 &&
                  EVP_DigestUpdate(md, text, len) == 1 &&
                  EVP_DigestFinal_ex(md, key, NULL) == 1;

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

/* Load policy field 'f' through the worker's cache. 'prekey', when not NULL,
 * is the field's cache key already computed over the same bytes. Borrowed
 * (valid until the next cached load on this worker); NULL with 'r' filled on
 * error. */
static const struct model_policy *load_cached(struct server_worker *w, const struct server_body *b,
                                              enum server_field f, const unsigned char *prekey,
                                              struct loaded *l, struct server_reply *r)
{
    const struct server_doc *d = &b->f[f];
    const char *name = server_field_name(f);
    unsigned char key[SHA256_DIGEST_LENGTH];
    struct cache_entry *slot = &w->cache[0];
    struct model_policy *p;
    bool hashed = true;

    if (prekey != NULL) {
        memcpy(key, prekey, sizeof(key));
    } else {
        hashed = cache_key(name, d->text, d->len, key);
    }
    if (!hashed) {
        /* No key, no cache: an owned load the request frees. */
        l->uncached = load_policy(b, f, l, r);
        return l->uncached;
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
    p = load_policy(b, f, l, r);
    if (p == NULL) {
        return NULL;
    }
    model_policy_free(slot->p);
    free(slot->span);
    slot->span = NULL;
    slot->nspan = 0;
    if (!d->is_string) {
        /* Failing to keep the span only costs the fast body decode. */
        slot->span = pv_malloc(d->len);
        if (slot->span != NULL) {
            memcpy(slot->span, d->text, d->len);
            slot->nspan = d->len;
        }
    }
    memcpy(slot->key, key, sizeof(key));
    slot->name = name;
    slot->p = p;
    slot->used = w->tick;
    return p;
}

static bool load_creds(const struct server_body *b, struct loaded *l, struct server_reply *r)
{
    const struct server_doc *d = &b->f[SERVER_F_CREDENTIALS];

    if (!d->present) {
        return true;
    }
    pv_errno = PV_OK;
    l->creds = model_credset_load("credentials", d->text, d->len, l->diags);
    if (l->creds == NULL) {
        reply_diags(r, "credentials", "invalid_credentials", l->diags,
                    pv_errno ? pv_errno : PV_ERR_PARSE);
        return false;
    }
    return true;
}

/* The candidate of /v1/prove: a policy, a proposal merged into the baseline,
 * or (audit mode) a single policy. */
static bool load_change(struct server_worker *w, const struct server_body *b, struct loaded *l,
                        enum prover_mode *mode, struct server_reply *r)
{
    if (b->f[SERVER_F_CANDIDATE].present) {
        *mode = PROVER_DELTA;
        l->candidate = load_policy(b, SERVER_F_CANDIDATE, l, r);
        return l->candidate != NULL;
    }
    if (b->f[SERVER_F_POLICY].present) {
        if (b->f[SERVER_F_BASELINE].present) {
            server_reply_error(r, 400, "invalid_request",
                               "policy: audits one policy against the empty baseline; send "
                               "candidate to compare with a baseline");
            r->verdict = SERVER_V_INVALID;
            return false;
        }
        *mode = PROVER_AUDIT;
        l->candidate = load_policy(b, SERVER_F_POLICY, l, r);
        return l->candidate != NULL;
    }
    *mode = PROVER_DELTA;
    {
        const struct server_doc *d = &b->f[SERVER_F_PROPOSAL];
        pv_errno = PV_OK;
        l->proposal = model_proposal_load("proposal", d->text, d->len, l->diags);
        if (l->proposal == NULL) {
            reply_diags(r, "proposal", "invalid_proposal", l->diags,
                        pv_errno ? pv_errno : PV_ERR_PARSE);
            return false;
        }
        pv_errno = PV_OK;
        l->candidate = model_policy_merge(l->baseline != NULL ? l->baseline : w->empty,
                                          l->proposal, true, l->diags);
        if (l->candidate == NULL) {
            reply_diags(r, "proposal", "invalid_candidate", l->diags,
                        pv_errno ? pv_errno : PV_ERR_POLICY);
            return false;
        }
    }
    return true;
}

/* ===========================================================================
 * Proving
 * ========================================================================= */

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

static void run_prover(struct server_worker *w, const struct prover_input *in,
                       struct server_reply *r)
{
    struct prover_result *res = prover_run(w->ps, in);

    if (res == NULL) {
        server_reply_error(r, 500, "internal", "out of memory");
        return;
    }
    memset(r, 0, sizeof(*r));
    r->status = 200;
    r->verdict = map_verdict(res->verdict);
    r->solver_timeout = res->verdict == PROVER_VERDICT_UNKNOWN && res->reason != NULL &&
                        strstr(res->reason, "timeout") != NULL;
    r->body = prover_result_to_json(res);
    prover_result_free(res);
    if (r->body == NULL) {
        server_reply_error(r, 500, "internal", "out of memory");
    }
}

static unsigned timeout_of(const struct server_worker *w, const struct server_body *b)
{
    return b->timeout_ms != 0 ? (unsigned)b->timeout_ms : w->ctx->cfg.timeout_ms;
}

static void route_prove(struct server_worker *w, const struct server_body *b, struct loaded *l,
                        struct server_reply *r)
{
    struct prover_input in;

    memset(&in, 0, sizeof(in));
    if (b->f[SERVER_F_BASELINE].present) {
        l->baseline = load_cached(w, b, SERVER_F_BASELINE, l->prekey, l, r);
        if (l->baseline == NULL) {
            return;
        }
    }
    if (!load_change(w, b, l, &in.mode, r) || !load_creds(b, l, r)) {
        return;
    }
    in.baseline = l->baseline;
    in.candidate = l->candidate;
    in.creds = l->creds;
    in.reg = w->ctx->reg;
    in.timeout_ms = timeout_of(w, b);
    run_prover(w, &in, r);
}

static void route_check(struct server_worker *w, const struct server_body *b, struct loaded *l,
                        struct server_reply *r)
{
    struct prover_input in;

    memset(&in, 0, sizeof(in));
    /* As `proviso check`: boundary first, no credentials, no registry. */
    l->boundary = load_cached(w, b, SERVER_F_BOUNDARY, l->prekey, l, r);
    if (l->boundary == NULL) {
        return;
    }
    l->candidate = load_policy(b, SERVER_F_CANDIDATE, l, r);
    if (l->candidate == NULL) {
        return;
    }
    in.baseline = l->boundary;
    in.candidate = l->candidate;
    in.mode = PROVER_CHECK;
    in.timeout_ms = timeout_of(w, b);
    run_prover(w, &in, r);
}

static void route_discover(const struct server_body *b, struct loaded *l,
                           struct server_reply *r)
{
    const struct server_doc *api = &b->f[SERVER_F_OPENAPI];
    json_t *doc = NULL;
    const json_t *use = api->value;
    char err[512];
    json_t *out;

    l->candidate = load_policy(b, SERVER_F_POLICY, l, r);
    if (l->candidate == NULL) {
        return;
    }
    if (api->is_string) {
        json_error_t jerr;
        doc = json_loadb(api->text, api->len, JSON_REJECT_DUPLICATES, &jerr);
        if (doc == NULL) {
            snprintf(err, sizeof(err), "openapi:%d:%d: %s", jerr.line < 1 ? 1 : jerr.line,
                     jerr.column < 1 ? 1 : jerr.column, jerr.text);
            server_reply_error(r, 400, "invalid_openapi", err);
            return;
        }
        use = doc;
    }
    out = server_discover(use, l->candidate, b->f[SERVER_F_BINARY].text, err, sizeof(err));
    json_decref(doc);
    if (out == NULL) {
        server_reply_error(r, pv_error_category(pv_errno) == PV_CAT_INTERNAL ? 500 : 400,
                           pv_error_category(pv_errno) == PV_CAT_INTERNAL ? "internal"
                                                                          : "invalid_openapi",
                           err);
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

void server_route_run(struct server_worker *w, enum server_route_id route, const char *body,
                      size_t len, struct server_reply *r)
{
    static const enum server_body_kind kinds[SERVER_R__COUNT] = {
        [SERVER_R_PROVE] = SERVER_BODY_PROVE,
        [SERVER_R_CHECK] = SERVER_BODY_CHECK,
        [SERVER_R_DISCOVER] = SERVER_BODY_DISCOVER,
    };
    struct server_body b;
    struct loaded l;
    char err[512];
    pv_result res = PV_RESULT_OK;
    enum server_field cached;
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
    cached = route == SERVER_R_PROVE ? SERVER_F_BASELINE : SERVER_F_BOUNDARY;
    if (route != SERVER_R_DISCOVER && server_body_object_at(body, len, cached, &off)) {
        const struct cache_entry *e =
            cache_span_at(w, server_field_name(cached), body + off, len - off);
        if (e != NULL) {
            memcpy(key, e->key, sizeof(key));
            n = e->nspan;
            haskey = true;
            copy = malloc(len - n + 2);
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
        res = server_body_decode(kinds[route], copy, len - n + 2, w->ctx->cfg.max_timeout_ms,
                                 &b, err, sizeof(err));
        if (pv_ok(res) && (!b.f[cached].present || b.f[cached].is_string ||
                           b.f[cached].text != copy + off || b.f[cached].len != 2)) {
            server_body_free(&b);
            res = pv_fail(PV_ERR_INTERNAL, "span");
        }
        if (pv_ok(res)) {
            for (size_t i = 0; i < SERVER_F__COUNT; i++) {
                struct server_doc *d = &b.f[i];
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
        res = server_body_decode(kinds[route], body, len, w->ctx->cfg.max_timeout_ms, &b, err,
                                 sizeof(err));
    }
    if (!pv_ok(res)) {
        reply_body_error(r, res, err);
        mark_invalid(route, r);
        return;
    }
    memset(&l, 0, sizeof(l));
    l.diags = model_diags_new();
    if (l.diags == NULL) {
        server_body_free(&b);
        server_reply_error(r, 500, "internal", "out of memory");
        return;
    }
    if (haskey && b.f[cached].present && !b.f[cached].is_string &&
        b.f[cached].text == body + off && b.f[cached].len == n) {
        l.prekey = key;
    }
    switch (route) {
    case SERVER_R_PROVE:
        route_prove(w, &b, &l, r);
        break;
    case SERVER_R_CHECK:
        route_check(w, &b, &l, r);
        break;
    case SERVER_R_DISCOVER:
        route_discover(&b, &l, r);
        break;
    case SERVER_R_HEALTHZ:
    case SERVER_R_METRICS:
    case SERVER_R_OPENAPI:
    case SERVER_R_TOOLS:
    case SERVER_R_UNKNOWN:
    case SERVER_R__COUNT:
        break;
    }
    loaded_free(&l);
    server_body_free(&b);
    if (r->body == NULL) {
        server_reply_error(r, 500, "internal", "out of memory");
    }
    mark_invalid(route, r);
}
