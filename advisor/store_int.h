/* SPDX-License-Identifier: Apache-2.0 */
/* store_int.h - what the store's files share (store_sqlite.c defines it)
 *
 * The store is one SQLite connection per thread (store_sqlite.c: open,
 * transactions, group commit, blobs) and one file per table or concern:
 * store_sandbox.c (sandboxes, tool servers, settings), store_revision.c,
 * store_chunk.c, store_event.c. PostgreSQL's twins are in store_pg.c, and
 * what only replicas need (change notes, LISTEN, session locks) in
 * store_pg_repl.c. Nothing outside the store includes this.
 */
#ifndef ADVISOR_STORE_INT_H
#define ADVISOR_STORE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "advisor/store.h"
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

struct store_pg;

struct store {
    sqlite3 *db;         /* NULL on PostgreSQL */
    struct store_pg *pg; /* non-NULL on PostgreSQL (store_pg.c) */
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

/* ---------------------------------------------------------------------------
 * PostgreSQL (store_pg.c). A connection opened on a postgresql:// or
 * postgres:// location has 'pg' set; each call of store.h then routes to
 * its store_pg_* twin (STORE_PG_ROUTE at the top of the SQLite function).
 * ------------------------------------------------------------------------- */

/* A connection and the statements it prepared: pg_query prepares each SQL
 * text once per connection (the server parses and plans it once) and runs
 * it by name after; a full cache runs the rest unnamed. A write
 * transaction also collects what it changed for the NOTIFY its COMMIT
 * sends (store_pg_repl.c). */
#define PREP_CACHE 96
#define STORE_PG_NOTE_IDS 16
#define STORE_PG_NOTE_MAX 512

struct store_pg {
    PGconn *conn;
    char err[512];
    size_t nprep;
    char *prep[PREP_CACHE];
    bool write;         /* the transaction holds the writer lock */
    bool note_settings; /* it wrote a setting */
    bool note_all;      /* it wrote more sandboxes than note_ids holds */
    size_t nnote;
    int64_t note_ids[STORE_PG_NOTE_IDS]; /* sandboxes it created, changed or deleted */
};

/* Change notes (store_pg_repl.c): reset at BEGIN, collected by the writes
 * that make other replicas' caches stale, sent with COMMIT. */
void store_pg_note_reset(struct store *s, bool write);
void store_pg_note_sandbox(struct store *s, int64_t id);
void store_pg_note_settings(struct store *s);
/* The statement that commits: "COMMIT", preceded for a write transaction
 * by the NOTIFY naming what it changed. */
void store_pg_note_sql(struct store *s, char *buf, size_t len);
pv_result store_pg_try_lock(struct store *s, int64_t key, bool *got) PV_WUR;
void store_pg_unlock(struct store *s, int64_t key);

#define STORE_PG_ROUTE(s, call) \
    do {                        \
        if ((s)->pg != NULL) {  \
            return call;        \
        }                       \
    } while (0)

bool store_pg_location(const char *loc);
pv_result store_pg_open(const char *uri, struct store *s, char *err, size_t errlen) PV_WUR;
void store_pg_close(struct store *s);
const char *store_pg_errmsg(const struct store *s);
pv_result store_pg_exec(struct store *s, const char *sql) PV_WUR;
pv_result store_pg_begin(struct store *s, bool write) PV_WUR;
pv_result store_pg_commit(struct store *s) PV_WUR;
pv_result store_pg_blob_put(struct store *s, const void *data, size_t len,
                            const char sha[65]) PV_WUR;
char *store_pg_blob_get(struct store *s, const char *sha, size_t *len);
pv_result store_pg_sandbox_create(struct store *s, struct store_sandbox *sb) PV_WUR;
pv_result store_pg_sandbox_get(struct store *s, const char *name, struct store_sandbox *out) PV_WUR;
pv_result store_pg_sandbox_get_id(struct store *s, int64_t id, struct store_sandbox *out) PV_WUR;
pv_result store_pg_sandbox_update(struct store *s, const struct store_sandbox *sb) PV_WUR;
pv_result store_pg_sandbox_delete(struct store *s, int64_t id) PV_WUR;
pv_result store_pg_sandbox_each(struct store *s,
                                void (*fn)(void *arg, const struct store_sandbox *sb),
                                void *arg) PV_WUR;
pv_result store_pg_server_put(struct store *s, int64_t sandbox,
                              const struct store_server *sv) PV_WUR;
pv_result store_pg_server_delete(struct store *s, int64_t sandbox, const char *name) PV_WUR;
pv_result store_pg_server_each(struct store *s, int64_t sandbox,
                               void (*fn)(void *arg, const struct store_server *sv),
                               void *arg) PV_WUR;
pv_result store_pg_setting_read(struct store *s, const char *scope, const char *key,
                                char **out) PV_WUR;
pv_result store_pg_setting_put(struct store *s, const char *scope, const char *key,
                               const char *json) PV_WUR;
pv_result store_pg_setting_delete(struct store *s, const char *scope, const char *key) PV_WUR;
pv_result store_pg_revision_put(struct store *s, bool base, int64_t sandbox,
                                struct store_revision *r) PV_WUR;
pv_result store_pg_base_latest(struct store *s, int64_t sandbox, struct store_revision *out) PV_WUR;
pv_result store_pg_rev_latest(struct store *s, int64_t sandbox, struct store_revision *out) PV_WUR;
pv_result store_pg_rev_get(struct store *s, int64_t sandbox, int64_t rev,
                           struct store_revision *out) PV_WUR;
pv_result store_pg_loaded_put(struct store *s, int64_t sandbox, int64_t rev, const char *hash,
                              int64_t at_ms) PV_WUR;
int64_t store_pg_loaded_latest(struct store *s, int64_t sandbox);
pv_result store_pg_chunk_insert(struct store *s, const struct store_chunk *c) PV_WUR;
pv_result store_pg_chunk_get(struct store *s, int64_t sandbox, const char *id,
                             struct store_chunk *out) PV_WUR;
pv_result store_pg_chunk_update(struct store *s, const struct store_chunk *c,
                                const char *expect_status) PV_WUR;
pv_result store_pg_chunk_each(struct store *s, int64_t sandbox, const char *status,
                              void (*fn)(void *arg, const struct store_chunk *c), void *arg) PV_WUR;
pv_result store_pg_chunk_each_key(struct store *s, int64_t sandbox, const char *status,
                                  const char *host, int64_t port, const char *binary,
                                  void (*fn)(void *arg, const struct store_chunk *c),
                                  void *arg) PV_WUR;
pv_result store_pg_chunk_each_approved(struct store *s, int64_t sandbox,
                                       void (*fn)(void *arg, const struct store_chunk *c),
                                       void *arg) PV_WUR;
pv_result store_pg_chunk_by_dedup(struct store *s, int64_t sandbox, const char *key,
                                  struct store_chunk *out) PV_WUR;
int64_t store_pg_chunk_max_draft(struct store *s, int64_t sandbox);
int64_t store_pg_chunk_max_seq(struct store *s, int64_t sandbox);
pv_result store_pg_chunk_clear_pending(struct store *s, int64_t sandbox, int64_t *n) PV_WUR;
pv_result store_pg_event_append(struct store *s, struct store_event *e) PV_WUR;
pv_result store_pg_event_head(struct store *s, int64_t *seq, char seal[65]) PV_WUR;
pv_result store_pg_event_set_record(struct store *s, int64_t seq, const char *record,
                                    const char *seal) PV_WUR;
pv_result store_pg_event_seal(struct store *s, int64_t seq, char seal[65]) PV_WUR;
pv_result store_pg_event_each(struct store *s, int64_t after, size_t limit,
                              void (*fn)(void *arg, const struct store_event *e), void *arg) PV_WUR;

#endif
