#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# advisor_store_pg.sh - the store's unit suites (check_advisor_store,
# check_advisor_chunk, check_advisor_listen) on PostgreSQL: a throwaway
# cluster in the build tree (tests/pg_lib.sh), the suites run unchanged with
# PV_TEST_STORE set to it, then the cluster is stopped and removed. Skips (77) only when the
# PostgreSQL server binaries are not installed.
: "${PV_BUILDDIR:=$(pwd)}"
: "${PV_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export PV_BUILDDIR PV_SRCDIR
. "$PV_SRCDIR/tests/pg_lib.sh"

pg_cluster "$PV_BUILDDIR/tests"
echo "# cluster: $PG_URL"
rc=0
for t in check_advisor_store check_advisor_chunk check_advisor_listen; do
    if PV_TEST_STORE=$PG_URL "$PV_BUILDDIR/tests/$t" >"$PG_DIR/$t.log" 2>&1; then
        echo "ok - $t on PostgreSQL: $(grep -o '[0-9]*%: Checks: .*' "$PG_DIR/$t.log")"
    else
        echo "not ok - $t on PostgreSQL"
        grep -v ' info: \| access: ' "$PG_DIR/$t.log" | tail -n 40
        rc=1
    fi
done
# The suites really ran on PostgreSQL: the schema is there, at version 5.
v=$(PGHOST=$PG_DIR/sock "$PG_BIN/psql" -U proviso -d proviso -Atc 'SELECT version FROM schema_version' 2>&1)
if [ "$v" = 5 ]; then echo "ok - schema_version 5 in the cluster"; else echo "not ok - schema_version: $v"; rc=1; fi
exit $rc
