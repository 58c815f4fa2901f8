/* SPDX-License-Identifier: Apache-2.0 */
/* model_policy.c - the policy's types: free, clear and accessors
 *
 * The clear functions release everything a struct owns, including fields
 * filled by compile, and leave the struct zeroed so that a second clear is
 * harmless. This file is part of model/'s base (with model_diag.c): it
 * calls nothing above it; loading is model_load.c.
 */
#include "config.h"

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

void model_endpoint_clear(struct model_endpoint *e)
{
    if (e == NULL) {
        return;
    }
    model_sval_clear(&e->host);
    free(e->ports);
    model_sval_clear(&e->path);
    model_sval_clear(&e->protocol);
    model_sval_clear(&e->tls);
    model_sval_clear(&e->enforcement);
    model_sval_clear(&e->access);
    l7rules_free(e->rules, e->nrules);
    l7rules_free(e->deny_rules, e->ndeny);
    model_strlist_clear(&e->allowed_ips);
    model_strlist_clear(&e->resolved_ips);
    free(e->cidrs);
    model_sval_clear(&e->persisted_queries);
    for (size_t i = 0; i < e->ngql_persisted; i++) {
        struct model_gql_persisted *g = &e->gql_persisted[i];
        model_sval_clear(&g->id);
        model_sval_clear(&g->operation_type);
        model_sval_clear(&g->operation_name);
        model_strlist_clear(&g->fields);
        free(g->op.fields);
    }
    free(e->gql_persisted);
    model_sval_clear(&e->credential_signing);
    model_sval_clear(&e->signing_service);
    model_sval_clear(&e->signing_region);
    model_sval_clear(&e->credential_binding_provider);
    model_sval_clear(&e->target_sandbox);
    model_glob_free(e->host_glob);
    model_glob_free(e->path_glob);
    free(e->fp);
    l7rules_free(e->eff_rules, e->neff_rules);
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
