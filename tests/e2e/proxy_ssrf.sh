#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# proxy_ssrf.sh - destination safety: every resolved address is checked and
# only checked addresses are dialled; loopback (by name, v4-mapped, decimal
# and hex spellings), link-local/metadata, private ranges without allowed_ips,
# allowed_ips mismatches and control-plane ports are refused with ssrf_denied;
# trailing dots and case are normalised; --test-allow-loopback lets through
# only loopback addresses an endpoint names literally, and is off by default.
. "$(dirname "$0")/proxy_lib.sh"

start_upstream A
start_upstream B
cat >"$T/hosts" <<EOF
127.0.0.1 loop.test
10.0.0.5 internal.test
10.0.5.20 svc.test
169.254.169.254 meta.test
EOF

cat >"$T/policy.yaml" <<EOF
version: 1
network_policies:
  literal_loopback:
    endpoints:
      - host: 127.0.0.1
        port: $A_HTTP
    binaries:
      - path: /usr/bin/curl
      - path: $RAW
  names:
    endpoints:
      - host: loop.test
        port: $A_HTTP
      - host: internal.test
        port: 80
      - host: svc.test
        port: 8080
        allowed_ips: [10.0.6.0/24]
      - host: meta.test
        port: 80
      - host: 169.254.169.254
        port: 80
    binaries:
      - path: /usr/bin/curl
      - path: $RAW
  hostless:
    endpoints:
      - ports: [$B_HTTP, 6443]
        allowed_ips: [10.0.0.0/8]
    binaries:
      - path: /usr/bin/curl
      - path: $RAW
EOF
start_proxy --test-hosts-file "$T/hosts"
expect_log "--test-allow-loopback warns at start" "proviso-proxy warning: --test-allow-loopback is on"

# the one permitted loopback: an endpoint naming 127.0.0.1 literally
out=$(pcurl "http://127.0.0.1:$A_HTTP/lit")
expect_has "literal loopback endpoint (test switch)" "request: GET /lit" "$out"
out=$(raw_send "GET http://2130706433:$A_HTTP/dec HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
expect_has "decimal spelling of the literal address" "request: GET /dec" "$out"

# loopback by name: never, even with the test switch
out=$(pcurl "http://loop.test:$A_HTTP/")
expect_has "loopback by name: ssrf_denied" "{\"detail\":\"GET loop.test:$A_HTTP blocked: internal address\",\"error\":\"ssrf_denied\"}|403" "$out"
expect_log "ssrf log line" "engine:ssrf] [reason:loop.test resolves to always-blocked address 127.0.0.1, connection rejected]"

# private without allowed_ips, allowed_ips mismatch, metadata
out=$(pcurl "http://internal.test/")
expect_has "private address without allowed_ips" "GET internal.test:80 blocked: internal address" "$out"
out=$(pcurl "http://INTERNAL.TEST./")
expect_has "case and trailing dot normalised (same endpoint, same denial)" "blocked: internal address" "$out"
out=$(pcurl "http://svc.test:8080/")
expect_has "address outside allowed_ips" "GET svc.test:8080 blocked: allowed_ips check failed" "$out"
out=$(pcurl "http://meta.test/latest")
expect_has "metadata address by name" "GET meta.test:80 blocked: internal address" "$out"
out=$(pcurl "http://169.254.169.254/latest")
expect_has "metadata literal" "GET 169.254.169.254:80 blocked: internal address" "$out"
out=$(raw_tunnel "169.254.169.254:80" "")
expect_has "metadata via CONNECT" '{"detail":"CONNECT 169.254.169.254:80 blocked: internal address","error":"ssrf_denied"}' "$out"

# a hostless allowed_ips endpoint grants every host but the link-local ones
# (docs/semantics.md#hostless): the address refuses loopback spellings, the
# policy refuses link-local hosts in every spelling
out=$(raw_send "GET http://[::ffff:127.0.0.1]:$B_HTTP/ HTTP/1.1\r\nHost: x\r\n\r\n")
expect_has "v4-mapped loopback" "ssrf_denied" "$out"
out=$(raw_send "GET http://2130706433:$B_HTTP/ HTTP/1.1\r\nHost: x\r\n\r\n")
expect_has "decimal loopback" "ssrf_denied" "$out"
out=$(raw_send "GET http://0x7f.1:$B_HTTP/ HTTP/1.1\r\nHost: x\r\n\r\n")
expect_has "hex/short loopback" "ssrf_denied" "$out"
out=$(raw_send "GET http://0251.0376.0251.0376:$B_HTTP/ HTTP/1.1\r\nHost: x\r\n\r\n")
expect_has "octal link-local" '"error":"policy_denied","reason":"endpoint ' "$out"
expect_has "octal link-local: no endpoint" "is not allowed by any policy" "$out"
out=$(raw_send "GET http://[::ffff:169.254.169.254]:$B_HTTP/ HTTP/1.1\r\nHost: x\r\n\r\n")
expect_has "v4-mapped link-local" '"error":"policy_denied","reason":"endpoint ' "$out"
expect_has "v4-mapped link-local: no endpoint" "is not allowed by any policy" "$out"
out=$(raw_send "GET http://[64:ff9b::a9fe:a9fe]:$B_HTTP/ HTTP/1.1\r\nHost: x\r\n\r\n")
expect_has "NAT64 link-local" '"error":"policy_denied","reason":"endpoint ' "$out"
expect_has "NAT64 link-local: no endpoint" "is not allowed by any policy" "$out"
out=$(raw_send "GET http://10.1.2.3:6443/ HTTP/1.1\r\nHost: x\r\n\r\n")
expect_has "control-plane port" "GET 10.1.2.3:6443 blocked: allowed_ips check failed" "$out"
out=$(raw_tunnel "[::1]:$B_HTTP" "")
expect_has "IPv6 loopback via CONNECT" "ssrf_denied" "$out"

# without the switch the literal loopback endpoint is refused as well
stop_proxy
rm -f "$T/px.port"
"$PROXY_BIN" --policy "$T/policy.yaml" --port 0 --admin-port 0 --port-file "$T/px.port" \
    --data-dir "$T/data" --log "$T/proxy2.log" 2>>"$T/proxy.err" &
PX_PID=$!
PIDS="$PIDS $PX_PID"
wait_file "$T/px.port" || { fail "proxy did not restart"; finish; }
read -r PX ADM <"$T/px.port"
out=$(pcurl "http://127.0.0.1:$A_HTTP/lit")
expect_has "default: literal loopback refused" "GET 127.0.0.1:$A_HTTP blocked: internal address" "$out"
sleep 0.1
expect_not "default: no loopback warning" "test-allow-loopback" "$(cat "$T/proxy2.log")"

finish
