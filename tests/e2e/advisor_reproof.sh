#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# advisor_reproof.sh - approvals that stay proven (docs/advisor.md#reproof),
# with real processes on 127.0.0.1 and judged by what the logging upstream
# received: an agent's L4 copy of an L7 rule is answered already_allowed
# (nothing stored, DELETE never reaches the upstream), and so is a
# reviewer's approval of it while an L7 rule folds it away, so undoing that
# rule leaves nothing opaque; approved for what it grants, new credentials
# on its host suspend it; the proxy loads the revision without it and the
# upstream never sees the methods it would have opened; the suspension is
# visible in the CLI, the chunk and the events.
. "$(dirname "$0")/proxy_lib.sh"

. "$(dirname "$0")/advisor_proxy_lib.sh"

"$UPSTREAM_BIN" --port-file "$T/up.port" --log "$T/up.log" 2>"$T/up.err" &
PIDS="$PIDS $!"
wait_file "$T/up.port" || { echo "upstream did not start"; exit 1; }
read -r UP _ <"$T/up.port"
: >"$T/up.log"

cat >"$T/base.yaml" <<EOF
version: 1
network_policies:
  api:
    name: api
    endpoints:
      - host: 127.0.0.1
        port: $UP
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /repos/**}
    binaries:
      - path: /usr/bin/curl
EOF
# the same sandbox without the operator's rule
cat >"$T/bare.yaml" <<EOF
version: 1
network_policies:
  docs:
    name: docs
    endpoints:
      - host: docs.example.com
        port: 443
    binaries:
      - path: /usr/bin/wget
EOF

printf 'mapper_flush_interval_ms: 3600000\n' >"$T/quiet.yaml"
start_advisor ADV --config "$T/quiet.yaml"
sandbox ADV one "$T/base.yaml"
out=$(adm ADV PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}')
expect_eq "proposals on" 200 "$(code "$out")"
out=$(adm ADV PUT /v1/sandboxes/one/settings/proposal_approval_mode '{"value":"auto"}')
expect_eq "auto mode" 200 "$(code "$out")"
start_aproxy P1 ADV one
wait_log "$T/P1.log" "advisor recorded revision 1 as loaded" || fail "revision 1 not loaded"

l4() {
    "$JQ" -cn --arg n "$1" --argjson p "$UP" '{intent_summary: "reach the API",
        operations: [{addRule: {ruleName: $n, rule: {
            endpoints: [{host: "127.0.0.1", port: $p}],
            binaries: [{path: "/usr/bin/curl"}]}}}]}'
}
# loaded REV: wait until the proxy says it loaded revision REV
loaded() { wait_log "$T/P1.log" "advisor revision $1 loaded" 250; }
token() { jget "$(adm ADV GET "/v1/sandboxes/one/proposals/$1")" .review_token; }
approve() {
    adm ADV POST "/v1/sandboxes/one/proposals/$1/approve" "{\"review_token\":\"$(token "$1")\"}"
}

# ---------------------------------------------------------------------------
# (1) the high case: an L4 rule that folds into the operator's L7 rule
# ---------------------------------------------------------------------------
out=$(via P1 -d "$(l4 mine)" http://policy.local/v1/proposals)
expect_eq "(1) answered 202" 202 "$(code "$out")"
expect_eq "(1) already_allowed" already_allowed "$(jget "$out" .status)"
expect_eq "(1) names the covering rule" api "$(jget "$out" '.already_allowed[0].covered_by[0]')"
expect_eq "(1) nothing accepted" 0 "$(jget "$out" .accepted_chunks)"
out=$(adm ADV GET /v1/sandboxes/one/proposals)
expect_eq "(1) nothing stored" 0 "$(jget "$out" '.chunks | length')"
out=$(adm ADV GET /v1/sandboxes/one/policy)
expect_eq "(1) still revision 1" 1 "$(jget "$out" .revision)"
out=$(via P1 -X DELETE "http://127.0.0.1:$UP/repos/x")
expect_eq "(1) DELETE denied" 403 "$(code "$out")"
if up_got "DELETE /repos/x"; then fail "(1) the upstream got DELETE"; else pass; fi
# the agent's copy of the operator rule under its own name: the same
out=$(via P1 -d "$(rule copy 127.0.0.1 "$UP" GET '/repos/**')" http://policy.local/v1/proposals)
expect_eq "(1) a renamed copy: already_allowed" already_allowed "$(jget "$out" .status)"

# ---------------------------------------------------------------------------
# (2) through a reviewer: an approval of the L4 rule while an L7 rule folds
# it away is answered already_allowed (it would grant nothing until its
# cover goes), so the undo of the cover leaves nothing opaque behind
# ---------------------------------------------------------------------------
out=$(adm ADV PUT /v1/sandboxes/one/settings/proposal_approval_mode '{"value":"manual"}')
out=$(adm ADV PUT /v1/sandboxes/one/policy "$("$JQ" -n --rawfile p "$T/bare.yaml" '{policy:$p}')")
expect_eq "(2) operator drops the API rule" 200 "$(code "$out")"
REV=$(jget "$out" .policy_version)
loaded "$REV" || fail "(2) revision $REV not loaded"
out=$(via P1 -d "$(l4 reach)" http://policy.local/v1/proposals)
L4=$(jget "$out" '.accepted_chunk_ids[0]')
expect_eq "(2) the L4 rule is pending" 1 "$(jget "$out" .accepted_chunks)"
out=$(via P1 -d "$(rule reads 127.0.0.1 "$UP" GET '/repos/**')" http://policy.local/v1/proposals)
RO=$(jget "$out" '.accepted_chunk_ids[0]')
out=$(approve "$RO")
expect_eq "(2) the L7 rule approved" 200 "$(code "$out")"
out=$(adm ADV GET "/v1/sandboxes/one/proposals/$L4")
expect_eq "(2) reconcile rejected the folded L4 rule" rejected "$(jget "$out" .status)"
out=$(approve "$L4")
[ "$(code "$out")" = 412 ] && out=$(approve "$L4")
expect_eq "(2) the reviewer's approval is answered already_allowed" "200 already_allowed" \
    "$(code "$out") $(jget "$out" .status)"
out=$(adm ADV GET "/v1/sandboxes/one/proposals/$L4")
expect_eq "(2) the L4 chunk stays rejected" rejected "$(jget "$out" .status)"
expect_has "(2) as covered" "covered by active policy revision" "$(jget "$out" .rejection_reason)"
out=$(via P1 -X DELETE "http://127.0.0.1:$UP/repos/y")
expect_eq "(2) folded: DELETE still denied" 403 "$(code "$out")"
out=$(adm ADV POST "/v1/sandboxes/one/proposals/$RO/undo")
expect_eq "(2) undo the L7 rule" 200 "$(code "$out")"
REV=$(jget "$out" .policy_version)
loaded "$REV" || fail "(2) revision $REV not loaded"
out=$(adm ADV GET /v1/sandboxes/one/policy)
expect_not "(2) the effective policy has no opaque rule for the API" "reach" "$(jget "$out" .policy_yaml)"
out=$(via P1 -X DELETE "http://127.0.0.1:$UP/repos/z")
expect_eq "(2) DELETE denied after the undo" 403 "$(code "$out")"
out=$(via P1 -X POST -d x "http://127.0.0.1:$UP/repos/z")
expect_eq "(2) POST denied after the undo" 403 "$(code "$out")"
for m in "DELETE /repos/y" "DELETE /repos/z" "POST /repos/z"; do
    if up_got "$m"; then fail "(2) the upstream got $m"; else pass; fi
done
out=$(adm ADV GET /v1/events)
expect_eq "(2) the undo's record lists what it composed" "[]" \
    "$(jget "$out" '[.events[] | select(.kind == "CONFIG:REMOVED")][-1].record.chunks | tojson')"

# ---------------------------------------------------------------------------
# (3) approved by a reviewer who reads what it grants now (opaque access);
# then new credentials on that host suspend it
# ---------------------------------------------------------------------------
out=$(approve "$L4")
[ "$(code "$out")" = 412 ] && out=$(approve "$L4")
expect_eq "(3) approved with its opaque grant in front" "200 approved" \
    "$(code "$out") $(jget "$out" .status)"
REV=$(jget "$out" .policy_version)
loaded "$REV" || fail "(3) revision $REV not loaded"
out=$(via P1 -X DELETE "http://127.0.0.1:$UP/repos/w")
expect_eq "(3) now opaque, as the reviewer decided" 200 "$(code "$out")"
# a new credential on that host: the approved opaque grant now carries it
out=$(adm ADV PUT /v1/sandboxes/one/credentials \
    '{"credentials":"credentials:\n  - {name: api-key, type: api-key, target_hosts: [127.0.0.1]}\n"}')
expect_eq "(3) credentials set" 200 "$(code "$out")"
expect_eq "(3) the answer lists the suspension" "$L4" "$(jget "$out" '.suspended[0]')"
out=$(adm ADV GET "/v1/sandboxes/one/proposals/$L4")
expect_eq "(3) suspended on new credentials" suspended "$(jget "$out" .status)"
expect_has "(3) the reason names what is new" "new " "$(jget "$out" .suspension_reason)"
expect_has "(3) the reason names the change that suspended it" "after the sandbox's credentials changed: " \
    "$(jget "$out" .suspension_reason)"
expect_eq "(3) the approval's evidence is kept beside the new one" "object object" \
    "$(jget "$out" '[(.approved_evidence | type), (.evidence | type)] | join(" ")')"
REV=$(jget "$(adm ADV GET /v1/sandboxes/one/policy)" .revision)
loaded "$REV" || fail "(3) revision $REV not loaded"
out=$(via P1 -X DELETE "http://127.0.0.1:$UP/repos/v")
expect_eq "(3) DELETE denied again" 403 "$(code "$out")"
if up_got "DELETE /repos/v"; then fail "(3) the upstream got DELETE"; else pass; fi
out=$(adm ADV GET /v1/events)
expect_eq "(3) CONFIG:SUSPENDED recorded" "$L4" \
    "$(jget "$out" '[.events[] | select(.kind == "CONFIG:SUSPENDED")][0].record.chunk_id')"
chmod 600 "$T/ADV.admin"
cli=$(PROVISO_TOKEN_FILE=$T/ADV.admin "$BUILD/proviso" rule list one --status suspended \
    --advisor "http://127.0.0.1:$ADV_PORT" 2>&1)
expect_has "(3) proviso rule list --status suspended" "${L4:0:8}  suspended  reach" "$cli"
out=$(adm ADV POST "/v1/sandboxes/one/proposals/$L4/reject" '{"reason":"no opaque access"}')
expect_eq "(3) a suspended chunk can be rejected" "200 rejected" "$(code "$out") $(jget "$out" .status)"

# ---------------------------------------------------------------------------
# (4) the chain binds it all: every revision above (approvals, the undo, the
# suspensions, the credentials) recomputes from the records alone
# ---------------------------------------------------------------------------
"$BUILD/proviso" audit export --advisor "http://127.0.0.1:$ADV_PORT" --token-file "$T/ADV.admin" \
    >"$T/a.jsonl" 2>"$T/export.err"
expect_eq "(4) export" 0 "$?"
pub=$("$BUILD/proviso" audit pubkey --advisor "http://127.0.0.1:$ADV_PORT" --token-file "$T/ADV.admin")
vout=$("$BUILD/proviso" audit verify "$T/a.jsonl" --pubkey "$pub" --format json 2>&1)
expect_eq "(4) verify: intact" 0 "$?"
expect_eq "(4) every revision recomputed from the chain" 0 \
    "$(printf '%s' "$vout" | "$JQ" -r '.revisions_not_recomputable')"
expect_not "(4) some revisions were recomputed" '"revisions_recomputed":0' "$vout"

finish
