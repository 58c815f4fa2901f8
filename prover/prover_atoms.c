/* SPDX-License-Identifier: Apache-2.0 */
/* prover_atoms.c - cut a string dimension into atoms
 *
 * A dimension (binary paths, DNS hosts, canonical paths, the values of one
 * query key) holds the distinct patterns of the slice. Its atoms are the
 * non-empty regions of the Venn diagram of those languages inside the
 * dimension's domain: every string of the domain lies in exactly one atom,
 * and every pattern either contains a whole atom or is disjoint from it. Each
 * atom keeps a witness string and the bitset of patterns containing it, so
 * the solver only picks an atom index and strings never enter Z3.
 *
 * Literal patterns are cheap: a literal is its own atom (membership of the
 * other patterns by model_glob_match), placed in the region whose glob
 * signature it shares. The glob patterns split the rest recursively; each
 * split asks whether the side that does not hold the current witness is
 * empty. Most of those questions are answered without an automaton: terms a
 * positive term is cheaply disjoint from are dropped (two cheaply disjoint
 * positives: empty), and a sample of each positive term (or the region's
 * witness) that satisfies every term is a witness. Only the rest costs an
 * automaton-product emptiness check (model_lang_check). Work is bounded by
 * a budget of those checks and a state bound per product; exhausting either
 * is PV_ERR_LIMIT, which the caller turns into UNKNOWN.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "prover/prover_int.h"

static const char special_key[] = "\001contains-%2F";

void prover_dim_init(struct prover_dim *d, enum model_domain domain)
{
    memset(d, 0, sizeof(*d));
    d->domain = domain;
}

void prover_dim_free(struct prover_dim *d)
{
    for (size_t i = 0; i < d->natoms; i++) {
        free(d->atoms[i].w);
        free(d->atoms[i].bits);
    }
    free(d->atoms);
    free(d->pats);
    free(d->memb);
    prover_map_free(&d->index);
    memset(d, 0, sizeof(*d));
}

static pv_result dim_add(struct prover_dim *d, const struct model_glob *g, const char *text,
                         size_t len, bool literal, size_t *idx) PV_WUR;
static pv_result dim_add(struct prover_dim *d, const struct model_glob *g, const char *text,
                         size_t len, bool literal, size_t *idx)
{
    bool inserted;

    PV_GUARD(prover_map_put(&d->index, text, len, d->npats, idx, &inserted));
    if (!inserted) {
        return PV_RESULT_OK;
    }
    PROVER_GROW(d->pats, d->cappats, d->npats);
    d->pats[d->npats].g = g;
    d->pats[d->npats].text = text;
    d->pats[d->npats].len = len;
    d->pats[d->npats].literal = literal;
    d->npats++;
    return PV_RESULT_OK;
}

pv_result prover_dim_add(struct prover_dim *d, const struct model_glob *g, size_t *idx)
{
    const char *t;

    PV_ENSURE_REF(g);
    t = model_glob_text(g);
    PV_ENSURE_REF(t);
    return dim_add(d, g, t, strlen(t), model_glob_is_literal(g), idx);
}

pv_result prover_dim_add_special(struct prover_dim *d, size_t *idx)
{
    return dim_add(d, NULL, special_key, sizeof(special_key) - 1, false, idx);
}

/* Is 's' in the language of 'g' (NULL: the "contains %2F" language)? */
static bool lang_match(const struct model_glob *g, const char *s, size_t len)
{
    if (g != NULL) {
        return model_glob_match(g, s, len);
    }
    for (size_t i = 0; i + 3 <= len; i++) {
        if (s[i] == '%' && s[i + 1] == '2' && s[i + 2] == 'F') {
            return true;
        }
    }
    return false;
}

bool prover_pat_match(const struct prover_pat *p, const char *s, size_t len)
{
    return lang_match(p->g, s, len);
}

/* Does the concrete string 's' satisfy every term? */
static bool terms_hold(const struct model_lang_term *t, size_t n, const char *s, size_t len)
{
    for (size_t i = 0; i < n; i++) {
        if (lang_match(t[i].g, s, len) != t[i].positive) {
            return false;
        }
    }
    return true;
}

bool prover_atom_has(const struct prover_dim *d, size_t atom, size_t pat)
{
    return (d->atoms[atom].bits[pat / 64] >> (pat % 64)) & 1u;
}

/* ---------------------------------------------------------------------------
 * Regions under construction
 * ------------------------------------------------------------------------- */

struct region {
    struct model_lang_term *terms;
    size_t nterms, capterms;
    char *w;
    size_t wlen;
};

struct regions {
    struct region *r;
    size_t n, cap;
};

static void regions_free(struct regions *rs)
{
    for (size_t i = 0; i < rs->n; i++) {
        free(rs->r[i].terms);
        free(rs->r[i].w);
    }
    free(rs->r);
    memset(rs, 0, sizeof(*rs));
}

void prover_lang_memo_free(struct prover_lang_memo *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->e[i].key);
        free(m->e[i].w);
    }
    free(m->e);
    prover_map_free(&m->index);
    memset(m, 0, sizeof(*m));
}

/* The memo key of a question: domain, then per term its sign, kind and
 * text. NULL when out of memory. */
static char *memo_key(enum model_domain domain, const struct model_lang_term *t, size_t n,
                      size_t *klen)
{
    size_t len = 1;
    char *k;
    char *o;

    for (size_t i = 0; i < n; i++) {
        len += 2 + sizeof(size_t) + (t[i].g != NULL ? strlen(model_glob_text(t[i].g)) : 0);
    }
    k = pv_malloc(len);
    if (k == NULL) {
        return NULL;
    }
    o = k;
    *o++ = (char)domain;
    for (size_t i = 0; i < n; i++) {
        const char *txt = t[i].g != NULL ? model_glob_text(t[i].g) : "";
        size_t tl = strlen(txt);

        *o++ = t[i].positive ? '+' : '-';
        *o++ = t[i].g != NULL ? (char)('0' + (int)model_glob_kind_of(t[i].g)) : 'S';
        memcpy(o, &tl, sizeof(tl));
        o += sizeof(tl);
        memcpy(o, txt, tl);
        o += tl;
    }
    *klen = len;
    return k;
}

/* Remember a definite answer; failures only cost the memo. */
static void memo_put(struct prover_lang_memo *m, char *key, size_t klen, bool nonempty,
                     const char *w, size_t wlen)
{
    struct prover_lang_entry *e;
    size_t found;
    bool inserted;

    if (m->n >= PROVER_LANG_MEMO_MAX) {
        prover_lang_memo_free(m);
    }
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        void *ne = pv_realloc(m->e, cap * sizeof(*m->e));

        if (ne == NULL) {
            free(key);
            return;
        }
        m->e = ne;
        m->cap = cap;
    }
    e = &m->e[m->n];
    e->key = key;
    e->klen = klen;
    e->nonempty = nonempty;
    e->w = NULL;
    e->wlen = wlen;
    if (w != NULL) {
        e->w = pv_malloc(wlen + 1);
        if (e->w == NULL) {
            free(key);
            return;
        }
        memcpy(e->w, w, wlen);
        e->w[wlen] = '\0';
    }
    if (!pv_ok(prover_map_put(&m->index, key, klen, m->n, &found, &inserted)) || !inserted) {
        free(e->w);
        free(key);
        return;
    }
    m->n++;
}

/* The emptiness of the conjunction of 't' within the domain, by the memo or
 * an automaton product; only a product spends budget. */
static pv_result lang_exact(const struct prover_dim *d, const struct model_lang_term *t, size_t n,
                            size_t *budget, bool *nonempty, char **w, size_t *wlen) PV_WUR;
static pv_result lang_exact(const struct prover_dim *d, const struct model_lang_term *t, size_t n,
                            size_t *budget, bool *nonempty, char **w, size_t *wlen)
{
    enum model_lang_result lr;
    char *key = NULL;
    size_t klen = 0;
    size_t at;

    *w = NULL;
    *wlen = 0;
    if (d->memo != NULL) {
        key = memo_key(d->domain, t, n, &klen);
        if (key != NULL && prover_map_get(&d->memo->index, key, klen, &at)) {
            const struct prover_lang_entry *e = &d->memo->e[at];

            free(key);
            *nonempty = e->nonempty;
            if (e->w != NULL) {
                *w = pv_malloc(e->wlen + 1);
                PV_ENSURE(*w != NULL, PV_ERR_NOMEM);
                memcpy(*w, e->w, e->wlen + 1);
                *wlen = e->wlen;
            }
            return PV_RESULT_OK;
        }
    }
    if (*budget == 0) {
        free(key);
        PV_BAIL(PV_ERR_LIMIT);
    }
    (*budget)--;
    lr = model_lang_check(d->domain, t, n, PROVER_MAX_LANG_STATES, w, wlen);
    switch (lr) {
    case MODEL_LANG_EMPTY:
        *nonempty = false;
        if (key != NULL) {
            memo_put(d->memo, key, klen, false, NULL, 0);
        }
        return PV_RESULT_OK;
    case MODEL_LANG_NONEMPTY:
        *nonempty = true;
        if (*w == NULL) {
            free(key);
            PV_BAIL(PV_ERR_NOMEM);
        }
        if (key != NULL) {
            memo_put(d->memo, key, klen, true, *w, *wlen);
        }
        return PV_RESULT_OK;
    case MODEL_LANG_LIMIT:
        free(key);
        PV_BAIL(PV_ERR_LIMIT);
    case MODEL_LANG_NOMEM:
        free(key);
        PV_BAIL(PV_ERR_NOMEM);
    }
    free(key);
    PV_BAIL(PV_ERR_INTERNAL);
}

/* The terms that decide the conjunction: positives first, then the
 * negatives no positive is cheaply disjoint from (a string of a positive
 * lies outside such a negative anyway). False when the conjunction is
 * certainly empty: two positives cheaply disjoint, or a positive cheaply
 * inside a negative. 'out' has room for n. */
static bool reduce(enum model_domain dom, const struct model_lang_term *t, size_t n,
                   struct model_lang_term *out, size_t *nout, size_t *npos)
{
    size_t k = 0;

    for (size_t i = 0; i < n; i++) {
        if (!t[i].positive) {
            continue;
        }
        for (size_t j = 0; j < k; j++) {
            if (prover_glob_disjoint_cheap(out[j].g, t[i].g, dom)) {
                return false;
            }
        }
        out[k++] = t[i];
    }
    *npos = k;
    for (size_t i = 0; i < n; i++) {
        bool keep = !t[i].positive;

        for (size_t j = 0; keep && j < *npos; j++) {
            if (prover_glob_subset_cheap(out[j].g, t[i].g, dom)) {
                return false; /* a positive inside a negative: empty */
            }
            keep = !prover_glob_disjoint_cheap(out[j].g, t[i].g, dom);
        }
        if (keep) {
            out[k++] = t[i];
        }
    }
    *nout = k;
    return true;
}

/* Positive terms whose sample is tried as a witness before a product. */
#define SAMPLE_TRIES 4u

/* Is the conjunction of 't' empty within the domain? '*w' gets a witness
 * (new) when it is not. 'hint' (may be NULL) is a string of the domain to
 * try as a witness first. */
static pv_result lang(const struct prover_dim *d, const struct model_lang_term *t, size_t n,
                      const char *hint, size_t hintlen, size_t *budget, bool *nonempty, char **w,
                      size_t *wlen) PV_WUR;
static pv_result lang(const struct prover_dim *d, const struct model_lang_term *t, size_t n,
                      const char *hint, size_t hintlen, size_t *budget, bool *nonempty, char **w,
                      size_t *wlen)
{
    struct model_lang_term small[16] = {{NULL, false}};
    struct model_lang_term *rt = n <= 16 ? small : pv_malloc(n * sizeof(*rt));
    size_t k = 0;
    size_t npos = 0;
    pv_result r = PV_RESULT_OK;
    bool done = false;

    *w = NULL;
    *wlen = 0;
    PV_GUARD_PTR(rt);
    if (!reduce(d->domain, t, n, rt, &k, &npos)) {
        *nonempty = false;
        done = true;
    }
    if (!done && hint != NULL && terms_hold(rt, k, hint, hintlen)) {
        *w = pv_strndup(hint, hintlen);
        r = *w != NULL ? PV_RESULT_OK : pv_fail(PV_ERR_NOMEM, "witness");
        *wlen = hintlen;
        *nonempty = true;
        done = true;
    }
    if (!done && pv_ok(r) && hint != NULL) {
        /* The hint with one more letter in front (a region's witness that
         * is one of the literals taken out of it, often): kept when it is
         * still a string of the domain and satisfies every term. */
        char *x = pv_malloc(hintlen + 2);

        if (x == NULL) {
            r = pv_fail(PV_ERR_NOMEM, "witness");
        } else {
            x[0] = 'x';
            memcpy(x + 1, hint, hintlen);
            x[hintlen + 1] = '\0';
        }
        if (x != NULL && model_domain_has(d->domain, x, hintlen + 1) &&
            terms_hold(rt, k, x, hintlen + 1)) {
            *w = x;
            *wlen = hintlen + 1;
            *nonempty = true;
            done = true;
        } else {
            free(x);
        }
    }
    /* A sample of a positive term (the product of it alone, remembered)
     * that satisfies the other terms; an empty positive empties it all. */
    for (size_t i = 0; !done && pv_ok(r) && k > 1 && i < npos && i < SAMPLE_TRIES; i++) {
        char *sw = NULL;
        size_t swl = 0;
        bool sne = false;

        r = lang_exact(d, &rt[i], 1, budget, &sne, &sw, &swl);
        if (pv_ok(r) && !sne) {
            *nonempty = false;
            done = true;
        } else if (pv_ok(r) && terms_hold(rt, k, sw, swl)) {
            *w = sw;
            *wlen = swl;
            *nonempty = true;
            done = true;
            sw = NULL;
        }
        free(sw);
    }
    if (!done && pv_ok(r)) {
        r = lang_exact(d, rt, k, budget, nonempty, w, wlen);
    }
    if (rt != small) {
        free(rt);
    }
    return r;
}

static pv_result term_push(struct region *r, const struct model_glob *g, bool positive) PV_WUR;
static pv_result term_push(struct region *r, const struct model_glob *g, bool positive)
{
    PROVER_GROW(r->terms, r->capterms, r->nterms);
    r->terms[r->nterms].g = g;
    r->terms[r->nterms].positive = positive;
    r->nterms++;
    return PV_RESULT_OK;
}

/* Add a term to a region, keeping its list short: a negative term that a
 * positive one is cheaply disjoint from says nothing, and a new positive
 * term makes such negatives redundant. */
static pv_result region_push(const struct prover_dim *d, struct region *r,
                             const struct model_glob *g, bool positive) PV_WUR;
static pv_result region_push(const struct prover_dim *d, struct region *r,
                             const struct model_glob *g, bool positive)
{
    if (!positive) {
        for (size_t k = 0; k < r->nterms; k++) {
            if (r->terms[k].positive && prover_glob_disjoint_cheap(r->terms[k].g, g, d->domain)) {
                return PV_RESULT_OK;
            }
        }
    } else {
        size_t o = 0;

        for (size_t k = 0; k < r->nterms; k++) {
            if (!r->terms[k].positive && prover_glob_disjoint_cheap(g, r->terms[k].g, d->domain)) {
                continue;
            }
            r->terms[o++] = r->terms[k];
        }
        r->nterms = o;
    }
    return term_push(r, g, positive);
}

/* Split every region by glob pattern 'pi'. */
static pv_result split(const struct prover_dim *d, struct regions *rs, size_t pi,
                       size_t *budget) PV_WUR;
static pv_result split(const struct prover_dim *d, struct regions *rs, size_t pi, size_t *budget)
{
    const struct prover_pat *p = &d->pats[pi];
    size_t n = rs->n;

    for (size_t i = 0; i < n; i++) {
        struct region *r = &rs->r[i];
        bool in = prover_pat_match(p, r->w, r->wlen);
        bool other;
        char *w = NULL;
        size_t wlen = 0;
        struct region nr;

        PV_GUARD(term_push(r, p->g, !in));
        PV_GUARD(lang(d, r->terms, r->nterms, NULL, 0, budget, &other, &w, &wlen));
        r->nterms--;
        if (!other) {
            /* The region lies on one side: the term is redundant. */
            continue;
        }
        memset(&nr, 0, sizeof(nr));
        nr.w = w;
        nr.wlen = wlen;
        if (rs->n + 1 > PROVER_MAX_ATOMS) {
            free(w);
            PV_BAIL(PV_ERR_LIMIT);
        }
        {
            void *g = prover_grow(rs->r, &rs->cap, rs->n, sizeof(*rs->r));

            if (g == NULL) {
                free(w);
                PV_BAIL(PV_ERR_NOMEM);
            }
            rs->r = g;
        }
        r = &rs->r[i];
        rs->r[rs->n++] = nr;
        {
            struct region *q = &rs->r[rs->n - 1];

            for (size_t k = 0; k < r->nterms; k++) {
                PV_GUARD(term_push(q, r->terms[k].g, r->terms[k].positive));
            }
            PV_GUARD(region_push(d, q, p->g, !in));
        }
        PV_GUARD(region_push(d, &rs->r[i], p->g, in));
    }
    return PV_RESULT_OK;
}

static pv_result atom_push(struct prover_dim *d, char *w, size_t wlen) PV_WUR;
static pv_result atom_push(struct prover_dim *d, char *w, size_t wlen)
{
    struct prover_atom *a;

    if (d->natoms + 1 > PROVER_MAX_ATOMS) {
        free(w);
        PV_BAIL(PV_ERR_LIMIT);
    }
    {
        void *g = prover_grow(d->atoms, &d->capatoms, d->natoms, sizeof(*d->atoms));

        if (g == NULL) {
            free(w);
            PV_BAIL(PV_ERR_NOMEM);
        }
        d->atoms = g;
    }
    a = &d->atoms[d->natoms++];
    a->w = w;
    a->wlen = wlen;
    a->bits = pv_calloc(d->words ? d->words : 1, sizeof(uint64_t));
    PV_GUARD_PTR(a->bits);
    for (size_t i = 0; i < d->npats; i++) {
        if (prover_pat_match(&d->pats[i], w, wlen)) {
            a->bits[i / 64] |= (uint64_t)1 << (i % 64);
        }
    }
    return PV_RESULT_OK;
}

/* The glob signature of 's': bit j set when glob gidx[j] matches it. */
static void signature(const struct prover_dim *d, const size_t *gidx, size_t ng, const char *s,
                      size_t len, uint64_t *sig, size_t words)
{
    memset(sig, 0, words * sizeof(uint64_t));
    for (size_t j = 0; j < ng; j++) {
        if (prover_pat_match(&d->pats[gidx[j]], s, len)) {
            sig[j / 64] |= (uint64_t)1 << (j % 64);
        }
    }
}

/* Take the literals of the domain out of the regions that hold them. The
 * regions are the cells of the globs' Venn diagram, so a literal lies in the
 * one region whose witness matches the same globs: the regions are indexed
 * by that signature, each literal is looked up by its own, and a region
 * that holds some literals gets a witness outside them (its old one when
 * that is none of them). */
static pv_result carve_literals(struct prover_dim *d, struct regions *rs, const bool *lit_ok,
                                size_t *budget) PV_WUR;
static pv_result carve_literals(struct prover_dim *d, struct regions *rs, const bool *lit_ok,
                                size_t *budget)
{
    size_t ng = 0;
    size_t words;
    size_t *gidx = pv_calloc(d->npats + 1, sizeof(size_t));
    uint64_t *sigs = NULL;
    uint64_t *lsig = NULL;
    size_t *head = NULL;
    size_t *next = NULL;
    struct prover_map ix;
    pv_result r = PV_RESULT_OK;

    memset(&ix, 0, sizeof(ix));
    PV_GUARD_PTR(gidx);
    for (size_t i = 0; i < d->npats; i++) {
        if (!d->pats[i].literal) {
            gidx[ng++] = i;
        }
    }
    words = ng / 64 + 1;
    sigs = pv_malloc(rs->n * words * sizeof(uint64_t));
    lsig = pv_malloc(words * sizeof(uint64_t));
    head = pv_malloc(rs->n * sizeof(size_t));
    next = pv_malloc((d->npats + 1) * sizeof(size_t));
    if (sigs == NULL || lsig == NULL || head == NULL || next == NULL) {
        r = pv_fail(PV_ERR_NOMEM, "atoms");
    }
    for (size_t ri = 0; pv_ok(r) && ri < rs->n; ri++) {
        uint64_t *sg = &sigs[ri * words];
        size_t found;
        bool inserted;

        head[ri] = SIZE_MAX;
        signature(d, gidx, ng, rs->r[ri].w, rs->r[ri].wlen, sg, words);
        r = prover_map_put(&ix, (const char *)sg, words * sizeof(uint64_t), ri, &found, &inserted);
        if (pv_ok(r) && !inserted) {
            r = pv_fail(PV_ERR_INTERNAL, "two regions with one signature");
        }
    }
    for (size_t i = 0; pv_ok(r) && i < d->npats; i++) {
        const struct prover_pat *lp = &d->pats[i];
        size_t ri;

        if (!lp->literal || !lit_ok[i]) {
            continue;
        }
        if ((i & 63u) == 63u && d->deadline > 0 && prover_now_ms() > d->deadline) {
            r = pv_fail(PV_ERR_TIMEOUT, "atoms");
            break;
        }
        signature(d, gidx, ng, lp->text, lp->len, lsig, words);
        if (!prover_map_get(&ix, (const char *)lsig, words * sizeof(uint64_t), &ri)) {
            /* every string of the domain lies in some region */
            r = pv_fail(PV_ERR_INTERNAL, "a literal in no region");
            break;
        }
        next[i] = head[ri];
        head[ri] = i;
    }
    for (size_t ri = 0; pv_ok(r) && ri < rs->n; ri++) {
        struct region *reg = &rs->r[ri];
        size_t base = reg->nterms;
        bool ne = false;
        char *w = NULL;
        size_t wlen = 0;

        if (head[ri] == SIZE_MAX) {
            continue;
        }
        for (size_t i = head[ri]; pv_ok(r) && i != SIZE_MAX; i = next[i]) {
            r = term_push(reg, d->pats[i].g, false);
        }
        if (pv_ok(r)) {
            r = lang(d, reg->terms, reg->nterms, reg->w, reg->wlen, budget, &ne, &w, &wlen);
        }
        if (pv_ok(r)) {
            free(reg->w);
            reg->w = ne ? w : NULL;
            reg->wlen = ne ? wlen : 0;
        }
        reg->nterms = base;
    }
    prover_map_free(&ix);
    free(gidx);
    free(sigs);
    free(lsig);
    free(head);
    free(next);
    return r;
}

static pv_result dim_atoms(struct prover_dim *d, struct regions *rs, size_t *budget) PV_WUR;
static pv_result dim_atoms(struct prover_dim *d, struct regions *rs, size_t *budget)
{
    bool ne;
    char *w = NULL;
    size_t wlen = 0;
    bool *lit_ok;
    pv_result r = PV_RESULT_OK;

    d->words = (d->npats + 63) / 64;
    /* The universe: the domain itself. */
    PV_GUARD(lang(d, NULL, 0, NULL, 0, budget, &ne, &w, &wlen));
    PV_ENSURE(ne, PV_ERR_INTERNAL);
    rs->r = pv_calloc(1, sizeof(*rs->r));
    if (rs->r == NULL) {
        free(w);
        PV_BAIL(PV_ERR_NOMEM);
    }
    rs->cap = 1;
    rs->n = 1;
    rs->r[0].w = w;
    rs->r[0].wlen = wlen;
    for (size_t i = 0; i < d->npats; i++) {
        if (!d->pats[i].literal) {
            PV_GUARD(split(d, rs, i, budget));
        }
    }
    /* Literals inside the domain become atoms of their own. */
    lit_ok = pv_calloc(d->npats ? d->npats : 1, sizeof(bool));
    PV_GUARD_PTR(lit_ok);
    for (size_t i = 0; pv_ok(r) && i < d->npats; i++) {
        struct model_lang_term t;

        if (!d->pats[i].literal) {
            continue;
        }
        t.g = d->pats[i].g;
        t.positive = true;
        r = lang(d, &t, 1, NULL, 0, budget, &lit_ok[i], &w, &wlen);
        free(w);
        w = NULL;
    }
    if (pv_ok(r)) {
        r = carve_literals(d, rs, lit_ok, budget);
    }
    for (size_t ri = 0; pv_ok(r) && ri < rs->n; ri++) {
        if (rs->r[ri].w == NULL) {
            continue;
        }
        r = atom_push(d, rs->r[ri].w, rs->r[ri].wlen);
        rs->r[ri].w = NULL;
    }
    for (size_t i = 0; pv_ok(r) && i < d->npats; i++) {
        char *lw;

        if (!d->pats[i].literal || !lit_ok[i]) {
            continue;
        }
        lw = pv_strndup(d->pats[i].text, d->pats[i].len);
        r = lw != NULL ? atom_push(d, lw, d->pats[i].len) : pv_fail(PV_ERR_NOMEM, "atoms");
    }
    free(lit_ok);
    return r;
}

pv_result prover_dim_atoms(struct prover_dim *d, size_t *budget)
{
    struct regions rs;
    pv_result r;

    memset(&rs, 0, sizeof(rs));
    r = dim_atoms(d, &rs, budget);
    regions_free(&rs);
    return r;
}
