/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_metrics.c - counters behind GET /metrics (Prometheus text format)
 *
 * Every decision line (proxy_conn.c log_decision, proxy/advisor/proxy_local.c
 * log_outcome) counts once here by (outcome, stage), with the latency from
 * its request head's completion (identity lookup included) to the decision.
 * Reloads, DNS failures and upstream failures count where they happen; open
 * connections and tunnels are counted from the connection list when the page
 * is rendered, and pins come from the identity worker (an atomic it
 * publishes). Everything but the pin count is touched by the loop only.
 */
#include "config.h"

#include <event2/buffer.h>
#include <string.h>
#include <time.h>

#include "proxy/proxy_int.h"

/* Upper bounds of the latency buckets, in microseconds (+Inf implied). */
static const uint64_t bucket_us[PROXY_METRICS_BUCKETS] = {
    250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 1000000, 5000000,
};

static const char *const action_name[] = {"allowed", "denied", "audit"};

uint64_t proxy_metrics_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void proxy_metrics_decision(struct proxy_metrics *m, enum proxy_log_action a, const char *stage,
                            uint64_t since_us)
{
    struct proxy_metrics_row *row = NULL;

    if (stage == NULL) {
        stage = "-";
    }
    for (size_t i = 0; i < m->nrows; i++) {
        if (m->rows[i].action == a && strcmp(m->rows[i].stage, stage) == 0) {
            row = &m->rows[i];
            break;
        }
    }
    if (row == NULL && m->nrows < PV_ARRAY_LEN(m->rows)) {
        row = &m->rows[m->nrows++];
        row->action = a;
        row->stage = stage; /* stages are static strings */
        row->n = 0;
    }
    if (row != NULL) {
        row->n++;
    } else {
        m->overflow++;
    }
    if (since_us != 0) {
        uint64_t now = proxy_metrics_now_us();
        uint64_t d = now > since_us ? now - since_us : 0;
        size_t b = 0;

        while (b < PROXY_METRICS_BUCKETS && d > bucket_us[b]) {
            b++;
        }
        m->lat[b]++;
        m->lat_sum_us += d;
        m->lat_n++;
    }
}

void proxy_metrics_render(const struct proxy_metrics *m, const struct proxy_metrics_gauges *g,
                          struct evbuffer *b)
{
    uint64_t cum = 0;

    evbuffer_add_printf(b, "# HELP proviso_proxy_decisions_total Decision lines by outcome "
                           "and stage.\n# TYPE proviso_proxy_decisions_total counter\n");
    for (size_t i = 0; i < m->nrows; i++) {
        evbuffer_add_printf(b, "proviso_proxy_decisions_total{outcome=\"%s\",stage=\"%s\"} %llu\n",
                            action_name[m->rows[i].action], m->rows[i].stage,
                            (unsigned long long)m->rows[i].n);
    }
    if (m->overflow > 0) {
        evbuffer_add_printf(b,
                            "proviso_proxy_decisions_total{outcome=\"other\",stage=\"other\"} "
                            "%llu\n",
                            (unsigned long long)m->overflow);
    }
    evbuffer_add_printf(b,
                        "# HELP proviso_proxy_reloads_total Policy reloads by result.\n"
                        "# TYPE proviso_proxy_reloads_total counter\n"
                        "proviso_proxy_reloads_total{result=\"ok\"} %llu\n"
                        "proviso_proxy_reloads_total{result=\"failed\"} %llu\n",
                        (unsigned long long)m->reloads_ok, (unsigned long long)m->reloads_failed);
    evbuffer_add_printf(b,
                        "# HELP proviso_proxy_policy_quarantined 1 while every decision "
                        "denies (fail-closed).\n"
                        "# TYPE proviso_proxy_policy_quarantined gauge\n"
                        "proviso_proxy_policy_quarantined %d\n"
                        "# HELP proviso_proxy_policy_generation The enforced policy version.\n"
                        "# TYPE proviso_proxy_policy_generation gauge\n"
                        "proviso_proxy_policy_generation %llu\n",
                        g->quarantined ? 1 : 0, (unsigned long long)g->generation);
    evbuffer_add_printf(b,
                        "# HELP proviso_proxy_pins Executables pinned by SHA-256.\n"
                        "# TYPE proviso_proxy_pins gauge\n"
                        "proviso_proxy_pins %llu\n"
                        "# HELP proviso_proxy_connections_open Client connections open.\n"
                        "# TYPE proviso_proxy_connections_open gauge\n"
                        "proviso_proxy_connections_open %llu\n"
                        "# HELP proviso_proxy_tunnels_open CONNECT tunnels open.\n"
                        "# TYPE proviso_proxy_tunnels_open gauge\n"
                        "proviso_proxy_tunnels_open %llu\n",
                        (unsigned long long)g->pins, (unsigned long long)g->conns,
                        (unsigned long long)g->tunnels);
    evbuffer_add_printf(b,
                        "# HELP proviso_proxy_upstream_errors_total Upstream connects or "
                        "exchanges that failed after an allowed decision.\n"
                        "# TYPE proviso_proxy_upstream_errors_total counter\n"
                        "proviso_proxy_upstream_errors_total %llu\n"
                        "# HELP proviso_proxy_dns_failures_total Destinations that did not "
                        "resolve.\n"
                        "# TYPE proviso_proxy_dns_failures_total counter\n"
                        "proviso_proxy_dns_failures_total %llu\n",
                        (unsigned long long)m->upstream_errors,
                        (unsigned long long)m->dns_failures);
    evbuffer_add_printf(b,
                        "# HELP proviso_proxy_advisor_revisions_refused_total Advisor revisions "
                        "not enforced: their policy does not hash to the revision's hash.\n"
                        "# TYPE proviso_proxy_advisor_revisions_refused_total counter\n"
                        "proviso_proxy_advisor_revisions_refused_total %llu\n"
                        "# HELP proviso_proxy_advisor_revision_refused The newest advisor "
                        "revision, refused (the previous one stays in force); 0 when none.\n"
                        "# TYPE proviso_proxy_advisor_revision_refused gauge\n"
                        "proviso_proxy_advisor_revision_refused %lld\n",
                        (unsigned long long)m->advisor_refused, (long long)m->advisor_refused_rev);
    evbuffer_add_printf(b, "# HELP proviso_proxy_decision_seconds From a complete request "
                           "head to its decision (identity lookup included).\n"
                           "# TYPE proviso_proxy_decision_seconds histogram\n");
    for (size_t i = 0; i < PROXY_METRICS_BUCKETS; i++) {
        cum += m->lat[i];
        evbuffer_add_printf(b, "proviso_proxy_decision_seconds_bucket{le=\"%g\"} %llu\n",
                            (double)bucket_us[i] / 1e6, (unsigned long long)cum);
    }
    cum += m->lat[PROXY_METRICS_BUCKETS];
    evbuffer_add_printf(b,
                        "proviso_proxy_decision_seconds_bucket{le=\"+Inf\"} %llu\n"
                        "proviso_proxy_decision_seconds_sum %.6f\n"
                        "proviso_proxy_decision_seconds_count %llu\n",
                        (unsigned long long)cum, (double)m->lat_sum_us / 1e6,
                        (unsigned long long)m->lat_n);
}
