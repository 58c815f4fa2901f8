#!/bin/sh
# audit_inputs.sh - what the store serves and decides by is bound to the
# chain (docs/advisor.md#integrity, docs/audit.md#inputs; issue 36 items 4
# and 5). A sandbox with credentials, manual mode set globally and one
# approved rule; then copies of the data directory changed with sqlite3, as
# any writer of the database could, without the audit key:
#   blob   the latest revision row pointed at a wider policy, its hash kept
#   rule   the approved chunk's rule text widened
#   mode   UPDATE settings SET value='"auto"'
#   creds  the sandbox's credentials cleared
#   base   the latest base revision pointed at a wider blob
#   token  the sandbox's token digest replaced
# Each is refused at start and fails verify. A running advisor whose
# revision blob is swapped serves nothing for it (500 revision_unbacked),
# says so in the sandbox's status and /metrics. And the attack of the
# issue - mode and credentials changed under a running advisor, then a
# DELETE /** proposal - is a VIOLATION in replay. Needs sqlite3, curl, jq.
. "$(dirname "$0")/advisor_lib.sh"

if ! command -v sqlite3 >/dev/null 2>&1; then
    echo "SKIP: sqlite3 is not installed"
    exit 77
fi
PROVISO=$PV_BUILDDIR/proviso
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
# What the swapped blob holds: every method and path on the same host.
WIDE='version: 1
network_policies:
  github_ro:
    name: github_ro
    endpoints:
      - host: api.github.com
        port: 443
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: "*", path: "/**"}
    binaries:
      - path: /usr/bin/curl
'
CREDS='credentials:
  - {name: gh, type: github, target_hosts: [api.github.com]}
'
D=$WORK/data
SQL() { sqlite3 "$WORK/$1/advisor.db" "$2"; }

# refuses NAME DIR WANT...: the advisor exits non-zero at start and logs each WANT.
refuses() {
    name=$1
    dir=$2
    shift 2
    timeout 60 "$ADV_BIN" --data-dir "$dir" --port 0 --token-file "$ADMIN_FILE" \
        2>"$WORK/refuse.log"
    rc=$?
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; then ok "$name: the advisor refuses to start"; else
        bad "$name: the advisor started (exit $rc)"; fi
    for want in "$@"; do
        has "$name: logged" "$(cat "$WORK/refuse.log")" "$want"
    done
}
# verify_fails NAME DIR WANT: an offline export of DIR does not verify.
verify_fails() {
    "$PROVISO" audit export --data-dir "$2" >"$WORK/$1.jsonl"
    eq "$1: the tampered store still exports" "$?" 0
    OUT=$("$PROVISO" audit verify "$WORK/$1.jsonl" --pubkey "$PUB")
    eq "$1: verify exit 1" "$?" 1
    has "$1: verify names it" "$OUT" "$3"
}
# swap_blob DIR: point DIR's latest revision row at WIDE, hash untouched.
swap_blob() {
    hex=$(printf '%s' "$WIDE" | od -An -tx1 | tr -d ' \n')
    sha=$(printf '%s' "$WIDE" | sha256sum | cut -c1-64)
    SQL "$1" "INSERT OR IGNORE INTO blobs VALUES ('$sha', X'$hex');
      UPDATE revisions SET blob = '$sha' WHERE rev = (SELECT MAX(rev) FROM revisions);"
}

start_advisor "$D" || exit 1
PUB=$("$PROVISO" audit pubkey --advisor "$ADV" --token-file "$ADMIN_FILE")
create_sandbox sb1 "$POLICY" "$CREDS"
T1=$SB_TOKEN
api PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}'
api PUT /v1/settings/proposal_approval_mode '{"value":"manual"}'
eq "manual mode set" "$STATUS" 200
api POST /v1/sandboxes/sb1/proposals "$(proposal ex1 example.com 443 GET /x)" "$T1"
C1=$(jf '.accepted_chunk_ids[0]')
api GET "/v1/sandboxes/sb1/proposals/$C1"
api POST "/v1/sandboxes/sb1/proposals/$C1/approve" "{\"review_token\":\"$(jf .review_token)\"}"
eq "a reviewer approves C1" "$STATUS" 200
api GET /v1/events
eq "the setting's record binds the global inputs" \
    "$(jf '[.events[] | select(.kind == "CONFIG:SETTING") | .record.decision_inputs
        | has("setting:proposal_approval_mode")] | last')" true
eq "the creation's record binds the credentials" \
    "$(jf '[.events[] | select(.kind == "CONFIG:CREATED") | .record.decision_inputs.credentials
        | length] | first')" 64
stop_advisor
for t in clean blob rule mode creds live attack base token; do cp -a "$D" "$WORK/$t"; done

# --- untampered ----------------------------------------------------------------
start_advisor "$WORK/clean" || exit 1
has "untampered: starts" "$(cat "$ADV_LOG")" "the store agrees with its chain"
api GET /v1/sandboxes/sb1
eq "untampered: the revision is backed" "$(jf .policy_backed)" true
"$PROVISO" audit export --advisor "$ADV" --token-file "$ADMIN_FILE" >"$WORK/clean.jsonl"
"$PROVISO" audit verify "$WORK/clean.jsonl" --pubkey "$PUB" >/dev/null
eq "untampered: verify exit 0" "$?" 0
OUT=$("$PROVISO" audit replay "$WORK/clean.jsonl")
eq "untampered: replay exit 0" "$?" 0
stop_advisor

# --- item 4: the latest revision row pointed at a wider blob -------------------
swap_blob blob
refuses blob "$WORK/blob" "INTEGRITY: sandbox sb1 revision v" \
    "sandbox sb1: the store says revision v" "refusing to start"
verify_fails blob "$WORK/blob" "the store disagrees with the chain: sandbox sb1"

# ... and under a running advisor: nothing is served for it, loudly.
start_advisor "$WORK/live" || exit 1
api GET /v1/sandboxes/sb1/policy "" "$T1"
eq "live: the proxy's fetch of a good revision" "$STATUS" 200
swap_blob live
api GET /v1/sandboxes/sb1/policy "" "$T1"
eq "live: the swapped revision is not served" "$STATUS" 500
eq "live: it says why" "$(jf .error)" revision_unbacked
eq "live: no policy text in the answer" "$(jf '.policy_yaml // "none"')" none
api GET /v1/sandboxes/sb1
eq "live: the sandbox's status says so" "$(jf .policy_backed)" false
api GET /metrics
has "live: /metrics counts it" "$BODY" "proviso_advisor_revisions_unbacked_total "
eq "live: counted" "$(printf '%s\n' "$BODY" | sed -n 's/^proviso_advisor_revisions_unbacked_total //p' | awk '{print ($1 > 0)}')" 1
api POST /v1/sandboxes/sb1/proposals "$(proposal ex2 example.org 443 GET /x)" "$T1"
eq "live: nothing is decided on it" "$([ "$STATUS" != 202 ] && echo refused || echo "$STATUS")" refused
has "live: logged" "$(cat "$ADV_LOG")" "INTEGRITY: sandbox sb1 revision v"
stop_advisor

# --- the approved rule's text widened -------------------------------------------
SQL rule "UPDATE chunks SET proposed_rule = '{\"endpoints\":[{\"host\":\"example.com\",\"port\":443,\"protocol\":\"rest\",\"enforcement\":\"enforce\",\"rules\":[{\"allow\":{\"method\":\"*\",\"path\":\"/**\"}}]}],\"binaries\":[{\"path\":\"/usr/bin/curl\"}]}' WHERE id = '$C1'"
refuses rule "$WORK/rule" "sandbox sb1 chunk $C1: the store says approved with rule digest"
verify_fails rule "$WORK/rule" "approved with rule digest"

# --- item 5: settings and credentials --------------------------------------------
SQL mode "UPDATE settings SET value = '\"auto\"' WHERE key = 'proposal_approval_mode'"
refuses mode "$WORK/mode" "input setting:proposal_approval_mode" "refusing to start"
verify_fails mode "$WORK/mode" "input setting:proposal_approval_mode"
SQL creds "UPDATE sandboxes SET credentials = '' WHERE name = 'sb1'"
refuses creds "$WORK/creds" "sandbox sb1: the store says input credentials unset"
verify_fails creds "$WORK/creds" "input credentials"

# Siblings: the base policy a recomposition starts from, and the token
# digest that decides who acts as the sandbox.
hex=$(printf '%s' "$WIDE" | od -An -tx1 | tr -d ' \n')
sha=$(printf '%s' "$WIDE" | sha256sum | cut -c1-64)
SQL base "INSERT OR IGNORE INTO blobs VALUES ('$sha', X'$hex');
  UPDATE base_revisions SET blob = '$sha' WHERE rev = (SELECT MAX(rev) FROM base_revisions)"
refuses base "$WORK/base" "sandbox sb1: the store says base policy blob ${sha%"${sha#????????????????}"}"
verify_fails base "$WORK/base" "base policy blob"
SQL token "UPDATE sandboxes SET token_sha256 = '$(printf attacker | sha256sum | cut -c1-64)'"
refuses token "$WORK/token" "sandbox sb1: the store says input token"

# The issue's attack under a running advisor: both changed, then DELETE /**.
start_advisor "$WORK/attack" || exit 1
SQL attack "UPDATE settings SET value = '\"auto\"' WHERE key = 'proposal_approval_mode';
  UPDATE sandboxes SET credentials = '' WHERE name = 'sb1'"
api POST /v1/sandboxes/sb1/proposals "$(proposal del api.github.com 443 DELETE '/**')" "$T1"
eq "attack: the running advisor refuses to decide" \
    "$([ "$STATUS" != 202 ] && echo refused || echo "$STATUS $BODY")" refused
has "attack: and logs why" "$(cat "$ADV_LOG")" \
    "INTEGRITY: sandbox sb1: the decision inputs the store holds"
AUTO=none
C2=$(jf '.accepted_chunk_ids[0] // empty')
if [ -n "$C2" ]; then
    api GET "/v1/sandboxes/sb1/proposals/$C2"
    AUTO=$(jf .status)
fi
stop_advisor
refuses attack "$WORK/attack" "input setting:proposal_approval_mode" "input credentials"
verify_fails attack "$WORK/attack" "the store disagrees with the chain"
eq "attack: nothing was approved" "$AUTO" none

# Replay decides by the recorded inputs. An automatic approval made in auto
# mode replays clean; the same export with the mode's record saying manual
# (replay reads, it does not check signatures: a forged record is judged on
# its merits) is a VIOLATION, and so is an approval whose credentials are
# not the ones the chain bound for the sandbox.
start_advisor "$WORK/clean" || exit 1
api PUT /v1/settings/proposal_approval_mode '{"value":"auto"}'
api POST /v1/sandboxes/sb1/proposals "$(proposal ex3 example.net 443 GET /x)" "$T1"
api GET "/v1/sandboxes/sb1/proposals/$(jf '.accepted_chunk_ids[0]')"
eq "replay: an automatic approval" "$(jf .status)" approved
"$PROVISO" audit export --advisor "$ADV" --token-file "$ADMIN_FILE" >"$WORK/auto.jsonl"
stop_advisor
OUT=$("$PROVISO" audit replay "$WORK/auto.jsonl")
eq "replay: auto mode as recorded: exit 0" "$?" 0
AUTO_D=$(printf '"auto"' | sha256sum | cut -c1-64)
MANUAL_D=$(printf '"manual"' | sha256sum | cut -c1-64)
sed "s/$AUTO_D/$MANUAL_D/g" "$WORK/auto.jsonl" >"$WORK/forged-mode.jsonl"
OUT=$("$PROVISO" audit replay "$WORK/forged-mode.jsonl")
eq "replay: the mode recorded manual: exit 1" "$?" 1
has "replay: VIOLATION" "$OUT" "VIOLATION seq"
has "replay: the mode was not auto" "$OUT" "the chain's proposal_approval_mode is not auto"
CRED_D=$(jq -r 'select(.kind == "CONFIG:CREATED") | .data.decision_inputs.credentials' \
    "$WORK/auto.jsonl")
jq -c "if .kind == \"CONFIG:CREATED\" then .data.decision_inputs.credentials = \"$MANUAL_D\"
    else . end" "$WORK/auto.jsonl" >"$WORK/forged-creds.jsonl"
OUT=$("$PROVISO" audit replay "$WORK/forged-creds.jsonl")
eq "replay: other credentials bound: exit 1" "$?" 1
has "replay: the credentials were not the sandbox's" "$OUT" \
    "approved with credentials '${CRED_D%"${CRED_D#????????????????}"}', but the chain's credentials"

finish
