#!/bin/sh
# advisor_inbox_http.sh - the reviewer inbox without a browser: /ui/'s files
# (public, content types, the strict Content-Security-Policy, nosniff,
# no-store, no-referrer, the /ui redirect, no inline script or style in the
# page) and the events long-poll it follows (GET /v1/events?since&wait):
# answers at once when events are newer, holds and wakes within a moment of
# a new proposal, times out empty otherwise, and rejects a bad wait.
# tests/e2e/advisor_ui.sh drives the page in a real browser.
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
CSP="default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

start_advisor "$WORK/data" --test-allow-loopback || exit 1

# hdr PATH: the status line and headers of GET PATH without a token (in HDR),
# the body in $WORK/asset.
hdr() {
    HDR=$(curl -s -D - -o "$WORK/asset" --max-time 10 "$ADV$1" | tr -d '\r')
}
# header NAME: its value in HDR (case-insensitive name).
header() {
    printf '%s\n' "$HDR" | awk -v n="$1" 'BEGIN { n = tolower(n) ":" }
        tolower(substr($0, 1, length(n))) == n { sub(/^[^:]*:[ ]*/, ""); print; exit }'
}

# --- the static files --------------------------------------------------------
for spec in "/ui/|text/html; charset=utf-8" "/ui/app.js|text/javascript; charset=utf-8" \
    "/ui/app.css|text/css; charset=utf-8"; do
    p=${spec%%|*}
    ct=${spec#*|}
    hdr "$p"
    has "$p: 200 without a token" "$(printf '%s\n' "$HDR" | head -n 1)" " 200"
    eq "$p: content type" "$(header Content-Type)" "$ct"
    eq "$p: CSP" "$(header Content-Security-Policy)" "$CSP"
    eq "$p: nosniff" "$(header X-Content-Type-Options)" nosniff
    eq "$p: Cache-Control" "$(header Cache-Control)" no-store
    eq "$p: Referrer-Policy" "$(header Referrer-Policy)" no-referrer
    eq "$p: no cookie" "$(header Set-Cookie)" ""
    if [ -s "$WORK/asset" ]; then ok "$p: has a body"; else bad "$p: empty body"; fi
done
hdr /ui/
# The CSP forbids inline code: the page must not rely on any.
if grep -Eiq '<script>|<script [^>]*>[^<]|<style|[[:space:]]on[a-z]+=|style=|javascript:' "$WORK/asset"; then
    bad "index.html has inline script, style or handlers"
else
    ok "index.html has no inline script, style or handlers"
fi
has "index.html loads app.js" "$(cat "$WORK/asset")" '<script src="app.js" defer></script>'
hdr /ui/app.js
if grep -q 'innerHTML\|outerHTML\|insertAdjacentHTML\|document.write\|eval(' "$WORK/asset"; then
    bad "app.js uses an HTML sink or eval"
else
    ok "app.js uses no HTML sink or eval"
fi

hdr /ui
has "/ui: permanent redirect" "$(printf '%s\n' "$HDR" | head -n 1)" " 308"
eq "/ui: Location /ui/" "$(header Location)" /ui/
hdr /
has "/: permanent redirect" "$(printf '%s\n' "$HDR" | head -n 1)" " 308"
eq "/: Location /ui/ (the root leads to the inbox)" "$(header Location)" /ui/
# Other paths under /ui/ are not routes: like any unknown path they answer
# 401 without a token (nothing is revealed) and 404 with one.
hdr /ui/other.js
has "/ui/other.js without a token: 401" "$(printf '%s\n' "$HDR" | head -n 1)" " 401"
api GET /ui/other.js
eq "/ui/other.js: 404" "$STATUS" 404
api GET /ui/app.js/
eq "/ui/app.js/: 404" "$STATUS" 404
api POST /ui/ '{}' -
eq "POST /ui/: 405" "$STATUS" 405
HDR=$(curl -s -I --max-time 10 "$ADV/ui/app.css" | tr -d '\r')
eq "HEAD /ui/app.css: content type" "$(header Content-Type)" "text/css; charset=utf-8"
# The API behind the page still needs the token.
api GET /v1/events "" -
eq "events without a token: 401" "$STATUS" 401

# --- the events long-poll ----------------------------------------------------
api GET /v1/events
eq "events: 200" "$STATUS" 200
SEQ=$(jf .next_since)
eq "next_since is the last seq (no events yet: 0)" "$SEQ" "$(jf '.events[-1].seq // 0')"

api GET "/v1/events?since=$SEQ&wait=61"
eq "wait above 60: 400" "$STATUS" 400
api GET "/v1/events?since=$SEQ&wait=x"
eq "wait not a number: 400" "$STATUS" 400
api GET "/v1/events?since=-1&wait=1"
eq "since negative: 400" "$STATUS" 400

# No new event: holds for the wait, then answers empty.
t0=$(date +%s%N)
api GET "/v1/events?since=$SEQ&wait=2"
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
eq "timeout: 200" "$STATUS" 200
eq "timeout: no events" "$(jf '.events | length')" 0
eq "timeout: next_since unchanged" "$(jf .next_since)" "$SEQ"
if [ "$ms" -ge 1900 ] && [ "$ms" -lt 5000 ]; then ok "timeout: held ~2 s (${ms} ms)"; else bad "timeout: held ${ms} ms, want ~2000"; fi

# An older since answers at once, without waiting.
create_sandbox sb1 "$POLICY"
eq "create sandbox: 201" "$STATUS" 201
SBT=$SB_TOKEN
t0=$(date +%s%N)
api GET "/v1/events?since=$SEQ&wait=30"
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
eq "pending event: CONFIG:CREATED" "$(jf '.events[0].kind')" CONFIG:CREATED
if [ "$ms" -lt 3000 ]; then ok "pending event: at once (${ms} ms)"; else bad "pending event took ${ms} ms"; fi
SEQ=$(jf .next_since)
eq "next_since is the last event's seq" "$SEQ" "$(jf '.events[-1].seq')"

api PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}'
api GET "/v1/events?since=$SEQ"
SEQ=$(jf .next_since)

# A proposal arriving while the long-poll holds wakes it promptly.
curl -s -o "$WORK/poll" -w '%{http_code}' --max-time 40 -H "Authorization: Bearer $ADMIN" \
    "$ADV/v1/events?since=$SEQ&wait=30" >"$WORK/poll.status" &
POLL=$!
sleep 1
if kill -0 "$POLL" 2>/dev/null; then ok "long-poll holds while nothing happens"; else bad "long-poll returned early"; fi
t0=$(date +%s%N)
api POST /v1/sandboxes/sb1/proposals \
    "$(proposal ghw api.github.com 443 PUT '/repos/o/r/contents/**')" "$SBT"
eq "submit: 202" "$STATUS" 202
wait "$POLL"
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
eq "woken long-poll: 200" "$(cat "$WORK/poll.status")" 200
BODY=$(cat "$WORK/poll")
eq "woken long-poll: the proposal's event" "$(jf '[.events[].kind] | index("CONFIG:PROPOSED") != null')" true
eq "woken long-poll: sandbox" "$(jf '.events[0].sandbox')" sb1
# The submission itself runs the prover; the poll must answer within a
# moment of it, far before its 30 s wait.
if [ "$ms" -lt 5000 ]; then ok "woken long-poll: promptly (${ms} ms after the submit began)"; else bad "woken long-poll took ${ms} ms"; fi

# A sandbox token may not follow the log.
api GET "/v1/events?since=0&wait=1" "" "$SBT"
eq "events with a sandbox token: 403" "$STATUS" 403

stop_advisor
eq "advisor exits cleanly" "$ADV_RC" 0
finish
