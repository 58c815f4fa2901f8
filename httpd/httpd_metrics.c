/* SPDX-License-Identifier: Apache-2.0 */
/* httpd_metrics.c - request counters for any httpd service, Prometheus text
 *
 * One table of relaxed atomics per service, sized from its route table:
 * requests by route and exact status, a latency histogram by route and the
 * 503s refused for capacity. Recording never allocates or locks, so the
 * 'completed' and 'rejected' callbacks of struct httpd_service can call it
 * on any thread. Routes are labelled with their method and table path
 * (never the raw URL); a route id that is not in the table counts as
 * "unknown". Rendering is the Prometheus text exposition format 0.0.4.
 */
#include "config.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "common/pv_dynbuf.h"
#include "httpd/httpd.h"

#define STATUS_MIN 100u
#define NSTATUS 500u /* 100..599; anything else is not recorded */

/* Latency bucket upper bounds in microseconds (rendered as seconds). */
static const uint64_t bucket_us[] = {250,   500,    1000,   2500,   5000,    10000,   25000,
                                     50000, 100000, 250000, 500000, 1000000, 2500000, 10000000};
#define NBUCKET PV_ARRAY_LEN(bucket_us)

struct slot {
    atomic_ullong status[NSTATUS];
    atomic_ullong buckets[NBUCKET + 1];
    atomic_ullong sum_ns;
};

struct httpd_metrics {
    const char *prefix;
    const struct httpd_route *routes;
    size_t nroutes;
    atomic_ullong rejected;
    struct slot *slots; /* nroutes + 1: the last one is "unknown" */
};

struct httpd_metrics *httpd_metrics_new(const char *prefix, const struct httpd_route *routes,
                                        size_t nroutes)
{
    struct httpd_metrics *m = pv_calloc(1, sizeof(*m));

    if (m == NULL) {
        return NULL;
    }
    m->slots = pv_calloc(nroutes + 1, sizeof(*m->slots));
    if (m->slots == NULL) {
        free(m);
        return NULL;
    }
    m->prefix = prefix;
    m->routes = routes;
    m->nroutes = nroutes;
    return m;
}

void httpd_metrics_free(struct httpd_metrics *m)
{
    if (m != NULL) {
        free(m->slots);
        free(m);
    }
}

/* The first table entry with this id (routes sharing an id share a slot). */
static size_t slot_of(const struct httpd_metrics *m, int route_id)
{
    size_t i = 0;

    while (i < m->nroutes && m->routes[i].id != route_id) {
        i++;
    }
    return i;
}

void httpd_metrics_request(struct httpd_metrics *m, int route_id, unsigned status, uint64_t ns)
{
    struct slot *s = &m->slots[slot_of(m, route_id)];
    uint64_t us = ns / 1000u;
    size_t b = 0;

    if (status >= STATUS_MIN && status < STATUS_MIN + NSTATUS) {
        atomic_fetch_add_explicit(&s->status[status - STATUS_MIN], 1, memory_order_relaxed);
    }
    while (b < NBUCKET && us > bucket_us[b]) {
        b++;
    }
    atomic_fetch_add_explicit(&s->buckets[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->sum_ns, ns, memory_order_relaxed);
}

void httpd_metrics_rejected(struct httpd_metrics *m)
{
    atomic_fetch_add_explicit(&m->rejected, 1, memory_order_relaxed);
}

static unsigned long long load(const atomic_ullong *a)
{
    return atomic_load_explicit(a, memory_order_relaxed);
}

/* Whether slot 'i' is the first of its id (later duplicates stay empty). */
static bool slot_shown(const struct httpd_metrics *m, size_t i)
{
    return i == m->nroutes || slot_of(m, m->routes[i].id) == i;
}

static pv_result render_requests(const struct httpd_metrics *m, struct pv_dynbuf *b)
{
    const char *p = m->prefix;

    PV_GUARD(pv_dynbuf_printf(b,
                              "# HELP %s_requests_total HTTP requests by route and status.\n"
                              "# TYPE %s_requests_total counter\n",
                              p, p));
    for (size_t i = 0; i <= m->nroutes; i++) {
        const char *method = i < m->nroutes ? m->routes[i].method : "";
        const char *path = i < m->nroutes ? m->routes[i].path : "unknown";
        for (unsigned s = 0; s < NSTATUS && slot_shown(m, i); s++) {
            unsigned long long n = load(&m->slots[i].status[s]);
            if (n > 0) {
                PV_GUARD(pv_dynbuf_printf(
                    b, "%s_requests_total{method=\"%s\",route=\"%s\",status=\"%u\"} %llu\n", p,
                    method, path, s + STATUS_MIN, n));
            }
        }
    }
    return PV_RESULT_OK;
}

static pv_result render_route_latency(const struct httpd_metrics *m, size_t i, struct pv_dynbuf *b)
{
    const char *p = m->prefix;
    const char *method = i < m->nroutes ? m->routes[i].method : "";
    const char *path = i < m->nroutes ? m->routes[i].path : "unknown";
    unsigned long long cum = 0;
    unsigned long long ns = load(&m->slots[i].sum_ns);

    for (size_t k = 0; k <= NBUCKET; k++) {
        cum += load(&m->slots[i].buckets[k]);
    }
    if (cum == 0) {
        return PV_RESULT_OK;
    }
    cum = 0;
    for (size_t k = 0; k <= NBUCKET; k++) {
        cum += load(&m->slots[i].buckets[k]);
        if (k < NBUCKET) {
            PV_GUARD(pv_dynbuf_printf(b,
                                      "%s_request_duration_seconds_bucket{method=\"%s\",route="
                                      "\"%s\",le=\"%llu.%06llu\"} %llu\n",
                                      p, method, path, (unsigned long long)(bucket_us[k] / 1000000),
                                      (unsigned long long)(bucket_us[k] % 1000000), cum));
        } else {
            PV_GUARD(pv_dynbuf_printf(b,
                                      "%s_request_duration_seconds_bucket{method=\"%s\",route="
                                      "\"%s\",le=\"+Inf\"} %llu\n",
                                      p, method, path, cum));
        }
    }
    PV_GUARD(pv_dynbuf_printf(
        b, "%s_request_duration_seconds_sum{method=\"%s\",route=\"%s\"} %llu.%09llu\n", p, method,
        path, ns / 1000000000ull, ns % 1000000000ull));
    return pv_dynbuf_printf(b,
                            "%s_request_duration_seconds_count{method=\"%s\",route=\"%s\"} %llu\n",
                            p, method, path, cum);
}

static pv_result render(const struct httpd_metrics *m, struct pv_dynbuf *b)
{
    const char *p = m->prefix;

    PV_GUARD(render_requests(m, b));
    PV_GUARD(pv_dynbuf_printf(b,
                              "# HELP %s_request_duration_seconds Request latency, headers "
                              "received to reply queued.\n"
                              "# TYPE %s_request_duration_seconds histogram\n",
                              p, p));
    for (size_t i = 0; i <= m->nroutes; i++) {
        if (slot_shown(m, i)) {
            PV_GUARD(render_route_latency(m, i, b));
        }
    }
    return pv_dynbuf_printf(
        b,
        "# HELP %s_rejected_total Requests refused with 503 (over capacity or draining).\n"
        "# TYPE %s_rejected_total counter\n"
        "%s_rejected_total %llu\n",
        p, p, p, load(&m->rejected));
}

char *httpd_metrics_render(const struct httpd_metrics *m, size_t *len)
{
    struct pv_dynbuf b;

    pv_dynbuf_init(&b, 4u * 1024u * 1024u);
    if (!pv_ok(render(m, &b))) {
        pv_dynbuf_free(&b);
        return NULL;
    }
    return pv_dynbuf_take(&b, len);
}
