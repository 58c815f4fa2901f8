#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# advisor_mcp.sh - the advisor loop for MCP and JSON-RPC, with real processes
# on 127.0.0.1: proviso-advisor (mapper on, manual review), proviso-proxy
# --advisor, a logging JSON-RPC / MCP upstream (rpc_upstream.py), curl as
# the agent, `proviso rule approve` as the reviewer. An mcp endpoint allows
# initialize and the tool echo; a tools/call of create_issue is refused with
# a JSON-RPC error; the mapper proposes the call rule that names exactly
# that method and tool on the endpoint's path (never a REST rule, never a
# glob); the reviewer approves; create_issue then reaches the upstream while
# drop_db still does not. The same on a json-rpc endpoint for a method.
# Judged by what the upstream got.
. "$(dirname "$0")/proxy_lib.sh"

. "$(dirname "$0")/advisor_proxy_lib.sh"

PROVISO=$BUILD/proviso
[ -x "$PROVISO" ] || { echo "SKIP: build proviso first"; exit 77; }
PY=$(command -v python3) || { echo "SKIP: python3 is not installed"; exit 77; }
"$PY" "$SRC/tests/e2e/rpc_upstream.py" "$T/rpc.port" "$T/rpc.log" 2>"$T/rpc.err" &
PIDS="$PIDS $!"
wait_file "$T/rpc.port" || { echo "rpc upstream did not start"; cat "$T/rpc.err"; exit 1; }
read -r R <"$T/rpc.port"
touch "$T/rpc.log"
# got NEEDLE: did the upstream receive a body containing NEEDLE?
got() { grep -qF -- "$1" "$T/rpc.log"; }
# call PATH BODY: POST a JSON-RPC body through the proxy; body then "|CODE"
call() {
    via P1 -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
        --data-binary "$2" "http://127.0.0.1:$R$1"
}

cat >"$T/base.yaml" <<EOF
version: 1
network_policies:
  tools:
    endpoints:
      - host: 127.0.0.1
        port: $R
        path: /mcp
        protocol: mcp
        enforcement: enforce
        rules:
          - allow: {method: initialize}
          - allow: {method: tools/call, tool: echo}
      - host: 127.0.0.1
        port: $R
        path: /rpc
        protocol: json-rpc
        enforcement: enforce
        rules:
          - allow: {method: sum}
    binaries:
      - path: /usr/bin/curl
EOF
printf 'mapper_flush_interval_ms: 300\n' >"$T/adv.yaml"
start_advisor ADV --config "$T/adv.yaml"
sandbox ADV one "$T/base.yaml"
out=$(adm ADV PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}')
expect_eq "proposals on" 200 "$(code "$out")"
start_aproxy P1 ADV one
wait_log "$T/P1.log" "advisor revision 1 loaded" || fail "proxy never loaded revision 1"
wait_log "$T/P1.log" "agent_policy_proposals_enabled is on" || fail "setting never arrived"

# pending: the pending chunks (JSON array)
pending() {
    body "$(adm ADV GET "/v1/sandboxes/one/proposals?status=pending")" | "$JQ" -c '[.chunks[]]'
}
wait_pending() {
    i=0
    while [ $i -lt 150 ]; do
        [ "$(pending | "$JQ" length)" = "$1" ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

# 1. the allowed tool reaches the upstream; another is refused as JSON-RPC
out=$(call /mcp '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}')
expect_eq "echo allowed" 200 "$(code "$out")"
if got echo; then pass; else fail "echo never reached the upstream"; fi
out=$(call /mcp '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_issue"}}')
expect_eq "create_issue refused: a JSON-RPC error for its id" "2 -32001" \
    "$(jget "$out" '"\(.id) \(.error.code)"')"
if got create_issue; then fail "the refused call reached the upstream"; else pass; fi
out=$(call /rpc '{"jsonrpc":"2.0","id":3,"method":"subtract","params":[2,1]}')
expect_eq "subtract refused" "3 -32001" "$(jget "$out" '"\(.id) \(.error.code)"')"

# 2. the mapper proposes the call rules naming exactly them, one per endpoint
wait_pending 2 || { fail "no two mechanistic chunks: $(pending | "$JQ" -c '[.[] | .proposed_rule]')"; grep -i "mapper\|mechanistic\|PROPOSED" "$T/ADV.log" | cut -c1-400; }
MC= JC=
for id in $(pending | "$JQ" -r '.[].chunk_id'); do
    ch=$(body "$(adm ADV GET "/v1/sandboxes/one/proposals/$id")")
    case "$(printf '%s' "$ch" | "$JQ" -r '.proposed_rule.endpoints[0].protocol')" in
    mcp) MC=$ch ;;
    json-rpc) JC=$ch ;;
    esac
done
expect_eq "mcp: mechanistic" mechanistic "$(printf '%s' "$MC" | "$JQ" -r .analysis_mode)"
expect_eq "mcp: on the endpoint's path, enforced" "mcp enforce /mcp" \
    "$(printf '%s' "$MC" | "$JQ" -r '.proposed_rule.endpoints[0] | "\(.protocol) \(.enforcement) \(.path)"')"
expect_eq "mcp: exactly the method and tool" '[{"allow":{"method":"tools/call","tool":"create_issue"}}]' \
    "$(printf '%s' "$MC" | "$JQ" -cS '.proposed_rule.endpoints[0].rules')"
expect_has "mcp: the rationale names the call" "tools/call tool=create_issue" \
    "$(printf '%s' "$MC" | "$JQ" -r .rationale)"
expect_eq "json-rpc: exactly the method, on /rpc" 'json-rpc /rpc [{"allow":{"method":"subtract"}}]' \
    "$(printf '%s' "$JC" | "$JQ" -cS '.proposed_rule.endpoints[0] | "\(.protocol) \(.path) \(.rules | tostring)"' | tr -d '\\' | sed 's/^"//; s/"$//')"
expect_has "the proof names the call" "create_issue" \
    "$(printf '%s' "$MC" | "$JQ" -c '.evidence.prover.grants')"

# 3. the reviewer approves the MCP chunk (proviso rule approve)
ID=$(printf '%s' "$MC" | "$JQ" -r .chunk_id)
TOK=$(printf '%s' "$MC" | "$JQ" -r .review_token)
PROVISO_ADVISOR="http://127.0.0.1:$ADV_PORT" PROVISO_TOKEN_FILE="$T/ADV.admin" \
    "$PROVISO" rule approve one --chunk-id "$ID" --review-token "$TOK" >"$T/approve.out" 2>&1
expect_eq "proviso rule approve ($(cat "$T/approve.out"))" 0 "$?"
wait_log "$T/P1.log" "advisor revision 2 loaded" || fail "the proxy never loaded revision 2"

# 4. create_issue now reaches the upstream; drop_db and subtract still do not
out=$(call /mcp '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"create_issue"}}')
expect_eq "create_issue allowed" 200 "$(code "$out")"
expect_eq "create_issue answered by the upstream" tools/call "$(jget "$out" .result.echo)"
if got create_issue; then pass; else fail "the approved call never reached the upstream"; fi
out=$(call /mcp '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"drop_db"}}')
expect_eq "drop_db still refused" "5 -32001" "$(jget "$out" '"\(.id) \(.error.code)"')"
if got drop_db; then fail "drop_db reached the upstream"; else pass; fi
out=$(call /rpc '{"jsonrpc":"2.0","id":6,"method":"subtract","params":[2,1]}')
expect_eq "subtract still refused (its chunk is pending)" "6 -32001" "$(jget "$out" '"\(.id) \(.error.code)"')"
if grep -q '"subtract"' "$T/rpc.log"; then fail "subtract reached the upstream"; else pass; fi
finish
