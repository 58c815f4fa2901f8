/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_tools.c - host-side tool servers and the tools a sandbox may call
 *
 * Host-side API servers (docs/advisor.md#tools) are registered per sandbox
 * with their base URL and OpenAPI document (`proviso run` does it for the
 * servers it starts). For a sandbox, a revision of its effective policy and
 * a caller identity (the binary and its ancestors, as the proxy identified
 * them), the advisor asks the prover service's POST /v1/discover which of
 * each server's operations that identity can reach, and answers the
 * reachable ones as tool definitions and as pruned OpenAPI documents. The
 * proxy serves that to agents at http://policy.local/v1/tools and
 * /v1/openapi, for the revision it enforces, so an agent only learns
 * endpoints it can reach and learns new ones as soon as a revision that
 * allows them is loaded.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/inputs/inputs.h"
#include "advisor/store/store.h"
#include "common/pv_log.h"
#include "model/model.h"

#define SERVER_NAME_MAX 63
#define SERVERS_MAX 32

/* A base URL discovery can decide: http(s)://HOST[:PORT][/PATH], no user
 * info, no query or fragment. */
static bool base_url_ok(const char *u)
{
    const char *rest = strncmp(u, "http://", 7) == 0    ? u + 7
                       : strncmp(u, "https://", 8) == 0 ? u + 8
                                                        : NULL;

    if (rest == NULL || rest[0] == '\0' || rest[0] == '/' || strlen(u) > 512) {
        return false;
    }
    for (const char *p = rest; *p != '\0'; p++) {
        if (*p == '@' || *p == '?' || *p == '#' || (unsigned char)*p <= 0x20 || *p == 0x7f) {
            return false;
        }
    }
    return true;
}

static bool server_name_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > SERVER_NAME_MAX) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) {
            return false;
        }
    }
    return true;
}

/* ===========================================================================
 * Registering servers
 * ========================================================================= */

static pv_result room_for(struct advisor_worker *w, int64_t sandbox, const char *name);

/* PUT /v1/sandboxes/{name}/servers/{server} {"base_url", "openapi"} */
pv_result advisor_server_put(struct advisor_worker *w, const char *sandbox, const char *name,
                             const char *body_text, size_t len, struct advisor_view *out)
{
    json_error_t je;
    json_t *body = json_loadb(body_text, len, JSON_REJECT_DUPLICATES, &je);
    const char *url = json_string_value(json_object_get(body, "base_url"));
    json_t *doc = json_object_get(body, "openapi");
    const char *ver = json_string_value(json_object_get(doc, "openapi"));
    char *text = NULL;
    char blob[65];
    char line[1024];
    int64_t id = 0;
    struct store_server sv;
    pv_result res;

    memset(out, 0, sizeof(*out));
    if (!server_name_ok(name)) {
        res = advisor_view_refuse(out, ADVISOR_REFUSED_BAD_REQUEST,
                                  "server name must be 1-63 characters of a-z, 0-9, '-', '_'");
        goto out;
    }
    if (url == NULL || !base_url_ok(url)) {
        res = advisor_view_refuse(out, ADVISOR_REFUSED_BAD_REQUEST,
                                  "base_url must be http://HOST[:PORT][/PATH] or https://... (no "
                                  "user info, query or fragment)");
        goto out;
    }
    if (!json_is_object(doc) || ver == NULL || strncmp(ver, "3.", 2) != 0 ||
        !json_is_object(json_object_get(doc, "paths"))) {
        res = advisor_view_refuse(out, ADVISOR_REFUSED_INVALID_OPENAPI,
                                  "openapi must be an OpenAPI 3 document (an object with "
                                  "\"openapi\": \"3.x\" and \"paths\")");
        goto out;
    }
    text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
    if (text == NULL) {
        res = advisor_view_refuse(out, ADVISOR_REFUSED_INTERNAL, "out of memory");
        goto out;
    }
    snprintf(line, sizeof(line),
             "CONFIG:SERVER [INFO] gateway registered tool server %s at %s for sandbox %s", name,
             url, sandbox);
    res = store_begin(w->st);
    if (pv_ok(res)) {
        res = advisor_sandbox_id(w, sandbox, &id);
    }
    if (pv_ok(res)) {
        res = room_for(w, id, name);
    }
    if (pv_ok(res)) {
        res = store_blob_put(w->st, text, strlen(text), blob);
    }
    if (pv_ok(res)) {
        memset(&sv, 0, sizeof(sv));
        sv.name = PV_UNCONST(name);
        sv.base_url = PV_UNCONST(url);
        sv.openapi_blob = blob;
        sv.created_ms = advisor_now_ms();
        res = store_server_put(w->st, id, &sv);
    }
    if (pv_ok(res)) {
        res = advisor_event(
            w->st, sandbox, "CONFIG:SERVER", line,
            json_pack("{s:s,s:s,s:s}", "server", name, "base_url", url, "openapi_blob", blob));
    }
    res = pv_ok(res) ? store_commit(w->st) : res;
    if (!pv_ok(res)) {
        store_rollback(w->st);
        if (res.err == PV_ERR_LIMIT) {
            res = advisor_view_refuse(out, ADVISOR_REFUSED_TOO_MANY_SERVERS,
                                      "a sandbox has at most 32 tool servers; remove one first");
        } else {
            res = advisor_view_store_error(out, res, "sandbox");
        }
        goto out;
    }
    pv_log_info("OCSF %s", line);
    advisor_changed(w->a);
    out->json =
        json_pack("{s:s,s:s,s:s,s:I}", "name", name, "base_url", url, "openapi_sha256", blob,
                  "paths", (json_int_t)json_object_size(json_object_get(doc, "paths")));
    if (out->json == NULL) {
        res = advisor_view_refuse(out, ADVISOR_REFUSED_INTERNAL, "out of memory");
    }
out:
    free(text);
    json_decref(body);
    return res;
}

/* DELETE /v1/sandboxes/{name}/servers/{server} */
pv_result advisor_server_delete(struct advisor_worker *w, const char *sandbox, const char *name,
                                struct advisor_view *out)
{
    char line[512];
    int64_t id = 0;
    pv_result res;

    memset(out, 0, sizeof(*out));
    res = store_begin(w->st);
    snprintf(line, sizeof(line),
             "CONFIG:SERVER [INFO] gateway removed tool server %s from sandbox %s", name, sandbox);
    if (pv_ok(res)) {
        res = advisor_sandbox_id(w, sandbox, &id);
    }
    if (pv_ok(res)) {
        res = store_server_delete(w->st, id, name);
    }
    if (pv_ok(res)) {
        res = advisor_event(w->st, sandbox, "CONFIG:SERVER", line,
                            json_pack("{s:s,s:b}", "server", name, "removed", 1));
    }
    res = pv_ok(res) ? store_commit(w->st) : res;
    if (!pv_ok(res)) {
        store_rollback(w->st);
        return advisor_view_store_error(out, res, id == 0 ? "sandbox" : "server");
    }
    pv_log_info("OCSF %s", line);
    advisor_changed(w->a);
    out->json = json_pack("{s:s,s:b}", "name", name, "deleted", 1);
    return PV_RESULT_OK;
}

struct server_list {
    struct store_server v[SERVERS_MAX];
    size_t n;
    bool truncated;
    bool oom;
};

static void collect(void *arg, const struct store_server *sv)
{
    struct server_list *l = arg;
    struct store_server *d;

    if (l->n == SERVERS_MAX) {
        l->truncated = true;
        return;
    }
    d = &l->v[l->n];
    d->name = pv_strdup(sv->name);
    d->base_url = pv_strdup(sv->base_url);
    d->openapi_blob = pv_strdup(sv->openapi_blob);
    d->created_ms = sv->created_ms;
    l->n++;
    l->oom |= d->name == NULL || d->base_url == NULL || d->openapi_blob == NULL;
}

static void list_clear(struct server_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        store_server_clear(&l->v[i]);
    }
    l->n = 0;
}

/* PV_ERR_LIMIT when the sandbox has SERVERS_MAX servers and 'name' is not
 * one of them: discovery answers for every server or for none. */
static pv_result room_for(struct advisor_worker *w, int64_t sandbox, const char *name)
{
    struct server_list *l = pv_calloc(1, sizeof(*l));
    bool known = false;
    pv_result r;

    PV_ENSURE(l != NULL, PV_ERR_NOMEM);
    r = store_server_each(w->st, sandbox, collect, l);
    for (size_t i = 0; i < l->n; i++) {
        known |= strcmp(l->v[i].name, name) == 0;
    }
    if (pv_ok(r) && (l->oom || l->truncated || (l->n >= SERVERS_MAX && !known))) {
        r = pv_fail(l->oom ? PV_ERR_NOMEM : PV_ERR_LIMIT, __func__);
    }
    list_clear(l);
    free(l);
    return r;
}

/* GET /v1/sandboxes/{name}/servers */
pv_result advisor_server_list(struct advisor_worker *w, const char *sandbox,
                              struct advisor_view *out)
{
    struct server_list *l = pv_calloc(1, sizeof(*l));
    json_t *arr = json_array();
    int64_t id = 0;
    pv_result res =
        l != NULL ? advisor_sandbox_id(w, sandbox, &id) : pv_fail(PV_ERR_NOMEM, __func__);

    memset(out, 0, sizeof(*out));
    if (pv_ok(res)) {
        res = store_server_each(w->st, id, collect, l);
    }
    if (!pv_ok(res) || l->oom || arr == NULL) {
        res = advisor_view_store_error(out, pv_ok(res) ? pv_fail(PV_ERR_NOMEM, __func__) : res,
                                       "sandbox");
        json_decref(arr);
    } else {
        for (size_t i = 0; i < l->n; i++) {
            json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:I}", "name", l->v[i].name,
                                                 "base_url", l->v[i].base_url, "openapi_sha256",
                                                 l->v[i].openapi_blob, "created_ms",
                                                 (json_int_t)l->v[i].created_ms));
        }
        out->json = json_pack("{s:s,s:o}", "sandbox", sandbox, "servers", arr);
    }
    if (l != NULL) {
        list_clear(l);
    }
    free(l);
    return res;
}

/* ===========================================================================
 * The tools an identity may call
 * ========================================================================= */

/* The server's document with its servers replaced by the registered base
 * URL, at every level (document, path item, operation): discovery decides
 * the address the agent will really use, whatever the server says of
 * itself. New reference. */
static json_t *doc_for(struct advisor_worker *w, const struct store_server *sv)
{
    char *text = store_blob_get(w->st, sv->openapi_blob, NULL);
    json_t *doc = text != NULL ? json_loads(text, 0, NULL) : NULL;

    const char *path;
    json_t *item;

    free(text);
    if (doc == NULL) {
        return NULL;
    }
    json_object_set_new(doc, "servers", json_pack("[{s:s}]", "url", sv->base_url));
    /* path-item and operation servers win over the document's: drop them */
    json_object_foreach(json_object_get(doc, "paths"), path, item)
    {
        const char *k;
        json_t *op;
        (void)json_object_del(item, "servers");
        json_object_foreach(item, k, op)
        {
            if (json_is_object(op)) {
                (void)json_object_del(op, "servers");
            }
        }
    }
    return doc;
}

/* Ask the prover which operations of one server the identity reaches;
 * append its tools (names prefixed "SERVER_") to 'tools' and its pruned
 * document to 'docs'. */
static bool discover_one(struct advisor_worker *w, const struct store_server *sv,
                         const char *policy, const json_t *ident, json_t *tools, json_t *docs,
                         json_t *summary, char *err, size_t errlen)
{
    json_t *doc = doc_for(w, sv);
    json_t *body;
    json_t *answer = NULL;
    char *text;
    long status = 0;
    const json_t *t;
    size_t i;
    pv_result r;

    if (doc == NULL) {
        snprintf(err, errlen, "server %s: its OpenAPI document cannot be read", sv->name);
        return false;
    }
    /* an advisor in test mode decides as its proxies do (loopback hosts) */
    body = json_pack("{s:o,s:s,s:O,s:O,s:{s:b}}", "openapi", doc, "policy", policy, "binary",
                     json_object_get(ident, "binary"), "ancestors",
                     json_object_get(ident, "ancestors"), "options", "test_allow_loopback",
                     w->a->cfg.test_allow_loopback);
    text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (text == NULL) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    r = advisor_prover_post(w->pc, "/v1/discover", text, strlen(text), &status, &answer, err,
                            errlen);
    free(text);
    if (!pv_ok(r) || status != 200 || !json_is_object(answer)) {
        if (pv_ok(r)) {
            const char *d = json_string_value(json_object_get(answer, "detail"));
            snprintf(err, errlen, "server %s: the prover answered %ld%s%s", sv->name, status,
                     d != NULL ? ": " : "", d != NULL ? d : "");
        }
        json_decref(answer);
        return false;
    }
    json_array_foreach(json_object_get(answer, "tools"), i, t)
    {
        json_t *c = json_deep_copy(t);
        char name[160];
        snprintf(name, sizeof(name), "%s_%s", sv->name,
                 json_string_value(json_object_get(t, "name")) != NULL
                     ? json_string_value(json_object_get(t, "name"))
                     : "tool");
        json_object_set_new(c, "name", json_string(name));
        json_object_set_new(c, "server", json_string(sv->name));
        json_array_append_new(tools, c);
    }
    json_object_set(docs, sv->name, json_object_get(answer, "openapi"));
    json_array_append_new(summary,
                          json_pack("{s:s,s:s,s:O,s:O}", "name", sv->name, "base_url", sv->base_url,
                                    "operations_total", json_object_get(answer, "operations_total"),
                                    "operations_reachable",
                                    json_object_get(answer, "operations_reachable")));
    json_decref(answer);
    return true;
}

/* The identity of a tools query: {"binary", "ancestors": [...]} from the
 * body (POST, the proxy) or ?binary= (GET, a reviewer). NULL with a
 * refusal in 'out'. */
static json_t *identity_of(const struct advisor_tools_query *q, json_t *body,
                           struct advisor_view *out)
{
    const char *bin = body != NULL ? json_string_value(json_object_get(body, "binary")) : q->binary;
    const json_t *anc = body != NULL ? json_object_get(body, "ancestors") : NULL;
    const json_t *v;
    size_t i;

    if (bin == NULL || bin[0] != '/') {
        (void)advisor_view_refuse(out, ADVISOR_REFUSED_BAD_REQUEST,
                                  "binary: an absolute path is required");
        return NULL;
    }
    if (anc != NULL && (!json_is_array(anc) || json_array_size(anc) >= MODEL_MAX_IDENTITY)) {
        (void)advisor_view_refuse(out, ADVISOR_REFUSED_BAD_REQUEST,
                                  "ancestors: a list of absolute paths");
        return NULL;
    }
    json_array_foreach(anc, i, v)
    {
        if (!json_is_string(v) || json_string_value(v)[0] != '/') {
            (void)advisor_view_refuse(out, ADVISOR_REFUSED_BAD_REQUEST,
                                      "ancestors: a list of absolute paths");
            return NULL;
        }
    }
    v = json_pack("{s:s,s:O}", "binary", bin, "ancestors", anc != NULL ? anc : json_array());
    if (v == NULL) {
        (void)advisor_view_refuse(out, ADVISOR_REFUSED_INTERNAL, "out of memory");
    }
    return PV_UNCONST(v);
}

/* GET|POST /v1/sandboxes/{name}/tools: the reachable tools of every server
 * registered for the sandbox, for one revision (default: the latest) and
 * one identity. */
pv_result advisor_tools(struct advisor_worker *w, const char *sandbox,
                        const struct advisor_tools_query *q, struct advisor_view *out)
{
    json_t *body = NULL;
    json_t *ident = NULL;
    json_t *tools = json_array();
    json_t *docs = json_object();
    json_t *summary = json_array();
    struct server_list *l = pv_calloc(1, sizeof(*l));
    struct store_revision rev;
    char *yaml = NULL;
    char err[1024] = "";
    int64_t id = 0;
    json_int_t want = -1;
    pv_result res = pv_fail(PV_ERR_USAGE, __func__);

    memset(out, 0, sizeof(*out));
    memset(&rev, 0, sizeof(rev));
    if (q->post) {
        json_error_t je;
        body = json_loadb(q->body, q->len, JSON_REJECT_DUPLICATES, &je);
        if (!json_is_object(body)) {
            res = advisor_view_refuse(out, ADVISOR_REFUSED_INVALID_JSON, "expected a JSON object");
            goto out;
        }
        if (json_is_integer(json_object_get(body, "revision"))) {
            want = json_integer_value(json_object_get(body, "revision"));
        }
    } else if (q->revision != NULL) {
        want = (json_int_t)strtoll(q->revision, NULL, 10);
    }
    if ((ident = identity_of(q, body, out)) == NULL) {
        goto out;
    }
    if (l == NULL || tools == NULL || docs == NULL || summary == NULL) {
        res = advisor_view_refuse(out, ADVISOR_REFUSED_INTERNAL, "out of memory");
        goto out;
    }
    res = advisor_sandbox_id(w, sandbox, &id);
    if (pv_ok(res)) {
        res = want > 0 ? store_rev_get(w->st, id, (int64_t)want, &rev)
                       : store_rev_latest(w->st, id, &rev);
    }
    if (pv_ok(res)) {
        res = store_server_each(w->st, id, collect, l);
    }
    if (!pv_ok(res) || l->oom) {
        res = advisor_view_store_error(out, pv_ok(res) ? pv_fail(PV_ERR_NOMEM, __func__) : res,
                                       id == 0 ? "sandbox" : "revision");
        goto out;
    }
    yaml = advisor_rev_text(w->st, sandbox, &rev, NULL);
    if (yaml == NULL) {
        res = advisor_view_refuse(
            out, pv_errno == PV_ERR_CONFLICT ? ADVISOR_REFUSED_UNBACKED : ADVISOR_REFUSED_INTERNAL,
            "the revision cannot be read");
        goto out;
    }
    for (size_t i = 0; i < l->n; i++) {
        if (!discover_one(w, &l->v[i], yaml, ident, tools, docs, summary, err, sizeof(err))) {
            /* fail closed: no partial list that could hide what is denied */
            res = advisor_view_refuse(out, ADVISOR_REFUSED_DISCOVERY, "%s", err);
            goto out;
        }
    }
    out->json = json_pack("{s:s,s:I,s:s,s:O,s:O,s:O,s:O,s:b}", "sandbox", sandbox, "revision",
                          (json_int_t)rev.rev, "hash", rev.hash, "identity", ident, "tools", tools,
                          "openapi", docs, "servers", summary, "truncated", l->truncated);
    res = out->json != NULL ? PV_RESULT_OK
                            : advisor_view_refuse(out, ADVISOR_REFUSED_INTERNAL, "out of memory");
out:
    store_revision_clear(&rev);
    free(yaml);
    if (l != NULL) {
        list_clear(l);
    }
    free(l);
    json_decref(ident);
    json_decref(body);
    json_decref(tools);
    json_decref(docs);
    json_decref(summary);
    return res;
}
