#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# advisor_longpoll.sh - agents cannot starve the proxies' policy sync
# (docs/advisor.md#wait, docs/security.md): with sandbox one's token holding
# 64 /wait long-polls (half from curl, half from sockets that never read)
# and the inbox holding event waits, another sandbox's /wait, a policy
# long-poll and the event stream still answer; a proxy started into that
# load keeps its policy sync, and a reviewer's undo or reject of an
# approved chunk reaches both proxies of the sandbox within 2 s, even with
# the agent holding policy long-polls with the same token; one sandbox
# cannot take more than its share of /wait slots (429 with Retry-After),
# and the slots of clients that went away are free again within a second;
# the agents of other sandboxes cannot fill the policy budget either.
. "$(dirname "$0")/proxy_lib.sh"

. "$(dirname "$0")/advisor_proxy_lib.sh"

cat >"$T/base.yaml" <<EOF
version: 1
network_policies:
  api:
    endpoints:
      - host: 127.0.0.1
        port: 9
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /allowed}
    binaries:
      - path: /usr/bin/curl
EOF

printf 'mapper_flush_interval_ms: 3600000\n' >"$T/quiet.yaml"
start_advisor ADV --config "$T/quiet.yaml"
A=http://127.0.0.1:$ADV_PORT
for s in one two three; do
    sandbox ADV "$s" "$T/base.yaml"
done
out=$(adm ADV PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}')
expect_eq "global setting on" 200 "$(code "$out")"

# sbcall NAME METHOD PATH [JSON]: body then "|CODE"
sbcall() {
    tok=$(cat "$T/$1.token")
    if [ $# -ge 4 ]; then
        "$CURL" -s --max-time 30 -X "$2" -H "Authorization: Bearer $tok" \
            -H 'Content-Type: application/json' -d "$4" -w '|%{http_code}' "$A$3"
    else
        "$CURL" -s --max-time 30 -X "$2" -H "Authorization: Bearer $tok" -w '|%{http_code}' "$A$3"
    fi
}
# submit SANDBOX RULE PATH: a pending chunk; prints its id
submit() {
    o=$(sbcall "$1" POST "/v1/sandboxes/$1/proposals" "$(rule "$2" 127.0.0.1 9 GET "$3")")
    jget "$o" '.accepted_chunk_ids[0]'
}

# approve SANDBOX RULE PATH REVISION: submit and approve; the id in ID.
# The approvals come first: a new revision supersedes the chunks pending
# against the old one.
approve() {
    ID=$(submit "$1" "$2" "$3")
    o=$(adm ADV GET "/v1/sandboxes/$1/proposals/$ID")
    o=$(adm ADV POST "/v1/sandboxes/$1/proposals/$ID/approve" \
        "{\"review_token\":\"$(jget "$o" .review_token)\"}")
    expect_eq "chunk $2 approved" "200 $4" "$(code "$o") $(jget "$o" .policy_version)"
}
approve one approved_b /b 2
B=$ID
approve one approved_c /c 3
C=$ID
P1=$(submit one pending_one /p1)
P2=$(submit two pending_two /p2)
P3=$(submit three pending_three /p3)
if [ -z "$P1" ] || [ -z "$P2" ] || [ -z "$P3" ]; then
    fail "pending chunks: '$P1' '$P2' '$P3'"
fi

# ---------------------------------------------------------------------------
# the flood: sandbox one's token holds 64 /wait long-polls, the inbox 4
# event waits
# ---------------------------------------------------------------------------

TOK1=$(cat "$T/one.token")
HOLDERS=""
for _ in $(seq 32); do
    "$CURL" -s -o /dev/null --max-time 400 -H "Authorization: Bearer $TOK1" \
        "$A/v1/sandboxes/one/proposals/$P1/wait?timeout=300" &
    HOLDERS="$HOLDERS $!"
done
PIDS="$PIDS $HOLDERS"
sleep 0.5
# never_read PATH TOKEN: a request on a socket that is kept open and never read
never_read() {
    exec {fd}<>"/dev/tcp/127.0.0.1/$ADV_PORT"
    printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n' "$1" "$2" >&"$fd"
}
for _ in $(seq 32); do
    never_read "/v1/sandboxes/one/proposals/$P1/wait?timeout=300" "$TOK1"
done
ev=$(adm ADV GET '/v1/events?limit=10000')
SINCE=$(jget "$ev" .next_since)
for _ in $(seq 4); do
    never_read "/v1/events?since=$((SINCE + 1000000))&wait=60" "$(cat "$T/ADV.admin")"
done
sleep 1

# ---------------------------------------------------------------------------
# (a) the others still get their long-polls
# ---------------------------------------------------------------------------

out=$(sbcall two GET "/v1/sandboxes/two/proposals/$P2/wait?timeout=1")
expect_eq "(a) another sandbox's /wait holds and times out" "200 pending true" \
    "$(code "$out") $(jget "$out" .status) $(jget "$out" .timed_out)"
out=$(sbcall two GET "/v1/sandboxes/two/policy?after=1&timeout=1")
expect_eq "(a) a policy long-poll answers" "200 1" "$(code "$out") $(jget "$out" .revision)"
out=$(adm ADV GET "/v1/events?since=$((SINCE + 1000000))&wait=1")
expect_eq "(a) the event stream answers" "200 0" "$(code "$out") $(jget "$out" '.events | length')"

# ---------------------------------------------------------------------------
# (b) a proxy that (re)connects now keeps its policy sync, and an undo
# reaches it within 2 s
# ---------------------------------------------------------------------------

# The agent holds the proxy's token too: its own policy long-polls cannot
# crowd the proxy out (the newest two of a sandbox hold, an older one
# answers at once).
AGENT_POLLS=""
for _ in $(seq 6); do
    "$CURL" -s -o /dev/null --max-time 400 -H "Authorization: Bearer $TOK1" \
        "$A/v1/sandboxes/one/policy?after=3&timeout=300" &
    AGENT_POLLS="$AGENT_POLLS $!"
    sleep 0.1
done
PIDS="$PIDS $AGENT_POLLS"
i=0
while [ "$(grep -c ' verdict:superseded ' "$T/ADV.log")" -lt 4 ] && [ $i -lt 100 ]; do
    sleep 0.05
    i=$((i + 1))
done
held=0
for p in $AGENT_POLLS; do
    kill -0 "$p" 2>/dev/null && held=$((held + 1))
done
expect_eq "(b) a sandbox token holds two policy long-polls" 2 "$held"
expect_eq "(b) the older ones were superseded" 4 "$(grep -c ' verdict:superseded ' "$T/ADV.log")"
start_aproxy PX ADV one
start_aproxy PY ADV one
for px in PX PY; do
    wait_log "$T/$px.log" "advisor revision 3 loaded" 500 ||
        fail "(b) proxy $px never loaded revision 3: $(tail -5 "$T/$px.log")"
done
# Long enough for a growing back-off to pass 2 s.
sleep 4
# revoked REVISION WHAT: both proxies load REVISION within 2 s of t0
revoked() {
    for px in PX PY; do
        if wait_log "$T/$px.log" "advisor revision $1 loaded" 150; then
            ms=$((($(date +%s%N) - t0) / 1000000))
            echo "$2 reached proxy $px in $ms ms"
            if [ "$ms" -le 2000 ]; then pass; else fail "(b) $2: $px took $ms ms (> 2000)"; fi
        else
            fail "(b) $2 never reached proxy $px: $(tail -5 "$T/$px.log")"
        fi
    done
}
t0=$(date +%s%N)
out=$(adm ADV POST "/v1/sandboxes/one/proposals/$B/undo")
expect_eq "(b) undo" "200 4" "$(code "$out") $(jget "$out" .policy_version)"
revoked 4 undo
t0=$(date +%s%N)
out=$(adm ADV POST "/v1/sandboxes/one/proposals/$C/reject" '{"reason":"revoked"}')
expect_eq "(b) reject an approved chunk" "200 5" "$(code "$out") $(jget "$out" .policy_version)"
revoked 5 reject
for px in PX PY; do
    if grep -q "advisor answered 503" "$T/$px.log"; then
        fail "(b) $px's policy sync was refused: $(grep -m1 'advisor answered' "$T/$px.log")"
    else
        pass
    fi
done
ev=$(adm ADV GET "/v1/events?since=$SINCE&limit=10000")
expect_eq "(b) CONFIG:LOADED version:v5" 2 "$(body "$ev" | "$JQ" \
    '[.events[] | select(.kind == "CONFIG:LOADED" and .sandbox == "one" and (.line | contains("version:v5")))] | length')"

# ---------------------------------------------------------------------------
# (c) one sandbox's share of /wait, and slots freed when clients go away
# (sandbox three: the undo decided sandbox one's waits already)
# ---------------------------------------------------------------------------

TOK3=$(cat "$T/three.token")
THREE=""
for _ in $(seq 8); do
    "$CURL" -s -o /dev/null --max-time 400 -H "Authorization: Bearer $TOK3" \
        "$A/v1/sandboxes/three/proposals/$P3/wait?timeout=300" &
    THREE="$THREE $!"
done
PIDS="$PIDS $THREE"
sleep 1
"$CURL" -s -D "$T/h3" -o "$T/b3" --max-time 30 -H "Authorization: Bearer $TOK3" \
    "$A/v1/sandboxes/three/proposals/$P3/wait?timeout=1"
expect_eq "(c) past its share: 429" "429 too_many_waits" \
    "$(sed -n '1s/^HTTP\/1.1 \([0-9]*\).*/\1/p' "$T/h3") $("$JQ" -r .error "$T/b3")"
expect_has "(c) with Retry-After" "retry-after: 1" "$(tr -d '\r' <"$T/h3" | tr '[:upper:]' '[:lower:]')"
gone_before=$(grep -c ' verdict:client_gone ' "$T/ADV.log")
# shellcheck disable=SC2086
kill $HOLDERS $THREE $AGENT_POLLS 2>/dev/null
sleep 1
out=$(sbcall three GET "/v1/sandboxes/three/proposals/$P3/wait?timeout=1")
expect_eq "(c) killed clients freed sandbox three's slots" "200 pending true" \
    "$(code "$out") $(jget "$out" .status) $(jget "$out" .timed_out)"
gone=$(($(grep -c ' verdict:client_gone ' "$T/ADV.log") - gone_before))
if [ "$gone" -ge 4 ]; then pass; else fail "(c) only $gone long-polls ended as client_gone"; fi

# ---------------------------------------------------------------------------
# (d) the agents of other sandboxes cannot fill the policy budget: an
# advisor with 8 workers (4 policy slots), the agents of sandboxes a1 and
# a2 holding two policy long-polls each; sandbox p's proxy still syncs
# ---------------------------------------------------------------------------

printf 'workers: 8\nmapper_flush_interval_ms: 3600000\n' >"$T/small.yaml"
start_advisor SMALL --config "$T/small.yaml"
S=http://127.0.0.1:$SMALL_PORT
for s in a1 a2 p; do
    sandbox SMALL "$s" "$T/base.yaml"
done
SMALL_POLLS=""
for s in a1 a2; do
    for _ in 1 2; do
        "$CURL" -s -o /dev/null --max-time 400 -H "Authorization: Bearer $(cat "$T/$s.token")" \
            "$S/v1/sandboxes/$s/policy?after=1&timeout=300" &
        SMALL_POLLS="$SMALL_POLLS $!"
    done
done
PIDS="$PIDS $SMALL_POLLS"
sleep 1
start_aproxy PZ SMALL p
wait_log "$T/PZ.log" "advisor revision 1 loaded" 500 ||
    fail "(d) proxy of p never loaded revision 1: $(tail -5 "$T/PZ.log")"
sleep 1
t0=$(date +%s%N)
sed 's#/allowed#/narrower#' "$T/base.yaml" >"$T/narrower.yaml"
# shellcheck disable=SC2016
out=$(adm SMALL PUT /v1/sandboxes/p/policy "$("$JQ" -n --rawfile p "$T/narrower.yaml" '{policy: $p}')")
expect_eq "(d) new base policy" 200 "$(code "$out")"
if wait_log "$T/PZ.log" "advisor revision 2 loaded" 150; then
    ms=$((($(date +%s%N) - t0) / 1000000))
    echo "a new revision reached proxy PZ in $ms ms"
    if [ "$ms" -le 2000 ]; then pass; else fail "(d) revision 2 took $ms ms (> 2000)"; fi
else
    fail "(d) revision 2 never reached proxy PZ: $(tail -5 "$T/PZ.log")"
fi
expect_not "(d) PZ's policy sync was never refused" "advisor answered 503" "$(cat "$T/PZ.log")"
expect_eq "(d) one agent long-poll of a1 or a2 gave way" 1 \
    "$(grep -c ' verdict:superseded ' "$T/SMALL.log")"
# shellcheck disable=SC2086
kill $SMALL_POLLS 2>/dev/null

finish
