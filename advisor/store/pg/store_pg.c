/* SPDX-License-Identifier: Apache-2.0 */
/* store_pg.c - the store on PostgreSQL, through libpq (store.h)
 *
 * Selected by store_open() when the location is a libpq URI
 * (postgresql://... or postgres://...). The calls of store.h keep their
 * meaning; store_open() gives the connection the table store_pg_ops
 * (store.c) and each call dispatches here through it.
 *
 * Guarantees, as on SQLite (docs/operations.md#postgresql):
 *  - Durability: the session sets synchronous_commit = on, so COMMIT
 *    returns once the commit record is flushed on the server; an answer
 *    the advisor sends after store_commit() survives a crash of either
 *    process. A COMMIT the server turned into a ROLLBACK (an aborted
 *    transaction) is reported as a failure, never as success.
 *  - One writer at a time: store_begin() opens a READ COMMITTED
 *    transaction and takes a transaction-scoped advisory lock
 *    (WRITER_LOCK) - what BEGIN IMMEDIATE is on SQLite. Every statement
 *    after it sees every earlier writer's commit, so the review-token
 *    compare-and-set, revision numbers (MAX + 1) and the audit chain head
 *    are exact without serialization failures to retry. Every state change
 *    appends to one hash chain with one head, so writers are serial in any
 *    case; the lock makes that explicit and holds across replicas that
 *    share the database.
 *  - Read transactions: REPEATABLE READ READ ONLY (one snapshot, no lock).
 *  - Schema: the same versions as SQLite, kept in table schema_version
 *    (SQLite's user_version); migrations[i] moves version i to i+1 in one
 *    transaction under MIGRATE_LOCK, so two advisors starting together on
 *    one database migrate once.
 *
 * Every value is a bound parameter (prepared once per connection, then run
 * by name); no SQL is built from data. The one column SQLite has no twin of
 * (it is implicit there): chunks.ord (BIGSERIAL) stands for SQLite's
 * rowid in "oldest first" orders. A connection the server dropped is opened
 * again before the next statement outside a transaction. Statements that
 * can meet a constraint in normal use (a taken sandbox name, a chunk id)
 * use ON CONFLICT DO NOTHING and count rows: on PostgreSQL a failed
 * statement aborts the whole transaction, where SQLite would let the
 * caller carry on.
 */
#include "config.h"

#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>
#include <openssl/sha.h>

#include "advisor/store/store.h"
#include "advisor/store/store_int.h"

/* Advisory lock keys: arbitrary constants ("pv" writer / migration). */
#define WRITER_LOCK "7076001"
#define MIGRATE_LOCK "7076002"
#define MAX_PARAMS 40

/* ===========================================================================
 * Schema: the same versions as store_sqlite.c's migrations
 * ========================================================================= */

static const char *const pg_migrations[STORE_SCHEMA_VERSION] = {
    /* 0 -> 1 ('ord' stands for SQLite's rowid: insertion order) */
    "CREATE TABLE blobs (sha256 TEXT PRIMARY KEY, data BYTEA NOT NULL);"
    "CREATE TABLE sandboxes ("
    "  id BIGSERIAL PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  token_sha256 TEXT NOT NULL,"
    "  credentials TEXT NOT NULL DEFAULT '',"
    "  boundary TEXT NOT NULL DEFAULT '',"
    "  addresses TEXT NOT NULL DEFAULT '[]',"
    "  created_ms BIGINT NOT NULL);"
    "CREATE TABLE settings ("
    "  scope TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
    "  PRIMARY KEY (scope, key));"
    "CREATE TABLE base_revisions ("
    "  sandbox BIGINT NOT NULL, rev BIGINT NOT NULL, blob TEXT NOT NULL,"
    "  hash TEXT NOT NULL, cause TEXT NOT NULL, created_ms BIGINT NOT NULL,"
    "  PRIMARY KEY (sandbox, rev));"
    "CREATE TABLE revisions ("
    "  sandbox BIGINT NOT NULL, rev BIGINT NOT NULL, base_rev BIGINT NOT NULL,"
    "  blob TEXT NOT NULL, hash TEXT NOT NULL, cause TEXT NOT NULL,"
    "  created_ms BIGINT NOT NULL, PRIMARY KEY (sandbox, rev));"
    "CREATE TABLE loaded ("
    "  sandbox BIGINT NOT NULL, rev BIGINT NOT NULL, hash TEXT NOT NULL,"
    "  at_ms BIGINT NOT NULL);"
    "CREATE INDEX loaded_by_sandbox ON loaded (sandbox, rev);"
    "CREATE TABLE chunks ("
    "  id TEXT PRIMARY KEY, ord BIGSERIAL NOT NULL, sandbox BIGINT NOT NULL,"
    "  draft_version BIGINT NOT NULL,"
    "  status TEXT NOT NULL, rule_name TEXT NOT NULL, proposed_rule TEXT NOT NULL,"
    "  rationale TEXT NOT NULL, security_notes TEXT NOT NULL,"
    "  confidence DOUBLE PRECISION NOT NULL,"
    "  created_ms BIGINT NOT NULL, decided_ms BIGINT NOT NULL, host TEXT NOT NULL,"
    "  port BIGINT NOT NULL, \"binary\" TEXT NOT NULL, hit_count BIGINT NOT NULL,"
    "  first_seen_ms BIGINT NOT NULL, last_seen_ms BIGINT NOT NULL,"
    "  validation_result TEXT NOT NULL, rejection_reason TEXT NOT NULL,"
    "  application_error TEXT NOT NULL, review_token TEXT NOT NULL,"
    "  current_hash TEXT NOT NULL, candidate_hash TEXT NOT NULL,"
    "  analysis_mode TEXT NOT NULL, dedup_key TEXT NOT NULL, stage TEXT NOT NULL,"
    "  evidence TEXT NOT NULL, approved_seq BIGINT NOT NULL, approved_rev BIGINT NOT NULL,"
    "  auto_approved BIGINT NOT NULL, decided_by TEXT NOT NULL);"
    "CREATE INDEX chunks_by_sandbox ON chunks (sandbox, created_ms);"
    "CREATE INDEX chunks_by_dedup ON chunks (sandbox, dedup_key) WHERE dedup_key <> '';"
    "CREATE INDEX chunks_by_key ON chunks (sandbox, status, host, port, \"binary\");"
    "CREATE TABLE events ("
    "  seq BIGINT PRIMARY KEY, ts_ms BIGINT NOT NULL, sandbox TEXT NOT NULL,"
    "  kind TEXT NOT NULL, line TEXT NOT NULL, json TEXT NOT NULL);",
    /* 1 -> 2: the audit chain */
    "ALTER TABLE events ADD COLUMN record TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE events ADD COLUMN seal TEXT NOT NULL DEFAULT '';",
    /* 2 -> 3: indexes for what every submission reads */
    "CREATE INDEX chunks_by_draft ON chunks (sandbox, draft_version);"
    "CREATE INDEX chunks_by_seq ON chunks (sandbox, approved_seq);"
    "DROP INDEX chunks_by_key;"
    "CREATE INDEX chunks_by_key ON chunks (sandbox, status, host, port, \"binary\", created_ms);"
    "CREATE INDEX chunks_by_status ON chunks (sandbox, status, approved_seq);"
    "DROP INDEX chunks_by_dedup;"
    "CREATE INDEX chunks_by_dedup ON chunks (sandbox, dedup_key, created_ms) "
    "WHERE dedup_key <> '';",
    /* 3 -> 4: tool servers */
    "CREATE TABLE tool_servers ("
    "  sandbox BIGINT NOT NULL, name TEXT NOT NULL, base_url TEXT NOT NULL,"
    "  openapi_blob TEXT NOT NULL, created_ms BIGINT NOT NULL,"
    "  PRIMARY KEY (sandbox, name));",
    /* 4 -> 5: approvals that stay proven */
    "ALTER TABLE chunks ADD COLUMN approved_evidence TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE chunks ADD COLUMN suspension_reason TEXT NOT NULL DEFAULT '';"
    "UPDATE chunks SET approved_evidence = evidence WHERE status = 'approved';",
};

/* ===========================================================================
 * Helpers
 * ========================================================================= */

static void set_err(struct store *s, const char *what)
{
    const char *m = PQerrorMessage(s->pg->conn);
    size_t n;

    snprintf(s->err, sizeof(s->err), "%s%s%s", what != NULL ? what : "", what != NULL ? ": " : "",
             m != NULL && *m != '\0' ? m : "unknown error");
    n = strlen(s->err);
    while (n > 0 && (s->err[n - 1] == '\n' || s->err[n - 1] == ' ')) {
        s->err[--n] = '\0';
    }
}

#define SESSION_SETTINGS \
    "SET synchronous_commit = on; SET lock_timeout = '30s'; SET client_min_messages = warning"

/* A connection the server dropped (a restart, a failover) is opened again
 * before the next statement outside a transaction; never inside one, where
 * the transaction is lost and the caller sees the failure. */
static void reconnect(struct store *s)
{
    PGresult *res;

    if (s->in_tx) {
        return;
    }
    if (PQstatus(s->pg->conn) == CONNECTION_OK) {
        /* An idle connection has nothing to read unless the server closed
         * it (or sent a notice): PQconsumeInput then finds the end and
         * marks the connection bad, without a failed statement first. */
        struct pollfd p = {.fd = PQsocket(s->pg->conn), .events = POLLIN};
        if (p.fd < 0 || poll(&p, 1, 0) <= 0 || PQconsumeInput(s->pg->conn) == 1) {
            return;
        }
    }
    /* A new session has none of the old one's prepared statements. */
    for (size_t i = 0; i < s->pg->nprep; i++) {
        free(s->pg->prep[i]);
    }
    s->pg->nprep = 0;
    PQreset(s->pg->conn);
    if (PQstatus(s->pg->conn) == CONNECTION_OK) {
        res = PQexec(s->pg->conn, SESSION_SETTINGS);
        PQclear(res);
    }
}

/* Run a command without parameters; PV_ERR_IO on failure. */
static pv_result pg_exec(struct store *s, const char *sql)
{
    PGresult *res;
    ExecStatusType st;

    reconnect(s);
    res = PQexec(s->pg->conn, sql);
    st = PQresultStatus(res);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        set_err(s, NULL);
        PQclear(res);
        PV_BAIL(PV_ERR_IO);
    }
    PQclear(res);
    return PV_RESULT_OK;
}

/* Run 'sql' with 'n' text parameters: by name when it is prepared on this
 * connection (preparing it the first time), else unnamed. A statement that
 * fails to prepare (say, inside a failed transaction) is not cached. */
static PGresult *run_params(struct store *s, const char *sql, int n, const char *const *vals)
{
    char name[32];
    size_t i = 0;

    while (i < s->pg->nprep && strcmp(s->pg->prep[i], sql) != 0) {
        i++;
    }
    if (i == s->pg->nprep && i < PREP_CACHE) {
        PGresult *p;
        char *copy = pv_strdup(sql);
        snprintf(name, sizeof(name), "pv%zu", i);
        p = copy != NULL ? PQprepare(s->pg->conn, name, sql, n, NULL) : NULL;
        if (PQresultStatus(p) == PGRES_COMMAND_OK) {
            s->pg->prep[s->pg->nprep++] = copy;
        } else {
            free(copy);
        }
        PQclear(p);
    }
    if (i < s->pg->nprep) {
        snprintf(name, sizeof(name), "pv%zu", i);
        return PQexecPrepared(s->pg->conn, name, n, vals, NULL, NULL, 0);
    }
    return PQexecParams(s->pg->conn, sql, n, NULL, vals, NULL, NULL, 0);
}

/* Run 'sql' with parameters typed by 'types': 's' text (NULL is ""),
 * 'i' int64, 'd' double. The result (caller PQclears) or NULL on failure. */
static PGresult *pg_query(struct store *s, const char *sql, const char *types, ...)
{
    char nums[MAX_PARAMS][32];
    const char *vals[MAX_PARAMS];
    size_t n = strlen(types);
    va_list ap;
    PGresult *res;
    ExecStatusType st;

    if (n > MAX_PARAMS) {
        snprintf(s->err, sizeof(s->err), "too many parameters");
        return NULL;
    }
    va_start(ap, types);
    for (size_t i = 0; i < n; i++) {
        switch (types[i]) {
        case 's': {
            const char *v = va_arg(ap, const char *);
            vals[i] = v != NULL ? v : "";
            break;
        }
        case 'i':
            snprintf(nums[i], sizeof(nums[i]), "%" PRId64, va_arg(ap, int64_t));
            vals[i] = nums[i];
            break;
        default: /* 'd' */
            snprintf(nums[i], sizeof(nums[i]), "%.17g", va_arg(ap, double));
            vals[i] = nums[i];
            break;
        }
    }
    va_end(ap);
    reconnect(s);
    res = run_params(s, sql, (int)n, vals);
    st = PQresultStatus(res);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && !s->in_tx &&
        PQstatus(s->pg->conn) != CONNECTION_OK && strncmp(sql, "SELECT", 6) == 0) {
        /* A read outside a transaction on a connection found dead: once
         * more on a new one (a write is not repeated: it may have
         * committed before the connection died). */
        PQclear(res);
        reconnect(s);
        res = run_params(s, sql, (int)n, vals);
        st = PQresultStatus(res);
    }
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        set_err(s, NULL);
        PQclear(res);
        return NULL;
    }
    return res;
}

/* Rows a command touched. */
static int64_t affected(PGresult *res)
{
    const char *t = PQcmdTuples(res);
    return t != NULL && *t != '\0' ? strtoll(t, NULL, 10) : 0;
}

/* A command's result: PV_ERR_IO when it failed, else the count of rows it
 * touched into '*n' (may be NULL). */
static pv_result done_count(PGresult *res, int64_t *n)
{
    PV_ENSURE(res != NULL, PV_ERR_IO);
    if (n != NULL) {
        *n = affected(res);
    }
    PQclear(res);
    return PV_RESULT_OK;
}

/* A command that must touch exactly one row: 'none' otherwise. */
static pv_result done_one(PGresult *res, int none)
{
    int64_t n = 0;

    PV_GUARD(done_count(res, &n));
    PV_ENSURE(n == 1, none);
    return PV_RESULT_OK;
}

static char *col_text(const PGresult *res, int row, int col)
{
    return pv_strdup(PQgetisnull(res, row, col) ? "" : PQgetvalue(res, row, col));
}

static int64_t col_int(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? 0 : strtoll(PQgetvalue(res, row, col), NULL, 10);
}

/* ===========================================================================
 * Open, close, transactions
 * ========================================================================= */

void store_describe(const char *loc, char *buf, size_t len)
{
    PQconninfoOption *opts;
    size_t used;

    if (!store_pg_location(loc)) {
        snprintf(buf, len, "sqlite %s", strncmp(loc, "sqlite:", 7) == 0 ? loc + 7 : loc);
        return;
    }
    opts = PQconninfoParse(loc, NULL);
    if (opts == NULL) {
        snprintf(buf, len, "postgresql (location not parsed)");
        return;
    }
    used = (size_t)snprintf(buf, len, "postgresql");
    for (PQconninfoOption *o = opts; o->keyword != NULL && used < len; o++) {
        if (o->val != NULL &&
            (strcmp(o->keyword, "dbname") == 0 || strcmp(o->keyword, "host") == 0 ||
             strcmp(o->keyword, "port") == 0 || strcmp(o->keyword, "user") == 0)) {
            used += (size_t)snprintf(buf + used, len - used, " %s=%s", o->keyword, o->val);
        }
    }
    PQconninfoFree(opts);
}

pv_result store_pg_version(struct store *s, int64_t *version, char *err, size_t errlen)
{
    PGresult *res = pg_query(s, "SELECT version FROM schema_version", "");

    if (res == NULL) {
        snprintf(err, errlen, "reading the schema version: %s", s->err);
        PV_BAIL(PV_ERR_IO);
    }
    *version = PQntuples(res) == 1 ? col_int(res, 0, 0) : 0;
    PQclear(res);
    if (*version > STORE_SCHEMA_VERSION) {
        snprintf(err, errlen, "database schema version %" PRId64 " is newer than this build's (%d)",
                 *version, STORE_SCHEMA_VERSION);
        PV_BAIL(PV_ERR_USAGE);
    }
    return PV_RESULT_OK;
}

static pv_result pg_migrate(struct store *s, char *err, size_t errlen)
{
    int64_t version = 0;

    for (;;) {
        char sql[96];
        pv_result res;
        /* Each step under the migration lock, re-reading the version: a
         * second advisor that waited finds the work done. */
        if (!pv_ok(pg_exec(s, "BEGIN")) ||
            !pv_ok(pg_exec(s, "SELECT pg_advisory_xact_lock(" MIGRATE_LOCK ")")) ||
            !pv_ok(pg_exec(s, "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT "
                              "NULL)"))) {
            snprintf(err, errlen, "reading the schema version: %s", s->err);
            (void)pg_exec(s, "ROLLBACK");
            PV_BAIL(PV_ERR_IO);
        }
        res = store_pg_version(s, &version, err, errlen);
        if (!pv_ok(res) || version == STORE_SCHEMA_VERSION) {
            (void)pg_exec(s, "ROLLBACK");
            return res;
        }
        snprintf(sql, sizeof(sql),
                 "DELETE FROM schema_version; INSERT INTO schema_version "
                 "VALUES (%" PRId64 ")",
                 version + 1);
        if (!pv_ok(pg_exec(s, pg_migrations[version])) || !pv_ok(pg_exec(s, sql)) ||
            !pv_ok(pg_exec(s, "COMMIT"))) {
            snprintf(err, errlen, "schema migration %" PRId64 " -> %" PRId64 " failed: %s", version,
                     version + 1, s->err);
            (void)pg_exec(s, "ROLLBACK");
            PV_BAIL(PV_ERR_IO);
        }
    }
}

pv_result store_pg_conn_new(struct store *s, const char *uri, bool migrate, char *err,
                            size_t errlen)
{
    struct store_pg *c = pv_calloc(1, sizeof(*c));

    err[0] = '\0';
    if (c == NULL) {
        snprintf(err, errlen, "out of memory");
        PV_BAIL(PV_ERR_NOMEM);
    }
    c->conn = store_pg_connect(uri);
    if (c->conn == NULL || PQstatus(c->conn) != CONNECTION_OK) {
        /* libpq's message names the server, never the password. */
        snprintf(err, errlen, "postgresql: %s",
                 c->conn != NULL ? PQerrorMessage(c->conn) : "out of memory");
        err[strcspn(err, "\n")] = '\0';
        store_pg_conn_free(c);
        PV_BAIL(PV_ERR_IO);
    }
    s->pg = c;
    /* synchronous_commit on: a COMMIT waits for its WAL flush. lock_timeout
     * bounds a wait for the writer lock like SQLite's busy timeout. */
    if (!pv_ok(pg_exec(s, SESSION_SETTINGS)) || (migrate && !pv_ok(pg_migrate(s, err, errlen)))) {
        if (err[0] == '\0') {
            snprintf(err, errlen, "postgresql: %s", s->err);
        }
        s->pg = NULL;
        store_pg_conn_free(c);
        PV_BAIL(PV_ERR_IO);
    }
    return PV_RESULT_OK;
}

void store_pg_conn_free(struct store_pg *c)
{
    if (c == NULL) {
        return;
    }
    if (c->conn != NULL) {
        PQfinish(c->conn);
    }
    for (size_t i = 0; i < c->nprep; i++) {
        free(c->prep[i]);
    }
    free(c);
}

pv_result store_pg_exec(struct store *s, const char *sql)
{
    return pg_exec(s, sql);
}

pv_result store_pg_begin(struct store *s, bool write)
{
    const char *begin = write ? "BEGIN ISOLATION LEVEL READ COMMITTED"
                              : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

    /* libpq notices a dropped connection only when a statement fails: a
     * BEGIN that failed on a lost connection is tried once more on a new
     * one (nothing was done yet). */
    if (!pv_ok(pg_exec(s, begin))) {
        PV_ENSURE(PQstatus(s->pg->conn) != CONNECTION_OK, PV_ERR_IO);
        PV_GUARD(pg_exec(s, begin));
    }
    if (write && !pv_ok(pg_exec(s, "SELECT pg_advisory_xact_lock(" WRITER_LOCK ")"))) {
        (void)pg_exec(s, "ROLLBACK");
        PV_BAIL(PV_ERR_IO);
    }
    store_pg_note_reset(s, write);
    return PV_RESULT_OK;
}

pv_result store_pg_commit(struct store *s)
{
    char sql[STORE_PG_NOTE_MAX + 64];
    PGresult *res;
    bool ok;

    /* A write transaction tells the other replicas (docs/scale-out.md):
     * NOTIFY is delivered at COMMIT, and only if it commits; one round trip
     * with the COMMIT (a failed NOTIFY makes the COMMIT a ROLLBACK). */
    store_pg_note_sql(s, sql, sizeof(sql));
    res = PQexec(s->pg->conn, sql);
    ok = PQresultStatus(res) == PGRES_COMMAND_OK && strcmp(PQcmdStatus(res), "COMMIT") == 0;

    if (!ok) {
        set_err(s, "commit");
    }
    PQclear(res);
    PV_ENSURE(ok, PV_ERR_IO);
    return PV_RESULT_OK;
}

/* ===========================================================================
 * Blobs (bytea, sent and read in binary)
 * ========================================================================= */

pv_result store_pg_blob_put(struct store *s, const void *data, size_t len, const char sha[65])
{
    const char *vals[2] = {sha, len > 0 ? data : ""};
    int lens[2] = {64, (int)len};
    int fmts[2] = {0, 1};
    PGresult *res;
    ExecStatusType st;

    PV_ENSURE(len <= INT32_MAX, PV_ERR_TOOBIG);
    reconnect(s);
    res = PQexecParams(s->pg->conn,
                       "INSERT INTO blobs (sha256, data) VALUES ($1, $2) ON CONFLICT DO NOTHING", 2,
                       NULL, vals, lens, fmts, 0);
    st = PQresultStatus(res);
    if (st != PGRES_COMMAND_OK) {
        set_err(s, NULL);
    }
    PQclear(res);
    PV_ENSURE(st == PGRES_COMMAND_OK, PV_ERR_IO);
    return PV_RESULT_OK;
}

char *store_pg_blob_get(struct store *s, const char *sha, size_t *len)
{
    const char *vals[1] = {sha};
    PGresult *res;
    char *out = NULL;

    reconnect(s);
    res = PQexecParams(s->pg->conn, "SELECT data FROM blobs WHERE sha256 = $1", 1, NULL, vals, NULL,
                       NULL, 1);
    if (PQresultStatus(res) != PGRES_TUPLES_OK) {
        set_err(s, NULL);
    } else if (PQntuples(res) == 1) {
        size_t n = (size_t)PQgetlength(res, 0, 0);
        out = pv_malloc(n + 1);
        if (out != NULL) {
            memcpy(out, PQgetvalue(res, 0, 0), n);
            out[n] = '\0';
            if (len != NULL) {
                *len = n;
            }
        }
    }
    PQclear(res);
    return out;
}

/* ===========================================================================
 * Sandboxes, tool servers, settings
 * ========================================================================= */

#define SANDBOX_COLS "id, name, token_sha256, credentials, boundary, addresses, created_ms"

static pv_result sandbox_row(const PGresult *res, int r, struct store_sandbox *out)
{
    memset(out, 0, sizeof(*out));
    out->id = col_int(res, r, 0);
    out->name = col_text(res, r, 1);
    out->token_sha256 = col_text(res, r, 2);
    out->credentials = col_text(res, r, 3);
    out->boundary = col_text(res, r, 4);
    out->addresses = col_text(res, r, 5);
    out->created_ms = col_int(res, r, 6);
    if (out->name == NULL || out->token_sha256 == NULL || out->credentials == NULL ||
        out->boundary == NULL || out->addresses == NULL) {
        store_sandbox_clear(out);
        PV_BAIL(PV_ERR_NOMEM);
    }
    return PV_RESULT_OK;
}

pv_result store_pg_sandbox_create(struct store *s, struct store_sandbox *sb)
{
    PGresult *res;
    int rows;

    if (sb->created_ms == 0) {
        sb->created_ms = store_now_ms();
    }
    res = pg_query(s,
                   "INSERT INTO sandboxes (name, token_sha256, credentials, boundary, addresses, "
                   "created_ms) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name) DO NOTHING "
                   "RETURNING id",
                   "sssssi", sb->name, sb->token_sha256, sb->credentials, sb->boundary,
                   sb->addresses != NULL ? sb->addresses : "[]", sb->created_ms);
    PV_ENSURE(res != NULL, PV_ERR_IO);
    rows = PQntuples(res);
    if (rows == 1) {
        sb->id = col_int(res, 0, 0);
    }
    PQclear(res);
    PV_ENSURE(rows == 1, PV_ERR_EXISTS);
    store_pg_note_sandbox(s, sb->id);
    return PV_RESULT_OK;
}

static pv_result sandbox_one(PGresult *res, struct store_sandbox *out)
{
    pv_result r;

    memset(out, 0, sizeof(*out));
    PV_ENSURE(res != NULL, PV_ERR_IO);
    r = PQntuples(res) == 1 ? sandbox_row(res, 0, out) : pv_fail(PV_ERR_NOTFOUND, __func__);
    PQclear(res);
    return r;
}

pv_result store_pg_sandbox_get(struct store *s, const char *name, struct store_sandbox *out)
{
    return sandbox_one(
        pg_query(s, "SELECT " SANDBOX_COLS " FROM sandboxes WHERE name = $1", "s", name), out);
}

pv_result store_pg_sandbox_get_id(struct store *s, int64_t id, struct store_sandbox *out)
{
    return sandbox_one(pg_query(s, "SELECT " SANDBOX_COLS " FROM sandboxes WHERE id = $1", "i", id),
                       out);
}

pv_result store_pg_sandbox_update(struct store *s, const struct store_sandbox *sb)
{
    store_pg_note_sandbox(s, sb->id);
    return done_one(pg_query(s,
                             "UPDATE sandboxes SET token_sha256 = $1, credentials = $2, "
                             "boundary = $3, addresses = $4 WHERE id = $5",
                             "ssssi", sb->token_sha256, sb->credentials, sb->boundary,
                             sb->addresses != NULL ? sb->addresses : "[]", sb->id),
                    PV_ERR_NOTFOUND);
}

pv_result store_pg_sandbox_delete(struct store *s, int64_t id)
{
    static const char *const sql[] = {
        "DELETE FROM chunks WHERE sandbox = $1",
        "DELETE FROM revisions WHERE sandbox = $1",
        "DELETE FROM base_revisions WHERE sandbox = $1",
        "DELETE FROM loaded WHERE sandbox = $1",
        "DELETE FROM tool_servers WHERE sandbox = $1",
        "DELETE FROM settings WHERE scope = (SELECT name FROM sandboxes WHERE id = $1)",
    };

    store_pg_note_sandbox(s, id);
    store_pg_note_settings(s);
    for (size_t i = 0; i < PV_ARRAY_LEN(sql); i++) {
        PV_GUARD(done_count(pg_query(s, sql[i], "i", id), NULL));
    }
    return done_one(pg_query(s, "DELETE FROM sandboxes WHERE id = $1", "i", id), PV_ERR_NOTFOUND);
}

pv_result store_pg_sandbox_each(struct store *s,
                                void (*fn)(void *arg, const struct store_sandbox *sb), void *arg)
{
    PGresult *res = pg_query(s, "SELECT " SANDBOX_COLS " FROM sandboxes ORDER BY name", "");

    PV_ENSURE(res != NULL, PV_ERR_IO);
    for (int r = 0; r < PQntuples(res); r++) {
        struct store_sandbox sb;
        if (!pv_ok(sandbox_row(res, r, &sb))) {
            PQclear(res);
            PV_BAIL(PV_ERR_NOMEM);
        }
        fn(arg, &sb);
        store_sandbox_clear(&sb);
    }
    PQclear(res);
    return PV_RESULT_OK;
}

pv_result store_pg_server_put(struct store *s, int64_t sandbox, const struct store_server *sv)
{
    return done_count(pg_query(s,
                               "INSERT INTO tool_servers (sandbox, name, base_url, openapi_blob, "
                               "created_ms) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (sandbox, "
                               "name) DO UPDATE SET base_url = excluded.base_url, openapi_blob = "
                               "excluded.openapi_blob, created_ms = excluded.created_ms",
                               "isssi", sandbox, sv->name, sv->base_url, sv->openapi_blob,
                               sv->created_ms),
                      NULL);
}

pv_result store_pg_server_delete(struct store *s, int64_t sandbox, const char *name)
{
    return done_one(pg_query(s, "DELETE FROM tool_servers WHERE sandbox = $1 AND name = $2", "is",
                             sandbox, name),
                    PV_ERR_NOTFOUND);
}

pv_result store_pg_server_each(struct store *s, int64_t sandbox,
                               void (*fn)(void *arg, const struct store_server *sv), void *arg)
{
    PGresult *res = pg_query(s,
                             "SELECT name, base_url, openapi_blob, created_ms FROM tool_servers "
                             "WHERE sandbox = $1 ORDER BY name",
                             "i", sandbox);

    PV_ENSURE(res != NULL, PV_ERR_IO);
    for (int r = 0; r < PQntuples(res); r++) {
        struct store_server sv;
        sv.name = col_text(res, r, 0);
        sv.base_url = col_text(res, r, 1);
        sv.openapi_blob = col_text(res, r, 2);
        sv.created_ms = col_int(res, r, 3);
        if (sv.name == NULL || sv.base_url == NULL || sv.openapi_blob == NULL) {
            store_server_clear(&sv);
            PQclear(res);
            PV_BAIL(PV_ERR_NOMEM);
        }
        fn(arg, &sv);
        store_server_clear(&sv);
    }
    PQclear(res);
    return PV_RESULT_OK;
}

pv_result store_pg_setting_read(struct store *s, const char *scope, const char *key, char **out)
{
    PGresult *res =
        pg_query(s, "SELECT value FROM settings WHERE scope = $1 AND key = $2", "ss", scope, key);
    bool ok;

    *out = NULL;
    PV_ENSURE(res != NULL, PV_ERR_IO);
    if (PQntuples(res) == 1) {
        *out = col_text(res, 0, 0);
    }
    ok = PQntuples(res) == 0 || *out != NULL;
    PQclear(res);
    PV_ENSURE(ok, PV_ERR_NOMEM);
    return PV_RESULT_OK;
}

pv_result store_pg_setting_put(struct store *s, const char *scope, const char *key,
                               const char *json)
{
    store_pg_note_settings(s);
    return done_count(pg_query(s,
                               "INSERT INTO settings (scope, key, value) VALUES ($1, $2, $3) "
                               "ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value",
                               "sss", scope, key, json),
                      NULL);
}

pv_result store_pg_setting_delete(struct store *s, const char *scope, const char *key)
{
    store_pg_note_settings(s);
    return done_one(
        pg_query(s, "DELETE FROM settings WHERE scope = $1 AND key = $2", "ss", scope, key),
        PV_ERR_NOTFOUND);
}

/* ===========================================================================
 * Revisions and loads
 * ========================================================================= */

static pv_result revision_one(PGresult *res, struct store_revision *out)
{
    memset(out, 0, sizeof(*out));
    PV_ENSURE(res != NULL, PV_ERR_IO);
    if (PQntuples(res) != 1) {
        PQclear(res);
        PV_BAIL(PV_ERR_NOTFOUND);
    }
    out->rev = col_int(res, 0, 0);
    out->base_rev = col_int(res, 0, 1);
    out->blob = col_text(res, 0, 2);
    out->hash = col_text(res, 0, 3);
    out->cause = col_text(res, 0, 4);
    out->created_ms = col_int(res, 0, 5);
    PQclear(res);
    if (out->blob == NULL || out->hash == NULL || out->cause == NULL) {
        store_revision_clear(out);
        PV_BAIL(PV_ERR_NOMEM);
    }
    return PV_RESULT_OK;
}

/* The next number is MAX + 1 read inside the writer's transaction (the
 * writer lock makes it exact); INSERT ... SELECT does it in one trip. */
static pv_result store_pg_revision_put(struct store *s, bool base, int64_t sandbox,
                                       struct store_revision *r)
{
    PGresult *res;
    int rows;

    if (r->created_ms == 0) {
        r->created_ms = store_now_ms();
    }
    if (base) {
        res = pg_query(s,
                       "INSERT INTO base_revisions (sandbox, rev, blob, hash, cause, created_ms) "
                       "SELECT $1, COALESCE(MAX(rev), 0) + 1, $2, $3, $4, $5 FROM base_revisions "
                       "WHERE sandbox = $1 RETURNING rev",
                       "isssi", sandbox, r->blob, r->hash, r->cause, r->created_ms);
    } else {
        res = pg_query(s,
                       "INSERT INTO revisions (sandbox, rev, base_rev, blob, hash, cause, "
                       "created_ms) SELECT $1, COALESCE(MAX(rev), 0) + 1, $2, $3, $4, $5, $6 "
                       "FROM revisions WHERE sandbox = $1 RETURNING rev",
                       "iisssi", sandbox, r->base_rev, r->blob, r->hash, r->cause, r->created_ms);
    }
    PV_ENSURE(res != NULL, PV_ERR_IO);
    rows = PQntuples(res);
    if (rows == 1) {
        r->rev = col_int(res, 0, 0);
    }
    PQclear(res);
    PV_ENSURE(rows == 1, PV_ERR_IO);
    return PV_RESULT_OK;
}

pv_result store_pg_base_put(struct store *s, int64_t sandbox, struct store_revision *r)
{
    return store_pg_revision_put(s, true, sandbox, r);
}

pv_result store_pg_rev_put(struct store *s, int64_t sandbox, struct store_revision *r)
{
    return store_pg_revision_put(s, false, sandbox, r);
}

pv_result store_pg_base_latest(struct store *s, int64_t sandbox, struct store_revision *out)
{
    return revision_one(pg_query(s,
                                 "SELECT rev, rev, blob, hash, cause, created_ms FROM "
                                 "base_revisions WHERE sandbox = $1 ORDER BY rev DESC LIMIT 1",
                                 "i", sandbox),
                        out);
}

pv_result store_pg_rev_latest(struct store *s, int64_t sandbox, struct store_revision *out)
{
    return revision_one(pg_query(s,
                                 "SELECT rev, base_rev, blob, hash, cause, created_ms FROM "
                                 "revisions WHERE sandbox = $1 ORDER BY rev DESC LIMIT 1",
                                 "i", sandbox),
                        out);
}

pv_result store_pg_rev_get(struct store *s, int64_t sandbox, int64_t rev,
                           struct store_revision *out)
{
    return revision_one(pg_query(s,
                                 "SELECT rev, base_rev, blob, hash, cause, created_ms FROM "
                                 "revisions WHERE sandbox = $1 AND rev = $2",
                                 "ii", sandbox, rev),
                        out);
}

pv_result store_pg_loaded_put(struct store *s, int64_t sandbox, int64_t rev, const char *hash,
                              int64_t at_ms)
{
    return done_count(pg_query(s,
                               "INSERT INTO loaded (sandbox, rev, hash, at_ms) VALUES ($1, $2, "
                               "$3, $4)",
                               "iisi", sandbox, rev, hash, at_ms),
                      NULL);
}

/* The one integer a query of one sandbox id returns (0 when none). */
static int64_t one_int(struct store *s, const char *sql, int64_t sandbox)
{
    PGresult *res = pg_query(s, sql, "i", sandbox);
    int64_t v = 0;

    if (res != NULL && PQntuples(res) == 1) {
        v = col_int(res, 0, 0);
    }
    PQclear(res);
    return v;
}

int64_t store_pg_loaded_latest(struct store *s, int64_t sandbox)
{
    return one_int(s, "SELECT COALESCE(MAX(rev), 0) FROM loaded WHERE sandbox = $1", sandbox);
}

/* ===========================================================================
 * Chunks
 * ========================================================================= */

static pv_result chunk_row(const PGresult *res, int r, struct store_chunk *c)
{
    int i = 0;
    bool ok = true;

    memset(c, 0, sizeof(*c));
#define T(f) ok = (c->f = col_text(res, r, i++)) != NULL && ok
#define I(f) c->f = col_int(res, r, i++)
    T(id);
    I(sandbox);
    I(draft_version);
    T(status);
    T(rule_name);
    T(proposed_rule);
    T(rationale);
    T(security_notes);
    c->confidence = strtod(PQgetvalue(res, r, i++), NULL);
    I(created_ms);
    I(decided_ms);
    T(host);
    I(port);
    T(binary);
    I(hit_count);
    I(first_seen_ms);
    I(last_seen_ms);
    T(validation_result);
    T(rejection_reason);
    T(application_error);
    T(review_token);
    T(current_hash);
    T(candidate_hash);
    T(analysis_mode);
    T(dedup_key);
    T(stage);
    T(evidence);
    I(approved_seq);
    I(approved_rev);
    c->auto_approved = col_int(res, r, i++) != 0;
    T(decided_by);
    T(approved_evidence);
    T(suspension_reason);
#undef T
#undef I
    if (!ok) {
        store_chunk_clear(c);
        PV_BAIL(PV_ERR_NOMEM);
    }
    return PV_RESULT_OK;
}

pv_result store_pg_chunk_insert(struct store *s, const struct store_chunk *c)
{
    return done_one(
        pg_query(
            s,
            "INSERT INTO chunks (" STORE_CHUNK_COLS ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
            "$9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, "
            "$25, $26, $27, $28, $29, $30, $31, $32, $33) ON CONFLICT (id) DO NOTHING",
            "siisssssdiisisiiissssssssssiiisss", c->id, c->sandbox, c->draft_version, c->status,
            c->rule_name, c->proposed_rule, c->rationale, c->security_notes, c->confidence,
            c->created_ms, c->decided_ms, c->host, c->port, c->binary, c->hit_count,
            c->first_seen_ms, c->last_seen_ms, c->validation_result, c->rejection_reason,
            c->application_error, c->review_token, c->current_hash, c->candidate_hash,
            c->analysis_mode, c->dedup_key, c->stage, c->evidence, c->approved_seq, c->approved_rev,
            (int64_t)c->auto_approved, c->decided_by, c->approved_evidence, c->suspension_reason),
        PV_ERR_EXISTS);
}

static pv_result chunk_one(PGresult *res, struct store_chunk *out)
{
    pv_result r;

    memset(out, 0, sizeof(*out));
    PV_ENSURE(res != NULL, PV_ERR_IO);
    r = PQntuples(res) >= 1 ? chunk_row(res, 0, out) : pv_fail(PV_ERR_NOTFOUND, __func__);
    PQclear(res);
    return r;
}

pv_result store_pg_chunk_get(struct store *s, int64_t sandbox, const char *id,
                             struct store_chunk *out)
{
    return chunk_one(
        pg_query(s, "SELECT " STORE_CHUNK_COLS " FROM chunks WHERE sandbox = $1 AND id = $2", "is",
                 sandbox, id),
        out);
}

pv_result store_pg_chunk_update(struct store *s, const struct store_chunk *c,
                                const char *expect_status)
{
    /* READ COMMITTED re-checks the WHERE clause on the newest row version
     * after waiting for a concurrent writer: the compare-and-set holds even
     * for a write outside the writer lock. */
    return done_one(
        pg_query(s,
                 "UPDATE chunks SET status = $1, rule_name = $2, proposed_rule = $3, "
                 "rationale = $4, security_notes = $5, confidence = $6, decided_ms = $7, "
                 "hit_count = $8, last_seen_ms = $9, validation_result = $10, "
                 "rejection_reason = $11, application_error = $12, review_token = $13, "
                 "current_hash = $14, candidate_hash = $15, evidence = $16, approved_seq = $17, "
                 "approved_rev = $18, auto_approved = $19, decided_by = $20, "
                 "approved_evidence = $21, suspension_reason = $22, host = $23, port = $24, "
                 "\"binary\" = $25 WHERE id = $26 AND sandbox = $27 AND status = $28",
                 "sssssdiiisssssssiiissssissis", c->status, c->rule_name, c->proposed_rule,
                 c->rationale, c->security_notes, c->confidence, c->decided_ms, c->hit_count,
                 c->last_seen_ms, c->validation_result, c->rejection_reason, c->application_error,
                 c->review_token, c->current_hash, c->candidate_hash, c->evidence, c->approved_seq,
                 c->approved_rev, (int64_t)c->auto_approved, c->decided_by, c->approved_evidence,
                 c->suspension_reason, c->host, c->port, c->binary, c->id, c->sandbox,
                 expect_status),
        PV_ERR_CONFLICT);
}

static pv_result chunk_each(PGresult *res, void (*fn)(void *arg, const struct store_chunk *c),
                            void *arg)
{
    PV_ENSURE(res != NULL, PV_ERR_IO);
    for (int r = 0; r < PQntuples(res); r++) {
        struct store_chunk c;
        if (!pv_ok(chunk_row(res, r, &c))) {
            PQclear(res);
            PV_BAIL(PV_ERR_NOMEM);
        }
        fn(arg, &c);
        store_chunk_clear(&c);
    }
    PQclear(res);
    return PV_RESULT_OK;
}

pv_result store_pg_chunk_each(struct store *s, int64_t sandbox, const char *status,
                              void (*fn)(void *arg, const struct store_chunk *c), void *arg)
{
    return chunk_each(pg_query(s,
                               "SELECT " STORE_CHUNK_COLS " FROM chunks WHERE sandbox = $1 AND "
                               "($2 = '' OR status = $2) ORDER BY created_ms, ord",
                               "is", sandbox, status != NULL ? status : ""),
                      fn, arg);
}

pv_result store_pg_chunk_each_key(struct store *s, int64_t sandbox, const char *status,
                                  const char *host, int64_t port, const char *binary,
                                  void (*fn)(void *arg, const struct store_chunk *c), void *arg)
{
    return chunk_each(pg_query(s,
                               "SELECT " STORE_CHUNK_COLS " FROM chunks WHERE sandbox = $1 AND "
                               "status = $2 AND host = $3 AND port = $4 AND \"binary\" = $5 "
                               "ORDER BY created_ms, ord",
                               "issis", sandbox, status, host, port, binary),
                      fn, arg);
}

pv_result store_pg_chunk_each_approved(struct store *s, int64_t sandbox,
                                       void (*fn)(void *arg, const struct store_chunk *c),
                                       void *arg)
{
    return chunk_each(pg_query(s,
                               "SELECT " STORE_CHUNK_COLS " FROM chunks WHERE sandbox = $1 AND "
                               "status = 'approved' ORDER BY approved_seq",
                               "i", sandbox),
                      fn, arg);
}

pv_result store_pg_chunk_by_dedup(struct store *s, int64_t sandbox, const char *key,
                                  struct store_chunk *out)
{
    return chunk_one(pg_query(s,
                              "SELECT " STORE_CHUNK_COLS " FROM chunks WHERE sandbox = $1 AND "
                              "dedup_key = $2 AND dedup_key <> '' ORDER BY created_ms DESC, "
                              "ord DESC LIMIT 1",
                              "is", sandbox, key),
                     out);
}

int64_t store_pg_chunk_max_draft(struct store *s, int64_t sandbox)
{
    return one_int(s, "SELECT COALESCE(MAX(draft_version), 0) FROM chunks WHERE sandbox = $1",
                   sandbox);
}

int64_t store_pg_chunk_max_seq(struct store *s, int64_t sandbox)
{
    return one_int(s, "SELECT COALESCE(MAX(approved_seq), 0) FROM chunks WHERE sandbox = $1",
                   sandbox);
}

pv_result store_pg_chunk_clear_pending(struct store *s, int64_t sandbox, int64_t *n)
{
    return done_count(
        pg_query(s, "DELETE FROM chunks WHERE sandbox = $1 AND status = 'pending'", "i", sandbox),
        n);
}

/* ===========================================================================
 * Events
 * ========================================================================= */

pv_result store_pg_event_append(struct store *s, struct store_event *e)
{
    PGresult *res;
    int rows;

    if (e->ts_ms == 0) {
        e->ts_ms = store_now_ms();
    }
    res = pg_query(s,
                   "INSERT INTO events (seq, ts_ms, sandbox, kind, line, json, record, seal) "
                   "SELECT COALESCE(MAX(seq), 0) + 1, $1, $2, $3, $4, $5, $6, $7 FROM events "
                   "RETURNING seq",
                   "issssss", e->ts_ms, e->sandbox, e->kind, e->line, e->json, e->record, e->seal);
    PV_ENSURE(res != NULL, PV_ERR_IO);
    rows = PQntuples(res);
    if (rows == 1) {
        e->seq = col_int(res, 0, 0);
    }
    PQclear(res);
    PV_ENSURE(rows == 1, PV_ERR_IO);
    return PV_RESULT_OK;
}

static pv_result seal_row(PGresult *res, int64_t *seq, char seal[65])
{
    PV_ENSURE(res != NULL, PV_ERR_IO);
    if (PQntuples(res) != 1) {
        PQclear(res);
        PV_BAIL(PV_ERR_NOTFOUND);
    }
    if (seq != NULL) {
        *seq = col_int(res, 0, 0);
    }
    snprintf(seal, 65, "%s", PQgetvalue(res, 0, 1));
    PQclear(res);
    return PV_RESULT_OK;
}

pv_result store_pg_event_head(struct store *s, int64_t *seq, char seal[65])
{
    pv_result r = seal_row(
        pg_query(s, "SELECT seq, seal FROM events ORDER BY seq DESC LIMIT 1", ""), seq, seal);

    if (r.err == PV_ERR_NOTFOUND) {
        *seq = 0;
        memset(seal, '0', 64);
        seal[64] = '\0';
        return PV_RESULT_OK;
    }
    return r;
}

pv_result store_pg_event_set_record(struct store *s, int64_t seq, const char *record,
                                    const char *seal)
{
    return done_one(pg_query(s,
                             "UPDATE events SET record = $1, seal = $2 WHERE seq = $3 AND "
                             "record = ''",
                             "ssi", record, seal, seq),
                    PV_ERR_CONFLICT);
}

pv_result store_pg_event_seal(struct store *s, int64_t seq, char seal[65])
{
    return seal_row(pg_query(s, "SELECT seq, seal FROM events WHERE seq = $1", "i", seq), NULL,
                    seal);
}

pv_result store_pg_event_each(struct store *s, int64_t after, size_t limit,
                              void (*fn)(void *arg, const struct store_event *e), void *arg)
{
    PGresult *res = pg_query(s,
                             "SELECT seq, ts_ms, sandbox, kind, line, json, record, seal "
                             "FROM events WHERE seq > $1 ORDER BY seq LIMIT $2",
                             "ii", after, limit > (size_t)INT64_MAX ? INT64_MAX : (int64_t)limit);

    PV_ENSURE(res != NULL, PV_ERR_IO);
    for (int r = 0; r < PQntuples(res); r++) {
        struct store_event e;
        e.seq = col_int(res, r, 0);
        e.ts_ms = col_int(res, r, 1);
        e.sandbox = col_text(res, r, 2);
        e.kind = col_text(res, r, 3);
        e.line = col_text(res, r, 4);
        e.json = col_text(res, r, 5);
        e.record = col_text(res, r, 6);
        e.seal = col_text(res, r, 7);
        if (e.sandbox == NULL || e.kind == NULL || e.line == NULL || e.json == NULL ||
            e.record == NULL || e.seal == NULL) {
            store_event_clear(&e);
            PQclear(res);
            PV_BAIL(PV_ERR_NOMEM);
        }
        fn(arg, &e);
        store_event_clear(&e);
    }
    PQclear(res);
    return PV_RESULT_OK;
}
