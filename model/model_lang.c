/* SPDX-License-Identifier: Apache-2.0 */
/* model_lang.c - built-in languages and the emptiness check for the prover
 *
 * model_lang_check() decides whether the intersection of glob languages (and
 * complements) within a domain language is empty, by breadth-first search
 * over the reachable tuples of states. The byte alphabet is partitioned once
 * per call into joint classes whose representative byte prefers a-z, then
 * 0-9, then other printable bytes, so witnesses are short and readable; BFS
 * makes them shortest. The domain automata and the "contains %2F" language
 * live in static storage, built once under pthread_once. The automata
 * themselves come from model_dfa.c.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_dfa.h"

/* ===========================================================================
 * Built-in languages: the domains and "contains %2F"
 * ========================================================================= */

#define BI_MAX_STATES 24u

enum builtin { BI_ANY, BI_DNS, BI_CANON, BI_ABS, BI_QUERY, BI_PCT2F, BI_GQLNAME, BI_COUNT };

struct builtin_store {
    struct model_glob g;
    uint16_t trans[BI_MAX_STATES * 256];
    uint8_t accept[BI_MAX_STATES];
};

static struct builtin_store builtins[BI_COUNT];
static uint8_t witness_pref[256]; /* bytes in witness preference order */
static pthread_once_t builtins_once = PTHREAD_ONCE_INIT;

static bool is_lower(uint8_t b)
{
    return b >= 'a' && b <= 'z';
}

static bool is_digit(uint8_t b)
{
    return b >= '0' && b <= '9';
}

static int hex_upper(uint8_t b)
{
    if (is_digit(b)) {
        return b - '0';
    }
    if (b >= 'A' && b <= 'F') {
        return b - 'A' + 10;
    }
    return -1;
}

/* Bytes written literally by model_path_canonicalize. */
static bool canon_lit(unsigned b)
{
    if (is_lower((uint8_t)b) || is_digit((uint8_t)b) || (b >= 'A' && b <= 'Z')) {
        return true;
    }
    return b != 0 && memchr("-._~!$&'()*+,=:@", (int)b, 16) != NULL;
}

static uint32_t any_next(uint32_t s, uint8_t b)
{
    (void)s;
    (void)b;
    return 0;
}

static bool any_acc(uint32_t s)
{
    return s == 0;
}

enum { DNS_DEAD, DNS_START, DNS_LETTER, DNS_OTHER };

static uint32_t dns_next(uint32_t s, uint8_t b)
{
    bool other = is_digit(b) || b == '_' || b == '-';
    switch (s) {
    case DNS_START:
        return is_lower(b) ? DNS_LETTER : other ? DNS_OTHER : DNS_DEAD;
    case DNS_LETTER:
    case DNS_OTHER:
        if (is_lower(b) || other) {
            return s;
        }
        return b == '.' ? DNS_START : DNS_DEAD;
    default:
        return DNS_DEAD;
    }
}

static bool dns_acc(uint32_t s)
{
    return s == DNS_LETTER;
}

/* GraphQL Names (docs/semantics.md#graphql-names): [_A-Za-z][_0-9A-Za-z]* */
enum { GN_DEAD, GN_START, GN_IN };

static bool gn_alpha(uint8_t b)
{
    return is_lower(b) || (b >= 'A' && b <= 'Z') || b == '_';
}

static uint32_t gname_next(uint32_t s, uint8_t b)
{
    switch (s) {
    case GN_START:
        return gn_alpha(b) ? GN_IN : GN_DEAD;
    case GN_IN:
        return gn_alpha(b) || is_digit(b) ? GN_IN : GN_DEAD;
    default:
        return GN_DEAD;
    }
}

static bool gname_acc(uint32_t s)
{
    return s == GN_IN;
}

/* Canonical paths: seg start (accepting), ".", "..", inside a segment
 * (accepting), after '%', after '%H' for H = 2..F. */
enum { CP_DEAD, CP_START, CP_SEG0, CP_DOT1, CP_DOT2, CP_SEG, CP_PCT, CP_PCTH };

static uint32_t canon_next(uint32_t s, uint8_t b)
{
    if (s >= CP_PCTH) {
        int lo = hex_upper(b);
        unsigned v = (s - CP_PCTH + 2) * 16u + (unsigned)lo;
        return (lo >= 0 && v >= 0x20 && v != 0x7f && !canon_lit(v)) ? CP_SEG : CP_DEAD;
    }
    switch (s) {
    case CP_START:
        return b == '/' ? CP_SEG0 : CP_DEAD;
    case CP_SEG0:
    case CP_DOT1:
    case CP_DOT2:
    case CP_SEG:
        if (b == '%') {
            return CP_PCT;
        }
        if (b == '/') {
            return s == CP_SEG ? CP_SEG0 : CP_DEAD;
        }
        if (b == '.' && s == CP_SEG0) {
            return CP_DOT1;
        }
        if (b == '.' && s == CP_DOT1) {
            return CP_DOT2;
        }
        return canon_lit(b) ? CP_SEG : CP_DEAD;
    case CP_PCT: {
        int hi = hex_upper(b);
        return hi >= 2 ? CP_PCTH + (uint32_t)hi - 2 : CP_DEAD;
    }
    default:
        return CP_DEAD;
    }
}

static bool canon_acc(uint32_t s)
{
    return s == CP_SEG0 || s == CP_SEG;
}

/* Canonical absolute paths (docs/semantics.md#identity): "/" then one or
 * more segments separated by single "/", none empty, "." or "..", no NUL. */
enum { AP_DEAD, AP_START, AP_SEG0, AP_DOT1, AP_DOT2, AP_IN };

static uint32_t abs_next(uint32_t s, uint8_t b)
{
    if (b == 0) {
        return AP_DEAD;
    }
    switch (s) {
    case AP_START:
        return b == '/' ? AP_SEG0 : AP_DEAD;
    case AP_SEG0:
        return b == '/' ? AP_DEAD : b == '.' ? AP_DOT1 : AP_IN;
    case AP_DOT1:
        return b == '/' ? AP_DEAD : b == '.' ? AP_DOT2 : AP_IN;
    case AP_DOT2:
        return b == '/' ? AP_DEAD : AP_IN;
    case AP_IN:
        return b == '/' ? AP_SEG0 : AP_IN;
    default:
        return AP_DEAD;
    }
}

static bool abs_acc(uint32_t s)
{
    return s == AP_IN;
}

/* Well-formed UTF-8 (RFC 3629) without NUL. */
enum { U8_DEAD, U8_OK, U8_C1, U8_C2, U8_C3, U8_E0, U8_ED, U8_F0, U8_F4 };

static uint32_t utf8_next(uint32_t s, uint8_t b)
{
    bool cont = b >= 0x80 && b <= 0xbf;
    switch (s) {
    case U8_OK:
        if (b == 0) {
            return U8_DEAD;
        }
        if (b < 0x80) {
            return U8_OK;
        }
        if (b >= 0xc2 && b <= 0xdf) {
            return U8_C1;
        }
        if (b == 0xe0) {
            return U8_E0;
        }
        if (b == 0xed) {
            return U8_ED;
        }
        if (b >= 0xe1 && b <= 0xef) {
            return U8_C2;
        }
        if (b == 0xf0) {
            return U8_F0;
        }
        if (b >= 0xf1 && b <= 0xf3) {
            return U8_C3;
        }
        return b == 0xf4 ? U8_F4 : U8_DEAD;
    case U8_C1:
        return cont ? U8_OK : U8_DEAD;
    case U8_C2:
        return cont ? U8_C1 : U8_DEAD;
    case U8_C3:
        return cont ? U8_C2 : U8_DEAD;
    case U8_E0:
        return (b >= 0xa0 && b <= 0xbf) ? U8_C1 : U8_DEAD;
    case U8_ED:
        return (b >= 0x80 && b <= 0x9f) ? U8_C1 : U8_DEAD;
    case U8_F0:
        return (b >= 0x90 && b <= 0xbf) ? U8_C2 : U8_DEAD;
    case U8_F4:
        return (b >= 0x80 && b <= 0x8f) ? U8_C2 : U8_DEAD;
    default:
        return U8_DEAD;
    }
}

static bool utf8_acc(uint32_t s)
{
    return s == U8_OK;
}

/* "contains %2F": nothing yet, '%', "%2", found (accepting sink). */
static uint32_t pct_next(uint32_t s, uint8_t b)
{
    switch (s) {
    case 1:
        return b == '2' ? 2 : b == '%' ? 1 : 0;
    case 2:
        return b == 'F' ? 3 : b == '%' ? 1 : 0;
    case 3:
        return 3;
    default:
        return b == '%' ? 1 : 0;
    }
}

static bool pct_acc(uint32_t s)
{
    return s == 3;
}

static void builtin_make(struct builtin_store *st, uint32_t n, uint32_t start,
                         uint32_t (*next)(uint32_t, uint8_t), bool (*acc)(uint32_t))
{
    static uint32_t bytetab[BI_MAX_STATES * 256]; /* only used under pthread_once */
    uint8_t cls[256];
    unsigned rep[256] = {0};
    uint32_t k = 0;
    for (uint32_t s = 0; s < n; s++) {
        for (unsigned b = 0; b < 256; b++) {
            bytetab[s * 256 + b] = next(s, (uint8_t)b);
        }
    }
    for (unsigned b = 0; b < 256; b++) {
        uint32_t c = 0;
        for (; c < k; c++) {
            bool same = true;
            for (uint32_t s = 0; s < n && same; s++) {
                same = bytetab[s * 256 + b] == bytetab[s * 256 + rep[c]];
            }
            if (same) {
                break;
            }
        }
        if (c == k) {
            rep[k++] = b;
        }
        cls[b] = (uint8_t)c;
    }
    struct model_glob *g = &st->g;
    memset(g, 0, sizeof(*g));
    g->kind = MODEL_GLOB_VALUE;
    g->nstates = n;
    g->nclasses = k;
    g->start = start;
    g->trans = st->trans;
    g->accept = st->accept;
    memcpy(g->cls, cls, 256);
    g->dead = n;
    g->universal = n;
    for (uint32_t s = 0; s < n; s++) {
        bool sink = true;
        st->accept[s] = acc(s) ? 1 : 0;
        for (uint32_t c = 0; c < k; c++) {
            st->trans[s * k + c] = (uint16_t)bytetab[s * 256 + rep[c]];
            sink = sink && bytetab[s * 256 + rep[c]] == s;
        }
        if (sink && st->accept[s] && g->universal == n) {
            g->universal = s;
        } else if (sink && !st->accept[s] && g->dead == n) {
            g->dead = s;
        }
    }
    /* The built-ins are not renumbered; disable the matcher's sink shortcut. */
    g->sinks = n;
}

static void builtins_init(void)
{
    builtin_make(&builtins[BI_ANY], 1, 0, any_next, any_acc);
    builtin_make(&builtins[BI_DNS], 4, DNS_START, dns_next, dns_acc);
    builtin_make(&builtins[BI_CANON], CP_PCTH + 14, CP_START, canon_next, canon_acc);
    builtin_make(&builtins[BI_ABS], AP_IN + 1, AP_START, abs_next, abs_acc);
    builtin_make(&builtins[BI_QUERY], U8_F4 + 1, U8_OK, utf8_next, utf8_acc);
    builtin_make(&builtins[BI_PCT2F], 4, 0, pct_next, pct_acc);
    builtin_make(&builtins[BI_GQLNAME], 3, GN_START, gname_next, gname_acc);

    size_t n = 0;
    bool used[256] = {false};
    for (unsigned b = 'a'; b <= 'z'; b++) {
        witness_pref[n++] = (uint8_t)b;
        used[b] = true;
    }
    for (unsigned b = '0'; b <= '9'; b++) {
        witness_pref[n++] = (uint8_t)b;
        used[b] = true;
    }
    for (unsigned b = 0x21; b < 0x7f; b++) {
        if (!used[b]) {
            witness_pref[n++] = (uint8_t)b;
            used[b] = true;
        }
    }
    witness_pref[n++] = ' ';
    used[' '] = true;
    for (unsigned b = 0x80; b < 0x100; b++) {
        witness_pref[n++] = (uint8_t)b;
        used[b] = true;
    }
    for (unsigned b = 1; b < 0x80; b++) {
        if (!used[b]) {
            witness_pref[n++] = (uint8_t)b;
        }
    }
    witness_pref[n++] = 0;
}

const struct model_glob *model_dfa_domain(enum model_domain d)
{
    if (pthread_once(&builtins_once, builtins_init) != 0) {
        return NULL;
    }
    switch (d) {
    case MODEL_DOMAIN_ANY:
        return &builtins[BI_ANY].g;
    case MODEL_DOMAIN_DNS_NAME:
        return &builtins[BI_DNS].g;
    case MODEL_DOMAIN_CANONICAL_PATH:
        return &builtins[BI_CANON].g;
    case MODEL_DOMAIN_ABS_PATH:
        return &builtins[BI_ABS].g;
    case MODEL_DOMAIN_QUERY_VALUE:
        return &builtins[BI_QUERY].g;
    case MODEL_DOMAIN_GQL_NAME:
        return &builtins[BI_GQLNAME].g;
    }
    return NULL;
}

bool model_domain_has(enum model_domain d, const char *s, size_t len)
{
    const struct model_glob *g = model_dfa_domain(d);

    return g != NULL && model_glob_match(g, s, len);
}

/* ===========================================================================
 * Emptiness of an intersection: BFS over the product
 * ========================================================================= */

struct product {
    size_t m; /* automata: domain, then the terms */
    const struct model_glob **a;
    bool *pos;
    uint32_t nj;      /* joint byte classes */
    uint8_t rep[256]; /* representative byte, preference order */
    uint16_t *col;    /* m * nj: class of automaton i for joint class j */
    uint16_t *tuples; /* count * m */
    uint32_t *parent;
    uint8_t *via;
    size_t count;
    size_t cap;
    uint32_t *ht; /* slot = index + 1 */
    size_t htcap;
};

static void product_free(struct product *p)
{
    free(p->a);
    free(p->pos);
    free(p->col);
    free(p->tuples);
    free(p->parent);
    free(p->via);
    free(p->ht);
}

static uint64_t hash_tuple(const uint16_t *t, size_t m)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < m; i++) {
        h ^= t[i];
        h *= 0x100000001b3u;
    }
    return h ^ (h >> 31);
}

static pv_result product_rehash(struct product *p, size_t newcap)
{
    uint32_t *ht = pv_calloc(newcap, sizeof(*ht));
    PV_ENSURE(ht != NULL, PV_ERR_NOMEM);
    for (size_t i = 0; i < p->count; i++) {
        size_t j = (size_t)hash_tuple(p->tuples + i * p->m, p->m) & (newcap - 1);
        while (ht[j] != 0) {
            j = (j + 1) & (newcap - 1);
        }
        ht[j] = (uint32_t)i + 1;
    }
    free(p->ht);
    p->ht = ht;
    p->htcap = newcap;
    return PV_RESULT_OK;
}

/* Insert tuple 't' unless present. *added tells which. */
static pv_result product_add(struct product *p, const uint16_t *t, uint32_t parent, uint8_t via,
                             bool *added)
{
    size_t bytes = p->m * sizeof(uint16_t);
    size_t j = (size_t)hash_tuple(t, p->m) & (p->htcap - 1);
    *added = false;
    while (p->ht[j] != 0) {
        if (memcmp(p->tuples + (size_t)(p->ht[j] - 1) * p->m, t, bytes) == 0) {
            return PV_RESULT_OK;
        }
        j = (j + 1) & (p->htcap - 1);
    }
    if (p->count == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 256;
        uint16_t *tuples = pv_realloc(p->tuples, cap * bytes);
        PV_ENSURE(tuples != NULL, PV_ERR_NOMEM);
        p->tuples = tuples;
        uint32_t *par = pv_realloc(p->parent, cap * sizeof(uint32_t));
        PV_ENSURE(par != NULL, PV_ERR_NOMEM);
        p->parent = par;
        uint8_t *v = pv_realloc(p->via, cap);
        PV_ENSURE(v != NULL, PV_ERR_NOMEM);
        p->via = v;
        p->cap = cap;
    }
    memcpy(p->tuples + p->count * p->m, t, bytes);
    p->parent[p->count] = parent;
    p->via[p->count] = via;
    p->ht[j] = (uint32_t)p->count + 1;
    p->count++;
    *added = true;
    if (p->count * 2 > p->htcap) {
        PV_GUARD(product_rehash(p, p->htcap * 2));
    }
    return PV_RESULT_OK;
}

static pv_result product_setup(struct product *p, const struct model_glob *dom,
                               const struct model_lang_term *terms, size_t nterms)
{
    p->m = nterms + 1;
    p->a = pv_calloc(p->m, sizeof(*p->a));
    p->pos = pv_calloc(p->m, sizeof(*p->pos));
    PV_ENSURE(p->a != NULL && p->pos != NULL, PV_ERR_NOMEM);
    p->a[0] = dom;
    p->pos[0] = true;
    for (size_t i = 0; i < nterms; i++) {
        p->a[i + 1] = terms[i].g != NULL ? terms[i].g : &builtins[BI_PCT2F].g;
        p->pos[i + 1] = terms[i].positive;
    }

    /* Joint classes: refine by each automaton's byte classes. */
    uint8_t jc[256];
    uint32_t nj = 1;
    memset(jc, 0, sizeof(jc));
    for (size_t i = 0; i < p->m; i++) {
        const uint8_t *cls = p->a[i]->cls;
        uint8_t kj[256] = {0};
        uint8_t kc[256] = {0};
        uint32_t nk = 0;
        uint32_t last = 0;
        for (unsigned b = 0; b < 256; b++) {
            uint32_t t = last;
            if (nk == 0 || kj[t] != jc[b] || kc[t] != cls[b]) {
                for (t = 0; t < nk; t++) {
                    if (kj[t] == jc[b] && kc[t] == cls[b]) {
                        break;
                    }
                }
                if (t == nk) {
                    kj[nk] = jc[b];
                    kc[nk] = cls[b];
                    nk++;
                }
            }
            last = t;
            jc[b] = (uint8_t)t;
        }
        nj = nk;
    }

    /* Order the joint classes by their most preferred byte. */
    int ord[256];
    for (size_t j = 0; j < 256; j++) {
        ord[j] = -1;
    }
    uint32_t next = 0;
    for (size_t r = 0; r < 256; r++) {
        uint8_t b = witness_pref[r];
        if (ord[jc[b]] < 0) {
            ord[jc[b]] = (int)next;
            p->rep[next] = b;
            next++;
        }
    }
    p->nj = nj;
    p->col = pv_malloc(p->m * nj * sizeof(uint16_t));
    PV_ENSURE(p->col != NULL, PV_ERR_NOMEM);
    for (size_t i = 0; i < p->m; i++) {
        for (uint32_t j = 0; j < nj; j++) {
            p->col[i * nj + j] = p->a[i]->cls[p->rep[j]];
        }
    }
    p->htcap = 1024;
    p->ht = pv_calloc(p->htcap, sizeof(uint32_t));
    PV_ENSURE(p->ht != NULL, PV_ERR_NOMEM);
    return PV_RESULT_OK;
}

/* A tuple that can never lead to a member: a positive automaton is dead or
 * a negative one accepts every continuation. */
static bool product_hopeless(const struct product *p, const uint16_t *t)
{
    for (size_t i = 0; i < p->m; i++) {
        if (p->pos[i] ? t[i] == p->a[i]->dead : t[i] == p->a[i]->universal) {
            return true;
        }
    }
    return false;
}

static bool product_accepts(const struct product *p, const uint16_t *t)
{
    for (size_t i = 0; i < p->m; i++) {
        if ((p->a[i]->accept[t[i]] != 0) != p->pos[i]) {
            return false;
        }
    }
    return true;
}

static pv_result product_witness(const struct product *p, uint32_t idx, char **witness,
                                 size_t *wlen)
{
    size_t len = 0;
    for (uint32_t i = idx; i != 0; i = p->parent[i]) {
        len++;
    }
    if (wlen != NULL) {
        *wlen = len;
    }
    if (witness == NULL) {
        return PV_RESULT_OK;
    }
    char *w = pv_malloc(len + 1);
    PV_ENSURE(w != NULL, PV_ERR_NOMEM);
    w[len] = '\0';
    for (uint32_t i = idx; i != 0; i = p->parent[i]) {
        w[--len] = (char)p->via[i];
    }
    *witness = w;
    return PV_RESULT_OK;
}

static pv_result product_search(struct product *p, size_t max_states, char **witness, size_t *wlen,
                                enum model_lang_result *res)
{
    uint16_t *cur = pv_malloc(p->m * 2 * sizeof(uint16_t));
    PV_ENSURE(cur != NULL, PV_ERR_NOMEM);
    uint16_t *nxt = cur + p->m;
    bool added = false;
    pv_result r = PV_RESULT_OK;

    *res = MODEL_LANG_EMPTY;
    for (size_t i = 0; i < p->m; i++) {
        cur[i] = (uint16_t)p->a[i]->start;
    }
    if (product_hopeless(p, cur)) {
        goto out;
    }
    r = product_add(p, cur, 0, 0, &added);
    if (pv_ok(r) && product_accepts(p, cur)) {
        *res = MODEL_LANG_NONEMPTY;
        r = product_witness(p, 0, witness, wlen);
        goto out;
    }
    for (size_t head = 0; pv_ok(r) && head < p->count; head++) {
        memcpy(cur, p->tuples + head * p->m, p->m * sizeof(uint16_t));
        for (uint32_t j = 0; j < p->nj; j++) {
            for (size_t i = 0; i < p->m; i++) {
                const struct model_glob *g = p->a[i];
                nxt[i] = g->trans[(size_t)cur[i] * g->nclasses + p->col[i * p->nj + j]];
            }
            if (product_hopeless(p, nxt)) {
                continue;
            }
            if (p->count >= max_states) {
                /* Still a known state? Then the bound is not reached. */
                size_t h = (size_t)hash_tuple(nxt, p->m) & (p->htcap - 1);
                bool known = false;
                while (p->ht[h] != 0 && !known) {
                    known = memcmp(p->tuples + (size_t)(p->ht[h] - 1) * p->m, nxt,
                                   p->m * sizeof(uint16_t)) == 0;
                    h = (h + 1) & (p->htcap - 1);
                }
                if (!known) {
                    *res = MODEL_LANG_LIMIT;
                    goto out;
                }
                continue;
            }
            r = product_add(p, nxt, (uint32_t)head, p->rep[j], &added);
            if (!pv_ok(r)) {
                goto out;
            }
            if (added && product_accepts(p, nxt)) {
                *res = MODEL_LANG_NONEMPTY;
                r = product_witness(p, (uint32_t)(p->count - 1), witness, wlen);
                goto out;
            }
        }
    }
out:
    free(cur);
    return r;
}

enum model_lang_result model_lang_check(enum model_domain domain,
                                        const struct model_lang_term *terms, size_t nterms,
                                        size_t max_states, char **witness, size_t *wlen)
{
    if (witness != NULL) {
        *witness = NULL;
    }
    if (wlen != NULL) {
        *wlen = 0;
    }
    const struct model_glob *dom = model_dfa_domain(domain);
    if (dom == NULL || (terms == NULL && nterms > 0) || nterms > 65535) {
        pv_errno = PV_ERR_USAGE;
        return MODEL_LANG_LIMIT;
    }
    if (max_states == 0) {
        max_states = MODEL_LANG_DEFAULT_MAX_STATES;
    }
    if (max_states > UINT32_MAX - 1) {
        max_states = UINT32_MAX - 1;
    }

    struct product p;
    memset(&p, 0, sizeof(p));
    enum model_lang_result res = MODEL_LANG_LIMIT;
    pv_result r = product_setup(&p, dom, terms, nterms);
    if (pv_ok(r)) {
        r = product_search(&p, max_states, witness, wlen, &res);
    }
    product_free(&p);
    if (!pv_ok(r)) {
        /* Out of memory: undecided, said as such (not as a limit). */
        if (witness != NULL) {
            free(*witness);
            *witness = NULL;
        }
        pv_errno = PV_ERR_NOMEM;
        return MODEL_LANG_NOMEM;
    }
    return res;
}
