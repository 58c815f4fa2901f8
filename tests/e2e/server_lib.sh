# shellcheck shell=sh
# server_lib.sh - helpers for the proviso-prover end-to-end scripts (sourced, not run)
#
# Each script starts the real binary on 127.0.0.1 with --port 0 (the kernel
# picks a free port; the script reads it from the "listening on" log line),
# drives it with curl and counts results. It ends with the plain
# "N passed, N failed" line and exits non-zero on any failure.
set -u

: "${PV_BUILDDIR:=$(pwd)}"
BIN=${PV_PROVER_BIN:-$PV_BUILDDIR/proviso-prover}
if ! command -v curl >/dev/null 2>&1; then
    echo "SKIP: curl is not installed"
    exit 77
fi
if [ ! -x "$BIN" ]; then
    echo "FAIL: $BIN is not built"
    exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/pv-server-e2e.XXXXXX") || exit 1
PASS=0
FAIL=0
SRV_PID=
PORT=
URL=
LOG=
TOKEN=
STATUS=
BODY=
REQS=0

cleanup() {
    if [ -n "$SRV_PID" ]; then
        kill -KILL "$SRV_PID" 2>/dev/null
        wait "$SRV_PID" 2>/dev/null
    fi
    # KEEP=1 keeps the scratch directory (server logs) for a look after a failure.
    if [ -n "${KEEP:-}" ]; then
        echo "kept $WORK"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT INT TERM

ok() {
    PASS=$((PASS + 1))
    echo "ok - $*"
}

bad() {
    FAIL=$((FAIL + 1))
    echo "not ok - $*"
}

# check DESC COMMAND...: pass when the command succeeds.
check() {
    desc=$1
    shift
    if "$@"; then ok "$desc"; else bad "$desc"; fi
}

finish() {
    echo "$PASS passed, $FAIL failed"
    [ "$FAIL" -eq 0 ]
}

# make_token FILE: a fresh 64-hex-digit token in a 0600 file; sets TOKEN.
make_token() {
    TOKEN=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
    (umask 077 && printf '%s\n' "$TOKEN" >"$1")
}

# start_server ARGS...: start with --port 0 plus ARGS, wait for /healthz.
# Sets SRV_PID, PORT, URL and LOG (the server's stderr).
start_server() {
    LOG=$WORK/server.$(date +%s%N).log
    REQS=0
    : >"$LOG"
    # SERVER_WRAPPER runs the prover under a tool (tests/valgrind.sh)
    ${SERVER_WRAPPER:-} "$BIN" --port 0 "$@" 2>"$LOG" &
    SRV_PID=$!
    PORT=
    i=0
    while [ $i -lt "${PV_START_TRIES:-400}" ]; do
        PORT=$(sed -n 's|.*listening on http://[^ ]*:\([0-9][0-9]*\) .*|\1|p' "$LOG" | head -n 1)
        [ -n "$PORT" ] && break
        if ! kill -0 "$SRV_PID" 2>/dev/null; then
            echo "server exited early:"
            cat "$LOG"
            SRV_PID=
            return 1
        fi
        sleep 0.025
        i=$((i + 1))
    done
    if [ -z "$PORT" ]; then
        echo "server did not report its port:"
        cat "$LOG"
        return 1
    fi
    URL=http://127.0.0.1:$PORT
    return 0
}

# stop_server: SIGTERM and wait; returns the exit status.
stop_server() {
    kill -TERM "$SRV_PID"
    wait "$SRV_PID"
    rc=$?
    SRV_PID=
    return $rc
}

# req METHOD PATH CURL-ARGS...: sets STATUS, BODY; headers in $WORK/hdrs;
# counts requests in REQS (reset by start_server).
req() {
    m=$1
    p=$2
    shift 2
    REQS=$((REQS + 1))
    STATUS=$(curl -s -o "$WORK/body" -D "$WORK/hdrs" -w '%{http_code}' -X "$m" "$@" "$URL$p")
    BODY=$(cat "$WORK/body")
    # a successful health probe leaves no access line (docs/operations.md#logs)
    [ "$p $STATUS" != "/healthz 200" ] || REQS=$((REQS - 1))
}

# auth METHOD PATH CURL-ARGS...: req with the bearer token.
auth() {
    m=$1
    p=$2
    shift 2
    req "$m" "$p" -H "Authorization: Bearer $TOKEN" "$@"
}

# post PATH FILE: authenticated JSON POST of FILE.
post() {
    auth POST "$1" -H 'Content-Type: application/json' --data-binary "@$2"
}

expect_status() {
    if [ "$STATUS" = "$1" ]; then
        ok "$2 ($STATUS)"
    else
        bad "$2: status $STATUS, want $1; body: $(printf '%s' "$BODY" | head -c 400)"
    fi
}

expect_body() {
    case "$BODY" in
    *"$1"*) ok "$2" ;;
    *) bad "$2: body lacks '$1': $(printf '%s' "$BODY" | head -c 400)" ;;
    esac
}

expect_no_body() {
    case "$BODY" in
    *"$1"*) bad "$2: body has '$1'" ;;
    *) ok "$2" ;;
    esac
}

expect_header() {
    if grep -qi "^$1" "$WORK/hdrs"; then
        ok "$2"
    else
        bad "$2: no '$1' header in: $(tr -d '\r' <"$WORK/hdrs" | tr '\n' '|')"
    fi
}

# The status/JSON error shape every error reply has.
expect_error() {
    expect_status "$1" "$3"
    expect_body "\"error\":\"$2\"" "$3: error code $2"
    expect_body '"detail":' "$3: has detail"
}

# A small policy pair used by several scripts.
write_policies() {
    cat >"$WORK/baseline.json" <<'EOF'
{"version": 1, "network_policies": {"docs": {"name": "docs", "endpoints": [
  {"host": "docs.python.org", "port": 443}], "binaries": [{"path": "/usr/bin/curl"}]}}}
EOF
    cat >"$WORK/candidate.json" <<'EOF'
{"version": 1, "network_policies": {"docs": {"name": "docs", "endpoints": [
  {"host": "docs.python.org", "port": 443}], "binaries": [{"path": "/usr/bin/curl"}]},
  "gh": {"name": "gh", "endpoints": [{"host": "api.github.com", "port": 443}],
         "binaries": [{"path": "/usr/bin/curl"}]}}}
EOF
    cat >"$WORK/creds.json" <<'EOF'
[{"name": "gh", "type": "github", "scopes": ["repo"], "target_hosts": ["api.github.com"]}]
EOF
    {
        printf '{"baseline": '
        cat "$WORK/baseline.json"
        printf ', "candidate": '
        cat "$WORK/candidate.json"
        printf ', "credentials": '
        cat "$WORK/creds.json"
        printf '}\n'
    } >"$WORK/prove.json"
}
