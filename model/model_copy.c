/* SPDX-License-Identifier: Apache-2.0 */
/* model_copy.c - deep copies and equality of policy objects
 *
 * One place copies the source fields of values, lists, L7 rules, endpoints
 * and rules: the merge (model_merge.c) copies rules and endpoints into a new
 * policy, and compilation (model_compile.c) copies an endpoint's rules into
 * its effective rule list. Compiled fields are never copied, so a copy is
 * compiled anew. Adding a field to one of these structs means adding it
 * here once.
 *
 * Invariant: every copy function takes a zeroed 'dst'; on failure 'dst'
 * holds a partial copy that the matching model_*_clear frees (the two
 * public object copies clear it themselves).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/model_int.h"

static bool str_eq(const char *a, const char *b)
{
    return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

static bool str_ieq(const char *a, const char *b)
{
    return strcasecmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

pv_result model_sval_copy(struct model_sval *dst, const struct model_sval *src)
{
    dst->mark = src->mark;
    dst->s = NULL;
    if (src->s != NULL) {
        dst->s = pv_strdup(src->s);
        PV_GUARD_PTR(dst->s);
    }
    return PV_RESULT_OK;
}

pv_result model_strlist_copy(struct model_strlist *dst, const struct model_strlist *src)
{
    dst->v = NULL;
    dst->n = 0;
    dst->mark = src->mark;
    if (src->n == 0) {
        return PV_RESULT_OK;
    }
    dst->v = pv_calloc(src->n, sizeof(dst->v[0]));
    PV_GUARD_PTR(dst->v);
    dst->n = src->n;
    for (size_t i = 0; i < src->n; i++) {
        PV_GUARD(model_sval_copy(&dst->v[i], &src->v[i]));
    }
    return PV_RESULT_OK;
}

/* 'dst' is zeroed; on failure it holds a partial copy that
 * model_l7rule_clear frees. */
pv_result model_l7rule_copy(struct model_l7rule *dst, const struct model_l7rule *src)
{
    PV_GUARD(model_sval_copy(&dst->method, &src->method));
    PV_GUARD(model_sval_copy(&dst->path, &src->path));
    PV_GUARD(model_sval_copy(&dst->command, &src->command));
    if (src->nquery > 0) {
        dst->query = pv_calloc(src->nquery, sizeof(dst->query[0]));
        PV_GUARD_PTR(dst->query);
        dst->nquery = src->nquery;
        for (size_t i = 0; i < src->nquery; i++) {
            dst->query[i].form = src->query[i].form;
            PV_GUARD(model_sval_copy(&dst->query[i].key, &src->query[i].key));
            PV_GUARD(model_strlist_copy(&dst->query[i].globs, &src->query[i].globs));
        }
    }
    PV_GUARD(model_sval_copy(&dst->operation_type, &src->operation_type));
    PV_GUARD(model_sval_copy(&dst->operation_name, &src->operation_name));
    PV_GUARD(model_strlist_copy(&dst->fields, &src->fields));
    PV_GUARD(model_sval_copy(&dst->tool, &src->tool));
    if (src->params != NULL) {
        dst->params = json_deep_copy(src->params);
        PV_ENSURE(dst->params != NULL, PV_ERR_NOMEM);
    }
    dst->mark = src->mark;
    return PV_RESULT_OK;
}

static pv_result l7rules_copy(struct model_l7rule **dst, size_t *ndst,
                              const struct model_l7rule *src, size_t n)
{
    *dst = NULL;
    *ndst = 0;
    if (n == 0) {
        return PV_RESULT_OK;
    }
    *dst = pv_calloc(n, sizeof(**dst));
    PV_GUARD_PTR(*dst);
    *ndst = n;
    for (size_t i = 0; i < n; i++) {
        PV_GUARD(model_l7rule_copy(&(*dst)[i], &src[i]));
    }
    return PV_RESULT_OK;
}

static pv_result gql_persisted_copy(struct model_gql_persisted **dst, size_t *ndst,
                                    const struct model_gql_persisted *src, size_t n)
{
    if (n == 0) {
        return PV_RESULT_OK;
    }
    *dst = pv_calloc(n, sizeof(**dst));
    PV_GUARD_PTR(*dst);
    *ndst = n;
    for (size_t i = 0; i < n; i++) {
        struct model_gql_persisted *d = &(*dst)[i];
        const struct model_gql_persisted *s = &src[i];
        PV_GUARD(model_sval_copy(&d->id, &s->id));
        PV_GUARD(model_sval_copy(&d->operation_type, &s->operation_type));
        PV_GUARD(model_sval_copy(&d->operation_name, &s->operation_name));
        PV_GUARD(model_strlist_copy(&d->fields, &s->fields));
    }
    return PV_RESULT_OK;
}

/* The bytes member 'f' takes in its struct. */
static size_t field_size(const struct model_fdesc *f)
{
    switch (f->kind) {
    case MODEL_FK_SVAL:
        return sizeof(struct model_sval);
    case MODEL_FK_STRLIST:
        return sizeof(struct model_strlist);
    case MODEL_FK_CVAL:
        return f->elem;
    case MODEL_FK_ARRAY:
    case MODEL_FK_L7RULES:
    case MODEL_FK_GQLPQ:
    case MODEL_FK_GLOB:
    case MODEL_FK_STR:
    case MODEL_FK_L7EFF:
        return sizeof(void *);
    }
    return 0;
}

/* Copy member 'f' of 'src' into 'dst', where it (and its count) is zero. */
static pv_result field_copy(const struct model_fdesc *f, unsigned char *dst,
                            const unsigned char *src)
{
    const void *s = src + f->off;
    void *d = dst + f->off;
    size_t *dn = (size_t *)(void *)(dst + f->count_off);
    size_t n = 0;
    void *v;

    if (f->count_off != f->off) {
        memcpy(&n, src + f->count_off, sizeof(n));
    }
    switch (f->kind) {
    case MODEL_FK_SVAL:
        return model_sval_copy(d, s);
    case MODEL_FK_STRLIST:
        return model_strlist_copy(d, s);
    case MODEL_FK_ARRAY:
        if (n == 0) {
            return PV_RESULT_OK;
        }
        v = pv_calloc(n, f->elem);
        PV_GUARD_PTR(v);
        memcpy(v, *(void *const *)s, n * f->elem);
        *(void **)d = v;
        *dn = n;
        return PV_RESULT_OK;
    case MODEL_FK_L7RULES:
        return l7rules_copy((struct model_l7rule **)d, dn, *(struct model_l7rule *const *)s, n);
    case MODEL_FK_GQLPQ:
        return gql_persisted_copy((struct model_gql_persisted **)d, dn,
                                  *(struct model_gql_persisted *const *)s, n);
    case MODEL_FK_GLOB:
    case MODEL_FK_STR:
    case MODEL_FK_L7EFF:
    case MODEL_FK_CVAL:
        return PV_RESULT_OK; /* compiled: the copy is compiled again */
    }
    return PV_RESULT_OK;
}

/* Every value member by a struct copy, then each owning member of the
 * field table (model_int.h) zeroed and copied; compiled members stay zero. */
static pv_result endpoint_copy_fields(struct model_endpoint *dst, const struct model_endpoint *src)
{
    unsigned char *d = (unsigned char *)dst;

    *dst = *src;
    for (size_t i = 0; i < model_endpoint_nfields; i++) {
        const struct model_fdesc *f = &model_endpoint_fields[i];

        memset(d + f->off, 0, field_size(f));
        if (f->count_off != f->off) {
            memset(d + f->count_off, 0, sizeof(size_t));
        }
    }
    for (size_t i = 0; i < model_endpoint_nfields; i++) {
        PV_GUARD(field_copy(&model_endpoint_fields[i], d, (const unsigned char *)src));
    }
    return PV_RESULT_OK;
}

pv_result model_endpoint_copy(struct model_endpoint *dst, const struct model_endpoint *src)
{
    pv_result r;

    PV_ENSURE_REF(dst);
    memset(dst, 0, sizeof(*dst));
    PV_ENSURE_REF(src);
    r = endpoint_copy_fields(dst, src);
    if (!pv_ok(r)) {
        model_endpoint_clear(dst);
    }
    return r;
}

static pv_result rule_copy_fields(struct model_rule *dst, const struct model_rule *src)
{
    if (src->key != NULL) {
        dst->key = pv_strdup(src->key);
        PV_GUARD_PTR(dst->key);
    }
    dst->key_mark = src->key_mark;
    PV_GUARD(model_sval_copy(&dst->name, &src->name));
    if (src->nendpoints > 0) {
        dst->endpoints = pv_calloc(src->nendpoints, sizeof(dst->endpoints[0]));
        PV_GUARD_PTR(dst->endpoints);
        dst->nendpoints = src->nendpoints;
        for (size_t i = 0; i < src->nendpoints; i++) {
            PV_GUARD(model_endpoint_copy(&dst->endpoints[i], &src->endpoints[i]));
        }
    }
    if (src->nbinaries > 0) {
        dst->binaries = pv_calloc(src->nbinaries, sizeof(dst->binaries[0]));
        PV_GUARD_PTR(dst->binaries);
        dst->nbinaries = src->nbinaries;
        for (size_t i = 0; i < src->nbinaries; i++) {
            PV_GUARD(model_sval_copy(&dst->binaries[i].path, &src->binaries[i].path));
            dst->binaries[i].harness = src->binaries[i].harness;
            dst->binaries[i].mark = src->binaries[i].mark;
        }
    }
    dst->mark = src->mark;
    return PV_RESULT_OK;
}

pv_result model_rule_copy(struct model_rule *dst, const struct model_rule *src)
{
    pv_result r;

    PV_ENSURE_REF(dst);
    memset(dst, 0, sizeof(*dst));
    PV_ENSURE_REF(src);
    r = rule_copy_fields(dst, src);
    if (!pv_ok(r)) {
        model_rule_clear(dst);
    }
    return r;
}

/* ---------------------------------------------------------------------------
 * Equality used for "append uniquely"
 * ------------------------------------------------------------------------- */

static bool strlist_eq(const struct model_strlist *a, const struct model_strlist *b)
{
    if (a->n != b->n) {
        return false;
    }
    for (size_t i = 0; i < a->n; i++) {
        if (!str_eq(a->v[i].s, b->v[i].s)) {
            return false;
        }
    }
    return true;
}

bool model_l7rule_eq(const struct model_l7rule *a, const struct model_l7rule *b)
{
    if (!str_ieq(a->method.s, b->method.s) || !str_eq(a->path.s, b->path.s) ||
        !str_eq(a->command.s, b->command.s) || !str_eq(a->operation_type.s, b->operation_type.s) ||
        !str_eq(a->operation_name.s, b->operation_name.s) || !str_eq(a->tool.s, b->tool.s) ||
        !strlist_eq(&a->fields, &b->fields) || a->nquery != b->nquery) {
        return false;
    }
    for (size_t i = 0; i < a->nquery; i++) {
        if (!str_eq(a->query[i].key.s, b->query[i].key.s) || a->query[i].form != b->query[i].form ||
            !strlist_eq(&a->query[i].globs, &b->query[i].globs)) {
            return false;
        }
    }
    if ((a->params == NULL) != (b->params == NULL)) {
        return false;
    }
    return a->params == NULL || json_equal(a->params, b->params);
}

bool model_l7rules_contain(const struct model_l7rule *v, size_t n, const struct model_l7rule *r)
{
    for (size_t i = 0; i < n; i++) {
        if (model_l7rule_eq(&v[i], r)) {
            return true;
        }
    }
    return false;
}
