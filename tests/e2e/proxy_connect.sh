#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# proxy_connect.sh - CONNECT tunnels: opaque splice (bytes untouched, early
# data kept, bulk), denials with the reference bodies, malformed targets, and
# inspected plaintext tunnels (per-request L7 decisions, keep-alive, authority
# check, h2c and unknown protocols refused).
. "$(dirname "$0")/proxy_lib.sh"

start_upstream A
start_upstream B

cat >"$T/policy.yaml" <<EOF
version: 1
network_policies:
  opaque:
    endpoints:
      - host: 127.0.0.1
        port: $A_HTTP
    binaries:
      - path: /usr/bin/curl
      - path: $RAW
  inspected:
    endpoints:
      - host: 127.0.0.1
        port: $B_HTTP
        protocol: rest
        enforcement: enforce
        access: read-only
        deny_rules:
          - method: GET
            path: /private/**
    binaries:
      - path: /usr/bin/curl
      - path: $RAW
EOF
start_proxy

# --- opaque tunnels -----------------------------------------------------------
out=$(pcurl -p "http://127.0.0.1:$A_HTTP/tunnel?q=1")
expect_has "opaque: request through the tunnel" "request: GET /tunnel?q=1" "$out"
expect_not "opaque: bytes untouched (no Via)" "Via:" "$out"
expect_has "opaque: status" "|200" "$out"
expect_log "opaque: NET:OPEN line" "NET:OPEN [INFO] ALLOWED /usr/bin/curl("
out=$(pcurl -p -X DELETE --path-as-is "http://127.0.0.1:$A_HTTP/a/../%2Fx")
expect_has "opaque: every method and path (not inspected)" "request: DELETE /a/../%2Fx" "$out"
pcurl -p "http://127.0.0.1:$A_HTTP/bulk?n=5000000" -o "$T/bulk.bin" >/dev/null
expect_eq "opaque: bulk" "5000000" "$(stat -c %s "$T/bulk.bin")"

out=$(raw_tunnel "127.0.0.1:$A_HTTP" "GET /early HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
expect_has "raw tunnel: 200" "HTTP/1.1 200 Connection Established" "$out"
expect_has "raw tunnel: upstream answered" "request: GET /early" "$out"

out=$("$RAW" -c 'exec 3<>/dev/tcp/127.0.0.1/'"$PX"'
    printf "CONNECT 127.0.0.1:'"$A_HTTP"' HTTP/1.1\r\nHost: x\r\n\r\nGET /pipelined HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" >&3
    while IFS= read -r -t 3 l <&3; do printf "%s\n" "$l"; done' 2>/dev/null)
expect_has "early data after the CONNECT head is forwarded" "request: GET /pipelined" "$out"

# --- denials ------------------------------------------------------------------
out=$(raw_tunnel "127.0.0.1:9" "")
expect_has "connect deny: status" "HTTP/1.1 403 Forbidden" "$out"
expect_has "connect deny: exact body" '{"detail":"CONNECT 127.0.0.1:9 not permitted by policy","error":"policy_denied","reason":"endpoint 127.0.0.1:9 is not allowed by any policy"}' "$out"
expect_log "connect deny: log line" "NET:OPEN [MED] DENIED $RAW("
expect_log "connect deny: log reason" "-> 127.0.0.1:9 [policy:- engine:policy] [reason:endpoint 127.0.0.1:9 is not allowed by any policy]"
out=$("$CURL" -s --max-time 5 -x "http://127.0.0.1:$PX" -p -w '%{http_connect}' "http://127.0.0.1:9/")
expect_eq "curl sees the 403 on CONNECT" "403" "$out"

out=$(raw_send "CONNECT 127.0.0.1 HTTP/1.1\r\nHost: x\r\n\r\n")
expect_has "CONNECT without port: 400" "400 Bad Request" "$out"
out=$(raw_send "CONNECT [::1:443 HTTP/1.1\r\nHost: x\r\n\r\n")
expect_has "CONNECT unclosed bracket: 400" "400 Bad Request" "$out"
out=$(raw_send "CONNECT 127.0.0.1:99999 HTTP/1.1\r\nHost: x\r\n\r\n")
expect_has "CONNECT bad port: 400" "400 Bad Request" "$out"

out=$(pwget "https://127.0.0.1:$A_HTTPS/" --no-check-certificate)
expect_log "wget CONNECT denied" "NET:OPEN [MED] DENIED /usr/bin/wget("

# --- inspected plaintext tunnels ----------------------------------------------
B=http://127.0.0.1:$B_HTTP
out=$(pcurl -p "$B/repos/x")
expect_has "inspected: GET allowed" "request: GET /repos/x" "$out"
expect_log "inspected: per-request log line" "HTTP:GET [INFO] ALLOWED /usr/bin/curl("
out=$(pcurl -p -X POST "$B/repos/x")
expect_has "inspected: POST denied" "|403" "$out"
expect_has "inspected: L7 body" '"detail":"POST /repos/x not permitted by policy","layer":"l7"' "$out"
out=$(pcurl -p "$B/private/k")
expect_has "inspected: deny rule" "GET /private/k blocked by deny rule" "$out"
out=$(pcurl -p --path-as-is "$B/x/../private/k")
expect_has "inspected: canonical path before deny rules" "blocked by deny rule" "$out"
out=$("$CURL" -s --max-time 5 -p -x "http://127.0.0.1:$PX" -o /dev/null -w '%{http_code}:%{num_connects} ' \
    "$B/one" -o /dev/null "$B/two")
expect_eq "inspected: keep-alive in the tunnel" "200:1 200:0 " "$out"

out=$(raw_tunnel "127.0.0.1:$B_HTTP" "GET /x HTTP/1.1\r\nHost: evil.example\r\n\r\n")
expect_has "authority mismatch: 403" "403 Forbidden" "$out"
expect_has "authority mismatch: body" '{"error":"request_authority_mismatch","message":"HTTP request authority does not match the authorized tunnel endpoint"}' "$out"
out=$(raw_tunnel "127.0.0.1:$B_HTTP" "GET /x HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n")
expect_has "authority port mismatch" "request_authority_mismatch" "$out"
out=$(raw_tunnel "127.0.0.1:$B_HTTP" "GET /x HTTP/1.1\r\nHost: 127.0.0.1:$B_HTTP\r\nConnection: close\r\n\r\n")
expect_has "matching authority: forwarded" "request: GET /x" "$out"
out=$(raw_tunnel "127.0.0.1:$B_HTTP" "GET /x HTTP/1.1\r\n\r\n")
expect_has "HTTP/1.1 without Host in a tunnel: 400" "400 Bad Request" "$out"
out=$(raw_tunnel "127.0.0.1:$B_HTTP" "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
expect_has "h2c refused" '"error":"unsupported_l7_protocol"' "$out"
expect_has "h2c detail" "HTTP/2 prior-knowledge (h2c) is not supported" "$out"
out=$(raw_tunnel "127.0.0.1:$B_HTTP" "\x01\x02\x03\x04\x05\x06\x07\x08\x09")
expect_has "unknown protocol refused" "Unsupported tunnel protocol for L7-inspected endpoint" "$out"
out=$(raw_tunnel "127.0.0.1:$B_HTTP" "GET /a%%2Fb HTTP/1.1\r\nHost: 127.0.0.1:$B_HTTP\r\n\r\n")
expect_has "encoded slash in a tunnel: 400 (not a silent close)" "invalid_request_target" "$out"
out=$(raw_tunnel "127.0.0.1:$B_HTTP" "GET /x HTTP/1.1\r\nHost: 127.0.0.1:$B_HTTP\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
expect_has "websocket upgrade without a key: refused with its reason" "invalid WebSocket upgrade: exactly one Sec-WebSocket-Key is required" "$out"

finish
