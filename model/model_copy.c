/* SPDX-License-Identifier: Apache-2.0 */
/* model_copy.c - deep copies and equality of policy objects
 *
 * One place copies the source fields of values, lists, L7 rules, endpoints
 * and rules: the merge (model_merge.c) copies rules and endpoints into a new
 * policy, and compilation (model_compile.c) copies an endpoint's rules into
 * its effective rule list. Compiled fields are never copied, so a copy is
 * compiled anew. The copies walk the field tables of model_int.h
 * (model_fields_copy): a new owning member is a row there, not code here.
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

/* 'n' elements of table 't' at 'src' into a new array '*dst' (count '*dn'
 * set once the zeroed array exists, so that a partial copy is cleared). */
static pv_result objs_copy(const struct model_ftable *t, void **dst, size_t *dn, const void *src,
                           size_t n)
{
    unsigned char *v;

    if (n == 0) {
        return PV_RESULT_OK;
    }
    v = pv_calloc(n, t->size);
    PV_GUARD_PTR(v);
    *dst = v;
    *dn = n;
    for (size_t i = 0; i < n; i++) {
        PV_GUARD(model_fields_copy(t, v + i * t->size, (const unsigned char *)src + i * t->size));
    }
    return PV_RESULT_OK;
}

/* Copy member 'f' of 'src' into 'dst', where it (and its count) is zero. */
static pv_result field_copy(const struct model_fdesc *f, unsigned char *dst,
                            const unsigned char *src)
{
    const void *s = src + f->off;
    void *d = dst + f->off;
    size_t *dn = (size_t *)(void *)(dst + f->count_off);
    const struct model_ftable *et =
        model_fkind_compiled(f->kind) ? NULL : model_felem_table(f->kind);
    size_t n = 0;
    void *v;

    if (f->count_off != f->off) {
        memcpy(&n, src + f->count_off, sizeof(n));
    }
    if (et != NULL) {
        return objs_copy(et, d, dn, *(void *const *)s, n);
    }
    switch (f->kind) {
    case MODEL_FK_SVAL:
        return model_sval_copy(d, s);
    case MODEL_FK_STRLIST:
        return model_strlist_copy(d, s);
    case MODEL_FK_CSTR:
        if (*(char *const *)s != NULL) {
            *(char **)d = pv_strdup(*(char *const *)s);
            PV_GUARD_PTR(*(char **)d);
        }
        return PV_RESULT_OK;
    case MODEL_FK_JSON:
        if (*(json_t *const *)s != NULL) {
            *(json_t **)d = json_deep_copy(*(json_t *const *)s);
            PV_ENSURE(*(json_t **)d != NULL, PV_ERR_NOMEM);
        }
        return PV_RESULT_OK;
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
    default:
        return PV_RESULT_OK; /* compiled: the copy is compiled again */
    }
}

/* Every value member by a struct copy, then each owning member of the
 * table zeroed (with its count) and copied; compiled members stay zero. */
pv_result model_fields_copy(const struct model_ftable *t, void *dst, const void *src)
{
    unsigned char *d = dst;

    memcpy(dst, src, t->size);
    for (size_t i = 0; i < t->nrows; i++) {
        const struct model_fdesc *f = &t->rows[i];

        memset(d + f->off, 0, model_fdesc_size(f));
        if (f->count_off != f->off) {
            memset(d + f->count_off, 0, sizeof(size_t));
        }
    }
    for (size_t i = 0; i < t->nrows; i++) {
        PV_GUARD(field_copy(&t->rows[i], d, src));
    }
    return PV_RESULT_OK;
}

/* 'dst' is zeroed; on failure it holds a partial copy that
 * model_l7rule_clear frees. */
pv_result model_l7rule_copy(struct model_l7rule *dst, const struct model_l7rule *src)
{
    return model_fields_copy(&model_l7rule_table, dst, src);
}

/* A copy by table 't' that clears what it made when it fails. */
static pv_result object_copy(const struct model_ftable *t, void *dst, const void *src)
{
    pv_result r;

    PV_ENSURE_REF(dst);
    memset(dst, 0, t->size);
    PV_ENSURE_REF(src);
    r = model_fields_copy(t, dst, src);
    if (!pv_ok(r)) {
        model_fields_clear(t, dst);
    }
    return r;
}

pv_result model_endpoint_copy(struct model_endpoint *dst, const struct model_endpoint *src)
{
    return object_copy(&model_endpoint_table, dst, src);
}

pv_result model_rule_copy(struct model_rule *dst, const struct model_rule *src)
{
    return object_copy(&model_rule_table, dst, src);
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

static bool rows_eq(const struct model_ftable *t, const unsigned char *a, const unsigned char *b,
                    size_t skip_off);

/* A query matcher: its rows, and its form (a value with a meaning). */
static bool query_eq(const struct model_query *a, const struct model_query *b)
{
    return a->form == b->form && rows_eq(&model_query_table, (const unsigned char *)a,
                                         (const unsigned char *)b, SIZE_MAX);
}

/* Source row 'f' of 'a' and 'b': strings exact (absent = ""), lists
 * element by element in order, opaque values by json_equal. */
static bool row_eq(const struct model_fdesc *f, const unsigned char *a, const unsigned char *b)
{
    const void *pa = a + f->off;
    const void *pb = b + f->off;
    size_t na = 0;
    size_t nb = 0;

    if (f->count_off != f->off) {
        memcpy(&na, a + f->count_off, sizeof(na));
        memcpy(&nb, b + f->count_off, sizeof(nb));
    }
    switch (f->kind) {
    case MODEL_FK_SVAL:
        return str_eq(((const struct model_sval *)pa)->s, ((const struct model_sval *)pb)->s);
    case MODEL_FK_STRLIST:
        return strlist_eq(pa, pb);
    case MODEL_FK_CSTR:
        return str_eq(*(char *const *)pa, *(char *const *)pb);
    case MODEL_FK_JSON:
        if ((*(json_t *const *)pa == NULL) != (*(json_t *const *)pb == NULL)) {
            return false;
        }
        return *(json_t *const *)pa == NULL ||
               json_equal(*(json_t *const *)pa, *(json_t *const *)pb);
    case MODEL_FK_ARRAY:
        return na == nb &&
               (na == 0 || memcmp(*(void *const *)pa, *(void *const *)pb, na * f->elem) == 0);
    case MODEL_FK_QUERIES:
        for (size_t i = 0; na == nb && i < na; i++) {
            if (!query_eq(&(*(struct model_query *const *)pa)[i],
                          &(*(struct model_query *const *)pb)[i])) {
                return false;
            }
        }
        return na == nb;
    case MODEL_FK_L7RULES:
        for (size_t i = 0; na == nb && i < na; i++) {
            if (!model_l7rule_eq(&(*(struct model_l7rule *const *)pa)[i],
                                 &(*(struct model_l7rule *const *)pb)[i])) {
                return false;
            }
        }
        return na == nb;
    default:
        /* compiled rows are not compared; the other arrays of structs
         * (endpoints, binaries, persisted queries) have no equality here */
        return model_fkind_compiled(f->kind);
    }
}

/* Every source row but the one at 'skip_off' (SIZE_MAX: none). */
static bool rows_eq(const struct model_ftable *t, const unsigned char *a, const unsigned char *b,
                    size_t skip_off)
{
    for (size_t i = 0; i < t->nrows; i++) {
        if (t->rows[i].off != skip_off && !row_eq(&t->rows[i], a, b)) {
            return false;
        }
    }
    return true;
}

/* The rows of the table, but the method by hand: a method's meaning
 * ignores ASCII case ('get' and 'GET' are one rule to the merge and the
 * proposal reader), which no other string row has. */
bool model_l7rule_eq(const struct model_l7rule *a, const struct model_l7rule *b)
{
    return str_ieq(a->method.s, b->method.s) &&
           rows_eq(&model_l7rule_table, (const unsigned char *)a, (const unsigned char *)b,
                   offsetof(struct model_l7rule, method));
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
