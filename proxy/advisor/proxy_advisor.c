/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_advisor.c - advisor mode: the policy comes from proviso-advisor
 *
 * proviso-proxy --advisor URL --sandbox NAME --token-file F takes its policy
 * from the advisor instead of a file. Three kinds of threads:
 *
 *   - the event loop owns everything the proxy enforces. It applies a
 *     revision by writing its YAML to DATA_DIR/advisor-policy.yaml and
 *     reloading that file through proxy_server_reload(), the path SIGHUP
 *     takes: the new version is compiled beside the old one and swapped; a
 *     revision that does not load puts the proxy in fail-closed quarantine
 *     and is not reported loaded;
 *   - the sync thread long-polls GET .../policy?after=REV&enabled=B, so a
 *     new revision (or a change of agent_policy_proposals_enabled) arrives
 *     as soon as the advisor has it. It hands the answer over through a
 *     mutex-protected slot (latest wins) and one byte on a pipe; while the
 *     advisor is unreachable the last good policy stays, the thread retries
 *     with back-off and the outage is logged once;
 *   - a bounded pool of workers makes every other advisor call (the loaded
 *     report, policy.local's proposals and waits). A job runs on a worker
 *     and completes on the loop.
 *
 * Until the first revision has loaded the proxy listens but denies every
 * request (quarantine "no policy revision from the advisor yet"): agents get
 * a reason instead of a refused connection, and /healthz answers.
 *
 * Shared state is small: the slot and the job queues (under 'mu'), and the
 * revision this proxy has loaded (under 'mu', broadcast on 'cond' so that a
 * policy.local wait can tell when this proxy enforces an approval). The
 * bearer token lives only here and is wiped on free.
 */
#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/pv_dynbuf.h"
#include "hclient/hclient.h"
#include "common/pv_log.h"
#include "common/pv_token.h"
#include "proxy/advisor/proxy_advisor.h"
#include "proxy/proxy_int.h"

#define WORKERS 4
#define QUEUE_MAX 64
#define NOTES_MAX 8
#define LONGPOLL_S 30
/* The policy sync's retry after an error or a refusal (a 503 when the
 * advisor is busy): doubling from 100 ms, never past 500 ms, so a revocation
 * published after a refusal reaches this proxy within a second of the
 * advisor being able to answer (docs/advisor.md#wait). A policy request is
 * cheap; a down advisor sees at most two a second from each proxy. */
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 500
#define RESP_MAX (8u * 1024u * 1024u)
/* With replicas, the replica holding the sync's long-poll is asked for
 * /healthz every PROBE_MS and must answer within PROBE_TIMEOUT_MS, else the
 * long-poll is ended and the sync moves on: a replica that hangs with its
 * connections open (a stopped process, a host gone without a reset) costs
 * at most about 1.2 s instead of the long-poll's 45 s transfer limit. */
#define PROBE_MS 400
#define PROBE_TIMEOUT_MS 800L

struct proxy_advisor {
    struct proxy_server *srv;
    /* the advisors (--advisor, in order): replicas of one gateway */
    char url[PROXY_ADVISORS_MAX][1030];  /* as given, no trailing '/' (for the log) */
    char base[PROXY_ADVISORS_MAX][1200]; /* URL/v1/sandboxes/NAME */
    size_t nbase;
    atomic_uint cur;              /* the advisor calls go to first: the last one that answered */
    char token[PV_TOKEN_MAX + 1]; /* the bearer token (secret) */
    char skill_path[4200];
    char skill_shown[4200]; /* the path the agent reads it at (--skill-shown) */
    char *reg_body;         /* {"addresses": [...]} for PUT .../addresses; NULL: none */
    struct proxy_local *local;
    struct proxy_denials *denials;

    pthread_mutex_t mu;
    pthread_cond_t cond;  /* loaded_rev changed, or stop */
    pthread_cond_t qcond; /* a job was queued, or stop */
    atomic_bool stop;

    /* sync thread -> loop (under mu) */
    bool slot_policy;
    int64_t slot_rev;
    char slot_hash[80];
    char *slot_yaml;
    bool slot_enabled_set;
    bool slot_enabled;
    char *notes[NOTES_MAX];
    size_t nnotes;

    /* worker queues (under mu) */
    struct proxy_advisor_job *q_head, *q_tail;
    size_t qlen;
    struct proxy_advisor_job *d_head, *d_tail;

    int64_t loaded_rev; /* under mu; 0 = nothing enforced */

    /* loop only */
    int wake_r, wake_w;
    struct event *ev_wake;
    bool enabled;
    char *yaml; /* YAML of the enforced revision */
    int64_t applied_rev;
    bool curl_ready;

    struct hclient *clients[WORKERS + 2]; /* one per thread: woken on stop */
    size_t nclients;
    size_t nclaimed; /* under mu: taken by a thread */
    pthread_t sync_tid;
    bool sync_started;

    /* the liveness probe (replicas only) and the sync transfer it may end */
    atomic_bool sync_abort;      /* ends the sync's transfer: stop, or a failed probe */
    struct hclient *sync_client; /* under mu */
    int poll_idx;                /* under mu: the replica of the sync's transfer; -1 none */
    uint64_t poll_gen;           /* under mu: bumped by each sync transfer */
    pthread_t probe_tid;
    bool probe_started;
    pthread_t workers[WORKERS];
    size_t nworkers;
};

/* Each thread has its own client (kept-alive connection): a transfer is
 * made with req.stop and waits in curl_multi_poll(), which hclient_wakeup()
 * ends at once on stop, so a 30 s long-poll never delays the exit. All are
 * made before the threads start: one that failed in its thread failed every
 * call of that thread (the sync's: no policy was ever loaded). */
static _Thread_local struct hclient *tl_client;

/* ---------------------------------------------------------------------------
 * The hooks advisor mode gives the core (proxy_int.h struct proxy_hooks)
 * ------------------------------------------------------------------------- */

static bool hook_local_serve(void *arg, struct proxy_conn *c, const char *rest, size_t len)
{
    return proxy_local_serve(proxy_advisor_local(arg), c, rest, len);
}

static size_t hook_local_clients(void *arg, const struct sockaddr_storage *peer)
{
    return proxy_local_clients(proxy_advisor_local(arg), peer);
}

static const char *hook_skill(void *arg)
{
    const struct proxy_advisor *a = arg;

    return a->enabled ? a->skill_shown : NULL;
}

static void hook_stop(void *arg)
{
    proxy_advisor_free(arg);
}

int proxy_advisor_start(struct proxy_server *srv)
{
    struct proxy_advisor *a = proxy_advisor_new(srv);
    const struct proxy_hooks h = {
        .arg = a,
        .local_serve = hook_local_serve,
        .local_clients = hook_local_clients,
        .skill = hook_skill,
        .stop = hook_stop,
    };

    if (a == NULL) {
        return -1;
    }
    proxy_server_set_hooks(srv, &h);
    return 0;
}

/* Read the sandbox token (common/pv_token.h). */
static bool read_token(struct proxy_advisor *a, const char *path)
{
    char err[PV_TOKEN_ERR_MAX];
    char *tok = NULL;
    size_t n = 0;
    unsigned mode = 0;

    if (!pv_ok(pv_token_read(path, -1, &tok, &n, &mode, err, sizeof(err)))) {
        pv_log_errorx("cannot read the token file %s", err);
        return false;
    }
    snprintf(a->token, sizeof(a->token), "%s", tok);
    pv_token_wipe_free(tok, n);
    return true;
}

/* ---------------------------------------------------------------------------
 * Time and waits
 * ------------------------------------------------------------------------- */

int64_t proxy_advisor_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct timespec abs_time(int64_t deadline_ms)
{
    struct timespec ts;

    ts.tv_sec = (time_t)(deadline_ms / 1000);
    ts.tv_nsec = (long)(deadline_ms % 1000) * 1000000;
    return ts;
}

bool proxy_advisor_wait_loaded(struct proxy_advisor *a, int64_t rev, int64_t deadline_ms)
{
    bool ok;

    pthread_mutex_lock(&a->mu);
    while (a->loaded_rev < rev && !atomic_load(&a->stop) && proxy_advisor_now_ms() < deadline_ms) {
        struct timespec ts = abs_time(deadline_ms);
        (void)pthread_cond_timedwait(&a->cond, &a->mu, &ts);
    }
    ok = a->loaded_rev >= rev && rev > 0;
    pthread_mutex_unlock(&a->mu);
    return ok;
}

/* Sleep on 'cond' until 'ms' passed or stop; false when stopping. */
static bool nap(struct proxy_advisor *a, unsigned ms)
{
    int64_t deadline = proxy_advisor_now_ms() + ms;

    pthread_mutex_lock(&a->mu);
    while (!atomic_load(&a->stop) && proxy_advisor_now_ms() < deadline) {
        struct timespec ts = abs_time(deadline);
        (void)pthread_cond_timedwait(&a->cond, &a->mu, &ts);
    }
    pthread_mutex_unlock(&a->mu);
    return !atomic_load(&a->stop);
}

static void wake_loop(struct proxy_advisor *a)
{
    char b = 1;

    /* a full pipe already wakes the loop */
    (void)!write(a->wake_w, &b, 1);
}

/* Sync thread: a line for the proxy log, written by the loop. */
static void note(struct proxy_advisor *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(struct proxy_advisor *a, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    char *s;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    s = pv_strdup(buf); /* written once, as a warning, by the loop */
    pthread_mutex_lock(&a->mu);
    if (s != NULL && a->nnotes < NOTES_MAX) {
        a->notes[a->nnotes++] = s;
        s = NULL;
    }
    pthread_mutex_unlock(&a->mu);
    free(s);
    wake_loop(a);
}

/* ---------------------------------------------------------------------------
 * HTTP (libcurl, blocking, worker and sync threads only)
 * ------------------------------------------------------------------------- */

static bool thread_begin(struct proxy_advisor *a)
{
    pthread_mutex_lock(&a->mu);
    tl_client = a->nclaimed < a->nclients ? a->clients[a->nclaimed++] : NULL;
    pthread_mutex_unlock(&a->mu);
    return tl_client != NULL;
}

/* Reads, PUTs and the loaded report may be sent twice; anything else is a
 * write that must not be (a proposal, denials). */
static bool idempotent(const char *method, const char *path)
{
    return strcmp(method, "GET") == 0 || strcmp(method, "PUT") == 0 || strcmp(path, "/loaded") == 0;
}

/* One call to advisor 'idx' (proxy_advisor_call's contract). */
static bool call_at(struct proxy_advisor *a, unsigned idx, const atomic_bool *abort,
                    const char *method, const char *path, const char *body, size_t blen,
                    long timeout_s, struct proxy_advisor_resp *r)
{
    char url[1600];
    struct hclient_res res;
    struct hclient_req req = {
        .url = url,
        .method = method,
        .bearer = a->token,
        .body = body,
        .body_len = blen,
        .content_type = "application/json",
        .protocols = "http,https",
        .max_answer = RESP_MAX,
        .connect_timeout_ms = 3000L,
        .timeout_ms = timeout_s * 1000L,
        .no_proxy = true, /* never through a proxy */
        .no_expect = true,
        .stop = abort,
        /* a write on a connection of its own: libcurl would send it again
         * unasked when a kept-alive one dies before the answer (the
         * replica acted, then died), and the next replica would get it
         * too when that second try is refused */
        .fresh = !idempotent(method, path),
    };

    memset(r, 0, sizeof(*r));
    if (tl_client == NULL) {
        snprintf(r->err, sizeof(r->err), "cannot initialise libcurl");
        return false;
    }
    if (a->nbase > 1) {
        /* a replica that does not accept within a second is skipped */
        req.connect_timeout_ms = 1000L;
    }
    snprintf(url, sizeof(url), "%s%s", a->base[idx], path);
    if (!hclient_perform(tl_client, &req, &res)) {
        snprintf(r->err, sizeof(r->err), "%s", res.error);
        r->unsent = res.unsent;
        return false;
    }
    r->status = res.status;
    r->body = res.body;
    r->len = res.len;
    return true;
}

bool proxy_advisor_may_fail_over(const char *method, const char *path, bool answered, long status,
                                 bool unsent)
{
    bool idem = idempotent(method, path);

    if (!answered) {
        return idem || unsent;
    }
    return status == 503 || (idem && (status == 502 || status == 504));
}

static bool fail_over(const char *method, const char *path, bool ok,
                      const struct proxy_advisor_resp *r)
{
    return proxy_advisor_may_fail_over(method, path, ok, r->status, r->unsent);
}

/* The sync thread's transfer to replica 'idx' begins (idx >= 0) or ends
 * (-1): the probe watches that replica while it lasts. */
static void sync_transfer(struct proxy_advisor *a, int idx)
{
    pthread_mutex_lock(&a->mu);
    a->poll_idx = idx;
    a->poll_gen++;
    atomic_store(&a->sync_abort, atomic_load(&a->stop));
    pthread_mutex_unlock(&a->mu);
}

/* proxy_advisor_call, its transfers ended by '*abort' (the sync thread's
 * own flag, or a->stop). */
static bool call_any(struct proxy_advisor *a, const atomic_bool *abort, const char *method,
                     const char *path, const char *body, size_t blen, long timeout_s,
                     struct proxy_advisor_resp *r)
{
    unsigned first = atomic_load(&a->cur);
    bool sync = abort != &a->stop;
    bool ok = false;

    for (size_t k = 0; k < a->nbase; k++) {
        unsigned idx = (unsigned)((first + k) % a->nbase);
        if (sync) {
            sync_transfer(a, (int)idx);
        }
        ok = call_at(a, idx, abort, method, path, body, blen, timeout_s, r);
        if (sync) {
            sync_transfer(a, -1);
        }
        if (atomic_load(&a->stop) || k + 1 == a->nbase || !fail_over(method, path, ok, r)) {
            if (k > 0 && !fail_over(method, path, ok, r)) {
                /* this one answered: the next calls start here */
                atomic_store(&a->cur, idx);
                note(a, "advisor %s answers (%s did not): the proxy uses it now", a->url[idx],
                     a->url[first]);
            }
            return ok;
        }
        free(r->body);
        r->body = NULL;
    }
    return ok;
}

bool proxy_advisor_call(struct proxy_advisor *a, const char *method, const char *path,
                        const char *body, size_t blen, long timeout_s, struct proxy_advisor_resp *r)
{
    return call_any(a, &a->stop, method, path, body, blen, timeout_s, r);
}

/* The advisor the calls go to first (for the log; borrowed). */
static const char *cur_url(struct proxy_advisor *a)
{
    return a->url[atomic_load(&a->cur) % a->nbase];
}

/* ---------------------------------------------------------------------------
 * The sync thread
 * ------------------------------------------------------------------------- */

/* One answer of the policy route; false when it is not one. */
static bool take_policy(struct proxy_advisor *a, const struct proxy_advisor_resp *r, int64_t *after,
                        char *hash, size_t hashlen, int *enabled)
{
    json_error_t e;
    json_t *j = json_loadb(r->body, r->len, 0, &e);
    json_t *rev = json_object_get(j, "revision");
    const char *h = json_string_value(json_object_get(j, "hash"));
    const char *y = json_string_value(json_object_get(j, "policy_yaml"));
    json_t *en = json_object_get(json_object_get(j, "settings"), "agent_policy_proposals_enabled");
    bool ok = json_is_integer(rev) && h != NULL && y != NULL && json_is_boolean(en) &&
              strlen(h) < hashlen && json_integer_value(rev) > 0;
    bool wake = false;

    if (!ok) {
        json_decref(j);
        return false;
    }
    pthread_mutex_lock(&a->mu);
    if (json_integer_value(rev) != *after || strcmp(h, hash) != 0) {
        char *copy = pv_strdup(y);
        if (copy != NULL) {
            free(a->slot_yaml);
            a->slot_yaml = copy;
            a->slot_policy = true;
            a->slot_rev = json_integer_value(rev);
            snprintf(a->slot_hash, sizeof(a->slot_hash), "%s", h);
            *after = json_integer_value(rev);
            snprintf(hash, hashlen, "%s", h);
            wake = true;
        }
    }
    if ((json_is_true(en) ? 1 : 0) != *enabled) {
        *enabled = json_is_true(en) ? 1 : 0;
        a->slot_enabled_set = true;
        a->slot_enabled = *enabled == 1;
        wake = true;
    }
    pthread_mutex_unlock(&a->mu);
    json_decref(j);
    if (wake) {
        wake_loop(a);
    }
    return true;
}

/* Register the sandbox's addresses (--sandbox-address) with the advisor,
 * so peers' target_sandbox endpoints resolve to them. Done each time the
 * sync (re)connects: the advisor keeps the last registration, and an
 * unchanged one changes nothing there. */
static bool register_addresses(struct proxy_advisor *a, bool say)
{
    struct proxy_advisor_resp r;
    bool ok;

    if (a->reg_body == NULL) {
        return true;
    }
    ok = proxy_advisor_call(a, "PUT", "/addresses", a->reg_body, strlen(a->reg_body), 10, &r);
    if (ok && r.status == 200) {
        free(r.body);
        return true;
    }
    if (say) {
        char said[201] = "";
        for (size_t k = 0; ok && r.body != NULL && r.body[k] != '\0' && k < sizeof(said) - 1; k++) {
            said[k] = (unsigned char)r.body[k] < 0x20 ? ' ' : r.body[k];
            said[k + 1] = '\0';
        }
        note(a, "cannot register the sandbox's addresses with the advisor (%s): retrying",
             ok ? said : r.err);
    }
    free(r.body);
    return false;
}

static void *sync_main(void *arg)
{
    struct proxy_advisor *a = arg;
    int64_t after = -1;
    char hash[80] = "";
    int enabled = -1;
    unsigned backoff = 0;
    bool down = false;
    bool registered = false;
    bool reg_noted = false;

    if (!thread_begin(a)) {
        note(a, "cannot initialise libcurl: no policy sync");
    }
    pthread_mutex_lock(&a->mu);
    a->sync_client = tl_client;
    pthread_mutex_unlock(&a->mu);

    while (!atomic_load(&a->stop)) {
        struct proxy_advisor_resp r;
        char path[160];
        bool ok;

        if (!registered) {
            /* a refused registration never holds up the policy sync; it is
             * tried again with the next long-poll, and noted once */
            registered = register_addresses(a, !reg_noted);
            reg_noted = !registered;
        }
        if (after < 0) {
            snprintf(path, sizeof(path), "/policy");
        } else {
            snprintf(path, sizeof(path), "/policy?after=%lld&timeout=%d&enabled=%d",
                     (long long)after, LONGPOLL_S, enabled == 1 ? 1 : 0);
        }
        ok = call_any(a, &a->sync_abort, "GET", path, NULL, 0, LONGPOLL_S + 15, &r);
        if (atomic_load(&a->stop)) {
            free(r.body);
            break;
        }
        if (ok && r.status == 200 && take_policy(a, &r, &after, hash, sizeof(hash), &enabled)) {
            if (down) {
                note(a, "advisor reachable again (%s): policy sync resumed at revision %lld",
                     cur_url(a), (long long)after);
                down = false;
            }
            backoff = 0;
            free(r.body);
            continue;
        }
        if (!down) {
            if (!ok) {
                note(a, "advisor unreachable (%s%s): keeping the current policy, retrying",
                     a->nbase > 1 ? "no replica answered; the last: " : "", r.err);
            } else {
                char said[201];
                size_t k = 0;
                for (; r.body != NULL && r.body[k] != '\0' && k < sizeof(said) - 1; k++) {
                    said[k] = (unsigned char)r.body[k] < 0x20 ? ' ' : r.body[k];
                }
                said[k] = '\0';
                note(a,
                     "advisor %s answered %ld to the policy sync (%s): keeping the current "
                     "policy, retrying",
                     cur_url(a), r.status, said);
            }
            down = true;
        }
        registered = false; /* the advisor may have lost it: register again */
        free(r.body);
        backoff = backoff == 0 ? BACKOFF_MIN_MS : backoff * 2;
        if (backoff > BACKOFF_MAX_MS) {
            backoff = BACKOFF_MAX_MS;
        }
        if (!nap(a, backoff)) {
            break;
        }
    }
    pthread_mutex_lock(&a->mu);
    a->sync_client = NULL;
    pthread_mutex_unlock(&a->mu);
    tl_client = NULL; /* proxy_advisor_free frees it */
    return NULL;
}

/* ---------------------------------------------------------------------------
 * The liveness probe (with replicas)
 * ------------------------------------------------------------------------- */

/* Does replica 'idx' answer GET /healthz 200 within PROBE_TIMEOUT_MS? */
static bool probe(struct proxy_advisor *a, int idx)
{
    char url[1100];
    struct hclient_res res;
    struct hclient_req req = {
        .url = url,
        .method = "GET",
        .protocols = "http,https",
        .max_answer = 4096,
        .connect_timeout_ms = PROBE_TIMEOUT_MS,
        .timeout_ms = PROBE_TIMEOUT_MS,
        .no_proxy = true,
        .stop = &a->stop,
    };
    bool ok;

    if (tl_client == NULL) {
        return true; /* cannot tell: the long-poll's own limits apply */
    }
    snprintf(url, sizeof(url), "%s/healthz", a->url[idx]);
    ok = hclient_perform(tl_client, &req, &res) && res.status == 200;
    hclient_res_clear(&res);
    return ok;
}

/* Every PROBE_MS, while the sync thread's long-poll is in flight, ask its
 * replica for /healthz; when it does not answer, end that long-poll (the
 * sync then moves to the next replica at once). The sync's transfer is
 * identified by (poll_idx, poll_gen), so a late verdict never ends the
 * transfer that followed it. */
static void *probe_main(void *arg)
{
    struct proxy_advisor *a = arg;

    (void)thread_begin(a);
    while (nap(a, PROBE_MS)) {
        int idx;
        uint64_t gen;
        bool ended = false;

        pthread_mutex_lock(&a->mu);
        idx = a->poll_idx;
        gen = a->poll_gen;
        pthread_mutex_unlock(&a->mu);
        if (idx < 0 || probe(a, idx)) {
            continue;
        }
        pthread_mutex_lock(&a->mu);
        if (a->poll_idx == idx && a->poll_gen == gen) {
            atomic_store(&a->sync_abort, true);
            hclient_wakeup(a->sync_client);
            ended = true;
        }
        pthread_mutex_unlock(&a->mu);
        if (ended) {
            note(a,
                 "advisor %s did not answer its health check within %ld ms: the policy sync "
                 "moves on",
                 a->url[idx], PROBE_TIMEOUT_MS);
        }
    }
    tl_client = NULL; /* proxy_advisor_free frees it */
    return NULL;
}

/* ---------------------------------------------------------------------------
 * Workers
 * ------------------------------------------------------------------------- */

bool proxy_advisor_submit(struct proxy_advisor *a, struct proxy_advisor_job *j)
{
    bool ok;

    j->next = NULL;
    pthread_mutex_lock(&a->mu);
    ok = a->qlen < QUEUE_MAX && !atomic_load(&a->stop);
    if (ok) {
        if (a->q_tail != NULL) {
            a->q_tail->next = j;
        } else {
            a->q_head = j;
        }
        a->q_tail = j;
        a->qlen++;
        pthread_cond_signal(&a->qcond);
    }
    pthread_mutex_unlock(&a->mu);
    return ok;
}

static void *worker_main(void *arg)
{
    struct proxy_advisor *a = arg;

    (void)thread_begin(a); /* without it every call fails cleanly */

    pthread_mutex_lock(&a->mu);
    for (;;) {
        struct proxy_advisor_job *j;
        while (a->q_head == NULL && !atomic_load(&a->stop)) {
            pthread_cond_wait(&a->qcond, &a->mu);
        }
        if (atomic_load(&a->stop)) {
            break;
        }
        j = a->q_head;
        a->q_head = j->next;
        if (a->q_head == NULL) {
            a->q_tail = NULL;
        }
        a->qlen--;
        pthread_mutex_unlock(&a->mu);
        j->run(a, j);
        pthread_mutex_lock(&a->mu);
        j->next = NULL;
        if (a->d_tail != NULL) {
            a->d_tail->next = j;
        } else {
            a->d_head = j;
        }
        a->d_tail = j;
        wake_loop(a);
    }
    pthread_mutex_unlock(&a->mu);
    tl_client = NULL; /* proxy_advisor_free frees it */
    return NULL;
}

/* ---------------------------------------------------------------------------
 * The loaded report (a job)
 * ------------------------------------------------------------------------- */

struct report_job {
    struct proxy_advisor_job j;
    int64_t rev;
    char hash[80];
    long status;
    char err[300];
};

static void report_run(struct proxy_advisor *a, struct proxy_advisor_job *j)
{
    struct report_job *rj = (struct report_job *)j;
    char body[200];
    unsigned ms = 200;

    snprintf(body, sizeof(body), "{\"revision\":%lld,\"hash\":\"%s\"}", (long long)rj->rev,
             rj->hash);
    for (int attempt = 0; attempt < 5; attempt++) {
        struct proxy_advisor_resp r;
        bool ok = proxy_advisor_call(a, "POST", "/loaded", body, strlen(body), 10, &r);
        rj->status = ok ? r.status : 0;
        snprintf(rj->err, sizeof(rj->err), "%.200s", ok ? (r.body != NULL ? r.body : "") : r.err);
        free(r.body);
        if (ok && r.status < 500) {
            return; /* recorded, or refused for a reason a retry cannot fix */
        }
        if (!nap(a, ms)) {
            return;
        }
        ms *= 2;
    }
}

static void report_done(struct proxy_advisor *a, struct proxy_advisor_job *j)
{
    struct report_job *rj = (struct report_job *)j;

    if (rj->status == 200) {
        proxy_log_note(a->srv->log, "advisor recorded revision %lld as loaded", (long long)rj->rev);
    } else {
        proxy_log_note(a->srv->log, "advisor did not record revision %lld as loaded (%ld): %s",
                       (long long)rj->rev, rj->status, rj->err);
    }
    free(rj);
}

/* ---------------------------------------------------------------------------
 * The loop side
 * ------------------------------------------------------------------------- */

static bool write_policy_file(const char *path, const char *yaml)
{
    char tmp[4300];
    size_t n = strlen(yaml);
    FILE *f;
    bool ok;

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "we");
    if (f == NULL) {
        return false;
    }
    ok = fwrite(yaml, 1, n, f) == n;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        (void)unlink(tmp);
        return false;
    }
    return true;
}

static void set_loaded(struct proxy_advisor *a, int64_t rev)
{
    pthread_mutex_lock(&a->mu);
    a->loaded_rev = rev;
    pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->mu);
}

/* Tell the advisor which revision was loaded with which hash ('local'),
 * off the loop. A refused revision is reported with the hash its text has,
 * which the advisor refuses (409) and logs. */
static void report(struct proxy_advisor *a, int64_t rev, const char *local)
{
    struct report_job *rj = pv_calloc(1, sizeof(*rj));

    if (rj == NULL) {
        return;
    }
    rj->j.run = report_run;
    rj->j.done = report_done;
    rj->rev = rev;
    snprintf(rj->hash, sizeof(rj->hash), "%s", local);
    if (!proxy_advisor_submit(a, &rj->j)) {
        proxy_log_note(a->srv->log, "advisor revision %lld: the loaded report was not queued",
                       (long long)rev);
        free(rj);
    }
}

/* False when 'yaml' loads and its policy's hash (into 'local') is not
 * 'hash': the revision's text is not the policy the advisor's revision
 * records, so it is never enforced (docs/proxy.md#advisor). A text that
 * does not load is left to the reload, which quarantines. */
static bool backed(const char *yaml, const char *hash, char local[65])
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p =
        d != NULL ? model_policy_load("advisor", yaml, strlen(yaml), MODEL_FMT_YAML, d) : NULL;
    bool ok = p == NULL || !pv_ok(model_policy_sha256(p, local)) || strcmp(local, hash) == 0;

    model_policy_free(p);
    model_diags_free(d);
    return ok;
}

/* Revision 'rev' is not enforced: the one in force stays, loudly. */
static void refuse(struct proxy_advisor *a, int64_t rev, const char *hash, const char *local)
{
    struct proxy_server *srv = a->srv;

    srv->metrics.advisor_refused++;
    srv->metrics.advisor_refused_rev = rev;
    proxy_log_note(srv->log,
                   "WARNING: advisor revision %lld refused: its policy hashes to %s, not to the "
                   "revision's hash %s (the advisor's store was changed?); revision %lld stays "
                   "in force",
                   (long long)rev, local, hash, (long long)a->applied_rev);
    report(a, rev, local);
}

/* Enforce revision 'rev' (YAML stolen). */
static void apply(struct proxy_advisor *a, int64_t rev, const char *hash, char *yaml)
{
    struct proxy_server *srv = a->srv;
    const char *path = srv->cfg->policy_path;
    const struct model_policy *m;
    char why[96];
    char local[65] = "";

    if (!backed(yaml, hash, local)) {
        refuse(a, rev, hash, local);
        free(yaml);
        return;
    }
    snprintf(why, sizeof(why), "advisor revision %lld", (long long)rev);
    if (!write_policy_file(path, yaml)) {
        /* reloading a missing file fails closed: never the previous file */
        proxy_log_note(srv->log, "cannot write %s: %s", path, strerror(errno));
        (void)unlink(path);
    }
    proxy_server_reload(srv, why);
    m = proxy_policy_model(srv->policy);
    if (m == NULL) {
        /* quarantine: nothing is enforced, nothing is reported */
        free(yaml);
        PV_SAFE_FREE(a->yaml);
        a->applied_rev = 0;
        set_loaded(a, 0);
        return;
    }
    free(a->yaml);
    a->yaml = yaml;
    a->applied_rev = rev;
    set_loaded(a, rev);
    if (!pv_ok(model_policy_sha256(m, local))) {
        snprintf(local, sizeof(local), "%.64s", hash);
    }
    if (strcmp(local, hash) != 0) {
        proxy_log_note(srv->log,
                       "advisor revision %lld: the advisor's hash %s differs from the "
                       "loaded policy's %s (reported as loaded)",
                       (long long)rev, hash, local);
    }
    srv->metrics.advisor_refused_rev = 0;
    proxy_log_note(srv->log, "advisor revision %lld loaded (hash %s)", (long long)rev, local);
    report(a, rev, local);
}

static void set_enabled(struct proxy_advisor *a, bool on)
{
    char err[512];

    a->enabled = on;
    proxy_log_note(a->srv->log, "agent_policy_proposals_enabled is %s", on ? "on" : "off");
    if (on && proxy_skill_write(a->skill_path, err, sizeof(err)) != 0) {
        proxy_log_note(a->srv->log, "cannot write the agent skill: %s", err);
    }
}

static void run_done(struct proxy_advisor *a, struct proxy_advisor_job *d)
{
    while (d != NULL) {
        struct proxy_advisor_job *next = d->next;
        d->done(a, d);
        d = next;
    }
}

static void wake_cb(evutil_socket_t fd, short what, void *arg)
{
    struct proxy_advisor *a = arg;
    char drain[256];
    char *notes[NOTES_MAX];
    size_t nnotes;
    bool pol;
    int64_t rev;
    char hash[80];
    char *yaml;
    bool en_set;
    bool en;
    struct proxy_advisor_job *done;

    (void)what;
    while (read(fd, drain, sizeof(drain)) > 0) {
    }
    pthread_mutex_lock(&a->mu);
    nnotes = a->nnotes;
    memcpy(notes, a->notes, sizeof(notes));
    a->nnotes = 0;
    pol = a->slot_policy;
    rev = a->slot_rev;
    snprintf(hash, sizeof(hash), "%s", a->slot_hash);
    yaml = a->slot_yaml;
    a->slot_yaml = NULL;
    a->slot_policy = false;
    en_set = a->slot_enabled_set;
    en = a->slot_enabled;
    a->slot_enabled_set = false;
    done = a->d_head;
    a->d_head = a->d_tail = NULL;
    pthread_mutex_unlock(&a->mu);

    for (size_t i = 0; i < nnotes; i++) {
        proxy_log_note(a->srv->log, "WARNING: %s", notes[i]);
        free(notes[i]);
    }
    if (en_set) {
        set_enabled(a, en);
    }
    if (pol && yaml != NULL) {
        apply(a, rev, hash, yaml);
    } else {
        free(yaml);
    }
    run_done(a, done);
    proxy_server_log_touch(a->srv);
}

/* ---------------------------------------------------------------------------
 * Life cycle
 * ------------------------------------------------------------------------- */

struct proxy_local *proxy_advisor_local(const struct proxy_advisor *a)
{
    return a != NULL ? a->local : NULL;
}

int64_t proxy_advisor_applied_rev(const struct proxy_advisor *a)
{
    return a->applied_rev;
}

bool proxy_advisor_enabled(const struct proxy_advisor *a)
{
    return a != NULL && a->enabled;
}

const char *proxy_advisor_skill_path(const struct proxy_advisor *a)
{
    return a->skill_shown;
}

const char *proxy_advisor_policy_yaml(const struct proxy_advisor *a)
{
    if (a == NULL || a->yaml == NULL || proxy_policy_model(a->srv->policy) == NULL) {
        return NULL;
    }
    return a->yaml;
}

/* The replicas of cfg's --advisor URLs, in order; calls start at the first. */
static void set_urls(struct proxy_advisor *a, const struct proxy_config *cfg)
{
    for (size_t i = 0; i < cfg->nadvisor_urls && i < PROXY_ADVISORS_MAX; i++) {
        const char *u = cfg->advisor_urls[i];
        size_t ul = strlen(u);
        while (ul > 0 && u[ul - 1] == '/') {
            ul--;
        }
        snprintf(a->url[i], sizeof(a->url[i]), "%.*s", (int)ul, u);
        snprintf(a->base[i], sizeof(a->base[i]), "%s/v1/sandboxes/%s", a->url[i], cfg->sandbox);
        a->nbase++;
    }
    atomic_init(&a->cur, 0);
    atomic_init(&a->sync_abort, false);
    a->poll_idx = -1;
}

/* The threads' clients, then the threads; false (logged) when either
 * could not be made. */
static bool start_threads(struct proxy_advisor *a)
{
    a->nclients = WORKERS + 1 + (a->nbase > 1 ? 1 : 0);
    for (size_t i = 0; i < a->nclients; i++) {
        a->clients[i] = hclient_new();
        if (a->clients[i] == NULL) {
            pv_log_errorx("cannot initialise advisor mode: its HTTP clients: %s",
                          pv_strerror(PV_ERR_NOMEM));
            return false;
        }
    }
    /* jansson seeds its hash function once; do it before any thread runs */
    json_object_seed(0);
    for (size_t i = 0; i < WORKERS; i++) {
        if (pthread_create(&a->workers[i], NULL, worker_main, a) != 0) {
            break;
        }
        a->nworkers++;
    }
    a->sync_started = pthread_create(&a->sync_tid, NULL, sync_main, a) == 0;
    if (a->nbase > 1) {
        a->probe_started = pthread_create(&a->probe_tid, NULL, probe_main, a) == 0;
    }
    if (a->nworkers == 0 || !a->sync_started || (a->nbase > 1 && !a->probe_started)) {
        pv_log_errorx("cannot start the advisor threads");
        return false;
    }
    return true;
}

struct proxy_advisor *proxy_advisor_new(struct proxy_server *srv)
{
    const struct proxy_config *cfg = srv->cfg;
    struct proxy_advisor *a = pv_calloc(1, sizeof(*a));
    pthread_condattr_t ca;
    int p[2];

    if (a == NULL) {
        pv_log_errorx("out of memory");
        return NULL;
    }
    a->srv = srv;
    a->wake_r = a->wake_w = -1;
    atomic_init(&a->stop, false);
    pthread_mutex_init(&a->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&a->cond, &ca);
    pthread_cond_init(&a->qcond, &ca);
    pthread_condattr_destroy(&ca);
    set_urls(a, cfg);
    if (cfg->skill_dir != NULL) {
        snprintf(a->skill_path, sizeof(a->skill_path), "%s/policy_advisor.md", cfg->skill_dir);
    } else {
        snprintf(a->skill_path, sizeof(a->skill_path), "%s/skills/policy_advisor.md",
                 cfg->data_dir);
    }
    snprintf(a->skill_shown, sizeof(a->skill_shown), "%s",
             cfg->skill_shown != NULL ? cfg->skill_shown : a->skill_path);
    if (!read_token(a, cfg->token_file)) {
        proxy_advisor_free(a);
        return NULL;
    }
    if (cfg->nsandbox_addrs > 0) {
        struct pv_dynbuf b;
        pv_dynbuf_init(&b, 4096);
        pv_dynbuf_puts(&b, "{\"addresses\":[");
        for (size_t i = 0; i < cfg->nsandbox_addrs; i++) {
            /* checked as IP literals at start-up: nothing to escape */
            pv_dynbuf_putf(&b, "%s\"%s\"", i > 0 ? "," : "", cfg->sandbox_addrs[i]);
        }
        pv_dynbuf_puts(&b, "]}");
        a->reg_body = pv_dynbuf_finish(&b);
        if (a->reg_body == NULL) {
            pv_log_errorx("out of memory");
            proxy_advisor_free(a);
            return NULL;
        }
    }
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
        pv_log_errorx("pipe: %s", strerror(errno));
        proxy_advisor_free(a);
        return NULL;
    }
    a->wake_r = p[0];
    a->wake_w = p[1];
    a->ev_wake = event_new(srv->base, a->wake_r, EV_READ | EV_PERSIST, wake_cb, a);
    a->local = proxy_local_new(srv, a);
    a->denials = proxy_denials_new(srv, a);
    a->curl_ready = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
    if (a->ev_wake == NULL || a->local == NULL || a->denials == NULL ||
        event_add(a->ev_wake, NULL) != 0 || !a->curl_ready) {
        pv_log_errorx("cannot initialise advisor mode");
        proxy_advisor_free(a);
        return NULL;
    }
    if (!start_threads(a)) {
        proxy_advisor_free(a);
        return NULL;
    }
    proxy_log_note(srv->log,
                   "advisor mode: %s%s sandbox %s; fail-closed until the first "
                   "revision loads; skill %s",
                   a->url[0], a->nbase > 1 ? " (and replicas)" : "", cfg->sandbox, a->skill_path);
    for (size_t i = 1; i < a->nbase; i++) {
        proxy_log_note(srv->log, "advisor replica %zu: %s", i + 1, a->url[i]);
    }
    return a;
}

void proxy_advisor_free(struct proxy_advisor *a)
{
    struct proxy_advisor_job *done;
    struct proxy_advisor_job *left;

    if (a == NULL) {
        return;
    }
    pthread_mutex_lock(&a->mu);
    atomic_store(&a->stop, true);
    atomic_store(&a->sync_abort, true); /* under mu: sync_transfer() cannot clear it */
    pthread_cond_broadcast(&a->cond);
    pthread_cond_broadcast(&a->qcond);
    for (size_t i = 0; i < PV_ARRAY_LEN(a->clients); i++) {
        hclient_wakeup(a->clients[i]);
    }
    pthread_mutex_unlock(&a->mu);
    if (a->sync_started) {
        pthread_join(a->sync_tid, NULL);
    }
    if (a->probe_started) {
        pthread_join(a->probe_tid, NULL);
    }
    for (size_t i = 0; i < a->nworkers; i++) {
        pthread_join(a->workers[i], NULL);
    }
    /* completed and never-run jobs end on the loop thread (this one) */
    done = a->d_head;
    left = a->q_head;
    a->d_head = a->d_tail = a->q_head = a->q_tail = NULL;
    run_done(a, done);
    run_done(a, left);
    proxy_local_free(a->local);
    proxy_denials_free(a->denials);
    if (a->ev_wake != NULL) {
        event_free(a->ev_wake);
    }
    if (a->wake_r >= 0) {
        close(a->wake_r);
        close(a->wake_w);
    }
    for (size_t i = 0; i < a->nnotes; i++) {
        free(a->notes[i]);
    }
    free(a->slot_yaml);
    free(a->yaml);
    for (size_t i = 0; i < a->nclients; i++) {
        hclient_free(a->clients[i]);
    }
    if (a->curl_ready) {
        curl_global_cleanup();
    }
    pthread_cond_destroy(&a->cond);
    pthread_cond_destroy(&a->qcond);
    pthread_mutex_destroy(&a->mu);
    OPENSSL_cleanse(a->token, sizeof(a->token));
    free(a->reg_body);
    free(a);
}
