/* SPDX-License-Identifier: Apache-2.0 */
/* model_rpc.c - reading JSON-RPC 2.0 and MCP requests into calls
 *
 * What a `json-rpc` or `mcp` unit decides is the list of calls one HTTP
 * request carries (docs/semantics.md#rpc-read). The body is parsed once,
 * with jansson, refusing duplicate keys, and every message is checked
 * strictly: a message the reader would have to guess about (an id of a
 * type the server might read otherwise, a member it does not know, a name
 * with a control or format character, a tools/call without a readable
 * tool) is refused, never passed on, so the proxy and the server cannot
 * read one body two ways. The MCP method profile (the methods
 * allow_all_known_mcp_methods admits) is a table here, per MCP version.
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/pv.h"
#include "common/pv_text.h"
#include "model/model_int.h"
#include "model/model_rpc.h"
#include "model/model_rpc_int.h"

/* ---------------------------------------------------------------------------
 * The MCP method profile (docs/semantics.md#rpc-profile)
 * ------------------------------------------------------------------------- */

static const char *const mcp_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

/* Client-to-server requests and notifications of the versions above (each
 * entry names the first version that has it), then the transport's calls.
 * Server-to-client methods (sampling/createMessage, roots/list,
 * elicitation/create, notifications/message, ...) are not here: a client
 * answers those with a response (rpc.response) and never sends them. */
static const char *const mcp_known[] = {
    "initialize",                       /* 2024-11-05 */
    "ping",                             /* 2024-11-05 */
    "tools/list",                       /* 2024-11-05 */
    "tools/call",                       /* 2024-11-05 */
    "resources/list",                   /* 2024-11-05 */
    "resources/templates/list",         /* 2024-11-05 */
    "resources/read",                   /* 2024-11-05 */
    "resources/subscribe",              /* 2024-11-05 */
    "resources/unsubscribe",            /* 2024-11-05 */
    "prompts/list",                     /* 2024-11-05 */
    "prompts/get",                      /* 2024-11-05 */
    "logging/setLevel",                 /* 2024-11-05 */
    "completion/complete",              /* 2024-11-05 */
    "tasks/get",                        /* 2025-11-25 */
    "tasks/result",                     /* 2025-11-25 */
    "tasks/list",                       /* 2025-11-25 */
    "tasks/cancel",                     /* 2025-11-25 */
    "notifications/initialized",        /* 2024-11-05 */
    "notifications/cancelled",          /* 2024-11-05 */
    "notifications/progress",           /* 2024-11-05 */
    "notifications/roots/list_changed", /* 2024-11-05 */
    "notifications/tasks/status",       /* 2025-11-25 */
    MODEL_RPC_M_RESPONSE,
    MODEL_RPC_M_STREAM,
    MODEL_RPC_M_END,
};

bool model_rpc_mcp_known(const char *m)
{
    if (m == NULL) {
        return false;
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(mcp_known); i++) {
        if (strcmp(mcp_known[i], m) == 0) {
            return true;
        }
    }
    return false;
}

const char *model_rpc_mcp_known_at(size_t i)
{
    return i < PV_ARRAY_LEN(mcp_known) ? mcp_known[i] : NULL;
}

const char *model_rpc_mcp_version_at(size_t i)
{
    return i < PV_ARRAY_LEN(mcp_versions) ? mcp_versions[i] : NULL;
}

/* ---------------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------------- */

static const char *const kind_names[] = {"request", "notification", "response", "stream", "end"};

const char *model_rpc_kind_name(enum model_rpc_kind k)
{
    return (size_t)k < PV_ARRAY_LEN(kind_names) ? kind_names[k] : "?";
}

bool model_rpc_kind_parse(const char *s, enum model_rpc_kind *out)
{
    for (size_t i = 0; s != NULL && i < PV_ARRAY_LEN(kind_names); i++) {
        if (strcmp(s, kind_names[i]) == 0) {
            *out = (enum model_rpc_kind)i;
            return true;
        }
    }
    return false;
}

bool model_rpc_tool_name_strict(const char *name, size_t len)
{
    if (len == 0 || len > 128) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        char ch = name[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-';
        if (!ok) {
            return false;
        }
    }
    return true;
}

/* The code point of the UTF-8 sequence at s[i] (valid: jansson checked),
 * its length in *n. */
static unsigned utf8_at(const unsigned char *s, size_t i, size_t *n)
{
    unsigned c = s[i];

    if (c < 0x80) {
        *n = 1;
        return c;
    }
    if (c < 0xE0) {
        *n = 2;
        return (c & 0x1Fu) << 6 | (s[i + 1] & 0x3Fu);
    }
    if (c < 0xF0) {
        *n = 3;
        return (c & 0x0Fu) << 12 | (s[i + 1] & 0x3Fu) << 6 | (s[i + 2] & 0x3Fu);
    }
    *n = 4;
    return (c & 0x07u) << 18 | (s[i + 1] & 0x3Fu) << 12 | (s[i + 2] & 0x3Fu) << 6 |
           (s[i + 3] & 0x3Fu);
}

/*= docs/semantics.md#rpc-read
 *# a method or tool name that is empty, longer than 256 bytes, or holds a
 *# control character (C0, DEL, C1) or a format character (Unicode General
 *# Category Cf: the project's one table, `pv_unicode_is_format` in
 *# common/pv_text.c, which the advisor's text checks use too) */
bool model_rpc_name_ok(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;

    if (len == 0 || len > MODEL_RPC_MAX_NAME) {
        return false;
    }
    for (size_t i = 0; i < len;) {
        size_t n;
        unsigned c;
        if (u[i] >= 0x20 && u[i] < 0x7F) {
            i++;
            continue;
        }
        c = utf8_at(u, i, &n);
        if (c < 0x20 || (c >= 0x7F && c <= 0x9F) || pv_unicode_is_format(c)) {
            return false;
        }
        i += n;
    }
    return true;
}

size_t model_rpc_name_escape(const char *s, char *buf, size_t cap)
{
    size_t n = 0;

    if (cap == 0) {
        return 0;
    }
    for (const unsigned char *u = (const unsigned char *)s; *u != '\0' && n + 5 < cap; u++) {
        if (*u > 0x20 && *u < 0x7F && *u != '\\' && *u != '"' && *u != '[' && *u != ']' &&
            *u != '=') {
            buf[n++] = (char)*u;
        } else {
            n += (size_t)snprintf(buf + n, cap - n, "\\x%02X", *u);
        }
    }
    buf[n] = '\0';
    return n;
}

void model_rpc_call_describe(const struct model_rpc_call *c, char *buf, size_t len)
{
    size_t n;

    if (len == 0) {
        return;
    }
    n = (size_t)snprintf(buf, len, "%s ", model_rpc_kind_name(c->kind));
    if (n >= len) {
        return;
    }
    n += model_rpc_name_escape(c->method != NULL ? c->method : "", buf + n, len - n);
    if (c->tool != NULL && n + 6 < len) {
        memcpy(buf + n, " tool ", 7);
        n += 6;
        (void)model_rpc_name_escape(c->tool, buf + n, len - n);
    }
}

/* ---------------------------------------------------------------------------
 * Messages
 * ------------------------------------------------------------------------- */

struct reader {
    bool mcp, strict;
    char *err;
    size_t errlen;
    size_t item; /* 1-based batch position, 0 outside a batch */
};

static pv_result refuse(struct reader *r, int code, const char *what)
{
    if (r->errlen == 0) {
        return pv_fail(code, __func__);
    }
    if (r->item > 0) {
        snprintf(r->err, r->errlen, "batch item %zu: %s", r->item, what);
    } else {
        snprintf(r->err, r->errlen, "%s", what);
    }
    return pv_fail(code, __func__);
}

/* At most MODEL_RPC_MAX_DEPTH nested arrays and objects ('depth': the
 * containers around 'v'). */
static bool depth_ok(json_t *v, int depth)
{
    const char *k;
    json_t *x;
    size_t i;

    if (!json_is_object(v) && !json_is_array(v)) {
        return true;
    }
    if (depth >= MODEL_RPC_MAX_DEPTH) {
        return false;
    }
    if (json_is_object(v)) {
        json_object_foreach(v, k, x)
        {
            if (!depth_ok(x, depth + 1)) {
                return false;
            }
        }
    } else {
        json_array_foreach(v, i, x)
        {
            if (!depth_ok(x, depth + 1)) {
                return false;
            }
        }
    }
    return true;
}

/*= docs/semantics.md#rpc-read
 *# An `id` is a string or an integer; `null`, a fraction, a boolean, an
 *# array or an object is refused */
static pv_result read_id(struct reader *r, const json_t *id, struct model_rpc_call *c)
{
    char *txt;
    size_t n;

    if (!json_is_string(id) && !json_is_integer(id)) {
        return refuse(r, PV_ERR_PARSE, "'id' must be a string or an integer");
    }
    txt = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT);
    if (txt == NULL) {
        PV_BAIL(PV_ERR_NOMEM);
    }
    n = strlen(txt);
    if (n > MODEL_RPC_MAX_ID) {
        free(txt);
        return refuse(r, PV_ERR_TOOBIG, "'id' longer than 128 bytes");
    }
    memcpy(c->id, txt, n + 1);
    free(txt);
    return PV_RESULT_OK;
}

/* tools/call: the tool is params.name (docs/semantics.md#rpc-read). */
static pv_result read_tool(struct reader *r, const json_t *params, struct model_rpc_call *c)
{
    const json_t *name = json_object_get(params, "name");
    const json_t *args = json_object_get(params, "arguments");
    const char *s;
    const char *key;
    const json_t *v;
    size_t n;

    /*= docs/semantics.md#rpc-read
     *# a member of `params` whose name is `name` in other letter case
     *# (`Name`, `NAME`) is refused */
    json_object_foreach(PV_UNCONST(params), key, v)
    {
        (void)v;
        if (strcasecmp(key, "name") == 0 && strcmp(key, "name") != 0) {
            return refuse(r, PV_ERR_PARSE,
                          "tools/call params holds a member named name in other letter case (a "
                          "server that folds "
                          "case would read its tool from it)");
        }
    }
    if (!json_is_string(name)) {
        return refuse(r, PV_ERR_PARSE, "tools/call without a string params.name");
    }
    s = json_string_value(name);
    n = json_string_length(name);
    if (strlen(s) != n || !model_rpc_name_ok(s, n)) {
        return refuse(r, PV_ERR_PARSE,
                      "tools/call params.name is empty, longer than 256 bytes, or holds a "
                      "control or format character");
    }
    /*= docs/semantics.md#rpc-read
     *# with `strict_tool_names` (the default), a tool name must match
     *# `^[A-Za-z0-9_.-]{1,128}$` */
    if (r->strict && !model_rpc_tool_name_strict(s, n)) {
        return refuse(r, PV_ERR_PARSE,
                      "MCP tool name must match ^[A-Za-z0-9_.-]{1,128}$ when strict_tool_names "
                      "is enabled");
    }
    if (args != NULL && !json_is_object(args)) {
        return refuse(r, PV_ERR_PARSE, "tools/call params.arguments must be an object");
    }
    c->tool = s;
    return PV_RESULT_OK;
}

static pv_result read_response(struct reader *r, json_t *m, struct model_rpc_call *c)
{
    json_t *res = json_object_get(m, "result");
    json_t *err = json_object_get(m, "error");
    json_t *id = json_object_get(m, "id");

    if (res != NULL && err != NULL) {
        return refuse(r, PV_ERR_PARSE, "a response with both result and error");
    }
    if (json_object_get(m, "params") != NULL) {
        return refuse(r, PV_ERR_PARSE, "a response with params");
    }
    if (id == NULL) {
        return refuse(r, PV_ERR_PARSE, "a response without an id");
    }
    if (err != NULL) {
        json_t *code = json_object_get(err, "code");
        json_t *msg = json_object_get(err, "message");
        if (!json_is_object(err) || !json_is_integer(code) || !json_is_string(msg)) {
            return refuse(r, PV_ERR_PARSE,
                          "a response error must be an object with an integer code and a "
                          "string message");
        }
    }
    /*= docs/semantics.md#rpc-read
     *# a response (a message with `result` or `error`) on a `json-rpc`
     *# endpoint */
    if (!r->mcp) {
        return refuse(r, PV_ERR_PARSE,
                      "JSON-RPC response frames are not permitted from client to server");
    }
    c->kind = MODEL_RPC_RESPONSE;
    c->method = MODEL_RPC_M_RESPONSE;
    return read_id(r, id, c);
}

static pv_result read_message(struct reader *r, json_t *m, struct model_rpc_call *c)
{
    static const char *const members[] = {"jsonrpc", "id", "method", "params", "result", "error"};
    const char *k;
    json_t *v;
    json_t *ver = json_object_get(m, "jsonrpc");
    json_t *method = json_object_get(m, "method");
    json_t *params = json_object_get(m, "params");
    json_t *id = json_object_get(m, "id");
    const char *ms;
    size_t mlen;

    memset(c, 0, sizeof(*c));
    if (!json_is_object(m)) {
        return refuse(r, PV_ERR_PARSE, "a message must be a JSON object");
    }
    /*= docs/semantics.md#rpc-read
     *# a member other than `jsonrpc`, `id`, `method`, `params`, `result`
     *# and `error` */
    json_object_foreach(m, k, v)
    {
        bool known = false;
        for (size_t i = 0; i < PV_ARRAY_LEN(members); i++) {
            known = known || strcmp(k, members[i]) == 0;
        }
        if (!known || strlen(k) != json_object_iter_key_len(json_object_key_to_iter(k))) {
            char what[100];
            snprintf(what, sizeof(what), "unknown member '%.64s'", k);
            return refuse(r, PV_ERR_PARSE, what);
        }
    }
    if (!json_is_string(ver) || strcmp(json_string_value(ver), "2.0") != 0 ||
        json_string_length(ver) != 3) {
        return refuse(r, PV_ERR_PARSE, "'jsonrpc' must be the string \"2.0\"");
    }
    if (method == NULL) {
        if (json_object_get(m, "result") == NULL && json_object_get(m, "error") == NULL) {
            return refuse(r, PV_ERR_PARSE, "a message with neither method nor result/error");
        }
        return read_response(r, m, c);
    }
    if (json_object_get(m, "result") != NULL || json_object_get(m, "error") != NULL) {
        return refuse(r, PV_ERR_PARSE, "a message with both method and result/error");
    }
    if (!json_is_string(method)) {
        return refuse(r, PV_ERR_PARSE, "'method' must be a string");
    }
    ms = json_string_value(method);
    mlen = json_string_length(method);
    if (strlen(ms) != mlen || !model_rpc_name_ok(ms, mlen)) {
        return refuse(r, PV_ERR_PARSE,
                      "'method' is empty, longer than 256 bytes, or holds a control or format "
                      "character");
    }
    /*= docs/semantics.md#rpc-read
     *# a method whose name begins `rpc.` (JSON-RPC 2.0 reserves those) */
    if (strncmp(ms, "rpc.", 4) == 0) {
        return refuse(r, PV_ERR_PARSE, "method names beginning 'rpc.' are reserved");
    }
    /*= docs/semantics.md#rpc-read
     *# `params` that is neither an object nor an array (on `mcp`: not an
     *# object) */
    if (params != NULL && !json_is_object(params) && (r->mcp || !json_is_array(params))) {
        return refuse(r, PV_ERR_PARSE,
                      r->mcp ? "'params' must be an object"
                             : "'params' must be an object or an array");
    }
    c->kind = id != NULL ? MODEL_RPC_REQUEST : MODEL_RPC_NOTIFICATION;
    c->method = ms;
    if (id != NULL) {
        PV_GUARD(read_id(r, id, c));
    }
    /*= docs/semantics.md#rpc-read
     *# On `mcp`, a `tools/call` - a request or a notification alike - names
     *# its tool in `params.name` */
    if (r->mcp && strcmp(ms, "tools/call") == 0) {
        return read_tool(r, params, c);
    }
    return PV_RESULT_OK;
}

void model_rpc_calls_clear(struct model_rpc_calls *c)
{
    if (c == NULL) {
        return;
    }
    free(c->calls);
    if (c->storage_free != NULL) {
        c->storage_free(c->storage);
    } else {
        json_decref((json_t *)c->storage);
    }
    memset(c, 0, sizeof(*c));
}

/*= docs/semantics.md#rpc-read
 *# Two requests of one batch with the same `id` */
static pv_result unique_ids(struct reader *r, const struct model_rpc_calls *out)
{
    for (size_t i = 0; i < out->ncalls; i++) {
        for (size_t j = i + 1; out->calls[i].kind == MODEL_RPC_REQUEST && j < out->ncalls; j++) {
            if (out->calls[j].kind == MODEL_RPC_REQUEST &&
                strcmp(out->calls[i].id, out->calls[j].id) == 0) {
                r->item = 0;
                char what[200];
                snprintf(what, sizeof(what), "two requests of the batch share the id %.130s",
                         out->calls[i].id);
                return refuse(r, PV_ERR_PARSE, what);
            }
        }
    }
    return PV_RESULT_OK;
}

static pv_result read_body(const char *body, size_t len, bool mcp, bool strict,
                           struct model_rpc_calls *out, char *err, size_t errlen)
{
    struct reader r = {mcp, strict, err, errlen, 0};
    json_error_t je;
    json_t *doc;
    size_t n;

    memset(out, 0, sizeof(*out));
    if (errlen > 0) {
        err[0] = '\0';
    }
    /*= docs/semantics.md#rpc-read
     *# The body is one JSON text (UTF-8, no byte order mark, no duplicate
     *# member names, nothing after it) */
    /* jansson's buffered lexer skips a raw NUL byte, which no JSON text
     * holds and another parser would refuse: refused here first */
    if (memchr(body, '\0', len) != NULL) {
        if (errlen > 0) {
            snprintf(err, errlen, "invalid JSON: a NUL byte");
        }
        PV_BAIL(PV_ERR_PARSE);
    }
    doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    if (doc == NULL) {
        if (errlen > 0) {
            snprintf(err, errlen, "invalid JSON at byte %d: %s", je.position, je.text);
        }
        PV_BAIL(PV_ERR_PARSE);
    }
    out->storage = doc;
    if (!depth_ok(doc, 0)) {
        return refuse(&r, PV_ERR_TOOBIG, "JSON nested deeper than 64 levels");
    }
    out->batch = json_is_array(doc);
    n = out->batch ? json_array_size(doc) : 1;
    if (n == 0) {
        return refuse(&r, PV_ERR_PARSE, "empty batch");
    }
    if (n > MODEL_RPC_MAX_BATCH) {
        return refuse(&r, PV_ERR_TOOBIG, "a batch of more than 256 messages");
    }
    out->calls = pv_calloc(n, sizeof(*out->calls));
    if (out->calls == NULL) {
        PV_BAIL(PV_ERR_NOMEM);
    }
    for (size_t i = 0; i < n; i++) {
        r.item = out->batch ? i + 1 : 0;
        PV_GUARD(read_message(&r, out->batch ? json_array_get(doc, i) : doc, &out->calls[i]));
        out->ncalls++;
    }
    return unique_ids(&r, out);
}

pv_result model_rpc_read_body_tree(const char *body, size_t len, bool mcp, bool strict,
                                   struct model_rpc_calls *out, char *err, size_t errlen)
{
    pv_result r = read_body(body, len, mcp, strict, out, err, errlen);

    if (!pv_ok(r)) {
        model_rpc_calls_clear(out); /* a refused body yields no call at all */
    }
    return r;
}

pv_result model_rpc_read_body(const char *body, size_t len, bool mcp, bool strict,
                              struct model_rpc_calls *out, char *err, size_t errlen)
{
    struct model_rpc_scan_opts o = {mcp, strict};
    struct reader r = {mcp, strict, err, errlen, 0};

    if (errlen > 0) {
        err[0] = '\0';
    }
    switch (model_rpc_scan_body(body, len, &o, out, err, errlen)) {
    case SCAN_OK:
        if (!pv_ok(unique_ids(&r, out))) {
            model_rpc_calls_clear(out);
            PV_BAIL(PV_ERR_PARSE);
        }
        return PV_RESULT_OK;
    case SCAN_REFUSED:
        model_rpc_calls_clear(out);
        PV_BAIL(PV_ERR_PARSE);
    case SCAN_NOMEM:
        model_rpc_calls_clear(out);
        PV_BAIL(PV_ERR_NOMEM);
    default:
        break;
    }
    return model_rpc_read_body_tree(body, len, mcp, strict, out, err, errlen);
}

/* Whether Accept parameters 'p' ('n' bytes, after the media range) give
 * the range a weight of zero ("q=0", "q=0.0", ...: not acceptable). */
static bool weight_zero(const char *p, size_t n)
{
    for (size_t i = 0; i + 2 <= n; i++) {
        if ((p[i] == 'q' || p[i] == 'Q') && p[i + 1] == '=' &&
            (i == 0 || p[i - 1] == ';' || p[i - 1] == ' ' || p[i - 1] == '\t')) {
            size_t j = i + 2;
            if (j >= n || p[j] != '0') {
                return false;
            }
            for (j++; j < n && (p[j] == '0' || p[j] == '.'); j++) {
            }
            return j >= n || p[j] == ';' || p[j] == ' ' || p[j] == '\t';
        }
    }
    return false;
}

/* Does the Accept value list text/event-stream (case-insensitive; a
 * wildcard does not count, nor a weight of zero)? */
static bool accepts_sse(const char *a)
{
    static const char want[] = "text/event-stream";
    const char *p = a;

    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, ',');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
        const char *q = p;
        size_t m;

        while (n > 0 && (*q == ' ' || *q == '\t')) {
            q++;
            n--;
        }
        m = 0;
        while (m < n && q[m] != ';' && q[m] != ' ' && q[m] != '\t') {
            m++;
        }
        if (m == sizeof(want) - 1 && strncasecmp(q, want, m) == 0 && !weight_zero(q + m, n - m)) {
            return true;
        }
        p = end != NULL ? end + 1 : NULL;
    }
    return false;
}

static pv_result transport_call(struct model_rpc_calls *out, enum model_rpc_kind k, const char *m)
{
    out->calls = pv_calloc(1, sizeof(*out->calls));
    if (out->calls == NULL) {
        PV_BAIL(PV_ERR_NOMEM);
    }
    out->calls[0].kind = k;
    out->calls[0].method = m;
    out->ncalls = 1;
    return PV_RESULT_OK;
}

pv_result model_rpc_read(const struct model_rpc_http *in, struct model_rpc_calls *out, char *err,
                         size_t errlen)
{
    const char *m = in->method != NULL ? in->method : "";

    memset(out, 0, sizeof(*out));
    if (errlen > 0) {
        err[0] = '\0';
    }
    /*= docs/semantics.md#rpc-read
     *# A request that asks for a protocol upgrade (an `Upgrade` field) is
     *# not a JSON-RPC exchange */
    if (in->upgrade) {
        if (errlen > 0) {
            snprintf(err, errlen,
                     "%.32s with Upgrade carries no JSON-RPC call (MCP runs over "
                     "POST and an event stream, not a WebSocket)",
                     m);
        }
        PV_BAIL(PV_ERR_PROTO);
    }
    /*= docs/semantics.md#rpc-read
     *# a `Content-Type` that does not parse, names a parameter twice, or
     *# has a `charset` other than UTF-8 is refused */
    {
        struct pv_ctype ct;
        char why[192];
        if (!pv_ctype_body_utf8(in->content_type, &ct, why, sizeof(why))) {
            if (errlen > 0) {
                snprintf(err, errlen, "%s", why);
            }
            PV_BAIL(PV_ERR_PARSE);
        }
    }
    if (strcmp(m, "POST") == 0) {
        return model_rpc_read_body(in->body != NULL ? in->body : "", in->body_len, in->mcp,
                                   in->strict_tools, out, err, errlen);
    }
    /*= docs/semantics.md#rpc-read
     *# On `mcp`, a `GET` without a body whose `Accept` lists
     *# `text/event-stream` is the call `rpc.stream`, and a `DELETE` without a
     *# body the call `rpc.end` */
    if (in->mcp && !in->has_body && strcmp(m, "GET") == 0 && in->accept != NULL &&
        accepts_sse(in->accept)) {
        return transport_call(out, MODEL_RPC_STREAM, MODEL_RPC_M_STREAM);
    }
    if (in->mcp && !in->has_body && strcmp(m, "DELETE") == 0) {
        return transport_call(out, MODEL_RPC_END, MODEL_RPC_M_END);
    }
    if (errlen > 0) {
        snprintf(err, errlen, "%.32s %s carries no JSON-RPC call", m,
                 in->has_body ? "with a body" : "without a body");
        if (in->mcp && strcmp(m, "GET") == 0 && !in->has_body) {
            snprintf(err, errlen, "GET without Accept: text/event-stream carries no MCP call");
        }
    }
    PV_BAIL(PV_ERR_PROTO);
}
