#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# proxy_attacks_ws_cred.sh - attacks of a sandboxed agent on the proxy's
# WebSocket enforcement, GraphQL-over-WebSocket classification and
# credential placeholders, each judged by what a raw logging upstream
# (tests/e2e/ws_attack.py upstream, tests/e2e/proxy_upstream) actually
# received: a denied text message split around control frames, continued
# after its denial, pipelined before the 101, offered compression under
# case-variant and repeated extension fields; upgrades without Connection:
# upgrade, over HTTP/1.0, after a kept-alive request; an upstream that
# answers 101 to a plain request; huge declared lengths, a stalled frame,
# 1 MiB in 100,000 fragments; GraphQL operations hidden in binary frames,
# lifecycle types, aliases, fragments, second operations, block strings and
# comments; placeholders sent where no value may go.
. "$(dirname "$0")/proxy_lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || { echo "SKIP: $PY is not installed"; exit 77; }
ATK="$PY $SRC/tests/e2e/ws_attack.py"

# start_raw NAME [ARGS...]: a raw logging upstream; sets ${NAME}_PORT
start_raw() {
    n=$1
    shift
    $ATK upstream --port-file "$T/$n.port" --log "$T/$n.log" "$@" 2>"$T/$n.err" &
    PIDS="$PIDS $!"
    wait_file "$T/$n.port" || { echo "upstream $n did not start"; cat "$T/$n.err"; exit 1; }
    eval "${n}_PORT=$(cat "$T/$n.port")"
    touch "$T/$n.log"
}
start_raw E
start_raw Z --always-101
start_raw G

cat >"$T/policy.yaml" <<EOF
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
          - allow: {method: WEBSOCKET_TEXT, path: /v1/**}
          - allow: {method: GET, path: /ro/**}
        deny_rules:
          - method: WEBSOCKET_TEXT
            path: /v1/admin/**
      - host: 127.0.0.1
        port: $Z_PORT
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /plain}
      - host: 127.0.0.1
        port: $G_PORT
        protocol: websocket
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /graphql}
          - allow: {operation_type: subscription, fields: [messageAdded]}
          - allow: {operation_type: query, fields: [viewer]}
    binaries:
      - path: /usr/bin/python3*
EOF
start_proxy

atk() { $ATK client --proxy "$PX" "$@"; }
elog() { cat "$T/E.log"; }

# --- WebSocket: denied text messages ------------------------------------------------
out=$(atk --port "$E_PORT" --path /ro/a --scenario frag-ping)
expect_has "denied text split around a ping: 1008" "CLOSED 1008" "$out"
expect_not "split around a ping: no fragment upstream" "frag-secret" "$(elog)"
out=$(atk --port "$E_PORT" --path /ro/b --scenario frag-many-ping)
expect_has "20 pings between fragments: 1008" "CLOSED 1008" "$out"
expect_not "20 pings between fragments: nothing upstream" "fm-secret" "$(elog)"
expect_eq "20 pings between fragments: the pings did go upstream" "20" "$(grep -c '^FRAME 9 1 78$' "$T/E.log")"
out=$(atk --port "$E_PORT" --path /v1/admin/c --scenario cont-after-deny)
expect_has "continuation after a denied message: 1008" "CLOSED 1008" "$out"
expect_not "continuation after a denied message: nothing upstream" "cad-secret" "$(elog)"
out=$(atk --port "$E_PORT" --path /ro/d --scenario binary-then-cont-text)
expect_has "a text continuation of a binary message stays binary (relayed as such)" "BINMSG bin-btc" "$(elog)"
out=$(atk --port "$E_PORT" --path /ro/e --scenario pipelined)
expect_has "frames pipelined before the 101: decided (1008)" "CLOSED 1008" "$out"
expect_not "frames pipelined before the 101: nothing upstream" "pipe-secret" "$(elog)"
out=$(atk --port "$E_PORT" --path /v1/f --scenario pipelined-http)
expect_not "an HTTP request pipelined after an upgrade never reaches the upstream" "pipe-http-secret" "$(elog)"
out=$(atk --port "$E_PORT" --path /ro/g --scenario keepalive-then-upgrade)
expect_has "upgrade after a kept-alive request: upstream saw the upgrade" "HEAD GET /ro/g HTTP/1.1" "$(elog)"
expect_not "upgrade after a kept-alive request: its denied text never arrived" "ka-secret" "$(elog)"
out=$(atk --port "$E_PORT" --path /v1/admin/h --scenario ext-case)
expect_not "case-variant and repeated extension offers: none reaches the upstream" "deflate" "$(elog)"
expect_has "a compressed (RSV1) frame: 1002" "CLOSED 1002" "$out"
expect_has "the upgrade itself went upstream" "HEAD GET /v1/admin/h HTTP/1.1" "$(elog)"
for sc in ext-space ext-fold; do
    out=$(atk --port "$E_PORT" --path "/v1/admin/$sc" --scenario "$sc")
    expect_has "$sc: 400" "STATUS 400" "$out"
    expect_not "$sc: nothing upstream" "/v1/admin/$sc" "$(elog)"
done
out=$(atk --port "$E_PORT" --path /v1/admin/i --scenario no-conn-upgrade)
expect_not "Connection without upgrade: no session, no text upstream" "nc-secret" "$(elog)"
expect_not "Connection without upgrade: no upgrade upstream" "HEAD GET /v1/admin/i" "$(elog)"
out=$(atk --port "$E_PORT" --path /v1/admin/j --scenario http10)
expect_not "HTTP/1.0 upgrade: no text upstream" "h10-secret" "$(elog)"
expect_not "HTTP/1.0 upgrade: no upgrade upstream" "HEAD GET /v1/admin/j" "$(elog)"
out=$(atk --port "$E_PORT" --path /v1/x/../admin/k --scenario frag-ping)
expect_has "dot segments into a denied path: 1008" "CLOSED 1008" "$out"
expect_has "dot segments: the upstream got the canonical path" "HEAD GET /v1/admin/k HTTP/1.1" "$(elog)"
expect_not "dot segments: no text upstream" "frag-secret" "$(elog)"
out=$(atk --port "$E_PORT" --path '/v1/admin;x=1/l' --scenario frag-ping)
expect_has "a ;param on the denied segment: 1008" "CLOSED 1008" "$out"
expect_not "a ;param: no text upstream" "frag-secret" "$(elog)"
out=$(atk --forward --port "$E_PORT" --path /ro/m --scenario pipelined)
expect_not "forward path, pipelined frames: nothing upstream" "pipe-secret" "$(elog)"

# an upstream that answers 101 to a plain request: the proxy must not relay
# the bytes that follow unparsed
out=$(atk --port "$Z_PORT" --path /plain --scenario plain-then-raw)
expect_not "101 to a plain request: the client's next bytes never reach it" "raw-secret" "$(cat "$T/Z.log")"
expect_not "101 to a plain request: no frame either" "r101-secret" "$(cat "$T/Z.log")"

# resource attacks: the proxy answers, closes, and keeps serving
out=$(atk --port "$E_PORT" --path /v1/n --scenario huge-length)
expect_has "a 2^62-byte declared length: 1009" "CLOSED 1009" "$out"
atk --port "$E_PORT" --path /v1/o --scenario slow-frame --wait 4 >"$T/slow.out" &
SLOWC=$!
out=$(atk --port "$E_PORT" --path /v1/p --scenario frags-1mib --wait 20)
expect_has "1 MiB in 100,000 fragments: the upgrade" "STATUS 101" "$out"
expect_has "1 MiB in 100,000 fragments: one message upstream" "TEXT aaaaaaaaaa" "$(grep -c '^FRAME 1 1' "$T/E.log" >/dev/null; grep '^TEXT aaaa' "$T/E.log" | head -c 20)"
expect_eq "1 MiB in 100,000 fragments: its length upstream" "1048582" "$(grep '^TEXT aaaa' "$T/E.log" | head -1 | wc -c)"
echo "1 MiB in 100,000 fragments: $(echo "$out" | awk '/^SENT/ {print $2}') s to send"
out=$(atk --port "$E_PORT" --path /v1/q --scenario empty-frags --wait 10)
expect_has "200,000 empty fragments then text: decided as one message" "TEXT ef-done" "$(elog)"
wait "$SLOWC"
expect_has "a stalled frame head: the session waits (no crash)" "TIMEOUT" "$(cat "$T/slow.out")"
expect_eq "the proxy is alive" "0" "$(kill -0 "$PX_PID"; echo $?)"

# --- GraphQL over WebSocket -----------------------------------------------------------
glog() { cat "$T/G.log"; }
gq() { atk --port "$G_PORT" --path /graphql --scenario "gql:$1"; }
out=$(atk --port "$G_PORT" --path /graphql --scenario gql-binary)
expect_not "a subscribe in a binary frame: never reaches a graphql-ws upstream" "deleteRepo" "$(glog)"
expect_has "a subscribe in a binary frame: closed 1008" "CLOSED 1008 policy denied a binary message" "$out"
expect_log "a subscribe in a binary frame: one DENIED line" "WEBSOCKET_BINARY http://127.0.0.1:$G_PORT/graphql [policy:ws engine:l7] [reason:GraphQL-over-WebSocket message refused: a binary message"
# lifecycle types pass undecided whatever their payload (no graphql-ws server
# runs an operation from them; semantics.md#graphql-ws)
out=$(gq '{"type":"connection_init","payload":{"query":"mutation { lifecycleQuery }"}}')
expect_has "a query inside connection_init passes as a lifecycle message" "TEXT {\"type\":\"connection_init\"" "$(glog)"
for m in \
    '{"id":"1","type":"Subscribe","payload":{"query":"mutation { deleteRepo0 }"}}' \
    '{"id":"1","type":"subscribe\u0000","payload":{"query":"mutation { deleteRepo0 }"}}' \
    '{"id":"1","type":"subscribe","type":"ping","payload":{"query":"mutation { deleteRepo1 }"}}' \
    '{"id":1,"type":"subscribe","payload":{"query":"mutation { deleteRepo2 }"}}' \
    '{"id":"1","type":"subscribe","payload":[{"query":"mutation { deleteRepo3 }"}]}' \
    '[{"id":"1","type":"subscribe","payload":{"query":"mutation { deleteRepo4 }"}}]' \
    '{"id":"1","type":"subscribe","payload":{"query":"subscription { messageAdded: deleteRepo5 }"}}' \
    '{"id":"1","type":"subscribe","payload":{"query":"subscription { ...F } fragment F on Subscription { deleteRepo6 }"}}' \
    '{"id":"1","type":"subscribe","payload":{"query":"subscription { ... on Subscription { deleteRepo7 } }"}}' \
    '{"id":"1","type":"subscribe","payload":{"query":"subscription A { messageAdded } mutation B { deleteRepo8 }"}}' \
    '{"id":"1","type":"subscribe","payload":{"query":"subscription A { messageAdded } mutation B { deleteRepo9 }","operationName":"B"}}' \
    '{"id":"1","type":"subscribe","payload":{"query":"subscription A { messageAdded } mutation A { deleteRepo10 }","operationName":"A"}}' \
    '{"id":"1","type":"subscribe","payload":{"query":"mut\u0061tion { deleteRepo11 }"}}' \
    '{"id":"1","type":"subscribe","payload":{"query":"# subscription { messageAdded }\nmutation { deleteRepo12 }"}}' \
    '{"id":"1","type":"subscribe","payload":{"query":"subscription { messageAdded(x: \"\"\" } \"\"\") deleteRepo13 }"}}' \
    '{"id":"1","type":"subscribe","payload":{"query":"{ deleteRepo14 }"}}' \
    '{"id":"1","type":"start","payload":{"query":"mutation { deleteRepo15 }"}}' \
    '{"id":"1","type":"subscribe","payload":{"query":"subscription { messageAdded }","extensions":{"persistedQuery":{"version":1,"sha256Hash":"0000000000000000000000000000000000000000000000000000000000000000"}}}}' \
    '{"id":"1","type":"subscribe","payload":{"query":"query { viewer } mutation { deleteRepo16 }"}}' \
    '{"id":"1","type":"subscribe","payload":{"query":"query Q { viewer }","operationName":"Q","query":"mutation { deleteRepo17 }"}}'; do
    out=$(gq "$m")
    expect_has "graphql-ws refused: $m" "CLOSED 1008" "$out"
done
expect_not "graphql-ws: no deleteRepo operation reached the upstream" "TEXT {\"id\":\"1\",\"type\":\"subscribe\"" "$(glog)"
expect_not "graphql-ws: no smuggled mutation in any message" "deleteRepo1" "$(grep '^TEXT' "$T/G.log")"
out=$(gq '{"id":"1","type":"subscribe","payload":{"query":"subscription A { messageAdded } mutation B { deleteRepo }","operationName":"A"}}')
expect_has "two operations, the allowed one named: forwarded (the server runs A)" "TEXT {\"id\":\"1\"" "$(glog)"

finish
