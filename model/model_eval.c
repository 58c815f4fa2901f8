/* SPDX-License-Identifier: Apache-2.0 */
/* model_eval.c - the concrete evaluator: decide one request
 *
 * model_decide() applies docs/semantics.md clause by clause to the
 * candidates that the index (model_index.c) gives for the request's host
 * and port only; model_policy_compile() (model_compile.c) prepared the
 * policy.
 *
 * Invariants: model_decide() is pure (no I/O, no allocation, no global
 * state) and fails closed: its output starts as a deny and becomes an allow
 * only where every clause held. Candidates live in fixed-size stack arrays;
 * when a request has more candidates than fit, evaluation switches to a scan
 * of every endpoint, slower but over exactly the same units. Requests carry
 * at most MODEL_MAX_IDENTITY binaries, one bit each in a per-candidate mask.
 *
 * The L7 matching is in model_eval_l7.c, the names and the detail text in
 * model_eval_detail.c; model_eval.h holds the state they share.
 */
#include "config.h"

#include <string.h>

#include "common/pv_text.h"
#include "model/model_graphql.h"
#include "model/model_eval.h"

/* --- hosts ---------------------------------------------------------------- */

/*= docs/semantics.md#host-dns
 *# labels of `[a-z0-9_-]`, separated by single dots, no empty label, at most
 *# 253 bytes, and its last label starts with a letter */
static bool dns_name_ok(const char *h, size_t len)
{
    size_t label = 0;

    if (len == 0 || len > 253) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        char ch = h[i];
        if (ch == '.') {
            if (i == label) {
                return false;
            }
            label = i + 1;
        } else if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' ||
                     ch == '-')) {
            return false;
        }
    }
    return label < len && h[label] >= 'a' && h[label] <= 'z';
}

/* Does endpoint 'e' list 'port'? Its ports are sorted and unique. */
static bool ep_port_in(const struct model_endpoint *e, uint16_t port)
{
    size_t lo = 0;
    size_t hi = e->nports;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->ports[mid] == port) {
            return true;
        }
        if (e->ports[mid] < port) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return false;
}

static bool port_in(const struct ix_ep *x, uint16_t port)
{
    if (x->nports > 0) {
        for (size_t i = 0; i < x->nports; i++) {
            if (x->ports[i] == port) {
                return true;
            }
        }
        return false;
    }
    return ep_port_in(x->ep, port);
}

/* The normalised request host: what every host test reads. */
struct ev_host {
    const char *s;
    size_t len;
    bool is_ip;
    bool ll; /* link-local (docs/semantics.md#link-local) */
    const struct model_ip *ip;
};

/* Does endpoint 'e' of kind 'kind' match the normalised host 'h' (ports
 * aside)? The one host test: model_decide's candidates and
 * model_endpoint_matches_host both ask it. */
static bool ep_host_matches(const struct model_endpoint *e, enum ix_host_kind kind,
                            const struct ev_host *h)
{
    switch (kind) {
    case IXH_NONE:
        return false;
    case IXH_HOSTLESS:
        /*= docs/semantics.md#hostless
         *# An endpoint with an empty host and a non-empty `allowed_ips` is
         *# *hostless* and matches every host on its ports except the
         *# link-local hosts (#link-local). */
        return !h->ll;
    case IXH_IP:
        return h->is_ip && memcmp(e->host_ip.b, h->ip->b, 16) == 0;
    case IXH_EXACT:
        return !h->is_ip && strlen(e->host.s) == h->len && memcmp(e->host.s, h->s, h->len) == 0;
    case IXH_WILD:
        /*= docs/semantics.md#host-pattern
         *# **Wildcard patterns match DNS names only, never IP hosts.** */
        return !h->is_ip && e->host_glob != NULL && model_glob_match(e->host_glob, h->s, h->len);
    }
    return false;
}

/* Does endpoint x match the normalised request host (ports aside)? */
static bool host_matches(const struct eval_ctx *c, const struct ix_ep *x)
{
    const struct ev_host h = {c->host, c->host_len, c->host_is_ip, c->host_ll, &c->host_ip};

    return ep_host_matches(x->ep, (enum ix_host_kind)x->host_kind, &h);
}

static void add_cand(struct eval_ctx *c, uint32_t epi)
{
    if (!port_in(&c->ix->eps[epi], c->req->port)) {
        return;
    }
    if (c->ncands == EVAL_MAX_CANDS) {
        c->scan = true;
        return;
    }
    c->cands[c->ncands++] = epi;
}

static void add_slot(struct eval_ctx *c, const struct ix_slot *s, bool glob)
{
    if (s == NULL) {
        return;
    }
    for (uint32_t i = 0; i < s->count; i++) {
        uint32_t epi = c->ix->members[s->first + i];
        if (glob && !host_matches(c, &c->ix->eps[epi])) {
            continue;
        }
        add_cand(c, epi);
    }
}

/* Collect the (rule, endpoint) pairs matching host:port, sorted by rule. */
static void collect(struct eval_ctx *c)
{
    const struct model_index *ix = c->ix;

    c->ncands = 0;
    c->scan = false;
    if (c->host_is_ip) {
        add_slot(c, model_ix_lookup(ix, IXT_IP, (const char *)c->host_ip.b, 16), false);
    } else {
        unsigned labels = model_label_bit(c->host, c->host_len);
        add_slot(c, model_ix_lookup(ix, IXT_DNS, c->host, c->host_len), false);
        /* Walk the label suffixes; look up only label counts that some
         * wildcard bucket has (counts of 63 and more share bit 63). */
        for (size_t off = 0; off < c->host_len;) {
            const char *dot;
            if ((ix->suffix_labels >> labels) & 1u) {
                add_slot(c, model_ix_lookup(ix, IXT_SUFFIX, c->host + off, c->host_len - off),
                         true);
            }
            dot = memchr(c->host + off, '.', c->host_len - off);
            if (dot == NULL) {
                break;
            }
            off = (size_t)(dot - c->host) + 1;
            if (labels < 63) {
                labels--;
            } else {
                labels = model_label_bit(c->host + off, c->host_len - off);
            }
        }
        for (size_t i = 0; i < ix->nwild_any; i++) {
            if (host_matches(c, &ix->eps[ix->wild_any[i]])) {
                add_cand(c, ix->wild_any[i]);
            }
        }
    }
    for (size_t i = 0; i < ix->nhostless && !c->host_ll; i++) {
        add_cand(c, ix->hostless[i]);
    }
    /* Insertion sort: candidate lists are short, and rule order makes the
     * reported rule the lexicographically smallest key, as in the reference. */
    for (size_t i = 1; i < c->ncands; i++) {
        uint32_t v = c->cands[i];
        size_t j = i;
        while (j > 0 && c->cands[j - 1] > v) {
            c->cands[j] = c->cands[j - 1];
            j--;
        }
        c->cands[j] = v;
    }
}

/* --- binaries ------------------------------------------------------------- */

/*= docs/semantics.md#binary-glob
 *# A binary pattern matches the path *x* exactly, or as a glob with `/` as
 *# separator */
static bool bin_match(const struct ix_bin *b, const char *x, size_t xlen)
{
    if (b->len == xlen && memcmp(b->s, x, xlen) == 0) {
        return true;
    }
    return b->g != NULL && model_glob_match(b->g, x, xlen);
}

/*= docs/semantics.md#identity
 *# *x* is a canonical absolute path: it starts with `/` and has no empty,
 *# `.` or `..` segment and no trailing `/` */
static bool exe_path_canonical(const char *x, size_t len)
{
    if (len < 2 || x[0] != '/' || x[len - 1] == '/') {
        return false;
    }
    for (size_t i = 0; i < len;) {
        size_t j = i + 1;
        while (j < len && x[j] != '/') {
            j++;
        }
        /* segment x[i+1 .. j) */
        if (j == i + 1 || (j == i + 2 && x[i + 1] == '.') ||
            (j == i + 3 && x[i + 1] == '.' && x[i + 2] == '.')) {
            return false;
        }
        i = j;
    }
    return true;
}

/* Bit k set when identity entry k matches some binary of rule 'r'.
 *= docs/semantics.md#binaries-empty
 *# A rule with an empty or missing `binaries` list matches **no** binary. */
static uint32_t rule_mask(const struct eval_ctx *c, uint32_t r)
{
    const struct model_index *ix = c->ix;
    uint32_t mask = 0;

    for (size_t b = ix->rule_bin[r]; b < ix->rule_bin[r + 1]; b++) {
        for (size_t k = 0; k < c->nid; k++) {
            if ((mask & (1u << k)) == 0 && (c->idok & (1u << k)) != 0 &&
                bin_match(&ix->bins[b], c->req->binaries[k], c->idlen[k])) {
                mask |= 1u << k;
            }
        }
    }
    return mask;
}

static void compute_masks(struct eval_ctx *c)
{
    uint32_t last_rule = EVAL_NONE;
    uint32_t last_mask = 0;

    for (size_t i = 0; i < c->ncands; i++) {
        uint32_t r = c->ix->eps[c->cands[i]].rule_idx;
        if (r != last_rule) {
            last_mask = rule_mask(c, r);
            last_rule = r;
        }
        c->masks[i] = last_mask;
    }
}

/* Number of candidate positions to visit. */
static size_t cand_count(const struct eval_ctx *c)
{
    return c->scan ? c->ix->neps : c->ncands;
}

/* Candidate position i: its ep index if it is in G0 for identity bit 'bit'. */
static bool cand_in_g0(const struct eval_ctx *c, size_t i, uint32_t bit, uint32_t *epi)
{
    if (!c->scan) {
        *epi = c->cands[i];
        return (c->masks[i] & bit) != 0;
    }
    *epi = (uint32_t)i;
    if (!port_in(&c->ix->eps[i], c->req->port) || !host_matches(c, &c->ix->eps[i])) {
        return false;
    }
    return (rule_mask(c, c->ix->eps[i].rule_idx) & bit) != 0;
}

/* The first (rule, endpoint) pair matching host:port, whatever the binary. */
static uint32_t first_host_match(const struct eval_ctx *c)
{
    if (!c->scan) {
        return c->ncands > 0 ? c->cands[0] : EVAL_NONE;
    }
    for (size_t i = 0; i < c->ix->neps; i++) {
        if (port_in(&c->ix->eps[i], c->req->port) && host_matches(c, &c->ix->eps[i])) {
            return (uint32_t)i;
        }
    }
    return EVAL_NONE;
}

/* --- destinations --------------------------------------------------------- */

static bool cidrs_contain(const struct model_endpoint *e, const struct model_ip *ip)
{
    for (size_t i = 0; i < e->ncidrs; i++) {
        if (model_cidr_contains(&e->cidrs[i], ip)) {
            return true;
        }
    }
    return false;
}

/* MODEL_REASON_ALLOWED when the unit admits the destination, else why not. */
static enum model_reason dest_check(const struct eval_ctx *c, const struct ix_ep *x)
{
    const struct model_endpoint *e = x->ep;
    const struct model_ip *d = c->dest;
    /*= docs/semantics.md#test-loopback
     *# a loopback *d* that *h* names as an IP literal, and that the unit names
     *# as its own IP host or among a target_sandbox's `resolved_ips`, is treated
     *# as a public address */
    bool lo = d != NULL && c->req->test_loopback && model_ip_is_loopback(d) && c->host_is_ip &&
              memcmp(c->host_ip.b, d->b, 16) == 0 &&
              ((e->host_is_ip && memcmp(e->host_ip.b, d->b, 16) == 0) ||
               (!x->unresolved && e->target_sandbox.s != NULL && cidrs_contain(e, d)));

    /*= docs/semantics.md#always-blocked
     *# *d* is not **always-blocked** */
    if (d != NULL && !lo && model_ip_is_always_blocked(d)) {
        return MODEL_REASON_DEST_BLOCKED;
    }
    /*= docs/semantics.md#control-plane
     *# *p* is not a control-plane port (2379, 2380, 6443, 10250, 10255) */
    if (model_port_is_control_plane(c->req->port)) {
        return MODEL_REASON_DEST_PORT;
    }
    /*= docs/semantics.md#dest
     *# if *e* resolves a `target_sandbox` that is not resolved yet, nothing is admitted */
    if (x->unresolved) {
        return MODEL_REASON_DEST_UNRESOLVED;
    }
    if (d == NULL) {
        /*= docs/semantics.md#target-sandbox
         *# The endpoint is **resolved** when `resolved_ips` holds an address that
         *# is not always-blocked */
        return x->lo_only && !c->req->test_loopback ? MODEL_REASON_DEST_UNRESOLVED
                                                    : MODEL_REASON_ALLOWED;
    }
    /*= docs/semantics.md#dest
     *# if *e* has `allowed_ips` (or a resolved `target_sandbox`), *d* lies in one
     *# of them */
    if (e->ncidrs > 0) {
        return cidrs_contain(e, d) ? MODEL_REASON_ALLOWED : MODEL_REASON_DEST_ALLOWED_IPS;
    }
    /*= docs/semantics.md#dest
     *# otherwise *d* is **public**, or *h* is an IP host equal to the endpoint's
     *# own literal host and the endpoint is not `advisor_proposed`. */
    if (lo || model_ip_is_public(d)) {
        return MODEL_REASON_ALLOWED;
    }
    if (c->host_is_ip && e->host_is_ip && !e->advisor_proposed &&
        memcmp(e->host_ip.b, c->host_ip.b, 16) == 0 && memcmp(d->b, c->host_ip.b, 16) == 0) {
        return MODEL_REASON_ALLOWED;
    }
    return MODEL_REASON_DEST_INTERNAL;
}

/* --- request preparation: method, path, query ----------------------------- */

/* Decode one key or value ('+' is a space, %HH decoded) to out+*o, NUL
 * terminated. NUL bytes and invalid UTF-8 are malformed. */
static bool query_part(const char *s, size_t len, char *out, size_t cap, size_t *o)
{
    size_t start = *o;

    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        if (*o + 1 >= cap) {
            return false;
        }
        if (ch == '+') {
            ch = ' ';
        } else if (ch == '%') {
            int hi;
            int lo;
            if (len - i < 3) {
                return false;
            }
            hi = pv_hexval((unsigned char)s[i + 1]);
            lo = pv_hexval((unsigned char)s[i + 2]);
            if (hi < 0 || lo < 0) {
                return false;
            }
            ch = (char)(hi * 16 + lo);
            i += 2;
        }
        if (ch == '\0') {
            return false;
        }
        out[(*o)++] = ch;
    }
    if (*o >= cap) {
        return false;
    }
    out[(*o)++] = '\0';
    return pv_utf8_valid((const unsigned char *)out + start, *o - start - 1);
}

/*= docs/semantics.md#query-parse
 *# The query is split on `&`; empty pairs are skipped; a pair splits at the
 *# first `=` (no `=`: empty value); `+` is a space; `%HH` is decoded. A
 *# malformed escape or invalid UTF-8 makes the request invalid */
static bool query_decode(struct eval_ctx *c, const char *q, size_t qlen)
{
    size_t o = 0;
    size_t i = 0;

    c->qbuf = c->qstore;
    c->qlen = 0;
    if (qlen > EVAL_QUERY_MAX) {
        return false;
    }
    /*= docs/semantics.md#query-semicolon
     *# A raw `;` anywhere in the query makes the request invalid */
    c->q_semicolon = memchr(q, ';', qlen) != NULL;
    if (c->q_semicolon) {
        return false;
    }
    while (i < qlen) {
        const char *amp = memchr(q + i, '&', qlen - i);
        size_t j = amp != NULL ? (size_t)(amp - q) : qlen;
        if (j > i) {
            const char *eq = memchr(q + i, '=', j - i);
            size_t klen = eq != NULL ? (size_t)(eq - (q + i)) : j - i;
            if (!query_part(q + i, klen, c->qstore, sizeof(c->qstore), &o)) {
                return false;
            }
            if (eq != NULL) {
                size_t vstart = i + klen + 1;
                if (!query_part(q + vstart, j - vstart, c->qstore, sizeof(c->qstore), &o)) {
                    return false;
                }
            } else if (!query_part("", 0, c->qstore, sizeof(c->qstore), &o)) {
                return false;
            }
        }
        i = j + 1;
    }
    c->qlen = o;
    return true;
}

/* Method, canonical path and query, computed once per request. */
static enum prep_state prepare(struct eval_ctx *c)
{
    const struct model_request *req = c->req;
    size_t mlen;
    const char *query = NULL;
    size_t qlen = 0;
    bool enc = false;

    if (c->prep != PREP_TODO) {
        return c->prep;
    }
    c->prep = PREP_BAD_METHOD;
    c->path[0] = '\0';
    c->path_len = 0;
    mlen = strlen(req->method);
    if (mlen > EVAL_METHOD_MAX || !model_method_valid(req->method, mlen)) {
        return c->prep;
    }
    /*= docs/semantics.md#methods
     *# Methods compare case-insensitively (both sides upper-cased). */
    for (size_t i = 0; i < mlen; i++) {
        char ch = req->method[i];
        c->method[i] = (ch >= 'a' && ch <= 'z') ? (char)(ch - 'a' + 'A') : ch;
    }
    c->method[mlen] = '\0';
    c->method_len = mlen;
    c->method_head = mlen == 4 && memcmp(c->method, "HEAD", 4) == 0;
    c->prep = PREP_BAD_TARGET;
    if (req->target == NULL) {
        c->target_status = MODEL_TARGET_BAD;
        return c->prep;
    }
    /*= docs/semantics.md#canonical-path
     *# The request path is canonicalised before matching */
    c->target_status = model_path_canonicalize(req->target, req->target_len, c->path,
                                               sizeof(c->path), &c->path_len, &query, &qlen, &enc);
    if (c->target_status == MODEL_TARGET_ENCODED_SLASH) {
        /* Some spellings report %2F through the status; the path is valid. */
        enc = true;
        c->target_status = MODEL_TARGET_OK;
    }
    if (c->target_status != MODEL_TARGET_OK || c->path_len >= sizeof(c->path) || c->path_len == 0 ||
        c->path[0] != '/') {
        c->path[0] = '\0';
        c->path_len = 0;
        if (c->target_status == MODEL_TARGET_OK) {
            c->target_status = MODEL_TARGET_BAD;
        }
        return c->prep;
    }
    c->path[c->path_len] = '\0';
    c->enc_slash = enc || memmem(c->path, c->path_len, "%2F", 3) != NULL;
    c->prep = PREP_BAD_QUERY;
    if (!query_decode(c, query != NULL ? query : "", query != NULL ? qlen : 0)) {
        return c->prep;
    }
    c->prep = PREP_OK;
    return c->prep;
}

/* --- L7 matching ---------------------------------------------------------- */

/* ===========================================================================
 * Decision: one identity
 * ========================================================================= */

static struct verdict verdict_deny(enum model_reason reason, enum model_route route, uint32_t unit,
                                   size_t id)
{
    struct verdict v = {false, false, reason, route, unit, id};
    return v;
}

/*= docs/semantics.md#reach
 *# A connection ... to (h, p) by *x* is allowed iff G₀ is non-empty and some
 *# unit of G₀ admits the destination */
static struct verdict eval_reach(const struct eval_ctx *c, uint32_t bit, size_t id,
                                 enum model_route route)
{
    struct verdict v = verdict_deny(MODEL_REASON_ALLOWED, route, EVAL_NONE, id);
    size_t n = cand_count(c);

    v.grant = true;
    for (size_t i = 0; i < n; i++) {
        uint32_t epi;
        enum model_reason r;
        if (!cand_in_g0(c, i, bit, &epi)) {
            continue;
        }
        r = dest_check(c, &c->ix->eps[epi]);
        if (r == MODEL_REASON_ALLOWED) {
            v.allow = true;
            v.reason = MODEL_REASON_ALLOWED;
            v.unit = epi;
            return v;
        }
        if (v.unit == EVAL_NONE) {
            v.reason = r;
            v.unit = epi;
        }
    }
    return v;
}

/*= docs/semantics.md#l7
 *# Within an inspected route a request (m, u, q) is allowed iff */
/* long: the clauses of docs/semantics.md#l7 in their order (prepare, deny wins, first grant,
 * audit, encoded slash), each cited where it is decided */
static struct verdict eval_l7(struct eval_ctx *c, uint32_t bit, size_t id, uint32_t first_g0)
{
    struct verdict v =
        verdict_deny(MODEL_REASON_L7_NOT_PERMITTED, MODEL_ROUTE_INSPECTED, first_g0, id);
    size_t n = cand_count(c);
    uint32_t first_g = EVAL_NONE;
    uint32_t audit_ok = EVAL_NONE;
    uint32_t dest_fail = EVAL_NONE;
    enum model_reason dest_reason = MODEL_REASON_ALLOWED;
    uint32_t slash = EVAL_NONE;
    uint32_t unsupported = EVAL_NONE;
    uint32_t gqlu = EVAL_NONE;
    enum model_reason gql_why = MODEL_REASON_L7_NOT_PERMITTED;
    bool other_none = false;

    switch (prepare(c)) {
    case PREP_OK:
        break;
    case PREP_TODO:
    case PREP_BAD_METHOD:
    case PREP_BAD_TARGET:
        v.reason = MODEL_REASON_BAD_TARGET;
        return v;
    case PREP_BAD_QUERY:
        v.reason = MODEL_REASON_BAD_QUERY;
        return v;
    }
    /*= docs/semantics.md#deny-wins
     *# no unit in G with an **enforced** L7 endpoint has a **deny rule** that
     *# matches it ("deny wins", across all rules). */
    for (size_t i = 0; i < n; i++) {
        uint32_t epi;
        const struct ix_ep *x;
        if (!cand_in_g0(c, i, bit, &epi)) {
            continue;
        }
        x = &c->ix->eps[epi];
        if (!model_ev_in_scope(c, x)) {
            continue;
        }
        if (first_g == EVAL_NONE) {
            first_g = epi;
        }
        if ((x->grant == IXG_RULES || x->grant == IXG_GRAPHQL || x->grant == IXG_RPC) &&
            model_ev_deny_rules_match(c, x->ep)) {
            v.reason = MODEL_REASON_L7_DENY_RULE;
            v.unit = epi;
            return v;
        }
    }
    if (first_g == EVAL_NONE) {
        v.reason = MODEL_REASON_NO_L7_PATH;
        return v;
    }
    /*= docs/semantics.md#l7
     *# some unit *e* in G **grants** it and admits the destination *d* */
    for (size_t i = 0; i < n; i++) {
        uint32_t epi;
        const struct ix_ep *x;
        enum model_reason r;
        enum unit_grant g;
        enum model_reason why;
        if (!cand_in_g0(c, i, bit, &epi)) {
            continue;
        }
        x = &c->ix->eps[epi];
        if (!model_ev_in_scope(c, x)) {
            continue;
        }
        g = model_ev_unit_grants(c, x, &why);
        switch (g) {
        case UG_STRONG:
        case UG_AUDIT:
            v.grant = true;
            r = dest_check(c, x);
            if (r == MODEL_REASON_ALLOWED) {
                if (g == UG_STRONG) {
                    v.allow = true;
                    v.reason = MODEL_REASON_ALLOWED;
                    v.unit = epi;
                    return v;
                }
                if (audit_ok == EVAL_NONE) {
                    audit_ok = epi;
                }
            } else if (dest_fail == EVAL_NONE) {
                dest_fail = epi;
                dest_reason = r;
            }
            break;
        case UG_NONE_SLASH:
            if (slash == EVAL_NONE) {
                slash = epi;
            }
            break;
        case UG_NONE_UNSUPPORTED:
            if (unsupported == EVAL_NONE) {
                unsupported = epi;
            }
            break;
        case UG_NONE_RULES:
            other_none = true;
            if (why != MODEL_REASON_L7_NOT_PERMITTED && gqlu == EVAL_NONE) {
                gqlu = epi;
                gql_why = why;
            }
            break;
        }
    }
    if (audit_ok != EVAL_NONE) {
        v.allow = true;
        v.reason = MODEL_REASON_AUDIT;
        v.unit = audit_ok;
        return v;
    }
    if (v.grant) {
        v.reason = dest_reason;
        v.unit = dest_fail;
        return v;
    }
    v.unit = first_g;
    if (slash != EVAL_NONE) {
        v.reason = MODEL_REASON_ENCODED_SLASH;
        v.unit = slash;
    } else if (unsupported != EVAL_NONE && !other_none) {
        v.reason = MODEL_REASON_L7_UNSUPPORTED;
        v.unit = unsupported;
    } else if (gqlu != EVAL_NONE) {
        v.reason = gql_why;
        v.unit = gqlu;
    }
    return v;
}

static struct verdict eval_identity(struct eval_ctx *c, size_t id)
{
    uint32_t bit = 1u << id;
    size_t n = cand_count(c);
    uint32_t first = EVAL_NONE;
    bool l7 = false;
    enum model_route route;

    for (size_t i = 0; i < n; i++) {
        uint32_t epi;
        if (!cand_in_g0(c, i, bit, &epi)) {
            continue;
        }
        if (first == EVAL_NONE) {
            first = epi;
        }
        if (c->ix->eps[epi].l7) {
            l7 = true;
            break;
        }
    }
    /*= docs/semantics.md#route
     *# *none* when G₀ is empty: every request is denied; */
    if (first == EVAL_NONE) {
        return verdict_deny(MODEL_REASON_BINARY, MODEL_ROUTE_NONE, first_host_match(c), id);
    }
    /*= docs/semantics.md#route
     *# *inspected* when some unit of G₀ has an L7 endpoint ... *opaque*
     *# otherwise ... an opaque route reaches every method, path and query. */
    route = l7 ? MODEL_ROUTE_INSPECTED : MODEL_ROUTE_OPAQUE;
    if (c->req->method == NULL || route == MODEL_ROUTE_OPAQUE) {
        return eval_reach(c, bit, id, route);
    }
    return eval_l7(c, bit, id, first);
}

static int deny_rank(const struct verdict *v)
{
    if (v->grant) {
        return 2;
    }
    return v->reason != MODEL_REASON_BINARY ? 1 : 0;
}

static void decide_fill(struct eval_ctx *c, const struct verdict *v, struct model_decision *out)
{
    out->allow = v->allow;
    out->grant = v->grant;
    out->reason = v->reason;
    out->route = v->route;
    /* a loopback destination is always-blocked unless the test switch let it in */
    out->test_loopback_used = v->allow && c->dest != NULL && model_ip_is_loopback(c->dest);
    if (v->unit != EVAL_NONE) {
        out->rule = c->ix->eps[v->unit].rule;
        out->endpoint = c->ix->eps[v->unit].ep;
    }
    if (v->unit != EVAL_NONE && v->route != MODEL_ROUTE_NONE && v->id < c->nid) {
        out->binary = c->req->binaries[v->id];
    }
    model_ev_format_detail(c, v, out);
}

static void decide_early(struct model_decision *out, enum model_reason reason, const char *msg)
{
    size_t len = 0;

    out->reason = reason;
    model_ev_dcat(out, &len, msg);
}

/* Normalise request host 'host' into 'buf' (NUL-terminated), as every
 * decision does first; false for an invalid host. '*ll' says whether it is
 * link-local. */
static bool host_normalize(const char *host, size_t len, char *buf, size_t buflen, size_t *outl,
                           bool *is_ip, struct model_ip *ip, bool *ll)
{
    /*= docs/semantics.md#host-normalise
     *# A request host is normalised before anything else */
    if (!model_host_normalize(host, len, buf, buflen, outl, is_ip, ip) || *outl >= buflen ||
        (!*is_ip && !dns_name_ok(buf, *outl))) {
        return false;
    }
    buf[*outl] = '\0';
    /*= docs/semantics.md#link-local
     *# A host is **link-local** when it is an IP host in a link-local range
     *# (any of the forms above) or a known metadata host name */
    *ll = *is_ip ? model_ip_is_link_local(ip) : model_host_is_metadata_name(buf, *outl);
    return true;
}

bool model_endpoint_matches_host(const struct model_endpoint *e, const char *host, size_t len)
{
    char buf[EVAL_HOST_BUF];
    struct model_ip ip;
    struct ev_host h = {buf, 0, false, false, &ip};

    memset(&ip, 0, sizeof(ip));
    if (e == NULL || host == NULL ||
        !host_normalize(host, len, buf, sizeof(buf), &h.len, &h.is_ip, &ip, &h.ll)) {
        return false;
    }
    return ep_host_matches(e, model_ix_host_kind(e), &h);
}

bool model_endpoint_has_port(const struct model_endpoint *e, uint16_t port)
{
    return e != NULL && ep_port_in(e, port);
}

static void decision_reset(struct model_decision *out)
{
    out->allow = false;
    out->grant = false;
    out->reason = MODEL_REASON_NO_POLICY;
    out->route = MODEL_ROUTE_NONE;
    out->rule = NULL;
    out->endpoint = NULL;
    out->binary = NULL;
    out->test_loopback_used = false;
    out->detail[0] = '\0';
}

/* What a decision reads of the request once, whatever its JSON-RPC call:
 * bounds, identities, host, candidate endpoints and their masks. False
 * when that already decided (*out filled). */
/* long: reads as docs/semantics.md: the policy, the identities, the host, then the candidates */
static bool decide_setup(struct eval_ctx *c, const struct model_policy *p,
                         const struct model_request *req, struct model_decision *out)
{
    decision_reset(out);
    if (p == NULL || req == NULL || !p->compiled || p->index == NULL) {
        decide_early(out, MODEL_REASON_NO_POLICY, "policy not compiled");
        return false;
    }
    if (p->nrules == 0) {
        decide_early(out, MODEL_REASON_NO_POLICY, "network connections not allowed by policy");
        return false;
    }
    if (req->nbinaries > MODEL_MAX_IDENTITY || (req->nbinaries > 0 && req->binaries == NULL)) {
        decide_early(out, MODEL_REASON_BINARY, "binary identity has too many entries");
        return false;
    }
    c->p = p;
    c->ix = p->index;
    c->req = req;
    c->prep = PREP_TODO;
    c->target_status = MODEL_TARGET_OK;
    c->method[0] = '\0';
    c->method_len = 0;
    c->method_head = false;
    c->path[0] = '\0';
    c->path_len = 0;
    c->enc_slash = false;
    c->qbuf = c->qstore;
    c->qlen = 0;
    c->q_semicolon = false;
    c->gq = model_ev_gql_check(req->gql);
    c->nid = req->nbinaries;
    c->idok = 0;
    for (size_t k = 0; k < c->nid; k++) {
        if (req->binaries[k] == NULL) {
            decide_early(out, MODEL_REASON_BINARY, "binary identity has a NULL entry");
            return false;
        }
        c->idlen[k] = strlen(req->binaries[k]);
        /* An entry that is not a canonical path matches no binary pattern. */
        if (exe_path_canonical(req->binaries[k], c->idlen[k])) {
            c->idok |= 1u << k;
        }
    }
    if (req->host == NULL ||
        !host_normalize(req->host, req->host_len, c->host, sizeof(c->host), &c->host_len,
                        &c->host_is_ip, &c->host_ip, &c->host_ll)) {
        char hb[160];
        size_t len = 0;
        out->reason = MODEL_REASON_BAD_HOST;
        model_ev_dcat(out, &len, "invalid host '");
        if (req->host != NULL) {
            model_ev_dcat(out, &len, model_ev_sanitize(req->host, req->host_len, hb, sizeof(hb)));
        }
        model_ev_dcat(out, &len, "'");
        return false;
    }
    c->dest = req->dest != NULL ? req->dest : (c->host_is_ip ? &c->host_ip : NULL);
    collect(c);
    if (c->ncands > 0 && !c->scan) {
        compute_masks(c);
    }
    return true;
}

/*= docs/semantics.md#identity-any
 *# a request by identity *{x₁ … xₙ}* is allowed iff the same request by some
 *# single *xᵢ* is allowed. */
/* One verdict per identity, the best kept (after decide_setup). */
static void decide_identities(struct eval_ctx *c, struct model_decision *out)
{
    const struct model_request *req = c->req;
    struct verdict best;
    bool have = false;

    if (c->ncands == 0 && !c->scan) {
        best = verdict_deny(MODEL_REASON_NO_ENDPOINT, MODEL_ROUTE_NONE, EVAL_NONE, 0);
        decide_fill(c, &best, out);
        return;
    }
    best = verdict_deny(MODEL_REASON_BINARY, MODEL_ROUTE_NONE, first_host_match(c), 0);
    for (size_t k = 0; k < c->nid; k++) {
        struct verdict v = eval_identity(c, k);
        if (v.allow) {
            bool ideal = req->method == NULL || req->prefer_opaque
                             ? v.route == MODEL_ROUTE_OPAQUE
                             : v.reason == MODEL_REASON_ALLOWED;
            if (!have || !best.allow || ideal) {
                best = v;
                have = true;
            }
            if (ideal) {
                break;
            }
        } else if (!have || (!best.allow && deny_rank(&v) > deny_rank(&best))) {
            best = v;
            have = true;
        }
    }
    decide_fill(c, &best, out);
}

void model_decide(const struct model_policy *p, const struct model_request *req,
                  struct model_decision *out)
{
    struct eval_ctx c;

    if (out == NULL) {
        return;
    }
    if (decide_setup(&c, p, req, out)) {
        decide_identities(&c, out);
    }
}

/* The calls of one request (a JSON-RPC batch): the context is set up once
 * and only the call changes between decisions. */
void model_decide_calls(const struct model_policy *p, const struct model_request *req,
                        const struct model_rpc_call *calls, size_t ncalls,
                        model_decide_each_fn each, void *arg)
{
    struct eval_ctx c;
    struct model_request rq;
    struct model_decision d;
    bool ready;

    if (each == NULL || ncalls == 0 || calls == NULL) {
        return;
    }
    if (req == NULL) {
        decision_reset(&d);
        decide_early(&d, MODEL_REASON_NO_POLICY, "policy not compiled");
        for (size_t i = 0; i < ncalls; i++) {
            each(arg, i, &d);
        }
        return;
    }
    /* the copy is the request the context reads; only its call changes */
    rq = *req;
    rq.rpc = &calls[0];
    ready = decide_setup(&c, p, &rq, &d);
    for (size_t i = 0; i < ncalls; i++) {
        if (ready) {
            rq.rpc = &calls[i];
            decision_reset(&d);
            decide_identities(&c, &d);
        }
        each(arg, i, &d);
    }
}
