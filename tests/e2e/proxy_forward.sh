#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# proxy_forward.sh - forward proxying of http:// requests: L4 allow/deny by
# host, port and binary (curl allowed, wget denied), L7 REST rules (method,
# path, query, deny rules, audit mode, canonical paths), structured deny
# bodies, request validation, keep-alive, policy.local and the log lines.
. "$(dirname "$0")/proxy_lib.sh"

start_upstream A
start_upstream B
start_upstream C

cat >"$T/policy.yaml" <<EOF
version: 1
network_policies:
  plain:
    name: plain-l4
    endpoints:
      - host: 127.0.0.1
        port: $A_HTTP
    binaries:
      - path: /usr/bin/curl
  api:
    endpoints:
      - host: 127.0.0.1
        port: $B_HTTP
        protocol: rest
        enforcement: enforce
        rules:
          - allow:
              method: GET
              path: /api/**
          - allow:
              method: POST
              path: /api/items
              query:
                tag: "ok-*"
        deny_rules:
          - method: GET
            path: /api/secret/**
          - method: GET
            path: /api/search
            query:
              force: "true"
    binaries:
      - path: /usr/bin/curl
  audited:
    endpoints:
      - host: 127.0.0.1
        port: $C_HTTP
        protocol: rest
        rules:
          - allow:
              method: GET
              path: /only
    binaries:
      - path: /usr/bin/curl
  raw:
    endpoints:
      - host: 127.0.0.1
        port: $A_HTTP
    binaries:
      - path: $RAW
EOF
start_proxy

# --- L4: host, port, binary -------------------------------------------------
out=$(pcurl "http://127.0.0.1:$A_HTTP/hello?x=1")
expect_has "allow: status" "|200" "$out"
expect_has "allow: upstream saw the origin-form target" "request: GET /hello?x=1" "$out"
expect_has "allow: Host rewritten from the URI" "header: Host: 127.0.0.1:$A_HTTP" "$out"
expect_has "allow: Via added" "header: Via: 1.1 proviso-proxy" "$out"
expect_not "allow: Proxy-Connection stripped" "Proxy-Connection" "$out"
expect_log "allow: log line" "HTTP:GET [INFO] ALLOWED /usr/bin/curl("

out=$(pcurl "http://127.0.0.1:$C_HTTPS/x")
expect_has "deny port: 403" "|403" "$out"
expect_has "deny port: exact body" "{\"detail\":\"GET 127.0.0.1:$C_HTTPS/x not permitted by policy\",\"error\":\"policy_denied\",\"reason\":\"endpoint 127.0.0.1:$C_HTTPS is not allowed by any policy\"}|403" "$out"

out=$(pcurl "http://127.0.0.1:9/x")
expect_has "deny unknown port: reason" "\"reason\":\"endpoint 127.0.0.1:9 is not allowed by any policy\"" "$out"

out=$(pcurl "http://not-in-policy.example:$A_HTTP/")
expect_has "deny host: 403 before DNS" "endpoint not-in-policy.example:$A_HTTP is not allowed by any policy" "$out"
expect_has "deny host: status" "|403" "$out"

out=$(pwget "http://127.0.0.1:$A_HTTP/hello")
expect_has "wget denied: body" "\"error\":\"policy_denied\"" "$out"
expect_has "wget denied: reason names wget" "binary '/usr/bin/wget' not allowed in policy 'plain-l4'" "$out"
expect_log "wget denied: log line" "HTTP:GET [MED] DENIED /usr/bin/wget("
expect_log "wget denied: log reason" "[reason:binary '/usr/bin/wget' not allowed in policy 'plain-l4'; binary '/usr/bin/wget' not allowed in policy 'raw']"

out=$(raw_send "GET http://127.0.0.1:$A_HTTP?only=query HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
expect_has "empty path before a query becomes /" "request: GET /?only=query" "$out"

# the way agents use it: the proxy environment variables
out=$(http_proxy="http://127.0.0.1:$PX" HTTP_PROXY="http://127.0.0.1:$PX" "$CURL" -s --max-time 5 "http://127.0.0.1:$A_HTTP/env")
expect_has "curl through http_proxy" "request: GET /env" "$out"
out=$(http_proxy="http://127.0.0.1:$PX" "$WGET" -q -T 5 -t 1 --content-on-error -O - "http://127.0.0.1:$A_HTTP/env")
expect_has "wget through http_proxy: denied" '"error":"policy_denied"' "$out"

# --- L7 over forward proxying -------------------------------------------------
B=http://127.0.0.1:$B_HTTP
out=$(pcurl "$B/api/repos/1")
expect_has "l7 GET allowed" "|200" "$out"
expect_has "l7 GET reached upstream" "request: GET /api/repos/1" "$out"

out=$(pcurl -X DELETE "$B/api/repos/1")
expect_has "l7 DELETE denied: status" "|403" "$out"
expect_has "l7 DELETE denied: exact body" \
    "{\"error\":\"policy_denied\",\"policy\":\"api\",\"rule\":\"DELETE /api/repos/1\",\"detail\":\"DELETE 127.0.0.1:$B_HTTP/api/repos/1 denied by L7 policy: DELETE /api/repos/1 not permitted by policy\",\"layer\":\"l7\",\"protocol\":\"rest\",\"method\":\"DELETE\",\"path\":\"/api/repos/1\",\"host\":\"127.0.0.1\",\"port\":$B_HTTP,\"binary\":\"/usr/bin/curl\",\"rule_missing\":{\"type\":\"rest_allow\",\"layer\":\"l7\",\"method\":\"DELETE\",\"path\":\"/api/repos/1\",\"host\":\"127.0.0.1\",\"port\":$B_HTTP,\"binary\":\"/usr/bin/curl\"},\"next_steps\":[]}|403" \
    "$out"
expect_log "l7 deny: log line" "HTTP:DELETE [MED] DENIED /usr/bin/curl("
expect_log "l7 deny: log reason" "engine:l7] [reason:DELETE /api/repos/1 not permitted by policy]"

out=$(pcurl "$B/other")
expect_has "l7 path outside rules denied" "GET /other not permitted by policy" "$out"
out=$(pcurl -I "$B/api/x")
expect_has "l7 HEAD allowed by a GET rule" "200" "$out"
out=$(pcurl -X OPTIONS "$B/api/x")
expect_has "l7 OPTIONS not implied" "|403" "$out"
out=$(pcurl -X get "$B/api/x")
expect_not "l7 method case-insensitive: not denied" "|403" "$out"
expect_log "l7 method case-insensitive: allowed" "HTTP:get [INFO] ALLOWED /usr/bin/curl("

out=$(pcurl -X POST "$B/api/items?tag=ok-1&tag=ok-2&other=z")
expect_has "query: every value matches" "|200" "$out"
out=$(pcurl -X POST "$B/api/items?tag=ok-1&tag=evil")
expect_has "query: one value fails" "|403" "$out"
out=$(pcurl -X POST "$B/api/items")
expect_has "query: missing key" "|403" "$out"
out=$(pcurl -X POST "$B/api/items?tag=ok-1.2.3")
expect_has "query: * crosses dots (no reference delimiter)" "|200" "$out"

out=$(pcurl "$B/api/secret/key")
expect_has "deny rule wins" "GET /api/secret/key blocked by deny rule" "$out"
out=$(pcurl "$B/api/search?q=1&force=true")
expect_has "deny rule with query" "blocked by deny rule" "$out"
out=$(pcurl "$B/api/search?force=true&x=%zz")
expect_has "malformed query is denied, never treated as empty" "|403" "$out"
expect_has "malformed query reason" "malformed query string" "$out"
out=$(pcurl "$B/api/search?force=false")
expect_has "deny rule query not matching: allowed" "|200" "$out"

out=$(pcurl --path-as-is "$B/api/a/../b/./c;p=1")
expect_has "canonical path: allowed" "|200" "$out"
expect_has "canonical path: sent upstream" "request: GET /api/b/c" "$out"
out=$(pcurl --path-as-is "$B/api/%2e%2e/other")
expect_has "encoded dot segments resolved before matching" "GET /other not permitted by policy" "$out"
out=$(pcurl --path-as-is "$B/api/a%2Fb")
expect_has "encoded slash without opt-in: 400" "|400" "$out"
expect_has "encoded slash body" "\"error\":\"invalid_request_target\"" "$out"
out=$(pcurl --path-as-is "$B/../../etc/passwd")
expect_has "traversal above root: 400" "request-target must be canonical" "$out"

# --- audit mode: forwarded, logged as AUDIT (never as a silent allow) ---------
out=$(pcurl -X DELETE "http://127.0.0.1:$C_HTTP/x")
expect_has "audit: violating request forwarded" "|200" "$out"
expect_log "audit: log says AUDIT" "HTTP:DELETE [LOW] AUDIT /usr/bin/curl("

# --- structured bodies and local answers --------------------------------------
out=$(pcurl "http://policy.local/v1/policy/current")
expect_has "policy.local: 404" "|404" "$out"
expect_has "policy.local: feature_disabled" "\"error\":\"feature_disabled\"" "$out"
out=$(pcurl "http://policy.local:8080/")
expect_has "policy.local other port" "invalid_policy_local_scheme" "$out"
out=$(raw_send "GET https://127.0.0.1:$A_HTTP/ HTTP/1.1\r\nHost: x\r\n\r\n")
expect_has "https via forward: 400" "Use CONNECT for HTTPS URLs" "$out"
out=$(raw_send "GET ftp://127.0.0.1/ HTTP/1.1\r\nHost: x\r\n\r\n")
expect_has "unsupported scheme" "unsupported_proxy_scheme" "$out"

# --- request validation (400 / 431 before any policy decision) ----------------
out=$(raw_send "GET http://127.0.0.1:$A_HTTP/ HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n")
expect_eq "header without colon" "HTTP/1.1 400 Bad Request" "$(printf '%s' "$out" | head -n1 | tr -d '\r')"
out=$(raw_send "GET http://127.0.0.1:$A_HTTP/ HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n")
expect_has "CL and TE together" "400 Bad Request" "$out"
out=$(raw_send "GET http://127.0.0.1:$A_HTTP/ HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n")
expect_has "obs-fold" "400 Bad Request" "$out"
out=$(raw_send "GET  http://127.0.0.1:$A_HTTP/ HTTP/1.1\r\nHost: x\r\n\r\n")
expect_has "double space in request line" "400 Bad Request" "$out"
out=$(raw_send "GET http://127.0.0.1:$A_HTTP/ HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n")
expect_has "differing Content-Length" "400 Bad Request" "$out"
out=$(raw_send "GET http://127.0.0.1:$A_HTTP/ HTTP/1.1\r\nHost: x\r\nX: $(head -c 9000 /dev/zero | tr '\0' a)\r\n\r\n")
expect_has "header block over 8192 bytes" "431 Request Header Fields Too Large" "$out"
out=$(raw_send "GET http://127.0.0.1:$A_HTTP/ HTTP/1.1\r\nHost: x\r\nConnection: content-length\r\n\r\n")
expect_has "Connection nominating Content-Length" "400 Bad Request" "$out"
out=$(raw_send "GET http://127.0.0.1:$A_HTTP/ HTTP/1.1\nHost: x\r\n\r\n")
expect_has "bare LF" "400 Bad Request" "$out"
out=$(raw_send "GET http://127.0.0.1:$A_HTTP/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
expect_has "well-formed raw request passes" "HTTP/1.1 200 OK" "$out"
expect_has "raw request upstream echo" "request: GET /" "$out"

# --- keep-alive: two requests, one connection ---------------------------------
out=$("$CURL" -s --max-time 5 -x "http://127.0.0.1:$PX" -o /dev/null -w '%{http_code}:%{num_connects} ' \
    "http://127.0.0.1:$A_HTTP/one" -o /dev/null "http://127.0.0.1:$A_HTTP/two")
expect_eq "keep-alive reuses the client connection" "200:1 200:0 " "$out"
body=$(printf 'x%.0s' $(seq 1 3000))
out=$(pcurl -X POST --data "$body" "$B/api/items?tag=ok-body")
expect_has "request body relayed" "body-bytes: 3000" "$out"
out=$(pcurl -X POST -H 'Transfer-Encoding: chunked' --data "$body" "$B/api/items?tag=ok-chunked")
expect_has "chunked body relayed" "body-bytes: 3000" "$out"
out=$(pcurl "http://127.0.0.1:$A_HTTP/bulk?n=3000000" -o "$T/bulk.bin")
expect_eq "large response relayed" "3000000" "$(stat -c %s "$T/bulk.bin")"

# --- the JSON-lines denial stream ---------------------------------------------
sleep 0.1
den=$(cat "$T/data/denials.jsonl")
expect_has "denials.jsonl: wget entry" "\"binary\":\"/usr/bin/wget\"" "$den"
expect_has "denials.jsonl: stage" "\"stage\":\"forward-l7-deny\"" "$den"
expect_has "denials.jsonl: query redacted" "\"query_redacted\":true" "$den"
expect_not "denials.jsonl: no query values" "force=true" "$den"
expect_not "log: no query values" "tag=evil" "$(cat "$T/proxy.log")"
line=$(grep -m1 'HTTP:GET \[INFO\] ALLOWED' "$T/proxy.log")
if printf '%s' "$line" | grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z OCSF HTTP:GET \[INFO\] ALLOWED /usr/bin/curl\([0-9]+\) -> GET http://127\.0\.0\.1:[0-9]+/hello\?\[redacted\] \[policy:plain engine:policy\]$'; then
    pass
else
    fail "shorthand line format: $line"
fi
# the engine is named truthfully: proviso runs no OPA
expect_not "log: no decision names the engine opa" "engine:opa" "$(cat "$T/proxy.log")"
expect_not "denials.jsonl: no engine opa" '"engine":"opa"' "$den"
expect_has "denials.jsonl: the policy engine is named" '"engine":"policy"' "$den"
expect_eq "every OCSF line names an engine from the documented set or none" "" \
    "$(grep ' OCSF ' "$T/proxy.log" | grep -o 'engine:[a-z0-9-]*' | sort -u |
        grep -vx -e engine:policy -e engine:l7 -e engine:ssrf -e engine:http-parser)"

# --- one format, each line once ---------------------------------------------------
# the decision log holds decision lines (the OCSF shorthand, one per
# outcome) and operational lines in the shape of every program's log
# ("TS proviso-proxy info|warning: ..."); stderr gets each operational line
# once, never a second wording of it
TSRE='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z'
expect_eq "every decision-log line is a decision or a proviso-proxy line" "" \
    "$(grep -Ev "^$TSRE (OCSF |proviso-proxy (info|warning|error): )" "$T/proxy.log" | head -3)"
expect_eq "every stderr line has the programs' one shape" "" \
    "$(grep -Ev "^$TSRE proviso-proxy (info|warning|error): " "$T/proxy.err" | head -3)"
expect_eq "the CA note is on stderr once" 1 "$(grep -c 'CA certificate (clients must trust it)' "$T/proxy.err")"
expect_eq "the loopback warning is on stderr once" 1 "$(grep -c 'test-allow-loopback' "$T/proxy.err")"
expect_has "... as a warning, in the decision log too" "proviso-proxy warning: --test-allow-loopback is on" \
    "$(cat "$T/proxy.log")"
# without --log the decision log is stderr: still each line once
"$PROXY_BIN" --policy "$T/policy.yaml" --port 0 --admin-port 0 --port-file "$T/nolog.port" \
    --data-dir "$T/data" --upstream-ca "$T/ca.pem" --test-allow-loopback 2>"$T/nolog.err" &
NL_PID=$!
PIDS="$PIDS $NL_PID"
wait_file "$T/nolog.port" || fail "the proxy without --log did not start: $(cat "$T/nolog.err")"
kill "$NL_PID" 2>/dev/null
wait "$NL_PID" 2>/dev/null
for what in 'CA certificate (clients must trust it)' 'test-allow-loopback' 'listening on' 'exiting'; do
    expect_eq "no --log: '$what' is on stderr once" 1 "$(grep -c -- "$what" "$T/nolog.err")"
done
expect_eq "no --log: every stderr line has the one shape" "" \
    "$(grep -Ev "^$TSRE proviso-proxy (info|warning|error): " "$T/nolog.err" | head -3)"

finish
