/* SPDX-License-Identifier: Apache-2.0 */
/* server_metrics.c - request, latency, verdict and timeout counters
 *
 * Fixed-size tables of relaxed atomics, indexed by route, status class and
 * verdict: recording is a few uncontended increments and never allocates, so
 * it is safe on every thread and on the hot path. Rendering produces the
 * Prometheus text exposition format (version 0.0.4).
 */
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "common/pv_dynbuf.h"
#include "server/server.h"

static const char *const route_paths[SERVER_R__COUNT] = {
    [SERVER_R_HEALTHZ] = "/healthz",      [SERVER_R_METRICS] = "/metrics",
    [SERVER_R_OPENAPI] = "/openapi.json", [SERVER_R_TOOLS] = "/tools.json",
    [SERVER_R_PROVE] = "/v1/prove",       [SERVER_R_CHECK] = "/v1/check",
    [SERVER_R_DISCOVER] = "/v1/discover", [SERVER_R_UNKNOWN] = "unknown",
};

static const char *const verdict_names[SERVER_V__COUNT] = {
    [SERVER_V_NONE] = "none",       [SERVER_V_EMPTY] = "empty",   [SERVER_V_FINDINGS] = "findings",
    [SERVER_V_UNKNOWN] = "unknown", [SERVER_V_WITHIN] = "within", [SERVER_V_EXCEEDS] = "exceeds",
    [SERVER_V_INVALID] = "invalid",
};

static const unsigned statuses[] = {200, 400, 401, 404, 405, 413, 415, 500, 503};
#define NSTATUS (PV_ARRAY_LEN(statuses) + 1) /* last slot: any other status */

/* Latency bucket upper bounds in microseconds (rendered as seconds). */
static const uint64_t bucket_us[] = {250,   500,    1000,   2500,   5000,    10000,   25000,
                                     50000, 100000, 250000, 500000, 1000000, 2500000, 10000000};
#define NBUCKET PV_ARRAY_LEN(bucket_us)

static struct {
    atomic_ullong requests[SERVER_R__COUNT][NSTATUS];
    atomic_ullong buckets[SERVER_R__COUNT][NBUCKET + 1];
    atomic_ullong sum_ns[SERVER_R__COUNT];
    atomic_ullong verdicts[SERVER_V__COUNT];
    atomic_ullong solver_timeouts;
    atomic_ullong rejected;
    atomic_ullong cache[2]; /* misses, hits */
} m;

const char *server_route_path(enum server_route_id r)
{
    if ((unsigned)r >= SERVER_R__COUNT) {
        return "unknown";
    }
    return route_paths[r];
}

const char *server_verdict_name(enum server_verdict v)
{
    if ((unsigned)v >= SERVER_V__COUNT) {
        return "none";
    }
    return verdict_names[v];
}

enum server_verdict server_verdict_parse(const char *s)
{
    if (s == NULL) {
        return SERVER_V_NONE;
    }
    for (size_t i = 1; i < SERVER_V__COUNT; i++) {
        if (strcmp(s, verdict_names[i]) == 0) {
            return (enum server_verdict)i;
        }
    }
    return SERVER_V_NONE;
}

static size_t status_slot(unsigned status)
{
    for (size_t i = 0; i < PV_ARRAY_LEN(statuses); i++) {
        if (statuses[i] == status) {
            return i;
        }
    }
    return NSTATUS - 1;
}

void server_metrics_request(enum server_route_id route, unsigned status, uint64_t ns)
{
    uint64_t us = ns / 1000;
    size_t b = 0;

    if ((unsigned)route >= SERVER_R__COUNT) {
        route = SERVER_R_UNKNOWN;
    }
    atomic_fetch_add_explicit(&m.requests[route][status_slot(status)], 1, memory_order_relaxed);
    while (b < NBUCKET && us > bucket_us[b]) {
        b++;
    }
    atomic_fetch_add_explicit(&m.buckets[route][b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m.sum_ns[route], ns, memory_order_relaxed);
}

void server_metrics_verdict(enum server_verdict v)
{
    if ((unsigned)v < SERVER_V__COUNT && v != SERVER_V_NONE) {
        atomic_fetch_add_explicit(&m.verdicts[v], 1, memory_order_relaxed);
    }
}

void server_metrics_solver_timeout(void)
{
    atomic_fetch_add_explicit(&m.solver_timeouts, 1, memory_order_relaxed);
}

void server_metrics_rejected(void)
{
    atomic_fetch_add_explicit(&m.rejected, 1, memory_order_relaxed);
}

void server_metrics_cache(bool hit)
{
    atomic_fetch_add_explicit(&m.cache[hit ? 1 : 0], 1, memory_order_relaxed);
}

static unsigned long long load(atomic_ullong *a)
{
    return atomic_load_explicit(a, memory_order_relaxed);
}

static pv_result render(struct pv_dynbuf *b, unsigned inflight, unsigned workers)
{
    PV_GUARD(pv_dynbuf_addstr(b, "# HELP proviso_prover_requests_total HTTP requests by route "
                                 "and status.\n# TYPE proviso_prover_requests_total counter\n"));
    for (size_t r = 0; r < SERVER_R__COUNT; r++) {
        for (size_t s = 0; s < NSTATUS; s++) {
            unsigned long long n = load(&m.requests[r][s]);
            if (n == 0) {
                continue;
            }
            if (s < PV_ARRAY_LEN(statuses)) {
                PV_GUARD(pv_dynbuf_printf(
                    b, "proviso_prover_requests_total{route=\"%s\",status=\"%u\"} %llu\n",
                    route_paths[r], statuses[s], n));
            } else {
                PV_GUARD(pv_dynbuf_printf(
                    b, "proviso_prover_requests_total{route=\"%s\",status=\"other\"} %llu\n",
                    route_paths[r], n));
            }
        }
    }
    PV_GUARD(pv_dynbuf_addstr(
        b, "# HELP proviso_prover_request_duration_seconds Request latency, first byte of the "
           "request to the reply.\n# TYPE proviso_prover_request_duration_seconds histogram\n"));
    for (size_t r = 0; r < SERVER_R__COUNT; r++) {
        unsigned long long cum = 0;
        for (size_t i = 0; i <= NBUCKET; i++) {
            cum += load(&m.buckets[r][i]);
            if (i < NBUCKET) {
                PV_GUARD(pv_dynbuf_printf(b,
                                          "proviso_prover_request_duration_seconds_bucket{route="
                                          "\"%s\",le=\"%llu.%06llu\"} %llu\n",
                                          route_paths[r],
                                          (unsigned long long)(bucket_us[i] / 1000000),
                                          (unsigned long long)(bucket_us[i] % 1000000), cum));
            } else {
                PV_GUARD(pv_dynbuf_printf(b,
                                          "proviso_prover_request_duration_seconds_bucket{route="
                                          "\"%s\",le=\"+Inf\"} %llu\n",
                                          route_paths[r], cum));
            }
        }
        {
            unsigned long long ns = load(&m.sum_ns[r]);
            PV_GUARD(pv_dynbuf_printf(
                b, "proviso_prover_request_duration_seconds_sum{route=\"%s\"} %llu.%09llu\n",
                route_paths[r], ns / 1000000000ull, ns % 1000000000ull));
            PV_GUARD(pv_dynbuf_printf(
                b, "proviso_prover_request_duration_seconds_count{route=\"%s\"} %llu\n",
                route_paths[r], cum));
        }
    }
    PV_GUARD(pv_dynbuf_addstr(b, "# HELP proviso_prover_verdicts_total Verdicts returned.\n"
                                 "# TYPE proviso_prover_verdicts_total counter\n"));
    for (size_t v = 1; v < SERVER_V__COUNT; v++) {
        PV_GUARD(pv_dynbuf_printf(b, "proviso_prover_verdicts_total{verdict=\"%s\"} %llu\n",
                                  verdict_names[v], load(&m.verdicts[v])));
    }
    PV_GUARD(pv_dynbuf_printf(
        b,
        "# HELP proviso_prover_solver_timeouts_total Requests whose solver hit its timeout.\n"
        "# TYPE proviso_prover_solver_timeouts_total counter\n"
        "proviso_prover_solver_timeouts_total %llu\n"
        "# HELP proviso_prover_rejected_total Requests refused with 503 (over capacity or "
        "draining).\n"
        "# TYPE proviso_prover_rejected_total counter\n"
        "proviso_prover_rejected_total %llu\n"
        "# HELP proviso_prover_policy_cache_total Compiled baseline/boundary cache lookups.\n"
        "# TYPE proviso_prover_policy_cache_total counter\n"
        "proviso_prover_policy_cache_total{result=\"hit\"} %llu\n"
        "proviso_prover_policy_cache_total{result=\"miss\"} %llu\n"
        "# HELP proviso_prover_inflight Work requests admitted and not yet answered.\n"
        "# TYPE proviso_prover_inflight gauge\n"
        "proviso_prover_inflight %u\n"
        "# HELP proviso_prover_workers Prover worker threads.\n"
        "# TYPE proviso_prover_workers gauge\n"
        "proviso_prover_workers %u\n",
        load(&m.solver_timeouts), load(&m.rejected), load(&m.cache[1]), load(&m.cache[0]), inflight,
        workers));
    return PV_RESULT_OK;
}

char *server_metrics_render(unsigned inflight, unsigned workers, size_t *len)
{
    struct pv_dynbuf b;

    pv_dynbuf_init(&b, 4u * 1024u * 1024u);
    if (!pv_ok(render(&b, inflight, workers))) {
        pv_dynbuf_free(&b);
        return NULL;
    }
    return pv_dynbuf_take(&b, len);
}
