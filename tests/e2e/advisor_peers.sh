#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# advisor_peers.sh - target_sandbox end to end, real processes on loopback:
# proviso-advisor (with its prover), two proviso-proxy processes in advisor
# mode (sandbox "app", and sandbox "db" that registers its address with
# --sandbox-address), two logging upstreams standing for db's service at its
# old and new address (127.0.0.6 and 127.0.0.7), curl as app's agent.
# app's policy reaches db only through `target_sandbox: db`:
#   - before db registers, the endpoint is unresolved: denied, nothing arrives;
#   - db's proxy registers 127.0.0.6: app gets a new revision pushed with
#     resolved_ips [127.0.0.6]; 127.0.0.6 is reached, 127.0.0.7 is not;
#   - db moves to 127.0.0.7: pushed again, the old address is refused;
#     the push delay (registration committed -> app's proxy reports the
#     revision loaded) is measured over repeated moves and printed;
#   - a proposal naming target_sandbox is never auto-approved (auto mode),
#     a private peer's reach is private_reach_expansion, resolved_ips in a
#     proposal is refused; always-blocked and malformed registrations are
#     refused; another sandbox's token cannot register for db; with
#     peer_address_ranges set, db's proxy registering outside them is
#     refused, says why, and app's rule stays where it was;
#   - deleting db leaves app's endpoint unresolved again.
# Only the test switch lets the loopback peer addresses through
# (docs/semantics.md#test-loopback).
. "$(dirname "$0")/proxy_lib.sh"
. "$(dirname "$0")/advisor_proxy_lib.sh"
PROVISO=$BUILD/proviso

# two upstreams: db's service at its first and its second address
for u in A:127.0.0.6 B:127.0.0.7; do
    n=${u%%:*} ip=${u#*:}
    "$UPSTREAM_BIN" --bind "$ip" --port-file "$T/up$n.port" --log "$T/up$n.log" 2>"$T/up$n.err" &
    PIDS="$PIDS $!"
    wait_file "$T/up$n.port" || { echo "upstream $n did not start"; cat "$T/up$n.err"; exit 1; }
done
read -r UA _ <"$T/upA.port"
read -r UB _ <"$T/upB.port"
: >"$T/upA.log"
: >"$T/upB.log"

printf '%s\n' "version: 1" "network_policies:" "  to_db:" "    endpoints:" \
    "      - target_sandbox: db" "        ports: [$UA, $UB]" \
    "    binaries:" "      - path: /usr/bin/curl" >"$T/app.yaml"
printf 'version: 1\n' >"$T/db.yaml"
start_advisor ADV
sandbox ADV app "$T/app.yaml"
sandbox ADV db "$T/db.yaml"
sandbox ADV other "$T/db.yaml"
out=$(adm ADV PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}')
expect_eq "proposals on" 200 "$(code "$out")"
out=$(adm ADV PUT /v1/settings/proposal_approval_mode '{"value":"auto"}')
expect_eq "auto mode" 200 "$(code "$out")"

# own ADVISOR SANDBOX METHOD PATH [JSON]: a call with the sandbox's own token
own() {
    port=$(eval echo "\$${1}_PORT")
    "$CURL" -s --max-time 30 -X "$3" -H "Authorization: Bearer $(cat "$T/$2.token")" \
        -H 'Content-Type: application/json' ${5:+-d "$5"} -w '|%{http_code}' \
        "http://127.0.0.1:$port/v1/sandboxes/$2$4"
}
app_yaml() { body "$(adm ADV GET /v1/sandboxes/app/policy)" | "$JQ" -j .policy_yaml; }
app_rev() { body "$(adm ADV GET /v1/sandboxes/app/policy)" | "$JQ" -r .revision; }

start_aproxy PAPP ADV app
wait_log "$T/PAPP.log" "advisor revision 1 loaded" 250 || fail "app's proxy loaded revision 1"

# --- unresolved: db has not registered ------------------------------------------
r=$(via PAPP "http://127.0.0.6:$UA/before")
expect_eq "unresolved peer: denied" 403 "$(code "$r")"
# the proxy writes its log when its loop is idle, maybe after curl has the 403
wait_log "$T/PAPP.log" "/before [policy:to_db" 100 || true
expect_has "the denial is logged under app's peer rule" "DENIED /usr/bin/curl" \
    "$(grep -F "/before [policy:to_db" "$T/PAPP.log")"
expect_not "no resolved_ips yet" "resolved_ips" "$(app_yaml)"

# --- db's proxy registers 127.0.0.6: pushed to app --------------------------------
start_aproxy PDB ADV db --sandbox-address 127.0.0.6
wait_log "$T/PAPP.log" "advisor revision 2 loaded" 250 || fail "app got revision 2 when db registered"
expect_eq "db's registered addresses" '["127.0.0.6"]' \
    "$(body "$(adm ADV GET /v1/sandboxes/db)" | "$JQ" -c .addresses)"
expect_has "app's policy names db's address" "127.0.0.6" "$(app_yaml | grep -A2 resolved_ips)"
r=$(via PAPP "http://127.0.0.6:$UA/peer-a")
expect_eq "the peer at its registered address" 200 "$(code "$r")"
grep -qx "GET /peer-a" "$T/upA.log" && pass || fail "upstream A never got /peer-a"
r=$(via PAPP "http://127.0.0.7:$UB/not-yet")
expect_eq "an address db did not register" 403 "$(code "$r")"
r=$(via PAPP "http://127.0.0.6:$((UA == 65535 ? 1 : UA + 1))/port")
expect_eq "a port the endpoint does not list" 403 "$(code "$r")"

# --- db moves to 127.0.0.7 (a restart of its proxy) ------------------------------
kill "$PDB_PID"
wait "$PDB_PID" 2>/dev/null
start_aproxy PDB ADV db --sandbox-address 127.0.0.7
wait_log "$T/PAPP.log" "advisor revision 3 loaded" 250 || fail "app got revision 3 when db moved"
r=$(via PAPP "http://127.0.0.7:$UB/peer-b")
expect_eq "the peer at its new address" 200 "$(code "$r")"
grep -qx "GET /peer-b" "$T/upB.log" && pass || fail "upstream B never got /peer-b"
r=$(via PAPP "http://127.0.0.6:$UA/old")
expect_eq "the old address is refused" 403 "$(code "$r")"
expect_not "upstream A never got /old" "/old" "$(cat "$T/upA.log")"
expect_eq "each move is one CONFIG:RESOLVED event for app" 2 \
    "$(body "$(adm ADV GET '/v1/events?since=0&limit=1000')" | "$JQ" '[.events[] | select(.kind == "CONFIG:RESOLVED" and .sandbox == "app")] | length')"

# --- the push delay: registration committed -> app's proxy loaded it -------------
N=${PEER_PUSH_ROUNDS:-10}
: >"$T/delays"
k=0
while [ $k -lt "$N" ]; do
    ip=127.0.0.6
    [ $((k % 2)) = 1 ] && ip=127.0.0.7
    before=$(app_rev)
    out=$(own ADV db PUT /addresses "{\"addresses\":[\"$ip\"]}")
    [ "$(code "$out")" = 200 ] || fail "move $k: $(body "$out")"
    want=$((before + 1))
    wait_log "$T/PAPP.log" "advisor revision $want loaded" 250 || fail "move $k: revision $want not loaded"
    # the proxy acknowledges the load (CONFIG:LOADED) just after logging it
    d=
    i=0
    while [ $i -lt 100 ]; do
        d=$(body "$(adm ADV GET '/v1/events?since=0&limit=1000')" | "$JQ" -r --arg ip "$ip" --argjson v "$want" '
            ([.events[] | select(.kind == "CONFIG:REGISTERED" and .sandbox == "db")] | last | .ts_ms) as $t0
            | ([.events[] | select(.kind == "CONFIG:LOADED" and .sandbox == "app" and .record.version == $v)] | first | .ts_ms) as $t1
            | if $t1 == null then "" else $t1 - $t0 end')
        case "$d" in [0-9]*) break ;; esac
        sleep 0.02
        i=$((i + 1))
    done
    echo "$d" >>"$T/delays"
    k=$((k + 1))
done
expect_eq "every move measured" "$N" "$(grep -c '^[0-9][0-9]*$' "$T/delays")"
echo "# push delay over $N moves (ms): p50 $(sort -n "$T/delays" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')," \
    "max $(sort -n "$T/delays" | tail -n 1)"
# leave db at 127.0.0.7 (N even) or 127.0.0.6 (N odd): check the last one holds
last=127.0.0.6
[ $((N % 2)) = 0 ] && last=127.0.0.7
other_ip=127.0.0.6
[ "$last" = 127.0.0.6 ] && other_ip=127.0.0.7
expect_has "app's policy follows the last move" "- '$last'" "$(app_yaml | grep -A1 resolved_ips)"
expect_not "and only the last" "$other_ip" "$(app_yaml)"

# --- registrations that are refused ------------------------------------------------
out=$(own ADV db PUT /addresses '{"addresses":["169.254.169.254"]}')
expect_eq "a link-local address is refused" 400 "$(code "$out")"
out=$(own ADV db PUT /addresses '{"addresses":["db.internal"]}')
expect_eq "a name is refused" 400 "$(code "$out")"
out=$(own ADV db PUT /addresses '{"addresses":"10.0.0.1"}')
expect_eq "not a list" 400 "$(code "$out")"
out=$(own ADV db PUT /addresses "$("$JQ" -cn '{addresses: [range(17) | "10.0.0.\(.+1)"]}')")
expect_eq "more than 16 addresses" 400 "$(code "$out")"
port=$ADV_PORT
out=$("$CURL" -s -X PUT -H "Authorization: Bearer $(cat "$T/other.token")" -H 'Content-Type: application/json' \
    -d '{"addresses":["127.0.0.9"]}' -w '|%{http_code}' "http://127.0.0.1:$port/v1/sandboxes/db/addresses")
expect_eq "another sandbox's token cannot register for db" 404 "$(code "$out")"
expect_eq "db's addresses unchanged by the refusals" "[\"$last\"]" \
    "$(body "$(adm ADV GET /v1/sandboxes/db)" | "$JQ" -c .addresses)"
r=$(own ADV db PUT /addresses "{\"addresses\":[\"$last\"]}")
expect_eq "the same registration again changes nothing" "false 0" \
    "$(body "$r" | "$JQ" -r '"\(.changed) \(.updated | length)"')"

# --- the operator's bounds: a proxy registering outside them is refused -------------
out=$(adm ADV PUT /v1/sandboxes/db/settings/peer_address_ranges '{"value":["127.0.0.6/31"]}')
expect_eq "db may register 127.0.0.6/31 only" 200 "$(code "$out")"
before=$(app_rev)
kill "$PDB_PID"
wait "$PDB_PID" 2>/dev/null
start_aproxy PDB ADV db --sandbox-address 127.0.0.9
wait_log "$T/PDB.err" "cannot register the sandbox's addresses" 250 ||
    fail "db's proxy never reported the refused registration"
expect_has "the proxy says why" "127.0.0.9 is outside" "$(cat "$T/PDB.err")"
expect_eq "db's addresses stay" "[\"$last\"]" "$(body "$(adm ADV GET /v1/sandboxes/db)" | "$JQ" -c .addresses)"
expect_eq "app gets no revision" "$before" "$(app_rev)"
[ "$last" = 127.0.0.7 ] && lu=$UB || lu=$UA
r=$(via PAPP "http://$last:$lu/still-there")
expect_eq "app's rule still leads to db's last address" 200 "$(code "$r")"

# --- proposals naming a peer --------------------------------------------------------
sbp() {
    "$JQ" -cn --arg n "$1" --arg t "$2" --argjson p "$3" '{
        intent_summary: "reach a peer", operations: [{addRule: {ruleName: $n, rule: {
        endpoints: [{target_sandbox: $t, port: $p}], binaries: [{path: "/usr/bin/wget"}]}}}]}'
}
out=$(own ADV app POST /proposals "$(sbp wget_db db "$UA")")
expect_eq "a target_sandbox proposal is accepted" 202 "$(code "$out")" || echo "$out"
ID=$(body "$out" | "$JQ" -r '.accepted_chunk_ids[0]')
CH=$(body "$(adm ADV GET "/v1/sandboxes/app/proposals/$ID")")
expect_eq "never auto-approved, even in auto mode" pending "$(printf '%s' "$CH" | "$JQ" -r .status)"
expect_has "the reviewer is told why" "peer sandbox 'db'" "$(printf '%s' "$CH" | "$JQ" -r .security_notes)"
expect_eq "the chunk is keyed by its peer" "sandbox:db $UA" "$(printf '%s' "$CH" | "$JQ" -r '"\(.host) \(.port)"')"
# a peer at a private address: the prover reports the reach
out=$(own ADV other PUT /addresses '{"addresses":["10.9.0.7"]}')
expect_eq "other registers a private address" 200 "$(code "$out")"
out=$(own ADV app POST /proposals "$(sbp wget_other other "$UA")")
ID2=$(body "$out" | "$JQ" -r '.accepted_chunk_ids[0]')
CH2=$(body "$(adm ADV GET "/v1/sandboxes/app/proposals/$ID2")")
expect_eq "a private peer: pending" pending "$(printf '%s' "$CH2" | "$JQ" -r .status)"
expect_eq "a second peer on the same binary supersedes nothing" pending \
    "$(body "$(adm ADV GET "/v1/sandboxes/app/proposals/$ID")" | "$JQ" -r .status)"
expect_has "private_reach_expansion" "private_reach_expansion" "$(printf '%s' "$CH2" | "$JQ" -c .)"
bad=$("$JQ" -cn --argjson p "$UA" '{operations: [{addRule: {ruleName: "sneak", rule: {
    endpoints: [{target_sandbox: "db", port: $p, resolved_ips: ["10.1.1.1"]}],
    binaries: [{path: "/usr/bin/curl"}]}}}]}')
out=$(own ADV app POST /proposals "$bad")
expect_eq "resolved_ips in a proposal is refused" 400 "$(code "$out")"
expect_has "and says so" "resolved_ips is not accepted in proposals" "$(body "$out")"
# approving the db chunk: wget may reach db now, at db's address
TOK=$(printf '%s' "$CH" | "$JQ" -r .review_token)
out=$(adm ADV POST "/v1/sandboxes/app/proposals/$ID/approve" "{\"review_token\":\"$TOK\"}")
expect_eq "a reviewer approves the peer chunk" 200 "$(code "$out")"
app_yaml >"$T/approved.yaml"
expect_eq "the approved rule is resolved too" 2 "$(grep -c "^ *- '$last'\$" "$T/approved.yaml")"

# a rule that never says target_sandbox but is merged into a peer rule
# (same host and port) changes what the peer grants: never automatic either
printf '%s\n' "version: 1" "network_policies:" "  named:" "    endpoints:" \
    "      - host: db.internal" "        port: 8080" "        target_sandbox: later" \
    "    binaries:" "      - path: /usr/bin/curl" >"$T/named.yaml"
sandbox ADV named "$T/named.yaml"
fold=$("$JQ" -cn '{operations: [{addRule: {ruleName: "wget_db", rule: {
    endpoints: [{host: "db.internal", port: 8080}], binaries: [{path: "/usr/bin/wget"}]}}}]}')
out=$(own ADV named POST /proposals "$fold")
ID3=$(body "$out" | "$JQ" -r '.accepted_chunk_ids[0]')
CH3=$(body "$(adm ADV GET "/v1/sandboxes/named/proposals/$ID3")")
expect_eq "a rule folded into a peer rule stays pending" pending "$(printf '%s' "$CH3" | "$JQ" -r .status)"
expect_has "with the peer note" "peer sandbox 'later'" "$(printf '%s' "$CH3" | "$JQ" -r .security_notes)"

# --- db is deleted: app's endpoint is unresolved again -----------------------------
before=$(app_rev)
out=$(adm ADV DELETE /v1/sandboxes/db)
expect_eq "delete db" 200 "$(code "$out")"
wait_log "$T/PAPP.log" "advisor revision $((before + 1)) loaded" 250 || fail "app got a revision when db was deleted"
expect_not "no resolved_ips left" "resolved_ips" "$(app_yaml)"
ip=$last
[ "$ip" = 127.0.0.7 ] && pu=$UB || pu=$UA
r=$(via PAPP "http://$ip:$pu/after-delete")
expect_eq "a deleted peer is unreachable" 403 "$(code "$r")"
expect_not "nothing arrived after the delete" "/after-delete" "$(cat "$T/upA.log" "$T/upB.log")"

# --- the proxy refuses a malformed --sandbox-address ---------------------------------
"$PROXY_BIN" --advisor "http://127.0.0.1:$ADV_PORT" --sandbox app --token-file "$T/app.token" \
    --sandbox-address not-an-ip --port 0 >/dev/null 2>"$T/bad.err"
expect_eq "--sandbox-address not-an-ip: exit 2" 2 "$?"
expect_has "with a message" "not an IP address" "$(cat "$T/bad.err")"
finish
