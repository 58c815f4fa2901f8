#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bootstrap_run.sh - ./bootstrap --run on a built tree (PV_BOOTSTRAP_NO_BUILD=1,
# a temporary data dir, a free port): the advisor's options pass through
# after --, the summary names the inbox, the API, the token file and the
# next command, the token file keeps its path and contents across starts
# (0600), GET / leads to /ui/, the printed export works with the CLI, and a
# busy port is named.
set -u
SRC=${PV_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${PV_BUILDDIR:-$(pwd)}
[ "$SRC" = "$BUILD" ] || { echo "SKIP: bootstrap --run needs an in-tree build"; exit 77; }
[ -x "$SRC/proviso-advisor" ] || { echo "SKIP: build proviso-advisor first"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl is not installed"; exit 77; }
T=$(mktemp -d /tmp/pv-bootstrap.XXXXXX)
FAILS=0 CHECKS=0 PID=""
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
ok() { CHECKS=$((CHECKS + 1)); }
no() { CHECKS=$((CHECKS + 1)); FAILS=$((FAILS + 1)); echo "FAIL: $*"; }
has() { case "$3" in *"$2"*) ok ;; *) no "$1: [$2] not in [$3]" ;; esac; }
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }

# start PORT: bootstrap --run in the background, output in $T/run.out
start() {
    PV_BOOTSTRAP_NO_BUILD=1 PROVISO_DATA_DIR=$T/data PROVISO_PORT=$1 \
        "$SRC/bootstrap" --run -- --test-allow-loopback >"$T/run.out" 2>"$T/run.err" &
    PID=$!
    i=0
    while ! grep -q 'Ctrl-C stops it' "$T/run.out" 2>/dev/null && [ $i -lt 300 ]; do
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.1
        i=$((i + 1))
    done
}
stop() { kill "$PID"; wait "$PID"; echo $? >"$T/stop.rc"; PID=""; }

PORT=$(free_port)
start "$PORT"
out=$(cat "$T/run.out")
has "inbox URL" "inbox:  http://127.0.0.1:$PORT/ui/" "$out"
has "API URL" "API:    http://127.0.0.1:$PORT/v1/" "$out"
has "token path" "token:  $T/data/admin.token" "$out"
has "export line" "export PROVISO_ADVISOR=http://127.0.0.1:$PORT PROVISO_TOKEN_FILE=$T/data/admin.token" "$out"
has "next command" "./proviso sandbox create demo" "$out"
has "options pass to the advisor" "--test-allow-loopback" "$(cat /proc/"$(pgrep -P "$PID" proviso-advis | head -n 1)"/cmdline 2>/dev/null | tr '\0' ' ')"
[ "$(stat -c %a "$T/data/admin.token" 2>/dev/null)" = 600 ] && ok || no "token file not 0600"
tok1=$(cat "$T/data/admin.token" 2>/dev/null)
has "GET / leads to the inbox" "Location: /ui/" "$(curl -si "http://127.0.0.1:$PORT/" | tr -d '\r')"
out=$(PROVISO_ADVISOR=http://127.0.0.1:$PORT PROVISO_TOKEN_FILE=$T/data/admin.token \
    "$BUILD/proviso" settings get --global 2>&1)
has "the printed export works" "agent_policy_proposals_enabled" "$out"

# a busy port is named
out=$(PV_BOOTSTRAP_NO_BUILD=1 PROVISO_DATA_DIR=$T/data2 PROVISO_PORT=$PORT "$SRC/bootstrap" --run 2>&1)
has "busy port named" "port $PORT on 127.0.0.1 is in use" "$out"
stop
[ "$(cat "$T/stop.rc")" = 0 ] && ok || no "bootstrap --run did not exit 0 on SIGTERM"

# the same token file, same contents, at the next start; no stray token files
start "$PORT"
has "second start" "token:  $T/data/admin.token" "$(cat "$T/run.out" "$T/run.err")"
[ "$(cat "$T/data/admin.token")" = "$tok1" ] && ok || no "the token changed across starts"
n=$(find "$T/data" -maxdepth 1 -name 'proviso-token.*' | wc -l)
[ "$n" = 0 ] && ok || no "$n generated token files in the data dir"
stop

echo "bootstrap_run.sh: $CHECKS checks, $FAILS failures"
[ "$FAILS" = 0 ]
