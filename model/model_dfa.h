/* SPDX-License-Identifier: Apache-2.0 */
/* model_dfa.h - automaton internals shared by model_glob.c and model_dfa.c (model/ only)
 *
 * A compiled pattern (struct model_glob) is a complete DFA over bytes in a
 * compressed form: cls[] maps each byte to one of 'nclasses' byte classes and
 * trans[] is a states x classes table, so matching costs two array lookups
 * per input byte and never allocates. After model_dfa_build() the automaton
 * is minimal, so it has at most one dead state (a non-accepting sink) and at
 * most one universal state (an accepting sink); a missing one is recorded as
 * 'nstates'. Patterns are first written as a Thompson-style NFA with the
 * builder below (epsilon edges and byte-set edges), then determinised.
 */
#ifndef MODEL_DFA_H
#define MODEL_DFA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/pv.h"
#include "model/model.h"

/* Bound on DFA states of one compiled glob (before minimisation). */
#define MODEL_GLOB_MAX_STATES 4096u
/* Longest literal pattern (its DFA has length + 2 states). */
#define MODEL_GLOB_MAX_LITERAL 8192u
/* Default bound of model_lang_check when 'max_states' is 0. */
#define MODEL_LANG_DEFAULT_MAX_STATES 1000000u

struct model_glob {
    enum model_glob_kind kind;
    bool literal; /* no metacharacters: matches exactly text[0..textlen) */
    char *text;   /* NUL-terminated copy of the source (owned; NULL for built-ins) */
    size_t textlen;
    uint32_t nstates;
    uint32_t nclasses;
    uint32_t start;
    uint32_t dead;      /* non-accepting sink, or nstates if there is none */
    uint32_t universal; /* accepting sink, or nstates if there is none */
    uint32_t sinks;     /* states >= sinks are sinks (the matcher may stop there) */
    uint8_t cls[256];   /* byte -> class */
    uint16_t *trans;    /* nstates * nclasses (owned unless built-in) */
    uint8_t *accept;    /* nstates, 0/1 (owned unless built-in) */
    /* The matcher's copy of trans: row stride 1 << shift, entries are the
     * next state << shift, so a step is one load and one add (owned; NULL
     * for built-ins). */
    uint32_t *fast;
    uint32_t shift;
    /* Interning cache (model_glob.c), guarded by its mutex: compiled globs
     * are shared by (kind, text); model_glob_free drops a reference and an
     * unreferenced glob stays idle in the cache until evicted. */
    bool cached;
    size_t refs;
    uint64_t hash;
    size_t bytes;                 /* approximate heap footprint */
    struct model_glob *hnext;     /* hash chain */
    struct model_glob *idle_prev; /* idle list, least recently freed first */
    struct model_glob *idle_next;
};

/* A set of bytes. */
struct model_byteset {
    uint64_t w[4];
};

static inline void model_byteset_clear(struct model_byteset *s)
{
    s->w[0] = s->w[1] = s->w[2] = s->w[3] = 0;
}

static inline void model_byteset_fill(struct model_byteset *s)
{
    s->w[0] = s->w[1] = s->w[2] = s->w[3] = UINT64_MAX;
}

static inline void model_byteset_add(struct model_byteset *s, uint8_t b)
{
    s->w[b >> 6] |= (uint64_t)1 << (b & 63);
}

static inline void model_byteset_del(struct model_byteset *s, uint8_t b)
{
    s->w[b >> 6] &= ~((uint64_t)1 << (b & 63));
}

static inline bool model_byteset_has(const struct model_byteset *s, uint8_t b)
{
    return (s->w[b >> 6] >> (b & 63)) & 1u;
}

static inline void model_byteset_invert(struct model_byteset *s)
{
    for (size_t i = 0; i < 4; i++) {
        s->w[i] = ~s->w[i];
    }
}

struct model_nfa_edge {
    uint32_t from;
    uint32_t to;
    int32_t set; /* index into sets[], -1 = epsilon */
};

/* NFA under construction. Failures are sticky: every builder call after one
 * is a no-op and model_dfa_build() reports PV_ERR_NOMEM (allocation) or
 * PV_ERR_PATTERN (more states than the NFA bound). */
struct model_nfa {
    uint32_t nstates;
    struct model_nfa_edge *edges;
    size_t nedges;
    size_t edgecap;
    struct model_byteset *sets;
    size_t nsets;
    size_t setcap;
    bool failed; /* an allocation failed */
    bool toobig; /* more than the NFA state bound */
};

void model_nfa_init(struct model_nfa *n);
void model_nfa_clear(struct model_nfa *n);
/* A new state's number. */
uint32_t model_nfa_state(struct model_nfa *n);
void model_nfa_eps(struct model_nfa *n, uint32_t from, uint32_t to);
void model_nfa_set(struct model_nfa *n, uint32_t from, uint32_t to,
                   const struct model_byteset *set);

/* Determinise (subset construction over byte classes) and minimise the NFA
 * from 'start' to the single accepting state 'final' into the automaton
 * fields of 'g' (nstates .. accept; new arrays owned by 'g'; kind, literal
 * and text are left alone). Fails with PV_ERR_PATTERN when the DFA needs
 * more than 'max_states' states, PV_ERR_NOMEM. */
pv_result model_dfa_build(const struct model_nfa *n, uint32_t start, uint32_t final,
                          uint32_t max_states, struct model_glob *g) PV_WUR;

/* The DFA of the literal 'lit' (exactly that string) into the automaton
 * fields of 'g', without the matcher's fast table (literals are matched with
 * memcmp). PV_ERR_PATTERN when longer than MODEL_GLOB_MAX_LITERAL. */
pv_result model_dfa_literal(const uint8_t *lit, size_t len, struct model_glob *g) PV_WUR;

/* Interning cache of compiled globs: at most this many idle (unreferenced)
 * entries and this many bytes of idle tables are kept. */
#define MODEL_GLOB_CACHE_IDLE_MAX 4096u
#define MODEL_GLOB_CACHE_IDLE_BYTES ((size_t)32 << 20)

struct model_glob_cache_stats {
    size_t entries; /* globs in the cache (referenced or idle) */
    size_t idle;    /* of which unreferenced */
    size_t hits;    /* compiles answered from the cache */
    size_t misses;  /* compiles that built a new automaton */
};

/* Counters of the interning cache (thread-safe snapshot). */
void model_glob_cache_stats(struct model_glob_cache_stats *st);
/* Free every idle entry (referenced globs stay valid). Thread-safe. */
void model_glob_cache_flush(void);
/* Compile without the cache (the caller owns the result; free it with
 * model_glob_free). For tests that compare against the cached path. */
struct model_glob *model_glob_compile_uncached(enum model_glob_kind kind, const char *pat,
                                               size_t len, const char **why);

/* The built-in automaton of a domain (static storage, borrowed; NULL for an
 * unknown value). Thread-safe. */
const struct model_glob *model_dfa_domain(enum model_domain d);

#endif
