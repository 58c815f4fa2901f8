/* SPDX-License-Identifier: Apache-2.0 */
/* prover_grants.c - the reviewer's view of a change: what the candidate grants
 *
 * A grant is a unit of the candidate - one (binary pattern, endpoint) pair of
 * a rule, prover_units.c - whose (binary text, endpoint fingerprint) pair no
 * baseline unit has (docs/semantics.md#grants). It is "new" when no baseline
 * unit has the same binary pattern and host pattern, else "changed" (the
 * endpoint differs in ports, route, methods, paths, allowed_ips, ...). The
 * list is descriptive and needs no solver: units, fingerprints and the delta
 * are the same cheap steps the proof starts with; the verdict still comes
 * from the categories only.
 *
 * Invariant: grants are sorted by (binary, host, first port, rule) and every
 * string is owned by its grant.
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prover/prover_int.h"

#define GRANTS_TEXT_MAX ((size_t)1 << 24)
/* Units listed per binary in the text view. */
#define GRANTS_TEXT_PER_BINARY 50u

static void grant_clear(struct prover_grant *g)
{
    free(g->rule);
    free(g->binary);
    free(g->host);
    free(g->ports);
    for (size_t i = 0; i < g->naccess; i++) {
        free(g->access[i]);
    }
    free(g->access);
    for (size_t i = 0; i < g->nadded; i++) {
        free(g->added[i]);
    }
    free(g->added);
    for (size_t i = 0; i < g->ncreds; i++) {
        free(g->creds[i]);
    }
    free(g->creds);
    for (size_t i = 0; i < g->nprivate; i++) {
        free(g->private_ips[i]);
    }
    free(g->private_ips);
    for (size_t i = 0; i < g->ndests; i++) {
        free(g->dests[i]);
    }
    free(g->dests);
    for (size_t i = 0; i < g->nflags; i++) {
        free(g->flags[i]);
    }
    free(g->flags);
    free(g->peer);
    memset(g, 0, sizeof(*g));
}

void prover_grants_free(struct prover_grants *gs)
{
    if (gs == NULL) {
        return;
    }
    for (size_t i = 0; i < gs->n; i++) {
        grant_clear(&gs->g[i]);
    }
    free(gs->g);
    memset(gs, 0, sizeof(*gs));
}

static pv_result push_str(char ***v, size_t *n, const char *s) PV_WUR;
static pv_result push_str(char ***v, size_t *n, const char *s)
{
    char **g = pv_realloc(*v, (*n + 1) * sizeof(char *));

    PV_GUARD_PTR(g);
    *v = g;
    g[*n] = pv_strdup(s);
    PV_GUARD_PTR(g[*n]);
    (*n)++;
    return PV_RESULT_OK;
}

static const char *route_of(const struct prover_unit *u)
{
    if (!u->l7) {
        return "opaque";
    }
    return u->v.enforce ? "inspected" : "audit";
}

/* "GraphQL query|mutation [name GLOB] [fields A, B]": a GraphQL allow rule
 * (docs/semantics.md#graphql-allow). */
static void gql_line(char *line, size_t cap, const struct model_l7rule_view *r)
{
    static const char *const names[] = {"query", "mutation", "subscription"};
    size_t len = 0;

    len += (size_t)snprintf(line, cap, "GraphQL ");
    if ((r->gql_types & 7u) == 7u) {
        len += (size_t)snprintf(line + len, cap - len, "any operation");
    } else if ((r->gql_types & 7u) == 0) {
        len += (size_t)snprintf(line + len, cap - len, "no operation");
    } else {
        for (unsigned t = 0, n = 0; t < 3 && len < cap; t++) {
            if ((r->gql_types >> t) & 1u) {
                len += (size_t)snprintf(line + len, cap - len, "%s%s", n++ ? "|" : "", names[t]);
            }
        }
    }
    if (r->gql_name != NULL && len < cap) {
        len += (size_t)snprintf(line + len, cap - len, " name %s", model_glob_text(r->gql_name));
    }
    for (size_t j = 0; j < r->gql_nfields && len < cap; j++) {
        len += (size_t)snprintf(line + len, cap - len, "%s%s", j ? ", " : " fields ",
                                model_glob_text(r->gql_fields[j]));
    }
}

/* "call METHOD [tool A, B]": a call allow rule of an enforced json-rpc or
 * mcp endpoint (docs/semantics.md#rpc-rules). */
static void rpc_line(char *line, size_t cap, const struct prover_unit *u,
                     const struct model_l7rule_view *r)
{
    const char *m = r->method != NULL && r->method[0] != '\0' ? r->method : NULL;
    size_t len;

    if (m == NULL && r->rpc_ntools == 0) {
        /* the profile is listed once, by fill_access */
        (void)snprintf(line, cap, "%s",
                       u->v.mcp_profile ? "call every profile method (as the profile)"
                                        : "no call (a rule without method or tool)");
        return;
    }
    len = (size_t)snprintf(line, cap, "call %s", m != NULL ? m : "tools/call");
    for (size_t j = 0; j < r->rpc_ntools && len < cap; j++) {
        len += (size_t)snprintf(line + len, cap - len, "%s%s", j ? ", " : " tool ",
                                r->rpc_tools != NULL && r->rpc_tools[j] != NULL
                                    ? model_glob_text(r->rpc_tools[j])
                                    : "?");
    }
}

/* "GET /repos/...", with wildcards in words (docs/semantics.md#grants): the
 * method '*' is "every method" and a path of '**' (with or without its
 * leading slash) "every path", so a reviewer never reads "* **" for
 * "everything". */
static void access_line(char *line, size_t cap, const char *method, const char *path, bool cond)
{
    bool any_method = strcmp(method, "*") == 0;
    bool any_path = strcmp(path, "**") == 0 || strcmp(path, "/**") == 0;
    const char *tail = cond ? " (with conditions)" : "";

    if (any_method && any_path) {
        (void)snprintf(line, cap, "every method on every path%s", tail);
    } else if (any_method) {
        (void)snprintf(line, cap, "every method on %s%s", path, tail);
    } else if (any_path) {
        (void)snprintf(line, cap, "%s on every path%s", method, tail);
    } else {
        (void)snprintf(line, cap, "%s %s%s", method, path, tail);
    }
}

/* "GET /repos/..." per effective allow rule of an inspected endpoint; an
 * opaque endpoint passes every byte ("all traffic"). */
static pv_result fill_access(struct prover_grant *g, const struct prover_unit *u) PV_WUR;
static pv_result fill_access(struct prover_grant *g, const struct prover_unit *u)
{
    char line[512];

    if (!u->l7) {
        return push_str(&g->access, &g->naccess, "all traffic");
    }
    if (prover_unit_rpc(u) && u->v.mcp_profile) {
        PV_GUARD(push_str(&g->access, &g->naccess,
                          u->v.rpc_tool_narrowed
                              ? "call every MCP profile method (tools/call: the named tools only)"
                              : "call every MCP profile method (tools/call: every tool)"));
    }
    for (size_t i = 0; i < u->v.nallow; i++) {
        struct model_l7rule_view r;
        const char *path;

        model_endpoint_allow_rule(u->ep, i, &r);
        if (prover_unit_rpc(u)) {
            rpc_line(line, sizeof(line), u, &r);
            PV_GUARD(push_str(&g->access, &g->naccess, line));
            continue;
        }
        if (r.gql_types != 0) {
            gql_line(line, sizeof(line), &r);
            PV_GUARD(push_str(&g->access, &g->naccess, line));
            continue;
        }
        path = r.path != NULL ? model_glob_text(r.path) : NULL;
        if (path == NULL) {
            path = u->v.path_scope != NULL ? model_glob_text(u->v.path_scope) : "/**";
        }
        access_line(line, sizeof(line), r.method != NULL ? r.method : "*", path,
                    r.nquery > 0 || r.has_other);
        PV_GUARD(push_str(&g->access, &g->naccess, line));
    }
    for (size_t i = 0; u->v.enforce && i < model_endpoint_gql_npersisted(u->ep); i++) {
        const char *id = model_endpoint_gql_persisted_id(u->ep, i);
        bool isq;

        if (model_endpoint_gql_persisted_match(u->ep, id, false, &isq)) {
            (void)snprintf(line, sizeof(line), "GraphQL persisted query %s%s", id,
                           isq ? "" : " (not a query)");
            PV_GUARD(push_str(&g->access, &g->naccess, line));
        }
    }
    if (u->v.nallow == 0 && !(prover_unit_rpc(u) && u->v.mcp_profile)) {
        PV_GUARD(push_str(&g->access, &g->naccess, "no request (no allow rule)"));
    }
    return PV_RESULT_OK;
}

/* ---------------------------------------------------------------------------
 * Breadth: one word per dimension, wide first in the reviewer's eye
 * ------------------------------------------------------------------------- */

/* Product states for "does this binary pattern match every path?" (a few
 * dozen for any pattern a person writes). */
#define GRANTS_LANG_STATES 4096u

/*= docs/semantics.md#grant-breadth
 *# `binary`: `exact` for a pattern without glob metacharacters; `any` for a
 *# pattern that matches every binary path */
static pv_result binary_breadth(const struct model_glob *bg, const char **out) PV_WUR;
static pv_result binary_breadth(const struct model_glob *bg, const char **out)
{
    struct model_lang_term t;

    if (model_glob_is_literal(bg)) {
        *out = "exact";
        return PV_RESULT_OK;
    }
    *out = "glob";
    if (strstr(model_glob_text(bg), "**") == NULL) {
        /* without '**' a pattern matches paths of a few depths only */
        return PV_RESULT_OK;
    }
    /* any: no canonical absolute path outside the pattern */
    t.g = bg;
    t.positive = false;
    switch (model_lang_check(MODEL_DOMAIN_ABS_PATH, &t, 1, GRANTS_LANG_STATES, NULL, NULL)) {
    case MODEL_LANG_EMPTY:
    case MODEL_LANG_LIMIT: /* undecided: the wider mark */
        *out = "any";
        return PV_RESULT_OK;
    case MODEL_LANG_NONEMPTY:
        return PV_RESULT_OK;
    case MODEL_LANG_NOMEM:
        PV_BAIL(PV_ERR_NOMEM);
    }
    PV_BAIL(PV_ERR_INTERNAL);
}

/*= docs/semantics.md#grant-breadth
 *# `host`: `hostless` for an endpoint without a host */
static const char *host_breadth(const struct prover_unit *u)
{
    const char *h = u->v.host;

    if (h == NULL) {
        return "hostless";
    }
    if (u->v.host_is_ip || strchr(h, '*') == NULL) {
        return "exact";
    }
    if (strstr(h, "**") != NULL || strspn(h, "*.") == strlen(h)) {
        return "any-depth";
    }
    return "one-label";
}

static bool read_only_method(const char *m)
{
    return strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0 || strcmp(m, "OPTIONS") == 0;
}

/* The MCP methods that read: they list, read or complete what the server
 * offers, or open, keep and close the session; every other call (a tool
 * call, a subscription, a log level, a task cancelled, a client's response
 * to the server, an extension) counts as a write. */
static const char *const rpc_reads[] = {
    "initialize",       "ping",          "tools/list",   "resources/list",
    "resources/read",   "prompts/list",  "prompts/get",  "resources/templates/list",
    "tasks/get",        "tasks/list",    "tasks/result", "completion/complete",
    MODEL_RPC_M_STREAM, MODEL_RPC_M_END,
};

static bool rpc_read_method(const char *m)
{
    if (strncmp(m, "notifications/", 14) == 0) {
        return true;
    }
    for (size_t i = 0; i < PV_ARRAY_LEN(rpc_reads); i++) {
        if (strcmp(m, rpc_reads[i]) == 0) {
            return true;
        }
    }
    return false;
}

/*= docs/semantics.md#grant-breadth
 *# A call allow rule of an enforced `json-rpc` or `mcp` endpoint (#rpc)
 *# counts by the calls it admits */
static const char *rpc_methods_breadth(const struct prover_unit *u)
{
    bool mcp = u->v.proto == MODEL_PROTO_MCP;
    bool writes = false;

    if (mcp && u->v.mcp_profile) {
        if (!u->v.rpc_tool_narrowed) {
            return "all"; /* every profile method, tools/call with every tool */
        }
        writes = true; /* the profile holds methods that write */
    }
    for (size_t i = 0; i < u->v.nallow; i++) {
        struct model_l7rule_view r;
        const char *m;

        model_endpoint_allow_rule(u->ep, i, &r);
        m = r.method != NULL && r.method[0] != '\0' ? r.method : NULL;
        if (m == NULL && r.rpc_ntools == 0) {
            continue; /* the profile (counted above) or nothing */
        }
        if (m == NULL) {
            writes = true; /* a tool selector: tools/call */
        } else if (!mcp) {
            if (strcmp(m, "*") == 0) {
                return "all";
            }
            writes = true; /* a generic JSON-RPC method: proviso cannot tell */
        } else if (r.rpc_method_glob != NULL &&
                   strcmp(model_glob_text(r.rpc_method_glob), "*") == 0 && r.rpc_ntools == 0) {
            return "all";
        } else if (r.rpc_method_glob == NULL || !model_glob_is_literal(r.rpc_method_glob) ||
                   !rpc_read_method(m)) {
            writes = true;
        }
    }
    return writes ? "writes" : "read-only";
}

/*= docs/semantics.md#grant-breadth
 *# `methods`: `all` for an opaque or audit route or an allow rule with method `*` */
static const char *methods_breadth(const struct prover_unit *u)
{
    bool writes = false;

    if (!u->l7 || !u->v.enforce) {
        return "all";
    }
    if (prover_unit_rpc(u)) {
        return rpc_methods_breadth(u);
    }
    if (u->v.proto != MODEL_PROTO_REST && u->v.proto != MODEL_PROTO_WEBSOCKET &&
        u->v.proto != MODEL_PROTO_GRAPHQL) {
        return "read-only"; /* enforced and not inspected: grants no request (#unsupported) */
    }
    for (size_t i = 0; i < model_endpoint_gql_npersisted(u->ep); i++) {
        bool isq;

        if (model_endpoint_gql_persisted_match(u->ep, model_endpoint_gql_persisted_id(u->ep, i),
                                               false, &isq) &&
            !isq) {
            writes = true; /* a registered mutation or subscription */
        }
    }
    for (size_t i = 0; i < u->v.nallow; i++) {
        struct model_l7rule_view r;

        model_endpoint_allow_rule(u->ep, i, &r);
        if (r.gql_types != 0) {
            /* operation types: `*` is all, a mutation or subscription writes */
            if ((r.gql_types & 7u) == 7u) {
                return "all";
            }
            writes = writes || (r.gql_types & 6u) != 0;
            continue;
        }
        if (r.method == NULL || r.method[0] == '\0') {
            continue; /* an allow rule without a method grants nothing (#methods) */
        }
        if (strcmp(r.method, "*") == 0) {
            return "all";
        }
        if (!read_only_method(r.method)) {
            writes = true;
        }
    }
    return writes ? "writes" : "read-only";
}

static pv_result fill_grant(struct prover_grant *g, const struct prover_unit *u, bool changed,
                            const struct model_credset *cs) PV_WUR;
static pv_result fill_grant(struct prover_grant *g, const struct prover_unit *u, bool changed,
                            const struct model_credset *cs)
{
    memset(g, 0, sizeof(*g));
    g->changed = changed;
    g->route = route_of(u);
    g->rule = pv_strdup(model_rule_key(u->rule));
    g->binary = pv_strdup(u->bin);
    g->host = pv_strdup(u->v.host != NULL ? u->v.host : "*");
    PV_GUARD_PTR(g->rule);
    PV_GUARD_PTR(g->binary);
    PV_GUARD_PTR(g->host);
    if (u->v.target_sandbox != NULL) {
        size_t n = strlen(u->v.target_sandbox) + sizeof(" (unresolved)");
        g->peer = pv_malloc(n);
        PV_GUARD_PTR(g->peer);
        (void)snprintf(g->peer, n, "%s%s", u->v.target_sandbox,
                       u->v.unresolved ? " (unresolved)" : "");
    }
    if (u->v.nports > 0) {
        g->ports = pv_calloc(u->v.nports, sizeof(*g->ports));
        PV_GUARD_PTR(g->ports);
        memcpy(g->ports, u->v.ports, u->v.nports * sizeof(*g->ports));
        g->nports = u->v.nports;
    }
    PV_GUARD(fill_access(g, u));
    PV_GUARD(binary_breadth(u->bglob, &g->breadth.binary));
    g->breadth.host = host_breadth(u);
    g->breadth.route = g->route;
    g->breadth.methods = methods_breadth(u);
    for (size_t i = 0; cs != NULL && u->v.host != NULL && i < model_credset_count(cs); i++) {
        if (model_cred_overlaps(cs, i, u->v.host)) {
            PV_GUARD(push_str(&g->creds, &g->ncreds, model_cred_name(cs, i)));
        }
    }
    for (size_t i = 0; i < u->v.ncidrs; i++) {
        char ip[64];
        char text[80];
        const struct model_cidr *c = &u->v.cidrs[i];
        bool v4 = model_ip_is_v4(&c->net);

        model_ip_format(&c->net, ip, sizeof(ip));
        (void)snprintf(text, sizeof(text), "%s/%u", ip,
                       (unsigned)(v4 ? c->prefix - 96 : c->prefix));
        /* every range: a peer that moves to a public address, or a public
         * allowed_ips range, changes what the grant reaches too */
        PV_GUARD(push_str(&g->dests, &g->ndests, text));
        if (model_cidr_overlaps_private(c)) {
            PV_GUARD(push_str(&g->private_ips, &g->nprivate, text));
        }
    }
    if (u->v.allow_encoded_slash) {
        PV_GUARD(push_str(&g->flags, &g->nflags, "allow_encoded_slash"));
    }
    return PV_RESULT_OK;
}

static int grant_cmp(const void *pa, const void *pb)
{
    const struct prover_grant *a = pa;
    const struct prover_grant *b = pb;
    int c = strcmp(a->binary, b->binary);

    if (c == 0) {
        c = strcmp(a->host, b->host);
    }
    if (c == 0) {
        unsigned pa0 = a->nports > 0 ? a->ports[0] : 0;
        unsigned pb0 = b->nports > 0 ? b->ports[0] : 0;
        c = pa0 < pb0 ? -1 : pa0 > pb0;
    }
    if (c == 0) {
        c = strcmp(a->rule, b->rule);
    }
    return c;
}

/* Order units by (binary pattern, host pattern); hostless sorts first. */
static int place_cmp(const void *pa, const void *pb)
{
    const struct prover_unit *a = *(const struct prover_unit *const *)pa;
    const struct prover_unit *b = *(const struct prover_unit *const *)pb;
    int c = strcmp(a->bin, b->bin);

    if (c != 0) {
        return c;
    }
    if (a->v.host == NULL || b->v.host == NULL) {
        return (a->v.host != NULL) - (b->v.host != NULL);
    }
    return strcmp(a->v.host, b->v.host);
}

/* The baseline units (in 'base', sorted by place_cmp) with the binary
 * pattern and host pattern of 'u': their first index into *first, their
 * number returned (0: none, the grant is new). */
static size_t same_place(const struct prover_unit *const *base, size_t nbase,
                         const struct prover_unit *u, size_t *first)
{
    const struct prover_unit *const *hit =
        nbase > 0 ? bsearch(&u, base, nbase, sizeof(*base), place_cmp) : NULL;
    size_t lo;
    size_t hi;

    if (hit == NULL) {
        return 0;
    }
    lo = (size_t)(hit - base);
    hi = lo + 1;
    while (lo > 0 && place_cmp(&base[lo - 1], &u) == 0) {
        lo--;
    }
    while (hi < nbase && place_cmp(&base[hi], &u) == 0) {
        hi++;
    }
    *first = lo;
    return hi - lo;
}

/* A changed grant's access lines that no baseline unit of its place (binary
 * and host pattern) has: what its endpoint gained, in the reviewer's words.
 * Lines are compared as text, so a rule rewritten in other words counts as
 * added even where it grants nothing more; the findings say what is new. */
static pv_result fill_added(struct prover_grant *g, const struct prover_unit *const *same,
                            size_t nsame) PV_WUR;
static pv_result fill_added(struct prover_grant *g, const struct prover_unit *const *same,
                            size_t nsame)
{
    struct prover_grant old;
    pv_result r = PV_RESULT_OK;

    memset(&old, 0, sizeof(old));
    for (size_t i = 0; pv_ok(r) && i < nsame; i++) {
        r = fill_access(&old, same[i]);
    }
    for (size_t i = 0; pv_ok(r) && i < g->naccess; i++) {
        bool had = false;
        for (size_t k = 0; !had && k < old.naccess; k++) {
            had = strcmp(g->access[i], old.access[k]) == 0;
        }
        if (!had) {
            r = push_str(&g->added, &g->nadded, g->access[i]);
        }
    }
    grant_clear(&old);
    return r;
}

/* Is 'u' a copy of a candidate delta unit before it (same binary pattern and
 * endpoint fingerprint)? A repeated unit is one grant (#grants). */
static bool is_repeat(const struct prover_units *us, size_t i)
{
    const struct prover_unit *u = &us->u[i];

    for (size_t j = 0; j < i; j++) {
        const struct prover_unit *o = &us->u[j];

        if (o->side == PROVER_SIDE_C && o->delta && o->hash == u->hash && o->fplen == u->fplen &&
            strcmp(o->bin, u->bin) == 0 && memcmp(o->fp, u->fp, u->fplen) == 0) {
            return true;
        }
    }
    return false;
}

pv_result prover_grants_list(const struct model_policy *baseline,
                             const struct model_policy *candidate,
                             const struct model_credset *creds, struct prover_grants *out)
{
    struct prover_units us;
    const struct prover_unit **base = NULL;
    size_t nbase = 0;
    pv_result r;

    memset(out, 0, sizeof(*out));
    memset(&us, 0, sizeof(us));
    PV_ENSURE_REF(candidate);
    r = prover_units_collect(&us, baseline, PROVER_SIDE_B);
    if (pv_ok(r)) {
        r = prover_units_collect(&us, candidate, PROVER_SIDE_C);
    }
    if (pv_ok(r)) {
        prover_units_seal(&us);
        r = prover_units_delta(&us);
    }
    if (pv_ok(r) && us.n > 0) {
        /* The baseline's units by place, for "new" versus "changed". */
        base = pv_calloc(us.n, sizeof(*base));
        r = base != NULL ? PV_RESULT_OK : pv_fail(PV_ERR_NOMEM, "grants");
        for (size_t i = 0; pv_ok(r) && i < us.n; i++) {
            if (us.u[i].side == PROVER_SIDE_B) {
                base[nbase++] = &us.u[i];
            }
        }
        if (nbase > 1) {
            qsort(base, nbase, sizeof(*base), place_cmp);
        }
    }
    for (size_t i = 0; pv_ok(r) && i < us.n; i++) {
        const struct prover_unit *u = &us.u[i];
        struct prover_grant *g;

        if (u->side != PROVER_SIDE_C || !u->delta || is_repeat(&us, i)) {
            continue;
        }
        g = pv_realloc(out->g, (out->n + 1) * sizeof(*out->g));
        if (g == NULL) {
            r = pv_fail(PV_ERR_NOMEM, "grants");
            break;
        }
        out->g = g;
        size_t first = 0;
        size_t nsame = same_place(base, nbase, u, &first);
        r = fill_grant(&out->g[out->n], u, nsame > 0, creds);
        out->n++;
        if (pv_ok(r) && nsame > 0) {
            r = fill_added(&out->g[out->n - 1], base + first, nsame);
        }
    }
    free(base);
    prover_units_free(&us);
    if (!pv_ok(r)) {
        prover_grants_free(out);
        return r;
    }
    if (out->n > 1) {
        qsort(out->g, out->n, sizeof(*out->g), grant_cmp);
    }
    return PV_RESULT_OK;
}

/* ---------------------------------------------------------------------------
 * Output
 * ------------------------------------------------------------------------- */

static json_t *str_array(char *const *v, size_t n)
{
    json_t *a = json_array();

    for (size_t i = 0; a != NULL && i < n; i++) {
        if (json_array_append_new(a, json_string(v[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

struct json_t *prover_grants_json(const struct prover_grants *gs)
{
    json_t *a = json_array();

    for (size_t i = 0; a != NULL && i < gs->n; i++) {
        const struct prover_grant *g = &gs->g[i];
        json_t *ports = json_array();
        json_t *o;

        for (size_t k = 0; ports != NULL && k < g->nports; k++) {
            if (json_array_append_new(ports, json_integer(g->ports[k])) != 0) {
                json_decref(ports);
                ports = NULL;
            }
        }
        o = ports == NULL
                ? NULL
                : json_pack("{s:s,s:s,s:s,s:s,s:o,s:s,s:o*,s:o*,s:o*,s:s*,s:{s:s,s:s,s:s,s:s}}",
                            "change", g->changed ? "changed" : "new", "rule", g->rule, "binary",
                            g->binary, "host", g->host, "ports", ports, "route", g->route, "access",
                            str_array(g->access, g->naccess), "credentials",
                            str_array(g->creds, g->ncreds), "private_destinations",
                            str_array(g->private_ips, g->nprivate), "target_sandbox", g->peer,
                            "breadth", "binary", g->breadth.binary, "host", g->breadth.host,
                            "route", g->breadth.route, "methods", g->breadth.methods);
        /* additive, present only when not empty (docs/api.md) */
        if (o != NULL && g->ndests > 0) {
            json_object_set_new(o, "destinations", str_array(g->dests, g->ndests));
        }
        if (o != NULL && g->nflags > 0) {
            json_object_set_new(o, "flags", str_array(g->flags, g->nflags));
        }
        if (o != NULL && g->nadded > 0) {
            json_object_set_new(o, "added_access", str_array(g->added, g->nadded));
        }
        if (o == NULL || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* ---------------------------------------------------------------------------
 * The reviewer's text, from the JSON (so that every reader - proviso prove,
 * proviso rule get on the advisor's evidence - prints one wording)
 * ------------------------------------------------------------------------- */

static const char *jstr(const json_t *o, const char *key, const char *dflt)
{
    const char *v = json_string_value(json_object_get(o, key));

    return v != NULL ? v : dflt;
}

/* "a, b, c" of an array of strings. */
static void put_list(struct pv_dynbuf *b, const json_t *a, const char *sep)
{
    const json_t *v;
    size_t i;

    json_array_foreach(a, i, v)
    {
        pv_dynbuf_putf(b, "%s%s", i > 0 ? sep : "", json_is_string(v) ? json_string_value(v) : "?");
    }
}

/* A grant's access lines, each one its endpoint gained marked " (added)". */
static void put_access(struct pv_dynbuf *b, const json_t *g)
{
    const json_t *added = json_object_get(g, "added_access");
    const json_t *v;
    size_t i;

    json_array_foreach(json_object_get(g, "access"), i, v)
    {
        const char *s = json_is_string(v) ? json_string_value(v) : "?";
        bool add = false;
        const json_t *w;
        size_t k;

        json_array_foreach(added, k, w)
        {
            add = add || (json_is_string(w) && strcmp(json_string_value(w), s) == 0);
        }
        pv_dynbuf_putf(b, "%s%s%s", i > 0 ? ", " : "", s, add ? " (added)" : "");
    }
}

/* "BINARY -> HOST:PORTS ROUTE" of one grant. */
static void put_place(struct pv_dynbuf *b, const json_t *g)
{
    const json_t *ports = json_object_get(g, "ports");
    const json_t *v;
    size_t i;

    pv_dynbuf_putf(b, "%s -> %s:", jstr(g, "binary", "?"), jstr(g, "host", "*"));
    json_array_foreach(ports, i, v)
    {
        pv_dynbuf_putf(b, "%s%lld", i > 0 ? "," : "", (long long)json_integer_value(v));
    }
    if (json_array_size(ports) == 0) {
        pv_dynbuf_puts(b, "*");
    }
    pv_dynbuf_putf(b, " %s", jstr(g, "route", "?"));
}

/* Glob metacharacters of binary and host patterns. */
static bool has_meta(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\0' || strchr("*?[]{}\\", s[i]) != NULL) {
            return true;
        }
    }
    return false;
}

static void put_binary_words(struct pv_dynbuf *b, const char *bin, const char *mark)
{
    size_t n = strlen(bin);

    if (strcmp(mark, "any") == 0) {
        pv_dynbuf_puts(b, "any binary");
    } else if (n > 3 && strcmp(bin + n - 3, "/**") == 0 && !has_meta(bin, n - 3)) {
        pv_dynbuf_putf(b, "any binary under %.*s", (int)(n - 3), bin);
    } else if (n > 2 && strcmp(bin + n - 2, "/*") == 0 && !has_meta(bin, n - 2)) {
        pv_dynbuf_putf(b, "any binary directly in %.*s", (int)(n - 2), bin);
    } else {
        pv_dynbuf_putf(b, "any binary matching %s", bin);
    }
}

static void put_host_words(struct pv_dynbuf *b, const char *host, const char *mark)
{
    size_t n = strlen(host);

    if (strspn(host, "*.") == n) {
        pv_dynbuf_puts(b, "any host");
    } else if (strcmp(mark, "any-depth") == 0) {
        if (n > 3 && strncmp(host, "**.", 3) == 0 && !has_meta(host + 3, n - 3)) {
            pv_dynbuf_putf(b, "any subdomain of %s at any depth", host + 3);
        } else {
            pv_dynbuf_putf(b, "any host matching %s (** spans labels)", host);
        }
    } else if (n > 2 && strncmp(host, "*.", 2) == 0 && !has_meta(host + 2, n - 2)) {
        pv_dynbuf_putf(b, "any one-label subdomain of %s", host + 2);
    } else {
        pv_dynbuf_putf(b, "any host matching %s (each * within one label)", host);
    }
}

/* How wide one grant is, in words, for the dimensions that are not narrow:
 * a binary pattern, a wildcard host, an opaque or audit route, every
 * method or writes (docs/semantics.md#grant-breadth). Returns false, and
 * writes nothing, for a grant narrow in every dimension. */
static bool put_breadth_words(struct pv_dynbuf *b, const json_t *g)
{
    const json_t *br = json_object_get(g, "breadth");
    const char *bm;
    const char *hm;
    const char *route;
    const char *mm;
    const char *sep = "";

    if (!json_is_object(br)) {
        return false;
    }
    bm = jstr(br, "binary", "exact");
    hm = jstr(br, "host", "exact");
    route = jstr(br, "route", "inspected");
    mm = jstr(br, "methods", "read-only");
    if (strcmp(bm, "exact") == 0 && (strcmp(hm, "exact") == 0 || strcmp(hm, "hostless") == 0) &&
        strcmp(route, "inspected") == 0 && strcmp(mm, "read-only") == 0) {
        return false;
    }
    if (strcmp(bm, "exact") != 0) {
        put_binary_words(b, jstr(g, "binary", "?"), bm);
        sep = ", ";
    }
    if (strcmp(hm, "exact") != 0 && strcmp(hm, "hostless") != 0) {
        pv_dynbuf_puts(b, sep);
        put_host_words(b, jstr(g, "host", "*"), hm);
        sep = ", ";
    }
    if (strcmp(route, "opaque") == 0) {
        pv_dynbuf_putf(b, "%sall traffic, not inspected", sep);
    } else if (strcmp(route, "audit") == 0) {
        pv_dynbuf_putf(b, "%severy request (audit mode: logged, not enforced)", sep);
    } else if (strcmp(mm, "all") == 0) {
        /* in the words of what the unit admits (its access lines) */
        const char *a0 = json_string_value(json_array_get(json_object_get(g, "access"), 0));

        pv_dynbuf_putf(b, "%s%s", sep,
                       a0 != NULL && strncmp(a0, "GraphQL ", 8) == 0 ? "every GraphQL operation"
                       : a0 != NULL && strncmp(a0, "call ", 5) == 0  ? "every call"
                                                                     : "every method");
    } else if (strcmp(mm, "writes") == 0) {
        pv_dynbuf_putf(b, "%swrites", sep);
    }
    return true;
}

/* The words of put_breadth_words as a string (caller frees), or NULL for a
 * grant narrow in every dimension. */
static char *breadth_words(const json_t *g)
{
    struct pv_dynbuf w;

    pv_dynbuf_init(&w, GRANTS_TEXT_MAX);
    if (!put_breadth_words(&w, g)) {
        pv_dynbuf_free(&w);
        return NULL;
    }
    return pv_dynbuf_finish(&w);
}

/* One grant, terraform-plan style:
 *   + /usr/bin/cat -> *.pastebin.com:443 opaque, all traffic  [binary: ..., methods: all]
 *       rule paste; credentials in scope: ...; private destinations: ... */
static void put_grant(struct pv_dynbuf *b, const json_t *g)
{
    const json_t *br = json_object_get(g, "breadth");
    const json_t *creds = json_object_get(g, "credentials");
    const json_t *priv = json_object_get(g, "private_destinations");
    const char *peer = jstr(g, "target_sandbox", NULL);
    char *words;

    pv_dynbuf_putf(b, "%s ", strcmp(jstr(g, "change", "new"), "changed") == 0 ? "~" : "+");
    put_place(b, g);
    if (json_array_size(json_object_get(g, "access")) > 0) {
        pv_dynbuf_puts(b, ", ");
        put_access(b, g);
    }
    if (json_is_object(br)) {
        pv_dynbuf_putf(b, "  [binary: %s, host: %s, route: %s, methods: %s]",
                       jstr(br, "binary", "?"), jstr(br, "host", "?"), jstr(br, "route", "?"),
                       jstr(br, "methods", "?"));
    }
    pv_dynbuf_putf(b, "\n      rule %s", jstr(g, "rule", "-"));
    words = breadth_words(g);
    if (words != NULL) {
        pv_dynbuf_putf(b, "; wide: %s", words);
        free(words);
    }
    if (json_array_size(creds) > 0) {
        pv_dynbuf_puts(b, "; credentials in scope: ");
        put_list(b, creds, ", ");
    }
    if (json_array_size(priv) > 0) {
        pv_dynbuf_puts(b, "; private destinations: ");
        put_list(b, priv, ", ");
    }
    if (peer != NULL) {
        pv_dynbuf_putf(b, "; peer sandbox: %s", peer);
    }
    pv_dynbuf_puts(b, "\n");
}

/* "1 new unit and 2 changed units", "3 units" (a policy on its own), or
 * "no new or changed unit". */
static void put_count(struct pv_dynbuf *b, const json_t *grants, bool policy)
{
    size_t nnew = 0;
    size_t nchanged = 0;
    const json_t *g;
    size_t i;

    json_array_foreach(grants, i, g)
    {
        if (strcmp(jstr(g, "change", "new"), "changed") == 0) {
            nchanged++;
        } else {
            nnew++;
        }
    }
    if (policy) {
        pv_dynbuf_putf(b, "%zu unit%s", nnew + nchanged, nnew + nchanged == 1 ? "" : "s");
    } else if (nnew + nchanged == 0) {
        pv_dynbuf_puts(b, "no new or changed unit");
    } else if (nchanged == 0) {
        pv_dynbuf_putf(b, "%zu new unit%s", nnew, nnew == 1 ? "" : "s");
    } else if (nnew == 0) {
        pv_dynbuf_putf(b, "%zu changed unit%s", nchanged, nchanged == 1 ? "" : "s");
    } else {
        pv_dynbuf_putf(b, "%zu new unit%s and %zu changed unit%s", nnew, nnew == 1 ? "" : "s",
                       nchanged, nchanged == 1 ? "" : "s");
    }
}

/* "prover: no new findings" / "prover: 2 new findings (a, b)" / "prover:
 * undecided (timeout)". */
static void put_verdict(struct pv_dynbuf *b, const json_t *answer)
{
    const char *v = jstr(answer, "verdict", "");
    const json_t *cats = json_object_get(answer, "categories");
    size_t n = json_array_size(cats);

    if (strcmp(v, "empty") == 0) {
        pv_dynbuf_puts(b, "prover: no new findings");
    } else if (strcmp(v, "findings") == 0) {
        pv_dynbuf_putf(b, "prover: %zu new finding%s (", n, n == 1 ? "" : "s");
        put_list(b, cats, ", ");
        pv_dynbuf_puts(b, ")");
    } else if (strcmp(v, "unknown") == 0) {
        pv_dynbuf_putf(b, "prover: undecided (%s), so not approvable automatically",
                       jstr(answer, "reason_code", jstr(answer, "reason", "unknown")));
    } else {
        pv_dynbuf_putf(b, "prover: %s", v[0] != '\0' ? v : "no verdict");
    }
}

static size_t count_wide(const json_t *grants)
{
    size_t wide = 0;
    const json_t *g;
    size_t i;

    json_array_foreach(grants, i, g)
    {
        char *words = breadth_words(g);

        wide += words != NULL ? 1 : 0;
        free(words);
    }
    return wide;
}

char *prover_review_text(const struct json_t *answer, bool policy)
{
    const json_t *grants = json_object_get(answer, "grants");
    size_t n = json_array_size(grants);
    const char *last = NULL;
    size_t shown = 0;
    char *words;
    struct pv_dynbuf b;

    pv_dynbuf_init(&b, GRANTS_TEXT_MAX);
    pv_dynbuf_putf(&b, "This %s grants ", policy ? "policy" : "change");
    put_count(&b, grants, policy);
    if (n == 1) {
        /* one unit: name it in the sentence, and how wide it is */
        pv_dynbuf_puts(&b, ": ");
        put_place(&b, json_array_get(grants, 0));
        words = breadth_words(json_array_get(grants, 0));
        if (words != NULL) {
            pv_dynbuf_putf(&b, ", wide: %s", words);
            free(words);
        }
    } else if (n > 1) {
        size_t wide = count_wide(grants);

        if (wide > 0) {
            pv_dynbuf_putf(&b, " (listed below; %zu of them wide)", wide);
        } else {
            pv_dynbuf_puts(&b, " (listed below)");
        }
    }
    pv_dynbuf_puts(&b, "; ");
    put_verdict(&b, answer);
    pv_dynbuf_puts(&b, ".\n");
    for (size_t i = 0; i < n; i++) {
        const json_t *g = json_array_get(grants, i);
        const char *bin = jstr(g, "binary", "?");

        if (i == 0) {
            pv_dynbuf_puts(&b, "\n");
        }
        if (last == NULL || strcmp(last, bin) != 0) {
            last = bin;
            shown = 0;
        }
        if (shown++ == GRANTS_TEXT_PER_BINARY) {
            /* a whole-policy change: the rest of this binary's units by count */
            size_t more = 1;

            while (i + more < n &&
                   strcmp(jstr(json_array_get(grants, i + more), "binary", "?"), last) == 0) {
                more++;
            }
            pv_dynbuf_putf(&b, "  ... and %zu more for %s (--format json lists them all)\n", more,
                           last);
            i += more - 1;
            continue;
        }
        put_grant(&b, g);
    }
    return pv_dynbuf_finish(&b);
}
