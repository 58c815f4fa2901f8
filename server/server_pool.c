/* SPDX-License-Identifier: Apache-2.0 */
/* server_pool.c - the prover worker pool: N threads, one prover session each
 *
 * A FIFO of jobs under one mutex. Each thread creates its own server_worker
 * (and so its own Z3 context) on start and frees it on exit, so a context
 * never crosses threads. Admission is bounded: submit refuses a job once
 * 'limit' jobs are queued or running, which the HTTP layer turns into 503.
 * Shutdown runs every job still queued (cancelled ones with cancelled = true)
 * so every suspended connection is resumed before the threads are joined.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>

#include "common/pv_log.h"
#include "server/server.h"

struct server_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct server_job *head;
    struct server_job *tail;
    unsigned load; /* queued + running */
    bool stopping;
    bool cancel;
    struct server_ctx *ctx;
    pthread_t *threads;
    unsigned nthreads;
};

static void *worker_main(void *arg)
{
    struct server_pool *p = arg;
    struct server_worker *w = server_worker_new(p->ctx);

    if (w == NULL) {
        pv_log_warnx("%s: cannot create a prover session; this worker answers 500", __func__);
    }
    for (;;) {
        struct server_job *job;
        bool cancelled;

        pthread_mutex_lock(&p->mu);
        while (p->head == NULL && !p->stopping) {
            pthread_cond_wait(&p->cv, &p->mu);
        }
        job = p->head;
        if (job == NULL) {
            pthread_mutex_unlock(&p->mu);
            break;
        }
        p->head = job->next;
        if (p->head == NULL) {
            p->tail = NULL;
        }
        cancelled = p->cancel;
        pthread_mutex_unlock(&p->mu);

        job->next = NULL;
        job->run(job, w, cancelled);

        pthread_mutex_lock(&p->mu);
        p->load--;
        pthread_mutex_unlock(&p->mu);
    }
    server_worker_free(w);
    return NULL;
}

struct server_pool *server_pool_new(struct server_ctx *ctx, unsigned n)
{
    struct server_pool *p = pv_calloc(1, sizeof(*p));

    if (p == NULL) {
        return NULL;
    }
    p->threads = pv_calloc(n, sizeof(*p->threads));
    if (p->threads == NULL) {
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->ctx = ctx;
    for (unsigned i = 0; i < n; i++) {
        if (pthread_create(&p->threads[i], NULL, worker_main, p) != 0) {
            pv_log_errorx("%s: pthread_create failed", __func__);
            break;
        }
        p->nthreads++;
    }
    if (p->nthreads == 0) {
        server_pool_free(p);
        return NULL;
    }
    return p;
}

bool server_pool_submit(struct server_pool *p, struct server_job *job, unsigned limit)
{
    pthread_mutex_lock(&p->mu);
    if (p->stopping || p->load >= limit) {
        pthread_mutex_unlock(&p->mu);
        return false;
    }
    job->next = NULL;
    if (p->tail != NULL) {
        p->tail->next = job;
    } else {
        p->head = job;
    }
    p->tail = job;
    p->load++;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return true;
}

unsigned server_pool_load(struct server_pool *p)
{
    unsigned n;
    pthread_mutex_lock(&p->mu);
    n = p->load;
    pthread_mutex_unlock(&p->mu);
    return n;
}

void server_pool_cancel_queued(struct server_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->cancel = true;
    pthread_mutex_unlock(&p->mu);
}

void server_pool_free(struct server_pool *p)
{
    if (p == NULL) {
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->stopping = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->nthreads; i++) {
        pthread_join(p->threads[i], NULL);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->threads);
    free(p);
}
