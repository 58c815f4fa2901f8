/* SPDX-License-Identifier: Apache-2.0 */
/* check_model_fields.c - the policy field tables (model/model_int.h) hold
 * every owning member of their structs
 *
 * The layout audit: each struct's table rows plus the value members listed
 * here must cover the struct, with no gap a pointer could sit in. A member
 * added to one of the structs without a row (or, if it is a value, without
 * its line below) leaves such a gap and fails here, before a copy could
 * share its memory or a clear could leak it.
 *
 * The copy audit: a rule with every kind of member populated is copied by
 * the tables; walking the same tables, each source row of the copy is a
 * new allocation with the same content, each compiled row is zero, and
 * every byte outside the rows (the values) is the source's.
 */
#include "config.h"

#include <check.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_int.h"

/* The value members (no memory of their own): V(member, type). */
#define ENDPOINT_VALUES(V)                   \
    V(nports, size_t)                        \
    V(port_given, bool)                      \
    V(ports_given, bool)                     \
    V(port_mark, struct model_mark)          \
    V(port_written, uint16_t)                \
    V(port_written_mark, struct model_mark)  \
    V(proto, enum model_protocol)            \
    V(tls_skip, bool)                        \
    V(enforce, bool)                         \
    V(access_preset, enum model_access)      \
    V(nrules, size_t)                        \
    V(rules_given, bool)                     \
    V(ndeny, size_t)                         \
    V(deny_given, bool)                      \
    V(ncidrs, size_t)                        \
    V(allow_encoded_slash, bool)             \
    V(websocket_credential_rewrite, bool)    \
    V(request_body_credential_rewrite, bool) \
    V(allow_uninspected_credentials, bool)   \
    V(ngql_persisted, size_t)                \
    V(graphql_max_body_bytes, uint32_t)      \
    V(has_json_rpc, bool)                    \
    V(json_rpc_max_body_bytes, uint32_t)     \
    V(has_mcp, bool)                         \
    V(mcp_max_body_bytes, uint32_t)          \
    V(mcp_strict_tool_names, bool)           \
    V(mcp_allow_all_known_methods, bool)     \
    V(advisor_proposed, bool)                \
    V(mark, struct model_mark)               \
    V(fplen, size_t)                         \
    V(neff_rules, size_t)

#define L7RULE_VALUES(V) V(nquery, size_t) V(mark, struct model_mark)
#define QUERY_VALUES(V) V(form, enum model_qform)
#define GQLPQ_VALUES(V)
#define BINARY_VALUES(V) V(harness, bool) V(mark, struct model_mark)
#define RULE_VALUES(V)             \
    V(key_mark, struct model_mark) \
    V(nendpoints, size_t) V(nbinaries, size_t) V(mark, struct model_mark) V(fplen, size_t)

struct span {
    size_t off;
    size_t size;
    bool row; /* a table row (rows may nest: a compiled struct and its array) */
    const char *name;
};

#define SPAN(T, m, type) {offsetof(T, m), sizeof(type), false, #m},

static int cmp_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    if (x->off != y->off) {
        return x->off < y->off ? -1 : 1;
    }
    return x->size > y->size ? -1 : (x->size < y->size ? 1 : 0);
}

/* Rows and values cover the struct but for gaps smaller than a pointer:
 * NULL, or what is wrong (static text, the last call's). */
static const char *audit_layout(const struct model_ftable *t, const struct span *values,
                                size_t nvalues)
{
    static char why[256];
    size_t n = t->nrows + nvalues, end = 0;
    struct span *v = calloc(n, sizeof(*v));
    const struct span *outer = NULL;
    bool ok = true;

    ck_assert_ptr_nonnull(v);
    for (size_t i = 0; i < t->nrows; i++) {
        v[i] = (struct span){t->rows[i].off, model_fdesc_size(&t->rows[i]), true, t->rows[i].name};
    }
    if (nvalues > 0) {
        memcpy(v + t->nrows, values, nvalues * sizeof(*v));
    }
    qsort(v, n, sizeof(*v), cmp_span);
    for (size_t i = 0; i < n && ok; i++) {
        if (v[i].off < end) {
            /* only a row inside a compiled row (its owned array) may nest */
            ok = v[i].row && outer != NULL && outer->row && v[i].off + v[i].size <= end;
            snprintf(why, sizeof(why), "%s: member '%s' overlaps '%s'", t->name, v[i].name,
                     outer != NULL ? outer->name : "?");
            continue;
        }
        ok = v[i].off - end < sizeof(void *);
        snprintf(why, sizeof(why),
                 "%s: %zu unlisted bytes before '%s': a member without a row in its "
                 "MODEL_*_OWNED table (model_int.h) or in this test's value list",
                 t->name, v[i].off - end, v[i].name);
        end = v[i].off + v[i].size;
        outer = &v[i];
    }
    if (ok) {
        ok = t->size - end < sizeof(void *);
        snprintf(why, sizeof(why), "%s: %zu unlisted bytes at its end", t->name, t->size - end);
    }
    free(v);
    return ok ? NULL : why;
}

#define EP_SPAN(m, type) SPAN(struct model_endpoint, m, type)
#define L7_SPAN(m, type) SPAN(struct model_l7rule, m, type)
#define Q_SPAN(m, type) SPAN(struct model_query, m, type)
#define BIN_SPAN(m, type) SPAN(struct model_binary, m, type)
#define RULE_SPAN(m, type) SPAN(struct model_rule, m, type)
static const struct span ep_values[] = {ENDPOINT_VALUES(EP_SPAN)};
static const struct span l7_values[] = {L7RULE_VALUES(L7_SPAN)};
static const struct span q_values[] = {QUERY_VALUES(Q_SPAN)};
static const struct span bin_values[] = {BINARY_VALUES(BIN_SPAN)};
static const struct span rule_values[] = {RULE_VALUES(RULE_SPAN)};

static void assert_layout(const struct model_ftable *t, const struct span *v, size_t n)
{
    const char *why = audit_layout(t, v, n);
    ck_assert_msg(why == NULL, "%s", why);
}

START_TEST(test_layout)
{
    assert_layout(&model_endpoint_table, ep_values, PV_ARRAY_LEN(ep_values));
    assert_layout(&model_l7rule_table, l7_values, PV_ARRAY_LEN(l7_values));
    assert_layout(&model_query_table, q_values, PV_ARRAY_LEN(q_values));
    assert_layout(&model_gqlpq_table, NULL, 0);
    assert_layout(&model_binary_table, bin_values, PV_ARRAY_LEN(bin_values));
    assert_layout(&model_rule_table, rule_values, PV_ARRAY_LEN(rule_values));
}
END_TEST

/* The audit finds a member that is in no list: a table without one of its
 * rows (each row in turn, of every table), or a value list without one of
 * its pointer-sized values. */
static void assert_caught(const struct model_ftable *full, const struct span *v, size_t nv)
{
    struct model_fdesc rows[64];

    ck_assert_uint_le(full->nrows, PV_ARRAY_LEN(rows));
    for (size_t skip = 0; skip < full->nrows; skip++) {
        struct model_ftable t = *full;
        const char *why;
        size_t n = 0;
        bool nested = false;

        for (size_t i = 0; i < full->nrows; i++) {
            if (i != skip) {
                rows[n++] = full->rows[i];
            }
            /* a row inside another row is covered by it */
            nested = nested || (i != skip && full->rows[i].off < full->rows[skip].off &&
                                full->rows[i].off + model_fdesc_size(&full->rows[i]) >=
                                    full->rows[skip].off + model_fdesc_size(&full->rows[skip]));
        }
        t.rows = rows;
        t.nrows = n;
        why = audit_layout(&t, v, nv);
        if (nested || model_fdesc_size(&full->rows[skip]) < sizeof(void *)) {
            continue; /* a compiled flag or byte may sit in padding */
        }
        ck_assert_msg(why != NULL, "%s without row '%s' passed the audit", full->name,
                      full->rows[skip].name);
        ck_assert_ptr_nonnull(strstr(why, "unlisted bytes"));
    }
}

START_TEST(test_layout_finds_a_missing_row)
{
    struct span v[64];

    assert_caught(&model_endpoint_table, ep_values, PV_ARRAY_LEN(ep_values));
    assert_caught(&model_l7rule_table, l7_values, PV_ARRAY_LEN(l7_values));
    assert_caught(&model_query_table, q_values, PV_ARRAY_LEN(q_values));
    assert_caught(&model_gqlpq_table, NULL, 0);
    assert_caught(&model_binary_table, bin_values, PV_ARRAY_LEN(bin_values));
    assert_caught(&model_rule_table, rule_values, PV_ARRAY_LEN(rule_values));
    /* the endpoint's value list without 'nports' (a size_t) */
    memcpy(v, ep_values + 1, (PV_ARRAY_LEN(ep_values) - 1) * sizeof(v[0]));
    ck_assert_str_eq(ep_values[0].name, "nports");
    ck_assert_ptr_nonnull(audit_layout(&model_endpoint_table, v, PV_ARRAY_LEN(ep_values) - 1));
}
END_TEST

/* A rule that populates every source row of every table and, compiled,
 * the compiled ones. */
static const char rich[] =
    "version: 1\n"
    "network_policies:\n"
    "  r:\n"
    "    name: rich\n"
    "    endpoints:\n"
    "      - host: api.example.com\n"
    "        ports: [443, 8443]\n"
    "        path: /v1/**\n"
    "        protocol: rest\n"
    "        enforcement: enforce\n"
    "        rules:\n"
    "          - allow: {method: GET, path: /v1/*, query: {tag: 'v*', env: {any: [a, b]}}}\n"
    "        deny_rules: [{method: POST, path: /v1/admin/**}]\n"
    "        allowed_ips: [10.0.0.0/8]\n"
    "        credential_signing: sigv4\n"
    "        signing_service: s3\n"
    "        signing_region: eu-west-1\n"
    "        credential_binding: {provider: vault}\n"
    "      - host: gql.example.com\n"
    "        port: 443\n"
    "        protocol: graphql\n"
    "        enforcement: enforce\n"
    "        access: read-only\n"
    "        persisted_queries: allow_registered\n"
    "        graphql_persisted_queries:\n"
    "          abc: {operation_type: query, operation_name: Q, fields: [viewer]}\n"
    "        deny_rules: [{operation_type: mutation, operation_name: 'Del*', fields: [x]}]\n"
    "      - host: mcp.example.com\n"
    "        port: 443\n"
    "        protocol: mcp\n"
    "        enforcement: enforce\n"
    "        mcp: {}\n"
    "        rules: [{allow: {params: {name: search}}}, {allow: {tool: s2}},\n"
    "                {allow: {method: tools/list}}]\n"
    "      - host: db.example.com\n"
    "        port: 5432\n"
    "        protocol: sql\n"
    "        enforcement: audit\n"
    "        rules: [{allow: {command: SELECT}}]\n"
    "      - host: sandbox-b\n"
    "        port: 80\n"
    "        tls: skip\n"
    "        target_sandbox: b\n"
    "        resolved_ips: [10.9.9.9]\n"
    "    binaries: [{path: /usr/bin/curl}, {path: '/opt/**/python3*'}]\n";

/* Which rows the fixture populated, by table and row: [table][row]. */
struct seen {
    const struct model_ftable *t[6];
    bool row[6][64];
};

static void mark_seen(struct seen *s, const struct model_ftable *t, size_t i)
{
    for (size_t k = 0; k < PV_ARRAY_LEN(s->t); k++) {
        if (s->t[k] == t) {
            s->row[k][i] = true;
            return;
        }
    }
}

static bool zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != 0) {
            return false;
        }
    }
    return true;
}

static void compare(const struct model_ftable *t, const unsigned char *c, const unsigned char *s,
                    struct seen *seen);

/* Row 'f' of copy 'c' against source 's'. */
static void compare_row(const struct model_ftable *t, size_t ri, const unsigned char *c,
                        const unsigned char *s, struct seen *seen)
{
    const struct model_fdesc *f = &t->rows[ri];
    size_t size = model_fdesc_size(f), n = 0;
    const struct model_ftable *et = model_felem_table(f->kind);

    if (f->count_off != f->off) {
        memcpy(&n, s + f->count_off, sizeof(n));
    }
    if (model_fkind_compiled(f->kind)) {
        ck_assert_msg(zero(c + f->off, size), "%s.%s: compiled, copied", t->name, f->name);
        if (!zero(s + f->off, size)) {
            mark_seen(seen, t, ri);
        }
        return;
    }
    if (f->kind == MODEL_FK_SVAL || f->kind == MODEL_FK_STRLIST) {
        const struct model_strlist *lc = (const void *)(c + f->off);
        const struct model_strlist *ls = (const void *)(s + f->off);
        const struct model_sval *vc = (const void *)(c + f->off);
        const struct model_sval *vs = (const void *)(s + f->off);
        size_t m = f->kind == MODEL_FK_SVAL ? (vs->s != NULL) : ls->n;
        if (f->kind == MODEL_FK_STRLIST) {
            ck_assert_uint_eq(lc->n, ls->n);
            ck_assert(m == 0 || lc->v != ls->v);
        }
        for (size_t i = 0; i < m; i++) {
            const char *x = f->kind == MODEL_FK_SVAL ? vc->s : lc->v[i].s;
            const char *y = f->kind == MODEL_FK_SVAL ? vs->s : ls->v[i].s;
            ck_assert_str_eq(x, y);
            ck_assert_msg(x != y, "%s.%s: shared with the source", t->name, f->name);
        }
        if (m > 0) {
            mark_seen(seen, t, ri);
        }
        return;
    }
    /* pointer rows: a new allocation */
    {
        const void *pc;
        const void *ps;
        memcpy(&pc, c + f->off, sizeof(pc));
        memcpy(&ps, s + f->off, sizeof(ps));
        ck_assert_msg((pc == NULL) == (ps == NULL), "%s.%s", t->name, f->name);
        if (ps == NULL) {
            return;
        }
        mark_seen(seen, t, ri);
        ck_assert_msg(pc != ps, "%s.%s: shared with the source", t->name, f->name);
        if (f->kind == MODEL_FK_CSTR) {
            ck_assert_str_eq(pc, ps);
        } else if (f->kind == MODEL_FK_JSON) {
            ck_assert(json_equal((json_t *)(uintptr_t)pc, (json_t *)(uintptr_t)ps));
        } else if (f->kind == MODEL_FK_ARRAY) {
            ck_assert(memcmp(pc, ps, n * f->elem) == 0);
        }
        for (size_t i = 0; et != NULL && i < n; i++) {
            compare(et, (const unsigned char *)pc + i * et->size,
                    (const unsigned char *)ps + i * et->size, seen);
        }
    }
}

static void compare(const struct model_ftable *t, const unsigned char *c, const unsigned char *s,
                    struct seen *seen)
{
    unsigned char *covered = calloc(t->size, 1);

    ck_assert_ptr_nonnull(covered);
    for (size_t i = 0; i < t->nrows; i++) {
        const struct model_fdesc *f = &t->rows[i];
        memset(covered + f->off, 1, model_fdesc_size(f));
        if (f->count_off != f->off) {
            memset(covered + f->count_off, 1, sizeof(size_t));
        }
        compare_row(t, i, c, s, seen);
    }
    for (size_t i = 0; i < t->size; i++) {
        ck_assert_msg(covered[i] || c[i] == s[i], "%s: value byte %zu differs from the source",
                      t->name, i);
    }
    free(covered);
}

START_TEST(test_copy_every_row)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p = model_policy_load("rich.yaml", rich, strlen(rich), MODEL_FMT_AUTO, d);
    struct seen seen = {{&model_endpoint_table, &model_l7rule_table, &model_query_table,
                         &model_gqlpq_table, &model_binary_table, &model_rule_table},
                        {{false}}};
    const struct model_rule *src;
    struct model_rule dst;

    ck_assert_msg(p != NULL, "%s", model_diags_count(d) > 0 ? model_diags_line(d, 0) : "?");
    src = model_policy_find_rule(p, "r");
    ck_assert_ptr_nonnull(src);
    ck_assert(pv_ok(model_rule_copy(&dst, src)));
    compare(&model_rule_table, (const unsigned char *)&dst, (const unsigned char *)src, &seen);
    /* every row of every table was populated in the source, so each kind
     * of row was checked above (a new row needs the fixture to fill it) */
    for (size_t k = 0; k < PV_ARRAY_LEN(seen.t); k++) {
        for (size_t i = 0; i < seen.t[k]->nrows; i++) {
            const struct model_fdesc *f = &seen.t[k]->rows[i];
            bool optional = f->kind == MODEL_FK_CVAL || strcmp(f->name, "cidrs") == 0;
            ck_assert_msg(seen.row[k][i] || optional, "%s.%s: not populated by the fixture",
                          seen.t[k]->name, f->name);
        }
    }
    model_rule_clear(&dst);
    ck_assert(zero((const unsigned char *)&dst, sizeof(dst)));
    model_rule_clear(&dst); /* a second clear is harmless */
    model_policy_free(p);
    model_diags_free(d);
}
END_TEST

/* model_l7rule_eq walks the L7 rule's and the query's rows: a difference
 * in any source row (or the query's form) makes two rules differ, the
 * method's case and the marks do not. */
START_TEST(test_l7rule_eq_rows)
{
    static const char text[] =
        "version: 1\n"
        "network_policies:\n"
        "  r:\n"
        "    endpoints:\n"
        "      - host: a.example.com\n"
        "        port: 443\n"
        "        protocol: rest\n"
        "        enforcement: enforce\n"
        "        rules:\n"
        "          - allow: {method: GET, path: /x, query: {k: {any: [a, b]}}}\n"
        "          - allow: {method: GET, path: /y, query: {k: {any: [a, b]}}}\n"
        "          - allow: {method: GET, path: /x, query: {j: {any: [a, b]}}}\n"
        "          - allow: {method: GET, path: /x, query: {k: {any: [a, c]}}}\n"
        "          - allow: {method: GET, path: /x, query: {k: {any: [a]}}}\n"
        "          - allow: {method: GET, path: /x, query: {k: a}}\n"
        "          - allow: {method: GET, path: /x, query: {k: {glob: a}}}\n"
        "          - allow: {method: GET, path: /x}\n"
        "          - allow: {method: POST, path: /x, query: {k: {any: [a, b]}}}\n"
        "      - host: m.example.com\n"
        "        port: 443\n"
        "        protocol: mcp\n"
        "        enforcement: enforce\n"
        "        mcp: {}\n"
        "        rules:\n"
        "          - allow: {params: {name: t}}\n"
        "          - allow: {params: {name: u}}\n"
        "          - allow: {params: {name: {any: [t]}}}\n"
        "          - allow: {tool: t}\n"
        "      - host: g.example.com\n"
        "        port: 443\n"
        "        protocol: graphql\n"
        "        enforcement: enforce\n"
        "        rules:\n"
        "          - allow: {operation_type: query, operation_name: A, fields: [x, y]}\n"
        "          - allow: {operation_type: mutation, operation_name: A, fields: [x, y]}\n"
        "          - allow: {operation_type: query, operation_name: B, fields: [x, y]}\n"
        "          - allow: {operation_type: query, operation_name: A, fields: [y, x]}\n"
        "          - allow: {operation_type: query, operation_name: A, fields: [x]}\n";
    struct model_diags *d = model_diags_new();
    struct model_policy *p = model_policy_load("eq.yaml", text, strlen(text), MODEL_FMT_AUTO, d);
    const struct model_rule *r;
    struct model_l7rule c;

    ck_assert_msg(p != NULL, "%s", model_diags_count(d) > 0 ? model_diags_line(d, 0) : "?");
    r = model_policy_find_rule(p, "r");
    for (size_t e = 0; e < r->nendpoints; e++) {
        const struct model_endpoint *ep = &r->endpoints[e];
        ck_assert_uint_ge(ep->nrules, 4);
        for (size_t i = 0; i < ep->nrules; i++) {
            for (size_t j = 0; j < ep->nrules; j++) {
                ck_assert_msg(model_l7rule_eq(&ep->rules[i], &ep->rules[j]) == (i == j),
                              "endpoint %zu: rules %zu and %zu", e, i, j);
            }
        }
        /* a copy with its method in lower case and no marks is equal */
        memset(&c, 0, sizeof(c));
        ck_assert(pv_ok(model_l7rule_copy(&c, &ep->rules[0])));
        for (char *m = c.method.s; m != NULL && *m != '\0'; m++) {
            *m = (char)(*m - 'A' + 'a');
        }
        c.mark.line = 999;
        c.method.mark.line = 999;
        ck_assert(model_l7rule_eq(&c, &ep->rules[0]));
        ck_assert(model_l7rules_contain(ep->rules, ep->nrules, &c));
        model_l7rule_clear(&c);
    }
    model_policy_free(p);
    model_diags_free(d);
}
END_TEST

static bool no_mark(struct model_mark m)
{
    return m.line == 0 && m.col == 0;
}

/* Every mark the tables reach (strings, lists, nested objects) is 0; returns
 * how many strings it looked at. */
static size_t assert_unmarked(const struct model_ftable *t, const unsigned char *obj)
{
    size_t seen = 0;

    for (size_t i = 0; i < t->nrows; i++) {
        const struct model_fdesc *f = &t->rows[i];
        const struct model_ftable *et =
            model_fkind_compiled(f->kind) ? NULL : model_felem_table(f->kind);
        size_t n = 0;

        if (f->kind == MODEL_FK_SVAL) {
            const struct model_sval *v = (const void *)(obj + f->off);
            ck_assert_msg(no_mark(v->mark), "%s.%s keeps a mark", t->name, f->name);
            seen += v->s != NULL;
        } else if (f->kind == MODEL_FK_STRLIST) {
            const struct model_strlist *l = (const void *)(obj + f->off);
            ck_assert_msg(no_mark(l->mark), "%s.%s keeps a mark", t->name, f->name);
            for (size_t k = 0; k < l->n; k++) {
                ck_assert_msg(no_mark(l->v[k].mark), "%s.%s[%zu]", t->name, f->name, k);
            }
            seen += l->n;
        }
        if (et == NULL) {
            continue;
        }
        memcpy(&n, obj + f->count_off, sizeof(n));
        for (size_t k = 0; k < n; k++) {
            seen += assert_unmarked(et, *(unsigned char *const *)(const void *)(obj + f->off) +
                                            k * et->size);
        }
    }
    return seen;
}

/* A rule merged in from a proposal forgets every source location (the
 * merge's unmark walks the same tables). */
START_TEST(test_merge_forgets_marks)
{
    static const char rule[] =
        "{\"name\": \"n\", \"endpoints\": [{\"host\": \"api.example.com\", \"port\": 443,"
        " \"path\": \"/v1/**\", \"protocol\": \"rest\", \"enforcement\": \"enforce\","
        " \"allowed_ips\": [\"10.0.0.0/8\"],"
        " \"rules\": [{\"allow\": {\"method\": \"GET\", \"path\": \"/v1/*\","
        " \"query\": {\"k\": {\"any\": [\"a\", \"b\"]}}}}],"
        " \"deny_rules\": [{\"method\": \"POST\", \"path\": \"/v1/x\"}]}],"
        " \"binaries\": [{\"path\": \"/usr/bin/curl\"}]}";
    struct model_diags *d = model_diags_new();
    struct model_policy *base = model_policy_new_empty();
    json_t *j = json_loads(rule, 0, NULL);
    struct model_policy *m;
    const struct model_rule *r;
    const struct model_endpoint *e;

    ck_assert_ptr_nonnull(j);
    m = model_policy_merge_rule(base, "r", j, d);
    ck_assert_msg(m != NULL, "%s", model_diags_count(d) > 0 ? model_diags_line(d, 0) : "?");
    r = model_policy_find_rule(m, "r");
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_ge(assert_unmarked(&model_rule_table, (const unsigned char *)r), 12);
    ck_assert(no_mark(r->key_mark) && no_mark(r->mark) && no_mark(r->binaries[0].mark));
    e = &r->endpoints[0];
    ck_assert(no_mark(e->mark) && no_mark(e->port_mark) && no_mark(e->rules[0].mark) &&
              no_mark(e->deny_rules[0].mark));
    model_policy_free(m);
    model_policy_free(base);
    json_decref(j);
    model_diags_free(d);
}
END_TEST

static Suite *fields_suite(void)
{
    Suite *s = suite_create("model_fields");
    TCase *tc = tcase_create("tables");

    tcase_add_test(tc, test_layout);
    tcase_add_test(tc, test_layout_finds_a_missing_row);
    tcase_add_test(tc, test_copy_every_row);
    tcase_add_test(tc, test_l7rule_eq_rows);
    tcase_add_test(tc, test_merge_forgets_marks);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(fields_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
