/* SPDX-License-Identifier: Apache-2.0 */
/* model_policy.c - the policy's types: free, clear and accessors
 *
 * The clear functions release everything a struct owns, including fields
 * filled by compile, and leave the struct zeroed so that a second clear is
 * harmless. This file is part of model/'s base (with model_diag.c): it
 * calls nothing above it; loading is model_load.c.
 */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_int.h"

/* ---------------------------------------------------------------------------
 * Node trees
 * ------------------------------------------------------------------------- */

void model_node_free(struct model_node *n)
{
    if (n == NULL) {
        return;
    }
    for (size_t i = 0; i < n->nitems; i++) {
        model_node_free(n->items[i]);
    }
    free(n->items);
    free(n->scalar);
    free(n);
}

/* ---------------------------------------------------------------------------
 * Clear functions
 * ------------------------------------------------------------------------- */

void model_sval_clear(struct model_sval *v)
{
    if (v == NULL) {
        return;
    }
    free(v->s);
    memset(v, 0, sizeof(*v));
}

void model_strlist_clear(struct model_strlist *l)
{
    if (l == NULL) {
        return;
    }
    for (size_t i = 0; i < l->n; i++) {
        model_sval_clear(&l->v[i]);
    }
    free(l->v);
    memset(l, 0, sizeof(*l));
}

/* ---------------------------------------------------------------------------
 * The field tables (model_int.h) and the one clear that walks them
 * ------------------------------------------------------------------------- */

#define ROW(T, kind, m, n, type) \
    {#m, MODEL_FK_##kind, offsetof(T, m), offsetof(T, n), sizeof(type)},
#define EP_ROW(kind, m, n, type) ROW(struct model_endpoint, kind, m, n, type)
#define L7_ROW(kind, m, n, type) ROW(struct model_l7rule, kind, m, n, type)
#define Q_ROW(kind, m, n, type) ROW(struct model_query, kind, m, n, type)
#define PQ_ROW(kind, m, n, type) ROW(struct model_gql_persisted, kind, m, n, type)
#define BIN_ROW(kind, m, n, type) ROW(struct model_binary, kind, m, n, type)
#define RULE_ROW(kind, m, n, type) ROW(struct model_rule, kind, m, n, type)
const struct model_fdesc model_endpoint_fields[] = {MODEL_ENDPOINT_OWNED(EP_ROW)};
static const struct model_fdesc l7rule_rows[] = {MODEL_L7RULE_OWNED(L7_ROW)};
static const struct model_fdesc query_rows[] = {MODEL_QUERY_OWNED(Q_ROW)};
static const struct model_fdesc gqlpq_rows[] = {MODEL_GQLPQ_OWNED(PQ_ROW)};
static const struct model_fdesc binary_rows[] = {MODEL_BINARY_OWNED(BIN_ROW)};
static const struct model_fdesc rule_rows[] = {MODEL_RULE_OWNED(RULE_ROW)};
#undef ROW
#undef EP_ROW
#undef L7_ROW
#undef Q_ROW
#undef PQ_ROW
#undef BIN_ROW
#undef RULE_ROW
const size_t model_endpoint_nfields = PV_ARRAY_LEN(model_endpoint_fields);

#define TABLE(T, rows)                                 \
    {                                                  \
#T, rows, PV_ARRAY_LEN(rows), sizeof(struct T) \
    }
const struct model_ftable model_endpoint_table = TABLE(model_endpoint, model_endpoint_fields);
const struct model_ftable model_l7rule_table = TABLE(model_l7rule, l7rule_rows);
const struct model_ftable model_query_table = TABLE(model_query, query_rows);
const struct model_ftable model_gqlpq_table = TABLE(model_gql_persisted, gqlpq_rows);
const struct model_ftable model_binary_table = TABLE(model_binary, binary_rows);
const struct model_ftable model_rule_table = TABLE(model_rule, rule_rows);
#undef TABLE

bool model_fkind_compiled(enum model_fkind kind)
{
    switch (kind) {
    case MODEL_FK_GLOB:
    case MODEL_FK_GLOBS:
    case MODEL_FK_STR:
    case MODEL_FK_L7EFF:
    case MODEL_FK_CVAL:
        return true;
    default:
        return false;
    }
}

size_t model_fdesc_size(const struct model_fdesc *f)
{
    switch (f->kind) {
    case MODEL_FK_SVAL:
        return sizeof(struct model_sval);
    case MODEL_FK_STRLIST:
        return sizeof(struct model_strlist);
    case MODEL_FK_CVAL:
        return f->elem;
    default:
        return sizeof(void *); /* every other kind is a pointer */
    }
}

const struct model_ftable *model_felem_table(enum model_fkind kind)
{
    switch (kind) {
    case MODEL_FK_L7RULES:
    case MODEL_FK_L7EFF:
        return &model_l7rule_table;
    case MODEL_FK_QUERIES:
        return &model_query_table;
    case MODEL_FK_GQLPQ:
        return &model_gqlpq_table;
    case MODEL_FK_ENDPOINTS:
        return &model_endpoint_table;
    case MODEL_FK_BINARIES:
        return &model_binary_table;
    default:
        return NULL;
    }
}

/* Release what member 'f' of the struct at 'base' owns. */
static void field_clear(const struct model_fdesc *f, unsigned char *base)
{
    void *m = base + f->off;
    const struct model_ftable *et = model_felem_table(f->kind);
    size_t n = 0;

    memcpy(&n, base + f->count_off, f->count_off != f->off ? sizeof(n) : 0);
    switch (f->kind) {
    case MODEL_FK_SVAL:
        model_sval_clear(m);
        return;
    case MODEL_FK_STRLIST:
        model_strlist_clear(m);
        return;
    case MODEL_FK_JSON:
        json_decref(*(json_t **)m);
        return;
    case MODEL_FK_GLOB:
        model_glob_free(*(struct model_glob **)m);
        return;
    case MODEL_FK_GLOBS:
        for (size_t i = 0; *(struct model_glob ***)m != NULL && i < n; i++) {
            model_glob_free((*(struct model_glob ***)m)[i]);
        }
        free(*(void **)m);
        return;
    case MODEL_FK_CVAL:
        return;
    default:
        break;
    }
    for (size_t i = 0; et != NULL && i < n; i++) {
        model_fields_clear(et, *(unsigned char **)m + i * et->size);
    }
    free(*(void **)m); /* CSTR, ARRAY, STR and the arrays of structs */
}

void model_fields_clear(const struct model_ftable *t, void *obj)
{
    if (obj == NULL) {
        return;
    }
    /* compiled rows first: their counts may be members of source rows */
    for (size_t i = 0; i < t->nrows; i++) {
        if (model_fkind_compiled(t->rows[i].kind)) {
            field_clear(&t->rows[i], obj);
        }
    }
    for (size_t i = 0; i < t->nrows; i++) {
        if (!model_fkind_compiled(t->rows[i].kind)) {
            field_clear(&t->rows[i], obj);
        }
    }
    memset(obj, 0, t->size);
}

void model_l7rule_clear(struct model_l7rule *r)
{
    model_fields_clear(&model_l7rule_table, r);
}

void model_endpoint_clear(struct model_endpoint *e)
{
    model_fields_clear(&model_endpoint_table, e);
}

void model_rule_clear(struct model_rule *r)
{
    model_fields_clear(&model_rule_table, r);
}

void model_policy_free(struct model_policy *p)
{
    if (p == NULL) {
        return;
    }
    free(p->file);
    model_strlist_clear(&p->fs_read_only);
    model_strlist_clear(&p->fs_read_write);
    model_sval_clear(&p->landlock_compat);
    model_sval_clear(&p->run_as_user);
    model_sval_clear(&p->run_as_group);
    for (size_t i = 0; i < p->nrules; i++) {
        model_rule_clear(&p->rules[i]);
    }
    free(p->rules);
    json_decref(p->middlewares);
    for (size_t i = 0; i < p->nmw; i++) {
        free(p->mw[i].name);
    }
    free(p->mw);
    model_index_free(p->index);
    free(p);
}

/* The compiled index (built by model_index.c). */
void model_index_free(struct model_index *ix)
{
    if (ix == NULL) {
        return;
    }
    free(ix->eps);
    free(ix->bins);
    free(ix->rule_bin);
    free(ix->slots);
    free(ix->members);
    free(ix->hostless);
    free(ix->wild_any);
    free(ix);
}

/* ---------------------------------------------------------------------------
 * Accessors
 * ------------------------------------------------------------------------- */

void model_policy_sandbox(const struct model_policy *p, struct model_sandbox_spec *out)
{
    memset(out, 0, sizeof(*out));
    out->has_fs = p->has_fs;
    out->include_workdir = p->include_workdir;
    out->nread_only = p->fs_read_only.n;
    out->nread_write = p->fs_read_write.n;
    out->landlock_compat = p->has_landlock ? p->landlock_compat.s : NULL;
    out->run_as_user = p->has_process ? p->run_as_user.s : NULL;
    out->run_as_group = p->has_process ? p->run_as_group.s : NULL;
}

const char *model_policy_fs_path(const struct model_policy *p, bool write, size_t i)
{
    const struct model_strlist *l = write ? &p->fs_read_write : &p->fs_read_only;

    return i < l->n ? l->v[i].s : NULL;
}

size_t model_policy_nrules(const struct model_policy *p)
{
    return p == NULL ? 0 : p->nrules;
}

const struct model_rule *model_policy_rule(const struct model_policy *p, size_t i)
{
    if (p == NULL || i >= p->nrules) {
        return NULL;
    }
    return &p->rules[i];
}

const struct model_rule *model_policy_find_rule(const struct model_policy *p, const char *key)
{
    if (p == NULL || key == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < p->nrules; i++) {
        if (p->rules[i].key != NULL && strcmp(p->rules[i].key, key) == 0) {
            return &p->rules[i];
        }
    }
    return NULL;
}

const char *model_rule_key(const struct model_rule *r)
{
    return r == NULL ? NULL : r->key;
}

const char *model_rule_display_name(const struct model_rule *r)
{
    if (r == NULL) {
        return NULL;
    }
    if (r->name.s != NULL && r->name.s[0] != '\0') {
        return r->name.s;
    }
    return r->key;
}

size_t model_rule_nendpoints(const struct model_rule *r)
{
    return r == NULL ? 0 : r->nendpoints;
}

const struct model_endpoint *model_rule_endpoint(const struct model_rule *r, size_t i)
{
    if (r == NULL || i >= r->nendpoints) {
        return NULL;
    }
    return &r->endpoints[i];
}

size_t model_rule_nbinaries(const struct model_rule *r)
{
    return r == NULL ? 0 : r->nbinaries;
}

const char *model_rule_binary(const struct model_rule *r, size_t i)
{
    if (r == NULL || i >= r->nbinaries) {
        return NULL;
    }
    return r->binaries[i].path.s;
}
