#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench_loop.sh - the whole advisor loop on 127.0.0.1, timed per phase
#
#   tests/bench/bench_loop.sh [iterations]   (from the build directory)
#
# Starts the logging upstream, proviso-advisor (with its own prover child,
# --test-allow-loopback, auto mode for the sandbox) and proviso-proxy in
# advisor mode, then runs bench_loop.py: per iteration a denied request, the
# agent's proposal to policy.local, /wait until this proxy loaded the
# approval, and the retried request. Prints p50/p99 per phase against one
# allowed request through the same proxy; exits 1 when the goal (p50 <= 100
# ms, p99 <= 250 ms) is missed. Run by hand, never by make check.
set -u
N=${1:-200}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${PV_BUILDDIR:-$(pwd)}
ADV=$BUILD/proviso-advisor
PROXY=${PV_PROXY_BIN:-$BUILD/proviso-proxy}
UPSTREAM=$BUILD/tests/e2e/proxy_upstream
PY=$(command -v python3) || { echo "needs python3"; exit 2; }
for b in "$ADV" "$PROXY" "$UPSTREAM"; do
    [ -x "$b" ] || { echo "build first: $b"; exit 2; }
done
T=$(mktemp -d /tmp/pv-bench-loop.XXXXXX)
PIDS=
. "$SRC/tests/pid_lib.sh"
# shellcheck disable=SC2086
trap 'kill_own TERM $PIDS; wait 2>/dev/null; rm -rf "$T"' EXIT
wait_for() { i=0; while [ ! -s "$1" ] && [ $i -lt 300 ]; do sleep 0.02; i=$((i + 1)); done; [ -s "$1" ]; }

"$UPSTREAM" --port-file "$T/up.port" 2>"$T/up.err" &
PIDS="$PIDS $!"
wait_for "$T/up.port" || { echo "upstream did not start"; exit 2; }
read -r UP _ <"$T/up.port"

head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$T/admin"
# The mapper would generalise the denied /item/N into /item/* on its own
# (and auto mode approve it): this bench times the agent's path only.
printf 'mapper_flush_interval_ms: 3600000\n' >"$T/adv.yaml"
"$ADV" --data-dir "$T/adv" --port 0 --token-file "$T/admin" --test-allow-loopback \
    --config "$T/adv.yaml" >"$T/adv.log" 2>&1 &
PIDS="$PIDS $!"
i=0
while ! grep -q 'listening on 127.0.0.1 port' "$T/adv.log" && [ $i -lt 300 ]; do
    sleep 0.05; i=$((i + 1))
done
AP=$(sed -n 's/.*listening on 127.0.0.1 port \([0-9]*\).*/\1/p' "$T/adv.log" | head -n 1)
[ -n "$AP" ] || { echo "advisor did not start"; cat "$T/adv.log"; exit 2; }
A="http://127.0.0.1:$AP"
H="Authorization: Bearer $(cat "$T/admin")"
PYEXE=$("$PY" -c 'import os,sys; print(os.path.realpath(sys.executable))')
cat >"$T/base.yaml" <<YAML
version: 1
network_policies:
  api:
    endpoints:
      - host: 127.0.0.1
        port: $UP
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /allowed}
    binaries:
      - path: $PYEXE
YAML
jq -n --rawfile p "$T/base.yaml" '{name:"bench",policy:$p}' |
    curl -sf -H "$H" -H 'Content-Type: application/json' -d @- "$A/v1/sandboxes" |
    jq -r .token >"$T/bench.token" || { echo "sandbox create failed"; exit 2; }
curl -sf -X PUT -H "$H" -H "Content-Type: application/json" -d '{"value":true}' "$A/v1/settings/agent_policy_proposals_enabled" >/dev/null &&
    curl -sf -X PUT -H "$H" -H "Content-Type: application/json" -d '{"value":"auto"}' \
        "$A/v1/sandboxes/bench/settings/proposal_approval_mode" >/dev/null ||
    { echo "settings failed"; exit 2; }

"$PROXY" --advisor "$A" --sandbox bench --token-file "$T/bench.token" --skill-dir "$T/skills" \
    --port 0 --admin-port 0 --port-file "$T/px.port" --data-dir "$T/px" --log "$T/px.log" \
    --test-allow-loopback 2>"$T/px.err" &
PIDS="$PIDS $!"
wait_for "$T/px.port" || { echo "proxy did not start"; cat "$T/px.err"; exit 2; }
read -r PX _ <"$T/px.port"
i=0
while ! grep -q 'CONFIG:LOADED' "$T/adv.log" && [ $i -lt 300 ]; do sleep 0.02; i=$((i + 1)); done

echo "proviso-advisor + prover + proviso-proxy on 127.0.0.1 ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
"$PY" "$SRC/tests/bench/bench_loop.py" "$PX" "$UP" "$N"
