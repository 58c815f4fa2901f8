/* SPDX-License-Identifier: Apache-2.0 */
/* store_sandbox.c - the sandboxes, their tool servers and the settings (global and per sandbox)
 * (store.h; the connection and its helpers are store_sqlite.c's). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "advisor/store/store.h"
#include "advisor/store/store_int.h"

/* ===========================================================================
 * Sandboxes
 * ========================================================================= */

#define SANDBOX_COLS "id, name, token_sha256, credentials, boundary, addresses, created_ms"

static pv_result sandbox_row(sqlite3_stmt *st, struct store_sandbox *out)
{
    memset(out, 0, sizeof(*out));
    out->id = sqlite3_column_int64(st, 0);
    out->name = store_col_text(st, 1);
    out->token_sha256 = store_col_text(st, 2);
    out->credentials = store_col_text(st, 3);
    out->boundary = store_col_text(st, 4);
    out->addresses = store_col_text(st, 5);
    out->created_ms = sqlite3_column_int64(st, 6);
    if (out->name == NULL || out->token_sha256 == NULL || out->credentials == NULL ||
        out->boundary == NULL || out->addresses == NULL) {
        store_sandbox_clear(out);
        PV_BAIL(PV_ERR_NOMEM);
    }
    return PV_RESULT_OK;
}

pv_result store_sq_sandbox_create(struct store *s, struct store_sandbox *sb)
{
    sqlite3_stmt *st = store_prep(s, "INSERT INTO sandboxes (name, token_sha256, credentials, "
                                     "boundary, addresses, created_ms) VALUES (?, ?, ?, ?, ?, ?)");

    if (sb->created_ms == 0) {
        sb->created_ms = store_now_ms();
    }
    if (st == NULL ||
        !store_bind(st, "sssssi", sb->name, sb->token_sha256, sb->credentials, sb->boundary,
                    sb->addresses != NULL ? sb->addresses : "[]", sb->created_ms)) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    PV_GUARD(store_run(s, st));
    sb->id = sqlite3_last_insert_rowid(s->db);
    return PV_RESULT_OK;
}

static pv_result sandbox_get_by(struct store *s, const char *sql, const char *types,
                                const char *name, int64_t id, struct store_sandbox *out)
{
    sqlite3_stmt *st = store_prep(s, sql);
    pv_result r;
    int rc;

    memset(out, 0, sizeof(*out));
    PV_ENSURE(st != NULL, PV_ERR_IO);
    if (!(types[0] == 's' ? store_bind(st, "s", name) : store_bind(st, "i", id))) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        r = sandbox_row(st, out);
    } else {
        r = pv_fail(rc == SQLITE_DONE ? PV_ERR_NOTFOUND : PV_ERR_IO, __func__);
    }
    store_done(s, st);
    return r;
}

pv_result store_sq_sandbox_get(struct store *s, const char *name, struct store_sandbox *out)
{
    return sandbox_get_by(s, "SELECT " SANDBOX_COLS " FROM sandboxes WHERE name = ?", "s", name, 0,
                          out);
}

pv_result store_sq_sandbox_get_id(struct store *s, int64_t id, struct store_sandbox *out)
{
    return sandbox_get_by(s, "SELECT " SANDBOX_COLS " FROM sandboxes WHERE id = ?", "i", NULL, id,
                          out);
}

pv_result store_sq_sandbox_update(struct store *s, const struct store_sandbox *sb)
{
    sqlite3_stmt *st = store_prep(s, "UPDATE sandboxes SET token_sha256 = ?, credentials = ?, "
                                     "boundary = ?, addresses = ? WHERE id = ?");

    if (st == NULL || !store_bind(st, "ssssi", sb->token_sha256, sb->credentials, sb->boundary,
                                  sb->addresses != NULL ? sb->addresses : "[]", sb->id)) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    PV_GUARD(store_run(s, st));
    PV_ENSURE(sqlite3_changes(s->db) == 1, PV_ERR_NOTFOUND);
    return PV_RESULT_OK;
}

pv_result store_sq_sandbox_delete(struct store *s, int64_t id)
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
        sqlite3_stmt *st = store_prep(s, sql[i]);
        if (st == NULL || !store_bind(st, "i", id)) {
            store_done(s, st);
            PV_BAIL(PV_ERR_IO);
        }
        PV_GUARD(store_run(s, st));
    }
    PV_ENSURE(sqlite3_changes(s->db) == 1, PV_ERR_NOTFOUND);
    return PV_RESULT_OK;
}

pv_result store_sq_sandbox_each(struct store *s,
                                void (*fn)(void *arg, const struct store_sandbox *sb), void *arg)
{
    sqlite3_stmt *st = store_prep(s, "SELECT " SANDBOX_COLS " FROM sandboxes ORDER BY name");
    int rc;

    PV_ENSURE(st != NULL, PV_ERR_IO);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct store_sandbox sb;
        if (!pv_ok(sandbox_row(st, &sb))) {
            store_done(s, st);
            PV_BAIL(PV_ERR_NOMEM);
        }
        fn(arg, &sb);
        store_sandbox_clear(&sb);
    }
    store_done(s, st);
    PV_ENSURE(rc == SQLITE_DONE, PV_ERR_IO);
    return PV_RESULT_OK;
}

/* ===========================================================================
 * Tool servers
 * ========================================================================= */

pv_result store_sq_server_put(struct store *s, int64_t sandbox, const struct store_server *sv)
{
    sqlite3_stmt *st =
        store_prep(s, "INSERT OR REPLACE INTO tool_servers (sandbox, name, base_url, "
                      "openapi_blob, created_ms) VALUES (?, ?, ?, ?, ?)");

    if (st == NULL || !store_bind(st, "isssi", sandbox, sv->name, sv->base_url, sv->openapi_blob,
                                  sv->created_ms)) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return store_run(s, st);
}

pv_result store_sq_server_delete(struct store *s, int64_t sandbox, const char *name)
{
    sqlite3_stmt *st = store_prep(s, "DELETE FROM tool_servers WHERE sandbox = ? AND name = ?");

    if (st == NULL || !store_bind(st, "is", sandbox, name)) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    PV_GUARD(store_run(s, st));
    PV_ENSURE(sqlite3_changes(s->db) == 1, PV_ERR_NOTFOUND);
    return PV_RESULT_OK;
}

pv_result store_sq_server_each(struct store *s, int64_t sandbox,
                               void (*fn)(void *arg, const struct store_server *sv), void *arg)
{
    sqlite3_stmt *st = store_prep(s, "SELECT name, base_url, openapi_blob, created_ms FROM "
                                     "tool_servers WHERE sandbox = ? ORDER BY name");
    int rc = SQLITE_DONE;

    if (st == NULL || !store_bind(st, "i", sandbox)) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct store_server sv;
        sv.name = store_col_text(st, 0);
        sv.base_url = store_col_text(st, 1);
        sv.openapi_blob = store_col_text(st, 2);
        sv.created_ms = sqlite3_column_int64(st, 3);
        if (sv.name == NULL || sv.base_url == NULL || sv.openapi_blob == NULL) {
            store_server_clear(&sv);
            store_done(s, st);
            PV_BAIL(PV_ERR_NOMEM);
        }
        fn(arg, &sv);
        store_server_clear(&sv);
    }
    store_done(s, st);
    PV_ENSURE(rc == SQLITE_DONE, PV_ERR_IO);
    return PV_RESULT_OK;
}

/* ===========================================================================
 * Settings
 * ========================================================================= */

pv_result store_sq_setting_read(struct store *s, const char *scope, const char *key, char **out)
{
    sqlite3_stmt *st = store_prep(s, "SELECT value FROM settings WHERE scope = ? AND key = ?");
    int rc = st != NULL && store_bind(st, "ss", scope, key) ? sqlite3_step(st) : SQLITE_ERROR;

    *out = rc == SQLITE_ROW ? store_col_text(st, 0) : NULL;
    store_done(s, st);
    PV_ENSURE(rc == SQLITE_DONE || *out != NULL, PV_ERR_IO);
    return PV_RESULT_OK;
}

pv_result store_sq_setting_put(struct store *s, const char *scope, const char *key,
                               const char *json)
{
    sqlite3_stmt *st =
        store_prep(s, "INSERT INTO settings (scope, key, value) VALUES (?, ?, ?) "
                      "ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value");

    if (st == NULL || !store_bind(st, "sss", scope, key, json)) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    return store_run(s, st);
}

pv_result store_sq_setting_delete(struct store *s, const char *scope, const char *key)
{
    sqlite3_stmt *st = store_prep(s, "DELETE FROM settings WHERE scope = ? AND key = ?");

    if (st == NULL || !store_bind(st, "ss", scope, key)) {
        store_done(s, st);
        PV_BAIL(PV_ERR_IO);
    }
    PV_GUARD(store_run(s, st));
    PV_ENSURE(sqlite3_changes(s->db) == 1, PV_ERR_NOTFOUND);
    return PV_RESULT_OK;
}
