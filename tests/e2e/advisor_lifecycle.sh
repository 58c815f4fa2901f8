#!/bin/sh
# advisor_lifecycle.sh - the proposal lifecycle through the real advisor and
# its real prover child: settings (precedence, messages), submission
# (auto/manual, early rejections, feature flag), review tokens, approve,
# undo and reject-after-approve (exact inversion, by policy hash),
# approve-all, edit, clear, supersede, mechanistic dedup, history, events,
# the sandbox-token boundary, and a dead prover (pending, never approved).
. "$(dirname "$0")/advisor_lib.sh"

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
CREDS='credentials:
  - {name: gh, type: github, target_hosts: [api.github.com]}
'

start_advisor "$WORK/data" || exit 1

# --- process contract --------------------------------------------------------
api GET /healthz "" -
eq "healthz answers without a token" "$STATUS" 200
api GET /v1/sandboxes "" -
eq "no token: 401" "$STATUS" 401
api GET /v1/sandboxes "" "not-the-admin-token-at-all"
eq "wrong token: 401" "$STATUS" 401
api GET /openapi.json
eq "openapi.json" "$(jf .openapi)" "3.0.3"
# Every route of the table is described (and only those).
for p in /v1/sandboxes '/v1/sandboxes/{name}/proposals/{id}/approve' /v1/events \
    '/v1/sandboxes/{name}/loaded' '/v1/sandboxes/{name}/proposals/approve-all'; do
    eq "openapi describes $p" "$(jf --arg p "$p" '.paths | has($p)' 2>/dev/null || printf '%s' "$BODY" | jq --arg p "$p" '.paths | has($p)')" true
done

# --- sandboxes ---------------------------------------------------------------
create_sandbox sb1 "$POLICY" "$CREDS"
eq "create sandbox: 201" "$STATUS" 201
eq "create answers revision 1" "$(jf .policy_version)" 1
T1=$SB_TOKEN
eq "sandbox token is 64 hex digits" "$(printf '%s' "$T1" | tr -d '0-9a-f' | wc -c)" 0
H1=$(jf .policy_hash)
create_sandbox sb1 "$POLICY"
eq "duplicate name: 409" "$STATUS" 409
create_sandbox 'Bad Name' "$POLICY"
eq "bad name: 400" "$STATUS" 400
create_sandbox sb-bad 'version: 1
network_policies:
  r: {endpoints: [{host: a.com, port: 99999}], binaries: [{path: /usr/bin/curl}]}
'
eq "invalid policy: 400" "$STATUS" 400
has "invalid policy is located" "$(jf .detail)" "policy:"
create_sandbox sb2 "$POLICY"
T2=$SB_TOKEN

# --- settings ----------------------------------------------------------------
api PUT /v1/settings/proposal_approval_mode '{"value":"AUTO"}'
eq "AUTO refused" "$(jf .detail)" "setting 'proposal_approval_mode' expects one of [manual, auto]; got 'AUTO'"
api PUT /v1/settings/proposal_approval_mode '{"value":" auto"}'
eq "' auto' refused" "$STATUS" 400
api PUT /v1/settings/proposal_approval_mode '{"value":"autom"}'
eq "autom refused" "$STATUS" 400
api PUT /v1/settings/proposal_approval_mode '{"value":true}'
eq "wrong type" "$(jf .detail)" "setting 'proposal_approval_mode' expects string value"
api PUT /v1/settings/agent_policy_proposals_enabled '{"value":"yes"}'
eq "bool wrong type" "$(jf .detail)" "setting 'agent_policy_proposals_enabled' expects bool value"
api PUT /v1/settings/no_such_key '{"value":1}'
eq "unknown key" "$(jf .detail)" "unknown setting key 'no_such_key'. Allowed keys: agent_policy_proposals_enabled, proposal_approval_mode, peer_address_ranges, auto_approval_envelope, envelope_allow_binary_globs, envelope_allow_host_wildcards, envelope_allow_uninspected, envelope_allow_access_presets, envelope_allow_new_ports"

# The flag off: the gateway itself refuses submissions.
api POST /v1/sandboxes/sb1/proposals "$(proposal ex example.com 443 GET /index.html)" "$T1"
eq "proposals off: 404" "$STATUS" 404
eq "proposals off: feature_disabled" "$(jf .error)" feature_disabled
has "feature_disabled names the key" "$(jf .detail)" agent_policy_proposals_enabled

api PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}'
eq "global flag on" "$(jf .agent_policy_proposals_enabled.resolved_from)" global
api PUT /v1/sandboxes/sb1/settings/agent_policy_proposals_enabled '{"value":false}'
eq "sandbox write of a global key: 409" "$STATUS" 409
eq "managed globally message" "$(jf .detail)" "setting 'agent_policy_proposals_enabled' is managed globally; delete the global setting before sandbox update"
api PUT /v1/sandboxes/sb1/settings/proposal_approval_mode '{"value":"auto"}'
eq "sandbox auto" "$(jf .proposal_approval_mode.resolved_from)" sandbox
api GET /v1/sandboxes/sb1/settings "" "$T1"
eq "sandbox reads its settings" "$(jf .proposal_approval_mode.value)" auto
api GET /v1/sandboxes/sb2/settings "" "$T2"
eq "other sandbox is manual by default" "$(jf .proposal_approval_mode.resolved_from)" default

# --- auto mode: empty delta approves, findings wait --------------------------
api POST /v1/sandboxes/sb1/proposals "$(proposal ex example.com 443 GET /index.html)" "$T1"
eq "submit: 202" "$STATUS" 202
eq "accepted 1" "$(jf .accepted_chunks)" 1
C1=$(jf '.accepted_chunk_ids[0]')
api GET "/v1/sandboxes/sb1/proposals/$C1" "" "$T1"
eq "auto: approved" "$(jf .status)" approved
eq "auto: no new findings" "$(jf .validation_result)" "prover: no new findings"
eq "auto: revision 2" "$(jf .approved_revision)" 2
H2=$(jf .candidate_effective_policy_hash)
eq "chunk's current hash is revision 1" "$(jf .current_effective_policy_hash)" "$H1"

api POST /v1/sandboxes/sb1/proposals "$(proposal ghw api.github.com 443 PUT '/repos/o/r/contents/**')" "$T1"
C2=$(jf '.accepted_chunk_ids[0]')
api GET "/v1/sandboxes/sb1/proposals/$C2"
eq "credentialed write: pending" "$(jf .status)" pending
eq "credentialed write: finding" "$(jf .validation_result)" "prover: 1 new finding
  capability_expansion: PUT on api.github.com:443 via /usr/bin/curl"
eq "reviewer sees the prover's answer" "$(jf .evidence.prover.verdict)" findings
has "reviewer sees the diff" "$(jf .evidence.diff)" "+      - allow:"
# the rule merges into github_ro's endpoint: the diff says where, and the
# lines that did not change are context (docs/advisor.md#diff)
DIFF=$(jf .evidence.diff)
eq "the diff's first line is its hunk header" "$(printf '%s\n' "$DIFF" | head -n 1)" \
    "@@ network_policies > github_ro > endpoints[api.github.com] @@"
has "the endpoint's port is context" "$DIFF" "
       port: 443
"
case "$DIFF" in
*"-      port: 443"* | *"+      port: 443"*) bad "negative: port: 443 removed and added: $DIFF" ;;
*) ok "negative: port: 443 is never removed and added" ;;
esac

# Issue #22: the sandbox's own token reads one agent view on every route it
# may call - no evidence (credential names and scopes), security notes,
# rationale or proposed rule anywhere - while the admin's list has them.
hidden='[.. | objects | keys[] | select(. == "evidence" or . == "security_notes" or . == "rationale" or . == "proposed_rule")] | length'
api GET /v1/sandboxes/sb1/proposals "" "$T1"
eq "agent list: 200" "$STATUS" 200
eq "agent list has no reviewer-only key" "$(jf "$hidden")" 0
eq "agent list keeps status" "$(jf ".chunks[] | select(.chunk_id == \"$C2\") | .status")" pending
has "agent list keeps the verdict" "$(jf ".chunks[] | select(.chunk_id == \"$C2\") | .validation_result")" "capability_expansion"
api GET "/v1/sandboxes/sb1/proposals/$C2" "" "$T1"
eq "agent show has no reviewer-only key" "$(jf "$hidden")" 0
api GET "/v1/sandboxes/sb1/proposals/$C2/wait?timeout=1" "" "$T1"
eq "agent wait has no reviewer-only key" "$(jf "$hidden")" 0
# Issue #36 item 6: every route the sandbox's token may read, the history
# included, answers without a reviewer-only field (confidence, hit count and
# the decision metadata too); the admin's history keeps the confidence.
hidden_all='[.. | objects | keys[] | select(IN("evidence", "approved_evidence", "security_notes", "rationale", "proposed_rule", "confidence", "hit_count", "decided_by", "auto_approved", "approved_seq", "analysis_mode", "draft_version", "credentials"))] | length'
for route in /v1/sandboxes/sb1 /v1/sandboxes/sb1/policy /v1/sandboxes/sb1/settings \
    /v1/sandboxes/sb1/servers /v1/sandboxes/sb1/proposals "/v1/sandboxes/sb1/proposals/$C2" \
    "/v1/sandboxes/sb1/proposals/$C2/wait?timeout=1" /v1/sandboxes/sb1/history; do
    api GET "$route" "" "$T1"
    eq "agent GET $route: 200" "$STATUS" 200
    eq "agent GET $route: no reviewer-only key" "$(jf "$hidden_all")" 0
    eq "agent GET $route: no confidence in the text" "$(printf "%s" "$BODY" | grep -c confidence)" 0
done
api GET /v1/sandboxes/sb1/history
has "admin history keeps the confidence" "$(jf '.history[0].message')" "(confidence: "
api GET /v1/sandboxes/sb1/proposals
eq "admin list has evidence" "$(jf ".chunks[] | select(.chunk_id == \"$C2\") | .evidence.prover.verdict")" findings

# Security notes block auto-approval although the delta is empty.
api POST /v1/sandboxes/sb1/proposals "$(proposal db example.com 5432 GET /x)" "$T1"
C3=$(jf '.accepted_chunk_ids[0]')
api GET "/v1/sandboxes/sb1/proposals/$C3"
eq "noted: pending" "$(jf .status)" pending
eq "noted: empty delta" "$(jf .validation_result)" "prover: no new findings"
eq "noted: database port" "$(jf .security_notes)" "Port 5432 is a well-known database/service port."

# Early rejections.
api POST /v1/sandboxes/sb1/proposals "$(proposal md 169.254.169.254 80 GET /latest)" "$T1"
eq "link-local: rejected" "$(jf .rejected_chunks)" 1
has "link-local: reason" "$(jf '.rejection_reasons[0]')" "always-blocked"
api POST /v1/sandboxes/sb1/proposals "$(proposal md2 metadata.google.internal 80 GET /x)" "$T1"
eq "metadata host: rejected" "$(jf .rejected_chunks)" 1
api POST /v1/sandboxes/sb1/proposals "$(proposal lo 127.0.0.1 80 GET /x)" "$T1"
eq "loopback without the test switch: rejected" "$(jf .rejected_chunks)" 1
api POST /v1/sandboxes/sb1/proposals "$(proposal _provider_x example.org 443 GET /x)" "$T1"
has "_provider_ refused" "$(jf .detail)" "reserved '_provider_' rule-name prefix"
api POST /v1/sandboxes/sb1/proposals '{"operations":[]}' "$T1"
eq "no operations: 400" "$(jf .detail)" "proposal requires at least one operation"
api POST /v1/sandboxes/sb1/proposals "$(proposal q example.com 443 GET '/a?x=1')" "$T1"
eq "query in path: 400" "$STATUS" 400

# Unicode format characters (issue #22): U+202E (RIGHT-TO-LEFT OVERRIDE) or
# U+200B (ZERO WIDTH SPACE) in the rule name, the rationale, a path or a host
# is refused, naming the field and the code point; nothing is stored.
for cp in 202e 200b; do
    U=$(printf '"\\u%s"' "$cp" | jq -r .)
    CP=$(printf 'U+%s' "$cp" | tr a-f A-F)
    api POST /v1/sandboxes/sb1/proposals "$(proposal "gh$U" example.com 443 GET /x)" "$T1"
    eq "$CP in rule name: 400" "$STATUS $(jf .error)" "400 invalid_proposal"
    has "$CP in rule name: located" "$(jf '.diagnostics | join("\n")')" "operations[0].addRule.ruleName contains $CP (a Unicode format character)"
    api POST /v1/sandboxes/sb1/proposals "$(proposal gh example.com 443 GET /x | jq -c --arg u "$U" '.intent_summary += $u')" "$T1"
    eq "$CP in rationale: 400" "$STATUS" 400
    has "$CP in rationale: located" "$(jf '.diagnostics[0]')" "proposal:1:"
    has "$CP in rationale: named" "$(jf .detail)" "intent_summary contains $CP"
    api POST /v1/sandboxes/sb1/proposals "$(proposal gh example.com 443 GET "/x${U}y")" "$T1"
    eq "$CP in path: 400" "$STATUS" 400
    has "$CP in path: named" "$(jf .detail)" "rules[0].allow.path contains $CP"
    api POST /v1/sandboxes/sb1/proposals "$(proposal gh "exa${U}mple.com" 443 GET /x)" "$T1"
    eq "$CP in host: 400" "$STATUS" 400
    has "$CP in host: named" "$(jf .detail)" "endpoints[0].host contains $CP"
done
# Malformed UTF-8 (an overlong '/') is refused too, located.
api POST /v1/sandboxes/sb1/proposals "$(proposal gh example.com 443 GET /x | sed "s/\"ruleName\":\"gh\"/\"ruleName\":\"gh$(printf '\300\257')\"/")" "$T1"
eq "malformed UTF-8: 400" "$STATUS $(jf .error)" "400 invalid_proposal"
has "malformed UTF-8: located" "$(jf '.diagnostics[0]')" "proposal:1:"

# --- the sandbox-token boundary ----------------------------------------------
api GET "/v1/sandboxes/sb1/proposals/$C2" "" "$T2"
eq "another sandbox's chunk: 404" "$STATUS" 404
api POST /v1/sandboxes/sb1/proposals "$(proposal x example.net 443 GET /x)" "$T2"
eq "another sandbox's submit: 404" "$STATUS" 404
api GET /v1/sandboxes/sb1/policy "" "$T2"
eq "another sandbox's policy: 404" "$STATUS" 404
api POST "/v1/sandboxes/sb1/proposals/$C2/approve" '{"review_token":"x"}' "$T1"
eq "a sandbox cannot approve: 403" "$STATUS" 403
api GET /v1/sandboxes "" "$T1"
eq "a sandbox cannot list sandboxes: 403" "$STATUS" 403
api GET "/v1/sandboxes/sb1/proposals/$C2" "" "$T1"
eq "agent view has no evidence" "$(jf 'has("evidence")')" false

# --- review tokens, approve, undo, reject -------------------------------------
api GET "/v1/sandboxes/sb1/proposals/$C2"
TOK2=$(jf .review_token)
api POST "/v1/sandboxes/sb1/proposals/$C2/approve" '{"review_token":"stale"}'
eq "wrong token: 412" "$STATUS" 412
eq "wrong token: message" "$(jf .detail)" "review token does not match the fetched proposal; refetch and review again"
# A base-policy change about another host leaves what C2 reads alone, so
# its token stays good (docs/advisor.md#review-tokens); a new credential on
# its host changes what it reads, so the stored evaluation is stale.
api PUT /v1/sandboxes/sb1/policy "$(jq -cn --arg p "$POLICY
  extra:
    name: extra
    endpoints: [{host: pypi.org, port: 443}]
    binaries: [{path: /usr/bin/pip}]
" '{policy: $p}')"
eq "base policy set" "$(jf .base_revision)" 2
api PUT /v1/sandboxes/sb1/credentials "$(jq -cn --arg c "$CREDS  - {name: gh2, type: github, target_hosts: [api.github.com]}
" '{credentials: $c}')"
eq "a second credential on api.github.com" "$STATUS" 200
api POST "/v1/sandboxes/sb1/proposals/$C2/approve" "{\"review_token\":\"$TOK2\"}"
eq "inputs changed: 412" "$STATUS" 412
eq "inputs changed: message" "$(jf .detail)" "proposal inputs changed; evaluation refreshed, refetch and review again"
api GET "/v1/sandboxes/sb1/proposals/$C2"
TOK2B=$(jf .review_token)
[ "$TOK2B" != "$TOK2" ] && ok "token refreshed" || bad "token refreshed"
api GET /v1/sandboxes/sb1/policy
HB=$(jf .hash)
RB=$(jf .revision)
api POST "/v1/sandboxes/sb1/proposals/$C2/approve" "{\"review_token\":\"$TOK2B\"}"
eq "approve: 200" "$STATUS" 200
HA=$(jf .policy_hash)
api GET /v1/sandboxes/sb1/policy
has "approved rule is in the policy" "$(jf .policy_yaml)" "/repos/o/r/contents/**"
eq "policy revision moved" "$(jf .revision)" $((RB + 1))
api POST "/v1/sandboxes/sb1/proposals/$C2/approve" "{\"review_token\":\"$TOK2B\"}"
eq "approve twice: 409" "$STATUS" 409
api POST "/v1/sandboxes/sb1/proposals/$C2/undo"
eq "undo: pending" "$(jf .status)" pending
eq "undo restores the exact policy" "$(jf .policy_hash)" "$HB"
api GET /v1/sandboxes/sb1/policy
case "$(jf .policy_yaml)" in *"/repos/o/r/contents"*) bad "undo removed the grant" ;; *) ok "undo removed the grant" ;; esac
has "undo kept the folded-into rule" "$(jf .policy_yaml)" "github_ro"
api GET "/v1/sandboxes/sb1/proposals/$C2"
api POST "/v1/sandboxes/sb1/proposals/$C2/approve" "{\"review_token\":\"$(jf .review_token)\"}"
[ "$STATUS" = 200 ] || { api GET "/v1/sandboxes/sb1/proposals/$C2"; api POST "/v1/sandboxes/sb1/proposals/$C2/approve" "{\"review_token\":\"$(jf .review_token)\"}"; }
eq "re-approve after undo" "$STATUS" 200
eq "re-approve reproduces the same policy" "$(jf .policy_hash)" "$HA"
api POST "/v1/sandboxes/sb1/proposals/$C2/reject" '{"reason":"too broad:\nnarrow it to docs/"}'
eq "reject approved: rejected" "$(jf .status)" rejected
eq "reject approved removes the grant" "$(jf .policy_hash)" "$HB"
api GET "/v1/sandboxes/sb1/proposals/$C2/wait?timeout=1" "" "$T1"
eq "agent reads the reason" "$(jf .rejection_reason)" "too broad:narrow it to docs/"
api POST "/v1/sandboxes/sb1/proposals/$C2/reject" '{"reason":"fine \u202eok"}'
eq "reason with U+202E: 400" "$STATUS $(jf .error)" "400 invalid_request"
has "reason with U+202E: named" "$(jf .detail)" "reason contains U+202E (a Unicode format character)"
eq "wait on a decided chunk is immediate" "$(jf 'has("timed_out")')" false
api POST "/v1/sandboxes/sb1/proposals/$C2/reject" '{}'
eq "reject a rejected chunk: 409" "$STATUS" 409
api POST "/v1/sandboxes/sb1/proposals/$C2/undo"
eq "undo a rejected chunk: 409" "$STATUS" 409
api POST /v1/sandboxes/sb1/proposals/no-such-chunk/undo
eq "unknown chunk: 404" "$STATUS" 404

# --- wait times out on a pending chunk ---------------------------------------
api GET "/v1/sandboxes/sb1/proposals/$C3/wait?timeout=1" "" "$T1"
eq "pending wait: timed_out" "$(jf .timed_out)" true
eq "pending wait: still pending" "$(jf .status)" pending

# --- edit, approve-all, clear ------------------------------------------------
api PUT "/v1/sandboxes/sb1/proposals/$C3" '{"rule":{"endpoints":[{"host":"example.com","port":8443,"protocol":"rest","enforcement":"enforce","rules":[{"allow":{"method":"GET","path":"/x"}}]}],"binaries":[{"path":"/usr/bin/curl"}]}}'
eq "edit: 200" "$STATUS" 200
eq "edit: notes recomputed" "$(jf .security_notes)" ""
eq "edit: still pending" "$(jf .status)" pending
api POST /v1/sandboxes/sb1/proposals "$(proposal e2 example.net 443 GET /a)" "$T2"
api PUT /v1/sandboxes/sb1/settings/proposal_approval_mode '{"value":"manual"}'
api POST /v1/sandboxes/sb1/proposals "$(proposal e3 example.org 443 GET /b)" "$T1"
C4=$(jf '.accepted_chunk_ids[0]')
api GET "/v1/sandboxes/sb1/proposals/$C4"
eq "manual: empty delta stays pending" "$(jf .status)" pending
api POST /v1/sandboxes/sb1/proposals/approve-all '{}'
eq "approve-all approved the two current chunks" "$(jf .approved_chunks)" 2
[ "$(jf .approved_chunks)" = 2 ] || echo "# $BODY"
api GET "/v1/sandboxes/sb1/proposals?status=pending"
eq "no pending chunk left" "$(jf '.chunks | length')" 0
# (the CLI refuses an unknown --status itself; the API answers 400)
api GET "/v1/sandboxes/sb1/proposals?status=pendng"
eq "an unknown status filter: 400" "$STATUS" 400
eq "with the states it takes" "$(jf .detail)" "status must be one of pending, approved, rejected, suspended"
# A batch re-checks each chunk against the policy the earlier approvals
# made: X (GET) gives curl credentialed reach to a new host; after it, Y
# (POST, same host) is no longer reach but capability - not what the
# reviewer read, so it is skipped and its refreshed evaluation stored.
api POST /v1/sandboxes/sb1/credentials "" >/dev/null 2>&1
api PUT /v1/sandboxes/sb1/credentials "$(jq -cn --arg c "$CREDS  - {name: gl, type: gitlab, target_hosts: [gitlab.example.com]}
" '{credentials: $c}')"
api POST /v1/sandboxes/sb1/proposals "$(proposal gx gitlab.example.com 443 GET /a)" "$T1"
X=$(jf '.accepted_chunk_ids[0]')
# Y names python3 first (another key: X is not superseded) and curl too.
api POST /v1/sandboxes/sb1/proposals "$(proposal gy gitlab.example.com 443 POST /b /usr/bin/python3 |
    jq -c '.operations[0].addRule.rule.binaries += [{path: "/usr/bin/curl"}]')" "$T1"
Y=$(jf '.accepted_chunk_ids[0]')
api GET "/v1/sandboxes/sb1/proposals/$Y"
has "Y alone is reach for curl" "$(jf .validation_result)" "credential_reach_expansion: gitlab.example.com:443 via /usr/bin/curl"
api POST /v1/sandboxes/sb1/proposals/approve-all "{\"approvals\":[{\"chunk_id\":\"$X\"},{\"chunk_id\":\"$Y\"}]}"
eq "batch approved X only" "$(jf '[.approved[].chunk_id] | join(",")')" "$X"
has "batch skipped Y as changed" "$(jf '.skipped[0].reason')" "proposal inputs changed"
api GET "/v1/sandboxes/sb1/proposals/$Y"
has "Y's refreshed evaluation is capability" "$(jf .validation_result)" "capability_expansion: POST on gitlab.example.com:443"
eq "Y still pending" "$(jf .status)" pending
api POST /v1/sandboxes/sb1/proposals "$(proposal e5 example.org 443 GET /c)" "$T1"
api DELETE /v1/sandboxes/sb1/proposals
eq "clear: 2 cleared (Y and e5)" "$(jf .cleared)" 2

# --- supersede and mechanistic dedup ------------------------------------------
# (PATCH: the base's read-only access covers GET, and a rule the policy
# already allows is answered already_allowed and never stored)
MECH=$(proposal allow_host_443 api.github.com 443 PATCH /user)
api POST '/v1/sandboxes/sb1/proposals?analysis_mode=mechanistic' \
    "$(proposal allow_host_443 api.github.com 443 GET /user)" "$T1"
eq "a covered mechanistic rule: already_allowed" "$(jf '.status + " " + (.already_allowed[0].covered_by | join(","))')" "already_allowed github_ro"
eq "a covered mechanistic rule: nothing stored" "$(jf '.accepted_chunks')" 0
api POST '/v1/sandboxes/sb1/proposals?analysis_mode=mechanistic' "$MECH" "$T1"
M1=$(jf '.accepted_chunk_ids[0]')
api POST '/v1/sandboxes/sb1/proposals?analysis_mode=mechanistic' "$MECH" "$T1"
eq "mechanistic dedup: same id" "$(jf '.accepted_chunk_ids[0]')" "$M1"
api GET "/v1/sandboxes/sb1/proposals/$M1"
eq "mechanistic dedup: hit_count 2" "$(jf .hit_count)" 2
eq "mechanistic mode persisted" "$(jf .analysis_mode)" mechanistic
api POST /v1/sandboxes/sb1/proposals "$(proposal mine api.github.com 443 POST /user/repos)" "$T1"
A1=$(jf '.accepted_chunk_ids[0]')
api GET "/v1/sandboxes/sb1/proposals/$M1"
eq "agent supersedes the mechanistic chunk" "$(jf .rejection_reason)" "superseded by chunk $A1"
api POST '/v1/sandboxes/sb1/proposals?analysis_mode=mechanistic' "$(proposal allow_x api.github.com 443 DELETE /user)" "$T1"
api GET "/v1/sandboxes/sb1/proposals/$A1"
eq "a mechanistic flush never supersedes the agent's chunk" "$(jf .status)" pending

# --- history and events --------------------------------------------------------
api GET /v1/sandboxes/sb1/history
has "history: proposed with confidence" "$(jf '.history[0].message')" "proposed (confidence: 75%)"
api GET /v1/events
EV=$(jf '[.events[].kind] | unique | join(",")')
for k in CONFIG:CREATED CONFIG:PROPOSED CONFIG:APPROVED CONFIG:REJECTED CONFIG:REMOVED CONFIG:MERGED CONFIG:SETTING; do
    has "event kind $k recorded" "$EV" "$k"
done
AUTO=$(jf '[.events[] | select(.kind == "CONFIG:APPROVED" and .record.auto == true)][0]')
has "auto event line" "$(printf '%s' "$AUTO" | jq -r .line)" "[auto:true source:agent_authored prover_delta:empty resolved_from:sandbox version:v2 hash:sha256:$H2]"
eq "auto event keeps the baseline blob" "$(printf '%s' "$AUTO" | jq -r '.record.inputs.baseline_hash')" "$H1"
has "auto event keeps the prover version" "$(printf '%s' "$AUTO" | jq -r '.record.inputs.prover_version')" "."
api GET /v1/events?since=1000000
eq "events since a future seq: none" "$(jf '.events | length')" 0

# --- the prover is down: pending with application_error, never approved ------
stop_advisor
eq "SIGTERM: exit 0" "$ADV_RC" 0
start_advisor "$WORK/data" --prover http://127.0.0.1:9 --prover-token-file "$ADMIN_FILE" || exit 1
api PUT /v1/sandboxes/sb2/settings/proposal_approval_mode '{"value":"auto"}'
api POST /v1/sandboxes/sb2/proposals "$(proposal down example.com 443 GET /down)" "$T2"
eq "prover down: accepted" "$(jf .accepted_chunks)" 1
D1=$(jf '.accepted_chunk_ids[0]')
api GET "/v1/sandboxes/sb2/proposals/$D1"
eq "prover down: pending" "$(jf .status)" pending
eq "prover down: validation unavailable" "$(jf .validation_result)" "validation unavailable"
has "prover down: application_error" "$(jf .application_error)" "prover validation unavailable"
api GET "/v1/sandboxes/sb2/proposals/$D1"
api POST "/v1/sandboxes/sb2/proposals/$D1/approve" "{\"review_token\":\"$(jf .review_token)\"}"
eq "prover down: a reviewer cannot approve either" "$STATUS" 409
# State survived the restart.
api GET "/v1/sandboxes/sb1/proposals/$C1"
eq "restart keeps the ledger" "$(jf .status)" approved
stop_advisor
finish
