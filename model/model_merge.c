/* SPDX-License-Identifier: Apache-2.0 */
/* model_merge.c - the AddRule merge of a policy.local proposal
 *
 * model_policy_merge() applies the addRule operations of a proposal
 * (model_proposal.c) to an uncompiled deep copy (model_copy.c) of the base
 * policy following the reference merge (docs/semantics.md#merge,
 * docs/reference-compat.md#merge), then validates and compiles the result.
 * The base is never modified, and a failed merge leaves nothing behind.
 *
 * Invariants: objects the merge moves from a proposal into a policy lose their marks
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

/* The marks that are value members (no row in a field table), by hand. */
static void value_marks_unmark(const struct model_ftable *t, unsigned char *obj)
{
    if (t == &model_endpoint_table) {
        struct model_endpoint *e = (struct model_endpoint *)(void *)obj;
        e->port_mark = no_mark;
        e->mark = no_mark;
    } else if (t == &model_l7rule_table) {
        ((struct model_l7rule *)(void *)obj)->mark = no_mark;
    } else if (t == &model_binary_table) {
        ((struct model_binary *)(void *)obj)->mark = no_mark;
    } else if (t == &model_rule_table) {
        struct model_rule *r = (struct model_rule *)(void *)obj;
        r->key_mark = no_mark;
        r->mark = no_mark;
    }
}

/* Forget the marks of every string, list and nested source object of the
 * struct at 'obj' by its field table (model_int.h), then its own marks. */
static void fields_unmark(const struct model_ftable *t, unsigned char *obj)
{
    for (size_t i = 0; i < t->nrows; i++) {
        const struct model_fdesc *f = &t->rows[i];
        const struct model_ftable *et =
            model_fkind_compiled(f->kind) ? NULL : model_felem_table(f->kind);
        size_t n = 0;

        if (f->kind == MODEL_FK_SVAL) {
            sval_unmark((struct model_sval *)(void *)(obj + f->off));
        } else if (f->kind == MODEL_FK_STRLIST) {
            strlist_unmark((struct model_strlist *)(void *)(obj + f->off));
        }
        if (et == NULL) {
            continue;
        }
        memcpy(&n, obj + f->count_off, sizeof(n));
        for (size_t k = 0; k < n; k++) {
            fields_unmark(et, *(unsigned char **)(void *)(obj + f->off) + k * et->size);
        }
    }
    value_marks_unmark(t, obj);
}

static void l7rule_unmark(struct model_l7rule *r)
{
    fields_unmark(&model_l7rule_table, (unsigned char *)r);
}

static void endpoint_unmark(struct model_endpoint *e)
{
    fields_unmark(&model_endpoint_table, (unsigned char *)e);
}

static void rule_unmark(struct model_rule *r)
{
    fields_unmark(&model_rule_table, (unsigned char *)r);
}

/* ===========================================================================
 * Endpoint overlap
 * ========================================================================= */

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
    PV_GUARD(model_sval_copy(&tmp, src));
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
    res = model_l7rule_copy(&nv[*n], r);
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

/* Append the GraphQL rule {operation_type: T} (docs/semantics.md#graphql-presets). */
static pv_result l7rules_append_optype(struct model_l7rule **v, size_t *n, const char *optype)
{
    struct model_l7rule *nv = pv_realloc(*v, (*n + 1) * sizeof(nv[0]));

    PV_GUARD_PTR(nv);
    *v = nv;
    memset(&nv[*n], 0, sizeof(nv[*n]));
    nv[*n].operation_type.s = pv_strdup(optype);
    PV_GUARD_PTR(nv[*n].operation_type.s);
    (*n)++;
    return PV_RESULT_OK;
}

/*= docs/semantics.md#graphql-presets
 *# **Presets** on an enforced `graphql` endpoint expand into GraphQL rules */
static const char *const *preset_optypes(const struct model_endpoint *e)
{
    static const char *const ro[] = {"query", NULL};
    static const char *const rw[] = {"query", "mutation", NULL};
    static const char *const full[] = {"*", NULL};
    /*= docs/semantics.md#graphql-ws-rules
     *# An access preset on a websocket endpoint expands into its method rules
     *# only, also beside GraphQL deny rules */
    if (!str_ieq(e->protocol.s, "graphql")) {
        return NULL;
    }
    if (str_ieq(e->access.s, "full")) {
        return full;
    }
    if (str_ieq(e->access.s, "read-only")) {
        return ro;
    }
    if (str_ieq(e->access.s, "read-write")) {
        return rw;
    }
    return NULL;
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

    if (str_ieq(e->protocol.s, "graphql")) {
        return NULL; /* operation types only (preset_optypes) */
    }
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
    const char *const *optypes = preset_optypes(e);

    if (methods == NULL && optypes == NULL) {
        return PV_RESULT_OK;
    }
    /* access and rules are mutually exclusive (validated), so the
     * endpoint has no rules yet and nothing can duplicate. */
    for (size_t i = 0; methods != NULL && methods[i] != NULL; i++) {
        PV_GUARD(l7rules_append_method(&e->rules, &e->nrules, methods[i]));
    }
    for (size_t i = 0; optypes != NULL && optypes[i] != NULL; i++) {
        PV_GUARD(l7rules_append_optype(&e->rules, &e->nrules, optypes[i]));
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
            if (!model_l7rules_contain(e->rules, e->nrules, &in->rules[i])) {
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
        if (!model_l7rules_contain(e->deny_rules, e->ndeny, &in->deny_rules[i])) {
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
        PV_GUARD(model_sval_copy(&nv[e->allowed_ips.n], &in->allowed_ips.v[i]));
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
        PV_GUARD(model_sval_copy(&nv[r->nbinaries].path, &in->binaries[i].path));
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
        if (model_key_is_provider(r->key)) {
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
                          const struct model_proposal_op *op, bool mark_advisor,
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
        r = model_strlist_copy(&p->fs_read_only, &b->fs_read_only);
    }
    if (pv_ok(r)) {
        r = model_strlist_copy(&p->fs_read_write, &b->fs_read_write);
    }
    if (pv_ok(r)) {
        r = model_sval_copy(&p->landlock_compat, &b->landlock_compat);
    }
    if (pv_ok(r)) {
        r = model_sval_copy(&p->run_as_user, &b->run_as_user);
    }
    if (pv_ok(r)) {
        r = model_sval_copy(&p->run_as_group, &b->run_as_group);
    }
    if (pv_ok(r) && b->middlewares != NULL) {
        p->middlewares = json_deep_copy(b->middlewares);
        if (p->middlewares == NULL) {
            r = pv_fail(PV_ERR_NOMEM, __func__);
        }
    }
    if (pv_ok(r) && b->nmw > 0) {
        p->mw = pv_calloc(b->nmw, sizeof(p->mw[0]));
        if (p->mw == NULL) {
            r = pv_fail(PV_ERR_NOMEM, __func__);
        } else {
            p->nmw = b->nmw;
        }
        for (size_t i = 0; i < p->nmw && pv_ok(r); i++) {
            p->mw[i] = b->mw[i];
            p->mw[i].name = b->mw[i].name != NULL ? pv_strdup(b->mw[i].name) : NULL;
            if (b->mw[i].name != NULL && p->mw[i].name == NULL) {
                r = pv_fail(PV_ERR_NOMEM, __func__);
            }
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
