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

static pv_result endpoint_copy_fields(struct model_endpoint *dst, const struct model_endpoint *src)
{
    PV_GUARD(model_sval_copy(&dst->host, &src->host));
    if (src->nports > 0) {
        dst->ports = pv_calloc(src->nports, sizeof(dst->ports[0]));
        PV_GUARD_PTR(dst->ports);
        memcpy(dst->ports, src->ports, src->nports * sizeof(dst->ports[0]));
        dst->nports = src->nports;
    }
    dst->port_given = src->port_given;
    dst->ports_given = src->ports_given;
    dst->port_mark = src->port_mark;
    PV_GUARD(model_sval_copy(&dst->path, &src->path));
    PV_GUARD(model_sval_copy(&dst->protocol, &src->protocol));
    dst->proto = src->proto;
    PV_GUARD(model_sval_copy(&dst->tls, &src->tls));
    dst->tls_skip = src->tls_skip;
    PV_GUARD(model_sval_copy(&dst->enforcement, &src->enforcement));
    dst->enforce = src->enforce;
    PV_GUARD(model_sval_copy(&dst->access, &src->access));
    dst->access_preset = src->access_preset;
    PV_GUARD(l7rules_copy(&dst->rules, &dst->nrules, src->rules, src->nrules));
    dst->rules_given = src->rules_given;
    PV_GUARD(l7rules_copy(&dst->deny_rules, &dst->ndeny, src->deny_rules, src->ndeny));
    dst->deny_given = src->deny_given;
    PV_GUARD(model_strlist_copy(&dst->allowed_ips, &src->allowed_ips));
    PV_GUARD(model_strlist_copy(&dst->resolved_ips, &src->resolved_ips));
    if (src->ncidrs > 0) {
        dst->cidrs = pv_calloc(src->ncidrs, sizeof(dst->cidrs[0]));
        PV_GUARD_PTR(dst->cidrs);
        memcpy(dst->cidrs, src->cidrs, src->ncidrs * sizeof(dst->cidrs[0]));
        dst->ncidrs = src->ncidrs;
    }
    dst->allow_encoded_slash = src->allow_encoded_slash;
    dst->websocket_credential_rewrite = src->websocket_credential_rewrite;
    dst->request_body_credential_rewrite = src->request_body_credential_rewrite;
    dst->allow_uninspected_credentials = src->allow_uninspected_credentials;
    PV_GUARD(model_sval_copy(&dst->persisted_queries, &src->persisted_queries));
    if (src->ngql_persisted > 0) {
        dst->gql_persisted = pv_calloc(src->ngql_persisted, sizeof(dst->gql_persisted[0]));
        PV_GUARD_PTR(dst->gql_persisted);
        dst->ngql_persisted = src->ngql_persisted;
        for (size_t i = 0; i < src->ngql_persisted; i++) {
            struct model_gql_persisted *d = &dst->gql_persisted[i];
            const struct model_gql_persisted *s = &src->gql_persisted[i];
            PV_GUARD(model_sval_copy(&d->id, &s->id));
            PV_GUARD(model_sval_copy(&d->operation_type, &s->operation_type));
            PV_GUARD(model_sval_copy(&d->operation_name, &s->operation_name));
            PV_GUARD(model_strlist_copy(&d->fields, &s->fields));
        }
    }
    dst->graphql_max_body_bytes = src->graphql_max_body_bytes;
    PV_GUARD(model_sval_copy(&dst->credential_signing, &src->credential_signing));
    PV_GUARD(model_sval_copy(&dst->signing_service, &src->signing_service));
    PV_GUARD(model_sval_copy(&dst->signing_region, &src->signing_region));
    PV_GUARD(model_sval_copy(&dst->credential_binding_provider, &src->credential_binding_provider));
    dst->has_json_rpc = src->has_json_rpc;
    dst->json_rpc_max_body_bytes = src->json_rpc_max_body_bytes;
    dst->has_mcp = src->has_mcp;
    dst->mcp_max_body_bytes = src->mcp_max_body_bytes;
    dst->mcp_strict_tool_names = src->mcp_strict_tool_names;
    dst->mcp_allow_all_known_methods = src->mcp_allow_all_known_methods;
    PV_GUARD(model_sval_copy(&dst->target_sandbox, &src->target_sandbox));
    dst->advisor_proposed = src->advisor_proposed;
    dst->mark = src->mark;
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
