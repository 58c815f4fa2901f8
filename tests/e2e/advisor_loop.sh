#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# advisor_loop.sh - the whole loop with real processes on 127.0.0.1:
# proviso-advisor (with its own prover child), proviso-proxy --advisor, the
# logging upstream and curl as the agent. A denied request points at
# policy.local; the agent's narrow rule is proved, auto-approved and loaded,
# /wait says policy_reloaded and the retried request reaches the upstream;
# manual mode waits for a reviewer; link-local and _provider_ proposals are
# refused; another sandbox's token sees nothing; a dead prover leaves the
# proposal pending and the request never reaches the upstream; the setting
# off closes policy.local and empties next_steps; the advisor records
# CONFIG:LOADED; an unreachable advisor keeps the last good policy.
. "$(dirname "$0")/proxy_lib.sh"

. "$(dirname "$0")/advisor_proxy_lib.sh"

# ---------------------------------------------------------------------------
# setup: upstream, advisor, two sandboxes, the proxy of sandbox one
# ---------------------------------------------------------------------------

"$UPSTREAM_BIN" --port-file "$T/up.port" --log "$T/up.log" 2>"$T/up.err" &
PIDS="$PIDS $!"
wait_file "$T/up.port" || { echo "upstream did not start"; exit 1; }
read -r UP _ <"$T/up.port"
: >"$T/up.log"

cat >"$T/base.yaml" <<EOF
version: 1
network_policies:
  api:
    endpoints:
      - host: 127.0.0.1
        port: $UP
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /allowed}
    binaries:
      - path: /usr/bin/curl
EOF

# The mapper would turn this script's denials into proposals of its own
# (tests/e2e/advisor_mapper.sh tests it): keep it quiet here.
printf 'mapper_flush_interval_ms: 3600000\n' >"$T/quiet.yaml"
start_advisor ADV --config "$T/quiet.yaml"
sandbox ADV one "$T/base.yaml"
sandbox ADV two "$T/base.yaml"
out=$(adm ADV PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}')
expect_eq "global setting on" 200 "$(code "$out")"
out=$(adm ADV PUT /v1/sandboxes/one/settings/proposal_approval_mode '{"value":"auto"}')
expect_eq "sandbox one auto" 200 "$(code "$out")"

start_aproxy P1 ADV one
wait_log "$T/P1.log" "advisor revision 1 loaded" ||
    fail "proxy one never loaded revision 1: $(cat "$T/P1.log")"
wait_log "$T/P1.log" "agent_policy_proposals_enabled is on" || fail "setting never arrived"
wait_log "$T/P1.log" "advisor recorded revision 1 as loaded" || fail "revision 1 not recorded"

out=$(via P1 "http://127.0.0.1:$UP/allowed")
expect_eq "base rule allows" 200 "$(code "$out")"
expect_has "upstream answered" "request: GET /allowed" "$out"

# ---------------------------------------------------------------------------
# (a) the denial points at policy.local
# ---------------------------------------------------------------------------

SKILL=$T/P1.skills/policy_advisor.md
out=$(via P1 "http://127.0.0.1:$UP/data")
expect_eq "(a) denied" 403 "$(code "$out")"
expect_eq "(a) next_steps count" 4 "$(jget "$out" '.next_steps | length')"
expect_eq "(a) read_skill" "read_skill $SKILL" "$(jget "$out" '.next_steps[0] | .action + " " + .path')"
expect_eq "(a) inspect_policy" "inspect_policy GET http://policy.local/v1/policy/current" \
    "$(jget "$out" '.next_steps[1] | .action + " " + .method + " " + .url')"
expect_eq "(a) denials step" "http://policy.local/v1/denials?last=5" "$(jget "$out" '.next_steps[2].url')"
expect_eq "(a) submit step" "submit_proposal POST http://policy.local/v1/proposals PolicyMergeOperation" \
    "$(jget "$out" '.next_steps[3] | .action + " " + .method + " " + .url + " " + .body_type')"
g=$(jget "$out" '.agent_guidance')
expect_has "(a) guidance names the skill" "$SKILL" "$g"
expect_has "(a) guidance names policy.local" "http://policy.local/v1/proposals" "$g"
expect_eq "(a) rule_missing" "GET /data /usr/bin/curl" \
    "$(jget "$out" '.rule_missing | .method + " " + .path + " " + .binary')"
if up_got "GET /data"; then fail "(a) upstream got the denied request"; else pass; fi
expect_eq "(a) skill mode" 444 "$(stat -c %a "$SKILL" 2>/dev/null)"
expect_has "(a) skill teaches wait" "/wait?timeout=300" "$(cat "$SKILL" 2>/dev/null)"
expect_has "(a) skill forbids wildcards" "never a wildcard" "$(cat "$SKILL" 2>/dev/null)"

# policy.local's read routes
out=$(via P1 http://policy.local/v1/policy/current)
expect_eq "current policy" "200 yaml" "$(code "$out") $(jget "$out" .format)"
expect_has "current policy is the base" "path: /allowed" "$(jget "$out" .policy_yaml)"
expect_not "current policy lacks /data" "/data" "$(jget "$out" .policy_yaml)"
via P1 "http://127.0.0.1:$UP/data?token=SECRET123" >/dev/null
out=$(via P1 "http://policy.local/v1/denials?last=5")
expect_eq "denials" "200 true" "$(code "$out") $(jget "$out" .log_available)"
# objects (the reference answers bare lines: .line keeps that text)
expect_has "denials newest first" "/data?[redacted]" "$(jget "$out" '.denials[0].line')"
expect_has "denials older" "GET http://127.0.0.1:$UP/data [policy:api" "$(jget "$out" '.denials[1].line')"
expect_eq "denial fields" "127.0.0.1 $UP GET /data" \
    "$(jget "$out" '.denials[0] | .host + " " + (.port | tostring) + " " + .method + " " + .path')"
expect_eq "denial binary and stage" "true true" \
    "$(jget "$out" '.denials[0] | (.binary | startswith("/")) , (.stage | length > 0)' | tr '\n' ' ' | sed 's/ $//')"
expect_eq "denials are objects" "object object" "$(jget "$out" '[.denials[] | type] | join(" ")')"
expect_not "denials never show the query" "SECRET123" "$out"
out=$(via P1 "http://policy.local/v1/denials?last=0")
expect_eq "last=0 clamps to 1" 1 "$(jget "$out" '.denials | length')"
out=$(via P1 "http://policy.local/v1/denials?last=zz")
expect_eq "last=zz gives the default" 2 "$(jget "$out" '.denials | length')"

# (a2) the most common denial - no rule for the host or port at all - points
# at policy.local too: a forward request and a refused CONNECT name host,
# port, binary and layer l4, with the same four steps and the guidance.
out=$(via P1 "http://nowhere.example:8081/x")
expect_eq "(a2) forward, no rule: denied" "403 policy_denied" "$(code "$out") $(jget "$out" .error)"
expect_eq "(a2) forward rule_missing" "endpoint l4 nowhere.example 8081 /usr/bin/curl" \
    "$(jget "$out" '.rule_missing | .type + " " + .layer + " " + .host + " " + (.port | tostring) + " " + .binary')"
expect_eq "(a2) forward next_steps" "read_skill $SKILL|submit_proposal" \
    "$(jget "$out" '(.next_steps[0] | .action + " " + .path) + "|" + .next_steps[3].action')"
expect_has "(a2) forward guidance names policy.local" "http://policy.local/v1/proposals" \
    "$(jget "$out" .agent_guidance)"
expect_eq "(a2) the reference's keys stay" "policy_denied" "$(jget "$out" '.error')"
raw=$(PX=$P1_PX raw_send "CONNECT nowhere.example:443 HTTP/1.1\r\nHost: nowhere.example:443\r\n\r\n")
expect_has "(a2) CONNECT, no rule: 403" "HTTP/1.1 403 Forbidden" "$raw"
cbody=$(printf '%s\n' "$raw" | sed -n '/^{/,$p')
expect_eq "(a2) CONNECT rule_missing" "endpoint l4 nowhere.example 443 $(readlink -f "$RAW")" \
    "$(printf '%s' "$cbody" | "$JQ" -r '.rule_missing | .type + " " + .layer + " " + .host + " " + (.port | tostring) + " " + .binary' 2>/dev/null)"
expect_eq "(a2) CONNECT next_steps" "4 read_skill" \
    "$(printf '%s' "$cbody" | "$JQ" -r '(.next_steps | length | tostring) + " " + .next_steps[0].action' 2>/dev/null)"
expect_has "(a2) CONNECT guidance" "http://policy.local/v1/proposals" \
    "$(printf '%s' "$cbody" | "$JQ" -r .agent_guidance 2>/dev/null)"
out=$(via P1 "http://127.0.0.1:$UP/data")
expect_eq "(a2) the L7 denial names its layer" "l7 127.0.0.1 $UP" \
    "$(jget "$out" '.rule_missing | .layer + " " + .host + " " + (.port | tostring)')"

# routing and framing errors
out=$(via P1 http://policy.local/v1/nope)
expect_eq "unknown route" "404 not_found" "$(code "$out") $(jget "$out" .error)"
expect_eq "unknown route detail" "policy.local route not found: GET /v1/nope" "$(jget "$out" .detail)"
out=$(via P1 -X DELETE http://policy.local/v1/policy/current)
expect_eq "wrong method" "policy.local route not found: DELETE /v1/policy/current" "$(jget "$out" .detail)"
out=$(via P1 http://policy.local/v1/proposals/abc/extra)
expect_eq "malformed sub-route" "404 not_found" "$(code "$out") $(jget "$out" .error)"
out=$(via P1 http://policy.local/v1/proposals/)
expect_eq "empty id" "404 not_found" "$(code "$out") $(jget "$out" .error)"
out=$(via P1 -H 'Transfer-Encoding: chunked' -d '{}' http://policy.local/v1/proposals)
expect_eq "chunked refused" 411 "$(code "$out")"
head -c 70000 /dev/zero | tr '\0' 'x' >"$T/big.json"
out=$(via P1 --data-binary @"$T/big.json" http://policy.local/v1/proposals)
expect_eq "64 KiB cap" "413 payload_too_large" "$(code "$out") $(jget "$out" .error)"
out=$(via P1 -d '{"operations":[]}' http://policy.local/v1/proposals)
expect_eq "invalid proposal relayed" "400 invalid_proposal" "$(code "$out") $(jget "$out" .error)"
out=$(via P1 http://policy.local:8080/v1/policy/current)
expect_eq "policy.local off port 80" 400 "$(code "$out")"
out=$(via P1 http://policy.local/v1/proposals/no-such-chunk)
expect_eq "unknown chunk" "404 chunk_not_found" "$(code "$out") $(jget "$out" .error)"
expect_log_in() { if wait_log "$1" "$2" 50; then pass; else fail "$3: no [$2] in $1"; fi; }
# every policy.local outcome leaves exactly one decision line (docs/proxy.md
# "One exit"): served answers, local refusals, relayed advisor errors and the
# table's own off-port row alike
sleep 0.3
n0=$(grep -c "OCSF" "$T/P1.log")
via P1 http://policy.local/v1/policy/current >/dev/null
via P1 http://policy.local/v1/nope >/dev/null
via P1 -H 'Transfer-Encoding: chunked' -d '{}' http://policy.local/v1/proposals >/dev/null
via P1 -d '{"operations":[]}' http://policy.local/v1/proposals >/dev/null
via P1 http://policy.local:8080/v1/policy/current >/dev/null
sleep 0.3
expect_eq "one decision line per policy.local outcome (5 outcomes)" "$((n0 + 5))" \
    "$(grep -c "OCSF" "$T/P1.log")"
expect_log_in "$T/P1.log" "DENIED /usr/bin/curl(" "policy.local outcome logged"
expect_log_in "$T/P1.log" "GET http://policy.local/v1/nope [policy:-] [reason:policy.local 404 not_found" \
    "policy.local 404 logged"

# ---------------------------------------------------------------------------
# (b) auto: proved, approved, loaded, retried
# ---------------------------------------------------------------------------

out=$(via P1 -d "$(rule data_read 127.0.0.1 "$UP" GET /data)" http://policy.local/v1/proposals)
expect_eq "(b) submitted" "202 submitted 1" \
    "$(code "$out") $(jget "$out" .status) $(jget "$out" .accepted_chunks)"
ID=$(jget "$out" '.accepted_chunk_ids[0]')
out=$(via P1 "http://policy.local/v1/proposals/$ID/wait?timeout=20")
expect_eq "(b) approved" "200 approved" "$(code "$out") $(jget "$out" .status)"
expect_eq "(b) prover verdict" "prover: no new findings" "$(jget "$out" .validation_result)"
expect_eq "(b) policy_reloaded" true "$(jget "$out" .policy_reloaded)"
REV=$(jget "$out" .approved_revision)
expect_eq "(b) approved revision" 2 "$REV"
expect_log_in "$T/P1.log" "advisor revision 2 loaded" "(b) proxy loaded revision 2"
out=$(via P1 "http://127.0.0.1:$UP/data")
expect_eq "(b) retried request" 200 "$(code "$out")"
if up_got "GET /data"; then pass; else fail "(b) upstream never got GET /data"; fi
out=$(via P1 "http://policy.local/v1/proposals/$ID")
expect_eq "(b) status route" "approved true" "$(jget "$out" .status) $(jget "$out" .policy_reloaded)"
out=$(via P1 http://policy.local/v1/policy/current)
expect_has "(b) current policy has the rule" "path: /data" "$(jget "$out" .policy_yaml)"

# reload latency: the advisor's approval event -> the proxy's loaded line
ms_of() { # ISO timestamp -> ms since the epoch
    s=$(date -u -d "${1%.*}" +%s 2>/dev/null) || { echo 0; return; }
    f=${1##*.}
    f=${f%Z}
    echo $((s * 1000 + 10#$f))
}
ev=$(adm ADV GET /v1/events)
t_app=$(body "$ev" | "$JQ" -r --arg id "$ID" \
    '[.events[] | select(.kind == "CONFIG:APPROVED" and (.line | contains($id)))][0].ts_ms // empty')
t_load=$(grep -F "advisor revision 2 loaded" "$T/P1.log" | head -n 1 | cut -d' ' -f1)
if [ -n "$t_app" ] && [ -n "$t_load" ]; then
    echo "reload latency (approval -> proxy loaded): $(($(ms_of "$t_load") - t_app)) ms"
else
    fail "(b) no approval event for $ID"
fi

# (h) the advisor recorded CONFIG:LOADED for the proxy's revisions
expect_log_in "$T/P1.log" "advisor recorded revision 2 as loaded" "(h) loaded report answered"
ev=$(adm ADV GET /v1/events)
expect_eq "(h) CONFIG:LOADED v2" 1 "$(body "$ev" | "$JQ" \
    '[.events[] | select(.kind == "CONFIG:LOADED" and .sandbox == "one" and (.line | contains("version:v2")))] | length')"

# ---------------------------------------------------------------------------
# (c) manual: pending until a reviewer approves with the review token
# ---------------------------------------------------------------------------

out=$(adm ADV PUT /v1/sandboxes/one/settings/proposal_approval_mode '{"value":"manual"}')
expect_eq "(c) manual mode" 200 "$(code "$out")"
out=$(via P1 -d "$(rule manual_read 127.0.0.1 "$UP" GET /manual)" http://policy.local/v1/proposals)
expect_eq "(c) submitted" "202 1" "$(code "$out") $(jget "$out" .accepted_chunks)"
MID=$(jget "$out" '.accepted_chunk_ids[0]')
out=$(via P1 "http://policy.local/v1/proposals/$MID/wait?timeout=1")
expect_eq "(c) timed out pending" "200 pending true" \
    "$(code "$out") $(jget "$out" .status) $(jget "$out" .timed_out)"
expect_eq "(c) no policy_reloaded while pending" null "$(jget "$out" .policy_reloaded)"
TOKEN=$(jget "$out" .review_token)
out=$(via P1 "http://127.0.0.1:$UP/manual")
expect_eq "(c) still denied" 403 "$(code "$out")"
via P1 "http://policy.local/v1/proposals/$MID/wait?timeout=30" >"$T/manual.wait" &
WAITER=$!
sleep 0.3
out=$(adm ADV POST "/v1/sandboxes/one/proposals/$MID/approve" '{"review_token":"stale"}')
expect_eq "(c) stale token refused" 412 "$(code "$out")"
out=$(adm ADV POST "/v1/sandboxes/one/proposals/$MID/approve" "{\"review_token\":\"$TOKEN\"}")
expect_eq "(c) reviewer approves" 200 "$(code "$out")"
wait "$WAITER"
out=$(cat "$T/manual.wait")
expect_eq "(c) wait woke approved" "200 approved true" \
    "$(code "$out") $(jget "$out" .status) $(jget "$out" .policy_reloaded)"
out=$(via P1 "http://127.0.0.1:$UP/manual")
expect_eq "(c) retried request" 200 "$(code "$out")"
if up_got "GET /manual"; then pass; else fail "(c) upstream never got GET /manual"; fi

# ---------------------------------------------------------------------------
# (d) refused outright: link-local and _provider_
# ---------------------------------------------------------------------------

revs_before=$(grep -c "advisor revision .* loaded" "$T/P1.log")
out=$(via P1 -d "$(rule meta 169.254.169.254 80 GET /latest)" http://policy.local/v1/proposals)
expect_eq "(d) link-local refused" "0 1" "$(jget "$out" .accepted_chunks) $(jget "$out" .rejected_chunks)"
expect_has "(d) link-local reason" "169.254.169.254" "$(jget "$out" '.rejection_reasons | join(" ")')"
out=$(via P1 -d "$(rule _provider_github 127.0.0.1 "$UP" GET /p)" http://policy.local/v1/proposals)
expect_eq "(d) _provider_ refused" "400 invalid_proposal" "$(code "$out") $(jget "$out" .error)"
expect_has "(d) _provider_ reason" "reserved '_provider_' rule-name prefix" "$(jget "$out" .detail)"
sleep 0.2
expect_eq "(d) no new revision" "$revs_before" "$(grep -c "advisor revision .* loaded" "$T/P1.log")"

# ---------------------------------------------------------------------------
# (e) another sandbox's token sees nothing of sandbox one
# ---------------------------------------------------------------------------

T2=$(cat "$T/two.token")
out=$("$CURL" -s -H "Authorization: Bearer $T2" -w '|%{http_code}' \
    "http://127.0.0.1:$ADV_PORT/v1/sandboxes/one/proposals/$ID")
expect_eq "(e) other sandbox: chunk" 404 "$(code "$out")"
out=$("$CURL" -s -H "Authorization: Bearer $T2" -H 'Content-Type: application/json' \
    -d "$(rule x 127.0.0.1 "$UP" GET /x)" -w '|%{http_code}' \
    "http://127.0.0.1:$ADV_PORT/v1/sandboxes/one/proposals")
expect_eq "(e) other sandbox: submit" 404 "$(code "$out")"
out=$("$CURL" -s -H "Authorization: Bearer $T2" -w '|%{http_code}' \
    "http://127.0.0.1:$ADV_PORT/v1/sandboxes/one/policy")
expect_eq "(e) other sandbox: policy" 404 "$(code "$out")"
out=$("$CURL" -s -H "Authorization: Bearer $(cat "$T/one.token")" -w '|%{http_code}' \
    "http://127.0.0.1:$ADV_PORT/v1/sandboxes/one/proposals/$ID")
expect_eq "(e) own token: chunk" 200 "$(code "$out")"

# ---------------------------------------------------------------------------
# a revision this proxy cannot load: fail closed, not reported, not reloaded
# ---------------------------------------------------------------------------

# (the mode is still manual) the revision file cannot be written: the reload
# finds no file and the proxy quarantines
mkdir -p "$T/P1.data/advisor-policy.yaml.tmp"
approve_rule() { # NAME PATH: submit through policy.local, approve as reviewer; prints the id
    o=$(via P1 -d "$(rule "$1" 127.0.0.1 "$UP" GET "$2")" http://policy.local/v1/proposals)
    i=$(jget "$o" '.accepted_chunk_ids[0]')
    o=$(via P1 "http://policy.local/v1/proposals/$i")
    adm ADV POST "/v1/sandboxes/one/proposals/$i/approve" \
        "{\"review_token\":\"$(jget "$o" .review_token)\"}" >/dev/null
    printf '%s' "$i"
}
QID=$(approve_rule quarantined_read /q)
wait_log "$T/P1.log" "policy reload (advisor revision 4) failed, fail-closed" ||
    fail "revision 4 did not fail to load: $(tail -5 "$T/P1.log")"
out=$(via P1 "http://127.0.0.1:$UP/allowed")
expect_eq "quarantine denies" 403 "$(code "$out")"
expect_has "quarantine reason" "fail-closed quarantine is active" "$out"
out=$(via P1 "http://policy.local/v1/proposals/$QID/wait?timeout=1")
expect_eq "unloaded approval: policy_reloaded false" "approved false" \
    "$(jget "$out" .status) $(jget "$out" .policy_reloaded)"
out=$(via P1 http://policy.local/v1/policy/current)
expect_eq "quarantine: no current policy" "404 policy_unavailable" "$(code "$out") $(jget "$out" .error)"
ev=$(adm ADV GET /v1/events)
expect_eq "revision 4 never reported loaded" 0 "$(body "$ev" | "$JQ" \
    '[.events[] | select(.kind == "CONFIG:LOADED" and (.line | contains("version:v4")))] | length')"
rmdir "$T/P1.data/advisor-policy.yaml.tmp"
RID=$(approve_rule recovered_read /r)
wait_log "$T/P1.log" "advisor revision 5 loaded" || fail "revision 5 did not load"
out=$(via P1 "http://127.0.0.1:$UP/q")
expect_eq "recovered: the quarantined rule now works" 200 "$(code "$out")"
wait_log "$T/P1.log" "advisor recorded revision 5 as loaded" || fail "revision 5 not recorded"

# ---------------------------------------------------------------------------
# (g) the setting off closes policy.local and empties next_steps
# ---------------------------------------------------------------------------

out=$(adm ADV PUT /v1/settings/agent_policy_proposals_enabled '{"value":false}')
expect_eq "(g) global setting off" 200 "$(code "$out")"
wait_log "$T/P1.log" "agent_policy_proposals_enabled is off" || fail "(g) the proxy never saw the setting off"
for route in /v1/policy/current "/v1/denials?last=1" "/v1/proposals/$ID" /v1/nope; do
    out=$(via P1 "http://policy.local$route")
    expect_eq "(g) $route disabled" "404 feature_disabled" "$(code "$out") $(jget "$out" .error)"
done
expect_has "(g) detail names the setting" "agent_policy_proposals_enabled" "$(jget "$out" .detail)"
out=$(via P1 -d "$(rule y 127.0.0.1 "$UP" GET /y)" http://policy.local/v1/proposals)
expect_eq "(g) submit disabled" "404 feature_disabled" "$(code "$out") $(jget "$out" .error)"
out=$(via P1 "http://127.0.0.1:$UP/other")
expect_eq "(g) deny body without advice" "403 0 null" \
    "$(code "$out") $(jget "$out" '.next_steps | length') $(jget "$out" .agent_guidance)"
out=$(via P1 "http://nowhere.example:8081/x")
expect_eq "(g) L4 deny body: the reference's keys only" "403 detail,error,reason" \
    "$(code "$out") $(jget "$out" 'keys_unsorted | join(",")')"

# ---------------------------------------------------------------------------
# (f) a dead prover: pending with application_error, never approved
# ---------------------------------------------------------------------------

printf "0123456789abcdef0123" >"$T/dead.token"
start_advisor DEAD_ADV --config "$T/quiet.yaml" --prover "http://127.0.0.1:1" --prover-token-file "$T/dead.token"
sandbox DEAD_ADV three "$T/base.yaml"
adm DEAD_ADV PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}' >/dev/null
out=$(adm DEAD_ADV PUT /v1/sandboxes/three/settings/proposal_approval_mode '{"value":"auto"}')
expect_eq "(f) auto mode" 200 "$(code "$out")"
start_aproxy P2 DEAD_ADV three
wait_log "$T/P2.log" "advisor revision 1 loaded" || fail "(f) proxy two never loaded"
wait_log "$T/P2.log" "agent_policy_proposals_enabled is on" || fail "(f) setting never arrived"
out=$(via P2 -d "$(rule dead_read 127.0.0.1 "$UP" GET /dead)" http://policy.local/v1/proposals)
expect_eq "(f) submitted" "202 1" "$(code "$out") $(jget "$out" .accepted_chunks)"
FID=$(jget "$out" '.accepted_chunk_ids[0]')
out=$(via P2 "http://policy.local/v1/proposals/$FID/wait?timeout=2")
expect_eq "(f) pending, timed out" "pending true" "$(jget "$out" .status) $(jget "$out" .timed_out)"
ae=$(jget "$out" .application_error)
if [ -n "$ae" ] && [ "$ae" != null ]; then pass; else fail "(f) no application_error: $out"; fi
out=$(via P2 "http://127.0.0.1:$UP/dead")
expect_eq "(f) still denied" 403 "$(code "$out")"
if up_got "GET /dead"; then fail "(f) the upstream received GET /dead"; else pass; fi

# policy.local clients count toward the per-address connection cap like
# every other connection: with a cap of 1, a long-poll in flight leaves no
# room for a second connection from the same address
start_aproxy P3 DEAD_ADV three --max-client-conns 1
wait_log "$T/P3.log" "advisor revision 1 loaded" || fail "(f) proxy three never loaded"
via P3 "http://policy.local/v1/proposals/$FID/wait?timeout=4" >"$T/cap.wait" &
CAPW=$!
sleep 1 # the long-poll is identified and handed to policy.local by now
out=$(via P3 "http://127.0.0.1:$UP/allowed")
expect_eq "(f) a policy.local client counts toward the cap" 503 "$(code "$out")"
wait "$CAPW"
expect_eq "(f) the long-poll itself was served" 200 "$(code "$(cat "$T/cap.wait")")"
out=$(via P3 "http://127.0.0.1:$UP/allowed")
expect_eq "(f) room again once it is answered" 200 "$(code "$out")"

# an unreachable advisor (killed): the last good policy stays, one log line
kill -9 "$DEAD_ADV_PID" 2>/dev/null
wait "$DEAD_ADV_PID" 2>/dev/null
wait_log "$T/P2.log" "advisor unreachable" 300 || fail "(f) outage not logged: $(tail -5 "$T/P2.log"; tail -3 "$T/DEAD_ADV.log")"
sleep 0.5
out=$(via P2 "http://127.0.0.1:$UP/allowed")
expect_eq "last good policy kept" 200 "$(code "$out")"
expect_eq "outage logged once" 1 "$(grep -c 'advisor unreachable' "$T/P2.log")"
out=$(via P2 -d "$(rule z 127.0.0.1 "$UP" GET /z)" http://policy.local/v1/proposals)
expect_eq "advisor down: submit" "502 gateway_connect_failed" "$(code "$out") $(jget "$out" .error)"

# SIGTERM with a long-poll in flight: prompt exit 0
kill "$P1_PID"
wait "$P1_PID"
expect_eq "proxy one exits 0 on SIGTERM" 0 "$?"

finish
