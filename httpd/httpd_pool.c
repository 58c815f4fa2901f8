/* SPDX-License-Identifier: Apache-2.0 */
/* httpd_pool.c - the worker pool: N threads, one per-thread state each
 *
 * A FIFO of jobs under one mutex. Each thread creates its own state on start
 * (the prover's Z3 session, the advisor's store handle) and frees it on exit,
 * so such a state never crosses threads. Admission is bounded: submit refuses a job once
 * 'limit' jobs are queued or running, which the HTTP layer turns into 503.
 * Shutdown runs every job still queued (cancelled ones with cancelled = true)
 * so every suspended connection is resumed before the threads are joined.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>

#include "common/pv_log.h"
#include "httpd/httpd.h"

struct httpd_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct httpd_job *head;
    struct httpd_job *tail;
    unsigned load; /* queued + running */
    bool stopping;
    bool cancel;
    void *(*worker_new)(void *arg);
    void (*worker_free)(void *worker);
    void *arg;
    pthread_t *threads;
    unsigned nthreads;
};

static void *worker_main(void *arg)
{
    struct httpd_pool *p = arg;
    void *w = p->worker_new != NULL ? p->worker_new(p->arg) : NULL;

    for (;;) {
        struct httpd_job *job;
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
        if (w == NULL && p->worker_new != NULL) {
            /* the state could not be made before (out of memory, a store
             * that was down): try again, or this thread would answer every
             * job of its life with the failure of one moment */
            w = p->worker_new(p->arg);
        }
        job->run(job, w, cancelled);

        pthread_mutex_lock(&p->mu);
        p->load--;
        pthread_mutex_unlock(&p->mu);
    }
    if (p->worker_free != NULL) {
        p->worker_free(w);
    }
    return NULL;
}

struct httpd_pool *httpd_pool_new(unsigned n, void *(*worker_new)(void *arg),
                                  void (*worker_free)(void *worker), void *arg)
{
    struct httpd_pool *p = pv_calloc(1, sizeof(*p));

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
    p->worker_new = worker_new;
    p->worker_free = worker_free;
    p->arg = arg;
    for (unsigned i = 0; i < n; i++) {
        if (pthread_create(&p->threads[i], NULL, worker_main, p) != 0) {
            pv_log_errorx("%s: pthread_create failed", __func__);
            break;
        }
        p->nthreads++;
    }
    if (p->nthreads == 0) {
        httpd_pool_free(p);
        return NULL;
    }
    return p;
}

bool httpd_pool_submit(struct httpd_pool *p, struct httpd_job *job, unsigned limit)
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

unsigned httpd_pool_load(struct httpd_pool *p)
{
    unsigned n;
    pthread_mutex_lock(&p->mu);
    n = p->load;
    pthread_mutex_unlock(&p->mu);
    return n;
}

void httpd_pool_cancel_queued(struct httpd_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->cancel = true;
    pthread_mutex_unlock(&p->mu);
}

void httpd_pool_free(struct httpd_pool *p)
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
