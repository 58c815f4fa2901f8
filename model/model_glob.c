/* SPDX-License-Identifier: Apache-2.0 */
/* model_glob.c - host, path, binary and value globs compiled to minimal DFAs
 *
 * A pattern is parsed straight into a Thompson-style NFA (model_dfa.h) and
 * determinised and minimised by model_dfa_build(); the compiled object keeps
 * the source text. Matching is a tight loop over the transition table with
 * no allocation; a pattern without metacharacters is compared with memcmp.
 * The syntax of each kind is docs/semantics.md#hosts (#host-pattern),
 * #binaries (#binary-glob), #paths (#path-glob) and #query:
 *
 *   HOST    '*' = [^.]*; a leading "**." = ([^.]+\.)+; without '*' the
 *           pattern is a literal (every byte stands for itself).
 *   PATH,   '/' separator: '*' = [^/]*, '?' = [^/], "[...]" a class without
 *   BINARY  '/' ('!' or '^' negates, a-z ranges), "{a,b}" alternation (no
 *           nesting), '\' escapes; "**" as a whole segment: alone = anything,
 *           leading "**" "/" = zero or more leading segments, "/" "**" "/" in
 *           the middle = "/" or "/.../", trailing "/" "**" = "/" then
 *           anything; any other "**" is '*'.
 *   VALUE   as PATH without a separator: '*' = anything, '?' = one byte.
 *
 * Compiled globs are immutable and interned process-wide by (kind, text):
 * model_glob_compile returns a shared, reference-counted object, so equal
 * patterns across rules and policies (and validation followed by
 * compilation) build their automaton once. model_glob_free drops one
 * reference; an unreferenced glob stays idle in the cache (bounded by
 * MODEL_GLOB_CACHE_IDLE_MAX entries and MODEL_GLOB_CACHE_IDLE_BYTES) and is
 * evicted least recently freed first. One mutex guards the table, the idle
 * list and every reference count; matching takes no lock.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_dfa.h"

struct gparse {
    struct model_nfa nfa;
    enum model_glob_kind kind;
    const uint8_t *p;
    size_t len;
    size_t i;
    const char *why;
    bool has_sep;
    uint8_t sep;
    struct model_byteset any;   /* every byte */
    struct model_byteset nosep; /* every byte but the separator */
};

static uint32_t emit_set(struct gparse *gp, uint32_t cur, const struct model_byteset *set)
{
    uint32_t t = model_nfa_state(&gp->nfa);
    model_nfa_set(&gp->nfa, cur, t, set);
    return t;
}

static uint32_t emit_byte(struct gparse *gp, uint32_t cur, uint8_t b)
{
    struct model_byteset s;
    model_byteset_clear(&s);
    model_byteset_add(&s, b);
    return emit_set(gp, cur, &s);
}

/* set* */
static uint32_t emit_star(struct gparse *gp, uint32_t cur, const struct model_byteset *set)
{
    uint32_t t = model_nfa_state(&gp->nfa);
    model_nfa_eps(&gp->nfa, cur, t);
    model_nfa_set(&gp->nfa, t, t, set);
    return t;
}

/* Zero or more whole segments followed by the separator: ( | .* '/'). */
static uint32_t emit_dirs(struct gparse *gp, uint32_t cur)
{
    uint32_t end = model_nfa_state(&gp->nfa);
    uint32_t x = model_nfa_state(&gp->nfa);
    model_nfa_eps(&gp->nfa, cur, end);
    model_nfa_eps(&gp->nfa, cur, x);
    model_nfa_set(&gp->nfa, x, x, &gp->any);
    struct model_byteset s;
    model_byteset_clear(&s);
    model_byteset_add(&s, gp->sep);
    model_nfa_set(&gp->nfa, x, end, &s);
    return end;
}

/* One or more labels, each followed by '.': ([^.]+ '.')+. */
static uint32_t emit_labels(struct gparse *gp, uint32_t cur)
{
    uint32_t a = model_nfa_state(&gp->nfa);
    uint32_t b = model_nfa_state(&gp->nfa);
    uint32_t c = model_nfa_state(&gp->nfa);
    struct model_byteset dot;
    model_byteset_clear(&dot);
    model_byteset_add(&dot, '.');
    model_nfa_eps(&gp->nfa, cur, a);
    model_nfa_set(&gp->nfa, a, b, &gp->nosep);
    model_nfa_set(&gp->nfa, b, b, &gp->nosep);
    model_nfa_set(&gp->nfa, b, c, &dot);
    model_nfa_eps(&gp->nfa, c, a);
    return c;
}

/* "[...]" starting at gp->i; leaves gp->i after the ']'. */
static bool parse_class(struct gparse *gp, struct model_byteset *set)
{
    size_t i = gp->i + 1;
    bool neg = false;
    bool first = true;
    model_byteset_clear(set);
    if (i < gp->len && (gp->p[i] == '!' || gp->p[i] == '^')) {
        neg = true;
        i++;
    }
    for (;;) {
        if (i >= gp->len) {
            gp->why = "unclosed '[' in pattern";
            return false;
        }
        uint8_t lo = gp->p[i];
        if (lo == ']' && !first) {
            i++;
            break;
        }
        first = false;
        if (lo == '\\') {
            if (i + 1 >= gp->len) {
                gp->why = "unclosed '[' in pattern";
                return false;
            }
            lo = gp->p[i + 1];
            i += 2;
        } else {
            i++;
        }
        if (i + 1 < gp->len && gp->p[i] == '-' && gp->p[i + 1] != ']') {
            uint8_t hi = gp->p[i + 1];
            i += 2;
            if (hi == '\\') {
                if (i >= gp->len) {
                    gp->why = "unclosed '[' in pattern";
                    return false;
                }
                hi = gp->p[i];
                i++;
            }
            if (hi < lo) {
                gp->why = "invalid range in '[...]' (start after end)";
                return false;
            }
            for (unsigned b = lo; b <= hi; b++) {
                model_byteset_add(set, (uint8_t)b);
            }
        } else {
            model_byteset_add(set, lo);
        }
    }
    if (neg) {
        model_byteset_invert(set);
    }
    if (gp->has_sep) {
        model_byteset_del(set, gp->sep);
    }
    gp->i = i;
    return true;
}

static bool parse_seq(struct gparse *gp, uint32_t *curp, bool in_brace);

/* "{a,b,...}" starting at gp->i. */
static bool parse_alt(struct gparse *gp, uint32_t *curp)
{
    uint32_t end = model_nfa_state(&gp->nfa);
    for (;;) {
        gp->i++; /* '{' or ',' */
        uint32_t a = model_nfa_state(&gp->nfa);
        model_nfa_eps(&gp->nfa, *curp, a);
        if (!parse_seq(gp, &a, true)) {
            return false;
        }
        model_nfa_eps(&gp->nfa, a, end);
        if (gp->i >= gp->len) {
            gp->why = "unclosed '{' in pattern";
            return false;
        }
        if (gp->p[gp->i] == '}') {
            gp->i++;
            break;
        }
    }
    *curp = end;
    return true;
}

/* A run of '*' at gp->i (PATH, BINARY, VALUE). */
static void parse_stars(struct gparse *gp, uint32_t *curp, bool in_brace, bool *after_sep)
{
    size_t run = 0;
    while (gp->i + run < gp->len && gp->p[gp->i + run] == '*') {
        run++;
    }
    size_t j = gp->i + run;
    bool starts = gp->i == 0 || *after_sep;
    bool at_end = j == gp->len;
    bool next_sep = !at_end && gp->has_sep && gp->p[j] == gp->sep;
    *after_sep = false;
    if (!gp->has_sep) {
        *curp = emit_star(gp, *curp, &gp->any);
    } else if (run == 2 && !in_brace && starts && at_end) {
        /* "**" alone, or a trailing "/" "**" after the separator. */
        *curp = emit_star(gp, *curp, &gp->any);
    } else if (run == 2 && !in_brace && starts && next_sep) {
        /* Leading "**" "/" or "/" "**" "/" in the middle. */
        *curp = emit_dirs(gp, *curp);
        j++;
        *after_sep = true;
    } else {
        *curp = emit_star(gp, *curp, &gp->nosep);
    }
    gp->i = j;
}

static bool parse_seq(struct gparse *gp, uint32_t *curp, bool in_brace)
{
    bool after_sep = false; /* the last token was an unescaped separator */
    while (gp->i < gp->len) {
        uint8_t c = gp->p[gp->i];
        if (in_brace && (c == ',' || c == '}')) {
            break;
        }
        switch (c) {
        case '\\':
            if (gp->i + 1 >= gp->len) {
                gp->why = "dangling '\\' at the end of the pattern";
                return false;
            }
            *curp = emit_byte(gp, *curp, gp->p[gp->i + 1]);
            gp->i += 2;
            after_sep = false;
            break;
        case '*':
            parse_stars(gp, curp, in_brace, &after_sep);
            break;
        case '?':
            *curp = emit_set(gp, *curp, gp->has_sep ? &gp->nosep : &gp->any);
            gp->i++;
            after_sep = false;
            break;
        case '[': {
            struct model_byteset set;
            if (!parse_class(gp, &set)) {
                return false;
            }
            *curp = emit_set(gp, *curp, &set);
            after_sep = false;
            break;
        }
        case '{':
            if (in_brace) {
                gp->why = "nested '{' in pattern is not supported";
                return false;
            }
            if (!parse_alt(gp, curp)) {
                return false;
            }
            after_sep = false;
            break;
        case '}':
            gp->why = "unmatched '}' in pattern";
            return false;
        default:
            *curp = emit_byte(gp, *curp, c);
            gp->i++;
            after_sep = gp->has_sep && c == gp->sep;
            break;
        }
    }
    return true;
}

static bool parse_host(struct gparse *gp, uint32_t *curp)
{
    size_t i = 0;
    if (gp->len >= 3 && gp->p[0] == '*' && gp->p[1] == '*' && gp->p[2] == '.') {
        *curp = emit_labels(gp, *curp);
        i = 3;
    }
    for (; i < gp->len; i++) {
        uint8_t c = gp->p[i];
        switch (c) {
        case '*':
            if (i + 1 < gp->len && gp->p[i + 1] == '*') {
                gp->why = "'**' in a host pattern is only allowed as the entire first label";
                return false;
            }
            *curp = emit_star(gp, *curp, &gp->nosep);
            break;
        case '?':
        case '[':
        case ']':
        case '{':
        case '}':
        case '\\':
            gp->why = "unsupported character in host pattern";
            return false;
        default:
            *curp = emit_byte(gp, *curp, c);
            break;
        }
    }
    return true;
}

/* The metacharacters of each glob syntax: a host pattern has only '*';
 * paths, binaries and values also '?', '[...]', '{a,b}' and '\\'. */
static const char *glob_meta(enum model_glob_kind kind)
{
    return kind == MODEL_GLOB_HOST ? "*" : "*?[{}\\";
}

size_t model_glob_literal_prefix(enum model_glob_kind kind, const char *pat, size_t len)
{
    const char *meta = glob_meta(kind);

    for (size_t i = 0; i < len; i++) {
        if (pat[i] != '\0' && strchr(meta, pat[i]) != NULL) {
            return i;
        }
    }
    return len;
}

static bool text_is_literal(enum model_glob_kind kind, const char *pat, size_t len)
{
    return model_glob_literal_prefix(kind, pat, len) == len;
}

static void glob_destroy(struct model_glob *g)
{
    free(g->text);
    free(g->trans);
    free(g->accept);
    free(g->fast);
    free(g);
}

struct model_glob *model_glob_compile_uncached(enum model_glob_kind kind, const char *pat,
                                               size_t len, const char **why)
{
    const char *why_dummy = NULL;
    if (why == NULL) {
        why = &why_dummy;
    }
    *why = NULL;
    if (pat == NULL && len > 0) {
        *why = "missing pattern";
        pv_errno = PV_ERR_NULL;
        return NULL;
    }

    struct gparse gp;
    memset(&gp, 0, sizeof(gp));
    gp.kind = kind;
    gp.p = (const uint8_t *)pat;
    gp.len = len;
    model_byteset_fill(&gp.any);
    bool known = false;
    switch (kind) {
    case MODEL_GLOB_HOST:
        gp.has_sep = true;
        gp.sep = '.';
        known = true;
        break;
    case MODEL_GLOB_PATH:
    case MODEL_GLOB_BINARY:
        gp.has_sep = true;
        gp.sep = '/';
        known = true;
        break;
    case MODEL_GLOB_VALUE:
        known = true;
        break;
    }
    if (!known) {
        *why = "unknown pattern kind";
        pv_errno = PV_ERR_USAGE;
        return NULL;
    }
    gp.nosep = gp.any;
    if (gp.has_sep) {
        model_byteset_del(&gp.nosep, gp.sep);
    }

    struct model_glob *g = pv_calloc(1, sizeof(*g));
    char *text = pv_malloc(len + 1);
    if (g == NULL || text == NULL) {
        free(g);
        free(text);
        *why = "out of memory";
        pv_errno = PV_ERR_NOMEM;
        return NULL;
    }
    if (len > 0) {
        memcpy(text, pat, len);
    }
    text[len] = '\0';
    g->text = text;
    g->textlen = len;
    g->kind = kind;
    g->literal = text_is_literal(kind, pat, len);

    if (g->literal) {
        pv_result r = model_dfa_literal(gp.p, len, g);
        if (!pv_ok(r)) {
            glob_destroy(g);
            *why = r.err == PV_ERR_PATTERN ? "pattern too long" : "out of memory";
            pv_errno = r.err;
            return NULL;
        }
        return g;
    }

    model_nfa_init(&gp.nfa);
    uint32_t start = model_nfa_state(&gp.nfa);
    uint32_t cur = start;
    bool ok = kind == MODEL_GLOB_HOST ? parse_host(&gp, &cur) : parse_seq(&gp, &cur, false);
    if (!ok) {
        model_nfa_clear(&gp.nfa);
        glob_destroy(g);
        *why = gp.why;
        pv_errno = PV_ERR_PATTERN;
        return NULL;
    }
    pv_result r = model_dfa_build(&gp.nfa, start, cur, MODEL_GLOB_MAX_STATES, g);
    model_nfa_clear(&gp.nfa);
    if (!pv_ok(r)) {
        glob_destroy(g);
        *why = r.err == PV_ERR_PATTERN ? "pattern too complex" : "out of memory";
        pv_errno = r.err;
        return NULL;
    }
    return g;
}

/* ===========================================================================
 * Interning cache
 * ========================================================================= */

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static struct model_glob **cache_tab; /* hash buckets, cache_cap of them */
static size_t cache_cap;
static size_t cache_count;
static struct model_glob *idle_head; /* least recently freed */
static struct model_glob *idle_tail;
static size_t idle_count;
static size_t idle_bytes;
static size_t cache_hits;
static size_t cache_misses;

static uint64_t key_hash(enum model_glob_kind kind, const char *pat, size_t len)
{
    uint64_t h = 0xcbf29ce484222325u ^ (uint64_t)kind;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ (uint8_t)pat[i]) * 0x100000001b3u;
    }
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9u;
    h ^= h >> 32;
    return h;
}

static size_t glob_bytes(const struct model_glob *g)
{
    size_t n = sizeof(*g) + g->textlen + 1;
    n += (size_t)g->nstates * g->nclasses * sizeof(uint16_t) + g->nstates;
    if (g->fast != NULL) {
        n += ((size_t)g->nstates << g->shift) * sizeof(uint32_t);
    }
    return n;
}

static bool key_eq(const struct model_glob *g, uint64_t h, enum model_glob_kind kind,
                   const char *pat, size_t len)
{
    return g->hash == h && g->kind == kind && g->textlen == len &&
           (len == 0 || memcmp(g->text, pat, len) == 0);
}

/* Caller holds cache_mu. */
static struct model_glob *cache_find(uint64_t h, enum model_glob_kind kind, const char *pat,
                                     size_t len)
{
    if (cache_cap == 0) {
        return NULL;
    }
    for (struct model_glob *g = cache_tab[h & (cache_cap - 1)]; g != NULL; g = g->hnext) {
        if (key_eq(g, h, kind, pat, len)) {
            return g;
        }
    }
    return NULL;
}

static void idle_unlink(struct model_glob *g)
{
    if (g->idle_prev != NULL) {
        g->idle_prev->idle_next = g->idle_next;
    } else {
        idle_head = g->idle_next;
    }
    if (g->idle_next != NULL) {
        g->idle_next->idle_prev = g->idle_prev;
    } else {
        idle_tail = g->idle_prev;
    }
    g->idle_prev = g->idle_next = NULL;
    idle_count--;
    idle_bytes -= g->bytes;
}

/* Take a reference (caller holds cache_mu). */
static void cache_ref(struct model_glob *g)
{
    if (g->refs == 0) {
        idle_unlink(g);
    }
    g->refs++;
}

static void cache_unlink(struct model_glob *g)
{
    struct model_glob **pp = &cache_tab[g->hash & (cache_cap - 1)];
    while (*pp != g) {
        pp = &(*pp)->hnext;
    }
    *pp = g->hnext;
    g->hnext = NULL;
    cache_count--;
}

/* Insert 'g' (fresh, refs 0, not cached); false when the table cannot grow
 * (the caller then hands 'g' out uncached). Caller holds cache_mu. */
static bool cache_insert(struct model_glob *g)
{
    if (cache_count >= cache_cap) {
        size_t ncap = cache_cap ? cache_cap * 2 : 256;
        struct model_glob **nt = pv_calloc(ncap, sizeof(*nt));
        if (nt == NULL) {
            if (cache_cap == 0) {
                return false;
            }
        } else {
            for (size_t i = 0; i < cache_cap; i++) {
                struct model_glob *e = cache_tab[i];
                while (e != NULL) {
                    struct model_glob *next = e->hnext;
                    size_t j = e->hash & (ncap - 1);
                    e->hnext = nt[j];
                    nt[j] = e;
                    e = next;
                }
            }
            free(cache_tab);
            cache_tab = nt;
            cache_cap = ncap;
        }
    }
    size_t j = g->hash & (cache_cap - 1);
    g->hnext = cache_tab[j];
    cache_tab[j] = g;
    g->cached = true;
    g->refs = 1;
    cache_count++;
    return true;
}

/* Evict idle entries beyond the bounds; returns them chained by idle_next
 * for the caller to destroy outside the lock. Caller holds cache_mu. */
static struct model_glob *cache_trim(size_t max_count, size_t max_bytes)
{
    struct model_glob *victims = NULL;
    while (idle_head != NULL && (idle_count > max_count || idle_bytes > max_bytes)) {
        struct model_glob *g = idle_head;
        idle_unlink(g);
        cache_unlink(g);
        g->idle_next = victims;
        victims = g;
    }
    return victims;
}

static void destroy_chain(struct model_glob *g)
{
    while (g != NULL) {
        struct model_glob *next = g->idle_next;
        glob_destroy(g);
        g = next;
    }
}

struct model_glob *model_glob_compile(enum model_glob_kind kind, const char *pat, size_t len,
                                      const char **why)
{
    if (why != NULL) {
        *why = NULL;
    }
    if (pat == NULL && len > 0) {
        return model_glob_compile_uncached(kind, pat, len, why);
    }
    uint64_t h = key_hash(kind, pat, len);
    pthread_mutex_lock(&cache_mu);
    struct model_glob *g = cache_find(h, kind, pat, len);
    if (g != NULL) {
        cache_ref(g);
        cache_hits++;
        pthread_mutex_unlock(&cache_mu);
        return g;
    }
    cache_misses++;
    pthread_mutex_unlock(&cache_mu);

    /* Build outside the lock; another thread may race us to the same key. */
    struct model_glob *fresh = model_glob_compile_uncached(kind, pat, len, why);
    if (fresh == NULL) {
        return NULL;
    }
    fresh->hash = h;
    fresh->bytes = glob_bytes(fresh);
    pthread_mutex_lock(&cache_mu);
    g = cache_find(h, kind, pat, len);
    if (g != NULL) {
        cache_ref(g);
    } else {
        /* When the table cannot grow, 'fresh' is handed out uncached and
         * model_glob_free destroys it. */
        (void)cache_insert(fresh);
        g = fresh;
        fresh = NULL;
    }
    pthread_mutex_unlock(&cache_mu);
    if (fresh != NULL) {
        glob_destroy(fresh);
    }
    return g;
}

void model_glob_free(struct model_glob *g)
{
    if (g == NULL) {
        return;
    }
    if (!g->cached) {
        glob_destroy(g);
        return;
    }
    pthread_mutex_lock(&cache_mu);
    struct model_glob *victims = NULL;
    if (g->refs > 0) {
        g->refs--;
        if (g->refs == 0) {
            g->idle_prev = idle_tail;
            g->idle_next = NULL;
            if (idle_tail != NULL) {
                idle_tail->idle_next = g;
            } else {
                idle_head = g;
            }
            idle_tail = g;
            idle_count++;
            idle_bytes += g->bytes;
            victims = cache_trim(MODEL_GLOB_CACHE_IDLE_MAX, MODEL_GLOB_CACHE_IDLE_BYTES);
        }
    }
    pthread_mutex_unlock(&cache_mu);
    destroy_chain(victims);
}

void model_glob_cache_flush(void)
{
    pthread_mutex_lock(&cache_mu);
    struct model_glob *victims = cache_trim(0, 0);
    if (cache_count == 0) {
        free(cache_tab);
        cache_tab = NULL;
        cache_cap = 0;
    }
    pthread_mutex_unlock(&cache_mu);
    destroy_chain(victims);
}

void model_glob_cache_stats(struct model_glob_cache_stats *st)
{
    if (st == NULL) {
        return;
    }
    pthread_mutex_lock(&cache_mu);
    st->entries = cache_count;
    st->idle = idle_count;
    st->hits = cache_hits;
    st->misses = cache_misses;
    pthread_mutex_unlock(&cache_mu);
}

bool model_glob_match(const struct model_glob *g, const char *s, size_t len)
{
    if (g == NULL || (s == NULL && len > 0)) {
        return false;
    }
    if (g->literal) {
        return len == g->textlen && (len == 0 || memcmp(s, g->text, len) == 0);
    }
    const uint8_t *cls = g->cls;
    const uint8_t *p = (const uint8_t *)s;
    if (g->fast == NULL) {
        /* Built-in automata (tests only): the plain table. */
        uint32_t st = g->start;
        for (size_t i = 0; i < len; i++) {
            st = g->trans[(size_t)st * g->nclasses + cls[p[i]]];
        }
        return g->accept[st] != 0;
    }
    /* Hot path: one load and one add per byte; stop at the first sink. */
    const uint32_t *t = g->fast;
    uint32_t sinks = g->sinks << g->shift;
    uint32_t off = g->start << g->shift;
    for (size_t i = 0; i < len && off < sinks; i++) {
        off = t[off + cls[p[i]]];
    }
    return g->accept[off >> g->shift] != 0;
}

bool model_glob_is_literal(const struct model_glob *g)
{
    return g != NULL && g->literal;
}

const char *model_glob_text(const struct model_glob *g)
{
    return g != NULL && g->text != NULL ? g->text : "";
}

enum model_glob_kind model_glob_kind_of(const struct model_glob *g)
{
    return g != NULL ? g->kind : MODEL_GLOB_VALUE;
}
