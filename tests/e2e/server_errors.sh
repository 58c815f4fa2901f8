#!/bin/sh
# server_errors.sh - proviso-prover end to end: 400, 413, 415, 503, config and token handling
. "$(dirname "$0")/server_lib.sh"

write_policies
make_token "$WORK/token"
cat >"$WORK/small.yaml" <<'EOF'
# a small body cap and one admission slot, so 413 and 503 are cheap to reach
body_limit: 4096
max_concurrent: 1
timeout_ms: 1000
max_timeout_ms: 5000
EOF
start_server --token-file "$WORK/token" --config "$WORK/small.yaml" || exit 1

# --- 400: malformed JSON, with a location ------------------------------------------
body400() {
    printf '%s' "$1" >"$WORK/b.json"
    post "${3:-/v1/prove}" "$WORK/b.json"
    expect_error 400 "$2" "400 for $(printf '%s' "$1" | head -c 60)"
}
body400 '{"candidate": {"version": 1,}' invalid_json
expect_body '"detail":"body:1:' "JSON syntax errors carry body:LINE:COL"
body400 '' invalid_json
body400 '{"candidate": {"version": 1}} trailing' invalid_json
body400 '{"candidate": {"version": 1}, "candidate": {"version": 1}}' invalid_json
expect_body 'duplicate' "duplicate keys are refused"
printf '{"candidate": "version: 1\\u0000"}' >"$WORK/nul.json"
post /v1/prove "$WORK/nul.json"
expect_error 400 invalid_json "an embedded NUL is refused"

# --- 400: wrong shapes and types ------------------------------------------------------
body400 '[]' invalid_request
body400 '"x"' invalid_json
body400 '{}' invalid_request
expect_body 'exactly one of candidate, proposal, policy' "prove needs one change"
body400 '{"candidate": 5}' invalid_request
expect_body 'candidate: must be a policy object or a YAML/JSON string' "the type error names the field"
body400 '{"candidate": {"version": 1}, "proposal": {"operations": []}}' invalid_request
body400 '{"policy": {"version": 1}, "baseline": {"version": 1}}' invalid_request
body400 '{"candidate": {"version": 1}, "extra": 1}' invalid_request
expect_body 'unknown field \"extra\"' "unknown top-level fields are refused"
body400 '{"candidate": {"version": 1}, "options": {"timeout_ms": 0}}' invalid_request
body400 '{"candidate": {"version": 1}, "options": {"timeout_ms": 5001}}' invalid_request
expect_body 'between 1 and 5000' "timeout_ms is capped by max_timeout_ms"
body400 '{"candidate": {"version": 1}, "options": {"timeout_ms": "9"}}' invalid_request
body400 '{"candidate": {"version": 1}, "options": {"retries": 1}}' invalid_request
body400 '{"candidate": {"version": 1}, "credentials": 7}' invalid_request
body400 '{"candidate": {"version": 1}}' invalid_request /v1/check
expect_body 'boundary: required field missing' "check needs a boundary"
body400 '{"policy": {"version": 1}, "openapi": {"openapi": "3.0.0", "paths": {}}, "binary": "curl"}' \
    invalid_request /v1/discover
expect_body 'binary: must be an absolute path' "discover needs an absolute binary"
body400 '{"policy": {"version": 1}, "openapi": {"swagger": "2.0"}, "binary": "/usr/bin/curl"}' \
    invalid_openapi /v1/discover
body400 '{"policy": {"version": 1}, "openapi": "{bad", "binary": "/usr/bin/curl"}' \
    invalid_openapi /v1/discover
expect_body 'openapi:1:' "an OpenAPI string's syntax error is located"

# --- 400: policy errors are located inside the field ------------------------------------
printf '{"candidate": "version: 1\\nnetwork_policies:\\n  x:\\n    endpoints:\\n      - host: api.github.com\\n        port: 99999\\n    binaries:\\n      - path: /usr/bin/curl\\n"}' \
    >"$WORK/badport.json"
post /v1/prove "$WORK/badport.json"
expect_error 400 invalid_policy "a policy error"
expect_body '"detail":"candidate:6:' "the location is candidate:LINE:COL (YAML string)"
expect_body '"diagnostics":["candidate:6:' "every diagnostic is listed"
expect_body '"verdict":"invalid"' "the CLI's invalid verdict"
printf '{"baseline": {"version": 1},\n "candidate": {"version": 1,\n  "bogus": true}}' >"$WORK/bogus.json"
post /v1/prove "$WORK/bogus.json"
expect_error 400 invalid_policy "an unknown key in a policy object"
expect_body '"detail":"candidate:2:' "an object's location counts from the object's first byte"
printf '{"baseline": "version: [", "candidate": {"version": 1}}' >"$WORK/badyaml.json"
post /v1/prove "$WORK/badyaml.json"
expect_error 400 invalid_policy "malformed YAML in baseline"
expect_body '"detail":"baseline:' "the YAML error names baseline"

# --- 413: declared and chunked bodies over the cap ---------------------------------------
head -c 5000 /dev/zero | tr '\0' ' ' >"$WORK/big.json"
post /v1/prove "$WORK/big.json"
expect_error 413 body_too_large "a body over body_limit (Content-Length)"
auth POST /v1/prove -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' \
    --data-binary "@$WORK/big.json"
expect_error 413 body_too_large "a chunked body over body_limit"
head -c 20000000 /dev/zero | tr '\0' ' ' >"$WORK/huge.json"
auth POST /v1/prove -H 'Content-Type: application/json' --data-binary "@$WORK/huge.json"
expect_error 413 body_too_large "a 20 MB body is refused before it is read"
{
    printf '{"candidate": {"version": 1}}'
    head -c 4000 /dev/zero | tr '\0' ' '
} >"$WORK/fits.json"
post /v1/prove "$WORK/fits.json"
expect_status 200 "a body just under the cap is read"

# --- 415 ----------------------------------------------------------------------------------
auth POST /v1/prove -H 'Content-Type: text/plain' --data-binary "@$WORK/prove.json"
expect_error 415 unsupported_media_type "text/plain"
auth POST /v1/prove --data-binary "@$WORK/prove.json"
expect_error 415 unsupported_media_type "form encoding (curl's default)"
auth POST /v1/prove -H 'Content-Type: application/jsonx' --data-binary "@$WORK/prove.json"
expect_error 415 unsupported_media_type "application/jsonx"
auth POST /v1/prove -H 'Content-Type: Application/JSON; charset=utf-8' \
    --data-binary "@$WORK/prove.json"
expect_status 200 "application/json with parameters, any case"

# --- 503 with Retry-After: one slot, held by a stalled upload -------------------------------
mkfifo "$WORK/fifo"
curl -s -o "$WORK/slow.out" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' -T "$WORK/fifo" "$URL/v1/prove" >"$WORK/slow.code" &
SLOW=$!
exec 3>"$WORK/fifo"
printf '{"candidate": ' >&3
sleep 0.3
post /v1/prove "$WORK/prove.json"
expect_error 503 overloaded "a second request while the only slot is taken"
expect_header "Retry-After: 1" "503 says when to retry"
req GET /healthz
expect_status 200 "healthz answers while the slot is taken"
printf '{"version": 1}}' >&3
exec 3>&-
wait $SLOW
check "the slot holder completes with 200" [ "$(cat "$WORK/slow.code")" = 200 ]
post /v1/prove "$WORK/prove.json"
expect_status 200 "the slot is free again"

stop_server
check "SIGTERM exits 0" [ $? -eq 0 ]

# --- start-up contract: config errors, token options ----------------------------------------
printf 'port: 8080\nworkerz: 2\n' >"$WORK/typo.yaml"
"$BIN" --port 0 --token-file "$WORK/token" --config "$WORK/typo.yaml" 2>"$WORK/typo.err"
rc=$?
check "an unknown config key stops the start (exit $rc)" [ $rc -ne 0 ]
check "... with FILE:LINE:COL" grep -q "typo.yaml:2:1: workerz: unknown key" "$WORK/typo.err"
printf '{"port": 0, "timeout_ms": 9000, "max_timeout_ms": 100}' >"$WORK/bad.json"
"$BIN" --port 0 --token-file "$WORK/token" --config "$WORK/bad.json" 2>"$WORK/bad.err"
check "timeout_ms above max_timeout_ms is refused" [ $? -ne 0 ]
"$BIN" --port 0 --token "$TOKEN" 2>"$WORK/tok.err"
check "--token on the command line is refused" [ $? -ne 0 ]
check "... and the token is not echoed" sh -c "! grep -q '$TOKEN' '$WORK/tok.err'"
printf 'short\n' >"$WORK/short"
"$BIN" --port 0 --token-file "$WORK/short" 2>/dev/null
check "a token under 16 bytes is refused" [ $? -ne 0 ]
"$BIN" --port 0 --token-file "$WORK/missing" 2>/dev/null
check "a missing token file is refused" [ $? -ne 0 ]

# --token-fd: the token arrives on an inherited descriptor.
exec 4<"$WORK/token"
start_server --token-fd 4 || exit 1
exec 4<&-
auth GET /metrics
expect_status 200 "--token-fd: the token works"
stop_server

# No token option: a per-run token in a new 0600 file whose path is logged.
start_server || exit 1
TF=$(sed -n 's/.*token file: \([^ ]*\) .*/\1/p' "$LOG" | head -n 1)
check "the generated token file is logged" [ -n "$TF" ]
check "the generated token file exists" [ -f "$TF" ]
check "the generated token file is mode 0600" [ "$(stat -c %a "$TF")" = 600 ]
TOKEN=$(cat "$TF")
check "the generated token is 64 hex digits" sh -c "printf '%s' '$TOKEN' | grep -Eq '^[0-9a-f]{64}\$'"
auth GET /metrics
expect_status 200 "the generated token authenticates"
check "the token itself is never logged" sh -c "! grep -q '$TOKEN' '$LOG'"
stop_server
check "SIGTERM exits 0" [ $? -eq 0 ]
check "the generated token file is removed on exit" [ ! -e "$TF" ]
finish
