#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# advisor_mapper.sh - the mechanistic mapper end to end, real processes on
# 127.0.0.1: proviso-advisor (its prover child, mapper flushing every 300
# ms), proviso-proxy in advisor mode, the logging upstream, curl as the agent.
# A burst of denied requests (inspected: method and path) yields exactly one
# pending mechanistic chunk for (127.0.0.1, port, curl) whose rule is the
# narrowest that allows what was seen: L7 enforce, one allow per distinct
# (method, generalised path), no access, no `**`. More denials add hits to
# the same chunk. Once approved it allows the observed requests (proviso
# eval, and the upstream receives the retried one) and nothing broader. A
# denied CONNECT proposes L4; link-local denials propose nothing; with the
# setting off nothing is streamed.
. "$(dirname "$0")/proxy_lib.sh"
. "$(dirname "$0")/advisor_proxy_lib.sh"
PROVISO=$BUILD/proviso

"$UPSTREAM_BIN" --port-file "$T/up.port" --log "$T/up.log" 2>"$T/up.err" &
PIDS="$PIDS $!"
wait_file "$T/up.port" || { echo "upstream did not start"; exit 1; }
read -r UP _ <"$T/up.port"
UPS=9443 # not in the policy: the CONNECT is denied before any connect
: >"$T/up.log"

printf '%s\n' "version: 1" "network_policies:" "  api:" "    endpoints:" \
    "      - host: 127.0.0.1" "        port: $UP" "        protocol: rest" \
    "        enforcement: enforce" "        rules:" "          - allow: {method: GET, path: /allowed}" \
    "    binaries:" "      - path: /usr/bin/curl" >"$T/base.yaml"
printf 'mapper_flush_interval_ms: 300\n' >"$T/adv.yaml"
start_advisor ADV --config "$T/adv.yaml"
sandbox ADV one "$T/base.yaml"
out=$(adm ADV PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}')
expect_eq "proposals on" 200 "$(code "$out")"
start_aproxy PX ADV one
wait_log "$T/PX.log" "advisor revision 1 loaded" 250 || fail "the proxy loaded revision 1"

# pending_for PORT: the pending chunks for 127.0.0.1:PORT (JSON array)
pending_for() {
    out=$(adm ADV GET "/v1/sandboxes/one/proposals?status=pending")
    body "$out" | "$JQ" -c --argjson p "$1" '[.chunks[] | select(.host == "127.0.0.1" and .port == $p)]'
}
# wait_chunk PORT HITS: until one pending chunk for PORT has at least HITS hits
wait_chunk() {
    i=0
    while [ $i -lt 150 ]; do
        c=$(pending_for "$1")
        [ "$(printf '%s' "$c" | "$JQ" --argjson h "$2" '[.[] | select(.hit_count >= $h)] | length')" = 1 ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

# --- a burst of denied, inspected requests -------------------------------------
for u in /items/123 /items/456 "/items/789?secret=1"; do
    r=$(via PX "http://127.0.0.1:$UP$u")
    expect_eq "GET $u is denied" 403 "$(code "$r")"
done
r=$(via PX -X POST -d 'x=1' "http://127.0.0.1:$UP/items")
expect_eq "POST /items is denied" 403 "$(code "$r")"
r=$(via PX "http://169.254.169.254/latest/meta-data")
expect_eq "the metadata address is denied" 403 "$(code "$r")"
r=$(via PX "http://policy.local/v1/nope")
expect_eq "policy.local's own 404" 404 "$(code "$r")"
wait_chunk "$UP" 4 || fail "no pending chunk with 4 hits for 127.0.0.1:$UP: $(pending_for "$UP")"
C=$(pending_for "$UP")
expect_eq "exactly one pending chunk for the burst" 1 "$(printf '%s' "$C" | "$JQ" length)"
ID=$(printf '%s' "$C" | "$JQ" -r '.[0].chunk_id')
out=$(adm ADV GET "/v1/sandboxes/one/proposals/$ID")
CH=$(body "$out")
expect_eq "analysis_mode" mechanistic "$(printf '%s' "$CH" | "$JQ" -r .analysis_mode)"
expect_eq "rule name" "allow_127_0_0_1_$UP" "$(printf '%s' "$CH" | "$JQ" -r .rule_name)"
expect_eq "binary" /usr/bin/curl "$(printf '%s' "$CH" | "$JQ" -r .binary)"
expect_eq "hit count" 4 "$(printf '%s' "$CH" | "$JQ" -r .hit_count)"
EP=$(printf '%s' "$CH" | "$JQ" -c '.proposed_rule.endpoints[0]')
expect_eq "L7 REST" rest "$(printf '%s' "$EP" | "$JQ" -r .protocol)"
expect_eq "enforced" enforce "$(printf '%s' "$EP" | "$JQ" -r .enforcement)"
expect_eq "no access preset" null "$(printf '%s' "$EP" | "$JQ" -r .access)"
expect_eq "the generalised rules, sorted, deduplicated" \
    '[["GET","/items/*"],["POST","/items"]]' \
    "$(printf '%s' "$EP" | "$JQ" -c '[.rules[].allow | [.method, .path]]')"
expect_not "the query never reaches the rule" "secret" "$CH"
expect_has "rationale names the paths" "Allowed paths: GET /items/*, POST /items" \
    "$(printf '%s' "$CH" | "$JQ" -r .rationale)"
expect_eq "no chunk for policy.local's answers" 0 \
    "$(body "$(adm ADV GET /v1/sandboxes/one/proposals)" | "$JQ" '[.chunks[] | select(.host == "policy.local")] | length')"
expect_eq "no chunk for the metadata address" 0 \
    "$(body "$(adm ADV GET /v1/sandboxes/one/proposals)" | "$JQ" '[.chunks[] | select(.host | startswith("169.254"))] | length')"

# --- more denials add hits to the same chunk ------------------------------------
r=$(via PX "http://127.0.0.1:$UP/items/99")
wait_chunk "$UP" 5 || fail "the chunk did not reach 5 hits"
expect_eq "still one chunk, the same id" "$ID" "$(pending_for "$UP" | "$JQ" -r '.[0].chunk_id')"

# --- an uninspected denial proposes L4 ------------------------------------------
r=$(via PX -k "https://127.0.0.1:$UPS/x")
wait_chunk "$UPS" 1 || fail "no L4 chunk for 127.0.0.1:$UPS"
EP4=$(pending_for "$UPS" | "$JQ" -c '.[0].proposed_rule.endpoints[0]')
expect_eq "CONNECT denial: L4 (no protocol, no rules)" "null null" \
    "$(printf '%s' "$EP4" | "$JQ" -r '"\(.protocol) \(.rules)"')"

# --- approve: allows what was seen, nothing broader -----------------------------
CH=$(body "$(adm ADV GET "/v1/sandboxes/one/proposals/$ID")")
TOK=$(printf '%s' "$CH" | "$JQ" -r .review_token)
out=$(adm ADV POST "/v1/sandboxes/one/proposals/$ID/approve" "{\"review_token\":\"$TOK\"}")
expect_eq "approve the mapper's chunk" 200 "$(code "$out")"
body "$(adm ADV GET /v1/sandboxes/one/policy)" | "$JQ" -j .policy_yaml >"$T/approved.yaml"
# The policy's grant (eval itself refuses 127.0.0.1 as always-blocked).
ev() { "$PROVISO" eval --policy "$T/approved.yaml" --binary /usr/bin/curl --method "$1" \
    --url "http://127.0.0.1:$UP$2" --format json 2>&1 | "$JQ" -r 'if .grant then 0 else 1 end'; }
for seen in "GET /items/123" "GET /items/456" "GET /items/789" "POST /items" "GET /items/99"; do
    expect_eq "allowed now: $seen" 0 "$(ev $seen)"
done
expect_eq "another id of the same shape" 0 "$(ev GET /items/31337)"
for broader in "DELETE /items/123" "PUT /items/123" "GET /items/1/2" "GET /items" \
    "POST /items/5" "GET /other" "GET /"; do
    expect_eq "still denied: $broader" 1 "$(ev $broader)"
done
i=0
while [ $i -lt 100 ]; do
    r=$(via PX "http://127.0.0.1:$UP/items/123")
    [ "$(code "$r")" = 200 ] && break
    sleep 0.05
    i=$((i + 1))
done
expect_eq "the retried request passes" 200 "$(code "$r")"
grep -q "GET /items/123" "$T/up.log" && pass || fail "the upstream never saw GET /items/123"
expect_not "the upstream never saw a denied request" "/items/456" "$(cat "$T/up.log")"

# --- setting off: nothing is streamed ---------------------------------------------
out=$(adm ADV PUT /v1/settings/agent_policy_proposals_enabled '{"value":false}')
wait_log "$T/PX.log" "agent_policy_proposals_enabled is off" 250 || fail "the proxy saw the setting"
r=$(via PX "http://127.0.0.1:$UP/quiet/12")
sleep 1
expect_eq "no chunk while the setting is off" 0 \
    "$(body "$(adm ADV GET /v1/sandboxes/one/proposals)" | "$JQ" '[.chunks[] | select(.proposed_rule.endpoints[0].rules // [] | map(.allow.path) | index("/quiet/*"))] | length')"
finish
