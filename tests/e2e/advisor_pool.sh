#!/bin/sh
# advisor_pool.sh - proviso-advisor with a pool of two real proviso-prover
# processes (--prover URL twice) on 127.0.0.1: proofs are spread over both
# (counted from each prover's own /metrics); after kill -9 of one the
# submissions still succeed through the other and no approval is made
# without a proof; with both dead every proposal stays pending with the
# reason and nothing is approved; a prover started again is taken back.
# A prover whose /healthz is slow once stays in; slow twice in a row, out.
# Then "provers" that answer 200 with garbage, a truncated body, a short
# body or an object without a verdict (tests/e2e/fake_prover.py): nothing
# is approved on them, and beside a real prover they are taken out.
. "$(dirname "$0")/advisor_lib.sh"

PROVER_BIN=${PV_PROVER_BIN:-$PV_BUILDDIR/proviso-prover}
[ -x "$PROVER_BIN" ] || { echo "FAIL: $PROVER_BIN is not built"; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
FAKE=$(dirname "$0")/fake_prover.py
PIDS=
# shellcheck disable=SC2086
trap 'kill_own KILL $PIDS; adv_cleanup' EXIT INT TERM

# start_fake MODE: sets F_PID and F_PORT
start_fake() {
    rm -f "$WORK/fake.$1" "$WORK/fake.$1.count" "$WORK/fake.$1.health"
    python3 "$FAKE" "$1" "$WORK/fake.$1" &
    F_PID=$!
    PIDS="$PIDS $F_PID"
    i=0
    while [ $i -lt 200 ] && [ ! -s "$WORK/fake.$1" ]; do sleep 0.05; i=$((i + 1)); done
    F_PORT=$(cat "$WORK/fake.$1")
}

# pool_metric SERIES URL: the advisor's per-prover series
pool_metric() {
    curl -s -H "Authorization: Bearer $ADMIN" "$ADV/metrics" |
        sed -n "s|^proviso_advisor_prover_$1{prover=\"$2\"} ||p"
}

# wait_up URL WANT SECONDS
wait_up() {
    i=0
    while [ $i -lt $(($3 * 10)) ]; do
        [ "$(pool_metric up "$2")" = "$2" ] 2>/dev/null && return 0
        [ "$(pool_metric up "$1")" = "$2" ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

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
N=0
# submit SANDBOX TOKEN: one new-host proposal (an empty delta: auto mode
# approves it on a proof); its chunk id in CHUNK, then its record in BODY
submit() {
    N=$((N + 1))
    api POST "/v1/sandboxes/$1/proposals" "$(proposal "r$N" "svc$N.example.com" 443 GET /x)" "$2"
    CHUNK=$(jf '.accepted_chunk_ids[0]')
    api GET "/v1/sandboxes/$1/proposals/$CHUNK"
}

# approved_without_proof SANDBOX: approved chunks whose evidence is not an
# `empty` verdict of a prover (must stay 0)
approved_without_proof() {
    api GET "/v1/sandboxes/$1/proposals"
    jf '[.chunks[] | select(.status == "approved") |
         select(.evidence.prover.verdict != "empty" or
                .validation_result != "prover: no new findings")] | length'
}

start_prover p1
P1=$P_PID
P1_PORT=$P_PORT
start_prover p2
P2=$P_PID
P2_PORT=$P_PORT
U1=http://127.0.0.1:$P1_PORT
U2=http://127.0.0.1:$P2_PORT

# --- usage ---------------------------------------------------------------------
"$ADV_BIN" --data-dir "$WORK/u" --prover "$U1" --prover "$U2" --prover-token-file "$ADMIN_FILE" \
    --prover-token-file "$ADMIN_FILE" --prover-token-file "$ADMIN_FILE" 2>"$WORK/usage.err"
eq "three token files for two provers: usage error" "$?" 2
"$ADV_BIN" --data-dir "$WORK/u" --prover "$U1" --prover "$U1" --prover-token-file "$ADMIN_FILE" \
    2>"$WORK/usage.err"
eq "the same prover twice: usage error" "$?" 2
has "says which" "$(cat "$WORK/usage.err")" "given twice"
"$ADV_BIN" --data-dir "$WORK/u" --prover "$U1" --prover "ftp://127.0.0.1:1" \
    --prover-token-file "$ADMIN_FILE" 2>"$WORK/usage.err"
eq "a second URL that is not http: usage error" "$?" 2

# --- two provers: proofs spread over both ---------------------------------------
start_advisor "$WORK/data" --prover "$U1" --prover "$U2" --prover-token-file "$ADMIN_FILE" || exit 1
has "the pool is logged" "$(cat "$ADV_LOG")" "prover pool: 2 provers"
api PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}'
create_sandbox sb "$POLICY"
T=$SB_TOKEN
api PUT /v1/sandboxes/sb/settings/proposal_approval_mode '{"value":"auto"}'
eq "auto mode" "$STATUS" 200
a1=$(proves "$P1_PORT")
a2=$(proves "$P2_PORT")
ok_all=0
for _ in 1 2 3 4 5 6 7 8 9 10; do
    submit sb "$T"
    [ "$(jf .status)" = approved ] && ok_all=$((ok_all + 1))
done
eq "ten proposals approved on proofs" "$ok_all" 10
b1=$(proves "$P1_PORT")
b2=$(proves "$P2_PORT")
d1=$((b1 - a1))
d2=$((b2 - a2))
echo "# proofs: prover 1 answered $d1, prover 2 answered $d2"
eq "all ten proved, no more" "$((d1 + d2))" 10
eq "prover 1 took its share (4..6)" "$([ "$d1" -ge 4 ] && [ "$d1" -le 6 ] && echo yes)" yes
eq "prover 2 took its share (4..6)" "$([ "$d2" -ge 4 ] && [ "$d2" -le 6 ] && echo yes)" yes
eq "advisor metrics: prover 1 up" "$(pool_metric up "$U1")" 1
eq "advisor metrics: prover 2 up" "$(pool_metric up "$U2")" 1
# each evaluation is a proof and a containment check (/v1/check)
eq "advisor metrics: prover 1 calls" "$(pool_metric requests_total "$U1")" "$((d1 * 2))"
eq "advisor metrics: no failures" "$(pool_metric failures_total "$U2")" 0

# --- kill -9 of one: the other carries on ---------------------------------------
kill -KILL "$P1"
wait "$P1" 2>/dev/null
ok_all=0
t0=$(date +%s%N)
for _ in 1 2 3 4 5 6; do
    submit sb "$T"
    [ "$(jf .status)" = approved ] && ok_all=$((ok_all + 1))
done
echo "# six submissions after the kill took $(( ($(date +%s%N) - t0) / 1000000 )) ms in all"
eq "prover 1 dead: six more approved through prover 2" "$ok_all" 6
eq "prover 2 proved them" "$(($(proves "$P2_PORT") - b2))" 6
eq "prover 1 is out" "$(pool_metric up "$U1")" 0
eq "no approval without a proof" "$(approved_without_proof sb)" 0
api GET /v1/sandboxes/sb/policy
REV=$(jf .revision)
eq "sixteen approvals: revision 17" "$REV" 17

# --- both dead: pending with the reason, nothing approved -----------------------
kill -KILL "$P2"
wait "$P2" 2>/dev/null
for _ in 1 2 3; do
    submit sb "$T"
    eq "both dead: pending" "$(jf .status)" pending
done
eq "both dead: validation unavailable" "$(jf .validation_result)" "validation unavailable"
has "both dead: the reason says so" "$(jf .application_error)" "prover validation unavailable"
has "both dead: names prover 1" "$(jf .application_error)" "$U1"
has "both dead: names prover 2" "$(jf .application_error)" "$U2"
DEAD=$CHUNK
api POST "/v1/sandboxes/sb/proposals/$DEAD/approve" "{\"review_token\":\"$(jf .review_token)\"}"
eq "both dead: a reviewer cannot approve it either" "$STATUS" 409
api GET /v1/sandboxes/sb/policy
eq "both dead: the revision did not move" "$(jf .revision)" "$REV"
eq "both dead: prover 2 is out" "$(pool_metric up "$U2")" 0

# --- one comes back: taken back in -----------------------------------------------
t0=$(date +%s%N)
start_prover p1b "$P1_PORT"
if wait_up "$U1" 1 15; then ok "prover 1 restarted: back in the pool"; else bad "prover 1 not back within 15 s"; fi
echo "# prover 1 back in the pool $(( ($(date +%s%N) - t0) / 1000000 )) ms after its start"
submit sb "$T"
eq "prover 1 back: approved" "$(jf .status)" approved
eq "prover 1 back: it proved it" "$(proves "$P1_PORT")" 1
api GET "/v1/sandboxes/sb/proposals/$DEAD"
eq "a proposal left pending stays pending" "$(jf .status)" pending
eq "still no approval without a proof" "$(approved_without_proof sb)" 0
stop_advisor

# --- a hung prover (SIGSTOP): the call times out, the prover is taken out ------
start_prover p2b
P2=$P_PID
U2=http://127.0.0.1:$P_PORT
printf 'prover_timeout_ms: 1500\n' >"$WORK/slow.yaml"
start_advisor "$WORK/data" --config "$WORK/slow.yaml" --prover "$U1" --prover "$U2" \
    --prover-token-file "$ADMIN_FILE" || exit 1
kill -STOP "$P2"
timed=0
approved=0
for _ in 1 2 3 4; do
    submit sb "$T"
    # the call that hangs may be a proof (pending, application_error names
    # the prover) or a containment check (pending for a reviewer)
    case "$(jf .status)" in
    approved) approved=$((approved + 1)) ;;
    pending) timed=$((timed + 1)) ;;
    esac
done
eq "hung prover: at most one proposal waited for it (pending), the others approved" \
    "$([ "$timed" -le 1 ] && [ $((timed + approved)) -eq 4 ] && echo yes)" yes
eq "hung prover: it is out" "$(pool_metric up "$U2")" 0
# a call timed out on it, or the prober's /healthz (every 2 s) did first
case "$(cat "$ADV_LOG")" in
*"prover $U2 taken out of the pool: gave no answer within 1500 ms (prover_timeout_ms)"* | \
    *"prover $U2 taken out of the pool: health check: Timeout was reached"*)
    ok "hung prover: the log says why" ;;
*) bad "hung prover: no line saying why it was taken out ($(grep -F 'taken out of the pool' "$ADV_LOG" | tail -n 3))" ;;
esac
eq "hung prover: still no approval without a proof" "$(approved_without_proof sb)" 0
kill -CONT "$P2"
if wait_up "$U2" 1 15; then ok "hung prover resumed: back in the pool"; else bad "hung prover not back within 15 s"; fi
api GET /v1/sandboxes/sb/policy
REV=$(jf .revision)
stop_advisor

# --- one slow /healthz is not a dead prover; two in a row are ----------------
# (HAProxy in front of provers, one of which just died, can hold a probe for
# a second before it sends it on: tests/e2e/advisor_haproxy.sh)
start_fake slowsecond
SU=http://127.0.0.1:$F_PORT
start_advisor "$WORK/data" --prover "$SU" --prover-token-file "$ADMIN_FILE" || exit 1
# probes: at start-up; at 2 s, timed out at 3 s; again 200 ms later
i=0
while [ $i -lt 80 ] && [ "$(cat "$WORK/fake.slowsecond.health" 2>/dev/null)" != 3 ]; do
    sleep 0.1
    i=$((i + 1))
done
eq "one slow probe: asked again at once" "$(cat "$WORK/fake.slowsecond.health" 2>/dev/null)" 3
sleep 0.3
eq "one slow probe: still up" "$(pool_metric up "$SU")" 1
eq "one slow probe: not taken out" "$(grep -c "prover $SU taken out" "$ADV_LOG")" 0
stop_advisor
kill -KILL "$F_PID" 2>/dev/null
start_fake slow
SU=http://127.0.0.1:$F_PORT
start_advisor "$WORK/data" --prover "$SU" --prover-token-file "$ADMIN_FILE" || exit 1
if wait_up "$SU" 0 8; then ok "slow probes: out after two"; else bad "slow probes: still up after 8 s"; fi
has "slow probes: the log says why" "$(cat "$ADV_LOG")" \
    "prover $SU taken out of the pool: health check: Timeout was reached"
stop_advisor
kill -KILL "$F_PID" 2>/dev/null

# --- adversarial "provers": nothing approved on a bad answer ---------------------
for mode in garbage truncated short noverdict error; do
    start_fake "$mode"
    start_advisor "$WORK/data" --prover "http://127.0.0.1:$F_PORT" --prover-token-file "$ADMIN_FILE" ||
        exit 1
    submit sb "$T"
    eq "$mode: pending" "$(jf .status)" pending
    eq "$mode: no verdict recorded" "$(jf '.evidence.prover.verdict // "none"')" none
    eq "$mode: the fake was asked" "$([ -s "$WORK/fake.$mode.count" ] && echo yes)" yes
    case $mode in
    noverdict) has "$mode: the reason" "$(jf .application_error)" "without a verdict" ;;
    garbage | truncated) has "$mode: the reason" "$(jf .application_error)" "not a JSON object" ;;
    short) has "$mode: the reason" "$(jf .application_error)" "unreachable" ;;
    error) has "$mode: the reason" "$(jf .application_error)" "answered 503" ;;
    esac
    api GET /v1/sandboxes/sb/policy
    eq "$mode: the revision did not move" "$(jf .revision)" "$REV"
    stop_advisor
    kill -KILL "$F_PID" 2>/dev/null
done

# Beside a real prover, the bad one is taken out and the real one proves.
start_fake garbage
FU=http://127.0.0.1:$F_PORT
start_advisor "$WORK/data" --prover "$FU" --prover "$U1" --prover-token-file "$ADMIN_FILE" || exit 1
before=$(proves "$P1_PORT")
ok_all=0
for _ in 1 2 3 4; do
    submit sb "$T"
    [ "$(jf .status)" = approved ] && ok_all=$((ok_all + 1))
done
eq "garbage beside a real prover: all four approved" "$ok_all" 4
eq "the real prover proved all four" "$(($(proves "$P1_PORT") - before))" 4
FAILS=$(pool_metric failures_total "$FU")
eq "the garbage prover's failures are counted" "$([ "${FAILS:-0}" -ge 1 ] && echo yes)" yes
eq "the real prover has none" "$(pool_metric failures_total "$U1")" 0
eq "and no approval without a proof" "$(approved_without_proof sb)" 0
has "the log says it was taken out" "$(cat "$ADV_LOG")" "prover $FU taken out of the pool"
stop_advisor
finish
