#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# replicas_attacks.sh - adversarial cases against two proviso-advisor
# replicas on one PostgreSQL (docs/scale-out.md#replicas), real processes
# on loopback: a throwaway cluster (tests/pg_lib.sh), replicas A and B with
# one audit key, curl as agent and reviewer.
#
#  - Settings turned off on one replica hold on the other at once: with
#    auto-approval switched to manual through A, a proposal submitted
#    through B right after stays pending (no stale setting).
#  - Submissions racing through A and B for one host, port and binary
#    leave exactly one pending chunk (the supersede check is not split).
#  - Two chunks approved at once through A and B: at least one wins, the
#    revision moves by the number of wins with one number each, and the
#    other (its token bound to the policy that moved) is approved with its
#    refetched token.
#  - The listener's connection killed (pg_terminate_backend): the replica
#    notices, reconnects and rereads; a sandbox created on A afterwards is
#    known to B and a /wait held on B wakes on A's approval.
#  - The listener's connection hung (its backend stopped, the socket
#    open): the replica notices within its liveness check and wakes the
#    long-polls from the new connection.
#  - One chain, one key, from the first record: a replica with another key
#    is refused on a chain that has no record but the first replica's
#    claim (AUDIT:KEY, written at start-up under the writer's lock), also
#    when both start at the same moment.
#  - The proxy's --advisor list refuses an URL without a host, one with a
#    query or fragment (the routes' paths are appended to it), one replica
#    under two spellings (a trailing slash, the host's case, the default
#    port) and more replicas than it can hold.
. "$(dirname "$0")/proxy_lib.sh"
. "$(dirname "$0")/advisor_proxy_lib.sh"
. "$SRC/tests/pg_lib.sh"

STOPPED=
pg_cluster "$BUILD/tests" '[ -n "$STOPPED" ] && kill -CONT $STOPPED 2>/dev/null; cleanup'


start_upstream_base /allowed
printf 'mapper_flush_interval_ms: 3600000\nworkers: 8\n' >"$T/quiet.yaml"
openssl genpkey -algorithm ed25519 -out "$T/audit.key" 2>/dev/null && chmod 600 "$T/audit.key" ||
    { echo "openssl cannot make an Ed25519 key"; exit 1; }

# ---------------------------------------------------------------------------
# the proxy's --advisor list: bad input refused at start-up
# ---------------------------------------------------------------------------

printf 'x%.0s' $(seq 1 40) >"$T/px.token"
# (a proxy that starts anyway is stopped by timeout: 124 is a failure)
for u in "http://" "http://:8080" "http://127.0.0.1:1/?x=1" "http://127.0.0.1:1/#x"; do
    timeout 5 "$PROXY_BIN" --advisor "http://127.0.0.1:1" --advisor "$u" --sandbox one \
        --token-file "$T/px.token" --port 0 --admin-port 0 >"$T/px1.log" 2>&1
    expect_eq "--advisor $u: refused" 2 "$?"
    expect_has "--advisor $u: named" "--advisor $u: an http:// or https:// URL" "$(cat "$T/px1.log")"
done
# one replica under two spellings is one replica: refused as given twice
for pair in "http://127.0.0.1:7/ http://127.0.0.1:7" "http://LOCALHOST:80 http://localhost" \
    "https://127.0.0.1 https://127.0.0.1:443/"; do
    set -- $pair
    timeout 5 "$PROXY_BIN" --advisor "$1" --advisor "$2" --sandbox one --token-file "$T/px.token" \
        --port 0 --admin-port 0 >"$T/px3.log" 2>&1
    expect_eq "--advisor $1 --advisor $2: refused" 2 "$?"
    expect_has "--advisor $1 --advisor $2: given twice" "given twice" "$(cat "$T/px3.log")"
done
set --
for i in 1 2 3 4 5 6 7 8 9; do set -- "$@" --advisor "http://127.0.0.1:$((40000 + i))"; done
timeout 5 "$PROXY_BIN" "$@" --sandbox one --token-file "$T/px.token" --port 0 --admin-port 0 \
    >"$T/px2.log" 2>&1
expect_eq "nine --advisor URLs (at most 8): refused" 2 "$?"
expect_has "the limit is named" "at most 8" "$(cat "$T/px2.log")"

start_advisor A --config "$T/quiet.yaml" --store "$PG_URL" --audit-key-file "$T/audit.key"
start_advisor B --config "$T/quiet.yaml" --store "$PG_URL" --audit-key-file "$T/audit.key"
sandbox A one "$T/base.yaml"
out=$(adm A PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}')
expect_eq "proposals on" 200 "$(code "$out")"

# submit R NAME PATH: a one-rule proposal through replica R; chunk id in $SID
submit() {
    out=$("$CURL" -s -w '|%{http_code}' -H "Authorization: Bearer $(cat "$T/one.token")" \
        -H 'Content-Type: application/json' -d "$(rule "$2" 127.0.0.1 "$UP" GET "$3")" \
        "http://127.0.0.1:$(eval echo "\$${1}_PORT")/v1/sandboxes/one/proposals")
    SID=$(jget "$out" '.accepted_chunk_ids[0]')
}
status_of() { jget "$(adm "$1" GET "/v1/sandboxes/one/proposals/$2")" .status; }
wait_status() { # R ID: the status once it is no longer being evaluated
    i=0
    while [ $i -lt 200 ]; do
        s=$(status_of "$1" "$2")
        [ "$s" = approved ] || [ "$s" = pending ] && [ -n "$(jget "$(adm "$1" GET \
            "/v1/sandboxes/one/proposals/$2")" '.validation_result // empty')" ] && break
        sleep 0.05
        i=$((i + 1))
    done
    printf '%s' "$s"
}

# ---------------------------------------------------------------------------
# settings: auto-approval off through A, a proposal through B right after
# ---------------------------------------------------------------------------

out=$(adm A PUT /v1/sandboxes/one/settings/proposal_approval_mode '{"value":"auto"}')
expect_eq "auto mode through A" 200 "$(code "$out")"
submit B auto1 /auto1
expect_eq "control: auto-approved through B" approved "$(wait_status B "$SID")"
for r in 1 2 3; do
    out=$(adm A PUT /v1/sandboxes/one/settings/proposal_approval_mode '{"value":"manual"}')
    expect_eq "manual mode through A ($r)" 200 "$(code "$out")"
    submit B "man$r" "/man$r"
    expect_eq "submitted through B right after ($r): not approved" pending "$(wait_status B "$SID")"
    out=$(adm B POST "/v1/sandboxes/one/proposals/$SID/reject" '{"reason":"test"}')
    out=$(adm B PUT /v1/sandboxes/one/settings/proposal_approval_mode '{"value":"auto"}')
    submit A "auto$r" "/autoa$r"
    expect_eq "auto through B, submitted through A ($r): approved" approved "$(wait_status A "$SID")"
done
out=$(adm A PUT /v1/sandboxes/one/settings/proposal_approval_mode '{"value":"manual"}')

# ---------------------------------------------------------------------------
# supersede race: one host, port and binary through A and B at once
# ---------------------------------------------------------------------------

for r in 1 2 3 4 5 6; do
    submit A "ra$r" "/race$r/a" &
    pa=$!
    submit B "rb$r" "/race$r/b" &
    pb=$!
    wait "$pa" "$pb"
    n=$(body "$(adm B GET "/v1/sandboxes/one/proposals?limit=5000")" |
        "$JQ" '[(.chunks // .proposals // .)[] | select(.status == "pending")] | length')
    expect_eq "race $r: one pending chunk for the key" 1 "$n"
done

# ---------------------------------------------------------------------------
# two chunks approved at once, one through A and one through B: both win,
# with two revisions, neither number twice and none skipped
# ---------------------------------------------------------------------------

# (a token is bound to the policy it was reviewed against: of two chunks
# approved at once, the second to reach the writer's lock finds the policy
# moved and answers 412 or 409 - refetch; never two wins on one revision)
for r in 1 2 3 4; do
    submit A "pa$r" "/pair$r"
    C1=$SID
    out=$("$CURL" -s -w '|%{http_code}' -H "Authorization: Bearer $(cat "$T/one.token")" \
        -H 'Content-Type: application/json' -d "$(rule "pb$r" 127.0.0.1 $((UP + r)) GET "/pair$r")" \
        "http://127.0.0.1:$B_PORT/v1/sandboxes/one/proposals")
    C2=$(jget "$out" '.accepted_chunk_ids[0]')
    t1=$(jget "$(adm A GET "/v1/sandboxes/one/proposals/$C1")" .review_token)
    t2=$(jget "$(adm B GET "/v1/sandboxes/one/proposals/$C2")" .review_token)
    rev0=$(jget "$(adm A GET /v1/sandboxes/one/policy)" .revision)
    adm A POST "/v1/sandboxes/one/proposals/$C1/approve" "{\"review_token\":\"$t1\"}" >"$T/p.A" &
    pa=$!
    adm B POST "/v1/sandboxes/one/proposals/$C2/approve" "{\"review_token\":\"$t2\"}" >"$T/p.B" &
    pb=$!
    wait "$pa" "$pb"
    codes="$(code "$(cat "$T/p.A")") $(code "$(cat "$T/p.B")")"
    wins=0
    for c in $codes; do [ "$c" = 200 ] && wins=$((wins + 1)); done
    [ "$wins" -ge 1 ] && pass || fail "pair $r: no approval won ($codes)"
    [ "$wins" -lt 2 ] || echo "# pair $r: both approved"
    [ "$wins" -eq 2 ] || echo "# pair $r: $codes: $(body "$(cat "$T/p.A")" | cut -c1-120) / $(body "$(cat "$T/p.B")" | cut -c1-120)"
    expect_eq "pair $r: the policy moved by the approvals that won" "$((rev0 + wins))" \
        "$(jget "$(adm B GET /v1/sandboxes/one/policy)" .revision)"
    r1=$(jget "$(adm A GET "/v1/sandboxes/one/proposals/$C1")" '.approved_revision // empty')
    r2=$(jget "$(adm B GET "/v1/sandboxes/one/proposals/$C2")" '.approved_revision // empty')
    want=$(seq $((rev0 + 1)) $((rev0 + wins)) | tr '\n' ' ' | sed 's/ $//')
    expect_eq "pair $r: one revision number per win, none skipped" "$want" \
        "$(printf '%s\n%s\n' "$r1" "$r2" | grep -vx '0\|' | sort -n | tr '\n' ' ' | sed 's/ $//')"
    # the loser is decided by a second approval with its refetched token
    for C in $C1 $C2; do
        if [ "$(status_of A "$C")" = pending ]; then
            # 412 refreshes the evaluation (docs/advisor.md, Approve): refetch
            for _ in 1 2 3; do
                tk=$(jget "$(adm A GET "/v1/sandboxes/one/proposals/$C")" .review_token)
                out=$(adm A POST "/v1/sandboxes/one/proposals/$C/approve" \
                    "{\"review_token\":\"$tk\"}")
                [ "$(code "$out")" = 412 ] || break
            done
            expect_eq "pair $r: the refetched token approves the other" 200 "$(code "$out")"
        fi
    done
done

# ---------------------------------------------------------------------------
# the listener's connection killed: B notices and rereads
# ---------------------------------------------------------------------------

# A listener's backend shows its last statement: LISTEN, or the liveness
# ping it sends after 3 s of quiet ("SELECT 1", which nothing else sends);
# under load the ping is often the last.
LISTENERS="FROM pg_stat_activity WHERE query LIKE 'LISTEN %' OR query = 'SELECT 1'"
listener_pids() { pg_q "SELECT pid $LISTENERS"; }
nl=$(listener_pids | wc -l)
expect_eq "two listeners (A and B)" 2 "$nl"
pg_q "SELECT pg_terminate_backend(pid) $LISTENERS" >/dev/null
sandbox A late "$T/base.yaml"
token_on "$B_PORT" late 100 0.02
expect_eq "listener killed: B accepts a sandbox created on A within 2 s" 200 "$c"
i=0
while [ "$(listener_pids | wc -l)" -lt 2 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
expect_eq "both listeners are back" 2 "$(listener_pids | wc -l)"

# wake_check LABEL MS: a /wait held on B answers within MS of an approval on A
wake_check() {
    submit A "w$1" "/wake$1"
    tok=$(jget "$(adm A GET "/v1/sandboxes/one/proposals/$SID")" .review_token)
    "$CURL" -s -o "$T/wait.out" -H "Authorization: Bearer $(cat "$T/one.token")" \
        "http://127.0.0.1:$B_PORT/v1/sandboxes/one/proposals/$SID/wait?timeout=25" &
    wp=$!
    sleep 0.3
    out=$(adm A POST "/v1/sandboxes/one/proposals/$SID/approve" "{\"review_token\":\"$tok\"}")
    t0=$(now_ms)
    wait "$wp"
    dt=$(($(now_ms) - t0))
    echo "# $1: the /wait on B answered $dt ms after A's approval"
    expect_eq "$1: the wait saw the approval" approved "$("$JQ" -r .status "$T/wait.out")"
    if [ "$dt" -lt "$2" ]; then pass; else fail "$1: B woke $dt ms after A's approval"; fi
}
wake_check killed 2000

# ---------------------------------------------------------------------------
# the listener's connection hung: its backend stopped, the socket open
# ---------------------------------------------------------------------------

# Both replicas' listener backends are stopped (SIGSTOP): their sockets
# stay open and say nothing. A replica pings after 3 s of quiet and counts
# an answer missing for 2 s as a lost connection (store_pg_repl.c), so it
# reconnects and rereads within about 5 s; before, the notes stopped for
# good: long-polls woke only on their timeout and a sandbox created on A
# stayed unknown to B.
STOPPED=$(listener_pids | tr '\n' ' ')
kill -STOP $STOPPED
sleep 0.5
sandbox A quiet "$T/base.yaml"
wake_check hung 7000
i=0
while :; do
    c=$("$CURL" -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$T/quiet.token")" \
        "http://127.0.0.1:$B_PORT/v1/sandboxes/quiet/policy")
    [ "$c" = 200 ] || [ $i -ge 100 ] && break
    i=$((i + 1))
    sleep 0.05
done
expect_eq "listener hung: B accepts a sandbox created on A meanwhile" 200 "$c"
expect_has "B says its notes' connection was down" "change notes' connection is down" \
    "$(cat "$T/B.log")"
expect_has "and that it is back" "change notes' connection is back" "$(cat "$T/B.log")"
kill -CONT $STOPPED
STOPPED=

# ---------------------------------------------------------------------------
# two keys on a chain with no record yet: the second replica must not sign
# records into the chain the first one signs
# ---------------------------------------------------------------------------

openssl genpkey -algorithm ed25519 -out "$T/other.key" 2>/dev/null && chmod 600 "$T/other.key"
pg_as "$PG_BIN/createdb" -h "$PG_DIR/sock" -U proviso fresh || fail "createdb fresh"
FRESH="postgresql:///fresh?host=$PG_DIR/sock&user=proviso"
start_advisor X --config "$T/quiet.yaml" --store "$FRESH" --audit-key-file "$T/audit.key"
"$ADVISOR_BIN" --data-dir "$T/Y.d" --port 0 --store "$FRESH" --audit-key-file "$T/other.key" \
    --config "$T/quiet.yaml" --token-file "$T/A.admin" >"$T/Y.log" 2>&1 &
Y_PID=$!
PIDS="$PIDS $Y_PID"
i=0
while kill -0 "$Y_PID" 2>/dev/null && ! grep -q 'listening on 127.0.0.1 port' "$T/Y.log" &&
    [ $i -lt 200 ]; do
    sleep 0.05
    i=$((i + 1))
done
if kill -0 "$Y_PID" 2>/dev/null; then
    Y_PORT=$(sed -n 's/.*listening on 127.0.0.1 port \([0-9]*\).*/\1/p' "$T/Y.log" | head -n 1)
    cp "$T/A.admin" "$T/Y.admin"
    out=$(adm Y POST /v1/sandboxes "$("$JQ" -n --rawfile p "$T/base.yaml" '{name:"y1",policy:$p}')")
    expect_eq "another key on an empty chain: refused at start-up (Y wrote $(code "$out"))" \
        refused running
else
    wait "$Y_PID"
    expect_eq "another key on an empty chain: refused at start-up" 2 "$?"
fi
expect_has "the refusal says why" "another key" "$(cat "$T/Y.log")"
sandbox X x1 "$T/base.yaml"
pubX=$("$BUILD/proviso" audit pubkey --advisor "http://127.0.0.1:$X_PORT" --token-file "$T/X.admin")
"$BUILD/proviso" audit export --advisor "http://127.0.0.1:$X_PORT" --token-file "$T/X.admin" \
    >"$T/X.jsonl"
"$BUILD/proviso" audit verify "$T/X.jsonl" --pubkey "$pubX" >"$T/X.verify" 2>&1
expect_eq "the fresh chain verifies with X's key" 0 "$?"
expect_eq "its first record names the key" "AUDIT:KEY $pubX" \
    "$("$JQ" -r 'select(.type == "record" and .seq == 1) | "\(.kind) \(.data.public_key)"' "$T/X.jsonl")"

# Two keys starting at the same moment on another empty chain: one runs.
pg_as "$PG_BIN/createdb" -h "$PG_DIR/sock" -U proviso fresh2 || fail "createdb fresh2"
FRESH2="postgresql:///fresh2?host=$PG_DIR/sock&user=proviso"
for k in audit other; do
    "$ADVISOR_BIN" --data-dir "$T/R$k.d" --port 0 --store "$FRESH2" --audit-key-file "$T/$k.key" \
        --config "$T/quiet.yaml" --token-file "$T/A.admin" >"$T/R$k.log" 2>&1 &
    eval "R_$k=$!"
    PIDS="$PIDS $!"
done
i=0
while [ $i -lt 200 ]; do
    [ "$(grep -l 'listening on 127.0.0.1 port\|refusing to start' "$T/Raudit.log" "$T/Rother.log" 2>/dev/null |
        wc -l)" -eq 2 ] && break
    sleep 0.05
    i=$((i + 1))
done
sleep 0.3
n=0
for p in "$R_audit" "$R_other"; do kill -0 "$p" 2>/dev/null && n=$((n + 1)); done
expect_eq "two keys started at once on an empty chain: one runs" 1 "$n"
expect_eq "and the other says why" 1 "$(grep -l 'signed by another key' "$T/Raudit.log" \
    "$T/Rother.log" | wc -l)"
finish
