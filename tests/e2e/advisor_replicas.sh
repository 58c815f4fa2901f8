#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# advisor_replicas.sh - two proviso-advisor replicas on one PostgreSQL
# (docs/scale-out.md#replicas), real processes on loopback: a throwaway
# cluster on a Unix socket (tests/pg_lib.sh), replicas A and B sharing one
# audit key (--audit-key-file), proviso-proxy in advisor mode, the logging
# upstream, curl as the agent and a Python client for the load.
#
#  - A replica refuses a missing key file, a key others may read, a file
#    that is no key, and a key that did not sign the chain (nothing it
#    wrote would verify with the chain's key); on SQLite a replaced default
#    key only warns.
#  - A sandbox created on A is known to B (its token is accepted there at
#    once); deleted on A, its token is refused on B.
#  - Cross-replica wake-up: an agent's /wait held on B answers when A
#    approves, and the proxy's policy long-poll held on A loads what B
#    approves; the delays are printed and asserted under 1 s (the goal is
#    100 ms; without the notes each would run to its timeout).
#  - Proof under failure: 1,000 submissions (through A) and decisions
#    (through B); A is killed with SIGKILL mid-run and restarted. The
#    proxy, given both replicas (--advisor A --advisor B, A in use),
#    enforces within 2 s what is proposed and approved through B while A
#    is down (judged by the upstream). Every write the client saw acknowledged is in the
#    store afterwards, read through either replica; one revision per
#    approval; the audit chain verifies from an export of either replica
#    with the one public key, and both exports have the same records; the
#    proxy loads the last revision within 2 s of the last approval and the
#    upstream receives the last approved request; an unapproved one is
#    still denied.
. "$(dirname "$0")/proxy_lib.sh"
. "$(dirname "$0")/advisor_proxy_lib.sh"
. "$SRC/tests/pg_lib.sh"

PY=$(command -v python3) || { echo "SKIP: python3 is not installed"; exit 77; }
pg_cluster "$BUILD/tests" cleanup
OPS=${PV_REPLICA_OPS:-1000}

# log_ms FILE NEEDLE: the time (ms) of the first log line holding NEEDLE
log_ms() { date -d "$(grep -F -- "$2" "$1" | head -n 1 | cut -d' ' -f1)" +%s%3N; }

start_upstream_base /allowed
# The default 64 workers: the replicas share the cluster's default
# max_connections (100) through their pools (store_connections, 16 each).
printf 'mapper_flush_interval_ms: 3600000\n' >"$T/quiet.yaml"

# ---------------------------------------------------------------------------
# one key for every replica
# ---------------------------------------------------------------------------

openssl genpkey -algorithm ed25519 -out "$T/audit.key" 2>/dev/null && chmod 600 "$T/audit.key" ||
    { echo "openssl cannot make an Ed25519 key"; exit 1; }
openssl genpkey -algorithm ed25519 -out "$T/other.key" 2>/dev/null && chmod 600 "$T/other.key"

"$ADVISOR_BIN" --data-dir "$T/nokey.d" --port 0 --store "$PG_URL" \
    --audit-key-file "$T/missing.key" >"$T/nokey.log" 2>&1
expect_eq "a missing key file: start-up refused" 2 "$?"
expect_has "the missing key is named" "$T/missing.key: No such file or directory" "$(cat "$T/nokey.log")"
if [ -e "$T/missing.key" ]; then fail "a key was made at --audit-key-file"; else pass; fi

start_advisor A --config "$T/quiet.yaml" --store "$PG_URL" --audit-key-file "$T/audit.key"
start_advisor B --config "$T/quiet.yaml" --store "$PG_URL" --audit-key-file "$T/audit.key"
if [ -e "$T/A.d/audit.key" ] || [ -e "$T/B.d/audit.key" ]; then
    fail "a replica made its own key beside --audit-key-file"
else pass; fi
pubA=$("$BUILD/proviso" audit pubkey --advisor "http://127.0.0.1:$A_PORT" --token-file "$T/A.admin")
pubB=$("$BUILD/proviso" audit pubkey --advisor "http://127.0.0.1:$B_PORT" --token-file "$T/B.admin")
expect_eq "both replicas sign with the one key" "$pubA" "$pubB"

# A sandbox created on A after B started: B accepts its token at once.
sandbox A one "$T/base.yaml"
t0=$(now_ms)
token_on "$B_PORT" one 100 0.01
expect_eq "B accepts the token of a sandbox created on A" 200 "$c"
echo "# B knew the new sandbox's token $(($(now_ms) - t0)) ms after A created it"

# A third replica with another key: the chain has records by now.
"$ADVISOR_BIN" --data-dir "$T/C.d" --port 0 --store "$PG_URL" --audit-key-file "$T/other.key" \
    >"$T/C.log" 2>&1
expect_eq "a replica with another key: start-up refused" 2 "$?"
expect_has "the refusal says why" "signed by another key" "$(cat "$T/C.log")"
"$ADVISOR_BIN" --data-dir "$T/C.d" --port 0 --store "$PG_URL" >"$T/C2.log" 2>&1
expect_eq "a replica with its own DIR/audit.key on PostgreSQL: refused" 2 "$?"

# A key others may read, and a file that is no key: refused, named.
cp "$T/other.key" "$T/loose.key" && chmod 644 "$T/loose.key"
"$ADVISOR_BIN" --data-dir "$T/C.d" --port 0 --store "$PG_URL" --audit-key-file "$T/loose.key" \
    >"$T/C3.log" 2>&1
expect_eq "a key file others may read: refused" 2 "$?"
expect_has "the mode is named" "chmod 600" "$(cat "$T/C3.log")"
printf 'not a key\n' >"$T/junk.key" && chmod 600 "$T/junk.key"
"$ADVISOR_BIN" --data-dir "$T/C.d" --port 0 --store "$PG_URL" --audit-key-file "$T/junk.key" \
    >"$T/C4.log" 2>&1
expect_eq "a file that is no key: refused" 2 "$?"
expect_has "the reason is named" "not an Ed25519 private key" "$(cat "$T/C4.log")"

# On SQLite a replaced DIR/audit.key only warns (docs/audit.md#key); a
# given key that did not sign the chain is refused there too.
start_advisor S --config "$T/quiet.yaml"
sandbox S s1 "$T/base.yaml"
kill "$S_PID"
wait "$S_PID" 2>/dev/null
rm -f "$T/S.d/audit.key"
start_advisor S --config "$T/quiet.yaml"
expect_has "SQLite, a new default key: a warning" "new records are signed by this one" \
    "$(cat "$T/S.log")"
kill "$S_PID"
wait "$S_PID" 2>/dev/null
"$ADVISOR_BIN" --data-dir "$T/S.d" --port 0 --audit-key-file "$T/other.key" >"$T/S2.log" 2>&1
expect_eq "SQLite, --audit-key-file with another key: refused" 2 "$?"
expect_has "the refusal says why" "signed by another key" "$(cat "$T/S2.log")"

# A sandbox deleted on A: its token stops working on B.
sandbox A gone "$T/base.yaml"
out=$(adm A DELETE /v1/sandboxes/gone)
expect_eq "delete on A" 200 "$(code "$out")"
sleep 0.3
c=$("$CURL" -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$T/gone.token")" \
    "http://127.0.0.1:$B_PORT/v1/sandboxes/gone/policy")
expect_eq "B refuses the token of a sandbox deleted on A" 401 "$c"

out=$(adm B PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}')
expect_eq "proposals on (through B)" 200 "$(code "$out")"
out=$(adm A PUT /v1/sandboxes/one/settings/proposal_approval_mode '{"value":"manual"}')
expect_eq "manual mode (through A)" 200 "$(code "$out")"

# Both replicas at the defaults, every worker busy at once: 128 clients
# (64 a replica) propose and list in a sandbox of their own. Before the pool each replica held
# a connection per worker, and two of them did not fit PostgreSQL's default
# max_connections of 100: the second answered 500 "this worker has no store
# connection". Now every answer is a 200 or a 202, and each replica holds
# at most store_connections (16) pooled connections and three of its own
# (the group writer, the mapper's lock, the listener).
echo "# the cluster's max_connections: $(pg_q "SHOW max_connections")"
sandbox A burst "$T/base.yaml"
burst=$("$PY" "$SRC/tests/e2e/advisor_burst.py" burst "$T/burst.token" 64 6 \
    "$A_PORT:$T/A.admin" "$B_PORT:$T/B.admin" 2>&1)
echo "# 768 requests from 128 clients on two replicas: $burst"
expect_eq "every request of the burst answered 200 or 202" "200:384 202:384" "$burst"
expect_eq "no request found its worker without a store" 0 \
    "$(cat "$T/A.log" "$T/B.log" | grep -c 'no store')"
nconn=$(pg_q "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'proviso-advisor'")
echo "# connections of the two replicas after the burst: $nconn (bound 2 x (16 + 3) = 38)"
if [ "$nconn" -ge 2 ] && [ "$nconn" -le 38 ]; then pass; else
    fail "the replicas hold $nconn connections, not 2..38"; fi

# The proxy follows both replicas, A first: A is the one killed below, so
# the proxy must move to B (--advisor repeated, docs/proxy.md#failover).
start_aproxy P A one --advisor "http://127.0.0.1:$B_PORT"
wait_log "$T/P.log" "advisor revision 1 loaded" || fail "proxy never loaded revision 1"

# ---------------------------------------------------------------------------
# cross-replica wake-up: /wait held on B, approval through A; the proxy's
# policy long-poll held on A, approval through B
# ---------------------------------------------------------------------------

# submit_a NAME: a one-rule proposal through A; its chunk id into $SID
# (one at a time: a second pending chunk for the same host, port and
# binary would supersede the first)
submit_a() {
    out=$("$CURL" -s -w '|%{http_code}' -H "Authorization: Bearer $(cat "$T/one.token")" \
        -H 'Content-Type: application/json' -d "$(rule "$1" 127.0.0.1 "$UP" GET "/$1")" \
        "http://127.0.0.1:$A_PORT/v1/sandboxes/one/proposals")
    expect_eq "$1 submitted through A" 202 "$(code "$out")"
    SID=$(jget "$out" '.accepted_chunk_ids[0]')
}
submit_a w0
WID=$SID
TOKEN=$(jget "$(adm B GET "/v1/sandboxes/one/proposals/$WID")" .review_token)
"$CURL" -s -o "$T/wait.out" -H "Authorization: Bearer $(cat "$T/one.token")" \
    -w '%{http_code}\n' "http://127.0.0.1:$B_PORT/v1/sandboxes/one/proposals/$WID/wait?timeout=20" \
    >"$T/wait.code" &
WAIT_PID=$!
sleep 0.5
out=$(adm A POST "/v1/sandboxes/one/proposals/$WID/approve" "{\"review_token\":\"$TOKEN\"}")
t_ack=$(now_ms)
expect_eq "approved through A" 200 "$(code "$out")"
wait "$WAIT_PID"
t_wake=$(now_ms)
WAKE=$((t_wake - t_ack))
echo "# cross-replica wake-up: the /wait held on B answered $WAKE ms after A acknowledged the approval"
expect_eq "the wait answered with the decision" "200 approved" \
    "$(cat "$T/wait.code") $("$JQ" -r .status "$T/wait.out")"
if [ "$WAKE" -lt 1000 ]; then pass; else fail "cross-replica wake-up took $WAKE ms"; fi
wait_log "$T/P.log" "advisor revision 2 loaded" || fail "proxy never loaded revision 2"
submit_a w1
TOKEN=$(jget "$(adm A GET "/v1/sandboxes/one/proposals/$SID")" .review_token)
out=$(adm B POST "/v1/sandboxes/one/proposals/$SID/approve" "{\"review_token\":\"$TOKEN\"}")
t_ack=$(now_ms)
expect_eq "approved through B" 200 "$(code "$out")"
if wait_log "$T/P.log" "advisor revision 3 loaded" 100; then
    PWAKE=$(($(log_ms "$T/P.log" "advisor revision 3 loaded") - t_ack))
    echo "# the proxy (long-polling A) loaded B's approval $PWAKE ms after B acknowledged it" \
        "(negative: before curl had returned)"
    if [ "$PWAKE" -lt 1000 ]; then pass; else fail "the proxy took $PWAKE ms"; fi
else
    fail "the proxy did not load revision 3 within 2 s of an approval on B"
fi

# ---------------------------------------------------------------------------
# review-token compare-and-set across replicas: one chunk approved through
# A and B at the same moment with the same token - exactly one wins, and
# the revision moves by one per chunk
# ---------------------------------------------------------------------------

rev0=$(jget "$(adm B GET /v1/sandboxes/one/policy)" .revision)
wins=0
for r in 1 2 3 4 5 6 7 8; do
    submit_a "cas$r"
    TOKEN=$(jget "$(adm B GET "/v1/sandboxes/one/proposals/$SID")" .review_token)
    adm A POST "/v1/sandboxes/one/proposals/$SID/approve" "{\"review_token\":\"$TOKEN\"}" \
        >"$T/cas.A" &
    ca=$!
    adm B POST "/v1/sandboxes/one/proposals/$SID/approve" "{\"review_token\":\"$TOKEN\"}" \
        >"$T/cas.B" &
    cb=$!
    wait "$ca" "$cb"
    codes=$(printf '%s %s' "$(code "$(cat "$T/cas.A")")" "$(code "$(cat "$T/cas.B")")")
    case "$codes" in
    "200 409" | "409 200" | "200 412" | "412 200") wins=$((wins + 1)) ;;
    *) echo "# round $r: $codes" ;;
    esac
done
expect_eq "each chunk approved exactly once through two replicas" 8 "$wins"
rev1=$(jget "$(adm A GET /v1/sandboxes/one/policy)" .revision)
expect_eq "one revision per chunk" "$((rev0 + 8))" "$rev1"

# ---------------------------------------------------------------------------
# 1,000 submissions and decisions; kill -9 of A in the middle
# ---------------------------------------------------------------------------

: >"$T/acked"
"$PY" "$SRC/tests/e2e/advisor_replicas_load.py" "http://127.0.0.1:$A_PORT" \
    "http://127.0.0.1:$B_PORT" one "$T/one.token" "$T/B.admin" "$UP" "$OPS" "$T/acked" \
    "$T/progress" >"$T/load.out" 2>&1 &
LOAD_PID=$!
PIDS="$PIDS $LOAD_PID"
while kill -0 "$LOAD_PID" 2>/dev/null; do
    { read -r done _ <"$T/progress"; } 2>/dev/null
    [ "${done:-0}" -ge $((OPS * 2 / 5)) ] && break
    sleep 0.02
done
kill -KILL "$A_PID"
t_kill=$(now_ms)
wait "$A_PID" 2>/dev/null
echo "# A killed (SIGKILL) after $(cat "$T/progress") (operations, failures so far)"
# While A is down, an agent proposes through B and a reviewer approves
# there: the proxy, which was following A, must enforce it within 2 s.
out=$("$CURL" -s -w '|%{http_code}' -H "Authorization: Bearer $(cat "$T/one.token")" \
    -H 'Content-Type: application/json' -d "$(rule down 127.0.0.1 "$UP" GET /down)" \
    "http://127.0.0.1:$B_PORT/v1/sandboxes/one/proposals")
expect_eq "submitted through B while A is down" 202 "$(code "$out")"
SID=$(jget "$out" '.accepted_chunk_ids[0]')
TOKEN=$(jget "$(adm B GET "/v1/sandboxes/one/proposals/$SID")" .review_token)
out=$(adm B POST "/v1/sandboxes/one/proposals/$SID/approve" "{\"review_token\":\"$TOKEN\"}")
t_down=$(now_ms)
expect_eq "approved through B while A is down" 200 "$(code "$out")"
REVD=$(jget "$(adm B GET /v1/sandboxes/one/policy)" .revision)
if wait_log "$T/P.log" "advisor revision $REVD loaded" 100; then
    echo "# with A down, the proxy loaded B's revision $REVD" \
        "$(($(log_ms "$T/P.log" "advisor revision $REVD loaded") - t_down)) ms after the approval" \
        "($(($(now_ms) - t_kill)) ms after the kill)"
    pass
else
    fail "with A down, the proxy did not load revision $REVD within 2 s"
fi
: >"$T/up.log"
out=$(via P "http://127.0.0.1:$UP/down")
expect_eq "the approval made while A was down is enforced" 200 "$(code "$out")"
if up_got "GET /down"; then pass; else fail "the upstream never got GET /down"; fi
start_advisor A --config "$T/quiet.yaml" --store "$PG_URL" --audit-key-file "$T/audit.key" \
    --port "$A_PORT" --token-file "$T/A.admin"
wait "$LOAD_PID"
expect_eq "the load client finished" 0 "$?"
echo "# load: $(cat "$T/load.out")"
nsub=$(grep -c '^submit ' "$T/acked")
napp=$(grep -c '^approve ' "$T/acked")
nrej=$(grep -c '^reject ' "$T/acked")
echo "# acknowledged: $nsub submissions, $napp approvals, $nrej rejections"
[ "$nsub" -gt 0 ] && [ "$napp" -gt 0 ] && [ "$nrej" -gt 0 ] && pass ||
    fail "the load acknowledged too little to judge ($nsub/$napp/$nrej)"
nfail=$(sed -n 's/.* \([0-9]*\) refused or failed/\1/p' "$T/load.out")
[ "${nfail:-0}" -gt 0 ] && pass || fail "the kill of A cost no request: it did not land in the load"

# The proxy converges on the last revision within 2 s.
REV=$(jget "$(adm B GET /v1/sandboxes/one/policy)" .revision)
expect_eq "one revision per approval" "$((napp + 12))" "$REV"
if wait_log "$T/P.log" "advisor revision $REV loaded" 100; then
    t_app=$(grep '^approve ' "$T/acked" | tail -n 1 | cut -d' ' -f3)
    conv=$(($(log_ms "$T/P.log" "advisor revision $REV loaded") - t_app))
    echo "# the proxy loaded the last revision ($REV) $conv ms after its approval was acknowledged"
    if [ "$conv" -lt 2000 ]; then pass; else fail "the proxy converged in $conv ms"; fi
else
    fail "the proxy did not load revision $REV within 2 s"
fi


# Every acknowledged write is in the store, read through either replica.
for R in A B; do
    adm "$R" GET "/v1/sandboxes/one/proposals?limit=5000" | sed 's/|[0-9]*$//' |
        "$JQ" -r '(.chunks // .proposals // .)[] | "\(.chunk_id // .id) \(.status)"' \
            >"$T/status.$R" 2>/dev/null
    lost=0
    while read -r kind id _; do
        st=$(grep -F "$id " "$T/status.$R" | head -n 1 | cut -d' ' -f2)
        case "$kind" in
        submit) [ -n "$st" ] || { lost=$((lost + 1)); echo "# lost submission $id"; } ;;
        approve) [ "$st" = approved ] || { lost=$((lost + 1)); echo "# lost approval $id ($st)"; } ;;
        reject) [ "$st" = rejected ] || { lost=$((lost + 1)); echo "# lost rejection $id ($st)"; } ;;
        esac
    done <"$T/acked"
    expect_eq "acknowledged writes lost, read through $R" 0 "$lost"
done

LAST=$(grep '^approve ' "$T/acked" | tail -n 1 | cut -d' ' -f2)
LPATH=$("$JQ" -r --arg id "$LAST" '(.chunks // .proposals // .)[] | select((.chunk_id // .id) == $id) |
    .proposed_rule.endpoints[0].rules[0].allow.path // empty' \
    <<<"$(body "$(adm B GET "/v1/sandboxes/one/proposals?limit=5000")")")
: >"$T/up.log"
out=$(via P "http://127.0.0.1:$UP${LPATH:-/nothing}")
expect_eq "the last approved request passes" 200 "$(code "$out")"
if up_got "GET ${LPATH:-/nothing}"; then pass; else fail "the upstream never got GET $LPATH"; fi
REJ=$(grep '^reject ' "$T/acked" | tail -n 1 | cut -d' ' -f2)
out=$(via P "http://127.0.0.1:$UP/never")
expect_eq "an unapproved request is still denied" 403 "$(code "$out")"
if up_got "GET /never"; then fail "the upstream got GET /never"; else pass; fi
[ -n "$REJ" ] && pass || fail "no rejection acknowledged"

# One chain: the export of either replica verifies with the one key and
# both end at the same head.
for R in A B; do
    "$BUILD/proviso" audit export --advisor "http://127.0.0.1:$(eval echo "\$${R}_PORT")" \
        --token-file "$T/$R.admin" >"$T/$R.jsonl"
    expect_eq "audit export from $R" 0 "$?"
    vout=$("$BUILD/proviso" audit verify "$T/$R.jsonl" --pubkey "$pubA" 2>&1)
    expect_eq "the chain verifies from $R" 0 "$?"
    echo "# $R: $vout"
done
headA=$(tail -n 1 "$T/A.jsonl" | "$JQ" -r 'select(.type == "record") | .seq' 2>/dev/null)
nA=$(grep -c '"type":"record"' "$T/A.jsonl")
nB=$(grep -c '"type":"record"' "$T/B.jsonl")
expect_eq "both exports hold the same records" "$nA" "$nB"
seqs=$("$JQ" -r 'select(.type == "record") | .seq' "$T/B.jsonl" | sort -n | uniq | wc -l)
expect_eq "no fork and no gap: one record per seq" "$nB" "$seqs"
: "$headA"
"$ADVISOR_BIN" --data-dir "$T/A.d" --store "$PG_URL" --audit-key-file "$T/audit.key" \
    --export-audit >"$T/direct.jsonl" 2>"$T/direct.err"
expect_eq "--export-audit with --audit-key-file" 0 "$?"
"$BUILD/proviso" audit verify "$T/direct.jsonl" --pubkey "$pubA" >/dev/null 2>&1
expect_eq "the direct export verifies with the shared key" 0 "$?"

if grep -F "change notes' connection is down" "$T/A.log" "$T/B.log"; then
    fail "a replica lost its change notes' connection"
else pass; fi
finish
