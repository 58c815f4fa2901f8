/* SPDX-License-Identifier: Apache-2.0 */
/* check_prover_property.c - the prover against brute force over a small universe
 *
 * Random small policy pairs (baseline, candidate = a mutation of it or an
 * independent policy) and credential sets over a fixed pattern universe:
 * binaries (curl, git, a glob over /usr/bin), hosts (a.example.com,
 * b.example.com, a first-label wildcard, 10.0.0.5, 169.254.169.254,
 * metadata.google.internal, **.google.internal, hostless),
 * ports 443 and 8080, rule methods GET POST PUT DELETE and any, six path
 * globs (U_PATH), one query key, L4/L7/audit/deny rules, tls skip,
 * allow_encoded_slash, path scopes and allowed_ips. The oracle enumerates the
 * concrete requests of a universe that has a member in every atom the
 * prover can build (a binary matching only the glob, a host matching only
 * the wildcard, other IP hosts, paths with %2F, each query value class,
 * public/private/blocked destinations) and decides each with model_decide on
 * B, C and single-unit policies (for the attribution "unit u allows r").
 * The prover's path keys (category, binary, host, port, method) and verdict
 * must equal the oracle's, and every witness must re-check.
 *
 * Each pair is also proved a second time by a session that answers every
 * question with its own solver check (prover_session_full_smt): the
 * shortcuts of prover_query.c (capability keys read off one model, the
 * paths of the "anything new" model) must give the same verdict and the same
 * paths, key and rule, as that full-SMT path.
 *
 * PV_PROPERTY_N (default 150) sets the number of pairs, PV_PROPERTY_SEED the
 * seed; PV_PROPERTY_VERBOSE=1 prints statistics.
 */
#include "config.h"

#include <stdarg.h>

#include "prover/prover_int.h"
#include "tests/bench/bench_policy.h"
#include "tests/check_prover_util.h"

/* ---------------------------------------------------------------------------
 * The pattern universe
 * ------------------------------------------------------------------------- */

static const char *const U_BIN[] = {"/usr/bin/curl", "/usr/bin/git", "/usr/bin/*"};
#define NBIN 3
static const char *const U_HOST[] = {"a.example.com",     "b.example.com",
                                     "*.example.com",     "10.0.0.5",
                                     "169.254.169.254",   "metadata.google.internal",
                                     "**.google.internal"};
#define NHOST 7
static const uint16_t U_PORT[] = {443, 8080};
#define NPORT 2
static const char *const U_METH[] = {"GET", "POST", "PUT", "DELETE", "*"};
#define NMETH 5
static const char *const U_PATH[] = {"/", "/x", "/x/y", "/x/**", "/*", "**"};
#define NPATH 6
static const char *const U_CIDR[] = {"10.0.0.0/8", "192.168.0.0/16", "8.8.4.0/24"};
#define NCIDR 3
static const char *const U_ACCESS[] = {NULL, "read-only", "read-write", "full"};
static const char *const U_CRED[] = {"a.example.com", "*.example.com", "b.example.com", "10.0.0.5"};
#define NCRED 4

/* The concrete universe. The binaries also get every literal path of the
 * registry (ssh, nc, ... fall under the glob and bypass L7). */
static const char *const C_BIN_BASE[] = {"/usr/bin/curl", "/usr/bin/git", "/usr/bin/zz", "/opt/y"};
static const char *C_BIN[64];
static size_t NCBIN;
/* Link-local hosts: a literal of the universe (also spelled v4-mapped), a
 * link-local IP host that is no literal (and one in NAT64 form), metadata
 * names inside and outside the universe's patterns (case and trailing dot
 * normalised away), and a non-metadata name under the metadata wildcard. */
static const char *const C_HOST[] = {"a.example.com",
                                     "b.example.com",
                                     "c.example.com",
                                     "other.org",
                                     "10.0.0.5",
                                     "169.254.169.254",
                                     "10.0.0.6",
                                     "8.8.4.4",
                                     "192.168.1.1",
                                     "::ffff:169.254.169.254",
                                     "169.254.1.1",
                                     "64:ff9b::a9fe:101",
                                     "METADATA.google.internal.",
                                     "x.google.internal",
                                     "metadata"};
static const char *const C_METH[] = {"GET",   "HEAD",   "OPTIONS",        "POST",    "PUT",
                                     "PATCH", "DELETE", "WEBSOCKET_TEXT", "PROPFIND"};
static const char *const C_PATH[] = {"/",  "/x",     "/x/y",   "/x/",   "/x/y/z",
                                     "/z", "/z%2Fq", "/x/%2F", "/zz/q", "/zz/%2F"};
static const char *const C_QUERY[] = {"",         "k=ab",     "k=b",           "k=zz", "k=ab&k=zz",
                                      "k=ab&k=b", "k=b&k=zz", "k=ab&k=b&k=zz", "k="};
/* Destinations of DNS hosts, one per class: public outside every CIDR,
 * public inside 8.8.4.0/24, private in 10/8, private in 192.168/16. A
 * blocked destination is never admitted and does not change the grant
 * layer, so it adds nothing for DNS hosts; IP hosts are their own
 * destination. */
static const char *const C_DEST[] = {"8.8.8.8", "8.8.4.4", "10.1.2.3", "192.168.1.1"};

/* ---------------------------------------------------------------------------
 * Generated policies
 * ------------------------------------------------------------------------- */

struct g_l7 {
    int method; /* U_METH */
    int path;   /* U_PATH */
    int q;      /* -1 none, 0 "a*", 1 "b", 2 any [a*, b] */
};

struct g_ep {
    int host;       /* U_HOST or -1 hostless */
    unsigned ports; /* mask over U_PORT */
    bool rest, enforce, tls_skip, aes;
    int access; /* U_ACCESS index */
    struct g_l7 allow[3];
    int nallow;
    struct g_l7 deny[2];
    int ndeny;
    unsigned cidrs; /* mask over U_CIDR */
    int scope;      /* -1 or U_PATH */
};

struct g_rule {
    unsigned bins; /* mask over U_BIN */
    struct g_ep eps[2];
    int neps;
};

struct g_pol {
    struct g_rule rules[4];
    int nrules;
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int rn(int n)
{
    return (int)(rnd() % (uint64_t)n);
}

static bool chance(int pct)
{
    return rn(100) < pct;
}

static void gen_l7(struct g_l7 *r, bool queries)
{
    r->method = rn(NMETH);
    r->path = rn(NPATH);
    r->q = queries && chance(25) ? rn(3) : -1;
}

static void gen_ep(struct g_ep *e, bool queries)
{
    memset(e, 0, sizeof(*e));
    e->host = chance(12) ? -1 : rn(NHOST);
    e->ports = (unsigned)(1 + rn(3));
    e->cidrs = chance(25) || e->host < 0 ? (unsigned)(1 + rn(7)) : 0;
    e->scope = chance(12) ? rn(NPATH) : -1;
    e->rest = chance(60);
    e->aes = chance(15);
    if (!e->rest) {
        return;
    }
    e->enforce = chance(75);
    /* tls: skip on an enforced L7 endpoint is a load error */
    e->tls_skip = !e->enforce && chance(30);
    if (chance(30)) {
        e->access = 1 + rn(3);
    } else {
        e->nallow = 1 + rn(3);
        for (int i = 0; i < e->nallow; i++) {
            gen_l7(&e->allow[i], queries);
        }
    }
    e->ndeny = chance(30) ? 1 + rn(2) : 0;
    for (int i = 0; i < e->ndeny; i++) {
        gen_l7(&e->deny[i], queries);
    }
}

static void gen_rule(struct g_rule *r, bool queries)
{
    r->bins = (unsigned)(1 + rn(7));
    r->neps = 1 + (chance(25) ? 1 : 0);
    for (int i = 0; i < r->neps; i++) {
        gen_ep(&r->eps[i], queries);
    }
}

static void gen_pol(struct g_pol *p, bool queries)
{
    memset(p, 0, sizeof(*p));
    p->nrules = rn(4);
    for (int i = 0; i < p->nrules; i++) {
        gen_rule(&p->rules[i], queries);
    }
}

/* A small change: the interesting pairs have small deltas. */
static void mutate(struct g_pol *p, bool queries)
{
    int n = 1 + rn(2);

    for (int k = 0; k < n; k++) {
        struct g_rule *r;
        struct g_ep *e;

        if (p->nrules == 0 || (chance(20) && p->nrules < 4)) {
            gen_rule(&p->rules[p->nrules++], queries);
            continue;
        }
        r = &p->rules[rn(p->nrules)];
        e = &r->eps[rn(r->neps)];
        switch (rn(13)) {
        case 0:
            r->bins ^= 1u << rn(NBIN);
            if (r->bins == 0) {
                r->bins = 1;
            }
            break;
        case 1:
            e->host = rn(NHOST);
            break;
        case 2:
            e->ports ^= 1u << rn(NPORT);
            if (e->ports == 0) {
                e->ports = 1;
            }
            break;
        case 3:
            if (e->rest && e->access == 0 && e->nallow < 3) {
                gen_l7(&e->allow[e->nallow++], queries);
            }
            break;
        case 4:
            if (e->rest && e->nallow > 0) {
                gen_l7(&e->allow[rn(e->nallow)], queries);
            }
            break;
        case 5:
            if (e->rest && e->ndeny < 2) {
                gen_l7(&e->deny[e->ndeny++], queries);
            }
            break;
        case 6:
            if (e->ndeny > 0) {
                e->ndeny--;
            }
            break;
        case 7:
            e->enforce = !e->enforce;
            e->tls_skip = e->tls_skip && !e->enforce;
            break;
        case 8:
            e->cidrs = chance(50) ? (unsigned)(1 + rn(7)) : (e->host < 0 ? e->cidrs : 0);
            break;
        case 9:
            gen_ep(e, queries);
            break;
        case 10:
            e->aes = !e->aes;
            break;
        case 11:
            if (r->neps < 2) {
                gen_ep(&r->eps[r->neps++], queries);
            }
            break;
        default:
            if (p->nrules > 0 && chance(50)) {
                p->rules[rn(p->nrules)] = p->rules[p->nrules - 1];
                p->nrules--;
            } else if (e->rest) {
                e->access = rn(4);
                if (e->access == 0 && e->nallow == 0) {
                    e->nallow = 1;
                    gen_l7(&e->allow[0], queries);
                }
            }
            break;
        }
    }
}

/* ---------------------------------------------------------------------------
 * YAML emission
 * ------------------------------------------------------------------------- */

struct sbuf {
    char *s;
    size_t len, cap;
};

static void sb_add(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    for (;;) {
        size_t room = b->cap - b->len;

        va_start(ap, fmt);
        n = vsnprintf(b->s + b->len, room, fmt, ap);
        va_end(ap);
        ck_assert(n >= 0);
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        b->cap = b->cap * 2 + (size_t)n + 64;
        b->s = realloc(b->s, b->cap);
        ck_assert_ptr_nonnull(b->s);
    }
}

static void emit_query(struct sbuf *b, int q)
{
    static const char *const forms[] = {"{k: \"a*\"}", "{k: \"b\"}", "{k: {any: [\"a*\", \"b\"]}}"};

    if (q >= 0) {
        sb_add(b, ", query: %s", forms[q]);
    }
}

static void emit_ep(struct sbuf *b, const struct g_ep *e, bool dummy)
{
    sb_add(b, "      - ");
    if (e->host >= 0) {
        sb_add(b, "host: \"%s\"\n        ", U_HOST[e->host]);
    }
    sb_add(b, "ports: [");
    for (int i = 0, first = 1; i < NPORT; i++) {
        if (e->ports & (1u << i)) {
            sb_add(b, "%s%u", first ? "" : ", ", (unsigned)U_PORT[i]);
            first = 0;
        }
    }
    sb_add(b, "]\n");
    if (e->cidrs) {
        sb_add(b, "        allowed_ips: [");
        for (int i = 0, first = 1; i < NCIDR; i++) {
            if (e->cidrs & (1u << i)) {
                sb_add(b, "%s\"%s\"", first ? "" : ", ", U_CIDR[i]);
                first = 0;
            }
        }
        sb_add(b, "]\n");
    }
    if (dummy) {
        /* Same hosts, ports and destinations; grants nothing we ever send. */
        sb_add(b, "        protocol: rest\n        enforcement: enforce\n"
                  "        rules:\n          - allow: {method: X-NEVER, path: \"/never\"}\n");
        return;
    }
    if (e->scope >= 0) {
        sb_add(b, "        path: \"%s\"\n", U_PATH[e->scope]);
    }
    if (e->aes) {
        sb_add(b, "        allow_encoded_slash: true\n");
    }
    if (!e->rest) {
        return;
    }
    sb_add(b, "        protocol: rest\n");
    sb_add(b, "        enforcement: %s\n", e->enforce ? "enforce" : "audit");
    if (e->tls_skip) {
        sb_add(b, "        tls: skip\n");
    }
    if (e->access > 0) {
        sb_add(b, "        access: %s\n", U_ACCESS[e->access]);
    } else {
        sb_add(b, "        rules:\n");
        for (int i = 0; i < e->nallow; i++) {
            sb_add(b, "          - allow: {method: \"%s\", path: \"%s\"",
                   U_METH[e->allow[i].method], U_PATH[e->allow[i].path]);
            emit_query(b, e->allow[i].q);
            sb_add(b, "}\n");
        }
    }
    if (e->ndeny > 0) {
        sb_add(b, "        deny_rules:\n");
        for (int i = 0; i < e->ndeny; i++) {
            sb_add(b, "          - {method: \"%s\", path: \"%s\"", U_METH[e->deny[i].method],
                   U_PATH[e->deny[i].path]);
            emit_query(b, e->deny[i].q);
            sb_add(b, "}\n");
        }
    }
}

static void emit_rule(struct sbuf *b, int idx, const struct g_rule *r)
{
    sb_add(b, "  r%d:\n    name: r%d\n    endpoints:\n", idx, idx);
    for (int i = 0; i < r->neps; i++) {
        emit_ep(b, &r->eps[i], false);
    }
    sb_add(b, "    binaries:\n");
    for (int i = 0; i < NBIN; i++) {
        if (r->bins & (1u << i)) {
            sb_add(b, "      - path: \"%s\"\n", U_BIN[i]);
        }
    }
}

static char *emit_pol(const struct g_pol *p)
{
    struct sbuf b = {calloc(1, 256), 0, 256};

    ck_assert_ptr_nonnull(b.s);
    sb_add(&b, "version: 1\n");
    if (p->nrules > 0) {
        sb_add(&b, "network_policies:\n");
    }
    for (int i = 0; i < p->nrules; i++) {
        emit_rule(&b, i, &p->rules[i]);
    }
    return b.s;
}

/* Single-unit policy (binary 'bin', endpoint 'e'), optionally with a dummy L7
 * endpoint that forces the inspected route on the same (x, h, p). */
static char *emit_unit(int bin, const struct g_ep *e, bool dummy)
{
    struct sbuf b = {calloc(1, 256), 0, 256};

    ck_assert_ptr_nonnull(b.s);
    sb_add(&b, "version: 1\nnetwork_policies:\n  u:\n    name: u\n    endpoints:\n");
    emit_ep(&b, e, false);
    if (dummy) {
        emit_ep(&b, e, true);
    }
    sb_add(&b, "    binaries:\n      - path: \"%s\"\n", U_BIN[bin]);
    return b.s;
}

static bool pol_valid(const struct g_pol *p)
{
    for (int i = 0; i < p->nrules; i++) {
        for (int j = 0; j < p->rules[i].neps; j++) {
            const struct g_ep *e = &p->rules[i].eps[j];

            if (e->host < 0 && e->cidrs == 0) {
                return false;
            }
            if (e->rest && e->access == 0 && e->nallow == 0) {
                return false;
            }
            if (e->rest && e->enforce && e->tls_skip) {
                return false;
            }
        }
    }
    return true;
}

/* ---------------------------------------------------------------------------
 * The oracle
 * ------------------------------------------------------------------------- */

struct keyset {
    char **k;
    size_t n, cap;
};

static void ks_add(struct keyset *s, const char *key)
{
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->k[i], key) == 0) {
            return;
        }
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->k = realloc(s->k, s->cap * sizeof(char *));
        ck_assert_ptr_nonnull(s->k);
    }
    s->k[s->n] = strdup(key);
    ck_assert_ptr_nonnull(s->k[s->n]);
    s->n++;
}

static bool ks_has(const struct keyset *s, const char *key)
{
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->k[i], key) == 0) {
            return true;
        }
    }
    return false;
}

static void ks_free(struct keyset *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->k[i]);
    }
    free(s->k);
    memset(s, 0, sizeof(*s));
}

static int ks_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

struct o_unit {
    int bin;
    const struct g_ep *e;
    struct model_glob *bg, *hg;    /* hg NULL for hostless and IP hosts */
    struct model_ip hip;           /* the IP host */
    struct model_policy *pu, *pud; /* single unit; with inspected-forcing dummy */
};

struct oracle {
    struct o_unit u[32];
    size_t nu;
    const struct model_policy *B, *C;
    const struct model_credset *creds;
    const struct model_registry *reg;
    enum prover_mode mode;
    bool queries;
    size_t decisions;
};

static void o_units(struct oracle *o, const struct g_pol *c)
{
    const char *why;

    o->nu = 0;
    for (int i = 0; i < c->nrules; i++) {
        for (int j = 0; j < c->rules[i].neps; j++) {
            for (int k = 0; k < NBIN; k++) {
                struct o_unit *u;
                char *y;
                const struct g_ep *e = &c->rules[i].eps[j];

                if (!(c->rules[i].bins & (1u << k))) {
                    continue;
                }
                ck_assert(o->nu < PV_ARRAY_LEN(o->u));
                u = &o->u[o->nu++];
                memset(u, 0, sizeof(*u));
                u->bin = k;
                u->e = e;
                u->bg = model_glob_compile(MODEL_GLOB_BINARY, U_BIN[k], strlen(U_BIN[k]), &why);
                ck_assert_ptr_nonnull(u->bg);
                if (e->host >= 0 &&
                    !model_ip_parse_strict(U_HOST[e->host], strlen(U_HOST[e->host]), &u->hip)) {
                    u->hg = model_glob_compile(MODEL_GLOB_HOST, U_HOST[e->host],
                                               strlen(U_HOST[e->host]), &why);
                    ck_assert_ptr_nonnull(u->hg);
                }
                y = emit_unit(k, e, false);
                u->pu = tp_policy("unit.yaml", y);
                free(y);
                if (!e->rest || e->tls_skip) {
                    y = emit_unit(k, e, true);
                    u->pud = tp_policy("unitd.yaml", y);
                    free(y);
                }
            }
        }
    }
}

static void o_units_free(struct oracle *o)
{
    for (size_t i = 0; i < o->nu; i++) {
        model_glob_free(o->u[i].bg);
        model_glob_free(o->u[i].hg);
        model_policy_free(o->u[i].pu);
        model_policy_free(o->u[i].pud);
    }
    o->nu = 0;
}

/* 'h' normalised (lower case, no trailing dot), 'is_ip'/'hip' its address,
 * 'll' whether it is link-local. */
static bool unit_matches(const struct o_unit *u, const char *x, const char *h, bool is_ip,
                         const struct model_ip *hip, bool ll, uint16_t p)
{
    bool port = false;

    for (int i = 0; i < NPORT; i++) {
        port = port || ((u->e->ports & (1u << i)) && U_PORT[i] == p);
    }
    if (!port || !model_glob_match(u->bg, x, strlen(x))) {
        return false;
    }
    if (u->e->host < 0) {
        /* docs/semantics.md#hostless: every host but the link-local ones */
        return !ll;
    }
    if (u->hg != NULL) {
        return !is_ip && model_glob_match(u->hg, h, strlen(h));
    }
    return is_ip && memcmp(u->hip.b, hip->b, 16) == 0;
}

/* The host as the evaluator sees it (docs/semantics.md#host-normalise). */
static void norm_host(const char *h, char *out, size_t cap)
{
    size_t n = strlen(h);

    ck_assert(n < cap);
    if (n > 0 && h[n - 1] == '.') {
        n--;
    }
    for (size_t i = 0; i < n; i++) {
        out[i] = (h[i] >= 'A' && h[i] <= 'Z') ? (char)(h[i] - 'A' + 'a') : h[i];
    }
    out[n] = '\0';
}

static void dec(struct oracle *o, const struct model_policy *p, const char *x, const char *h,
                uint16_t port, const char *m, const char *target, const struct model_ip *d,
                struct model_decision *out)
{
    struct model_request rq;
    const char *bins[1] = {x};

    memset(&rq, 0, sizeof(rq));
    rq.binaries = bins;
    rq.nbinaries = 1;
    rq.host = h;
    rq.host_len = strlen(h);
    rq.port = port;
    rq.method = m;
    rq.target = target;
    rq.target_len = target != NULL ? strlen(target) : 0;
    rq.dest = d;
    model_decide(p, &rq, out);
    o->decisions++;
}

static bool covers(const struct oracle *o, const char *h)
{
    for (size_t i = 0; i < model_credset_count(o->creds); i++) {
        if (model_cred_covers_host(o->creds, i, h, strlen(h))) {
            return true;
        }
    }
    return false;
}

static bool bypasses(const struct oracle *o, const char *x)
{
    for (size_t i = 0; i < model_registry_nbinaries(o->reg); i++) {
        if (model_registry_binary_bypasses_l7(o->reg, i) &&
            model_glob_match(model_registry_binary_glob(o->reg, i), x, strlen(x))) {
            return true;
        }
    }
    return false;
}

static void key(char *buf, size_t n, enum prover_category cat, const struct o_unit *u,
                uint16_t port, const char *m)
{
    (void)snprintf(buf, n, "%s|%s|%s|%u|%s", prover_category_name(cat), U_BIN[u->bin],
                   u->e->host >= 0 ? U_HOST[u->e->host] : "*", (unsigned)port, m != NULL ? m : "");
}

/* Fill 'out' with the oracle's path keys; for CHECK, one key when exceeded. */
static void oracle_run(struct oracle *o, struct keyset *out)
{
    size_t nq = o->queries ? PV_ARRAY_LEN(C_QUERY) : 1;
    struct keyset reach = {0};

    for (size_t xi = 0; xi < NCBIN; xi++) {
        const char *x = C_BIN[xi];
        bool byp = bypasses(o, x);

        for (size_t hi = 0; hi < PV_ARRAY_LEN(C_HOST); hi++) {
            const char *h = C_HOST[hi];
            char hn[128];
            struct model_ip hip;
            bool is_ip = model_ip_parse_strict(h, strlen(h), &hip);
            bool ll;

            norm_host(h, hn, sizeof(hn));
            ll = is_ip ? model_ip_is_link_local(&hip) : model_host_is_metadata_name(hn, strlen(hn));
            bool cred = covers(o, hn);

            for (int pi = 0; pi < NPORT; pi++) {
                uint16_t p = U_PORT[pi];
                struct model_decision cc, rb;
                bool reach_b;
                size_t nd = is_ip ? 1 : PV_ARRAY_LEN(C_DEST);

                dec(o, o->C, x, h, p, NULL, NULL, is_ip ? &hip : NULL, &cc);
                if (cc.route == MODEL_ROUTE_NONE) {
                    continue;
                }
                dec(o, o->B, x, h, p, NULL, NULL, is_ip ? &hip : NULL, &rb);
                reach_b = o->mode != PROVER_AUDIT && rb.allow;
                for (size_t di = 0; di < nd; di++) {
                    struct model_ip d = hip;

                    if (!is_ip) {
                        ck_assert(model_ip_parse_strict(C_DEST[di], strlen(C_DEST[di]), &d));
                    }
                    for (size_t mi = 0; mi < PV_ARRAY_LEN(C_METH); mi++) {
                        for (size_t ui = 0; ui < PV_ARRAY_LEN(C_PATH); ui++) {
                            for (size_t qi = 0; qi < nq; qi++) {
                                char target[128];
                                struct model_decision dc, db;
                                bool priv = model_ip_is_private(&d);
                                bool has2f = strstr(C_PATH[ui], "%2F") != NULL;
                                char kb[256];

                                (void)snprintf(target, sizeof(target), "%s%s%s", C_PATH[ui],
                                               C_QUERY[qi][0] ? "?" : "", C_QUERY[qi]);
                                dec(o, o->C, x, h, p, C_METH[mi], target, &d, &dc);
                                if (!dc.allow && !dc.grant) {
                                    continue;
                                }
                                if (o->mode == PROVER_AUDIT) {
                                    db.allow = false;
                                    db.grant = false;
                                } else {
                                    dec(o, o->B, x, h, p, C_METH[mi], target, &d, &db);
                                }
                                if (o->mode == PROVER_CHECK) {
                                    if (dc.allow && !db.allow) {
                                        ks_add(out, "exceeds");
                                        ks_free(&reach);
                                        return;
                                    }
                                    continue;
                                }
                                for (size_t k = 0; k < o->nu; k++) {
                                    const struct o_unit *u = &o->u[k];
                                    const struct model_policy *pu = u->pu;
                                    struct model_decision du;
                                    bool uok, ugr;

                                    if (!unit_matches(u, x, hn, is_ip, &hip, ll, p)) {
                                        continue;
                                    }
                                    if ((!u->e->rest || u->e->tls_skip) &&
                                        dc.route == MODEL_ROUTE_INSPECTED) {
                                        pu = u->pud;
                                    }
                                    dec(o, pu, x, h, p, C_METH[mi], target, &d, &du);
                                    uok = du.allow;
                                    ugr = du.grant;
                                    (void)has2f;
                                    if (ll && dc.grant && !db.grant && ugr) {
                                        key(kb, sizeof(kb), PROVER_CAT_LINK_LOCAL, u, p, NULL);
                                        ks_add(out, kb);
                                    }
                                    if (!dc.allow || !uok) {
                                        continue;
                                    }
                                    if (!priv && cred && !reach_b) {
                                        key(kb, sizeof(kb),
                                            byp ? PROVER_CAT_L7_BYPASS : PROVER_CAT_CRED_REACH, u,
                                            p, NULL);
                                        ks_add(out, kb);
                                        key(kb, sizeof(kb), PROVER_CAT_CRED_REACH, u, p, NULL);
                                        ks_add(&reach, kb + strlen("credential_reach_expansion"));
                                    }
                                    if (o->mode == PROVER_DELTA && !db.allow && !priv && cred &&
                                        reach_b) {
                                        key(kb, sizeof(kb), PROVER_CAT_CAPABILITY, u, p,
                                            C_METH[mi]);
                                        ks_add(out, kb);
                                    }
                                    if (o->mode == PROVER_AUDIT && !priv && cred && !byp &&
                                        dc.route == MODEL_ROUTE_INSPECTED) {
                                        key(kb, sizeof(kb), PROVER_CAT_CAPABILITY, u, p,
                                            C_METH[mi]);
                                        ks_add(out, kb);
                                    }
                                    if (!db.allow && priv) {
                                        key(kb, sizeof(kb), PROVER_CAT_PRIVATE_REACH, u, p, NULL);
                                        ks_add(out, kb);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    if (o->mode == PROVER_DELTA) {
        /* Suppression: capability keys whose (binary, host, port) has reach. */
        size_t k = 0;

        for (size_t i = 0; i < out->n; i++) {
            const char *s = out->k[i];
            bool drop = false;

            if (strncmp(s, "capability_expansion|", 21) == 0) {
                char tail[256];
                char *last;

                (void)snprintf(tail, sizeof(tail), "%s", s + strlen("capability_expansion"));
                last = strrchr(tail, '|');
                ck_assert_ptr_nonnull(last);
                last[1] = '\0';
                drop = ks_has(&reach, tail);
            }
            if (drop) {
                free(out->k[i]);
            } else {
                out->k[k++] = out->k[i];
            }
        }
        out->n = k;
    }
    ks_free(&reach);
}

/* ---------------------------------------------------------------------------
 * The test
 * ------------------------------------------------------------------------- */

static struct prover_session *session;
static struct model_registry *registry;
static size_t stat_pairs, stat_findings, stat_empty, stat_unknown, stat_paths, stat_check_ex,
    stat_split;
static double stat_prover_ms, stat_max_ms;
static size_t stat_decisions, stat_queries, stat_queries_full, stat_shortcut_paths;
/* pairs with paths found from concrete candidates (prover_queries_concrete) */
static size_t stat_concrete;
static struct prover_session *session_full; /* prover_session_full_smt */
static size_t stat_cat[PROVER_CAT__COUNT];

static char *gen_creds(void)
{
    struct sbuf b = {calloc(1, 128), 0, 128};
    int mask = rn(16);

    ck_assert_ptr_nonnull(b.s);
    sb_add(&b, "credentials:\n");
    if (mask == 0) {
        sb_add(&b, "  []\n");
        return b.s;
    }
    sb_add(&b, "  - name: c\n    type: t\n    target_hosts: [");
    for (int i = 0, first = 1; i < NCRED; i++) {
        if (mask & (1 << i)) {
            sb_add(&b, "%s\"%s\"", first ? "" : ", ", U_CRED[i]);
            first = 0;
        }
    }
    sb_add(&b, "]\n");
    return b.s;
}

static void recheck_witness(const struct oracle *o, const struct prover_path *p)
{
    struct oracle tmp = *o;
    struct model_decision dc, db;
    struct model_ip d;
    char target[512];

    ck_assert(model_ip_parse_strict(p->w.ip, strlen(p->w.ip), &d));
    (void)snprintf(target, sizeof(target), "%s%s%s", p->w.path, p->w.query[0] ? "?" : "",
                   p->w.query);
    dec(&tmp, o->C, p->w.binary, p->w.host, p->w.port, p->w.method, target, &d, &dc);
    dec(&tmp, o->B, p->w.binary, p->w.host, p->w.port, p->w.method, target, &d, &db);
    switch (p->cat) {
    case PROVER_CAT_LINK_LOCAL:
        ck_assert(dc.grant && (o->mode == PROVER_AUDIT || !db.grant));
        break;
    case PROVER_CAT_CAPABILITY:
        ck_assert(dc.allow && (o->mode == PROVER_AUDIT || !db.allow));
        ck_assert(covers(o, p->w.host));
        break;
    case PROVER_CAT_L7_BYPASS:
    case PROVER_CAT_CRED_REACH:
        ck_assert(dc.allow && (o->mode == PROVER_AUDIT || !db.allow));
        ck_assert(covers(o, p->w.host));
        ck_assert(bypasses(o, p->w.binary) == (p->cat == PROVER_CAT_L7_BYPASS));
        break;
    case PROVER_CAT_PRIVATE_REACH:
        ck_assert(dc.allow && (o->mode == PROVER_AUDIT || !db.allow));
        ck_assert(model_ip_is_private(&d));
        break;
    case PROVER_CAT_BOUNDARY:
        ck_assert(dc.allow && !db.allow);
        break;
    }
}

static void dump_sets(const char *yb, const char *yc, const char *ycr, enum prover_mode mode,
                      struct keyset *want, const struct prover_result *r)
{
    char *vr = prover_validation_result(r);

    qsort(want->k, want->n, sizeof(char *), ks_cmp);
    fprintf(stderr, "---- mode %d\n-- baseline\n%s-- candidate\n%s-- creds\n%s-- oracle:\n", mode,
            yb, yc, ycr);
    for (size_t i = 0; i < want->n; i++) {
        fprintf(stderr, "  %s\n", want->k[i]);
    }
    fprintf(stderr, "-- prover (%s %s):\n%s\n", prover_verdict_name(r->verdict),
            prover_unknown_text(r->unknown), vr);
    for (size_t i = 0; i < r->npaths; i++) {
        fprintf(stderr, "  witness %s %s %s:%u %s?%s ip %s\n",
                prover_category_name(r->paths[i].cat), r->paths[i].w.binary, r->paths[i].w.host,
                (unsigned)r->paths[i].w.port, r->paths[i].w.path, r->paths[i].w.query,
                r->paths[i].w.ip);
    }
    free(vr);
}

static void one_pair(void)
{
    struct g_pol gb, gc;
    bool queries = chance(20);
    enum prover_mode mode;
    char *yb, *yc, *ycr;
    struct model_policy *B, *C;
    struct model_credset *creds;
    struct oracle o;
    struct keyset want = {0};
    struct keyset got = {0};
    struct prover_input in;
    struct prover_result *r;
    size_t nc0;
    int dice = rn(100);

    do {
        gen_pol(&gb, queries);
    } while (!pol_valid(&gb));
    do {
        gc = gb;
        if (chance(15)) {
            gen_pol(&gc, queries);
        } else if (!chance(5)) {
            mutate(&gc, queries);
        }
    } while (!pol_valid(&gc));
    mode = dice < 70 ? PROVER_DELTA : dice < 85 ? PROVER_AUDIT : PROVER_CHECK;
    yb = emit_pol(&gb);
    yc = emit_pol(&gc);
    ycr = gen_creds();
    B = tp_policy("baseline.yaml", yb);
    C = tp_policy("candidate.yaml", yc);
    creds = tp_creds(ycr);
    memset(&o, 0, sizeof(o));
    o.B = B;
    o.C = C;
    o.creds = creds;
    o.reg = registry;
    o.mode = mode;
    o.queries = queries;
    o_units(&o, &gc);
    oracle_run(&o, &want);
    memset(&in, 0, sizeof(in));
    in.baseline = mode == PROVER_AUDIT ? NULL : B;
    in.candidate = C;
    in.creds = creds;
    in.reg = registry;
    in.mode = mode;
    in.timeout_ms = 20000;
    nc0 = session->nconcrete;
    r = prover_run(session, &in);
    stat_concrete += session->nconcrete > nc0;
    ck_assert_ptr_nonnull(r);
    if (r->verdict == PROVER_VERDICT_UNKNOWN) {
        dump_sets(yb, yc, ycr, mode, &want, r);
    }
    ck_assert_int_ne(r->verdict, PROVER_VERDICT_UNKNOWN);
    for (size_t i = 0; i < r->npaths; i++) {
        char kb[256];
        const struct prover_path *p = &r->paths[i];

        recheck_witness(&o, p);
        stat_cat[p->cat]++;
        if (mode == PROVER_CHECK) {
            ks_add(&got, "exceeds");
            continue;
        }
        (void)snprintf(kb, sizeof(kb), "%s|%s|%s|%u|%s", prover_category_name(p->cat), p->binary,
                       p->host, (unsigned)p->port, p->method ? p->method : "");
        ks_add(&got, kb);
    }
    {
        bool same = want.n == got.n;

        for (size_t i = 0; same && i < want.n; i++) {
            same = ks_has(&got, want.k[i]);
        }
        if (!same) {
            dump_sets(yb, yc, ycr, mode, &want, r);
        }
        ck_assert_msg(same, "prover and oracle disagree (see stderr)");
    }
    if (mode == PROVER_CHECK) {
        ck_assert_int_eq(r->verdict, want.n ? PROVER_VERDICT_EXCEEDS : PROVER_VERDICT_WITHIN);
        stat_check_ex += want.n > 0;
    } else {
        ck_assert_int_eq(r->verdict, want.n ? PROVER_VERDICT_FINDINGS : PROVER_VERDICT_EMPTY);
    }
    stat_pairs++;
    stat_split += r->ncomponents > 1;
    stat_findings += r->npaths > 0;
    stat_empty += r->npaths == 0;
    stat_paths += r->npaths;
    stat_prover_ms += r->elapsed_ms;
    if (r->elapsed_ms > stat_max_ms) {
        stat_max_ms = r->elapsed_ms;
    }
    stat_decisions += o.decisions;
    stat_queries += r->nqueries;
    {
        /* The full-SMT path: the same verdict and the same paths (category,
         * binary, host, port, method, rule), in the same (report) order. */
        struct prover_result *f = prover_run(session_full, &in);

        ck_assert_ptr_nonnull(f);
        bool differ = f->npaths != r->npaths || f->verdict != r->verdict;

        /* (CHECK names the unit that allows its counterexample, whichever
         * model the solver gave: only the verdict and count are fixed.) */
        for (size_t i = 0; !differ && mode != PROVER_CHECK && i < r->npaths; i++) {
            const struct prover_path *a = &r->paths[i];
            const struct prover_path *b = &f->paths[i];

            differ = a->cat != b->cat || strcmp(a->binary, b->binary) != 0 ||
                     strcmp(a->host, b->host) != 0 || a->port != b->port ||
                     strcmp(a->method != NULL ? a->method : "",
                            b->method != NULL ? b->method : "") != 0 ||
                     strcmp(a->rule, b->rule) != 0;
        }
        if (differ) {
            char *v1 = prover_validation_result(r);
            char *v2 = prover_validation_result(f);

            fprintf(stderr, "shortcuts:\n%s\nfull-SMT:\n%s\n", v1, v2);
            free(v1);
            free(v2);
            dump_sets(yb, yc, ycr, mode, &want, r);
        }
        ck_assert_int_eq(f->verdict, r->verdict);
        ck_assert_uint_eq(f->npaths, r->npaths);
        for (size_t i = 0; mode != PROVER_CHECK && i < r->npaths; i++) {
            const struct prover_path *a = &r->paths[i];
            const struct prover_path *b = &f->paths[i];

            ck_assert_int_eq(a->cat, b->cat);
            ck_assert_str_eq(a->binary, b->binary);
            ck_assert_str_eq(a->host, b->host);
            ck_assert_uint_eq(a->port, b->port);
            ck_assert_str_eq(a->method != NULL ? a->method : "",
                             b->method != NULL ? b->method : "");
            ck_assert_str_eq(a->rule, b->rule);
        }
        /* (a pair may take a check more: a group's or a class's last
         * UNSAT; the totals are compared at the end) */
        stat_queries_full += f->nqueries;
        stat_shortcut_paths += r->npaths > 0 && r->nqueries < f->nqueries;
        prover_result_free(f);
    }
    prover_result_free(r);
    ks_free(&want);
    ks_free(&got);
    o_units_free(&o);
    model_policy_free(B);
    model_policy_free(C);
    model_credset_free(creds);
    free(yb);
    free(yc);
    free(ycr);
}

/* One representative binary per class (which universe globs match it,
 * whether the registry puts it in BypassL7): the base list plus the
 * registry's literal paths. */
static void binary_universe(void)
{
    const char *cand[96];
    size_t nc = 0;
    unsigned sig[96];
    const char *why;
    struct model_glob *g[NBIN];
    struct oracle o;

    memset(&o, 0, sizeof(o));
    o.reg = registry;
    for (size_t i = 0; i < PV_ARRAY_LEN(C_BIN_BASE); i++) {
        cand[nc++] = C_BIN_BASE[i];
    }
    for (size_t i = 0; i < model_registry_nbinaries(registry) && nc < PV_ARRAY_LEN(cand); i++) {
        const struct model_glob *rg = model_registry_binary_glob(registry, i);

        if (model_glob_is_literal(rg)) {
            cand[nc++] = model_glob_text(rg);
        }
    }
    for (int k = 0; k < NBIN; k++) {
        g[k] = model_glob_compile(MODEL_GLOB_BINARY, U_BIN[k], strlen(U_BIN[k]), &why);
        ck_assert_ptr_nonnull(g[k]);
    }
    NCBIN = 0;
    for (size_t i = 0; i < nc; i++) {
        unsigned sg = bypasses(&o, cand[i]) ? 1u << NBIN : 0;
        bool dup = false;

        for (int k = 0; k < NBIN; k++) {
            sg |= model_glob_match(g[k], cand[i], strlen(cand[i])) ? 1u << k : 0;
        }
        for (size_t j = 0; j < NCBIN; j++) {
            dup = dup || sig[j] == sg;
        }
        if (!dup && NCBIN < PV_ARRAY_LEN(C_BIN)) {
            sig[NCBIN] = sg;
            C_BIN[NCBIN++] = cand[i];
        }
    }
    for (int k = 0; k < NBIN; k++) {
        model_glob_free(g[k]);
    }
}

static size_t env_size(const char *name, size_t dflt)
{
    const char *v = getenv(name);
    uint64_t n;

    if (v == NULL || !pv_ok(pv_parse_u64(v, strlen(v), UINT64_MAX / 2, &n))) {
        return dflt;
    }
    return (size_t)n;
}

START_TEST(test_property)
{
    size_t n = env_size("PV_PROPERTY_N", 150);

    rng_state = env_size("PV_PROPERTY_SEED", 0x5eed1234abcdull) | 1u;
    session = prover_session_new();
    ck_assert_ptr_nonnull(session);
    session_full = prover_session_new();
    ck_assert_ptr_nonnull(session_full);
    prover_session_full_smt(session_full, true);
    registry = tp_registry();
    binary_universe();
    for (size_t i = 0; i < n; i++) {
        one_pair();
    }
    if (getenv("PV_PROPERTY_VERBOSE") != NULL || n > 1000) {
        fprintf(stderr,
                "property: %zu pairs, %zu with findings, %zu empty (check exceeds %zu), %zu "
                "paths, %zu unknown, %zu proved in parts; prover mean %.2f ms max %.1f ms, %zu "
                "solver queries; %zu oracle decisions\n",
                stat_pairs, stat_findings, stat_empty, stat_check_ex, stat_paths, stat_unknown,
                stat_split, stat_pairs ? stat_prover_ms / (double)stat_pairs : 0.0, stat_max_ms,
                stat_queries, stat_decisions);
        fprintf(stderr, "  full-SMT path: %zu solver queries; %zu pairs answered with fewer\n",
                stat_queries_full, stat_shortcut_paths);
        fprintf(stderr, "  %zu pairs with paths from concrete candidates\n", stat_concrete);
        for (int c = 0; c < PROVER_CAT__COUNT; c++) {
            fprintf(stderr, "  %-28s %zu paths\n", prover_category_name((enum prover_category)c),
                    stat_cat[c]);
        }
    }
    ck_assert_uint_eq(stat_pairs, n);
    /* The generator must exercise both outcomes. */
    ck_assert(n < 50 || (stat_findings > n / 10 && stat_empty > n / 10));
    /* ... and proofs whose slice falls into components proved on their own
     * (prover_units_slice) as well as proofs of one piece. */
    ck_assert(n < 50 || (stat_split > n / 20 && stat_split < n - n / 20));
    /* ... and pairs where the shortcuts saved solver checks. */
    ck_assert(n < 50 || stat_shortcut_paths > n / 20);
    /* ... and pairs with paths found from concrete candidates (their
     * paths were compared with the full-SMT session's above) */
    ck_assert(n < 50 || stat_concrete > n / 20);
    ck_assert_uint_le(stat_queries, stat_queries_full);
    model_registry_free(registry);
    prover_session_free(session);
    prover_session_free(session_full);
}
END_TEST

/* ---------------------------------------------------------------------------
 * Bench-like pairs: the shortcuts against the full-SMT path
 *
 * Policies shaped like tests/bench/bench_prove.c's (several binaries and
 * globs, host wildcards, REST rules with path globs, POST uploads, deny
 * rules, private allowed_ips endpoints, a second binary), changed the way
 * its whole-policy cases are (every rule's variant shifted, or rules added),
 * with credentials on a tenth of the hosts and a wildcard. The shortcuts
 * must give the full-SMT path's verdict and paths.
 * ------------------------------------------------------------------------- */

static const char *const BL_BINS[] = {"/usr/bin/curl",       "/usr/bin/git",  "/usr/local/bin/node",
                                      "/usr/bin/python3*",   "/opt/tools/**", "/usr/bin/gh",
                                      "/sandbox/.venv/bin/*"};

/* The rules' shape (tests/bench/bench_policy.h): five path families. */
static const struct bench_policy_shape BL_SHAPE = {BL_BINS, PV_ARRAY_LEN(BL_BINS), 5};

static char *bl_policy(unsigned n, unsigned shift)
{
    struct sbuf b = {calloc(1, 256), 0, 256};

    ck_assert_ptr_nonnull(b.s);
    sb_add(&b, "version: 1\nnetwork_policies:\n");
    for (unsigned i = 0; i < n; i++) {
        char key[32];
        char text[2048];
        size_t len = 0;

        (void)snprintf(key, sizeof(key), "rule_%03u", i);
        ck_assert(bench_policy_rule(&BL_SHAPE, text, sizeof(text), &len, key, i, i + shift));
        sb_add(&b, "%s", text);
    }
    return b.s;
}

static char *bl_creds(unsigned n)
{
    struct sbuf b = {calloc(1, 256), 0, 256};

    ck_assert_ptr_nonnull(b.s);
    sb_add(&b, "credentials:\n  - name: internal\n    type: token\n"
               "    target_hosts: [\"**.internal.example.com\"]\n"
               "  - name: svc\n    type: token\n    target_hosts:\n");
    for (unsigned i = 0; i < n; i += 10) {
        char host[96];

        bench_policy_host(i, host, sizeof(host));
        if (host[0] == '*') {
            (void)snprintf(host, sizeof(host), "x.svc%u.example.com", i);
        }
        sb_add(&b, "      - \"%s\"\n", host);
    }
    return b.s;
}

/* Prove B -> C with both sessions; the answers must agree. Returns the
 * number of paths. */
static size_t bl_queries, bl_queries_full;

static struct prover_session *session_nc; /* prover_session_no_concrete */
static size_t bl_queries_nc;

static void bl_same(const struct prover_result *r, const struct prover_result *f)
{
    ck_assert_int_eq(r->verdict, f->verdict);
    ck_assert_uint_eq(r->npaths, f->npaths);
    for (size_t i = 0; i < r->npaths; i++) {
        const struct prover_path *a = &r->paths[i];
        const struct prover_path *b = &f->paths[i];

        ck_assert_int_eq(a->cat, b->cat);
        ck_assert_str_eq(a->binary, b->binary);
        ck_assert_str_eq(a->host, b->host);
        ck_assert_uint_eq(a->port, b->port);
        ck_assert_str_eq(a->method != NULL ? a->method : "", b->method != NULL ? b->method : "");
        ck_assert_str_eq(a->rule, b->rule);
    }
}

static size_t bl_pair(const char *yb, const char *yc, const char *ycr, enum prover_mode mode)
{
    struct model_policy *B = tp_policy("baseline.yaml", yb);
    struct model_policy *C = tp_policy("candidate.yaml", yc);
    struct model_credset *creds = ycr != NULL ? tp_creds(ycr) : NULL;
    struct prover_input in;
    struct prover_result *r, *f, *g;
    size_t n;

    memset(&in, 0, sizeof(in));
    in.baseline = mode == PROVER_AUDIT ? NULL : B;
    in.candidate = C;
    in.creds = creds;
    in.reg = registry;
    in.mode = mode;
    in.timeout_ms = 60000;
    r = prover_run(session, &in);
    f = prover_run(session_full, &in);
    g = prover_run(session_nc, &in);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(g);
    ck_assert_int_ne(r->verdict, PROVER_VERDICT_UNKNOWN);
    /* concrete candidates and the shortcuts, the shortcuts alone, and
     * one check per question: the same verdict and paths */
    bl_same(r, f);
    bl_same(g, f);
    bl_queries += r->nqueries;
    bl_queries_full += f->nqueries;
    bl_queries_nc += g->nqueries;
    n = r->npaths;
    prover_result_free(r);
    prover_result_free(f);
    prover_result_free(g);
    model_policy_free(B);
    model_policy_free(C);
    model_credset_free(creds);
    return n;
}

START_TEST(test_bench_like)
{
    unsigned rules = 70;
    char *cr = bl_creds(rules);
    size_t cap = 0, total = 0;

    session = prover_session_new();
    session_full = prover_session_new();
    ck_assert_ptr_nonnull(session);
    ck_assert_ptr_nonnull(session_full);
    prover_session_full_smt(session_full, true);
    session_nc = prover_session_new();
    ck_assert_ptr_nonnull(session_nc);
    prover_session_no_concrete(session_nc, true);
    registry = tp_registry();
    for (unsigned shift = 0; shift < 4; shift++) {
        char *yb = bl_policy(shift == 0 ? rules / 5 : rules, 0);
        char *yc = bl_policy(rules, shift);

        for (int wc = 0; wc < 2; wc++) {
            total += bl_pair(yb, yc, wc ? cr : NULL, PROVER_DELTA);
        }
        if (shift == 1) {
            /* the other direction, and AUDIT of the candidate */
            total += bl_pair(yc, yb, cr, PROVER_DELTA);
            total += bl_pair(yb, yc, cr, PROVER_AUDIT);
        }
        free(yb);
        free(yc);
    }
    {
        /* capability paths exist (several methods through one unit) */
        char *yb = bl_policy(rules, 0);
        char *yc = bl_policy(rules, 1);
        struct model_policy *B = tp_policy("b", yb);
        struct model_policy *C = tp_policy("c", yc);
        struct model_credset *creds = tp_creds(cr);
        struct prover_input in;
        struct prover_result *r;

        memset(&in, 0, sizeof(in));
        in.baseline = B;
        in.candidate = C;
        in.creds = creds;
        in.reg = registry;
        in.mode = PROVER_DELTA;
        in.timeout_ms = 60000;
        r = prover_run(session, &in);
        ck_assert_ptr_nonnull(r);
        for (size_t i = 0; i < r->npaths; i++) {
            cap += r->paths[i].cat == PROVER_CAT_CAPABILITY;
        }
        prover_result_free(r);
        model_policy_free(B);
        model_policy_free(C);
        model_credset_free(creds);
        free(yb);
        free(yc);
    }
    ck_assert_uint_gt(cap, 10);
    ck_assert_uint_gt(total, 100);
    /* the shortcuts save checks on these changes: well under half */
    ck_assert_uint_lt(bl_queries_nc * 2, bl_queries_full);
    /* concrete candidates find most paths, and save most of the checks
     * left */
    fprintf(stderr,
            "bench-like: %zu paths, %zu from concrete candidates; checks %zu full-SMT, %zu "
            "shortcuts, %zu with concrete candidates\n",
            total, session->nconcrete, bl_queries_full, bl_queries_nc, bl_queries);
    ck_assert_uint_gt(session->nconcrete * 2, total);
    ck_assert_uint_lt(bl_queries * 2, bl_queries_nc);
    {
        /* A key another unit grants: POST on a.example.com is allowed by
         * the wildcard rule, not by the one whose GET model it would be
         * read off; it is a path of the wildcard's key only. */
        static const char yb[] = "version: 1\nnetwork_policies:\n  r1:\n    name: r1\n"
                                 "    endpoints:\n      - host: a.example.com\n        port: 443\n"
                                 "        protocol: rest\n        enforcement: enforce\n"
                                 "        rules:\n          - allow: {method: GET, path: /x}\n"
                                 "    binaries:\n      - path: /usr/bin/curl\n";
        static const char yc[] =
            "version: 1\nnetwork_policies:\n  r1:\n    name: r1\n"
            "    endpoints:\n      - host: a.example.com\n        port: 443\n"
            "        protocol: rest\n        enforcement: enforce\n"
            "        rules:\n          - allow: {method: GET, path: \"/**\"}\n"
            "    binaries:\n      - path: /usr/bin/curl\n"
            "  r2:\n    name: r2\n"
            "    endpoints:\n      - host: \"*.example.com\"\n        port: 443\n"
            "        protocol: rest\n        enforcement: enforce\n"
            "        rules:\n          - allow: {method: POST, path: \"/**\"}\n"
            "    binaries:\n      - path: /usr/bin/curl\n";
        static const char ycr[] = "credentials:\n  - name: c\n    type: token\n"
                                  "    target_hosts: [\"**.example.com\", a.example.com]\n";

        ck_assert_uint_eq(bl_pair(yb, yc, ycr, PROVER_DELTA), 3); /* GET, HEAD; POST */
    }
    {
        /* A key only a destination other than the placeholder shows: B
         * allows a.example.com through 93.184.216.0/24 only, C adds a rule
         * for any public address. The placeholder (93.184.216.34) is
         * allowed by both; 8.8.8.8, say, by C alone: the concrete requests
         * must go through the destination atoms (or leave the key to the
         * solver), never call it UNSAT. */
        static const char yb[] = "version: 1\nnetwork_policies:\n  r1:\n    name: r1\n"
                                 "    endpoints:\n      - host: a.example.com\n        port: 443\n"
                                 "        protocol: rest\n        enforcement: enforce\n"
                                 "        allowed_ips: [93.184.216.0/24]\n"
                                 "        rules:\n          - allow: {method: GET, path: \"/**\"}\n"
                                 "    binaries:\n      - path: /usr/bin/curl\n";
        static const char yc[] = "version: 1\nnetwork_policies:\n  r1:\n    name: r1\n"
                                 "    endpoints:\n      - host: a.example.com\n        port: 443\n"
                                 "        protocol: rest\n        enforcement: enforce\n"
                                 "        allowed_ips: [93.184.216.0/24]\n"
                                 "        rules:\n          - allow: {method: GET, path: \"/**\"}\n"
                                 "    binaries:\n      - path: /usr/bin/curl\n"
                                 "  r2:\n    name: r2\n"
                                 "    endpoints:\n      - host: a.example.com\n        port: 443\n"
                                 "        protocol: rest\n        enforcement: enforce\n"
                                 "        rules:\n          - allow: {method: GET, path: /v1/**}\n"
                                 "    binaries:\n      - path: /usr/bin/curl\n";
        static const char ycr[] = "credentials:\n  - name: c\n    type: token\n"
                                  "    target_hosts: [a.example.com]\n";

        ck_assert_uint_eq(bl_pair(yb, yc, ycr, PROVER_DELTA), 2); /* GET, HEAD through r2 */
    }
    {
        /* A removed deny: r1 is the same on both sides, r2 (B only) denies
         * GET /secret on its host. The paths are r1's, a unit on both
         * sides: only a part with no delta unit of B may skip such units. */
        static const char yb[] = "version: 1\nnetwork_policies:\n  r1:\n    name: r1\n"
                                 "    endpoints:\n      - host: a.example.com\n        port: 443\n"
                                 "        protocol: rest\n        enforcement: enforce\n"
                                 "        rules:\n          - allow: {method: GET, path: \"/**\"}\n"
                                 "    binaries:\n      - path: /usr/bin/curl\n"
                                 "  r2:\n    name: r2\n"
                                 "    endpoints:\n      - host: a.example.com\n        port: 443\n"
                                 "        protocol: rest\n        enforcement: enforce\n"
                                 "        rules:\n          - allow: {method: GET, path: /pub}\n"
                                 "        deny_rules:\n          - {method: GET, path: /secret}\n"
                                 "    binaries:\n      - path: /usr/bin/curl\n";
        static const char yc[] = "version: 1\nnetwork_policies:\n  r1:\n    name: r1\n"
                                 "    endpoints:\n      - host: a.example.com\n        port: 443\n"
                                 "        protocol: rest\n        enforcement: enforce\n"
                                 "        rules:\n          - allow: {method: GET, path: \"/**\"}\n"
                                 "    binaries:\n      - path: /usr/bin/curl\n";
        static const char ycr[] = "credentials:\n  - name: c\n    type: token\n"
                                  "    target_hosts: [a.example.com]\n";

        ck_assert_uint_eq(bl_pair(yb, yc, ycr, PROVER_DELTA), 2); /* GET, HEAD via r1 */
    }
    free(cr);
    model_registry_free(registry);
    prover_session_free(session);
    prover_session_free(session_full);
    prover_session_free(session_nc);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("prover_property");
    TCase *tc = tcase_create("property");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 36000);
    tcase_add_test(tc, test_property);
    tcase_add_test(tc, test_bench_like);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    /* after every test: with CK_FORK=no they share the process */
    prover_finalize();
    return failed == 0 ? 0 : 1;
}
