/* SPDX-License-Identifier: Apache-2.0 */
/* bench_policy.h - one rule of the benchmark-shaped policies, written once
 * for tests/bench/bench_prove.c (the prover's timings) and
 * tests/check_prover_property.c (its shortcuts held to the full-SMT path on
 * the same shapes): a host of one of four kinds (one-label and any-depth
 * wildcards, exact names), port 8443 for every eleventh rule, REST rules on
 * GET /v1/itemsK/(anything) with, by variant, a POST upload rule, a deny rule, a
 * second endpoint with a private allowed_ips range, and a second binary.
 * Header only (static functions): each program keeps its own buffer type.
 */
#ifndef BENCH_POLICY_H
#define BENCH_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct bench_policy_shape {
    const char *const *bins; /* binary patterns, taken round-robin */
    size_t nbins;
    unsigned items; /* path families: /v1/items(i % items) */
};

/* Rule i's host into 'buf'. */
static void bench_policy_host(unsigned i, char *buf, size_t n)
{
    switch (i % 7) {
    case 0:
        (void)snprintf(buf, n, "*.svc%u.example.com", i);
        break;
    case 1:
        (void)snprintf(buf, n, "api%u.example.net", i);
        break;
    case 2:
        (void)snprintf(buf, n, "**.cdn%u.example.org", i);
        break;
    default:
        (void)snprintf(buf, n, "svc%u.internal.example.com", i);
        break;
    }
}

/* Append snprintf's output at 'out + *len' (capacity 'cap'); a text that
 * does not fit leaves *len past cap, which bench_policy_rule reports. */
#define BP_ADD(...)                                                                              \
    do {                                                                                         \
        int bp_n_ =                                                                              \
            snprintf(out + (*len < cap ? *len : cap), *len < cap ? cap - *len : 0, __VA_ARGS__); \
        *len += bp_n_ > 0 ? (size_t)bp_n_ : 0;                                                   \
    } while (0)

/* Rule 'key', the i-th, of variant 'variant', appended to 'out' ('cap'
 * bytes, '*len' used). False when it did not fit. */
static bool bench_policy_rule(const struct bench_policy_shape *s, char *out, size_t cap,
                              size_t *len, const char *key, unsigned i, unsigned variant)
{
    char host[128];

    bench_policy_host(i, host, sizeof(host));
    BP_ADD("  %s:\n    name: %s\n    endpoints:\n", key, key);
    BP_ADD("      - host: \"%s\"\n        port: %u\n", host, i % 11 == 0 ? 8443u : 443u);
    if (variant % 3 != 0) {
        BP_ADD("        protocol: rest\n        enforcement: enforce\n        rules:\n");
        BP_ADD("          - allow: {method: GET, path: \"/v1/items%u/**\"}\n", i % s->items);
        if (variant % 3 == 2) {
            BP_ADD("          - allow: {method: POST, path: \"/v1/*/upload\"}\n");
        }
        if (variant % 5 == 0) {
            BP_ADD("        deny_rules:\n          - {method: GET, path: \"/v1/items%u/secret\"}\n",
                   i % s->items);
        }
    }
    if (variant % 13 == 0) {
        BP_ADD("      - host: \"svc%u.corp.example.com\"\n        port: 443\n"
               "        allowed_ips: [\"10.%u.0.0/16\"]\n",
               i, i % 250);
    }
    BP_ADD("    binaries:\n      - path: \"%s\"\n", s->bins[i % s->nbins]);
    if (variant % 4 == 0) {
        BP_ADD("      - path: \"%s\"\n", s->bins[(i + 3) % s->nbins]);
    }
    return *len < cap;
}

#undef BP_ADD

#endif
