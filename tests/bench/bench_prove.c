/* SPDX-License-Identifier: Apache-2.0 */
/* bench_prove.c - prover latency on realistic policies of 100, 1,000, 10,000 rules
 *
 *   ./tests/bench/bench_prove [iterations-at-100-rules] [timeout-ms] [only-this-many-rules
 *                             [narrow|wide|whole]]
 *
 * Generates a baseline policy (hosts with wildcards, several binaries with
 * globs, REST rules with path globs, credentials on some hosts) and, per
 * iteration, a one-rule proposal (a credentialed write, a new public host,
 * a widened path, a private range, ...), merged into the baseline as the
 * candidate; then the same with wide proposals that overlap hundreds of
 * existing rules (a "**.example.com" host, a "/usr/bin/" "*" binary glob, a
 * "/" "**" path on "**.internal.example.com"), printed as "wide". Times
 * prover_run in-process (one session, reused) and reports
 * p50/p99, the time to parse and validate the two policies, the ratio of
 * the two, and the number of UNKNOWN answers. Prints one line per size.
 * Whole-policy changes are proved twice per iteration, by the prover and by
 * a session that answers every question with its own solver check
 * (prover_session_full_smt, the baseline): both p50s, their ratio, and
 * whether the two gave the same verdict and paths; and a third time by the
 * first round's prover (the shortcuts without concrete requests,
 * prover_session_no_concrete).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/pv_dynbuf.h"
#include "model/model.h"
#include "prover/prover.h"
#include "prover/prover_int.h"
#include "tests/bench/bench_policy.h"

static const char *const BINS[] = {
    "/usr/bin/curl", "/usr/bin/git",          "/usr/local/bin/node", "/usr/bin/python3*",
    "/opt/tools/**", "/usr/local/bin/claude", "/usr/bin/gh",         "/sandbox/.venv/bin/*",
};
#define NBINS (sizeof(BINS) / sizeof(BINS[0]))

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static double cpu_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static uint64_t rs = 88172645463325252ull;

static unsigned rn(unsigned n)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (unsigned)(rs % n);
}

static void add(struct pv_dynbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct pv_dynbuf *b, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    if (!pv_ok(pv_dynbuf_vprintf(b, fmt, ap))) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    va_end(ap);
}

/* One rule of the shape tests/bench/bench_policy.h writes (50 path
 * families, the eight binaries above). */
static void rule(struct pv_dynbuf *b, const char *key, unsigned i, unsigned variant)
{
    static const struct bench_policy_shape shape = {BINS, NBINS, 50};
    char text[2048];
    size_t len = 0;

    if (!bench_policy_rule(&shape, text, sizeof(text), &len, key, i, variant)) {
        fprintf(stderr, "bench: rule %u does not fit\n", i);
        exit(1);
    }
    add(b, "%s", text);
}

/* Added to each rule's variant: a whole-policy restructure shifts it. */
static unsigned vshift;

static char *policy(unsigned n, int extra, unsigned kind)
{
    struct pv_dynbuf b;

    pv_dynbuf_init(&b, 256u << 20);
    add(&b, "version: 1\nnetwork_policies:\n");
    for (unsigned i = 0; i < n; i++) {
        char key[32];

        (void)snprintf(key, sizeof(key), "rule_%05u", i);
        rule(&b, key, i, i + vshift);
    }
    if (extra >= 0) {
        unsigned t = (unsigned)extra;
        char host[128];

        bench_policy_host(t, host, sizeof(host));
        add(&b, "  proposal_%u:\n    name: proposal_%u\n    endpoints:\n", t, t);
        switch (kind % 8) {
        case 0: /* a write on an existing (maybe credentialed) host */
            add(&b,
                "      - host: \"%s\"\n        port: 443\n        protocol: rest\n"
                "        enforcement: enforce\n        rules:\n"
                "          - allow: {method: PUT, path: \"/v1/items%u/*\"}\n",
                host, t % 50);
            break;
        case 1: /* a new public host, L4 */
            add(&b, "      - host: \"new%u.example.io\"\n        port: 443\n", t);
            break;
        case 2: /* widen a path on an existing host */
            add(&b,
                "      - host: \"%s\"\n        port: 443\n        protocol: rest\n"
                "        enforcement: enforce\n        rules:\n"
                "          - allow: {method: GET, path: \"/v1/**\"}\n",
                host);
            break;
        case 3: /* a private range */
            add(&b,
                "      - host: \"db%u.corp.example.com\"\n        port: 5432\n"
                "        allowed_ips: [\"10.99.0.0/16\"]\n",
                t);
            break;
        case 4: /* an existing host for another binary */
            add(&b, "      - host: \"%s\"\n        port: 443\n", host);
            break;
        /* Wide proposals: each overlaps hundreds of existing rules. */
        case 5: /* every name under example.com */
            add(&b, "      - host: \"**.example.com\"\n        port: 443\n");
            break;
        case 6: /* every /usr/bin binary on an existing host (below) */
            add(&b, "      - host: \"%s\"\n        port: 443\n", host);
            break;
        default: /* every path on every internal name */
            add(&b, "      - host: \"**.internal.example.com\"\n        port: 443\n"
                    "        protocol: rest\n        enforcement: enforce\n        rules:\n"
                    "          - allow: {method: GET, path: \"/**\"}\n");
            break;
        }
        if (kind % 8 == 6) {
            add(&b, "    binaries:\n      - path: \"/usr/bin/*\"\n");
            return pv_dynbuf_take(&b, NULL);
        }
        add(&b, "    binaries:\n      - path: \"%s\"\n", BINS[(t + kind) % NBINS]);
    }
    return pv_dynbuf_take(&b, NULL);
}

static char *creds(unsigned n)
{
    struct pv_dynbuf b;

    pv_dynbuf_init(&b, 64u << 20);
    add(&b,
        "credentials:\n  - name: gh\n    type: github\n    target_hosts: [\"api.github.com\"]\n");
    add(&b,
        "  - name: internal\n    type: token\n    target_hosts: [\"**.internal.example.com\"]\n");
    add(&b, "  - name: svc\n    type: token\n    target_hosts:\n");
    for (unsigned i = 0; i < n; i += 10) {
        char host[128];

        bench_policy_host(i, host, sizeof(host));
        if (host[0] == '*') {
            (void)snprintf(host, sizeof(host), "x.svc%u.example.com", i);
        }
        add(&b, "      - \"%s\"\n", host);
    }
    return pv_dynbuf_take(&b, NULL);
}

static struct model_policy *load(const char *name, const char *text)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p = model_policy_load(name, text, strlen(text), MODEL_FMT_YAML, d);

    if (p == NULL) {
        fprintf(stderr, "bench: %s: %s\n", name,
                model_diags_count(d) ? model_diags_line(d, 0) : "load failed");
        exit(1);
    }
    model_diags_free(d);
    return p;
}

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static bool same_paths(const struct prover_result *a, const struct prover_result *b)
{
    if (a->verdict != b->verdict || a->npaths != b->npaths) {
        return false;
    }
    for (size_t i = 0; i < a->npaths; i++) {
        const struct prover_path *x = &a->paths[i];
        const struct prover_path *y = &b->paths[i];

        if (x->cat != y->cat || x->port != y->port || strcmp(x->binary, y->binary) != 0 ||
            strcmp(x->host, y->host) != 0 || strcmp(x->rule, y->rule) != 0 ||
            strcmp(x->method != NULL ? x->method : "", y->method != NULL ? y->method : "") != 0) {
            return false;
        }
    }
    return true;
}

/* The baseline: 'in' proved by the full-SMT session; '*ms' its wall time. */
static struct prover_result *full_run(struct prover_session *full, const struct prover_input *in,
                                      double *ms)
{
    double t0 = now_ms();
    struct prover_result *f = prover_run(full, in);

    *ms = now_ms() - t0;
    if (f == NULL) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    return f;
}

/* 'wide': the proposals are the wide kinds 5-7 (a "**." host, a /usr/bin
 * glob binary, a "/" "**" path), else the one-rule kinds 0-4. */
static void run(struct prover_session *s, struct prover_session *full,
                const struct model_registry *reg, unsigned n, unsigned iters, unsigned timeout_ms,
                bool wide)
{
    char *bt = policy(n, -1, 0);
    char *ct = creds(n);
    struct model_diags *d = model_diags_new();
    struct model_credset *cs = model_credset_load("creds", ct, strlen(ct), d);
    struct model_policy *base;
    double *prove = calloc(iters, sizeof(double));
    double *parse = calloc(iters, sizeof(double));
    double *cpu = calloc(iters, sizeof(double));
    double *fullms = calloc(iters, sizeof(double));
    unsigned unknown = 0, unknown_full = 0;
    bool same = true;
    unsigned findings = 0;
    size_t queries = 0;
    double su = 0, se = 0, ss = 0;
    size_t slice = 0;

    if (cs == NULL || prove == NULL || parse == NULL || cpu == NULL || fullms == NULL) {
        fprintf(stderr, "bench: setup failed\n");
        exit(1);
    }
    base = load("baseline", bt);
    for (unsigned it = 0; it < iters; it++) {
        unsigned target = rn(n);
        char *cand_t = policy(n, (int)target, wide ? 5 + it % 3 : it % 5);
        double t0 = now_ms();
        struct model_policy *b2 = load("baseline", bt);
        struct model_policy *c = load("candidate", cand_t);
        double t1 = now_ms();
        struct prover_input in;
        struct prover_result *r;
        struct prover_result *baseline = NULL;

        parse[it] = t1 - t0;
        memset(&in, 0, sizeof(in));
        in.baseline = base;
        in.candidate = c;
        in.creds = cs;
        in.reg = reg;
        in.mode = PROVER_DELTA;
        in.timeout_ms = timeout_ms;
        if (it % 2 == 1) {
            /* every other iteration the baseline goes first: the second
             * proof of a freshly loaded pair finds warm caches */
            baseline = full_run(full, &in, &fullms[it]);
        }
        t0 = now_ms();
        t1 = cpu_ms();
        r = prover_run(s, &in);
        prove[it] = now_ms() - t0;
        cpu[it] = cpu_ms() - t1;
        if (it % 2 == 0) {
            baseline = full_run(full, &in, &fullms[it]);
        }
        if (r == NULL) {
            fprintf(stderr, "bench: out of memory\n");
            exit(1);
        }
        unknown += r->verdict == PROVER_VERDICT_UNKNOWN;
        findings += r->verdict == PROVER_VERDICT_FINDINGS;
        queries += r->nqueries;
        slice += r->nunits;
        su += r->ms_units;
        se += r->ms_encode;
        ss += r->ms_solve;
        if (r->verdict == PROVER_VERDICT_UNKNOWN) {
            fprintf(stderr, "bench: unknown (%s) at %u rules, iteration %u\n",
                    prover_unknown_text(r->unknown), n, it);
        }
        unknown_full += baseline->verdict == PROVER_VERDICT_UNKNOWN;
        same = same && (r->verdict == PROVER_VERDICT_UNKNOWN ||
                        baseline->verdict == PROVER_VERDICT_UNKNOWN || same_paths(r, baseline));
        prover_result_free(baseline);
        prover_result_free(r);
        model_policy_free(b2);
        model_policy_free(c);
        free(cand_t);
    }
    qsort(prove, iters, sizeof(double), dcmp);
    qsort(parse, iters, sizeof(double), dcmp);
    qsort(cpu, iters, sizeof(double), dcmp);
    qsort(fullms, iters, sizeof(double), dcmp);
    {
        double p50 = prove[iters / 2];
        double p99 = prove[(iters * 99) / 100 < iters ? (iters * 99) / 100 : iters - 1];
        double q50 = parse[iters / 2];

        printf("%s%6u rules  %4u runs  prove p50 %8.2f ms  p99 %8.2f ms  max %8.2f ms  "
               "parse+validate(2) p50 %8.2f ms  prove/parse %5.2fx  unknown %u  findings %u  "
               "queries/run %.1f\n",
               wide ? "wide " : "", n, iters, p50, p99, prove[iters - 1], q50,
               q50 > 0 ? p50 / q50 : 0.0, unknown, findings, (double)queries / iters);
        printf("              baseline (full SMT) p50 %8.2f ms  unknown %u  ratio baseline/now "
               "%5.2fx  same verdict and paths: %s\n",
               fullms[iters / 2], unknown_full, p50 > 0 ? fullms[iters / 2] / p50 : 0.0,
               same ? "yes" : "NO");
        printf("              cpu time: prove p50 %.2f ms p99 %.2f ms\n", cpu[iters / 2],
               cpu[(iters * 99) / 100 < iters ? (iters * 99) / 100 : iters - 1]);
        printf("              mean phases: units+delta+slice %.2f ms, atoms+encode %.2f ms, "
               "solve+witness %.2f ms; slice %.1f units\n",
               su / iters, se / iters, ss / iters, (double)slice / iters);
    }
    fflush(stdout);
    free(prove);
    free(parse);
    free(cpu);
    free(fullms);
    model_policy_free(base);
    model_credset_free(cs);
    model_diags_free(d);
    free(bt);
    free(ct);
}

/* Whole-policy changes: a baseline of 'nb' rules against a candidate of
 * 'nc' rules whose variants are shifted by 'shift' (0: the candidate keeps
 * the baseline's rules and adds the rest), one proof per iteration; the
 * candidate's parse+validate time is the baseline figure. */
/* The first round's prover: the shortcuts, no concrete requests
 * (prover_session_no_concrete); whole-policy cases only. */
static struct prover_session *first_round;

static void run_whole(struct prover_session *s, struct prover_session *full,
                      const struct model_registry *reg, unsigned nb, unsigned nc, unsigned shift,
                      bool with_creds, unsigned iters, unsigned timeout_ms)
{
    char *bt = policy(nb, -1, 0);
    char *ct;
    char *crt = creds(nb > nc ? nb : nc);
    struct model_diags *d = model_diags_new();
    struct model_credset *cs = model_credset_load("creds", crt, strlen(crt), d);
    struct model_policy *base = load("baseline", bt);
    double *prove = calloc(iters, sizeof(double));
    double *basems = calloc(iters, sizeof(double));
    double *cpun = calloc(iters, sizeof(double));
    double *cpub = calloc(iters, sizeof(double));
    double *firstms = calloc(iters, sizeof(double));
    size_t qfirst = 0;
    bool same_first = true;
    double parse = 0;
    unsigned unknown = 0, unknown_full = 0;
    size_t paths = 0, parts = 0, delta = 0, q = 0, qfull = 0, nconc = 0;
    bool same = true;
    double ph[3] = {0, 0, 0};

    vshift = shift;
    ct = policy(nc, -1, 0);
    vshift = 0;
    if (cs == NULL || prove == NULL || basems == NULL || cpun == NULL || cpub == NULL ||
        firstms == NULL) {
        fprintf(stderr, "bench: setup failed\n");
        exit(1);
    }
    for (unsigned it = 0; it < iters; it++) {
        double t0 = now_ms();
        struct model_policy *c = load("candidate", ct);
        struct prover_input in;
        struct prover_result *r;
        struct prover_result *f;
        double c0;

        parse += now_ms() - t0;
        memset(&in, 0, sizeof(in));
        in.baseline = base;
        in.candidate = c;
        in.creds = with_creds ? cs : NULL;
        in.reg = reg;
        in.mode = PROVER_DELTA;
        in.timeout_ms = timeout_ms;
        t0 = now_ms();
        c0 = cpu_ms();
        nconc = s->nconcrete;
        r = prover_run(s, &in);
        nconc = s->nconcrete - nconc;
        prove[it] = now_ms() - t0;
        cpun[it] = cpu_ms() - c0;
        if (r == NULL) {
            fprintf(stderr, "bench: out of memory\n");
            exit(1);
        }
        unknown += r->verdict == PROVER_VERDICT_UNKNOWN;
        if (r->verdict == PROVER_VERDICT_UNKNOWN) {
            fprintf(stderr, "bench: whole %u -> %u: unknown (%s)\n", nb, nc,
                    prover_unknown_text(r->unknown));
        }
        paths = r->npaths;
        parts = r->ncomponents;
        delta = r->ndelta;
        q = r->nqueries;
        ph[0] += r->ms_units;
        ph[1] += r->ms_encode;
        ph[2] += r->ms_solve;
        /* the baseline: every question its own check */
        t0 = now_ms();
        c0 = cpu_ms();
        f = prover_run(full, &in);
        basems[it] = now_ms() - t0;
        cpub[it] = cpu_ms() - c0;
        if (f == NULL) {
            fprintf(stderr, "bench: out of memory\n");
            exit(1);
        }
        unknown_full += f->verdict == PROVER_VERDICT_UNKNOWN;
        same = same && same_paths(r, f);
        qfull = f->nqueries;
        if (first_round != NULL) {
            struct prover_result *g;

            t0 = now_ms();
            g = prover_run(first_round, &in);
            firstms[it] = now_ms() - t0;
            if (g == NULL) {
                fprintf(stderr, "bench: out of memory\n");
                exit(1);
            }
            same_first = same_first && same_paths(g, f);
            qfirst = g->nqueries;
            prover_result_free(g);
        }
        prover_result_free(f);
        prover_result_free(r);
        model_policy_free(c);
    }
    qsort(prove, iters, sizeof(double), dcmp);
    qsort(basems, iters, sizeof(double), dcmp);
    qsort(cpun, iters, sizeof(double), dcmp);
    qsort(cpub, iters, sizeof(double), dcmp);
    qsort(firstms, iters, sizeof(double), dcmp);
    printf("whole %5u -> %5u rules (shift %u, %s)  %u runs  prove p50 %8.2f ms  max %8.2f ms  "
           "parse+validate(C) mean %7.2f ms  prove/parse %5.2fx  unknown %u  delta units %zu  "
           "parts %zu  paths %zu\n",
           nb, nc, shift, with_creds ? "credentials" : "no credentials", iters, prove[iters / 2],
           prove[iters - 1], parse / iters, parse > 0 ? prove[iters / 2] / (parse / iters) : 0.0,
           unknown, delta, parts, paths);
    printf("              baseline (full SMT) p50 %8.2f ms  unknown %u  ratio baseline/now %5.2fx  "
           "solver checks %zu -> %zu  same verdict and paths: %s\n",
           basems[iters / 2], unknown_full,
           prove[iters / 2] > 0 ? basems[iters / 2] / prove[iters / 2] : 0.0, qfull, q,
           same ? "yes" : "NO");
    if (first_round != NULL) {
        printf("              first round (shortcuts, no concrete requests) p50 %8.2f ms  "
               "solver checks %zu  same verdict and paths as full SMT: %s\n",
               firstms[iters / 2], qfirst, same_first ? "yes" : "NO");
    }
    printf("              now, mean phases: units+delta+slice %.1f ms, atoms+encode %.1f ms, "
           "solve+witness %.1f ms; paths from concrete requests %zu\n",
           ph[0] / iters, ph[1] / iters, ph[2] / iters, nconc);
    printf("              cpu time p50: now %8.2f ms  baseline %8.2f ms  ratio %5.2fx\n",
           cpun[iters / 2], cpub[iters / 2],
           cpun[iters / 2] > 0 ? cpub[iters / 2] / cpun[iters / 2] : 0.0);
    fflush(stdout);
    free(prove);
    free(basems);
    free(cpun);
    free(cpub);
    free(firstms);
    model_policy_free(base);
    model_credset_free(cs);
    model_diags_free(d);
    free(bt);
    free(ct);
    free(crt);
}

int main(int argc, char **argv)
{
    unsigned iters = 200;
    unsigned timeout_ms = 2000;
    struct model_diags *d = model_diags_new();
    struct model_registry *reg = model_registry_embedded(d);
    struct prover_session *s = prover_session_new();
    struct prover_session *full = prover_session_new();
    uint64_t v;

    if (argc > 1 && pv_ok(pv_parse_u64(argv[1], strlen(argv[1]), 1000000, &v)) && v > 0) {
        iters = (unsigned)v;
    }
    if (argc > 2 && pv_ok(pv_parse_u64(argv[2], strlen(argv[2]), 3600000, &v)) && v > 0) {
        timeout_ms = (unsigned)v;
    }
    if (reg == NULL || s == NULL || full == NULL) {
        fprintf(stderr, "bench: setup failed\n");
        return 1;
    }
    prover_session_full_smt(full, true);
    first_round = prover_session_new();
    prover_session_no_concrete(first_round, true);
    printf("bench_prove: one-rule proposals, timeout %u ms\n", timeout_ms);
    if (argc > 3 && pv_ok(pv_parse_u64(argv[3], strlen(argv[3]), 1000000, &v)) && v > 0) {
        /* one size only: bench_prove ITERS TIMEOUT RULES [narrow|wide] */
        const char *only = argc > 4 ? argv[4] : "";

        if (strcmp(only, "whole") == 0) {
            /* bench_prove ITERS TIMEOUT RULES whole: RULES/5 against RULES
             * (new rules), then RULES against RULES shifted (every rule) */
            for (int wc = 0; wc < 2; wc++) {
                run_whole(s, full, reg, (unsigned)v / 5, (unsigned)v, 0, wc, iters, timeout_ms);
                run_whole(s, full, reg, (unsigned)v, (unsigned)v, 1, wc, iters, timeout_ms);
            }
        } else if (strcmp(only, "wide") != 0) {
            run(s, full, reg, (unsigned)v, iters, timeout_ms, false);
        }
        if (strcmp(only, "narrow") != 0 && strcmp(only, "whole") != 0) {
            run(s, full, reg, (unsigned)v, iters, timeout_ms, true);
        }
    } else {
        run(s, full, reg, 100, iters, timeout_ms, false);
        run(s, full, reg, 1000, iters / 4 > 10 ? iters / 4 : 10, timeout_ms, false);
        run(s, full, reg, 10000, iters / 20 > 5 ? iters / 20 : 5, timeout_ms, false);
        run(s, full, reg, 100, iters, timeout_ms, true);
        run(s, full, reg, 1000, iters / 4 > 10 ? iters / 4 : 10, timeout_ms, true);
        run(s, full, reg, 10000, iters / 20 > 5 ? iters / 20 : 5, timeout_ms, true);
        for (int wc = 0; wc < 2; wc++) {
            run_whole(s, full, reg, 2000, 12000, 0, wc, 3, timeout_ms > 60000 ? timeout_ms : 60000);
            run_whole(s, full, reg, 10000, 10000, 1, wc, 3,
                      timeout_ms > 60000 ? timeout_ms : 60000);
        }
    }
    prover_session_free(s);
    prover_session_free(full);
    prover_session_free(first_round);
    model_registry_free(reg);
    model_diags_free(d);
    prover_finalize();
    return 0;
}
