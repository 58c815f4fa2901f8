#!/bin/sh
# server_routes.sh - proviso-prover end to end: every route, auth, 404/405, log, metrics
. "$(dirname "$0")/server_lib.sh"

write_policies
make_token "$WORK/token"
# A generous default solver budget: a loaded CI machine (or valgrind) must not
# turn an expected verdict into "unknown (timeout)". JSON config on purpose.
printf '{"timeout_ms": 60000, "max_timeout_ms": 60000}\n' >"$WORK/config.json"
start_server --token-file "$WORK/token" --config "$WORK/config.json" || exit 1

# --- /healthz: no token, exact body -------------------------------------------
req GET /healthz
expect_status 200 "healthz without a token"
check "healthz body is exactly {\"status\":\"ok\"}" [ "$BODY" = '{"status":"ok"}' ]
expect_header "Content-Type: application/json" "healthz is JSON"
req POST /healthz -H 'Content-Type: application/json' -d '{}'
expect_error 405 method_not_allowed "POST /healthz"
expect_header "Allow: GET, HEAD" "405 names the allowed methods"

# --- the token ------------------------------------------------------------------
req GET /metrics
expect_error 401 unauthorized "metrics without a token"
expect_header "WWW-Authenticate: Bearer" "401 asks for a bearer token"
req GET /metrics -H "Authorization: Bearer ${TOKEN}x"
expect_error 401 unauthorized "metrics with a longer wrong token"
req GET /metrics -H "Authorization: Bearer $(printf '%s' "$TOKEN" | tr '0-9a-f' 'f-fa-e0-9')"
expect_error 401 unauthorized "metrics with a same-length wrong token"
req GET /metrics -H "Authorization: Basic $TOKEN"
expect_error 401 unauthorized "metrics with the token under another scheme"
req POST /v1/prove -H 'Content-Type: application/json' --data-binary "@$WORK/prove.json"
expect_error 401 unauthorized "prove without a token"
req GET /nope
expect_error 401 unauthorized "unknown route without a token reveals nothing"
req GET /metrics -H "Authorization: bearer $TOKEN"
expect_status 200 "the bearer scheme is case-insensitive"

# --- 404 / 405 ------------------------------------------------------------------
auth GET /nope
expect_error 404 not_found "unknown route"
auth GET /v1/prove/extra
expect_error 404 not_found "route with a suffix"
auth GET /v1/prove
expect_error 405 method_not_allowed "GET /v1/prove"
expect_header "Allow: POST" "405 on a POST route says POST"
auth DELETE /openapi.json
expect_error 405 method_not_allowed "DELETE /openapi.json"

# --- /openapi.json and /tools.json ------------------------------------------------
auth GET /openapi.json
expect_status 200 "openapi.json"
expect_body '"openapi":"3.0.3"' "openapi.json is an OpenAPI 3 document"
for p in /healthz /metrics /openapi.json /tools.json /v1/prove /v1/check /v1/discover; do
    expect_body "\"$p\":" "openapi.json describes $p"
done
auth GET /tools.json
expect_status 200 "tools.json"
for t in prove check discover healthz metrics; do
    expect_body "\"name\":\"$t\"" "tools.json has tool $t"
done
expect_body '"input_schema":' "tools have an input_schema"
expect_body '"candidate":' "the prove tool's input_schema lists candidate"

# --- /v1/prove ---------------------------------------------------------------------
post /v1/prove "$WORK/prove.json"
expect_status 200 "prove a candidate"
expect_body '"verdict":"findings"' "a new credentialed host is a finding"
expect_body '"credential_reach_expansion"' "... in credential_reach_expansion"
expect_body '"validation_result":"prover: 1 new finding' "validation_result in the reference's words"
expect_body '"grants":[{"change":"new","rule":"gh","binary":"/usr/bin/curl","host":"api.github.com","ports":[443],"route":"opaque","access":["all traffic"],"credentials":["gh"],"private_destinations":[],"breadth":{"binary":"exact","host":"exact","route":"opaque","methods":"all"}}]' \
    "the answer lists the grant (additive field)"
expect_body '"warnings":[' "the answer carries warnings (additive field)"

printf '{"baseline": %s, "candidate": %s}\n' "$(cat "$WORK/baseline.json")" \
    "$(cat "$WORK/baseline.json")" >"$WORK/same.json"
post /v1/prove "$WORK/same.json"
expect_status 200 "prove an unchanged policy"
expect_body '"verdict":"empty"' "no change proves empty"
expect_body '"grants":[]' "no change grants nothing"
expect_body '"code":"no-credentials"' "prove without credentials warns"

# A YAML string for the baseline, a proposal for the change.
cat >"$WORK/proposal.json" <<'EOF'
{"baseline": "version: 1\nnetwork_policies:\n  docs:\n    name: docs\n    endpoints:\n      - host: docs.python.org\n        port: 443\n    binaries:\n      - path: /usr/bin/curl\n",
 "proposal": {"operations": [{"addRule": {"ruleName": "gh", "rule": {"name": "gh",
   "endpoints": [{"host": "api.github.com", "port": 443}], "binaries": [{"path": "/usr/bin/curl"}]}}}]},
 "credentials": [{"name": "gh", "type": "github", "scopes": ["repo"], "target_hosts": ["api.github.com"]}],
 "options": {"timeout_ms": 5000}}
EOF
post /v1/prove "$WORK/proposal.json"
expect_status 200 "prove a proposal against a YAML baseline"
expect_body '"verdict":"findings"' "the proposal's new credentialed reach is found"

printf '{"policy": %s}\n' "$(cat "$WORK/candidate.json")" >"$WORK/audit.json"
post /v1/prove "$WORK/audit.json"
expect_status 200 "audit a single policy"
expect_body '"verdict":' "audit answers a verdict"

# --- /v1/check -----------------------------------------------------------------------
printf '{"candidate": %s, "boundary": %s}\n' "$(cat "$WORK/candidate.json")" \
    "$(cat "$WORK/baseline.json")" >"$WORK/exceeds.json"
post /v1/check "$WORK/exceeds.json"
expect_status 200 "check a candidate that exceeds its boundary"
expect_body '"verdict":"exceeds"' "verdict exceeds"
printf '{"candidate": %s, "boundary": %s}\n' "$(cat "$WORK/baseline.json")" \
    "$(cat "$WORK/candidate.json")" >"$WORK/within.json"
post /v1/check "$WORK/within.json"
expect_status 200 "check a candidate within its boundary"
expect_body '"verdict":"within"' "verdict within"

# --- /v1/discover ---------------------------------------------------------------------
cat >"$WORK/discover.json" <<'EOF'
{"binary": "/usr/bin/curl",
 "policy": {"version": 1, "network_policies": {"gh": {"name": "gh", "endpoints": [
   {"host": "api.github.com", "port": 443, "protocol": "rest", "enforcement": "enforce",
    "rules": [{"allow": {"method": "GET", "path": "/repos/*/*/issues"}}]}],
   "binaries": [{"path": "/usr/bin/curl"}]}}},
 "openapi": {"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
   "servers": [{"url": "https://api.github.com"}],
   "paths": {"/repos/{owner}/{repo}/issues": {
       "get": {"operationId": "listIssues", "summary": "List issues",
               "parameters": [{"name": "owner", "in": "path", "required": true, "schema": {"type": "string"}}]},
       "post": {"operationId": "createIssue"}},
     "/user": {"get": {"operationId": "getUser"}}}}}
EOF
post /v1/discover "$WORK/discover.json"
expect_status 200 "discover"
expect_body '"operations_reachable":1' "one operation is reachable"
expect_body '"name":"listIssues"' "the reachable operation is a tool"
expect_no_body '"name":"createIssue"' "a denied method is not a tool"
expect_no_body '"name":"getUser"' "a denied path is not a tool"
expect_body '"target":"/repos/x1/x1/issues"' "the representative request fills parameters"

# --- a proof that runs out of solver time answers "unknown", never hangs ----------
# The proposal's host becomes "**.example.com" (and so does the credential's
# target): it overlaps all 5,000 rules. Since the prover answers from
# concrete requests first, such a wide proof at 100 rules takes well under
# 1 ms (it sometimes finished in time); at 5,000 rules it takes about 30 ms
# on this 2-core machine, so a 1 ms budget runs out on any machine.
sh "$(dirname "$0")/server_gen.sh" 5000 1 | sed 's/api\.newsvc\.example\.com/**.example.com/g' \
    >"$WORK/slow.json"
post /v1/prove "$WORK/slow.json"
expect_status 200 "a 5,000-rule wide proof with a 1 ms budget"
expect_body '"verdict":"unknown"' "running out of time is verdict unknown"
expect_body '"reason":"timeout"' "... with reason timeout"

# --- metrics after the traffic above ---------------------------------------------------
auth GET /metrics
expect_status 200 "metrics"
expect_body 'proviso_prover_requests_total{route="/healthz",status="200"}' "requests by route and status"
expect_body 'proviso_prover_requests_total{route="/v1/prove",status="200"}' "prove requests counted"
expect_body 'proviso_prover_request_duration_seconds_bucket{route="/v1/prove",le="+Inf"}' \
    "latency histogram"
expect_body 'proviso_prover_verdicts_total{verdict="findings"}' "verdict counts"
expect_body 'proviso_prover_solver_timeouts_total 1' "the solver timeout was counted"
expect_body 'proviso_prover_verdicts_total{verdict="unknown"} 1' "... and its verdict"
expect_header "Content-Type: text/plain; version=0.0.4" "Prometheus content type"

# --- shutdown and the access log ---------------------------------------------------------
stop_server
check "SIGTERM exits 0" [ $? -eq 0 ]
grep ' proviso-prover access: ' "$LOG" >"$WORK/access"
check "one access line per request ($REQS)" [ "$(wc -l <"$WORK/access")" -eq "$REQS" ]
check "access lines carry method, route, status, verdict and ms" \
    grep -Eq ' access: POST /v1/prove 200 verdict:findings [0-9]+\.[0-9]{3} ms$' "$WORK/access"
check "a successful health probe is not logged" sh -c "! grep -q ' access: GET /healthz 200 ' '$WORK/access'"
check "a refused one is" grep -q ' access: POST unknown 405 ' "$WORK/access"
check "unknown routes are logged as such, not by their URL" \
    grep -Eq ' access: [A-Z]+ unknown 404 ' "$WORK/access"
check "no access line carries the token" sh -c "! grep -q '$TOKEN' '$LOG'"
check "no log line carries policy contents" sh -c "! grep -q 'docs.python.org\\|api.github.com' '$LOG'"
# one format: every line of the log is "TS proviso-prover TAG: ...", the
# access lines included (no JSON line beside the text ones)
check "every log line has the one shape (timestamp, program, tag)" sh -c \
    "! grep -Ev '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z proviso-prover (info|warning|error|debug|fatal|access): ' '$LOG'"
check "every access line is whole: method, route, status, verdict, ms" sh -c \
    "! grep -Ev ' access: [^ ]+ [^ ]+ [0-9]+ verdict:[a-z_]+ [0-9]+\.[0-9]{3} ms( aborted)?\$' '$WORK/access'"
finish
