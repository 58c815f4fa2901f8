#!/bin/sh
# advisor_stress.sh - concurrency and durability of the advisor's ledger.
#
# 1. Concurrency: 50 submissions and 30 reviewer decisions race on one
#    sandbox in auto mode. Afterwards (checked, not assumed): every accepted
#    id exists; the effective policy holds exactly the approved chunks'
#    hosts; revisions are numbered without gaps; every APPROVED or REMOVED
#    event names a revision that exists and holds what it says; the
#    sandbox's proxy (advisor mode) has loaded the last revision, its hash is
#    the advisor's, and its policy file is the advisor's policy byte for byte.
# 2. Durability: a stream of submissions, kill -9 mid-stream; after a
#    restart every acknowledged (202) chunk is there and the store opens.
. "$(dirname "$0")/advisor_lib.sh"

POLICY='version: 1
network_policies:
  base:
    name: base
    endpoints: [{host: base.example.com, port: 443}]
    binaries: [{path: /usr/bin/curl}]
'
CREDS='credentials:
  - {name: gh, type: github, target_hosts: ["*.cred.example"]}
'
start_advisor "$WORK/data" || exit 1
create_sandbox sb "$POLICY" "$CREDS"
T=$SB_TOKEN
api PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}'
api PUT /v1/sandboxes/sb/settings/proposal_approval_mode '{"value":"auto"}'

# The sandbox's proxy follows the advisor through the whole race.
PROXY_BIN=$PV_BUILDDIR/proviso-proxy
printf '%s\n' "$T" >"$WORK/sb.token"
"$PROXY_BIN" --advisor "$ADV" --sandbox sb --token-file "$WORK/sb.token" \
    --skill-dir "$WORK/skills" --port 0 --admin-port 0 --port-file "$WORK/px.port" \
    --data-dir "$WORK/px" --log "$WORK/px.log" 2>"$WORK/px.err" &
PX_PID=$!
i=0
while [ ! -s "$WORK/px.port" ] && [ $i -lt 300 ]; do sleep 0.02; i=$((i + 1)); done
[ -s "$WORK/px.port" ] && ok "the sandbox's proxy started" || { bad "proxy did not start"; cat "$WORK/px.err"; }

submit() { # N: empty-delta (auto) when N is even, credentialed (pending) when odd
    if [ $(($1 % 2)) -eq 0 ]; then host="h$1.example.com"; else host="h$1.cred.example"; fi
    curl -s -o "$WORK/sub.$1" -H "Authorization: Bearer $T" -H 'Content-Type: application/json' \
        --data-binary "$(proposal "r$1" "$host" 443 GET /x)" "$ADV/v1/sandboxes/sb/proposals"
}

# Ten pending (credentialed) chunks for the reviewers to race on.
i=1
while [ $i -le 19 ]; do submit $i; i=$((i + 2)); done
api GET '/v1/sandboxes/sb/proposals?status=pending'
printf '%s' "$BODY" | jq -r '.chunks[] | "\(.chunk_id) \(.review_token)"' >"$WORK/pending"
eq "ten pending chunks to decide" "$(wc -l <"$WORK/pending" | tr -d ' ')" 10

decide() { # ID TOKEN K: approve, reject, approve-then-undo by K
    case $(($3 % 3)) in
    0) curl -s -o /dev/null -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
        --data-binary "{\"review_token\":\"$2\"}" "$ADV/v1/sandboxes/sb/proposals/$1/approve" ;;
    1) curl -s -o /dev/null -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
        --data-binary '{"reason":"no"}' "$ADV/v1/sandboxes/sb/proposals/$1/reject" ;;
    2) curl -s -o /dev/null -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
        --data-binary "{\"review_token\":\"$2\"}" "$ADV/v1/sandboxes/sb/proposals/$1/approve"
       curl -s -o /dev/null -H "Authorization: Bearer $ADMIN" -X POST \
        "$ADV/v1/sandboxes/sb/proposals/$1/undo" ;;
    esac
}

k=0
i=20
pids=
while [ $i -lt 70 ]; do submit $i & pids="$pids $!"; i=$((i + 1)); done
while read -r id tok; do
    decide "$id" "$tok" $k &
    pids="$pids $!"
    decide "$id" "$tok" $((k + 1)) &
    pids="$pids $!"
    decide "$id" "$tok" $((k + 2)) &
    pids="$pids $!"
    k=$((k + 1))
done <"$WORK/pending"
# Not a bare wait: the advisor is a child of this shell too.
for p in $pids; do wait "$p"; done

acc=0
for f in "$WORK"/sub.*; do
    n=$(jq -r '.accepted_chunks // 0' "$f")
    acc=$((acc + n))
done
eq "all 60 submissions accepted" "$acc" 60

api GET /v1/sandboxes/sb/proposals
printf '%s' "$BODY" >"$WORK/chunks.json"
api GET /v1/sandboxes/sb/policy
printf '%s' "$BODY" | jq -r .policy_yaml >"$WORK/policy.yaml"
REV=$(jf .revision)
bad_state=0
for row in $(jq -r '.chunks[] | "\(.host)|\(.status)"' "$WORK/chunks.json"); do
    host=${row%%|*}
    status=${row#*|}
    if grep -q "host: $host\$" "$WORK/policy.yaml"; then in=yes; else in=no; fi
    if [ "$status" = approved ] && [ $in = no ]; then bad_state=$((bad_state + 1)); echo "# approved but absent: $host"; fi
    if [ "$status" != approved ] && [ $in = yes ]; then bad_state=$((bad_state + 1)); echo "# $status but present: $host"; fi
done
eq "ledger and policy agree for every chunk" "$bad_state" 0
eq "all 25 auto-approvable chunks approved" \
    "$(jq '[.chunks[] | select(.host | endswith(".example.com")) | select(.status == "approved")] | length' "$WORK/chunks.json")" 25

# Each APPROVED/REMOVED event names its own revision.
api GET "/v1/events?limit=10000"
printf '%s' "$BODY" >"$WORK/events.json"
versions=$(jq -r '[.events[] | select(.kind == "CONFIG:APPROVED" or .kind == "CONFIG:REMOVED") | .record.version] | sort | unique | length' "$WORK/events.json")
changes=$(jq -r '[.events[] | select(.kind == "CONFIG:APPROVED" or .kind == "CONFIG:REMOVED") | .record.version] | length' "$WORK/events.json")
eq "every policy change has its own revision" "$versions" "$changes"
eq "revisions are numbered without gaps" "$REV" $((changes + 1))
api GET '/v1/sandboxes/sb/proposals?status=approved'
eq "approved count = approvals - removals" "$(jf '.chunks | length')" \
    "$(jq '([.events[] | select(.kind == "CONFIG:APPROVED")] | length) - ([.events[] | select(.kind == "CONFIG:REMOVED")] | length)' "$WORK/events.json")"

# The proxy's loaded policy, checked after the race: the advisor's record
# of what it loaded, the proxy's own log line and its policy file.
i=0
while [ $i -lt 250 ]; do
    api GET /v1/sandboxes/sb
    [ "$(jf .loaded_revision)" = "$REV" ] && break
    sleep 0.04
    i=$((i + 1))
done
eq "the proxy loaded the last revision" "$(jf .loaded_revision)" "$REV"
api GET /v1/sandboxes/sb/policy
HASH=$(jf .hash)
grep -q "advisor revision $REV loaded (hash $HASH)" "$WORK/px.log" &&
    ok "the proxy's own hash of revision $REV is the advisor's" ||
    bad "no 'advisor revision $REV loaded (hash $HASH)' in the proxy's log"
printf "%s" "$BODY" | jq -j .policy_yaml >"$WORK/adv-policy.yaml"
cmp -s "$WORK/adv-policy.yaml" "$WORK/px/advisor-policy.yaml" &&
    ok "the proxy enforces the advisor's policy byte for byte" ||
    bad "the proxy's policy file differs from revision $REV"
api GET "/v1/events?limit=10000"
eq "CONFIG:LOADED recorded for revision $REV with its hash" \
    "$(printf '%s' "$BODY" | jq -r --argjson r "$REV" '[.events[] | select(.kind == "CONFIG:LOADED" and .record.version == $r)][-1].record.hash')" \
    "$HASH"
kill "$PX_PID" 2>/dev/null
wait "$PX_PID" 2>/dev/null

# --- durability: kill -9 mid-stream ---------------------------------------------
: >"$WORK/acked"
(
    n=1000
    while :; do
        code=$(curl -s -o "$WORK/d.out" -w '%{http_code}' -H "Authorization: Bearer $T" \
            -H 'Content-Type: application/json' \
            --data-binary "$(proposal "d$n" "d$n.cred.example" 443 GET /x)" \
            "$ADV/v1/sandboxes/sb/proposals") || break
        [ "$code" = 202 ] || break
        jq -r '.accepted_chunk_ids[0]' "$WORK/d.out" >>"$WORK/acked"
        n=$((n + 1))
    done
) &
STREAM=$!
sleep 4
kill -KILL "$ADV_PID"
wait "$ADV_PID" 2>/dev/null
ADV_PID=
wait "$STREAM" 2>/dev/null
acked=$(wc -l <"$WORK/acked" | tr -d ' ')
[ "$acked" -ge 3 ] && ok "stream acknowledged $acked chunks before kill -9" || bad "only $acked acknowledged"
start_advisor "$WORK/data" || exit 1
ok "the store opens after kill -9"
missing=0
while read -r id; do
    api GET "/v1/sandboxes/sb/proposals/$id"
    [ "$STATUS" = 200 ] || missing=$((missing + 1))
done <"$WORK/acked"
eq "no acknowledged chunk lost" "$missing" 0
api POST /v1/sandboxes/sb/proposals "$(proposal after after.example.com 443 GET /x)" "$T"
eq "the advisor works after the crash" "$(jf .accepted_chunks)" 1
# The audit chain over the races (group commits, savepoints) and the crash.
PUB=$("$PV_BUILDDIR/proviso" audit pubkey --advisor "$ADV" --token-file "$ADMIN_FILE")
"$PV_BUILDDIR/proviso" audit export --advisor "$ADV" --token-file "$ADMIN_FILE" >"$WORK/audit.jsonl"
OUT=$("$PV_BUILDDIR/proviso" audit verify "$WORK/audit.jsonl" --pubkey "$PUB" --all-signatures)
eq "the audit chain over the races and the crash verifies" "$?" 0
api GET /v1/events?limit=10000
eq "one record per event" "$(grep -c '"type":"record"' "$WORK/audit.jsonl")" "$(jf '.events | length')"
stop_advisor
finish
