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
 */
#include "config.h"

#include <string.h>

#include "common/pv_text.h"
#include "model/model_graphql.h"
#include "model/model_int.h"

/* ===========================================================================
 * Limits
 * ========================================================================= */

#define EVAL_MAX_CANDS 256u             /* candidate (rule, endpoint) pairs on the stack */
#define EVAL_HOST_BUF 256u              /* normalised host: at most 253 bytes + NUL */
#define EVAL_PATH_BUF (3u * 4096u + 1u) /* canonical path (re-encoding may grow it) */
#define EVAL_QUERY_MAX 16384u           /* raw query bytes; longer is a malformed request */
#define EVAL_QUERY_BUF (2u * EVAL_QUERY_MAX + 2u) /* decoded "key\0value\0" pairs */
#define EVAL_METHOD_MAX 32u                       /* bytes of an HTTP method */

/* ===========================================================================
 * Decision: request state
 * ========================================================================= */

enum prep_state { PREP_TODO, PREP_OK, PREP_BAD_METHOD, PREP_BAD_TARGET, PREP_BAD_QUERY };

/* The request's GraphQL operation (docs/semantics.md#graphql). */
enum gql_state { GQ_NONE, GQ_OK, GQ_BAD };

struct eval_ctx {
    const struct model_policy *p;
    const struct model_index *ix;
    const struct model_request *req;
    char host[EVAL_HOST_BUF];
    size_t host_len;
    bool host_is_ip;
    bool host_ll; /* link-local host (docs/semantics.md#link-local) */
    struct model_ip host_ip;
    const struct model_ip *dest; /* req->dest, else the IP host itself, else NULL */
    size_t nid;
    size_t idlen[MODEL_MAX_IDENTITY];
    uint32_t idok; /* bit k: identity entry k is a canonical path */
    uint32_t cands[EVAL_MAX_CANDS];
    uint32_t masks[EVAL_MAX_CANDS];
    size_t ncands;
    bool scan; /* too many candidates: visit every endpoint */
    /* Request-level data, prepared once for all identities. */
    enum prep_state prep;
    enum model_target_status target_status;
    char method[EVAL_METHOD_MAX + 1];
    size_t method_len;
    bool method_head;
    char path[EVAL_PATH_BUF];
    size_t path_len;
    bool enc_slash;
    enum gql_state gq;
    char *qbuf; /* decoded pairs "key\0value\0..." */
    size_t qlen;
    char qstore[EVAL_QUERY_BUF];
};

/* The verdict for one identity, formatted into a decision at the end. */
struct verdict {
    bool allow;
    bool grant;
    enum model_reason reason;
    enum model_route route;
    uint32_t unit; /* ep index, or EVAL_NONE */
    size_t id;     /* identity index */
};

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

static bool port_in(const struct ix_ep *x, uint16_t port)
{
    const struct model_endpoint *e = x->ep;
    size_t lo = 0;
    size_t hi = e->nports;

    if (x->nports > 0) {
        for (size_t i = 0; i < x->nports; i++) {
            if (x->ports[i] == port) {
                return true;
            }
        }
        return false;
    }

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

/* Does endpoint x match the normalised request host (ports aside)? */
static bool host_matches(const struct eval_ctx *c, const struct ix_ep *x)
{
    switch ((enum ix_host_kind)x->host_kind) {
    case IXH_NONE:
        return false;
    case IXH_HOSTLESS:
        /*= docs/semantics.md#hostless
         *# An endpoint with an empty host and a non-empty `allowed_ips` is
         *# *hostless* and matches every host on its ports except the
         *# link-local hosts (#link-local). */
        return !c->host_ll;
    case IXH_IP:
        return c->host_is_ip && memcmp(x->ep->host_ip.b, c->host_ip.b, 16) == 0;
    case IXH_EXACT:
        return !c->host_is_ip && strlen(x->ep->host.s) == c->host_len &&
               memcmp(x->ep->host.s, c->host, c->host_len) == 0;
    case IXH_WILD:
        /*= docs/semantics.md#host-pattern
         *# **Wildcard patterns match DNS names only, never IP hosts.** */
        return !c->host_is_ip && x->ep->host_glob != NULL &&
               model_glob_match(x->ep->host_glob, c->host, c->host_len);
    }
    return false;
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

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9') {
        return ch - '0';
    }
    if (ch >= 'a' && ch <= 'f') {
        return ch - 'a' + 10;
    }
    if (ch >= 'A' && ch <= 'F') {
        return ch - 'A' + 10;
    }
    return -1;
}

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
            hi = hexval(s[i + 1]);
            lo = hexval(s[i + 2]);
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

/*= docs/semantics.md#methods
 *# A rule method `*` matches any method. A `GET` rule (allow or deny) also
 *# matches `HEAD`. `OPTIONS` is never implied. */
static bool method_match(const struct eval_ctx *c, const char *m, bool deny)
{
    size_t i;

    if (m == NULL || m[0] == '\0') {
        /* A matcher without a method: allow rules grant nothing, deny rules
         * fire on every method (both fail closed). */
        return deny;
    }
    if (m[0] == '*' && m[1] == '\0') {
        return true;
    }
    for (i = 0; i < c->method_len && m[i] != '\0'; i++) {
        char ch = m[i];
        if (ch >= 'a' && ch <= 'z') {
            ch = (char)(ch - 'a' + 'A');
        }
        if (ch != c->method[i]) {
            break;
        }
    }
    if (m[i] == '\0' && i == c->method_len) {
        return true;
    }
    return c->method_head && (m[0] == 'G' || m[0] == 'g') && (m[1] == 'E' || m[1] == 'e') &&
           (m[2] == 'T' || m[2] == 't') && m[3] == '\0';
}

/* Iterate decoded query pairs: returns the next offset, or 0 at the end. */
static size_t qnext(const struct eval_ctx *c, size_t off, const char **k, size_t *klen,
                    const char **v, size_t *vlen)
{
    if (off >= c->qlen) {
        return 0;
    }
    *k = c->qbuf + off;
    *klen = strlen(*k);
    *v = *k + *klen + 1;
    *vlen = strlen(*v);
    return off + *klen + 1 + *vlen + 1;
}

static bool value_match(const struct model_query *q, const char *v, size_t vlen)
{
    for (size_t j = 0; j < q->globs.n; j++) {
        if (model_glob_match(q->compiled[j], v, vlen)) {
            return true;
        }
    }
    return false;
}

/*= docs/semantics.md#query-allow
 *# An allow rule's `query` matches when every configured key is present and
 *# **every** value of that key matches one of its globs. */
/*= docs/semantics.md#query-deny
 *# A deny rule's `query` matches when every configured key is present and
 *# **some** value of that key matches one of its globs. */
static bool query_match(const struct eval_ctx *c, const struct model_query *q, bool deny)
{
    const char *key = q->key.s != NULL ? q->key.s : "";
    size_t keylen = strlen(key);
    bool present = false;
    size_t off = 0;
    const char *k;
    const char *v;
    size_t klen;
    size_t vlen;

    if (q->compiled == NULL) {
        return deny; /* not compiled: fail closed */
    }
    while ((off = qnext(c, off, &k, &klen, &v, &vlen)) != 0) {
        bool m;
        if (klen != keylen || memcmp(k, key, klen) != 0) {
            continue;
        }
        present = true;
        m = value_match(q, v, vlen);
        if (deny && m) {
            return true;
        }
        if (!deny && !m) {
            return false;
        }
    }
    return present && !deny;
}

static bool l7rule_match(const struct eval_ctx *c, const struct model_l7rule *r, bool deny)
{
    if (!method_match(c, r->method.s, deny)) {
        return false;
    }
    if (r->path_glob != NULL) {
        if (!model_glob_match(r->path_glob, c->path, c->path_len)) {
            return false;
        }
    } else if (r->path.s != NULL && r->path.s[0] != '\0') {
        return deny; /* not compiled: fail closed */
    }
    for (size_t i = 0; i < r->nquery; i++) {
        if (!query_match(c, &r->query[i], deny)) {
            return false;
        }
    }
    return true;
}

/* --- GraphQL matching ----------------------------------------------------- */

/*= docs/semantics.md#graphql-names
 *# An operation whose name or a root field is not a Name, or whose *F* is
 *# empty, is not readable */
static enum gql_state gql_check(const struct model_gql_op *op)
{
    if (op == NULL) {
        return GQ_NONE;
    }
    if (op->persisted_id != NULL) {
        return op->persisted_id[0] != '\0' ? GQ_OK : GQ_BAD;
    }
    if ((unsigned)op->type > (unsigned)MODEL_GQL_SUBSCRIPTION || op->nfields == 0 ||
        op->fields == NULL) {
        return GQ_BAD;
    }
    if (op->name != NULL && !model_gql_name_valid(op->name, strlen(op->name))) {
        return GQ_BAD;
    }
    for (size_t i = 0; i < op->nfields; i++) {
        if (op->fields[i] == NULL || !model_gql_name_valid(op->fields[i], strlen(op->fields[i]))) {
            return GQ_BAD;
        }
    }
    return GQ_OK;
}

static bool persisted_on(const struct model_endpoint *e)
{
    return e->persisted_queries.s != NULL &&
           strcmp(e->persisted_queries.s, "allow_registered") == 0;
}

/* The operation endpoint 'e' decides for this request, or NULL and why not.
 *= docs/semantics.md#graphql-persisted
 *# Under `allow_registered` it is decided exactly as the document operation
 *# *(t, n, F)* of the endpoint's `graphql_persisted_queries` entry keyed *id* */
static const struct model_gql_op *
gql_resolve(const struct eval_ctx *c, const struct model_endpoint *e, enum model_reason *why)
{
    const struct model_gql_op *op = c->req->gql;

    if (op == NULL || c->gq == GQ_NONE) {
        *why = MODEL_REASON_GQL_NO_OPERATION;
        return NULL;
    }
    if (c->gq == GQ_BAD) {
        *why = MODEL_REASON_GQL_BAD_OPERATION;
        return NULL;
    }
    if (op->persisted_id == NULL) {
        return op;
    }
    if (!persisted_on(e)) {
        *why = MODEL_REASON_GQL_PERSISTED_DENIED;
        return NULL;
    }
    for (size_t i = 0; i < e->ngql_persisted; i++) {
        const struct model_gql_persisted *g = &e->gql_persisted[i];
        if (g->op_ok && g->id.s != NULL && strcmp(g->id.s, op->persisted_id) == 0) {
            return &g->op;
        }
    }
    *why = MODEL_REASON_GQL_PERSISTED_UNKNOWN;
    return NULL;
}

/*= docs/semantics.md#graphql-allow
 *# it has no `operation_name`, or *n* ≠ ⊥ and *n* matches the glob. **An
 *# anonymous operation matches only rules without `operation_name`** */
static bool gql_name_match(const struct model_l7rule *r, const struct model_gql_op *op)
{
    if (r->operation_name.s == NULL) {
        return true;
    }
    return op->name != NULL && r->name_glob != NULL &&
           model_glob_match(r->name_glob, op->name, strlen(op->name));
}

static bool gql_field_match(const struct model_l7rule *r, const char *f)
{
    size_t len = strlen(f);

    for (size_t i = 0; i < r->fields.n; i++) {
        if (r->field_globs[i] != NULL && model_glob_match(r->field_globs[i], f, len)) {
            return true;
        }
    }
    return false;
}

/*= docs/semantics.md#graphql-allow
 *# it has no `fields`, or **every** member of *F* matches some glob of that
 *# same rule's `fields`. */
/*= docs/semantics.md#graphql-deny
 *# it has no `fields` or **some** member of *F* matches one of its globs */
static bool gql_rule_match(const struct model_l7rule *r, const struct model_gql_op *op, bool deny)
{
    if ((r->gql_types & (1u << op->type)) == 0 || !gql_name_match(r, op)) {
        return false;
    }
    if (r->fields.n == 0) {
        return true;
    }
    if (r->field_globs == NULL || op->nfields == 0) {
        /* not compiled, or a registry entry without fields: fail closed */
        return deny;
    }
    for (size_t i = 0; i < op->nfields; i++) {
        bool m = gql_field_match(r, op->fields[i]);
        if (deny && m) {
            return true;
        }
        if (!deny && !m) {
            return false;
        }
    }
    return !deny;
}

static bool deny_rules_match(const struct eval_ctx *c, const struct model_endpoint *e)
{
    const struct model_gql_op *op = NULL;
    enum model_reason why;
    bool resolved = false;

    for (size_t i = 0; i < e->ndeny; i++) {
        const struct model_l7rule *r = &e->deny_rules[i];
        if (r->gql_types == 0) {
            if (l7rule_match(c, r, true)) {
                return true;
            }
            continue;
        }
        /*= docs/semantics.md#graphql-deny
         *# GraphQL deny rules never match a request without an operation */
        if (!resolved) {
            op = gql_resolve(c, e, &why);
            resolved = true;
        }
        if (op != NULL && gql_rule_match(r, op, true)) {
            return true;
        }
    }
    return false;
}

static bool allow_rules_match(const struct eval_ctx *c, const struct model_endpoint *e)
{
    for (size_t i = 0; i < e->neff_rules; i++) {
        if (e->eff_rules[i].gql_types == 0 && l7rule_match(c, &e->eff_rules[i], false)) {
            return true;
        }
    }
    return false;
}

size_t model_endpoint_gql_npersisted(const struct model_endpoint *e)
{
    return e != NULL && persisted_on(e) ? e->ngql_persisted : 0;
}

const char *model_endpoint_gql_persisted_id(const struct model_endpoint *e, size_t i)
{
    return i < model_endpoint_gql_npersisted(e) ? e->gql_persisted[i].id.s : NULL;
}

bool model_endpoint_gql_persisted_match(const struct model_endpoint *e, const char *id, bool deny,
                                        bool *is_query)
{
    const struct model_gql_op *op = NULL;

    *is_query = false;
    for (size_t i = 0; i < model_endpoint_gql_npersisted(e) && op == NULL; i++) {
        const struct model_gql_persisted *g = &e->gql_persisted[i];
        if (g->op_ok && g->id.s != NULL && id != NULL && strcmp(g->id.s, id) == 0) {
            op = &g->op;
        }
    }
    if (op == NULL) {
        return false;
    }
    *is_query = op->type == MODEL_GQL_QUERY;
    for (size_t i = 0; deny && i < e->ndeny; i++) {
        if (e->deny_rules[i].gql_types != 0 && gql_rule_match(&e->deny_rules[i], op, true)) {
            return true;
        }
    }
    for (size_t i = 0; !deny && i < e->neff_rules; i++) {
        if (e->eff_rules[i].gql_types != 0 && gql_rule_match(&e->eff_rules[i], op, false)) {
            return true;
        }
    }
    return false;
}

/* MODEL_REASON_ALLOWED when a GraphQL allow rule of 'e' matches the request's
 * operation, else why not. */
static enum model_reason gql_allow(const struct eval_ctx *c, const struct model_endpoint *e,
                                   bool http)
{
    enum model_reason why = MODEL_REASON_L7_NOT_PERMITTED;
    bool post = c->method_len == 4 && memcmp(c->method, "POST", 4) == 0;
    bool get = c->method_len == 3 && memcmp(c->method, "GET", 3) == 0;
    const struct model_gql_op *op;

    /*= docs/semantics.md#graphql-http
     *# its method is `POST`, or `GET` with an operation of type `query` */
    if (http && !post && !get) {
        return MODEL_REASON_GQL_BAD_METHOD;
    }
    /*= docs/semantics.md#graphql-ws
     *# a request with method `WEBSOCKET_TEXT`, the upgrade's path and its
     *# operation *o* */
    if (!http && !(c->method_len == 14 && memcmp(c->method, "WEBSOCKET_TEXT", 14) == 0)) {
        return MODEL_REASON_GQL_BAD_METHOD;
    }
    op = gql_resolve(c, e, &why);
    if (op == NULL) {
        return why;
    }
    if (http && get && op->type != MODEL_GQL_QUERY) {
        return MODEL_REASON_GQL_BAD_METHOD;
    }
    for (size_t i = 0; i < e->neff_rules; i++) {
        if (e->eff_rules[i].gql_types != 0 && gql_rule_match(&e->eff_rules[i], op, false)) {
            return MODEL_REASON_ALLOWED;
        }
    }
    return MODEL_REASON_L7_NOT_PERMITTED;
}

/* What the allow rules of an enforced unit say: MODEL_REASON_ALLOWED or why not. */
static enum model_reason rules_grant(const struct eval_ctx *c, const struct ix_ep *x)
{
    /*= docs/semantics.md#graphql-ws-rules
     *# On a `websocket` unit a request with an operation is granted by the
     *# endpoint's GraphQL allow rules only (#graphql-allow), and one without an
     *# operation (the GET upgrade, plain text messages) by its method rules only */
    if (x->ep->proto == MODEL_PROTO_GRAPHQL) {
        return gql_allow(c, x->ep, true);
    }
    if (x->ep->proto == MODEL_PROTO_WEBSOCKET && c->req->gql != NULL) {
        return gql_allow(c, x->ep, false);
    }
    return allow_rules_match(c, x->ep) ? MODEL_REASON_ALLOWED : MODEL_REASON_L7_NOT_PERMITTED;
}

/* Is the unit in G (its endpoint path scope matches the canonical path)? */
static bool in_scope(const struct eval_ctx *c, const struct ix_ep *x)
{
    if (x->ep->path_glob != NULL) {
        return model_glob_match(x->ep->path_glob, c->path, c->path_len);
    }
    return x->ep->path.s == NULL || x->ep->path.s[0] == '\0';
}

enum unit_grant { UG_STRONG, UG_AUDIT, UG_NONE_SLASH, UG_NONE_RULES, UG_NONE_UNSUPPORTED };

/* How unit x grants the request; for UG_NONE_RULES, *why says why not. */
static enum unit_grant unit_grants(const struct eval_ctx *c, const struct ix_ep *x,
                                   enum model_reason *why)
{
    *why = MODEL_REASON_L7_NOT_PERMITTED;
    /*= docs/semantics.md#encoded-slash
     *# if the canonical path contains an encoded slash `%2F`, only when the
     *# endpoint sets `allow_encoded_slash`. */
    if (c->enc_slash && !x->ep->allow_encoded_slash) {
        return UG_NONE_SLASH;
    }
    switch ((enum ix_grant)x->grant) {
    case IXG_L4:
        return UG_STRONG;
    case IXG_RULES:
    case IXG_GRAPHQL:
        *why = rules_grant(c, x);
        return *why == MODEL_REASON_ALLOWED ? UG_STRONG : UG_NONE_RULES;
    case IXG_AUDIT:
        /* Audit grants everything; it is "strong" when the rules alone
         * would have allowed the request, so the reason says audit only
         * when audit mode made the difference. */
        if (x->rest_like && rules_grant(c, x) == MODEL_REASON_ALLOWED &&
            !deny_rules_match(c, x->ep)) {
            return UG_STRONG;
        }
        return UG_AUDIT;
    case IXG_UNSUPPORTED:
        return UG_NONE_UNSUPPORTED;
    }
    return UG_NONE_RULES;
}

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
        if (!in_scope(c, x)) {
            continue;
        }
        if (first_g == EVAL_NONE) {
            first_g = epi;
        }
        if ((x->grant == IXG_RULES || x->grant == IXG_GRAPHQL) && deny_rules_match(c, x->ep)) {
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
        if (!in_scope(c, x)) {
            continue;
        }
        g = unit_grants(c, x, &why);
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

/* ===========================================================================
 * Decision: details and the entry point
 * ========================================================================= */

static const char *const reason_names[] = {
    [MODEL_REASON_ALLOWED] = "allowed",
    [MODEL_REASON_AUDIT] = "audit",
    [MODEL_REASON_NO_POLICY] = "no_policy",
    [MODEL_REASON_NO_ENDPOINT] = "no_endpoint",
    [MODEL_REASON_BINARY] = "binary_not_allowed",
    [MODEL_REASON_BAD_HOST] = "bad_host",
    [MODEL_REASON_BAD_TARGET] = "bad_target",
    [MODEL_REASON_ENCODED_SLASH] = "encoded_slash",
    [MODEL_REASON_NO_L7_PATH] = "no_l7_path",
    [MODEL_REASON_L7_NOT_PERMITTED] = "l7_not_permitted",
    [MODEL_REASON_L7_DENY_RULE] = "l7_deny_rule",
    [MODEL_REASON_L7_UNSUPPORTED] = "l7_unsupported",
    [MODEL_REASON_BAD_QUERY] = "bad_query",
    [MODEL_REASON_DEST_BLOCKED] = "dest_blocked",
    [MODEL_REASON_DEST_PORT] = "dest_control_plane_port",
    [MODEL_REASON_DEST_INTERNAL] = "dest_internal",
    [MODEL_REASON_DEST_ALLOWED_IPS] = "dest_not_in_allowed_ips",
    [MODEL_REASON_DEST_UNRESOLVED] = "dest_unresolved",
    [MODEL_REASON_GQL_NO_OPERATION] = "graphql_no_operation",
    [MODEL_REASON_GQL_BAD_METHOD] = "graphql_bad_method",
    [MODEL_REASON_GQL_BAD_OPERATION] = "graphql_bad_operation",
    [MODEL_REASON_GQL_PERSISTED_DENIED] = "graphql_persisted_denied",
    [MODEL_REASON_GQL_PERSISTED_UNKNOWN] = "graphql_persisted_unknown",
};

const char *model_reason_name(enum model_reason r)
{
    if ((size_t)r < PV_ARRAY_LEN(reason_names) && reason_names[r] != NULL) {
        return reason_names[r];
    }
    return "unknown";
}

const char *model_route_name(enum model_route r)
{
    switch (r) {
    case MODEL_ROUTE_NONE:
        return "none";
    case MODEL_ROUTE_OPAQUE:
        return "opaque";
    case MODEL_ROUTE_INSPECTED:
        return "inspected";
    }
    return "unknown";
}

/* RFC 7230 token characters. */
static bool is_tchar(unsigned char ch)
{
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) {
        return true;
    }
    return ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

bool model_method_valid(const char *m, size_t len)
{
    if (m == NULL || len == 0 || len > EVAL_METHOD_MAX) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        if (!is_tchar((unsigned char)m[i])) {
            return false;
        }
    }
    return true;
}

const char *model_endpoint_host(const struct model_endpoint *e)
{
    return e != NULL && e->host.s != NULL ? e->host.s : "";
}

bool model_endpoint_body_cred_rewrite(const struct model_endpoint *e)
{
    return e != NULL && e->request_body_credential_rewrite;
}

bool model_endpoint_ws_cred_rewrite(const struct model_endpoint *e)
{
    return e != NULL && e->websocket_credential_rewrite;
}

size_t model_endpoint_nports(const struct model_endpoint *e)
{
    return e != NULL ? e->nports : 0;
}

uint16_t model_endpoint_port(const struct model_endpoint *e, size_t i)
{
    return e != NULL && i < e->nports ? e->ports[i] : 0;
}

/* Append 'str' to the detail (truncating; always NUL-terminated). Plain
 * copies rather than vsnprintf: denials are formatted on the hot path. */
static void dcat(struct model_decision *out, size_t *len, const char *str)
{
    size_t n = strlen(str);
    size_t room = sizeof(out->detail) - 1 - *len;

    if (n > room) {
        n = room;
    }
    memcpy(out->detail + *len, str, n);
    *len += n;
    out->detail[*len] = '\0';
}

static void dnum(struct model_decision *out, size_t *len, unsigned v)
{
    char buf[12];
    size_t i = sizeof(buf) - 1;

    buf[i] = '\0';
    do {
        buf[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0 && i > 0);
    dcat(out, len, buf + i);
}

/* Printable copy of untrusted text (bytes outside 0x20..0x7E become '?'). */
static const char *sanitize(const char *s, size_t len, char *buf, size_t cap)
{
    size_t n = len < cap - 1 ? len : cap - 1;

    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        buf[i] = (ch >= 0x20 && ch < 0x7F) ? (char)ch : '?';
    }
    buf[n] = '\0';
    return buf;
}

static const char *proto_name(const struct model_endpoint *e)
{
    switch (e->proto) {
    case MODEL_PROTO_NONE:
        return "none";
    case MODEL_PROTO_TCP:
        return "tcp";
    case MODEL_PROTO_REST:
        return "rest";
    case MODEL_PROTO_WEBSOCKET:
        return "websocket";
    case MODEL_PROTO_GRAPHQL:
        return "graphql";
    case MODEL_PROTO_SQL:
        return "sql";
    case MODEL_PROTO_JSONRPC:
        return "json-rpc";
    case MODEL_PROTO_MCP:
        return "mcp";
    }
    return "unknown";
}

static const char *target_why(enum model_target_status s)
{
    switch (s) {
    case MODEL_TARGET_OK:
    case MODEL_TARGET_BAD:
        return "malformed request target";
    case MODEL_TARGET_TRAVERSAL:
        return "path traversal above the root";
    case MODEL_TARGET_ENCODED_SLASH:
        return "encoded slash";
    case MODEL_TARGET_TOO_LONG:
        return "path too long";
    }
    return "malformed request target";
}

/* "GraphQL mutation CreateIssue {createIssue,viewer}" or "GraphQL persisted
 * query 'ID'": the request's operation, sanitized. */
static void gql_desc(const struct eval_ctx *c, struct model_decision *out, size_t *len)
{
    const struct model_gql_op *op = c->req->gql;
    char buf[96];

    if (op == NULL) {
        dcat(out, len, c->method);
        dcat(out, len, " ");
        dcat(out, len, c->path);
        return;
    }
    if (op->persisted_id != NULL) {
        dcat(out, len, "GraphQL persisted query '");
        dcat(out, len, sanitize(op->persisted_id, strlen(op->persisted_id), buf, sizeof(buf)));
        dcat(out, len, "'");
        return;
    }
    dcat(out, len, "GraphQL ");
    dcat(out, len, model_gql_optype_name(op->type));
    dcat(out, len, " ");
    dcat(out, len,
         op->name != NULL ? sanitize(op->name, strlen(op->name), buf, sizeof(buf)) : "(anonymous)");
    dcat(out, len, " {");
    for (size_t i = 0; i < op->nfields && op->fields != NULL; i++) {
        const char *f = op->fields[i] != NULL ? op->fields[i] : "";
        dcat(out, len, i > 0 ? "," : "");
        dcat(out, len, sanitize(f, strlen(f), buf, sizeof(buf)));
    }
    dcat(out, len, "}");
}

static bool gql_unit(const struct eval_ctx *c, const struct ix_ep *x)
{
    return x != NULL && (x->ep->proto == MODEL_PROTO_GRAPHQL ||
                         (x->ep->proto == MODEL_PROTO_WEBSOCKET && c->req->gql != NULL));
}

static void format_detail(const struct eval_ctx *c, const struct verdict *v,
                          struct model_decision *out)
{
    const struct ix_ep *x = v->unit != EVAL_NONE ? &c->ix->eps[v->unit] : NULL;
    const char *name = x != NULL ? model_rule_display_name(x->rule) : "";
    char ipbuf[64];
    char exe[160];
    size_t len = 0;

    out->detail[0] = '\0';
    switch (v->reason) {
    case MODEL_REASON_ALLOWED:
        return;
    case MODEL_REASON_AUDIT:
        dcat(out, &len, c->method);
        dcat(out, &len, " ");
        dcat(out, &len, c->path);
        dcat(out, &len, " allowed in audit mode by policy '");
        dcat(out, &len, name);
        dcat(out, &len, "'");
        return;
    case MODEL_REASON_NO_POLICY:
        dcat(out, &len, "network connections not allowed by policy");
        return;
    case MODEL_REASON_NO_ENDPOINT:
        /* An IPv6 host is bracketed so that host:port stays readable. */
        dcat(out, &len,
             c->host_is_ip && memchr(c->host, ':', c->host_len) != NULL ? "endpoint ["
                                                                        : "endpoint ");
        dcat(out, &len, c->host);
        dcat(out, &len, c->host_is_ip && memchr(c->host, ':', c->host_len) != NULL ? "]:" : ":");
        dnum(out, &len, c->req->port);
        dcat(out, &len, " is not allowed by any policy");
        return;
    case MODEL_REASON_BINARY: {
        /* One clause per rule with a matching endpoint, joined by "; ". */
        uint32_t last = EVAL_NONE;
        sanitize(c->nid > 0 ? c->req->binaries[0] : "", c->nid > 0 ? c->idlen[0] : 0, exe,
                 sizeof(exe));
        for (size_t i = 0; i < c->ncands; i++) {
            const struct ix_ep *cx = &c->ix->eps[c->cands[i]];
            if (cx->rule_idx == last) {
                continue;
            }
            last = cx->rule_idx;
            dcat(out, &len, len > 0 ? "; binary '" : "binary '");
            dcat(out, &len, exe);
            dcat(out, &len, "' not allowed in policy '");
            dcat(out, &len, model_rule_display_name(cx->rule));
            dcat(out, &len, "'");
        }
        if (len == 0 && x != NULL) {
            dcat(out, &len, "binary '");
            dcat(out, &len, exe);
            dcat(out, &len, "' not allowed in policy '");
            dcat(out, &len, name);
            dcat(out, &len, "'");
        }
        return;
    }
    case MODEL_REASON_BAD_HOST:
        dcat(out, &len, "invalid host '");
        if (c->req->host != NULL) {
            dcat(out, &len, sanitize(c->req->host, c->req->host_len, exe, sizeof(exe)));
        }
        dcat(out, &len, "'");
        return;
    case MODEL_REASON_BAD_TARGET:
        if (c->prep == PREP_BAD_METHOD || c->prep == PREP_TODO) {
            dcat(out, &len, "invalid HTTP method");
        } else {
            dcat(out, &len, "request target rejected: ");
            dcat(out, &len, target_why(c->target_status));
        }
        return;
    case MODEL_REASON_ENCODED_SLASH:
        dcat(out, &len, c->method);
        dcat(out, &len, " ");
        dcat(out, &len, c->path);
        dcat(out, &len,
             " contains an encoded slash (%2F); set allow_encoded_slash: true on "
             "this endpoint to permit it");
        return;
    case MODEL_REASON_NO_L7_PATH:
    case MODEL_REASON_L7_NOT_PERMITTED:
        if (v->reason == MODEL_REASON_L7_NOT_PERMITTED && gql_unit(c, x)) {
            gql_desc(c, out, &len);
        } else {
            dcat(out, &len, c->method);
            dcat(out, &len, " ");
            dcat(out, &len, c->path);
        }
        dcat(out, &len, " not permitted by policy");
        return;
    case MODEL_REASON_L7_DENY_RULE:
        if (gql_unit(c, x) && c->req->gql != NULL) {
            gql_desc(c, out, &len);
        } else {
            dcat(out, &len, c->method);
            dcat(out, &len, " ");
            dcat(out, &len, c->path);
        }
        dcat(out, &len, " blocked by deny rule");
        return;
    case MODEL_REASON_GQL_NO_OPERATION:
        dcat(out, &len, c->method);
        dcat(out, &len, " ");
        dcat(out, &len, c->path);
        dcat(out, &len, " is not a GraphQL operation; graphql endpoint of policy '");
        dcat(out, &len, name);
        dcat(out, &len, "' denies it");
        return;
    case MODEL_REASON_GQL_BAD_METHOD:
        gql_desc(c, out, &len);
        dcat(out, &len, " sent with ");
        dcat(out, &len, c->method);
        dcat(out, &len, ": GraphQL over HTTP allows POST, and GET for queries only");
        return;
    case MODEL_REASON_GQL_BAD_OPERATION:
        dcat(out, &len, "GraphQL operation with an invalid name or root field, or none");
        return;
    case MODEL_REASON_GQL_PERSISTED_DENIED:
        gql_desc(c, out, &len);
        dcat(out, &len, " denied: hash-only requests need persisted_queries: allow_registered");
        return;
    case MODEL_REASON_GQL_PERSISTED_UNKNOWN:
        gql_desc(c, out, &len);
        dcat(out, &len, " is not in graphql_persisted_queries of policy '");
        dcat(out, &len, name);
        dcat(out, &len, "'");
        return;
    case MODEL_REASON_L7_UNSUPPORTED: {
        const char *pn = x != NULL ? proto_name(x->ep) : "unknown";
        dcat(out, &len, "protocol ");
        dcat(out, &len, pn);
        dcat(out, &len, " is not inspected by proviso-proxy; enforced ");
        dcat(out, &len, pn);
        dcat(out, &len, " endpoints deny all requests");
        return;
    }
    case MODEL_REASON_BAD_QUERY:
        dcat(out, &len, "malformed query string");
        return;
    case MODEL_REASON_DEST_PORT:
        dcat(out, &len, "port ");
        dnum(out, &len, c->req->port);
        dcat(out, &len, " is a blocked control-plane port, connection rejected");
        return;
    case MODEL_REASON_DEST_UNRESOLVED:
        dcat(out, &len, "target_sandbox '");
        dcat(out, &len,
             x != NULL && x->ep->target_sandbox.s != NULL ? x->ep->target_sandbox.s : "");
        dcat(out, &len, "' of policy '");
        dcat(out, &len, name);
        dcat(out, &len, "' is not resolved, connection rejected");
        return;
    case MODEL_REASON_DEST_BLOCKED:
    case MODEL_REASON_DEST_INTERNAL:
    case MODEL_REASON_DEST_ALLOWED_IPS:
        break;
    }
    if (c->dest != NULL) {
        model_ip_format(c->dest, ipbuf, sizeof(ipbuf));
    } else {
        memcpy(ipbuf, "(unresolved)", sizeof("(unresolved)"));
    }
    dcat(out, &len, c->host);
    if (v->reason == MODEL_REASON_DEST_BLOCKED) {
        dcat(out, &len, " resolves to always-blocked address ");
        dcat(out, &len, ipbuf);
    } else if (v->reason == MODEL_REASON_DEST_INTERNAL) {
        dcat(out, &len, " resolves to internal address ");
        dcat(out, &len, ipbuf);
    } else {
        dcat(out, &len, " resolves to ");
        dcat(out, &len, ipbuf);
        dcat(out, &len, " which is not in allowed_ips");
    }
    dcat(out, &len, ", connection rejected");
}

/* Rank of a denial, to report the most informative one among identities. */
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
    format_detail(c, v, out);
}

static void decide_early(struct model_decision *out, enum model_reason reason, const char *msg)
{
    size_t len = 0;

    out->reason = reason;
    dcat(out, &len, msg);
}

/*= docs/semantics.md#identity-any
 *# a request by identity *{x₁ … xₙ}* is allowed iff the same request by some
 *# single *xᵢ* is allowed. */
void model_decide(const struct model_policy *p, const struct model_request *req,
                  struct model_decision *out)
{
    struct eval_ctx c;
    struct verdict best;
    bool have = false;

    if (out == NULL) {
        return;
    }
    out->allow = false;
    out->grant = false;
    out->reason = MODEL_REASON_NO_POLICY;
    out->route = MODEL_ROUTE_NONE;
    out->rule = NULL;
    out->endpoint = NULL;
    out->binary = NULL;
    out->detail[0] = '\0';
    if (p == NULL || req == NULL || !p->compiled || p->index == NULL) {
        decide_early(out, MODEL_REASON_NO_POLICY, "policy not compiled");
        return;
    }
    if (p->nrules == 0) {
        decide_early(out, MODEL_REASON_NO_POLICY, "network connections not allowed by policy");
        return;
    }
    if (req->nbinaries > MODEL_MAX_IDENTITY || (req->nbinaries > 0 && req->binaries == NULL)) {
        decide_early(out, MODEL_REASON_BINARY, "binary identity has too many entries");
        return;
    }
    c.p = p;
    c.ix = p->index;
    c.req = req;
    c.prep = PREP_TODO;
    c.target_status = MODEL_TARGET_OK;
    c.method[0] = '\0';
    c.method_len = 0;
    c.method_head = false;
    c.path[0] = '\0';
    c.path_len = 0;
    c.enc_slash = false;
    c.qbuf = c.qstore;
    c.qlen = 0;
    c.gq = gql_check(req->gql);
    c.nid = req->nbinaries;
    c.idok = 0;
    for (size_t k = 0; k < c.nid; k++) {
        if (req->binaries[k] == NULL) {
            decide_early(out, MODEL_REASON_BINARY, "binary identity has a NULL entry");
            return;
        }
        c.idlen[k] = strlen(req->binaries[k]);
        /* An entry that is not a canonical path matches no binary pattern. */
        if (exe_path_canonical(req->binaries[k], c.idlen[k])) {
            c.idok |= 1u << k;
        }
    }
    /*= docs/semantics.md#host-normalise
     *# A request host is normalised before anything else */
    if (req->host == NULL ||
        !model_host_normalize(req->host, req->host_len, c.host, sizeof(c.host), &c.host_len,
                              &c.host_is_ip, &c.host_ip) ||
        c.host_len >= sizeof(c.host) || (!c.host_is_ip && !dns_name_ok(c.host, c.host_len))) {
        char hb[160];
        size_t len = 0;
        out->reason = MODEL_REASON_BAD_HOST;
        dcat(out, &len, "invalid host '");
        if (req->host != NULL) {
            dcat(out, &len, sanitize(req->host, req->host_len, hb, sizeof(hb)));
        }
        dcat(out, &len, "'");
        return;
    }
    c.host[c.host_len] = '\0';
    /*= docs/semantics.md#link-local
     *# A host is **link-local** when it is an IP host in a link-local range
     *# (any of the forms above) or a known metadata host name */
    c.host_ll = c.host_is_ip ? model_ip_is_link_local(&c.host_ip)
                             : model_host_is_metadata_name(c.host, c.host_len);
    c.dest = req->dest != NULL ? req->dest : (c.host_is_ip ? &c.host_ip : NULL);
    collect(&c);
    if (c.ncands == 0 && !c.scan) {
        best = verdict_deny(MODEL_REASON_NO_ENDPOINT, MODEL_ROUTE_NONE, EVAL_NONE, 0);
        decide_fill(&c, &best, out);
        return;
    }
    if (!c.scan) {
        compute_masks(&c);
    }
    best = verdict_deny(MODEL_REASON_BINARY, MODEL_ROUTE_NONE, first_host_match(&c), 0);
    for (size_t k = 0; k < c.nid; k++) {
        struct verdict v = eval_identity(&c, k);
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
    decide_fill(&c, &best, out);
}
