/* SPDX-License-Identifier: Apache-2.0 */
/* model_schema.c - schema walker: model_node tree to struct model_policy
 *
 * One walker serves both document formats, so YAML and JSON policies get the
 * same shape checks and the same messages. Each object of the schema
 * (docs/semantics.md, docs/reference-compat.md#policy) is a table
 * of fields, walked by model_walk.c (shared with the credentials and the
 * registry's descriptors): a key not in the table is "unknown field 'k' in
 * <context>" at the key, a value of the wrong shape is "field 'k' must be
 * ..." at the value.
 * Every error is collected (a bad value is reported once and skipped, so
 * errors do not cascade). Semantic constraints (port 0, port with ports,
 * host syntax, ...) belong to model_validate.c; this file only checks shapes
 * and representable ranges (port fits u16, version and body limits fit u32).
 *
 * Scalars are typed as model_walk.c says (YAML and JSON alike).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv_dynbuf.h"
#include "model/model_int.h"

/* ---------------------------------------------------------------------------
 * Opaque values (network_middlewares, MCP params) as jansson values
 * ------------------------------------------------------------------------- */

/* YAML 1.2 core float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool yaml_float_text(const char *s, size_t len)
{
    size_t i = 0, d = 0;
    if (i < len && (s[i] == '-' || s[i] == '+')) {
        i++;
    }
    while (i < len && s[i] >= '0' && s[i] <= '9') {
        i++;
        d++;
    }
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            i++;
            d++;
        }
    }
    if (d == 0) {
        return false;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t e = 0;
        i++;
        if (i < len && (s[i] == '-' || s[i] == '+')) {
            i++;
        }
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            i++;
            e++;
        }
        if (e == 0) {
            return false;
        }
    }
    return i == len;
}

static json_t *scalar_int_json(const char *s, size_t len)
{
    bool neg = len > 0 && s[0] == '-';
    uint64_t u;

    if (!pv_ok(pv_parse_u64(s + neg, len - neg, neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX, &u))) {
        return NULL;
    }
    if (neg) {
        return json_integer(u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(json_int_t)u);
    }
    return json_integer((json_int_t)u);
}

static json_t *scalar_real_json(const char *s, size_t len)
{
    char buf[128];
    if (len >= sizeof(buf)) {
        return NULL;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    return json_real(strtod(buf, NULL));
}

static json_t *scalar_json(const struct model_node *v)
{
    json_t *j = NULL;

    if (v->json_typed) {
        switch (v->json_type) {
        case JSON_STRING:
            return json_stringn(v->scalar, v->scalar_len);
        case JSON_INTEGER:
            return scalar_int_json(v->scalar, v->scalar_len);
        case JSON_REAL:
            return scalar_real_json(v->scalar, v->scalar_len);
        case JSON_TRUE:
            return json_true();
        case JSON_FALSE:
            return json_false();
        default:
            return json_null();
        }
    }
    if (!v->quoted) {
        int b = model_node_bool(v);
        if (b >= 0) {
            return json_boolean(b);
        }
        if (model_yaml_int_text(v->scalar, v->scalar_len)) {
            j = scalar_int_json(v->scalar, v->scalar_len);
        } else if (yaml_float_text(v->scalar, v->scalar_len)) {
            j = scalar_real_json(v->scalar, v->scalar_len);
        }
        if (j != NULL) {
            return j;
        }
    }
    return json_stringn(v->scalar, v->scalar_len);
}

/* Depth is bounded by the readers (64), so recursion is safe here. */
static json_t *node_json(const struct model_node *v)
{
    json_t *j;

    switch (v->kind) {
    case MODEL_NODE_NULL:
        return json_null();
    case MODEL_NODE_SCALAR:
        return scalar_json(v);
    case MODEL_NODE_SEQ:
        j = json_array();
        for (size_t i = 0; j != NULL && i < v->nitems; i++) {
            if (json_array_append_new(j, node_json(v->items[i])) != 0) {
                json_decref(j);
                j = NULL;
            }
        }
        return j;
    case MODEL_NODE_MAP:
        j = json_object();
        for (size_t i = 0; j != NULL && i + 1 < v->nitems; i += 2) {
            const struct model_node *k = v->items[i];
            if (k->kind != MODEL_NODE_SCALAR ||
                json_object_setn_new(j, k->scalar, k->scalar_len, node_json(v->items[i + 1])) !=
                    0) {
                json_decref(j);
                j = NULL;
            }
        }
        return j;
    }
    return NULL;
}

/* ---------------------------------------------------------------------------
 * L7 matchers (rules[].allow, deny_rules[])
 * ------------------------------------------------------------------------- */

struct qwalk {
    struct model_query *q;
    bool has_glob, has_any;
};

static void f_q_glob(struct model_walk *w, const struct model_field *f,
                     const struct model_node *key, const struct model_node *v, void *obj)
{
    struct qwalk *qw = obj;
    (void)key;
    if (!model_node_is_string(v)) {
        model_walk_err(w, v->mark, "field '%s' must be a string", f->key);
        return;
    }
    qw->has_glob = true;
    if (qw->has_any) {
        return;
    }
    qw->q->form = MODEL_QFORM_GLOB;
    model_strlist_clear(&qw->q->globs);
    qw->q->globs.v = pv_calloc(1, sizeof(struct model_sval));
    if (qw->q->globs.v == NULL) {
        model_walk_nomem(w);
        return;
    }
    qw->q->globs.mark = v->mark;
    model_walk_set_sval(w, &qw->q->globs.v[0], v);
    qw->q->globs.n = qw->q->globs.v[0].s != NULL ? 1 : 0;
}

static void f_q_any(struct model_walk *w, const struct model_field *f, const struct model_node *key,
                    const struct model_node *v, void *obj)
{
    struct qwalk *qw = obj;
    (void)key;
    if (v->kind != MODEL_NODE_SEQ) {
        model_walk_err(w, v->mark, "field '%s' must be a list", f->key);
        return;
    }
    qw->has_any = true;
    if (qw->has_glob) {
        return;
    }
    qw->q->form = MODEL_QFORM_ANY;
    model_walk_strlist(w, f->key, v, &qw->q->globs);
}

static const struct model_field query_fields[] = {
    {"glob", f_q_glob, 0},
    {"any", f_q_any, 0},
};

static void read_query_value(struct model_walk *w, const struct model_node *k,
                             const struct model_node *v, struct model_query *q)
{
    char buf[MODEL_SHOWN_MAX + 4];

    if (model_node_is_string(v)) {
        q->form = MODEL_QFORM_STRING;
        q->globs.v = pv_calloc(1, sizeof(struct model_sval));
        if (q->globs.v == NULL) {
            model_walk_nomem(w);
            return;
        }
        q->globs.mark = v->mark;
        model_walk_set_sval(w, &q->globs.v[0], v);
        q->globs.n = q->globs.v[0].s != NULL ? 1 : 0;
        return;
    }
    if (v->kind == MODEL_NODE_MAP) {
        struct qwalk qw = {q, false, false};
        size_t before = model_diags_count(w->diags);
        (void)model_walk_map(w, v, "query matcher", query_fields, PV_ARRAY_LEN(query_fields), &qw);
        if (qw.has_glob && qw.has_any) {
            model_walk_err(w, v->mark, "query matcher for '%s' cannot have both 'glob' and 'any'",
                           model_walk_shown(buf, k->scalar, k->scalar_len));
        } else if (!qw.has_glob && !qw.has_any && model_diags_count(w->diags) == before &&
                   !w->nomem) {
            model_walk_err(w, v->mark, "query matcher for '%s' requires 'glob' or 'any'",
                           model_walk_shown(buf, k->scalar, k->scalar_len));
        }
        return;
    }
    model_walk_err(w, v->mark,
                   "query value for '%s' must be a string or a mapping with 'glob' or 'any'",
                   model_walk_shown(buf, k->scalar, k->scalar_len));
}

static void f_query(struct model_walk *w, const struct model_field *f, const struct model_node *key,
                    const struct model_node *v, void *obj)
{
    struct model_l7rule *r = obj;
    size_t npairs;

    (void)key;
    if (v->kind == MODEL_NODE_NULL || !model_walk_expect_map(w, f->key, v)) {
        return;
    }
    npairs = v->nitems / 2;
    if (npairs == 0) {
        return;
    }
    r->query = pv_calloc(npairs, sizeof(*r->query));
    if (r->query == NULL) {
        model_walk_nomem(w);
        return;
    }
    r->nquery = npairs;
    for (size_t i = 0; i < npairs; i++) {
        const struct model_node *k = v->items[2 * i];
        struct model_query *q = &r->query[i];
        model_walk_set_sval(w, &q->key, k);
        read_query_value(w, k, v->items[2 * i + 1], q);
    }
}

static void f_params(struct model_walk *w, const struct model_field *f,
                     const struct model_node *key, const struct model_node *v, void *obj)
{
    struct model_l7rule *r = obj;
    (void)f;
    (void)key;
    if (v->kind == MODEL_NODE_NULL) {
        return;
    }
    json_decref(r->params);
    r->params = node_json(v);
    if (r->params == NULL) {
        model_walk_nomem(w);
    }
}

#define L7(name, fn)                                   \
    {                                                  \
#name, fn, offsetof(struct model_l7rule, name) \
    }
static const struct model_field l7_fields[] = {
    L7(method, model_field_sval),
    L7(path, model_field_sval),
    L7(command, model_field_sval),
    {"query", f_query, 0},
    L7(operation_type, model_field_sval),
    L7(operation_name, model_field_sval),
    L7(fields, model_field_strlist),
    L7(tool, model_field_sval),
    {"params", f_params, 0},
};
#undef L7

static void read_l7(struct model_walk *w, const struct model_node *v, const char *ctx,
                    struct model_l7rule *r)
{
    r->mark = v->mark;
    (void)model_walk_map(w, v, ctx, l7_fields, PV_ARRAY_LEN(l7_fields), r);
}

/* rules[] item: {allow: {...}} */
static void f_allow(struct model_walk *w, const struct model_field *f, const struct model_node *key,
                    const struct model_node *v, void *obj)
{
    (void)key;
    if (!model_walk_expect_map(w, f->key, v)) {
        return;
    }
    read_l7(w, v, "allow", obj);
}

static const struct model_field rule_item_fields[] = {
    {"allow", f_allow, 0},
};

static void f_rules(struct model_walk *w, const struct model_field *f, const struct model_node *key,
                    const struct model_node *v, void *obj)
{
    struct model_endpoint *e = obj;
    (void)key;
    if (!model_walk_expect_list(w, f->key, v)) {
        return;
    }
    e->rules_given = true;
    if (v->nitems == 0) {
        return;
    }
    e->rules = pv_calloc(v->nitems, sizeof(*e->rules));
    if (e->rules == NULL) {
        model_walk_nomem(w);
        return;
    }
    e->nrules = v->nitems;
    for (size_t i = 0; i < v->nitems; i++) {
        const struct model_node *it = v->items[i];
        e->rules[i].mark = it->mark;
        if (it->kind != MODEL_NODE_MAP) {
            model_walk_err(w, it->mark, "rule item must be a mapping with 'allow'");
            continue;
        }
        size_t before = model_diags_count(w->diags);
        uint64_t seen = model_walk_map(w, it, "rule", rule_item_fields,
                                       PV_ARRAY_LEN(rule_item_fields), &e->rules[i]);
        if ((seen & 1) == 0 && model_diags_count(w->diags) == before && !w->nomem) {
            model_walk_err(w, it->mark, "rule item requires 'allow'");
        }
    }
}

static void f_deny_rules(struct model_walk *w, const struct model_field *f,
                         const struct model_node *key, const struct model_node *v, void *obj)
{
    struct model_endpoint *e = obj;
    (void)key;
    if (!model_walk_expect_list(w, f->key, v)) {
        return;
    }
    e->deny_given = true;
    if (v->nitems == 0) {
        return;
    }
    e->deny_rules = pv_calloc(v->nitems, sizeof(*e->deny_rules));
    if (e->deny_rules == NULL) {
        model_walk_nomem(w);
        return;
    }
    e->ndeny = v->nitems;
    for (size_t i = 0; i < v->nitems; i++) {
        const struct model_node *it = v->items[i];
        e->deny_rules[i].mark = it->mark;
        if (it->kind != MODEL_NODE_MAP) {
            model_walk_err(w, it->mark, "deny rule must be a mapping");
            continue;
        }
        read_l7(w, it, "deny rule", &e->deny_rules[i]);
    }
}

/* ---------------------------------------------------------------------------
 * Endpoint
 * ------------------------------------------------------------------------- */

static void f_port(struct model_walk *w, const struct model_field *f, const struct model_node *key,
                   const struct model_node *v, void *obj)
{
    struct model_endpoint *e = obj;
    uint64_t x;

    (void)key;
    if (v->kind == MODEL_NODE_NULL) {
        return;
    }
    if (!model_walk_get_uint(w, f->key, v, UINT16_MAX, &x)) {
        return;
    }
    e->port_given = true;
    e->port_written = (uint16_t)x;
    e->port_written_mark = v->mark;
    if (e->ports_given) {
        return; /* 'ports' takes precedence; the validator checks that they agree */
    }
    free(e->ports);
    e->ports = pv_malloc(sizeof(*e->ports));
    if (e->ports == NULL) {
        e->nports = 0;
        model_walk_nomem(w);
        return;
    }
    e->ports[0] = (uint16_t)x;
    e->nports = 1;
    e->port_mark = v->mark;
}

static void f_ports(struct model_walk *w, const struct model_field *f, const struct model_node *key,
                    const struct model_node *v, void *obj)
{
    struct model_endpoint *e = obj;
    uint16_t *ports = NULL;
    size_t n = 0;

    (void)key;
    if (!model_walk_expect_list(w, f->key, v)) {
        return;
    }
    if (v->nitems > 0) {
        ports = pv_malloc(v->nitems * sizeof(*ports));
        if (ports == NULL) {
            model_walk_nomem(w);
            return;
        }
    }
    for (size_t i = 0; i < v->nitems; i++) {
        uint64_t x;
        if (!model_node_is_int(v->items[i])) {
            model_walk_err(w, v->items[i]->mark, "field '%s' must be a list of integers", f->key);
            continue;
        }
        if (model_walk_get_uint(w, f->key, v->items[i], UINT16_MAX, &x)) {
            ports[n++] = (uint16_t)x;
        }
    }
    free(e->ports);
    e->ports = ports;
    e->nports = n;
    e->ports_given = true;
    e->port_mark = v->mark;
}

static void f_binding(struct model_walk *w, const struct model_field *f,
                      const struct model_node *key, const struct model_node *v, void *obj);
static void f_json_rpc(struct model_walk *w, const struct model_field *f,
                       const struct model_node *key, const struct model_node *v, void *obj);
static void f_mcp(struct model_walk *w, const struct model_field *f, const struct model_node *key,
                  const struct model_node *v, void *obj);
static void f_gql_persisted(struct model_walk *w, const struct model_field *f,
                            const struct model_node *key, const struct model_node *v, void *obj);

#define EP(name, fn)                                     \
    {                                                    \
#name, fn, offsetof(struct model_endpoint, name) \
    }
static const struct model_field endpoint_fields[] = {
    EP(host, model_field_sval),
    EP(path, model_field_sval),
    {"port", f_port, 0},
    {"ports", f_ports, 0},
    EP(protocol, model_field_sval),
    EP(tls, model_field_sval),
    EP(enforcement, model_field_sval),
    EP(access, model_field_sval),
    {"rules", f_rules, 0},
    {"deny_rules", f_deny_rules, 0},
    EP(allowed_ips, model_field_strlist),
    EP(allow_encoded_slash, model_field_bool),
    EP(websocket_credential_rewrite, model_field_bool),
    EP(request_body_credential_rewrite, model_field_bool),
    EP(allow_uninspected_credentials, model_field_bool),
    EP(persisted_queries, model_field_sval),
    {"graphql_persisted_queries", f_gql_persisted, 0},
    EP(graphql_max_body_bytes, model_field_u32),
    EP(credential_signing, model_field_sval),
    EP(signing_service, model_field_sval),
    EP(signing_region, model_field_sval),
    {"credential_binding", f_binding, 0},
    {"json_rpc", f_json_rpc, 0},
    {"mcp", f_mcp, 0},
    EP(target_sandbox, model_field_sval),
    EP(resolved_ips, model_field_strlist),
    EP(advisor_proposed, model_field_bool),
};

static const struct model_field binding_fields[] = {
    EP(credential_binding_provider, model_field_sval),
};
static const struct model_field json_rpc_fields[] = {
    EP(json_rpc_max_body_bytes, model_field_u32),
};
static void f_mcp_strict(struct model_walk *w, const struct model_field *f,
                         const struct model_node *key, const struct model_node *v, void *obj)
{
    struct model_endpoint *e = obj;

    model_field_bool(w, f, key, v, obj);
    e->mcp_strict_given = v->kind != MODEL_NODE_NULL;
}

static const struct model_field mcp_fields[] = {
    EP(mcp_max_body_bytes, model_field_u32),
    EP(mcp_strict_tool_names, f_mcp_strict),
    EP(mcp_allow_all_known_methods, model_field_bool),
};
#undef EP

/* The sub-objects use their own key names for the flattened members. */
static const char *const binding_keys[] = {"provider"};
static const char *const json_rpc_keys[] = {"max_body_bytes"};
static const char *const mcp_keys[] = {"max_body_bytes", "strict_tool_names",
                                       "allow_all_known_mcp_methods"};

static void walk_sub(struct model_walk *w, const struct model_node *v, const char *ctx,
                     const struct model_field *fields, const char *const *keys, size_t n, void *obj)
{
    struct model_field local[4];

    if (n > PV_ARRAY_LEN(local)) {
        n = PV_ARRAY_LEN(local); /* unreachable: the key tables above are shorter */
    }
    for (size_t i = 0; i < n; i++) {
        local[i] = fields[i];
        local[i].key = keys[i];
    }
    (void)model_walk_map(w, v, ctx, local, n, obj);
}

static void f_binding(struct model_walk *w, const struct model_field *f,
                      const struct model_node *key, const struct model_node *v, void *obj)
{
    (void)key;
    if (v->kind == MODEL_NODE_NULL || !model_walk_expect_map(w, f->key, v)) {
        return;
    }
    walk_sub(w, v, "credential_binding", binding_fields, binding_keys, PV_ARRAY_LEN(binding_keys),
             obj);
}

static void f_json_rpc(struct model_walk *w, const struct model_field *f,
                       const struct model_node *key, const struct model_node *v, void *obj)
{
    struct model_endpoint *e = obj;
    (void)key;
    if (v->kind == MODEL_NODE_NULL || !model_walk_expect_map(w, f->key, v)) {
        return;
    }
    e->has_json_rpc = true;
    walk_sub(w, v, "json_rpc", json_rpc_fields, json_rpc_keys, PV_ARRAY_LEN(json_rpc_keys), obj);
}

static void f_mcp(struct model_walk *w, const struct model_field *f, const struct model_node *key,
                  const struct model_node *v, void *obj)
{
    struct model_endpoint *e = obj;
    (void)key;
    if (v->kind == MODEL_NODE_NULL || !model_walk_expect_map(w, f->key, v)) {
        return;
    }
    e->has_mcp = true;
    walk_sub(w, v, "mcp", mcp_fields, mcp_keys, PV_ARRAY_LEN(mcp_keys), obj);
}

#define GQ(name, fn)                                          \
    {                                                         \
#name, fn, offsetof(struct model_gql_persisted, name) \
    }
static const struct model_field gql_fields[] = {
    GQ(operation_type, model_field_sval),
    GQ(operation_name, model_field_sval),
    GQ(fields, model_field_strlist),
};
#undef GQ

static void f_gql_persisted(struct model_walk *w, const struct model_field *f,
                            const struct model_node *key, const struct model_node *v, void *obj)
{
    struct model_endpoint *e = obj;
    size_t npairs;

    (void)key;
    if (v->kind == MODEL_NODE_NULL || !model_walk_expect_map(w, f->key, v)) {
        return;
    }
    npairs = v->nitems / 2;
    if (npairs == 0) {
        return;
    }
    e->gql_persisted = pv_calloc(npairs, sizeof(*e->gql_persisted));
    if (e->gql_persisted == NULL) {
        model_walk_nomem(w);
        return;
    }
    e->ngql_persisted = npairs;
    for (size_t i = 0; i < npairs; i++) {
        const struct model_node *k = v->items[2 * i];
        const struct model_node *q = v->items[2 * i + 1];
        struct model_gql_persisted *g = &e->gql_persisted[i];
        char buf[MODEL_SHOWN_MAX + 4];

        model_walk_set_sval(w, &g->id, k);
        if (q->kind != MODEL_NODE_MAP) {
            model_walk_err(w, q->mark, "graphql persisted query '%s' must be a mapping",
                           model_walk_shown(buf, k->scalar, k->scalar_len));
            continue;
        }
        (void)model_walk_map(w, q, "graphql persisted query", gql_fields, PV_ARRAY_LEN(gql_fields),
                             g);
    }
}

/* Derived enums, kept in step with the strings as written; the validator
 * rejects values that map to nothing. */
static void derive_endpoint(struct model_endpoint *e)
{
    static const struct {
        const char *name;
        enum model_protocol proto;
    } protos[] = {
        {"tcp", MODEL_PROTO_TCP},
        {"rest", MODEL_PROTO_REST},
        {"websocket", MODEL_PROTO_WEBSOCKET},
        {"graphql", MODEL_PROTO_GRAPHQL},
        {"sql", MODEL_PROTO_SQL},
        {"json-rpc", MODEL_PROTO_JSONRPC},
        {"mcp", MODEL_PROTO_MCP},
    };
    static const struct {
        const char *name;
        enum model_access access;
    } presets[] = {
        {"read-only", MODEL_ACCESS_READ_ONLY},
        {"read-write", MODEL_ACCESS_READ_WRITE},
        {"full", MODEL_ACCESS_FULL},
    };

    e->proto = MODEL_PROTO_NONE;
    for (size_t i = 0; e->protocol.s != NULL && i < PV_ARRAY_LEN(protos); i++) {
        if (strcmp(e->protocol.s, protos[i].name) == 0) {
            e->proto = protos[i].proto;
        }
    }
    e->access_preset = MODEL_ACCESS_NONE;
    for (size_t i = 0; e->access.s != NULL && i < PV_ARRAY_LEN(presets); i++) {
        if (strcmp(e->access.s, presets[i].name) == 0) {
            e->access_preset = presets[i].access;
        }
    }
    e->tls_skip = e->tls.s != NULL && strcmp(e->tls.s, "skip") == 0;
    e->enforce = e->enforcement.s != NULL && strcmp(e->enforcement.s, "enforce") == 0;
}

/* ---------------------------------------------------------------------------
 * Rule
 * ------------------------------------------------------------------------- */

static void f_endpoints(struct model_walk *w, const struct model_field *f,
                        const struct model_node *key, const struct model_node *v, void *obj)
{
    struct model_rule *r = obj;
    (void)key;
    if (!model_walk_expect_list(w, f->key, v) || v->nitems == 0) {
        return;
    }
    r->endpoints = pv_calloc(v->nitems, sizeof(*r->endpoints));
    if (r->endpoints == NULL) {
        model_walk_nomem(w);
        return;
    }
    r->nendpoints = v->nitems;
    for (size_t i = 0; i < v->nitems; i++) {
        const struct model_node *it = v->items[i];
        struct model_endpoint *e = &r->endpoints[i];
        e->mark = it->mark;
        if (it->kind != MODEL_NODE_MAP) {
            model_walk_err(w, it->mark, "endpoint must be a mapping");
            continue;
        }
        (void)model_walk_map(w, it, "endpoint", endpoint_fields, PV_ARRAY_LEN(endpoint_fields), e);
        derive_endpoint(e);
    }
}

#define BIN(name, fn)                                  \
    {                                                  \
#name, fn, offsetof(struct model_binary, name) \
    }
static const struct model_field binary_fields[] = {
    BIN(path, model_field_sval),
    BIN(harness, model_field_bool),
};
#undef BIN

static void f_binaries(struct model_walk *w, const struct model_field *f,
                       const struct model_node *key, const struct model_node *v, void *obj)
{
    struct model_rule *r = obj;
    (void)key;
    if (!model_walk_expect_list(w, f->key, v) || v->nitems == 0) {
        return;
    }
    r->binaries = pv_calloc(v->nitems, sizeof(*r->binaries));
    if (r->binaries == NULL) {
        model_walk_nomem(w);
        return;
    }
    r->nbinaries = v->nitems;
    for (size_t i = 0; i < v->nitems; i++) {
        const struct model_node *it = v->items[i];
        struct model_binary *b = &r->binaries[i];
        size_t before = model_diags_count(w->diags);
        b->mark = it->mark;
        if (it->kind != MODEL_NODE_MAP) {
            model_walk_err(w, it->mark, "binary must be a mapping with 'path'");
            continue;
        }
        (void)model_walk_map(w, it, "binary", binary_fields, PV_ARRAY_LEN(binary_fields), b);
        if (b->path.s == NULL && model_diags_count(w->diags) == before && !w->nomem) {
            model_walk_err(w, it->mark, "binary item requires 'path'");
        }
    }
}

#define RULE(name, fn)                               \
    {                                                \
#name, fn, offsetof(struct model_rule, name) \
    }
static const struct model_field rule_fields[] = {
    RULE(name, model_field_sval),
    {"endpoints", f_endpoints, 0},
    {"binaries", f_binaries, 0},
};
#undef RULE

static void read_rule(struct model_walk *w, const struct model_node *v, const char *ctx,
                      struct model_rule *r)
{
    r->mark = v->mark;
    (void)model_walk_map(w, v, ctx, rule_fields, PV_ARRAY_LEN(rule_fields), r);
}

/* ---------------------------------------------------------------------------
 * Policy
 * ------------------------------------------------------------------------- */

static void f_version(struct model_walk *w, const struct model_field *f,
                      const struct model_node *key, const struct model_node *v, void *obj)
{
    struct model_policy *p = obj;
    uint64_t x;
    (void)key;
    if (model_walk_get_uint(w, f->key, v, UINT32_MAX, &x)) {
        p->has_version = true;
        p->version = (uint32_t)x;
        p->version_mark = v->mark;
    }
}

#define POL(name, fn)                                  \
    {                                                  \
#name, fn, offsetof(struct model_policy, name) \
    }
static const struct model_field fs_fields[] = {
    POL(include_workdir, model_field_bool),
    {"read_only", model_field_strlist, offsetof(struct model_policy, fs_read_only)},
    {"read_write", model_field_strlist, offsetof(struct model_policy, fs_read_write)},
};
static const struct model_field landlock_fields[] = {
    {"compatibility", model_field_sval, offsetof(struct model_policy, landlock_compat)},
};
static const struct model_field process_fields[] = {
    POL(run_as_user, model_field_sval),
    POL(run_as_group, model_field_sval),
};
#undef POL

static void f_fs(struct model_walk *w, const struct model_field *f, const struct model_node *key,
                 const struct model_node *v, void *obj)
{
    struct model_policy *p = obj;
    (void)key;
    if (v->kind == MODEL_NODE_NULL || !model_walk_expect_map(w, f->key, v)) {
        return;
    }
    p->has_fs = true;
    p->fs_mark = v->mark;
    (void)model_walk_map(w, v, "filesystem_policy", fs_fields, PV_ARRAY_LEN(fs_fields), p);
}

static void f_landlock(struct model_walk *w, const struct model_field *f,
                       const struct model_node *key, const struct model_node *v, void *obj)
{
    struct model_policy *p = obj;
    (void)key;
    if (v->kind == MODEL_NODE_NULL || !model_walk_expect_map(w, f->key, v)) {
        return;
    }
    p->has_landlock = true;
    (void)model_walk_map(w, v, "landlock", landlock_fields, PV_ARRAY_LEN(landlock_fields), p);
}

static void f_process(struct model_walk *w, const struct model_field *f,
                      const struct model_node *key, const struct model_node *v, void *obj)
{
    struct model_policy *p = obj;
    (void)key;
    if (v->kind == MODEL_NODE_NULL || !model_walk_expect_map(w, f->key, v)) {
        return;
    }
    p->has_process = true;
    (void)model_walk_map(w, v, "process", process_fields, PV_ARRAY_LEN(process_fields), p);
}

static void f_network_policies(struct model_walk *w, const struct model_field *f,
                               const struct model_node *key, const struct model_node *v, void *obj)
{
    struct model_policy *p = obj;
    size_t npairs;

    (void)key;
    if (v->kind == MODEL_NODE_NULL || !model_walk_expect_map(w, f->key, v)) {
        return;
    }
    npairs = v->nitems / 2;
    if (npairs == 0) {
        return;
    }
    p->rules = pv_calloc(npairs, sizeof(*p->rules));
    if (p->rules == NULL) {
        model_walk_nomem(w);
        return;
    }
    p->nrules = npairs;
    for (size_t i = 0; i < npairs; i++) {
        const struct model_node *k = v->items[2 * i];
        const struct model_node *rv = v->items[2 * i + 1];
        struct model_rule *r = &p->rules[i];
        char shown_key[MODEL_SHOWN_MAX + 4];
        char ctx[MODEL_SHOWN_MAX + 32];

        r->key = model_walk_dup(w, k);
        r->key_mark = k->mark;
        r->mark = rv->mark;
        (void)model_walk_shown(shown_key, k->scalar, k->scalar_len);
        if (rv->kind != MODEL_NODE_MAP) {
            model_walk_err(w, rv->mark, "network policy '%s' must be a mapping", shown_key);
            continue;
        }
        (void)snprintf(ctx, sizeof(ctx), "network policy '%s'", shown_key);
        read_rule(w, rv, ctx, r);
    }
}

/* Each entry's name, and where and how it says what happens when it fails
 * (on_error): proviso runs no middleware, so the validator refuses the
 * entries that fail closed and the warnings name the others. */
static void read_middlewares(struct model_walk *w, const struct model_node *v,
                             struct model_policy *p)
{
    size_t npairs = v->nitems / 2;

    for (size_t i = 0; i < p->nmw; i++) {
        free(p->mw[i].name);
    }
    PV_SAFE_FREE(p->mw);
    p->nmw = 0;
    if (npairs == 0) {
        return;
    }
    p->mw = pv_calloc(npairs, sizeof(*p->mw));
    if (p->mw == NULL) {
        model_walk_nomem(w);
        return;
    }
    p->nmw = npairs;
    for (size_t i = 0; i < npairs; i++) {
        const struct model_node *k = v->items[2 * i];
        const struct model_node *m = v->items[2 * i + 1];
        struct model_middleware *mw = &p->mw[i];

        mw->name = model_walk_dup(w, k);
        mw->mark = k->mark;
        for (size_t j = 0; m->kind == MODEL_NODE_MAP && j + 1 < m->nitems; j += 2) {
            const struct model_node *mk = m->items[j];
            const struct model_node *mv = m->items[j + 1];

            if (mk->kind == MODEL_NODE_SCALAR && mk->scalar_len == 8 &&
                memcmp(mk->scalar, "on_error", 8) == 0) {
                mw->mark = mv->mark;
                mw->fail_open = model_node_is_string(mv) && mv->scalar_len == 9 &&
                                memcmp(mv->scalar, "fail_open", 9) == 0;
            }
        }
    }
}

static void f_middlewares(struct model_walk *w, const struct model_field *f,
                          const struct model_node *key, const struct model_node *v, void *obj)
{
    struct model_policy *p = obj;
    (void)key;
    if (v->kind == MODEL_NODE_NULL || !model_walk_expect_map(w, f->key, v)) {
        return;
    }
    json_decref(p->middlewares);
    p->middlewares = node_json(v);
    p->middlewares_mark = v->mark;
    if (p->middlewares == NULL) {
        model_walk_nomem(w);
        return;
    }
    read_middlewares(w, v, p);
}

static const struct model_field policy_fields[] = {
    {"version", f_version, 0},
    {"filesystem_policy", f_fs, 0},
    {"landlock", f_landlock, 0},
    {"process", f_process, 0},
    {"network_policies", f_network_policies, 0},
    {"network_middlewares", f_middlewares, 0},
};

/* Whether every diagnostic after 'before' is an unknown field: the walker
 * skipped those keys and left the rest of the policy whole. */
static bool only_unknown_fields(struct model_diags *diags, size_t before)
{
    for (size_t i = before; i < model_diags_count(diags); i++) {
        const char *m = model_diags_msg(diags, i);

        if (m == NULL || strncmp(m, "unknown field ", 14) != 0) {
            return false;
        }
    }
    return true;
}

static struct model_policy *schema_policy(const char *file, const struct model_node *root,
                                          struct model_diags *diags, bool keep_on_unknown)
{
    struct model_walk w = {file != NULL ? file : "<input>", diags, false};
    struct model_policy *p;
    size_t before;
    uint64_t seen;

    if (root == NULL || diags == NULL) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    before = model_diags_count(diags);
    if (root->kind != MODEL_NODE_MAP) {
        model_walk_err(&w, root->mark, "policy must be a mapping");
        pv_errno = PV_ERR_POLICY;
        return NULL;
    }
    p = pv_calloc(1, sizeof(*p));
    if (p == NULL) {
        return NULL;
    }
    p->file = pv_strdup(w.file);
    if (p->file == NULL) {
        free(p);
        return NULL;
    }
    seen = model_walk_map(&w, root, "policy", policy_fields, PV_ARRAY_LEN(policy_fields), p);
    if ((seen & 1) == 0) {
        model_walk_err(&w, (struct model_mark){1, 1}, "missing required field 'version'");
    }
    if (w.nomem || model_diags_count(diags) != before) {
        if (!w.nomem && keep_on_unknown && only_unknown_fields(diags, before)) {
            pv_errno = PV_ERR_POLICY;
            return p;
        }
        model_policy_free(p);
        pv_errno = w.nomem ? PV_ERR_NOMEM : PV_ERR_POLICY;
        return NULL;
    }
    return p;
}

struct model_policy *model_schema_policy(const char *file, const struct model_node *root,
                                         struct model_diags *diags)
{
    return schema_policy(file, root, diags, false);
}

struct model_policy *model_schema_policy_partial(const char *file, const struct model_node *root,
                                                 struct model_diags *diags)
{
    return schema_policy(file, root, diags, true);
}

pv_result model_schema_rule(const char *file, const struct model_node *n, struct model_rule *out,
                            struct model_diags *diags)
{
    struct model_walk w = {file != NULL ? file : "<input>", diags, false};
    size_t before;

    PV_ENSURE_REF(n);
    PV_ENSURE_REF(out);
    PV_ENSURE_REF(diags);
    memset(out, 0, sizeof(*out));
    before = model_diags_count(diags);
    if (n->kind != MODEL_NODE_MAP) {
        model_walk_err(&w, n->mark, "network policy rule must be a mapping");
    } else {
        read_rule(&w, n, "network policy rule", out);
    }
    if (w.nomem) {
        model_rule_clear(out);
        PV_BAIL(PV_ERR_NOMEM);
    }
    if (model_diags_count(diags) != before) {
        model_rule_clear(out);
        PV_BAIL(PV_ERR_POLICY);
    }
    return PV_RESULT_OK;
}
