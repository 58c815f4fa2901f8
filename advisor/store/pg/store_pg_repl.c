/* SPDX-License-Identifier: Apache-2.0 */
/* store_pg_repl.c - what several advisors on one PostgreSQL database need
 * (store.h "Replicas", docs/scale-out.md#replicas)
 *
 * Change notes: a write transaction collects what it changed that other
 * replicas may hold in memory (sandboxes: their token digests; settings),
 * and its COMMIT is preceded by NOTIFY on STORE_CHANNEL in the same round
 * trip. PostgreSQL delivers a notification only when the transaction
 * commits, after the commit is visible, so a replica woken by it reads
 * the new state. Every write transaction sends one (the payload starts
 * with "state"): each state change appends to the audit chain, and the
 * long-polls of other replicas (policy sync, /wait, events) wake on it.
 *
 * The listener is one dedicated connection per replica that LISTENs and
 * waits on its socket with poll(2): a note reaches the waiting thread as
 * soon as the server sends it. After the connection was lost (a database
 * restart), it is opened again and reports "*": notes sent meanwhile are
 * lost, so the caller must treat everything as changed. A connection can
 * also be lost without a word (its backend hung, a peer gone behind a
 * firewall): after LISTEN_QUIET_MS without a byte from the server the
 * listener asks SELECT 1, and an answer that does not come within
 * LISTEN_PING_MS counts as a lost connection. Without that, the notes
 * would stop for good while poll(2) keeps timing out quietly.
 *
 * Session locks: pg_try_advisory_lock on the caller's connection, for jobs
 * that must have one owner across replicas (the mapper's flush). The
 * server releases them when the session ends, so a replica killed while
 * holding one does not keep it.
 *
 * Connections: every one the store opens (store_pg_connect) carries
 * timeouts and keep-alives, because on a shared database across hosts a
 * peer can vanish without a reset (docs/scale-out.md, failure modes).
 */
#include "config.h"

#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "advisor/store/store.h"
#include "advisor/store/store_int.h"

/* ===========================================================================
 * Change notes
 * ========================================================================= */

void store_pg_note_reset(struct store *s, bool write)
{
    s->pg->write = write;
    s->pg->note_settings = false;
    s->pg->note_all = false;
    s->pg->nnote = 0;
}

void store_pg_note_sandbox(struct store *s, int64_t id)
{
    for (size_t i = 0; i < s->pg->nnote; i++) {
        if (s->pg->note_ids[i] == id) {
            return;
        }
    }
    if (s->pg->nnote < STORE_PG_NOTE_IDS) {
        s->pg->note_ids[s->pg->nnote++] = id;
    } else {
        s->pg->note_all = true;
    }
}

void store_pg_note_settings(struct store *s)
{
    s->pg->note_settings = true;
}

void store_pg_note_sql(struct store *s, char *buf, size_t len)
{
    size_t n;

    if (!s->pg->write) {
        snprintf(buf, len, "COMMIT");
        return;
    }
    /* Only fixed words and integers go into the literal: nothing to quote. */
    n = (size_t)snprintf(buf, len, "NOTIFY " STORE_CHANNEL ", 'state%s%s",
                         s->pg->note_settings ? " settings" : "",
                         s->pg->note_all ? " sandboxes" : "");
    for (size_t i = 0; i < s->pg->nnote && n < len; i++) {
        n += (size_t)snprintf(buf + n, len - n, " sandbox:%" PRId64, s->pg->note_ids[i]);
    }
    if (n < len) {
        snprintf(buf + n, len - n, "'; COMMIT");
    }
}

/* ===========================================================================
 * Session locks
 * ========================================================================= */

pv_result store_pg_try_lock(struct store *s, int64_t key, bool *got)
{
    char sql[80];
    PGresult *res;
    bool ok;

    snprintf(sql, sizeof(sql), "SELECT pg_try_advisory_lock(%" PRId64 ")", key);
    res = PQexec(s->pg->conn, sql);
    ok = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1;
    *got = ok && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    PV_ENSURE(ok, PV_ERR_IO);
    return PV_RESULT_OK;
}

void store_pg_unlock(struct store *s, int64_t key)
{
    char sql[80];

    snprintf(sql, sizeof(sql), "SELECT pg_advisory_unlock(%" PRId64 ")", key);
    PQclear(PQexec(s->pg->conn, sql));
}

/* ===========================================================================
 * Connections
 * ========================================================================= */

/* Under the URI: keep-alives notice a silent peer after about 10 + 3 x 5 s
 * idle; tcp_user_timeout fails a send that stays unacknowledged for 30 s. */
static const char *const pg_default_keys[] = {
    "connect_timeout",  "keepalives",       "keepalives_idle",  "keepalives_interval",
    "keepalives_count", "tcp_user_timeout", "application_name",
};
static const char *const pg_default_vals[] = {
    "10", "1", "10", "5", "3", "30000", "proviso-advisor",
};

PGconn *store_pg_connect(const char *uri)
{
    /* the defaults, then dbname=URI: libpq expands the URI in place and a
     * keyword given twice takes its last value, so the URI's own win */
    const char *keys[PV_ARRAY_LEN(pg_default_keys) + 2];
    const char *vals[PV_ARRAY_LEN(pg_default_keys) + 2];
    size_t n = PV_ARRAY_LEN(pg_default_keys);

    _Static_assert(PV_ARRAY_LEN(pg_default_keys) == PV_ARRAY_LEN(pg_default_vals),
                   "one value per default");
    memcpy(keys, pg_default_keys, sizeof(pg_default_keys));
    memcpy(vals, pg_default_vals, sizeof(pg_default_vals));
    keys[n] = "dbname";
    vals[n] = uri;
    keys[n + 1] = NULL;
    vals[n + 1] = NULL;
    return PQconnectdbParams(keys, vals, 1);
}

/* ===========================================================================
 * The listener
 * ========================================================================= */

#define LISTEN_QUIET_MS 3000
#define LISTEN_PING_MS 2000

struct store_listener {
    PGconn *conn;
    bool lost;         /* the connection failed: open it again before waiting */
    int64_t heard;     /* monotonic ms of the server's last bytes */
    int64_t ping_sent; /* monotonic ms of the unanswered SELECT 1, or 0 */
};

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool listen_on(PGconn *c)
{
    PGresult *res = PQexec(c, "LISTEN " STORE_CHANNEL);
    bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;

    PQclear(res);
    return ok;
}

struct store_listener *store_listener_open(const char *loc, char *err, size_t errlen)
{
    struct store_listener *l;

    err[0] = '\0';
    if (!store_pg_location(loc)) {
        return NULL;
    }
    l = pv_calloc(1, sizeof(*l));
    if (l == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    l->conn = store_pg_connect(loc);
    if (l->conn == NULL || PQstatus(l->conn) != CONNECTION_OK || !listen_on(l->conn)) {
        snprintf(err, errlen, "postgresql: %s",
                 l->conn != NULL ? PQerrorMessage(l->conn) : "out of memory");
        err[strcspn(err, "\n")] = '\0';
        store_listener_close(l);
        return NULL;
    }
    l->heard = mono_ms();
    return l;
}

void store_listener_close(struct store_listener *l)
{
    if (l == NULL) {
        return;
    }
    if (l->conn != NULL) {
        PQfinish(l->conn);
    }
    free(l);
}

pv_result store_listener_wait(struct store_listener *l, int timeout_ms,
                              void (*fn)(void *arg, const char *payload), void *arg)
{
    struct pollfd p;
    PGnotify *note;

    if (l->lost || PQstatus(l->conn) != CONNECTION_OK) {
        PQreset(l->conn);
        if (PQstatus(l->conn) != CONNECTION_OK || !listen_on(l->conn)) {
            l->lost = true;
            (void)poll(NULL, 0, timeout_ms);
            PV_BAIL(PV_ERR_IO);
        }
        l->lost = false;
        l->heard = mono_ms();
        l->ping_sent = 0;
        fn(arg, "*"); /* what was sent while we were away is gone */
        return PV_RESULT_OK;
    }
    p.fd = PQsocket(l->conn);
    p.events = POLLIN;
    p.revents = 0;
    if (p.fd < 0) {
        l->lost = true;
        PV_BAIL(PV_ERR_IO);
    }
    if (l->ping_sent == 0 && mono_ms() - l->heard >= LISTEN_QUIET_MS) {
        if (PQsendQuery(l->conn, "SELECT 1") != 1) {
            l->lost = true;
            PV_BAIL(PV_ERR_IO);
        }
        l->ping_sent = mono_ms();
    }
    if (poll(&p, 1, timeout_ms) > 0) {
        if (PQconsumeInput(l->conn) != 1) {
            l->lost = true;
            PV_BAIL(PV_ERR_IO);
        }
        l->heard = mono_ms();
    }
    /* the ping's answer, read without blocking */
    while (l->ping_sent != 0 && PQisBusy(l->conn) == 0) {
        PGresult *res = PQgetResult(l->conn);
        if (res == NULL) {
            l->ping_sent = 0;
        }
        PQclear(res);
    }
    if (l->ping_sent != 0 && mono_ms() - l->ping_sent >= LISTEN_PING_MS) {
        l->lost = true; /* silent: treated as lost, opened again next call */
        PV_BAIL(PV_ERR_IO);
    }
    while ((note = PQnotifies(l->conn)) != NULL) {
        fn(arg, note->extra != NULL ? note->extra : "*");
        PQfreemem(note);
    }
    return PV_RESULT_OK;
}
