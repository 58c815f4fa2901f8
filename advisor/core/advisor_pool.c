/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_pool.c - the provers the advisor proves with: choice, health, metrics
 *
 * A pool is one or more proviso-prover services (docs/scale-out.md#pool):
 * the advisor's own child (one member whose address changes when the child
 * restarts) or the remote provers named by repeated --prover URL. Each
 * proof goes to the member with the fewest calls outstanding among those
 * up, ties broken round-robin. A member that fails a call (no connection,
 * a timeout, a 5xx, a refused token, a 200 that is not a JSON object) is
 * taken out at once; a prober thread asks its /healthz again after a
 * back-off (PROBE_MIN_MS doubling to PROBE_MAX_MS) and takes it back in
 * when it answers 200. The back-off is reset only by a call that succeeds,
 * so a member whose /healthz answers but whose proofs fail is asked ever
 * less often. Members up are probed every PROBE_UP_MS, so an idle pool
 * notices a dead member before a proof does; a member up is taken out by
 * PROBE_FALL failed probes in a row (asked again PROBE_MIN_MS after each),
 * not by one: a load balancer in front of several provers (HAProxy) waits
 * up to a second before it sends a request on from a prover that just
 * died, and one probe that met that wait says nothing of the pool behind.
 *
 * Nothing here decides anything: when no member is up the caller gets an
 * error naming each member and why it is out, and the proposal stays
 * pending with that reason (advisor_eval.c). Tokens are wiped on free.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "advisor/core/core.h"
#include "common/pv_dynbuf.h"
#include "common/pv_log.h"
#include "common/pv_time.h"
#include "hclient/hclient.h"

#define PROBE_MIN_MS 200u
#define PROBE_MAX_MS 10000u
#define PROBE_UP_MS 2000
#define PROBE_TIMEOUT_MS 1000L
#define PROBE_FALL 2u
#define TICK_MS 50
#define POOL_CURSORS 8

struct member {
    char url[ADVISOR_POOL_URL_MAX];   /* "" while a child restarts */
    char token[HTTPD_TOKEN_MAX + 1];  /* secret */
    char label[ADVISOR_POOL_URL_MAX]; /* the metrics label */
    uint64_t generation;              /* moves when the address changes */
    bool up;
    unsigned outstanding;
    unsigned probe_misses; /* failed probes in a row while up */
    unsigned long long requests;
    unsigned long long failures;
    unsigned backoff_ms;
    int64_t next_probe; /* monotonic ms */
    char reason[192];   /* why it is out */
};

struct advisor_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct member m[ADVISOR_POOL_MAX];
    size_t n;
    /* Round-robin cursors, one per kind of call (a hash of the path):
     * with one cursor, an evaluation's proof and its containment check
     * would alternate and every proof would land on the same member. */
    size_t cursor[POOL_CURSORS];
    bool stop;
    bool started;
    pthread_t thread;
    struct hclient *probe; /* the prober's client, made by advisor_pool_start */
};

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct advisor_pool *advisor_pool_new(void)
{
    struct advisor_pool *p = pv_calloc(1, sizeof(*p));

    if (p == NULL) {
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    return p;
}

void advisor_pool_free(struct advisor_pool *p)
{
    if (p == NULL) {
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (p->started) {
        pthread_join(p->thread, NULL);
    }
    hclient_free(p->probe);
    OPENSSL_cleanse(p->m, sizeof(p->m));
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}

size_t advisor_pool_size(const struct advisor_pool *p)
{
    return p != NULL ? p->n : 0;
}

/* A new address for member 'm' (under mu): up when there is one. */
static void set_address(struct member *m, const char *url, const char *token)
{
    size_t len = strlen(url);

    snprintf(m->url, sizeof(m->url), "%s", url);
    while (len > 0 && m->url[len - 1] == '/') {
        m->url[--len] = '\0';
    }
    OPENSSL_cleanse(m->token, sizeof(m->token));
    snprintf(m->token, sizeof(m->token), "%s", token);
    m->generation++;
    m->up = m->url[0] != '\0';
    m->probe_misses = 0;
    m->backoff_ms = PROBE_MIN_MS;
    m->next_probe = mono_ms() + PROBE_UP_MS;
    snprintf(m->reason, sizeof(m->reason), "%s", m->up ? "" : "no prover child is running");
}

pv_result advisor_pool_add(struct advisor_pool *p, const char *label, const char *url,
                           const char *token)
{
    struct member *m;

    PV_ENSURE(p->n < ADVISOR_POOL_MAX, PV_ERR_USAGE);
    PV_ENSURE(strlen(url) < ADVISOR_POOL_URL_MAX && strlen(token) <= HTTPD_TOKEN_MAX, PV_ERR_USAGE);
    pthread_mutex_lock(&p->mu);
    m = &p->m[p->n];
    memset(m, 0, sizeof(*m));
    snprintf(m->label, sizeof(m->label), "%s", label != NULL ? label : url);
    set_address(m, url, token);
    p->n++;
    pthread_mutex_unlock(&p->mu);
    return PV_RESULT_OK;
}

void advisor_pool_set(struct advisor_pool *p, size_t i, const char *url, const char *token)
{
    if (p == NULL || i >= p->n) {
        return;
    }
    pthread_mutex_lock(&p->mu);
    set_address(&p->m[i], url, token);
    pthread_mutex_unlock(&p->mu);
}

/* Take member 'm' out (under mu) with 'why'. */
static void take_out(struct member *m, const char *why)
{
    if (m->up) {
        pv_log_warnx("prover %s taken out of the pool: %s", m->label, why);
    }
    m->up = false;
    m->probe_misses = 0;
    snprintf(m->reason, sizeof(m->reason), "%s", why);
    m->next_probe = mono_ms() + m->backoff_ms;
    m->backoff_ms = m->backoff_ms * 2 > PROBE_MAX_MS ? PROBE_MAX_MS : m->backoff_ms * 2;
}

bool advisor_pool_acquire(struct advisor_pool *p, const char *kind, uint32_t tried,
                          struct advisor_pool_lease *l, char *why, size_t whylen)
{
    size_t best = SIZE_MAX;
    size_t *cursor;
    unsigned h = 0;
    struct pv_dynbuf b;

    if (p == NULL || p->n == 0) {
        snprintf(why, whylen, "no prover is configured");
        return false;
    }
    for (const char *c = kind != NULL ? kind : ""; *c != '\0'; c++) {
        h = h * 31u + (unsigned char)*c;
    }
    cursor = &p->cursor[h % POOL_CURSORS];
    pthread_mutex_lock(&p->mu);
    for (size_t k = 0; k < p->n; k++) {
        size_t i = (*cursor + k) % p->n;
        const struct member *m = &p->m[i];
        if (!m->up || (tried & (1u << i)) != 0) {
            continue;
        }
        if (best == SIZE_MAX || m->outstanding < p->m[best].outstanding) {
            best = i;
        }
    }
    if (best != SIZE_MAX) {
        struct member *m = &p->m[best];
        *cursor = (best + 1) % p->n;
        m->outstanding++;
        m->requests++;
        l->i = best;
        l->generation = m->generation;
        memcpy(l->url, m->url, sizeof(l->url));
        memcpy(l->token, m->token, sizeof(l->token));
        memcpy(l->label, m->label, sizeof(l->label));
        pthread_mutex_unlock(&p->mu);
        return true;
    }
    /* Why each member is out, for the proposal's application_error. */
    pv_dynbuf_init(&b, whylen > 0 ? whylen - 1 : 0);
    for (size_t i = 0; i < p->n; i++) {
        const struct member *m = &p->m[i];
        pv_dynbuf_putf(&b, "%s%s: %s", i > 0 ? "; " : "", m->label,
                       (tried & (1u << i)) != 0 ? "failed this call"
                       : m->reason[0] != '\0'   ? m->reason
                                                : "out");
    }
    pthread_mutex_unlock(&p->mu);
    snprintf(why, whylen, "%s (%s)", tried != 0 ? "no other prover is up" : "no prover is up",
             b.buf != NULL ? b.buf : "");
    pv_dynbuf_free(&b);
    return false;
}

void advisor_pool_release(struct advisor_pool *p, const struct advisor_pool_lease *l, bool ok,
                          const char *why)
{
    struct member *m;

    if (p == NULL || l->i >= p->n) {
        return;
    }
    pthread_mutex_lock(&p->mu);
    m = &p->m[l->i];
    if (m->outstanding > 0) {
        m->outstanding--;
    }
    if (!ok) {
        m->failures++;
    }
    /* An answer from an address the member no longer has says nothing of it. */
    if (m->generation == l->generation) {
        if (ok) {
            m->backoff_ms = PROBE_MIN_MS;
            m->probe_misses = 0;
        } else {
            take_out(m, why);
        }
    }
    pthread_mutex_unlock(&p->mu);
}

/* ===========================================================================
 * The prober
 * ========================================================================= */

static bool probe(struct hclient *c, const char *url, char *err, size_t errlen)
{
    char full[ADVISOR_POOL_URL_MAX + 16];
    struct hclient_res res;
    struct hclient_req req = {.url = full,
                              .max_answer = 4096,
                              .connect_timeout_ms = PROBE_TIMEOUT_MS,
                              .timeout_ms = PROBE_TIMEOUT_MS,
                              .protocols = "http,https"};
    bool ok;

    snprintf(full, sizeof(full), "%s/healthz", url);
    ok = hclient_perform(c, &req, &res);
    if (!ok) {
        snprintf(err, errlen, "health check: %s", res.error);
    } else if (res.status != 200) {
        snprintf(err, errlen, "health check answered %ld", res.status);
        ok = false;
    }
    hclient_res_clear(&res);
    return ok;
}

/* The next member due for a probe (under mu), or SIZE_MAX. */
static size_t due(const struct advisor_pool *p, int64_t now)
{
    for (size_t i = 0; i < p->n; i++) {
        if (p->m[i].url[0] != '\0' && p->m[i].next_probe <= now) {
            return i;
        }
    }
    return SIZE_MAX;
}

static void *prober(void *arg)
{
    struct advisor_pool *p = arg;
    struct hclient *c = p->probe;

    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        size_t i = due(p, mono_ms());
        char url[ADVISOR_POOL_URL_MAX];
        char err[320] = "";
        uint64_t gen;
        bool ok;
        struct member *m;

        if (i == SIZE_MAX) {
            struct timespec ts;
            pv_deadline(&ts, CLOCK_REALTIME, TICK_MS);
            (void)pthread_cond_timedwait(&p->cv, &p->mu, &ts);
            continue;
        }
        m = &p->m[i];
        memcpy(url, m->url, sizeof(url));
        gen = m->generation;
        /* Not probed again until this one is back. */
        m->next_probe = INT64_MAX;
        pthread_mutex_unlock(&p->mu);
        ok = probe(c, url, err, sizeof(err));
        pthread_mutex_lock(&p->mu);
        if (m->generation != gen) {
            continue;
        }
        if (ok) {
            if (!m->up) {
                pv_log_info("prover %s is back in the pool", m->label);
            }
            m->up = true;
            m->probe_misses = 0;
            m->reason[0] = '\0';
            m->next_probe = mono_ms() + PROBE_UP_MS;
        } else if (m->up && ++m->probe_misses < PROBE_FALL) {
            /* Still up; asked again soon. */
            m->next_probe = mono_ms() + PROBE_MIN_MS;
        } else {
            take_out(m, err);
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

pv_result advisor_pool_start(struct advisor_pool *p)
{
    PV_ENSURE(!p->started && p->probe == NULL, PV_ERR_INTERNAL);
    /* The client is made here, before the thread: a prober whose client
     * could not be made in the thread would never probe a member back in
     * for the process's life (a prover taken out by one failed call stayed
     * out); start-up refuses instead. */
    p->probe = hclient_new();
    PV_ENSURE(p->probe != NULL, PV_ERR_NOMEM);
    if (pthread_create(&p->thread, NULL, prober, p) != 0) {
        hclient_free(p->probe);
        p->probe = NULL;
        PV_BAIL(PV_ERR_IO);
    }
    p->started = true;
    return PV_RESULT_OK;
}

void advisor_pool_check_now(struct advisor_pool *p)
{
    char err[320];
    struct hclient *c;

    if (p == NULL) {
        return;
    }
    c = hclient_new();
    for (size_t i = 0; i < p->n && c != NULL; i++) {
        char url[ADVISOR_POOL_URL_MAX];
        uint64_t gen;
        bool ok;
        pthread_mutex_lock(&p->mu);
        memcpy(url, p->m[i].url, sizeof(url));
        gen = p->m[i].generation;
        pthread_mutex_unlock(&p->mu);
        if (url[0] == '\0') {
            continue;
        }
        ok = probe(c, url, err, sizeof(err));
        pthread_mutex_lock(&p->mu);
        if (p->m[i].generation == gen && !ok) {
            take_out(&p->m[i], err);
        }
        pthread_mutex_unlock(&p->mu);
    }
    hclient_free(c);
}

/* ===========================================================================
 * Metrics
 * ========================================================================= */

/* 'label' as a Prometheus label value: \, " and newlines escaped. */
static void put_label(struct pv_dynbuf *b, const char *label)
{
    for (const char *s = label; *s != '\0'; s++) {
        if (*s == '\\' || *s == '"') {
            pv_dynbuf_putc(b, '\\');
            pv_dynbuf_putc(b, *s);
        } else if (*s == '\n') {
            pv_dynbuf_puts(b, "\\n");
        } else {
            pv_dynbuf_putc(b, *s);
        }
    }
}

static const struct {
    const char *name;
    const char *type;
    const char *help;
} series[] = {
    {"proviso_advisor_prover_up", "gauge", "1 when the prover is in the pool."},
    {"proviso_advisor_prover_requests_total", "counter", "Calls sent to the prover."},
    {"proviso_advisor_prover_failures_total", "counter",
     "Calls that failed (no connection, timeout, 5xx, refused token, not JSON)."},
    {"proviso_advisor_prover_outstanding", "gauge", "Calls in flight now."},
};

pv_result advisor_pool_render(struct advisor_pool *p, struct pv_dynbuf *b)
{
    if (p == NULL) {
        return PV_RESULT_OK;
    }
    pthread_mutex_lock(&p->mu);
    for (size_t s = 0; s < PV_ARRAY_LEN(series); s++) {
        pv_dynbuf_putf(b, "# HELP %s %s\n# TYPE %s %s\n", series[s].name, series[s].help,
                       series[s].name, series[s].type);
        for (size_t i = 0; i < p->n; i++) {
            const struct member *m = &p->m[i];
            unsigned long long v = s == 0   ? (unsigned long long)m->up
                                   : s == 1 ? m->requests
                                   : s == 2 ? m->failures
                                            : (unsigned long long)m->outstanding;
            pv_dynbuf_putf(b, "%s{prover=\"", series[s].name);
            put_label(b, m->label);
            pv_dynbuf_putf(b, "\"} %llu\n", v);
        }
    }
    pthread_mutex_unlock(&p->mu);
    PV_ENSURE(!b->failed, PV_ERR_NOMEM);
    return PV_RESULT_OK;
}
