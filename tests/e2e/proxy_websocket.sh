#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# proxy_websocket.sh - WebSocket on inspected routes, judged by what a
# logging echo upstream (tests/e2e/ws_echo.py) received: an allowed upgrade
# and its messages reach it (text, binary, UTF-8 split across fragments),
# the extension offer is stripped; a denied path's upgrade gets 403; a
# denied text message (deny rule, read-only rules) never reaches it and the
# client sees close 1008; protocol violations close with 1002/1007/1009 and
# their bytes never arrive; the forward path and TLS interception carry
# sessions too; an upstream that chooses an extension is refused (502); one
# decision line per message and no payload in the log; a reload that takes
# WEBSOCKET_TEXT away ends an open session; the per-message cost against a
# direct connection.
. "$(dirname "$0")/proxy_lib.sh"

PY=/usr/bin/python3
if ! "$PY" -c 'import websockets' 2>/dev/null; then
    echo "SKIP: python3-websockets is not installed"
    exit 77
fi
WSC="$PY $SRC/tests/e2e/ws_client.py"

make_certs || { echo "cannot create test certificates"; exit 1; }
# start_echo NAME [ARGS...]: sets ${NAME}_PORT; the upstream logs to $T/NAME.log
start_echo() {
    n=$1
    shift
    start_logged "$n" "$PY $SRC/tests/e2e/ws_echo.py" "$@"
}
start_echo E
start_echo S --tls "$T/srv.pem" "$T/srv.key"
start_echo X --force-extension
start_echo R
start_echo A
start_echo M --raw masked
start_echo U --raw bad-utf8
start_echo K --raw bad-accept
start_echo G
start_echo GRO
start_echo GRW

ws_policy() {
    cat <<EOF
version: 1
network_policies:
  ws:
    endpoints:
      - host: 127.0.0.1
        port: $E_PORT
        protocol: websocket
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /v1/**}
          - allow: {method: $1, path: /v1/**}
          - allow: {method: GET, path: /ro/**}
        deny_rules:
          - method: WEBSOCKET_TEXT
            path: /v1/admin/**
      - host: 127.0.0.1
        port: $S_PORT
        protocol: websocket
        enforcement: enforce
        access: read-write
      - host: 127.0.0.1
        port: $X_PORT
        protocol: websocket
        enforcement: enforce
        access: full
      - host: 127.0.0.1
        port: $R_PORT
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /rest/**}
          - allow: {method: "*", path: /any/**}
      - host: 127.0.0.1
        port: $A_PORT
        protocol: websocket
        enforcement: audit
        access: read-only
      - host: 127.0.0.1
        port: $M_PORT
        protocol: websocket
        access: full
        enforcement: enforce
      - host: 127.0.0.1
        port: $U_PORT
        protocol: websocket
        access: full
        enforcement: enforce
      - host: 127.0.0.1
        port: $K_PORT
        protocol: websocket
        access: full
        enforcement: enforce
      - host: 127.0.0.1
        port: $G_PORT
        protocol: websocket
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /graphql}
          - allow: {operation_type: subscription, fields: [messageAdded]}
          - allow: {operation_type: query, fields: [viewer]}
      - host: 127.0.0.1
        port: $GRO_PORT
        protocol: websocket
        enforcement: enforce
        access: read-only
        deny_rules:
          - {operation_type: mutation}
      - host: 127.0.0.1
        port: $GRW_PORT
        protocol: websocket
        enforcement: enforce
        access: read-write
        deny_rules:
          - {operation_type: mutation, fields: [deleteRepo]}
    binaries:
      - path: /usr/bin/python3*
EOF
}
ws_policy WEBSOCKET_TEXT >"$T/policy.yaml"
start_proxy

elog() { cat "$T/E.log"; }

# --- an allowed session --------------------------------------------------------
out=$($WSC lib --proxy "$PX" --port "$E_PORT" --path "/v1/chat?room=1" text:hello binary:0001ff \
    "text:caf$(printf '\xc3\xa9')")
expect_has "allowed upgrade" "STATUS 101" "$out"
expect_has "text echoed" "ECHO TEXT hello" "$out"
expect_has "binary echoed" "ECHO BINARY 0001ff" "$out"
expect_has "UTF-8 text echoed" "ECHO TEXT café" "$out"
expect_has "closed normally" "CLOSED 1000" "$out"
expect_has "upstream got the upgrade with its query" "UPGRADE /v1/chat?room=1 " "$(elog)"
expect_has "the client's extension offer never reaches the upstream" "UPGRADE /v1/chat?room=1 ext=-" "$(elog)"
expect_has "upstream got the text" "TEXT hello" "$(elog)"
expect_has "upstream got the binary" "BINARY 0001ff" "$(elog)"
expect_has "upstream got the UTF-8 text" "TEXT café" "$(elog)"
expect_log "upgrade decided as a GET" "HTTP:GET [INFO] ALLOWED /usr/bin/python3"
expect_eq "one decision line per text message" "2" \
    "$(grep -c 'ALLOWED .*WEBSOCKET_TEXT http://127.0.0.1:'"$E_PORT"'/v1/chat?\[redacted\] ' "$T/proxy.log")"
expect_not "no query in the log" "room=1" "$(cat "$T/proxy.log")"

# --- a denied upgrade ----------------------------------------------------------
out=$($WSC lib --proxy "$PX" --port "$E_PORT" --path /nope text:x)
expect_has "denied path: 403 to the upgrade" "STATUS 403" "$out"
expect_not "denied upgrade never reaches the upstream" "UPGRADE /nope" "$(elog)"

# large messages: frames bigger than a read, echoed back through the
# backpressure of both directions; one byte over the limit closes 1009
out=$($WSC lib --proxy "$PX" --port "$E_PORT" --path /v1/big bigbinary:1000000 bigtext:1048576 \
    bigbinary:1048577)
expect_has "a 1,000,000-byte binary message arrives whole" "ECHO BIG 1000000 same" "$out"
expect_has "a 1 MiB text message (the limit) arrives whole" "ECHO BIG 1048576 same" "$out"
expect_has "one byte over the limit: 1009" "CLOSED 1009" "$out"
out=$($WSC lib --proxy "$PX" --port "$E_PORT" --path /v1/pipe pipe:600x4000)
expect_has "600 pipelined messages: all echoed (buffered frames resume after backpressure)" \
    "ECHO PIPE 600x4000 same" "$out"
expect_has "the upstream got the big binary" "BINARY len=1000000" "$(elog)"
expect_has "the upstream got the big text" "TEXT len=1048576" "$(elog)"
expect_not "the upstream never got the oversized one" "len=1048577" "$(elog)"

# --- denied text messages --------------------------------------------------------
out=$($WSC lib --proxy "$PX" --port "$E_PORT" --path /v1/admin/x text:admin-secret-1)
expect_has "deny rule: upgrade allowed" "STATUS 101" "$out"
expect_has "deny rule: close 1008 with a reason" "CLOSED 1008 policy denied WEBSOCKET_TEXT on /v1/admin/x" "$out"
expect_has "deny rule: the upstream saw the upgrade" "UPGRADE /v1/admin/x" "$(elog)"
expect_not "deny rule: the message never reached the upstream" "admin-secret-1" "$(elog)"
expect_log "denied message: a DENIED line" "WEBSOCKET_TEXT http://127.0.0.1:$E_PORT/v1/admin/x [policy:ws engine:l7] [reason:WEBSOCKET_TEXT /v1/admin/x blocked by deny rule]"
out=$($WSC lib --proxy "$PX" --port "$E_PORT" --path /ro/feed binary:00aa text:ro-secret-2)
expect_has "GET-only rules: binary passes" "ECHO BINARY 00aa" "$out"
expect_has "GET-only rules: text refused with 1008" "CLOSED 1008" "$out"
expect_has "GET-only rules: binary reached the upstream" "BINARY 00aa" "$(elog)"
expect_not "GET-only rules: text never reached the upstream" "ro-secret-2" "$(elog)"
expect_log "not permitted: a DENIED line" "[reason:WEBSOCKET_TEXT /ro/feed not permitted by policy]"
expect_not "payloads never logged" "secret" "$(cat "$T/proxy.log")"

# --- frames and protocol violations (a hand-written client) ---------------------
raw() { $WSC raw --proxy "$PX" --port "$E_PORT" --path /v1/raw --scenario "$1"; }
out=$(raw ping)
expect_has "ping relayed, pong back" "PONG are-you-there" "$out"
out=$(raw utf8-split-ok)
expect_has "UTF-8 split across fragments: reassembled" "ECHO TEXT split-é-ok" "$out"
expect_has "UTF-8 split across fragments: one message upstream" "TEXT split-é-ok" "$(elog)"
for row in "unmasked 1002 unmasked-secret" "reserved-opcode 1002 -" "rsv 1002 rsv-secret" \
    "continuation-first 1002 cont-secret" "fragmented-ping 1002 -" "control-too-big 1002 -" \
    "utf8-split-bad 1007 bad-" "too-big 1009 -"; do
    set -- $row
    out=$(raw "$1")
    expect_has "$1: closed with $2" "CLOSED $2 proxy: " "$out"
    [ "$3" = - ] || expect_not "$1: its bytes never reached the upstream" "$3" "$(elog)"
done
expect_log "a protocol error leaves a note" "client protocol error, closed with 1009: message larger than the limit"
expect_log "invalid UTF-8 leaves a note" "closed with 1007: text message is not valid UTF-8"

# --- the forward path and TLS interception ----------------------------------------
out=$($WSC raw --forward --proxy "$PX" --port "$E_PORT" --path /v1/fwd --scenario hello)
expect_has "forward path: upgraded" "STATUS 101" "$out"
expect_has "forward path: message echoed" "ECHO TEXT raw-hello" "$out"
expect_has "forward path: upstream got it" "UPGRADE /v1/fwd ext=-" "$(elog)"
out=$($WSC raw --forward --proxy "$PX" --port "$E_PORT" --path /nope --scenario hello)
expect_has "forward path: denied upgrade" "STATUS 403" "$out"
out=$($WSC lib --proxy "$PX" --port "$S_PORT" --path /tls --ca "$T/data/ca.crt" text:tls-hello)
expect_has "TLS intercepted: upgraded" "STATUS 101" "$out"
expect_has "TLS intercepted: message echoed" "ECHO TEXT tls-hello" "$out"
expect_has "TLS intercepted: upstream got it" "TEXT tls-hello" "$(cat "$T/S.log")"

# --- an upstream that chooses an extension -----------------------------------------
out=$($WSC lib --proxy "$PX" --port "$X_PORT" --path /x text:never)
expect_has "upstream extension: the client gets 502" "STATUS 502" "$out"
expect_not "upstream extension: no message reached it" "TEXT never" "$(cat "$T/X.log")"
expect_log "upstream extension: a note" "WebSocket handshake with 127.0.0.1:$X_PORT failed: the upstream chose a WebSocket extension"

# --- rest and audit-mode endpoints (semantics.md#websocket) ----------------------
out=$($WSC lib --proxy "$PX" --port "$R_PORT" --path /rest/ws text:rest-text-secret)
expect_has "rest endpoint: a GET rule allows the upgrade" "STATUS 101" "$out"
expect_has "rest endpoint: GET does not imply WEBSOCKET_TEXT" "CLOSED 1008" "$out"
expect_not "rest endpoint: the text never arrived" "rest-text-secret" "$(cat "$T/R.log")"
out=$($WSC lib --proxy "$PX" --port "$R_PORT" --path /any/ws text:rest-star)
expect_has "rest endpoint: a * rule allows text messages" "ECHO TEXT rest-star" "$out"
out=$($WSC lib --proxy "$PX" --port "$A_PORT" --path /a text:audited-text)
expect_has "audit mode: a message outside the rules passes" "ECHO TEXT audited-text" "$out"
expect_has "audit mode: it reached the upstream" "TEXT audited-text" "$(cat "$T/A.log")"
expect_log "audit mode: an AUDIT line" "AUDIT /usr/bin/python3.11("

# --- misbehaving upstreams (hand-written servers) ---------------------------------
out=$($WSC lib --proxy "$PX" --port "$K_PORT" --path /k text:never)
expect_has "wrong Sec-WebSocket-Accept: the client gets 502" "STATUS 502" "$out"
expect_log "wrong Sec-WebSocket-Accept: a note" "101 with a wrong Sec-WebSocket-Accept"
expect_has "wrong Sec-WebSocket-Accept: the upstream gets a close 1002" "CLOSE 1002" "$(cat "$T/K.log")"
out=$($WSC raw --proxy "$PX" --port "$M_PORT" --path /m --scenario ping)
expect_has "masked server frame: the client gets 1002" "CLOSED 1002 proxy: server frame is masked" "$out"
expect_not "masked server frame: never relayed" "ECHO TEXT hello" "$out"
expect_has "masked server frame: the upstream gets 1002 too" "CLOSE 1002" "$(cat "$T/M.log")"
out=$($WSC raw --proxy "$PX" --port "$U_PORT" --path /u --scenario ping)
expect_has "invalid UTF-8 from the server: the client gets 1007" "CLOSED 1007" "$out"
expect_log "a server protocol error leaves a note" "upstream protocol error, closed with 1007"

# --- GraphQL over WebSocket (semantics.md#graphql-ws) --------------------------------
glog() { cat "$T/G.log"; }
INIT='{"type":"connection_init","payload":{"authToken":"tok-secret-9"}}'
SUB='{"id":"1","type":"subscribe","payload":{"query":"subscription OnMsg { messageAdded { id text } }","operationName":"OnMsg"}}'
START='{"id":"2","type":"start","payload":{"query":"{ viewer { login } }"}}'
MUT='{"id":"3","type":"subscribe","payload":{"query":"mutation { deleteRepo(id: 1) { id } }"}}'
out=$($WSC lib --proxy "$PX" --port "$G_PORT" --path /graphql "text:$INIT" "text:$SUB" "text:$START" \
    'text:{"type":"ping"}' "text:$MUT")
expect_has "graphql-ws: connection_init passes" "ECHO TEXT $INIT" "$out"
expect_has "graphql-ws: an allowed subscription passes" "ECHO TEXT $SUB" "$out"
expect_has "graphql-ws: a legacy start with an allowed query passes" "ECHO TEXT $START" "$out"
expect_has "graphql-ws: ping passes" 'ECHO TEXT {"type":"ping"}' "$out"
expect_has "graphql-ws: a mutation outside the rules closes 1008" "CLOSED 1008" "$out"
expect_has "graphql-ws: the subscription reached the upstream" "TEXT $SUB" "$(glog)"
expect_not "graphql-ws: the mutation never reached the upstream" "deleteRepo" "$(glog)"
expect_eq "graphql-ws: a decision line per operation, none for lifecycle messages" "2 1" \
    "$(grep -c "ALLOWED .*WEBSOCKET_TEXT http://127.0.0.1:$G_PORT/graphql " "$T/proxy.log") $(grep -c "DENIED .*WEBSOCKET_TEXT http://127.0.0.1:$G_PORT/graphql " "$T/proxy.log")"
expect_not "graphql-ws: lifecycle payloads never logged" "tok-secret-9" "$(cat "$T/proxy.log")"
for m in 'not json at all' '{"type":"next","id":"1","payload":{}}' \
    '{"id":"4","type":"subscribe","payload":{"query":"subscription { messageAdded { id } "}}' \
    '{"id":"7","type":"subscribe","payload":{"query":"subscription { messageAdded } leakedName"}}' \
    '{"id":"5","type":"subscribe","payload":{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"abc"}}}}' \
    '{"id":"6","type":"subscribe","payload":{"query":"subscription { messageAdded { id } secret: viewer { login } }"}}'; do
    out=$($WSC lib --proxy "$PX" --port "$G_PORT" --path /graphql "text:$m")
    expect_has "graphql-ws: refused with 1008: $m" "CLOSED 1008" "$out"
    expect_not "graphql-ws: never reached the upstream: $m" "$m" "$(glog)"
done
expect_log "graphql-ws: an unknown message type is refused with its reason" "GraphQL-over-WebSocket message refused: unknown message type"
expect_log "graphql-ws: a document that does not parse is refused with its reason" "GraphQL document refused: "
expect_not "graphql-ws: the reader's error quotes no token of the message" "leakedName" "$(cat "$T/proxy.log")"

# --- a GraphQL deny rule beside an access preset only takes away (semantics.md#graphql-ws-rules)
# read-only grants no text message; a deny rule must not make its preset
# grant queries, nor let lifecycle messages pass undecided
QOP='{"id":"2","type":"subscribe","payload":{"query":"query RoQuery { viewer { login } }"}}'
out=$($WSC lib --proxy "$PX" --port "$GRO_PORT" --path /graphql "text:$QOP")
expect_has "read-only + GraphQL deny rule: a query operation closes 1008" "CLOSED 1008" "$out"
out=$($WSC lib --proxy "$PX" --port "$GRO_PORT" --path /graphql "text:$INIT")
expect_has "read-only + GraphQL deny rule: connection_init closes 1008" "CLOSED 1008" "$out"
expect_eq "read-only + GraphQL deny rule: no text message reached the upstream" "" \
    "$(grep '^TEXT' "$T/GRO.log")"
# read-write grants every text message; the deny rule takes its mutation away
out=$($WSC lib --proxy "$PX" --port "$GRW_PORT" --path /graphql "text:$INIT" "text:$SUB" \
    "text:$QOP" "text:$MUT")
expect_has "read-write + GraphQL deny rule: connection_init passes" "ECHO TEXT $INIT" "$out"
expect_has "read-write + GraphQL deny rule: a subscription passes" "ECHO TEXT $SUB" "$out"
expect_has "read-write + GraphQL deny rule: a query passes" "ECHO TEXT $QOP" "$out"
expect_has "read-write + GraphQL deny rule: the denied mutation closes 1008" "CLOSED 1008" "$out"
expect_not "read-write + GraphQL deny rule: the mutation never reached the upstream" "deleteRepo" \
    "$(cat "$T/GRW.log")"

# --- a reload that takes WEBSOCKET_TEXT away ends an open session ------------------
# The order is waited for, not slept for (a loaded machine starts python
# slowly): the long session's first message has reached the upstream, then
# the slow session's upgrade is at the upstream (which holds its 101 for
# 1.5 s), then the reload; the long session sends again 4 s after its first.
# elog_wait TEXT: until the upstream's log holds TEXT (20 s at most)
elog_wait() {
    i=0
    while ! grep -qF -- "$1" "$T/E.log" && [ $i -lt 400 ]; do
        sleep 0.05
        i=$((i + 1))
    done
    grep -qF -- "$1" "$T/E.log"
}
$WSC lib --proxy "$PX" --port "$E_PORT" --path /v1/long text:before sleep:4 text:after-reload \
    >"$T/long.out" &
LONG=$!
elog_wait "TEXT before" || fail "the long session's first message never reached the upstream"
# and one whose upgrade waits for its 101 while the reload happens
$WSC lib --proxy "$PX" --port "$E_PORT" --path /v1/slow text:after-slow-101 >"$T/slow.out" &
SLOW=$!
elog_wait "UPGRADE /v1/slow" || fail "the slow upgrade never reached the upstream"
ws_policy PATCH >"$T/policy.next.yaml"
reload_policy || fail "reload"
wait "$LONG"
wait "$SLOW"
out=$(cat "$T/slow.out")
expect_has "reload before the 101: the session opens" "STATUS 101" "$out"
expect_has "reload before the 101: its message is decided by the new version (1008)" "CLOSED 1008" "$out"
expect_not "reload before the 101: the message never reached the upstream" "after-slow-101" "$(elog)"
out=$(cat "$T/long.out")
expect_has "reload: the session was open" "ECHO TEXT before" "$out"
expect_has "reload: the session ends with 1008" "CLOSED 1008" "$out"
expect_not "reload: the later message never reached the upstream" "after-reload" "$(elog)"
ws_policy WEBSOCKET_TEXT >"$T/policy.next.yaml"
reload_policy || fail "reload back"

# --- the per-message cost ----------------------------------------------------------
N=${WS_BENCH_MESSAGES:-1000}
bench() { $WSC lib --proxy "$1" --port "$E_PORT" --path /v1/bench "bench:$N" | awk '/^BENCH/ {print $3}'; }
# alternate, keep the best of two of each: the machine is shared
d1=$(bench 0)
p1=$(bench "$PX")
d2=$(bench 0)
p2=$(bench "$PX")
direct=$(awk -v a="$d1" -v b="$d2" 'BEGIN {print (a < b ? a : b)}')
proxied=$(awk -v a="$p1" -v b="$p2" 'BEGIN {print (a < b ? a : b)}')
expect_has "the client does offer an extension (seen on the direct connection)" \
    "UPGRADE /v1/bench ext=permessage-deflate" "$(elog)"
expect_eq "one decision line per benchmarked message" "$((2 * N))" \
    "$(grep -c 'ALLOWED .*WEBSOCKET_TEXT http://127.0.0.1:'"$E_PORT"'/v1/bench ' "$T/proxy.log")"
echo "per-message echo round trip, best of 2 x $N messages: direct ${direct} us," \
    "through the proxy ${proxied} us" \
    "($(awk -v a="$direct" -v b="$proxied" 'BEGIN {printf "%+.1f us, %.2fx", b - a, b / a}'))"

finish
