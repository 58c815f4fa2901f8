/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_listen.c - hearing the other replicas' commits
 *
 * Several advisors may share one PostgreSQL store (docs/scale-out.md
 * #replicas). What one of them commits, the others must notice at once:
 * a proxy's policy long-poll, an agent's /wait or the inbox's event
 * stream may be held by another replica than the one that approved. Each
 * write transaction's COMMIT sends a note (store.h "Replicas"); this
 * replica's listener thread waits on its own LISTEN connection and, for
 * each note:
 *  - updates the sandbox tokens it names ("sandbox:ID": the token digest
 *    read again, or dropped when the sandbox is gone; "sandboxes" or "*":
 *    all of them read again), so a sandbox created or rotated on one
 *    replica is recognised on every other;
 *  - calls advisor_changed(), the same wake-up a local commit makes:
 *    every long-poll re-reads the store and answers what is new.
 * Settings are read from the store per request and policies are cached by
 * hash, so neither can go stale. Notes of this replica's own commits wake
 * its long-polls a second time, which costs one store read each.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/proc/proc.h"
#include "advisor/store/store.h"
#include "common/pv_log.h"

#define LISTEN_POLL_MS 200

struct advisor_listen {
    struct advisor *a;
    struct store_listener *l;
    struct store *st; /* the listener thread's reads */
    pthread_t tid;
    bool stop; /* under a->change_mu */
    bool down; /* the database was unreachable (logged once) */
};

/* ===========================================================================
 * Applying a note
 * ========================================================================= */

struct id_set {
    struct advisor *a;
    int64_t *ids;
    size_t n;
    size_t cap;
    bool nomem;
};

static void reload_one(void *arg, const struct store_sandbox *sb)
{
    struct id_set *set = arg;

    if (!pv_ok(advisor_tokens_put(set->a->tokens, sb->token_sha256, sb->id))) {
        pv_log_warnx("sandbox %s: unreadable token digest; its token will not work", sb->name);
    }
    if (set->n == set->cap) {
        size_t cap = set->cap == 0 ? 64 : set->cap * 2;
        int64_t *v = pv_realloc(set->ids, cap * sizeof(*v));
        if (v == NULL) {
            set->nomem = true;
            return;
        }
        set->ids = v;
        set->cap = cap;
    }
    set->ids[set->n++] = sb->id;
}

static bool in_set(void *arg, int64_t id)
{
    const struct id_set *set = arg;

    for (size_t i = 0; i < set->n; i++) {
        if (set->ids[i] == id) {
            return true;
        }
    }
    return false;
}

/* Every sandbox's token read again; tokens of sandboxes gone are dropped. */
static void reload_all(struct advisor *a, struct store *st)
{
    struct id_set set = {.a = a};

    if (!pv_ok(store_sandbox_each(st, reload_one, &set))) {
        pv_log_warnx("replicas: cannot read the sandboxes again: %s", store_errmsg(st));
    } else if (!set.nomem) {
        advisor_tokens_keep(a->tokens, in_set, &set);
    }
    free(set.ids);
}

static void reload_id(struct advisor *a, struct store *st, int64_t id)
{
    struct store_sandbox sb;
    pv_result r = store_sandbox_get_id(st, id, &sb);

    if (pv_ok(r)) {
        if (!pv_ok(advisor_tokens_put(a->tokens, sb.token_sha256, sb.id))) {
            pv_log_warnx("sandbox %s: unreadable token digest; its token will not work", sb.name);
        }
        store_sandbox_clear(&sb);
    } else if (r.err == PV_ERR_NOTFOUND) {
        advisor_tokens_drop(a->tokens, id);
    } else {
        reload_all(a, st); /* a failed read: the next full read decides */
    }
}

void advisor_listen_apply(struct advisor *a, struct store *st, const char *payload)
{
    const char *p = payload;

    while (*p != '\0') {
        size_t n = strcspn(p, " ");
        if ((n == 1 && p[0] == '*') || (n == 9 && strncmp(p, "sandboxes", 9) == 0)) {
            reload_all(a, st);
        } else if (n > 8 && strncmp(p, "sandbox:", 8) == 0) {
            char num[24];
            char *end = NULL;
            long long id;
            snprintf(num, sizeof(num), "%.*s", (int)(n - 8 < 23 ? n - 8 : 23), p + 8);
            id = strtoll(num, &end, 10);
            if (end != NULL && *end == '\0' && id > 0) {
                reload_id(a, st, id);
            }
        }
        p += n;
        p += strspn(p, " ");
    }
    advisor_changed(a);
}

/* ===========================================================================
 * The thread
 * ========================================================================= */

static void on_note(void *arg, const char *payload)
{
    struct advisor_listen *l = arg;

    advisor_listen_apply(l->a, l->st, payload);
}

static bool stopping(struct advisor_listen *l)
{
    bool s;

    pthread_mutex_lock(&l->a->change_mu);
    s = l->stop;
    pthread_mutex_unlock(&l->a->change_mu);
    return s;
}

static void *listen_main(void *arg)
{
    struct advisor_listen *l = arg;

    while (!stopping(l)) {
        if (!pv_ok(store_listener_wait(l->l, LISTEN_POLL_MS, on_note, l))) {
            if (!l->down) {
                pv_log_warnx("replicas: the change notes' connection is down; long-polls wake "
                             "on their timeout until it is back");
            }
            l->down = true;
        } else if (l->down) {
            pv_log_info("replicas: the change notes' connection is back");
            l->down = false;
        }
    }
    return NULL;
}

struct advisor_listen *advisor_listen_start(struct advisor *a, char *err, size_t errlen)
{
    struct advisor_listen *l;

    err[0] = '\0';
    l = pv_calloc(1, sizeof(*l));
    if (l == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    l->a = a;
    l->l = store_listener_open(a->cfg.store, err, errlen);
    if (l->l == NULL) {
        free(l);
        return NULL; /* err "" on SQLite: nothing to listen to */
    }
    if (!pv_ok(store_open(a->cfg.store, &l->st, err, errlen))) {
        store_listener_close(l->l);
        free(l);
        return NULL;
    }
    /* LISTEN is on: what another replica commits from here on arrives as
     * a note. What it committed between this replica's first read of the
     * sandboxes and now would be missed without one more full read. */
    advisor_listen_apply(a, l->st, "*");
    if (pthread_create(&l->tid, NULL, listen_main, l) != 0) {
        snprintf(err, errlen, "cannot start the listener thread");
        store_close(l->st);
        store_listener_close(l->l);
        free(l);
        return NULL;
    }
    return l;
}

void advisor_listen_stop(struct advisor_listen *l)
{
    if (l == NULL) {
        return;
    }
    pthread_mutex_lock(&l->a->change_mu);
    l->stop = true;
    pthread_mutex_unlock(&l->a->change_mu);
    pthread_join(l->tid, NULL);
    store_close(l->st);
    store_listener_close(l->l);
    free(l);
}
