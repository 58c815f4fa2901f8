/* SPDX-License-Identifier: Apache-2.0 */
/* model_schema.c - schema walker: model_node tree to struct model_policy
 *
 * One walker serves both document formats, so YAML and JSON policies get the
 * same shape checks and the same messages. Each object of the schema
 * (docs/semantics.md, docs/reference-compat.md#policy) is a table
 * of fields; a key not in the table is "unknown field 'k' in <context>" at the
 * key, a value of the wrong shape is "field 'k' must be ..." at the value.
 * Every error is collected (a bad value is reported once and skipped, so
 * errors do not cascade). Semantic constraints (port 0, port with ports,
 * host syntax, ...) belong to model_validate.c; this file only checks shapes
 * and representable ranges (port fits u16, version and body limits fit u32).
 *
 * Typing: a JSON scalar must have the JSON type the field wants. A YAML
 * scalar is a string for string fields (quoted or not); a boolean only as the
 * plain scalars true/false; an integer only as plain decimal digits without
 * leading zeros. A YAML null (or JSON null) value means "absent".
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pv_dynbuf.h"
#include "model/model_int.h"

struct walk {
    const char *file;
    struct model_diags *diags;
    bool nomem;
};

struct field {
    const char *key;
    void (*fn)(struct walk *w, const struct field *f, const struct model_node *key,
               const struct model_node *v, void *obj);
    size_t off; /* of the destination member, for the generic handlers */
};

/* ---------------------------------------------------------------------------
 * Diagnostics helpers
 * ------------------------------------------------------------------------- */

static void err(struct walk *w, struct model_mark mark, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void err(struct walk *w, struct model_mark mark, const char *fmt, ...)
{
    struct pv_dynbuf b;
    va_list ap;
    pv_result r;

    pv_dynbuf_init(&b, 4096);
    va_start(ap, fmt);
    r = pv_dynbuf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (!pv_ok(r) ||
        !pv_ok(model_diag_add(w->diags, w->file, mark, "%s", b.buf != NULL ? b.buf : ""))) {
        w->nomem = true;
    }
    pv_dynbuf_free(&b);
}

static void nomem(struct walk *w)
{
    w->nomem = true;
}

/* User text echoed in a message: control bytes become '?', long text is cut
 * at a UTF-8 boundary. 'out' has room for 80 bytes + "..." + NUL. */
#define SHOWN_MAX 80
static const char *shown(char out[SHOWN_MAX + 4], const char *s, size_t len)
{
    size_t n = len;
    bool cut = false;

    if (n > SHOWN_MAX) {
        n = SHOWN_MAX;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) {
            n--;
        }
        cut = true;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        out[i] = (c < 0x20 || c == 0x7F) ? '?' : (char)c;
    }
    if (cut) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
    return out;
}

/* ---------------------------------------------------------------------------
 * Scalar typing
 * ------------------------------------------------------------------------- */

/* Plain YAML decimal integer: -?(0|[1-9][0-9]*). */
static bool yaml_int_text(const char *s, size_t len)
{
    size_t i = 0;
    if (len > 0 && s[0] == '-') {
        i = 1;
    }
    if (i >= len) {
        return false;
    }
    if (s[i] == '0' && len - i > 1) {
        return false;
    }
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
    }
    return true;
}

static bool node_is_int(const struct model_node *v)
{
    if (v->kind != MODEL_NODE_SCALAR) {
        return false;
    }
    if (v->json_typed) {
        return v->json_type == JSON_INTEGER;
    }
    return !v->quoted && yaml_int_text(v->scalar, v->scalar_len);
}

static char *dup_scalar(struct walk *w, const struct model_node *v)
{
    char *s = pv_strndup(v->scalar, v->scalar_len);
    if (s == NULL) {
        nomem(w);
    }
    return s;
}

static void set_sval(struct walk *w, struct model_sval *dst, const struct model_node *v)
{
    char *s = dup_scalar(w, v);
    if (s == NULL) {
        return;
    }
    free(dst->s);
    dst->s = s;
    dst->mark = v->mark;
}

/* Read an unsigned integer no larger than 'max'. Returns false after
 * reporting the problem. 'what' names the field in messages. */
static bool get_uint(struct walk *w, const char *what, const struct model_node *v, uint64_t max,
                     uint64_t *out)
{
    char buf[SHOWN_MAX + 4];
    const char *digits;
    size_t n;

    if (!node_is_int(v)) {
        err(w, v->mark, "field '%s' must be an integer", what);
        return false;
    }
    digits = v->scalar;
    n = v->scalar_len;
    if (n == 0 || digits[0] == '-' || !pv_ok(pv_parse_u64(digits, n, max, out))) {
        if (strcmp(what, "port") == 0 || strcmp(what, "ports") == 0) {
            err(w, v->mark, "port %s is out of range (0..%llu)", shown(buf, digits, n),
                (unsigned long long)max);
        } else {
            err(w, v->mark, "field '%s' value %s is out of range (0..%llu)", what,
                shown(buf, digits, n), (unsigned long long)max);
        }
        return false;
    }
    return true;
}

/* ---------------------------------------------------------------------------
 * Objects
 * ------------------------------------------------------------------------- */

/* Edit distance (insert, delete, substitute, swap of neighbours) between the
 * key 'k' ('klen' bytes, at most 32 considered) and 'name', capped at 3. */
static size_t key_distance(const char *k, size_t klen, const char *name)
{
    size_t nlen = strlen(name);
    size_t d[33][33];

    if (klen > 32 || nlen > 32) {
        return 3;
    }
    for (size_t i = 0; i <= klen; i++) {
        d[i][0] = i;
    }
    for (size_t j = 0; j <= nlen; j++) {
        d[0][j] = j;
    }
    for (size_t i = 1; i <= klen; i++) {
        for (size_t j = 1; j <= nlen; j++) {
            char a = k[i - 1];
            char b = name[j - 1];
            size_t best = d[i - 1][j - 1] + (a == b || (a ^ 0x20) == b ? 0 : 1);

            if (d[i - 1][j] + 1 < best) {
                best = d[i - 1][j] + 1;
            }
            if (d[i][j - 1] + 1 < best) {
                best = d[i][j - 1] + 1;
            }
            if (i > 1 && j > 1 && a == name[j - 2] && k[i - 2] == b && d[i - 2][j - 2] + 1 < best) {
                best = d[i - 2][j - 2] + 1;
            }
            d[i][j] = best;
        }
    }
    return d[klen][nlen] < 3 ? d[klen][nlen] : 3;
}

/* The field of 'fields' closest to the unknown key 'k' (distance 1, or 2 for
 * keys of 6 bytes and more), or NULL: "did you mean 'enforcement'?". */
static const char *suggest(const struct model_node *k, const struct field *fields, size_t nfields)
{
    const char *best = NULL;
    size_t bestd = k->scalar_len >= 6 ? 3 : 2;

    for (size_t j = 0; j < nfields; j++) {
        size_t dist = key_distance(k->scalar, k->scalar_len, fields[j].key);

        if (dist < bestd) {
            bestd = dist;
            best = fields[j].key;
        }
    }
    return best;
}

/* Walk the pairs of 'map' through 'fields'. Bit i of the result is set when
 * fields[i] was present. */
static uint64_t walk_map(struct walk *w, const struct model_node *map, const char *ctx,
                         const struct field *fields, size_t nfields, void *obj)
{
    uint64_t seen = 0;

    for (size_t i = 0; i + 1 < map->nitems; i += 2) {
        const struct model_node *k = map->items[i];
        const struct model_node *v = map->items[i + 1];
        size_t j;

        if (k->kind != MODEL_NODE_SCALAR) {
            err(w, k->mark, "mapping keys must be strings");
            continue;
        }
        for (j = 0; j < nfields; j++) {
            if (model_node_key_is(k, fields[j].key)) {
                break;
            }
        }
        if (j == nfields) {
            char buf[SHOWN_MAX + 4];
            const char *near = suggest(k, fields, nfields);

            if (near != NULL) {
                err(w, k->mark, "unknown field '%s' in %s (did you mean '%s'?)",
                    shown(buf, k->scalar, k->scalar_len), ctx, near);
            } else {
                err(w, k->mark, "unknown field '%s' in %s", shown(buf, k->scalar, k->scalar_len),
                    ctx);
            }
            continue;
        }
        seen |= (uint64_t)1 << j;
        fields[j].fn(w, &fields[j], k, v, obj);
    }
    return seen;
}

static bool expect_map(struct walk *w, const char *what, const struct model_node *v)
{
    if (v->kind == MODEL_NODE_MAP) {
        return true;
    }
    err(w, v->mark, "field '%s' must be a mapping", what);
    return false;
}

/* Lists: NULL means absent (false without a message). */
static bool expect_list(struct walk *w, const char *what, const struct model_node *v)
{
    if (v->kind == MODEL_NODE_SEQ) {
        return true;
    }
    if (v->kind != MODEL_NODE_NULL) {
        err(w, v->mark, "field '%s' must be a list", what);
    }
    return false;
}

#define MEMBER(obj, f, type) ((type *)(void *)((char *)(obj) + (f)->off))

/* ---------------------------------------------------------------------------
 * Generic field handlers
 * ------------------------------------------------------------------------- */

static void f_str(struct walk *w, const struct field *f, const struct model_node *key,
                  const struct model_node *v, void *obj)
{
    (void)key;
    if (v->kind == MODEL_NODE_NULL) {
        return;
    }
    if (!model_node_is_string(v)) {
        err(w, v->mark, "field '%s' must be a string", f->key);
        return;
    }
    set_sval(w, MEMBER(obj, f, struct model_sval), v);
}

static void f_bool(struct walk *w, const struct field *f, const struct model_node *key,
                   const struct model_node *v, void *obj)
{
    int b;
    (void)key;
    if (v->kind == MODEL_NODE_NULL) {
        return;
    }
    b = model_node_bool(v);
    if (b < 0) {
        err(w, v->mark, "field '%s' must be a boolean (true or false)", f->key);
        return;
    }
    *MEMBER(obj, f, bool) = b == 1;
}

static void f_u32(struct walk *w, const struct field *f, const struct model_node *key,
                  const struct model_node *v, void *obj)
{
    uint64_t x;
    (void)key;
    if (v->kind == MODEL_NODE_NULL) {
        return;
    }
    if (get_uint(w, f->key, v, UINT32_MAX, &x)) {
        *MEMBER(obj, f, uint32_t) = (uint32_t)x;
    }
}

static void read_strlist(struct walk *w, const char *what, const struct model_node *v,
                         struct model_strlist *l)
{
    if (!expect_list(w, what, v)) {
        return;
    }
    model_strlist_clear(l);
    l->mark = v->mark;
    if (v->nitems == 0) {
        return;
    }
    l->v = pv_calloc(v->nitems, sizeof(*l->v));
    if (l->v == NULL) {
        nomem(w);
        return;
    }
    for (size_t i = 0; i < v->nitems; i++) {
        const struct model_node *it = v->items[i];
        if (!model_node_is_string(it)) {
            err(w, it->mark, "field '%s' must be a list of strings", what);
            continue;
        }
        set_sval(w, &l->v[l->n], it);
        if (l->v[l->n].s != NULL) {
            l->n++;
        }
    }
}

static void f_strlist(struct walk *w, const struct field *f, const struct model_node *key,
                      const struct model_node *v, void *obj)
{
    (void)key;
    read_strlist(w, f->key, v, MEMBER(obj, f, struct model_strlist));
}

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
        if (yaml_int_text(v->scalar, v->scalar_len)) {
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

static void f_q_glob(struct walk *w, const struct field *f, const struct model_node *key,
                     const struct model_node *v, void *obj)
{
    struct qwalk *qw = obj;
    (void)key;
    if (!model_node_is_string(v)) {
        err(w, v->mark, "field '%s' must be a string", f->key);
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
        nomem(w);
        return;
    }
    qw->q->globs.mark = v->mark;
    set_sval(w, &qw->q->globs.v[0], v);
    qw->q->globs.n = qw->q->globs.v[0].s != NULL ? 1 : 0;
}

static void f_q_any(struct walk *w, const struct field *f, const struct model_node *key,
                    const struct model_node *v, void *obj)
{
    struct qwalk *qw = obj;
    (void)key;
    if (v->kind != MODEL_NODE_SEQ) {
        err(w, v->mark, "field '%s' must be a list", f->key);
        return;
    }
    qw->has_any = true;
    if (qw->has_glob) {
        return;
    }
    qw->q->form = MODEL_QFORM_ANY;
    read_strlist(w, f->key, v, &qw->q->globs);
}

static const struct field query_fields[] = {
    {"glob", f_q_glob, 0},
    {"any", f_q_any, 0},
};

static void read_query_value(struct walk *w, const struct model_node *k, const struct model_node *v,
                             struct model_query *q)
{
    char buf[SHOWN_MAX + 4];

    if (model_node_is_string(v)) {
        q->form = MODEL_QFORM_STRING;
        q->globs.v = pv_calloc(1, sizeof(struct model_sval));
        if (q->globs.v == NULL) {
            nomem(w);
            return;
        }
        q->globs.mark = v->mark;
        set_sval(w, &q->globs.v[0], v);
        q->globs.n = q->globs.v[0].s != NULL ? 1 : 0;
        return;
    }
    if (v->kind == MODEL_NODE_MAP) {
        struct qwalk qw = {q, false, false};
        size_t before = model_diags_count(w->diags);
        (void)walk_map(w, v, "query matcher", query_fields, PV_ARRAY_LEN(query_fields), &qw);
        if (qw.has_glob && qw.has_any) {
            err(w, v->mark, "query matcher for '%s' cannot have both 'glob' and 'any'",
                shown(buf, k->scalar, k->scalar_len));
        } else if (!qw.has_glob && !qw.has_any && model_diags_count(w->diags) == before &&
                   !w->nomem) {
            err(w, v->mark, "query matcher for '%s' requires 'glob' or 'any'",
                shown(buf, k->scalar, k->scalar_len));
        }
        return;
    }
    err(w, v->mark, "query value for '%s' must be a string or a mapping with 'glob' or 'any'",
        shown(buf, k->scalar, k->scalar_len));
}

static void f_query(struct walk *w, const struct field *f, const struct model_node *key,
                    const struct model_node *v, void *obj)
{
    struct model_l7rule *r = obj;
    size_t npairs;

    (void)key;
    if (v->kind == MODEL_NODE_NULL || !expect_map(w, f->key, v)) {
        return;
    }
    npairs = v->nitems / 2;
    if (npairs == 0) {
        return;
    }
    r->query = pv_calloc(npairs, sizeof(*r->query));
    if (r->query == NULL) {
        nomem(w);
        return;
    }
    r->nquery = npairs;
    for (size_t i = 0; i < npairs; i++) {
        const struct model_node *k = v->items[2 * i];
        struct model_query *q = &r->query[i];
        set_sval(w, &q->key, k);
        read_query_value(w, k, v->items[2 * i + 1], q);
    }
}

static void f_params(struct walk *w, const struct field *f, const struct model_node *key,
                     const struct model_node *v, void *obj)
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
        nomem(w);
    }
}

#define L7(name, fn)                                   \
    {                                                  \
#name, fn, offsetof(struct model_l7rule, name) \
    }
static const struct field l7_fields[] = {
    L7(method, f_str),     L7(path, f_str),           L7(command, f_str),
    {"query", f_query, 0}, L7(operation_type, f_str), L7(operation_name, f_str),
    L7(fields, f_strlist), L7(tool, f_str),           {"params", f_params, 0},
};
#undef L7

static void read_l7(struct walk *w, const struct model_node *v, const char *ctx,
                    struct model_l7rule *r)
{
    r->mark = v->mark;
    (void)walk_map(w, v, ctx, l7_fields, PV_ARRAY_LEN(l7_fields), r);
}

/* rules[] item: {allow: {...}} */
static void f_allow(struct walk *w, const struct field *f, const struct model_node *key,
                    const struct model_node *v, void *obj)
{
    (void)key;
    if (!expect_map(w, f->key, v)) {
        return;
    }
    read_l7(w, v, "allow", obj);
}

static const struct field rule_item_fields[] = {
    {"allow", f_allow, 0},
};

static void f_rules(struct walk *w, const struct field *f, const struct model_node *key,
                    const struct model_node *v, void *obj)
{
    struct model_endpoint *e = obj;
    (void)key;
    if (!expect_list(w, f->key, v)) {
        return;
    }
    e->rules_given = true;
    if (v->nitems == 0) {
        return;
    }
    e->rules = pv_calloc(v->nitems, sizeof(*e->rules));
    if (e->rules == NULL) {
        nomem(w);
        return;
    }
    e->nrules = v->nitems;
    for (size_t i = 0; i < v->nitems; i++) {
        const struct model_node *it = v->items[i];
        e->rules[i].mark = it->mark;
        if (it->kind != MODEL_NODE_MAP) {
            err(w, it->mark, "rule item must be a mapping with 'allow'");
            continue;
        }
        size_t before = model_diags_count(w->diags);
        uint64_t seen =
            walk_map(w, it, "rule", rule_item_fields, PV_ARRAY_LEN(rule_item_fields), &e->rules[i]);
        if ((seen & 1) == 0 && model_diags_count(w->diags) == before && !w->nomem) {
            err(w, it->mark, "rule item requires 'allow'");
        }
    }
}

static void f_deny_rules(struct walk *w, const struct field *f, const struct model_node *key,
                         const struct model_node *v, void *obj)
{
    struct model_endpoint *e = obj;
    (void)key;
    if (!expect_list(w, f->key, v)) {
        return;
    }
    e->deny_given = true;
    if (v->nitems == 0) {
        return;
    }
    e->deny_rules = pv_calloc(v->nitems, sizeof(*e->deny_rules));
    if (e->deny_rules == NULL) {
        nomem(w);
        return;
    }
    e->ndeny = v->nitems;
    for (size_t i = 0; i < v->nitems; i++) {
        const struct model_node *it = v->items[i];
        e->deny_rules[i].mark = it->mark;
        if (it->kind != MODEL_NODE_MAP) {
            err(w, it->mark, "deny rule must be a mapping");
            continue;
        }
        read_l7(w, it, "deny rule", &e->deny_rules[i]);
    }
}

/* ---------------------------------------------------------------------------
 * Endpoint
 * ------------------------------------------------------------------------- */

static void f_port(struct walk *w, const struct field *f, const struct model_node *key,
                   const struct model_node *v, void *obj)
{
    struct model_endpoint *e = obj;
    uint64_t x;

    (void)key;
    if (v->kind == MODEL_NODE_NULL) {
        return;
    }
    if (!get_uint(w, f->key, v, UINT16_MAX, &x)) {
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
        nomem(w);
        return;
    }
    e->ports[0] = (uint16_t)x;
    e->nports = 1;
    e->port_mark = v->mark;
}

static void f_ports(struct walk *w, const struct field *f, const struct model_node *key,
                    const struct model_node *v, void *obj)
{
    struct model_endpoint *e = obj;
    uint16_t *ports = NULL;
    size_t n = 0;

    (void)key;
    if (!expect_list(w, f->key, v)) {
        return;
    }
    if (v->nitems > 0) {
        ports = pv_malloc(v->nitems * sizeof(*ports));
        if (ports == NULL) {
            nomem(w);
            return;
        }
    }
    for (size_t i = 0; i < v->nitems; i++) {
        uint64_t x;
        if (!node_is_int(v->items[i])) {
            err(w, v->items[i]->mark, "field '%s' must be a list of integers", f->key);
            continue;
        }
        if (get_uint(w, f->key, v->items[i], UINT16_MAX, &x)) {
            ports[n++] = (uint16_t)x;
        }
    }
    free(e->ports);
    e->ports = ports;
    e->nports = n;
    e->ports_given = true;
    e->port_mark = v->mark;
}

static void f_binding(struct walk *w, const struct field *f, const struct model_node *key,
                      const struct model_node *v, void *obj);
static void f_json_rpc(struct walk *w, const struct field *f, const struct model_node *key,
                       const struct model_node *v, void *obj);
static void f_mcp(struct walk *w, const struct field *f, const struct model_node *key,
                  const struct model_node *v, void *obj);
static void f_gql_persisted(struct walk *w, const struct field *f, const struct model_node *key,
                            const struct model_node *v, void *obj);

#define EP(name, fn)                                     \
    {                                                    \
#name, fn, offsetof(struct model_endpoint, name) \
    }
static const struct field endpoint_fields[] = {
    EP(host, f_str),
    EP(path, f_str),
    {"port", f_port, 0},
    {"ports", f_ports, 0},
    EP(protocol, f_str),
    EP(tls, f_str),
    EP(enforcement, f_str),
    EP(access, f_str),
    {"rules", f_rules, 0},
    {"deny_rules", f_deny_rules, 0},
    EP(allowed_ips, f_strlist),
    EP(allow_encoded_slash, f_bool),
    EP(websocket_credential_rewrite, f_bool),
    EP(request_body_credential_rewrite, f_bool),
    EP(allow_uninspected_credentials, f_bool),
    EP(persisted_queries, f_str),
    {"graphql_persisted_queries", f_gql_persisted, 0},
    EP(graphql_max_body_bytes, f_u32),
    EP(credential_signing, f_str),
    EP(signing_service, f_str),
    EP(signing_region, f_str),
    {"credential_binding", f_binding, 0},
    {"json_rpc", f_json_rpc, 0},
    {"mcp", f_mcp, 0},
    EP(target_sandbox, f_str),
    EP(resolved_ips, f_strlist),
    EP(advisor_proposed, f_bool),
};

static const struct field binding_fields[] = {
    EP(credential_binding_provider, f_str),
};
static const struct field json_rpc_fields[] = {
    EP(json_rpc_max_body_bytes, f_u32),
};
static const struct field mcp_fields[] = {
    EP(mcp_max_body_bytes, f_u32),
    EP(mcp_strict_tool_names, f_bool),
    EP(mcp_allow_all_known_methods, f_bool),
};
#undef EP

/* The sub-objects use their own key names for the flattened members. */
static const char *const binding_keys[] = {"provider"};
static const char *const json_rpc_keys[] = {"max_body_bytes"};
static const char *const mcp_keys[] = {"max_body_bytes", "strict_tool_names",
                                       "allow_all_known_mcp_methods"};

static void walk_sub(struct walk *w, const struct model_node *v, const char *ctx,
                     const struct field *fields, const char *const *keys, size_t n, void *obj)
{
    struct field local[4];

    if (n > PV_ARRAY_LEN(local)) {
        n = PV_ARRAY_LEN(local); /* unreachable: the key tables above are shorter */
    }
    for (size_t i = 0; i < n; i++) {
        local[i] = fields[i];
        local[i].key = keys[i];
    }
    (void)walk_map(w, v, ctx, local, n, obj);
}

static void f_binding(struct walk *w, const struct field *f, const struct model_node *key,
                      const struct model_node *v, void *obj)
{
    (void)key;
    if (v->kind == MODEL_NODE_NULL || !expect_map(w, f->key, v)) {
        return;
    }
    walk_sub(w, v, "credential_binding", binding_fields, binding_keys, PV_ARRAY_LEN(binding_keys),
             obj);
}

static void f_json_rpc(struct walk *w, const struct field *f, const struct model_node *key,
                       const struct model_node *v, void *obj)
{
    struct model_endpoint *e = obj;
    (void)key;
    if (v->kind == MODEL_NODE_NULL || !expect_map(w, f->key, v)) {
        return;
    }
    e->has_json_rpc = true;
    walk_sub(w, v, "json_rpc", json_rpc_fields, json_rpc_keys, PV_ARRAY_LEN(json_rpc_keys), obj);
}

static void f_mcp(struct walk *w, const struct field *f, const struct model_node *key,
                  const struct model_node *v, void *obj)
{
    struct model_endpoint *e = obj;
    (void)key;
    if (v->kind == MODEL_NODE_NULL || !expect_map(w, f->key, v)) {
        return;
    }
    e->has_mcp = true;
    walk_sub(w, v, "mcp", mcp_fields, mcp_keys, PV_ARRAY_LEN(mcp_keys), obj);
}

#define GQ(name, fn)                                          \
    {                                                         \
#name, fn, offsetof(struct model_gql_persisted, name) \
    }
static const struct field gql_fields[] = {
    GQ(operation_type, f_str),
    GQ(operation_name, f_str),
    GQ(fields, f_strlist),
};
#undef GQ

static void f_gql_persisted(struct walk *w, const struct field *f, const struct model_node *key,
                            const struct model_node *v, void *obj)
{
    struct model_endpoint *e = obj;
    size_t npairs;

    (void)key;
    if (v->kind == MODEL_NODE_NULL || !expect_map(w, f->key, v)) {
        return;
    }
    npairs = v->nitems / 2;
    if (npairs == 0) {
        return;
    }
    e->gql_persisted = pv_calloc(npairs, sizeof(*e->gql_persisted));
    if (e->gql_persisted == NULL) {
        nomem(w);
        return;
    }
    e->ngql_persisted = npairs;
    for (size_t i = 0; i < npairs; i++) {
        const struct model_node *k = v->items[2 * i];
        const struct model_node *q = v->items[2 * i + 1];
        struct model_gql_persisted *g = &e->gql_persisted[i];
        char buf[SHOWN_MAX + 4];

        set_sval(w, &g->id, k);
        if (q->kind != MODEL_NODE_MAP) {
            err(w, q->mark, "graphql persisted query '%s' must be a mapping",
                shown(buf, k->scalar, k->scalar_len));
            continue;
        }
        (void)walk_map(w, q, "graphql persisted query", gql_fields, PV_ARRAY_LEN(gql_fields), g);
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

static void f_endpoints(struct walk *w, const struct field *f, const struct model_node *key,
                        const struct model_node *v, void *obj)
{
    struct model_rule *r = obj;
    (void)key;
    if (!expect_list(w, f->key, v) || v->nitems == 0) {
        return;
    }
    r->endpoints = pv_calloc(v->nitems, sizeof(*r->endpoints));
    if (r->endpoints == NULL) {
        nomem(w);
        return;
    }
    r->nendpoints = v->nitems;
    for (size_t i = 0; i < v->nitems; i++) {
        const struct model_node *it = v->items[i];
        struct model_endpoint *e = &r->endpoints[i];
        e->mark = it->mark;
        if (it->kind != MODEL_NODE_MAP) {
            err(w, it->mark, "endpoint must be a mapping");
            continue;
        }
        (void)walk_map(w, it, "endpoint", endpoint_fields, PV_ARRAY_LEN(endpoint_fields), e);
        derive_endpoint(e);
    }
}

#define BIN(name, fn)                                  \
    {                                                  \
#name, fn, offsetof(struct model_binary, name) \
    }
static const struct field binary_fields[] = {
    BIN(path, f_str),
    BIN(harness, f_bool),
};
#undef BIN

static void f_binaries(struct walk *w, const struct field *f, const struct model_node *key,
                       const struct model_node *v, void *obj)
{
    struct model_rule *r = obj;
    (void)key;
    if (!expect_list(w, f->key, v) || v->nitems == 0) {
        return;
    }
    r->binaries = pv_calloc(v->nitems, sizeof(*r->binaries));
    if (r->binaries == NULL) {
        nomem(w);
        return;
    }
    r->nbinaries = v->nitems;
    for (size_t i = 0; i < v->nitems; i++) {
        const struct model_node *it = v->items[i];
        struct model_binary *b = &r->binaries[i];
        size_t before = model_diags_count(w->diags);
        b->mark = it->mark;
        if (it->kind != MODEL_NODE_MAP) {
            err(w, it->mark, "binary must be a mapping with 'path'");
            continue;
        }
        (void)walk_map(w, it, "binary", binary_fields, PV_ARRAY_LEN(binary_fields), b);
        if (b->path.s == NULL && model_diags_count(w->diags) == before && !w->nomem) {
            err(w, it->mark, "binary item requires 'path'");
        }
    }
}

#define RULE(name, fn)                               \
    {                                                \
#name, fn, offsetof(struct model_rule, name) \
    }
static const struct field rule_fields[] = {
    RULE(name, f_str),
    {"endpoints", f_endpoints, 0},
    {"binaries", f_binaries, 0},
};
#undef RULE

static void read_rule(struct walk *w, const struct model_node *v, const char *ctx,
                      struct model_rule *r)
{
    r->mark = v->mark;
    (void)walk_map(w, v, ctx, rule_fields, PV_ARRAY_LEN(rule_fields), r);
}

/* ---------------------------------------------------------------------------
 * Policy
 * ------------------------------------------------------------------------- */

static void f_version(struct walk *w, const struct field *f, const struct model_node *key,
                      const struct model_node *v, void *obj)
{
    struct model_policy *p = obj;
    uint64_t x;
    (void)key;
    if (get_uint(w, f->key, v, UINT32_MAX, &x)) {
        p->has_version = true;
        p->version = (uint32_t)x;
        p->version_mark = v->mark;
    }
}

#define POL(name, fn)                                  \
    {                                                  \
#name, fn, offsetof(struct model_policy, name) \
    }
static const struct field fs_fields[] = {
    POL(include_workdir, f_bool),
    {"read_only", f_strlist, offsetof(struct model_policy, fs_read_only)},
    {"read_write", f_strlist, offsetof(struct model_policy, fs_read_write)},
};
static const struct field landlock_fields[] = {
    {"compatibility", f_str, offsetof(struct model_policy, landlock_compat)},
};
static const struct field process_fields[] = {
    POL(run_as_user, f_str),
    POL(run_as_group, f_str),
};
#undef POL

static void f_fs(struct walk *w, const struct field *f, const struct model_node *key,
                 const struct model_node *v, void *obj)
{
    struct model_policy *p = obj;
    (void)key;
    if (v->kind == MODEL_NODE_NULL || !expect_map(w, f->key, v)) {
        return;
    }
    p->has_fs = true;
    p->fs_mark = v->mark;
    (void)walk_map(w, v, "filesystem_policy", fs_fields, PV_ARRAY_LEN(fs_fields), p);
}

static void f_landlock(struct walk *w, const struct field *f, const struct model_node *key,
                       const struct model_node *v, void *obj)
{
    struct model_policy *p = obj;
    (void)key;
    if (v->kind == MODEL_NODE_NULL || !expect_map(w, f->key, v)) {
        return;
    }
    p->has_landlock = true;
    (void)walk_map(w, v, "landlock", landlock_fields, PV_ARRAY_LEN(landlock_fields), p);
}

static void f_process(struct walk *w, const struct field *f, const struct model_node *key,
                      const struct model_node *v, void *obj)
{
    struct model_policy *p = obj;
    (void)key;
    if (v->kind == MODEL_NODE_NULL || !expect_map(w, f->key, v)) {
        return;
    }
    p->has_process = true;
    (void)walk_map(w, v, "process", process_fields, PV_ARRAY_LEN(process_fields), p);
}

static void f_network_policies(struct walk *w, const struct field *f, const struct model_node *key,
                               const struct model_node *v, void *obj)
{
    struct model_policy *p = obj;
    size_t npairs;

    (void)key;
    if (v->kind == MODEL_NODE_NULL || !expect_map(w, f->key, v)) {
        return;
    }
    npairs = v->nitems / 2;
    if (npairs == 0) {
        return;
    }
    p->rules = pv_calloc(npairs, sizeof(*p->rules));
    if (p->rules == NULL) {
        nomem(w);
        return;
    }
    p->nrules = npairs;
    for (size_t i = 0; i < npairs; i++) {
        const struct model_node *k = v->items[2 * i];
        const struct model_node *rv = v->items[2 * i + 1];
        struct model_rule *r = &p->rules[i];
        char shown_key[SHOWN_MAX + 4];
        char ctx[SHOWN_MAX + 32];

        r->key = dup_scalar(w, k);
        r->key_mark = k->mark;
        r->mark = rv->mark;
        (void)shown(shown_key, k->scalar, k->scalar_len);
        if (rv->kind != MODEL_NODE_MAP) {
            err(w, rv->mark, "network policy '%s' must be a mapping", shown_key);
            continue;
        }
        (void)snprintf(ctx, sizeof(ctx), "network policy '%s'", shown_key);
        read_rule(w, rv, ctx, r);
    }
}

static void f_middlewares(struct walk *w, const struct field *f, const struct model_node *key,
                          const struct model_node *v, void *obj)
{
    struct model_policy *p = obj;
    (void)key;
    if (v->kind == MODEL_NODE_NULL || !expect_map(w, f->key, v)) {
        return;
    }
    json_decref(p->middlewares);
    p->middlewares = node_json(v);
    p->middlewares_mark = v->mark;
    if (p->middlewares == NULL) {
        nomem(w);
    }
}

static const struct field policy_fields[] = {
    {"version", f_version, 0},
    {"filesystem_policy", f_fs, 0},
    {"landlock", f_landlock, 0},
    {"process", f_process, 0},
    {"network_policies", f_network_policies, 0},
    {"network_middlewares", f_middlewares, 0},
};

struct model_policy *model_schema_policy(const char *file, const struct model_node *root,
                                         struct model_diags *diags)
{
    struct walk w = {file != NULL ? file : "<input>", diags, false};
    struct model_policy *p;
    size_t before;
    uint64_t seen;

    if (root == NULL || diags == NULL) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    before = model_diags_count(diags);
    if (root->kind != MODEL_NODE_MAP) {
        err(&w, root->mark, "policy must be a mapping");
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
    seen = walk_map(&w, root, "policy", policy_fields, PV_ARRAY_LEN(policy_fields), p);
    if ((seen & 1) == 0) {
        err(&w, (struct model_mark){1, 1}, "missing required field 'version'");
    }
    if (w.nomem || model_diags_count(diags) != before) {
        model_policy_free(p);
        pv_errno = w.nomem ? PV_ERR_NOMEM : PV_ERR_POLICY;
        return NULL;
    }
    return p;
}

pv_result model_schema_rule(const char *file, const struct model_node *n, struct model_rule *out,
                            struct model_diags *diags)
{
    struct walk w = {file != NULL ? file : "<input>", diags, false};
    size_t before;

    PV_ENSURE_REF(n);
    PV_ENSURE_REF(out);
    PV_ENSURE_REF(diags);
    memset(out, 0, sizeof(*out));
    before = model_diags_count(diags);
    if (n->kind != MODEL_NODE_MAP) {
        err(&w, n->mark, "network policy rule must be a mapping");
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
