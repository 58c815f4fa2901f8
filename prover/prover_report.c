/* SPDX-License-Identifier: Apache-2.0 */
/* prover_report.c - render a prover result: reference text, JSON, text
 *
 * validation_result keeps the reference's exact strings
 * (docs/reference-compat.md#prover) so a gateway can swap provers:
 * "prover: no new findings" or
 * "prover: N new finding(s)" (N = categories with paths) followed by one
 * "\n  <path>" line per path, categories in report order. The JSON schema is
 * documented in docs/internals/prover.md.
 *
 * A whole-policy change can have thousands of paths in one category. Each
 * category is also summarised by groups of paths that share (binary, port):
 * the JSON carries the groups always and lists at most PROVER_LIST_MAX
 * paths per category (with the total); validation_result prints a
 * category's groups instead of its paths past PROVER_LIST_MAX, and the text
 * report past TEXT_LIST_MAX.
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <z3.h>

#include "common/pv_dynbuf.h"
#include "prover/prover_int.h"

#define REPORT_MAX (64u << 20)
/* Paths listed per category in the JSON and validation_result. */
#define PROVER_LIST_MAX 1000u
/* Places (binary, host, port) listed per category in the text report. */
#define TEXT_LIST_MAX 50u
/* Example hosts named per group. */
#define GROUP_EXAMPLES 3u

/* ---------------------------------------------------------------------------
 * Groups: the paths of one category that share (binary, port)
 * ------------------------------------------------------------------------- */

struct pgroup {
    const char *binary;
    uint16_t port;
    size_t npaths;
    size_t nhosts; /* distinct host patterns */
    const char *ex[GROUP_EXAMPLES];
    size_t nex;
};

struct pgroups {
    struct pgroup *g;
    size_t n;
    size_t npaths; /* paths of the category */
};

static int by_place(const void *pa, const void *pb)
{
    const struct prover_path *a = *(const struct prover_path *const *)pa;
    const struct prover_path *b = *(const struct prover_path *const *)pb;
    int c = strcmp(a->binary, b->binary);

    if (c != 0) {
        return c;
    }
    if (a->port != b->port) {
        return a->port < b->port ? -1 : 1;
    }
    return strcmp(a->host, b->host);
}

/* The groups of category 'cat', in (binary, port) order. */
static pv_result groups_of(const struct prover_result *r, int cat, struct pgroups *out) PV_WUR;
static pv_result groups_of(const struct prover_result *r, int cat, struct pgroups *out)
{
    const struct prover_path **ix;
    size_t n = 0;

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < r->npaths; i++) {
        n += (int)r->paths[i].cat == cat;
    }
    out->npaths = n;
    if (n == 0) {
        return PV_RESULT_OK;
    }
    ix = pv_malloc(n * sizeof(*ix));
    out->g = pv_calloc(n, sizeof(*out->g));
    if (ix == NULL || out->g == NULL) {
        free(ix);
        free(out->g);
        out->g = NULL;
        PV_BAIL(PV_ERR_NOMEM);
    }
    n = 0;
    for (size_t i = 0; i < r->npaths; i++) {
        if ((int)r->paths[i].cat == cat) {
            ix[n++] = &r->paths[i];
        }
    }
    qsort(ix, n, sizeof(*ix), by_place);
    for (size_t i = 0; i < n; i++) {
        struct pgroup *g = out->n > 0 ? &out->g[out->n - 1] : NULL;
        bool newhost;

        if (g == NULL || g->port != ix[i]->port || strcmp(g->binary, ix[i]->binary) != 0) {
            g = &out->g[out->n++];
            g->binary = ix[i]->binary;
            g->port = ix[i]->port;
        }
        newhost = g->npaths == 0 || strcmp(ix[i - 1]->host, ix[i]->host) != 0;
        g->npaths++;
        if (newhost) {
            g->nhosts++;
            if (g->nex < GROUP_EXAMPLES) {
                g->ex[g->nex++] = ix[i]->host;
            }
        }
    }
    free(ix);
    return PV_RESULT_OK;
}

/* "<cat>: N paths via <binary> on port P (K hosts: a, b, c, ...)" */
static pv_result group_line(struct pv_dynbuf *b, int cat, const struct pgroup *g) PV_WUR;
static pv_result group_line(struct pv_dynbuf *b, int cat, const struct pgroup *g)
{
    PV_GUARD(pv_dynbuf_printf(b, "%s: %zu path%s via %s on port %u (%zu host%s: ",
                              prover_category_name((enum prover_category)cat), g->npaths,
                              g->npaths == 1 ? "" : "s", g->binary, (unsigned)g->port, g->nhosts,
                              g->nhosts == 1 ? "" : "s"));
    for (size_t e = 0; e < g->nex; e++) {
        PV_GUARD(pv_dynbuf_printf(b, "%s%s", e ? ", " : "", g->ex[e]));
    }
    return pv_dynbuf_addstr(b, g->nhosts > g->nex ? ", ...)" : ")");
}

static pv_result shorthand(struct pv_dynbuf *b, const struct prover_path *p) PV_WUR;
static pv_result shorthand(struct pv_dynbuf *b, const struct prover_path *p)
{
    if (p->cat == PROVER_CAT_CAPABILITY) {
        return pv_dynbuf_printf(b, "%s: %s on %s:%u via %s", prover_category_name(p->cat),
                                p->method != NULL ? p->method : "", p->host, (unsigned)p->port,
                                p->binary);
    }
    return pv_dynbuf_printf(b, "%s: %s:%u via %s", prover_category_name(p->cat), p->host,
                            (unsigned)p->port, p->binary);
}

char *prover_path_shorthand(const struct prover_path *p)
{
    struct pv_dynbuf b;

    pv_dynbuf_init(&b, REPORT_MAX);
    if (!pv_ok(shorthand(&b, p))) {
        pv_dynbuf_free(&b);
        return NULL;
    }
    return pv_dynbuf_take(&b, NULL);
}

static pv_result validation(struct pv_dynbuf *b, const struct prover_result *r) PV_WUR;
static pv_result validation(struct pv_dynbuf *b, const struct prover_result *r)
{
    size_t n;

    switch (r->verdict) {
    case PROVER_VERDICT_UNKNOWN:
        return pv_dynbuf_printf(b, "prover: unknown (%s)", prover_unknown_text(r->unknown));
    case PROVER_VERDICT_WITHIN:
        return pv_dynbuf_addstr(b, "check: within boundary");
    case PROVER_VERDICT_EXCEEDS:
        PV_GUARD(pv_dynbuf_addstr(b, "check: exceeds boundary"));
        break;
    case PROVER_VERDICT_EMPTY:
    case PROVER_VERDICT_FINDINGS:
        n = prover_result_ncategories(r);
        if (n == 0) {
            return pv_dynbuf_addstr(b, "prover: no new findings");
        }
        PV_GUARD(pv_dynbuf_printf(b, "prover: %zu new finding%s", n, n == 1 ? "" : "s"));
        break;
    }
    for (size_t i = 0; i < r->npaths;) {
        int cat = (int)r->paths[i].cat;
        size_t j = i;

        while (j < r->npaths && (int)r->paths[j].cat == cat) {
            j++;
        }
        if (j - i <= PROVER_LIST_MAX) {
            for (; i < j; i++) {
                PV_GUARD(pv_dynbuf_addstr(b, "\n  "));
                PV_GUARD(shorthand(b, &r->paths[i]));
            }
            continue;
        }
        {
            struct pgroups gs;
            pv_result rr = groups_of(r, cat, &gs);

            for (size_t g = 0; pv_ok(rr) && g < gs.n; g++) {
                rr = pv_dynbuf_addstr(b, "\n  ");
                if (pv_ok(rr)) {
                    rr = group_line(b, cat, &gs.g[g]);
                }
            }
            free(gs.g);
            PV_GUARD(rr);
        }
        i = j;
    }
    return PV_RESULT_OK;
}

char *prover_validation_result(const struct prover_result *r)
{
    struct pv_dynbuf b;

    pv_dynbuf_init(&b, REPORT_MAX);
    if (!pv_ok(validation(&b, r)) || !pv_ok(pv_dynbuf_addstr(&b, ""))) {
        pv_dynbuf_free(&b);
        return NULL;
    }
    return pv_dynbuf_take(&b, NULL);
}

/* ---------------------------------------------------------------------------
 * JSON
 * ------------------------------------------------------------------------- */

static json_t *str_or_null(const char *s)
{
    return s != NULL ? json_string(s) : json_null();
}

static bool witness_has_gql(const struct prover_witness *w)
{
    return w->gql_type != NULL || w->gql_persisted != NULL;
}

/* The witness's GraphQL operation (docs/internals/prover.md#witness):
 * {"persisted_id"} or {"operation_type", "operation_name", "fields"}; NULL
 * on NOMEM (which fails the caller's set). */
static json_t *gql_json(const struct prover_witness *w)
{
    json_t *o = json_object();
    json_t *f = json_array();
    bool ok = o != NULL && f != NULL;

    if (ok && w->gql_persisted != NULL) {
        json_decref(f);
        if (json_object_set_new(o, "persisted_id", json_string(w->gql_persisted)) != 0) {
            json_decref(o);
            return NULL;
        }
        return o;
    }
    for (size_t i = 0; ok && i < w->ngql_fields; i++) {
        ok = json_array_append_new(f, json_string(w->gql_fields[i])) == 0;
    }
    ok = ok && json_object_set_new(o, "operation_type", json_string(w->gql_type)) == 0 &&
         json_object_set_new(o, "operation_name", str_or_null(w->gql_name)) == 0;
    if (!ok) {
        json_decref(f);
        json_decref(o);
        return NULL;
    }
    /* json_object_set_new steals 'f', also when it fails */
    if (json_object_set_new(o, "fields", f) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The witness's call (docs/internals/prover.md#witness): {"kind",
 * "method", "tool"}; NULL on NOMEM (which fails the caller's set). */
static json_t *rpc_json(const struct prover_witness *w)
{
    json_t *o = json_object();

    if (o == NULL || json_object_set_new(o, "kind", str_or_null(w->rpc_kind)) != 0 ||
        json_object_set_new(o, "method", str_or_null(w->rpc_method)) != 0 ||
        json_object_set_new(o, "tool", str_or_null(w->rpc_tool)) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *witness_json(const struct prover_witness *w)
{
    json_t *o = json_object();

    if (o == NULL) {
        return NULL;
    }
    if (json_object_set_new(o, "binary", str_or_null(w->binary)) != 0 ||
        json_object_set_new(o, "host", str_or_null(w->host)) != 0 ||
        json_object_set_new(o, "port", json_integer(w->port)) != 0 ||
        json_object_set_new(o, "method", str_or_null(w->method)) != 0 ||
        json_object_set_new(o, "path", str_or_null(w->path)) != 0 ||
        json_object_set_new(o, "query", str_or_null(w->query)) != 0 ||
        json_object_set_new(o, "ip", str_or_null(w->ip)) != 0 ||
        json_object_set_new(o, "api", str_or_null(w->api)) != 0 ||
        json_object_set_new(o, "action", str_or_null(w->action)) != 0 ||
        json_object_set_new(o, "risk", str_or_null(w->risk)) != 0 ||
        (witness_has_gql(w) && json_object_set_new(o, "graphql", gql_json(w)) != 0) ||
        (w->rpc_method != NULL && json_object_set_new(o, "rpc", rpc_json(w)) != 0)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *path_json(const struct prover_path *p)
{
    json_t *o = json_object();
    json_t *creds = json_array();
    bool ok = o != NULL && creds != NULL;

    for (size_t i = 0; ok && i < p->ncreds; i++) {
        ok = json_array_append_new(creds, json_string(p->creds[i])) == 0;
    }
    ok = ok && json_object_set_new(o, "binary", json_string(p->binary)) == 0 &&
         json_object_set_new(o, "host", json_string(p->host)) == 0 &&
         json_object_set_new(o, "port", json_integer(p->port)) == 0;
    if (ok && p->method != NULL) {
        ok = json_object_set_new(o, "method", json_string(p->method)) == 0;
    }
    ok = ok && json_object_set_new(o, "rule", str_or_null(p->rule)) == 0 &&
         json_object_set_new(
             o, "route", json_string(p->route == MODEL_ROUTE_OPAQUE ? "opaque" : "inspected")) == 0;
    if (ok) {
        ok = json_object_set(o, "credentials", creds) == 0;
    }
    json_decref(creds);
    ok = ok && json_object_set_new(o, "witness", witness_json(&p->w)) == 0;
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* [{"binary", "port", "paths", "hosts", "examples": [...]}] of a category. */
static json_t *groups_json(const struct prover_result *r, int cat)
{
    struct pgroups gs;
    json_t *a;
    bool ok;

    if (!pv_ok(groups_of(r, cat, &gs))) {
        return NULL;
    }
    a = json_array();
    ok = a != NULL;
    for (size_t g = 0; ok && g < gs.n; g++) {
        json_t *ex = json_array();
        json_t *o;

        for (size_t e = 0; ex != NULL && e < gs.g[g].nex; e++) {
            if (json_array_append_new(ex, json_string(gs.g[g].ex[e])) != 0) {
                json_decref(ex);
                ex = NULL;
            }
        }
        o = ex != NULL ? json_pack("{s:s,s:i,s:I,s:I,s:o}", "binary", gs.g[g].binary, "port",
                                   (int)gs.g[g].port, "paths", (json_int_t)gs.g[g].npaths, "hosts",
                                   (json_int_t)gs.g[g].nhosts, "examples", ex)
                       : NULL;
        ok = o != NULL && json_array_append_new(a, o) == 0;
    }
    free(gs.g);
    if (!ok) {
        json_decref(a);
        return NULL;
    }
    return a;
}

static json_t *result_json(const struct prover_result *r)
{
    json_t *o = json_object();
    json_t *cats = json_array();
    json_t *finds = json_array();
    char *vr = prover_validation_result(r);
    char ver[128];
    bool ok = o != NULL && cats != NULL && finds != NULL && vr != NULL;
    unsigned maj = 0, min = 0, bld = 0, rev = 0;

    for (int c = 0; ok && c < PROVER_CAT__COUNT; c++) {
        json_t *f = NULL;
        json_t *paths = NULL;
        size_t listed = 0;

        for (size_t i = 0; ok && i < r->npaths; i++) {
            if ((int)r->paths[i].cat != c) {
                continue;
            }
            if (f == NULL) {
                f = json_object();
                paths = json_array();
                ok = f != NULL && paths != NULL &&
                     json_object_set_new(
                         f, "category",
                         json_string(prover_category_name((enum prover_category)c))) == 0 &&
                     json_array_append_new(
                         cats, json_string(prover_category_name((enum prover_category)c))) == 0;
            }
            if (listed++ < PROVER_LIST_MAX) {
                ok = ok && json_array_append_new(paths, path_json(&r->paths[i])) == 0;
            }
        }
        if (f != NULL) {
            json_t *gj = groups_json(r, c);

            ok = ok && gj != NULL && json_object_set(f, "paths", paths) == 0 &&
                 json_object_set_new(f, "paths_total", json_integer((json_int_t)listed)) == 0 &&
                 json_object_set(f, "groups", gj) == 0 && json_array_append(finds, f) == 0;
            json_decref(gj);
        }
        json_decref(f);
        json_decref(paths);
    }
    Z3_get_version(&maj, &min, &bld, &rev);
    (void)snprintf(ver, sizeof(ver), "proviso-prover %s (z3 %u.%u.%u)", PACKAGE_VERSION, maj, min,
                   bld);
    ok = ok && json_object_set_new(o, "verdict", json_string(prover_verdict_name(r->verdict))) == 0;
    if (ok && r->verdict == PROVER_VERDICT_UNKNOWN) {
        ok = json_object_set_new(o, "reason", json_string(prover_unknown_text(r->unknown))) == 0 &&
             json_object_set_new(o, "reason_code", json_string(prover_unknown_code(r->unknown))) ==
                 0 &&
             json_object_set_new(o, "hint", json_string(prover_unknown_hint(r->unknown))) == 0;
    }
    ok = ok && json_object_set(o, "categories", cats) == 0 &&
         json_object_set(o, "findings", finds) == 0 &&
         json_object_set_new(o, "validation_result", json_string(vr)) == 0 &&
         json_object_set_new(o, "prover_version", json_string(ver)) == 0 &&
         json_object_set_new(o, "inputs_sha256", json_string(r->inputs_sha256)) == 0 &&
         json_object_set_new(o, "elapsed_ms", json_integer((json_int_t)(r->elapsed_ms + 0.5))) == 0;
    json_decref(cats);
    json_decref(finds);
    free(vr);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

struct json_t *prover_result_to_json(const struct prover_result *r)
{
    return result_json(r);
}

struct json_t *prover_invalid_json(const char *error, const char *detail)
{
    json_t *o = json_object();

    if (o == NULL) {
        return NULL;
    }
    if (json_object_set_new(o, "verdict", json_string("invalid")) != 0 ||
        json_object_set_new(o, "error", json_string(error != NULL ? error : "invalid")) != 0 ||
        json_object_set_new(o, "detail", json_string(detail != NULL ? detail : "")) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ---------------------------------------------------------------------------
 * Text
 * ------------------------------------------------------------------------- */

/* Do two paths share (category, binary, host, port)? */
static bool same_place(const struct prover_path *a, const struct prover_path *b)
{
    return a->cat == b->cat && a->port == b->port && strcmp(a->binary, b->binary) == 0 &&
           strcmp(a->host, b->host) == 0;
}

/* "capability_expansion: GET, HEAD on h:443 via /b" for the run of paths
 * from 'i' that share a place; other categories as prover_path_shorthand. */
static pv_result place(struct pv_dynbuf *b, const struct prover_result *r, size_t i) PV_WUR;
static pv_result place(struct pv_dynbuf *b, const struct prover_result *r, size_t i)
{
    const struct prover_path *p = &r->paths[i];

    if (p->method == NULL) {
        return shorthand(b, p);
    }
    PV_GUARD(pv_dynbuf_printf(b, "%s: ", prover_category_name(p->cat)));
    for (size_t j = i; j < r->npaths && same_place(p, &r->paths[j]); j++) {
        if (r->paths[j].method != NULL) {
            PV_GUARD(pv_dynbuf_printf(b, "%s%s", j > i ? ", " : "", r->paths[j].method));
        }
    }
    return pv_dynbuf_printf(b, " on %s:%u via %s", p->host, (unsigned)p->port, p->binary);
}

/* A category of many paths in the text report: one line per group. */
static pv_result text_groups(struct pv_dynbuf *b, const struct prover_result *r, int cat,
                             size_t npaths) PV_WUR;
static pv_result text_groups(struct pv_dynbuf *b, const struct prover_result *r, int cat,
                             size_t npaths)
{
    struct pgroups gs;
    pv_result rr;

    PV_GUARD(groups_of(r, cat, &gs));
    rr = pv_dynbuf_printf(b,
                          "  %zu paths in %zu groups (--format json lists the first %u with "
                          "their witnesses)\n",
                          npaths, gs.n, PROVER_LIST_MAX);
    for (size_t g = 0; pv_ok(rr) && g < gs.n; g++) {
        rr = pv_dynbuf_addstr(b, "  ");
        if (pv_ok(rr)) {
            rr = group_line(b, cat, &gs.g[g]);
        }
        if (pv_ok(rr)) {
            rr = pv_dynbuf_addstr(b, "\n");
        }
    }
    free(gs.g);
    return rr;
}

static pv_result text(struct pv_dynbuf *b, const struct prover_result *r) PV_WUR;
static pv_result text(struct pv_dynbuf *b, const struct prover_result *r)
{
    int last = -1;

    PV_GUARD(pv_dynbuf_printf(b, "verdict: %s", prover_verdict_name(r->verdict)));
    if (r->verdict == PROVER_VERDICT_UNKNOWN) {
        PV_GUARD(pv_dynbuf_printf(b, " (%s)\n  what to do: %s", prover_unknown_text(r->unknown),
                                  prover_unknown_hint(r->unknown)));
    }
    /* "finding" counts categories, as validation_result and the JSON
     * "findings" array do; each has one or more paths. */
    PV_GUARD(pv_dynbuf_printf(
        b, "\n%zu finding%s (categories), %zu path%s\n", prover_result_ncategories(r),
        prover_result_ncategories(r) == 1 ? "" : "s", r->npaths, r->npaths == 1 ? "" : "s"));
    for (size_t i = 0; i < r->npaths; i++) {
        const struct prover_path *p = &r->paths[i];
        const struct prover_witness *w = &p->w;

        if ((int)p->cat != last) {
            size_t places = 0;
            size_t j = i;

            PV_GUARD(pv_dynbuf_printf(b, "\n%s\n", prover_category_name(p->cat)));
            last = (int)p->cat;
            for (; j < r->npaths && r->paths[j].cat == p->cat; j++) {
                places += j == i || !same_place(&r->paths[j - 1], &r->paths[j]);
            }
            if (places > TEXT_LIST_MAX) {
                /* too many to read one by one: the groups, then on */
                PV_GUARD(text_groups(b, r, (int)p->cat, j - i));
                i = j - 1;
                continue;
            }
        }
        if (i == 0 || !same_place(&r->paths[i - 1], p)) {
            /* One header per (category, binary, host, port): its methods. */
            PV_GUARD(pv_dynbuf_addstr(b, "  "));
            PV_GUARD(place(b, r, i));
            PV_GUARD(pv_dynbuf_printf(b, "\n    rule %s, route %s", p->rule ? p->rule : "-",
                                      p->route == MODEL_ROUTE_OPAQUE ? "opaque" : "inspected"));
            if (p->ncreds > 0) {
                PV_GUARD(pv_dynbuf_addstr(b, ", credentials"));
                for (size_t c = 0; c < p->ncreds; c++) {
                    PV_GUARD(pv_dynbuf_printf(b, "%s %s", c ? "," : "", p->creds[c]));
                }
            }
            PV_GUARD(pv_dynbuf_addstr(b, "\n"));
        }
        PV_GUARD(pv_dynbuf_printf(
            b, "    witness: %s %s:%u %s%s%s by %s to %s%s\n", w->method, w->host,
            (unsigned)w->port, w->path, w->query[0] ? "?" : "", w->query, w->binary, w->ip,
            strcmp(w->ip, PROVER_PLACEHOLDER_IP) == 0 && strcmp(w->ip, w->host) != 0
                ? " (placeholder: any public address of the host "
                  "shows the same)"
                : ""));
        if (w->gql_persisted != NULL) {
            PV_GUARD(pv_dynbuf_printf(b, "    graphql: persisted query '%s'\n", w->gql_persisted));
        } else if (w->gql_type != NULL) {
            PV_GUARD(pv_dynbuf_printf(b, "    graphql: %s %s {", w->gql_type,
                                      w->gql_name != NULL ? w->gql_name : "(anonymous)"));
            for (size_t f = 0; f < w->ngql_fields; f++) {
                PV_GUARD(pv_dynbuf_printf(b, "%s%s", f ? ", " : "", w->gql_fields[f]));
            }
            PV_GUARD(pv_dynbuf_addstr(b, "}\n"));
        }
        if (w->rpc_method != NULL) {
            /* the call as a reviewer reads it: POST /mcp tools/call create_issue */
            PV_GUARD(pv_dynbuf_printf(b, "    call: %s %s %s%s%s (%s)\n", w->method, w->path,
                                      w->rpc_method, w->rpc_tool != NULL ? " " : "",
                                      w->rpc_tool != NULL ? w->rpc_tool : "",
                                      w->rpc_kind != NULL ? w->rpc_kind : "-"));
        }
        if (w->action != NULL) {
            PV_GUARD(pv_dynbuf_printf(b, "    api %s action %s risk %s\n", w->api ? w->api : "-",
                                      w->action, w->risk ? w->risk : "-"));
        }
    }
    PV_GUARD(pv_dynbuf_printf(
        b, "\ninputs %s, %.1f ms, %zu solver quer%s, %zu unit%s in the delta, %zu part%s\n",
        r->inputs_sha256, r->elapsed_ms, r->nqueries, r->nqueries == 1 ? "y" : "ies", r->ndelta,
        r->ndelta == 1 ? "" : "s", r->ncomponents, r->ncomponents == 1 ? "" : "s"));
    return PV_RESULT_OK;
}

char *prover_result_text(const struct prover_result *r)
{
    struct pv_dynbuf b;

    pv_dynbuf_init(&b, REPORT_MAX);
    if (!pv_ok(text(&b, r))) {
        pv_dynbuf_free(&b);
        return NULL;
    }
    return pv_dynbuf_take(&b, NULL);
}
