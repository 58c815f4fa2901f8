/* SPDX-License-Identifier: Apache-2.0 */
/* store.c - one store interface, two back ends (store.h, store_int.h)
 *
 * store_open() (store_sqlite.c) sets a connection's 'ops' to one of the two
 * tables below; every call of store.h dispatches through it here, once.
 * The record calls are generated from STORE_OPS (store_int.h): the same
 * list gives the tables' members, both back ends' prototypes and these
 * definitions, so the back ends cannot drift apart in signature.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <openssl/sha.h>

#include "advisor/store.h"
#include "advisor/store_int.h"

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
