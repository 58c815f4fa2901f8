/* SPDX-License-Identifier: Apache-2.0 */
/* store_pg_pool.c - PostgreSQL connections shared by a process's handles
 *
 * A handle (struct store) is what a worker thread, the group writer or the
 * mapper keeps for its life; a connection is what the server counts
 * against max_connections. Each handle once owned a connection, so a
 * replica opened one per worker (64 by default) and two replicas did not
 * fit PostgreSQL's default of 100. Now the handles on one location share a
 * pool of at most store_set_connections() connections (STORE_PG_POOL_MAX
 * by default), whatever the number of handles: the dispatcher (store.c)
 * holds a connection for one call, from BEGIN to COMMIT or ROLLBACK, or
 * from a session lock to its unlock, and gives it back after. A worker
 * that waits on a long-poll holds none.
 *
 * A connection goes back to the pool only when it is idle and outside a
 * transaction; one the server dropped, or one a failed ROLLBACK left in a
 * transaction, is closed and a new one made when needed. A handle closed
 * while it holds a session lock closes its connection: the lock ends with
 * the session, never passes to the next handle that borrows it. A hold
 * that finds every connection busy waits for one, up to the wait bound,
 * then fails with a message that names the setting. A thread that already holds a
 * connection of the pool never waits for a second: two such threads could
 * each wait on the other's, so it fails at once instead.
 *
 * A handle that others wait on while they hold pooled connections - the
 * group writer (workers and the mapper wait for its commits) and the
 * mapper's session lock (held through a whole flush) - has a connection
 * of its own (store_open_own), outside the bound, so no circle of waits
 * can form through them.
 *
 * store_pg_open and store_pg_close (the back end's open and close) are
 * here: a handle's life is its place in a pool. The connections themselves
 * are made and closed by store_pg.c, which calls nothing here.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "advisor/store/store.h"
#include "advisor/store/store_int.h"
#include "common/pv_time.h"

struct store_pg_pool {
    struct store_pg_pool *next;
    char *uri;
    unsigned handles; /* handles in it */
    unsigned max;     /* connections at most */
    unsigned wait_ms; /* how long a hold waits for a busy pool */
    unsigned open;    /* connections made: idle + held + being made */
    bool ready;       /* a connection ran the migrations */
    bool own;         /* one handle's alone (store_open_own), not in the list */
    size_t nidle;
    struct store_pg **idle; /* 'max' slots */
    pthread_cond_t freed;
};

/* One lock for the list and every pool: it is held for a few instructions
 * per hold and release, never across a connect or a statement. */
static pthread_mutex_t pools_mu = PTHREAD_MUTEX_INITIALIZER;
static struct store_pg_pool *pools;
static unsigned pool_max = STORE_PG_POOL_MAX;
static unsigned pool_wait_ms = STORE_PG_POOL_WAIT_MS;
/* Connections of the shared pools the calling thread holds now (a
 * handle's own connection is not counted: waiting for a shared one while
 * holding it cannot close a circle, nothing else waits for it). */
static __thread unsigned thread_holds;

void store_set_connections(unsigned max, unsigned wait_ms)
{
    pthread_mutex_lock(&pools_mu);
    pool_max = max > 0 ? max : 1;
    pool_wait_ms = wait_ms;
    pthread_mutex_unlock(&pools_mu);
}

static void pool_free(struct store_pg_pool *p)
{
    for (size_t i = 0; i < p->nidle; i++) {
        store_pg_conn_free(p->idle[i]);
    }
    pthread_cond_destroy(&p->freed);
    free(p->idle);
    free(p->uri);
    free(p);
}

/* Called with pools_mu held. */
static struct store_pg_pool *pool_new(const char *uri, unsigned max)
{
    struct store_pg_pool *p = pv_calloc(1, sizeof(*p));
    pthread_condattr_t ca;

    if (p == NULL) {
        return NULL;
    }
    p->max = max;
    p->wait_ms = pool_wait_ms;
    p->uri = pv_strdup(uri);
    p->idle = pv_calloc(p->max, sizeof(*p->idle));
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->freed, &ca);
    pthread_condattr_destroy(&ca);
    if (p->uri == NULL || p->idle == NULL) {
        pool_free(p);
        return NULL;
    }
    return p;
}

/* Count 's' in the shared pool of 'uri' (made the first time), or give
 * it a pool of one of its own ('own'). */
static pv_result attach(struct store *s, const char *uri, bool own, char *err, size_t errlen)
{
    struct store_pg_pool *p = NULL;

    pthread_mutex_lock(&pools_mu);
    if (!own) {
        p = pools;
        while (p != NULL && strcmp(p->uri, uri) != 0) {
            p = p->next;
        }
    }
    if (p == NULL) {
        p = pool_new(uri, own ? 1 : pool_max);
        if (p == NULL) {
            pthread_mutex_unlock(&pools_mu);
            snprintf(err, errlen, "out of memory");
            PV_BAIL(PV_ERR_NOMEM);
        }
        p->own = own;
        if (!own) {
            p->next = pools;
            pools = p;
        }
    }
    p->handles++;
    s->pool = p;
    pthread_mutex_unlock(&pools_mu);
    return PV_RESULT_OK;
}

/* Wait for an idle connection or room for a new one; false (and the
 * reason in s->err) when the thread holds one already or the wait ran
 * out. Called and returns with pools_mu held. */
static bool wait_for_room(struct store *s, struct store_pg_pool *p)
{
    struct timespec until;
    bool timed = false;

    while (p->nidle == 0 && p->open >= p->max) {
        if (thread_holds > 0) {
            snprintf(s->err, sizeof(s->err),
                     "all %u database connections are in use, one of them by this thread "
                     "(raise store_connections)",
                     p->max);
            return false;
        }
        if (!timed) {
            pv_deadline(&until, CLOCK_MONOTONIC, p->wait_ms);
            timed = true;
        }
        if (pthread_cond_timedwait(&p->freed, &pools_mu, &until) == ETIMEDOUT && p->nidle == 0 &&
            p->open >= p->max) {
            snprintf(s->err, sizeof(s->err),
                     "all %u database connections stayed in use for %u ms (raise "
                     "store_connections)",
                     p->max, p->wait_ms);
            return false;
        }
    }
    return true;
}

pv_result store_pg_hold(struct store *s)
{
    struct store_pg_pool *p = s->pool;
    bool migrate;
    char err[sizeof(s->err)];

    if (s->holds > 0) {
        s->holds++;
        return PV_RESULT_OK;
    }
    PV_ENSURE(p != NULL, PV_ERR_INTERNAL);
    pthread_mutex_lock(&pools_mu);
    if (!wait_for_room(s, p)) {
        pthread_mutex_unlock(&pools_mu);
        PV_BAIL(PV_ERR_IO);
    }
    if (p->nidle > 0) {
        s->pg = p->idle[--p->nidle];
        pthread_mutex_unlock(&pools_mu);
    } else {
        p->open++;
        migrate = !p->ready;
        pthread_mutex_unlock(&pools_mu);
        if (!pv_ok(store_pg_conn_new(s, p->uri, migrate, err, sizeof(err)))) {
            snprintf(s->err, sizeof(s->err), "%s", err);
            pthread_mutex_lock(&pools_mu);
            p->open--;
            pthread_cond_signal(&p->freed);
            pthread_mutex_unlock(&pools_mu);
            PV_BAIL(PV_ERR_IO);
        }
        if (migrate) {
            pthread_mutex_lock(&pools_mu);
            p->ready = true;
            pthread_mutex_unlock(&pools_mu);
        }
    }
    s->holds = 1;
    if (!p->own) {
        thread_holds++;
    }
    return PV_RESULT_OK;
}

void store_pg_release(struct store *s)
{
    struct store_pg_pool *p = s->pool;
    struct store_pg *c = s->pg;
    bool keep;

    if (s->holds == 0 || --s->holds > 0) {
        return;
    }
    s->pg = NULL;
    if (!p->own && thread_holds > 0) {
        thread_holds--;
    }
    keep = c != NULL && PQstatus(c->conn) == CONNECTION_OK &&
           PQtransactionStatus(c->conn) == PQTRANS_IDLE;
    if (!keep) {
        store_pg_conn_free(c);
    }
    pthread_mutex_lock(&pools_mu);
    if (keep) {
        p->idle[p->nidle++] = c;
    } else {
        p->open--;
    }
    pthread_cond_signal(&p->freed);
    pthread_mutex_unlock(&pools_mu);
}

/* The handle joins the location's pool (or gets one of its own); a
 * connection is held now and the schema's version read on it (the first
 * connection of a pool migrates it), so a location that does not answer,
 * or a schema newer than this build, fails the open, not a later call. */
pv_result store_pg_open(const char *uri, bool own, struct store *s, char *err, size_t errlen)
{
    pv_result res;
    int64_t version;

    err[0] = '\0';
    PV_GUARD(attach(s, uri, own, err, errlen));
    if (!pv_ok(store_pg_hold(s))) {
        snprintf(err, errlen, "%s", s->err);
        PV_BAIL(PV_ERR_IO);
    }
    res = store_pg_version(s, &version, err, errlen);
    store_pg_release(s);
    return res;
}

/* The handle leaves its pool; the last to leave closes the idle
 * connections and the pool. */
void store_pg_close(struct store *s)
{
    struct store_pg_pool *p = s->pool;
    struct store_pg_pool **pp;

    if (p == NULL) {
        return;
    }
    if (s->holds > 0) {
        /* Closed while it holds a session lock (store_close rolled back
         * any transaction): the lock is this handle's, so its session
         * ends with it, as it did when a handle owned its connection. */
        struct store_pg *c = s->pg;
        s->pg = NULL;
        s->holds = 0;
        if (!p->own && thread_holds > 0) {
            thread_holds--;
        }
        store_pg_conn_free(c);
        pthread_mutex_lock(&pools_mu);
        p->open--;
        pthread_cond_signal(&p->freed);
    } else {
        pthread_mutex_lock(&pools_mu);
    }
    s->pool = NULL;
    if (--p->handles > 0) {
        pthread_mutex_unlock(&pools_mu);
        return;
    }
    if (!p->own) {
        pp = &pools;
        while (*pp != p) {
            pp = &(*pp)->next;
        }
        *pp = p->next;
    }
    pthread_mutex_unlock(&pools_mu);
    pool_free(p);
}

/* The handle's last error: kept on the handle, not the connection, so it
 * outlives the hold that met it. */
const char *store_pg_errmsg(const struct store *s)
{
    return s->err[0] != '\0' ? s->err : "no error";
}
