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
 * other patterns by model_glob_match). The glob patterns split the rest
 * recursively, each split costing one automaton-product emptiness check
 * (model_lang_check) for the side that does not hold the current witness.
 * Work is bounded by a budget of checks and a state bound per product;
 * exhausting either is PV_ERR_LIMIT, which the caller turns into UNKNOWN.
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

bool prover_pat_match(const struct prover_pat *p, const char *s, size_t len)
{
    if (p->g == NULL) {
        for (size_t i = 0; i + 3 <= len; i++) {
            if (s[i] == '%' && s[i + 1] == '2' && s[i + 2] == 'F') {
                return true;
            }
        }
        return false;
    }
    return model_glob_match(p->g, s, len);
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

static pv_result lang(const struct prover_dim *d, const struct model_lang_term *t, size_t n,
                      size_t *budget, bool *nonempty, char **w, size_t *wlen) PV_WUR;
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

static pv_result lang(const struct prover_dim *d, const struct model_lang_term *t, size_t n,
                      size_t *budget, bool *nonempty, char **w, size_t *wlen)
{
    enum model_lang_result lr;
    char *key = NULL;
    size_t klen = 0;
    size_t at;

    PV_ENSURE(*budget > 0, PV_ERR_LIMIT);
    (*budget)--;
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
        if (w != NULL && *w == NULL) {
            free(key);
            PV_BAIL(PV_ERR_NOMEM);
        }
        if (key != NULL) {
            memo_put(d->memo, key, klen, true, w != NULL ? *w : NULL, *wlen);
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

static pv_result term_push(struct region *r, const struct model_glob *g, bool positive) PV_WUR;
static pv_result term_push(struct region *r, const struct model_glob *g, bool positive)
{
    PROVER_GROW(r->terms, r->capterms, r->nterms);
    r->terms[r->nterms].g = g;
    r->terms[r->nterms].positive = positive;
    r->nterms++;
    return PV_RESULT_OK;
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
        PV_GUARD(lang(d, r->terms, r->nterms, budget, &other, &w, &wlen));
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
            PV_GUARD(term_push(q, p->g, !in));
        }
        PV_GUARD(term_push(&rs->r[i], p->g, in));
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

static pv_result dim_atoms(struct prover_dim *d, struct regions *rs, size_t *budget) PV_WUR;
static pv_result dim_atoms(struct prover_dim *d, struct regions *rs, size_t *budget)
{
    bool ne;
    char *w = NULL;
    size_t wlen = 0;
    bool *lit_ok;

    d->words = (d->npats + 63) / 64;
    /* The universe: the domain itself. */
    PV_GUARD(lang(d, NULL, 0, budget, &ne, &w, &wlen));
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
    for (size_t i = 0; i < d->npats; i++) {
        struct model_lang_term t;
        pv_result r;

        if (!d->pats[i].literal) {
            continue;
        }
        t.g = d->pats[i].g;
        t.positive = true;
        r = lang(d, &t, 1, budget, &lit_ok[i], &w, &wlen);
        free(w);
        w = NULL;
        if (!pv_ok(r)) {
            free(lit_ok);
            return r;
        }
    }
    /* Remove those literals from the regions that contain them. */
    for (size_t ri = 0; ri < rs->n; ri++) {
        struct region *reg = &rs->r[ri];
        size_t base = reg->nterms;
        bool any = false;
        pv_result r = PV_RESULT_OK;

        for (size_t i = 0; i < d->npats && pv_ok(r); i++) {
            const struct prover_pat *lp = &d->pats[i];
            bool inside = lit_ok[i];

            if (!lp->literal) {
                continue;
            }
            /* regions x literals x globs: bound it by the proof's deadline */
            if ((i & 63u) == 63u && d->deadline > 0 && prover_now_ms() > d->deadline) {
                r = pv_fail(PV_ERR_TIMEOUT, "atoms");
                break;
            }
            for (size_t j = 0; j < d->npats && inside; j++) {
                if (d->pats[j].literal) {
                    continue;
                }
                if (prover_pat_match(&d->pats[j], lp->text, lp->len) !=
                    prover_pat_match(&d->pats[j], reg->w, reg->wlen)) {
                    inside = false;
                }
            }
            if (inside) {
                any = true;
                r = term_push(reg, lp->g, false);
            }
        }
        if (pv_ok(r) && any) {
            r = lang(d, reg->terms, reg->nterms, budget, &ne, &w, &wlen);
            if (pv_ok(r)) {
                free(reg->w);
                reg->w = ne ? w : NULL;
                reg->wlen = ne ? wlen : 0;
                w = NULL;
            }
        }
        reg->nterms = base;
        if (!pv_ok(r)) {
            free(lit_ok);
            return r;
        }
    }
    for (size_t ri = 0; ri < rs->n; ri++) {
        pv_result r;

        if (rs->r[ri].w == NULL) {
            continue;
        }
        r = atom_push(d, rs->r[ri].w, rs->r[ri].wlen);
        rs->r[ri].w = NULL;
        if (!pv_ok(r)) {
            free(lit_ok);
            return r;
        }
    }
    for (size_t i = 0; i < d->npats; i++) {
        char *lw;
        pv_result r;

        if (!d->pats[i].literal || !lit_ok[i]) {
            continue;
        }
        lw = pv_strndup(d->pats[i].text, d->pats[i].len);
        if (lw == NULL) {
            free(lit_ok);
            PV_BAIL(PV_ERR_NOMEM);
        }
        r = atom_push(d, lw, d->pats[i].len);
        if (!pv_ok(r)) {
            free(lit_ok);
            return r;
        }
    }
    free(lit_ok);
    return PV_RESULT_OK;
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
