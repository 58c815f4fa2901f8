/* SPDX-License-Identifier: Apache-2.0 */
/* store_revision.c - the policy revisions: bases, effective revisions and what a proxy loaded
 * (store.h; the connection and its helpers are store_sqlite.c's). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "advisor/store/store.h"
#include "advisor/store/store_int.h"

/* ===========================================================================
 * Revisions
 * ========================================================================= */

static pv_result revision_one(struct store *s, const char *sql, int64_t sandbox, int64_t rev,
                              bool with_rev, struct store_revision *out)
{
    sqlite3_stmt *st = store_prep(s, sql);
    int rc;

    memset(out, 0, sizeof(*out));
    PV_ENSURE(st != NULL, PV_ERR_IO);
    if (!(with_rev ? store_bind(st, "ii", sandbox, rev) : store_bind(st, "i", sandbox))) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        store_done(s, st);
        PV_BAIL(rc == SQLITE_DONE ? PV_ERR_NOTFOUND : PV_ERR_IO);
    }
    out->rev = sqlite3_column_int64(st, 0);
    out->base_rev = sqlite3_column_int64(st, 1);
    out->blob = store_col_text(st, 2);
    out->hash = store_col_text(st, 3);
    out->cause = store_col_text(st, 4);
    out->created_ms = sqlite3_column_int64(st, 5);
    store_done(s, st);
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
        r->created_ms = store_now_ms();
    }
    snprintf(sql, sizeof(sql), "SELECT COALESCE(MAX(rev), 0) FROM %s WHERE sandbox = ?", table);
    st = store_prep(s, sql);
    if (st == NULL || !store_bind(st, "i", sandbox) || sqlite3_step(st) != SQLITE_ROW) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    r->rev = sqlite3_column_int64(st, 0) + 1;
    store_done(s, st);
    if (base) {
        st = store_prep(s,
                        "INSERT INTO base_revisions (sandbox, rev, blob, hash, cause, created_ms) "
                        "VALUES (?, ?, ?, ?, ?, ?)");
        if (st == NULL ||
            !store_bind(st, "iisssi", sandbox, r->rev, r->blob, r->hash, r->cause, r->created_ms)) {
            store_done(s, st);
            PV_BAIL(PV_ERR_IO);
        }
    } else {
        st = store_prep(s, "INSERT INTO revisions (sandbox, rev, base_rev, blob, hash, cause, "
                           "created_ms) VALUES (?, ?, ?, ?, ?, ?, ?)");
        if (st == NULL || !store_bind(st, "iiisssi", sandbox, r->rev, r->base_rev, r->blob, r->hash,
                                      r->cause, r->created_ms)) {
            store_done(s, st);
            PV_BAIL(PV_ERR_IO);
        }
    }
    return store_run(s, st);
}

pv_result store_sq_base_put(struct store *s, int64_t sandbox, struct store_revision *r)
{
    return revision_put(s, "base_revisions", sandbox, r);
}

pv_result store_sq_base_latest(struct store *s, int64_t sandbox, struct store_revision *out)
{
    return revision_one(s,
                        "SELECT rev, rev, blob, hash, cause, created_ms FROM base_revisions "
                        "WHERE sandbox = ? ORDER BY rev DESC LIMIT 1",
                        sandbox, 0, false, out);
}

pv_result store_sq_rev_put(struct store *s, int64_t sandbox, struct store_revision *r)
{
    return revision_put(s, "revisions", sandbox, r);
}

pv_result store_sq_rev_latest(struct store *s, int64_t sandbox, struct store_revision *out)
{
    return revision_one(s,
                        "SELECT rev, base_rev, blob, hash, cause, created_ms FROM revisions "
                        "WHERE sandbox = ? ORDER BY rev DESC LIMIT 1",
                        sandbox, 0, false, out);
}

pv_result store_sq_rev_get(struct store *s, int64_t sandbox, int64_t rev,
                           struct store_revision *out)
{
    return revision_one(s,
                        "SELECT rev, base_rev, blob, hash, cause, created_ms FROM revisions "
                        "WHERE sandbox = ? AND rev = ?",
                        sandbox, rev, true, out);
}

pv_result store_sq_loaded_put(struct store *s, int64_t sandbox, int64_t rev, const char *hash,
                              int64_t at_ms)
{
    sqlite3_stmt *st =
        store_prep(s, "INSERT INTO loaded (sandbox, rev, hash, at_ms) VALUES (?, ?, ?, ?)");

    if (st == NULL || !store_bind(st, "iisi", sandbox, rev, hash, at_ms)) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return store_run(s, st);
}

int64_t store_sq_loaded_latest(struct store *s, int64_t sandbox)
{
    return store_one_int(s, "SELECT COALESCE(MAX(rev), 0) FROM loaded WHERE sandbox = ?", sandbox);
}
