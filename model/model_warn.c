/* SPDX-License-Identifier: Apache-2.0 */
/* model_warn.c - the warnings tier: valid policies that are likely mistakes
 *
 * A warning never makes a policy invalid and never changes a verdict; it
 * points (FILE:LINE:COL, from the marks the loader kept) at something that
 * is allowed but probably not meant: an L7 endpoint in audit mode (every
 * method passes), a wildcard host, a `path:` on an L4 endpoint (ignored: the
 * bytes are not inspected), a rule without binaries (it matches nothing), a
 * relative binary path (it matches nothing: binaries are absolute), a
 * literal binary path that does not exist here, an HTTP rule method no
 * client sends ("GTE": the rule is dead; with a did-you-mean), a link-local
 * or metadata host (always blocked), a '?' in a path glob (one character,
 * not a query), and the fields proviso accepts and does not apply where
 * running without them grants nothing more (docs/reference-compat.md#unenforced;
 * the others the validator refuses). Each has a stable code
 * (warn[] below, docs/semantics.md#warnings).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "model/model_int.h"

static const char *const warn_codes[MODEL_WARN__COUNT] = {
    [MODEL_WARN_L7_AUDIT] = "l7-audit",
    [MODEL_WARN_WILDCARD_HOST] = "wildcard-host",
    [MODEL_WARN_PATH_ON_L4] = "path-on-l4",
    [MODEL_WARN_NO_BINARIES] = "rule-without-binaries",
    [MODEL_WARN_BINARY_RELATIVE] = "binary-relative",
    [MODEL_WARN_BINARY_MISSING] = "binary-missing",
    [MODEL_WARN_UNKNOWN_METHOD] = "unknown-method",
    [MODEL_WARN_GQL_NO_UPGRADE] = "graphql-no-upgrade",
    [MODEL_WARN_GQL_PERSISTED] = "persisted-unused",
    [MODEL_WARN_GQL_SHADOWED] = "graphql-shadowed",
    [MODEL_WARN_NOT_ENFORCED] = "not-enforced",
    [MODEL_WARN_BLOCKED_HOST] = "blocked-host",
    [MODEL_WARN_PATH_QMARK] = "path-question-mark",
    [MODEL_WARN_MCP_UNSCOPED] = "mcp-without-path",
};

/* The methods an HTTP rule can match (docs/semantics.md#methods: the RFC 9110
 * methods, PATCH, and WEBSOCKET_TEXT for a client text frame); "*" is any. */
static const char *const known_methods[] = {
    "GET",    "HEAD",    "POST",  "PUT",     "PATCH",
    "DELETE", "OPTIONS", "TRACE", "CONNECT", "WEBSOCKET_TEXT",
};

/* A warning for one rule method outside known_methods[], with the closest
 * known one (distance 2 at most) as a did-you-mean. */
static void method_warning(const struct model_policy *p, const char *key,
                           const struct model_l7rule *l, model_warn_fn fn, void *arg)
{
    const char *m = l->method.s;
    const char *best = NULL;
    size_t bestd = 3;
    char msg[256];

    if (m == NULL || strcmp(m, "*") == 0) {
        return;
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(known_methods); i++) {
        size_t d = model_edit_distance(m, strlen(m), known_methods[i]);

        if (d == 0) {
            return;
        }
        if (d < bestd) {
            bestd = d;
            best = known_methods[i];
        }
    }
    if (best != NULL) {
        (void)snprintf(msg, sizeof(msg),
                       "rule '%s': unknown method '%s' (did you mean '%s'?): no request "
                       "matches this rule",
                       key, m, best);
    } else {
        (void)snprintf(msg, sizeof(msg),
                       "rule '%s': unknown method '%s': no request matches this rule (methods: "
                       "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, TRACE, CONNECT, "
                       "WEBSOCKET_TEXT or *)",
                       key, m);
    }
    struct model_mark mk = l->method.mark.line > 0 ? l->method.mark : l->mark;
    fn(arg, MODEL_WARN_UNKNOWN_METHOD, p->file, mk.line, mk.col, msg);
}

const char *model_warning_code(enum model_warning w)
{
    return (unsigned)w < MODEL_WARN__COUNT ? warn_codes[w] : "unknown";
}

/*= docs/semantics.md#warnings
 *# `graphql-no-upgrade` | a `websocket` endpoint with GraphQL allow rules and
 *# no allow rule for `GET` */
static void gql_warnings(const struct model_policy *p, const char *key,
                         const struct model_endpoint *e, model_warn_fn fn, void *arg)
{
    char msg[256];
    bool gql = false;
    bool get = false;

    for (size_t i = 0; i < e->nrules; i++) {
        const char *m = e->rules[i].method.s;

        gql = gql || e->rules[i].operation_type.s != NULL;
        get = get || (m != NULL &&
                      (strcmp(m, "*") == 0 || strcmp(m, "GET") == 0 || strcmp(m, "get") == 0));
    }
    if (e->proto == MODEL_PROTO_WEBSOCKET && gql && !get) {
        (void)snprintf(msg, sizeof(msg),
                       "rule '%s': websocket endpoint %s has GraphQL rules but no GET rule: "
                       "the upgrade is denied, so no operation message is ever decided",
                       key, e->host.s != NULL ? e->host.s : "(hostless)");
        fn(arg, MODEL_WARN_GQL_NO_UPGRADE, p->file, e->mark.line, e->mark.col, msg);
    }
    /*= docs/semantics.md#warnings
     *# `persisted-unused` | `graphql_persisted_queries` without
     *# `persisted_queries: allow_registered` */
    if (e->ngql_persisted > 0 && (e->persisted_queries.s == NULL ||
                                  strcmp(e->persisted_queries.s, "allow_registered") != 0)) {
        struct model_mark m = e->gql_persisted[0].id.mark;

        (void)snprintf(msg, sizeof(msg),
                       "rule '%s': graphql_persisted_queries without 'persisted_queries: "
                       "allow_registered' decide nothing: hash-only requests are denied",
                       key);
        fn(arg, MODEL_WARN_GQL_PERSISTED, p->file, m.line, m.col, msg);
    }
}

static struct model_mark mark_or_ep(struct model_mark m, const struct model_endpoint *e)
{
    return m.line > 0 ? m : e->mark;
}

/* ---------------------------------------------------------------------------
 * Fields proviso accepts and does not apply (docs/reference-compat.md#unenforced)
 * ------------------------------------------------------------------------- */

static void warn_at(const struct model_policy *p, enum model_warning w, struct model_mark m,
                    model_warn_fn fn, void *arg, const char *msg)
{
    fn(arg, w, p->file, m.line, m.col, msg);
}

/*= docs/reference-compat.md#unenforced
 *# credential signing, `credential_binding`, `allow_uninspected_credentials`,
 *# rule `command` */
static void unenforced_endpoint(const struct model_policy *p, const char *key,
                                const struct model_endpoint *e, model_warn_fn fn, void *arg)
{
    const struct model_sval *sign = e->credential_signing.s != NULL ? &e->credential_signing
                                    : e->signing_service.s != NULL  ? &e->signing_service
                                                                    : &e->signing_region;
    const char *host = e->host.s != NULL && e->host.s[0] != '\0' ? e->host.s : "(hostless)";
    char msg[320];

    if (sign->s != NULL) {
        (void)snprintf(msg, sizeof(msg),
                       "rule '%s': endpoint %s: credential signing (credential_signing, "
                       "signing_service, signing_region) is not applied: proviso does not sign "
                       "requests, it forwards them as the client signed them",
                       key, host);
        warn_at(p, MODEL_WARN_NOT_ENFORCED, mark_or_ep(sign->mark, e), fn, arg, msg);
    }
    if (e->credential_binding_provider.s != NULL) {
        (void)snprintf(msg, sizeof(msg),
                       "rule '%s': endpoint %s: credential_binding is not applied: proviso "
                       "gives a credential to the hosts its target_hosts name, whatever the "
                       "endpoint binds",
                       key, host);
        warn_at(p, MODEL_WARN_NOT_ENFORCED, mark_or_ep(e->credential_binding_provider.mark, e), fn,
                arg, msg);
    }
    if (e->allow_uninspected_credentials) {
        (void)snprintf(msg, sizeof(msg),
                       "rule '%s': endpoint %s: allow_uninspected_credentials changes nothing "
                       "the proxy does: proviso puts credentials only into requests it "
                       "inspects (the advisor shows the flag to reviewers)",
                       key, host);
        warn_at(p, MODEL_WARN_NOT_ENFORCED, e->mark, fn, arg, msg);
    }
    for (size_t i = 0; i < e->nrules + e->ndeny; i++) {
        const struct model_l7rule *l = i < e->nrules ? &e->rules[i] : &e->deny_rules[i - e->nrules];

        if (l->command.s == NULL) {
            continue;
        }
        (void)snprintf(msg, sizeof(msg),
                       "rule '%s': command '%s' is never decided: proviso does not parse SQL "
                       "(a sql endpoint runs in audit mode only)",
                       key, l->command.s);
        warn_at(p, MODEL_WARN_NOT_ENFORCED, mark_or_ep(l->command.mark, e), fn, arg, msg);
    }
}

/*= docs/reference-compat.md#unenforced
 *# `network_middlewares` with `on_error: fail_open`; `binaries[].harness` */
static void unenforced_policy(const struct model_policy *p, model_warn_fn fn, void *arg)
{
    char msg[320];

    for (size_t i = 0; i < p->nmw; i++) {
        const struct model_middleware *mw = &p->mw[i];

        if (!mw->fail_open) {
            continue; /* refused by the validator */
        }
        (void)snprintf(msg, sizeof(msg),
                       "network_middlewares '%s' is not run: proviso does not run middlewares, "
                       "and on_error: fail_open lets requests through without it",
                       mw->name != NULL ? mw->name : "?");
        warn_at(p, MODEL_WARN_NOT_ENFORCED, mw->mark, fn, arg, msg);
    }
    for (size_t i = 0; i < p->nrules; i++) {
        const struct model_rule *r = &p->rules[i];

        for (size_t j = 0; j < r->nbinaries; j++) {
            if (!r->binaries[j].harness) {
                continue;
            }
            (void)snprintf(msg, sizeof(msg),
                           "rule '%s': binary '%s': harness is ignored (a deprecated marker, "
                           "as in the reference); the binary matches like any other",
                           r->key != NULL ? r->key : "?",
                           r->binaries[j].path.s != NULL ? r->binaries[j].path.s : "");
            warn_at(p, MODEL_WARN_NOT_ENFORCED, r->binaries[j].mark, fn, arg, msg);
        }
    }
}

/*= docs/semantics.md#warnings
 *# `blocked-host` | an endpoint host that is link-local */
static void blocked_host_warning(const struct model_policy *p, const char *key,
                                 const struct model_endpoint *e, model_warn_fn fn, void *arg)
{
    const char *h = e->host.s;
    struct model_ip ip;
    char msg[320];

    if (h == NULL || h[0] == '\0') {
        return;
    }
    if (!(model_ip_parse(h, strlen(h), &ip) && model_ip_is_link_local(&ip)) &&
        !model_host_is_metadata_name(h, strlen(h))) {
        return;
    }
    (void)snprintf(msg, sizeof(msg),
                   "rule '%s': host '%s' is link-local or a cloud metadata name: the proxy always "
                   "blocks it, so this endpoint reaches nothing (the prover reports granting it "
                   "as link_local_reach)",
                   key, h);
    warn_at(p, MODEL_WARN_BLOCKED_HOST, e->host.mark, fn, arg, msg);
}

/* Whether glob 's' has a '?' that is not escaped. */
static bool has_qmark(const char *s)
{
    for (; s != NULL && *s != '\0'; s++) {
        if (*s == '\\' && s[1] != '\0') {
            s++;
        } else if (*s == '?') {
            return true;
        }
    }
    return false;
}

/*= docs/semantics.md#warnings
 *# `path-question-mark` | an endpoint or rule `path` with an unescaped `?` */
static void qmark_warning(const struct model_policy *p, const char *key, const struct model_sval *v,
                          struct model_mark fallback, model_warn_fn fn, void *arg)
{
    char msg[320];

    if (!has_qmark(v->s)) {
        return;
    }
    (void)snprintf(msg, sizeof(msg),
                   "rule '%s': path '%s': '?' in a path glob matches any one character, it does "
                   "not start a query (match the query with 'query:')",
                   key, v->s);
    warn_at(p, MODEL_WARN_PATH_QMARK, v->mark.line > 0 ? v->mark : fallback, fn, arg, msg);
}

static void endpoint_warnings(const struct model_policy *p, const struct model_rule *r,
                              const struct model_endpoint *e, model_warn_fn fn, void *arg)
{
    const char *key = r->key != NULL ? r->key : "?";
    char msg[256];

    if (model_protocol_is_l7(e->proto) && !e->tls_skip && !e->enforce) {
        struct model_mark m = e->enforcement.s != NULL ? e->enforcement.mark : e->mark;

        (void)snprintf(msg, sizeof(msg),
                       "rule '%s': L7 endpoint %s without 'enforcement: enforce' is in audit "
                       "mode: every method and path passes",
                       key, e->host.s != NULL ? e->host.s : "(hostless)");
        fn(arg, MODEL_WARN_L7_AUDIT, p->file, m.line, m.col, msg);
    }
    if (e->host.s != NULL && strchr(e->host.s, '*') != NULL) {
        (void)snprintf(msg, sizeof(msg),
                       "rule '%s': wildcard host '%s' matches every name it "
                       "covers, now and later",
                       key, e->host.s);
        fn(arg, MODEL_WARN_WILDCARD_HOST, p->file, e->host.mark.line, e->host.mark.col, msg);
    }
    if (e->path.s != NULL && (!model_protocol_is_l7(e->proto) || e->tls_skip)) {
        (void)snprintf(msg, sizeof(msg),
                       "rule '%s': 'path: %s' on an L4 endpoint is not "
                       "enforced: the bytes are not inspected",
                       key, e->path.s);
        fn(arg, MODEL_WARN_PATH_ON_L4, p->file, e->path.mark.line, e->path.mark.col, msg);
    }
    if (e->proto == MODEL_PROTO_REST || e->proto == MODEL_PROTO_WEBSOCKET ||
        e->proto == MODEL_PROTO_GRAPHQL) {
        for (size_t i = 0; i < e->nrules; i++) {
            method_warning(p, key, &e->rules[i], fn, arg);
        }
        for (size_t i = 0; i < e->ndeny; i++) {
            method_warning(p, key, &e->deny_rules[i], fn, arg);
        }
    }
    gql_warnings(p, key, e, fn, arg);
    blocked_host_warning(p, key, e, fn, arg);
    /*= docs/semantics.md#warnings
     *# `mcp-without-path` | an enforced `mcp` endpoint with
     *# `allow_all_known_mcp_methods: true` and no `path` (or `**`) */
    if (e->proto == MODEL_PROTO_MCP && e->enforce && e->mcp_allow_all_known_methods &&
        (e->path.s == NULL || e->path.s[0] == '\0' || strcmp(e->path.s, "**") == 0)) {
        (void)snprintf(msg, sizeof(msg),
                       "rule '%s': mcp endpoint %.60s has the method profile and no path: a "
                       "DELETE or an event-stream GET of any path is an MCP transport call "
                       "(add 'path: /mcp')",
                       key, e->host.s != NULL ? e->host.s : "(hostless)");
        fn(arg, MODEL_WARN_MCP_UNSCOPED, p->file, e->mark.line, e->mark.col, msg);
    }
    if (e->path.s != NULL) {
        qmark_warning(p, key, &e->path, e->mark, fn, arg);
    }
    for (size_t i = 0; i < e->nrules + e->ndeny; i++) {
        const struct model_l7rule *l = i < e->nrules ? &e->rules[i] : &e->deny_rules[i - e->nrules];

        qmark_warning(p, key, &l->path, l->mark, fn, arg);
    }
    unenforced_endpoint(p, key, e, fn, arg);
}

static bool has_glob(const char *s)
{
    return strpbrk(s, "*?[{") != NULL;
}

static bool share_port(const struct model_endpoint *a, const struct model_endpoint *b)
{
    for (size_t i = 0; i < a->nports; i++) {
        for (size_t j = 0; j < b->nports; j++) {
            if (a->ports[i] == b->ports[j]) {
                return true;
            }
        }
    }
    return false;
}

/* Does the path scope of 'o' reach requests under the scope of 'g'? No scope
 * or `**` reaches every path; otherwise the same text, or (compiled) a glob
 * that matches g's literal scope. */
static bool scope_reaches(const struct model_endpoint *o, const struct model_endpoint *g)
{
    const char *op = o->path.s;
    const char *gp = g->path.s;

    if (op == NULL || op[0] == '\0' || strcmp(op, "**") == 0) {
        return true;
    }
    if (gp == NULL || gp[0] == '\0' || strcmp(gp, "**") == 0) {
        return false; /* g covers every path, o only some: not reported (#warnings) */
    }
    if (strcmp(op, gp) == 0) {
        return true;
    }
    return o->path_glob != NULL && !has_glob(gp) && model_glob_match(o->path_glob, gp, strlen(gp));
}

/*= docs/semantics.md#warnings
 *# `graphql-shadowed` | an enforced `graphql` endpoint shares its host and a
 *# port with another endpoint (not `graphql`) whose path scope reaches the
 *# GraphQL path: policies are a union, so that endpoint grants requests
 *# there without the GraphQL rules */
static void gql_shadow_warnings(const struct model_policy *p, model_warn_fn fn, void *arg)
{
    char msg[320];

    for (size_t i = 0; i < p->nrules; i++) {
        for (size_t j = 0; j < p->rules[i].nendpoints; j++) {
            const struct model_endpoint *g = &p->rules[i].endpoints[j];

            if (g->proto != MODEL_PROTO_GRAPHQL || !g->enforce || g->host.s == NULL ||
                g->host.s[0] == '\0') {
                continue;
            }
            for (size_t k = 0; k < p->nrules; k++) {
                for (size_t l = 0; l < p->rules[k].nendpoints; l++) {
                    const struct model_endpoint *o = &p->rules[k].endpoints[l];
                    bool l7 = model_protocol_is_l7(o->proto) && !o->tls_skip;

                    if (o == g || o->proto == MODEL_PROTO_GRAPHQL || o->host.s == NULL ||
                        strcmp(o->host.s, g->host.s) != 0 || !share_port(o, g) ||
                        (l7 && !scope_reaches(o, g))) {
                        continue;
                    }
                    (void)snprintf(msg, sizeof(msg),
                                   "rule '%s': %s endpoint %s also grants requests under the "
                                   "GraphQL path %s of rule '%s' without its GraphQL rules "
                                   "(policies are a union): scope its path away from it",
                                   p->rules[k].key != NULL ? p->rules[k].key : "?",
                                   l7 ? "L7" : "L4", o->host.s,
                                   g->path.s != NULL ? g->path.s : "**",
                                   p->rules[i].key != NULL ? p->rules[i].key : "?");
                    fn(arg, MODEL_WARN_GQL_SHADOWED, p->file, o->mark.line, o->mark.col, msg);
                }
            }
        }
    }
}

void model_policy_warnings(const struct model_policy *p, unsigned flags, model_warn_fn fn,
                           void *arg)
{
    char msg[256];

    if (p == NULL || fn == NULL) {
        return;
    }
    for (size_t i = 0; i < p->nrules; i++) {
        const struct model_rule *r = &p->rules[i];
        const char *key = r->key != NULL ? r->key : "?";

        if (r->nbinaries == 0 && r->nendpoints > 0) {
            (void)snprintf(msg, sizeof(msg), "rule '%s' has no binaries: it matches nothing", key);
            fn(arg, MODEL_WARN_NO_BINARIES, p->file, r->key_mark.line, r->key_mark.col, msg);
        }
        for (size_t j = 0; j < r->nbinaries; j++) {
            const struct model_binary *b = &r->binaries[j];
            const char *path = b->path.s;

            if (path == NULL) {
                continue;
            }
            if (path[0] != '/') {
                (void)snprintf(msg, sizeof(msg),
                               "rule '%s': binary '%s' is relative: binaries "
                               "are absolute paths, it matches nothing",
                               key, path);
                fn(arg, MODEL_WARN_BINARY_RELATIVE, p->file, b->path.mark.line, b->path.mark.col,
                   msg);
            } else if ((flags & MODEL_WARN_FS) != 0 && !has_glob(path) && access(path, F_OK) != 0) {
                (void)snprintf(msg, sizeof(msg),
                               "rule '%s': binary '%s' does not exist on "
                               "this host",
                               key, path);
                fn(arg, MODEL_WARN_BINARY_MISSING, p->file, b->path.mark.line, b->path.mark.col,
                   msg);
            }
        }
        for (size_t j = 0; j < r->nendpoints; j++) {
            endpoint_warnings(p, r, &r->endpoints[j], fn, arg);
        }
    }
    gql_shadow_warnings(p, fn, arg);
    unenforced_policy(p, fn, arg);
}
