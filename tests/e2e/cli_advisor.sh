#!/bin/sh
# cli_advisor.sh - the reviewer CLI end to end: proviso sandbox|policy|settings|rule
# against the real proviso-advisor (and its proviso-prover child) on 127.0.0.1.
#
# Every subcommand in text and json, every exit status (0 ok, 1 refused,
# 2 usage or unreadable input, 3 unreachable or 5xx), a stale review token,
# a sandbox's own token trying a reviewer action, the 0600 token file. The
# agent's side (proposals) is played by curl with the sandbox's token.
: "${PV_BUILDDIR:=$(pwd)}"
PV_PROVER_BIN=$PV_BUILDDIR/proviso-advisor
. "$(dirname "$0")/server_lib.sh"

PROVISO=$PV_BUILDDIR/proviso
if [ ! -x "$PROVISO" ] || [ ! -x "$PV_BUILDDIR/proviso-prover" ]; then
    echo "FAIL: proviso and proviso-prover must be built"
    exit 1
fi
OUT=$WORK/out
ERR=$WORK/err
RC=0

# cli WANT ARGS...: run proviso ARGS (stdout in $OUT, stderr in $ERR) and
# check its exit status is WANT.
cli() {
    want=$1
    shift
    "$PROVISO" "$@" >"$OUT" 2>"$ERR"
    RC=$?
    if [ "$RC" -eq "$want" ]; then
        ok "proviso $* -> $want"
    else
        bad "proviso $*: exit $RC, want $want; stdout: $(head -c 300 "$OUT"); stderr: $(head -c 300 "$ERR")"
    fi
}

# out_has / err_has / out_lacks / err_lacks TEXT DESC: fixed-string checks on the last run.
out_has() {
    if grep -qF -- "$1" "$OUT"; then ok "$2"; else bad "$2: stdout lacks '$1': $(head -c 600 "$OUT")"; fi
}
err_has() {
    if grep -qF -- "$1" "$ERR"; then ok "$2"; else bad "$2: stderr lacks '$1': $(head -c 400 "$ERR")"; fi
}
out_lacks() {
    if grep -qF -- "$1" "$OUT"; then bad "$2: stdout has '$1'"; else ok "$2"; fi
}
err_lacks() {
    if grep -qF -- "$1" "$ERR"; then bad "$2: stderr has '$1'"; else ok "$2"; fi
}

# start_advisor: proviso-advisor on port 0 with a fresh data directory.
start_advisor() {
    LOG=$WORK/advisor.log
    : >"$LOG"
    "$BIN" --data-dir "$WORK/data" --port 0 --token-file "$WORK/admin.token" \
        --test-allow-loopback 2>"$LOG" &
    SRV_PID=$!
    PORT=
    i=0
    while [ $i -lt 800 ]; do
        PORT=$(sed -n 's|.*listening on 127\.0\.0\.1 port \([0-9][0-9]*\).*|\1|p' "$LOG" | head -n 1)
        [ -n "$PORT" ] && break
        if ! kill -0 "$SRV_PID" 2>/dev/null; then
            echo "advisor exited early:"
            cat "$LOG"
            SRV_PID=
            return 1
        fi
        sleep 0.025
        i=$((i + 1))
    done
    [ -n "$PORT" ] || { echo "advisor did not report its port:"; cat "$LOG"; return 1; }
    URL=http://127.0.0.1:$PORT
}

# submit SANDBOX-TOKEN-FILE BODY-FILE [SANDBOX]: the agent's proposal (curl,
# as policy.local forwards it; sandbox sb1 by default); sets CHUNK to the
# first accepted id.
submit() {
    BODY=$(curl -s -X POST -H "Authorization: Bearer $(cat "$1")" \
        -H 'Content-Type: application/json' --data-binary "@$2" \
        "$URL/v1/sandboxes/${3:-sb1}/proposals")
    CHUNK=$(printf '%s' "$BODY" | sed -n 's/.*"accepted_chunk_ids":\["\([0-9a-f-]*\)".*/\1/p')
    if [ -n "$CHUNK" ]; then ok "submitted $2"; else bad "submit $2: $BODY"; fi
}

# proposal FILE RULE HOST PORT METHOD PATH: a one-rule addRule proposal.
proposal() {
    cat >"$1" <<EOF
{"intent_summary": "need $5 $6 on $3", "operations": [{"addRule": {"ruleName": "$2", "rule": {
  "endpoints": [{"host": "$3", "port": $4, "protocol": "rest", "enforcement": "enforce",
                 "rules": [{"allow": {"method": "$5", "path": "$6"}}]}],
  "binaries": [{"path": "/usr/bin/curl"}]}}}]}
EOF
}

make_token "$WORK/admin.token"
cat >"$WORK/base.yaml" <<'EOF'
version: 1
network_policies:
  docs:
    name: docs
    endpoints:
      - host: docs.python.org
        port: 443
    binaries:
      - path: /usr/bin/curl
EOF
cat >"$WORK/base2.yaml" <<'EOF'
version: 1
network_policies:
  docs:
    name: docs
    endpoints:
      - host: docs.python.org
        port: 443
      - host: pypi.org
        port: 443
    binaries:
      - path: /usr/bin/curl
EOF
# sb2's auto-approval boundary: the base and one more documentation site
# (a proposal the base already covers is answered already_allowed, so the
# boundary must leave room for something new)
cat >"$WORK/bound.yaml" <<'EOF'
version: 1
network_policies:
  docs:
    name: docs
    endpoints:
      - host: docs.python.org
        port: 443
      - host: docs.rust-lang.org
        port: 443
    binaries:
      - path: /usr/bin/curl
EOF
cat >"$WORK/creds.yaml" <<'EOF'
- name: gh
  type: github
  target_hosts: [api.github.com]
EOF
printf 'version: 1\nnetwork_policies:\n  x:\n    endpoints: nope\n' >"$WORK/bad.yaml"

start_advisor || exit 1

# --- usage: exit 2 before any request ----------------------------------------------------
cli 0 rule approve --help
out_has "usage: proviso rule approve SANDBOX --chunk-id ID" "approve --help has the synopsis"
out_has "Example:" "approve --help has an example"
cli 0 sandbox -h
out_has "proviso sandbox create NAME --policy FILE" "sandbox -h lists create"
cli 2 sandbox
err_has "missing command (see 'proviso sandbox --help')" "a group without a command points to its help"
cli 2 rule frob sb1
err_has "proviso rule: unknown command 'frob'" "an unknown rule command"
cli 2 rule list sb1 --bogus
err_has "unknown option '--bogus'" "an unknown option"
cli 2 rule list sb1 --chunk-id x
err_has "unknown option '--chunk-id'" "an option of another command"
cli 2 rule get sb1
err_has "--chunk-id is required" "rule get without --chunk-id"
cli 2 rule list
err_has "missing operand" "rule list without SANDBOX"
cli 2 rule list sb1 sb2
err_has "unexpected operand 'sb2'" "one operand too many"
cli 2 settings get --global --sandbox sb1
err_has "exactly one of --global and --sandbox" "both scopes"
cli 2 settings set proposal_approval_mode auto
err_has "exactly one of --global and --sandbox" "no scope"
cli 2 rule list sb1 --format yaml
err_has "unknown format 'yaml'" "an unknown format"
cli 2 rule list sb1 --status pending --status approved
err_has "given twice" "an option given twice"
cli 2 rule list sb1 --status pendng
err_has "unknown status 'pendng' (did you mean 'pending'?): expected one of pending|approved|rejected|suspended" \
    "a misspelt --status is a usage error, with the closest state"
cli 2 settings get --global=yes
err_has "takes no value" "a flag with a value"
cli 2 rule get sb1 --chunk-id
err_has "needs a value" "an option without its value"

# --- the admin token: from a file only -------------------------------------------------------
unset PROVISO_TOKEN_FILE PROVISO_ADVISOR
cli 2 sandbox list --advisor "$URL"
err_has "the admin token is needed" "no token file"
cli 2 sandbox list --advisor "$URL" --token-file "$WORK/nonexistent"
err_has "No such file or directory" "a missing token file"
(umask 077 && printf 'short\n' >"$WORK/short.token")
cli 2 sandbox list --advisor "$URL" --token-file "$WORK/short.token"
err_has "a token is 16..4096 bytes" "a token file with a too short token"
(umask 077 && printf 'two words-0123456789abcdef\n' >"$WORK/space.token")
cli 2 sandbox list --advisor "$URL" --token-file "$WORK/space.token"
err_has "printable ASCII without spaces" "a token with a space inside"
(umask 077 && head -c 5000 /dev/zero | tr '\0' a >"$WORK/long.token")
cli 2 sandbox list --advisor "$URL" --token-file "$WORK/long.token"
err_has "a token is 16..4096 bytes" "a token file over 4096 bytes"
cli 2 sandbox list --advisor "$URL" --token-file "$WORK"
err_has ": Is a directory" "a directory as token file"
(umask 077 && printf 'not-the-admin-token-0123456789\n' >"$WORK/wrong.token")
cli 1 sandbox list --advisor "$URL" --token-file "$WORK/wrong.token"
err_has "unauthorized: invalid bearer token" "a wrong token is refused (401)"
cli 2 sandbox list --advisor "ftp://127.0.0.1:$PORT" --token-file "$WORK/admin.token"
err_has "http:// or https://" "only http(s) advisor URLs"
cli 0 sandbox list --advisor="$URL" --token-file="$WORK/admin.token"
out_has "no sandboxes" "--opt=value for the advisor and token file"
export PROVISO_ADVISOR="$URL" PROVISO_TOKEN_FILE="$WORK/admin.token"
cli 0 sandbox list
out_has "no sandboxes" "PROVISO_ADVISOR and PROVISO_TOKEN_FILE"

# --- sandbox create / list / show / delete ---------------------------------------------------
cli 0 sandbox create sb1 --policy "$WORK/base.yaml" --credentials "$WORK/creds.yaml" \
    --token-out "$WORK/sb1.token"
out_has "sandbox sb1 created: policy version 1 sha256:" "create says the version and hash"
out_has "token written to $WORK/sb1.token (mode 0600)" "create names the token file"
check "the token file is mode 0600" [ "$(stat -c %a "$WORK/sb1.token")" = 600 ]
SBTOK=$(cat "$WORK/sb1.token")
check "the token file holds a 64-hex token" sh -c "printf '%s' '$SBTOK' | grep -qE '^[0-9a-f]{64}$'"
out_lacks "$SBTOK" "with --token-out the token is not printed"
check "... nor on stderr" sh -c "! grep -qF '$SBTOK' '$ERR'"
(umask 022 && printf 'old\n' >"$WORK/sb2.token")
cli 0 sandbox create sb2 --policy "$WORK/base.yaml" --boundary "$WORK/bound.yaml" \
    --token-out "$WORK/sb2.token" --format json
out_has '"token_file":' "json create with --token-out names the file"
out_lacks '"token":' "json create with --token-out has no token"
check "an existing token file is rewritten with mode 0600" \
    [ "$(stat -c %a "$WORK/sb2.token")" = 600 ]
check "... and holds the new token" grep -qE '^[0-9a-f]{64}$' "$WORK/sb2.token"
cli 0 sandbox create sb3 --policy "$WORK/base.yaml"
out_has "token: " "without --token-out the token is printed once"
err_has "shown only now" "... with a warning"
cli 1 sandbox create sb3 --policy "$WORK/base.yaml" --token-out "$WORK/sb3.token"
err_has "already_exists: sandbox already exists" "creating an existing sandbox (409)"
check "a refused create leaves no token file" [ ! -e "$WORK/sb3.token" ]
printf 'keep\n' >"$WORK/keep.token"
cli 1 sandbox create sb3 --policy "$WORK/base.yaml" --token-out "$WORK/keep.token"
check "a refused create leaves an existing token file as it was" \
    [ "$(cat "$WORK/keep.token")" = keep ]
ln -s "$WORK/keep.token" "$WORK/link.token"
cli 2 sandbox create sb5 --policy "$WORK/base.yaml" --token-out "$WORK/link.token"
err_has "link.token" "--token-out refuses a symlink"
cli 1 sandbox show sb5
cli 1 sandbox create sb4 --policy "$WORK/bad.yaml"
err_has "invalid_policy:" "an invalid policy is refused (400)"
cli 2 sandbox create sb4 --policy "$WORK/nonexistent.yaml"
err_has "nonexistent.yaml: No such file or directory" "an unreadable policy file"
# the proxy's credentials store carries secrets; the advisor keeps metadata only
printf -- '- name: gh\n  target_hosts: [api.github.com]\n  env: GH_TOKEN\n  value: s3cr3t-never-stored\n' \
    >"$WORK/store.yaml"
cli 1 sandbox create sb4 --policy "$WORK/base.yaml" --credentials "$WORK/store.yaml"
err_has "invalid_credentials:" "credentials with a value are refused (400)"
err_has "metadata only: remove \`value\`" "... and the message says why"
check "... and the secret is not echoed" sh -c "! grep -q s3cr3t '$ERR'"
cli 1 sandbox show sb4
cli 1 sandbox create 'Bad Name' --policy "$WORK/base.yaml"
err_has "invalid_request: name must be" "an invalid sandbox name"
cli 0 sandbox list
out_has "NAME" "sandbox list has a heading"
out_has "sb1" "sandbox list shows sb1"
out_has "sb3" "sandbox list shows sb3"
cli 0 sandbox list --format json
out_has '"sandboxes": [' "sandbox list json is the advisor's answer"
cli 0 sandbox show sb1
out_has "policy version:   1" "sandbox show: version"
out_has "credentials:      yes" "sandbox show: credentials"
cli 0 sandbox show sb1 --format json
out_has '"has_credentials": true' "sandbox show json"
cli 1 sandbox show nosuch
err_has "not_found: sandbox not found" "show an unknown sandbox (404)"
cli 0 sandbox delete sb3
out_has "sandbox sb3 deleted" "sandbox delete"
cli 1 sandbox delete sb3
err_has "not_found" "delete it again (404)"

# --- policy get / set ----------------------------------------------------------------------
cli 0 policy get sb1
out_has "# sandbox sb1, effective policy revision 1, sha256:" "policy get: heading comment"
out_has "host: docs.python.org" "policy get prints the YAML"
cli 0 policy get sb1 --format json
out_has '"policy_yaml":' "policy get json: the whole answer"
out_has '"revision": 1' "policy get json: the revision"
cli 0 policy set sb1 --policy "$WORK/base2.yaml"
out_has "sandbox sb1: base revision 2; effective policy version 2 sha256:" "policy set"
out_has "suspended: none (every approved chunk still proves as approved)" \
    "policy set says that no approved chunk was suspended"
cli 0 policy get sb1
out_has "host: pypi.org" "the new base policy is effective"
cli 1 policy set sb1 --policy "$WORK/bad.yaml"
err_has "invalid_policy:" "policy set with an invalid policy (400)"
cli 2 policy set sb1 --policy "$WORK/nonexistent.yaml"
cli 1 policy get nosuch
err_has "not_found" "policy get of an unknown sandbox"

# --- settings ------------------------------------------------------------------------------
cli 0 settings get --global
out_has "agent_policy_proposals_enabled" "settings get --global lists the keys"
out_has "proposal_approval_mode           \"manual\"   (from default)" "an unset key shows its effective default and says so"
out_has "auto_approval_envelope           true       (from default)" "settings get lists the envelope keys with their defaults"
out_has "envelope_allow_new_ports         false      (from default)" "an envelope clause defaults to false"
out_has "peer_address_ranges              unset (any address may register) (from default)" "unset ranges read as unbounded"
out_lacks "(unset)" "no bare (unset) where a default applies"
cli 0 settings set agent_policy_proposals_enabled true --global
out_has "agent_policy_proposals_enabled   true       (from global)" "settings set: a boolean"
cli 0 settings get agent_policy_proposals_enabled --sandbox sb1
out_has "true       (from global)" "the global value wins for a sandbox"
cli 0 settings get agent_policy_proposals_enabled --sandbox sb1 --format json
out_has '"resolved_from": "global"' "settings get KEY json"
cli 0 settings set proposal_approval_mode auto --sandbox sb1
out_has 'proposal_approval_mode           "auto"     (from sandbox)' "VALUE auto is the string \"auto\""
cli 0 settings set proposal_approval_mode '"manual"' --sandbox sb1 --format json
out_has '"value": "manual"' "a quoted VALUE is a JSON string"
cli 1 settings set proposal_approval_mode AUTO --sandbox sb1
err_has "setting 'proposal_approval_mode' expects one of [manual, auto]; got 'AUTO'" "a typo is refused with the exact message"
err_has "proviso: hint: proposal_approval_mode takes one of manual|auto, exactly as written (did you mean 'auto'?)" \
    "then the form VALUE takes"
cli 1 settings set agent_policy_proposals_enabled false --sandbox sb1
err_has "is managed globally" "a sandbox write of a global key (409)"
cli 1 settings set agent_policy_proposals_enabled 1 --global
err_has "setting 'agent_policy_proposals_enabled' expects bool value" "a number for a bool"
err_has "proviso: hint: agent_policy_proposals_enabled takes true or false" "the bool's form"
cli 1 settings set no_such_key 1 --global
err_has "unknown setting key 'no_such_key'" "an unknown key"
cli 1 settings get no_such_key --global
err_has "unknown setting key 'no_such_key'" "get of an unknown key"
err_lacks "hint:" "no did-you-mean for a key far from every key"
cli 1 settings set proposal_aproval_mode auto --global
err_has "unknown setting key 'proposal_aproval_mode'" "set of a misspelt key: the advisor's message"
err_has "proviso: hint: did you mean 'proposal_approval_mode'?" "then the closest key"
cli 1 settings get proposal_aproval_mode --global
err_has "proviso: hint: did you mean 'proposal_approval_mode'?" "get of a misspelt key: the closest key"
cli 0 settings delete proposal_approval_mode --sandbox sb1
out_has "proposal_approval_mode           \"manual\"   (from default)" "settings delete: back to the default"
cli 0 settings set --help
for k in agent_policy_proposals_enabled proposal_approval_mode peer_address_ranges auto_approval_envelope \
    envelope_allow_binary_globs envelope_allow_host_wildcards envelope_allow_uninspected \
    envelope_allow_access_presets envelope_allow_new_ports; do
    out_has " $k" "settings set --help lists $k"
done
out_has 'manual|auto (default "manual")' "settings set --help gives the values and defaults"
out_has "envelope_allow_new_ports  true|false (default false)" "settings set --help gives each envelope key its default"
cli 1 settings get --sandbox nosuch
err_has "not_found" "settings of an unknown sandbox"

# --- auto mode within an auto-approval boundary ---------------------------------------------------
cli 0 sandbox show sb2
out_has "boundary:         yes" "a sandbox created with --boundary"
cli 0 settings set proposal_approval_mode auto --sandbox sb2
proposal "$WORK/p_b_in.json" docs_lib docs.rust-lang.org 443 GET /std
submit "$WORK/sb2.token" "$WORK/p_b_in.json" sb2
cli 0 rule get sb2 --chunk-id "$CHUNK"
out_has "status:           approved (automatically, revision 2" "auto mode approves a change within the boundary"
out_has "validation:       prover: no new findings" "... in which the prover finds no new finding"
out_has "confidence 75% (the proposer's estimate, not a safety score)" \
    "rule get: the confidence says what it is where it is shown"
case "$(sed -n 2p "$OUT")" in
"This change grants 1 new unit: /usr/bin/curl -> docs.rust-lang.org:443 inspected; prover: no new findings.")
    ok "rule get: what the change grants comes first, as one sentence" ;;
*) bad "rule get: what the change grants comes first: $(head -c 600 "$OUT")" ;;
esac
out_has "-> docs.rust-lang.org:443 inspected, GET /std  [binary: exact, host: exact, route: inspected, methods: read-only]" \
    "rule get: the grant line with its breadth"
if grep -qi "nothing new" "$OUT"; then bad "rule get: 'nothing new' beside a grant"; else ok "rule get: never 'nothing new' beside a grant"; fi
cli 0 rule history sb2
out_has "approved  Rule 'docs_lib' approved (automatically)" "history: an auto-approval says so"
out_has "(confidence: the proposer's estimate that the rule is wanted, not a safety score)" \
    "history: the confidence is explained where it is shown"
cli 0 rule history sb2 --format json
out_lacks '"decided_by"' "history json: the advisor's answer as it came"
proposal "$WORK/p_b_out.json" pypi_get pypi.org 443 GET /simple/x
submit "$WORK/sb2.token" "$WORK/p_b_out.json" sb2
cli 0 rule get sb2 --chunk-id "$CHUNK"
out_has "status:           pending" "a change beyond the boundary waits for a reviewer"
out_has "boundary:         exceeds" "rule get: the boundary verdict"
out_has "  - boundary_exceeded: /usr/bin/curl -> pypi.org:443 (rule pypi_get)" "rule get: the boundary counterexample"
out_has "witness: GET pypi.org:443/simple/x" "... with its witness request"

# --- proposals: list and get -------------------------------------------------------------------
proposal "$WORK/p_write.json" gh_write api.github.com 443 PUT '/repos/o/r/contents/**'
submit "$WORK/sb1.token" "$WORK/p_write.json"
A=$CHUNK
SHORT_A=$(printf '%s' "$A" | cut -c1-8)
cli 0 rule list sb1
out_has "ID        STATUS     RULE" "rule list has a heading"
out_has "$SHORT_A  pending    gh_write" "rule list: short id, status, rule"
out_has "api.github.com:443" "rule list: host:port"
out_has "prover: 1 new finding" "rule list: the first line of validation_result"
out_lacks "credential_reach_expansion" "rule list shows only the first line"
cli 0 rule list sb1 --status=approved
out_has "no approved chunks in sandbox sb1" "rule list --status=approved"
cli 0 rule list sb1 --status pending --format=json
out_has "\"chunk_id\": \"$A\"" "rule list json"
cli 2 rule list sb1 --status bogus
err_has "unknown status 'bogus': expected one of pending|approved|rejected|suspended" \
    "a bad --status is a usage error (exit 2), not the advisor's 400"
cli 0 rule get sb1 --chunk-id "$SHORT_A"
out_has "chunk $A" "rule get by prefix shows the whole id"
out_has "status:           pending" "rule get: status"
out_has "rule:             gh_write" "rule get: rule name"
out_has "api.github.com:443 [L7 rest enforce, allow PUT /repos/o/r/contents/**]" "rule get: endpoint summary"
out_has "binaries:         /usr/bin/curl" "rule get: binaries"
out_has "rationale:        need PUT /repos/o/r/contents/** on api.github.com" "rule get: rationale"
out_has "validation:       prover: 1 new finding" "rule get: validation_result"
out_has "  - credential_reach_expansion: /usr/bin/curl -> api.github.com:443 (rule gh_write, credentials gh)" "rule get: a finding path"
out_has "witness: PUT api.github.com:443/repos/o/r/contents/" "rule get: its witness"
out_has "security notes:   none" "rule get: security notes"
out_has "review token:" "rule get: the review token"
out_has "policy diff:" "rule get: the diff"
out_has "+          path: /repos/o/r/contents/**" "rule get: a diff line"
# the diff's hunk: headed by where it is, the lines before it as context
want_hunk='policy diff:
  @@ network_policies @@
         port: 443
       binaries:
       - path: /usr/bin/curl
  +  gh_write:'
if [ "$(grep -A5 -xF 'policy diff:' "$OUT")" = "$want_hunk" ]; then
    ok "rule get: the diff's hunk, headed by where it is, with context"
else
    bad "rule get: the diff's hunk: $(grep -A5 -xF 'policy diff:' "$OUT")"
fi
TOKEN_A=$(sed -n 's/^review token: *//p' "$OUT")
hasnt_out() { if grep -qF -- "$1" "$OUT"; then bad "$2"; else ok "$2"; fi; }
hasnt_out "evaluated against an earlier policy" "negative: a current evaluation has no such note"
cli 0 rule get sb1 --chunk-id "$A" --format json
out_has '"evidence": {' "rule get json has the evidence"
out_has '"findings": [' "... with the prover's findings"
cli 1 rule get sb1 --chunk-id ffffffff
err_has "no chunk of sandbox sb1 has an id starting with 'ffffffff'" "an unknown id prefix"
cli 1 rule get sb1 --chunk-id ffffffff-ffff-4fff-8fff-ffffffffffff
err_has "not_found" "an unknown whole id (404)"

# --- approve: a stale review token, then the refreshed evaluation --------------------------------
cli 1 rule approve sb1 --chunk-id "$A" --review-token 0000
err_has "review token does not match the fetched proposal; refetch and review again" "a wrong review token (412)"
err_has "the evaluation changed since it was reviewed; nothing was approved" "412 says so"
out_has "chunk $A" "412 shows the refreshed chunk"
out_has "status:           pending" "... still pending"
proposal "$WORK/p_pypi.json" crates_read crates.io 443 GET /api/v1/crates
# Approving another chunk moves the effective policy on, but not what A
# reads: A's token stays good (docs/advisor.md#review-tokens).
proposal "$WORK/p_other.json" docs_more docs.rust-lang.org 443 GET /std
submit "$WORK/sb1.token" "$WORK/p_other.json"
B=$CHUNK
cli 0 rule approve sb1 --chunk-id "$B"
out_has "chunk $B is approved; sandbox sb1 policy version 3 sha256:" "approve: the new policy version"
cli 0 rule get sb1 --chunk-id "$A"
out_has "review token:     $TOKEN_A" "another approval leaves A's token as it was"
out_has "(evaluated against an earlier policy: approving proves it again, and goes" \
    "rule get says the token's evaluation is of an earlier policy, and the rule"
# A second credential on A's host changes what A reads: its evaluation is stale.
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H "Authorization: Bearer $(cat "$WORK/admin.token")" \
    -H 'Content-Type: application/json' \
    --data-binary '{"credentials":"- {name: gh, type: github, target_hosts: [api.github.com]}\n- {name: gh2, type: github, target_hosts: [api.github.com]}\n"}' \
    "$URL/v1/sandboxes/sb1/credentials")
check "a second credential on api.github.com (200)" [ "$code" = 200 ]
cli 1 rule approve sb1 --chunk-id "$A" --review-token "$TOKEN_A"
err_has "proposal inputs changed; evaluation refreshed, refetch and review again" "a stale evaluation (412)"
out_has "chunk $A" "the refreshed chunk is shown"
NEW_TOKEN_A=$(sed -n 's/^review token: *//p' "$OUT")
check "the refreshed chunk has a new review token" \
    sh -c '[ -n "$1" ] && [ "$1" != "$2" ]' _ "$NEW_TOKEN_A" "$TOKEN_A"
cli 1 rule approve sb1 --chunk-id "$A" --review-token "$TOKEN_A" --format json
out_has '"error": "failed_precondition"' "json 412: the advisor's error"
out_has '"chunk": {' "json 412: with the refreshed chunk"
cli 0 rule approve sb1 --chunk-id "$SHORT_A"
out_has "chunk $A is approved; sandbox sb1 policy version 4" "approve after review"
cli 1 rule approve sb1 --chunk-id "$A"
err_has "chunk status is 'approved', expected 'pending' or 'rejected'" "approving twice (409)"
cli 0 rule get sb1 --chunk-id "$A"
out_has "status:           approved (revision 4" "an approved chunk shows its revision"
cli 0 policy get sb1
out_has "gh_write" "the approved rule is in the effective policy"

# --- undo, edit, reject ---------------------------------------------------------------------------
cli 0 rule undo sb1 --chunk-id "$A"
out_has "chunk $A is pending; sandbox sb1 policy version 5" "undo"
cli 1 rule undo sb1 --chunk-id "$A"
err_has "chunk status is 'pending', expected 'approved'" "undo of a pending chunk (409)"
cli 0 policy get sb1
out_lacks "gh_write" "undo removed the grant"
cat >"$WORK/rule.yaml" <<'EOF'
endpoints:
  - host: api.github.com
    port: 443
    protocol: rest
    enforcement: enforce
    rules:
      - allow: {method: GET, path: /repos/o/r/readme}
binaries:
  - path: /usr/bin/curl
EOF
cli 0 rule edit sb1 --chunk-id "$A" --rule "$WORK/rule.yaml"
out_has "api.github.com:443 [L7 rest enforce, allow GET /repos/o/r/readme]" "edit with a YAML rule"
printf '{"endpoints": [{"host": "api.github.com", "port": 443, "protocol": "rest", "enforcement": "enforce", "rules": [{"allow": {"method": "HEAD", "path": "/x"}}]}], "binaries": [{"path": "/usr/bin/curl"}]}\n' >"$WORK/rule.json"
cli 0 rule edit sb1 --chunk-id "$A" --rule "$WORK/rule.json" --format json
out_has '"method": "HEAD"' "edit with a JSON rule (json answer)"
printf -- '- just\n- a list\n' >"$WORK/list.yaml"
cli 2 rule edit sb1 --chunk-id "$A" --rule "$WORK/list.yaml"
err_has "a rule is a JSON or YAML mapping" "edit with a list"
cli 2 rule edit sb1 --chunk-id "$A" --rule "$WORK/nonexistent.yaml"
cli 0 rule reject sb1 --chunk-id "$A" --reason "read the README from the docs site"
out_has "chunk $A is rejected" "reject with a reason"
cli 1 rule reject sb1 --chunk-id "$A" --reason again
err_has "chunk status is 'rejected', expected 'pending' or 'approved'" "reject twice (409)"
cli 1 rule edit sb1 --chunk-id "$A" --rule "$WORK/rule.yaml"
err_has "expected 'pending'" "edit of a rejected chunk (409)"
cli 2 rule reject sb1 --chunk-id "$B"
err_has "rule reject needs --reason TEXT" "reject without --reason: a usage error, as the inbox asks for one"
cli 2 rule reject sb1 --chunk-id "$B" --reason "   "
err_has "rule reject needs --reason TEXT" "reject with a blank reason: refused too"
cli 0 rule get sb1 --chunk-id "$B"
out_has "status:           approved" "... and nothing was sent: the chunk is still approved"
cli 0 rule reject sb1 --chunk-id "$B" --reason "not needed any more" --format json
out_has '"policy_version":' "rejecting an approved chunk removes its grant (json)"
cli 0 rule history sb1
out_has "proposed  Rule 'gh_write' proposed (confidence:" "history: proposed"
out_has "rejected  Rule 'gh_write' rejected: read the README from the docs site (by a reviewer)" "history: the reason, by a reviewer"
out_has "$SHORT_A" "history: short ids"
cli 0 rule history sb1 --format json
out_has '"history": [' "history json"

# --- approve-all, security notes, clear -------------------------------------------------------------
submit "$WORK/sb1.token" "$WORK/p_pypi.json"
C=$CHUNK
proposal "$WORK/p_db.json" db db.example.com 5432 GET /
submit "$WORK/sb1.token" "$WORK/p_db.json"
D=$CHUNK
cli 0 rule list sb1 --status pending
out_has "(security notes)" "rule list marks a chunk with security notes"
cli 0 rule approve-all sb1
out_has "sandbox sb1: approved 1 chunk(s), skipped 1" "approve-all skips the flagged chunk"
out_has "approved $C" "approve-all: the approved chunk"
out_has "skipped  $D  security notes" "approve-all: why one was skipped"
cli 0 rule get sb1 --chunk-id "$D"
out_has "Port 5432 is a well-known database/service port." "rule get shows the security note"
# Approving C moved the policy on; D's evaluation against the moved policy
# reads as the one stored, so approve-all approves it.
cli 0 rule approve-all sb1 --include-security-flagged --format json
out_has '"approved_chunks": 1' "approve-all --include-security-flagged (json)"
out_has "\"chunk_id\": \"$D\"" "... approves the flagged chunk"
proposal "$WORK/p_e.json" e_rule e.example.com 443 GET /e
submit "$WORK/sb1.token" "$WORK/p_e.json"
cli 0 rule clear sb1
out_has "sandbox sb1: cleared 1 pending chunk(s)" "rule clear"
cli 0 rule list sb1 --status pending
out_has "no pending chunks" "nothing pending after clear"
cli 0 rule clear sb1 --format json
out_has '"cleared": 0' "rule clear json"

# --- a sandbox's own token is not a reviewer -------------------------------------------------------
submit "$WORK/sb1.token" "$WORK/p_e.json"
cli 1 rule approve-all sb1 --token-file "$WORK/sb1.token"
err_has "forbidden: this route needs the admin token" "a sandbox token cannot approve (403)"
cli 1 rule reject sb1 --chunk-id "$CHUNK" --reason no --token-file "$WORK/sb1.token"
err_has "forbidden" "a sandbox token cannot reject (403)"
cli 1 sandbox list --token-file "$WORK/sb1.token"
err_has "forbidden" "a sandbox token cannot list sandboxes (403)"
cli 1 rule list sb2 --token-file "$WORK/sb1.token"
err_has "not_found" "another sandbox does not exist for a sandbox token (404)"
cli 0 rule list sb1 --status pending
out_has "e_rule" "... and nothing was decided"

# --- 5xx and unreadable answers: exit 3 (a one-shot fake advisor) ------------------------------------
if command -v perl >/dev/null 2>&1; then
    perl -MIO::Socket::INET -e '
        my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 5,
                                      ReuseAddr => 1) or die "listen: $!";
        open(my $f, ">", $ARGV[0]) or die; print $f $s->sockport(), "\n"; close $f;
        for my $a (["500 Internal Server Error", "{\"error\":\"internal\",\"detail\":\"boom\"}"],
                   ["200 OK", "not json"]) {
            my $c = $s->accept() or last;
            while (my $l = <$c>) { last if $l =~ /^\r?\n$/; }
            printf $c "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n" .
                      "Connection: close\r\n\r\n%s", $a->[0], length($a->[1]), $a->[1];
            close $c;
        }' "$WORK/fake.port" &
    FAKE=$!
    i=0
    while [ ! -s "$WORK/fake.port" ] && [ $i -lt 200 ]; do sleep 0.025; i=$((i + 1)); done
    FAKE_URL=http://127.0.0.1:$(cat "$WORK/fake.port")
    cli 3 sandbox list --advisor "$FAKE_URL"
    err_has "internal: boom" "a 5xx answer is exit 3 with the advisor's error"
    cli 3 sandbox list --advisor "$FAKE_URL"
    err_has "not a JSON object" "an answer that is not JSON is exit 3"
    wait "$FAKE"
else
    echo "# perl missing: 5xx checks skipped"
fi

# --- the advisor down: exit 3 --------------------------------------------------------------------------
stop_server
check "the advisor stops on SIGTERM with 0" [ $? -eq 0 ]
cli 3 rule list sb1
err_has "cannot reach the advisor at $URL" "an unreachable advisor"
cli 3 sandbox create sb9 --policy "$WORK/base.yaml" --token-out "$WORK/sb9.token"
check "no token file is left when the advisor is down" [ ! -e "$WORK/sb9.token" ]

finish
