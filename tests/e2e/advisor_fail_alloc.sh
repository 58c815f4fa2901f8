#!/bin/sh
# advisor_fail_alloc.sh - allocation failure in the advisor.
#
# proviso-advisor is started on a fresh data directory with
# PV_FAIL_ALLOC=N (the Nth checked allocation of the process fails,
# common/pv_error.c; an uninjected proviso-prover serves its proofs, so the
# count is the advisor's alone) and asked to create one sandbox, whose
# right answer is 201 with the sandbox stored. N runs over the first FULL
# allocations and SAMPLES points spread to the last allocation a start,
# that request and a stop make (counted by an uninjected run with
# PV_ALLOC_COUNT=1): 12 and 20 in `make check`, 30 and 40 with
# PV_SWEEP=full (`make check-sweeps`), half with PV_SWEEP=asan (`make check-asan`). Every run must end one of these ways:
#  - the advisor refuses to start: an exit below 128 whose log says "out
#    of memory" (or "Cannot allocate memory");
#  - the request fails cleanly: a 5xx JSON error (never a 4xx that blames
#    the request), or, when not even an error reply could be built, a
#    closed connection while the advisor lives on;
#  - the failure is tolerated: 201, as without injection.
# Whatever happened, the advisor never dies by a signal, SIGTERM stops it
# with 0, and an uninjected advisor then starts on the same directory (its
# store agrees with its audit chain, which it checks at start) and lists
# the sandbox exactly when the injected one answered 201.
. "$(dirname "$0")/advisor_lib.sh"

if [ "${PV_SWEEP:-}" = full ]; then
    FULL=${PV_FAIL_FULL:-30}
    SAMPLES=${PV_FAIL_SAMPLES:-40}
elif [ "${PV_SWEEP:-}" = asan ]; then
    FULL=${PV_FAIL_FULL:-6}
    SAMPLES=${PV_FAIL_SAMPLES:-10}
else
    FULL=${PV_FAIL_FULL:-12}
    SAMPLES=${PV_FAIL_SAMPLES:-20}
fi
POLICY='version: 1
network_policies:
  github_ro:
    name: github_ro
    endpoints:
      - host: api.github.com
        port: 443
        protocol: rest
        enforcement: enforce
        access: read-only
    binaries:
      - path: /usr/bin/curl
'
BODY_CREATE=$(jq -cn --arg p "$POLICY" '{name: "sb1", policy: $p}')

# One uninjected prover for every run.
PIDS=
# shellcheck disable=SC2086
trap 'kill_own KILL $PIDS; adv_cleanup' EXIT INT TERM
start_prover prover
PROVER_URL=http://127.0.0.1:$P_PORT

# attempt N: one run on a fresh directory; sets OUTCOME and DETAIL.
attempt() {
    k=$1
    dir=$WORK/d.$k
    rm -rf "$dir"
    mkdir -p "$dir"
    DETAIL=
    if [ "$k" -eq 0 ]; then
        start_advisor "$dir" --prover "$PROVER_URL" --prover-token-file "$ADMIN_FILE" >/dev/null 2>&1
        unset PV_ALLOC_COUNT
    else
        PV_FAIL_ALLOC=$k start_advisor "$dir" --prover "$PROVER_URL" \
            --prover-token-file "$ADMIN_FILE" >/dev/null 2>&1
    fi
    if [ -z "$ADV_PID" ]; then
        : # start_advisor has reaped it (no bare wait: the prover is our child too)
        if grep -q -e "out of memory" -e "Cannot allocate memory" "$ADV_LOG"; then
            OUTCOME=start-fail
        else
            OUTCOME=silent-start
            DETAIL=$(tail -n 3 "$ADV_LOG" | tr '\n' '|')
        fi
        rm -rf "$dir"
        return
    fi
    api POST /v1/sandboxes "$BODY_CREATE"
    created=$STATUS
    COUNT_LOG=$ADV_LOG
    if [ "$created" = 201 ]; then
        OUTCOME=tolerated
    elif [ "$created" = 000 ] && kill -0 "$ADV_PID" 2>/dev/null; then
        # it could not build even an error reply and closed the connection
        # (libmicrohttpd: "Application reported internal error"); it lives on
        OUTCOME=dropped
    elif [ "$created" = 000 ]; then
        OUTCOME=crash
        DETAIL="no answer, and the advisor is gone"
    elif [ "$created" -ge 500 ] 2>/dev/null && printf '%s' "$BODY" | grep -q '"error"'; then
        OUTCOME=clean
    else
        OUTCOME=wrong
        DETAIL="status $created: $(printf '%s' "$BODY" | head -c 200)"
    fi
    stop_advisor
    if [ "$ADV_RC" -ge 128 ]; then
        OUTCOME=crash
        DETAIL="exit $ADV_RC; $(tail -n 3 "$ADV_LOG" | tr '\n' '|')"
    elif [ "$ADV_RC" -ne 0 ] && [ "$OUTCOME" != crash ]; then
        OUTCOME=bad-exit
        DETAIL="SIGTERM ended it with $ADV_RC; $(tail -n 2 "$ADV_LOG" | tr '\n' '|')"
    fi
    # The directory it leaves is one an uninjected advisor starts on.
    if ! start_advisor "$dir" --prover "$PROVER_URL" --prover-token-file "$ADMIN_FILE" >/dev/null 2>&1; then
        OUTCOME=bad-store
        DETAIL="the uninjected advisor refused the directory: $(tail -n 2 "$ADV_LOG" | tr '\n' '|')"
    else
        api GET /v1/sandboxes
        listed=$(printf '%s' "$BODY" | jq -r '[.sandboxes[]? | (.name // .)] | index("sb1") != null' 2>/dev/null)
        if [ "$STATUS" != 200 ]; then
            OUTCOME=bad-store
            DETAIL="GET /v1/sandboxes after the restart: $STATUS"
        elif [ "$created" = 201 ] && [ "$listed" != true ]; then
            OUTCOME=bad-store
            DETAIL="answered 201 but the sandbox is not stored"
        fi
        stop_advisor
    fi
    rm -rf "$dir"
}

PV_ALLOC_COUNT=1 attempt 0
eq "the uninjected run creates the sandbox" "$OUTCOME" tolerated
# the first log is the counted run's (the restart's came after it)
total=$(sed -n 's/.*pv_alloc: \([0-9]*\) allocations$/\1/p' "$COUNT_LOG" | head -n 1)
total=${total:-0}
if [ "$total" -gt 0 ]; then ok "a start, a create and a stop allocate ($total allocations)"; else bad "no allocation counted"; fi

points=$(awk -v full="$FULL" -v total="$total" -v samples="$SAMPLES" 'BEGIN {
    for (i = 1; i <= full && i <= total; i++) print i
    if (total > full)
        for (j = 1; j <= samples; j++) print full + int((total - full) * j / samples)
}' | sort -un)
crash=0 wrong=0 silent=0 badexit=0 badstore=0 startfail=0 clean=0 tolerated=0 dropped=0
for k in $points; do
    attempt "$k"
    case $OUTCOME in
    start-fail) startfail=$((startfail + 1)) ;;
    clean) clean=$((clean + 1)) ;;
    dropped) dropped=$((dropped + 1)); clean=$((clean + 1)) ;;
    tolerated) tolerated=$((tolerated + 1)) ;;
    crash) crash=$((crash + 1)); [ $crash -le 3 ] && echo "     N=$k: $DETAIL" ;;
    wrong) wrong=$((wrong + 1)); [ $wrong -le 3 ] && echo "     N=$k: $DETAIL" ;;
    silent-start) silent=$((silent + 1)); [ $silent -le 3 ] && echo "     N=$k: did not start, without a word of memory: $DETAIL" ;;
    bad-exit) badexit=$((badexit + 1)); [ $badexit -le 3 ] && echo "     N=$k: $DETAIL" ;;
    bad-store) badstore=$((badstore + 1)); [ $badstore -le 3 ] && echo "     N=$k: $DETAIL" ;;
    esac
done
echo "     $(echo "$points" | wc -l) runs: $startfail refused to start, $clean requests failed cleanly ($dropped of them by closing the connection), $tolerated tolerated"
eq "no crash or sanitizer abort" "$crash" 0
eq "never a 4xx or another answer" "$wrong" 0
eq "a refused start says out of memory" "$silent" 0
eq "SIGTERM stops every started advisor with 0" "$badexit" 0
eq "an uninjected advisor starts on every directory left, with the sandbox iff 201" "$badstore" 0
if [ "$startfail" -gt 0 ]; then ok "the injection reached start-up"; else bad "the injection never reached start-up"; fi
if [ "$clean" -gt 0 ]; then ok "the injection reached the request"; else bad "the injection never reached the request"; fi
finish
