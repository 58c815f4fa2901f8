/* SPDX-License-Identifier: Apache-2.0 */
/* model_graphql_http.c - the operations of a GraphQL-over-HTTP request
 *
 * Turns one HTTP request (method, target, Content-Type, body) into the
 * operations it would run (docs/proxy.md#graphql): a GET's query parameters,
 * a POST's application/json object or batch array, or an
 * application/graphql document. A request that names a persisted query by
 * hash alone yields an operation with only persisted_id set; a query sent
 * together with a hash must hash to it, since a server may run either.
 * Anything this file cannot read exactly is refused with a reason: unknown
 * body members, duplicate parameters, other content types or methods.
 */
#include "model/model_graphql.h"
#include "common/pv_text.h"
#include "model/model_int.h"

#include <jansson.h>
#include <stdarg.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

__attribute__((format(printf, 4, 5))) static pv_result refuse(int err, char *msg, size_t len,
                                                              const char *fmt, ...)
{
    if (msg != NULL && len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, len, fmt, ap);
        va_end(ap);
    }
    return pv_fail(err, "model_graphql_http.c");
}

static void json_decref_p(json_t **j)
{
    json_decref(*j);
}

size_t model_endpoint_gql_max_body(const struct model_endpoint *e)
{
    if (e == NULL || e->graphql_max_body_bytes == 0) {
        return MODEL_GQL_DEFAULT_MAX_BODY;
    }
    return e->graphql_max_body_bytes;
}

bool model_endpoint_is_graphql(const struct model_endpoint *e)
{
    return e != NULL && e->proto == MODEL_PROTO_GRAPHQL;
}

void model_gql_ops_clear(struct model_gql_ops *ops)
{
    if (ops == NULL) {
        return;
    }
    for (size_t i = 0; i < ops->nops; i++) {
        model_gql_op_clear(&ops->ops[i]);
    }
    free(ops->ops);
    memset(ops, 0, sizeof(*ops));
}

/* The parts of one GraphQL request, whatever carried them. */
struct gql_params {
    const char *query; /* NULL: absent */
    size_t query_len;
    const char *opname; /* NUL-terminated; NULL: absent or null */
    const char *hash;   /* extensions.persistedQuery.sha256Hash */
};

static bool is_hex64(const char *s)
{
    if (strlen(s) != 64) {
        return false;
    }
    for (size_t i = 0; i < 64; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
            return false;
        }
    }
    return true;
}

/* extensions: an object; persistedQuery, when present, an object whose
 * sha256Hash is 64 hex digits. Other extensions are not GraphQL operations
 * and are left to the server. Sets p->hash (borrowed from 'ext'). */
static pv_result read_extensions(const json_t *ext, struct gql_params *p, char *err, size_t errlen)
{
    if (ext == NULL || json_is_null(ext)) {
        return PV_RESULT_OK;
    }
    if (!json_is_object(ext)) {
        return refuse(PV_ERR_PARSE, err, errlen, "%sextensions must be a JSON object", "");
    }
    const json_t *pq = json_object_get(ext, "persistedQuery");
    if (pq == NULL) {
        return PV_RESULT_OK;
    }
    const json_t *h = json_is_object(pq) ? json_object_get(pq, "sha256Hash") : NULL;
    if (!json_is_string(h) || !is_hex64(json_string_value(h))) {
        return refuse(PV_ERR_PARSE, err, errlen,
                      "%sextensions.persistedQuery needs a sha256Hash of 64 hex digits", "");
    }
    const json_t *v = json_object_get(pq, "version");
    if (v != NULL && !(json_is_integer(v) && json_integer_value(v) == 1)) {
        return refuse(PV_ERR_PARSE, err, errlen, "%sextensions.persistedQuery.version must be 1",
                      "");
    }
    p->hash = json_string_value(h);
    return PV_RESULT_OK;
}

static pv_result hash_matches(const struct gql_params *p, char *err, size_t errlen)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    char hex[2 * EVP_MAX_MD_SIZE + 1];
    if (EVP_Digest(p->query, p->query_len, md, &mdlen, EVP_sha256(), NULL) != 1) {
        return refuse(PV_ERR_INTERNAL, err, errlen, "%ssha256 failed", "");
    }
    for (unsigned int i = 0; i < mdlen; i++) {
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    }
    if (strcasecmp(hex, p->hash) != 0) {
        return refuse(PV_ERR_PARSE, err, errlen,
                      "%sthe query does not hash to extensions.persistedQuery.sha256Hash", "");
    }
    return PV_RESULT_OK;
}

/* One operation from its parameters. */
static pv_result params_to_op(const struct gql_params *p, struct model_gql_op *op, char *err,
                              size_t errlen)
{
    if (p->query == NULL) {
        if (p->hash == NULL) {
            return refuse(PV_ERR_PARSE, err, errlen,
                          "%sno query and no persisted query hash in the request", "");
        }
        memset(op, 0, sizeof(*op));
        op->persisted_id = pv_strdup(p->hash);
        if (op->persisted_id == NULL) {
            return refuse(PV_ERR_NOMEM, err, errlen, "%sout of memory", "");
        }
        for (char *c = op->persisted_id; *c; c++) {
            if (*c >= 'A' && *c <= 'F') {
                *c = (char)(*c - 'A' + 'a');
            }
        }
        return PV_RESULT_OK;
    }
    if (p->hash != NULL) {
        PV_GUARD(hash_matches(p, err, errlen));
    }
    return model_gql_read(p->query, p->query_len, p->opname, op, err, errlen);
}

/* ==========================================================================
 * POST application/json
 * ========================================================================== */

static pv_result json_params(const json_t *o, struct gql_params *p, char *err, size_t errlen)
{
    const char *key;
    const json_t *v;
    memset(p, 0, sizeof(*p));
    if (!json_is_object(o)) {
        return refuse(PV_ERR_PARSE, err, errlen, "%sa GraphQL request must be a JSON object", "");
    }
    json_object_foreach(PV_UNCONST(o), key, v)
    {
        if (strcmp(key, "query") == 0) {
            if (json_is_null(v)) {
                continue;
            }
            if (!json_is_string(v)) {
                return refuse(PV_ERR_PARSE, err, errlen, "%squery must be a string", "");
            }
            p->query = json_string_value(v);
            p->query_len = json_string_length(v);
        } else if (strcmp(key, "operationName") == 0) {
            if (json_is_null(v)) {
                continue;
            }
            if (!json_is_string(v)) {
                return refuse(PV_ERR_PARSE, err, errlen, "%soperationName must be a string", "");
            }
            p->opname = json_string_value(v);
        } else if (strcmp(key, "variables") == 0) {
            if (!json_is_null(v) && !json_is_object(v)) {
                return refuse(PV_ERR_PARSE, err, errlen, "%svariables must be a JSON object", "");
            }
        } else if (strcmp(key, "extensions") == 0) {
            PV_GUARD(read_extensions(v, p, err, errlen));
        } else {
            /* id, doc_id, documentId...: a server may run something this
             * reader cannot see */
            return refuse(PV_ERR_PARSE, err, errlen,
                          "unknown member '%.64s' in a GraphQL request body", key);
        }
    }
    return PV_RESULT_OK;
}

static pv_result read_json_body(const struct model_gql_http *in, struct model_gql_ops *out,
                                char *err, size_t errlen)
{
    json_error_t je;
    PV_DEFER(json_t * root, json_decref_p) =
        json_loadb(in->body, in->body_len, JSON_REJECT_DUPLICATES, &je);
    if (root == NULL) {
        if (err != NULL && errlen > 0) {
            snprintf(err, errlen, "1:%d: invalid JSON body: %s", je.column, je.text);
        }
        return pv_fail(PV_ERR_PARSE, "model_graphql_http.c");
    }
    size_t n = 1;
    if (json_is_array(root)) {
        n = json_array_size(root);
        out->batch = true;
        if (n == 0) {
            return refuse(PV_ERR_PARSE, err, errlen, "%san empty batch", "");
        }
        if (n > MODEL_GQL_MAX_BATCH) {
            char num[32];
            snprintf(num, sizeof(num), "%d", MODEL_GQL_MAX_BATCH);
            return refuse(PV_ERR_TOOBIG, err, errlen, "a batch of more than %s operations", num);
        }
    }
    out->ops = pv_calloc(n, sizeof(*out->ops));
    if (out->ops == NULL) {
        return refuse(PV_ERR_NOMEM, err, errlen, "%sout of memory", "");
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *o = out->batch ? json_array_get(root, i) : root;
        struct gql_params p;
        char sub[200] = "";
        pv_result r = json_params(o, &p, sub, sizeof(sub));
        if (pv_ok(r)) {
            r = params_to_op(&p, &out->ops[i], sub, sizeof(sub));
        }
        if (!pv_ok(r)) {
            if (err != NULL && errlen > 0) {
                if (out->batch) {
                    snprintf(err, errlen, "batch element %zu: %s", i, sub);
                } else {
                    snprintf(err, errlen, "%s", sub);
                }
            }
            return r;
        }
        out->nops++;
    }
    return PV_RESULT_OK;
}

/* ==========================================================================
 * GET query parameters
 * ========================================================================== */

/* Percent-decode 'len' bytes of a query component ('+' is a space);
 * caller frees. NULL on a malformed escape or a NUL byte. */
static char *pct_decode(const char *s, size_t len)
{
    char *o = pv_malloc(len + 1);
    size_t w = 0;
    if (o == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '+') {
            c = ' ';
        } else if (c == '%') {
            static const char hx[] = "0123456789abcdef0123456789ABCDEF";
            if (len - i < 3) {
                free(o);
                return NULL;
            }
            const char *a = memchr(hx, s[i + 1], sizeof(hx) - 1);
            const char *b = memchr(hx, s[i + 2], sizeof(hx) - 1);
            if (a == NULL || b == NULL) {
                free(o);
                return NULL;
            }
            c = (char)((((a - hx) % 16) << 4) | ((b - hx) % 16));
            i += 2;
        }
        if (c == '\0') {
            free(o);
            return NULL;
        }
        o[w++] = c;
    }
    o[w] = '\0';
    return o;
}

/* The target's query string: after the first '?', to the end ('*len'
 * bytes); NULL when the target has none. */
static const char *target_query(const struct model_gql_http *in, size_t *len)
{
    const char *q = memchr(in->target, '?', in->target_len);
    *len = q != NULL ? in->target_len - (size_t)(q + 1 - in->target) : 0;
    return q != NULL ? q + 1 : NULL;
}

/* A raw ';' in the query string: Rack 2, Django before 3.2 and Go before
 * 1.17 split parameters on it as on '&', so "x=1;query=mutation..." is a
 * query parameter to them and a value of x to a reader that splits on '&'
 * only. No single reading is what every server reads: refused
 * (docs/semantics.md#query-semicolon). */
static pv_result no_raw_semicolon(const struct model_gql_http *in, char *err, size_t errlen)
{
    size_t qlen;
    const char *q = target_query(in, &qlen);
    if (q != NULL && memchr(q, ';', qlen) != NULL) {
        return refuse(PV_ERR_PARSE, err, errlen,
                      "%sa raw ';' in the query string: some servers split parameters on it "
                      "(send it as %%3B)",
                      "");
    }
    return PV_RESULT_OK;
}

struct get_parts {
    char *query, *opname, *extensions;
};

static void get_parts_free(struct get_parts *g)
{
    free(g->query);
    free(g->opname);
    free(g->extensions);
}

static pv_result read_get(const struct model_gql_http *in, struct model_gql_ops *out, char *err,
                          size_t errlen)
{
    static const char *const persisted_alternates[] = {"id", "doc_id", "documentId", "queryId"};
    PV_DEFER(struct get_parts gp, get_parts_free) = {0};
    size_t qlen;
    const char *q = target_query(in, &qlen);
    const char *s = q != NULL ? q : in->target + in->target_len;
    const char *end = s + qlen;
    PV_GUARD(no_raw_semicolon(in, err, errlen));
    while (s < end) {
        const char *amp = memchr(s, '&', (size_t)(end - s));
        const char *stop = amp != NULL ? amp : end;
        const char *eq = memchr(s, '=', (size_t)(stop - s));
        const char *kend = eq != NULL ? eq : stop;
        PV_DEFER(char *key, pv_free_p) = pct_decode(s, (size_t)(kend - s));
        char *val = eq != NULL ? pct_decode(eq + 1, (size_t)(stop - eq - 1)) : pv_strdup("");
        if (key == NULL || val == NULL) {
            free(val);
            return refuse(PV_ERR_PARSE, err, errlen, "%sa malformed query parameter", "");
        }
        char **slot = NULL;
        if (strcmp(key, "query") == 0) {
            slot = &gp.query;
        } else if (strcmp(key, "operationName") == 0) {
            slot = &gp.opname;
        } else if (strcmp(key, "extensions") == 0) {
            slot = &gp.extensions;
        }
        for (size_t i = 0; i < PV_ARRAY_LEN(persisted_alternates); i++) {
            if (strcmp(key, persisted_alternates[i]) == 0) {
                free(val);
                return refuse(PV_ERR_PARSE, err, errlen,
                              "query parameter '%s' names a document this reader cannot see",
                              persisted_alternates[i]);
            }
        }
        if (slot != NULL && *slot != NULL) {
            free(val);
            return refuse(PV_ERR_PARSE, err, errlen, "duplicate query parameter '%s'",
                          slot == &gp.query    ? "query"
                          : slot == &gp.opname ? "operationName"
                                               : "extensions");
        }
        if (slot != NULL) {
            *slot = val;
        } else {
            free(val); /* variables and others are not operations */
        }
        s = amp != NULL ? amp + 1 : end;
    }
    struct gql_params p = {gp.query, gp.query != NULL ? strlen(gp.query) : 0, gp.opname, NULL};
    PV_DEFER(json_t * ext, json_decref_p) = NULL;
    if (gp.extensions != NULL) {
        json_error_t je;
        ext = json_loads(gp.extensions, JSON_REJECT_DUPLICATES, &je);
        if (ext == NULL) {
            return refuse(PV_ERR_PARSE, err, errlen, "the extensions parameter is not JSON: %s",
                          je.text);
        }
        PV_GUARD(read_extensions(ext, &p, err, errlen));
    }
    out->ops = pv_calloc(1, sizeof(*out->ops));
    if (out->ops == NULL) {
        return refuse(PV_ERR_NOMEM, err, errlen, "%sout of memory", "");
    }
    PV_GUARD(params_to_op(&p, &out->ops[0], err, errlen));
    out->nops = 1;
    return PV_RESULT_OK;
}

/* ==========================================================================
 * Entry point
 * ========================================================================== */

/* The query parameters of a POST's target. Some servers read a parameter
 * before the body (express-graphql takes ?query= over the body's query):
 * every parameter that names a request is refused, except operationName
 * for an application/graphql body ('opname' non-NULL), which has no other
 * place for it. Unrelated parameters pass. */
static pv_result post_target_params(const struct model_gql_http *in, char **opname, char *err,
                                    size_t errlen)
{
    static const char *const named[] = {"query",   "variables", "extensions",
                                        "id",      "doc_id",    "documentId",
                                        "queryId", "hash",      "operationName"};
    size_t qlen;
    const char *q = target_query(in, &qlen);
    if (opname != NULL) {
        *opname = NULL;
    }
    if (q == NULL) {
        return PV_RESULT_OK;
    }
    PV_GUARD(no_raw_semicolon(in, err, errlen));
    const char *s = q, *end = q + qlen;
    while (s < end) {
        const char *amp = memchr(s, '&', (size_t)(end - s));
        const char *stop = amp != NULL ? amp : end;
        const char *eq = memchr(s, '=', (size_t)(stop - s));
        PV_DEFER(char *key, pv_free_p) = pct_decode(s, (size_t)((eq != NULL ? eq : stop) - s));
        if (key == NULL) {
            return refuse(PV_ERR_PARSE, err, errlen, "%sa malformed query parameter", "");
        }
        if (opname != NULL && strcmp(key, "operationName") == 0) {
            if (*opname != NULL) {
                return refuse(PV_ERR_PARSE, err, errlen, "%sduplicate operationName parameter", "");
            }
            *opname = eq != NULL ? pct_decode(eq + 1, (size_t)(stop - eq - 1)) : pv_strdup("");
            if (*opname == NULL) {
                return refuse(PV_ERR_PARSE, err, errlen, "%sa malformed operationName", "");
            }
        } else {
            for (size_t i = 0; i < PV_ARRAY_LEN(named); i++) {
                if (strcmp(key, named[i]) == 0) {
                    return refuse(PV_ERR_PARSE, err, errlen,
                                  "query parameter '%s' beside a POST body: a server may read "
                                  "either",
                                  named[i]);
                }
            }
        }
        s = amp != NULL ? amp + 1 : end;
    }
    return PV_RESULT_OK;
}

pv_result model_gql_http_read(const struct model_gql_http *in, struct model_gql_ops *out, char *err,
                              size_t errlen)
{
    PV_ENSURE_REF(in);
    PV_ENSURE_REF(out);
    memset(out, 0, sizeof(*out));
    if (err != NULL && errlen > 0) {
        err[0] = '\0';
    }
    size_t max = in->max_body ? in->max_body : MODEL_GQL_DEFAULT_MAX_BODY;
    pv_result r;
    if (in->method != NULL && strcmp(in->method, "GET") == 0) {
        if (in->body_len > 0) {
            r = refuse(PV_ERR_PROTO, err, errlen, "%sa GraphQL GET request carries no body", "");
        } else {
            r = read_get(in, out, err, errlen);
        }
    } else if (in->method != NULL && strcmp(in->method, "POST") == 0) {
        struct pv_ctype ct;
        char why[192];
        /*= docs/semantics.md#graphql-http
         *# a `charset` other than UTF-8 is refused */
        if (!pv_ctype_body_utf8(in->content_type, &ct, why, sizeof(why))) {
            r = refuse(PV_ERR_PROTO, err, errlen, "%s%s", "", why);
        } else if (in->body_len > max) {
            char num[32];
            snprintf(num, sizeof(num), "%zu", max);
            r = refuse(PV_ERR_TOOBIG, err, errlen, "body exceeds graphql_max_body_bytes (%s)", num);
        } else if (strcmp(ct.media, "application/json") == 0 ||
                   strcmp(ct.media, "application/graphql+json") == 0) {
            r = post_target_params(in, NULL, err, errlen);
            if (pv_ok(r)) {
                r = read_json_body(in, out, err, errlen);
            }
        } else if (strcmp(ct.media, "application/graphql") == 0) {
            PV_DEFER(char *opname, pv_free_p) = NULL;
            r = post_target_params(in, &opname, err, errlen);
            if (pv_ok(r)) {
                out->ops = pv_calloc(1, sizeof(*out->ops));
                r = out->ops == NULL
                        ? refuse(PV_ERR_NOMEM, err, errlen, "%sout of memory", "")
                        : model_gql_read(in->body, in->body_len, opname, out->ops, err, errlen);
                out->nops = pv_ok(r) ? 1 : 0;
            }
        } else {
            r = refuse(PV_ERR_PROTO, err, errlen,
                       "Content-Type '%.64s' is not a GraphQL request (application/json or "
                       "application/graphql)",
                       in->content_type != NULL ? in->content_type : "(none)");
        }
    } else {
        r = refuse(PV_ERR_PROTO, err, errlen, "method %.16s is not a GraphQL request (GET or POST)",
                   in->method != NULL ? in->method : "(none)");
    }
    if (!pv_ok(r)) {
        model_gql_ops_clear(out);
    }
    return r;
}
