/* SPDX-License-Identifier: Apache-2.0 */
/* bench_eval.c - throughput of model_decide() against a linear fnmatch scan
 *
 * Generates realistic policies of 100 and 1,000 rules (exact hosts,
 * "*.x.com"-style wildcards, several binaries including globs such as
 * "/usr/lib/node_modules/(**)/node", L7 rest rules with path globs, some deny
 * rules) and a fixed mix of allowed and denied requests, then measures
 * decisions per second of model_decide() and, in the same run, of a baseline
 * that scans the same rules linearly with fnmatch(3). Prints both figures and
 * their ratio for each size. Built by `make`, never run by `make check`:
 *
 *   tests/bench/bench_eval [SECONDS]     (default 1 CPU-second per measurement)
 */
#include "config.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/pv_dynbuf.h"
#include "model/model.h"

#define MAX_EP 2
#define MAX_BIN 3
#define MAX_ALLOW 3
#define NREQ 4096

struct b_rule_l7 {
    char method[12];
    char path[64];
};

struct b_endpoint {
    char host[96];
    bool wild;
    uint16_t port;
    bool l7;
    struct b_rule_l7 allow[MAX_ALLOW];
    size_t nallow;
    struct b_rule_l7 deny;
    bool has_deny;
};

struct b_rule {
    char key[32];
    struct b_endpoint ep[MAX_EP];
    size_t nep;
    char bins[MAX_BIN][96];
    size_t nbins;
};

struct b_req {
    char exe[96];
    char host[128];
    uint16_t port;
    char method[12];
    char path[96];
};

struct bench {
    struct b_rule *rules;
    size_t nrules;
    struct b_req reqs[NREQ];
};

/* Deterministic PRNG (xorshift64*), so every run uses the same inputs. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545f4914f6cdd1du) >> 33) % n;
}

static const char *const exact_bins[] = {
    "/usr/bin/curl", "/usr/bin/git", "/usr/bin/python3",      "/usr/local/bin/node",
    "/usr/bin/wget", "/usr/bin/ssh", "/usr/local/bin/claude", "/usr/bin/gh",
};

static void gen_rule(struct b_rule *r, size_t i)
{
    snprintf(r->key, sizeof(r->key), "rule_%04zu", i);
    r->nep = 1 + rnd(2);
    for (size_t e = 0; e < r->nep; e++) {
        struct b_endpoint *ep = &r->ep[e];
        uint32_t kind = rnd(10);
        if (kind < 7) {
            snprintf(ep->host, sizeof(ep->host), "svc%zu-%zu.example%zu.com", i, e, i % 23);
            ep->wild = false;
        } else {
            snprintf(ep->host, sizeof(ep->host), "*.t%zu-%zu.cloud%zu.com", i, e, i % 7);
            ep->wild = true;
        }
        ep->port = rnd(10) < 8 ? 443 : (rnd(2) != 0 ? 80 : 8443);
        ep->l7 = rnd(10) < 6;
        ep->nallow = 0;
        ep->has_deny = false;
        if (ep->l7) {
            uint32_t v = rnd(4);
            snprintf(ep->allow[0].method, sizeof(ep->allow[0].method), "GET");
            snprintf(ep->allow[0].path, sizeof(ep->allow[0].path), "/api/v%u/**", v);
            snprintf(ep->allow[1].method, sizeof(ep->allow[1].method), "POST");
            snprintf(ep->allow[1].path, sizeof(ep->allow[1].path), "/api/v%u/items/*", v);
            snprintf(ep->allow[2].method, sizeof(ep->allow[2].method), "PUT");
            snprintf(ep->allow[2].path, sizeof(ep->allow[2].path), "/repos/*/contents/**");
            ep->nallow = 3;
            if (rnd(10) < 3) {
                ep->has_deny = true;
                snprintf(ep->deny.method, sizeof(ep->deny.method), "GET");
                snprintf(ep->deny.path, sizeof(ep->deny.path), "/api/v%u/admin/**", v);
            }
        }
    }
    r->nbins = 1 + rnd(MAX_BIN);
    for (size_t b = 0; b < r->nbins; b++) {
        uint32_t kind = rnd(10);
        if (kind < 6) {
            snprintf(r->bins[b], sizeof(r->bins[b]), "%s",
                     exact_bins[rnd((uint32_t)PV_ARRAY_LEN(exact_bins))]);
        } else if (kind < 8) {
            snprintf(r->bins[b], sizeof(r->bins[b]), "/usr/lib/node_modules/**/node");
        } else {
            snprintf(r->bins[b], sizeof(r->bins[b]), "/opt/tools/t%u/bin/*", rnd(30));
        }
    }
}

/* A concrete binary path matched by pattern 'pat'. */
static void concrete_bin(const char *pat, char *out, size_t cap)
{
    if (strcmp(pat, "/usr/lib/node_modules/**/node") == 0) {
        snprintf(out, cap, "/usr/lib/node_modules/pkg%u/bin/node", rnd(9));
    } else if (strncmp(pat, "/opt/tools/", 11) == 0) {
        size_t len = strlen(pat);
        snprintf(out, cap, "%.*stool%u", (int)(len - 1), pat, rnd(5));
    } else {
        snprintf(out, cap, "%s", pat);
    }
}

static void gen_request(struct bench *b, struct b_req *q)
{
    const struct b_rule *r = &b->rules[rnd((uint32_t)b->nrules)];
    const struct b_endpoint *ep = &r->ep[rnd((uint32_t)r->nep)];
    uint32_t kind = rnd(100);
    uint32_t ver;
    uint32_t num;

    concrete_bin(r->bins[rnd((uint32_t)r->nbins)], q->exe, sizeof(q->exe));
    if (ep->wild) {
        snprintf(q->host, sizeof(q->host), "api%u.%s", rnd(5), ep->host + 2);
    } else {
        snprintf(q->host, sizeof(q->host), "%s", ep->host);
    }
    q->port = ep->port;
    snprintf(q->method, sizeof(q->method), "GET");
    /* One rnd() per statement: argument evaluation order is unspecified and
     * the mix must not depend on the compiler. */
    ver = rnd(4);
    num = rnd(1000);
    snprintf(q->path, sizeof(q->path), "/api/v%u/users/%u", ver, num);
    if (kind < 50) {
        /* allowed-looking request (as generated) */
    } else if (kind < 65) {
        ver = rnd(4);
        num = rnd(1000);
        snprintf(q->method, sizeof(q->method), "POST");
        snprintf(q->path, sizeof(q->path), "/api/v%u/items/%u", ver, num);
    } else if (kind < 75) {
        snprintf(q->path, sizeof(q->path), "/api/v%u/admin/keys", rnd(4));
    } else if (kind < 82) {
        snprintf(q->method, sizeof(q->method), "DELETE");
    } else if (kind < 90) {
        snprintf(q->exe, sizeof(q->exe), "/usr/bin/nc");
    } else {
        snprintf(q->host, sizeof(q->host), "unknown%u.example.org", rnd(1000));
    }
}

static char *policy_yaml(const struct bench *b)
{
    struct pv_dynbuf d;
    char line[512];
    size_t len;

#define EMIT(...)                                                                                  \
    do {                                                                                           \
        int n_ = snprintf(line, sizeof(line), __VA_ARGS__);                                        \
        if (n_ < 0 || (size_t)n_ >= sizeof(line) || !pv_ok(pv_dynbuf_add(&d, line, (size_t)n_))) { \
            pv_dynbuf_free(&d);                                                                    \
            return NULL;                                                                           \
        }                                                                                          \
    } while (0)

    pv_dynbuf_init(&d, MODEL_MAX_POLICY_BYTES);
    EMIT("version: 1\nnetwork_policies:\n");
    for (size_t i = 0; i < b->nrules; i++) {
        const struct b_rule *r = &b->rules[i];
        EMIT("  %s:\n    endpoints:\n", r->key);
        for (size_t e = 0; e < r->nep; e++) {
            const struct b_endpoint *ep = &r->ep[e];
            EMIT("      - host: '%s'\n        port: %u\n", ep->host, (unsigned)ep->port);
            if (!ep->l7) {
                continue;
            }
            EMIT("        protocol: rest\n        enforcement: enforce\n        rules:\n");
            for (size_t k = 0; k < ep->nallow; k++) {
                EMIT("          - allow: {method: %s, path: '%s'}\n", ep->allow[k].method,
                     ep->allow[k].path);
            }
            if (ep->has_deny) {
                EMIT("        deny_rules:\n          - {method: %s, path: '%s'}\n", ep->deny.method,
                     ep->deny.path);
            }
        }
        EMIT("    binaries:\n");
        for (size_t k = 0; k < r->nbins; k++) {
            EMIT("      - path: '%s'\n", r->bins[k]);
        }
    }
#undef EMIT
    return pv_dynbuf_take(&d, &len);
}

/* --- the baseline: a linear scan with fnmatch(3) -------------------------- */

static bool base_decide(const struct bench *b, const struct b_req *q)
{
    bool allow = false;
    bool deny = false;

    for (size_t i = 0; i < b->nrules; i++) {
        const struct b_rule *r = &b->rules[i];
        bool bin = false;
        for (size_t k = 0; k < r->nbins && !bin; k++) {
            bin = strcmp(r->bins[k], q->exe) == 0 || fnmatch(r->bins[k], q->exe, FNM_PATHNAME) == 0;
        }
        if (!bin) {
            continue;
        }
        for (size_t e = 0; e < r->nep; e++) {
            const struct b_endpoint *ep = &r->ep[e];
            bool host = ep->wild ? fnmatch(ep->host, q->host, FNM_CASEFOLD) == 0
                                 : strcasecmp(ep->host, q->host) == 0;
            if (!host || ep->port != q->port) {
                continue;
            }
            if (!ep->l7) {
                allow = true;
                continue;
            }
            for (size_t k = 0; k < ep->nallow; k++) {
                if (strcasecmp(ep->allow[k].method, q->method) == 0 &&
                    fnmatch(ep->allow[k].path, q->path, FNM_PATHNAME) == 0) {
                    allow = true;
                }
            }
            if (ep->has_deny && strcasecmp(ep->deny.method, q->method) == 0 &&
                fnmatch(ep->deny.path, q->path, FNM_PATHNAME) == 0) {
                deny = true;
            }
        }
    }
    return allow && !deny;
}

/* --- measurement ---------------------------------------------------------- */

/* CPU time of this thread: decisions per CPU-second on one core, unaffected
 * by other processes competing for the machine. */
static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile size_t sink;

static double measure_proviso(const struct model_policy *p, const struct bench *b, double secs,
                              size_t *allowed)
{
    struct model_request reqs[NREQ];
    const char *exes[NREQ];
    struct model_decision d;
    size_t n = 0;
    size_t ok = 0;
    double t0;
    double t;

    for (size_t i = 0; i < NREQ; i++) {
        const struct b_req *q = &b->reqs[i];
        exes[i] = q->exe;
        memset(&reqs[i], 0, sizeof(reqs[i]));
        reqs[i].binaries = &exes[i];
        reqs[i].nbinaries = 1;
        reqs[i].host = q->host;
        reqs[i].host_len = strlen(q->host);
        reqs[i].port = q->port;
        reqs[i].method = q->method;
        reqs[i].target = q->path;
        reqs[i].target_len = strlen(q->path);
    }
    t0 = now();
    do {
        for (size_t i = 0; i < NREQ; i++) {
            model_decide(p, &reqs[i], &d);
            ok += d.allow;
        }
        n += NREQ;
        t = now() - t0;
    } while (t < secs);
    sink = ok;
    *allowed = ok * 1000 / n;
    return (double)n / t;
}

static double measure_base(const struct bench *b, double secs, size_t *allowed)
{
    size_t n = 0;
    size_t ok = 0;
    double t0 = now();
    double t;

    do {
        for (size_t i = 0; i < NREQ; i++) {
            ok += base_decide(b, &b->reqs[i]);
        }
        n += NREQ;
        t = now() - t0;
    } while (t < secs);
    sink = ok;
    *allowed = ok * 1000 / n;
    return (double)n / t;
}

static int run_size(size_t nrules, double secs)
{
    struct bench *b = calloc(1, sizeof(*b));
    struct model_diags *diags = model_diags_new();
    struct model_policy *p = NULL;
    char *yaml = NULL;
    size_t allowed_p;
    size_t allowed_b;
    double rp;
    double rb;
    double t0;
    int rc = 1;

    if (b == NULL || diags == NULL) {
        goto out;
    }
    b->nrules = nrules;
    b->rules = calloc(nrules, sizeof(*b->rules));
    if (b->rules == NULL) {
        goto out;
    }
    for (size_t i = 0; i < nrules; i++) {
        gen_rule(&b->rules[i], i);
    }
    for (size_t i = 0; i < NREQ; i++) {
        gen_request(b, &b->reqs[i]);
    }
    yaml = policy_yaml(b);
    if (yaml == NULL) {
        fprintf(stderr, "bench_eval: cannot build the policy\n");
        goto out;
    }
    t0 = now();
    p = model_policy_load("bench.yaml", yaml, strlen(yaml), MODEL_FMT_YAML, diags);
    if (p == NULL) {
        for (size_t i = 0; i < model_diags_count(diags) && i < 5; i++) {
            fprintf(stderr, "%s\n", model_diags_line(diags, i));
        }
        goto out;
    }
    printf("%5zu rules (%zu bytes of YAML, load+compile %.1f ms)\n", nrules, strlen(yaml),
           (now() - t0) * 1e3);
    rp = measure_proviso(p, b, secs, &allowed_p);
    rb = measure_base(b, secs, &allowed_b);
    printf("      proviso model_decide  %12.0f decisions/s  (%.0f ns each, %zu.%zu%% allowed)\n",
           rp, 1e9 / rp, allowed_p / 10, allowed_p % 10);
    printf("      baseline fnmatch scan %12.0f decisions/s  (%.0f ns each, %zu.%zu%% allowed)\n",
           rb, 1e9 / rb, allowed_b / 10, allowed_b % 10);
    printf("      ratio proviso/baseline %.1fx\n", rp / rb);
    rc = 0;
out:
    model_policy_free(p);
    model_diags_free(diags);
    free(yaml);
    if (b != NULL) {
        free(b->rules);
    }
    free(b);
    return rc;
}

/* Per-operation cost of GraphQL against REST's, in the same run: one host
 * with a REST endpoint and a graphql endpoint beside it (path scopes), ten
 * rules each; REST requests and three-field operations, half of each
 * allowed. */
static const char gql_policy[] =
    "version: 1\nnetwork_policies:\n  gh:\n    binaries: [{path: /usr/bin/gh}]\n"
    "    endpoints:\n"
    "      - host: api.github.com\n        port: 443\n        path: /repos/**\n"
    "        protocol: rest\n        enforcement: enforce\n        rules:\n"
    "          - allow: {method: GET, path: /repos/*/*/issues}\n"
    "          - allow: {method: GET, path: /repos/*/*/pulls/*}\n"
    "          - allow: {method: POST, path: /repos/*/*/issues}\n"
    "          - allow: {method: GET, path: /repos/*/*/contents/**}\n"
    "          - allow: {method: GET, path: /repos/*/*/git/refs/**}\n"
    "          - allow: {method: PATCH, path: /repos/*/*/issues/*}\n"
    "          - allow: {method: GET, path: /repos/*/*/releases}\n"
    "          - allow: {method: GET, path: /repos/*/*/tags}\n"
    "          - allow: {method: GET, path: /repos/*/*/branches/*}\n"
    "          - allow: {method: GET, path: /repos/*/*/commits/*}\n"
    "        deny_rules: [{method: '*', path: /repos/*/*/rulesets}]\n"
    "      - host: api.github.com\n        port: 443\n        path: /graphql\n"
    "        protocol: graphql\n        enforcement: enforce\n        rules:\n"
    "          - allow: {operation_type: query, fields: [viewer, repository, search]}\n"
    "          - allow: {operation_type: query, fields: ['node*', rateLimit]}\n"
    "          - allow: {operation_type: mutation, operation_name: 'Issue*',"
    " fields: [createIssue, updateIssue]}\n"
    "          - allow: {operation_type: mutation, fields: [addComment]}\n"
    "          - allow: {operation_type: query, operation_name: 'Pr*', fields: [pullRequest]}\n"
    "          - allow: {operation_type: query, fields: [organization, user]}\n"
    "          - allow: {operation_type: query, fields: [licenses, codesOfConduct]}\n"
    "          - allow: {operation_type: subscription, fields: [issueAdded]}\n"
    "          - allow: {operation_type: query, fields: [topic, marketplaceListing]}\n"
    "          - allow: {operation_type: query, fields: [enterprise]}\n"
    "        deny_rules: [{operation_type: mutation, fields: [deleteRepository]}]\n";

static double measure_reqs(const struct model_policy *p, const struct model_request *reqs, size_t n,
                           double secs, size_t *allowed)
{
    struct model_decision d;
    size_t done = 0;
    size_t ok = 0;
    double t0 = now();
    double t;

    do {
        for (size_t i = 0; i < n; i++) {
            model_decide(p, &reqs[i], &d);
            ok += d.allow;
        }
        done += n;
        t = now() - t0;
    } while (t < secs);
    sink = ok;
    *allowed = ok * 1000 / done;
    return (double)done / t;
}

static int run_gql(double secs)
{
    static const char *const exe[1] = {"/usr/bin/gh"};
    static const struct {
        const char *method, *target;
    } rest[] = {
        {"GET", "/repos/o/r/issues"},     {"POST", "/repos/o/r/issues"},
        {"GET", "/repos/o/r/pulls/7"},    {"DELETE", "/repos/o/r/issues"},
        {"GET", "/repos/o/r/contents/a"}, {"PUT", "/repos/o/r/rulesets"},
        {"GET", "/repos/o/r/tags"},       {"POST", "/repos/o/r/pulls/7"},
    };
    static const char *const fields[8][3] = {
        {"repository", "search", "viewer"},
        {"repository", "search", "zzz"},
        {"nodes", "rateLimit", "node"},
        {"addComment", "createIssue", "deleteRepository"},
        {"createIssue", "updateIssue", "addComment"},
        {"organization", "user", "viewer"},
        {"enterprise", "licenses", "topic"},
        {"codesOfConduct", "licenses", "x"},
    };
    static const enum model_gql_optype types[8] = {
        MODEL_GQL_QUERY,    MODEL_GQL_QUERY, MODEL_GQL_QUERY,    MODEL_GQL_MUTATION,
        MODEL_GQL_MUTATION, MODEL_GQL_QUERY, MODEL_GQL_MUTATION, MODEL_GQL_QUERY,
    };
    static const char *const names[8] = {NULL,        NULL, NULL, "IssueFix",
                                         "IssueEdit", NULL, NULL, NULL};
    char *fl[8][3];
    struct model_diags *diags = model_diags_new();
    struct model_policy *p;
    struct model_request rr[8];
    struct model_request gr[8];
    struct model_gql_op ops[8];
    size_t ar;
    size_t ag;
    double r1;
    double r2;

    p = model_policy_load("gql.yaml", gql_policy, strlen(gql_policy), MODEL_FMT_YAML, diags);
    model_diags_free(diags);
    if (p == NULL) {
        fprintf(stderr, "bench_eval: the GraphQL policy does not load\n");
        return 1;
    }
    for (size_t i = 0; i < 8; i++) {
        memset(&rr[i], 0, sizeof(rr[i]));
        rr[i].binaries = exe;
        rr[i].nbinaries = 1;
        rr[i].host = "api.github.com";
        rr[i].host_len = 14;
        rr[i].port = 443;
        rr[i].method = rest[i].method;
        rr[i].target = rest[i].target;
        rr[i].target_len = strlen(rest[i].target);
        gr[i] = rr[i];
        gr[i].method = "POST";
        gr[i].target = "/graphql";
        gr[i].target_len = 8;
        for (size_t k = 0; k < 3; k++) {
            fl[i][k] = (char *)(uintptr_t)fields[i][k];
        }
        memset(&ops[i], 0, sizeof(ops[i]));
        ops[i].type = types[i];
        ops[i].name = (char *)(uintptr_t)names[i];
        ops[i].fields = fl[i];
        ops[i].nfields = 3;
        gr[i].gql = &ops[i];
    }
    r1 = measure_reqs(p, rr, 8, secs, &ar);
    r2 = measure_reqs(p, gr, 8, secs, &ag);
    printf("GraphQL beside REST on one host (10 rules each, 3-field operations)\n");
    printf("      REST request          %12.0f decisions/s  (%.0f ns each, %zu.%zu%% allowed)\n",
           r1, 1e9 / r1, ar / 10, ar % 10);
    printf("      GraphQL operation     %12.0f decisions/s  (%.0f ns each, %zu.%zu%% allowed)\n",
           r2, 1e9 / r2, ag / 10, ag % 10);
    printf("      ratio GraphQL/REST cost %.2fx\n", r1 / r2);
    model_policy_free(p);
    return 0;
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {100, 1000};
    double secs = 1.0;
    int rc = 0;

    if (argc > 1) {
        uint64_t v;
        if (!pv_ok(pv_parse_u64(argv[1], strlen(argv[1]), 60, &v)) || v == 0) {
            fprintf(stderr, "usage: bench_eval [SECONDS]\n");
            return 2;
        }
        secs = (double)v;
    }
    printf("bench_eval: %d requests per pass, %.0f CPU-second(s) per measurement, one thread\n",
           NREQ, secs);
    for (size_t i = 0; i < PV_ARRAY_LEN(sizes); i++) {
        rng_state = 0x9e3779b97f4a7c15u + sizes[i];
        rc |= run_size(sizes[i], secs);
    }
    rc |= run_gql(secs);
    return rc;
}
