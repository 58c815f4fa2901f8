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
 * This file holds the connection (schema, statement cache, transactions,
 * the group writer) and the blobs; each table's rows are in their own file
 * (store_sandbox.c, store_revision.c, store_chunk.c, store_event.c), which
 * share the helpers of store_int.h.
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

#include "advisor/store.h"
#include "advisor/store_int.h"

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

/* A statement on either back end (transactions, savepoints). */
static pv_result exec(struct store *s, const char *sql)
{
    return s->ops->exec(s, sql);
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

static void stmt_cache_free(struct store *s)
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

int64_t store_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
        if (!pv_ok(exec(s, "BEGIN IMMEDIATE"))) {
            snprintf(err, errlen, "schema migration: %s", sqlite3_errmsg(s->db));
            PV_BAIL(PV_ERR_IO);
        }
        version = user_version(s);
        if (version < 0 || version >= STORE_SCHEMA_VERSION) {
            (void)exec(s, "ROLLBACK");
            PV_ENSURE(version >= 0, PV_ERR_IO);
            break;
        }
        snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", version + 1);
        if (!pv_ok(exec(s, migrations[version])) || !pv_ok(exec(s, pragma)) ||
            !pv_ok(exec(s, "COMMIT"))) {
            snprintf(err, errlen, "schema migration %d -> %d failed: %s", version, version + 1,
                     sqlite3_errmsg(s->db));
            (void)exec(s, "ROLLBACK");
            PV_BAIL(PV_ERR_IO);
        }
        version++;
    }
    return PV_RESULT_OK;
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
    if (sqlite3_open_v2(path, &s->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path,
                 s->db != NULL ? sqlite3_errmsg(s->db) : "cannot open");
        store_close(s);
        PV_BAIL(PV_ERR_IO);
    }
    sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
    /* WAL + FULL: each commit is fsync'd to the log before it returns. */
    if (!pv_ok(wal_on(s)) || !pv_ok(exec(s, "PRAGMA synchronous=FULL")) ||
        !pv_ok(exec(s, "PRAGMA foreign_keys=ON"))) {
        snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(s->db));
        store_close(s);
        PV_BAIL(PV_ERR_IO);
    }
    if (!pv_ok(migrate(s, err, errlen))) {
        store_close(s);
        PV_BAIL(PV_ERR_IO);
    }
    (void)chmod(path, 0600);
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

void store_sq_close(struct store *s)
{
    stmt_cache_free(s);
    sqlite3_close(s->db);
    s->db = NULL;
}

const char *store_errmsg(const struct store *s)
{
    return s != NULL && s->ops != NULL ? s->ops->errmsg(s) : "no database";
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
        (void)exec(s, "ROLLBACK");
        s->in_tx = false;
    }
}

/* ===========================================================================
 * Group commit: one writer thread, one fsync per group
 * ========================================================================= */

struct group_item {
    struct group_item *next;
    pv_result (*fn)(struct store *st, void *arg);
    void *arg;
    pv_result res;
    bool done;
};

struct store_group {
    struct store *st;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work;
    pthread_cond_t done;
    struct group_item *head;
    struct group_item *tail;
    bool stop;
};

static void group_run(struct store_group *g, struct group_item *list)
{
    pv_result res = store_begin(g->st);

    for (struct group_item *it = list; it != NULL; it = it->next) {
        if (!pv_ok(res)) {
            it->res = res;
            continue;
        }
        if (!pv_ok(exec(g->st, "SAVEPOINT item"))) {
            it->res = pv_fail(PV_ERR_IO, __func__);
            continue;
        }
        it->res = it->fn(g->st, it->arg);
        if (!pv_ok(it->res)) {
            (void)exec(g->st, "ROLLBACK TO item");
        }
        (void)exec(g->st, "RELEASE item");
    }
    if (pv_ok(res)) {
        res = store_commit(g->st);
    }
    if (!pv_ok(res)) {
        /* Nothing of the group is on disk: every item fails. */
        for (struct group_item *it = list; it != NULL; it = it->next) {
            if (pv_ok(it->res)) {
                it->res = res;
            }
        }
    }
}

static void *group_main(void *arg)
{
    struct store_group *g = arg;

    pthread_mutex_lock(&g->mu);
    for (;;) {
        struct group_item *list;
        while (g->head == NULL && !g->stop) {
            pthread_cond_wait(&g->work, &g->mu);
        }
        if (g->head == NULL) {
            break;
        }
        list = g->head;
        g->head = NULL;
        g->tail = NULL;
        pthread_mutex_unlock(&g->mu);
        group_run(g, list);
        pthread_mutex_lock(&g->mu);
        for (struct group_item *it = list; it != NULL;) {
            struct group_item *next = it->next;
            it->done = true; /* the waiter may free it from here on */
            it = next;
        }
        pthread_cond_broadcast(&g->done);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

struct store_group *store_group_open(const char *dir, char *err, size_t errlen)
{
    struct store_group *g = pv_calloc(1, sizeof(*g));

    if (g == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (!pv_ok(store_open(dir, &g->st, err, errlen))) {
        free(g);
        return NULL;
    }
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->work, NULL);
    pthread_cond_init(&g->done, NULL);
    if (pthread_create(&g->thread, NULL, group_main, g) != 0) {
        snprintf(err, errlen, "cannot start the store's writer thread");
        store_close(g->st);
        free(g);
        return NULL;
    }
    return g;
}

void store_group_close(struct store_group *g)
{
    if (g == NULL) {
        return;
    }
    pthread_mutex_lock(&g->mu);
    g->stop = true;
    pthread_cond_signal(&g->work);
    pthread_mutex_unlock(&g->mu);
    pthread_join(g->thread, NULL);
    store_close(g->st);
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->work);
    pthread_cond_destroy(&g->done);
    free(g);
}

pv_result store_group_write(struct store_group *g, pv_result (*fn)(struct store *st, void *arg),
                            void *arg)
{
    struct group_item it = {.fn = fn, .arg = arg};

    pthread_mutex_lock(&g->mu);
    if (g->stop) {
        pthread_mutex_unlock(&g->mu);
        PV_BAIL(PV_ERR_IO);
    }
    /* 'it' lives on this stack while it is queued: the writer unlinks it
     * and sets 'done' before this function can return. */
    if (g->tail != NULL) {
        g->tail->next = &it;
    } else {
        /* cppcheck-suppress autoVariables ; unlinked before return (above) */
        g->head = &it;
    }
    /* cppcheck-suppress autoVariables ; unlinked before return (above) */
    g->tail = &it;
    pthread_cond_signal(&g->work);
    while (!it.done) {
        pthread_cond_wait(&g->done, &g->mu);
    }
    pthread_mutex_unlock(&g->mu);
    return it.res;
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
