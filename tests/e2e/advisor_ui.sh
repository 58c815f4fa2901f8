#!/bin/sh
# advisor_ui.sh - the reviewer inbox (/ui/) in a real browser: Debian's
# chromium, headless, driven by tests/ui/inbox.mjs through playwright-core.
# The advisor and its prover child run for real on 127.0.0.1; this script
# creates a sandbox with credentials and submits one proposal with findings
# (manual mode), the browser reviews it, is refused with 412 when the
# credentials change under it (stale review token), approves it, watches a second
# proposal arrive live (its rule name and rationale carry markup: they must
# stay text) and
# rejects that one with a reason. Screenshots of every step are kept in
# $PV_BUILDDIR/tests/ui-artifacts/. Afterwards the API confirms what the
# browser did.
#
# Without /usr/bin/chromium (PV_CHROMIUM overrides), node or playwright-core
# (npm install into $PV_BUILDDIR/tests/ui-node) the test SKIPS (77): it never
# passes without a browser.
. "$(dirname "$0")/advisor_lib.sh"

: "${PV_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
CHROMIUM=${PV_CHROMIUM:-/usr/bin/chromium}
NODE_DIR=$PV_BUILDDIR/tests/ui-node
ART=$PV_BUILDDIR/tests/ui-artifacts
PW_VERSION=${PV_PLAYWRIGHT_VERSION:-1}

skip() { echo "SKIP: $*"; exit 77; }
[ -x "$CHROMIUM" ] || skip "no browser: $CHROMIUM is not installed (Debian: apt-get install chromium; ./bootstrap installs it)"
command -v node >/dev/null 2>&1 || skip "node is not installed"
if [ ! -f "$NODE_DIR/node_modules/playwright-core/package.json" ]; then
    command -v npm >/dev/null 2>&1 || skip "npm is not installed (needed for playwright-core)"
    mkdir -p "$NODE_DIR" || exit 1
    echo "installing playwright-core@$PW_VERSION into $NODE_DIR"
    if ! PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --silent --no-save --no-audit --no-fund \
        --prefix "$NODE_DIR" "playwright-core@$PW_VERSION" >"$WORK/npm.log" 2>&1; then
        cat "$WORK/npm.log"
        skip "npm could not fetch playwright-core"
    fi
fi
"$CHROMIUM" --version 2>/dev/null || skip "$CHROMIUM does not run"
echo "playwright-core $(jq -r .version "$NODE_DIR/node_modules/playwright-core/package.json")"

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
  - {name: gh, type: github, target_hosts: [api.github.com, uploads.github.com]}
'

# the mapper would propose from the denials the browser test reports
# (step 10); it must not race the narrowed suggestion
printf 'mapper_flush_interval_ms: 3600000\n' >"$WORK/quiet.yaml"
start_advisor "$WORK/data" --test-allow-loopback --config "$WORK/quiet.yaml" || exit 1
create_sandbox sb1 "$POLICY" "$CREDS"
eq "create sandbox: 201" "$STATUS" 201
SBT=$SB_TOKEN
api PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}'
eq "proposals enabled" "$STATUS" 200
api PUT /v1/sandboxes/sb1/settings/proposal_approval_mode '{"value":"manual"}'
eq "manual approval mode" "$(jf .proposal_approval_mode.value)" manual
api POST /v1/sandboxes/sb1/proposals "$(proposal ghw api.github.com 443 PUT '/repos/o/r/contents/**')" "$SBT"
eq "submit: 202" "$STATUS" 202
CHUNK=$(jf '.accepted_chunk_ids[0]')
api GET "/v1/sandboxes/sb1/proposals/$CHUNK"
eq "the chunk waits for a reviewer" "$(jf .status)" pending
has "the chunk has findings" "$(jf .validation_result)" "new finding"

rm -rf "$ART"
mkdir -p "$ART" "$WORK/profile" || exit 1
PV_UI_NODE=$NODE_DIR PV_UI_CHROMIUM=$CHROMIUM PV_UI_URL=$ADV PV_UI_ADMIN=$ADMIN \
    PV_UI_SANDBOX=sb1 PV_UI_SANDBOX_TOKEN=$SBT PV_UI_CHUNK=$CHUNK PV_UI_ARTIFACTS=$ART \
    PV_UI_PROFILE=$WORK/profile \
    timeout 240 node "$PV_SRCDIR/tests/ui/inbox.mjs" >"$WORK/browser.out" 2>&1
rc=$?
cat "$WORK/browser.out"
eq "the browser script passed" "$rc" 0
PASS=$((PASS + $(grep -c '^ok - ' "$WORK/browser.out")))
XSS_CHUNK=$(sed -n 's/^XSS_CHUNK=//p' "$WORK/browser.out")

# Every step left a non-empty PNG.
for n in 01-token-prompt 02-token-refused 03-sandboxes 04-proposal-evidence \
    05-approve-confirm 06-stale-review-token 07-approved 08-xss-as-text 09-reject-reason \
    10-rejected 11-wide-grant-pending 12-wide-grant-confirm 13-auto-approved 14-suggestion \
    15-suggestion-confirm 16-suggestion-approved 17-suspended 18-graphql-pending 19-forgotten; do
    f=$ART/$n.png
    if [ -s "$f" ] && [ "$(od -An -tx1 -N4 "$f" | tr -d ' ')" = 89504e47 ]; then
        ok "screenshot $n.png is a non-empty PNG ($(wc -c <"$f") bytes)"
    else
        bad "screenshot $n.png missing or not a PNG"
    fi
done

# The API agrees with what the browser did.
# (the reviewed chunk was approved into revision 2, then suspended when a
# new credential changed what it grants: step 11)
api GET "/v1/sandboxes/sb1/proposals/$CHUNK"
eq "API: the reviewed chunk is suspended" "$(jf .status)" suspended
eq "API: decided by the re-proof" "$(jf .decided_by)" reproof
has "API: the approval's evidence is kept" "$(jf '.approved_evidence.prover.validation_result')" "new finding"
api GET /v1/sandboxes/sb1
eq "API: revisions: approval 2, auto-approval 3, narrowed rule 4, suspension 5" "$(jf .policy_version)" 5
if [ -n "$XSS_CHUNK" ]; then
    api GET "/v1/sandboxes/sb1/proposals/$XSS_CHUNK"
    eq "API: the second chunk is rejected" "$(jf .status)" rejected
    eq "API: with the typed reason" "$(jf .rejection_reason)" "too broad: <b>releases</b> are not needed"
else
    bad "the browser did not report the second chunk"
fi
api GET "/v1/events?since=0&limit=10000"
eq "API: three approvals (a reviewer's, the envelope's, a narrowed rule's)" \
    "$(jf '[.events[] | select(.kind == "CONFIG:APPROVED") | (.record.narrowed_from != null)] | map(tostring) | join(" ")')" "false false true"
eq "API: one suspension" "$(jf '[.events[] | select(.kind == "CONFIG:SUSPENDED") | .record.chunk_id] | join(" ")')" "$CHUNK"
has "API: the rejection event carries the reason" \
    "$(jf '[.events[] | select(.kind == "CONFIG:REJECTED") | .line] | join(" ")')" "too broad"

stop_advisor
eq "advisor exits cleanly" "$ADV_RC" 0
echo "screenshots: $ART"
finish
