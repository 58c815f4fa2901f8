/* SPDX-License-Identifier: Apache-2.0 */
/* store_group.c - group commit: one writer thread, one fsync per group
 *
 * Submissions commit through one writer of its own connection (either
 * back end, store_open_own(): on PostgreSQL outside the shared pool, for
 * the threads that wait on it may hold pooled connections): each item
 * runs in a savepoint of the group's transaction, so a failing item leaves
 * the others' writes, and the group is one commit. Sits on the dispatcher (store.c) like any caller.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "advisor/store/store.h"
#include "advisor/store/store_int.h"

/* ===========================================================================
 * Group commit: one writer thread, one fsync per group
 * ========================================================================= */

struct group_item {
    struct group_item *next;
    pv_result (*fn)(struct store *st, void *arg);
    void *arg;
    pv_result res;
    bool done;
};

struct store_group {
    struct store *st;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work;
    pthread_cond_t done;
    struct group_item *head;
    struct group_item *tail;
    bool stop;
};

static void group_run(struct store_group *g, struct group_item *list)
{
    pv_result res = store_begin(g->st);

    for (struct group_item *it = list; it != NULL; it = it->next) {
        if (!pv_ok(res)) {
            it->res = res;
            continue;
        }
        if (!pv_ok(store_exec(g->st, "SAVEPOINT item"))) {
            it->res = pv_fail(PV_ERR_IO, __func__);
            continue;
        }
        it->res = it->fn(g->st, it->arg);
        if (!pv_ok(it->res)) {
            (void)store_exec(g->st, "ROLLBACK TO item");
        }
        (void)store_exec(g->st, "RELEASE item");
    }
    if (pv_ok(res)) {
        res = store_commit(g->st);
    }
    if (!pv_ok(res)) {
        /* Nothing of the group is on disk: every item fails. */
        for (struct group_item *it = list; it != NULL; it = it->next) {
            if (pv_ok(it->res)) {
                it->res = res;
            }
        }
    }
}

static void *group_main(void *arg)
{
    struct store_group *g = arg;

    pthread_mutex_lock(&g->mu);
    for (;;) {
        struct group_item *list;
        while (g->head == NULL && !g->stop) {
            pthread_cond_wait(&g->work, &g->mu);
        }
        if (g->head == NULL) {
            break;
        }
        list = g->head;
        g->head = NULL;
        g->tail = NULL;
        pthread_mutex_unlock(&g->mu);
        group_run(g, list);
        pthread_mutex_lock(&g->mu);
        for (struct group_item *it = list; it != NULL;) {
            struct group_item *next = it->next;
            it->done = true; /* the waiter may free it from here on */
            it = next;
        }
        pthread_cond_broadcast(&g->done);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

struct store_group *store_group_open(const char *dir, char *err, size_t errlen)
{
    struct store_group *g = pv_calloc(1, sizeof(*g));

    if (g == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    /* its own connection: the threads that wait for its commits may hold
     * pooled ones (store_open_own) */
    if (!pv_ok(store_open_own(dir, &g->st, err, errlen))) {
        free(g);
        return NULL;
    }
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->work, NULL);
    pthread_cond_init(&g->done, NULL);
    if (pthread_create(&g->thread, NULL, group_main, g) != 0) {
        snprintf(err, errlen, "cannot start the store's writer thread");
        store_close(g->st);
        free(g);
        return NULL;
    }
    return g;
}

void store_group_close(struct store_group *g)
{
    if (g == NULL) {
        return;
    }
    pthread_mutex_lock(&g->mu);
    g->stop = true;
    pthread_cond_signal(&g->work);
    pthread_mutex_unlock(&g->mu);
    pthread_join(g->thread, NULL);
    store_close(g->st);
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->work);
    pthread_cond_destroy(&g->done);
    free(g);
}

pv_result store_group_write(struct store_group *g, pv_result (*fn)(struct store *st, void *arg),
                            void *arg)
{
    struct group_item it = {.fn = fn, .arg = arg};

    pthread_mutex_lock(&g->mu);
    if (g->stop) {
        pthread_mutex_unlock(&g->mu);
        PV_BAIL(PV_ERR_IO);
    }
    /* 'it' lives on this stack while it is queued: the writer unlinks it
     * and sets 'done' before this function can return. */
    if (g->tail != NULL) {
        g->tail->next = &it;
    } else {
        /* cppcheck-suppress autoVariables ; unlinked before return (above) */
        g->head = &it;
    }
    /* cppcheck-suppress autoVariables ; unlinked before return (above) */
    g->tail = &it;
    pthread_cond_signal(&g->work);
    while (!it.done) {
        pthread_cond_wait(&g->done, &g->mu);
    }
    pthread_mutex_unlock(&g->mu);
    return it.res;
}
