#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# advisor_graphql.sh - the advisor loop for GraphQL, with real processes on
# 127.0.0.1: proviso-advisor (mapper on, manual review), proviso-proxy
# --advisor, a logging GraphQL upstream (gql_upstream.py) on a credentialed
# host, curl as the agent, `proviso rule approve` as the reviewer. A graphql
# endpoint allows `query {viewer}` only. A mutation is denied with a deny
# body that names it (protocol graphql, rule_missing graphql_allow); the
# denial record carries the operation; the mapper proposes the GraphQL rule
# that names exactly it (never a REST rule); the proof shows the grant and a
# capability_expansion finding; the reviewer approves; that mutation then
# reaches the upstream while other mutations (another field, an extra field,
# the same field anonymously) never do. An agent's own GraphQL proposal
# through policy.local goes the same way; a WebSocket text message refused on
# a GET-only endpoint becomes a WEBSOCKET_TEXT rule on the upgrade's path.
# Judged by what the upstreams got.
. "$(dirname "$0")/proxy_lib.sh"

. "$(dirname "$0")/advisor_proxy_lib.sh"

PROVISO=$BUILD/proviso
[ -x "$PROVISO" ] || { echo "SKIP: build proviso first"; exit 77; }
PY=$(command -v python3) || { echo "SKIP: python3 is not installed"; exit 77; }
"$PY" "$SRC/tests/e2e/gql_upstream.py" "$T/gql.port" "$T/gql.log" 2>"$T/gql.err" &
PIDS="$PIDS $!"
wait_file "$T/gql.port" || { echo "gql upstream did not start"; cat "$T/gql.err"; exit 1; }
read -r G <"$T/gql.port"
touch "$T/gql.log"
# a WebSocket echo upstream (tests/e2e/ws_echo.py) when python3-websockets
# is there: a text message refused on a GET-only endpoint (step 9)
WS=0
if /usr/bin/python3 -c 'import websockets' 2>/dev/null; then
    /usr/bin/python3 "$SRC/tests/e2e/ws_echo.py" --port-file "$T/ws.port" --log "$T/ws.log" \
        2>"$T/ws.err" &
    PIDS="$PIDS $!"
    wait_file "$T/ws.port" || { echo "ws echo did not start"; cat "$T/ws.err"; exit 1; }
    read -r W <"$T/ws.port"
    touch "$T/ws.log"
    WS=1
fi
# seen NEEDLE: did the upstream receive a request containing NEEDLE?
seen() { grep -qF -- "$1" "$T/gql.log"; }
# the upstream is on loopback (the proxy admits it by its IP only, with
# --test-allow-loopback); the prover counts a loopback host as private, so
# the capability finding is checked on the same policies moved to a public
# credentialed host (step 5)
GH=127.0.0.1
URL="http://$GH:$G/graphql"
# gq DOC: POST {"query": DOC} through the proxy; body then "|CODE"
gq() {
    via P1 -H 'Content-Type: application/json' \
        --data-binary "$("$JQ" -cn --arg q "$1" '{query: $q}')" "$URL"
}

cat >"$T/base.yaml" <<EOF
version: 1
network_policies:
  gh:
    endpoints:
      - host: $GH
        port: $G
        path: /graphql
        protocol: graphql
        enforcement: enforce
        rules:
          - allow: {operation_type: query, fields: [viewer]}
    binaries:
      - path: /usr/bin/curl
EOF
if [ "$WS" = 1 ]; then
    cat >>"$T/base.yaml" <<EOF
  chat:
    endpoints:
      - host: 127.0.0.1
        port: $W
        path: /chat
        protocol: websocket
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /chat}
    binaries:
      - path: /usr/bin/python3*
EOF
fi
printf 'mapper_flush_interval_ms: 300\n' >"$T/adv.yaml"
start_advisor ADV --config "$T/adv.yaml"
# a credential targets the GraphQL host: a new mutation there is a capability
body=$("$JQ" -cn --rawfile p "$T/base.yaml" \
    --arg c "credentials:
  - {name: gh, type: github, target_hosts: [$GH, api.github.com]}
" '{name: "one", policy: $p, credentials: $c}')
out=$(adm ADV POST /v1/sandboxes "$body")
expect_eq "create sandbox with credentials" 201 "$(code "$out")"
jget "$out" .token >"$T/one.token"
out=$(adm ADV PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}')
expect_eq "proposals on" 200 "$(code "$out")"
start_aproxy P1 ADV one
wait_log "$T/P1.log" "advisor revision 1 loaded" || fail "proxy never loaded revision 1"
wait_log "$T/P1.log" "agent_policy_proposals_enabled is on" || fail "setting never arrived"

# pending_for: the pending chunks for GH:G (JSON array)
pending_for() {
    out=$(adm ADV GET "/v1/sandboxes/one/proposals?status=pending")
    body "$out" | "$JQ" -c --arg h "$GH" --argjson p "$G" '[.chunks[] | select(.host == $h and .port == $p)]'
}
# wait_pending N: until N pending chunks exist for GH:G
wait_pending() {
    i=0
    while [ $i -lt 150 ]; do
        [ "$(pending_for | "$JQ" length)" = "$1" ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

# 1. the query the policy allows reaches the upstream
out=$(gq 'query { viewer { login } }')
expect_eq "query allowed" 200 "$(code "$out")"
if seen 'viewer { login }'; then pass; else fail "the query never reached the upstream"; fi

# 2. a mutation: denied, and the body says what was denied
out=$(gq 'mutation CreateIssue { createIssue(title: "t1") { id } }')
expect_eq "mutation denied" "403 policy_denied" "$(code "$out") $(jget "$out" .error)"
if seen createIssue; then fail "the denied mutation reached the upstream"; else pass; fi
expect_eq "deny body: protocol graphql" graphql "$(jget "$out" .protocol)"
expect_eq "deny body: rule names the operation" "POST /graphql mutation CreateIssue {createIssue}" \
    "$(jget "$out" .rule)"
expect_eq "deny body: the operation" '{"operation_type":"mutation","operation_name":"CreateIssue","fields":["createIssue"]}' \
    "$(body "$out" | "$JQ" -c .graphql)"
expect_eq "rule_missing: graphql_allow" \
    "graphql_allow l7 mutation CreateIssue createIssue /graphql $GH $G /usr/bin/curl" \
    "$(jget "$out" '.rule_missing | [.type, .layer, .operation_type, .operation_name, (.fields | join(",")), .path, .host, (.port | tostring), .binary] | join(" ")')"
expect_eq "rule_missing: no REST method" null "$(jget "$out" .rule_missing.method)"
expect_eq "next_steps: still the four steps" "4 read_skill submit_proposal" \
    "$(jget "$out" '"\(.next_steps | length) \(.next_steps[0].action) \(.next_steps[3].action)"')"
expect_has "guidance names policy.local" "http://policy.local/v1/proposals" "$(jget "$out" .agent_guidance)"
expect_has "the skill teaches graphql_allow" 'type: "graphql_allow"' "$(cat "$T/P1.skills/policy_advisor.md" 2>/dev/null)"
expect_log_in() { if wait_log "$1" "$2" 50; then pass; else fail "$3: no [$2] in $1"; fi; }
expect_log_in "$T/P1.log" "GraphQL mutation CreateIssue {createIssue}" "decision line names it"

# 3. the denial records carry the operation
out=$(via P1 "http://policy.local/v1/denials?last=1")
expect_eq "policy.local denial: the operation" "mutation CreateIssue createIssue" \
    "$(jget "$out" '.denials[0].graphql | [.operation_type, .operation_name, (.fields | join(","))] | join(" ")')"
sleep 0.3 # the log writes denials.jsonl in batches
DJ=$(find "$T/P1.data" -name denials.jsonl 2>/dev/null | head -n 1)
if [ -n "$DJ" ]; then pass; else fail "no denials.jsonl under $T/P1.data"; fi
expect_eq "denials.jsonl: the operation" "mutation createIssue" \
    "$(grep -F createIssue "${DJ:-/dev/null}" | tail -n 1 | "$JQ" -r '.graphql | .operation_type + " " + (.fields | join(","))')"

# 4. the mapper proposes the GraphQL rule naming exactly that operation
wait_pending 1 || fail "no mechanistic chunk for $GH:$G: $(pending_for)"
ID=$(pending_for | "$JQ" -r '.[0].chunk_id')
CH=$(body "$(adm ADV GET "/v1/sandboxes/one/proposals/$ID")")
expect_eq "mechanistic" mechanistic "$(printf '%s' "$CH" | "$JQ" -r .analysis_mode)"
EP=$(printf '%s' "$CH" | "$JQ" -c '.proposed_rule.endpoints[0]')
expect_eq "a graphql endpoint on the endpoint's path" "graphql enforce /graphql" \
    "$(printf '%s' "$EP" | "$JQ" -r '"\(.protocol) \(.enforcement) \(.path)"')"
expect_eq "exactly the operation" '[{"allow":{"fields":["createIssue"],"operation_name":"CreateIssue","operation_type":"mutation"}}]' \
    "$(printf '%s' "$EP" | "$JQ" -cS .rules)"
expect_not "never a REST rule" '"method"' "$EP"
expect_has "rationale names the operation" "mutation CreateIssue {createIssue}" \
    "$(printf '%s' "$CH" | "$JQ" -r .rationale)"
# the proof: a grant naming the mutation, a capability on the credentialed host
expect_eq "manual review: pending" pending "$(printf '%s' "$CH" | "$JQ" -r .status)"
expect_has "the proof names the grant" "GraphQL mutation" \
    "$(printf '%s' "$CH" | "$JQ" -r '.evidence.prover.grants[] | tostring')"
GR=$(printf '%s' "$CH" | "$JQ" -c '.evidence.prover.grants')
expect_has "grants name the mutation" "mutation" "$GR"
expect_has "grants name the field" "createIssue" "$GR"

# 5. the reviewer approves with the review token (proviso rule approve)
TOK=$(printf '%s' "$CH" | "$JQ" -r .review_token)
PROVISO_ADVISOR="http://127.0.0.1:$ADV_PORT" PROVISO_TOKEN_FILE="$T/ADV.admin" \
    "$PROVISO" rule approve one --chunk-id "$ID" --review-token "$TOK" >"$T/approve.out" 2>&1
expect_eq "proviso rule approve" 0 "$?"
expect_log_in "$T/P1.log" "advisor revision 2 loaded" "the proxy loaded revision 2"

# on a credentialed public host the same change is a capability_expansion
# keyed by the operation type (docs/internals/prover.md#graphql)
body "$(adm ADV GET /v1/sandboxes/one/policy)" | "$JQ" -j .policy_yaml >"$T/approved.yaml"
expect_has "the approved policy has the mutation rule" "createIssue" "$(cat "$T/approved.yaml")"
for f in base approved; do
    sed -e "s/host: '\\{0,1\\}127.0.0.1'\\{0,1\\}/host: api.github.com/" -e "s/port: $G/port: 443/" \
        "$T/$f.yaml" >"$T/pub-$f.yaml"
done
printf 'credentials:\n  - {name: gh, type: github, target_hosts: [api.github.com]}\n' >"$T/creds.yaml"
json=$("$PROVISO" prove --baseline "$T/pub-base.yaml" --candidate "$T/pub-approved.yaml" \
    --credentials "$T/creds.yaml" --format json)
expect_eq "prove: findings (exit 1)" 1 $?
expect_eq "prove: capability_expansion" '["capability_expansion"]' "$(printf '%s' "$json" | "$JQ" -c .categories)"
expect_eq "prove: the witness is the mutation" "mutation CreateIssue createIssue" \
    "$(printf '%s' "$json" | "$JQ" -r '.findings[0].paths[0].witness.graphql | [.operation_type, .operation_name, (.fields | join(","))] | join(" ")')"

# 6. that mutation now reaches the upstream; nothing else does
out=$(gq 'mutation CreateIssue { createIssue(title: "t2") { id } }')
expect_eq "approved mutation allowed" 200 "$(code "$out")"
if seen 't2'; then pass; else fail "the approved mutation never reached the upstream"; fi
out=$(gq 'mutation CreateIssue { deleteRepository(id: 1) { id } }')
expect_eq "another mutation still denied" 403 "$(code "$out")"
out=$(gq 'mutation { deleteRepository(id: 2) { id } }')
expect_eq "deleteRepository still denied" 403 "$(code "$out")"
expect_eq "... and names what is missing" "mutation deleteRepository" \
    "$(jget "$out" '.rule_missing | .operation_type + " " + (.fields | join(","))')"
out=$(gq 'mutation CreateIssue { createIssue(title: "t3") { id } deleteRepository(id: 3) { id } }')
expect_eq "the approved field with another: denied" 403 "$(code "$out")"
out=$(gq 'mutation { createIssue(title: "t4") { id } }')
expect_eq "the approved field, anonymously: denied (the rule names CreateIssue)" 403 "$(code "$out")"
out=$(gq 'mutation Other { createIssue(title: "t5") { id } }')
expect_eq "the approved field, another name: denied" 403 "$(code "$out")"
if seen deleteRepository; then fail "deleteRepository reached the upstream"; else pass; fi
for t in t3 t4 t5; do
    if seen "\\\"$t\\\""; then fail "mutation $t reached the upstream"; else pass; fi
done
# the query the operator allowed still passes
out=$(gq 'query { viewer { id } }')
expect_eq "the operator's query still allowed" 200 "$(code "$out")"

# 7. the new denials make one new chunk naming exactly each operation seen
# (five: a type, a name and a field set each), never the approved one again
wait_pending 1 || fail "no chunk for the new denials: $(pending_for)"
sleep 0.5 # the last flush may still be adding to it
EP2=$(pending_for | "$JQ" -c '.[0].proposed_rule.endpoints[0]')
expect_eq "the new chunk: one exact rule per operation" \
    '-:createIssue|-:deleteRepository|CreateIssue:createIssue,deleteRepository|CreateIssue:deleteRepository|Other:createIssue' \
    "$(printf '%s' "$EP2" | "$JQ" -r '[.rules[].allow | "\(.operation_name // "-"):\(.fields | join(","))"] | sort | join("|")')"
expect_eq "... every one a mutation with fields" 5 \
    "$(printf '%s' "$EP2" | "$JQ" '[.rules[].allow | select(.operation_type == "mutation" and (.fields | length) > 0)] | length')"
expect_not "... and no REST rule" '"method"' "$EP2"

# 8. the agent's own GraphQL proposal through policy.local
P=$("$JQ" -cn --arg h "$GH" --argjson port "$G" '{intent_summary: "let curl add labels",
    operations: [{addRule: {ruleName: "gh_labels", rule: {
        endpoints: [{host: $h, port: $port, path: "/graphql", protocol: "graphql",
                     enforcement: "enforce",
                     rules: [{allow: {operation_type: "mutation", fields: ["addLabel"]}}]}],
        binaries: [{path: "/usr/bin/curl"}]}}}]}')
out=$(via P1 -H 'Content-Type: application/json' -d "$P" http://policy.local/v1/proposals)
expect_eq "agent proposal submitted" "202 1" "$(code "$out") $(jget "$out" .accepted_chunks)"
AID=$(jget "$out" '.accepted_chunk_ids[0]')
CH=$(body "$(adm ADV GET "/v1/sandboxes/one/proposals/$AID")")
expect_eq "agent chunk pending" pending "$(printf '%s' "$CH" | "$JQ" -r .status)"
expect_has "agent chunk grants name addLabel" "addLabel" "$(printf '%s' "$CH" | "$JQ" -c .evidence.prover.grants)"
out=$(gq 'mutation { addLabel(id: "L1") { id } }')
expect_eq "addLabel denied before approval" 403 "$(code "$out")"
TOK=$(printf '%s' "$CH" | "$JQ" -r .review_token)
out=$(adm ADV POST "/v1/sandboxes/one/proposals/$AID/approve" "{\"review_token\":\"$TOK\"}")
expect_eq "agent chunk approved" 200 "$(code "$out")"
out=$(via P1 "http://policy.local/v1/proposals/$AID/wait?timeout=20")
expect_eq "agent sees it loaded" "approved true" "$(jget "$out" .status) $(jget "$out" .policy_reloaded)"
out=$(gq 'mutation { addLabel(id: "L2") { id } }')
expect_eq "addLabel allowed after approval" 200 "$(code "$out")"
if seen 'L2'; then pass; else fail "addLabel never reached the upstream"; fi
if seen 'L1'; then fail "the addLabel sent before approval reached the upstream"; else pass; fi
out=$(gq 'mutation { addLabel(id: "L3") { id } deleteRepository(id: 4) { id } }')
expect_eq "addLabel with deleteRepository: denied" 403 "$(code "$out")"
if seen deleteRepository; then fail "deleteRepository reached the upstream"; else pass; fi

# 9. a WebSocket text message refused on a GET-only endpoint: the session
# closes with 1008, the denial reaches the mapper with its stage, and the
# proposal is a WEBSOCKET_TEXT rule on the upgrade's exact path
if [ "$WS" = 1 ]; then
    WSC="/usr/bin/python3 $SRC/tests/e2e/ws_client.py"
    out=$($WSC lib --proxy "$P1_PX" --port "$W" --path /chat text:hello-1 2>&1)
    expect_has "ws: upgrade allowed" "STATUS 101" "$out"
    expect_has "ws: text refused with 1008" "CLOSED 1008" "$out"
    if grep -qF hello-1 "$T/ws.log"; then fail "ws: the refused text reached the upstream"; else pass; fi
    out=$(via P1 "http://policy.local/v1/denials?last=1")
    expect_eq "ws: the denial record" "WEBSOCKET_TEXT /chat websocket" \
        "$(jget "$out" '.denials[0] | .method + " " + .path + " " + .stage')"
    wpend() {
        body "$(adm ADV GET "/v1/sandboxes/one/proposals?status=pending")" |
            "$JQ" -c --argjson p "$W" '[.chunks[] | select(.port == $p)]'
    }
    i=0
    while [ "$(wpend | "$JQ" length)" != 1 ] && [ $i -lt 150 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    WID=$(wpend | "$JQ" -r '.[0].chunk_id')
    WCH=$(body "$(adm ADV GET "/v1/sandboxes/one/proposals/$WID")")
    expect_eq "ws: the mapper's endpoint" "websocket enforce /chat" \
        "$(printf '%s' "$WCH" | "$JQ" -r '.proposed_rule.endpoints[0] | "\(.protocol) \(.enforcement) \(.path)"')"
    expect_eq "ws: exactly WEBSOCKET_TEXT on the upgrade's path" '[{"allow":{"method":"WEBSOCKET_TEXT","path":"/chat"}}]' \
        "$(printf '%s' "$WCH" | "$JQ" -cS '.proposed_rule.endpoints[0].rules')"
    TOK=$(printf '%s' "$WCH" | "$JQ" -r .review_token)
    out=$(adm ADV POST "/v1/sandboxes/one/proposals/$WID/approve" "{\"review_token\":\"$TOK\"}")
    expect_eq "ws: approved" 200 "$(code "$out")"
    n=$(grep -c "advisor revision [0-9]* loaded" "$T/P1.log")
    i=0
    while [ "$(grep -c "advisor revision [0-9]* loaded" "$T/P1.log")" = "$n" ] && [ $i -lt 100 ]; do
        sleep 0.05
        i=$((i + 1))
    done
    out=$($WSC lib --proxy "$P1_PX" --port "$W" --path /chat text:hello-2 2>&1)
    expect_has "ws: text now echoed" "ECHO TEXT hello-2" "$out"
    if grep -qF hello-2 "$T/ws.log"; then pass; else fail "ws: the allowed text never reached the upstream"; fi
else
    echo "note: python3-websockets missing, WebSocket step skipped"
fi

finish
