#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench_proxy.sh - proviso-proxy against direct access and tinyproxy
#
#   tests/bench/bench_proxy.sh [seconds]      (from the build directory)
#
# One upstream (tests/e2e/proxy_upstream) on 127.0.0.1; three paths to it:
# direct, tinyproxy (Debian, no policy) and proviso-proxy with a 100-rule
# policy whose matching rule is an enforced REST endpoint (L7 rules applied
# to every request). Measures, in one run:
#   1. plain HTTP keep-alive request rate (wrk, 4 threads x 64 connections);
#   2. p50 latency of one client doing sequential keep-alive requests
#      (wrk -c1 --latency): the added latency per L7 request;
#   3. CONNECT tunnel bulk throughput (curl -p, BENCH_BULK bytes, best of 3);
#   4. 1,000 idle keep-alive connections: resident memory per connection,
#      errors, and file descriptors left after they close;
#   5. new-connection rate: wrk -t2 -c16 -H "Connection: close" (every
#      request a new connection, as curl, git and pip make them), reported
#      as proviso-proxy / tinyproxy: BENCH_ROUNDS (3) rounds, each running
#      tinyproxy, proviso-proxy (its default identity scan: the BPF
#      task-file iterator where it works) and proviso-proxy with
#      --identity-scan proc back to back; the median ratios;
#   6. MCP: p50 latency of one sequential keep-alive client posting an MCP
#      tools/call (wrk -c1 --latency, POST /mcp, an enforced `mcp` endpoint:
#      the body read, the method profile and the tool rules applied),
#      direct and through proviso-proxy, beside the REST figure of 2.;
#   7. flood: BENCH_FLOOD (3,000) connections that each sent half a request
#      head stay open; the latency of GET /healthz (admin port) and of an
#      allowed request through the proxy (curl's time_total, best of 5).
# BENCH_MODES selects sections (default "keepalive latency bulk idle newconn
# mcp flood"). BENCH_PIDNS=1 runs the whole benchmark in a new PID namespace
# (root; unshare --pid --mount-proc), the way a proxy serves one sandbox:
# the identity scan then reads only the processes of that namespace, not
# every process of the machine. Needs wrk, tinyproxy and curl. Prints a
# table; exits 1 if a goal is missed.
set -u
if [ "${BENCH_PIDNS:-0}" = 1 ] && [ "${BENCH_IN_PIDNS:-0}" != 1 ]; then
    exec env BENCH_IN_PIDNS=1 unshare --pid --fork --mount-proc bash "$0" "$@"
fi
SECS=${1:-10}
BULK=${BENCH_BULK:-1073741824}
NCONN=${BENCH_CONNS:-1000}
BUILD=${PV_BUILDDIR:-$(pwd)}
. "${PV_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/pid_lib.sh"
PROXY_BIN=$BUILD/proviso-proxy
UPSTREAM_BIN=$BUILD/tests/e2e/proxy_upstream
CONNS_BIN=$BUILD/tests/bench/bench_proxy_conns
RAWC_BIN=$BUILD/tests/e2e/proxy_rawc
MODES=${BENCH_MODES:-keepalive latency bulk idle newconn mcp flood}
NFLOOD=${BENCH_FLOOD:-3000}
ROUNDS=${BENCH_ROUNDS:-3}
on() { case " $MODES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
for b in wrk tinyproxy curl; do
    command -v "$b" >/dev/null || { echo "bench_proxy: $b is needed"; exit 2; }
done
for b in "$PROXY_BIN" "$UPSTREAM_BIN" "$CONNS_BIN" "$RAWC_BIN"; do
    [ -x "$b" ] || { echo "bench_proxy: build $b first (make; make check builds the upstream)"; exit 2; }
done
ulimit -n 65536 2>/dev/null || ulimit -n 20000
T=$(mktemp -d /tmp/pv-proxy-bench.XXXXXX)
PIDS=""
cleanup() {
    # shellcheck disable=SC2086
    kill_own TERM $PIDS
    for p in $PIDS; do wait "$p" 2>/dev/null; done
    [ -n "${BENCH_KEEP:-}" ] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT
wait_file() {
    for _ in $(seq 1 100); do [ -s "$1" ] && return 0; sleep 0.05; done
    return 1
}
free_port() {
    "$UPSTREAM_BIN" --port-file "$T/fp.$1" & local p=$!
    wait_file "$T/fp.$1"; kill $p; wait $p 2>/dev/null
    cut -d' ' -f1 "$T/fp.$1"
}

"$UPSTREAM_BIN" --port-file "$T/up.port" 2>/dev/null &
PIDS="$PIDS $!"
wait_file "$T/up.port" || { echo "upstream failed"; exit 1; }
read -r UP _ <"$T/up.port"

# 100 rules: 99 that never match this traffic, then the REST endpoint
{
    echo "version: 1"
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
          - allow: {method: POST, path: /v$i/items}
      - host: "*.svc$i.example.net"
        ports: [443, 8443]
    binaries:
      - path: /usr/bin/curl
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
          - allow: {method: GET, path: /bulk}
        deny_rules:
          - {method: GET, path: /api/admin/**}
      - host: 127.0.0.1
        port: $UP
        path: /mcp
        protocol: mcp
        enforcement: enforce
        mcp: {allow_all_known_mcp_methods: true}
        rules:
          - allow: {tool: create_issue}
          - allow: {tool: 'search_*'}
        deny_rules:
          - {tool: 'delete_*'}
    binaries:
      - path: /usr/bin/wrk
      - path: /usr/bin/curl
      - path: $CONNS_BIN
EOF
} >"$T/policy.yaml"
# the tunnel measurement needs an opaque route: a second policy file
sed '/^  upstream:/,$d' "$T/policy.yaml" >"$T/policy-tunnel.yaml"
cat >>"$T/policy-tunnel.yaml" <<EOF
  upstream:
    endpoints:
      - host: 127.0.0.1
        port: $UP
    binaries:
      - path: /usr/bin/curl
EOF

"$PROXY_BIN" --policy "$T/policy.yaml" --port 0 --admin-port 0 --port-file "$T/px.port" \
    --data-dir "$T/data" --log "$T/proxy.log" --test-allow-loopback 2>"$T/proxy.err" &
PX_PID=$!
PIDS="$PIDS $PX_PID"
"$PROXY_BIN" --policy "$T/policy-tunnel.yaml" --port 0 --admin-port 0 --port-file "$T/pxt.port" \
    --data-dir "$T/data2" --log "$T/proxy2.log" --test-allow-loopback 2>>"$T/proxy.err" &
PIDS="$PIDS $!"
# the same policy, holders found through /proc (the new-connection comparison)
"$PROXY_BIN" --policy "$T/policy.yaml" --port 0 --admin-port 0 --port-file "$T/pxp.port" \
    --data-dir "$T/data3" --log "$T/proxy3.log" --test-allow-loopback --identity-scan proc \
    2>>"$T/proxy.err" &
PIDS="$PIDS $!"
wait_file "$T/px.port" && wait_file "$T/pxt.port" && wait_file "$T/pxp.port" ||
    { echo "proxy failed"; cat "$T/proxy.err"; exit 1; }
read -r PX _ <"$T/px.port"
read -r PXT _ <"$T/pxt.port"
read -r PXP _ <"$T/pxp.port"
TP=$(free_port c)
cat >"$T/tinyproxy.conf" <<EOF
Port $TP
Listen 127.0.0.1
Timeout 600
MaxClients 2048
Allow 127.0.0.1
ConnectPort $UP
LogLevel Critical
DisableViaHeader No
EOF
tinyproxy -d -c "$T/tinyproxy.conf" >"$T/tinyproxy.log" 2>&1 &
PIDS="$PIDS $!"
sleep 0.5

cat >"$T/proxied.lua" <<EOF
wrk.path = "http://127.0.0.1:$UP/api/items"
EOF
MCP_BODY='{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"create_issue","arguments":{"owner":"o","repo":"r","title":"t","body":"b"}}}'
for f in direct proxied; do
    {
        if [ $f = proxied ]; then echo "wrk.path = \"http://127.0.0.1:$UP/mcp\""; else echo 'wrk.path = "/mcp"'; fi
        echo 'wrk.method = "POST"'
        echo "wrk.body = '$MCP_BODY'"
        echo 'wrk.headers["Content-Type"] = "application/json"'
        echo 'wrk.headers["Accept"] = "application/json, text/event-stream"'
    } >"$T/mcp-$f.lua"
done

rate() { # LABEL ARGS...: prints requests/s
    wrk "$@" >"$T/wrk.out" 2>&1
    awk '/Requests\/sec/ {print $2}' "$T/wrk.out"
}
p50() {
    wrk -t1 -c1 -d"$SECS"s --latency "$@" >"$T/wrk.out" 2>&1
    awk '/^ +50%/ {print $2}' "$T/wrk.out"
}
to_ms() { # 123.45us / 1.2ms / 1s -> ms
    case "$1" in
    *us) awk -v v="${1%us}" 'BEGIN {printf "%.3f", v / 1000}' ;;
    *ms) awk -v v="${1%ms}" 'BEGIN {printf "%.3f", v}' ;;
    *s) awk -v v="${1%s}" 'BEGIN {printf "%.3f", v * 1000}' ;;
    *) echo nan ;;
    esac
}
errors_of() { awk '/Non-2xx|Socket errors/ {print}' "$T/wrk.out" | tr '\n' ' '; }

R_DIRECT=0 R_TINY=0 R_PROV=0 L_DIRECT=0 L_PROV=0 ADDED=0 PCT=100 PER=0 LEAK=0 ERRS=0 CONNS_RC=0
if on keepalive; then
echo "== HTTP keep-alive request rate (wrk -t4 -c64 -d${SECS}s)"
R_DIRECT=$(rate -t4 -c64 -d"$SECS"s "http://127.0.0.1:$UP/api/items")
R_TINY=$(rate -t4 -c64 -d"$SECS"s -s "$T/proxied.lua" "http://127.0.0.1:$TP")
E_TINY=$(errors_of)
R_PROV=$(rate -t4 -c64 -d"$SECS"s -s "$T/proxied.lua" "http://127.0.0.1:$PX")
E_PROV=$(errors_of)
printf '  direct        %10s req/s\n  tinyproxy     %10s req/s  %s\n  proviso-proxy %10s req/s  %s\n' \
    "$R_DIRECT" "$R_TINY" "$E_TINY" "$R_PROV" "$E_PROV"
fi

if on latency; then
echo "== p50 latency, one sequential keep-alive client (wrk -t1 -c1 --latency)"
L_DIRECT=$(to_ms "$(p50 "http://127.0.0.1:$UP/api/items")")
L_TINY=$(to_ms "$(p50 -s "$T/proxied.lua" "http://127.0.0.1:$TP")")
L_PROV=$(to_ms "$(p50 -s "$T/proxied.lua" "http://127.0.0.1:$PX")")
ADDED=$(awk -v a="$L_PROV" -v b="$L_DIRECT" 'BEGIN {printf "%.3f", a - b}')
printf '  direct        %8s ms\n  tinyproxy     %8s ms\n  proviso-proxy %8s ms  (added %s ms per L7 request)\n' \
    "$L_DIRECT" "$L_TINY" "$L_PROV" "$ADDED"
fi

M_DIRECT=0 M_PROV=0 M_ADDED=0
if on mcp; then
echo "== MCP tools/call p50 latency, one sequential keep-alive client (POST /mcp)"
M_DIRECT=$(to_ms "$(p50 -s "$T/mcp-direct.lua" "http://127.0.0.1:$UP")")
M_ERR_D=$(errors_of)
M_PROV=$(to_ms "$(p50 -s "$T/mcp-proxied.lua" "http://127.0.0.1:$PX")")
M_ERR_P=$(errors_of)
M_ADDED=$(awk -v a="$M_PROV" -v b="$M_DIRECT" 'BEGIN {printf "%.3f", a - b}')
printf '  direct        %8s ms  %s\n  proviso-proxy %8s ms  (added %s ms per MCP call)  %s\n' \
    "$M_DIRECT" "$M_ERR_D" "$M_PROV" "$M_ADDED" "$M_ERR_P"
fi

if on bulk; then
echo "== CONNECT tunnel bulk throughput ($BULK bytes, curl -p, best of 3)"
bulk() { # best of three transfers (the machine may be shared)
    local best=0 v
    for _ in 1 2 3; do
        v=$(curl -s -o /dev/null -w '%{speed_download}' "$@" "http://127.0.0.1:$UP/bulk?n=$BULK")
        best=$(awk -v a="$v" -v b="$best" 'BEGIN {print (a > b) ? a : b}')
    done
    echo "$best"
}
B_DIRECT=$(bulk)
B_TINY=$(bulk -p -x "http://127.0.0.1:$TP")
B_PROV=$(bulk -p -x "http://127.0.0.1:$PXT")
mbs() { awk -v v="$1" 'BEGIN {printf "%.0f", v / 1048576}'; }
PCT=$(awk -v a="$B_PROV" -v b="$B_DIRECT" 'BEGIN {printf "%.0f", 100 * a / b}')
printf '  direct        %6s MiB/s\n  tinyproxy     %6s MiB/s\n  proviso-proxy %6s MiB/s  (%s%% of direct)\n' \
    "$(mbs "$B_DIRECT")" "$(mbs "$B_TINY")" "$(mbs "$B_PROV")" "$PCT"
fi

if on idle; then
echo "== $NCONN idle keep-alive connections through proviso-proxy"
"$CONNS_BIN" "$PX" "http://127.0.0.1:$UP/api/items" "$NCONN" "$PX_PID" >"$T/conns.out"
CONNS_RC=$?
sed 's/^/  /' "$T/conns.out"
PER=$(awk '/bytes_per_idle_conn/ {print $2}' "$T/conns.out")
LEAK=$(awk '/fd_leak/ {print $2}' "$T/conns.out")
ERRS=$(awk '/^errors/ {print $2}' "$T/conns.out")
fi

N_DIRECT=0 N_TINY=0 N_PROV=0 N_RATIO=1
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
if on newconn; then
    echo "== new-connection request rate (wrk -t2 -c16 -H 'Connection: close' -d${SECS}s, $ROUNDS rounds)"
    nproc_ns=$(find /proc -maxdepth 1 -name '[0-9]*' | wc -l)
    echo "  processes in the PID namespace: $nproc_ns$([ "${BENCH_IN_PIDNS:-0}" = 1 ] && echo ' (own PID namespace)')"
    echo "  default identity scan: $(grep -o 'socket holders found by [^(]*' "$T/proxy.err" | head -1 |
        sed 's/socket holders found by //')"
    N_DIRECT=$(rate -t2 -c16 -d"$SECS"s -H "Connection: close" "http://127.0.0.1:$UP/api/items")
    : >"$T/ratios"
    : >"$T/ratios.proc"
    for r in $(seq 1 "$ROUNDS"); do
        t=$(rate -t2 -c16 -d"$SECS"s -H "Connection: close" -s "$T/proxied.lua" "http://127.0.0.1:$TP")
        p=$(rate -t2 -c16 -d"$SECS"s -H "Connection: close" -s "$T/proxied.lua" "http://127.0.0.1:$PX")
        E_PROV=$(errors_of)
        q=$(rate -t2 -c16 -d"$SECS"s -H "Connection: close" -s "$T/proxied.lua" "http://127.0.0.1:$PXP")
        printf '  round %s: tinyproxy %10s  proviso-proxy %10s  proviso-proxy (/proc scan) %10s req/s\n' \
            "$r" "$t" "$p" "$q"
        awk -v a="$p" -v b="$t" 'BEGIN {printf "%.3f\n", (b > 0) ? a / b : 0}' >>"$T/ratios"
        awk -v a="$q" -v b="$t" 'BEGIN {printf "%.3f\n", (b > 0) ? a / b : 0}' >>"$T/ratios.proc"
        N_TINY=$t N_PROV=$p
    done
    N_RATIO=$(median <"$T/ratios")
    N_RATIO_PROC=$(median <"$T/ratios.proc")
    printf '  direct        %10s req/s\n  last round errors (proviso-proxy): %s\n' "$N_DIRECT" "$E_PROV"
    printf '  median ratio proviso/tinyproxy %s (/proc scan: %s)\n' "$N_RATIO" "$N_RATIO_PROC"
fi

F_HEALTH=0 F_REQ=0
if on flood; then
    echo "== $NFLOOD stalled connections (half a request head each), then /healthz and a request"
    read -r _ ADM <"$T/px.port"
    "$RAWC_BIN" "$PX" --stall "$NFLOOD" --hold-ms 8000 >"$T/flood.out" &
    FL=$!
    for _ in $(seq 1 200); do
        [ "$(ls /proc/$FL/fd 2>/dev/null | wc -l)" -ge "$NFLOOD" ] && break
        sleep 0.05
    done
    # and until the proxy accepted them (the kernel completes handshakes from
    # the backlog first): everything over the per-address cap (1024) evicted
    for _ in $(seq 1 200); do
        [ "$(grep -c 'too many connections' "$T/proxy.log")" -ge $((NFLOOD - 1024)) ] && break
        sleep 0.05
    done
    best() { # best of five curl time_total, in ms
        local b=999999 v
        for _ in 1 2 3 4 5; do
            v=$(curl -s -o /dev/null --max-time 10 -w '%{time_total}' "$@")
            v=$(awk -v v="$v" 'BEGIN {printf "%.1f", v * 1000}')
            b=$(awk -v a="$v" -v b="$b" 'BEGIN {print (a < b) ? a : b}')
        done
        echo "$b"
    }
    worst() { # worst of five, in ms
        local w=0 v
        for _ in 1 2 3 4 5; do
            v=$(curl -s -o /dev/null --max-time 10 -w '%{time_total}' "$@")
            v=$(awk -v v="$v" 'BEGIN {printf "%.1f", v * 1000}')
            w=$(awk -v a="$v" -v b="$w" 'BEGIN {print (a > b) ? a : b}')
        done
        echo "$w"
    }
    F_HEALTH=$(worst "http://127.0.0.1:$ADM/healthz")
    F_REQ=$(worst -x "http://127.0.0.1:$PX" "http://127.0.0.1:$UP/api/items")
    F_HB=$(best "http://127.0.0.1:$ADM/healthz")
    F_RB=$(best -x "http://127.0.0.1:$PX" "http://127.0.0.1:$UP/api/items")
    printf '  /healthz          worst %8s ms  best %8s ms (of 5)\n  allowed request   worst %8s ms  best %8s ms (of 5)\n' \
        "$F_HEALTH" "$F_HB" "$F_REQ" "$F_RB"
    wait $FL
    sed 's/^/  flood: /' "$T/flood.out"
fi

echo "== goals"
ok=0
goal() { # TEXT CONDITION
    if awk "BEGIN {exit !($2)}"; then echo "  PASS  $1"; else echo "  MISS  $1"; ok=1; fi
}
on newconn && goal "new-connection rate >= 1.0x tinyproxy (median of $ROUNDS rounds: ${N_RATIO}x)" \
    "$N_RATIO >= 1.0"
on mcp && goal "added p50 per MCP tools/call <= 0.05 ms ($M_ADDED ms; REST: $ADDED ms)" \
    "$M_ADDED <= 0.05"
on flood && goal "with $NFLOOD stalled connections /healthz and a request within 100 ms ($F_HEALTH, $F_REQ ms)" \
    "$F_HEALTH <= 100 && $F_REQ <= 100"
on keepalive || exit $ok
goal "keep-alive rate >= tinyproxy ($R_PROV vs $R_TINY req/s)" "$R_PROV >= $R_TINY"
goal "tunnel throughput >= 90% of direct ($PCT%)" "$PCT >= 90"
goal "added p50 per L7 request <= 0.2 ms ($ADDED ms)" "$ADDED <= 0.2"
goal "memory per idle connection <= 16 KiB ($PER bytes)" "$PER <= 16384"
goal "$NCONN connections without errors or fd leaks (errors $ERRS, leak $LEAK)" \
    "$ERRS == 0 && $LEAK <= 0 && $CONNS_RC == 0"
exit $ok
