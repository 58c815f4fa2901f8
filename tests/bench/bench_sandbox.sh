#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench_sandbox.sh - `proviso sandbox run` against today's proxy, side by side
#
#   tests/bench/bench_sandbox.sh [seconds]      (root, from the build directory)
#
# 1. start-up: BENCH_STARTS (30) runs of `proviso sandbox run -- sh -c 'date
#    +%s%N'`, from the call to the command's first instruction (namespaces,
#    the new root, Landlock, the proxy listening, the CA copied); the
#    baseline is the same command run directly. Goal: p50 <= 100 ms.
# 2. request rates through the sandbox's proxy (wrk inside the sandbox, to
#    127.0.0.1:3128) against proviso-proxy on the host's loopback (wrk on
#    the host), same 100-rule policy, same upstream: keep-alive (wrk -t2
#    -c32) and new connections (wrk -t2 -c16 "Connection: close"),
#    BENCH_ROUNDS (3) rounds interleaved; median ratio sandbox / host.
#    Goal: >= 0.95 for both.
# Prints the figures and ratios; exits 1 if a goal is missed. Not part of
# `make check` (timing).
set -u
SECS=${1:-5}
STARTS=${BENCH_STARTS:-30}
ROUNDS=${BENCH_ROUNDS:-3}
BUILD=${PV_BUILDDIR:-$(pwd)}
. "${PV_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/pid_lib.sh"
PV=$BUILD/proviso
PROXY_BIN=$BUILD/proviso-proxy
UPSTREAM_BIN=$BUILD/tests/e2e/proxy_upstream
[ "$(id -u)" = 0 ] || { echo "bench_sandbox: run as root"; exit 2; }
for b in wrk "$PV" "$PROXY_BIN" "$UPSTREAM_BIN"; do
    command -v "$b" >/dev/null || { echo "bench_sandbox: $b is needed"; exit 2; }
done
T=$(mktemp -d /tmp/pv-bench-sandbox.XXXXXX)
chmod 755 "$T"
PIDS=""
trap 'kill_own TERM $PIDS; rm -rf "$T"' EXIT
wait_file() { for _ in $(seq 1 200); do [ -s "$1" ] && return 0; sleep 0.05; done; return 1; }

"$UPSTREAM_BIN" --port-file "$T/up.port" 2>/dev/null &
PIDS="$PIDS $!"
wait_file "$T/up.port" || { echo "upstream failed"; exit 1; }
read -r UP _ <"$T/up.port"
{
    echo "version: 1"
    echo "filesystem_policy:"
    echo "  read_only: [/usr, /lib, /lib64, /etc, /proc, /dev/urandom, $T/ro]"
    echo "  read_write: [/tmp, /dev/null]"
    echo "network_policies:"
    for i in $(seq 1 99); do
        cat <<EOF
  filler_$i:
    endpoints:
      - host: api$i.example.com
        port: 443
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /v$i/**}
    binaries:
      - path: /usr/bin/wrk
EOF
    done
    cat <<EOF
  upstream:
    endpoints:
      - host: 127.0.0.1
        port: $UP
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /api/**}
    binaries:
      - path: /usr/bin/wrk
EOF
} >"$T/policy.yaml"
mkdir -p "$T/ro"
cat >"$T/ro/proxied.lua" <<EOF
wrk.path = "http://127.0.0.1:$UP/api/items"
EOF
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
ns() { date +%s%N; }

echo "== start-up ($STARTS runs each, ms from the call to the command's first line)"
: >"$T/base" && : >"$T/sb"
for _ in $(seq 1 "$STARTS"); do
    t0=$(ns); t1=$(/bin/sh -c 'date +%s%N'); echo $(( (t1 - t0) / 1000 )) >>"$T/base"
    t0=$(ns)
    t1=$("$PV" sandbox run --policy "$T/policy.yaml" --log /dev/null -- /bin/sh -c 'date +%s%N')
    echo $(( (t1 - t0) / 1000 )) >>"$T/sb"
done
B50=$(median <"$T/base")
S50=$(median <"$T/sb")
S90=$(sort -n "$T/sb" | awk -v n="$STARTS" 'NR == int(n * 0.9 + 0.5) {print}')
awk -v b="$B50" -v s="$S50" -v s90="$S90" 'BEGIN {
    printf "  direct sh:   p50 %.1f ms\n  sandbox run: p50 %.1f ms, p90 %.1f ms (%.1fx direct; goal p50 <= 100 ms)\n",
        b / 1000, s / 1000, s90 / 1000, s / b }'
fail=0
[ "$S50" -le 100000 ] || { echo "  GOAL MISSED: start-up p50 > 100 ms"; fail=1; }

"$PROXY_BIN" --policy "$T/policy.yaml" --port 0 --admin-port 0 --port-file "$T/px.port" \
    --data-dir "$T/pxdata" --test-allow-loopback --log /dev/null 2>/dev/null &
PIDS="$PIDS $!"
wait_file "$T/px.port" || { echo "proxy failed"; exit 1; }
read -r PX _ <"$T/px.port"
rate_of() { awk '/Requests\/sec/ {print $2}'; }
host_rate() { wrk "$@" -d"$SECS"s -s "$T/ro/proxied.lua" "http://127.0.0.1:$PX" | rate_of; }
sb_rate() {
    "$PV" sandbox run --policy "$T/policy.yaml" --test-allow-loopback --log /dev/null -- \
        wrk "$@" -d"$SECS"s -s "$T/ro/proxied.lua" "http://127.0.0.1:3128" | rate_of
}
for mode in keepalive newconn; do
    if [ "$mode" = keepalive ]; then set -- -t2 -c32; else set -- -t2 -c16 -H "Connection: close"; fi
    : >"$T/ratios"
    echo "== $mode request rate (wrk $*, ${SECS}s, $ROUNDS rounds: host proxy / sandbox)"
    for r in $(seq 1 "$ROUNDS"); do
        h=$(host_rate "$@")
        s=$(sb_rate "$@")
        echo "  round $r: host ${h:-0} req/s, sandbox ${s:-0} req/s"
        awk -v h="${h:-0}" -v s="${s:-0}" 'BEGIN {print (h > 0) ? s / h : 0}' >>"$T/ratios"
    done
    m=$(median <"$T/ratios")
    echo "  median ratio sandbox / host: $(printf %.3f "$m")x (goal >= 0.95)"
    awk -v m="$m" 'BEGIN {exit !(m >= 0.95)}' || { echo "  GOAL MISSED: $mode"; fail=1; }
done
exit $fail
