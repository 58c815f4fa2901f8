/* SPDX-License-Identifier: Apache-2.0 */
/* store_event.c - the events and their sealed audit records, in order
 * (store.h; the connection and its helpers are store_sqlite.c's). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "advisor/store/store.h"
#include "advisor/store/store_int.h"

/* ===========================================================================
 * Events
 * ========================================================================= */

pv_result store_sq_event_append(struct store *s, struct store_event *e)
{
    sqlite3_stmt *st;

    if (e->ts_ms == 0) {
        e->ts_ms = store_now_ms();
    }
    st = store_prep(s, "SELECT COALESCE(MAX(seq), 0) + 1 FROM events");
    if (st == NULL || sqlite3_step(st) != SQLITE_ROW) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    e->seq = sqlite3_column_int64(st, 0);
    store_done(s, st);
    st = store_prep(s, "INSERT INTO events (seq, ts_ms, sandbox, kind, line, json, record, seal) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    if (st == NULL || !store_bind(st, "iissssss", e->seq, e->ts_ms, e->sandbox, e->kind, e->line,
                                  e->json, e->record, e->seal)) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return store_run(s, st);
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
    store_done(s, st);
    PV_ENSURE(rc == SQLITE_ROW || rc == SQLITE_DONE, PV_ERR_IO);
    PV_ENSURE(rc == SQLITE_ROW, PV_ERR_NOTFOUND);
    return PV_RESULT_OK;
}

pv_result store_sq_event_head(struct store *s, int64_t *seq, char seal[65])
{
    pv_result r = seal_row(
        s, store_prep(s, "SELECT seq, seal FROM events ORDER BY seq DESC LIMIT 1"), seq, seal);

    if (r.err == PV_ERR_NOTFOUND) {
        *seq = 0;
        memset(seal, '0', 64);
        seal[64] = '\0';
        return PV_RESULT_OK;
    }
    return r;
}

pv_result store_sq_event_set_record(struct store *s, int64_t seq, const char *record,
                                    const char *seal)
{
    sqlite3_stmt *st =
        store_prep(s, "UPDATE events SET record = ?, seal = ? WHERE seq = ? AND record = ''");

    if (st == NULL || !store_bind(st, "ssi", record, seal, seq)) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    PV_GUARD(store_run(s, st));
    PV_ENSURE(sqlite3_changes(s->db) == 1, PV_ERR_CONFLICT);
    return PV_RESULT_OK;
}

pv_result store_sq_event_seal(struct store *s, int64_t seq, char seal[65])
{
    sqlite3_stmt *st = store_prep(s, "SELECT seq, seal FROM events WHERE seq = ?");

    if (st != NULL && !store_bind(st, "i", seq)) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return seal_row(s, st, NULL, seal);
}

pv_result store_sq_event_each(struct store *s, int64_t after, size_t limit,
                              void (*fn)(void *arg, const struct store_event *e), void *arg)
{
    sqlite3_stmt *st = store_prep(s, "SELECT seq, ts_ms, sandbox, kind, line, json, record, seal "
                                     "FROM events "
                                     "WHERE seq > ? ORDER BY seq LIMIT ?");
    int rc;

    PV_ENSURE(st != NULL, PV_ERR_IO);
    if (!store_bind(st, "ii", after, (int64_t)limit)) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct store_event e;
        e.seq = sqlite3_column_int64(st, 0);
        e.ts_ms = sqlite3_column_int64(st, 1);
        e.sandbox = store_col_text(st, 2);
        e.kind = store_col_text(st, 3);
        e.line = store_col_text(st, 4);
        e.json = store_col_text(st, 5);
        e.record = store_col_text(st, 6);
        e.seal = store_col_text(st, 7);
        if (e.sandbox == NULL || e.kind == NULL || e.line == NULL || e.json == NULL ||
            e.record == NULL || e.seal == NULL) {
            store_event_clear(&e);
            store_done(s, st);
            PV_BAIL(PV_ERR_NOMEM);
        }
        fn(arg, &e);
        store_event_clear(&e);
    }
    store_done(s, st);
    PV_ENSURE(rc == SQLITE_DONE, PV_ERR_IO);
    return PV_RESULT_OK;
}
