#!/bin/sh
# server_fail_alloc.sh - allocation failure in the prover service.
#
# proviso-prover is started with PV_FAIL_ALLOC=N (the Nth checked
# allocation of the process fails, common/pv_error.c) and asked one
# /v1/prove whose right answer is a finding. N runs over the first FULL
# allocations, then SAMPLES points spread to the last allocation a start,
# that request and a stop make (counted by an uninjected run with
# PV_ALLOC_COUNT=1), and then over the request's own share (from the
# count of a start and a stop alone, less MARGIN, to the total):
# REQ_SAMPLES points spread over it. `make check` takes 20, 15 and 60;
# PV_SWEEP=asan (`make check-asan`) half of make check's;
# PV_SWEEP=full (`make check-sweeps`) takes 60, 40 and every allocation
# of the request's share in turn (PV_FAIL_REQ_SAMPLES=0). Every run must end
# one of these ways, judged by what curl received and how the process ended:
#  - the server refuses to start: an exit below 128 that says "out of
#    memory" (or "Cannot allocate memory") in its log;
#  - the request fails cleanly: a 5xx JSON error (or, when not even an
#    error reply could be built, a closed connection while the server
#    lives on), or the prover's 200
#    "verdict": "unknown" with "reason_code": "memory" (never a 4xx that
#    blames the request, never a 200 with another verdict), and the server
#    then serves the request again correctly;
#  - the failure is tolerated: the very answer of the uninjected run.
# In every case the server never dies by a signal (a crash, or a
# sanitizer's abort) and, when it started, stops on SIGTERM with status 0.
. "$(dirname "$0")/server_lib.sh"

if [ "${PV_SWEEP:-}" = full ]; then
    FULL=${PV_FAIL_FULL:-60}
    SAMPLES=${PV_FAIL_SAMPLES:-40}
    REQ_SAMPLES=${PV_FAIL_REQ_SAMPLES:-0}
elif [ "${PV_SWEEP:-}" = asan ]; then
    FULL=${PV_FAIL_FULL:-10}
    SAMPLES=${PV_FAIL_SAMPLES:-8}
    REQ_SAMPLES=${PV_FAIL_REQ_SAMPLES:-30}
else
    FULL=${PV_FAIL_FULL:-20}
    SAMPLES=${PV_FAIL_SAMPLES:-15}
    REQ_SAMPLES=${PV_FAIL_REQ_SAMPLES:-60}
fi
MARGIN=${PV_FAIL_MARGIN:-20}
write_policies
make_token "$WORK/token"

# mask: the answer without its timings
mask() {
    sed 's/"[a-z_]*_ms":[0-9.]*//g; s/[0-9][0-9.]* ms/T ms/g' "$WORK/body"
}

# attempt N: one run; sets OUTCOME to started-fail, clean, tolerated,
# wrong, crash or stuck, with DETAIL.
attempt() {
    k=$1
    DETAIL=
    if [ "$k" -eq 0 ]; then
        start_server --token-file "$WORK/token" >/dev/null 2>&1
    else
        PV_FAIL_ALLOC=$k start_server --token-file "$WORK/token" >/dev/null 2>&1
    fi
    if [ -z "$SRV_PID" ] || [ -z "$PORT" ]; then
        # it exited before listening: its status from the log's process
        wait 2>/dev/null
        if grep -q -e "out of memory" -e "Cannot allocate memory" "$LOG"; then
            OUTCOME=start-fail
        else
            OUTCOME=silent-start
            DETAIL=$(tail -n 3 "$LOG" | tr '\n' '|')
        fi
        SRV_PID=
        return
    fi
    post /v1/prove "$WORK/prove.json"
    mask >"$WORK/answer.$k"
    first=$STATUS
    if [ "$first" = 200 ] && cmp -s "$WORK/answer.$k" "$WORK/answer.0"; then
        OUTCOME=tolerated
    elif [ "$first" = 200 ] && grep -q '"verdict":"unknown"' "$WORK/body" &&
        grep -q '"reason_code":"memory"' "$WORK/body"; then
        # the prover's own word for it: no verdict, because of memory
        OUTCOME=clean
    elif [ "$first" = 000 ] && ! kill -0 "$SRV_PID" 2>/dev/null; then
        OUTCOME=crash
        DETAIL="no answer, and the server is gone"
    elif { [ "$first" = 000 ] || [ "$first" -ge 500 ] 2>/dev/null; } &&
        { [ "$first" = 000 ] || printf '%s' "$BODY" | grep -q '"error":'; }; then
        # a 5xx error, or (not even an error reply could be built: the
        # connection's first allocations) a closed connection while the
        # server lives on
        OUTCOME=clean
        # the failure passed: the next request gets the right answer
        post /v1/prove "$WORK/prove.json"
        mask >"$WORK/again.$k"
        if [ "$STATUS" != 200 ] || ! cmp -s "$WORK/again.$k" "$WORK/answer.0"; then
            OUTCOME=wrong
            DETAIL="after a $first, the next request got $STATUS"
        fi
    else
        OUTCOME=wrong
        DETAIL="status $first: $(head -c 200 "$WORK/body")"
    fi
    kill -TERM "$SRV_PID" 2>/dev/null
    wait "$SRV_PID"
    rc=$?
    SRV_PID=
    if [ "$rc" -ge 128 ]; then
        OUTCOME=crash
        DETAIL="exit $rc; $(tail -n 3 "$LOG" | tr '\n' '|')"
    elif [ "$rc" -ne 0 ] && [ "$OUTCOME" != crash ]; then
        OUTCOME=bad-exit
        DETAIL="SIGTERM ended it with $rc; $(tail -n 2 "$LOG" | tr '\n' '|')"
    fi
    rm -f "$WORK/answer.$k" "$WORK/again.$k"
}

# The uninjected answer is a finding.
attempt 0
[ -f "$WORK/answer.0" ] || mask >"$WORK/answer.0"
check "the uninjected run answers 200 with a finding" \
    grep -q '"verdict":"findings"' "$WORK/answer.0"
post_ok=$OUTCOME

# The number of allocations of a start, one request and a stop, counted
# by an uninjected run (PV_ALLOC_COUNT=1 prints it at exit).
# The count is printed at exit; a stop that ends without cleanup (a worker
# still busy past every bound, under a loaded machine) prints none: count
# again then, up to three runs.
total=0
for _ in 1 2 3; do
    PV_ALLOC_COUNT=1 start_server --token-file "$WORK/token" >/dev/null 2>&1
    post /v1/prove "$WORK/prove.json"
    stop_server
    total=$(sed -n 's/.*pv_alloc: \([0-9]*\) allocations$/\1/p' "$LOG" | head -n 1)
    total=${total:-0}
    [ "$total" -gt 0 ] && break
    echo "note: no allocation count at exit: $(tail -n 2 "$LOG" | tr '\n' '|')"
done
check "a start, a request and a stop allocate ($total allocations)" [ "$total" -gt 0 ]
# ... and of a start and a stop alone: the request's share gets its own
# REQ_SAMPLES points (start-up, the embedded registry, dominates the count)
PV_ALLOC_COUNT=1 start_server --token-file "$WORK/token" >/dev/null 2>&1
stop_server
idle=$(sed -n 's/.*pv_alloc: \([0-9]*\) allocations$/\1/p' "$LOG" | head -n 1)
idle=${idle:-0}
check "the request allocates ($((total - idle)) of them)" [ "$idle" -gt 0 ] && [ "$total" -gt "$idle" ]

points=$(awk -v full="$FULL" -v total="$total" -v samples="$SAMPLES" -v idle="$idle" \
    -v rs="$REQ_SAMPLES" -v margin="$MARGIN" 'BEGIN {
    for (i = 1; i <= full && i <= total; i++) print i
    if (total > full)
        for (j = 1; j <= samples; j++) print full + int((total - full) * j / samples)
    if (total > idle && rs > 0)
        for (j = 1; j <= rs; j++) print idle + int((total - idle) * j / rs)
    if (total > idle && rs == 0)
        for (k = (idle > margin ? idle - margin : 1); k <= total; k++) print k
}' | sort -un)
crash=0 wrong=0 silent=0 badexit=0 startfail=0 clean=0 tolerated=0
for k in $points; do
    attempt "$k"
    case $OUTCOME in
    start-fail) startfail=$((startfail + 1)) ;;
    clean) clean=$((clean + 1)) ;;
    tolerated) tolerated=$((tolerated + 1)) ;;
    crash) crash=$((crash + 1)); [ $crash -le 3 ] && echo "     N=$k: $DETAIL" ;;
    wrong) wrong=$((wrong + 1)); [ $wrong -le 3 ] && echo "     N=$k: $DETAIL" ;;
    silent-start) silent=$((silent + 1)); [ $silent -le 3 ] && echo "     N=$k: did not start, without a word of memory: $DETAIL" ;;
    bad-exit) badexit=$((badexit + 1)); [ $badexit -le 3 ] && echo "     N=$k: $DETAIL" ;;
    esac
done
echo "     $(echo "$points" | wc -l) runs: $startfail refused to start, $clean requests failed cleanly, $tolerated tolerated"
check "no crash or sanitizer abort" [ "$crash" -eq 0 ]
check "never another answer" [ "$wrong" -eq 0 ]
check "a refused start says out of memory" [ "$silent" -eq 0 ]
check "SIGTERM stops every started server with 0" [ "$badexit" -eq 0 ]
check "the injection reached start-up" [ "$startfail" -gt 0 ]
check "the injection reached the request" [ "$clean" -gt 0 ]
finish
