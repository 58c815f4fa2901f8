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
 */
#include "config.h"

#include <errno.h>
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

/* Prepared statements are kept per connection and reused (preparing one
 * cost as much as the rest of a submission's store work): prep() hands out
 * the cached statement for the same SQL text when it is not in use, and
 * done() resets it for the next caller. A statement in use (a nested query
 * of the same text) or a full cache gets a fresh one, finalised by done(). */
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

static pv_result exec(struct store *s, const char *sql)
{
    PV_ENSURE(sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK, PV_ERR_IO);
    return PV_RESULT_OK;
}

static sqlite3_stmt *prep(struct store *s, const char *sql)
{
    sqlite3_stmt *st = NULL;
    struct stmt_slot *free_slot = NULL;

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
static void done(struct store *s, sqlite3_stmt *st)
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
static bool bind(sqlite3_stmt *st, const char *types, ...)
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
static pv_result run(struct store *s, sqlite3_stmt *st)
{
    int rc;

    PV_ENSURE(st != NULL, PV_ERR_IO);
    rc = sqlite3_step(st);
    done(s, st);
    if (rc == SQLITE_CONSTRAINT) {
        PV_BAIL(PV_ERR_EXISTS);
    }
    PV_ENSURE(rc == SQLITE_DONE, PV_ERR_IO);
    return PV_RESULT_OK;
}

static char *col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return pv_strdup(t != NULL ? (const char *)t : "");
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ===========================================================================
 * Open, close, transactions
 * ========================================================================= */

static pv_result migrate(struct store *s, char *err, size_t errlen)
{
    sqlite3_stmt *st = prep(s, "PRAGMA user_version");
    int version;

    PV_ENSURE(st != NULL && sqlite3_step(st) == SQLITE_ROW, PV_ERR_IO);
    version = sqlite3_column_int(st, 0);
    done(s, st);
    if (version > STORE_SCHEMA_VERSION) {
        snprintf(err, errlen, "database schema version %d is newer than this build's (%d)", version,
                 STORE_SCHEMA_VERSION);
        PV_BAIL(PV_ERR_USAGE);
    }
    while (version < STORE_SCHEMA_VERSION) {
        char pragma[64];
        snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", version + 1);
        if (!pv_ok(exec(s, "BEGIN IMMEDIATE")) || !pv_ok(exec(s, migrations[version])) ||
            !pv_ok(exec(s, pragma)) || !pv_ok(exec(s, "COMMIT"))) {
            snprintf(err, errlen, "schema migration %d -> %d failed: %s", version, version + 1,
                     sqlite3_errmsg(s->db));
            (void)exec(s, "ROLLBACK");
            PV_BAIL(PV_ERR_IO);
        }
        version++;
    }
    return PV_RESULT_OK;
}

pv_result store_open(const char *dir, struct store **out, char *err, size_t errlen)
{
    char path[4096];
    struct store *s;
    struct stat sb;

    *out = NULL;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        snprintf(err, errlen, "%s: %s", dir,
                 errno != 0 && stat(dir, &sb) != 0 ? strerror(errno) : "not a directory");
        PV_BAIL(PV_ERR_IO);
    }
    if ((size_t)snprintf(path, sizeof(path), "%s/advisor.db", dir) >= sizeof(path)) {
        snprintf(err, errlen, "%s: path too long", dir);
        PV_BAIL(PV_ERR_USAGE);
    }
    s = pv_calloc(1, sizeof(*s));
    if (s == NULL) {
        snprintf(err, errlen, "out of memory");
        PV_BAIL(PV_ERR_NOMEM);
    }
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
    if (!pv_ok(exec(s, "PRAGMA journal_mode=WAL")) || !pv_ok(exec(s, "PRAGMA synchronous=FULL")) ||
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
    stmt_cache_free(s);
    sqlite3_close(s->db);
    free(s);
}

const char *store_errmsg(const struct store *s)
{
    return s != NULL && s->db != NULL ? sqlite3_errmsg(s->db) : "no database";
}

pv_result store_begin(struct store *s)
{
    PV_ENSURE(!s->in_tx, PV_ERR_INTERNAL);
    PV_GUARD(exec(s, "BEGIN IMMEDIATE"));
    s->in_tx = true;
    return PV_RESULT_OK;
}

pv_result store_commit(struct store *s)
{
    PV_ENSURE(s->in_tx, PV_ERR_INTERNAL);
    if (!pv_ok(exec(s, "COMMIT"))) {
        store_rollback(s);
        PV_BAIL(PV_ERR_IO);
    }
    s->in_tx = false;
    return PV_RESULT_OK;
}

pv_result store_begin_read(struct store *s)
{
    PV_ENSURE(!s->in_tx, PV_ERR_INTERNAL);
    PV_GUARD(exec(s, "BEGIN DEFERRED"));
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

pv_result store_blob_put(struct store *s, const void *data, size_t len, char sha[65])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[SHA256_DIGEST_LENGTH];
    sqlite3_stmt *st;

    SHA256(data, len, md);
    for (size_t i = 0; i < sizeof(md); i++) {
        sha[2 * i] = hex[md[i] >> 4];
        sha[2 * i + 1] = hex[md[i] & 15];
    }
    sha[64] = '\0';
    st = prep(s, "INSERT OR IGNORE INTO blobs (sha256, data) VALUES (?, ?)");
    PV_ENSURE(st != NULL, PV_ERR_IO);
    if (sqlite3_bind_text(st, 1, sha, 64, SQLITE_TRANSIENT) != SQLITE_OK ||
        sqlite3_bind_blob(st, 2, len > 0 ? data : "", (int)len, SQLITE_TRANSIENT) != SQLITE_OK) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return run(s, st);
}

char *store_blob_get(struct store *s, const char *sha, size_t *len)
{
    sqlite3_stmt *st = prep(s, "SELECT data FROM blobs WHERE sha256 = ?");
    char *out = NULL;

    if (st == NULL || !bind(st, "s", sha)) {
        done(s, st);
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
    done(s, st);
    return out;
}

/* ===========================================================================
 * Sandboxes
 * ========================================================================= */

void store_sandbox_clear(struct store_sandbox *sb)
{
    free(sb->name);
    free(sb->token_sha256);
    free(sb->credentials);
    free(sb->boundary);
    free(sb->addresses);
    memset(sb, 0, sizeof(*sb));
}

#define SANDBOX_COLS "id, name, token_sha256, credentials, boundary, addresses, created_ms"

static pv_result sandbox_row(sqlite3_stmt *st, struct store_sandbox *out)
{
    memset(out, 0, sizeof(*out));
    out->id = sqlite3_column_int64(st, 0);
    out->name = col_text(st, 1);
    out->token_sha256 = col_text(st, 2);
    out->credentials = col_text(st, 3);
    out->boundary = col_text(st, 4);
    out->addresses = col_text(st, 5);
    out->created_ms = sqlite3_column_int64(st, 6);
    if (out->name == NULL || out->token_sha256 == NULL || out->credentials == NULL ||
        out->boundary == NULL || out->addresses == NULL) {
        store_sandbox_clear(out);
        PV_BAIL(PV_ERR_NOMEM);
    }
    return PV_RESULT_OK;
}

pv_result store_sandbox_create(struct store *s, struct store_sandbox *sb)
{
    sqlite3_stmt *st = prep(s, "INSERT INTO sandboxes (name, token_sha256, credentials, "
                               "boundary, addresses, created_ms) VALUES (?, ?, ?, ?, ?, ?)");

    if (sb->created_ms == 0) {
        sb->created_ms = now_ms();
    }
    if (st == NULL || !bind(st, "sssssi", sb->name, sb->token_sha256, sb->credentials, sb->boundary,
                            sb->addresses != NULL ? sb->addresses : "[]", sb->created_ms)) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    PV_GUARD(run(s, st));
    sb->id = sqlite3_last_insert_rowid(s->db);
    return PV_RESULT_OK;
}

static pv_result sandbox_get_by(struct store *s, const char *sql, const char *types,
                                const char *name, int64_t id, struct store_sandbox *out)
{
    sqlite3_stmt *st = prep(s, sql);
    pv_result r;
    int rc;

    memset(out, 0, sizeof(*out));
    PV_ENSURE(st != NULL, PV_ERR_IO);
    if (!(types[0] == 's' ? bind(st, "s", name) : bind(st, "i", id))) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        r = sandbox_row(st, out);
    } else {
        r = pv_fail(rc == SQLITE_DONE ? PV_ERR_NOTFOUND : PV_ERR_IO, __func__);
    }
    done(s, st);
    return r;
}

pv_result store_sandbox_get(struct store *s, const char *name, struct store_sandbox *out)
{
    return sandbox_get_by(s, "SELECT " SANDBOX_COLS " FROM sandboxes WHERE name = ?", "s", name, 0,
                          out);
}

pv_result store_sandbox_get_id(struct store *s, int64_t id, struct store_sandbox *out)
{
    return sandbox_get_by(s, "SELECT " SANDBOX_COLS " FROM sandboxes WHERE id = ?", "i", NULL, id,
                          out);
}

pv_result store_sandbox_update(struct store *s, const struct store_sandbox *sb)
{
    sqlite3_stmt *st = prep(s, "UPDATE sandboxes SET token_sha256 = ?, credentials = ?, "
                               "boundary = ?, addresses = ? WHERE id = ?");

    if (st == NULL || !bind(st, "ssssi", sb->token_sha256, sb->credentials, sb->boundary,
                            sb->addresses != NULL ? sb->addresses : "[]", sb->id)) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    PV_GUARD(run(s, st));
    PV_ENSURE(sqlite3_changes(s->db) == 1, PV_ERR_NOTFOUND);
    return PV_RESULT_OK;
}

pv_result store_sandbox_delete(struct store *s, int64_t id)
{
    static const char *const sql[] = {
        "DELETE FROM chunks WHERE sandbox = ?",
        "DELETE FROM revisions WHERE sandbox = ?",
        "DELETE FROM base_revisions WHERE sandbox = ?",
        "DELETE FROM loaded WHERE sandbox = ?",
        "DELETE FROM tool_servers WHERE sandbox = ?",
        "DELETE FROM settings WHERE scope = (SELECT name FROM sandboxes WHERE id = ?)",
        "DELETE FROM sandboxes WHERE id = ?",
    };

    for (size_t i = 0; i < PV_ARRAY_LEN(sql); i++) {
        sqlite3_stmt *st = prep(s, sql[i]);
        if (st == NULL || !bind(st, "i", id)) {
            done(s, st);
            PV_BAIL(PV_ERR_IO);
        }
        PV_GUARD(run(s, st));
    }
    PV_ENSURE(sqlite3_changes(s->db) == 1, PV_ERR_NOTFOUND);
    return PV_RESULT_OK;
}

pv_result store_sandbox_each(struct store *s, void (*fn)(void *arg, const struct store_sandbox *sb),
                             void *arg)
{
    sqlite3_stmt *st = prep(s, "SELECT " SANDBOX_COLS " FROM sandboxes ORDER BY name");
    int rc;

    PV_ENSURE(st != NULL, PV_ERR_IO);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct store_sandbox sb;
        if (!pv_ok(sandbox_row(st, &sb))) {
            done(s, st);
            PV_BAIL(PV_ERR_NOMEM);
        }
        fn(arg, &sb);
        store_sandbox_clear(&sb);
    }
    done(s, st);
    PV_ENSURE(rc == SQLITE_DONE, PV_ERR_IO);
    return PV_RESULT_OK;
}

/* ===========================================================================
 * Tool servers
 * ========================================================================= */

void store_server_clear(struct store_server *sv)
{
    free(sv->name);
    free(sv->base_url);
    free(sv->openapi_blob);
    memset(sv, 0, sizeof(*sv));
}

pv_result store_server_put(struct store *s, int64_t sandbox, const struct store_server *sv)
{
    sqlite3_stmt *st = prep(s, "INSERT OR REPLACE INTO tool_servers (sandbox, name, base_url, "
                               "openapi_blob, created_ms) VALUES (?, ?, ?, ?, ?)");

    if (st == NULL ||
        !bind(st, "isssi", sandbox, sv->name, sv->base_url, sv->openapi_blob, sv->created_ms)) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return run(s, st);
}

pv_result store_server_delete(struct store *s, int64_t sandbox, const char *name)
{
    sqlite3_stmt *st = prep(s, "DELETE FROM tool_servers WHERE sandbox = ? AND name = ?");

    if (st == NULL || !bind(st, "is", sandbox, name)) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    PV_GUARD(run(s, st));
    PV_ENSURE(sqlite3_changes(s->db) == 1, PV_ERR_NOTFOUND);
    return PV_RESULT_OK;
}

pv_result store_server_each(struct store *s, int64_t sandbox,
                            void (*fn)(void *arg, const struct store_server *sv), void *arg)
{
    sqlite3_stmt *st = prep(s, "SELECT name, base_url, openapi_blob, created_ms FROM "
                               "tool_servers WHERE sandbox = ? ORDER BY name");
    int rc = SQLITE_DONE;

    if (st == NULL || !bind(st, "i", sandbox)) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct store_server sv;
        sv.name = col_text(st, 0);
        sv.base_url = col_text(st, 1);
        sv.openapi_blob = col_text(st, 2);
        sv.created_ms = sqlite3_column_int64(st, 3);
        if (sv.name == NULL || sv.base_url == NULL || sv.openapi_blob == NULL) {
            store_server_clear(&sv);
            done(s, st);
            PV_BAIL(PV_ERR_NOMEM);
        }
        fn(arg, &sv);
        store_server_clear(&sv);
    }
    done(s, st);
    PV_ENSURE(rc == SQLITE_DONE, PV_ERR_IO);
    return PV_RESULT_OK;
}

/* ===========================================================================
 * Settings
 * ========================================================================= */

pv_result store_setting_read(struct store *s, const char *scope, const char *key, char **out)
{
    sqlite3_stmt *st = prep(s, "SELECT value FROM settings WHERE scope = ? AND key = ?");
    int rc = st != NULL && bind(st, "ss", scope, key) ? sqlite3_step(st) : SQLITE_ERROR;

    *out = rc == SQLITE_ROW ? col_text(st, 0) : NULL;
    done(s, st);
    PV_ENSURE(rc == SQLITE_DONE || *out != NULL, PV_ERR_IO);
    return PV_RESULT_OK;
}

char *store_setting_get(struct store *s, const char *scope, const char *key)
{
    char *out = NULL;
    pv_result r = store_setting_read(s, scope, key, &out);

    return pv_ok(r) ? out : NULL;
}

pv_result store_setting_put(struct store *s, const char *scope, const char *key, const char *json)
{
    sqlite3_stmt *st = prep(s, "INSERT INTO settings (scope, key, value) VALUES (?, ?, ?) "
                               "ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value");

    if (st == NULL || !bind(st, "sss", scope, key, json)) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return run(s, st);
}

pv_result store_setting_delete(struct store *s, const char *scope, const char *key)
{
    sqlite3_stmt *st = prep(s, "DELETE FROM settings WHERE scope = ? AND key = ?");

    if (st == NULL || !bind(st, "ss", scope, key)) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    PV_GUARD(run(s, st));
    PV_ENSURE(sqlite3_changes(s->db) == 1, PV_ERR_NOTFOUND);
    return PV_RESULT_OK;
}

/* ===========================================================================
 * Revisions
 * ========================================================================= */

void store_revision_clear(struct store_revision *r)
{
    free(r->blob);
    free(r->hash);
    free(r->cause);
    memset(r, 0, sizeof(*r));
}

static pv_result revision_one(struct store *s, const char *sql, int64_t sandbox, int64_t rev,
                              bool with_rev, struct store_revision *out)
{
    sqlite3_stmt *st = prep(s, sql);
    int rc;

    memset(out, 0, sizeof(*out));
    PV_ENSURE(st != NULL, PV_ERR_IO);
    if (!(with_rev ? bind(st, "ii", sandbox, rev) : bind(st, "i", sandbox))) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        done(s, st);
        PV_BAIL(rc == SQLITE_DONE ? PV_ERR_NOTFOUND : PV_ERR_IO);
    }
    out->rev = sqlite3_column_int64(st, 0);
    out->base_rev = sqlite3_column_int64(st, 1);
    out->blob = col_text(st, 2);
    out->hash = col_text(st, 3);
    out->cause = col_text(st, 4);
    out->created_ms = sqlite3_column_int64(st, 5);
    done(s, st);
    if (out->blob == NULL || out->hash == NULL || out->cause == NULL) {
        store_revision_clear(out);
        PV_BAIL(PV_ERR_NOMEM);
    }
    return PV_RESULT_OK;
}

static pv_result revision_put(struct store *s, const char *table, int64_t sandbox,
                              struct store_revision *r)
{
    char sql[256];
    sqlite3_stmt *st;
    bool base = strcmp(table, "base_revisions") == 0;

    if (r->created_ms == 0) {
        r->created_ms = now_ms();
    }
    snprintf(sql, sizeof(sql), "SELECT COALESCE(MAX(rev), 0) FROM %s WHERE sandbox = ?", table);
    st = prep(s, sql);
    if (st == NULL || !bind(st, "i", sandbox) || sqlite3_step(st) != SQLITE_ROW) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    r->rev = sqlite3_column_int64(st, 0) + 1;
    done(s, st);
    if (base) {
        st = prep(s, "INSERT INTO base_revisions (sandbox, rev, blob, hash, cause, created_ms) "
                     "VALUES (?, ?, ?, ?, ?, ?)");
        if (st == NULL ||
            !bind(st, "iisssi", sandbox, r->rev, r->blob, r->hash, r->cause, r->created_ms)) {
            done(s, st);
            PV_BAIL(PV_ERR_IO);
        }
    } else {
        st = prep(s, "INSERT INTO revisions (sandbox, rev, base_rev, blob, hash, cause, "
                     "created_ms) VALUES (?, ?, ?, ?, ?, ?, ?)");
        if (st == NULL || !bind(st, "iiisssi", sandbox, r->rev, r->base_rev, r->blob, r->hash,
                                r->cause, r->created_ms)) {
            done(s, st);
            PV_BAIL(PV_ERR_IO);
        }
    }
    return run(s, st);
}

pv_result store_base_put(struct store *s, int64_t sandbox, struct store_revision *r)
{
    return revision_put(s, "base_revisions", sandbox, r);
}

pv_result store_base_latest(struct store *s, int64_t sandbox, struct store_revision *out)
{
    return revision_one(s,
                        "SELECT rev, rev, blob, hash, cause, created_ms FROM base_revisions "
                        "WHERE sandbox = ? ORDER BY rev DESC LIMIT 1",
                        sandbox, 0, false, out);
}

pv_result store_rev_put(struct store *s, int64_t sandbox, struct store_revision *r)
{
    return revision_put(s, "revisions", sandbox, r);
}

pv_result store_rev_latest(struct store *s, int64_t sandbox, struct store_revision *out)
{
    return revision_one(s,
                        "SELECT rev, base_rev, blob, hash, cause, created_ms FROM revisions "
                        "WHERE sandbox = ? ORDER BY rev DESC LIMIT 1",
                        sandbox, 0, false, out);
}

pv_result store_rev_get(struct store *s, int64_t sandbox, int64_t rev, struct store_revision *out)
{
    return revision_one(s,
                        "SELECT rev, base_rev, blob, hash, cause, created_ms FROM revisions "
                        "WHERE sandbox = ? AND rev = ?",
                        sandbox, rev, true, out);
}

pv_result store_loaded_put(struct store *s, int64_t sandbox, int64_t rev, const char *hash,
                           int64_t at_ms)
{
    sqlite3_stmt *st =
        prep(s, "INSERT INTO loaded (sandbox, rev, hash, at_ms) VALUES (?, ?, ?, ?)");

    if (st == NULL || !bind(st, "iisi", sandbox, rev, hash, at_ms)) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return run(s, st);
}

static int64_t one_int(struct store *s, const char *sql, int64_t sandbox)
{
    sqlite3_stmt *st = prep(s, sql);
    int64_t v = 0;

    if (st != NULL && bind(st, "i", sandbox) && sqlite3_step(st) == SQLITE_ROW) {
        v = sqlite3_column_int64(st, 0);
    }
    done(s, st);
    return v;
}

int64_t store_loaded_latest(struct store *s, int64_t sandbox)
{
    return one_int(s, "SELECT COALESCE(MAX(rev), 0) FROM loaded WHERE sandbox = ?", sandbox);
}

/* ===========================================================================
 * Chunks
 * ========================================================================= */

void store_chunk_clear(struct store_chunk *c)
{
    char **strs[] = {&c->id,
                     &c->status,
                     &c->rule_name,
                     &c->proposed_rule,
                     &c->rationale,
                     &c->security_notes,
                     &c->host,
                     &c->binary,
                     &c->validation_result,
                     &c->rejection_reason,
                     &c->application_error,
                     &c->review_token,
                     &c->current_hash,
                     &c->candidate_hash,
                     &c->analysis_mode,
                     &c->dedup_key,
                     &c->stage,
                     &c->evidence,
                     &c->decided_by,
                     &c->approved_evidence,
                     &c->suspension_reason};

    for (size_t i = 0; i < PV_ARRAY_LEN(strs); i++) {
        free(*strs[i]);
    }
    memset(c, 0, sizeof(*c));
}

#define CHUNK_COLS                                                                              \
    "id, sandbox, draft_version, status, rule_name, proposed_rule, rationale, security_notes, " \
    "confidence, created_ms, decided_ms, host, port, binary, hit_count, first_seen_ms, "        \
    "last_seen_ms, validation_result, rejection_reason, application_error, review_token, "      \
    "current_hash, candidate_hash, analysis_mode, dedup_key, stage, evidence, approved_seq, "   \
    "approved_rev, auto_approved, decided_by, approved_evidence, suspension_reason"

static pv_result chunk_row(sqlite3_stmt *st, struct store_chunk *c)
{
    int i = 0;
    bool ok = true;

    memset(c, 0, sizeof(*c));
#define T(f) ok = (c->f = col_text(st, i++)) != NULL && ok
#define I(f) c->f = sqlite3_column_int64(st, i++)
    T(id);
    I(sandbox);
    I(draft_version);
    T(status);
    T(rule_name);
    T(proposed_rule);
    T(rationale);
    T(security_notes);
    c->confidence = sqlite3_column_double(st, i++);
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
    c->auto_approved = sqlite3_column_int(st, i++) != 0;
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

pv_result store_chunk_insert(struct store *s, const struct store_chunk *c)
{
    sqlite3_stmt *st = prep(s, "INSERT INTO chunks (" CHUNK_COLS ") VALUES (?, ?, ?, ?, ?, ?, ?, "
                               "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                               "?, ?, ?, ?)");

    if (st == NULL ||
        !bind(st, "siisssssdiisisiiissssssssssiiisss", c->id, c->sandbox, c->draft_version,
              c->status, c->rule_name, c->proposed_rule, c->rationale, c->security_notes,
              c->confidence, c->created_ms, c->decided_ms, c->host, c->port, c->binary,
              c->hit_count, c->first_seen_ms, c->last_seen_ms, c->validation_result,
              c->rejection_reason, c->application_error, c->review_token, c->current_hash,
              c->candidate_hash, c->analysis_mode, c->dedup_key, c->stage, c->evidence,
              c->approved_seq, c->approved_rev, (int64_t)c->auto_approved, c->decided_by,
              c->approved_evidence, c->suspension_reason)) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return run(s, st);
}

/* The one chunk a query keyed by (sandbox, text) selects. */
static pv_result chunk_one(struct store *s, const char *sql, int64_t sandbox, const char *text,
                           struct store_chunk *out)
{
    sqlite3_stmt *st = prep(s, sql);
    pv_result r;
    int rc;

    memset(out, 0, sizeof(*out));
    PV_ENSURE(st != NULL, PV_ERR_IO);
    if (!bind(st, "is", sandbox, text)) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    rc = sqlite3_step(st);
    r = rc == SQLITE_ROW ? chunk_row(st, out)
                         : pv_fail(rc == SQLITE_DONE ? PV_ERR_NOTFOUND : PV_ERR_IO, __func__);
    done(s, st);
    return r;
}

pv_result store_chunk_get(struct store *s, int64_t sandbox, const char *id, struct store_chunk *out)
{
    return chunk_one(s, "SELECT " CHUNK_COLS " FROM chunks WHERE sandbox = ? AND id = ?", sandbox,
                     id, out);
}

pv_result store_chunk_update(struct store *s, const struct store_chunk *c,
                             const char *expect_status)
{
    sqlite3_stmt *st = prep(
        s, "UPDATE chunks SET status = ?, rule_name = ?, proposed_rule = ?, rationale = ?, "
           "security_notes = ?, confidence = ?, decided_ms = ?, hit_count = ?, "
           "last_seen_ms = ?, validation_result = ?, rejection_reason = ?, "
           "application_error = ?, review_token = ?, current_hash = ?, candidate_hash = ?, "
           "evidence = ?, approved_seq = ?, approved_rev = ?, auto_approved = ?, decided_by = ?, "
           "approved_evidence = ?, suspension_reason = ? "
           "WHERE id = ? AND sandbox = ? AND status = ?");

    if (st == NULL ||
        !bind(st, "sssssdiiisssssssiiissssis", c->status, c->rule_name, c->proposed_rule,
              c->rationale, c->security_notes, c->confidence, c->decided_ms, c->hit_count,
              c->last_seen_ms, c->validation_result, c->rejection_reason, c->application_error,
              c->review_token, c->current_hash, c->candidate_hash, c->evidence, c->approved_seq,
              c->approved_rev, (int64_t)c->auto_approved, c->decided_by, c->approved_evidence,
              c->suspension_reason, c->id, c->sandbox, expect_status)) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    PV_GUARD(run(s, st));
    PV_ENSURE(sqlite3_changes(s->db) == 1, PV_ERR_CONFLICT);
    return PV_RESULT_OK;
}

static pv_result chunk_each(struct store *s, sqlite3_stmt *st,
                            void (*fn)(void *arg, const struct store_chunk *c), void *arg)
{
    int rc;

    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct store_chunk c;
        if (!pv_ok(chunk_row(st, &c))) {
            done(s, st);
            PV_BAIL(PV_ERR_NOMEM);
        }
        fn(arg, &c);
        store_chunk_clear(&c);
    }
    done(s, st);
    PV_ENSURE(rc == SQLITE_DONE, PV_ERR_IO);
    return PV_RESULT_OK;
}

pv_result store_chunk_each(struct store *s, int64_t sandbox, const char *status,
                           void (*fn)(void *arg, const struct store_chunk *c), void *arg)
{
    sqlite3_stmt *st = prep(s, "SELECT " CHUNK_COLS " FROM chunks WHERE sandbox = ? AND "
                               "(? = '' OR status = ?) ORDER BY created_ms, rowid");

    PV_ENSURE(st != NULL, PV_ERR_IO);
    if (!bind(st, "iss", sandbox, status != NULL ? status : "", status != NULL ? status : "")) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return chunk_each(s, st, fn, arg);
}

pv_result store_chunk_each_key(struct store *s, int64_t sandbox, const char *status,
                               const char *host, int64_t port, const char *binary,
                               void (*fn)(void *arg, const struct store_chunk *c), void *arg)
{
    sqlite3_stmt *st = prep(s, "SELECT " CHUNK_COLS " FROM chunks WHERE sandbox = ? AND "
                               "status = ? AND host = ? AND port = ? AND binary = ? "
                               "ORDER BY created_ms, rowid");

    PV_ENSURE(st != NULL, PV_ERR_IO);
    if (!bind(st, "issis", sandbox, status, host, port, binary)) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return chunk_each(s, st, fn, arg);
}

pv_result store_chunk_each_approved(struct store *s, int64_t sandbox,
                                    void (*fn)(void *arg, const struct store_chunk *c), void *arg)
{
    sqlite3_stmt *st = prep(s, "SELECT " CHUNK_COLS " FROM chunks WHERE sandbox = ? AND "
                               "status = 'approved' ORDER BY approved_seq");

    PV_ENSURE(st != NULL, PV_ERR_IO);
    if (!bind(st, "i", sandbox)) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return chunk_each(s, st, fn, arg);
}

pv_result store_chunk_by_dedup(struct store *s, int64_t sandbox, const char *key,
                               struct store_chunk *out)
{
    return chunk_one(s,
                     "SELECT " CHUNK_COLS " FROM chunks WHERE sandbox = ? AND dedup_key = ? "
                     "AND dedup_key <> '' ORDER BY created_ms DESC, rowid DESC LIMIT 1",
                     sandbox, key, out);
}

int64_t store_chunk_max_draft(struct store *s, int64_t sandbox)
{
    return one_int(s, "SELECT COALESCE(MAX(draft_version), 0) FROM chunks WHERE sandbox = ?",
                   sandbox);
}

int64_t store_chunk_max_seq(struct store *s, int64_t sandbox)
{
    return one_int(s, "SELECT COALESCE(MAX(approved_seq), 0) FROM chunks WHERE sandbox = ?",
                   sandbox);
}

pv_result store_chunk_clear_pending(struct store *s, int64_t sandbox, int64_t *n)
{
    sqlite3_stmt *st = prep(s, "DELETE FROM chunks WHERE sandbox = ? AND status = 'pending'");

    if (st == NULL || !bind(st, "i", sandbox)) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    PV_GUARD(run(s, st));
    *n = sqlite3_changes(s->db);
    return PV_RESULT_OK;
}

/* ===========================================================================
 * Events
 * ========================================================================= */

void store_event_clear(struct store_event *e)
{
    free(e->sandbox);
    free(e->kind);
    free(e->line);
    free(e->json);
    free(e->record);
    free(e->seal);
    memset(e, 0, sizeof(*e));
}

pv_result store_event_append(struct store *s, struct store_event *e)
{
    sqlite3_stmt *st;

    if (e->ts_ms == 0) {
        e->ts_ms = now_ms();
    }
    st = prep(s, "SELECT COALESCE(MAX(seq), 0) + 1 FROM events");
    if (st == NULL || sqlite3_step(st) != SQLITE_ROW) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    e->seq = sqlite3_column_int64(st, 0);
    done(s, st);
    st = prep(s, "INSERT INTO events (seq, ts_ms, sandbox, kind, line, json, record, seal) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    if (st == NULL || !bind(st, "iissssss", e->seq, e->ts_ms, e->sandbox, e->kind, e->line, e->json,
                            e->record, e->seal)) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return run(s, st);
}

static pv_result seal_row(struct store *s, sqlite3_stmt *st, int64_t *seq, char seal[65])
{
    int rc;

    PV_ENSURE(st != NULL, PV_ERR_IO);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 1);
        if (seq != NULL) {
            *seq = sqlite3_column_int64(st, 0);
        }
        snprintf(seal, 65, "%s", t != NULL ? (const char *)t : "");
    }
    done(s, st);
    PV_ENSURE(rc == SQLITE_ROW || rc == SQLITE_DONE, PV_ERR_IO);
    PV_ENSURE(rc == SQLITE_ROW, PV_ERR_NOTFOUND);
    return PV_RESULT_OK;
}

pv_result store_event_head(struct store *s, int64_t *seq, char seal[65])
{
    pv_result r =
        seal_row(s, prep(s, "SELECT seq, seal FROM events ORDER BY seq DESC LIMIT 1"), seq, seal);

    if (r.err == PV_ERR_NOTFOUND) {
        *seq = 0;
        memset(seal, '0', 64);
        seal[64] = '\0';
        return PV_RESULT_OK;
    }
    return r;
}

pv_result store_event_set_record(struct store *s, int64_t seq, const char *record, const char *seal)
{
    sqlite3_stmt *st =
        prep(s, "UPDATE events SET record = ?, seal = ? WHERE seq = ? AND record = ''");

    if (st == NULL || !bind(st, "ssi", record, seal, seq)) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    PV_GUARD(run(s, st));
    PV_ENSURE(sqlite3_changes(s->db) == 1, PV_ERR_CONFLICT);
    return PV_RESULT_OK;
}

pv_result store_event_seal(struct store *s, int64_t seq, char seal[65])
{
    sqlite3_stmt *st = prep(s, "SELECT seq, seal FROM events WHERE seq = ?");

    if (st != NULL && !bind(st, "i", seq)) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return seal_row(s, st, NULL, seal);
}

pv_result store_event_each(struct store *s, int64_t after, size_t limit,
                           void (*fn)(void *arg, const struct store_event *e), void *arg)
{
    sqlite3_stmt *st = prep(s, "SELECT seq, ts_ms, sandbox, kind, line, json, record, seal "
                               "FROM events "
                               "WHERE seq > ? ORDER BY seq LIMIT ?");
    int rc;

    PV_ENSURE(st != NULL, PV_ERR_IO);
    if (!bind(st, "ii", after, (int64_t)limit)) {
        done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct store_event e;
        e.seq = sqlite3_column_int64(st, 0);
        e.ts_ms = sqlite3_column_int64(st, 1);
        e.sandbox = col_text(st, 2);
        e.kind = col_text(st, 3);
        e.line = col_text(st, 4);
        e.json = col_text(st, 5);
        e.record = col_text(st, 6);
        e.seal = col_text(st, 7);
        if (e.sandbox == NULL || e.kind == NULL || e.line == NULL || e.json == NULL ||
            e.record == NULL || e.seal == NULL) {
            store_event_clear(&e);
            done(s, st);
            PV_BAIL(PV_ERR_NOMEM);
        }
        fn(arg, &e);
        store_event_clear(&e);
    }
    done(s, st);
    PV_ENSURE(rc == SQLITE_DONE, PV_ERR_IO);
    return PV_RESULT_OK;
}
