# shellcheck shell=sh
# advisor_lib.sh - helpers for the proviso-advisor end-to-end scripts (sourced)
#
# start_advisor starts the real proviso-advisor from the build on 127.0.0.1
# with --port 0 and a scratch data directory; it runs its own proviso-prover
# child unless ARGS name --prover. api() sends one request and leaves the
# status in STATUS and the body in BODY. Scripts end with "N passed, N
# failed" and exit non-zero on any failure.
set -u

: "${PV_BUILDDIR:=$(pwd)}"
ADV_BIN=${PV_ADVISOR_BIN:-$PV_BUILDDIR/proviso-advisor}
for tool in curl jq; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "SKIP: $tool is not installed"
        exit 77
    fi
done
if [ ! -x "$ADV_BIN" ]; then
    echo "FAIL: $ADV_BIN is not built"
    exit 1
fi

# kill_own (tests/pid_lib.sh): the scripts stop only what they started
. "${PV_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/pid_lib.sh"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pv-advisor-e2e.XXXXXX") || exit 1
PASS=0
FAIL=0
ADV_PID=
ADV_PORT=
ADV=
ADV_LOG=
ADMIN=
STATUS=
BODY=

adv_cleanup() {
    if [ -n "$ADV_PID" ]; then
        kill -KILL "$ADV_PID" 2>/dev/null
        wait "$ADV_PID" 2>/dev/null
    fi
    # The prover child dies with its parent (PR_SET_PDEATHSIG).
    if [ -n "${KEEP:-}" ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap adv_cleanup EXIT INT TERM

ok() { PASS=$((PASS + 1)); echo "ok - $*"; }
bad() { FAIL=$((FAIL + 1)); echo "not ok - $*"; }
finish() { echo "$PASS passed, $FAIL failed"; [ "$FAIL" -eq 0 ]; }

# eq DESC GOT WANT
eq() {
    if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', want '$3'"; fi
}
# has DESC HAYSTACK NEEDLE
has() {
    case "$2" in *"$3"*) ok "$1" ;; *) bad "$1: '$3' not in: $2" ;; esac
}

ADMIN_FILE=$WORK/admin.token
ADMIN=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
(umask 077 && printf '%s\n' "$ADMIN" >"$ADMIN_FILE")

# start_advisor DATADIR [ARGS...]: sets ADV_PID, ADV_PORT, ADV, ADV_LOG.
start_advisor() {
    dir=$1
    shift
    ADV_LOG=$WORK/advisor.$(date +%s%N).log
    # ADVISOR_WRAPPER runs the advisor under a tool (tests/valgrind.sh)
    ${ADVISOR_WRAPPER:-} "$ADV_BIN" --data-dir "$dir" --port 0 --token-file "$ADMIN_FILE" "$@" \
        2>"$ADV_LOG" &
    ADV_PID=$!
    i=0
    while [ $i -lt "${PV_START_TRIES:-600}" ]; do
        ADV_PORT=$(sed -n 's/.*listening on 127.0.0.1 port \([0-9]*\).*/\1/p' "$ADV_LOG" | head -n 1)
        [ -n "$ADV_PORT" ] && break
        if ! kill -0 "$ADV_PID" 2>/dev/null; then
            echo "advisor exited during start-up:"; cat "$ADV_LOG"; ADV_PID=; return 1
        fi
        sleep 0.05
        i=$((i + 1))
    done
    [ -n "$ADV_PORT" ] || { echo "advisor did not start:"; cat "$ADV_LOG"; return 1; }
    ADV=http://127.0.0.1:$ADV_PORT
}

stop_advisor() {
    [ -n "$ADV_PID" ] || return 0
    kill -TERM "$ADV_PID" 2>/dev/null
    wait "$ADV_PID" 2>/dev/null
    ADV_RC=$?
    ADV_PID=
}

# api METHOD PATH [BODY [TOKEN]]: TOKEN defaults to the admin token; "-"
# sends no Authorization header.
api() {
    m=$1
    p=$2
    b=${3:-}
    t=${4:-$ADMIN}
    out=$WORK/body
    set -- -s -o "$out" -w '%{http_code}' -X "$m" --max-time 330
    [ "$t" != "-" ] && set -- "$@" -H "Authorization: Bearer $t"
    [ -n "$b" ] && set -- "$@" -H 'Content-Type: application/json' --data-binary "$b"
    STATUS=$(curl "$@" "$ADV$p")
    BODY=$(cat "$out")
}

# jf FILTER: jq over BODY (raw output).
jf() { printf '%s' "$BODY" | jq -r "$1"; }

# proposal NAME HOST PORT METHOD PATH [BINARY]: a one-rule policy.local body.
proposal() {
    jq -cn --arg n "$1" --arg h "$2" --argjson p "$3" --arg m "$4" --arg path "$5" \
        --arg b "${6:-/usr/bin/curl}" \
        '{intent_summary: ("allow " + $n), operations: [{addRule: {ruleName: $n, rule: {
           endpoints: [{host: $h, port: $p, protocol: "rest", enforcement: "enforce",
                        rules: [{allow: {method: $m, path: $path}}]}],
           binaries: [{path: $b}]}}}]}'
}

# create_sandbox NAME POLICY_TEXT [CREDENTIALS_TEXT]: sets SB_TOKEN.
create_sandbox() {
    body=$(jq -cn --arg n "$1" --arg p "$2" --arg c "${3:-}" \
        '{name: $n, policy: $p} + (if $c == "" then {} else {credentials: $c} end)')
    api POST /v1/sandboxes "$body"
    SB_TOKEN=$(jf '.token // empty')
}

# start_prover NAME [PORT]: a proviso-prover ($PV_PROVER_BIN, else the
# build's) on 127.0.0.1 with the admin token, its pid added to PIDS; sets
# P_PID and P_PORT (the pool and HAProxy tests).
start_prover() {
    log=$WORK/$1.$(date +%s%N).log
    "${PV_PROVER_BIN:-$PV_BUILDDIR/proviso-prover}" --port "${2:-0}" --bind 127.0.0.1 \
        --token-file "$ADMIN_FILE" 2>"$log" &
    P_PID=$!
    PIDS="${PIDS:-} $P_PID"
    P_PORT=
    i=0
    while [ $i -lt 200 ] && [ -z "$P_PORT" ]; do
        P_PORT=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$log" | head -n 1)
        [ -n "$P_PORT" ] || sleep 0.05
        i=$((i + 1))
    done
    [ -n "$P_PORT" ] || { echo "prover $1 did not start:"; cat "$log"; exit 1; }
}

# proves PORT [ROUTE_RE]: how many /v1/prove calls (or calls of the routes
# /v1/ROUTE_RE, a sed pattern) the prover on PORT answered 200, from its
# own /metrics.
proves() {
    curl -s -H "Authorization: Bearer $ADMIN" "http://127.0.0.1:$1/metrics" |
        sed -n "s/^proviso_prover_requests_total{route=\"\\/v1\\/${2:-prove}\",status=\"200\"} //p" |
        awk '{ s += $1 } END { print s + 0 }'
}
