#!/bin/bash
# bench_advisor.sh - proposals evaluated per second through proviso-advisor
#
#   tests/bench/bench_advisor.sh [SECONDS]        (from the build directory)
#
# Against 127.0.0.1 only, with wrk. One proviso-prover serves both phases,
# so the advisor's figure is read against the prover's own in the same run:
#   1. baseline: POST /v1/prove straight to the prover - a typical 100-rule
#      baseline and a one-rule credentialed proposal (tests/e2e/server_gen.sh);
#   2. the advisor (pointed at that prover with --prover) with a sandbox whose
#      base policy is the same 100 rules, manual mode: POST one-rule
#      proposals, each for a new host, so every request is a full
#      submission - validate, snapshot, merge, prove over HTTP, store the
#      chunk and its event with synchronous=FULL, answer 202.
# Phase 2 runs first without the audit chain (--test-no-audit-chain), then
# with it, and prints the chain's cost. Prints both rates and their ratio.
# Goals: >= 300 proposals/s on two cores (issue 8); the chain costs <= 20 %
# of the submission rate (issue 9). Not part of make check.
# 3. the stores, in the same run (issue 24 item 6, docs/scale-out.md#figures):
#    SQLite, PostgreSQL with one replica, PostgreSQL with two replicas (two
#    advisor processes on one throwaway cluster, tests/pg_lib.sh, the load
#    split across them). For each: proposals/s (manual mode, as phase 2)
#    and the loop p50 - one client whose every proposal is approved in auto
#    mode on a proof, so one request is a whole turn of the loop: submit,
#    prove, approve into a new revision, commit - and both as ratios
#    against SQLite. The PostgreSQL rows are skipped (with a note) when the
#    server is not installed; BENCH_STORES=0 skips phase 3.
set -u
DUR=${1:-10}
BUILD=${PV_BUILDDIR:-$(pwd)}
. "${PV_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/pid_lib.sh"
PROVER=$BUILD/proviso-prover
ADVISOR=$BUILD/proviso-advisor
CONNS=${BENCH_CONNECTIONS:-16}

command -v wrk >/dev/null 2>&1 || { echo "bench_advisor: wrk is not installed"; exit 77; }
command -v jq >/dev/null 2>&1 || { echo "bench_advisor: jq is not installed"; exit 77; }
for f in "$PROVER" "$ADVISOR"; do
    [ -x "$f" ] || { echo "bench_advisor: $f is not built"; exit 2; }
done

W=$(mktemp -d "${TMPDIR:-/tmp}/pv-bench-advisor.XXXXXX") || exit 1
PIDS=
cleanup() {
    # shellcheck disable=SC2086
    kill_own KILL $PIDS
    if [ -n "${BENCH_KEEP:-}" ]; then echo "kept $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT INT TERM

TOKEN=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
(umask 077 && printf '%s\n' "$TOKEN" >"$W/token")

wait_port() { # LOG PATTERN -> port
    i=0
    while [ $i -lt 400 ]; do
        p=$(sed -n "$2" "$1" | head -n 1)
        [ -n "$p" ] && { echo "$p"; return 0; }
        sleep 0.05
        i=$((i + 1))
    done
    cat "$1" >&2
    return 1
}

"$PROVER" --port 0 --token-file "$W/token" 2>"$W/prover.log" &
PPID_PROVER=$!
PIDS="$PIDS $!"
TICKS=$(getconf CLK_TCK)
# utime + stime of PID, in clock ticks (all its threads).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
PPORT=$(wait_port "$W/prover.log" 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p') || exit 1
PURL=http://127.0.0.1:$PPORT

sh "$(dirname "$0")/../e2e/server_gen.sh" 100 >"$W/prove.json" || exit 1

cat >"$W/prove.lua" <<'EOF'
local f = assert(io.open(os.getenv("BENCH_BODY"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_TOKEN")
local bad = 0
function response(status, headers, body)
    if status ~= 200 then bad = bad + 1 end
end
function done(summary, latency, requests)
    io.write(string.format("RESULT %.1f %.2f %.2f %d\n", summary.requests / (summary.duration / 1e6),
        latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.errors.status))
end
EOF

cat >"$W/submit.lua" <<'EOF'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_SBTOKEN")
local counter = 0
local id = 0
function setup(thread)
    id = id + 1
    thread:set("tid", id)
end
function request()
    counter = counter + 1
    local body = string.format('{"intent_summary":"bench","operations":[{"addRule":{"ruleName":"b%d_%d",' ..
        '"rule":{"endpoints":[{"host":"api%d-%d.newsvc.example.com","port":443,"protocol":"rest",' ..
        '"enforcement":"enforce","rules":[{"allow":{"method":"GET","path":"/v1/**"}}]}],' ..
        '"binaries":[{"path":"/usr/bin/curl"}]}}}]}', tid, counter, tid, counter)
    return wrk.format(nil, nil, nil, body)
end
function done(summary, latency, requests)
    io.write(string.format("RESULT %.1f %.2f %.2f %d\n", summary.requests / (summary.duration / 1e6),
        latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.errors.status))
end
EOF

run_wrk() { # URL LUA -> "rate p50 p99 errors"
    wrk -t2 -c"$CONNS" -d"${DUR}s" --latency -s "$2" "$1" 2>&1 | sed -n 's/^RESULT //p'
}

echo "== 1. prover alone: POST /v1/prove, 100-rule baseline, one-rule proposal ($CONNS connections)"
P=$(BENCH_BODY=$W/prove.json BENCH_TOKEN=$TOKEN run_wrk "$PURL/v1/prove" "$W/prove.lua")
echo "   rate/s p50_ms p99_ms non2xx: $P"

# advisor_phase LABEL DATADIR [ARGS...]: a fresh advisor, one sandbox, the
# submission rate into V.
advisor_phase() {
    label=$1
    dir=$2
    shift 2
    "$ADVISOR" --data-dir "$dir" --port 0 --token-file "$W/token" --prover "$PURL" \
        --prover-token-file "$W/token" "$@" 2>"$dir.log" &
    APID=$!
    PIDS="$PIDS $APID"
    APORT=$(wait_port "$dir.log" 's/.*listening on 127.0.0.1 port \([0-9]*\).*/\1/p') || exit 1
    A=http://127.0.0.1:$APORT
    jq -c '{name: "bench", policy: (.baseline | tojson), credentials: (.credentials | tojson)}' \
        "$W/prove.json" >"$W/create.json"
    SBT=$(curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
        --data-binary @"$W/create.json" "$A/v1/sandboxes" | jq -r .token)
    [ -n "$SBT" ] && [ "$SBT" != null ] || { echo "cannot create the sandbox"; cat "$dir.log"; exit 1; }
    curl -s -o /dev/null -X PUT -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
        -d '{"value":true}' "$A/v1/settings/agent_policy_proposals_enabled"

    echo "== $label: POST /v1/sandboxes/bench/proposals, manual mode ($CONNS connections)"
    c0=$(cpu_ticks "$APID")
    p0=$(cpu_ticks "$PPID_PROVER")
    V=$(BENCH_SBTOKEN=$SBT run_wrk "$A/v1/sandboxes/bench/proposals" "$W/submit.lua")
    c1=$(cpu_ticks "$APID")
    p1=$(cpu_ticks "$PPID_PROVER")
    echo "   rate/s p50_ms p99_ms non2xx: $V"
    N=$(curl -s -H "Authorization: Bearer $TOKEN" "$A/v1/sandboxes/bench/proposals?status=pending" |
        jq '[.chunks[] | select(.validation_result | startswith("prover: "))] | length')
    echo "   chunks stored with a prover verdict: $N"
    # CPU per submission does not depend on what else the machine runs.
    ACPU=$(echo "$c0 $c1 $N $TICKS" | awk '{printf "%.3f", ($2 - $1) * 1000 / $4 / $3}')
    PCPU=$(echo "$p0 $p1 $N $TICKS" | awk '{printf "%.3f", ($2 - $1) * 1000 / $4 / $3}')
    echo "   CPU ms per submission: advisor $ACPU, prover $PCPU"
    kill -TERM "$APID" 2>/dev/null
    wait "$APID" 2>/dev/null
}

# The audit chain's cost (issue 9): the same run without sealing (a test-only
# switch; records are then not exportable), then with it.
mkdir -p "$W/nochain" "$W/data"
advisor_phase "2a. advisor without the audit chain (--test-no-audit-chain)" "$W/nochain" \
    --test-no-audit-chain
V0=$V
A0=$ACPU
P0=$PCPU
advisor_phase "2. advisor" "$W/data"
r0=$(echo "$V0" | cut -d' ' -f1)
r1=$(echo "$V" | cut -d' ' -f1)
echo "== audit chain: $(echo "$r1 $r0" | awk '{printf "%.1f", 100 * (1 - $1 / $2)}')% fewer submissions/s with it ($r1/s vs $r0/s without; goal <= 20%)"
echo "== audit chain CPU: advisor $A0 -> $ACPU ms per submission; of the CPU a submission costs (advisor + prover) the chain adds $(echo "$A0 $P0 $ACPU $PCPU" | awk '{printf "%.1f", 100 * (($3 + $4) - ($1 + $2)) / ($1 + $2)}')% (this is what bounds the rate on two busy cores)"

pr=$(echo "$P" | cut -d' ' -f1)
ar=$(echo "$V" | cut -d' ' -f1)
# --- 3. the stores --------------------------------------------------------------
# store_start NAME DATADIR [ARGS...]: an advisor on the shared prover; its URL
# in SA and pid in SP
# Every row runs 32 workers: an advisor holds a PostgreSQL connection per
# worker (and a few more), and two replicas of the default 64 would pass
# PostgreSQL's default max_connections (100): "too many clients", a 500.
printf 'workers: 32\n' >"$W/stores.yaml"
store_start() {
    "$ADVISOR" --data-dir "$2" --port 0 --token-file "$W/token" --prover "$PURL" \
        --prover-token-file "$W/token" --config "$W/stores.yaml" "${@:3}" 2>"$2.$1.log" &
    SP=$!
    PIDS="$PIDS $SP"
    SA=http://127.0.0.1:$(wait_port "$2.$1.log" 's/.*listening on 127.0.0.1 port \([0-9]*\).*/\1/p') ||
        exit 1
}
# store_sandbox URL NAME MODE: a sandbox on the 100-rule baseline; its token
# in SBT
store_sandbox() {
    jq -c --arg n "$2" '{name: $n, policy: (.baseline | tojson), credentials: (.credentials | tojson)}' \
        "$W/prove.json" >"$W/create.json"
    SBT=$(curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
        --data-binary @"$W/create.json" "$1/v1/sandboxes" | jq -r .token)
    [ -n "$SBT" ] && [ "$SBT" != null ] || { echo "cannot create sandbox $2"; exit 1; }
    curl -s -o /dev/null -X PUT -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
        -d '{"value":true}' "$1/v1/settings/agent_policy_proposals_enabled"
    curl -s -o /dev/null -X PUT -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
        -d "{\"value\":\"$3\"}" "$1/v1/sandboxes/$2/settings/proposal_approval_mode"
}
# wrk_to URL SANDBOX TOKEN CONNS SECONDS OUT: submissions into OUT ("rate p50 p99 non2xx")
wrk_to() {
    BENCH_SBTOKEN=$3 wrk -t1 -c"$4" -d"$5s" --latency -s "$W/submit.lua" \
        "$1/v1/sandboxes/$2/proposals" 2>&1 | sed -n 's/^RESULT //p' >"$6"
}
LOOP_DUR=$(( DUR / 2 > 3 ? DUR / 2 : 3 ))
# store_row LABEL REPLICA_URLS...: the rate (CONNS split over the replicas,
# one sandbox each, at once) and the loop p50 (one client per replica, at
# once; the mean of their p50s). Sandboxes were made before the replicas
# after the first started (each loads the sandbox tokens at start).
store_row() {
    label=$1
    shift
    n=$#
    k=0
    for u in "$@"; do
        k=$((k + 1))
        wrk_to "$u" "m$k" "$(cat "$W/tok.m$k")" $((CONNS / n)) "$DUR" "$W/rate.$k" &
    done
    wait_jobs
    k=0
    for u in "$@"; do
        k=$((k + 1))
        wrk_to "$u" "a$k" "$(cat "$W/tok.a$k")" 1 "$LOOP_DUR" "$W/loop.$k" &
    done
    wait_jobs
    RATE=$(cat "$W"/rate.* | awk '{ s += $1 } END { printf "%.1f", s }')
    P50=$(cat "$W"/loop.* | awk '{ s += $2; n++ } END { printf "%.2f", s / n }')
    BAD=$(cat "$W"/rate.* "$W"/loop.* | awk '{ s += $4 } END { print s + 0 }')
    rm -f "$W"/rate.* "$W"/loop.*
    echo "   $label: $RATE proposals/s, loop p50 $P50 ms (non-2xx: $BAD)"
}
wait_jobs() { for j in $(jobs -p); do case " $PIDS " in *" $j "*) ;; *) wait "$j" ;; esac; done; }
# store_setup URL REPLICAS: manual sandboxes m1.. and auto sandboxes a1..
store_setup() {
    for k in $(seq 1 "$2"); do
        store_sandbox "$1" "m$k" manual
        echo "$SBT" >"$W/tok.m$k"
        store_sandbox "$1" "a$k" auto
        echo "$SBT" >"$W/tok.a$k"
    done
}

if [ "${BENCH_STORES:-1}" = 1 ]; then
    echo "== 3. stores: proposals/s with $CONNS connections (manual mode, ${DUR}s), loop p50 with one client per replica (auto mode, ${LOOP_DUR}s)"
    mkdir -p "$W/s_sqlite"
    store_start sqlite "$W/s_sqlite"
    store_setup "$SA" 1
    store_row "SQLite, one advisor" "$SA"
    R_SQ=$RATE
    L_SQ=$P50
    kill -TERM "$SP"; wait "$SP" 2>/dev/null
    ROWS="SQLite 1 $R_SQ $L_SQ"
    . "${PV_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/pg_lib.sh"
    if pg_have; then
        trap 'cleanup; pg_stop' EXIT INT TERM
        pg_start "$W" || exit 1
        base_url=$PG_URL
        db=0
        for replicas in 1 2; do
            # a fresh database per row
            db=$((db + 1))
            pg_as "$PG_BIN/createdb" -h "$PG_DIR/sock" -U proviso "bench$db" || exit 1
            url=$(echo "$base_url" | sed "s|///proviso?|///bench$db?|")
            mkdir -p "$W/pg$db.1"
            store_start pg "$W/pg$db.1" --store "$url"
            urls=$SA
            store_setup "$SA" "$replicas"
            if [ "$replicas" = 2 ]; then
                # The second replica shares the first one's audit key (a
                # copy of its data directory) and loads the sandboxes'
                # tokens at its start, after they were made.
                cp -a "$W/pg$db.1" "$W/pg$db.2"
                FIRST=$SP
                store_start pg "$W/pg$db.2" --store "$url"
                urls="$urls $SA"
            fi
            # shellcheck disable=SC2086
            store_row "PostgreSQL, $replicas advisor replica(s)" $urls
            ROWS="$ROWS
PostgreSQL $replicas $RATE $P50"
            kill -TERM "$SP" ${FIRST:-} 2>/dev/null
            wait "$SP" ${FIRST:-} 2>/dev/null
            FIRST=
        done
    else
        echo "   PostgreSQL: not installed (bootstrap installs it); its rows are skipped"
    fi
    echo "== 3. stores against SQLite (the same run):"
    printf '   %-11s %8s %12s %8s %12s %8s\n' store replicas "proposals/s" "x SQLite" "loop p50 ms" "x SQLite"
    echo "$ROWS" | awk -v r0="$R_SQ" -v l0="$L_SQ" '{
        printf "   %-11s %8s %12.1f %8.2f %12.2f %8.2f\n", $1, $2, $3, $3 / r0, $4, $4 / l0 }'
fi
echo "== advisor / prover: $(echo "$ar $pr" | awk '{printf "%.2f", $1 / $2}')x  (advisor $ar/s, prover $pr/s)"
if awk -v a="$ar" 'BEGIN { exit !(a >= 300) }'; then
    echo "PASS: >= 300 proposals/s"
else
    echo "MISS: < 300 proposals/s"
    exit 1
fi
