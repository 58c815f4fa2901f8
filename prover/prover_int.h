/* SPDX-License-Identifier: Apache-2.0 */
/* prover_int.h - internal structures of libprover (prover/ only)
 *
 * One proof goes through four stages, one file each:
 *   prover_units.c   units of B and C, delta (set difference), slice
 *   prover_atoms.c   string dimensions -> atoms (Venn regions with witnesses)
 *   prover_encode.c  Z3 terms: Allow_P, Grant_P, reach_P over atom indexes
 *   prover_query.c   categories, witnesses, re-check with model_decide
 * prover_session.c owns the Z3 context; prover_report.c renders results.
 *
 * Strings never enter Z3: each string dimension (binary, host, path, query
 * value per key) is cut into atoms such that every pattern of the slice is
 * constant on each atom; Z3 sees one bit-vector index per dimension.
 */
#ifndef PROVER_INT_H
#define PROVER_INT_H

#include <z3.h>

#include "common/pv.h"
#include "common/pv_dynbuf.h"
#include "model/model.h"
#include "prover/prover.h"

#define PROVER_DEFAULT_TIMEOUT_MS 2000u
#define PROVER_MAX_ATOMS 4096u
#define PROVER_MAX_LANG_STATES 200000u
/* Entries of a session's model_lang_check memo before it is cleared. */
#define PROVER_LANG_MEMO_MAX 4096u
#define PROVER_MAX_LANG_CHECKS 20000u
#define PROVER_MAX_METHODS 64u
#define PROVER_RECYCLE_PROOFS 512u

/* ---------------------------------------------------------------------------
 * Small string map (prover_util.c): keys borrowed, open addressing.
 * ------------------------------------------------------------------------- */

struct prover_map_slot {
    const char *key; /* NULL = empty slot */
    size_t len;
    uint64_t hash;
    size_t val;
};

struct prover_map {
    struct prover_map_slot *slots;
    size_t cap; /* power of two */
    size_t n;
};

void prover_map_free(struct prover_map *m);
/* Insert key -> val unless present; '*found' gets the existing value
 * (or 'val' when inserted) and '*inserted' tells which. */
pv_result prover_map_put(struct prover_map *m, const char *key, size_t len, size_t val,
                         size_t *found, bool *inserted) PV_WUR;
bool prover_map_get(const struct prover_map *m, const char *key, size_t len, size_t *val);
uint64_t prover_hash(const char *s, size_t len);
/* A fast 64-bit hash (8 bytes per step), seeded. */

/* Growable array helper: room for element n. Returns the (maybe moved)
 * array, or NULL on NOMEM with the old array and *cap untouched. */
void *prover_grow(void *arr, size_t *cap, size_t n, size_t elsize);
#define PROVER_GROW(arr, cap, n)                                           \
    do {                                                                   \
        void *prover_g_ = prover_grow((arr), &(cap), (n), sizeof(*(arr))); \
        PV_GUARD_PTR(prover_g_);                                           \
        (arr) = prover_g_;                                                 \
    } while (0)

/* ---------------------------------------------------------------------------
 * String dimensions and atoms (prover_atoms.c)
 * ------------------------------------------------------------------------- */

struct prover_pat {
    const struct model_glob *g; /* NULL: the "contains %2F" language */
    const char *text;           /* borrowed (pattern source) */
    size_t len;
    bool literal;
};

struct prover_atom {
    char *w; /* witness (new), a member of the atom */
    size_t wlen;
    uint64_t *bits; /* membership of each pattern of the dimension */
};

/* A bounded memo of model_lang_check answers (EMPTY/NONEMPTY and the
 * witness), keyed by the domain and the terms' (kind, text, sign): a glob's
 * language is a function of its kind and text, so an answer is reused
 * exactly. One per session (a worker thread); cleared when full. */
struct prover_lang_entry {
    char *key; /* owned */
    size_t klen;
    bool nonempty;
    char *w; /* owned witness, NULL when empty */
    size_t wlen;
};

struct prover_lang_memo {
    struct prover_map index; /* key -> entry index */
    struct prover_lang_entry *e;
    size_t n, cap;
};

void prover_lang_memo_free(struct prover_lang_memo *m);

struct prover_dim {
    enum model_domain domain;
    struct prover_lang_memo *memo; /* borrowed, NULL = no memo */
    double deadline;               /* absolute ms (prover_now_ms); 0 = none */
    struct prover_pat *pats;
    size_t npats, cappats;
    struct prover_map index; /* pattern text -> index */
    struct prover_atom *atoms;
    size_t natoms, capatoms;
    size_t words; /* bitset words per atom */
    /* Z3 */
    Z3_ast var; /* the atom index variable */
    unsigned width;
    Z3_ast *memb; /* per pattern, lazily built membership term */
};

void prover_dim_init(struct prover_dim *d, enum model_domain domain);
void prover_dim_free(struct prover_dim *d);
/* Add a pattern (deduplicated by text); '*idx' gets its index. */
pv_result prover_dim_add(struct prover_dim *d, const struct model_glob *g, size_t *idx) PV_WUR;
pv_result prover_dim_add_special(struct prover_dim *d, size_t *idx) PV_WUR;
/* Compute the atoms. 'budget' counts model_lang_check calls left; LIMIT
 * (PV_ERR_LIMIT) when exhausted or when an automaton product is too big. */
pv_result prover_dim_atoms(struct prover_dim *d, size_t *budget) PV_WUR;
bool prover_atom_has(const struct prover_dim *d, size_t atom, size_t pat);
/* Does a pattern match a concrete string (the special pattern: contains %2F)? */
bool prover_pat_match(const struct prover_pat *p, const char *s, size_t len);

/* ---------------------------------------------------------------------------
 * Units and slice (prover_units.c)
 * ------------------------------------------------------------------------- */

enum prover_side { PROVER_SIDE_B, PROVER_SIDE_C };

/* The address a witness to a DNS host shows when any public address shows the
 * same (the policy does not fix one): reports say it is a placeholder. */
#define PROVER_PLACEHOLDER_IP "93.184.216.34"

struct prover_unit {
    enum prover_side side;
    const struct model_rule *rule;
    const struct model_endpoint *ep;
    struct model_endpoint_view v;
    const char *bin; /* binary pattern text */
    const struct model_glob *bglob;
    size_t fpoff, fplen; /* endpoint fingerprint: in units.arena at fpoff, or
                                      * borrowed from the compiled endpoint (SIZE_MAX) */
    const char *fp;      /* the fingerprint (once sealed) */
    uint64_t hash;       /* of (binary, fingerprint) */
    bool delta;          /* key absent from the other side */
    bool rel;            /* in the slice */
    bool l7;             /* L7 endpoint (docs/semantics.md#routes) */
    bool hstar;          /* a DNS host pattern with a wildcard label */
    const char *hsfx;    /* its literal suffix after the last wildcard label, or NULL */
    size_t ri;           /* index of its rule in its policy (the units' order) */
    /* dimension indexes, filled by the encoder */
    size_t bpat, hpat, hip, spat;
};

struct prover_units {
    struct prover_unit *u;
    size_t n, cap;
    size_t ndelta, nrel;
    struct pv_dynbuf arena; /* fingerprints of endpoints that were not compiled */
    size_t *tab;            /* delta: two open-addressing tables of tabcap slots */
    size_t tabcap;
    /* Pairs (prover_units_pair): C rules identical to a B rule. Their units
     * are on both sides, so they are materialised only when the slice may
     * keep them; then 'u' holds the units of the other rules. */
    bool paired;
    const struct model_policy *pol[2]; /* B and C (borrowed) */
    size_t *pair;                      /* per C rule: its identical B rule, or SIZE_MAX */
    size_t paircap;
    bool *bpaired; /* per B rule */
    size_t bpcap;
    size_t *kept; /* C rules of pairs the slice may keep */
    size_t nkept, keptcap;
    struct prover_unit *u2; /* the merge buffer */
    size_t cap2;
};

pv_result prover_units_collect(struct prover_units *us, const struct model_policy *p,
                               enum prover_side side) PV_WUR;
/* Resolve the fingerprint pointers (after the last collect). */
void prover_units_seal(struct prover_units *us);
/* Can B and C be paired (both compiled: every rule has its fingerprint)? */
bool prover_units_pairable(const struct model_policy *B, const struct model_policy *C);
/* Collect (and seal) the units of B and C and mark the delta, except the
 * units of the C rules identical to a B rule (equal model_rule_fp: the same
 * binaries and endpoint fingerprints, in order) and of that B rule: they are
 * on both sides, never delta, and prover_units_slice adds them only where
 * the slice may keep them (prover_units_delta has nothing left to do). The
 * policies are borrowed until the units are freed; TIMEOUT past
 * 'deadline'. The delta and the slice are those of collecting every unit. */
pv_result prover_units_pair(struct prover_units *us, const struct model_policy *B,
                            const struct model_policy *C, double deadline) PV_WUR;
/* Mark delta units ((binary, fingerprint) present on one side only). */
pv_result prover_units_delta(struct prover_units *us) PV_WUR;
/* Mark units that overlap some delta unit (binary, host, port), through an
 * index of the delta units by host key; TIMEOUT past 'deadline' (absolute
 * ms, prover_now_ms). With 'comp' not NULL, also the slice's connected
 * components, through the same index: two units are joined when one is a
 * delta unit and their (binary, host, port) regions overlap. A question
 * about a candidate unit u ranges over requests r that u matches inside a
 * delta unit d; every unit matching r overlaps d, so it is in u's
 * component, and a component can be proved on its own. '*comp' gets a new
 * array (caller frees, also on failure) of each unit's component number (in
 * the order of the components' first units; SIZE_MAX outside the slice),
 * '*ncomp' their count. */
pv_result prover_units_slice(struct prover_units *us, size_t *budget, double deadline,
                             size_t **comp, size_t *ncomp) PV_WUR;
void prover_units_free(struct prover_units *us);
/* Keep the buffers of 'us' in 'spare' (emptied) for the next proof, so that
 * a session does not fault in fresh pages for every proof; 'us' is reset. */
void prover_units_recycle(struct prover_units *spare, struct prover_units *us);
/* Are two glob languages certainly disjoint by a necessary condition
 * (literal text, literal prefix, a host wildcard's literal suffix)? False
 * means "maybe not"; never true for languages that meet. NULL (the special
 * "contains %2F" language) is never cheaply disjoint. */
bool prover_glob_disjoint_cheap(const struct model_glob *a, const struct model_glob *b,
                                enum model_domain dom);
/* Is L(a) certainly inside L(b) within 'dom' (equal texts; a literal b
 * matches; a host wildcard whose literal suffix ends with ".S" inside
 * "**.S")? False means "maybe not". */
bool prover_glob_subset_cheap(const struct model_glob *a, const struct model_glob *b,
                              enum model_domain dom);
/* Do two glob languages intersect within 'dom'? (cheap filters first) */
pv_result prover_glob_overlap(const struct model_glob *a, const struct model_glob *b,
                              enum model_domain dom, size_t *budget, bool *out) PV_WUR;
/* Do two units' (binary, host, port) regions intersect? */
pv_result prover_units_overlap(const struct prover_unit *a, const struct prover_unit *b,
                               size_t *budget, bool *out) PV_WUR;

/* ---------------------------------------------------------------------------
 * Session (prover_session.c)
 * ------------------------------------------------------------------------- */

struct prover_session {
    Z3_context ctx;
    Z3_solver solver;             /* reused across proofs: each proof runs in a push scope */
    size_t proofs;                /* since the context was created */
    struct prover_lang_memo lang; /* model_lang_check answers */
    struct prover_units spare;    /* unit buffers of the last proof, reused */
    bool full_smt;                /* tests: every question by its own solver check */
    bool no_concrete;             /* tests: no concrete candidates (prover_queries_concrete) */
    size_t nconcrete;             /* paths found from concrete candidates (tests, bench) */
};

/* Decisions one unit and port may spend on concrete candidates before its
 * questions go to the solver. */
#define PROVER_CONCRETE_BUDGET 256
/* Decisions one unit and port may spend going through every request the
 * atoms tell apart for its capability keys (conc_keys in prover_query.c). */
#define PROVER_CONCRETE_KEYS 1024

/* Tests and benchmarks only: with 'on', session 's' answers every question
 * with its own solver check, as before the shortcuts of prover_query.c (a
 * capability key read off another key's model, the paths of the
 * "anything new" question's model), so that both can be compared. */
void prover_session_full_smt(struct prover_session *s, bool on);
/* Tests and benchmarks only: with 'on', the shortcuts stay but no question
 * is decided from concrete candidates (every SAT answer is a model). */
void prover_session_no_concrete(struct prover_session *s, bool on);

/* Recreate the context when it has served PROVER_RECYCLE_PROOFS proofs;
 * make sure the session solver exists (at scope 0). */
pv_result prover_session_ready(struct prover_session *s) PV_WUR;
/* PV_ERR_SOLVER when the context holds an error. */
pv_result prover_z3_ok(Z3_context ctx) PV_WUR;
double prover_now_ms(void);

/* ---------------------------------------------------------------------------
 * The proof state (prover_encode.c, prover_query.c)
 * ------------------------------------------------------------------------- */

struct prover_qkey {
    const char *key;
    struct prover_dim dim;
    Z3_ast *present; /* per atom: some value of the key lies in the atom */
    Z3_ast has;      /* key present */
};

struct prover_ipatom {
    struct model_ip ip;
    bool link_local;
    size_t datom; /* its destination atom */
};

/* Destination atoms: the 128-bit address line is cut at every boundary of
 * the blocked and private tables, of every allowed_ips CIDR of the slice and
 * around every IP literal host; the intervals are then grouped by signature
 * (blocked, private, which CIDRs contain it, which literal it is), so an
 * atom is a union of intervals and there are only a handful of them. */
struct prover_datom {
    struct model_ip w; /* witness address */
    bool blocked, priv;
    bool ll;         /* link-local (a subset of blocked) */
    size_t lit;      /* IP literal atom index, or SIZE_MAX */
    uint64_t *cidrs; /* bitset over pf->cidrs */
};

struct prover_proof {
    struct prover_session *s;
    Z3_context ctx;
    const struct prover_input *in;
    const struct model_policy *B, *C;
    struct prover_units units;
    size_t lang_budget;
    double deadline; /* absolute ms */
    /* dimensions */
    struct prover_dim bin, dns, path;
    struct prover_ipatom *ips; /* host atoms ndns .. ndns+nips-1; then "other IP" */
    size_t nips, capips;
    size_t nhost;     /* ndns + nips + 1 */
    bool *host_cred;  /* per host atom */
    bool *host_ll;    /* per host atom: link-local */
    bool *bin_bypass; /* per binary atom */
    size_t path_2f;   /* index of the %2F pattern in path */
    size_t root_atom; /* path atom holding "/" */
    struct prover_qkey *qkeys;
    size_t nqkeys, capqkeys;
    const char *methods[PROVER_MAX_METHODS];
    size_t nmethods;
    /* Z3 */
    struct prover_datom *datoms;
    size_t ndatoms;
    struct model_cidr *cidrs; /* distinct allowed_ips CIDRs of the slice */
    size_t ncidrs, capcidrs, cwords;
    uint16_t *ports; /* port atoms: every port of the slice */
    size_t nports;
    Z3_ast h, p, m, d; /* p and d are atom indexes too */
    unsigned hwidth, mwidth, pwidth, dwidth;
    Z3_ast blocked, private_, cp, hostdns, cred, bypass, has2f;
    Z3_ast ll;     /* h is link-local: a link-local atom, or an IP host in a
                                * link-local range (docs/semantics.md#link-local) */
    Z3_ast region; /* (x,h,p) in some delta unit */
    Z3_ast allow[2], grant[2], reach[2], insp[2];
    Z3_ast allow_raw[2]; /* allow[] before it was named: its term itself */
    Z3_ast *g0, *scope, *grants, *admits, *denies; /* per unit */
    Z3_solver solver;
    bool zerr;   /* sticky: some Z3 call failed */
    bool znomem; /* sticky: ... because an allocation failed */
    size_t nqueries;
    size_t path_base; /* the first path of this part (component) */
    /* prover_queries_concrete: per unit and port (unit i's ports from
     * coff[i]), 1 when decided from concrete candidates, 2 when paths were
     * found but some question is left for the solver, 0 otherwise; NULL
     * when it did not run */
    unsigned char *cdone;
    size_t *coff;
    /* per credential target (flattened), parsed once per proof and kept
     * across its parts: 1 an IP literal (its address in ct_ip), 0 not */
    unsigned char *ct_isip;
    struct model_ip *ct_ip;
    size_t nguards;              /* guard constants created (unique names) */
    struct model_glob *meta[16]; /* compiled metadata host names (owned) */
    size_t nmeta;
    size_t *bypass_pats; /* binary patterns of bypassing registry entries */
    size_t nbypass, capbypass;
    size_t *cred_pats; /* flattened: per credential target, DNS pattern or SIZE_MAX */
    size_t *cred_ips;  /* per credential target, IP atom or SIZE_MAX */
    size_t ncredt;
    size_t *cred_of; /* per credential target, the credential index */
    /* GraphQL (docs/semantics.md#graphql): operation names and root fields
     * are atoms of two dimensions over GraphQL Names; a request carries an
     * operation (g), hash-only (pq, id atom pid: a registered id of the
     * slice, or one that no registry holds) or a document (type t, anon or
     * name atom, and the field set {fv[0] .. fv[nfv-1]}, duplicates allowed) */
    bool gql; /* some unit of the slice decides GraphQL operations */
    struct prover_dim gname, gfield;
    const char **pids; /* borrowed from the policies */
    size_t npids, cappids;
    size_t nfv;
    Z3_ast g, pq, t, anon, pid;
    Z3_ast *fv;
    unsigned pidwidth;
    /* JSON-RPC and MCP calls (docs/semantics.md#rpc): a request carries a
     * call (rc) of kind rk (enum model_rpc_kind), its method an atom of
     * rmeth (every method pattern of the slice's rules, each profile
     * method, the reserved rpc.* names, literal json-rpc methods) and its
     * tool an atom of rtool, or none (rtool.var == rtool.natoms). */
    bool rpc;      /* some unit of the slice decides calls */
    bool rpc_json; /* ... and some of them are json-rpc (else all mcp) */
    struct prover_dim rmeth, rtool;
    Z3_ast rc, rk;
    struct model_glob **rglobs; /* compiled literal method patterns (owned) */
    size_t nrglobs, caprglobs;
    char **rkeys; /* per method atom: "rpc:" and its witness (owned) */
    /* output */
    struct prover_result *res;
};

#define PROVER_GQL_MAX_FIELDS 16u
/* The id a witness names for a hash-only operation that no registry of the
 * slice holds ("unregistered-" + a number, never a registered id). */
#define PROVER_GQL_UNREGISTERED "unregistered"
/* Does endpoint view 'v' decide GraphQL operations (enforced graphql, or a
 * websocket endpoint whose rules are GraphQL rules)? */
bool prover_unit_gql(const struct prover_unit *u);

/* Does unit 'u' decide JSON-RPC/MCP calls (enforced json-rpc or mcp)? */
bool prover_unit_rpc(const struct prover_unit *u);
/* JSON-RPC/MCP calls (prover_rpc.c): the call variables and the reader's
 * constraints on them (rc false without a unit that decides calls), and
 * what unit 'u''s call allow rules (deny = false) grant or its deny rules
 * match. */
void prover_rpc_variables(struct prover_proof *pf);
/* The atoms of the call method and tool dimensions, and the capability
 * key text of each method atom (pf->rkeys). */
pv_result prover_rpc_atoms(struct prover_proof *pf, struct prover_lang_memo *memo) PV_WUR;
Z3_ast prover_rpc_rules(struct prover_proof *pf, const struct prover_unit *u, bool deny);
/* Encoder helpers shared with prover_rpc.c: a bit-vector or Boolean
 * constant, the width for 'n' values, an assertion in the proof's solver
 * scope, var < n when the width allows more. */
unsigned prover_width_for(size_t n);
Z3_ast prover_mk_var(struct prover_proof *pf, const char *name, unsigned width);
Z3_ast prover_mk_bool(struct prover_proof *pf, const char *name);
void prover_assert(struct prover_proof *pf, Z3_ast a);
void prover_bound(struct prover_proof *pf, Z3_ast var, size_t n, unsigned width);
/* Capability keys of calls: one per method atom, past the GraphQL keys. */
#define PROVER_RPC_MAX_METHODS 256u

/* The encoding of one part: prover_encode_atoms (dimensions, atoms, host
 * classes: no Z3), then, when some question can hold, prover_encode_terms
 * (destination and port atoms, the Z3 terms, in a solver scope). */
pv_result prover_encode_atoms(struct prover_proof *pf) PV_WUR;
pv_result prover_encode_terms(struct prover_proof *pf) PV_WUR;
pv_result prover_queries(struct prover_proof *pf) PV_WUR;
/* DELTA without GraphQL, before prover_encode_terms: decide the questions
 * of the part's candidate units from concrete requests built from each unit
 * (prover_query.c, "Concrete candidates"). '*done' when all of them were
 * decided (the part's paths are then complete and suppressed: no terms
 * needed); otherwise prover_queries asks what pf->cdone leaves. */
pv_result prover_queries_concrete(struct prover_proof *pf, bool *done) PV_WUR;
/* Can some question of this part hold, by the static filters (a candidate
 * unit with a link-local or credentialed host atom, or a private
 * destination it could admit; CHECK always)? When not, the part needs no
 * terms and no solver. After prover_encode_atoms. */
bool prover_queries_needed(struct prover_proof *pf);
/* The slice's dimensions (prover_dims.c), collected by prover_collect()
 * within prover_encode_atoms(), their destination and port atoms by
 * prover_dest_atoms() and prover_port_atoms() within prover_encode_terms(). */
pv_result prover_collect(struct prover_proof *pf) PV_WUR;
pv_result prover_dest_atoms(struct prover_proof *pf) PV_WUR;
pv_result prover_port_atoms(struct prover_proof *pf) PV_WUR;
/* Index of method 'm' in the method universe (SIZE_MAX when absent). */
size_t prover_method_index(const struct prover_proof *pf, const char *m);
/* Index of query key 'key' (borrowed: the slice owns it), added when new. */
pv_result prover_qkey_of(struct prover_proof *pf, const char *key, size_t *idx) PV_WUR;
/* d in CIDR 'c': the destination atoms inside it. */
Z3_ast prover_in_cidr(struct prover_proof *pf, const struct model_cidr *c);
/* 'var' in the atoms marked in 'has' (offset 'offset'); 'closed' when var
 * ranges exactly over the atoms (then a complement may be shorter). */
Z3_ast prover_in_set(struct prover_proof *pf, Z3_ast var, size_t natoms, const bool *has,
                     size_t offset, bool closed);
/* Z3 helpers: NULL in, NULL out; a failing call sets pf->zerr. */
Z3_ast prover_z(struct prover_proof *pf, Z3_ast a);
Z3_ast prover_true(struct prover_proof *pf);
Z3_ast prover_false(struct prover_proof *pf);
Z3_ast prover_not(struct prover_proof *pf, Z3_ast a);
/* a -> b; NULL (and zerr) when either is NULL */
Z3_ast prover_implies(struct prover_proof *pf, Z3_ast a, Z3_ast b);
Z3_ast prover_and(struct prover_proof *pf, size_t n, const Z3_ast *a);
Z3_ast prover_or(struct prover_proof *pf, size_t n, const Z3_ast *a);
Z3_ast prover_and2(struct prover_proof *pf, Z3_ast a, Z3_ast b);
Z3_ast prover_or2(struct prover_proof *pf, Z3_ast a, Z3_ast b);
Z3_ast prover_eqn(struct prover_proof *pf, Z3_ast var, uint64_t v);
/* Membership term of pattern 'pat' of dimension 'd'. */
Z3_ast prover_memb(struct prover_proof *pf, struct prover_dim *d, size_t pat);
/* unitok_P(u): u is the unit that admits/grants r under its policy's route. */
Z3_ast prover_unit_ok(struct prover_proof *pf, size_t ui);
Z3_ast prover_unit_grant(struct prover_proof *pf, size_t ui);
Z3_ast prover_host_memb(struct prover_proof *pf, const struct prover_unit *u);
Z3_ast prover_port_eq(struct prover_proof *pf, uint16_t port);

/* Free every string a path owns (prover_run.c); the struct itself is not freed. */
void prover_path_clear(struct prover_path *p);

#endif
