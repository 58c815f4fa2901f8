#!/bin/sh
# bench_server.sh - proviso-prover over HTTP: throughput, latency, memory
#
#   tests/bench/bench_server.sh [SECONDS]        (from the build directory)
#
# Against 127.0.0.1 only, with wrk (Debian package "wrk"). In one run:
#   1. the in-process figure: tests/bench/bench_server runs the same request
#      body through the worker code path without HTTP, on one thread;
#   2. POST /v1/prove, a typical 100-rule baseline plus a one-rule proposal
#      with credentials (tests/e2e/server_gen.sh), over one connection: the
#      latency to compare with (1), no queueing;
#   3. the same over 2 connections per worker: throughput, p50, p99;
#   4. GET /healthz on the same server: the HTTP floor;
#   5. a fresh server: RSS after 1,000 and after BENCH_REQUESTS (100,000)
#      proofs of a small policy pair (server_gen.sh 2), so the run stays in
#      minutes while every request still goes through decode, load, merge,
#      prove and serialise.
# Goals (issue 4): >= 1,000 proofs/s; HTTP p50 within 2 ms of in-process p50;
# RSS at 100,000 within 10% of RSS at 1,000. Prints PASS/MISS per goal and
# exits 1 on a miss. Not part of make check.
set -u
DUR=${1:-10}
WORKERS=$(nproc)
CONNS=${BENCH_CONNECTIONS:-$((2 * WORKERS))}
THREADS=${BENCH_THREADS:-2}
TOTAL=${BENCH_REQUESTS:-100000}
BUILD=${PV_BUILDDIR:-$(pwd)}
BIN=$BUILD/proviso-prover
INPROC=$BUILD/tests/bench/bench_server

command -v wrk >/dev/null 2>&1 || { echo "bench_server: wrk is not installed (apt-get install wrk)"; exit 77; }
for f in "$BIN" "$INPROC"; do
    [ -x "$f" ] || { echo "bench_server: $f is not built (make && make tests/bench/bench_server)"; exit 2; }
done

W=$(mktemp -d "${TMPDIR:-/tmp}/pv-bench-server.XXXXXX") || exit 1
SRV=
cleanup() {
    [ -n "$SRV" ] && kill -KILL "$SRV" 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT INT TERM

# --- inputs: a typical 100-rule baseline and a one-rule proposal -----------------
GEN=$(dirname "$0")/../e2e/server_gen.sh
sh "$GEN" 100 >"$W/prove.json" || exit 1
sh "$GEN" 2 >"$W/small.json" || exit 1

cat >"$W/post.lua" <<'EOF'
local f = assert(io.open(os.getenv("BENCH_BODY"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_TOKEN")
local limit = tonumber(os.getenv("BENCH_LIMIT") or "0")
local n = 0
function response(status, headers, body)
    n = n + 1
    if limit > 0 and n >= limit then wrk.thread:stop() end
end
EOF
cat >"$W/get.lua" <<'EOF'
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_TOKEN")
EOF

TOKEN=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
(umask 077 && printf '%s\n' "$TOKEN" >"$W/token")
export BENCH_TOKEN=$TOKEN BENCH_BODY=$W/prove.json

start() {
    : >"$W/server.log"
    "$BIN" --port 0 --token-file "$W/token" 2>"$W/server.log" &
    SRV=$!
    PORT=
    for _ in $(seq 1 400); do
        PORT=$(sed -n 's|.*listening on http://[^ ]*:\([0-9][0-9]*\) .*|\1|p' "$W/server.log")
        [ -n "$PORT" ] && break
        sleep 0.025
    done
    [ -n "$PORT" ] || { cat "$W/server.log"; exit 1; }
    URL=http://127.0.0.1:$PORT
}

stop() {
    kill -TERM "$SRV"
    wait "$SRV"
    SRV=
}

rss_kb() {
    sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$SRV/status"
}

# wrk's latency line "50%  1.23ms" -> milliseconds
pct_ms() {
    awk -v p="$1" '$1 == p {
        v = $2; u = v; gsub(/[0-9.]/, "", u); sub(/[a-z]+$/, "", v);
        if (u == "us") v = v / 1000; else if (u == "s") v = v * 1000; else if (u == "m") v = v * 60000;
        printf "%.3f", v }' "$2"
}

rate() {
    awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$1"
}

check_2xx() {
    if grep -q 'Non-2xx' "$1"; then
        echo "bench_server: non-2xx answers:"
        cat "$1"
        curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
            --data-binary "@$W/prove.json" "$URL/v1/prove" | head -c 600
        exit 1
    fi
}

echo "== proviso-prover bench: $WORKERS cores, load $(cut -d' ' -f1-3 /proc/loadavg), wrk -d${DUR}s"
"$INPROC" prove "$W/prove.json" 300 | tee "$W/inproc.txt"
IN_P50=$(sed -n 's/.* p50=\([0-9.]*\) ms.*/\1/p' "$W/inproc.txt")

start
curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    --data-binary "@$W/prove.json" "$URL/v1/prove" >"$W/answer.json"
echo "answer: $(head -c 160 "$W/answer.json")..."
grep -q '"verdict":"findings"' "$W/answer.json" || { echo "bench_server: unexpected answer"; exit 1; }
wrk -t"$THREADS" -c"$CONNS" -d2s -s "$W/post.lua" "$URL/v1/prove" >/dev/null
wrk -t1 -c1 -d"${DUR}s" --latency -s "$W/post.lua" "$URL/v1/prove" >"$W/prove1.txt"
check_2xx "$W/prove1.txt"
wrk -t"$THREADS" -c"$CONNS" -d"${DUR}s" --latency -s "$W/post.lua" "$URL/v1/prove" >"$W/prove.txt"
check_2xx "$W/prove.txt"
wrk -t"$THREADS" -c"$CONNS" -d"${DUR}s" --latency -s "$W/get.lua" "$URL/healthz" >"$W/healthz.txt"
check_2xx "$W/healthz.txt"
stop

L50=$(pct_ms 50% "$W/prove1.txt")
L99=$(pct_ms 99% "$W/prove1.txt")
L_RATE=$(rate "$W/prove1.txt")
P_RATE=$(rate "$W/prove.txt")
P50=$(pct_ms 50% "$W/prove.txt")
P99=$(pct_ms 99% "$W/prove.txt")
H_RATE=$(rate "$W/healthz.txt")
H50=$(pct_ms 50% "$W/healthz.txt")
H99=$(pct_ms 99% "$W/healthz.txt")
echo "POST /v1/prove, 1 connection : ${L_RATE} req/s  p50 ${L50} ms  p99 ${L99} ms"
echo "POST /v1/prove, $CONNS connections: ${P_RATE} req/s  p50 ${P50} ms  p99 ${P99} ms"
echo "GET  /healthz,  $CONNS connections: ${H_RATE} req/s  p50 ${H50} ms  p99 ${H99} ms"

# --- memory: a fresh server, RSS after 1,000 and after $TOTAL proofs ---------------
export BENCH_BODY=$W/small.json

proved() {
    curl -s -H "Authorization: Bearer $TOKEN" "$URL/metrics" |
        awk -F' ' '/^proviso_prover_requests_total\{route="\/v1\/prove",status="200"\}/ { n = $2 }
                   END { print n + 0 }'
}

# run_until N: drive /v1/prove until the server has answered N proofs (wrk's
# per-thread limit stops the requests; wrk itself only stops at its duration,
# so it is stopped here once the count is reached).
run_until() {
    have=$(proved)
    BENCH_LIMIT=$(((($1 - have) + CONNS - 1) / CONNS)) \
        wrk -t"$CONNS" -c"$CONNS" -d3600s -s "$W/post.lua" "$URL/v1/prove" >"$W/wrk.txt" &
    WRK=$!
    t0=$(date +%s)
    while kill -0 "$WRK" 2>/dev/null; do
        [ "$(proved)" -ge "$1" ] && break
        sleep 0.5
    done
    kill "$WRK" 2>/dev/null
    wait "$WRK" 2>/dev/null
    SECS=$(($(date +%s) - t0))
}

start
run_until 1000
RSS1=$(rss_kb)
N1=$(proved)
run_until "$TOTAL"
RSS2=$(rss_kb)
N=$(proved)
BAD=$(curl -s -H "Authorization: Bearer $TOKEN" "$URL/metrics" |
    grep -c '^proviso_prover_requests_total{route="/v1/prove",status="[^2]')
stop
[ "$BAD" -eq 0 ] || { echo "bench_server: non-200 answers in the memory run"; exit 1; }
echo "RSS after ${N1} proofs: ${RSS1} kB; after ${N} proofs: ${RSS2} kB" \
    "(small pair, $(((N - N1) / (SECS > 0 ? SECS : 1))) proofs/s)"

fail=0
goal() {
    if [ "$2" = 1 ]; then echo "PASS $1"; else echo "MISS $1"; fail=1; fi
}
goal "throughput >= 1000 proofs/s (${P_RATE}/s)" "$(awk -v r="$P_RATE" 'BEGIN { print (r >= 1000) }')"
goal "HTTP p50 ${L50} ms (1 connection) within 2 ms of in-process p50 ${IN_P50} ms" \
    "$(awk -v a="$L50" -v b="$IN_P50" 'BEGIN { print (a - b <= 2) }')"
goal "RSS at ${N} within 10% of RSS at 1,000 (${RSS2} vs ${RSS1} kB)" \
    "$(awk -v a="$RSS2" -v b="$RSS1" 'BEGIN { print (a <= b * 1.10) }')"
exit $fail
