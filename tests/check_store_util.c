/* SPDX-License-Identifier: Apache-2.0 */
/* check_store_util.c - the store the unit suites run on (check_store_util.h) */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>
#include <sqlite3.h>

#include <check.h>

#include "advisor/store/store.h"
#include "common/pv.h"
#include "model/model.h"
#include "tests/check_store_util.h"

const char *check_store_pg(void)
{
    const char *v = getenv("PV_TEST_STORE");

    return v != NULL && *v != '\0' ? v : NULL;
}

static bool pg_run(const char *uri, const char *sql)
{
    PGconn *c = PQconnectdb(uri);
    bool ok = false;

    if (PQstatus(c) == CONNECTION_OK) {
        PGresult *r = PQexec(c, sql);
        ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
        if (!ok) {
            fprintf(stderr, "check_store_util: %s: %s", sql, PQerrorMessage(c));
        }
        PQclear(r);
    } else {
        fprintf(stderr, "check_store_util: %s", PQerrorMessage(c));
    }
    PQfinish(c);
    return ok;
}

const char *check_store_reset(const char *dir)
{
    const char *pg = check_store_pg();

    if (pg == NULL) {
        return dir;
    }
    if (!pg_run(pg, "SET client_min_messages = warning; DROP SCHEMA IF EXISTS public CASCADE; "
                    "CREATE SCHEMA public")) {
        abort();
    }
    return pg;
}

const char *check_store_loc(const char *dir)
{
    const char *pg = check_store_pg();

    return pg != NULL ? pg : dir;
}

bool check_store_sql(const char *dir, const char *sqlite_sql, const char *pg_sql)
{
    const char *pg = check_store_pg();
    char path[512];
    sqlite3 *db = NULL;
    bool ok;

    if (pg != NULL) {
        return pg_run(pg, pg_sql);
    }
    snprintf(path, sizeof(path), "%s/advisor.db", dir);
    ok = sqlite3_open(path, &db) == SQLITE_OK &&
         sqlite3_exec(db, sqlite_sql, NULL, NULL, NULL) == SQLITE_OK;
    sqlite3_close(db);
    return ok;
}

void check_make_sandbox(struct store *st, const char *name, const char *policy)
{
    struct store_sandbox sb;
    struct store_revision rev;
    char blob[65];
    char hash[65];
    struct model_diags *d = model_diags_new();
    struct model_policy *p;
    char *yaml;

    p = model_policy_load("base", policy, strlen(policy), MODEL_FMT_YAML, d);
    ck_assert_ptr_nonnull(p);
    yaml = model_policy_to_yaml(p, NULL);
    ck_assert(pv_ok(model_policy_sha256(p, hash)));
    ck_assert(pv_ok(store_begin(st)));
    memset(&sb, 0, sizeof(sb));
    sb.name = PV_UNCONST(name);
    sb.token_sha256 = PV_UNCONST("00");
    sb.credentials = PV_UNCONST("credentials:\n  - {name: gh, type: github, target_hosts: "
                                "[api.github.com]}\n");
    sb.boundary = PV_UNCONST("");
    ck_assert(pv_ok(store_sandbox_create(st, &sb)));
    ck_assert(pv_ok(store_blob_put(st, yaml, strlen(yaml), blob)));
    memset(&rev, 0, sizeof(rev));
    rev.blob = blob;
    rev.hash = hash;
    rev.cause = PV_UNCONST("create");
    ck_assert(pv_ok(store_base_put(st, sb.id, &rev)));
    rev.base_rev = rev.rev;
    ck_assert(pv_ok(store_rev_put(st, sb.id, &rev)));
    ck_assert(pv_ok(store_commit(st)));
    free(yaml);
    model_policy_free(p);
    model_diags_free(d);
}
