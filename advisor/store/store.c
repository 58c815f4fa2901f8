/* SPDX-License-Identifier: Apache-2.0 */
/* store.c - one store interface, two back ends (store.h, store_int.h)
 *
 * store_open() reads the location and sets a new connection's 'ops' to
 * one of the two tables below; every call of store.h dispatches through it
 * here, once. Transactions are the dispatcher's too: the back ends only
 * begin, commit and execute. No back end calls this file.
 * The record calls are generated from STORE_OPS (store_int.h): the same
 * list gives the tables' members, both back ends' prototypes and these
 * definitions, so the back ends cannot drift apart in signature.
 *
 * On PostgreSQL a handle borrows its connection from a pool
 * (store_pg_pool.c): the dispatcher holds it for each call, from BEGIN to
 * COMMIT or ROLLBACK, and from a session lock to its unlock, and gives it
 * back after, so the connections a process opens do not grow with its
 * workers.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/sha.h>

#include "advisor/store/store.h"
#include "advisor/store/store_int.h"

#define SQ_ENTRY(ret, name, params, args) .name = store_sq_##name,
#define PG_ENTRY(ret, name, params, args) .name = store_pg_##name,

const struct store_ops store_sqlite_ops = {.begin = store_sq_begin,
                                           .commit = store_sq_commit,
                                           .exec = store_sq_exec,
                                           .blob_put = store_sq_blob_put,
                                           .try_lock = store_sq_try_lock,
                                           .unlock = store_sq_unlock,
                                           .errmsg = store_sq_errmsg,
                                           .close = store_sq_close,
                                           STORE_OPS(SQ_ENTRY)};

const struct store_ops store_pg_ops = {.begin = store_pg_begin,
                                       .commit = store_pg_commit,
                                       .exec = store_pg_exec,
                                       .blob_put = store_pg_blob_put,
                                       .try_lock = store_pg_try_lock,
                                       .unlock = store_pg_unlock,
                                       .hold = store_pg_hold,
                                       .release = store_pg_release,
                                       .errmsg = store_pg_errmsg,
                                       .close = store_pg_close,
                                       STORE_OPS(PG_ENTRY)};

/* The connection a call runs on: held for the call, given back after
 * (nested holds of one handle share it). */
static pv_result hold(struct store *s)
{
    return s->ops->hold != NULL ? s->ops->hold(s) : PV_RESULT_OK;
}

static void release(struct store *s)
{
    if (s->ops->release != NULL) {
        s->ops->release(s);
    }
}

static pv_result no_connection(void)
{
    return pv_fail(PV_ERR_IO, "store: no connection");
}

/* What a record call returns when it got no connection: the failure its
 * type can say (store.h: an error, 0, NULL). */
#define NO_CONNECTION(ret) \
    _Generic((ret *)NULL, pv_result * : no_connection(), int64_t * : (int64_t)0, char ** : NULL)

/* store_NAME(params) { hold; r = s->ops->NAME(args); release; return r; }
 * for each record call */
#define DISPATCH(ret, name, params, args) \
    ret store_##name params               \
    {                                     \
        ret r_;                           \
        if (!pv_ok(hold(s))) {            \
            return NO_CONNECTION(ret);    \
        }                                 \
        r_ = s->ops->name args;           \
        release(s);                       \
        return r_;                        \
    }
STORE_OPS(DISPATCH)

/* The digest is the store's name for the bytes, the same on both. */
pv_result store_blob_put(struct store *s, const void *data, size_t len, char sha[65])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[SHA256_DIGEST_LENGTH];
    pv_result r;

    SHA256(data, len, md);
    for (size_t i = 0; i < sizeof(md); i++) {
        sha[2 * i] = hex[md[i] >> 4];
        sha[2 * i + 1] = hex[md[i] & 15];
    }
    sha[64] = '\0';
    PV_GUARD(hold(s));
    r = s->ops->blob_put(s, data, len, sha);
    release(s);
    return r;
}

/* A lock that is held keeps its connection until store_unlock. */
pv_result store_try_lock(struct store *s, int64_t key, bool *got)
{
    pv_result r;

    *got = false;
    PV_GUARD(hold(s));
    r = s->ops->try_lock(s, key, got);
    if (!pv_ok(r) || !*got) {
        release(s);
    }
    return r;
}

void store_unlock(struct store *s, int64_t key)
{
    s->ops->unlock(s, key);
    release(s);
}

pv_result store_exec(struct store *s, const char *sql)
{
    pv_result r;

    PV_GUARD(hold(s));
    r = s->ops->exec(s, sql);
    release(s);
    return r;
}

/* A new PostgreSQL connection for a postgresql:// or postgres:// location. */
static pv_result open_pg(const char *uri, bool own, struct store **out, char *err, size_t errlen)
{
    struct store *s = pv_calloc(1, sizeof(*s));

    if (s == NULL) {
        snprintf(err, errlen, "out of memory");
        PV_BAIL(PV_ERR_NOMEM);
    }
    s->ops = &store_pg_ops;
    err[0] = '\0';
    if (!pv_ok(store_pg_open(uri, own, s, err, errlen))) {
        store_close(s);
        PV_BAIL(PV_ERR_IO);
    }
    *out = s;
    return PV_RESULT_OK;
}

static pv_result open_store(const char *dir, bool own, struct store **out, char *err, size_t errlen)
{
    char path[4096];
    struct store *s;
    struct stat sb;

    *out = NULL;
    if (store_pg_location(dir)) {
        return open_pg(dir, own, out, err, errlen);
    }
    if (strncmp(dir, "sqlite:", 7) == 0) {
        /* sqlite:FILE names the database file itself. */
        if (dir[7] == '\0' || (size_t)snprintf(path, sizeof(path), "%s", dir + 7) >= sizeof(path)) {
            snprintf(err, errlen, "%s: a file name goes after sqlite:", dir);
            PV_BAIL(PV_ERR_USAGE);
        }
    } else if (strstr(dir, "://") != NULL) {
        snprintf(err, errlen,
                 "%.64s: not a store location (sqlite:FILE, postgresql://... or a directory)", dir);
        PV_BAIL(PV_ERR_USAGE);
    } else {
        if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            snprintf(err, errlen, "%s: %s", dir,
                     errno != 0 && stat(dir, &sb) != 0 ? strerror(errno) : "not a directory");
            PV_BAIL(PV_ERR_IO);
        }
        if ((size_t)snprintf(path, sizeof(path), "%s/advisor.db", dir) >= sizeof(path)) {
            snprintf(err, errlen, "%s: path too long", dir);
            PV_BAIL(PV_ERR_USAGE);
        }
    }
    s = pv_calloc(1, sizeof(*s));
    if (s == NULL) {
        snprintf(err, errlen, "out of memory");
        PV_BAIL(PV_ERR_NOMEM);
    }
    s->ops = &store_sqlite_ops;
    if (!pv_ok(store_sq_open(path, s, err, errlen))) {
        store_close(s);
        PV_BAIL(PV_ERR_IO);
    }
    *out = s;
    return PV_RESULT_OK;
}

pv_result store_open(const char *dir, struct store **out, char *err, size_t errlen)
{
    return open_store(dir, false, out, err, errlen);
}

pv_result store_open_own(const char *dir, struct store **out, char *err, size_t errlen)
{
    return open_store(dir, true, out, err, errlen);
}

void store_close(struct store *s)
{
    if (s == NULL) {
        return;
    }
    if (s->ops != NULL) {
        if (s->in_tx) {
            store_rollback(s);
        }
        s->ops->close(s);
    }
    free(s);
}

const char *store_errmsg(const struct store *s)
{
    return s != NULL && s->ops != NULL ? s->ops->errmsg(s) : "no database";
}

/* A transaction holds its connection from BEGIN to COMMIT or ROLLBACK. */
static pv_result begin(struct store *s, bool write)
{
    pv_result r;

    PV_ENSURE(!s->in_tx, PV_ERR_INTERNAL);
    PV_GUARD(hold(s));
    r = s->ops->begin(s, write);
    if (!pv_ok(r)) {
        release(s);
        return r;
    }
    s->in_tx = true;
    return PV_RESULT_OK;
}

pv_result store_begin(struct store *s)
{
    return begin(s, true);
}

pv_result store_begin_read(struct store *s)
{
    return begin(s, false);
}

pv_result store_commit(struct store *s)
{
    PV_ENSURE(s->in_tx, PV_ERR_INTERNAL);
    if (!pv_ok(s->ops->commit(s))) {
        store_rollback(s);
        PV_BAIL(PV_ERR_IO);
    }
    s->in_tx = false;
    release(s);
    return PV_RESULT_OK;
}

void store_rollback(struct store *s)
{
    if (s->in_tx) {
        (void)store_exec(s, "ROLLBACK");
        s->in_tx = false;
        release(s);
    }
}

char *store_setting_get(struct store *s, const char *scope, const char *key)
{
    char *out = NULL;
    pv_result r = store_setting_read(s, scope, key, &out);

    return pv_ok(r) ? out : NULL;
}
