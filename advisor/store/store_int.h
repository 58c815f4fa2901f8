/* SPDX-License-Identifier: Apache-2.0 */
/* store_int.h - what the store's files share (store_sqlite.c defines it)
 *
 * The store is one SQLite connection per thread (store_sqlite.c: open,
 * transactions, group commit, blobs) and one file per table or concern:
 * store_sandbox.c (sandboxes, tool servers, settings), store_revision.c,
 * store_chunk.c, store_event.c. PostgreSQL's twins are in store_pg.c, the
 * connections its handles share in store_pg_pool.c, and what only replicas
 * need (change notes, LISTEN, session locks) in store_pg_repl.c. Nothing
 * outside the store includes this (but its unit suite,
 * tests/check_advisor_store.c, for store_pg_connect).
 */
#ifndef ADVISOR_STORE_INT_H
#define ADVISOR_STORE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "advisor/store/store.h"
#include "common/pv.h"

/* The chunk columns, in the one order both back ends select, insert and
 * read them (store_chunk.c, store_pg.c: chunk_row reads them in this
 * order). "binary" is quoted: a keyword on PostgreSQL; SQLite takes the
 * quoted name as well. */
#define STORE_CHUNK_COLS                                                                        \
    "id, sandbox, draft_version, status, rule_name, proposed_rule, rationale, security_notes, " \
    "confidence, created_ms, decided_ms, host, port, \"binary\", hit_count, first_seen_ms, "    \
    "last_seen_ms, validation_result, rejection_reason, application_error, review_token, "      \
    "current_hash, candidate_hash, analysis_mode, dedup_key, stage, evidence, approved_seq, "   \
    "approved_rev, auto_approved, decided_by, approved_evidence, suspension_reason"

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
struct store_pg_pool;

struct store_ops;

struct store {
    const struct store_ops *ops; /* the back end (store_open) */
    sqlite3 *db;                 /* NULL on PostgreSQL */
    /* PostgreSQL: the pooled connection this handle holds now (NULL
     * between holds), the pool it comes from, how many nested holds keep
     * it (a transaction, a session lock, a call), and the last error
     * (kept here: it outlives the hold that met it). */
    struct store_pg *pg;
    struct store_pg_pool *pool;
    unsigned holds;
    char err[512];
    bool in_tx;
    size_t nstmts;
    struct stmt_slot stmts[STMT_CACHE];
};

/* The SQLite statement helpers (store_sql.c).
 * A cached prepared statement for 'sql' (or a fresh one), NULL on error;
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
/* The one integer a query of one sandbox id returns (0 when none). */
int64_t store_one_int(struct store *s, const char *sql, int64_t sandbox);
/* Finalise the connection's cached statements. */
void store_stmt_cache_free(struct store *s);

/* What both back ends and the dispatcher share (store_common.c): the
 * records' clear functions (store.h), the clock, the location's kind. */
int64_t store_now_ms(void);
/* A postgresql:// or postgres:// location. */
bool store_pg_location(const char *loc);

/* ---------------------------------------------------------------------------
 * PostgreSQL (store_pg.c). A connection opened on a postgresql:// or
 * postgres:// location has 'pg' set and ops = &store_pg_ops.
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
    size_t nprep;
    char *prep[PREP_CACHE];
    bool write;         /* the transaction holds the writer lock */
    bool note_settings; /* it wrote a setting */
    bool note_all;      /* it wrote more sandboxes than note_ids holds */
    size_t nnote;
    int64_t note_ids[STORE_PG_NOTE_IDS]; /* sandboxes it created, changed or deleted */
};

/* The connection pool (store_pg_pool.c): a process's handles on one
 * location share at most store_set_connections() connections, whatever
 * the number of handles (workers). A handle holds one only inside a
 * transaction, a session lock or one call (store.c holds and releases
 * around them), so a worker waiting on a long-poll holds none.
 * store_pg_open puts a handle in the pool of its location (or in one of
 * its own), store_pg_close takes it out. Hold takes an idle connection,
 * or makes one (store_pg_conn_new) while fewer than the bound are open,
 * or waits for one; it refuses at once, not waiting, when the calling
 * thread holds another connection of the pool already and none is free
 * (two such threads would wait on each other). Nested holds of one handle
 * share its connection. */
pv_result store_pg_hold(struct store *s) PV_WUR;
void store_pg_release(struct store *s);
/* A new pooled connection for 's' (store_pg.c): connected, its session
 * settings made, and the schema migrated when 'migrate'. */
pv_result store_pg_conn_new(struct store *s, const char *uri, bool migrate, char *err,
                            size_t errlen) PV_WUR;
void store_pg_conn_free(struct store_pg *c);
/* The database's schema version into '*version' (0 before the first
 * migration); refused, with the reason in 'err', when it is newer than this
 * build's or cannot be read. 's' holds a connection. */
pv_result store_pg_version(struct store *s, int64_t *version, char *err, size_t errlen) PV_WUR;

/* Open a connection to the libpq URI 'uri' (store_pg.c) with proviso's
 * defaults under it: a connect timeout, TCP keep-alives and a TCP user
 * timeout, so that a database host that vanishes without a reset fails
 * the statement waiting on it (then the connection is opened again)
 * instead of holding a worker, the mapper or the listener forever; and
 * application_name proviso-advisor. A value the URI sets wins. Never NULL
 * unless out of memory; check PQstatus. */
PGconn *store_pg_connect(const char *uri);

/* Change notes (store_pg_repl.c): reset at BEGIN, collected by the writes
 * that make other replicas' caches stale, sent with COMMIT. */
void store_pg_note_reset(struct store *s, bool write);
void store_pg_note_sandbox(struct store *s, int64_t id);
void store_pg_note_settings(struct store *s);
/* The statement that commits: "COMMIT", preceded for a write transaction
 * by the NOTIFY naming what it changed. */
void store_pg_note_sql(struct store *s, char *buf, size_t len);

/* ---------------------------------------------------------------------------
 * The back ends behind one table (issue 27: one shape for each job)
 *
 * store_open() picks a back end once and sets the connection's 'ops'; each
 * call of store.h then dispatches through it (store.c). STORE_OPS lists
 * the record calls once: X(return type, name, (parameters), (arguments)).
 * It declares the struct's members, both back ends' functions
 * (store_sq_NAME in the SQLite files, store_pg_NAME in store_pg.c) and
 * the dispatching store_NAME definitions, so a call added to the list
 * cannot be missing from one back end without a link error.
 * ------------------------------------------------------------------------- */

#define STORE_OPS(X)                                                                               \
    X(pv_result, sandbox_create, (struct store * s, struct store_sandbox * sb), (s, sb))           \
    X(pv_result, sandbox_get, (struct store * s, const char *name, struct store_sandbox *out),     \
      (s, name, out))                                                                              \
    X(pv_result, sandbox_get_id, (struct store * s, int64_t id, struct store_sandbox * out),       \
      (s, id, out))                                                                                \
    X(pv_result, sandbox_update, (struct store * s, const struct store_sandbox *sb), (s, sb))      \
    X(pv_result, sandbox_delete, (struct store * s, int64_t id), (s, id))                          \
    X(pv_result, sandbox_each,                                                                     \
      (struct store * s, void (*fn)(void *arg, const struct store_sandbox *sb), void *arg),        \
      (s, fn, arg))                                                                                \
    X(pv_result, server_put, (struct store * s, int64_t sandbox, const struct store_server *sv),   \
      (s, sandbox, sv))                                                                            \
    X(pv_result, server_delete, (struct store * s, int64_t sandbox, const char *name),             \
      (s, sandbox, name))                                                                          \
    X(pv_result, server_each,                                                                      \
      (struct store * s, int64_t sandbox, void (*fn)(void *arg, const struct store_server *sv),    \
       void *arg),                                                                                 \
      (s, sandbox, fn, arg))                                                                       \
    X(pv_result, setting_read, (struct store * s, const char *scope, const char *key, char **out), \
      (s, scope, key, out))                                                                        \
    X(pv_result, setting_put,                                                                      \
      (struct store * s, const char *scope, const char *key, const char *json),                    \
      (s, scope, key, json))                                                                       \
    X(pv_result, setting_delete, (struct store * s, const char *scope, const char *key),           \
      (s, scope, key))                                                                             \
    X(pv_result, base_put, (struct store * s, int64_t sandbox, struct store_revision * r),         \
      (s, sandbox, r))                                                                             \
    X(pv_result, base_latest, (struct store * s, int64_t sandbox, struct store_revision * out),    \
      (s, sandbox, out))                                                                           \
    X(pv_result, rev_put, (struct store * s, int64_t sandbox, struct store_revision * r),          \
      (s, sandbox, r))                                                                             \
    X(pv_result, rev_latest, (struct store * s, int64_t sandbox, struct store_revision * out),     \
      (s, sandbox, out))                                                                           \
    X(pv_result, rev_get,                                                                          \
      (struct store * s, int64_t sandbox, int64_t rev, struct store_revision * out),               \
      (s, sandbox, rev, out))                                                                      \
    X(pv_result, loaded_put,                                                                       \
      (struct store * s, int64_t sandbox, int64_t rev, const char *hash, int64_t at_ms),           \
      (s, sandbox, rev, hash, at_ms))                                                              \
    X(int64_t, loaded_latest, (struct store * s, int64_t sandbox), (s, sandbox))                   \
    X(pv_result, chunk_insert, (struct store * s, const struct store_chunk *c), (s, c))            \
    X(pv_result, chunk_get,                                                                        \
      (struct store * s, int64_t sandbox, const char *id, struct store_chunk *out),                \
      (s, sandbox, id, out))                                                                       \
    X(pv_result, chunk_update,                                                                     \
      (struct store * s, const struct store_chunk *c, const char *expect_status),                  \
      (s, c, expect_status))                                                                       \
    X(pv_result, chunk_each,                                                                       \
      (struct store * s, int64_t sandbox, const char *status,                                      \
       void (*fn)(void *arg, const struct store_chunk *c), void *arg),                             \
      (s, sandbox, status, fn, arg))                                                               \
    X(pv_result, chunk_each_approved,                                                              \
      (struct store * s, int64_t sandbox, void (*fn)(void *arg, const struct store_chunk *c),      \
       void *arg),                                                                                 \
      (s, sandbox, fn, arg))                                                                       \
    X(pv_result, chunk_each_key,                                                                   \
      (struct store * s, int64_t sandbox, const char *status, const char *host, int64_t port,      \
       const char *binary, void (*fn)(void *arg, const struct store_chunk *c), void *arg),         \
      (s, sandbox, status, host, port, binary, fn, arg))                                           \
    X(pv_result, chunk_by_dedup,                                                                   \
      (struct store * s, int64_t sandbox, const char *key, struct store_chunk *out),               \
      (s, sandbox, key, out))                                                                      \
    X(int64_t, chunk_max_draft, (struct store * s, int64_t sandbox), (s, sandbox))                 \
    X(int64_t, chunk_max_seq, (struct store * s, int64_t sandbox), (s, sandbox))                   \
    X(pv_result, chunk_clear_pending, (struct store * s, int64_t sandbox, int64_t * n),            \
      (s, sandbox, n))                                                                             \
    X(pv_result, event_append, (struct store * s, struct store_event * e), (s, e))                 \
    X(pv_result, event_head, (struct store * s, int64_t * seq, char seal[65]), (s, seq, seal))     \
    X(pv_result, event_set_record,                                                                 \
      (struct store * s, int64_t seq, const char *record, const char *seal),                       \
      (s, seq, record, seal))                                                                      \
    X(pv_result, event_seal, (struct store * s, int64_t seq, char seal[65]), (s, seq, seal))       \
    X(pv_result, event_each,                                                                       \
      (struct store * s, int64_t after, size_t limit,                                              \
       void (*fn)(void *arg, const struct store_event *e), void *arg),                             \
      (s, after, limit, fn, arg))                                                                  \
    X(char *, blob_get, (struct store * s, const char *sha, size_t *len), (s, sha, len))

#define STORE_OP_MEMBER(ret, name, params, args) ret(*name) params;
#define STORE_OP_SQ(ret, name, params, args) ret store_sq_##name params;
#define STORE_OP_PG(ret, name, params, args) ret store_pg_##name params;

struct store_ops {
    /* A write transaction (the writer lock) or a read snapshot. */
    pv_result (*begin)(struct store *s, bool write);
    pv_result (*commit)(struct store *s);
    /* A statement without parameters or rows (ROLLBACK, SAVEPOINT ...). */
    pv_result (*exec)(struct store *s, const char *sql);
    pv_result (*blob_put)(struct store *s, const void *data, size_t len, const char sha[65]);
    pv_result (*try_lock)(struct store *s, int64_t key, bool *got);
    void (*unlock)(struct store *s, int64_t key);
    /* Take and give back the connection a call runs on (PostgreSQL's
     * pool); NULL where a handle owns its connection (SQLite). */
    pv_result (*hold)(struct store *s);
    void (*release)(struct store *s);
    const char *(*errmsg)(const struct store *s);
    /* Release what the back end holds (not 's' itself). */
    void (*close)(struct store *s);
    STORE_OPS(STORE_OP_MEMBER)
};

extern const struct store_ops store_sqlite_ops;
extern const struct store_ops store_pg_ops;

/* SQLite (store_sqlite.c and the per-table files). */
STORE_OPS(STORE_OP_SQ)
pv_result store_sq_begin(struct store *s, bool write) PV_WUR;
pv_result store_sq_commit(struct store *s) PV_WUR;
pv_result store_sq_exec(struct store *s, const char *sql) PV_WUR;
pv_result store_sq_blob_put(struct store *s, const void *data, size_t len,
                            const char sha[65]) PV_WUR;
pv_result store_sq_try_lock(struct store *s, int64_t key, bool *got) PV_WUR;
void store_sq_unlock(struct store *s, int64_t key);
const char *store_sq_errmsg(const struct store *s);
void store_sq_close(struct store *s);
/* Open the SQLite file 'path' into 's' (ops already set): WAL, the
 * schema's migrations. */
pv_result store_sq_open(const char *path, struct store *s, char *err, size_t errlen) PV_WUR;
/* A statement on the connection's back end (transactions, savepoints). */
pv_result store_exec(struct store *s, const char *sql);

/* PostgreSQL (store_pg.c, store_pg_pool.c, store_pg_repl.c). */
STORE_OPS(STORE_OP_PG)
/* 'own': a connection of its own, outside the shared pool (store_open_own). */
pv_result store_pg_open(const char *uri, bool own, struct store *s, char *err,
                        size_t errlen) PV_WUR;
pv_result store_pg_begin(struct store *s, bool write) PV_WUR;
pv_result store_pg_commit(struct store *s) PV_WUR;
pv_result store_pg_exec(struct store *s, const char *sql) PV_WUR;
pv_result store_pg_blob_put(struct store *s, const void *data, size_t len,
                            const char sha[65]) PV_WUR;
pv_result store_pg_try_lock(struct store *s, int64_t key, bool *got) PV_WUR;
void store_pg_unlock(struct store *s, int64_t key);
const char *store_pg_errmsg(const struct store *s);
void store_pg_close(struct store *s);

#endif
