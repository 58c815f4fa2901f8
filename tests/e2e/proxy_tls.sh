#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# proxy_tls.sh - TLS interception: the local CA created on first start, leaf
# certificates per host, upstream verification (--upstream-ca, or the system
# store: an untrusted upstream fails), L7 rules inside HTTPS, keep-alive in
# the tunnel, tls: skip (opaque, the upstream certificate reaches the client)
# and wget through HTTPS_PROXY.
. "$(dirname "$0")/proxy_lib.sh"

start_upstream A

cat >"$T/policy.yaml" <<EOF
version: 1
network_policies:
  api:
    endpoints:
      - host: 127.0.0.1
        port: $A_HTTPS
        protocol: rest
        enforcement: enforce
        rules:
          - allow:
              method: GET
              path: /v1/**
          - allow:
              method: GET
              path: /bulk
    binaries:
      - path: /usr/bin/curl
      - path: /usr/bin/wget
EOF
start_proxy
CA=$T/data/ca.crt
expect_eq "CA created in the data dir" "yes" "$([ -s "$CA" ] && [ -s "$T/data/ca.key" ] && echo yes)"
expect_eq "CA key is private" "600" "$(stat -c %a "$T/data/ca.key")"
U=https://127.0.0.1:$A_HTTPS

out=$(pcurl --cacert "$CA" "$U/v1/items?x=1")
expect_has "https GET allowed" "|200" "$out"
expect_has "upstream reached over TLS" "upstream: tls" "$out"
expect_has "canonical target upstream" "request: GET /v1/items?x=1" "$out"
expect_log "in-tunnel L7 log line" "HTTP:GET [INFO] ALLOWED /usr/bin/curl("

out=$(pcurl --cacert "$CA" -X DELETE "$U/v1/items")
expect_has "https DELETE denied" "|403" "$out"
expect_has "https L7 body" '"rule":"DELETE /v1/items","detail":"DELETE /v1/items not permitted by policy","layer":"l7","protocol":"rest","method":"DELETE","path":"/v1/items","host":"127.0.0.1"' "$out"
out=$(pcurl --cacert "$CA" "$U/admin")
expect_has "https path outside rules" "GET /admin not permitted by policy" "$out"

out=$("$CURL" -sv --max-time 5 -x "http://127.0.0.1:$PX" --cacert "$CA" -o /dev/null "$U/v1/a" 2>&1)
expect_has "leaf issued by the local CA" "issuer: O=proviso; CN=proviso-proxy local CA" "$out"
expect_has "ALPN http/1.1" "ALPN: server accepted http/1.1" "$out"
out=$("$CURL" -s --max-time 5 -x "http://127.0.0.1:$PX" --cacert "$CA" -o /dev/null \
    -w '%{http_code}:%{num_connects} ' "$U/v1/a" -o /dev/null "$U/v1/b")
expect_eq "keep-alive inside the TLS tunnel" "200:1 200:0 " "$out"
out=$("$CURL" -s --max-time 5 -x "http://127.0.0.1:$PX" -w '%{http_code}' -o /dev/null "$U/v1/a")
expect_eq "clients that do not trust the CA fail" "000" "$out"

out=$(HTTPS_PROXY="http://127.0.0.1:$PX" https_proxy="http://127.0.0.1:$PX" "$CURL" -s --max-time 5 --cacert "$CA" "$U/v1/env")
expect_has "curl through HTTPS_PROXY" "request: GET /v1/env" "$out"
out=$(pwget "$U/v1/wget" --ca-certificate="$CA")
expect_has "wget through HTTPS_PROXY" "request: GET /v1/wget" "$out"
pcurl --cacert "$CA" "$U/bulk?n=2000000" -o "$T/bulk.bin" >/dev/null
expect_eq "bulk over intercepted TLS" "2000000" "$(stat -c %s "$T/bulk.bin")"

# tls: skip is opaque: the client sees the upstream's own certificate
cat >"$T/policy.next.yaml" <<EOF
version: 1
network_policies:
  api:
    endpoints:
      - host: 127.0.0.1
        port: $A_HTTPS
        protocol: rest
        tls: skip
        enforcement: audit
        rules:
          - allow:
              method: GET
              path: /v1/**
    binaries:
      - path: /usr/bin/curl
EOF
reload_policy || fail "reload"
out=$("$CURL" -sv --max-time 5 -x "http://127.0.0.1:$PX" --cacert "$T/ca.pem" -X DELETE "$U/x" 2>&1)
expect_has "tls: skip tunnels the upstream certificate" "issuer: CN=proviso e2e test CA" "$out"
expect_has "tls: skip is not inspected" "request: DELETE /x" "$out"

# the CA persists across restarts; an untrusted upstream is refused
fp1=$(openssl x509 -in "$CA" -noout -fingerprint)
cp "$T/policy.yaml" "$T/keep.yaml"
stop_proxy
cat >"$T/policy.yaml" <<EOF
version: 1
network_policies:
  api:
    endpoints:
      - host: 127.0.0.1
        port: $A_HTTPS
        protocol: rest
        access: full
        enforcement: enforce
    binaries:
      - path: /usr/bin/curl
EOF
rm -f "$T/px.port"
"$PROXY_BIN" --policy "$T/policy.yaml" --port 0 --admin-port 0 --port-file "$T/px.port" \
    --data-dir "$T/data" --log "$T/proxy.log" --test-allow-loopback 2>>"$T/proxy.err" &
PX_PID=$!
PIDS="$PIDS $PX_PID"
wait_file "$T/px.port" || { fail "restart"; finish; }
read -r PX ADM <"$T/px.port"
expect_eq "CA reused after restart" "$fp1" "$(openssl x509 -in "$CA" -noout -fingerprint)"
out=$(pcurl --cacert "$CA" "$U/v1/x")
expect_has "untrusted upstream certificate: 502" "|502" "$out"
expect_has "untrusted upstream: reason" "upstream certificate" "$out"

finish
