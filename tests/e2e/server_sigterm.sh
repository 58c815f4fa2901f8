#!/bin/sh
# server_sigterm.sh - proviso-prover end to end: SIGTERM drains in-flight requests and exits 0
. "$(dirname "$0")/server_lib.sh"

write_policies
make_token "$WORK/token"

# slow_upload NAME: start a POST /v1/prove whose body arrives through a FIFO
# (descriptor 3 stays open for the caller to finish it). Sets SLOW.
slow_upload() {
    rm -f "$WORK/fifo"
    mkfifo "$WORK/fifo"
    curl -s -o "$WORK/$1.out" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
        -H 'Content-Type: application/json' -T "$WORK/fifo" "$URL/v1/prove" \
        >"$WORK/$1.code" 2>/dev/null &
    SLOW=$!
    exec 3>"$WORK/fifo"
    printf '{"baseline": %s, ' "$(cat "$WORK/baseline.json")" >&3
    sleep 0.3
}

# --- a request in flight when SIGTERM arrives completes; then exit 0 ----------------
printf 'timeout_ms: 60000\nmax_timeout_ms: 60000\n' >"$WORK/slowbox.yaml"
start_server --token-file "$WORK/token" --config "$WORK/slowbox.yaml" || exit 1
slow_upload inflight
kill -TERM "$SRV_PID"
i=0
while [ $i -lt 100 ]; do
    code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/healthz")
    [ "$code" = 000 ] && break
    sleep 0.02
    i=$((i + 1))
done
check "after SIGTERM new connections are refused" [ "$code" = 000 ]
check "the server is still running while a request is in flight" kill -0 "$SRV_PID"
printf '"candidate": %s, "credentials": %s}' "$(cat "$WORK/candidate.json")" \
    "$(cat "$WORK/creds.json")" >&3
exec 3>&-
wait $SLOW
check "the in-flight request completed with 200" [ "$(cat "$WORK/inflight.code")" = 200 ]
check "... with its full answer" grep -q '"verdict":"findings"' "$WORK/inflight.out"
wait "$SRV_PID"
rc=$?
SRV_PID=
check "the server exited 0 after draining (rc $rc)" [ $rc -eq 0 ]
check "the drain is logged" grep -q 'draining' "$LOG"
check "the in-flight request was logged" \
    grep -q 'access: POST /v1/prove 200 verdict:findings ' "$LOG"

# --- the grace period bounds the drain ---------------------------------------------
printf 'grace_ms: 300\n' >"$WORK/grace.yaml"
start_server --token-file "$WORK/token" --config "$WORK/grace.yaml" || exit 1
slow_upload stalled
t0=$(date +%s%N)
kill -TERM "$SRV_PID"
wait "$SRV_PID"
rc=$?
SRV_PID=
t1=$(date +%s%N)
exec 3>&-
wait $SLOW
ms=$(((t1 - t0) / 1000000))
check "a stalled client cannot hold the exit past the grace period (${ms} ms)" [ "$ms" -lt 3000 ]
check "... and the exit status is still 0 (rc $rc)" [ $rc -eq 0 ]
check "the cut request is logged as aborted" grep -Eq ' access: [^ ]+ [^ ]+ [0-9]+ verdict:[a-z_]+ [0-9.]+ ms aborted$' "$LOG"

# --- SIGINT behaves like SIGTERM ------------------------------------------------------
start_server --token-file "$WORK/token" || exit 1
kill -INT "$SRV_PID"
wait "$SRV_PID"
rc=$?
SRV_PID=
check "SIGINT exits 0 (rc $rc)" [ $rc -eq 0 ]
finish
