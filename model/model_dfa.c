/* SPDX-License-Identifier: Apache-2.0 */
/* model_dfa.c - NFA to minimal DFA
 *
 * model_dfa_build() turns the Thompson-style NFA written by model_glob.c into
 * a minimal complete DFA over byte classes: the byte alphabet is first split
 * into the coarsest classes that every NFA edge respects, the subset
 * construction runs over classes (not 256 bytes) within a work budget,
 * Hopcroft's partition refinement minimises, equal class columns are merged,
 * and the sinks are numbered last (universal, then dead) so that the matcher
 * can stop at the first sink with a single compare. Literals skip the NFA:
 * model_dfa_literal() writes their (already minimal) chain directly.
 *
 * The built-in languages and model_lang_check(), the emptiness check the
 * prover uses, are in model_lang.c.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "model/model_dfa.h"

/* Bound on NFA size, so that one state set stays small. */
#define NFA_MAX_STATES 65536u
/* Bound on the subset construction's work (NFA edges followed plus state-set
 * words closed, summed over all DFA states), so that no pattern costs more
 * than about 0.1 s. */
#define SUBSET_MAX_WORK 16000000u

/* ===========================================================================
 * NFA builder
 * ========================================================================= */

void model_nfa_init(struct model_nfa *n)
{
    memset(n, 0, sizeof(*n));
}

void model_nfa_clear(struct model_nfa *n)
{
    free(n->edges);
    free(n->sets);
    memset(n, 0, sizeof(*n));
}

uint32_t model_nfa_state(struct model_nfa *n)
{
    if (n->nstates >= NFA_MAX_STATES) {
        n->toobig = true;
        return 0;
    }
    return n->nstates++;
}

static void nfa_edge(struct model_nfa *n, uint32_t from, uint32_t to, int32_t set)
{
    if (n->failed || n->toobig) {
        return;
    }
    if (n->nedges == n->edgecap) {
        size_t cap = n->edgecap ? n->edgecap * 2 : 64;
        struct model_nfa_edge *e = pv_realloc(n->edges, cap * sizeof(*e));
        if (e == NULL) {
            n->failed = true;
            return;
        }
        n->edges = e;
        n->edgecap = cap;
    }
    n->edges[n->nedges].from = from;
    n->edges[n->nedges].to = to;
    n->edges[n->nedges].set = set;
    n->nedges++;
}

void model_nfa_eps(struct model_nfa *n, uint32_t from, uint32_t to)
{
    nfa_edge(n, from, to, -1);
}

void model_nfa_set(struct model_nfa *n, uint32_t from, uint32_t to, const struct model_byteset *set)
{
    if (n->failed || n->toobig) {
        return;
    }
    if (n->nsets == n->setcap) {
        size_t cap = n->setcap ? n->setcap * 2 : 32;
        struct model_byteset *s = pv_realloc(n->sets, cap * sizeof(*s));
        if (s == NULL) {
            n->failed = true;
            return;
        }
        n->sets = s;
        n->setcap = cap;
    }
    n->sets[n->nsets] = *set;
    nfa_edge(n, from, to, (int32_t)n->nsets);
    n->nsets++;
}

/* ===========================================================================
 * Subset construction
 * ========================================================================= */

struct subset {
    uint32_t nn; /* NFA states */
    size_t W;    /* 64-bit words per state set */
    uint32_t k;  /* byte classes */
    uint8_t cls[256];
    uint32_t *eps_off; /* CSR of epsilon edges, nn + 1 */
    uint32_t *eps_to;
    uint32_t *sed_off; /* CSR of set edges, nn + 1 */
    uint32_t *sed_to;
    struct model_byteset *sed_cls; /* classes each set edge admits */
    uint32_t *stack;               /* nn */
    uint64_t *sets;                /* count * W */
    uint32_t *trans;               /* count * k */
    size_t count;
    size_t cap;
    uint32_t *ht; /* slot = state + 1, 0 = empty */
    size_t htcap;
    size_t work; /* edges followed and set words closed so far */
};

static void subset_free(struct subset *ss)
{
    free(ss->eps_off);
    free(ss->eps_to);
    free(ss->sed_off);
    free(ss->sed_to);
    free(ss->sed_cls);
    free(ss->stack);
    free(ss->sets);
    free(ss->trans);
    free(ss->ht);
}

static int byteset_single(const struct model_byteset *s)
{
    int found = -1;
    for (size_t w = 0; w < 4; w++) {
        if (s->w[w] == 0) {
            continue;
        }
        if (found >= 0 || (s->w[w] & (s->w[w] - 1)) != 0) {
            return -1;
        }
        found = (int)(w * 64 + (unsigned)__builtin_ctzll(s->w[w]));
    }
    return found;
}

/* Coarsest partition of the bytes that every edge set respects: split every
 * class by every set, 64 bytes at a time (one byte: O(1)). */
static uint32_t byte_classes(const struct model_nfa *n, uint8_t cls[256])
{
    struct model_byteset part[256];
    uint32_t size[256];
    uint32_t k = 1;
    model_byteset_fill(&part[0]);
    size[0] = 256;
    memset(cls, 0, 256);
    for (size_t s = 0; s < n->nsets; s++) {
        const struct model_byteset *set = &n->sets[s];
        int one = byteset_single(set);
        if (one >= 0) {
            uint32_t c = cls[one];
            if (size[c] > 1) {
                model_byteset_del(&part[c], (uint8_t)one);
                size[c]--;
                model_byteset_clear(&part[k]);
                model_byteset_add(&part[k], (uint8_t)one);
                size[k] = 1;
                cls[one] = (uint8_t)k;
                k++;
            }
            continue;
        }
        uint32_t kk = k;
        for (uint32_t c = 0; c < kk; c++) {
            struct model_byteset in = {{0, 0, 0, 0}};
            struct model_byteset out = {{0, 0, 0, 0}};
            bool any_in = false;
            bool any_out = false;
            for (size_t w = 0; w < 4; w++) {
                in.w[w] = part[c].w[w] & set->w[w];
                out.w[w] = part[c].w[w] & ~set->w[w];
                any_in = any_in || in.w[w] != 0;
                any_out = any_out || out.w[w] != 0;
            }
            if (any_in && any_out) {
                uint32_t nin = 0;
                for (size_t w = 0; w < 4; w++) {
                    nin += (uint32_t)__builtin_popcountll(in.w[w]);
                }
                part[c] = out;
                size[c] -= nin;
                part[k] = in;
                size[k] = nin;
                for (unsigned b = 0; b < 256; b++) {
                    if (model_byteset_has(&in, (uint8_t)b)) {
                        cls[b] = (uint8_t)k;
                    }
                }
                k++;
            }
        }
    }
    return k;
}

static uint64_t hash_words(const uint64_t *w, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i < n; i++) {
        h ^= w[i];
        h *= 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    return h;
}

static void closure(const struct subset *ss, uint64_t *set)
{
    size_t sp = 0;
    for (size_t w = 0; w < ss->W; w++) {
        uint64_t bits = set[w];
        while (bits != 0) {
            unsigned b = (unsigned)__builtin_ctzll(bits);
            bits &= bits - 1;
            ss->stack[sp++] = (uint32_t)(w * 64 + b);
        }
    }
    while (sp > 0) {
        uint32_t q = ss->stack[--sp];
        for (uint32_t e = ss->eps_off[q]; e < ss->eps_off[q + 1]; e++) {
            uint32_t t = ss->eps_to[e];
            uint64_t bit = (uint64_t)1 << (t & 63);
            if ((set[t >> 6] & bit) == 0) {
                set[t >> 6] |= bit;
                ss->stack[sp++] = t;
            }
        }
    }
}

static pv_result subset_rehash(struct subset *ss, size_t newcap)
{
    uint32_t *ht = pv_calloc(newcap, sizeof(*ht));
    PV_ENSURE(ht != NULL, PV_ERR_NOMEM);
    for (size_t i = 0; i < ss->count; i++) {
        size_t j = (size_t)hash_words(ss->sets + i * ss->W, ss->W) & (newcap - 1);
        while (ht[j] != 0) {
            j = (j + 1) & (newcap - 1);
        }
        ht[j] = (uint32_t)i + 1;
    }
    free(ss->ht);
    ss->ht = ht;
    ss->htcap = newcap;
    return PV_RESULT_OK;
}

/* Index of state set 'set' (already closed), adding it if new. */
static pv_result subset_intern(struct subset *ss, const uint64_t *set, uint32_t max_states,
                               uint32_t *idx)
{
    size_t bytes = ss->W * sizeof(uint64_t);
    size_t j = (size_t)hash_words(set, ss->W) & (ss->htcap - 1);
    while (ss->ht[j] != 0) {
        uint32_t i = ss->ht[j] - 1;
        if (memcmp(ss->sets + (size_t)i * ss->W, set, bytes) == 0) {
            *idx = i;
            return PV_RESULT_OK;
        }
        j = (j + 1) & (ss->htcap - 1);
    }
    PV_ENSURE(ss->count < max_states, PV_ERR_PATTERN);
    if (ss->count == ss->cap) {
        size_t cap = ss->cap ? ss->cap * 2 : 16;
        uint64_t *sets = pv_realloc(ss->sets, cap * bytes);
        PV_ENSURE(sets != NULL, PV_ERR_NOMEM);
        ss->sets = sets;
        uint32_t *trans = pv_realloc(ss->trans, cap * ss->k * sizeof(uint32_t));
        PV_ENSURE(trans != NULL, PV_ERR_NOMEM);
        ss->trans = trans;
        ss->cap = cap;
    }
    memcpy(ss->sets + ss->count * ss->W, set, bytes);
    ss->ht[j] = (uint32_t)ss->count + 1;
    *idx = (uint32_t)ss->count;
    ss->count++;
    if (ss->count * 2 > ss->htcap) {
        PV_GUARD(subset_rehash(ss, ss->htcap * 2));
    }
    return PV_RESULT_OK;
}

static pv_result subset_prepare(struct subset *ss, const struct model_nfa *n)
{
    ss->nn = n->nstates;
    ss->W = (n->nstates + 63) / 64;
    ss->k = byte_classes(n, ss->cls);
    ss->eps_off = pv_calloc(ss->nn + 1, sizeof(uint32_t));
    ss->sed_off = pv_calloc(ss->nn + 1, sizeof(uint32_t));
    ss->eps_to = pv_calloc(n->nedges + 1, sizeof(uint32_t));
    ss->sed_to = pv_calloc(n->nedges + 1, sizeof(uint32_t));
    ss->sed_cls = pv_calloc(n->nedges + 1, sizeof(struct model_byteset));
    ss->stack = pv_calloc(ss->nn + 1, sizeof(uint32_t));
    ss->htcap = 64;
    ss->ht = pv_calloc(ss->htcap, sizeof(uint32_t));
    PV_ENSURE(ss->eps_off != NULL && ss->sed_off != NULL && ss->eps_to != NULL &&
                  ss->sed_to != NULL && ss->sed_cls != NULL && ss->stack != NULL && ss->ht != NULL,
              PV_ERR_NOMEM);

    /* Representative byte of each class, to read class membership of sets. */
    int rep[256];
    for (size_t c = 0; c < 256; c++) {
        rep[c] = -1;
    }
    for (unsigned b = 0; b < 256; b++) {
        if (rep[ss->cls[b]] < 0) {
            rep[ss->cls[b]] = (int)b;
        }
    }

    for (size_t e = 0; e < n->nedges; e++) {
        if (n->edges[e].set < 0) {
            ss->eps_off[n->edges[e].from + 1]++;
        } else {
            ss->sed_off[n->edges[e].from + 1]++;
        }
    }
    for (uint32_t q = 0; q < ss->nn; q++) {
        ss->eps_off[q + 1] += ss->eps_off[q];
        ss->sed_off[q + 1] += ss->sed_off[q];
    }
    /* Fill using the stack array as per-state cursors. */
    uint32_t *ecur = ss->stack;
    for (uint32_t q = 0; q < ss->nn; q++) {
        ecur[q] = ss->eps_off[q];
    }
    for (size_t e = 0; e < n->nedges; e++) {
        if (n->edges[e].set < 0) {
            ss->eps_to[ecur[n->edges[e].from]++] = n->edges[e].to;
        }
    }
    for (uint32_t q = 0; q < ss->nn; q++) {
        ecur[q] = ss->sed_off[q];
    }
    for (size_t e = 0; e < n->nedges; e++) {
        if (n->edges[e].set >= 0) {
            uint32_t pos = ecur[n->edges[e].from]++;
            const struct model_byteset *set = &n->sets[n->edges[e].set];
            ss->sed_to[pos] = n->edges[e].to;
            model_byteset_clear(&ss->sed_cls[pos]);
            int one = byteset_single(set);
            if (one >= 0) {
                model_byteset_add(&ss->sed_cls[pos], ss->cls[one]);
                continue;
            }
            for (uint32_t c = 0; c < ss->k; c++) {
                if (model_byteset_has(set, (uint8_t)rep[c])) {
                    model_byteset_add(&ss->sed_cls[pos], (uint8_t)c);
                }
            }
        }
    }
    return PV_RESULT_OK;
}

static pv_result subset_run(struct subset *ss, uint32_t start, uint32_t max_states)
{
    size_t bytes = ss->W * sizeof(uint64_t);
    uint64_t *acc = pv_calloc((size_t)ss->k * ss->W + 1, sizeof(uint64_t));
    PV_ENSURE(acc != NULL, PV_ERR_NOMEM);
    uint32_t idx = 0;
    uint32_t dead = UINT32_MAX; /* index of the empty set, interned on first use */
    pv_result r;

    acc[start >> 6] |= (uint64_t)1 << (start & 63);
    closure(ss, acc);
    r = subset_intern(ss, acc, max_states, &idx);
    memset(acc, 0, bytes);
    for (size_t i = 0; pv_ok(r) && i < ss->count; i++) {
        /* Successor sets of the classes this state has edges for; every
         * other class leads to the empty set. */
        struct model_byteset touched;
        model_byteset_clear(&touched);
        const uint64_t *set = ss->sets + i * ss->W;
        for (size_t w = 0; w < ss->W; w++) {
            uint64_t bits = set[w];
            while (bits != 0) {
                uint32_t q = (uint32_t)(w * 64 + (unsigned)__builtin_ctzll(bits));
                bits &= bits - 1;
                for (uint32_t e = ss->sed_off[q]; e < ss->sed_off[q + 1]; e++) {
                    uint32_t t = ss->sed_to[e];
                    for (size_t cw = 0; cw < 4; cw++) {
                        uint64_t cb = ss->sed_cls[e].w[cw];
                        touched.w[cw] |= cb;
                        while (cb != 0) {
                            size_t c = cw * 64 + (unsigned)__builtin_ctzll(cb);
                            cb &= cb - 1;
                            acc[c * ss->W + (t >> 6)] |= (uint64_t)1 << (t & 63);
                            ss->work++;
                        }
                    }
                }
            }
        }
        for (uint32_t c = 0; c < ss->k && pv_ok(r); c++) {
            uint64_t *row = acc + (size_t)c * ss->W;
            if (!model_byteset_has(&touched, (uint8_t)c)) {
                if (dead == UINT32_MAX) {
                    r = subset_intern(ss, row, max_states, &dead); /* row is all zero */
                }
                idx = dead;
            } else {
                ss->work += ss->W;
                closure(ss, row);
                r = subset_intern(ss, row, max_states, &idx);
                memset(row, 0, bytes);
            }
            if (pv_ok(r)) {
                ss->trans[i * ss->k + c] = idx;
            }
        }
        if (pv_ok(r) && ss->work > SUBSET_MAX_WORK) {
            r = pv_fail(PV_ERR_PATTERN, __FILE__);
        }
    }
    free(acc);
    return r;
}

/* ===========================================================================
 * Minimisation (Hopcroft) and packing
 * ========================================================================= */

/* Hopcroft's partition refinement: blk[s] = block of state s in the coarsest
 * partition compatible with acceptance and transitions, *nb = blocks. Every
 * state is reachable (subset construction only makes reachable states), so
 * the blocks are the states of the minimal DFA. O(k n log n). */
struct hopcroft {
    uint32_t *elems; /* states grouped by block */
    uint32_t *loc;   /* position of each state in elems */
    uint32_t *first; /* block ranges [first, end) in elems */
    uint32_t *end;
    uint32_t *marked; /* per block, states moved to its front */
    uint32_t *work;   /* stack of splitter blocks */
    uint8_t *inwork;
    uint32_t *pred_off; /* predecessors of (class c, state t): k * n + 1 */
    uint32_t *pred;
    uint32_t *xlist; /* predecessor set of the current splitter */
    uint32_t *xstamp;
    uint32_t *touched;
    uint32_t *snap; /* the splitter's states when it was popped */
};

static void hopcroft_free(struct hopcroft *h)
{
    free(h->elems);
    free(h->loc);
    free(h->first);
    free(h->end);
    free(h->marked);
    free(h->work);
    free(h->inwork);
    free(h->pred_off);
    free(h->pred);
    free(h->xlist);
    free(h->xstamp);
    free(h->touched);
    free(h->snap);
}

static pv_result hopcroft_alloc(struct hopcroft *h, uint32_t n, uint32_t k)
{
    size_t nn = (size_t)n + 1;
    h->elems = pv_malloc(nn * sizeof(uint32_t));
    h->loc = pv_malloc(nn * sizeof(uint32_t));
    h->first = pv_malloc(nn * sizeof(uint32_t));
    h->end = pv_malloc(nn * sizeof(uint32_t));
    h->marked = pv_calloc(nn, sizeof(uint32_t));
    h->work = pv_malloc(nn * sizeof(uint32_t));
    h->inwork = pv_calloc(nn, 1);
    h->pred_off = pv_calloc((size_t)k * n + 1, sizeof(uint32_t));
    h->pred = pv_malloc(((size_t)k * n + 1) * sizeof(uint32_t));
    h->xlist = pv_malloc(nn * sizeof(uint32_t));
    h->xstamp = pv_calloc(nn, sizeof(uint32_t));
    h->touched = pv_malloc(nn * sizeof(uint32_t));
    h->snap = pv_malloc(nn * sizeof(uint32_t));
    PV_ENSURE(h->elems != NULL && h->loc != NULL && h->first != NULL && h->end != NULL &&
                  h->marked != NULL && h->work != NULL && h->inwork != NULL &&
                  h->pred_off != NULL && h->pred != NULL && h->xlist != NULL && h->xstamp != NULL &&
                  h->touched != NULL && h->snap != NULL,
              PV_ERR_NOMEM);
    return PV_RESULT_OK;
}

/* long: Hopcroft's refinement: the inverse transitions, the initial partition and the worklist
 * loop share the arrays of struct hopcroft */
static pv_result minimise(uint32_t n, uint32_t k, const uint32_t *trans, const uint8_t *acc,
                          uint32_t *blk, uint32_t *nb)
{
    struct hopcroft h;
    memset(&h, 0, sizeof(h));
    pv_result r = hopcroft_alloc(&h, n, k);
    if (!pv_ok(r)) {
        hopcroft_free(&h);
        return r;
    }

    /* Inverse transitions, bucketed by (class, target). */
    for (uint32_t s = 0; s < n; s++) {
        for (uint32_t c = 0; c < k; c++) {
            h.pred_off[(size_t)c * n + trans[(size_t)s * k + c] + 1]++;
        }
    }
    for (size_t i = 0; i < (size_t)k * n; i++) {
        h.pred_off[i + 1] += h.pred_off[i];
    }
    for (uint32_t s = 0; s < n; s++) {
        for (uint32_t c = 0; c < k; c++) {
            size_t bucket = (size_t)c * n + trans[(size_t)s * k + c];
            h.pred[h.pred_off[bucket]++] = s;
        }
    }
    for (size_t i = (size_t)k * n; i > 0; i--) {
        h.pred_off[i] = h.pred_off[i - 1];
    }
    h.pred_off[0] = 0;

    /* Initial partition: accepting, then rejecting states. */
    uint32_t nacc = 0;
    uint32_t pos = 0;
    for (uint32_t s = 0; s < n; s++) {
        nacc += acc[s] ? 1u : 0u;
    }
    for (int pass = 1; pass >= 0; pass--) {
        for (uint32_t s = 0; s < n; s++) {
            if ((acc[s] != 0) == (pass == 1)) {
                h.elems[pos] = s;
                h.loc[s] = pos++;
            }
        }
    }
    uint32_t nblocks = 0;
    uint32_t nwork = 0;
    uint32_t stamp = 0;
    if (nacc > 0) {
        h.first[nblocks] = 0;
        h.end[nblocks] = nacc;
        nblocks++;
    }
    if (nacc < n) {
        h.first[nblocks] = nacc;
        h.end[nblocks] = n;
        nblocks++;
    }
    for (uint32_t b = 0; b < nblocks; b++) {
        for (uint32_t i = h.first[b]; i < h.end[b]; i++) {
            blk[h.elems[i]] = b;
        }
    }
    if (nblocks == 2) {
        uint32_t small = (nacc <= n - nacc) ? 0 : 1;
        h.work[nwork++] = small;
        h.inwork[small] = 1;
    }

    while (nwork > 0) {
        uint32_t a = h.work[--nwork];
        h.inwork[a] = 0;
        uint32_t asize = h.end[a] - h.first[a];
        memcpy(h.snap, h.elems + h.first[a], (size_t)asize * sizeof(uint32_t));
        for (uint32_t c = 0; c < k; c++) {
            uint32_t nx = 0;
            uint32_t ntouched = 0;
            stamp++;
            for (uint32_t i = 0; i < asize; i++) {
                size_t bucket = (size_t)c * n + h.snap[i];
                for (uint32_t e = h.pred_off[bucket]; e < h.pred_off[bucket + 1]; e++) {
                    uint32_t s = h.pred[e];
                    if (h.xstamp[s] != stamp) {
                        h.xstamp[s] = stamp;
                        h.xlist[nx++] = s;
                    }
                }
            }
            /* Move the predecessors to the front of their blocks. */
            for (uint32_t i = 0; i < nx; i++) {
                uint32_t s = h.xlist[i];
                uint32_t b = blk[s];
                if (h.marked[b] == 0) {
                    h.touched[ntouched++] = b;
                }
                uint32_t to = h.first[b] + h.marked[b];
                uint32_t other = h.elems[to];
                uint32_t from = h.loc[s];
                h.elems[to] = s;
                h.loc[s] = to;
                h.elems[from] = other;
                h.loc[other] = from;
                h.marked[b]++;
            }
            /* Split every block that is only partly marked. */
            for (uint32_t t = 0; t < ntouched; t++) {
                uint32_t b = h.touched[t];
                uint32_t m = h.marked[b];
                h.marked[b] = 0;
                if (m == h.end[b] - h.first[b]) {
                    continue;
                }
                uint32_t z = nblocks++;
                h.first[z] = h.first[b];
                h.end[z] = h.first[b] + m;
                h.first[b] += m;
                for (uint32_t i = h.first[z]; i < h.end[z]; i++) {
                    blk[h.elems[i]] = z;
                }
                uint32_t push = z;
                if (!h.inwork[b] && h.end[b] - h.first[b] < m) {
                    push = b;
                }
                h.work[nwork++] = push;
                h.inwork[push] = 1;
            }
        }
    }
    hopcroft_free(&h);
    *nb = nblocks;
    return PV_RESULT_OK;
}

/* Build g's tables from a DFA given as states x classes over cls[]: merge
 * equal class columns, put the sinks last, record start/dead/universal. */
/* long: the packing steps (merge columns, order states, fill tables) share the order and column
 * maps; each step is a short loop */
static pv_result pack(struct model_glob *g, uint32_t n, uint32_t k, const uint8_t cls[256],
                      const uint32_t *trans, const uint8_t *acc, uint32_t start, bool want_fast)
{
    /* Merge equal columns (compared only when their hashes agree). */
    uint32_t colmap[256];
    uint32_t colrep[256] = {0};
    uint64_t colhash[256];
    uint32_t nk = 0;
    for (uint32_t c = 0; c < k; c++) {
        uint64_t h = 0x9e3779b97f4a7c15u;
        for (uint32_t s = 0; s < n; s++) {
            h = (h ^ trans[(size_t)s * k + c]) * 0xff51afd7ed558ccdu;
        }
        colhash[c] = h;
    }
    for (uint32_t c = 0; c < k; c++) {
        uint32_t found = nk;
        for (uint32_t d = 0; d < nk && found == nk; d++) {
            uint32_t r = colrep[d];
            bool same = colhash[r] == colhash[c];
            for (uint32_t s = 0; s < n && same; s++) {
                same = trans[(size_t)s * k + c] == trans[(size_t)s * k + r];
            }
            if (same) {
                found = d;
            }
        }
        if (found == nk) {
            colrep[nk++] = c;
        }
        colmap[c] = found;
    }

    /* Order: ordinary states, then the universal sink, then the dead sink. */
    uint32_t dead = n;
    uint32_t univ = n;
    for (uint32_t s = 0; s < n; s++) {
        bool sink = true;
        for (uint32_t c = 0; c < k && sink; c++) {
            sink = trans[(size_t)s * k + c] == s;
        }
        if (sink && acc[s] && univ == n) {
            univ = s;
        } else if (sink && !acc[s] && dead == n) {
            dead = s;
        }
    }
    uint32_t shift = 0;
    while ((1u << shift) < nk) {
        shift++;
    }
    uint32_t *order = pv_malloc((size_t)n * sizeof(uint32_t));
    uint16_t *nt = pv_malloc((size_t)n * nk * sizeof(uint16_t) + 1);
    uint8_t *na = pv_malloc((size_t)n + 1);
    uint32_t *fast = want_fast ? pv_calloc((size_t)n << shift, sizeof(uint32_t)) : NULL;
    if (order == NULL || nt == NULL || na == NULL || (want_fast && fast == NULL)) {
        free(order);
        free(nt);
        free(na);
        free(fast);
        PV_BAIL(PV_ERR_NOMEM);
    }
    uint32_t pos = 0;
    for (uint32_t s = 0; s < n; s++) {
        if (s != dead && s != univ) {
            order[s] = pos++;
        }
    }
    uint32_t sinks = pos;
    if (univ != n) {
        order[univ] = pos++;
    }
    if (dead != n) {
        order[dead] = pos++;
    }
    for (uint32_t s = 0; s < n; s++) {
        for (uint32_t d = 0; d < nk; d++) {
            uint32_t to = order[trans[(size_t)s * k + colrep[d]]];
            nt[(size_t)order[s] * nk + d] = (uint16_t)to;
            if (fast != NULL) {
                fast[((size_t)order[s] << shift) + d] = to << shift;
            }
        }
        na[order[s]] = acc[s] ? 1 : 0;
    }
    free(g->trans);
    free(g->accept);
    free(g->fast);
    g->trans = nt;
    g->accept = na;
    g->fast = fast;
    g->shift = shift;
    g->nstates = n;
    g->nclasses = nk;
    g->start = order[start];
    g->sinks = sinks;
    g->universal = univ == n ? n : order[univ];
    g->dead = dead == n ? n : order[dead];
    for (unsigned b = 0; b < 256; b++) {
        g->cls[b] = (uint8_t)colmap[cls[b]];
    }
    free(order);
    return PV_RESULT_OK;
}

pv_result model_dfa_build(const struct model_nfa *n, uint32_t start, uint32_t final,
                          uint32_t max_states, struct model_glob *g)
{
    PV_ENSURE_REF(n);
    PV_ENSURE_REF(g);
    PV_ENSURE(!n->failed, PV_ERR_NOMEM);
    PV_ENSURE(!n->toobig, PV_ERR_PATTERN);
    PV_ENSURE(start < n->nstates && final < n->nstates, PV_ERR_INTERNAL);
    if (max_states > 65535) {
        max_states = 65535;
    }

    struct subset ss;
    memset(&ss, 0, sizeof(ss));
    uint8_t *acc = NULL;
    uint32_t *blk = NULL;
    uint32_t *mtrans = NULL;
    uint8_t *macc = NULL;
    uint32_t nb = 0;
    uint32_t count = 0;
    pv_result r = subset_prepare(&ss, n);
    if (!pv_ok(r)) {
        goto out;
    }
    r = subset_run(&ss, start, max_states);
    if (!pv_ok(r)) {
        goto out;
    }
    count = (uint32_t)ss.count;
    acc = pv_malloc(count);
    blk = pv_malloc((size_t)count * sizeof(uint32_t));
    if (acc == NULL || blk == NULL) {
        r = pv_fail(PV_ERR_NOMEM, __FILE__);
        goto out;
    }
    for (uint32_t s = 0; s < count; s++) {
        acc[s] = (ss.sets[(size_t)s * ss.W + (final >> 6)] >> (final & 63)) & 1u;
    }
    r = minimise(count, ss.k, ss.trans, acc, blk, &nb);
    if (!pv_ok(r)) {
        goto out;
    }
    mtrans = pv_malloc((size_t)nb * ss.k * sizeof(uint32_t));
    macc = pv_malloc(nb);
    if (mtrans == NULL || macc == NULL) {
        r = pv_fail(PV_ERR_NOMEM, __FILE__);
        goto out;
    }
    for (uint32_t s = 0; s < count; s++) {
        for (uint32_t c = 0; c < ss.k; c++) {
            mtrans[(size_t)blk[s] * ss.k + c] = blk[ss.trans[(size_t)s * ss.k + c]];
        }
        macc[blk[s]] = acc[s];
    }
    r = pack(g, nb, ss.k, ss.cls, mtrans, macc, blk[0], true);
out:
    subset_free(&ss);
    free(acc);
    free(blk);
    free(mtrans);
    free(macc);
    return r;
}

pv_result model_dfa_literal(const uint8_t *lit, size_t len, struct model_glob *g)
{
    PV_ENSURE_REF(g);
    PV_ENSURE(lit != NULL || len == 0, PV_ERR_NULL);
    PV_ENSURE(len <= MODEL_GLOB_MAX_LITERAL, PV_ERR_PATTERN);
    /* States 0..len: i bytes matched; len + 1: dead. Class 0: bytes absent
     * from the literal. All states are distinguishable, so this is minimal. */
    uint8_t cls[256];
    uint32_t k = 1;
    memset(cls, 0, sizeof(cls));
    for (size_t i = 0; i < len; i++) {
        if (cls[lit[i]] == 0) {
            cls[lit[i]] = (uint8_t)k++;
        }
    }
    uint32_t n = (uint32_t)len + 2;
    uint32_t dead = n - 1;
    uint32_t *trans = pv_malloc((size_t)n * k * sizeof(uint32_t));
    uint8_t *acc = pv_calloc(n, 1);
    pv_result r = PV_RESULT_OK;
    if (trans == NULL || acc == NULL) {
        r = pv_fail(PV_ERR_NOMEM, __FILE__);
        goto out;
    }
    for (uint32_t s = 0; s < n; s++) {
        for (uint32_t c = 0; c < k; c++) {
            trans[(size_t)s * k + c] = dead;
        }
        if (s < len) {
            trans[(size_t)s * k + cls[lit[s]]] = s + 1;
        }
    }
    acc[len] = 1;
    r = pack(g, n, k, cls, trans, acc, 0, false);
out:
    free(trans);
    free(acc);
    return r;
}
