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
                                           .unlock = store_sq_unlock,
                                           .errmsg = store_sq_errmsg,
                                           .close = store_sq_close,
                                           STORE_OPS(SQ_ENTRY)};

const struct store_ops store_pg_ops = {.begin = store_pg_begin,
                                       .commit = store_pg_commit,
                                       .exec = store_pg_exec,
                                       .blob_put = store_pg_blob_put,
                                       .unlock = store_pg_unlock,
                                       .errmsg = store_pg_errmsg,
                                       .close = store_pg_close,
                                       STORE_OPS(PG_ENTRY)};

/* store_NAME(params) { return s->ops->NAME(args); } for each record call */
#define DISPATCH(ret, name, params, args) \
    ret store_##name params               \
    {                                     \
        return s->ops->name args;         \
    }
STORE_OPS(DISPATCH)

/* The digest is the store's name for the bytes, the same on both. */
pv_result store_blob_put(struct store *s, const void *data, size_t len, char sha[65])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[SHA256_DIGEST_LENGTH];

    SHA256(data, len, md);
    for (size_t i = 0; i < sizeof(md); i++) {
        sha[2 * i] = hex[md[i] >> 4];
        sha[2 * i + 1] = hex[md[i] & 15];
    }
    sha[64] = '\0';
    return s->ops->blob_put(s, data, len, sha);
}

void store_unlock(struct store *s, int64_t key)
{
    s->ops->unlock(s, key);
}

pv_result store_exec(struct store *s, const char *sql)
{
    return s->ops->exec(s, sql);
}

/* A new PostgreSQL connection for a postgresql:// or postgres:// location. */
static pv_result open_pg(const char *uri, struct store **out, char *err, size_t errlen)
{
    struct store *s = pv_calloc(1, sizeof(*s));

    if (s == NULL) {
        snprintf(err, errlen, "out of memory");
        PV_BAIL(PV_ERR_NOMEM);
    }
    s->ops = &store_pg_ops;
    err[0] = '\0';
    if (!pv_ok(store_pg_open(uri, s, err, errlen))) {
        store_close(s);
        PV_BAIL(PV_ERR_IO);
    }
    *out = s;
    return PV_RESULT_OK;
}

pv_result store_open(const char *dir, struct store **out, char *err, size_t errlen)
{
    char path[4096];
    struct store *s;
    struct stat sb;

    *out = NULL;
    if (store_pg_location(dir)) {
        return open_pg(dir, out, err, errlen);
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

void store_close(struct store *s)
{
    if (s == NULL) {
        return;
    }
    if (s->in_tx) {
        store_rollback(s);
    }
    if (s->ops != NULL) {
        s->ops->close(s);
    }
    free(s);
}

const char *store_errmsg(const struct store *s)
{
    return s != NULL && s->ops != NULL ? s->ops->errmsg(s) : "no database";
}

pv_result store_begin(struct store *s)
{
    PV_ENSURE(!s->in_tx, PV_ERR_INTERNAL);
    PV_GUARD(s->ops->begin(s, true));
    s->in_tx = true;
    return PV_RESULT_OK;
}

pv_result store_commit(struct store *s)
{
    PV_ENSURE(s->in_tx, PV_ERR_INTERNAL);
    if (!pv_ok(s->ops->commit(s))) {
        store_rollback(s);
        PV_BAIL(PV_ERR_IO);
    }
    s->in_tx = false;
    return PV_RESULT_OK;
}

pv_result store_begin_read(struct store *s)
{
    PV_ENSURE(!s->in_tx, PV_ERR_INTERNAL);
    PV_GUARD(s->ops->begin(s, false));
    s->in_tx = true;
    return PV_RESULT_OK;
}

void store_rollback(struct store *s)
{
    if (s->in_tx) {
        (void)store_exec(s, "ROLLBACK");
        s->in_tx = false;
    }
}

char *store_setting_get(struct store *s, const char *scope, const char *key)
{
    char *out = NULL;
    pv_result r = store_setting_read(s, scope, key, &out);

    return pv_ok(r) ? out : NULL;
}
