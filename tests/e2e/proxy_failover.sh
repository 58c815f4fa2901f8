#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# proxy_failover.sh - proviso-proxy --advisor URL repeated: the policy sync
# follows whichever replica of the gateway answers (docs/proxy.md#failover).
#
# Real processes on loopback: a throwaway PostgreSQL cluster on a Unix
# socket (tests/pg_lib.sh), two proviso-advisor replicas A and B on it
# (one audit key, their own data directories and ports), the logging
# upstream, and two proxies: P1 with --advisor A --advisor B, P2 with B
# only. Judged by what the upstream received:
#
#   (a) both proxies load revision 1; GET /old passes, GET /new is denied;
#   (b) kill -9 of A, the replica P1 uses: P1 keeps enforcing revision 1
#       (GET /old reaches the upstream, GET /new does not), and a proposal
#       sent through P1's policy.local reaches B;
#   (c) B approves it (revision 2): P1 enforces it within 2 s of the
#       approval (the upstream gets GET /new) and reports it loaded to B;
#   (d) a single advisor's restart: B is killed, revision 3 is made on the
#       restarted A meanwhile, P2 (B only) keeps revision 2 until B listens
#       again on its port and loads revision 3 within 2 s of that; P1 moved
#       back to A and enforces revision 3 too;
#   (e) bad --advisor lists are refused at start;
#   (f) a hung replica (SIGSTOP, connections left open): P1's health probe
#       ends the long-poll on it and P1 enforces a revision made through the
#       other within 2 s of the hang.
. "$(dirname "$0")/proxy_lib.sh"
. "$(dirname "$0")/advisor_proxy_lib.sh"
. "$SRC/tests/pg_lib.sh"

if ! pg_have; then
    echo "SKIP: the PostgreSQL server is not installed (/usr/lib/postgresql/*/bin/initdb)"
    exit 77
fi
trap 'cleanup; pg_stop' EXIT
trap 'exit 1' HUP INT PIPE TERM

# ---------------------------------------------------------------------------
# (e) start-up errors first: nothing to set up
# ---------------------------------------------------------------------------

printf 'x\n' >"$T/tok"
"$PROXY_BIN" --advisor http://127.0.0.1:1 --advisor ftp://127.0.0.1:2 --sandbox s \
    --token-file "$T/tok" --data-dir "$T/e1" >"$T/e1.log" 2>&1
expect_eq "(e) a second URL that is not http(s): exit 2" 2 "$?"
expect_has "(e) the bad URL is named" "--advisor ftp://127.0.0.1:2: an http:// or https://" \
    "$(cat "$T/e1.log")"
"$PROXY_BIN" --advisor http://127.0.0.1:1 --advisor http://127.0.0.1:1 --sandbox s \
    --token-file "$T/tok" --data-dir "$T/e2" >"$T/e2.log" 2>&1
expect_eq "(e) the same URL twice: exit 2" 2 "$?"
expect_has "(e) named" "--advisor http://127.0.0.1:1 given twice" "$(cat "$T/e2.log")"
set --
for i in 1 2 3 4 5 6 7 8 9; do set -- "$@" --advisor "http://127.0.0.1:$i"; done
"$PROXY_BIN" "$@" --sandbox s --token-file "$T/tok" --data-dir "$T/e3" >"$T/e3.log" 2>&1
expect_eq "(e) nine URLs: exit 2" 2 "$?"
expect_has "(e) the limit is named" "at most 8 URLs" "$(cat "$T/e3.log")"

pg_start "$BUILD/tests" || { echo "cannot start a PostgreSQL cluster"; exit 1; }

# ---------------------------------------------------------------------------
# two replicas on one database, two proxies
# ---------------------------------------------------------------------------

start_upstream_base /old
# 64 workers each would pass PostgreSQL's 100 connections with two replicas
printf 'mapper_flush_interval_ms: 3600000\nworkers: 16\n' >"$T/quiet.yaml"

start_advisor A --config "$T/quiet.yaml" --store "$PG_URL"
sandbox A one "$T/base.yaml"
out=$(adm A PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}')
expect_eq "proposals on" 200 "$(code "$out")"
# B signs the one audit chain with A's key (its own data directory). It
# starts after the sandbox and the setting exist: a replica does not yet
# learn of another's new sandboxes and settings while it runs (the
# caches of the advisor, not the proxy's concern here).
mkdir -m 700 "$T/B.d"
cp -p "$T/A.d/audit.key" "$T/B.d/audit.key"
start_advisor B --config "$T/quiet.yaml" --store "$PG_URL"
out=$(adm B GET /v1/sandboxes/one/policy)
expect_eq "B serves the sandbox A created" "200 1" "$(code "$out") $(jget "$out" .revision)"

# start_fproxy NAME URL...: a proxy in advisor mode on these advisors
start_fproxy() {
    n=$1
    shift
    set -- "$n" "$@"
    args=()
    for u in "${@:2}"; do args+=(--advisor "$u"); done
    rm -f "$T/$n.port"
    "$PROXY_BIN" "${args[@]}" --sandbox one --token-file "$T/one.token" --skill-dir "$T/$n.skills" \
        --port 0 --admin-port 0 --port-file "$T/$n.port" --data-dir "$T/$n.data" \
        --log "$T/$n.log" --test-allow-loopback 2>>"$T/$n.err" &
    PIDS="$PIDS $!"
    wait_file "$T/$n.port" || { echo "proxy $n did not start"; cat "$T/$n.err"; exit 1; }
    read -r p _ <"$T/$n.port"
    eval "${n}_PX=$p"
}
start_fproxy P1 "http://127.0.0.1:$A_PORT" "http://127.0.0.1:$B_PORT/"
start_fproxy P2 "http://127.0.0.1:$B_PORT"
wait_log "$T/P1.log" "advisor revision 1 loaded" || fail "(a) P1 never loaded revision 1"
wait_log "$T/P2.log" "advisor revision 1 loaded" || fail "(a) P2 never loaded revision 1"
expect_has "(a) P1 names its replicas" "advisor replica 2: http://127.0.0.1:$B_PORT" "$(cat "$T/P1.log")"

# get PROXY PATH: the status of GET http://127.0.0.1:UP/PATH through PROXY
get() { code "$(via "$1" "http://127.0.0.1:$UP$2")"; }
# upstream_count PATH: requests for PATH the upstream received
upstream_count() { grep -cxF -- "GET $1" "$T/up.log" 2>/dev/null; }

expect_eq "(a) GET /old passes" 200 "$(get P1 /old)"
expect_eq "(a) GET /new is denied" 403 "$(get P1 /new)"
expect_eq "(a) the upstream got /old, not /new" "1 0" "$(upstream_count /old) $(upstream_count /new)"

# ---------------------------------------------------------------------------
# (b) kill -9 of the replica P1 uses
# ---------------------------------------------------------------------------

kill -KILL "$A_PID"
wait "$A_PID" 2>/dev/null
expect_eq "(b) after the kill: GET /old still passes" 200 "$(get P1 /old)"
expect_eq "(b) after the kill: GET /new still denied" 403 "$(get P1 /new)"
out=$(via P1 -d "$(rule new_read 127.0.0.1 "$UP" GET /new)" http://policy.local/v1/proposals)
expect_eq "(b) a proposal through policy.local reaches B" 202 "$(code "$out")"
ID=$(jget "$out" '.accepted_chunk_ids[0]')
expect_has "(b) B took the proposal" "POST /v1/sandboxes/*/proposals 202" "$(cat "$T/B.log")"
wait_log "$T/P1.log" "advisor http://127.0.0.1:$B_PORT answers (http://127.0.0.1:$A_PORT did not)" ||
    fail "(b) P1 never said it moved to B"
for i in 1 2 3; do
    expect_eq "(b) old revision in between: GET /new denied ($i)" 403 "$(get P1 /new)"
    expect_eq "(b) old revision in between: GET /old passes ($i)" 200 "$(get P1 /old)"
done
expect_eq "(b) the upstream never got /new" 0 "$(upstream_count /new)"
# one decision line per outcome: the five denials of /new so far
expect_eq "(b) P1 logged each denial of /new once" 5 \
    "$(grep -c "DENIED.*/new" "$T/P1.log")"

# ---------------------------------------------------------------------------
# (c) B approves: P1 enforces revision 2 within 2 s
# ---------------------------------------------------------------------------

out=$(adm B GET "/v1/sandboxes/one/proposals/$ID")
TOKEN=$(jget "$out" .review_token)
t0=$(date +%s%N)
out=$(adm B POST "/v1/sandboxes/one/proposals/$ID/approve" "{\"review_token\":\"$TOKEN\"}")
expect_eq "(c) B approves" 200 "$(code "$out")"
t_ok=
while [ $(($(date +%s%N) - t0)) -lt 5000000000 ]; do
    if [ "$(get P1 /new)" = 200 ]; then
        t_ok=$(date +%s%N)
        break
    fi
    sleep 0.05
done
if [ -n "$t_ok" ]; then
    ms=$(((t_ok - t0) / 1000000))
    echo "# failover: approval through B -> P1 enforces it: $ms ms"
    if [ "$ms" -le 2000 ]; then pass; else fail "(c) P1 enforced revision 2 after $ms ms (> 2 s)"; fi
else
    fail "(c) P1 never let GET /new through after B's approval"
fi
expect_eq "(c) the upstream got GET /new once" 1 "$(upstream_count /new)"
wait_log "$T/P1.log" "advisor recorded revision 2 as loaded" || fail "(c) P1's loaded report"
expect_has "(c) B recorded P1's loaded report" "POST /v1/sandboxes/*/loaded 200" "$(cat "$T/B.log")"
out=$(adm B GET /v1/sandboxes/one)
expect_eq "(c) the sandbox's loaded revision" 2 "$(jget "$out" .loaded_revision)"
wait_log "$T/P2.log" "advisor revision 2 loaded" || fail "(c) P2 never loaded revision 2"

# ---------------------------------------------------------------------------
# (d) a single advisor's restart, with a revision made while it was down
# ---------------------------------------------------------------------------

A_OLD=$A_PORT
"$ADVISOR_BIN" --data-dir "$T/A.d" --port "$A_OLD" --token-file "$T/A.admin" --test-allow-loopback \
    --config "$T/quiet.yaml" --store "$PG_URL" >"$T/A2.log" 2>&1 &
A_PID=$!
PIDS="$PIDS $A_PID"
wait_log "$T/A2.log" "listening on 127.0.0.1 port $A_OLD" 500 || fail "(d) A did not restart"
kill -KILL "$B_PID"
wait "$B_PID" 2>/dev/null
sed 's#path: /old}#path: /old}\n          - allow: {method: GET, path: /third}#' "$T/base.yaml" >"$T/r3.yaml"
out=$(adm A PUT /v1/sandboxes/one/policy "$("$JQ" -n --rawfile p "$T/r3.yaml" '{policy:$p}')")
expect_eq "(d) revision 3 through the restarted A" 200 "$(code "$out")"
expect_eq "(d) P2 (B down) keeps revision 2: /third denied" 403 "$(get P2 /third)"
expect_eq "(d) P2 keeps revision 2: /new passes" 200 "$(get P2 /new)"
sleep 1
expect_eq "(d) P2 still on revision 2 a second later" 403 "$(get P2 /third)"
expect_eq "(d) the upstream never got /third" 0 "$(upstream_count /third)"

"$ADVISOR_BIN" --data-dir "$T/B.d" --port "$B_PORT" --token-file "$T/B.admin" --test-allow-loopback \
    --config "$T/quiet.yaml" --store "$PG_URL" >"$T/B2.log" 2>&1 &
B_PID=$!
PIDS="$PIDS $B_PID"
wait_log "$T/B2.log" "listening on 127.0.0.1 port $B_PORT" 500 || fail "(d) B did not restart"
t0=$(date +%s%N)
t_ok=
while [ $(($(date +%s%N) - t0)) -lt 5000000000 ]; do
    if [ "$(get P2 /third)" = 200 ]; then
        t_ok=$(date +%s%N)
        break
    fi
    sleep 0.05
done
if [ -n "$t_ok" ]; then
    ms=$(((t_ok - t0) / 1000000))
    echo "# restart: B listening again -> P2 enforces revision 3: $ms ms"
    if [ "$ms" -le 2000 ]; then pass; else fail "(d) P2 resynced $ms ms after B listened (> 2 s)"; fi
else
    fail "(d) P2 never loaded revision 3 from the restarted B"
fi
expect_eq "(d) the upstream got /third through P2" 1 "$(upstream_count /third)"
wait_log "$T/P1.log" "advisor revision 3 loaded" || fail "(d) P1 never loaded revision 3"
expect_eq "(d) P1 enforces revision 3 (from A)" 200 "$(get P1 /third)"
expect_eq "(d) the upstream got /third through P1" 2 "$(upstream_count /third)"
expect_eq "(d) /other is still denied" 403 "$(get P1 /other)"
expect_eq "(d) the upstream never got /other" 0 "$(upstream_count /other)"

# ---------------------------------------------------------------------------
# (f) a replica that hangs with its connections open (SIGSTOP): the health
#     probe ends P1's long-poll on it and P1 resyncs through the other
# ---------------------------------------------------------------------------

wait_log "$T/P1.log" "advisor http://127.0.0.1:$A_OLD answers (http://127.0.0.1:$B_PORT did not)" ||
    fail "(f) P1 was not on A"
sleep 0.5 # P1's long-poll on A is in flight
kill -STOP "$A_PID"
t0=$(date +%s%N)
expect_eq "(f) A hangs: P1 keeps revision 3 (/fourth denied)" 403 "$(get P1 /fourth)"
sed 's#path: /old}#path: /old}\n          - allow: {method: GET, path: /fourth}#' "$T/base.yaml" >"$T/r4.yaml"
out=$(adm B PUT /v1/sandboxes/one/policy "$("$JQ" -n --rawfile p "$T/r4.yaml" '{policy:$p}')")
expect_eq "(f) revision 4 through B" 200 "$(code "$out")"
t_ok=
while [ $(($(date +%s%N) - t0)) -lt 6000000000 ]; do
    if [ "$(get P1 /fourth)" = 200 ]; then
        t_ok=$(date +%s%N)
        break
    fi
    sleep 0.05
done
kill -CONT "$A_PID"
if [ -n "$t_ok" ]; then
    ms=$(((t_ok - t0) / 1000000))
    echo "# hang: A stopped -> P1 enforces revision 4 through B: $ms ms"
    if [ "$ms" -le 2000 ]; then pass; else fail "(f) P1 resynced $ms ms after A hung (> 2 s)"; fi
else
    fail "(f) P1 never loaded revision 4 while A hung"
fi
expect_has "(f) the probe named A" "advisor http://127.0.0.1:$A_OLD did not answer its health check" \
    "$(cat "$T/P1.log")"
expect_eq "(f) the upstream got /fourth once" 1 "$(upstream_count /fourth)"
finish
