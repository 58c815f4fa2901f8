/* SPDX-License-Identifier: Apache-2.0 */
/* prover_units.c - units of a policy, the delta between two, and the slice
 *
 * A unit is one (binary pattern, endpoint) pair of a rule
 * (docs/semantics.md#routes). Two units are equal when the binary text and
 * the endpoint fingerprint (model_endpoint_fingerprint: everything that
 * carries authority, nothing that does not) are equal; rule keys and names do
 * not matter. Units are a set: a duplicate allows nothing more.
 *
 * Delta units are the units present on one side only. A request whose
 * (binary, host, port) lies in no delta unit's region meets exactly the same
 * units in B and C, so B and C decide it alike: every question is asked
 * inside the delta region, and only units that overlap a delta unit (binary
 * languages intersect, host languages intersect or one is hostless, ports
 * intersect) can influence the answer. That is the slice.
 *
 * The rules a candidate kept as they were (pairs) need not be collected:
 * their units are never delta, and they are added only where the slice may
 * keep them (see "Pairs" below), so a one-rule change to 10,000 rules
 * materialises a handful of units.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/pv_hash.h"
#include "prover/prover_int.h"

void prover_units_free(struct prover_units *us)
{
    free(us->u);
    free(us->tab);
    free(us->pair);
    free(us->bpaired);
    free(us->kept);
    free(us->u2);
    pv_dynbuf_free(&us->arena);
    memset(us, 0, sizeof(*us));
}

void prover_units_recycle(struct prover_units *spare, struct prover_units *us)
{
    prover_units_free(spare);
    *spare = *us;
    spare->n = spare->ndelta = spare->nrel = spare->nkept = 0;
    spare->paired = false;
    spare->pol[0] = spare->pol[1] = NULL;
    pv_dynbuf_reset(&spare->arena);
    memset(us, 0, sizeof(*us));
}

/* The units of rule 'r' (index 'ri' of its policy): one per binary pattern
 * and endpoint. */
static pv_result collect_rule(struct prover_units *us, const struct model_rule *r, size_t ri,
                              enum prover_side side) PV_WUR;
static pv_result collect_rule(struct prover_units *us, const struct model_rule *r, size_t ri,
                              enum prover_side side)
{
    size_t ne = model_rule_nendpoints(r);
    size_t nb = model_rule_nbinaries(r);

    for (size_t j = 0; j < ne; j++) {
        const struct model_endpoint *e = model_rule_endpoint(r, j);
        struct model_endpoint_view v;
        size_t off = us->arena.len;
        uint64_t fph;
        const char *star;
        const char *hsfx;

        if (nb == 0) {
            /*= docs/semantics.md#binaries-empty
             *# A rule with an empty or missing `binaries` list matches **no** binary. */
            continue;
        }
        model_endpoint_view(e, &v);
        /* the slice's host keys, once per endpoint rather than per unit */
        star = v.host != NULL && !v.host_is_ip ? strrchr(v.host, '*') : NULL;
        hsfx = star != NULL ? strchr(star, '.') : NULL;
        if (v.host == NULL && v.ncidrs == 0 && v.target_sandbox == NULL) {
            /*= docs/semantics.md#hostless
             *# An endpoint with an empty host and a non-empty `allowed_ips` is *hostless* */
            /* An empty host without allowed_ips or target_sandbox matches nothing. */
            continue;
        }
        if (v.fp == NULL) {
            /* not compiled: compute it here */
            PV_GUARD(model_endpoint_fingerprint_append(e, &us->arena));
        }
        /* a compiled endpoint carries its fingerprint's hash (same seed) */
        fph = v.fp != NULL
                  ? v.fphash
                  : pv_hash64(us->arena.buf + off, us->arena.len - off, MODEL_FP_HASH_SEED);
        for (size_t k = 0; k < nb; k++) {
            const char *b = model_rule_binary(r, k);
            const struct model_glob *bg = model_rule_binary_glob(r, k);
            struct prover_unit *u;

            if (b == NULL || bg == NULL) {
                continue;
            }
            PROVER_GROW(us->u, us->cap, us->n);
            u = &us->u[us->n++];
            memset(u, 0, sizeof(*u));
            u->side = side;
            u->rule = r;
            u->ri = ri;
            u->ep = e;
            u->v = v;
            u->bin = b;
            u->bglob = bg;
            u->fpoff = v.fp != NULL ? SIZE_MAX : off;
            u->fplen = v.fp != NULL ? v.fplen : us->arena.len - off;
            u->fp = v.fp;
            u->hash = pv_hash64(b, strlen(b), fph);
            u->l7 = model_protocol_is_l7(v.proto) && !v.tls_skip;
            u->hstar = star != NULL;
            u->hsfx = hsfx;
            u->bpat = u->hpat = u->hip = u->spat = SIZE_MAX;
        }
    }
    return PV_RESULT_OK;
}

pv_result prover_units_collect(struct prover_units *us, const struct model_policy *p,
                               enum prover_side side)
{
    if (us->arena.toobig == 0) {
        pv_dynbuf_init(&us->arena, (size_t)1 << 31);
    }
    for (size_t i = 0; i < model_policy_nrules(p); i++) {
        PV_GUARD(collect_rule(us, model_policy_rule(p, i), i, side));
    }
    return PV_RESULT_OK;
}

void prover_units_seal(struct prover_units *us)
{
    for (size_t i = 0; i < us->n; i++) {
        if (us->u[i].fpoff != SIZE_MAX) {
            us->u[i].fp = us->arena.buf + us->u[i].fpoff;
        }
    }
}

static bool unit_eq(const struct prover_unit *a, const struct prover_unit *b)
{
    return a->hash == b->hash && a->fplen == b->fplen && strcmp(a->bin, b->bin) == 0 &&
           memcmp(a->fp, b->fp, a->fplen) == 0;
}

/* Open addressing over unit indexes, one table per side. */
static pv_result delta_table(struct prover_units *us) PV_WUR;
static pv_result delta_table(struct prover_units *us)
{
    size_t cap = 16;
    size_t *tab[2];
    pv_result r = PV_RESULT_OK;

    while (cap < us->n * 2 + 2) {
        cap *= 2;
    }
    if (us->tabcap < cap) {
        free(us->tab);
        us->tabcap = 0;
        us->tab = pv_malloc(2 * cap * sizeof(size_t));
        PV_GUARD_PTR(us->tab);
        us->tabcap = cap;
    }
    /* The tables use the first 'cap' slots of each half of the buffer. */
    tab[0] = us->tab;
    tab[1] = us->tab + us->tabcap;
    memset(tab[0], 0xff, cap * sizeof(size_t));
    memset(tab[1], 0xff, cap * sizeof(size_t));
    for (size_t i = 0; i < us->n; i++) {
        size_t *t = tab[us->u[i].side];
        size_t j = (size_t)us->u[i].hash & (cap - 1);

        while (t[j] != SIZE_MAX && !unit_eq(&us->u[t[j]], &us->u[i])) {
            j = (j + 1) & (cap - 1);
        }
        if (t[j] == SIZE_MAX) {
            t[j] = i;
        }
    }
    us->ndelta = 0;
    for (size_t i = 0; i < us->n; i++) {
        struct prover_unit *u = &us->u[i];
        size_t *t = tab[1 - u->side];
        size_t j = (size_t)u->hash & (cap - 1);

        while (t[j] != SIZE_MAX && !unit_eq(&us->u[t[j]], u)) {
            j = (j + 1) & (cap - 1);
        }
        u->delta = t[j] == SIZE_MAX;
        us->ndelta += u->delta;
    }
    return r;
}

pv_result prover_units_delta(struct prover_units *us)
{
    /* paired units: prover_units_pair marked the delta already */
    return us->paired ? PV_RESULT_OK : delta_table(us);
}

static bool ports_overlap(const struct model_endpoint_view *a, const struct model_endpoint_view *b)
{
    size_t i = 0;
    size_t j = 0;

    while (i < a->nports && j < b->nports) {
        if (a->ports[i] == b->ports[j]) {
            return true;
        }
        if (a->ports[i] < b->ports[j]) {
            i++;
        } else {
            j++;
        }
    }
    return false;
}

/* Cheap necessary conditions for two glob languages to intersect. Every
 * host a wildcard matches ends with the labels after its last wildcard
 * label; every string a glob matches starts with its literal prefix (the
 * text before its first metacharacter, in every glob syntax). */
static bool host_suffix_compatible(const char *a, const char *b)
{
    const char *sa = strrchr(a, '*');
    const char *sb = strrchr(b, '*');
    size_t la, lb;

    sa = sa != NULL ? strchr(sa, '.') : NULL;
    sb = sb != NULL ? strchr(sb, '.') : NULL;
    if (sa == NULL || sb == NULL) {
        return true;
    }
    la = strlen(sa);
    lb = strlen(sb);
    /* both start with '.', so a plain suffix compare is label aligned */
    return la <= lb ? strcmp(sb + (lb - la), sa) == 0 : strcmp(sa + (la - lb), sb) == 0;
}

/* Do the literal prefixes of two globs agree as far as both go? */
static bool prefix_compatible(const struct model_glob *a, const struct model_glob *b)
{
    const char *ta = model_glob_text(a);
    const char *tb = model_glob_text(b);
    size_t la = model_glob_literal_prefix(model_glob_kind_of(a), ta, strlen(ta));
    size_t lb = model_glob_literal_prefix(model_glob_kind_of(b), tb, strlen(tb));

    return strncmp(ta, tb, la < lb ? la : lb) == 0;
}

bool prover_glob_disjoint_cheap(const struct model_glob *a, const struct model_glob *b,
                                enum model_domain dom)
{
    bool la, lb;
    const char *ta, *tb;

    if (a == NULL || b == NULL || a == b) {
        return false;
    }
    la = model_glob_is_literal(a);
    lb = model_glob_is_literal(b);
    ta = model_glob_text(a);
    tb = model_glob_text(b);
    if (la && lb) {
        return strcmp(ta, tb) != 0;
    }
    if (la || lb) {
        const char *s = la ? ta : tb;

        return !model_glob_match(la ? b : a, s, strlen(s));
    }
    if (!prefix_compatible(a, b)) {
        return true;
    }
    return dom == MODEL_DOMAIN_DNS_NAME && !host_suffix_compatible(ta, tb);
}

bool prover_glob_subset_cheap(const struct model_glob *a, const struct model_glob *b,
                              enum model_domain dom)
{
    const char *ta, *tb, *sa;
    size_t la, lb;

    if (a == NULL || b == NULL) {
        return false;
    }
    ta = model_glob_text(a);
    tb = model_glob_text(b);
    if (a == b || strcmp(ta, tb) == 0) {
        return true;
    }
    if (model_glob_is_literal(a)) {
        return model_glob_match(b, ta, strlen(ta));
    }
    if (dom != MODEL_DOMAIN_DNS_NAME || strncmp(tb, "**.", 3) != 0 ||
        model_glob_literal_prefix(model_glob_kind_of(b), tb + 3, strlen(tb + 3)) !=
            strlen(tb + 3)) {
        return false;
    }
    /* b is "**.S" with S literal: every name with a label before ".S". Every
     * name a matches has a label (its last wildcard label) before its
     * literal suffix; when that suffix ends with ".S", a's names are b's. */
    sa = strrchr(ta, '*');
    sa = sa != NULL ? strchr(sa, '.') : NULL;
    if (sa == NULL) {
        return false;
    }
    la = strlen(sa);
    lb = strlen(tb + 2); /* ".S" */
    return la >= lb && strcmp(sa + (la - lb), tb + 2) == 0;
}

pv_result prover_glob_overlap(const struct model_glob *a, const struct model_glob *b,
                              enum model_domain dom, size_t *budget, bool *out)
{
    struct model_lang_term t[2];

    if (prover_glob_disjoint_cheap(a, b, dom)) {
        *out = false; /* a necessary condition failed */
        return PV_RESULT_OK;
    }
    if (model_glob_is_literal(a) || model_glob_is_literal(b) ||
        strcmp(model_glob_text(a), model_glob_text(b)) == 0) {
        *out = true; /* the cheap test is exact for a literal; equal texts meet */
        return PV_RESULT_OK;
    }
    PV_ENSURE(*budget > 0, PV_ERR_LIMIT);
    (*budget)--;
    t[0].g = a;
    t[0].positive = true;
    t[1].g = b;
    t[1].positive = true;
    switch (model_lang_check(dom, t, 2, PROVER_MAX_LANG_STATES, NULL, NULL)) {
    case MODEL_LANG_EMPTY:
        *out = false;
        return PV_RESULT_OK;
    case MODEL_LANG_NONEMPTY:
        *out = true;
        return PV_RESULT_OK;
    case MODEL_LANG_LIMIT:
        PV_BAIL(PV_ERR_LIMIT);
    case MODEL_LANG_NOMEM:
        PV_BAIL(PV_ERR_NOMEM);
    }
    PV_BAIL(PV_ERR_INTERNAL);
}

pv_result prover_units_overlap(const struct prover_unit *a, const struct prover_unit *b,
                               size_t *budget, bool *out)
{
    const struct model_endpoint_view *va = &a->v;
    const struct model_endpoint_view *vb = &b->v;

    *out = false;
    if (!ports_overlap(va, vb)) {
        return PV_RESULT_OK;
    }
    if (va->host != NULL && vb->host != NULL) {
        if (va->host_is_ip || vb->host_is_ip) {
            if (!(va->host_is_ip && vb->host_is_ip) ||
                memcmp(&va->host_ip, &vb->host_ip, sizeof(va->host_ip)) != 0) {
                return PV_RESULT_OK;
            }
        } else {
            bool ho;

            PV_GUARD(prover_glob_overlap(va->host_glob, vb->host_glob, MODEL_DOMAIN_DNS_NAME,
                                         budget, &ho));
            if (!ho) {
                return PV_RESULT_OK;
            }
        }
    }
    return prover_glob_overlap(a->bglob, b->bglob, MODEL_DOMAIN_ABS_PATH, budget, out);
}

/* ---------------------------------------------------------------------------
 * The slice index: delta units by host key
 *
 * A host pattern can only overlap another whose key it shares: an IP host
 * its address; a literal DNS name itself and every label suffix (".b.c",
 * ".c" of "a.b.c"); a wildcard the literal suffix after its last wildcard
 * label (every name it matches ends with it). So the delta units that can
 * overlap a unit u are the hostless ones, and those found under u's keys:
 *   u literal h:   literal deltas under h, wildcard deltas under each label
 *                  suffix of h;
 *   u wildcard S:  wildcard deltas under each label suffix of S, and
 *                  literal or wildcard deltas under S as one of their own
 *                  label suffixes;
 *   u IP:          IP deltas under the address;
 *   u hostless:    every delta unit.
 * Each candidate is then checked exactly (prover_units_overlap); the index
 * only skips pairs whose host languages cannot meet.
 * ------------------------------------------------------------------------- */

enum skind { SK_IP, SK_LIT, SK_WILD, SK_SUB };

struct sentry {
    uint64_t h;
    const char *k;
    size_t len;
    size_t d; /* delta unit index */
};

struct sindex {
    struct sentry *e;
    size_t n, cap;
    /* per key kind, bit min(len, 63) for every key length present: most
     * probes of a large policy are ruled out by their length alone, before
     * any hashing (the index holds only the few delta units' keys) */
    uint64_t lens[4];
    size_t *hostless;
    size_t nhostless;
};

static uint64_t skey_hash(enum skind kind, const char *k, size_t len)
{
    return pv_hash64(k, len, 0x51ce + (uint64_t)kind);
}

static pv_result sindex_add(struct sindex *ix, enum skind kind, const char *k, size_t len,
                            size_t d) PV_WUR;
static pv_result sindex_add(struct sindex *ix, enum skind kind, const char *k, size_t len, size_t d)
{
    PROVER_GROW(ix->e, ix->cap, ix->n);
    ix->lens[kind] |= (uint64_t)1 << (len < 63 ? len : 63);
    ix->e[ix->n].h = skey_hash(kind, k, len);
    ix->e[ix->n].k = k;
    ix->e[ix->n].len = len;
    ix->e[ix->n].d = d;
    ix->n++;
    return PV_RESULT_OK;
}

static int sentry_cmp(const void *a, const void *b)
{
    uint64_t x = ((const struct sentry *)a)->h;
    uint64_t y = ((const struct sentry *)b)->h;

    return x < y ? -1 : x > y;
}

/* Every label suffix ".x.y" of 's' (from its first dot on), 'sub' included. */
static pv_result sindex_add_subs(struct sindex *ix, const char *s, size_t d) PV_WUR;
static pv_result sindex_add_subs(struct sindex *ix, const char *s, size_t d)
{
    for (const char *p = strchr(s, '.'); p != NULL; p = strchr(p + 1, '.')) {
        PV_GUARD(sindex_add(ix, SK_SUB, p, strlen(p), d));
    }
    return PV_RESULT_OK;
}

static pv_result sindex_build(struct sindex *ix, const struct prover_units *us) PV_WUR;
static pv_result sindex_build(struct sindex *ix, const struct prover_units *us)
{
    ix->hostless = pv_calloc(us->ndelta + 1, sizeof(size_t));
    PV_GUARD_PTR(ix->hostless);
    for (size_t i = 0; i < us->n; i++) {
        const struct prover_unit *u = &us->u[i];
        const char *h = u->v.host;

        if (!u->delta) {
            continue;
        }
        if (h == NULL) {
            ix->hostless[ix->nhostless++] = i;
        } else if (u->v.host_is_ip) {
            PV_GUARD(sindex_add(ix, SK_IP, (const char *)u->v.host_ip.b, 16, i));
        } else if (u->hsfx != NULL) {
            PV_GUARD(sindex_add(ix, SK_WILD, u->hsfx, strlen(u->hsfx), i));
            PV_GUARD(sindex_add_subs(ix, u->hsfx, i));
        } else if (u->hstar) {
            /* a wildcard in the last label: no literal suffix (rejected by
             * the validator); treat it like a hostless unit, exactly */
            ix->hostless[ix->nhostless++] = i;
        } else {
            PV_GUARD(sindex_add(ix, SK_LIT, h, strlen(h), i));
            PV_GUARD(sindex_add_subs(ix, h, i));
        }
    }
    if (ix->n > 1) {
        qsort(ix->e, ix->n, sizeof(ix->e[0]), sentry_cmp);
    }
    return PV_RESULT_OK;
}

static void sindex_free(struct sindex *ix)
{
    free(ix->e);
    free(ix->hostless);
    memset(ix, 0, sizeof(*ix));
}

/* prover_units_overlap; with 'budget' NULL only its first, port check: may
 * the two overlap? (a false answer is the exact check's, and costs it no
 * budget) */
static pv_result overlap_or_may(const struct prover_unit *a, const struct prover_unit *b,
                                size_t *budget, bool *out) PV_WUR;
static pv_result overlap_or_may(const struct prover_unit *a, const struct prover_unit *b,
                                size_t *budget, bool *out)
{
    if (budget == NULL) {
        *out = ports_overlap(&a->v, &b->v);
        return PV_RESULT_OK;
    }
    return prover_units_overlap(a, b, budget, out);
}

static size_t uf_find(size_t *uf, size_t x)
{
    while (uf[x] != x) {
        uf[x] = uf[uf[x]];
        x = uf[x];
    }
    return x;
}

/* One candidate delta unit 'd' for 'u'. Without 'uf': overlap_or_may, and
 * '*hit' on overlap. With 'uf' (the components' union-find over units):
 * join the two when they overlap, and never set '*hit', so that every
 * candidate is visited; a pair already joined is not checked again. */
static pv_result visit(const struct prover_units *us, const struct prover_unit *u, size_t d,
                       size_t *budget, bool *hit, size_t *uf) PV_WUR;
static pv_result visit(const struct prover_units *us, const struct prover_unit *u, size_t d,
                       size_t *budget, bool *hit, size_t *uf)
{
    size_t a, b;
    bool o = false;

    if (uf == NULL) {
        return overlap_or_may(u, &us->u[d], budget, hit);
    }
    a = uf_find(uf, (size_t)(u - us->u));
    b = uf_find(uf, d);
    if (a == b) {
        return PV_RESULT_OK;
    }
    PV_GUARD(prover_units_overlap(u, &us->u[d], budget, &o));
    if (o) {
        uf[a > b ? a : b] = a > b ? b : a;
    }
    return PV_RESULT_OK;
}

/* Check u against the delta units under one key; '*hit' on overlap. */
static pv_result probe(const struct sindex *ix, const struct prover_units *us,
                       const struct prover_unit *u, enum skind kind, const char *k, size_t len,
                       size_t *budget, bool *hit, size_t *uf) PV_WUR;
static pv_result probe(const struct sindex *ix, const struct prover_units *us,
                       const struct prover_unit *u, enum skind kind, const char *k, size_t len,
                       size_t *budget, bool *hit, size_t *uf)
{
    uint64_t h;
    size_t lo = 0;
    size_t hi = ix->n;

    if ((ix->lens[kind] & ((uint64_t)1 << (len < 63 ? len : 63))) == 0) {
        return PV_RESULT_OK; /* no key of this kind has this length */
    }
    h = skey_hash(kind, k, len);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (ix->e[mid].h < h) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    for (size_t i = lo; i < ix->n && ix->e[i].h == h && !*hit; i++) {
        if (ix->e[i].len != len || memcmp(ix->e[i].k, k, len) != 0) {
            continue;
        }
        PV_GUARD(visit(us, u, ix->e[i].d, budget, hit, uf));
    }
    return PV_RESULT_OK;
}

/* Does 'u' overlap a delta unit? With 'budget' NULL: may it, that is, does
 * the index offer it a delta unit on one of its ports (no exact check is
 * made, no budget is spent; a unit for which this is false is never in the
 * slice, and its exact check would have spent no budget either). */
static pv_result unit_rel(const struct sindex *ix, const struct prover_units *us,
                          const size_t *delta, size_t nd, const struct prover_unit *u,
                          size_t *budget, bool *hit, size_t *uf) PV_WUR;
static pv_result unit_rel(const struct sindex *ix, const struct prover_units *us,
                          const size_t *delta, size_t nd, const struct prover_unit *u,
                          size_t *budget, bool *hit, size_t *uf)
{
    const char *h = u->v.host;
    const char *sfx = u->hsfx; /* NULL for IP hosts and hostless units */
    size_t sl;
    const char *p;

    *hit = false;
    for (size_t k = 0; k < ix->nhostless && !*hit; k++) {
        PV_GUARD(visit(us, u, ix->hostless[k], budget, hit, uf));
    }
    if (h == NULL || (sfx == NULL && u->hstar)) {
        /* hostless (or a wildcard without a literal suffix): every delta */
        for (size_t k = 0; k < nd && !*hit; k++) {
            PV_GUARD(visit(us, u, delta[k], budget, hit, uf));
        }
        return PV_RESULT_OK;
    }
    if (u->v.host_is_ip) {
        return probe(ix, us, u, SK_IP, (const char *)u->v.host_ip.b, 16, budget, hit, uf);
    }
    /* a label suffix's length is the rest of the string's: measure once */
    if (sfx == NULL) {
        size_t hl = strlen(h);

        PV_GUARD(probe(ix, us, u, SK_LIT, h, hl, budget, hit, uf));
        for (p = strchr(h, '.'); p != NULL && !*hit; p = strchr(p + 1, '.')) {
            PV_GUARD(probe(ix, us, u, SK_WILD, p, hl - (size_t)(p - h), budget, hit, uf));
        }
        return PV_RESULT_OK;
    }
    /* cppcheck-suppress nullPointerRedundantCheck ; the sfx == NULL branch above returns */
    sl = strlen(sfx);
    p = sfx; /* it starts with a dot: itself, then each shorter suffix */
    do {
        PV_GUARD(probe(ix, us, u, SK_WILD, p, sl - (size_t)(p - sfx), budget, hit, uf));
        p = strchr(p + 1, '.');
    } while (p != NULL && !*hit);
    if (!*hit) {
        PV_GUARD(probe(ix, us, u, SK_SUB, sfx, sl, budget, hit, uf));
    }
    return PV_RESULT_OK;
}

/* ---------------------------------------------------------------------------
 * Pairs: the rules a candidate kept as they were
 *
 * A candidate is mostly its baseline: a proposal changes one rule of ten
 * thousand. A C rule with the same binary texts and the same endpoint
 * fingerprints, in order, as a B rule has the same units, so none of its
 * units (nor of its twin's) is delta, and the two copies overlap the same
 * delta units. Such pairs are materialised only when the slice may keep
 * them; every other rule is collected as without pairs, so pairing changes
 * what is materialised, never an answer. Only compiled policies are paired
 * (their rules carry their fingerprints, model_rule_fp). At 10,000 rules
 * these passes are bound by memory, not instructions (every rule, endpoint
 * and string is its own allocation), so they touch as little as they can:
 *
 *   1. pair_rules: walk both rule lists (sorted by key) and pair the rules
 *      whose fingerprints (model_rule_fp) have the same hash and length,
 *      reading no string;
 *   2. collect the units of the unpaired rules, and their delta among
 *      themselves (delta_table);
 *   3. check_pairs: one pass over the pairs compares each exactly (the
 *      rule fingerprints; a pair that differs is undone and the pass
 *      starts again), clears the delta of a collected unit equal to
 *      one of a pair's, and keeps the pairs whose endpoints the slice index
 *      offers a delta unit to check (unit_rel without a budget).
 *
 * The index of step 3 holds the delta units before they are cleared, so a
 * pair may be kept needlessly, never left out; the slice then checks kept
 * units exactly, as any other, in the order a full collect has (add_kept).
 * A pair left out is one whose exact check would find no overlap and spend
 * no lang-check budget, so the slice and the budget left are the same.
 * ------------------------------------------------------------------------- */

bool prover_units_pairable(const struct model_policy *B, const struct model_policy *C)
{
    return B != NULL && C != NULL && model_policy_network_digest(B)[0] != '\0' &&
           model_policy_network_digest(C)[0] != '\0';
}

/* The pairing guess: rule fingerprints of the same length and hash (read
 * from the rule structs, which lie in one array). */
static bool rules_alike(const struct model_rule *a, const struct model_rule *b)
{
    size_t la, lb;
    uint64_t ha, hb;
    const char *fa = model_rule_fp(a, &la, &ha);
    const char *fb = model_rule_fp(b, &lb, &hb);

    return fa != NULL && fb != NULL && la == lb && ha == hb;
}

/* The exact check of two alike rules: equal fingerprints, so the same
 * binary texts and endpoint fingerprints in order, so the same units. */
static bool rules_equal(const struct model_rule *a, const struct model_rule *b)
{
    size_t la, lb;
    uint64_t ha, hb;
    const char *fa = model_rule_fp(a, &la, &ha);
    const char *fb = model_rule_fp(b, &lb, &hb);

    return la == lb && memcmp(fa, fb, la) == 0;
}

/* Room for 'n' elements of 'elsize' in '*arr' (contents not kept). */
static pv_result reserve(void **arr, size_t *cap, size_t n, size_t elsize) PV_WUR;
static pv_result reserve(void **arr, size_t *cap, size_t n, size_t elsize)
{
    void *na;

    if (n <= *cap) {
        return PV_RESULT_OK;
    }
    PV_ENSURE(n <= SIZE_MAX / elsize, PV_ERR_NOMEM);
    na = pv_realloc(*arr, n * elsize);
    PV_GUARD_PTR(na);
    *arr = na;
    *cap = n;
    return PV_RESULT_OK;
}

static int key_cmp(const struct model_rule *a, const struct model_rule *b)
{
    const char *x = model_rule_key(a);
    const char *y = model_rule_key(b);

    return strcmp(x != NULL ? x : "", y != NULL ? y : "");
}

/* Step 1. Both lists are sorted by key (model_policy_validate): a merge.
 * Alike rules are paired whatever their keys; otherwise the keys say which
 * list has a rule the other has not. Each B rule is paired at most once. */
static pv_result pair_rules(struct prover_units *us) PV_WUR;
static pv_result pair_rules(struct prover_units *us)
{
    const struct model_policy *B = us->pol[PROVER_SIDE_B];
    const struct model_policy *C = us->pol[PROVER_SIDE_C];
    size_t nb = model_policy_nrules(B);
    size_t nc = model_policy_nrules(C);
    size_t i = 0;
    size_t j = 0;

    PV_GUARD(reserve((void **)&us->pair, &us->paircap, nc + 1, sizeof(size_t)));
    PV_GUARD(reserve((void **)&us->bpaired, &us->bpcap, nb + 1, sizeof(bool)));
    memset(us->pair, 0xff, (nc + 1) * sizeof(size_t));
    memset(us->bpaired, 0, (nb + 1) * sizeof(bool));
    while (i < nb && j < nc) {
        const struct model_rule *rb = model_policy_rule(B, i);
        const struct model_rule *rc = model_policy_rule(C, j);
        int c;

        if (rules_alike(rb, rc)) {
            us->pair[j++] = i;
            us->bpaired[i++] = true;
            continue;
        }
        c = key_cmp(rb, rc);
        i += c <= 0;
        j += c >= 0;
    }
    return PV_RESULT_OK;
}

/* Step 2: the units of the unpaired rules, in rule order, and their delta. */
static pv_result collect_unpaired(struct prover_units *us) PV_WUR;
static pv_result collect_unpaired(struct prover_units *us)
{
    const struct model_policy *B = us->pol[PROVER_SIDE_B];
    const struct model_policy *C = us->pol[PROVER_SIDE_C];

    us->n = 0;
    pv_dynbuf_reset(&us->arena);
    for (size_t i = 0; i < model_policy_nrules(B); i++) {
        if (!us->bpaired[i]) {
            PV_GUARD(collect_rule(us, model_policy_rule(B, i), i, PROVER_SIDE_B));
        }
    }
    for (size_t j = 0; j < model_policy_nrules(C); j++) {
        if (us->pair[j] == SIZE_MAX) {
            PV_GUARD(collect_rule(us, model_policy_rule(C, j), j, PROVER_SIDE_C));
        }
    }
    prover_units_seal(us);
    return delta_table(us);
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a;
    uint64_t y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* A delta unit equal to a unit of pair endpoint 'v' (binaries of 'r') is
 * on both sides after all. */
static void undelta_endpoint(struct prover_units *us, const struct model_rule *r,
                             const struct model_endpoint_view *v)
{
    for (size_t i = 0; i < us->n; i++) {
        struct prover_unit *u = &us->u[i];

        if (!u->delta || u->fplen != v->fplen || memcmp(u->fp, v->fp, v->fplen) != 0) {
            continue;
        }
        for (size_t k = 0; k < model_rule_nbinaries(r) && u->delta; k++) {
            const char *b = model_rule_binary(r, k);

            u->delta =
                !(b != NULL && model_rule_binary_glob(r, k) != NULL && strcmp(b, u->bin) == 0);
        }
    }
}

/* What step 3 looks things up in: the delta units (as step 2 left them) by
 * fingerprint hash and by host key. */
struct pairs_ctx {
    struct sindex ix;
    size_t *delta;
    size_t nd;
    uint64_t *fph; /* sorted */
};

static pv_result pairs_ctx_init(struct pairs_ctx *pc, struct prover_units *us) PV_WUR;
static pv_result pairs_ctx_init(struct pairs_ctx *pc, struct prover_units *us)
{
    memset(pc, 0, sizeof(*pc));
    pc->delta = pv_calloc(us->ndelta + 1, sizeof(size_t));
    pc->fph = pv_calloc(us->ndelta + 1, sizeof(uint64_t));
    PV_ENSURE(pc->delta != NULL && pc->fph != NULL, PV_ERR_NOMEM);
    for (size_t i = 0; i < us->n; i++) {
        if (us->u[i].delta) {
            pc->fph[pc->nd] = us->u[i].v.fphash;
            pc->delta[pc->nd++] = i;
        }
    }
    qsort(pc->fph, pc->nd, sizeof(pc->fph[0]), u64_cmp);
    return sindex_build(&pc->ix, us);
}

static void pairs_ctx_free(struct pairs_ctx *pc)
{
    sindex_free(&pc->ix);
    free(pc->delta);
    free(pc->fph);
}

/* Step 3 for the endpoints of pair 'r' (C's copy): clear the delta of the
 * collected units equal to one of its units, and tell whether the index
 * offers one of them a delta unit to check. */
static pv_result pair_endpoints(const struct pairs_ctx *pc, struct prover_units *us,
                                const struct model_rule *r, bool *may) PV_WUR;
static pv_result pair_endpoints(const struct pairs_ctx *pc, struct prover_units *us,
                                const struct model_rule *r, bool *may)
{
    *may = false;
    for (size_t j = 0; model_rule_nbinaries(r) > 0 && j < model_rule_nendpoints(r); j++) {
        struct prover_unit t;
        const char *star;
        bool hit;

        memset(&t, 0, sizeof(t));
        model_endpoint_view_host(model_rule_endpoint(r, j), &t.v);
        if (bsearch(&t.v.fphash, pc->fph, pc->nd, sizeof(pc->fph[0]), u64_cmp) != NULL) {
            struct model_endpoint_view v;

            model_endpoint_view(model_rule_endpoint(r, j), &v);
            undelta_endpoint(us, r, &v);
        }
        if (*may) {
            continue;
        }
        star = t.v.host != NULL && !t.v.host_is_ip ? strrchr(t.v.host, '*') : NULL;
        t.hstar = star != NULL;
        t.hsfx = star != NULL ? strchr(star, '.') : NULL;
        PV_GUARD(unit_rel(&pc->ix, us, pc->delta, pc->nd, &t, NULL, &hit, NULL));
        *may = hit;
    }
    return PV_RESULT_OK;
}

/* Step 3: '*undone' when a pair proved unequal (it is unpaired then). */
static pv_result check_pairs(struct prover_units *us, double deadline, bool *undone) PV_WUR;
static pv_result check_pairs(struct prover_units *us, double deadline, bool *undone)
{
    const struct model_policy *B = us->pol[PROVER_SIDE_B];
    const struct model_policy *C = us->pol[PROVER_SIDE_C];
    struct pairs_ctx pc;
    pv_result r = pairs_ctx_init(&pc, us);

    *undone = false;
    us->nkept = 0;
    for (size_t j = 0; pv_ok(r) && j < model_policy_nrules(C); j++) {
        const struct model_rule *rc = model_policy_rule(C, j);
        bool may = false;

        if ((j & 1023u) == 1023u && prover_now_ms() > deadline) {
            r = pv_fail(PV_ERR_TIMEOUT, "slice");
            break;
        }
        if (us->pair[j] == SIZE_MAX) {
            continue;
        }
        if (!rules_equal(model_policy_rule(B, us->pair[j]), rc)) {
            us->bpaired[us->pair[j]] = false;
            us->pair[j] = SIZE_MAX;
            *undone = true;
            continue;
        }
        r = pair_endpoints(&pc, us, rc, &may);
        if (pv_ok(r) && may) {
            void *k = prover_grow(us->kept, &us->keptcap, us->nkept, sizeof(size_t));

            r = k != NULL ? PV_RESULT_OK : pv_fail(PV_ERR_NOMEM, "pairs");
            us->kept = k != NULL ? k : us->kept;
            if (pv_ok(r)) {
                us->kept[us->nkept++] = j;
            }
        }
    }
    pairs_ctx_free(&pc);
    return r;
}

pv_result prover_units_pair(struct prover_units *us, const struct model_policy *B,
                            const struct model_policy *C, double deadline)
{
    bool undone = true;

    if (us->arena.toobig == 0) {
        pv_dynbuf_init(&us->arena, (size_t)1 << 31);
    }
    us->paired = true;
    us->pol[PROVER_SIDE_B] = B;
    us->pol[PROVER_SIDE_C] = C;
    PV_GUARD(pair_rules(us));
    /* Undone pairs are collected on the next round; pairs are never made. */
    while (undone) {
        PV_GUARD(collect_unpaired(us));
        PV_GUARD(check_pairs(us, deadline, &undone));
    }
    us->ndelta = 0;
    for (size_t i = 0; i < us->n; i++) {
        us->ndelta += us->u[i].delta;
    }
    return PV_RESULT_OK;
}

static bool unit_before(const struct prover_unit *a, const struct prover_unit *b)
{
    return a->side != b->side ? a->side < b->side : a->ri < b->ri;
}

/* Add both copies of the kept pairs' units, in the order a full collect
 * has (side, then rule): the encoding reads the units in this order, so the
 * proof is the same as with every unit collected. */
static pv_result add_kept(struct prover_units *us) PV_WUR;
static pv_result add_kept(struct prover_units *us)
{
    size_t n0 = us->n;
    size_t a = 0;
    size_t b = n0;
    size_t n = 0;
    struct prover_unit *t;

    for (int side = PROVER_SIDE_B; side <= PROVER_SIDE_C; side++) {
        for (size_t k = 0; k < us->nkept; k++) {
            size_t j = us->kept[k];
            size_t ri = side == PROVER_SIDE_B ? us->pair[j] : j;

            PV_GUARD(
                collect_rule(us, model_policy_rule(us->pol[side], ri), ri, (enum prover_side)side));
        }
    }
    prover_units_seal(us);
    /* Both runs are sorted by (side, rule) and share no rule: merge them. */
    PV_GUARD(reserve((void **)&us->u2, &us->cap2, us->n + 1, sizeof(*us->u2)));
    while (a < n0 || b < us->n) {
        bool take_a = b == us->n || (a < n0 && unit_before(&us->u[a], &us->u[b]));

        us->u2[n++] = take_a ? us->u[a++] : us->u[b++];
    }
    t = us->u;
    us->u = us->u2;
    us->u2 = t;
    n = us->cap;
    us->cap = us->cap2;
    us->cap2 = n;
    return PV_RESULT_OK;
}

/* The slice's connected components, through the slice's own index (see
 * prover_units_slice). */
static pv_result components(struct prover_units *us, const struct sindex *ix, const size_t *delta,
                            size_t nd, size_t *budget, double deadline, size_t *comp,
                            size_t *ncomp) PV_WUR;
static pv_result components(struct prover_units *us, const struct sindex *ix, const size_t *delta,
                            size_t nd, size_t *budget, double deadline, size_t *comp, size_t *ncomp)
{
    size_t *uf = pv_malloc((us->n ? us->n : 1) * sizeof(size_t));
    pv_result r = PV_RESULT_OK;
    bool hit = false;

    PV_GUARD_PTR(uf);
    for (size_t i = 0; i < us->n; i++) {
        uf[i] = i;
    }
    for (size_t i = 0; i < us->n && pv_ok(r); i++) {
        if ((i & 1023u) == 1023u && prover_now_ms() > deadline) {
            r = pv_fail(PV_ERR_TIMEOUT, "components");
            break;
        }
        if (us->u[i].rel) {
            r = unit_rel(ix, us, delta, nd, &us->u[i], budget, &hit, uf);
        }
    }
    /* number the components in the order of their first unit */
    for (size_t i = 0; i < us->n && pv_ok(r); i++) {
        size_t root = uf_find(uf, i);

        comp[i] = SIZE_MAX;
        if (!us->u[i].rel) {
            continue;
        }
        if (root == i) {
            comp[i] = (*ncomp)++;
        } else {
            comp[i] = comp[root]; /* root < i: numbered already */
        }
    }
    free(uf);
    return r;
}

pv_result prover_units_slice(struct prover_units *us, size_t *budget, double deadline,
                             size_t **comp, size_t *ncomp)
{
    size_t *delta;
    size_t nd = 0;
    struct sindex ix = {0};
    pv_result r = PV_RESULT_OK;

    if (comp != NULL) {
        *comp = NULL;
        *ncomp = 0;
    }
    if (us->nkept > 0) {
        PV_GUARD(add_kept(us));
    }
    delta = pv_calloc(us->ndelta ? us->ndelta : 1, sizeof(size_t));
    PV_GUARD_PTR(delta);
    for (size_t i = 0; i < us->n; i++) {
        if (us->u[i].delta) {
            delta[nd++] = i;
        }
    }
    r = sindex_build(&ix, us);
    us->nrel = 0;
    for (size_t i = 0; i < us->n && pv_ok(r); i++) {
        struct prover_unit *u = &us->u[i];

        if ((i & 1023u) == 1023u && prover_now_ms() > deadline) {
            r = pv_fail(PV_ERR_TIMEOUT, "slice");
            break;
        }
        u->rel = u->delta;
        if (!u->rel) {
            r = unit_rel(&ix, us, delta, nd, u, budget, &u->rel, NULL);
        }
        us->nrel += u->rel;
    }
    if (pv_ok(r) && comp != NULL) {
        *comp = pv_malloc((us->n ? us->n : 1) * sizeof(size_t));
        r = *comp != NULL ? components(us, &ix, delta, nd, budget, deadline, *comp, ncomp)
                          : pv_fail(PV_ERR_NOMEM, "components");
    }
    sindex_free(&ix);
    free(delta);
    return r;
}
