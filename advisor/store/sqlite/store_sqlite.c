/* SPDX-License-Identifier: Apache-2.0 */
/* store_sqlite.c - the embedded store: SQLite in the data directory
 *
 * One file, advisor.db, in WAL mode with synchronous=FULL: a COMMIT returns
 * only once the write-ahead log is on disk, so an answer the advisor sends
 * after store_commit() survives kill -9 and power loss. Each thread opens
 * its own connection; writers take the database lock with BEGIN IMMEDIATE
 * and wait for each other through the busy timeout.
 *
 * The schema is versioned with PRAGMA user_version; migrations[i] moves a
 * database from version i to i+1 inside one transaction, so an interrupted
 * upgrade leaves the previous version intact. A database from a newer
 * build is refused rather than guessed at.
 *
 * Every statement binds its values (no SQL is built from data).
 *
 * This file holds the connection (schema, open, begin and commit) and the
 * blobs; each table's rows are in their own file (store_sandbox.c,
 * store_revision.c, store_chunk.c, store_event.c), which share the
 * statement helpers of store_sql.c. The back end never calls the
 * dispatcher (store.c), which opens it, nor the PostgreSQL back end.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <openssl/sha.h>
#include <sqlite3.h>

#include "advisor/store/store.h"
#include "advisor/store/store_int.h"

#define BUSY_TIMEOUT_MS 30000

/* ===========================================================================
 * Schema
 * ========================================================================= */

static const char *const migrations[STORE_SCHEMA_VERSION] = {
    /* 0 -> 1: the first release */
    "CREATE TABLE blobs (sha256 TEXT PRIMARY KEY, data BLOB NOT NULL);"
    "CREATE TABLE sandboxes ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  name TEXT NOT NULL UNIQUE,"
    "  token_sha256 TEXT NOT NULL,"
    "  credentials TEXT NOT NULL DEFAULT '',"
    "  boundary TEXT NOT NULL DEFAULT '',"
    "  addresses TEXT NOT NULL DEFAULT '[]',"
    "  created_ms INTEGER NOT NULL);"
    "CREATE TABLE settings ("
    "  scope TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
    "  PRIMARY KEY (scope, key));"
    "CREATE TABLE base_revisions ("
    "  sandbox INTEGER NOT NULL, rev INTEGER NOT NULL, blob TEXT NOT NULL,"
    "  hash TEXT NOT NULL, cause TEXT NOT NULL, created_ms INTEGER NOT NULL,"
    "  PRIMARY KEY (sandbox, rev));"
    "CREATE TABLE revisions ("
    "  sandbox INTEGER NOT NULL, rev INTEGER NOT NULL, base_rev INTEGER NOT NULL,"
    "  blob TEXT NOT NULL, hash TEXT NOT NULL, cause TEXT NOT NULL,"
    "  created_ms INTEGER NOT NULL, PRIMARY KEY (sandbox, rev));"
    "CREATE TABLE loaded ("
    "  sandbox INTEGER NOT NULL, rev INTEGER NOT NULL, hash TEXT NOT NULL,"
    "  at_ms INTEGER NOT NULL);"
    "CREATE INDEX loaded_by_sandbox ON loaded (sandbox, rev);"
    "CREATE TABLE chunks ("
    "  id TEXT PRIMARY KEY, sandbox INTEGER NOT NULL, draft_version INTEGER NOT NULL,"
    "  status TEXT NOT NULL, rule_name TEXT NOT NULL, proposed_rule TEXT NOT NULL,"
    "  rationale TEXT NOT NULL, security_notes TEXT NOT NULL, confidence REAL NOT NULL,"
    "  created_ms INTEGER NOT NULL, decided_ms INTEGER NOT NULL, host TEXT NOT NULL,"
    "  port INTEGER NOT NULL, binary TEXT NOT NULL, hit_count INTEGER NOT NULL,"
    "  first_seen_ms INTEGER NOT NULL, last_seen_ms INTEGER NOT NULL,"
    "  validation_result TEXT NOT NULL, rejection_reason TEXT NOT NULL,"
    "  application_error TEXT NOT NULL, review_token TEXT NOT NULL,"
    "  current_hash TEXT NOT NULL, candidate_hash TEXT NOT NULL,"
    "  analysis_mode TEXT NOT NULL, dedup_key TEXT NOT NULL, stage TEXT NOT NULL,"
    "  evidence TEXT NOT NULL, approved_seq INTEGER NOT NULL, approved_rev INTEGER NOT NULL,"
    "  auto_approved INTEGER NOT NULL, decided_by TEXT NOT NULL);"
    "CREATE INDEX chunks_by_sandbox ON chunks (sandbox, created_ms);"
    "CREATE INDEX chunks_by_dedup ON chunks (sandbox, dedup_key) WHERE dedup_key <> '';"
    "CREATE INDEX chunks_by_key ON chunks (sandbox, status, host, port, binary);"
    "CREATE TABLE events ("
    "  seq INTEGER PRIMARY KEY, ts_ms INTEGER NOT NULL, sandbox TEXT NOT NULL,"
    "  kind TEXT NOT NULL, line TEXT NOT NULL, json TEXT NOT NULL);",
    /* 1 -> 2: the audit chain (docs/audit.md): each event's sealed record
     * and its digest. */
    "ALTER TABLE events ADD COLUMN record TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE events ADD COLUMN seal TEXT NOT NULL DEFAULT '';",
    /* 2 -> 3: what every submission reads comes from an index, not from a
     * scan of the sandbox's chunks: the next draft version, the approval
     * sequence, the pending chunks of a key in creation order (supersede;
     * without created_ms the planner preferred chunks_by_sandbox) and the
     * approved chunks in approval order (composition). */
    "CREATE INDEX chunks_by_draft ON chunks (sandbox, draft_version);"
    "CREATE INDEX chunks_by_seq ON chunks (sandbox, approved_seq);"
    "DROP INDEX chunks_by_key;"
    "CREATE INDEX chunks_by_key ON chunks (sandbox, status, host, port, binary, created_ms);"
    "CREATE INDEX chunks_by_status ON chunks (sandbox, status, approved_seq);"
    "DROP INDEX chunks_by_dedup;"
    "CREATE INDEX chunks_by_dedup ON chunks (sandbox, dedup_key, created_ms) "
    "WHERE dedup_key <> '';",
    /* 3 -> 4: host-side tool servers registered per sandbox (tool discovery) */
    "CREATE TABLE tool_servers ("
    "  sandbox INTEGER NOT NULL, name TEXT NOT NULL, base_url TEXT NOT NULL,"
    "  openapi_blob TEXT NOT NULL, created_ms INTEGER NOT NULL,"
    "  PRIMARY KEY (sandbox, name));",
    /* 4 -> 5: approvals that stay proven (docs/advisor.md#reproof): the
     * evidence an approval rested on, kept apart from the latest
     * evaluation, and why a chunk is suspended. An approved chunk of an
     * older store rested on the evaluation it still holds. */
    "ALTER TABLE chunks ADD COLUMN approved_evidence TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE chunks ADD COLUMN suspension_reason TEXT NOT NULL DEFAULT '';"
    "UPDATE chunks SET approved_evidence = evidence WHERE status = 'approved';",
};

/* ===========================================================================
 * Helpers
 * ========================================================================= */

pv_result store_sq_exec(struct store *s, const char *sql)
{
    PV_ENSURE(sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK, PV_ERR_IO);
    return PV_RESULT_OK;
}

/* ROLLBACK, whose failure the caller cannot act on (the connection's
 * next BEGIN fails then). */
static pv_result rollback(struct store *s)
{
    return store_sq_exec(s, "ROLLBACK");
}

/* WAL mode. Switching a new database to WAL needs an exclusive lock, and
 * SQLite answers SQLITE_BUSY there without calling the busy handler when
 * another connection is opening the same new file at that moment (the
 * advisor's workers open theirs together): retry for the busy timeout. */
static pv_result wal_on(struct store *s)
{
    for (unsigned waited = 0;; waited += 10) {
        int rc = sqlite3_exec(s->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
        if (rc == SQLITE_OK) {
            return PV_RESULT_OK;
        }
        PV_ENSURE((rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && waited < BUSY_TIMEOUT_MS,
                  PV_ERR_IO);
        (void)poll(NULL, 0, 10);
    }
}

/* ===========================================================================
 * Open, close, transactions
 * ========================================================================= */

static int user_version(struct store *s)
{
    sqlite3_stmt *st = store_prep(s, "PRAGMA user_version");
    int version = -1;

    if (st != NULL && sqlite3_step(st) == SQLITE_ROW) {
        version = sqlite3_column_int(st, 0);
    }
    store_done(s, st);
    return version;
}

static pv_result migrate(struct store *s, char *err, size_t errlen)
{
    int version = user_version(s);

    PV_ENSURE(version >= 0, PV_ERR_IO);
    if (version > STORE_SCHEMA_VERSION) {
        snprintf(err, errlen, "database schema version %d is newer than this build's (%d)", version,
                 STORE_SCHEMA_VERSION);
        PV_BAIL(PV_ERR_USAGE);
    }
    while (version < STORE_SCHEMA_VERSION) {
        char pragma[64];
        /* The version is read again under the write lock: a connection
         * that opened the same new database at the same time may have
         * migrated it while this one waited. */
        if (!pv_ok(store_sq_exec(s, "BEGIN IMMEDIATE"))) {
            snprintf(err, errlen, "schema migration: %s", sqlite3_errmsg(s->db));
            PV_BAIL(PV_ERR_IO);
        }
        version = user_version(s);
        if (version < 0 || version >= STORE_SCHEMA_VERSION) {
            (void)rollback(s);
            PV_ENSURE(version >= 0, PV_ERR_IO);
            break;
        }
        snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", version + 1);
        if (!pv_ok(store_sq_exec(s, migrations[version])) || !pv_ok(store_sq_exec(s, pragma)) ||
            !pv_ok(store_sq_exec(s, "COMMIT"))) {
            snprintf(err, errlen, "schema migration %d -> %d failed: %s", version, version + 1,
                     sqlite3_errmsg(s->db));
            (void)rollback(s);
            PV_BAIL(PV_ERR_IO);
        }
        version++;
    }
    return PV_RESULT_OK;
}

/* Open the file 'path' into 's' (ops set by store_open, which closes 's'
 * on failure): WAL + FULL, the schema's migrations. */
pv_result store_sq_open(const char *path, struct store *s, char *err, size_t errlen)
{
    if (sqlite3_open_v2(path, &s->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path,
                 s->db != NULL ? sqlite3_errmsg(s->db) : "cannot open");
        PV_BAIL(PV_ERR_IO);
    }
    sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
    /* WAL + FULL: each commit is fsync'd to the log before it returns. */
    if (!pv_ok(wal_on(s)) || !pv_ok(store_sq_exec(s, "PRAGMA synchronous=FULL")) ||
        !pv_ok(store_sq_exec(s, "PRAGMA foreign_keys=ON"))) {
        snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(s->db));
        PV_BAIL(PV_ERR_IO);
    }
    if (!pv_ok(migrate(s, err, errlen))) {
        PV_BAIL(PV_ERR_IO);
    }
    (void)chmod(path, 0600);
    return PV_RESULT_OK;
}

void store_sq_close(struct store *s)
{
    store_stmt_cache_free(s);
    sqlite3_close(s->db);
    s->db = NULL;
}

const char *store_sq_errmsg(const struct store *s)
{
    return s->db != NULL ? sqlite3_errmsg(s->db) : "no database";
}

pv_result store_sq_begin(struct store *s, bool write)
{
    return store_sq_exec(s, write ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
}

pv_result store_sq_commit(struct store *s)
{
    return store_sq_exec(s, "COMMIT");
}

/* One process owns an SQLite store: every session lock is its own. */
pv_result store_sq_try_lock(struct store *s, int64_t key, bool *got)
{
    (void)s;
    (void)key;
    *got = true;
    return PV_RESULT_OK;
}

void store_sq_unlock(struct store *s, int64_t key)
{
    (void)s;
    (void)key;
}

/* ===========================================================================
 * Blobs
 * ========================================================================= */

pv_result store_sq_blob_put(struct store *s, const void *data, size_t len, const char sha[65])
{
    sqlite3_stmt *st = store_prep(s, "INSERT OR IGNORE INTO blobs (sha256, data) VALUES (?, ?)");
    PV_ENSURE(st != NULL, PV_ERR_IO);
    if (sqlite3_bind_text(st, 1, sha, 64, SQLITE_TRANSIENT) != SQLITE_OK ||
        sqlite3_bind_blob(st, 2, len > 0 ? data : "", (int)len, SQLITE_TRANSIENT) != SQLITE_OK) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return store_run(s, st);
}

char *store_sq_blob_get(struct store *s, const char *sha, size_t *len)
{
    sqlite3_stmt *st = store_prep(s, "SELECT data FROM blobs WHERE sha256 = ?");
    char *out = NULL;

    if (st == NULL || !store_bind(st, "s", sha)) {
        store_done(s, st);
        return NULL;
    }
    if (sqlite3_step(st) == SQLITE_ROW) {
        size_t n = (size_t)sqlite3_column_bytes(st, 0);
        const void *p = sqlite3_column_blob(st, 0);
        out = pv_malloc(n + 1);
        if (out != NULL) {
            if (n > 0) {
                memcpy(out, p, n);
            }
            out[n] = '\0';
            if (len != NULL) {
                *len = n;
            }
        }
    }
    store_done(s, st);
    return out;
}
