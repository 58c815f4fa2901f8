#!/bin/sh
# advisor_fail_alloc_requests.sh - allocation failure in the advisor's main
# requests: a proposal's submission, a reviewer's approval (the decision)
# and a proxy's policy sync, each with every allocation it makes failing
# in turn.
#
# For each request R, an advisor on a fresh data directory (an uninjected
# proviso-prover serves its proofs, so every count is the advisor's) makes
# the same set-up - a sandbox, proposals on; for the decision also one
# pending proposal; for the sync also its approval - and then R. Two
# uninjected runs with PV_ALLOC_COUNT=1 count the allocations of start,
# set-up and stop (IDLE) and of start, set-up, R and stop (TOTAL); the
# sweep then makes each N from IDLE - MARGIN to TOTAL fail in turn
# (PV_FAIL_ALLOC=N, common/pv_error.c): every allocation R makes is one of
# them, and a few of set-up's and stop's are swept too. Every run must end
# one of these ways:
#  - the failure fell in set-up (the set-up got a clean 5xx): nothing more
#    is judged of that run but the next point;
#  - R failed cleanly: a 5xx JSON error (never a 4xx that blames the
#    request), or, when not even an error reply could be built, a closed
#    connection while the advisor lives on; for the decision also the
#    409 of an unavailable prover, when the failure hit the prover's
#    client (the approval fails closed as it does without a prover);
#  - R was tolerated: the answer of the uninjected run.
# And whatever happened: the advisor never dies by a signal, SIGTERM
# stops it with 0, an uninjected advisor then starts on the same
# directory (its store agrees with its audit chain, checked at start), and
# nothing it acknowledged is missing there: a 202 submission's chunk is
# pending, a 200 approval's chunk is approved with the policy's revision
# advanced. `make check` sweeps every k-th point, k chosen so that each
# request gets about 40 (PV_FAIL_STRIDE=k sets it); PV_SWEEP=asan
# (`make check-asan`) about 15, between make check's; PV_SWEEP=full
# (`make check-sweeps`) sweeps every point;
# PV_FAIL_ONLY="R N" runs one point (to debug it under ADVISOR_WRAPPER).
. "$(dirname "$0")/advisor_lib.sh"

MARGIN=${PV_FAIL_MARGIN:-40}
STRIDE=${PV_FAIL_STRIDE:-}
[ "${PV_SWEEP:-}" = full ] && STRIDE=${PV_FAIL_STRIDE:-1}
PER=40
[ "${PV_SWEEP:-}" = asan ] && PER=15
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
PROPOSAL=$(proposal ex example.com 443 GET /index.html)

PIDS=
# shellcheck disable=SC2086
trap 'kill_own KILL $PIDS; adv_cleanup' EXIT INT TERM
start_prover prover
PROVER_URL=http://127.0.0.1:$P_PORT

# fail5xx: the last answer is a clean failure (5xx with a JSON error, or a
# closed connection while the advisor lives on).
fail5xx() {
    if [ "$STATUS" = 000 ]; then
        kill -0 "$ADV_PID" 2>/dev/null
        return
    fi
    [ "$STATUS" -ge 500 ] 2>/dev/null && printf '%s' "$BODY" | grep -q '"error"'
}

# setup R: the state R starts from; sets SETUP (ok, failed or wrong),
# SB_TOKEN, CHUNK and REVIEW.
setup() {
    SETUP=wrong
    create_sandbox sb1 "$POLICY"
    if [ "$STATUS" != 201 ]; then fail5xx && SETUP=failed; return; fi
    api PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}'
    if [ "$STATUS" != 200 ]; then fail5xx && SETUP=failed; return; fi
    SETUP=ok
    [ "$1" = submit ] && return
    SETUP=wrong
    api POST /v1/sandboxes/sb1/proposals "$PROPOSAL" "$SB_TOKEN"
    if [ "$STATUS" != 202 ]; then fail5xx && SETUP=failed; return; fi
    CHUNK=$(jf '.accepted_chunk_ids[0]')
    api GET "/v1/sandboxes/sb1/proposals/$CHUNK"
    if [ "$STATUS" != 200 ]; then fail5xx && SETUP=failed; return; fi
    REVIEW=$(jf .review_token)
    SETUP=ok
    [ "$1" = decide ] && return
    SETUP=wrong
    api POST "/v1/sandboxes/sb1/proposals/$CHUNK/approve" "{\"review_token\":\"$REVIEW\"}"
    if [ "$STATUS" != 200 ]; then fail5xx && SETUP=failed; return; fi
    SETUP=ok
}

# request R: R itself; sets ANSWER to what is compared with the
# uninjected run (the status and the answer's stable part).
request() {
    case $1 in
    submit)
        api POST /v1/sandboxes/sb1/proposals "$PROPOSAL" "$SB_TOKEN"
        ANSWER="$STATUS $(jf '[.accepted_chunks, .rejected_chunks] | tostring' 2>/dev/null)"
        GOT_CHUNK=$(jf '.accepted_chunk_ids[0] // empty' 2>/dev/null)
        ;;
    decide)
        api POST "/v1/sandboxes/sb1/proposals/$CHUNK/approve" "{\"review_token\":\"$REVIEW\"}"
        ANSWER="$STATUS $(jf '[.status, .policy_version] | tostring' 2>/dev/null)"
        ;;
    sync)
        api GET "/v1/sandboxes/sb1/policy?after=0&timeout=1&enabled=1" "" "$SB_TOKEN"
        ANSWER="$STATUS $(jf '[.revision, .hash] | tostring' 2>/dev/null)"
        ;;
    esac
}

# stored R STATUS: after a restart, what R acknowledged is there.
stored() {
    case $1 in
    submit)
        [ "$2" = 202 ] || return 0
        [ -n "$GOT_CHUNK" ] || { DETAIL="a 202 without a chunk id"; return 1; }
        api GET "/v1/sandboxes/sb1/proposals/$GOT_CHUNK"
        DETAIL="chunk $GOT_CHUNK after the restart: $STATUS $(jf .status 2>/dev/null)"
        [ "$STATUS" = 200 ] && [ "$(jf .status)" = pending ]
        ;;
    decide)
        [ "$2" = 200 ] || return 0
        api GET "/v1/sandboxes/sb1/proposals/$CHUNK"
        DETAIL="chunk $CHUNK after the restart: $STATUS $(jf .status 2>/dev/null)"
        [ "$STATUS" = 200 ] && [ "$(jf .status)" = approved ] || return 1
        api GET /v1/sandboxes/sb1/policy
        DETAIL="the policy after the restart: $STATUS revision $(jf .revision 2>/dev/null)"
        [ "$STATUS" = 200 ] && [ "$(jf .revision)" -ge 2 ]
        ;;
    sync)
        api GET /v1/sandboxes/sb1/policy
        [ "$STATUS" = 200 ]
        ;;
    esac
}

# attempt R N: one run on a fresh directory; sets OUTCOME and DETAIL.
attempt() {
    r=$1
    k=$2
    dir=$WORK/d.$k
    rm -rf "$dir"
    mkdir -p "$dir"
    DETAIL=
    if [ "$k" -eq 0 ]; then
        start_advisor "$dir" --prover "$PROVER_URL" --prover-token-file "$ADMIN_FILE" >/dev/null 2>&1
    else
        PV_FAIL_ALLOC=$k start_advisor "$dir" --prover "$PROVER_URL" \
            --prover-token-file "$ADMIN_FILE" >/dev/null 2>&1
    fi
    if [ -z "$ADV_PID" ]; then
        OUTCOME=start-fail
        grep -q -e "out of memory" -e "Cannot allocate memory" "$ADV_LOG" || {
            OUTCOME=silent-start
            DETAIL=$(tail -n 3 "$ADV_LOG" | tr '\n' '|')
        }
        rm -rf "$dir"
        return
    fi
    COUNT_LOG=$ADV_LOG
    setup "$r"
    got=
    if [ "$SETUP" = failed ]; then
        OUTCOME=setup
    elif [ "$SETUP" = wrong ]; then
        OUTCOME=wrong
        DETAIL="set-up: status $STATUS: $(printf '%s' "$BODY" | head -c 200)"
    elif [ "${NO_REQUEST:-0}" = 1 ]; then
        OUTCOME=tolerated
    else
        request "$r"
        got=$STATUS
        if [ "$ANSWER" = "${WANT:-$ANSWER}" ]; then
            OUTCOME=tolerated
        elif fail5xx; then
            OUTCOME=clean
        elif [ "$r" = decide ] && [ "$STATUS" = 409 ] &&
            printf '%s' "$BODY" | grep -q 'prover validation unavailable'; then
            # the prover's answer did not come (its client ran out): the
            # approval fails closed with the answer of an unavailable prover
            OUTCOME=clean
        elif [ "$STATUS" = 000 ]; then
            OUTCOME=crash
            DETAIL="no answer, and the advisor is gone"
        else
            OUTCOME=wrong
            DETAIL="answer '$ANSWER' (uninjected '$WANT'): $(printf '%s' "$BODY" | head -c 200)"
        fi
    fi
    stop_advisor
    if [ "$ADV_RC" -ge 128 ]; then
        OUTCOME=crash
        DETAIL="exit $ADV_RC; $(tail -n 3 "$ADV_LOG" | tr '\n' '|')"
    elif [ "$ADV_RC" -ne 0 ] && [ "$OUTCOME" != crash ]; then
        OUTCOME=bad-exit
        DETAIL="SIGTERM ended it with $ADV_RC; $(tail -n 2 "$ADV_LOG" | tr '\n' '|')"
    fi
    if [ "$k" -gt 0 ] && [ -n "$got" ]; then
        if ! start_advisor "$dir" --prover "$PROVER_URL" --prover-token-file "$ADMIN_FILE" >/dev/null 2>&1; then
            OUTCOME=bad-store
            DETAIL="the uninjected advisor refused the directory: $(tail -n 2 "$ADV_LOG" | tr '\n' '|')"
        else
            if ! stored "$r" "$got"; then
                OUTCOME=bad-store
                DETAIL="answered $got, but a restart does not show it stored: $DETAIL"
            fi
            stop_advisor
        fi
    fi
    rm -rf "$dir"
}

# count R: the allocations of an uninjected run (NO_REQUEST=1: without R).
count() {
    PV_ALLOC_COUNT=1 attempt "$1" 0
    unset PV_ALLOC_COUNT
    sed -n 's/.*pv_alloc: \([0-9]*\) allocations$/\1/p' "$COUNT_LOG" | head -n 1
}

if [ -n "${PV_FAIL_ONLY:-}" ]; then
    set -- $PV_FAIL_ONLY
    attempt "$1" 0
    WANT=$ANSWER
    attempt "$1" "$2"
    echo "$1 N=$2: $OUTCOME $DETAIL; answer '$ANSWER'; body $(printf '%s' "$BODY" | head -c 300)"
    exit 0
fi
for R in ${PV_FAIL_REQUESTS:-submit decide sync}; do
    WANT=
    attempt "$R" 0
    want=$ANSWER
    eq "$R: the uninjected run is tolerated by itself" "$OUTCOME" tolerated
    case $R in
    submit) eq "$R: the uninjected answer" "$want" "202 [1,0]" ;;
    decide) eq "$R: the uninjected answer" "$want" '200 ["approved",2]' ;;
    sync) has "$R: the uninjected answer" "$want" "200 [2," ;;
    esac
    WANT=$want
    idle=$(NO_REQUEST=1 count "$R")
    total=$(count "$R")
    idle=${idle:-0}
    total=${total:-0}
    if [ "$idle" -gt 0 ] && [ "$total" -gt "$idle" ]; then
        ok "$R: counted ($((total - idle)) allocations of its own; $idle for start, set-up and stop)"
    else
        bad "$R: no allocation count (idle $idle, total $total)"
        continue
    fi
    lo=$((idle - MARGIN))
    [ "$lo" -lt 1 ] && lo=1
    crash=0 wrong=0 silent=0 badexit=0 badstore=0 other=0 clean=0 tolerated=0 runs=0
    stride=$STRIDE
    [ -n "$stride" ] || stride=$(((total - lo + PER) / PER))
    k=$lo
    # under ASan, the points between make check's
    [ "${PV_SWEEP:-}" = asan ] && [ -z "$STRIDE" ] && k=$((lo + stride / 2))
    while [ "$k" -le "$total" ]; do
        attempt "$R" "$k"
        runs=$((runs + 1))
        case $OUTCOME in
        start-fail | setup) other=$((other + 1)) ;;
        clean) clean=$((clean + 1)) ;;
        tolerated) tolerated=$((tolerated + 1)) ;;
        crash) crash=$((crash + 1)); [ $crash -le 3 ] && echo "     $R N=$k: $DETAIL" ;;
        wrong) wrong=$((wrong + 1)); [ $wrong -le 3 ] && echo "     $R N=$k: $DETAIL" ;;
        silent-start) silent=$((silent + 1)); [ $silent -le 3 ] && echo "     $R N=$k: did not start, without a word of memory: $DETAIL" ;;
        bad-exit) badexit=$((badexit + 1)); [ $badexit -le 3 ] && echo "     $R N=$k: $DETAIL" ;;
        bad-store) badstore=$((badstore + 1)); [ $badstore -le 3 ] && echo "     $R N=$k: $DETAIL" ;;
        esac
        k=$((k + stride))
    done
    echo "     $R: N from $lo to $total by $stride, $runs runs: $clean failed cleanly, $tolerated tolerated, $other fell in start or set-up"
    eq "$R: no crash or sanitizer abort" "$crash" 0
    eq "$R: never a 4xx or another answer" "$wrong" 0
    eq "$R: a refused start says out of memory" "$silent" 0
    eq "$R: SIGTERM stops every started advisor with 0" "$badexit" 0
    eq "$R: nothing acknowledged is missing after a restart" "$badstore" 0
    if [ "$clean" -gt 0 ]; then ok "$R: the injection reached it ($clean clean failures)"; else bad "$R: the injection never reached it"; fi
done
finish
