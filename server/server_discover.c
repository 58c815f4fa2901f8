/* SPDX-License-Identifier: Apache-2.0 */
/* server_discover.c - policy-driven tool discovery over an OpenAPI 3 document
 *
 * For every operation (method, path template) of the document and every
 * server URL that applies to it (operation, then path item, then document
 * `servers`), one representative request is built: the server's host and
 * port, the server's base path followed by the template with each `{param}`
 * replaced by the segment "x1". That request is decided with model_decide()
 * for the given binary. An operation is *reachable* when at least one of its
 * servers allows its representative request. This is a concrete check of one
 * request per template, not a proof over every parameter value: a policy
 * whose path glob names a literal segment (`/repos/acme/...`) is not matched
 * by "x1" and the operation is reported unreachable, and a deny rule on one
 * specific value is not seen. docs/api.md says so.
 *
 * The answer is the document cut down to reachable operations, the same
 * operations as tools.json entries, and the per-operation evidence.
 * server_openapi_tools() builds the tool list without a policy (used for this
 * service's own GET /tools.json).
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/model.h"
#include "server/server.h"

#define MAX_OPERATIONS 10000
#define REF_DEPTH 16
#define REF_BUDGET 20000
/* Inlined nodes for one whole document: a small document whose many
 * operations each fan out through $refs must not cost minutes and
 * gigabytes per query; past it the $refs stay as they are. */
#define DOC_REF_BUDGET 200000
#define PARAM_VALUE "x1"

static const char *const http_methods[] = {"get",     "put",  "post",  "delete",
                                           "options", "head", "patch", "trace"};

struct op {
    const char *path;
    const char *method; /* lower case, from http_methods */
    const json_t *item;
    const json_t *op;
    const json_t *servers; /* array or NULL */
};

typedef int (*op_fn)(const struct op *o, void *arg);

/* The operation's method as HTTP spells it ("get" -> "GET"). */
static void upper_method(const struct op *o, char out[16])
{
    size_t i;
    for (i = 0; o->method[i] != '\0' && i + 1 < 16; i++) {
        out[i] = (char)toupper((unsigned char)o->method[i]);
    }
    out[i] = '\0';
}

/* Call 'fn' for every operation, in document order. Returns -1 on a malformed
 * document (message in 'err'), else the first non-zero 'fn' result or 0. */
static int walk_ops(const json_t *doc, op_fn fn, void *arg, char *err, size_t errlen)
{
    const json_t *paths;
    const json_t *gservers;
    const char *path;
    const json_t *item;
    size_t count = 0;

    if (!json_is_object(doc)) {
        snprintf(err, errlen, "openapi: must be an OpenAPI 3 object");
        return -1;
    }
    {
        const json_t *ver = json_object_get(doc, "openapi");
        if (!json_is_string(ver) || strncmp(json_string_value(ver), "3.", 2) != 0) {
            snprintf(err, errlen, "openapi: not an OpenAPI 3 document (\"openapi\": \"3.x\")");
            return -1;
        }
    }
    paths = json_object_get(doc, "paths");
    if (!json_is_object(paths)) {
        snprintf(err, errlen, "openapi.paths: must be an object");
        return -1;
    }
    gservers = json_object_get(doc, "servers");
    json_object_foreach((json_t *)PV_UNCONST(paths), path, item)
    {
        const json_t *pservers;
        if (path[0] != '/') {
            snprintf(err, errlen, "openapi.paths: path \"%.80s\" does not start with '/'", path);
            return -1;
        }
        if (!json_is_object(item)) {
            snprintf(err, errlen, "openapi.paths[\"%.80s\"]: must be an object", path);
            return -1;
        }
        pservers = json_object_get(item, "servers");
        for (size_t m = 0; m < PV_ARRAY_LEN(http_methods); m++) {
            const json_t *op = json_object_get(item, http_methods[m]);
            const json_t *oservers;
            struct op o;
            int rc;
            if (op == NULL) {
                continue;
            }
            if (!json_is_object(op)) {
                snprintf(err, errlen, "openapi.paths[\"%.80s\"].%s: must be an object", path,
                         http_methods[m]);
                return -1;
            }
            if (++count > MAX_OPERATIONS) {
                snprintf(err, errlen, "openapi: more than %d operations", MAX_OPERATIONS);
                return -1;
            }
            oservers = json_object_get(op, "servers");
            o.path = path;
            o.method = http_methods[m];
            o.item = item;
            o.op = op;
            o.servers = json_is_array(oservers) && json_array_size(oservers) > 0   ? oservers
                        : json_is_array(pservers) && json_array_size(pservers) > 0 ? pservers
                        : json_is_array(gservers)                                  ? gservers
                                                                                   : NULL;
            rc = fn(&o, arg);
            if (rc != 0) {
                return rc;
            }
        }
    }
    return 0;
}

/* ===========================================================================
 * $ref inlining (local references only, bounded)
 * ========================================================================= */

/* Resolve a local JSON pointer "#/a/b" in 'root'. Borrowed or NULL. */
static const json_t *resolve_pointer(const json_t *root, const char *ref)
{
    const json_t *cur = root;
    const char *p;

    if (strncmp(ref, "#/", 2) != 0) {
        return NULL;
    }
    p = ref + 2;
    while (cur != NULL) {
        char tok[256];
        size_t n = 0;
        while (*p != '\0' && *p != '/' && n + 1 < sizeof(tok)) {
            if (p[0] == '~' && p[1] == '0') {
                tok[n++] = '~';
                p += 2;
            } else if (p[0] == '~' && p[1] == '1') {
                tok[n++] = '/';
                p += 2;
            } else {
                tok[n++] = *p++;
            }
        }
        tok[n] = '\0';
        if (*p != '\0' && *p != '/') {
            return NULL; /* token too long */
        }
        if (json_is_object(cur)) {
            cur = json_object_get(cur, tok);
        } else if (json_is_array(cur)) {
            uint64_t idx;
            if (!pv_ok(pv_parse_u64(tok, n, SIZE_MAX, &idx))) {
                return NULL;
            }
            cur = json_array_get(cur, (size_t)idx);
        } else {
            return NULL;
        }
        if (*p == '\0') {
            return cur;
        }
        p++;
    }
    return NULL;
}

/* A copy of 'v' with local "$ref" objects replaced by their targets, up to
 * REF_DEPTH levels and REF_BUDGET nodes; past the bounds the $ref stays.
 * New reference, NULL on NOMEM. */
static json_t *inline_refs(const json_t *root, const json_t *v, int depth, size_t *budget)
{
    if (*budget == 0) {
        return json_incref((json_t *)PV_UNCONST(v));
    }
    (*budget)--;
    if (json_is_object(v)) {
        const json_t *ref = json_object_get(v, "$ref");
        const char *k;
        const json_t *x;
        json_t *out;
        if (json_is_string(ref) && depth < REF_DEPTH) {
            const json_t *target = resolve_pointer(root, json_string_value(ref));
            if (target != NULL) {
                return inline_refs(root, target, depth + 1, budget);
            }
        }
        out = json_object();
        if (out == NULL) {
            return NULL;
        }
        json_object_foreach((json_t *)PV_UNCONST(v), k, x)
        {
            json_t *c = inline_refs(root, x, depth, budget);
            if (c == NULL || json_object_set_new(out, k, c) != 0) {
                json_decref(out);
                return NULL;
            }
        }
        return out;
    }
    if (json_is_array(v)) {
        json_t *out = json_array();
        size_t i;
        const json_t *x;
        if (out == NULL) {
            return NULL;
        }
        json_array_foreach((json_t *)PV_UNCONST(v), i, x)
        {
            json_t *c = inline_refs(root, x, depth, budget);
            if (c == NULL || json_array_append_new(out, c) != 0) {
                json_decref(out);
                return NULL;
            }
        }
        return out;
    }
    return json_incref((json_t *)PV_UNCONST(v));
}

/* Follow a "$ref" on an object (parameters, request bodies). Borrowed. */
static const json_t *deref(const json_t *root, const json_t *v)
{
    for (int i = 0; i < REF_DEPTH && json_is_object(v); i++) {
        const json_t *ref = json_object_get(v, "$ref");
        const json_t *t;
        if (!json_is_string(ref)) {
            return v;
        }
        t = resolve_pointer(root, json_string_value(ref));
        if (t == NULL) {
            return v;
        }
        v = t;
    }
    return v;
}

/* ===========================================================================
 * Tools
 * ========================================================================= */

static void add_param(const json_t *root, const json_t *p, json_t *props, json_t *required,
                      size_t *budget)
{
    const json_t *name = json_object_get(p, "name");
    const json_t *in = json_object_get(p, "in");
    const json_t *schema = json_object_get(p, "schema");
    const json_t *desc = json_object_get(p, "description");
    json_t *s;

    if (!json_is_string(name) || !json_is_string(in)) {
        return;
    }
    s = json_is_object(schema) ? inline_refs(root, schema, 0, budget)
                               : json_pack("{s:s}", "type", "string");
    if (s == NULL) {
        return;
    }
    if (json_is_object(s) && json_is_string(desc) && json_object_get(s, "description") == NULL) {
        /* 's' may share nodes with the document: copy before adding a key. */
        json_t *c = json_copy(s);
        json_decref(s);
        s = c;
        if (s != NULL) {
            json_object_set(s, "description", (json_t *)PV_UNCONST(desc));
        }
    }
    if (s == NULL) {
        return;
    }
    json_object_set_new(props, json_string_value(name), s);
    if (json_is_true(json_object_get(p, "required")) ||
        strcmp(json_string_value(in), "path") == 0) {
        json_array_append_new(required, json_string(json_string_value(name)));
    }
}

static void add_params(const json_t *root, const json_t *list, const json_t *override,
                       json_t *props, json_t *required, size_t *budget)
{
    size_t i;
    const json_t *p;

    if (!json_is_array(list)) {
        return;
    }
    json_array_foreach((json_t *)PV_UNCONST(list), i, p)
    {
        const json_t *rp = deref(root, p);
        if (!json_is_object(rp)) {
            continue;
        }
        if (override != NULL) {
            /* A path-level parameter is replaced by an operation parameter of
             * the same name and location. */
            size_t j;
            const json_t *q;
            bool shadowed = false;
            json_array_foreach((json_t *)PV_UNCONST(override), j, q)
            {
                const json_t *rq = deref(root, q);
                if (json_is_object(rq) &&
                    json_equal(json_object_get(rq, "name"), json_object_get(rp, "name")) &&
                    json_equal(json_object_get(rq, "in"), json_object_get(rp, "in"))) {
                    shadowed = true;
                    break;
                }
            }
            if (shadowed) {
                continue;
            }
        }
        add_param(root, rp, props, required, budget);
    }
}

static json_t *input_schema(const json_t *root, const struct op *o, size_t *doc_budget)
{
    json_t *props = json_object();
    json_t *required = json_array();
    json_t *schema;
    const json_t *oparams = json_object_get(o->op, "parameters");
    const json_t *body = deref(root, json_object_get(o->op, "requestBody"));
    size_t budget = *doc_budget < REF_BUDGET ? *doc_budget : REF_BUDGET;
    size_t start = budget;

    if (props == NULL || required == NULL) {
        json_decref(props);
        json_decref(required);
        return NULL;
    }
    add_params(root, json_object_get(o->item, "parameters"),
               json_is_array(oparams) ? oparams : NULL, props, required, &budget);
    add_params(root, oparams, NULL, props, required, &budget);
    if (json_is_object(body)) {
        const json_t *content = json_object_get(body, "content");
        const json_t *media = json_object_get(content, "application/json");
        if (media == NULL && json_is_object(content) && json_object_size(content) > 0) {
            media = json_object_iter_value(json_object_iter((json_t *)PV_UNCONST(content)));
        }
        if (json_is_object(media)) {
            const json_t *bs = json_object_get(media, "schema");
            json_t *s = json_is_object(bs) ? inline_refs(root, bs, 0, &budget) : json_object();
            if (s != NULL) {
                json_object_set_new(props, "body", s);
                if (json_is_true(json_object_get(body, "required"))) {
                    json_array_append_new(required, json_string("body"));
                }
            }
        }
    }
    *doc_budget -= start - budget;
    schema = json_pack("{s:s,s:o}", "type", "object", "properties", props);
    if (schema == NULL) {
        json_decref(required);
        return NULL;
    }
    if (json_array_size(required) > 0) {
        json_object_set_new(schema, "required", required);
    } else {
        json_decref(required);
    }
    return schema;
}

/* operationId (or method_path) as a tool name: [A-Za-z0-9_-], at most 64. */
static void tool_name(const struct op *o, char *out, size_t outlen)
{
    const json_t *id = json_object_get(o->op, "operationId");
    char raw[512];
    size_t n = 0;
    bool sep = false;

    if (json_is_string(id) && json_string_length(id) > 0) {
        snprintf(raw, sizeof(raw), "%s", json_string_value(id));
    } else {
        snprintf(raw, sizeof(raw), "%s_%s", o->method, o->path);
    }
    for (size_t i = 0; raw[i] != '\0' && n + 1 < outlen && n < 64; i++) {
        unsigned char c = (unsigned char)raw[i];
        if (isalnum(c) || c == '-' || (c == '_' && json_is_string(id))) {
            out[n++] = (char)c;
            sep = false;
        } else if (!sep && n > 0) {
            out[n++] = '_';
            sep = true;
        }
    }
    while (n > 0 && out[n - 1] == '_') {
        n--;
    }
    if (n == 0) {
        snprintf(out, outlen, "%s", o->method);
        return;
    }
    out[n] = '\0';
}

static json_t *make_tool(const json_t *root, const struct op *o, json_t *names, size_t *doc_budget)
{
    char name[80];
    char desc[512];
    const json_t *summary = json_object_get(o->op, "summary");
    const json_t *description = json_object_get(o->op, "description");
    json_t *schema;

    tool_name(o, name, sizeof(name));
    /* Names must be unique in a tool list: suffix repeats. */
    for (unsigned k = 2; json_object_get(names, name) != NULL && k < 100000; k++) {
        char base[64];
        snprintf(base, sizeof(base), "%.55s", name);
        snprintf(name, sizeof(name), "%s_%u", base, k);
    }
    json_object_set_new(names, name, json_true());
    if (json_is_string(summary) && json_string_length(summary) > 0) {
        snprintf(desc, sizeof(desc), "%s", json_string_value(summary));
    } else if (json_is_string(description) && json_string_length(description) > 0) {
        snprintf(desc, sizeof(desc), "%s", json_string_value(description));
    } else {
        char upper[16];
        upper_method(o, upper);
        snprintf(desc, sizeof(desc), "%s %s", upper, o->path);
    }
    schema = input_schema(root, o, doc_budget);
    if (schema == NULL) {
        return NULL;
    }
    return json_pack("{s:s,s:s,s:o}", "name", name, "description", desc, "input_schema", schema);
}

struct tools_arg {
    const json_t *root;
    json_t *tools;
    json_t *names;
    size_t budget;
};

static int tools_cb(const struct op *o, void *arg)
{
    struct tools_arg *a = arg;
    json_t *t = make_tool(a->root, o, a->names, &a->budget);

    if (t == NULL || json_array_append_new(a->tools, t) != 0) {
        return -2;
    }
    return 0;
}

json_t *server_openapi_tools(const json_t *openapi)
{
    struct tools_arg a = {openapi, json_array(), json_object(), DOC_REF_BUDGET};
    char err[256];
    int rc;

    if (a.tools == NULL || a.names == NULL) {
        json_decref(a.tools);
        json_decref(a.names);
        return NULL;
    }
    rc = walk_ops(openapi, tools_cb, &a, err, sizeof(err));
    json_decref(a.names);
    if (rc != 0) {
        json_decref(a.tools);
        return NULL;
    }
    return a.tools;
}

/* ===========================================================================
 * Server URLs
 * ========================================================================= */

struct target {
    char host[256];
    uint16_t port;
    char base[1024]; /* no trailing '/' */
};

/* Substitute {var} with servers[].variables.var.default. */
static bool expand_url(const json_t *server, char *out, size_t outlen, const char **why)
{
    const json_t *url = json_object_get(server, "url");
    const json_t *vars = json_object_get(server, "variables");
    const char *s;
    size_t o = 0;

    if (!json_is_string(url)) {
        *why = "server without a url";
        return false;
    }
    s = json_string_value(url);
    while (*s != '\0') {
        const char *val = NULL;
        size_t vlen;
        if (*s == '{') {
            const char *end = strchr(s, '}');
            char name[128];
            const json_t *def;
            if (end == NULL || (size_t)(end - s - 1) >= sizeof(name)) {
                *why = "malformed server url variable";
                return false;
            }
            memcpy(name, s + 1, (size_t)(end - s - 1));
            name[end - s - 1] = '\0';
            def = json_object_get(json_object_get(vars, name), "default");
            if (!json_is_string(def)) {
                *why = "server url variable without a default";
                return false;
            }
            val = json_string_value(def);
            s = end + 1;
        }
        vlen = val != NULL ? strlen(val) : 1;
        if (o + vlen + 1 > outlen) {
            *why = "server url too long";
            return false;
        }
        if (val != NULL) {
            memcpy(out + o, val, vlen);
        } else {
            out[o] = *s++;
        }
        o += vlen;
    }
    out[o] = '\0';
    return true;
}

static bool parse_url(const char *url, struct target *t, const char **why)
{
    static const struct {
        const char *scheme;
        uint16_t port;
    } schemes[] = {{"https://", 443}, {"http://", 80}, {"wss://", 443}, {"ws://", 80}};
    const char *p = NULL;
    const char *host;
    const char *hend;
    const char *auth_end;
    size_t hlen;

    for (size_t i = 0; i < PV_ARRAY_LEN(schemes); i++) {
        size_t n = strlen(schemes[i].scheme);
        if (strncasecmp(url, schemes[i].scheme, n) == 0) {
            p = url + n;
            t->port = schemes[i].port;
            break;
        }
    }
    if (p == NULL) {
        *why = strstr(url, "://") == NULL ? "relative server url (no host to check)"
                                          : "unsupported url scheme";
        return false;
    }
    auth_end = p + strcspn(p, "/?#");
    if (memchr(p, '@', (size_t)(auth_end - p)) != NULL) {
        *why = "server url with user info";
        return false;
    }
    host = p;
    if (*p == '[') {
        hend = memchr(p, ']', (size_t)(auth_end - p));
        if (hend == NULL) {
            *why = "malformed IPv6 host";
            return false;
        }
        host = p + 1;
        hlen = (size_t)(hend - host);
        p = hend + 1;
    } else {
        hend = memchr(p, ':', (size_t)(auth_end - p));
        if (hend == NULL) {
            hend = auth_end;
        }
        hlen = (size_t)(hend - host);
        p = hend;
    }
    if (hlen == 0 || hlen >= sizeof(t->host)) {
        *why = "missing or over-long host";
        return false;
    }
    memcpy(t->host, host, hlen);
    t->host[hlen] = '\0';
    if (p < auth_end && *p == ':') {
        uint64_t port;
        if (!pv_ok(pv_parse_u64(p + 1, (size_t)(auth_end - p - 1), 65535, &port)) || port == 0) {
            *why = "invalid port";
            return false;
        }
        t->port = (uint16_t)port;
    } else if (p != auth_end) {
        *why = "malformed authority";
        return false;
    }
    {
        size_t blen = strcspn(auth_end, "?#");
        while (blen > 0 && auth_end[blen - 1] == '/') {
            blen--;
        }
        if (blen >= sizeof(t->base)) {
            *why = "server base path too long";
            return false;
        }
        memcpy(t->base, auth_end, blen);
        t->base[blen] = '\0';
    }
    return true;
}

/* base + template with every {param} replaced by PARAM_VALUE. */
static bool representative(const struct target *t, const char *tmpl, char *out, size_t outlen)
{
    size_t o = strlen(t->base);

    if (o + 1 > outlen) {
        return false;
    }
    memcpy(out, t->base, o);
    for (const char *s = tmpl; *s != '\0';) {
        const char *piece = s;
        size_t plen = 1;
        if (*s == '{') {
            const char *end = strchr(s, '}');
            if (end != NULL) {
                piece = PARAM_VALUE;
                plen = sizeof(PARAM_VALUE) - 1;
                s = end + 1;
            } else {
                s++;
            }
        } else {
            s++;
        }
        if (o + plen + 1 > outlen) {
            return false;
        }
        memcpy(out + o, piece, plen);
        o += plen;
    }
    out[o] = '\0';
    return true;
}

/* ===========================================================================
 * Discovery
 * ========================================================================= */

struct disc_arg {
    const json_t *root;
    const struct model_policy *policy;
    const char *const *bins; /* the binary, then its ancestors */
    size_t nbins;
    bool test_loopback;
    size_t budget;  /* DOC_REF_BUDGET: $ref inlining for the whole document */
    json_t *subset; /* deep copy of the document, pruned as we go */
    json_t *tools;
    json_t *names;
    json_t *report;
    size_t nreachable;
};

/* How to call a reachable operation: its method, path template and the
 * server URLs whose representative request was allowed. */
static json_t *http_of(const char *method, const char *path, const json_t *checks)
{
    json_t *urls = json_array();
    const json_t *c;
    size_t i;

    json_array_foreach(checks, i, c)
    {
        if (json_is_true(json_object_get(c, "allow"))) {
            json_array_append(urls, json_object_get(c, "server"));
        }
    }
    return json_pack("{s:s,s:s,s:o}", "method", method, "path", path, "servers", urls);
}

/* Decide one (operation, server) pair; append its evidence to 'checks'.
 * Returns 1 when allowed, 0 when not, -2 on NOMEM. */
static int check_server(struct disc_arg *a, const struct op *o, const json_t *server,
                        json_t *checks)
{
    char url[2048];
    char target[4096];
    char method[16];
    struct target t;
    const char *why = NULL;
    json_t *c;

    if (!expand_url(server, url, sizeof(url), &why) || !parse_url(url, &t, &why)) {
        const json_t *u = json_object_get(server, "url");
        c = json_pack("{s:s,s:b,s:s}", "server", json_is_string(u) ? json_string_value(u) : "",
                      "allow", 0, "reason", why);
        return c != NULL && json_array_append_new(checks, c) == 0 ? 0 : -2;
    }
    if (!representative(&t, o->path, target, sizeof(target))) {
        c = json_pack("{s:s,s:b,s:s}", "server", url, "allow", 0, "reason", "path too long");
        return c != NULL && json_array_append_new(checks, c) == 0 ? 0 : -2;
    }
    upper_method(o, method);
    {
        struct model_request req;
        struct model_decision d;
        memset(&req, 0, sizeof(req));
        req.binaries = a->bins;
        req.nbinaries = a->nbins;
        req.test_loopback = a->test_loopback;
        req.host = t.host;
        req.host_len = strlen(t.host);
        req.port = t.port;
        req.method = method;
        req.target = target;
        req.target_len = strlen(target);
        req.dest = NULL;
        memset(&d, 0, sizeof(d));
        model_decide(a->policy, &req, &d);
        c = json_pack("{s:s,s:s,s:i,s:s,s:b,s:s,s:s,s:s?,s:s}", "server", url, "host", t.host,
                      "port", (int)t.port, "target", target, "allow", d.allow ? 1 : 0, "reason",
                      model_reason_name(d.reason), "route", model_route_name(d.route), "rule",
                      d.rule != NULL ? model_rule_display_name(d.rule) : NULL, "detail", d.detail);
        if (c == NULL || json_array_append_new(checks, c) != 0) {
            return -2;
        }
        return d.allow ? 1 : 0;
    }
}

static int disc_cb(const struct op *o, void *arg)
{
    struct disc_arg *a = arg;
    json_t *checks = json_array();
    json_t *reachable_servers = json_array();
    json_t *entry;
    size_t nserv = o->servers != NULL ? json_array_size(o->servers) : 0;
    size_t nok = 0;
    char upper[16];
    size_t i;

    if (checks == NULL || reachable_servers == NULL) {
        json_decref(checks);
        json_decref(reachable_servers);
        return -2;
    }
    for (i = 0; i < nserv; i++) {
        const json_t *server = json_array_get(o->servers, i);
        int rc = check_server(a, o, server, checks);
        if (rc < 0) {
            json_decref(checks);
            json_decref(reachable_servers);
            return -2;
        }
        if (rc == 1) {
            nok++;
            json_array_append(reachable_servers, (json_t *)PV_UNCONST(server));
        }
    }
    if (nserv == 0) {
        json_array_append_new(checks,
                              json_pack("{s:s,s:b,s:s}", "server", "/", "allow", 0, "reason",
                                        "no servers: relative server url (no host to check)"));
    }
    upper_method(o, upper);
    entry = json_pack("{s:s,s:s,s:b,s:o}", "method", upper, "path", o->path, "reachable", nok > 0,
                      "checks", checks);
    if (entry == NULL) {
        json_decref(reachable_servers);
        return -2;
    }
    if (json_is_string(json_object_get(o->op, "operationId"))) {
        json_object_set(entry, "operationId", json_object_get(o->op, "operationId"));
    }
    json_array_append_new(a->report, entry);

    {
        json_t *item = json_object_get(json_object_get(a->subset, "paths"), o->path);
        if (nok == 0) {
            json_object_del(item, o->method);
        } else {
            json_t *t = make_tool(a->root, o, a->names, &a->budget);
            if (t != NULL && json_object_set_new(t, "http", http_of(upper, o->path, checks)) != 0) {
                json_decref(t);
                t = NULL;
            }
            if (t == NULL || json_array_append_new(a->tools, t) != 0) {
                json_decref(reachable_servers);
                return -2;
            }
            a->nreachable++;
            if (nok < nserv) {
                /* Only some servers allow it: say which. */
                json_object_set(json_object_get(item, o->method), "servers", reachable_servers);
            }
        }
    }
    json_decref(reachable_servers);
    return 0;
}

/* Drop path items left without an operation. */
static void prune_paths(json_t *subset)
{
    json_t *paths = json_object_get(subset, "paths");
    const char *k;
    json_t *item;
    void *tmp;

    json_object_foreach_safe(paths, tmp, k, item)
    {
        bool any = false;
        for (size_t m = 0; m < PV_ARRAY_LEN(http_methods); m++) {
            if (json_object_get(item, http_methods[m]) != NULL) {
                any = true;
                break;
            }
        }
        if (!any) {
            json_object_del(paths, k);
        }
    }
}

json_t *server_discover(const json_t *openapi, const struct model_policy *policy,
                        const char *const *bins, size_t nbins, bool test_loopback, char *err,
                        size_t errlen)
{
    const char *binary = nbins > 0 ? bins[0] : "";
    struct disc_arg a;
    json_t *out;
    int rc;

    memset(&a, 0, sizeof(a));
    a.root = openapi;
    a.policy = policy;
    a.bins = bins;
    a.nbins = nbins;
    a.test_loopback = test_loopback;
    a.budget = DOC_REF_BUDGET;
    a.subset = json_deep_copy(openapi);
    a.tools = json_array();
    a.names = json_object();
    a.report = json_array();
    if (a.subset == NULL || a.tools == NULL || a.names == NULL || a.report == NULL) {
        rc = -2;
    } else {
        rc = walk_ops(openapi, disc_cb, &a, err, errlen);
    }
    json_decref(a.names);
    if (rc != 0) {
        json_decref(a.subset);
        json_decref(a.tools);
        json_decref(a.report);
        if (rc == -2) {
            snprintf(err, errlen, "out of memory");
            pv_errno = PV_ERR_NOMEM;
        } else {
            pv_errno = PV_ERR_PARSE;
        }
        return NULL;
    }
    prune_paths(a.subset);
    out = json_pack(
        "{s:s,s:s,s:I,s:I,s:o,s:o,s:o}", "binary", binary, "reachability", "representative-request",
        "operations_total", (json_int_t)json_array_size(a.report), "operations_reachable",
        (json_int_t)a.nreachable, "openapi", a.subset, "tools", a.tools, "operations", a.report);
    if (out == NULL) {
        snprintf(err, errlen, "out of memory");
        pv_errno = PV_ERR_NOMEM;
    }
    return out;
}
