/* SPDX-License-Identifier: Apache-2.0 */
/* model_merge.c - deep copies, policy.local proposals and the AddRule merge
 *
 * Three things live here. The deep copies of rules and endpoints copy the
 * source fields only; compiled fields stay NULL so a copy is compiled anew.
 * model_proposal_load() parses the policy.local proposal body with the
 * reference's validation messages; every rule is walked by the shared schema
 * walker and validated on its own, so problems carry the proposal's
 * file:line:col. model_policy_merge() applies the addRule operations to an
 * uncompiled deep copy of the base policy following the reference merge
 * (docs/semantics.md#merge, docs/reference-compat.md#merge), then validates and
 * compiles the result. The base is never modified, and a failed merge leaves
 * nothing behind.
 *
 * Invariants: a proposal rule is validated (ports folded and sorted, hosts
 * normalised, methods upper-cased) and its key is the resolved rule name.
 * Objects the merge moves from a proposal into a policy lose their marks
 * (0 = unknown), because they no longer belong to the policy's file.
 * Divergences: an empty incoming binaries list never clears the existing
 * list (empty matches no binary, docs/semantics.md#binaries-empty), and an
 * existing endpoint a proposal merges into keeps its own advisor_proposed.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/model_int.h"

#define MAX_OPERATIONS 256
#define PROVIDER_PREFIX "_provider_"

struct proposal_op {
    char *rule_name;        /* resolved target key */
    struct model_rule rule; /* validated; key = rule_name */
    struct model_mark mark; /* of the addRule object */
};

struct model_proposal {
    char *file;
    char *intent_summary; /* NULL = absent */
    struct proposal_op *ops;
    size_t nops;
};

/* ===========================================================================
 * Small helpers
 * ========================================================================= */

static const struct model_mark no_mark = {0, 0};

static bool str_empty(const char *s)
{
    return s == NULL || s[0] == '\0';
}

static bool str_eq(const char *a, const char *b)
{
    return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

static bool str_ieq(const char *a, const char *b)
{
    return strcasecmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

/* ===========================================================================
 * Deep copies (compiled fields are not copied)
 * ========================================================================= */

static pv_result sval_copy(struct model_sval *dst, const struct model_sval *src)
{
    dst->mark = src->mark;
    dst->s = NULL;
    if (src->s != NULL) {
        dst->s = pv_strdup(src->s);
        PV_GUARD_PTR(dst->s);
    }
    return PV_RESULT_OK;
}

static pv_result strlist_copy(struct model_strlist *dst, const struct model_strlist *src)
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
        PV_GUARD(sval_copy(&dst->v[i], &src->v[i]));
    }
    return PV_RESULT_OK;
}

/* 'dst' is zeroed; on failure it holds a partial copy for the caller's clear. */
static pv_result l7rule_copy_fields(struct model_l7rule *dst, const struct model_l7rule *src)
{
    PV_GUARD(sval_copy(&dst->method, &src->method));
    PV_GUARD(sval_copy(&dst->path, &src->path));
    PV_GUARD(sval_copy(&dst->command, &src->command));
    if (src->nquery > 0) {
        dst->query = pv_calloc(src->nquery, sizeof(dst->query[0]));
        PV_GUARD_PTR(dst->query);
        dst->nquery = src->nquery;
        for (size_t i = 0; i < src->nquery; i++) {
            dst->query[i].form = src->query[i].form;
            PV_GUARD(sval_copy(&dst->query[i].key, &src->query[i].key));
            PV_GUARD(strlist_copy(&dst->query[i].globs, &src->query[i].globs));
        }
    }
    PV_GUARD(sval_copy(&dst->operation_type, &src->operation_type));
    PV_GUARD(sval_copy(&dst->operation_name, &src->operation_name));
    PV_GUARD(strlist_copy(&dst->fields, &src->fields));
    PV_GUARD(sval_copy(&dst->tool, &src->tool));
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
        PV_GUARD(l7rule_copy_fields(&(*dst)[i], &src[i]));
    }
    return PV_RESULT_OK;
}

static pv_result endpoint_copy_fields(struct model_endpoint *dst, const struct model_endpoint *src)
{
    PV_GUARD(sval_copy(&dst->host, &src->host));
    if (src->nports > 0) {
        dst->ports = pv_calloc(src->nports, sizeof(dst->ports[0]));
        PV_GUARD_PTR(dst->ports);
        memcpy(dst->ports, src->ports, src->nports * sizeof(dst->ports[0]));
        dst->nports = src->nports;
    }
    dst->port_given = src->port_given;
    dst->ports_given = src->ports_given;
    dst->port_mark = src->port_mark;
    PV_GUARD(sval_copy(&dst->path, &src->path));
    PV_GUARD(sval_copy(&dst->protocol, &src->protocol));
    dst->proto = src->proto;
    PV_GUARD(sval_copy(&dst->tls, &src->tls));
    dst->tls_skip = src->tls_skip;
    PV_GUARD(sval_copy(&dst->enforcement, &src->enforcement));
    dst->enforce = src->enforce;
    PV_GUARD(sval_copy(&dst->access, &src->access));
    dst->access_preset = src->access_preset;
    PV_GUARD(l7rules_copy(&dst->rules, &dst->nrules, src->rules, src->nrules));
    dst->rules_given = src->rules_given;
    PV_GUARD(l7rules_copy(&dst->deny_rules, &dst->ndeny, src->deny_rules, src->ndeny));
    dst->deny_given = src->deny_given;
    PV_GUARD(strlist_copy(&dst->allowed_ips, &src->allowed_ips));
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
    PV_GUARD(sval_copy(&dst->persisted_queries, &src->persisted_queries));
    if (src->ngql_persisted > 0) {
        dst->gql_persisted = pv_calloc(src->ngql_persisted, sizeof(dst->gql_persisted[0]));
        PV_GUARD_PTR(dst->gql_persisted);
        dst->ngql_persisted = src->ngql_persisted;
        for (size_t i = 0; i < src->ngql_persisted; i++) {
            struct model_gql_persisted *d = &dst->gql_persisted[i];
            const struct model_gql_persisted *s = &src->gql_persisted[i];
            PV_GUARD(sval_copy(&d->id, &s->id));
            PV_GUARD(sval_copy(&d->operation_type, &s->operation_type));
            PV_GUARD(sval_copy(&d->operation_name, &s->operation_name));
            PV_GUARD(strlist_copy(&d->fields, &s->fields));
        }
    }
    dst->graphql_max_body_bytes = src->graphql_max_body_bytes;
    PV_GUARD(sval_copy(&dst->credential_signing, &src->credential_signing));
    PV_GUARD(sval_copy(&dst->signing_service, &src->signing_service));
    PV_GUARD(sval_copy(&dst->signing_region, &src->signing_region));
    PV_GUARD(sval_copy(&dst->credential_binding_provider, &src->credential_binding_provider));
    dst->has_json_rpc = src->has_json_rpc;
    dst->json_rpc_max_body_bytes = src->json_rpc_max_body_bytes;
    dst->has_mcp = src->has_mcp;
    dst->mcp_max_body_bytes = src->mcp_max_body_bytes;
    dst->mcp_strict_tool_names = src->mcp_strict_tool_names;
    dst->mcp_allow_all_known_methods = src->mcp_allow_all_known_methods;
    PV_GUARD(sval_copy(&dst->target_sandbox, &src->target_sandbox));
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
    PV_GUARD(sval_copy(&dst->name, &src->name));
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
            PV_GUARD(sval_copy(&dst->binaries[i].path, &src->binaries[i].path));
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
 * Forgetting marks: objects moved from a proposal into a policy
 * ------------------------------------------------------------------------- */

static void sval_unmark(struct model_sval *v)
{
    v->mark = no_mark;
}

static void strlist_unmark(struct model_strlist *l)
{
    l->mark = no_mark;
    for (size_t i = 0; i < l->n; i++) {
        sval_unmark(&l->v[i]);
    }
}

static void l7rule_unmark(struct model_l7rule *r)
{
    sval_unmark(&r->method);
    sval_unmark(&r->path);
    sval_unmark(&r->command);
    for (size_t i = 0; i < r->nquery; i++) {
        sval_unmark(&r->query[i].key);
        strlist_unmark(&r->query[i].globs);
    }
    sval_unmark(&r->operation_type);
    sval_unmark(&r->operation_name);
    strlist_unmark(&r->fields);
    sval_unmark(&r->tool);
    r->mark = no_mark;
}

static void endpoint_unmark(struct model_endpoint *e)
{
    sval_unmark(&e->host);
    e->port_mark = no_mark;
    sval_unmark(&e->path);
    sval_unmark(&e->protocol);
    sval_unmark(&e->tls);
    sval_unmark(&e->enforcement);
    sval_unmark(&e->access);
    for (size_t i = 0; i < e->nrules; i++) {
        l7rule_unmark(&e->rules[i]);
    }
    for (size_t i = 0; i < e->ndeny; i++) {
        l7rule_unmark(&e->deny_rules[i]);
    }
    strlist_unmark(&e->allowed_ips);
    sval_unmark(&e->persisted_queries);
    for (size_t i = 0; i < e->ngql_persisted; i++) {
        sval_unmark(&e->gql_persisted[i].id);
        sval_unmark(&e->gql_persisted[i].operation_type);
        sval_unmark(&e->gql_persisted[i].operation_name);
        strlist_unmark(&e->gql_persisted[i].fields);
    }
    sval_unmark(&e->credential_signing);
    sval_unmark(&e->signing_service);
    sval_unmark(&e->signing_region);
    sval_unmark(&e->credential_binding_provider);
    sval_unmark(&e->target_sandbox);
    e->mark = no_mark;
}

static void rule_unmark(struct model_rule *r)
{
    r->key_mark = no_mark;
    sval_unmark(&r->name);
    for (size_t i = 0; i < r->nendpoints; i++) {
        endpoint_unmark(&r->endpoints[i]);
    }
    for (size_t i = 0; i < r->nbinaries; i++) {
        sval_unmark(&r->binaries[i].path);
        r->binaries[i].mark = no_mark;
    }
    r->mark = no_mark;
}

/* ===========================================================================
 * Equality used for "append uniquely"
 * ========================================================================= */

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

static bool l7rule_eq(const struct model_l7rule *a, const struct model_l7rule *b)
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

static bool l7rules_contain(const struct model_l7rule *v, size_t n, const struct model_l7rule *r)
{
    for (size_t i = 0; i < n; i++) {
        if (l7rule_eq(&v[i], r)) {
            return true;
        }
    }
    return false;
}

/* Hosts compare ignoring ASCII case (both sides are normalised by the
 * validator already, so this also ignores one trailing dot). */
static bool host_eq(const char *a, const char *b)
{
    return str_ieq(a, b);
}

static bool ports_contain(const uint16_t *v, size_t n, uint16_t p)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i] == p) {
            return true;
        }
    }
    return false;
}

/*= docs/semantics.md#merge
 *# the first non-`_provider_` rule with an overlapping endpoint (same
 *# host, same path, shared port) absorbs it */
static bool endpoints_overlap(const struct model_endpoint *a, const struct model_endpoint *b)
{
    if (str_empty(a->host.s) || str_empty(b->host.s) || !host_eq(a->host.s, b->host.s) ||
        !str_eq(a->path.s, b->path.s)) {
        return false;
    }
    for (size_t i = 0; i < a->nports; i++) {
        if (ports_contain(b->ports, b->nports, a->ports[i])) {
            return true;
        }
    }
    return false;
}

static bool is_provider_key(const char *key)
{
    return key != NULL && strncmp(key, PROVIDER_PREFIX, strlen(PROVIDER_PREFIX)) == 0;
}

/* ===========================================================================
 * Proposal loading
 * ========================================================================= */

/* "unknown field 'k' in <where>", the wording every reader uses. */
static void unknown_key(struct model_diags *d, const char *file, const struct model_node *k,
                        const char *where)
{
    const struct model_node_ctx c = {file, d};
    model_node_unknown_key(&c, k, where);
}

/* Endpoint keys that the policy schema knows but an agent may not set: they
 * widen credential handling, carry protocol contracts the merge does not
 * reconcile (GraphQL, JSON-RPC, MCP), or are set by the merge itself. The
 * reference forces them off; proviso refuses them so the agent learns why. */
static const char *const refused_endpoint_keys[] = {
    "advisor_proposed",
    "allow_uninspected_credentials",
    "websocket_credential_rewrite",
    "request_body_credential_rewrite",
    "credential_signing",
    "signing_service",
    "signing_region",
    "credential_binding",
    "target_sandbox",
    "persisted_queries",
    "graphql_persisted_queries",
    "graphql_max_body_bytes",
    "json_rpc",
    "mcp",
    NULL,
};

static size_t refuse_endpoint_keys(struct model_diags *d, const char *file,
                                   const struct model_node *rule)
{
    const struct model_node *eps = model_node_member(rule, "endpoints");
    size_t bad = 0;

    if (eps == NULL || eps->kind != MODEL_NODE_SEQ) {
        return 0;
    }
    for (size_t i = 0; i < eps->nitems; i++) {
        const struct model_node *ep = eps->items[i];
        if (ep->kind != MODEL_NODE_MAP) {
            continue;
        }
        for (size_t k = 0; k + 1 < ep->nitems; k += 2) {
            for (size_t j = 0; refused_endpoint_keys[j] != NULL; j++) {
                if (model_node_key_is(ep->items[k], refused_endpoint_keys[j])) {
                    model_node_diag(d, file, ep->items[k]->mark,
                                    "endpoint.%s is not accepted in proposals",
                                    refused_endpoint_keys[j]);
                    bad++;
                }
            }
        }
    }
    return bad;
}

/* Trimmed copy of a string node, NULL on NOMEM; "" when blank. */
static char *trimmed(const char *s, size_t n)
{
    while (n > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == '\r' || s[0] == '\n')) {
        s++;
        n--;
    }
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n')) {
        n--;
    }
    return pv_strndup(s, n);
}

static bool has_control(const char *s)
{
    for (; *s != '\0'; s++) {
        if ((unsigned char)*s < 0x20 || *s == 0x7f) {
            return true;
        }
    }
    return false;
}

static void proposal_free_ops(struct model_proposal *pr)
{
    for (size_t i = 0; i < pr->nops; i++) {
        free(pr->ops[i].rule_name);
        model_rule_clear(&pr->ops[i].rule);
    }
    free(pr->ops);
    pr->ops = NULL;
    pr->nops = 0;
}

void model_proposal_free(struct model_proposal *pr)
{
    if (pr == NULL) {
        return;
    }
    proposal_free_ops(pr);
    free(pr->file);
    free(pr->intent_summary);
    free(pr);
}

/* Dedupe a rule's lists the way the reference normalises an AddRule:
 * binaries by path, allow and deny rules, allowed_ips. */
static void rule_dedupe(struct model_rule *r)
{
    size_t u = 0;
    for (size_t i = 0; i < r->nbinaries; i++) {
        size_t j = 0;
        while (j < u && !str_eq(r->binaries[j].path.s, r->binaries[i].path.s)) {
            j++;
        }
        if (j < u) {
            r->binaries[j].harness = r->binaries[j].harness && r->binaries[i].harness;
            model_sval_clear(&r->binaries[i].path);
            model_glob_free(r->binaries[i].glob);
            r->binaries[i].glob = NULL;
            continue;
        }
        if (u != i) {
            r->binaries[u] = r->binaries[i];
            memset(&r->binaries[i], 0, sizeof(r->binaries[i]));
        }
        u++;
    }
    r->nbinaries = u;
    for (size_t e = 0; e < r->nendpoints; e++) {
        struct model_endpoint *ep = &r->endpoints[e];
        struct {
            struct model_l7rule *v;
            size_t *n;
        } lists[2] = {{ep->rules, &ep->nrules}, {ep->deny_rules, &ep->ndeny}};
        for (size_t l = 0; l < 2; l++) {
            u = 0;
            for (size_t i = 0; i < *lists[l].n; i++) {
                if (l7rules_contain(lists[l].v, u, &lists[l].v[i])) {
                    model_l7rule_clear(&lists[l].v[i]);
                    continue;
                }
                if (u != i) {
                    lists[l].v[u] = lists[l].v[i];
                    memset(&lists[l].v[i], 0, sizeof(lists[l].v[i]));
                }
                u++;
            }
            *lists[l].n = u;
        }
        u = 0;
        for (size_t i = 0; i < ep->allowed_ips.n; i++) {
            bool dup = false;
            for (size_t j = 0; j < u && !dup; j++) {
                dup = str_eq(ep->allowed_ips.v[j].s, ep->allowed_ips.v[i].s);
            }
            if (dup) {
                model_sval_clear(&ep->allowed_ips.v[i]);
                continue;
            }
            if (u != i) {
                ep->allowed_ips.v[u] = ep->allowed_ips.v[i];
                memset(&ep->allowed_ips.v[i], 0, sizeof(ep->allowed_ips.v[i]));
            }
            u++;
        }
        ep->allowed_ips.n = u;
    }
}

/* Validate one proposal rule on its own, in a "version: 1" policy named after
 * the proposal file, so that every problem has the proposal's location. On
 * success the rule comes back normalised. */
static bool rule_validate_alone(const char *file, struct model_rule *rule,
                                struct model_diags *diags)
{
    struct model_policy *tmp = pv_calloc(1, sizeof(*tmp));
    bool ok;

    if (tmp == NULL) {
        model_node_diag(diags, file, no_mark, "%s", pv_strerror(PV_ERR_NOMEM));
        return false;
    }
    tmp->rules = pv_calloc(1, sizeof(tmp->rules[0]));
    tmp->file = pv_strdup(file);
    if (tmp->rules == NULL || tmp->file == NULL) {
        model_policy_free(tmp);
        model_node_diag(diags, file, no_mark, "%s", pv_strerror(PV_ERR_NOMEM));
        return false;
    }
    tmp->has_version = true;
    tmp->version = 1;
    tmp->rules[0] = *rule;
    tmp->nrules = 1;
    ok = model_policy_validate(tmp, diags);
    *rule = tmp->rules[0];
    memset(&tmp->rules[0], 0, sizeof(tmp->rules[0]));
    tmp->nrules = 0;
    model_policy_free(tmp);
    return ok;
}

/* The policy.local shape checks, reference wording and order. */
static size_t check_rule_shape(struct model_diags *d, const char *file, const struct model_rule *r,
                               struct model_mark rule_mark)
{
    size_t bad = 0;

    if (r->nendpoints == 0) {
        model_node_diag(d, file, rule_mark, "rule.endpoints must contain at least one endpoint");
        return 1;
    }
    for (size_t i = 0; i < r->nendpoints; i++) {
        const struct model_endpoint *e = &r->endpoints[i];
        bool has_port = false;
        struct model_mark em = e->mark.line != 0 ? e->mark : rule_mark;

        if (str_empty(e->host.s)) {
            model_node_diag(d, file, em, "endpoint.host is required");
            bad++;
        }
        for (size_t j = 0; j < e->nports; j++) {
            has_port = has_port || e->ports[j] != 0;
        }
        if (!has_port) {
            model_node_diag(d, file, em, "endpoint.port or endpoint.ports is required");
            bad++;
        }
        for (size_t j = 0; j < e->nrules; j++) {
            const struct model_l7rule *l = &e->rules[j];
            if (l->path.s != NULL && strchr(l->path.s, '?') != NULL) {
                model_node_diag(d, file, l->path.mark.line != 0 ? l->path.mark : em,
                                "L7 allow paths must not include query strings");
                bad++;
            }
        }
    }
    return bad;
}

static void load_op(struct model_proposal *pr, struct proposal_op *op, const struct model_node *opn,
                    struct model_diags *d)
{
    const char *file = pr->file;
    const struct model_node *add = NULL;
    const struct model_node *name_node = NULL;
    const struct model_node *rule_node = NULL;
    size_t before = d->n;
    char *name = NULL;

    op->mark = opn->mark;
    if (opn->kind == MODEL_NODE_MAP) {
        for (size_t k = 0; k + 1 < opn->nitems; k += 2) {
            if (model_node_key_is(opn->items[k], "addRule") && add == NULL) {
                add = opn->items[k + 1];
            } else {
                add = NULL;
                break;
            }
        }
    }
    if (add == NULL || add->kind != MODEL_NODE_MAP) {
        model_node_diag(
            d, file, opn->mark,
            "this MVP accepts `addRule` operations; submit a full narrow NetworkPolicyRule");
        return;
    }
    op->mark = add->mark;
    for (size_t k = 0; k + 1 < add->nitems; k += 2) {
        const struct model_node *key = add->items[k];
        const struct model_node *val = add->items[k + 1];
        if (model_node_key_is(key, "ruleName")) {
            if (val->kind != MODEL_NODE_NULL && !model_node_is_string(val)) {
                model_node_diag(d, file, val->mark, "addRule.ruleName must be a string");
                continue;
            }
            name_node = val->kind == MODEL_NODE_NULL ? NULL : val;
        } else if (model_node_key_is(key, "rule")) {
            rule_node = val;
        } else {
            unknown_key(d, file, key, "addRule");
        }
    }
    if (rule_node == NULL || rule_node->kind != MODEL_NODE_MAP) {
        model_node_diag(d, file, rule_node != NULL ? rule_node->mark : add->mark,
                        "addRule.rule must be a NetworkPolicyRule object");
        return;
    }
    if (d->n != before || refuse_endpoint_keys(d, file, rule_node) > 0) {
        return;
    }
    if (!pv_ok(model_schema_rule(file, rule_node, &op->rule, d)) || d->n != before) {
        if (d->n == before) {
            model_node_diag(d, file, rule_node->mark, "%s", pv_strerror(pv_errno));
        }
        return;
    }
    if (check_rule_shape(d, file, &op->rule, rule_node->mark) > 0) {
        return;
    }

    /* The rule name: trimmed ruleName, else rule.name. */
    if (name_node != NULL && memchr(name_node->scalar, '\0', name_node->scalar_len) != NULL) {
        model_node_diag(d, file, name_node->mark, "rule name must not contain control characters");
        return;
    }
    if (name_node != NULL) {
        name = trimmed(name_node->scalar, name_node->scalar_len);
        if (name == NULL) {
            model_node_diag(d, file, add->mark, "%s", pv_strerror(PV_ERR_NOMEM));
            return;
        }
        if (name[0] == '\0') {
            PV_SAFE_FREE(name);
        }
    }
    if (name == NULL && op->rule.name.s != NULL) {
        name = trimmed(op->rule.name.s, strlen(op->rule.name.s));
        if (name == NULL) {
            model_node_diag(d, file, add->mark, "%s", pv_strerror(PV_ERR_NOMEM));
            return;
        }
        if (name[0] == '\0') {
            PV_SAFE_FREE(name);
        }
    }
    if (name == NULL) {
        model_node_diag(d, file, add->mark, "addRule.ruleName or rule.name is required");
        return;
    }
    if (has_control(name)) {
        free(name);
        model_node_diag(d, file, name_node != NULL ? name_node->mark : add->mark,
                        "rule name must not contain control characters");
        return;
    }
    if (is_provider_key(name)) {
        char buf[96];
        model_node_printable(buf, sizeof(buf), name, strlen(name));
        free(name);
        model_node_diag(d, file, name_node != NULL ? name_node->mark : add->mark,
                        "chunk '%s' uses reserved '_provider_' rule-name prefix", buf);
        return;
    }
    op->rule_name = name;
    op->rule.key = pv_strdup(name);
    if (op->rule.key == NULL) {
        model_node_diag(d, file, add->mark, "%s", pv_strerror(PV_ERR_NOMEM));
        return;
    }
    /* An empty rule.name is filled in from the resolved name. */
    if (str_empty(op->rule.name.s)) {
        free(op->rule.name.s);
        op->rule.name.s = pv_strdup(name);
        if (op->rule.name.s == NULL) {
            model_node_diag(d, file, add->mark, "%s", pv_strerror(PV_ERR_NOMEM));
            return;
        }
    }
    if (!rule_validate_alone(file, &op->rule, d)) {
        if (d->n == before) {
            /* every rejection has its diagnostic: this is an allocation failure */
            model_node_diag(d, file, add->mark, "%s", pv_strerror(PV_ERR_NOMEM));
        }
        return;
    }
    rule_dedupe(&op->rule);
}

static bool load_top(struct model_proposal *pr, const struct model_node *root,
                     const struct model_node **ops, struct model_diags *d)
{
    const char *file = pr->file;
    size_t before = d->n;

    *ops = NULL;
    if (root->kind != MODEL_NODE_MAP) {
        model_node_diag(d, file, root->mark, "proposal must be a JSON object");
        return false;
    }
    for (size_t k = 0; k + 1 < root->nitems; k += 2) {
        const struct model_node *key = root->items[k];
        const struct model_node *val = root->items[k + 1];
        if (model_node_key_is(key, "intent_summary")) {
            if (val->kind == MODEL_NODE_NULL) {
                continue;
            }
            if (!model_node_is_string(val)) {
                model_node_diag(d, file, val->mark, "intent_summary must be a string");
                continue;
            }
            pr->intent_summary = pv_strndup(val->scalar, val->scalar_len);
            if (pr->intent_summary == NULL) {
                model_node_diag(d, file, val->mark, "%s", pv_strerror(PV_ERR_NOMEM));
            }
        } else if (model_node_key_is(key, "operations")) {
            if (val->kind != MODEL_NODE_SEQ && val->kind != MODEL_NODE_NULL) {
                model_node_diag(d, file, val->mark, "operations must be a list");
                continue;
            }
            *ops = val;
        } else {
            unknown_key(d, file, key, "proposal");
        }
    }
    if (d->n != before) {
        return false;
    }
    if (*ops == NULL || (*ops)->nitems == 0) {
        model_node_diag(d, file, *ops != NULL ? (*ops)->mark : root->mark,
                        "proposal requires at least one operation");
        return false;
    }
    if ((*ops)->nitems > MAX_OPERATIONS) {
        model_node_diag(d, file, (*ops)->mark,
                        "proposal has %zu operations; at most %u are accepted", (*ops)->nitems,
                        (unsigned)MAX_OPERATIONS);
        return false;
    }
    return true;
}

/* A proposal from its document tree: NULL with diagnostics on failure. */
static struct model_proposal *proposal_from_tree(const char *file, const struct model_node *root,
                                                 struct model_diags *diags, size_t before)
{
    struct model_proposal *pr;
    const struct model_node *ops = NULL;

    pr = pv_calloc(1, sizeof(*pr));
    if (pr == NULL || (pr->file = pv_strdup(file)) == NULL) {
        free(pr);
        model_node_diag(diags, file, no_mark, "%s", pv_strerror(PV_ERR_NOMEM));
        pv_errno = PV_ERR_NOMEM;
        return NULL;
    }
    if (load_top(pr, root, &ops, diags)) {
        pr->ops = pv_calloc(ops->nitems, sizeof(pr->ops[0]));
        if (pr->ops == NULL) {
            model_node_diag(diags, file, no_mark, "%s", pv_strerror(PV_ERR_NOMEM));
        } else {
            pr->nops = ops->nitems;
            for (size_t i = 0; i < ops->nitems; i++) {
                load_op(pr, &pr->ops[i], ops->items[i], diags);
            }
        }
    }
    if (diags->n != before) {
        model_proposal_free(pr);
        pv_errno = PV_ERR_POLICY;
        return NULL;
    }
    return pr;
}

/* Read a bounded JSON document: NULL + diagnostic. */
static struct model_node *proposal_read(const char *file, const char *buf, size_t len,
                                        struct model_diags *diags)
{
    struct model_node *root;
    size_t before = diags->n;

    if (len > MODEL_MAX_POLICY_BYTES) {
        model_node_diag(diags, file, no_mark, "proposal is larger than %u bytes",
                        MODEL_MAX_POLICY_BYTES);
        pv_errno = PV_ERR_TOOBIG;
        return NULL;
    }
    root = model_json_read(file, buf != NULL ? buf : "", len, diags);
    if (root == NULL) {
        if (diags->n == before) {
            model_node_diag(diags, file, no_mark, "%s",
                            pv_strerror(pv_errno ? pv_errno : PV_ERR_PARSE));
        }
        pv_errno = PV_ERR_PARSE;
    }
    return root;
}

struct model_proposal *model_proposal_load(const char *file, const char *buf, size_t len,
                                           struct model_diags *diags)
{
    struct model_node *root;
    struct model_proposal *pr;
    size_t before;

    if (diags == NULL || (buf == NULL && len > 0)) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    if (file == NULL) {
        file = "<proposal>";
    }
    before = diags->n;
    root = proposal_read(file, buf, len, diags);
    if (root == NULL) {
        return NULL;
    }
    pr = proposal_from_tree(file, root, diags, before);
    model_node_free(root);
    return pr;
}

struct model_proposal *model_proposal_load_member(const char *file, const char *buf, size_t len,
                                                  const char *key, struct model_diags *diags)
{
    struct model_node *root;
    const struct model_node *part;
    struct model_proposal *pr;
    size_t before;

    if (diags == NULL || key == NULL || (buf == NULL && len > 0)) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    if (file == NULL) {
        file = "<proposal>";
    }
    before = diags->n;
    root = model_read_member(file, buf, len, key, diags, &part);
    if (root == NULL) {
        return NULL;
    }
    pr = proposal_from_tree(file, part, diags, before);
    model_node_free(root);
    return pr;
}

const char *model_proposal_intent(const struct model_proposal *pr)
{
    return pr == NULL ? NULL : pr->intent_summary;
}

size_t model_proposal_nops(const struct model_proposal *pr)
{
    return pr == NULL ? 0 : pr->nops;
}

const char *model_proposal_rule_name(const struct model_proposal *pr, size_t i)
{
    return (pr == NULL || i >= pr->nops) ? NULL : pr->ops[i].rule_name;
}

const struct model_rule *model_proposal_rule(const struct model_proposal *pr, size_t i)
{
    return (pr == NULL || i >= pr->nops) ? NULL : &pr->ops[i].rule;
}

/* ===========================================================================
 * Merge
 * ========================================================================= */

enum merge_conflict {
    MERGE_OK,
    MERGE_NEW_BINARY,        /* NewBinaryWouldInheritAuthorization */
    MERGE_UNDECLARED_PORT,   /* UndeclaredPortWouldChange */
    MERGE_EXISTING_BINARIES, /* ExistingBinariesWouldInheritAuthorization */
};

struct merge_outcome {
    enum merge_conflict conflict;
    char detail[384];
};

/* What merge_endpoint changed on one existing endpoint. */
struct ep_change {
    bool ports_added;
    bool other; /* anything but new ports: changes every port's authority */
};

static pv_result sval_take_copy(struct model_sval *dst, const struct model_sval *src)
{
    struct model_sval tmp;
    PV_GUARD(sval_copy(&tmp, src));
    model_sval_clear(dst);
    *dst = tmp;
    dst->mark = no_mark;
    return PV_RESULT_OK;
}

static int cmp_u16(const void *a, const void *b)
{
    uint16_t x = *(const uint16_t *)a;
    uint16_t y = *(const uint16_t *)b;
    return (x > y) - (x < y);
}

static pv_result ports_union(struct model_endpoint *e, const struct model_endpoint *in, bool *added)
{
    size_t extra = 0;
    uint16_t *v;

    *added = false;
    for (size_t i = 0; i < in->nports; i++) {
        extra += !ports_contain(e->ports, e->nports, in->ports[i]);
    }
    if (extra == 0) {
        return PV_RESULT_OK;
    }
    v = pv_realloc(e->ports, (e->nports + extra) * sizeof(v[0]));
    PV_GUARD_PTR(v);
    e->ports = v;
    for (size_t i = 0; i < in->nports; i++) {
        if (!ports_contain(e->ports, e->nports, in->ports[i])) {
            e->ports[e->nports++] = in->ports[i];
        }
    }
    qsort(e->ports, e->nports, sizeof(e->ports[0]), cmp_u16);
    e->ports_given = e->nports > 1;
    e->port_given = !e->ports_given;
    *added = true;
    return PV_RESULT_OK;
}

static pv_result l7rules_append(struct model_l7rule **v, size_t *n, const struct model_l7rule *r)
{
    struct model_l7rule *nv = pv_realloc(*v, (*n + 1) * sizeof(nv[0]));
    pv_result res;

    PV_GUARD_PTR(nv);
    *v = nv;
    memset(&nv[*n], 0, sizeof(nv[*n]));
    res = l7rule_copy_fields(&nv[*n], r);
    if (!pv_ok(res)) {
        model_l7rule_clear(&nv[*n]);
        return res;
    }
    l7rule_unmark(&nv[*n]);
    (*n)++;
    return PV_RESULT_OK;
}

/* Append the plain rule {method, path: "**"}. */
static pv_result l7rules_append_method(struct model_l7rule **v, size_t *n, const char *method)
{
    struct model_l7rule *nv = pv_realloc(*v, (*n + 1) * sizeof(nv[0]));

    PV_GUARD_PTR(nv);
    *v = nv;
    memset(&nv[*n], 0, sizeof(nv[*n]));
    nv[*n].method.s = pv_strdup(method);
    nv[*n].path.s = pv_strdup("**");
    if (nv[*n].method.s == NULL || nv[*n].path.s == NULL) {
        model_l7rule_clear(&nv[*n]);
        PV_BAIL(PV_ERR_NOMEM);
    }
    (*n)++;
    return PV_RESULT_OK;
}

/*= docs/semantics.md#methods
 *# Access presets expand at load time into rules on path `**` */
static const char *const *preset_methods(const struct model_endpoint *e)
{
    static const char *const rest_ro[] = {"GET", "HEAD", "OPTIONS", NULL};
    static const char *const rest_rw[] = {"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", NULL};
    static const char *const ws_ro[] = {"GET", NULL};
    static const char *const ws_rw[] = {"GET", "WEBSOCKET_TEXT", NULL};
    static const char *const full[] = {"*", NULL};
    bool ws = str_ieq(e->protocol.s, "websocket");

    if (str_ieq(e->access.s, "full")) {
        return full;
    }
    if (str_ieq(e->access.s, "read-only")) {
        return ws ? ws_ro : rest_ro;
    }
    if (str_ieq(e->access.s, "read-write")) {
        return ws ? ws_rw : rest_rw;
    }
    return NULL;
}

/* Replace the endpoint's access preset with the explicit rules it means. */
static pv_result expand_access_preset(struct model_endpoint *e)
{
    const char *const *methods = preset_methods(e);

    if (methods == NULL) {
        return PV_RESULT_OK;
    }
    /* access and rules are mutually exclusive (validated), so the
     * endpoint has no rules yet and nothing can duplicate. */
    for (size_t i = 0; methods[i] != NULL; i++) {
        PV_GUARD(l7rules_append_method(&e->rules, &e->nrules, methods[i]));
    }
    model_sval_clear(&e->access);
    e->access_preset = MODEL_ACCESS_NONE;
    e->rules_given = true;
    return PV_RESULT_OK;
}

/* Fill a string field only when the existing one is empty. */
static pv_result fill_if_empty(struct model_sval *dst, const struct model_sval *src, bool *changed)
{
    if (str_empty(dst->s) && !str_empty(src->s)) {
        PV_GUARD(sval_take_copy(dst, src));
        *changed = true;
    }
    return PV_RESULT_OK;
}

static pv_result merge_endpoint(struct model_endpoint *e, const struct model_endpoint *in,
                                struct ep_change *ch)
{
    bool added = false;

    PV_GUARD(ports_union(e, in, &added));
    ch->ports_added = ch->ports_added || added;
    if (str_empty(e->protocol.s) && !str_empty(in->protocol.s)) {
        e->proto = in->proto;
    }
    PV_GUARD(fill_if_empty(&e->protocol, &in->protocol, &ch->other));
    if (str_empty(e->tls.s) && !str_empty(in->tls.s)) {
        e->tls_skip = in->tls_skip;
    }
    PV_GUARD(fill_if_empty(&e->tls, &in->tls, &ch->other));
    if (str_empty(e->enforcement.s) && !str_empty(in->enforcement.s)) {
        e->enforce = in->enforce;
    }
    PV_GUARD(fill_if_empty(&e->enforcement, &in->enforcement, &ch->other));
    PV_GUARD(fill_if_empty(&e->path, &in->path, &ch->other));

    if (in->nrules > 0) {
        PV_GUARD(expand_access_preset(e));
        for (size_t i = 0; i < in->nrules; i++) {
            if (!l7rules_contain(e->rules, e->nrules, &in->rules[i])) {
                PV_GUARD(l7rules_append(&e->rules, &e->nrules, &in->rules[i]));
                ch->other = true;
            }
        }
        e->rules_given = true;
    }
    /* An incoming access preset is adopted only by a bare endpoint; the
     * reference keeps the existing contract and warns otherwise. */
    if (!str_empty(in->access.s) && str_empty(e->access.s) && e->nrules == 0) {
        PV_GUARD(sval_take_copy(&e->access, &in->access));
        e->access_preset = in->access_preset;
        ch->other = true;
    }
    for (size_t i = 0; i < in->ndeny; i++) {
        if (!l7rules_contain(e->deny_rules, e->ndeny, &in->deny_rules[i])) {
            PV_GUARD(l7rules_append(&e->deny_rules, &e->ndeny, &in->deny_rules[i]));
            e->deny_given = true;
            ch->other = true;
        }
    }
    for (size_t i = 0; i < in->allowed_ips.n; i++) {
        bool dup = false;
        struct model_sval *nv;
        for (size_t j = 0; j < e->allowed_ips.n && !dup; j++) {
            dup = str_eq(e->allowed_ips.v[j].s, in->allowed_ips.v[i].s);
        }
        if (dup) {
            continue;
        }
        nv = pv_realloc(e->allowed_ips.v, (e->allowed_ips.n + 1) * sizeof(nv[0]));
        PV_GUARD_PTR(nv);
        e->allowed_ips.v = nv;
        memset(&nv[e->allowed_ips.n], 0, sizeof(nv[0]));
        PV_GUARD(sval_copy(&nv[e->allowed_ips.n], &in->allowed_ips.v[i]));
        nv[e->allowed_ips.n].mark = no_mark;
        e->allowed_ips.n++;
        ch->other = true;
    }
    /* Booleans are OR-ed; advisor_proposed is not (see the file comment). */
    if ((in->allow_encoded_slash && !e->allow_encoded_slash) ||
        (in->websocket_credential_rewrite && !e->websocket_credential_rewrite) ||
        (in->request_body_credential_rewrite && !e->request_body_credential_rewrite) ||
        (in->allow_uninspected_credentials && !e->allow_uninspected_credentials)) {
        ch->other = true;
    }
    e->allow_encoded_slash = e->allow_encoded_slash || in->allow_encoded_slash;
    e->websocket_credential_rewrite =
        e->websocket_credential_rewrite || in->websocket_credential_rewrite;
    e->request_body_credential_rewrite =
        e->request_body_credential_rewrite || in->request_body_credential_rewrite;
    e->allow_uninspected_credentials =
        e->allow_uninspected_credentials || in->allow_uninspected_credentials;
    return PV_RESULT_OK;
}

static pv_result endpoints_append(struct model_rule *r, const struct model_endpoint *in)
{
    struct model_endpoint *nv = pv_realloc(r->endpoints, (r->nendpoints + 1) * sizeof(nv[0]));

    PV_GUARD_PTR(nv);
    r->endpoints = nv;
    PV_GUARD(model_endpoint_copy(&nv[r->nendpoints], in));
    endpoint_unmark(&nv[r->nendpoints]);
    r->nendpoints++;
    return PV_RESULT_OK;
}

static bool rule_has_binary(const struct model_rule *r, size_t n, const char *path)
{
    for (size_t i = 0; i < n; i++) {
        if (str_eq(r->binaries[i].path.s, path)) {
            return true;
        }
    }
    return false;
}

/* Does the incoming rule name (host, path, port)? */
static bool declared(const struct model_rule *in, const struct model_endpoint *e, uint16_t port)
{
    for (size_t i = 0; i < in->nendpoints; i++) {
        const struct model_endpoint *ie = &in->endpoints[i];
        if (!str_empty(ie->host.s) && host_eq(ie->host.s, e->host.s) &&
            str_eq(ie->path.s, e->path.s) && ports_contain(ie->ports, ie->nports, port)) {
            return true;
        }
    }
    return false;
}

static void conflict(struct merge_outcome *out, enum merge_conflict kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void conflict(struct merge_outcome *out, enum merge_conflict kind, const char *fmt, ...)
{
    va_list ap;
    out->conflict = kind;
    va_start(ap, fmt);
    vsnprintf(out->detail, sizeof(out->detail), fmt, ap);
    va_end(ap);
}

/* ensure_authorization_inheritance_is_declared: a rule authorises the
 * product of its binaries and endpoints, so a fold must not hand anyone
 * authority the operation did not name. 'r' is the merged rule whose first
 * 'norig' endpoints and 'nbin' binaries existed before. */
static void check_inheritance(const struct model_rule *r, size_t norig, size_t nbin,
                              const struct ep_change *ch, bool appended,
                              const struct model_rule *in, struct merge_outcome *out)
{
    bool any_change = appended;
    char b[96];
    char h[96];

    for (size_t i = 0; i < in->nbinaries; i++) {
        const char *bin = in->binaries[i].path.s;
        if (rule_has_binary(r, nbin, bin)) {
            continue;
        }
        for (size_t e = 0; e < r->nendpoints; e++) {
            const struct model_endpoint *ep = &r->endpoints[e];
            for (size_t p = 0; p < ep->nports; p++) {
                if (!declared(in, ep, ep->ports[p])) {
                    model_node_printable(b, sizeof(b), bin, strlen(bin));
                    model_node_printable(h, sizeof(h), ep->host.s != NULL ? ep->host.s : "",
                                         ep->host.s != NULL ? strlen(ep->host.s) : 0);
                    conflict(out, MERGE_NEW_BINARY,
                             "new binary '%s' would inherit undeclared endpoint %s:%u", b, h,
                             (unsigned)ep->ports[p]);
                    return;
                }
            }
        }
    }
    for (size_t e = 0; e < norig; e++) {
        const struct model_endpoint *ep = &r->endpoints[e];
        any_change = any_change || ch[e].ports_added || ch[e].other;
        if (!ch[e].other) {
            continue;
        }
        for (size_t p = 0; p < ep->nports; p++) {
            if (!declared(in, ep, ep->ports[p])) {
                model_node_printable(h, sizeof(h), ep->host.s != NULL ? ep->host.s : "",
                                     ep->host.s != NULL ? strlen(ep->host.s) : 0);
                conflict(out, MERGE_UNDECLARED_PORT,
                         "the change to endpoint %s would also apply to undeclared port %u", h,
                         (unsigned)ep->ports[p]);
                return;
            }
        }
    }
    if (!any_change) {
        return;
    }
    for (size_t i = 0; i < nbin; i++) {
        const char *bin = r->binaries[i].path.s;
        if (!rule_has_binary(in, in->nbinaries, bin)) {
            model_node_printable(b, sizeof(b), bin != NULL ? bin : "",
                                 bin != NULL ? strlen(bin) : 0);
            conflict(out, MERGE_EXISTING_BINARIES,
                     "existing binary '%s' would inherit the new authorization; the proposal "
                     "must list it",
                     b);
            return;
        }
    }
}

static pv_result binaries_union(struct model_rule *r, const struct model_rule *in)
{
    for (size_t i = 0; i < in->nbinaries; i++) {
        struct model_binary *nv;
        size_t j;
        for (j = 0; j < r->nbinaries; j++) {
            if (str_eq(r->binaries[j].path.s, in->binaries[i].path.s)) {
                break;
            }
        }
        if (j < r->nbinaries) {
            /* A declared duplicate clears the harness marker. */
            r->binaries[j].harness = r->binaries[j].harness && in->binaries[i].harness;
            continue;
        }
        nv = pv_realloc(r->binaries, (r->nbinaries + 1) * sizeof(nv[0]));
        PV_GUARD_PTR(nv);
        r->binaries = nv;
        memset(&nv[r->nbinaries], 0, sizeof(nv[0]));
        PV_GUARD(sval_copy(&nv[r->nbinaries].path, &in->binaries[i].path));
        nv[r->nbinaries].path.mark = no_mark;
        nv[r->nbinaries].harness = in->binaries[i].harness;
        r->nbinaries++;
    }
    return PV_RESULT_OK;
}

/* merge_rules: fold 'in' into 'r' (a private copy). On a conflict 'r' is left
 * half-merged and must be discarded by the caller. */
static pv_result merge_rules(struct model_rule *r, const struct model_rule *in,
                             struct merge_outcome *out)
{
    size_t norig = r->nendpoints;
    size_t nbin = r->nbinaries;
    struct ep_change *ch = pv_calloc(norig, sizeof(ch[0]));
    bool appended = false;
    pv_result res = PV_RESULT_OK;

    out->conflict = MERGE_OK;
    out->detail[0] = '\0';
    PV_GUARD_PTR(ch);
    for (size_t i = 0; i < in->nendpoints && pv_ok(res); i++) {
        size_t j;
        for (j = 0; j < r->nendpoints; j++) {
            if (endpoints_overlap(&r->endpoints[j], &in->endpoints[i])) {
                break;
            }
        }
        if (j < r->nendpoints) {
            struct ep_change scratch = {false, false};
            struct ep_change *c = j < norig ? &ch[j] : &scratch;
            res = merge_endpoint(&r->endpoints[j], &in->endpoints[i], c);
        } else {
            res = endpoints_append(r, &in->endpoints[i]);
            appended = true;
        }
    }
    if (pv_ok(res)) {
        check_inheritance(r, norig, nbin, ch, appended, in, out);
    }
    free(ch);
    PV_GUARD(res);
    if (out->conflict == MERGE_OK) {
        PV_GUARD(binaries_union(r, in));
    }
    return PV_RESULT_OK;
}

static pv_result rules_insert(struct model_policy *p, struct model_rule *r /* steals */)
{
    struct model_rule *nv = pv_realloc(p->rules, (p->nrules + 1) * sizeof(nv[0]));
    size_t at = 0;

    if (nv == NULL) {
        model_rule_clear(r);
        PV_BAIL(PV_ERR_NOMEM);
    }
    p->rules = nv;
    while (at < p->nrules && strcmp(nv[at].key != NULL ? nv[at].key : "", r->key) < 0) {
        at++;
    }
    memmove(&nv[at + 1], &nv[at], (p->nrules - at) * sizeof(nv[0]));
    nv[at] = *r;
    memset(r, 0, sizeof(*r));
    p->nrules++;
    return PV_RESULT_OK;
}

/* The fallback target: the sorted-first non-provider rule with an endpoint
 * overlapping one of the incoming endpoints. */
static size_t fallback_target(const struct model_policy *p, const struct model_rule *in)
{
    size_t best = SIZE_MAX;

    for (size_t i = 0; i < p->nrules; i++) {
        const struct model_rule *r = &p->rules[i];
        bool hit = false;
        if (is_provider_key(r->key)) {
            continue;
        }
        for (size_t a = 0; a < r->nendpoints && !hit; a++) {
            for (size_t b = 0; b < in->nendpoints && !hit; b++) {
                hit = endpoints_overlap(&r->endpoints[a], &in->endpoints[b]);
            }
        }
        if (hit && (best == SIZE_MAX || strcmp(r->key, p->rules[best].key) < 0)) {
            best = i;
        }
    }
    return best;
}

static size_t find_key(const struct model_policy *p, const char *key)
{
    for (size_t i = 0; i < p->nrules; i++) {
        if (str_eq(p->rules[i].key, key)) {
            return i;
        }
    }
    return SIZE_MAX;
}

/* Try to fold 'in' into rule 'idx'. '*folded' is false on a conflict. */
static pv_result fold_into(struct model_policy *p, size_t idx, const struct model_rule *in,
                           struct merge_outcome *out, bool *folded)
{
    struct model_rule work;
    pv_result res;

    *folded = false;
    PV_GUARD(model_rule_copy(&work, &p->rules[idx]));
    res = merge_rules(&work, in, out);
    if (!pv_ok(res) || out->conflict != MERGE_OK) {
        model_rule_clear(&work);
        return res;
    }
    model_rule_clear(&p->rules[idx]);
    p->rules[idx] = work;
    *folded = true;
    return PV_RESULT_OK;
}

static pv_result add_rule(struct model_policy *p, const struct model_proposal *pr,
                          const struct proposal_op *op, bool mark_advisor,
                          struct model_diags *diags, bool *failed)
{
    struct model_rule in;
    struct merge_outcome out;
    size_t idx;
    bool folded = false;
    pv_result res;

    *failed = false;
    PV_GUARD(model_rule_copy(&in, &op->rule));
    rule_unmark(&in);
    /*= docs/semantics.md#merge
     *# Endpoints added through a proposal are marked `advisor_proposed` */
    for (size_t i = 0; i < in.nendpoints; i++) {
        in.endpoints[i].advisor_proposed = in.endpoints[i].advisor_proposed || mark_advisor;
    }
    idx = find_key(p, op->rule_name);
    if (idx != SIZE_MAX) {
        res = fold_into(p, idx, &in, &out, &folded);
        if (pv_ok(res) && !folded) {
            char name[96];
            model_node_printable(name, sizeof(name), op->rule_name, strlen(op->rule_name));
            model_node_diag(diags, pr->file, op->mark, "rule '%s': %s", name, out.detail);
            *failed = true;
        }
        model_rule_clear(&in);
        return res;
    }
    idx = fallback_target(p, &in);
    if (idx != SIZE_MAX) {
        res = fold_into(p, idx, &in, &out, &folded);
        if (!pv_ok(res) || folded) {
            model_rule_clear(&in);
            return res;
        }
        /* KeptRequestedRuleNameToAvoidWidening: insert under its own key. */
    }
    return rules_insert(p, &in);
}

/* An uncompiled deep copy of 'base' (compiled fields and the index stay
 * NULL), so the merged policy can be validated and compiled from scratch. */
static struct model_policy *policy_copy_source(const struct model_policy *b)
{
    struct model_policy *p = pv_calloc(1, sizeof(*p));
    pv_result r = PV_RESULT_OK;

    if (p == NULL) {
        return NULL;
    }
    if (b->file != NULL) {
        p->file = pv_strdup(b->file);
        if (p->file == NULL) {
            r = pv_fail(PV_ERR_NOMEM, __func__);
        }
    }
    p->has_version = b->has_version;
    p->version = b->version;
    p->version_mark = b->version_mark;
    p->has_fs = b->has_fs;
    p->include_workdir = b->include_workdir;
    p->fs_mark = b->fs_mark;
    p->has_landlock = b->has_landlock;
    p->has_process = b->has_process;
    p->middlewares_mark = b->middlewares_mark;
    if (pv_ok(r)) {
        r = strlist_copy(&p->fs_read_only, &b->fs_read_only);
    }
    if (pv_ok(r)) {
        r = strlist_copy(&p->fs_read_write, &b->fs_read_write);
    }
    if (pv_ok(r)) {
        r = sval_copy(&p->landlock_compat, &b->landlock_compat);
    }
    if (pv_ok(r)) {
        r = sval_copy(&p->run_as_user, &b->run_as_user);
    }
    if (pv_ok(r)) {
        r = sval_copy(&p->run_as_group, &b->run_as_group);
    }
    if (pv_ok(r) && b->middlewares != NULL) {
        p->middlewares = json_deep_copy(b->middlewares);
        if (p->middlewares == NULL) {
            r = pv_fail(PV_ERR_NOMEM, __func__);
        }
    }
    if (pv_ok(r) && b->nrules > 0) {
        p->rules = pv_calloc(b->nrules, sizeof(p->rules[0]));
        if (p->rules == NULL) {
            r = pv_fail(PV_ERR_NOMEM, __func__);
        } else {
            p->nrules = b->nrules;
        }
        for (size_t i = 0; i < b->nrules && pv_ok(r); i++) {
            r = model_rule_copy(&p->rules[i], &b->rules[i]);
        }
    }
    if (!pv_ok(r)) {
        model_policy_free(p);
        pv_errno = PV_ERR_NOMEM;
        return NULL;
    }
    return p;
}

struct model_policy *model_policy_merge(const struct model_policy *base,
                                        const struct model_proposal *pr, bool mark_advisor,
                                        struct model_diags *diags)
{
    struct model_policy *p;
    size_t before;
    const char *file;

    if (base == NULL || pr == NULL || diags == NULL) {
        pv_errno = PV_ERR_NULL;
        return NULL;
    }
    before = diags->n;
    file = base->file != NULL ? base->file : "<policy>";
    p = policy_copy_source(base);
    if (p == NULL) {
        model_node_diag(diags, file, no_mark, "%s", pv_strerror(PV_ERR_NOMEM));
        return NULL;
    }
    for (size_t i = 0; i < pr->nops; i++) {
        bool failed = false;
        if (!pv_ok(add_rule(p, pr, &pr->ops[i], mark_advisor, diags, &failed))) {
            model_node_diag(diags, pr->file, pr->ops[i].mark, "%s", pv_strerror(pv_errno));
            failed = true;
        }
        if (failed) {
            model_policy_free(p);
            pv_errno = PV_ERR_POLICY;
            return NULL;
        }
    }
    if (!model_policy_validate(p, diags) || diags->n != before) {
        if (diags->n == before) {
            /* every rejection has its diagnostic: this is an allocation failure */
            model_node_diag(diags, file, no_mark, "%s", pv_strerror(PV_ERR_NOMEM));
        }
        model_policy_free(p);
        pv_errno = PV_ERR_POLICY;
        return NULL;
    }
    if (!pv_ok(model_policy_compile(p))) {
        int err = pv_errno ? pv_errno : PV_ERR_INTERNAL;
        model_node_diag(diags, file, no_mark, "cannot compile merged policy: %s", pv_strerror(err));
        model_policy_free(p);
        pv_errno = err;
        return NULL;
    }
    return p;
}
