/* SPDX-License-Identifier: Apache-2.0 */
/* store_int.h - what the store's files share (store_sqlite.c defines it)
 *
 * The store is one SQLite connection per thread (store_sqlite.c: open,
 * transactions, group commit, blobs) and one file per table or concern:
 * store_sandbox.c (sandboxes, tool servers, settings), store_revision.c,
 * store_chunk.c, store_event.c. Nothing outside the store includes this.
 */
#ifndef ADVISOR_STORE_INT_H
#define ADVISOR_STORE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "common/pv.h"

/* Prepared statements are kept per connection and reused (preparing one
 * cost as much as the rest of a submission's store work): store_prep() hands out
 * the cached statement for the same SQL text when it is not in use, and
 * store_done() resets it for the next caller. A statement in use (a nested query
 * of the same text) or a full cache gets a fresh one, finalised by store_done(). */
#define STMT_CACHE 64

struct stmt_slot {
    char *sql;
    sqlite3_stmt *st;
    bool busy;
};

struct store {
    sqlite3 *db;
    bool in_tx;
    size_t nstmts;
    struct stmt_slot stmts[STMT_CACHE];
};

/* A cached prepared statement for 'sql' (or a fresh one), NULL on error;
 * give it back with store_done. */
sqlite3_stmt *store_prep(struct store *s, const char *sql);
void store_done(struct store *s, sqlite3_stmt *st);
/* Bind a list of values: 's' text (NULL binds ""), 'i' int64, 'd' double. */
bool store_bind(sqlite3_stmt *st, const char *types, ...);
/* Run a statement that returns no rows and give it back: PV_ERR_EXISTS on
 * a constraint, PV_ERR_IO otherwise. */
pv_result store_run(struct store *s, sqlite3_stmt *st) PV_WUR;
/* Column 'i' as a new string ("" for NULL). */
char *store_col_text(sqlite3_stmt *st, int i);
int64_t store_now_ms(void);
/* The one integer a query of one sandbox id returns (0 when none). */
int64_t store_one_int(struct store *s, const char *sql, int64_t sandbox);

#endif
