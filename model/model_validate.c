/* SPDX-License-Identifier: Apache-2.0 */
/* model_validate.c - policy normalisation and validation (docs/semantics.md#validation)
 *
 * model_policy_validate() first normalises a freshly parsed (or merged)
 * policy in place: rules sorted by key, `port`/`ports` folded into ports[]
 * (sorted, unique), hosts lower-cased without one trailing dot (IPv6
 * literals also lose their brackets), HTTP methods upper-cased, allowed_ips
 * parsed into cidrs[], and the enum mirrors of the string fields (proto,
 * tls_skip, enforce, access_preset) set. It then checks
 * every constraint of the reference's validate_sandbox_policy and L7
 * validation (docs/reference-compat.md#policy) plus proviso's
 * own (glob syntax, methods, allowed_ips, target_sandbox) and adds one
 * diagnostic per violation at the mark of the offending value. It never
 * stops at the first violation, never aborts on hostile input, and returns
 * true only when no diagnostic was added.
 *
 * '{name}' below is the rule's `name` when set, otherwise its map key. The
 * messages, in the order they are checked:
 *
 *   unsupported policy version N; expected 1
 *   missing required field 'version'
 *   run_as_user must be 'sandbox' or a numeric UID/GID in range [1, 4294967294], got 'V'
 *   run_as_group must be 'sandbox' or a numeric UID/GID in range [1, 4294967294], got 'V'
 *   too many filesystem paths (N > 256)
 *   path exceeds maximum length (N > 4096): P...
 *   path must be absolute (start with '/'): P
 *   path contains '..' traversal component: P
 *   read-write path is overly broad: P
 *   network_middlewares 'N': proviso does not run middlewares, and this one fails closed
 *       (on_error: fail_closed, the default), so it would deny what it covers; remove it,
 *       or set on_error: fail_open to run without it                     (ours)
 *   duplicate network policy key 'K'                                  (ours)
 *   network policy '{name}': binary path must not be empty            (ours)
 *   network policy '{name}': invalid binary pattern 'P': WHY          (ours)
 *   network policy '{name}': protocol tcp requires a DNS hostname; hostless allowed_ips
 *       endpoints are supported only by the forward proxy
 *   network policy '{name}': endpoint host must not be empty unless allowed_ips
 *       constrains a non-TCP proxy endpoint
 *   network policy '{name}': protocol tcp endpoint 'H' must use a DNS hostname, not an
 *       IP literal; direct IP connections bypass policy DNS and are blocked
 *   network policy '{name}': protocol tcp endpoint has invalid DNS host selector 'H': WHY
 *   network policy '{name}': endpoint 'H' must declare at least one port
 *   network policy '{name}': endpoint 'H' has invalid port N; expected 1..=65535
 *   network policy '{name}': TLD wildcard 'H' is not allowed; use subdomain wildcards
 *       like '*.example.com' instead
 *   network policy '{name}': invalid host wildcard 'H'; middle DNS label wildcards must
 *       be the entire label '*' and recursive '**' is only allowed as the entire first label
 *   network policy '{name}': endpoint host 'H' is a non-canonical IP literal; write it
 *       as 'IP'                                                       (ours)
 *   network policy '{name}': invalid host pattern 'H': WHY            (ours)
 *   network policy '{name}': endpoint 'H' has unrecognized credential_signing value 'V'
 *       (expected sigv4, sigv4:body, or sigv4:no_body)
 *   network policy '{name}': endpoint 'H' has credential_signing set but signing_service
 *       is empty
 *   network policy '{name}': endpoint 'H' has both credential_signing and
 *       request_body_credential_rewrite set; these options are mutually exclusive
 *   network policy '{name}': endpoint N has invalid L7 configuration: REASON, REASON one of
 *       unknown tls value 'V' (expected skip, terminate, or passthrough)
 *       unknown enforcement value 'V' (expected enforce or audit)
 *       unknown access value 'V' (expected read-only, read-write, or full)
 *       unknown protocol 'P' (expected tcp, rest, websocket, graphql, sql, json-rpc, or mcp)
 *       protocol tcp does not support access, rules, or deny_rules; remove those L7 fields
 *       rules and access are mutually exclusive
 *       protocol mcp does not support access presets; use rules/deny_rules or set
 *           mcp.allow_all_known_mcp_methods: true for an allow-all MCP policy
 *       protocol json-rpc does not support access presets; use explicit rules with
 *           allow.method such as "*"
 *       protocol json-rpc requires explicit rules with allow.method
 *       protocol requires rules or access to define allowed traffic
 *       protocol mcp requires rules when mcp.allow_all_known_mcp_methods is false
 *       rules would deny all traffic (no allow clause found). Use `access: full` or add
 *           allow clauses to rules.
 *       deny_rules require protocol (L7 inspection must be enabled)
 *       deny_rules require rules or access to define the base allow set
 *       rules list cannot be empty (would deny all traffic). Use `access: full` or
 *           remove rules.
 *       deny_rules list cannot be empty (would have no effect). Remove it if no denials
 *           are needed.
 *       protocol tcp does not support L7-only fields: LIST; remove those fields
 *       path must start with '/' or be '**'
 *       rules[I].allow.path 'P' must start with '/' or '**': a request path always starts
 *           with '/', so it would match nothing                         (ours)
 *       deny_rules[I].path 'P' must start with '/' or '**': ...        (ours)
 *       persisted_queries must be 'deny' or 'allow_registered', got 'V'
 *       SQL enforcement requires full SQL parsing; use enforcement: audit
 *       tls: skip cannot be enforced (the proxy does not inspect skipped TLS, so the
 *           rules would never apply); use enforcement: audit or remove tls: skip  (ours)
 *       mcp options are only valid for protocol mcp
 *       json_rpc options are not valid for protocol mcp; use mcp.max_body_bytes   (ours)
 *       rules[I].allow.operation_type must be query, mutation, subscription, or *
 *           (the reference omits '*', which the schema allows)
 *       deny_rules[I].operation_type must be query, mutation, subscription, or *
 *       graphql_persisted_queries[K].operation_type must be query, mutation, or subscription
 *       RULE: operation_type, operation_name and fields are GraphQL rule fields;
 *           protocol P does not match GraphQL operations                   (ours)
 *       RULE mixes method, path or query with operation_type, operation_name or
 *           fields; write the WebSocket upgrade and the GraphQL operations as
 *           separate rules                                                  (ours)
 *       RULE: protocol graphql rules match operations; method, path and query are
 *           not allowed (scope the endpoint with its path)                  (ours)
 *       RULE.fields must not be empty; omit it to match every field        (ours)
 *       graphql_persisted_queries[K].operation_name 'N' is not a GraphQL name (ours)
 *       graphql_persisted_queries[K].fields[J] 'F' is not a GraphQL name   (ours)
 *       graphql_persisted_queries keys must not be empty                   (ours)
 *       rules[I].allow.query.K.any: list must not be empty
 *       deny_rules[I].query.K.any: list must not be empty
 *   network policy '{name}': endpoint 'H' has invalid allowed_ips entry 'E': WHY  (ours)
 *   network policy '{name}': allowed_ips entry E falls within always-blocked range
 *       (loopback/link-local/unspecified); remove this entry — SSRF hardening prevents
 *       traffic to these destinations regardless of policy
 *   network policy '{name}': endpoint 'H' has invalid target_sandbox 'V'; expected a
 *       non-empty name of [A-Za-z0-9._-]                              (ours)
 *   network policy '{name}': endpoint 'H': target_sandbox and allowed_ips are mutually
 *       exclusive                                                     (ours)
 *   network policy '{name}': invalid method 'M'                      (ours)
 *   network policy '{name}': invalid path pattern 'P': WHY           (ours)
 *   network policy '{name}': invalid query pattern 'P': WHY          (ours)
 *
 * Methods of json-rpc and mcp endpoints are JSON-RPC method names
 * ("tools/call"): they are case-sensitive and not HTTP tokens, so they are
 * neither upper-cased nor checked. The `_provider_` key prefix is checked by
 * merge, not here.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_validate.h"

#define MAX_FS_PATHS 256
#define MAX_FS_PATH_LEN 4096

/* ===========================================================================
 * Reporting
 * ========================================================================= */

/* Format 'prefix' + 'fmt' into a bounded buffer (an over-long message is cut
 * and ends in "...") and add it as one diagnostic. */
__attribute__((format(printf, 4, 0))) static void
vreport(struct vctx *c, struct model_mark m, const char *prefix, const char *fmt, va_list ap)
{
    char msg[MSG_MAX];
    size_t used = 0;
    int n;

    if (prefix != NULL) {
        n = snprintf(msg, sizeof(msg), "%s", prefix);
        used = n < 0 ? 0 : ((size_t)n >= sizeof(msg) ? sizeof(msg) - 1 : (size_t)n);
    }
    msg[used] = '\0';
    n = vsnprintf(msg + used, sizeof(msg) - used, fmt, ap);
    if (n >= 0 && (size_t)n >= sizeof(msg) - used) {
        memcpy(msg + sizeof(msg) - 4, "...", 4);
    }
    c->nerr++;
    if (!pv_ok(model_diag_add(c->diags, c->file, m, "%s", msg))) {
        c->nomem = true;
    }
}

__attribute__((format(printf, 3, 4))) void model_vd_report(struct vctx *c, struct model_mark m,
                                                           const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(c, m, NULL, fmt, ap);
    va_end(ap);
}

/* "network policy '{name}': endpoint {index} has invalid L7 configuration: ..." */
__attribute__((format(printf, 3, 4))) void model_vd_report_l7(struct vctx *c, struct model_mark m,
                                                              const char *fmt, ...)
{
    char prefix[MSG_MAX];
    va_list ap;
    (void)snprintf(prefix, sizeof(prefix),
                   "network policy '%s': endpoint %zu has invalid L7 configuration: ", c->name,
                   c->index);
    va_start(ap, fmt);
    vreport(c, m, prefix, fmt, ap);
    va_end(ap);
}

/* ===========================================================================
 * Top level: version, process, filesystem
 * ========================================================================= */

static bool identity_valid(const char *s)
{
    uint64_t v = 0;
    if (strcmp(s, "sandbox") == 0) {
        return true;
    }
    if (!pv_ok(pv_parse_u64(s, strlen(s), UINT32_MAX - 1u, &v))) {
        return false;
    }
    return v >= 1;
}

static void check_identity(struct vctx *c, const char *field, const struct model_sval *v)
{
    if (str_empty(v->s) || identity_valid(v->s)) {
        return;
    }
    model_vd_report(c, v->mark,
                    "%s must be 'sandbox' or a numeric UID/GID in range [1, 4294967294], got '%s'",
                    field, v->s);
}

static bool has_parent_component(const char *path)
{
    const char *q = path;
    while (*q != '\0') {
        const char *end = strchr(q, '/');
        size_t len = end == NULL ? strlen(q) : (size_t)(end - q);
        if (len == 2 && q[0] == '.' && q[1] == '.') {
            return true;
        }
        if (end == NULL) {
            break;
        }
        q = end + 1;
    }
    return false;
}

static void check_fs_path(struct vctx *c, const struct model_sval *v)
{
    const char *path = str_or_empty(v->s);
    size_t len = strlen(path);

    if (len > MAX_FS_PATH_LEN) {
        /* The reference shows 77 bytes and "..." once a path exceeds 80
         * bytes, cutting on a UTF-8 character boundary. */
        size_t cut = 77;
        while (cut > 0 && ((unsigned char)path[cut] & 0xC0u) == 0x80u) {
            cut--;
        }
        model_vd_report(c, v->mark, "path exceeds maximum length (%zu > %d): %.*s...", len,
                        MAX_FS_PATH_LEN, (int)cut, path);
        return;
    }
    if (path[0] != '/') {
        model_vd_report(c, v->mark, "path must be absolute (start with '/'): %s", path);
    }
    if (has_parent_component(path)) {
        model_vd_report(c, v->mark, "path contains '..' traversal component: %s", path);
    }
}

static void check_filesystem(struct vctx *c, const struct model_policy *p)
{
    size_t total = p->fs_read_only.n + p->fs_read_write.n;

    if (!p->has_fs) {
        return;
    }
    if (total > MAX_FS_PATHS) {
        model_vd_report(c, mark_or(p->fs_mark, p->fs_read_write.mark),
                        "too many filesystem paths (%zu > %d)", total, MAX_FS_PATHS);
    }
    for (size_t i = 0; i < p->fs_read_only.n; i++) {
        check_fs_path(c, &p->fs_read_only.v[i]);
    }
    for (size_t i = 0; i < p->fs_read_write.n; i++) {
        check_fs_path(c, &p->fs_read_write.v[i]);
    }
    for (size_t i = 0; i < p->fs_read_write.n; i++) {
        const struct model_sval *v = &p->fs_read_write.v[i];
        const char *s = str_or_empty(v->s);
        size_t len = strlen(s);
        while (len > 0 && s[len - 1] == '/') {
            len--;
        }
        if (len == 0) {
            model_vd_report(c, v->mark, "read-write path is overly broad: %s", s);
        }
    }
}

/*= docs/reference-compat.md#unenforced
 *# `network_middlewares` with `on_error: fail_closed` or without `on_error`
 * proviso runs no middleware. One that fails closed would deny what it
 * covers whenever it cannot run, so running without it is the one reading
 * that grants more than the policy says: refused. A fail_open one is a
 * warning (model_warn.c). The reference facts give no default for
 * on_error; proviso reads an absent (or any other) value as fail_closed. */
static void check_middlewares(struct vctx *c, const struct model_policy *p)
{
    for (size_t i = 0; i < p->nmw; i++) {
        const struct model_middleware *mw = &p->mw[i];

        if (mw->fail_open) {
            continue;
        }
        model_vd_report(c, mark_or(mw->mark, p->middlewares_mark),
                        "network_middlewares '%s': proviso does not run middlewares, and this "
                        "one fails closed (on_error: fail_closed, the default), so it would "
                        "deny what it covers; remove it, or set on_error: fail_open to run "
                        "without it",
                        str_or_empty(mw->name));
    }
}

/* ===========================================================================
 * Patterns
 * ========================================================================= */

static const char *glob_kind_word(enum model_glob_kind kind)
{
    switch (kind) {
    case MODEL_GLOB_HOST:
        return "host";
    case MODEL_GLOB_PATH:
        return "path";
    case MODEL_GLOB_BINARY:
        return "binary";
    case MODEL_GLOB_VALUE:
        return "query";
    }
    return "unknown";
}

/* Compile 'pat' only to learn whether it is valid; the compiled form is
 * built again by model_policy_compile(). */
void model_vd_check_glob(struct vctx *c, enum model_glob_kind kind, const char *pat,
                         struct model_mark m)
{
    model_vd_check_glob_as(c, kind, glob_kind_word(kind), pat, m);
}

void model_vd_check_glob_as(struct vctx *c, enum model_glob_kind kind, const char *word,
                            const char *pat, struct model_mark m)
{
    const char *why = NULL;
    struct model_glob *g;

    pv_errno = PV_OK;
    g = model_glob_compile(kind, pat, strlen(pat), &why);
    if (g != NULL) {
        model_glob_free(g);
        return;
    }
    if (pv_errno == PV_ERR_NOMEM) {
        c->nomem = true;
        c->nerr++;
        return;
    }
    model_vd_report(c, m, "network policy '%s': invalid %s pattern '%s': %s", c->name, word, pat,
                    why != NULL ? why : "malformed pattern");
}

/* ===========================================================================
 * Rules and the entry point
 * ========================================================================= */

static int cmp_rule(const void *a, const void *b)
{
    const struct model_rule *x = a;
    const struct model_rule *y = b;
    return strcmp(str_or_empty(x->key), str_or_empty(y->key));
}

static void check_rule(struct vctx *c, struct model_rule *r)
{
    c->name = !str_empty(r->name.s) ? r->name.s : str_or_empty(r->key);
    for (size_t i = 0; i < r->nbinaries; i++) {
        struct model_binary *b = &r->binaries[i];
        struct model_mark m = mark_or(b->path.mark, mark_or(b->mark, r->mark));
        if (str_empty(b->path.s)) {
            model_vd_report(c, m, "network policy '%s': binary path must not be empty", c->name);
            continue;
        }
        model_vd_check_glob(c, MODEL_GLOB_BINARY, b->path.s, m);
    }
    for (size_t i = 0; i < r->nendpoints; i++) {
        c->index = i;
        c->host = "";
        model_vd_check_endpoint(c, &r->endpoints[i]);
    }
}

bool model_policy_validate(struct model_policy *p, struct model_diags *diags)
{
    struct vctx c;
    struct model_mark top = {1, 1};

    memset(&c, 0, sizeof(c));
    c.diags = diags;
    c.file = p != NULL && p->file != NULL ? p->file : "<policy>";
    c.name = "";
    c.host = "";
    if (p == NULL || diags == NULL) {
        pv_errno = PV_ERR_NULL;
        return false;
    }

    if (!p->has_version) {
        model_vd_report(&c, top, "missing required field 'version'");
    } else if (p->version != 1) {
        model_vd_report(&c, p->version_mark, "unsupported policy version %lu; expected 1",
                        (unsigned long)p->version);
    }
    if (p->has_process) {
        check_identity(&c, "run_as_user", &p->run_as_user);
        check_identity(&c, "run_as_group", &p->run_as_group);
    }
    check_filesystem(&c, p);
    check_middlewares(&c, p);

    if (p->nrules > 1) {
        qsort(p->rules, p->nrules, sizeof(p->rules[0]), cmp_rule);
        for (size_t i = 1; i < p->nrules; i++) {
            if (cmp_rule(&p->rules[i - 1], &p->rules[i]) == 0) {
                model_vd_report(&c, mark_or(p->rules[i].key_mark, p->rules[i].mark),
                                "duplicate network policy key '%s'", str_or_empty(p->rules[i].key));
            }
        }
    }
    for (size_t i = 0; i < p->nrules; i++) {
        check_rule(&c, &p->rules[i]);
    }

    if (c.nomem) {
        pv_errno = PV_ERR_NOMEM;
    }
    return c.nerr == 0;
}
