/* SPDX-License-Identifier: Apache-2.0 */
/* store_chunk.c - the chunks: one row per proposed rule and its decision
 * (store.h; the connection and its helpers are store_sqlite.c's). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "advisor/store/store.h"
#include "advisor/store/store_int.h"

/* ===========================================================================
 * Chunks
 * ========================================================================= */

static pv_result chunk_row(sqlite3_stmt *st, struct store_chunk *c)
{
    int i = 0;
    bool ok = true;

    memset(c, 0, sizeof(*c));
#define T(f) ok = (c->f = store_col_text(st, i++)) != NULL && ok
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

pv_result store_sq_chunk_insert(struct store *s, const struct store_chunk *c)
{
    sqlite3_stmt *st =
        store_prep(s, "INSERT INTO chunks (" STORE_CHUNK_COLS ") VALUES (?, ?, ?, ?, ?, ?, ?, "
                      "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                      "?, ?, ?, ?)");

    if (st == NULL ||
        !store_bind(st, "siisssssdiisisiiissssssssssiiisss", c->id, c->sandbox, c->draft_version,
                    c->status, c->rule_name, c->proposed_rule, c->rationale, c->security_notes,
                    c->confidence, c->created_ms, c->decided_ms, c->host, c->port, c->binary,
                    c->hit_count, c->first_seen_ms, c->last_seen_ms, c->validation_result,
                    c->rejection_reason, c->application_error, c->review_token, c->current_hash,
                    c->candidate_hash, c->analysis_mode, c->dedup_key, c->stage, c->evidence,
                    c->approved_seq, c->approved_rev, (int64_t)c->auto_approved, c->decided_by,
                    c->approved_evidence, c->suspension_reason)) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return store_run(s, st);
}

/* The one chunk a query keyed by (sandbox, text) selects. */
static pv_result chunk_one(struct store *s, const char *sql, int64_t sandbox, const char *text,
                           struct store_chunk *out)
{
    sqlite3_stmt *st = store_prep(s, sql);
    pv_result r;
    int rc;

    memset(out, 0, sizeof(*out));
    PV_ENSURE(st != NULL, PV_ERR_IO);
    if (!store_bind(st, "is", sandbox, text)) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    rc = sqlite3_step(st);
    r = rc == SQLITE_ROW ? chunk_row(st, out)
                         : pv_fail(rc == SQLITE_DONE ? PV_ERR_NOTFOUND : PV_ERR_IO, __func__);
    store_done(s, st);
    return r;
}

pv_result store_sq_chunk_get(struct store *s, int64_t sandbox, const char *id,
                             struct store_chunk *out)
{
    return chunk_one(s, "SELECT " STORE_CHUNK_COLS " FROM chunks WHERE sandbox = ? AND id = ?",
                     sandbox, id, out);
}

pv_result store_sq_chunk_update(struct store *s, const struct store_chunk *c,
                                const char *expect_status)
{
    sqlite3_stmt *st = store_prep(
        s, "UPDATE chunks SET status = ?, rule_name = ?, proposed_rule = ?, rationale = ?, "
           "security_notes = ?, confidence = ?, decided_ms = ?, hit_count = ?, "
           "last_seen_ms = ?, validation_result = ?, rejection_reason = ?, "
           "application_error = ?, review_token = ?, current_hash = ?, candidate_hash = ?, "
           "evidence = ?, approved_seq = ?, approved_rev = ?, auto_approved = ?, decided_by = ?, "
           "approved_evidence = ?, suspension_reason = ?, host = ?, port = ?, \"binary\" = ? "
           "WHERE id = ? AND sandbox = ? AND status = ?");

    if (st == NULL ||
        !store_bind(st, "sssssdiiisssssssiiissssissis", c->status, c->rule_name, c->proposed_rule,
                    c->rationale, c->security_notes, c->confidence, c->decided_ms, c->hit_count,
                    c->last_seen_ms, c->validation_result, c->rejection_reason,
                    c->application_error, c->review_token, c->current_hash, c->candidate_hash,
                    c->evidence, c->approved_seq, c->approved_rev, (int64_t)c->auto_approved,
                    c->decided_by, c->approved_evidence, c->suspension_reason, c->host, c->port,
                    c->binary, c->id, c->sandbox, expect_status)) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    PV_GUARD(store_run(s, st));
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
            store_done(s, st);
            PV_BAIL(PV_ERR_NOMEM);
        }
        fn(arg, &c);
        store_chunk_clear(&c);
    }
    store_done(s, st);
    PV_ENSURE(rc == SQLITE_DONE, PV_ERR_IO);
    return PV_RESULT_OK;
}

pv_result store_sq_chunk_each(struct store *s, int64_t sandbox, const char *status,
                              void (*fn)(void *arg, const struct store_chunk *c), void *arg)
{
    sqlite3_stmt *st =
        store_prep(s, "SELECT " STORE_CHUNK_COLS " FROM chunks WHERE sandbox = ? AND "
                      "(? = '' OR status = ?) ORDER BY created_ms, rowid");

    PV_ENSURE(st != NULL, PV_ERR_IO);
    if (!store_bind(st, "iss", sandbox, status != NULL ? status : "",
                    status != NULL ? status : "")) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return chunk_each(s, st, fn, arg);
}

pv_result store_sq_chunk_each_key(struct store *s, int64_t sandbox, const char *status,
                                  const char *host, int64_t port, const char *binary,
                                  void (*fn)(void *arg, const struct store_chunk *c), void *arg)
{
    sqlite3_stmt *st =
        store_prep(s, "SELECT " STORE_CHUNK_COLS " FROM chunks WHERE sandbox = ? AND "
                      "status = ? AND host = ? AND port = ? AND binary = ? "
                      "ORDER BY created_ms, rowid");

    PV_ENSURE(st != NULL, PV_ERR_IO);
    if (!store_bind(st, "issis", sandbox, status, host, port, binary)) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return chunk_each(s, st, fn, arg);
}

pv_result store_sq_chunk_each_approved(struct store *s, int64_t sandbox,
                                       void (*fn)(void *arg, const struct store_chunk *c),
                                       void *arg)
{
    sqlite3_stmt *st =
        store_prep(s, "SELECT " STORE_CHUNK_COLS " FROM chunks WHERE sandbox = ? AND "
                      "status = 'approved' ORDER BY approved_seq");

    PV_ENSURE(st != NULL, PV_ERR_IO);
    if (!store_bind(st, "i", sandbox)) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return chunk_each(s, st, fn, arg);
}

pv_result store_sq_chunk_by_dedup(struct store *s, int64_t sandbox, const char *key,
                                  struct store_chunk *out)
{
    return chunk_one(s,
                     "SELECT " STORE_CHUNK_COLS " FROM chunks WHERE sandbox = ? AND dedup_key = ? "
                     "AND dedup_key <> '' ORDER BY created_ms DESC, rowid DESC LIMIT 1",
                     sandbox, key, out);
}

int64_t store_sq_chunk_max_draft(struct store *s, int64_t sandbox)
{
    return store_one_int(s, "SELECT COALESCE(MAX(draft_version), 0) FROM chunks WHERE sandbox = ?",
                         sandbox);
}

int64_t store_sq_chunk_max_seq(struct store *s, int64_t sandbox)
{
    return store_one_int(s, "SELECT COALESCE(MAX(approved_seq), 0) FROM chunks WHERE sandbox = ?",
                         sandbox);
}

pv_result store_sq_chunk_clear_pending(struct store *s, int64_t sandbox, int64_t *n)
{
    sqlite3_stmt *st = store_prep(s, "DELETE FROM chunks WHERE sandbox = ? AND status = 'pending'");

    if (st == NULL || !store_bind(st, "i", sandbox)) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    PV_GUARD(store_run(s, st));
    *n = sqlite3_changes(s->db);
    return PV_RESULT_OK;
}
