/* SPDX-License-Identifier: Apache-2.0 */
/* model_canon.c - canonical policy form: JSON, YAML and SHA-256
 *
 * One builder turns a policy into a jansson tree in a fixed schema order
 * (network_policies by key, query keys and persisted queries by name, opaque
 * values with sorted keys); the JSON emitter dumps it with sorted keys, the
 * YAML emitter walks it in insertion order through libyaml's emitter in block
 * style, and the hash is SHA-256 over the compact sorted JSON. Absent, empty
 * and false values are omitted, ports are sorted and de-duplicated ("port"
 * for one, "ports" for several), access presets stay as written, `harness`
 * is never written and `advisor_proposed` only when true. Both outputs load
 * back to a policy with the same canonical form.
 */
#include "config.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/pv_dynbuf.h"
#include "model/model_int.h"

/* ---------------------------------------------------------------------------
 * Policy to jansson tree
 * ------------------------------------------------------------------------- */

struct build {
    bool ok;
};

static void put(struct build *b, json_t *obj, const char *key, json_t *v /* steals */)
{
    if (v == NULL || json_object_set_new(obj, key, v) != 0) {
        b->ok = false;
    }
}

static void put_str(struct build *b, json_t *obj, const char *key, const struct model_sval *v)
{
    if (v->s != NULL && v->s[0] != '\0') {
        put(b, obj, key, json_string(v->s));
    }
}

static void put_bool(struct build *b, json_t *obj, const char *key, bool v)
{
    if (v) {
        put(b, obj, key, json_true());
    }
}

static void put_u32(struct build *b, json_t *obj, const char *key, uint32_t v)
{
    if (v != 0) {
        put(b, obj, key, json_integer((json_int_t)v));
    }
}

static json_t *strlist_json(struct build *b, const struct model_strlist *l)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < l->n; i++) {
        if (json_array_append_new(a, json_string(l->v[i].s != NULL ? l->v[i].s : "")) != 0) {
            b->ok = false;
        }
    }
    return a;
}

static void put_strlist(struct build *b, json_t *obj, const char *key,
                        const struct model_strlist *l)
{
    if (l->n > 0) {
        put(b, obj, key, strlist_json(b, l));
    }
}

/* Deep copy with object keys inserted in sorted order, so that the YAML
 * output of opaque values is as stable as the JSON one. */
static json_t *sorted_copy(json_t *j)
{
    json_t *c;

    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(j), i = 0;
        const char **keys = pv_malloc((n == 0 ? 1 : n) * sizeof(*keys));
        const char *k;
        json_t *v;
        if (keys == NULL) {
            return NULL;
        }
        json_object_foreach(j, k, v)
        {
            keys[i++] = k;
        }
        for (size_t a = 1; a < n; a++) {
            const char *t = keys[a];
            size_t z = a;
            while (z > 0 && strcmp(keys[z - 1], t) > 0) {
                keys[z] = keys[z - 1];
                z--;
            }
            keys[z] = t;
        }
        c = json_object();
        for (i = 0; c != NULL && i < n; i++) {
            if (json_object_set_new(c, keys[i], sorted_copy(json_object_get(j, keys[i]))) != 0) {
                json_decref(c);
                c = NULL;
            }
        }
        free(keys);
        return c;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *v;
        c = json_array();
        json_array_foreach(j, i, v)
        {
            if (c != NULL && json_array_append_new(c, sorted_copy(v)) != 0) {
                json_decref(c);
                c = NULL;
            }
        }
        return c;
    }
    default:
        return json_deep_copy(j);
    }
}

static int cmp_u16(const void *a, const void *b)
{
    uint16_t x = *(const uint16_t *)a, y = *(const uint16_t *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

static void put_ports(struct build *b, json_t *obj, const struct model_endpoint *e)
{
    uint16_t *ports;
    size_t n = 0;
    json_t *a;

    if (e->nports == 0) {
        return;
    }
    ports = pv_malloc(e->nports * sizeof(*ports));
    if (ports == NULL) {
        b->ok = false;
        return;
    }
    memcpy(ports, e->ports, e->nports * sizeof(*ports));
    qsort(ports, e->nports, sizeof(*ports), cmp_u16);
    for (size_t i = 0; i < e->nports; i++) {
        if (n == 0 || ports[n - 1] != ports[i]) {
            ports[n++] = ports[i];
        }
    }
    if (n == 1) {
        put(b, obj, "port", json_integer(ports[0]));
    } else {
        a = json_array();
        for (size_t i = 0; a != NULL && i < n; i++) {
            if (json_array_append_new(a, json_integer(ports[i])) != 0) {
                b->ok = false;
            }
        }
        put(b, obj, "ports", a);
    }
    free(ports);
}

/* Elements are pointers to 'char *' members. */
static int cmp_str_ptr(const void *a, const void *b)
{
    const char *x = **(const char *const *const *)a;
    const char *y = **(const char *const *const *)b;
    return strcmp(x != NULL ? x : "", y != NULL ? y : "");
}

/* Pointers to the 'char *' member at 'name_off' of each of the 'n' elements
 * of 'size' bytes at 'base', sorted by that string (NULL sorts as ""). */
static const void **sorted_by_name(const void *base, size_t n, size_t size, size_t name_off)
{
    const void **v = pv_malloc((n == 0 ? 1 : n) * sizeof(*v));
    if (v == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        v[i] = (const char *)base + i * size + name_off;
    }
    qsort(v, n, sizeof(*v), cmp_str_ptr);
    return v;
}

static json_t *query_json(struct build *b, const struct model_l7rule *r)
{
    const void **order =
        sorted_by_name(r->query, r->nquery, sizeof(*r->query), offsetof(struct model_query, key.s));
    json_t *o = json_object();

    if (order == NULL || o == NULL) {
        free(order);
        json_decref(o);
        b->ok = false;
        return NULL;
    }
    for (size_t i = 0; i < r->nquery; i++) {
        const struct model_query *q =
            (const void *)((const char *)order[i] - offsetof(struct model_query, key.s));
        const char *key = q->key.s != NULL ? q->key.s : "";
        json_t *m;
        switch (q->form) {
        case MODEL_QFORM_STRING:
            put(b, o, key, json_string(q->globs.n > 0 && q->globs.v[0].s ? q->globs.v[0].s : ""));
            break;
        case MODEL_QFORM_GLOB:
            m = json_object();
            if (m != NULL) {
                put(b, m, "glob",
                    json_string(q->globs.n > 0 && q->globs.v[0].s ? q->globs.v[0].s : ""));
            }
            put(b, o, key, m);
            break;
        case MODEL_QFORM_ANY:
            m = json_object();
            if (m != NULL) {
                put(b, m, "any", strlist_json(b, &q->globs));
            }
            put(b, o, key, m);
            break;
        }
    }
    free(order);
    return o;
}

/* One row of a canonical table (model_int.h) of the struct 'obj' into the
 * JSON object 'o'; the list kinds read the member's count, n<member>. */
#define PUT_STR(key, m) put_str(b, o, key, &obj->m);
#define PUT_STRALL(key, m) put(b, o, key, json_string(obj->m.s != NULL ? obj->m.s : ""));
#define PUT_STRLIST(key, m) put_strlist(b, o, key, &obj->m);
#define PUT_BOOL(key, m) put_bool(b, o, key, obj->m);
#define PUT_U32(key, m) put_u32(b, o, key, obj->m);
#define PUT_JSON(key, m)                     \
    if (obj->m != NULL) {                    \
        put(b, o, key, sorted_copy(obj->m)); \
    }
#define PUT_QUERY(key, m)                   \
    if (obj->n##m > 0) {                    \
        put(b, o, key, query_json(b, obj)); \
    }
#define PUT_ENDPOINTS(key, m)                   \
    if (obj->n##m > 0) {                        \
        put(b, o, key, endpoints_json(b, obj)); \
    }
#define PUT_BINARIES(key, m)                   \
    if (obj->n##m > 0) {                       \
        put(b, o, key, binaries_json(b, obj)); \
    }
#define CANON_ROW(kind, key, m) PUT_##kind(key, m)

static json_t *l7_json(struct build *b, const struct model_l7rule *obj)
{
    json_t *o = json_object();
    if (o == NULL) {
        b->ok = false;
        return NULL;
    }
    MODEL_L7RULE_CANON(CANON_ROW)
    return o;
}

static json_t *l7_list_json(struct build *b, const struct model_l7rule *v, size_t n, bool allow)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < n; i++) {
        json_t *m = l7_json(b, &v[i]);
        if (allow && m != NULL) {
            json_t *item = json_object();
            put(b, item, "allow", m);
            m = item;
        }
        if (m == NULL || json_array_append_new(a, m) != 0) {
            b->ok = false;
        }
    }
    if (a == NULL) {
        b->ok = false;
    }
    return a;
}

static json_t *gql_entry_json(struct build *b, const struct model_gql_persisted *obj)
{
    json_t *o = json_object();
    if (o == NULL) {
        b->ok = false;
        return NULL;
    }
    MODEL_GQLPQ_CANON(CANON_ROW)
    return o;
}

static json_t *gql_json(struct build *b, const struct model_endpoint *e)
{
    const void **order =
        sorted_by_name(e->gql_persisted, e->ngql_persisted, sizeof(*e->gql_persisted),
                       offsetof(struct model_gql_persisted, id.s));
    json_t *o = json_object();

    if (order == NULL || o == NULL) {
        free(order);
        json_decref(o);
        b->ok = false;
        return NULL;
    }
    for (size_t i = 0; i < e->ngql_persisted; i++) {
        const struct model_gql_persisted *g =
            (const void *)((const char *)order[i] - offsetof(struct model_gql_persisted, id.s));
        put(b, o, g->id.s != NULL ? g->id.s : "", gql_entry_json(b, g));
    }
    free(order);
    return o;
}

static json_t *endpoint_json(struct build *b, const struct model_endpoint *e)
{
    json_t *o = json_object();
    json_t *sub;

    if (o == NULL) {
        b->ok = false;
        return NULL;
    }
    /* the flat members, one key each (MODEL_ENDPOINT_CANON in model_int.h) */
    {
        const struct model_endpoint *obj = e;
        MODEL_ENDPOINT_CANON(CANON_ROW)
    }
    put_ports(b, o, e);
    if (e->nrules > 0) {
        put(b, o, "rules", l7_list_json(b, e->rules, e->nrules, true));
    }
    if (e->ndeny > 0) {
        put(b, o, "deny_rules", l7_list_json(b, e->deny_rules, e->ndeny, false));
    }
    if (e->ngql_persisted > 0) {
        put(b, o, "graphql_persisted_queries", gql_json(b, e));
    }
    if (e->credential_binding_provider.s != NULL && e->credential_binding_provider.s[0] != '\0') {
        sub = json_object();
        put_str(b, sub, "provider", &e->credential_binding_provider);
        put(b, o, "credential_binding", sub);
    }
    /* json_rpc and mcp are kept even when empty: their presence is checked. */
    if (e->has_json_rpc) {
        sub = json_object();
        put_u32(b, sub, "max_body_bytes", e->json_rpc_max_body_bytes);
        put(b, o, "json_rpc", sub);
    }
    if (e->has_mcp) {
        sub = json_object();
        put_u32(b, sub, "max_body_bytes", e->mcp_max_body_bytes);
        if (e->mcp_strict_given) {
            /* written as given: absent means on (docs/semantics.md#rpc-read) */
            put(b, sub, "strict_tool_names", json_boolean(e->mcp_strict_tool_names));
        }
        put_bool(b, sub, "allow_all_known_mcp_methods", e->mcp_allow_all_known_methods);
        put(b, o, "mcp", sub);
    }
    return o;
}

static json_t *endpoints_json(struct build *b, const struct model_rule *r)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < r->nendpoints; i++) {
        if (json_array_append_new(a, endpoint_json(b, &r->endpoints[i])) != 0) {
            b->ok = false;
        }
    }
    return a;
}

static json_t *binary_json(struct build *b, const struct model_binary *obj)
{
    json_t *o = json_object();
    if (o == NULL) {
        return NULL;
    }
    MODEL_BINARY_CANON(CANON_ROW)
    return o;
}

static json_t *binaries_json(struct build *b, const struct model_rule *r)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < r->nbinaries; i++) {
        if (json_array_append_new(a, binary_json(b, &r->binaries[i])) != 0) {
            b->ok = false;
        }
    }
    return a;
}

static json_t *rule_json(struct build *b, const struct model_rule *obj)
{
    json_t *o = json_object();

    if (o == NULL) {
        b->ok = false;
        return NULL;
    }
    MODEL_RULE_CANON(CANON_ROW)
    return o;
}

#undef CANON_ROW
#undef PUT_STR
#undef PUT_STRALL
#undef PUT_STRLIST
#undef PUT_BOOL
#undef PUT_U32
#undef PUT_JSON
#undef PUT_QUERY
#undef PUT_ENDPOINTS
#undef PUT_BINARIES

static json_t *policies_json(struct build *b, const struct model_policy *p)
{
    const void **order =
        sorted_by_name(p->rules, p->nrules, sizeof(*p->rules), offsetof(struct model_rule, key));
    json_t *o = json_object();

    if (order == NULL || o == NULL) {
        free(order);
        json_decref(o);
        b->ok = false;
        return NULL;
    }
    for (size_t i = 0; i < p->nrules; i++) {
        const struct model_rule *r =
            (const void *)((const char *)order[i] - offsetof(struct model_rule, key));
        put(b, o, r->key != NULL ? r->key : "", rule_json(b, r));
    }
    free(order);
    return o;
}

/* New reference, or NULL on NOMEM or text that is not UTF-8. */
static json_t *policy_tree(const struct model_policy *p)
{
    struct build b = {true};
    json_t *o = json_object();
    json_t *sub;

    if (o == NULL) {
        return NULL;
    }
    if (p->has_version) {
        put(&b, o, "version", json_integer((json_int_t)p->version));
    }
    if (p->include_workdir || p->fs_read_only.n > 0 || p->fs_read_write.n > 0) {
        sub = json_object();
        if (sub != NULL) {
            put_bool(&b, sub, "include_workdir", p->include_workdir);
            put_strlist(&b, sub, "read_only", &p->fs_read_only);
            put_strlist(&b, sub, "read_write", &p->fs_read_write);
        }
        put(&b, o, "filesystem_policy", sub);
    }
    if (p->landlock_compat.s != NULL && p->landlock_compat.s[0] != '\0') {
        sub = json_object();
        if (sub != NULL) {
            put_str(&b, sub, "compatibility", &p->landlock_compat);
        }
        put(&b, o, "landlock", sub);
    }
    if ((p->run_as_user.s != NULL && p->run_as_user.s[0] != '\0') ||
        (p->run_as_group.s != NULL && p->run_as_group.s[0] != '\0')) {
        sub = json_object();
        if (sub != NULL) {
            put_str(&b, sub, "run_as_user", &p->run_as_user);
            put_str(&b, sub, "run_as_group", &p->run_as_group);
        }
        put(&b, o, "process", sub);
    }
    if (p->nrules > 0) {
        put(&b, o, "network_policies", policies_json(&b, p));
    }
    if (p->middlewares != NULL && json_object_size(p->middlewares) > 0) {
        put(&b, o, "network_middlewares", sorted_copy(p->middlewares));
    }
    if (!b.ok) {
        json_decref(o);
        pv_errno = PV_ERR_NOMEM;
        return NULL;
    }
    return o;
}

/* ---------------------------------------------------------------------------
 * JSON and hash
 * ------------------------------------------------------------------------- */

char *model_policy_to_json(const struct model_policy *p, size_t *len)
{
    json_t *t;
    char *s;
    char *out;
    size_t n;

    if (p == NULL) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    t = policy_tree(p);
    if (t == NULL) {
        return NULL;
    }
    s = json_dumps(t, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_decref(t);
    if (s == NULL) {
        pv_errno = PV_ERR_NOMEM;
        return NULL;
    }
    n = strlen(s);
    out = pv_malloc(n + 2);
    if (out != NULL) {
        memcpy(out, s, n);
        out[n] = '\n';
        out[n + 1] = '\0';
        if (len != NULL) {
            *len = n + 1;
        }
    }
    free(s);
    return out;
}

/* The SHA-256 (hex) of a canonical tree's compact, key-sorted JSON. */
static pv_result tree_sha256(const json_t *t, char out[65])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    char *s;
    int ok;

    s = json_dumps(t, JSON_COMPACT | JSON_SORT_KEYS);
    PV_ENSURE(s != NULL, PV_ERR_NOMEM);
    ok = EVP_Digest(s, strlen(s), md, &mdlen, EVP_sha256(), NULL);
    free(s);
    PV_GUARD_OSSL(ok, PV_ERR_INTERNAL);
    PV_ENSURE(mdlen == 32, PV_ERR_INTERNAL);
    for (unsigned i = 0; i < mdlen; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[64] = '\0';
    return PV_RESULT_OK;
}

pv_result model_policy_sha256(const struct model_policy *p, char out[65])
{
    json_t *t;
    pv_result r;

    PV_ENSURE_REF(p);
    PV_ENSURE_REF(out);
    t = policy_tree(p);
    PV_GUARD_PTR(t);
    r = tree_sha256(t, out);
    json_decref(t);
    return r;
}

/* ---------------------------------------------------------------------------
 * YAML
 * ------------------------------------------------------------------------- */

static int yaml_out(void *data, unsigned char *buffer, size_t size)
{
    return pv_ok(pv_dynbuf_add(data, buffer, size)) ? 1 : 0;
}

/* Would this text, written as a plain scalar, read back as something other
 * than a string (null, bool, number) in YAML 1.1 or 1.2? Then quote it. */
static bool needs_quotes(const char *s, size_t len)
{
    static const char *const words[] = {
        "~",  "null", "Null", "NULL", "y",    "Y",    "yes",  "Yes",   "YES",   "n",
        "N",  "no",   "No",   "NO",   "true", "True", "TRUE", "false", "False", "FALSE",
        "on", "On",   "ON",   "off",  "Off",  "OFF",  "<<",   "=",
    };
    char c0;

    if (len == 0) {
        return true;
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(words); i++) {
        if (strlen(words[i]) == len && memcmp(words[i], s, len) == 0) {
            return true;
        }
    }
    c0 = s[0];
    if (c0 >= '0' && c0 <= '9') {
        return true;
    }
    if ((c0 == '-' || c0 == '+' || c0 == '.') && len > 1) {
        char c1 = s[1];
        return (c1 >= '0' && c1 <= '9') || c1 == '.' || c1 == 'i' || c1 == 'I' || c1 == 'n' ||
               c1 == 'N';
    }
    return false;
}

static bool emit(yaml_emitter_t *em, yaml_event_t *ev, int init_ok)
{
    if (!init_ok) {
        return false;
    }
    return yaml_emitter_emit(em, ev) == 1;
}

static bool emit_scalar(yaml_emitter_t *em, const char *s, size_t len, bool is_string)
{
    yaml_event_t ev;
    yaml_scalar_style_t style = YAML_PLAIN_SCALAR_STYLE;

    if (is_string) {
        style = needs_quotes(s, len) ? YAML_SINGLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE;
    }
    return emit(em, &ev,
                yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)(uintptr_t)s, (int)len,
                                             1, 1, style));
}

static bool emit_value(yaml_emitter_t *em, json_t *j);

static bool emit_object(yaml_emitter_t *em, json_t *j)
{
    yaml_event_t ev;
    const char *k;
    json_t *v;
    bool empty = json_object_size(j) == 0;

    yaml_mapping_style_t style = empty ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE;

    if (!emit(em, &ev, yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, style))) {
        return false;
    }
    json_object_foreach(j, k, v)
    {
        if (!emit_scalar(em, k, strlen(k), true) || !emit_value(em, v)) {
            return false;
        }
    }
    return emit(em, &ev, yaml_mapping_end_event_initialize(&ev));
}

static bool emit_array(yaml_emitter_t *em, json_t *j)
{
    yaml_event_t ev;
    size_t i;
    json_t *v;
    bool empty = json_array_size(j) == 0;

    if (!emit(em, &ev,
              yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
                                                   empty ? YAML_FLOW_SEQUENCE_STYLE
                                                         : YAML_BLOCK_SEQUENCE_STYLE))) {
        return false;
    }
    json_array_foreach(j, i, v)
    {
        if (!emit_value(em, v)) {
            return false;
        }
    }
    return emit(em, &ev, yaml_sequence_end_event_initialize(&ev));
}

/* Depth is bounded by the policy schema and by the readers' 64 levels for
 * opaque values. */
static bool emit_value(yaml_emitter_t *em, json_t *j)
{
    char num[64];
    int n;

    switch (json_typeof(j)) {
    case JSON_OBJECT:
        return emit_object(em, j);
    case JSON_ARRAY:
        return emit_array(em, j);
    case JSON_STRING:
        return emit_scalar(em, json_string_value(j), json_string_length(j), true);
    case JSON_INTEGER:
        n = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(j));
        return emit_scalar(em, num, (size_t)n, false);
    case JSON_REAL:
        n = snprintf(num, sizeof(num), "%.17g", json_real_value(j));
        if (n > 0 && (size_t)n < sizeof(num) - 3 && strpbrk(num, ".eE") == NULL) {
            memcpy(num + n, ".0", 3);
            n += 2;
        }
        return emit_scalar(em, num, (size_t)n, false);
    case JSON_TRUE:
        return emit_scalar(em, "true", 4, false);
    case JSON_FALSE:
        return emit_scalar(em, "false", 5, false);
    case JSON_NULL:
        return emit_scalar(em, "null", 4, false);
    default:
        return false;
    }
}

static bool emit_document(yaml_emitter_t *em, json_t *t)
{
    yaml_event_t ev;

    return emit(em, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING)) &&
           emit(em, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1)) &&
           emit_value(em, t) && emit(em, &ev, yaml_document_end_event_initialize(&ev, 1)) &&
           emit(em, &ev, yaml_stream_end_event_initialize(&ev));
}

/* The canonical YAML of 'p' and, when 'hash' is not NULL, its SHA-256 from
 * the same canonical tree (one tree for both). */
static char *to_yaml(const struct model_policy *p, size_t *len, char *hash)
{
    yaml_emitter_t em;
    struct pv_dynbuf out;
    json_t *t;
    bool ok;

    if (p == NULL) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    t = policy_tree(p);
    if (t == NULL) {
        return NULL;
    }
    if (hash != NULL && !pv_ok(tree_sha256(t, hash))) {
        json_decref(t);
        pv_errno = PV_ERR_NOMEM;
        return NULL;
    }
    if (!yaml_emitter_initialize(&em)) {
        json_decref(t);
        pv_errno = PV_ERR_NOMEM;
        return NULL;
    }
    pv_dynbuf_init(&out, SIZE_MAX / 2);
    yaml_emitter_set_output(&em, yaml_out, &out);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, -1);
    yaml_emitter_set_indent(&em, 2);
    ok = emit_document(&em, t) && yaml_emitter_flush(&em) == 1;
    yaml_emitter_delete(&em);
    json_decref(t);
    if (!ok) {
        pv_dynbuf_free(&out);
        pv_errno = PV_ERR_NOMEM;
        return NULL;
    }
    return pv_dynbuf_take(&out, len);
}

char *model_policy_to_yaml(const struct model_policy *p, size_t *len)
{
    return to_yaml(p, len, NULL);
}

char *model_policy_to_yaml_sha256(const struct model_policy *p, size_t *len, char hash[65])
{
    if (hash == NULL) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    return to_yaml(p, len, hash);
}
