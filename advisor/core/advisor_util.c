/* SPDX-License-Identifier: Apache-2.0 */
/* advisor_util.c - ids, clocks, digests, the sandbox token table, wake-ups
 *
 * Each worker thread owns its store handle and prover client.
 * Sandbox tokens are never stored: the store keeps their SHA-256, and this
 * table maps digests to sandbox ids for the authorize callback, which runs
 * on the HTTP polling thread and so must not touch the database. Lookups
 * hash the presented token and compare digests in constant time.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "advisor/core/core.h"
#include "audit/audit.h"
#include "advisor/store/store.h"
#include "common/pv_log.h"
#include "model/model.h"

void advisor_ids_add(struct advisor_ids *x, const char *id)
{
    char **ids = pv_realloc(x->ids, (x->n + 1) * sizeof(*ids));

    if (ids == NULL) {
        x->oom = true;
        return;
    }
    x->ids = ids;
    x->ids[x->n] = pv_strdup(id);
    if (x->ids[x->n] == NULL) {
        x->oom = true;
        return;
    }
    x->n++;
}

void advisor_ids_free(struct advisor_ids *x)
{
    for (size_t i = 0; i < x->n; i++) {
        free(x->ids[i]);
    }
    free(x->ids);
    memset(x, 0, sizeof(*x));
}

int64_t advisor_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

pv_result advisor_uuid(char out[37])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char b[16];
    size_t o = 0;

    PV_GUARD_OSSL(RAND_bytes(b, (int)sizeof(b)), PV_ERR_INTERNAL);
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    for (size_t i = 0; i < sizeof(b); i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) {
            out[o++] = '-';
        }
        out[o++] = hex[b[i] >> 4];
        out[o++] = hex[b[i] & 15];
    }
    out[o] = '\0';
    return PV_RESULT_OK;
}

void advisor_sha256_hex(const void *data, size_t len, char out[65])
{
    audit_sha256_hex(data, len, out);
}

char *advisor_one_line(const char *s)
{
    size_t n = strlen(s);
    char *out = pv_malloc(n + 1);
    size_t o = 0;
    const char *p = s;

    if (out == NULL) {
        return NULL;
    }
    while (*p != '\0') {
        const char *e = strchr(p, '\n');
        const char *a = p;
        const char *b;
        if (e == NULL) {
            e = p + strlen(p);
        }
        b = e;
        while (a < b && (*a == ' ' || *a == '\t' || *a == '\r')) {
            a++;
        }
        while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\r')) {
            b--;
        }
        if (b > a) {
            if (o > 0) {
                /* "; " replaces at least one '\n' and the trimmed blanks, so
                 * the output never outgrows the input. */
                out[o++] = ';';
                out[o++] = ' ';
            }
            memcpy(out + o, a, (size_t)(b - a));
            o += (size_t)(b - a);
        }
        p = *e == '\n' ? e + 1 : e;
    }
    out[o] = '\0';
    return out;
}

bool advisor_name_valid(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 63) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && (i == 0 || (c != '-' && c != '_' && c != '.'))) {
            return false;
        }
    }
    return true;
}

char *advisor_json_canonical(const json_t *j)
{
    return json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

/* ===========================================================================
 * Sandbox tokens
 * ========================================================================= */

struct token_entry {
    unsigned char md[SHA256_DIGEST_LENGTH];
    int64_t id;
};

struct advisor_tokens {
    pthread_rwlock_t lock;
    struct token_entry *v;
    size_t n;
    size_t cap;
};

struct advisor_tokens *advisor_tokens_new(void)
{
    struct advisor_tokens *t = pv_calloc(1, sizeof(*t));

    if (t != NULL) {
        pthread_rwlock_init(&t->lock, NULL);
    }
    return t;
}

void advisor_tokens_free(struct advisor_tokens *t)
{
    if (t == NULL) {
        return;
    }
    pthread_rwlock_destroy(&t->lock);
    free(t->v);
    free(t);
}

static bool unhex(const char *s, unsigned char *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v = 0;
        for (size_t k = 0; k < 2; k++) {
            char c = s[2 * i + k];
            v <<= 4;
            if (c >= '0' && c <= '9') {
                v |= (unsigned)(c - '0');
            } else if (c >= 'a' && c <= 'f') {
                v |= (unsigned)(c - 'a' + 10);
            } else {
                return false;
            }
        }
        out[i] = (unsigned char)v;
    }
    return s[2 * n] == '\0';
}

/* Room for one more entry (the write lock held). */
static bool grow(struct advisor_tokens *t)
{
    size_t cap;
    struct token_entry *v;

    if (t->n < t->cap) {
        return true;
    }
    cap = t->cap == 0 ? 16 : t->cap * 2;
    v = pv_realloc(t->v, cap * sizeof(*v));
    if (v == NULL) {
        return false;
    }
    t->v = v;
    t->cap = cap;
    return true;
}

pv_result advisor_tokens_put(struct advisor_tokens *t, const char *sha256hex, int64_t id)
{
    struct token_entry e;

    PV_ENSURE(unhex(sha256hex, e.md, sizeof(e.md)), PV_ERR_PARSE);
    e.id = id;
    pthread_rwlock_wrlock(&t->lock);
    for (size_t i = 0; i < t->n; i++) {
        if (t->v[i].id == id) {
            t->v[i] = e;
            pthread_rwlock_unlock(&t->lock);
            return PV_RESULT_OK;
        }
    }
    if (!grow(t)) {
        pthread_rwlock_unlock(&t->lock);
        PV_BAIL(PV_ERR_NOMEM);
    }
    t->v[t->n++] = e;
    pthread_rwlock_unlock(&t->lock);
    return PV_RESULT_OK;
}

pv_result advisor_tokens_reserve(struct advisor_tokens *t)
{
    bool ok;

    pthread_rwlock_wrlock(&t->lock);
    ok = grow(t);
    pthread_rwlock_unlock(&t->lock);
    PV_ENSURE(ok, PV_ERR_NOMEM);
    return PV_RESULT_OK;
}

void advisor_tokens_drop(struct advisor_tokens *t, int64_t id)
{
    pthread_rwlock_wrlock(&t->lock);
    for (size_t i = 0; i < t->n; i++) {
        if (t->v[i].id == id) {
            t->v[i] = t->v[--t->n];
            break;
        }
    }
    pthread_rwlock_unlock(&t->lock);
}

void advisor_tokens_keep(struct advisor_tokens *t, bool (*keep)(void *arg, int64_t id), void *arg)
{
    pthread_rwlock_wrlock(&t->lock);
    for (size_t i = 0; i < t->n;) {
        if (keep(arg, t->v[i].id)) {
            i++;
        } else {
            t->v[i] = t->v[--t->n];
        }
    }
    pthread_rwlock_unlock(&t->lock);
}

int64_t advisor_tokens_find(struct advisor_tokens *t, const char *bearer, size_t len)
{
    unsigned char md[SHA256_DIGEST_LENGTH];
    int64_t id = -1;

    if (len < HTTPD_TOKEN_MIN || len > HTTPD_TOKEN_MAX) {
        return -1;
    }
    SHA256((const unsigned char *)bearer, len, md);
    pthread_rwlock_rdlock(&t->lock);
    /* Every entry is compared, so the time does not say which one matched. */
    for (size_t i = 0; i < t->n; i++) {
        if (CRYPTO_memcmp(md, t->v[i].md, sizeof(md)) == 0) {
            id = t->v[i].id;
        }
    }
    pthread_rwlock_unlock(&t->lock);
    return id;
}

/* ===========================================================================
 * Wake-ups and stripes
 * ========================================================================= */

void advisor_changed(struct advisor *a)
{
    pthread_mutex_lock(&a->change_mu);
    a->changes++;
    pthread_cond_broadcast(&a->change_cv);
    pthread_mutex_unlock(&a->change_mu);
}

uint64_t advisor_change_count(struct advisor *a)
{
    uint64_t n;

    pthread_mutex_lock(&a->change_mu);
    n = a->changes;
    pthread_mutex_unlock(&a->change_mu);
    return n;
}

bool advisor_stopping(struct advisor *a)
{
    bool s;

    pthread_mutex_lock(&a->change_mu);
    s = a->stopping;
    pthread_mutex_unlock(&a->change_mu);
    return s;
}

uint64_t advisor_wait_change(struct advisor *a, uint64_t seen, int64_t deadline_ms)
{
    struct timespec ts = {.tv_sec = deadline_ms / 1000,
                          .tv_nsec = (long)(deadline_ms % 1000) * 1000000L};
    uint64_t n;

    pthread_mutex_lock(&a->change_mu);
    while (a->changes == seen && !a->stopping) {
        if (pthread_cond_timedwait(&a->change_cv, &a->change_mu, &ts) == ETIMEDOUT) {
            break;
        }
    }
    n = a->changes;
    pthread_mutex_unlock(&a->change_mu);
    return n;
}

/* ===========================================================================
 * Long-poll budgets
 *
 * A long-poll holds a worker thread for up to LONGPOLL_MAX_S. Each kind has
 * its own budget, so agents' /wait and the inbox's event waits can never
 * refuse a proxy's policy sync, and a sandbox token holds at most a share
 * of a budget. W/2 + W/4 + W/8 leaves an eighth of the workers for the
 * short requests (a reviewer's undo among them). Slots of clients that went
 * away come back within ADVISOR_HOLD_CHECK_MS (advisor_hold_wait).
 * ========================================================================= */

unsigned advisor_policy_longpolls_max(unsigned workers)
{
    unsigned rest = workers / 4 + workers / 8 + 1;

    return workers > rest ? workers - rest : 1;
}

unsigned advisor_hold_cap(const struct advisor *a, enum advisor_hold_kind kind)
{
    unsigned w = a->cfg.http.workers;
    unsigned cap = 0;

    switch (kind) {
    case ADVISOR_HOLD_POLICY:
        /* the operator's figure (config policy_longpolls), within bounds */
        cap = a->cfg.policy_longpolls > 0 ? a->cfg.policy_longpolls : w / 2;
        if (cap > advisor_policy_longpolls_max(w)) {
            cap = advisor_policy_longpolls_max(w);
        }
        break;
    case ADVISOR_HOLD_WAIT:
        cap = w / 4;
        break;
    case ADVISOR_HOLD_EVENTS:
        cap = w / 8;
        break;
    }
    return cap > 0 ? cap : 1;
}

unsigned advisor_hold_share(const struct advisor *a, enum advisor_hold_kind kind)
{
    unsigned share = 0;

    switch (kind) {
    case ADVISOR_HOLD_POLICY:
        share = ADVISOR_POLICY_SHARE;
        break;
    case ADVISOR_HOLD_WAIT:
        share = advisor_hold_cap(a, kind) / 4;
        break;
    case ADVISOR_HOLD_EVENTS:
        share = advisor_hold_cap(a, kind);
        break;
    }
    return share > 0 ? share : 1;
}

/* The oldest policy long-poll of a sandbox that holds more than one: what
 * a full policy budget takes back for a sandbox that holds none, so that
 * every sandbox keeps one (the list is newest first). */
static struct advisor_hold *surplus_policy_hold(struct advisor *a)
{
    struct advisor_hold *victim = NULL;

    for (struct advisor_hold *o = a->holds; o != NULL; o = o->next) {
        if (o->kind != ADVISOR_HOLD_POLICY || o->superseded || o->principal == 0) {
            continue;
        }
        for (struct advisor_hold *n = a->holds; n != o; n = n->next) {
            if (n->kind == ADVISOR_HOLD_POLICY && !n->superseded && n->principal == o->principal) {
                victim = o;
                break;
            }
        }
    }
    return victim;
}

unsigned advisor_hold_begin(struct advisor *a, struct advisor_hold *h, enum advisor_hold_kind kind,
                            const struct httpd_req *rq)
{
    unsigned mine = 0;
    unsigned live = 0;
    struct advisor_hold *oldest = NULL;
    struct advisor_hold *victim = NULL;
    unsigned status = 0;

    memset(h, 0, sizeof(*h));
    if ((unsigned)kind >= ADVISOR_HOLD_KINDS) {
        return 503; /* not a kind: nothing to count it in */
    }
    h->rq = rq;
    h->kind = kind;
    h->principal = rq->principal;
    pthread_mutex_lock(&a->change_mu);
    for (struct advisor_hold *o = a->holds; o != NULL; o = o->next) {
        if (o->kind != kind || o->superseded) {
            continue;
        }
        /* superseded ones are on their way out: they count in held[], not here */
        live++;
        if (h->principal != 0 && o->principal == h->principal) {
            mine++;
            oldest = o; /* the list is newest first */
        }
    }
    if (kind == ADVISOR_HOLD_POLICY && h->principal != 0) {
        /* The newest policy long-poll of a sandbox always gets in: past the
         * sandbox's share, or with the budget full, the sandbox's oldest
         * answers now and its slot passes to this one; a sandbox that holds
         * none takes the oldest of a sandbox that holds two. */
        if (oldest != NULL &&
            (mine >= advisor_hold_share(a, kind) || live >= advisor_hold_cap(a, kind))) {
            victim = oldest;
        } else if (live >= advisor_hold_cap(a, kind)) {
            victim = surplus_policy_hold(a);
            status = victim != NULL ? 0 : 503;
        }
    } else if (oldest != NULL && mine >= advisor_hold_share(a, kind)) {
        status = 429;
    } else if (live >= advisor_hold_cap(a, kind)) {
        status = 503;
    }
    if (victim != NULL) {
        victim->superseded = true;
        pthread_cond_broadcast(&a->change_cv);
    }
    if (status == 0) {
        a->held[kind]++;
        h->next = a->holds;
        a->holds = h;
    }
    pthread_mutex_unlock(&a->change_mu);
    return status;
}

void advisor_hold_end(struct advisor *a, struct advisor_hold *h)
{
    pthread_mutex_lock(&a->change_mu);
    for (struct advisor_hold **pp = &a->holds; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == h) {
            *pp = h->next;
            a->held[h->kind]--;
            break;
        }
    }
    pthread_mutex_unlock(&a->change_mu);
}

bool advisor_hold_wait(struct advisor *a, struct advisor_hold *h, uint64_t seen,
                       int64_t deadline_ms)
{
    bool gone = false;
    bool superseded;

    if (h == NULL) {
        (void)advisor_wait_change(a, seen, deadline_ms);
        return true;
    }
    pthread_mutex_lock(&a->change_mu);
    while (a->changes == seen && !a->stopping && !h->superseded && !gone) {
        int64_t now = advisor_now_ms();
        int64_t until = now + ADVISOR_HOLD_CHECK_MS;
        struct timespec ts;
        if (now >= deadline_ms) {
            break;
        }
        if (until > deadline_ms) {
            until = deadline_ms;
        }
        ts.tv_sec = until / 1000;
        ts.tv_nsec = (long)(until % 1000) * 1000000L;
        if (pthread_cond_timedwait(&a->change_cv, &a->change_mu, &ts) == ETIMEDOUT) {
            /* poll(2) with no timeout, outside the lock every holder shares */
            pthread_mutex_unlock(&a->change_mu);
            gone = httpd_req_gone(h->rq);
            pthread_mutex_lock(&a->change_mu);
        }
    }
    superseded = h->superseded;
    pthread_mutex_unlock(&a->change_mu);
    if (gone) {
        h->ended = "client_gone";
    } else if (superseded) {
        h->ended = "superseded";
    }
    return h->ended == NULL;
}

pthread_mutex_t *advisor_stripe(struct advisor *a, int64_t sandbox)
{
    return &a->stripes[(uint64_t)sandbox % ADVISOR_LOCK_STRIPES];
}

pv_result advisor_sandbox_id(struct advisor_worker *w, const char *sandbox, int64_t *id)
{
    struct store_sandbox sb;

    PV_GUARD(store_sandbox_get(w->st, sandbox, &sb));
    *id = sb.id;
    store_sandbox_clear(&sb);
    return PV_RESULT_OK;
}

/* ===========================================================================
 * Sandbox lists
 * ========================================================================= */

void advisor_sandboxes_add(void *arg, const struct store_sandbox *sb)
{
    struct advisor_sandboxes *l = arg;
    int64_t *ids;
    char **names;

    if (l->oom || (l->unbounded_only && sb->boundary != NULL && sb->boundary[0] != '\0')) {
        return;
    }
    ids = pv_realloc(l->ids, (l->n + 1) * sizeof(*ids));
    names = ids != NULL ? pv_realloc(l->names, (l->n + 1) * sizeof(*names)) : NULL;
    if (ids != NULL) {
        l->ids = ids;
    }
    if (names != NULL) {
        l->names = names;
    }
    if (ids == NULL || names == NULL || (names[l->n] = pv_strdup(sb->name)) == NULL) {
        l->oom = true;
        return;
    }
    ids[l->n++] = sb->id;
}

pv_result advisor_sandboxes_list(struct store *st, bool unbounded_only,
                                 struct advisor_sandboxes *out)
{
    memset(out, 0, sizeof(*out));
    out->unbounded_only = unbounded_only;
    PV_GUARD(store_sandbox_each(st, advisor_sandboxes_add, out));
    PV_ENSURE(!out->oom, PV_ERR_NOMEM);
    return PV_RESULT_OK;
}

void advisor_sandboxes_free(struct advisor_sandboxes *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->names[i]);
    }
    free(l->names);
    free(l->ids);
    memset(l, 0, sizeof(*l));
}

json_t *advisor_load_json(const char *text)
{
    json_t *j = text != NULL && text[0] != '\0' ? json_loads(text, 0, NULL) : NULL;
    return j != NULL ? j : json_null();
}
