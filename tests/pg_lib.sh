# shellcheck shell=sh
# SPDX-License-Identifier: Apache-2.0
# pg_lib.sh - a throwaway PostgreSQL cluster for the tests (sourced)
#
# pg_start DIR: initdb into DIR/data, start the server with its Unix socket
# in DIR/sock and listen_addresses='' (nothing listens on TCP), create the
# database "proviso"; sets PG_URL (a libpq URI naming the socket directory),
# PG_DIR and PG_BIN. pg_crash stops it the way a power cut would (pg_ctl -m
# immediate: no checkpoint, WAL recovery on the next start); pg_restart
# starts it again; pg_stop stops it and removes DIR.
#
# initdb refuses to run as root: as root the cluster belongs to the
# unprivileged user "nobody" (runuser), so DIR must be reachable by it;
# pg_start falls back to a directory under /tmp when it is not, or when
# the socket path would be too long for a Unix socket.
# pg_have: true when the server binaries are installed (else the caller
# skips with exit 77). PV_PG_BIN names another directory of them.

PG_BIN=${PV_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
PG_DIR=
PG_URL=

pg_have() { [ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ]; }

# pg_as CMD...: run as the cluster's owner
pg_as() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u nobody -- "$@"
    else
        "$@"
    fi
}

pg_start() {
    base=$1
    mkdir -p "$base" || return 1
    PG_DIR=$(mktemp -d "$base/pg.XXXXXX") || return 1
    chmod 755 "$PG_DIR"
    if [ "$(id -u)" -eq 0 ] && ! runuser -u nobody -- test -x "$PG_DIR" 2>/dev/null ||
        [ ${#PG_DIR} -gt 80 ]; then
        rmdir "$PG_DIR"
        PG_DIR=$(mktemp -d /tmp/pv-pg.XXXXXX) || return 1
        chmod 755 "$PG_DIR"
    fi
    mkdir "$PG_DIR/data" "$PG_DIR/sock" || return 1
    [ "$(id -u)" -eq 0 ] && chown nobody "$PG_DIR/data" "$PG_DIR/sock"
    pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U proviso --no-sync \
        >"$PG_DIR/sock/initdb.log" 2>&1 || { cat "$PG_DIR/sock/initdb.log"; return 1; }
    pg_restart || return 1
    pg_as "$PG_BIN/createdb" -h "$PG_DIR/sock" -U proviso proviso || return 1
    PG_URL="postgresql:///proviso?host=$PG_DIR/sock&user=proviso"
}

pg_restart() {
    pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/sock/server.log" -w -t 60 \
        -o "-c listen_addresses='' -k $PG_DIR/sock -c fsync=on -c synchronous_commit=on" \
        start >/dev/null || { cat "$PG_DIR/sock/server.log"; return 1; }
}

# pg_cluster DIR [ON_EXIT]: the prologue of a test on PostgreSQL - skip
# (77) when the server is not installed, else start a throwaway cluster
# under DIR, stopped (after the shell code ON_EXIT) when the test exits
pg_cluster() {
    if ! pg_have; then
        echo "SKIP: the PostgreSQL server is not installed (/usr/lib/postgresql/*/bin/initdb);" \
            "apt-get install postgresql, or ./bootstrap --deps"
        exit 77
    fi
    # shellcheck disable=SC2064
    trap "${2:-:}; pg_stop" EXIT
    trap 'exit 1' HUP INT PIPE TERM
    pg_start "$1" || { echo "FAIL: cannot start a PostgreSQL cluster"; exit 1; }
}

# pg_q SQL: one query as the cluster's superuser, unaligned rows
pg_q() { pg_as "$PG_BIN/psql" -h "$PG_DIR/sock" -U proviso -d proviso -Atqc "$1"; }

pg_crash() { pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1; }

pg_stop() {
    [ -n "$PG_DIR" ] || return 0
    [ -d "$PG_DIR/data" ] && pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1
    rm -rf "$PG_DIR"
    PG_DIR=
}
