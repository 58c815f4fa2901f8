/* SPDX-License-Identifier: Apache-2.0 */
/* check_store_util.h - which store the advisor's unit suites run on
 *
 * Without PV_TEST_STORE the suites use SQLite in their temporary directory,
 * as before. With PV_TEST_STORE=postgresql://... (tests/advisor_store_pg.sh
 * sets it to a throwaway cluster) the same suites run on PostgreSQL: each
 * test starts from an empty database (check_store_reset drops and
 * re-creates the public schema), and the few tests that damage the store
 * on purpose do it with the SQL of the back end in use (check_store_sql).
 */
#ifndef TESTS_CHECK_STORE_UTIL_H
#define TESTS_CHECK_STORE_UTIL_H

#include <stdbool.h>

/* The PostgreSQL location under test, or NULL for SQLite. */
const char *check_store_pg(void);
/* The location to open for a test whose directory is 'dir': 'dir' on
 * SQLite; on PostgreSQL the URI, after emptying its database. */
const char *check_store_reset(const char *dir);
/* The location of the store already reset for 'dir' (no reset). */
const char *check_store_loc(const char *dir);
/* Run 'sqlite_sql' on DIR/advisor.db or 'pg_sql' on the PostgreSQL
 * database, outside the store; true when it ran. */
bool check_store_sql(const char *dir, const char *sqlite_sql, const char *pg_sql);

struct store;
/* Create sandbox 'name' with 'policy' as its base revision 1 and effective
 * revision 1, and a github credential on api.github.com (ck_assert on any
 * failure). */
void check_make_sandbox(struct store *st, const char *name, const char *policy);

#endif
