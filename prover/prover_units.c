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
    pv_dynbuf_free(&us->arena);
    memset(us, 0, sizeof(*us));
}

void prover_units_recycle(struct prover_units *spare, struct prover_units *us)
{
    prover_units_free(spare);
    *spare = *us;
    spare->n = spare->ndelta = spare->nrel = 0;
    pv_dynbuf_reset(&spare->arena);
    memset(us, 0, sizeof(*us));
}

pv_result prover_units_collect(struct prover_units *us, const struct model_policy *p,
                               enum prover_side side)
{
    size_t nr;

    if (us->arena.toobig == 0) {
        pv_dynbuf_init(&us->arena, (size_t)1 << 31);
    }
    if (p == NULL) {
        return PV_RESULT_OK;
    }
    nr = model_policy_nrules(p);
    for (size_t i = 0; i < nr; i++) {
        const struct model_rule *r = model_policy_rule(p, i);
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
pv_result prover_units_delta(struct prover_units *us)
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
 * label; every binary a glob matches starts with its literal prefix. */
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

static size_t literal_prefix(const char *s)
{
    return strcspn(s, "*?[\\");
}

static bool prefix_compatible(const char *a, const char *b)
{
    size_t la = literal_prefix(a);
    size_t lb = literal_prefix(b);

    return strncmp(a, b, la < lb ? la : lb) == 0;
}

pv_result prover_glob_overlap(const struct model_glob *a, const struct model_glob *b,
                              enum model_domain dom, size_t *budget, bool *out)
{
    bool la = model_glob_is_literal(a);
    bool lb = model_glob_is_literal(b);
    struct model_lang_term t[2];

    if (la && lb) {
        *out = strcmp(model_glob_text(a), model_glob_text(b)) == 0;
        return PV_RESULT_OK;
    }
    if (la || lb) {
        const char *s = model_glob_text(la ? a : b);

        *out = model_glob_match(la ? b : a, s, strlen(s));
        return PV_RESULT_OK;
    }
    if (strcmp(model_glob_text(a), model_glob_text(b)) == 0) {
        *out = true;
        return PV_RESULT_OK;
    }
    if ((dom == MODEL_DOMAIN_DNS_NAME &&
         !host_suffix_compatible(model_glob_text(a), model_glob_text(b))) ||
        (dom == MODEL_DOMAIN_ABS_PATH &&
         !prefix_compatible(model_glob_text(a), model_glob_text(b)))) {
        *out = false;
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

/* Check u against the delta units under one key; '*hit' on overlap. */
static pv_result probe(const struct sindex *ix, const struct prover_units *us,
                       const struct prover_unit *u, enum skind kind, const char *k, size_t len,
                       size_t *budget, bool *hit) PV_WUR;
static pv_result probe(const struct sindex *ix, const struct prover_units *us,
                       const struct prover_unit *u, enum skind kind, const char *k, size_t len,
                       size_t *budget, bool *hit)
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
        if (ix->e[i].len == len && memcmp(ix->e[i].k, k, len) == 0) {
            PV_GUARD(prover_units_overlap(u, &us->u[ix->e[i].d], budget, hit));
        }
    }
    return PV_RESULT_OK;
}

static pv_result unit_rel(const struct sindex *ix, const struct prover_units *us,
                          const size_t *delta, size_t nd, const struct prover_unit *u,
                          size_t *budget, bool *hit) PV_WUR;
static pv_result unit_rel(const struct sindex *ix, const struct prover_units *us,
                          const size_t *delta, size_t nd, const struct prover_unit *u,
                          size_t *budget, bool *hit)
{
    const char *h = u->v.host;
    const char *sfx = u->hsfx; /* NULL for IP hosts and hostless units */

    *hit = false;
    for (size_t k = 0; k < ix->nhostless && !*hit; k++) {
        PV_GUARD(prover_units_overlap(u, &us->u[ix->hostless[k]], budget, hit));
    }
    if (h == NULL || (sfx == NULL && u->hstar)) {
        /* hostless (or a wildcard without a literal suffix): every delta */
        for (size_t k = 0; k < nd && !*hit; k++) {
            PV_GUARD(prover_units_overlap(u, &us->u[delta[k]], budget, hit));
        }
        return PV_RESULT_OK;
    }
    if (u->v.host_is_ip) {
        return probe(ix, us, u, SK_IP, (const char *)u->v.host_ip.b, 16, budget, hit);
    }
    if (sfx == NULL) {
        PV_GUARD(probe(ix, us, u, SK_LIT, h, strlen(h), budget, hit));
        for (const char *p = strchr(h, '.'); p != NULL && !*hit; p = strchr(p + 1, '.')) {
            PV_GUARD(probe(ix, us, u, SK_WILD, p, strlen(p), budget, hit));
        }
        return PV_RESULT_OK;
    }
    for (const char *p = sfx; p != NULL && !*hit; p = strchr(p + 1, '.')) {
        PV_GUARD(probe(ix, us, u, SK_WILD, p, strlen(p), budget, hit));
    }
    if (!*hit) {
        PV_GUARD(probe(ix, us, u, SK_SUB, sfx, strlen(sfx), budget, hit));
    }
    return PV_RESULT_OK;
}

pv_result prover_units_slice(struct prover_units *us, size_t *budget, double deadline)
{
    size_t *delta;
    size_t nd = 0;
    struct sindex ix = {0};
    pv_result r = PV_RESULT_OK;

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
            r = unit_rel(&ix, us, delta, nd, u, budget, &u->rel);
        }
        us->nrel += u->rel;
    }
    sindex_free(&ix);
    free(delta);
    return r;
}
