#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# proxy_cred.sh - credential placeholders (docs/proxy.md#credentials), judged
# by what a logging upstream received: a placeholder in Authorization is
# rewritten for the credential's target host (the upstream gets the value),
# refused for another allowed host and for a denied request (the upstream
# gets nothing); target, Basic and body rewrites with and without
# request_body_credential_rewrite; the value never appears in the proxy's
# log files or its error bodies; a store readable by others is refused at
# start; a reload drops a store that no longer loads; a GraphQL batch audit
# mode lets through (its first operation) gets no value.
. "$(dirname "$0")/proxy_lib.sh"

make_certs || { echo "openssl failed"; exit 1; }
"$UPSTREAM_BIN" --port-file "$T/A.port" --cert "$T/srv.pem" --key "$T/srv.key" \
    --log "$T/upstream.log" 2>"$T/A.err" &
PIDS="$PIDS $!"
wait_file "$T/A.port" || { echo "upstream did not start"; exit 1; }
read -r A_HTTP A_HTTPS <"$T/A.port"
"$UPSTREAM_BIN" --port-file "$T/B.port" --bind 127.0.0.2 --log "$T/upstream.log" \
    2>"$T/B.err" &
PIDS="$PIDS $!"
wait_file "$T/B.port" || { echo "upstream B did not start"; exit 1; }
read -r B_HTTP _ <"$T/B.port"
"$UPSTREAM_BIN" --port-file "$T/C.port" --bind 127.0.0.3 --log "$T/upstream.log" \
    2>"$T/C.err" &
PIDS="$PIDS $!"
wait_file "$T/C.port" || { echo "upstream C did not start"; exit 1; }
read -r C_HTTP _ <"$T/C.port"
"$UPSTREAM_BIN" --port-file "$T/D.port" --log "$T/upstream.log" 2>"$T/D.err" &
PIDS="$PIDS $!"
wait_file "$T/D.port" || { echo "upstream D did not start"; exit 1; }
read -r D_HTTP _ <"$T/D.port"
# G: behind an audit-mode graphql endpoint (a batch is audited as a whole)
"$UPSTREAM_BIN" --port-file "$T/G.port" --log "$T/upstream.log" 2>"$T/G.err" &
PIDS="$PIDS $!"
wait_file "$T/G.port" || { echo "upstream G did not start"; exit 1; }
read -r G_HTTP _ <"$T/G.port"
touch "$T/upstream.log"
# WebSocket echo upstreams (tests/e2e/ws_echo.py): W with
# websocket_credential_rewrite, V without
PY=/usr/bin/python3
WS=no
WS_EPS=""
if "$PY" -c 'import websockets' 2>/dev/null; then
    WS=yes
    for n in W V; do
        "$PY" "$SRC/tests/e2e/ws_echo.py" --port-file "$T/$n.port" --log "$T/$n.log" \
            2>"$T/$n.err" &
        PIDS="$PIDS $!"
        wait_file "$T/$n.port" || { echo "echo $n did not start"; exit 1; }
        eval "${n}_PORT=$(cat "$T/$n.port")"
        touch "$T/$n.log"
    done
    WS_EPS="
      - host: 127.0.0.1
        port: $W_PORT
        protocol: websocket
        enforcement: enforce
        websocket_credential_rewrite: true
        access: read-write
      - host: 127.0.0.1
        port: $V_PORT
        protocol: websocket
        enforcement: enforce
        access: read-write"
fi

SECRET='s3cr3t-VALUE-9f2c1d'
OTHER='other-token-77aa'
cat >"$T/creds.yaml" <<EOF
credentials:
  - name: api
    type: api_key
    scopes: [read]
    target_hosts: [127.0.0.1, 127.0.0.3]
    env: API_TOKEN
    value: "$SECRET"
  - name: elsewhere
    target_hosts: [api.example.com]
    env: OTHER_TOKEN
    value_file: other.secret
  - name: odd-values
    target_hosts: [127.0.0.1]
    env: SLASHY
    value: "x/y z"
  - name: dots
    target_hosts: [127.0.0.1]
    env: DOTS
    value: ".."
EOF
printf '%s\n' "$OTHER" >"$T/other.secret"
chmod 600 "$T/creds.yaml" "$T/other.secret"

# HTTPS on the credential's host with body rewrite; plain HTTP on the same
# host without it; 127.0.0.2 is allowed but not a target of the credential
cat >"$T/policy.yaml" <<EOF
version: 1
network_policies:
  api:
    endpoints:
      - host: 127.0.0.1
        port: $A_HTTPS
        protocol: rest
        enforcement: enforce
        request_body_credential_rewrite: true
        rules:
          - allow: {method: GET, path: /v1/**}
          - allow: {method: POST, path: /echo-body}
      - host: 127.0.0.1
        port: $A_HTTP
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /**}
          - allow: {method: POST, path: /echo-body}
      - host: 127.0.0.2
        port: $B_HTTP
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /**}
      - host: 127.0.0.3
        port: $C_HTTP
      - host: 127.0.0.1
        port: $D_HTTP
        protocol: rest
        enforcement: audit
        rules:
          - allow: {method: GET, path: /ok}
      - host: 127.0.0.1
        port: $G_HTTP
        path: /graphql
        protocol: graphql
        enforcement: audit
        rules:
          - allow: {operation_type: query, fields: [viewer]}$WS_EPS
    binaries:
      - path: /usr/bin/curl
      - path: $(readlink -f "$PY")
EOF
start_proxy --credentials "$T/creds.yaml"
CA=$T/data/ca.crt
U=https://127.0.0.1:$A_HTTPS
expect_log "start line names the store" "credentials: 4 placeholder keys from $T/creds.yaml"

upstream_count() { wc -l <"$T/upstream.log" | tr -d ' '; }

# 1. Authorization: Bearer <placeholder> to the target host: rewritten
out=$(pcurl --cacert "$CA" -H 'Authorization: Bearer openshell:resolve:env:API_TOKEN' "$U/v1/a")
expect_has "bearer rewritten: 200" "|200" "$out"
expect_has "upstream got the value" "header: Authorization: Bearer $SECRET" "$out"
expect_not "upstream got no placeholder" "openshell:resolve" "$out"
out=$(pcurl --cacert "$CA" -H 'X-Api-Key: sk-proj-OPENSHELL-RESOLVE-ENV-API_TOKEN' "$U/v1/b")
expect_has "alias token rewritten" "header: X-Api-Key: $SECRET" "$out"
b64=$(printf 'user:openshell:resolve:env:API_TOKEN' | base64 -w0)
want=$(printf 'user:%s' "$SECRET" | base64 -w0)
out=$(pcurl --cacert "$CA" -H "Authorization: Basic $b64" "$U/v1/c")
expect_has "basic rewritten" "header: Authorization: Basic $want" "$out"
out=$(pcurl --cacert "$CA" "$U/v1/keys/openshell:resolve:env:API_TOKEN/x?token=openshell%3Aresolve%3Aenv%3AAPI_TOKEN&a=1")
expect_has "target rewritten: 200" "|200" "$out"
expect_has "path and query values rewritten" "request: GET /v1/keys/$SECRET/x?token=$SECRET&a=1" "$out"
out=$(pcurl --cacert "$CA" "$U/v1/k/openshell:resolve:env:SLASHY")
expect_has "a value with / and space stays one segment" "request: GET /v1/k/x%2Fy%20z" "$out"
n=$(upstream_count)
out=$(pcurl --cacert "$CA" "$U/v1/a/openshell:resolve:env:DOTS/b")
expect_has "a value that would be a .. segment: 500" "|500" "$out"
expect_eq "a .. value: nothing upstream" "$n" "$(upstream_count)"
expect_log "log shows the redacted path" "GET http://127.0.0.1:$A_HTTPS/v1/keys/%5BCREDENTIAL%5D/x?[redacted]"

# 2. the same placeholder to an allowed host the credential does not target
n=$(upstream_count)
out=$(pcurl -H 'Authorization: Bearer openshell:resolve:env:API_TOKEN' "http://127.0.0.2:$B_HTTP/x")
expect_has "other host: 403" "|403" "$out"
expect_has "other host: mismatch body" '{"error":"credential_endpoint_mismatch","message":"Credential is not authorized for this request endpoint"}' "$out"
expect_eq "other host: nothing upstream" "$n" "$(upstream_count)"
expect_log "mismatch log line" "[reason:credential for placeholder key 'API_TOKEN' does not target host 127.0.0.2]"

# an opaque (L4) route to a host the credential targets: nothing can be
# rewritten there, so the placeholder is refused
n=$(upstream_count)
out=$(pcurl -H 'Authorization: Bearer openshell:resolve:env:API_TOKEN' "http://127.0.0.3:$C_HTTP/x")
expect_has "opaque route: 403" "|403" "$out"
expect_has "opaque route: mismatch body" '"error":"credential_endpoint_mismatch"' "$out"
expect_eq "opaque route: nothing upstream" "$n" "$(upstream_count)"
expect_log "opaque route: log" "rewritten only on inspected routes"
out=$(pcurl "http://127.0.0.3:$C_HTTP/plain")
expect_has "opaque route without placeholders still works" "request: GET /plain" "$out"

# a method is never rewritten: the alias marker fits in a method token, and
# such a request is refused on any route (here opaque and audit-only)
for url in "http://127.0.0.3:$C_HTTP/m" "http://127.0.0.1:$D_HTTP/m"; do
    n=$(upstream_count)
    out=$(pcurl -X 'OPENSHELL-RESOLVE-ENV-API_TOKEN' "$url")
    expect_has "marker in the method [$url]: 500" "|500" "$out"
    expect_eq "marker in the method [$url]: nothing upstream" "$n" "$(upstream_count)"
done
expect_log "marker in the method: the reason" "credential marker in the request method"

# a ';' separates query parameters for some servers: a placeholder after
# one is in a key there, and the policy refuses the ambiguous query
n=$(upstream_count)
out=$(pcurl --cacert "$CA" "$U/v1/x?a=1;openshell:resolve:env:API_TOKEN=1")
expect_has "placeholder after a raw ';': 403" "|403" "$out"
expect_eq "placeholder after a raw ';': nothing upstream" "$n" "$(upstream_count)"

# audit mode forwards what the rules deny: no value goes into such a request
n=$(upstream_count)
out=$(pcurl -H 'Authorization: Bearer openshell:resolve:env:API_TOKEN' "http://127.0.0.1:$D_HTTP/other")
expect_has "audit-only request: 403" "|403" "$out"
expect_eq "audit-only request: nothing upstream" "$n" "$(upstream_count)"
expect_log "audit-only request: the reason" "not rewritten in requests allowed only by audit mode"
out=$(pcurl -H 'Authorization: Bearer openshell:resolve:env:API_TOKEN' "http://127.0.0.1:$D_HTTP/ok")
expect_has "audit endpoint, request its rules allow: rewritten" "header: Authorization: Bearer $SECRET" "$out"
out=$(pcurl "http://127.0.0.1:$D_HTTP/other")
expect_has "audit-only request without placeholders still passes" "request: GET /other" "$out"
# a GraphQL batch whose first operation only audit mode lets through is
# audited as a whole, whatever its other operations: no value goes into it
n=$(upstream_count)
out=$(pcurl -H 'Authorization: Bearer openshell:resolve:env:API_TOKEN' -H 'Content-Type: application/json' \
    --data-binary '[{"query":"mutation { deleteRepository(id: 1) { id } }"},{"query":"{ viewer { login } }"}]' \
    "http://127.0.0.1:$G_HTTP/graphql")
expect_has "audit-only GraphQL batch with a placeholder: 403" "|403" "$out"
expect_eq "audit-only GraphQL batch: nothing upstream" "$n" "$(upstream_count)"
out=$(pcurl -H 'Authorization: Bearer openshell:resolve:env:API_TOKEN' -H 'Content-Type: application/json' \
    --data-binary '[{"query":"{ viewer { login } }"},{"query":"{ viewer { id } }"}]' \
    "http://127.0.0.1:$G_HTTP/graphql")
expect_has "a batch the rules allow: rewritten" "header: Authorization: Bearer $SECRET" "$out"

# 3. a denied request carrying a placeholder: the policy's 403, nothing upstream
n=$(upstream_count)
out=$(pcurl --cacert "$CA" -X DELETE -H 'Authorization: Bearer openshell:resolve:env:API_TOKEN' "$U/v1/a")
expect_has "denied request: 403" "|403" "$out"
expect_has "denied request: the policy's body" '"error":"policy_denied"' "$out"
expect_eq "denied request: nothing upstream" "$n" "$(upstream_count)"

# 4. unknown key, another case, percent-encoded in a header: 500, nothing upstream
for hv in 'Bearer openshell:resolve:env:NO_SUCH_KEY' 'Bearer OpenShell:Resolve:Env:API_TOKEN' \
    'Bearer openshell%3Aresolve%3Aenv%3AAPI_TOKEN' 'Bearer x-OPENSHELL-RESOLVE-ENV-NOPE'; do
    n=$(upstream_count)
    out=$(pcurl --cacert "$CA" -H "Authorization: $hv" "$U/v1/a")
    expect_has "unresolvable [$hv]: 500" "|500" "$out"
    expect_has "unresolvable [$hv]: body" '{"error":"credential_unavailable","message":"Credential placeholder could not be resolved"}' "$out"
    expect_eq "unresolvable [$hv]: nothing upstream" "$n" "$(upstream_count)"
done
expect_log "unknown key log line" "[reason:placeholder key 'NO_SUCH_KEY' is not in the credentials store]"
# a key the store has, for a host its credential does not target
n=$(upstream_count)
out=$(pcurl --cacert "$CA" -H 'Authorization: Bearer openshell:resolve:env:OTHER_TOKEN' "$U/v1/a")
expect_has "other credential's key: 403" "|403" "$out"
expect_eq "other credential's key: nothing upstream" "$n" "$(upstream_count)"

# 5. bodies: rewritten with request_body_credential_rewrite (Content-Length
# updated), refused without it, refused chunked, untouched when not text
out=$(pcurl --cacert "$CA" -H 'Content-Type: application/json' \
    --data '{"key":"openshell:resolve:env:API_TOKEN","n":1}' "$U/echo-body")
expect_has "json body rewritten" "body: {\"key\":\"$SECRET\",\"n\":1}" "$out"
expect_has "content-length updated" "header: Content-Length: $((${#SECRET} + 16))" "$out"
expect_has "upstream read that many bytes" "body-bytes: $((${#SECRET} + 16))" "$out"
# near the 256 KiB bound: rewritten in
# full; one byte over: refused before anything is sent
head -c 200000 /dev/zero | tr '\0' a >"$T/big.txt"
printf 'openshell:resolve:env:API_TOKEN' >>"$T/big.txt"
out=$(pcurl --cacert "$CA" -H 'Content-Type: text/plain' --data-binary @"$T/big.txt" "$U/echo-body")
expect_has "200 KB body rewritten: the upstream read the new length" "body-bytes: $((200000 + ${#SECRET}))" "$out"
expect_has "200 KB body: the value at its end" "a$SECRET" "$out"
head -c 262145 /dev/zero | tr '\0' a >"$T/over.txt"
n=$(upstream_count)
out=$(pcurl --cacert "$CA" -H 'Content-Type: text/plain' --data-binary @"$T/over.txt" "$U/echo-body")
expect_has "256 KiB + 1 on a rewrite endpoint: 403" "|403" "$out"
expect_eq "256 KiB + 1: nothing upstream" "$n" "$(upstream_count)"
out=$(pcurl --cacert "$CA" -H 'Content-Type: application/x-www-form-urlencoded' \
    --data 'a=1&t=sk-OPENSHELL-RESOLVE-ENV-API_TOKEN' "$U/echo-body")
expect_has "form body alias rewritten" "body: a=1&t=$SECRET" "$out"
n=$(upstream_count)
out=$(pcurl --cacert "$CA" -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' \
    --data '{"key":"openshell:resolve:env:API_TOKEN"}' "$U/echo-body")
expect_has "chunked body on a rewrite endpoint: 403" "|403" "$out"
expect_eq "chunked: nothing upstream" "$n" "$(upstream_count)"
out=$(pcurl --cacert "$CA" -H 'Content-Type: application/octet-stream' \
    --data 'openshell:resolve:env:API_TOKEN' "$U/echo-body")
expect_has "binary body is not rewritten" "body: openshell:resolve:env:API_TOKEN" "$out"
n=$(upstream_count)
out=$(pcurl -H 'Content-Type: application/json' \
    --data '{"key":"openshell:resolve:env:API_TOKEN"}' "http://127.0.0.1:$A_HTTP/echo-body")
expect_has "body without the flag: 403" "|403" "$out"
expect_eq "body without the flag: nothing upstream" "$n" "$(upstream_count)"
expect_log "body without the flag: log" "[reason:credential placeholder in a request body on an endpoint without request_body_credential_rewrite]"
out=$(pcurl -H 'Content-Type: application/json' --data '{"plain":true}' "http://127.0.0.1:$A_HTTP/echo-body")
expect_has "plain body without the flag passes" 'body: {"plain":true}' "$out"
sleep 0.2
expect_eq "a refused buffered body has one line (DENIED), the passed one one ALLOWED" \
    "1 1" "$(grep -c "ALLOWED .*POST http://127.0.0.1:$A_HTTP/echo-body" "$T/proxy.log") $(grep -c "DENIED .*POST http://127.0.0.1:$A_HTTP/echo-body" "$T/proxy.log")"
# forward path (plain HTTP to the target host): headers are rewritten too
out=$(pcurl -H 'Authorization: Bearer openshell:resolve:env:API_TOKEN' "http://127.0.0.1:$A_HTTP/fwd")
expect_has "forward path rewritten" "header: Authorization: Bearer $SECRET" "$out"

# WebSocket client text messages: rewritten with websocket_credential_rewrite,
# refused (1008, nothing reaches the echo) without it
if [ "$WS" = yes ]; then
    WSC="$PY $SRC/tests/e2e/ws_client.py"
    out=$($WSC lib --proxy "$PX" --port "$W_PORT" --path /chat \
        'text:{"auth":"openshell:resolve:env:API_TOKEN"}' text:plain 2>&1)
    expect_has "ws: the echo got the value" "TEXT {\"auth\":\"$SECRET\"}" "$(cat "$T/W.log")"
    expect_has "ws: plain message passes" "TEXT plain" "$(cat "$T/W.log")"
    expect_not "ws: no placeholder reached the echo" "openshell:resolve" "$(cat "$T/W.log")"
    out=$($WSC lib --proxy "$PX" --port "$V_PORT" --path /chat \
        'text:{"auth":"openshell:resolve:env:API_TOKEN"}' 2>&1)
    expect_has "ws without the flag: closed with 1008" "CLOSED 1008" "$out"
    expect_eq "ws without the flag: nothing reached the echo" "" "$(grep '^TEXT' "$T/V.log")"
    expect_log "ws without the flag: the reason" "credential placeholder in a WebSocket text message on an endpoint without websocket_credential_rewrite"
    out=$($WSC lib --proxy "$PX" --port "$W_PORT" --path /chat \
        'text:openshell:resolve:env:NO_SUCH' 2>&1)
    expect_has "ws unknown key: closed with 1008" "CLOSED 1008" "$out"
    expect_not "ws unknown key: nothing reached the echo" "NO_SUCH" "$(cat "$T/W.log")"
else
    echo "note: python3-websockets missing, WebSocket cases skipped"
fi

# 6. the value never appears in what the proxy wrote or answered
for f in "$T/proxy.log" "$T/proxy.err" "$T/data/denials.jsonl"; do
    [ -f "$f" ] || continue
    expect_eq "no value in $(basename "$f")" "0" "$(grep -c -e "$SECRET" -e "$OTHER" "$f")"
done
expect_eq "denials.jsonl has credential lines" "yes" "$(grep -q '"stage":"credentials"' "$T/data/denials.jsonl" && echo yes)"
metrics=$("$CURL" -s "http://127.0.0.1:$ADM/metrics")
expect_not "no value in metrics" "$SECRET" "$metrics"
expect_has "credential refusals counted" 'stage="credentials"' "$metrics"

# 7. reload: a store that no longer loads is dropped (every placeholder refused)
chmod 644 "$T/creds.yaml"
cp "$T/policy.yaml" "$T/policy.next.yaml"
reload_policy || fail "reload did not happen"
expect_log "reload note" "credentials reload (SIGHUP) failed, every placeholder is refused"
n=$(upstream_count)
out=$(pcurl --cacert "$CA" -H 'Authorization: Bearer openshell:resolve:env:API_TOKEN' "$U/v1/a")
expect_has "after a failed reload: 500" "|500" "$out"
expect_eq "after a failed reload: nothing upstream" "$n" "$(upstream_count)"
chmod 600 "$T/creds.yaml"
cp "$T/policy.yaml" "$T/policy.next.yaml"
reload_policy || fail "reload did not happen"
out=$(pcurl --cacert "$CA" -H 'Authorization: Bearer openshell:resolve:env:API_TOKEN' "$U/v1/a")
expect_has "store back after a reload" "header: Authorization: Bearer $SECRET" "$out"
stop_proxy

# 8. start-up refusals: group/other-readable store or value file, a symlink
mkfifo "$T/pipe.secret"
for bad in store-0644 file-0640 link fifo; do
    cp "$T/creds.yaml" "$T/c2.yaml"
    chmod 600 "$T/c2.yaml" "$T/other.secret"
    case $bad in
    store-0644) chmod 644 "$T/c2.yaml"; arg=$T/c2.yaml ;;
    file-0640) chmod 640 "$T/other.secret"; arg=$T/c2.yaml ;;
    link) ln -sf "$T/c2.yaml" "$T/c2.link"; arg=$T/c2.link ;;
    # a value_file that is a FIFO: refused at once, never a start blocked
    # on a writer
    fifo) sed -i 's/other\.secret/pipe.secret/' "$T/c2.yaml"; arg=$T/c2.yaml ;;
    esac
    : >"$T/start.err"
    "$PROXY_BIN" --policy "$T/policy.yaml" --port 0 --admin-port 0 --data-dir "$T/data" \
        --credentials "$arg" --test-allow-loopback --unprivileged-identity 2>"$T/start.err" &
    pid=$!
    i=0
    while kill -0 $pid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    if kill -0 $pid 2>/dev/null; then
        kill $pid
        fail "$bad: the proxy started"
    fi
    wait $pid
    expect_eq "$bad: exit 2" "2" "$?"
    err=$(cat "$T/start.err")
    expect_has "$bad: reason" "credentials:" "$err"
    expect_not "$bad: no value in the message" "$SECRET" "$err"
    expect_not "$bad: no file value in the message" "$OTHER" "$err"
done
expect_has "0644 reason names the mode" "mode 0600 or stricter" "$(cat "$T/start.err" 2>/dev/null; chmod 644 "$T/c2.yaml"; "$PROXY_BIN" --policy "$T/policy.yaml" --port 0 --admin-port 0 --data-dir "$T/data" --credentials "$T/c2.yaml" --unprivileged-identity 2>&1)"
chmod 600 "$T/other.secret"
finish
