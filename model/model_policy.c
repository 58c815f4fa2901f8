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

static void query_clear(struct model_query *q)
{
    if (q->compiled != NULL) {
        for (size_t i = 0; i < q->globs.n; i++) {
            model_glob_free(q->compiled[i]);
        }
        free(q->compiled);
    }
    model_sval_clear(&q->key);
    model_strlist_clear(&q->globs);
    memset(q, 0, sizeof(*q));
}

void model_l7rule_clear(struct model_l7rule *r)
{
    if (r == NULL) {
        return;
    }
    model_sval_clear(&r->method);
    model_sval_clear(&r->path);
    model_sval_clear(&r->command);
    for (size_t i = 0; i < r->nquery; i++) {
        query_clear(&r->query[i]);
    }
    free(r->query);
    model_glob_free(r->name_glob);
    if (r->field_globs != NULL) {
        for (size_t i = 0; i < r->fields.n; i++) {
            model_glob_free(r->field_globs[i]);
        }
        free(r->field_globs);
    }
    model_sval_clear(&r->operation_type);
    model_sval_clear(&r->operation_name);
    model_strlist_clear(&r->fields);
    model_sval_clear(&r->tool);
    json_decref(r->params);
    model_glob_free(r->path_glob);
    memset(r, 0, sizeof(*r));
}

static void l7rules_free(struct model_l7rule *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        model_l7rule_clear(&v[i]);
    }
    free(v);
}

#define FIELD_ROW(kind, m, n, type)                                                               \
    {#m, MODEL_FK_##kind, offsetof(struct model_endpoint, m), offsetof(struct model_endpoint, n), \
     sizeof(type)},
const struct model_fdesc model_endpoint_fields[] = {MODEL_ENDPOINT_OWNED(FIELD_ROW)};
#undef FIELD_ROW
const size_t model_endpoint_nfields = PV_ARRAY_LEN(model_endpoint_fields);

static void gql_persisted_free(struct model_gql_persisted *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct model_gql_persisted *g = &v[i];
        model_sval_clear(&g->id);
        model_sval_clear(&g->operation_type);
        model_sval_clear(&g->operation_name);
        model_strlist_clear(&g->fields);
        free(g->op.fields);
    }
    free(v);
}

/* Release what member 'f' of the struct at 'base' owns. */
static void field_clear(const struct model_fdesc *f, unsigned char *base)
{
    void *m = base + f->off;
    size_t n = 0;

    memcpy(&n, base + f->count_off, f->count_off != f->off ? sizeof(n) : 0);
    switch (f->kind) {
    case MODEL_FK_SVAL:
        model_sval_clear(m);
        return;
    case MODEL_FK_STRLIST:
        model_strlist_clear(m);
        return;
    case MODEL_FK_ARRAY:
    case MODEL_FK_STR:
        free(*(void **)m);
        return;
    case MODEL_FK_L7RULES:
    case MODEL_FK_L7EFF:
        l7rules_free(*(struct model_l7rule **)m, n);
        return;
    case MODEL_FK_GQLPQ:
        gql_persisted_free(*(struct model_gql_persisted **)m, n);
        return;
    case MODEL_FK_GLOB:
        model_glob_free(*(struct model_glob **)m);
        return;
    case MODEL_FK_CVAL:
        return;
    }
}

void model_endpoint_clear(struct model_endpoint *e)
{
    if (e == NULL) {
        return;
    }
    for (size_t i = 0; i < model_endpoint_nfields; i++) {
        field_clear(&model_endpoint_fields[i], (unsigned char *)e);
    }
    memset(e, 0, sizeof(*e));
}

void model_rule_clear(struct model_rule *r)
{
    if (r == NULL) {
        return;
    }
    free(r->key);
    model_sval_clear(&r->name);
    for (size_t i = 0; i < r->nendpoints; i++) {
        model_endpoint_clear(&r->endpoints[i]);
    }
    free(r->endpoints);
    for (size_t i = 0; i < r->nbinaries; i++) {
        model_sval_clear(&r->binaries[i].path);
        model_glob_free(r->binaries[i].glob);
    }
    free(r->binaries);
    free(r->fp);
    memset(r, 0, sizeof(*r));
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
