/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_idq.c - binary identity off the event loop: one worker, batched scans
 *
 * Identifying a client reads /proc (sock_diag, every process's fd table, the
 * ancestor chain, hashes of new executables): milliseconds that must never
 * stall the event loop, which also serves /healthz and every other client.
 * One worker thread owns the identity cache (proxy_ident.c is used by no
 * other thread) and feeds jobs into its rolling scan: a job joins the lap
 * in progress and is resolved once every process has been read after it
 * joined (proxy_ident_roll_add/step), so a burst of new connections costs
 * one lap, and nothing is weakened: each socket's holder list is still
 * complete, and a job is only submitted once its connection sent a complete
 * request head (stalled connections cost nothing).
 *
 * Completed jobs go back to the loop through an eventfd; the loop hands each
 * identity to its connection (proxy_conn_identified) or drops it when the
 * connection went away meanwhile (proxy_idq_cancel cleared the job's
 * connection; only the loop reads or writes that field).
 */
#include "config.h"

#include <errno.h>
#include <event2/event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "proxy/proxy_int.h"

struct proxy_idq_job {
    struct proxy_ident_query q;
    struct proxy_conn *conn; /* loop only; NULL once cancelled */
    struct proxy_idq_job *next;
};

struct proxy_idq {
    struct proxy_ident_cache *cache; /* worker only */
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    struct proxy_idq_job *pending; /* FIFO: head, tail */
    struct proxy_idq_job *pending_tail;
    struct proxy_idq_job *done;
    int efd;
    struct event *ev;
    atomic_size_t pins; /* published by the worker after each step */
};

/* Worker side of a resolved job: onto the done list (caller holds no lock). */
struct finished {
    struct proxy_idq_job *head;
    size_t n;
};

static void job_done(void *tag, struct proxy_identity *id, void *arg)
{
    struct proxy_idq_job *j = tag;
    struct finished *f = arg;

    j->q.id = id;
    j->next = f->head;
    f->head = j;
    f->n++;
}

static void *worker(void *arg)
{
    struct proxy_idq *q = arg;
    bool busy = false; /* sockets in flight in the rolling scan */

    for (;;) {
        struct proxy_idq_job *take;
        struct finished f = {NULL, 0};
        uint64_t one = 1;

        pthread_mutex_lock(&q->mu);
        while (!q->stop && q->pending == NULL && !busy) {
            pthread_cond_wait(&q->cv, &q->mu);
        }
        if (q->stop) {
            pthread_mutex_unlock(&q->mu);
            break;
        }
        take = q->pending;
        q->pending = NULL;
        q->pending_tail = NULL;
        pthread_mutex_unlock(&q->mu);

        /* new sockets join the lap in progress (proxy_ident.c) */
        while (take != NULL) {
            struct proxy_idq_job *j = take;
            take = j->next;
            j->next = NULL;
            proxy_ident_roll_add(q->cache, &j->q, j, job_done, &f);
        }
        busy = proxy_ident_roll_step(q->cache, job_done, &f);
        atomic_store(&q->pins, proxy_ident_pins(q->cache));
        if (f.n == 0) {
            continue;
        }
        pthread_mutex_lock(&q->mu);
        while (f.head != NULL) {
            struct proxy_idq_job *j = f.head;
            f.head = j->next;
            j->next = q->done;
            q->done = j;
        }
        pthread_mutex_unlock(&q->mu);
        (void)!write(q->efd, &one, sizeof(one));
    }
    return NULL;
}

/* On the loop: hand finished identities to their connections. */
static void done_cb(evutil_socket_t fd, short what, void *arg)
{
    struct proxy_idq *q = arg;
    struct proxy_idq_job *list;
    struct proxy_idq_job *rev = NULL;
    uint64_t v;

    (void)what;
    (void)!read(fd, &v, sizeof(v));
    pthread_mutex_lock(&q->mu);
    list = q->done;
    q->done = NULL;
    pthread_mutex_unlock(&q->mu);
    /* the done list is LIFO: restore submission order */
    while (list != NULL) {
        struct proxy_idq_job *j = list;
        list = j->next;
        j->next = rev;
        rev = j;
    }
    while (rev != NULL) {
        struct proxy_idq_job *j = rev;
        rev = j->next;
        if (j->conn != NULL) {
            proxy_conn_identified(j->conn, j->q.id);
        } else {
            proxy_identity_unref(j->q.id);
        }
        free(j);
    }
}

struct proxy_idq *proxy_idq_new(struct event_base *base, struct proxy_ident_cache *cache)
{
    struct proxy_idq *q = pv_calloc(1, sizeof(*q));

    if (q == NULL) {
        proxy_ident_cache_free(cache);
        return NULL;
    }
    q->cache = cache;
    q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    if (cache == NULL || q->efd < 0) {
        proxy_idq_free(q);
        return NULL;
    }
    q->ev = event_new(base, q->efd, EV_READ | EV_PERSIST, done_cb, q);
    if (q->ev == NULL || event_add(q->ev, NULL) != 0 ||
        pthread_create(&q->thread, NULL, worker, q) != 0) {
        proxy_idq_free(q);
        return NULL;
    }
    q->started = true;
    return q;
}

void proxy_idq_free(struct proxy_idq *q)
{
    if (q == NULL) {
        return;
    }
    if (q->started) {
        pthread_mutex_lock(&q->mu);
        q->stop = true;
        pthread_cond_signal(&q->cv);
        pthread_mutex_unlock(&q->mu);
        pthread_join(q->thread, NULL);
    }
    for (struct proxy_idq_job *l = q->pending; l != NULL;) {
        struct proxy_idq_job *j = l;
        l = j->next;
        free(j);
    }
    for (struct proxy_idq_job *l = q->done; l != NULL;) {
        struct proxy_idq_job *j = l;
        l = j->next;
        proxy_identity_unref(j->q.id);
        free(j);
    }
    if (q->ev != NULL) {
        event_free(q->ev);
    }
    if (q->efd >= 0) {
        close(q->efd);
    }
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
    proxy_ident_cache_free(q->cache);
    free(q);
}

struct proxy_idq_job *proxy_idq_submit(struct proxy_idq *q, struct proxy_conn *c,
                                       const struct sockaddr_storage *peer,
                                       const struct sockaddr_storage *local)
{
    struct proxy_idq_job *j = pv_calloc(1, sizeof(*j));

    if (j == NULL) {
        return NULL;
    }
    j->q.peer = *peer;
    j->q.local = *local;
    j->conn = c;
    pthread_mutex_lock(&q->mu);
    if (q->pending_tail != NULL) {
        q->pending_tail->next = j;
    } else {
        q->pending = j;
    }
    q->pending_tail = j;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
    return j;
}

size_t proxy_idq_pins(struct proxy_idq *q)
{
    return atomic_load(&q->pins);
}

void proxy_idq_cancel(struct proxy_idq_job *j)
{
    if (j != NULL) {
        j->conn = NULL;
    }
}
