/* SPDX-License-Identifier: Apache-2.0 */
/* store_sql.c - the SQLite back end's statement helpers (store_int.h)
 *
 * Prepare (from the connection's statement cache), bind, run, read a
 * column, read one number: what the connection (store_sqlite.c) and each
 * table's file share. Calls nothing else of the store. Every statement
 * binds its values (no SQL is built from data).
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "advisor/store/store.h"
#include "advisor/store/store_int.h"

sqlite3_stmt *store_prep(struct store *s, const char *sql)
{
    sqlite3_stmt *st = NULL;
    struct stmt_slot *free_slot = NULL;

    if (s->db == NULL) {
        return NULL; /* not an SQLite connection */
    }
    for (size_t i = 0; i < s->nstmts; i++) {
        struct stmt_slot *k = &s->stmts[i];
        if (strcmp(k->sql, sql) == 0) {
            if (!k->busy) {
                k->busy = true;
                return k->st;
            }
            break; /* in use: a fresh, uncached one */
        }
    }
    if (s->nstmts < STMT_CACHE) {
        free_slot = &s->stmts[s->nstmts];
    }
    if (sqlite3_prepare_v3(s->db, sql, -1, free_slot != NULL ? SQLITE_PREPARE_PERSISTENT : 0, &st,
                           NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return NULL;
    }
    if (free_slot != NULL && (free_slot->sql = pv_strdup(sql)) != NULL) {
        free_slot->st = st;
        free_slot->busy = true;
        s->nstmts++;
    }
    return st;
}

/* Give a statement back: a cached one is reset (ending any read it holds)
 * and its bindings cleared; any other is finalised. */
void store_done(struct store *s, sqlite3_stmt *st)
{
    if (st == NULL) {
        return;
    }
    for (size_t i = 0; i < s->nstmts; i++) {
        if (s->stmts[i].st == st && s->stmts[i].busy) {
            (void)sqlite3_reset(st);
            (void)sqlite3_clear_bindings(st);
            s->stmts[i].busy = false;
            return;
        }
    }
    sqlite3_finalize(st);
}

void store_stmt_cache_free(struct store *s)
{
    for (size_t i = 0; i < s->nstmts; i++) {
        sqlite3_finalize(s->stmts[i].st);
        free(s->stmts[i].sql);
    }
    s->nstmts = 0;
}

/* Bind a list of values: 's' text (NULL binds ""), 'i' int64, 'd' double. */
bool store_bind(sqlite3_stmt *st, const char *types, ...)
{
    va_list ap;
    int k = 1;
    bool ok = true;

    /* A type list that does not match the statement is a programming
     * error; refusing it keeps a wrong vararg from being read. */
    if ((int)strlen(types) != sqlite3_bind_parameter_count(st)) {
        return false;
    }
    va_start(ap, types);
    for (const char *t = types; *t != '\0' && ok; t++, k++) {
        switch (*t) {
        case 's': {
            const char *v = va_arg(ap, const char *);
            ok = sqlite3_bind_text(st, k, v != NULL ? v : "", -1, SQLITE_TRANSIENT) == SQLITE_OK;
            break;
        }
        case 'i':
            ok = sqlite3_bind_int64(st, k, va_arg(ap, int64_t)) == SQLITE_OK;
            break;
        case 'd':
            ok = sqlite3_bind_double(st, k, va_arg(ap, double)) == SQLITE_OK;
            break;
        default:
            ok = false;
            break;
        }
    }
    va_end(ap);
    return ok;
}

/* Run a statement that returns no rows; finalises it. */
pv_result store_run(struct store *s, sqlite3_stmt *st)
{
    int rc;

    PV_ENSURE(st != NULL, PV_ERR_IO);
    rc = sqlite3_step(st);
    store_done(s, st);
    if (rc == SQLITE_CONSTRAINT) {
        PV_BAIL(PV_ERR_EXISTS);
    }
    PV_ENSURE(rc == SQLITE_DONE, PV_ERR_IO);
    return PV_RESULT_OK;
}

char *store_col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return pv_strdup(t != NULL ? (const char *)t : "");
}

int64_t store_one_int(struct store *s, const char *sql, int64_t sandbox)
{
    sqlite3_stmt *st = store_prep(s, sql);
    int64_t v = 0;

    if (st != NULL && store_bind(st, "i", sandbox) && sqlite3_step(st) == SQLITE_ROW) {
        v = sqlite3_column_int64(st, 0);
    }
    store_done(s, st);
    return v;
}
