#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# proxy_attacks_ws_cred.sh - attacks of a sandboxed agent on the proxy's
# WebSocket enforcement, GraphQL-over-WebSocket classification and
# credential placeholders, each judged by what a raw logging upstream
# (tests/e2e/ws_attack.py upstream, tests/e2e/gql_upstream.py) actually
# received: a denied text message split around control frames, continued
# after its denial, pipelined before the 101, offered compression under
# case-variant and repeated extension fields; upgrades without Connection:
# upgrade, over HTTP/1.0, after a kept-alive request; an upstream that
# answers 101 to a plain request; huge declared lengths, a stalled frame,
# 1 MiB in 100,000 fragments; GraphQL operations hidden in binary frames,
# lifecycle types, aliases, fragments, second operations, block strings and
# comments; GraphQL over HTTP operations hidden the same ways and by
# operationName, Content-Type and parameter tricks; placeholders sent where
# no value may go.
. "$(dirname "$0")/proxy_lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || { echo "SKIP: $PY is not installed"; exit 77; }
ATK="$PY $SRC/tests/e2e/ws_attack.py"

# start_raw NAME [ARGS...]: a raw logging upstream; sets ${NAME}_PORT
start_raw() {
    n=$1
    shift
    start_logged "$n" "$ATK upstream" "$@"
}
start_raw E
start_raw Z --always-101
start_raw G
# credentials: C1 on a host the credential targets, C2 on one it does not,
# W a GraphQL-over-WebSocket upstream in audit mode with rewriting on
start_raw C1
start_raw C2 --bind 127.0.0.2
start_raw W
start_raw GQ
start_raw WA
"$PY" "$SRC/tests/e2e/gql_upstream.py" "$T/gh.port" "$T/gh.log" 2>"$T/gh.err" &
PIDS="$PIDS $!"
wait_file "$T/gh.port" || { echo "gql upstream did not start"; exit 1; }
read -r GH_PORT <"$T/gh.port"
touch "$T/gh.log"
CLOSED_PORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
SECRET='v4lue-S3CRET-5e1f'
cat >"$T/creds.yaml" <<EOF
credentials:
  - name: api
    target_hosts: [127.0.0.1]
    env: API_TOKEN
    value: "$SECRET"
EOF
chmod 600 "$T/creds.yaml"

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
      - host: 127.0.0.1
        port: $C1_PORT
        protocol: rest
        enforcement: enforce
        access: full
      - host: 127.0.0.2
        port: $C2_PORT
        protocol: rest
        enforcement: enforce
        access: full
      - host: 127.0.0.1
        port: $CLOSED_PORT
        protocol: rest
        enforcement: enforce
        access: full
      - host: 127.0.0.1
        port: $W_PORT
        protocol: websocket
        enforcement: audit
        websocket_credential_rewrite: true
        rules:
          - allow: {method: GET, path: /graphql}
          - allow: {operation_type: subscription, fields: [messageAdded]}
      - host: 127.0.0.1
        port: $WA_PORT
        protocol: websocket
        enforcement: audit
        websocket_credential_rewrite: true
        rules:
          - allow: {method: GET, path: /ok}
          - allow: {method: WEBSOCKET_TEXT, path: /ok}
      - host: 127.0.0.1
        port: $GQ_PORT
        path: /graphql
        protocol: graphql
        enforcement: enforce
        rules:
          - allow: {operation_type: query, fields: [viewer]}
      - host: 127.0.0.1
        port: $GH_PORT
        path: /graphql
        protocol: graphql
        enforcement: enforce
        persisted_queries: allow_registered
        graphql_persisted_queries:
          $(printf '%064d' 1): {operation_type: query, fields: [viewer]}
        rules:
          - allow: {operation_type: query, fields: [viewer]}
    binaries:
      - path: /usr/bin/python3*
      - path: /usr/bin/curl
      - path: $T/bin/rawclient
EOF
start_proxy --credentials "$T/creds.yaml"

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

# a reload between a message's fragments that takes WEBSOCKET_TEXT away:
# the message is decided whole, by the new version
atk --port "$E_PORT" --path /v1/rl --scenario frag-reload --gap 1.5 >"$T/rl.out" &
RL=$!
sleep 0.8
sed 's/- allow: {method: WEBSOCKET_TEXT, path: \/v1\/\*\*}/- allow: {method: PATCH, path: \/v1\/**}/' \
    "$T/policy.yaml" >"$T/policy.next.yaml"
cp "$T/policy.yaml" "$T/policy.keep.yaml"
reload_policy || fail "reload mid-message"
wait "$RL"
expect_has "fragments straddling a reload: decided by the new version (1008)" "CLOSED 1008" "$(cat "$T/rl.out")"
expect_not "fragments straddling a reload: nothing upstream" "rl-secret" "$(elog)"
cp "$T/policy.keep.yaml" "$T/policy.next.yaml"
reload_policy || fail "reload back"

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
# a graphql (HTTP) endpoint lets a GET query upgrade (it is a GET request it
# allows); its session is read as graphql-ws too: a binary operation is
# refused, a text one decided (WEBSOCKET_TEXT is no GraphQL-over-HTTP method)
out=$(atk --port "$GQ_PORT" --path '/graphql?query=%7Bviewer%7D' --scenario gql-binary)
expect_has "graphql endpoint upgrade, binary operation: 1008" "CLOSED 1008 policy denied a binary message" "$out"
out=$(atk --port "$GQ_PORT" --path '/graphql?query=%7Bviewer%7D' --scenario gql-binary-text)
expect_has "graphql endpoint upgrade, text operation: 1008" "CLOSED 1008" "$out"
expect_has "graphql endpoint upgrade: the upgrade went upstream" "HEAD GET /graphql?query=%7Bviewer%7D" "$(cat "$T/GQ.log")"
expect_not "graphql endpoint upgrade: no operation message reached the upstream" "subscribe" "$(cat "$T/GQ.log")"
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

# --- credential placeholders: no value where it may not go ---------------------------
P=openshell:resolve:env:API_TOKEN
U2=http://127.0.0.2:$C2_PORT
out=$(pcurl -H "Authorization: Bearer $P" "$U2/a")
expect_has "header to an untargeted host: 403" "|403" "$out"
out=$(pcurl -H "X-OPENSHELL-RESOLVE-ENV-API_TOKEN: 1" "$U2/b")
expect_has "alias placeholder as a header name: refused (500, unresolvable)" "|500" "$out"
out=$(pcurl -H "Cookie: s=$P" "$U2/c")
expect_has "cookie to an untargeted host: 403" "|403" "$out"
out=$(pcurl -H "Host: 127.0.0.1:$C1_PORT" -H "Authorization: Bearer $P" "$U2/d")
expect_has "forward path, Host naming the target host, URL the other: 403" "|403" "$out"
out=$(pcurl -H "Host: $P" "$U2/e")
expect_not "a placeholder as the Host: never forwarded as a value" "$SECRET" "$out"
out=$(raw_tunnel "127.0.0.2:$C2_PORT" "GET /f HTTP/1.1\r\nHost: 127.0.0.1:$C1_PORT\r\nAuthorization: Bearer $P\r\nConnection: close\r\n\r\n")
expect_not "tunnel to the other host, inner Host the target's: no value" "$SECRET" "$out"
out=$(raw_tunnel "127.0.0.2:$C2_PORT" "GET http://127.0.0.1:$C1_PORT/g HTTP/1.1\r\nHost: 127.0.0.1:$C1_PORT\r\nAuthorization: Bearer $P\r\nConnection: close\r\n\r\n")
expect_not "tunnel to the other host, absolute-form target at the target host: no value" "$SECRET" "$out"
out=$(raw_send "GET $U2/h HTTP/1.1\r\nHost: 127.0.0.2:$C2_PORT\r\nX-A: 1\r\n $P\r\nConnection: close\r\n\r\n")
expect_has "obs-fold carrying a placeholder: 400" " 400 " "$out"
out=$(pcurl -H "X-A: openshell:resolve:" -H "X-A: env:API_TOKEN" "$U2/i")
out=$(pcurl -H "Content-Type: application/json" -H "Transfer-Encoding: chunked" \
    --data "{\"k\":\"$P\"}" "$U2/j")
out=$(pcurl -H "Content-Type: application/json" --data "{\"k\":\"$P\"}" "$U2/k")
expect_has "body placeholder to an untargeted host: 403" "|403" "$out"
for enc in 'openshell%3Aresolve%3Aenv%3AAPI_TOKEN' 'openshell%253Aresolve%253Aenv%253AAPI_TOKEN' \
    'OpenShell%3aResolve%3aEnv%3aAPI_TOKEN'; do
    out=$(pcurl "$U2/q?t=$enc")
done
expect_eq "no value ever reached the untargeted host" "0" "$(grep -c -- "$SECRET" "$T/C2.log")"
# the target host gets the value; an upstream that cannot be reached leaves
# no value in the 502 or the log
out=$(pcurl -H "Authorization: Bearer $P" "http://127.0.0.1:$C1_PORT/ok")
expect_has "target host: the value arrives" "HDR Authorization: Bearer $SECRET" "$(cat "$T/C1.log")"
out=$(pcurl "http://127.0.0.1:$CLOSED_PORT/v/$P?t=$P" -H "Authorization: Bearer $P")
expect_not "an unreachable target: no value in the error body" "$SECRET" "$out"
# GraphQL over WebSocket on an audit-mode endpoint: a session whose upgrade
# only audit mode allowed never gets a value, lifecycle messages included
INIT="{\"type\":\"connection_init\",\"payload\":{\"token\":\"$P\"}}"
out=$(atk --port "$W_PORT" --path /not-in-rules --scenario "gql:$INIT")
expect_not "audit-only GraphQL session: connection_init gets no value" "$SECRET" "$(cat "$T/W.log")"
out=$(atk --port "$W_PORT" --path /graphql --scenario "gql:$INIT")
expect_has "rule-allowed GraphQL session: connection_init rewritten" "$SECRET" "$(cat "$T/W.log")"
out=$(atk --port "$W_PORT" --path /not-in-rules --scenario \
    "gql:{\"id\":\"1\",\"type\":\"subscribe\",\"payload\":{\"query\":\"subscription { messageAdded(t: \\\"$P\\\") }\"}}")
expect_eq "an operation the rules allow, in that audit-only session: rewritten (decided on its own)" "2" "$(grep -c -- "$SECRET" "$T/W.log")"
expect_log "audit-only GraphQL session: the lifecycle message's refusal" "[reason:credential placeholders are not rewritten in messages allowed only by audit mode]"
# the same for plain text messages on an audit-mode websocket endpoint: a
# message only audit mode allows gets no value, one its rules allow does
out=$(atk --port "$WA_PORT" --path /audited --scenario "gql:{\"t\":\"$P\"}")
expect_has "audit-only text message with a placeholder: 1008" "CLOSED 1008" "$out"
out=$(atk --port "$WA_PORT" --path /ok --scenario "gql:{\"t\":\"$P\"}")
expect_eq "audit endpoint: only the rule-allowed message got the value" "1" "$(grep -c -- "TEXT {\"t\":\"$SECRET\"}" "$T/WA.log")"
expect_has "audit endpoint: the rule-allowed session is /ok" "HEAD GET /ok " "$(cat "$T/WA.log")"
# nothing the proxy writes or serves holds the value
den=$(pcurl "http://policy.local/v1/denials?last=100")
expect_not "policy.local/v1/denials holds no value" "$SECRET" "$den"
expect_not "metrics hold no value" "$SECRET" "$("$CURL" -s "http://127.0.0.1:$ADM/metrics")"
for f in "$T/proxy.log" "$T/proxy.err" "$T/data/denials.jsonl"; do
    [ -f "$f" ] || continue
    expect_eq "no value in $(basename "$f")" "0" "$(grep -c -- "$SECRET" "$f")"
done

# --- GraphQL over HTTP: a mutation past a query-only rule -------------------------------
GURL=http://127.0.0.1:$GH_PORT/graphql
gj() { pcurl -H 'Content-Type: application/json' --data-binary "$1" "${2:-$GURL}"; }
H1=$(printf '%064d' 1)
n=0
for b in \
    '{"query":"query A { viewer } mutation B { deleteRepo1 }","operationName":"B"}' \
    '{"query":"query A { viewer } mutation B { deleteRepo2 }"}' \
    '{"query":"query A { viewer } mutation A { deleteRepo3 }","operationName":"A"}' \
    '{"query":"{ viewer }","query":"mutation { deleteRepo4 }"}' \
    '{"query":"mut\u0061tion { deleteRepo5 }"}' \
    '{"query":"# query { viewer }\nmutation { deleteRepo6 }"}' \
    '{"query":"query { viewer(a: \"\"\" } \"\"\") deleteRepo7 }"}' \
    '{"query":"query { ... on Query { deleteRepo8 } }"}' \
    '[{"query":"{ viewer }"},[{"query":"mutation { deleteRepo10 }"}]]' \
    '[{"query":"query A { viewer } mutation B { deleteRepo11 }","operationName":"B"}]' \
    "{\"query\":\"mutation { deleteRepo12 }\",\"extensions\":{\"persistedQuery\":{\"version\":1,\"sha256Hash\":\"$H1\"}}}" \
    '{"id":"deleteRepo13","variables":{}}' \
    '{"documentId":"deleteRepo14"}' \
    '{"query":"{ viewer }","extra":"deleteRepo15"}'; do
    n=$((n + 1))
    out=$(gj "$b")
    expect_has "graphql-http refused ($n): $b" "|403" "$out"
done
# an unused fragment selects nothing: the operation is the query (a server's
# validation rejects the document, NoUnusedFragments); it is allowed as such
out=$(gj '{"query":"query { viewer } fragment F on Mutation { unusedFragmentField }"}')
expect_has "an unused fragment naming a mutation field: the query is what runs (200)" "|200" "$out"
out=$(gj '{"query":"{ viewer }"}' "$GURL?operationName=deleteRepo16")
expect_has "graphql-http: operationName in the URL beside a JSON body: 403" "|403" "$out"
out=$(pcurl -H 'Content-Type: application/graphql' --data-binary 'mutation { deleteRepo17 }' "$GURL")
expect_has "application/graphql mutation: 403" "|403" "$out"
out=$(pcurl -H 'Content-Type: application/graphql' --data-binary 'query A { viewer } mutation B { deleteRepo18 }' "$GURL?operationName=B")
expect_has "application/graphql, ?operationName selecting the mutation: 403" "|403" "$out"
for ct in text/plain application/x-www-form-urlencoded 'multipart/form-data; boundary=x' 'application/json;charset=utf-16'; do
    out=$(pcurl -H "Content-Type: $ct" --data-binary '{"query":"mutation { deleteRepo19 }"}' "$GURL")
    expect_has "Content-Type $ct: 403" "|403" "$out"
done
out=$(pcurl -H 'Content-Type: application/graphql' -H 'Content-Type: application/json' \
    --data-binary '{"query":"mutation { deleteRepo20 }"}' "$GURL")
expect_has "two Content-Type fields, JSON body: 403" "|403" "$out"
for q in 'query=mutation%20%7B%20deleteRepo21%20%7D' '%71uery=mutation%20%7B%20deleteRepo22%20%7D' \
    'query=%7B%20viewer%20%7D&query=mutation%20%7B%20deleteRepo23%20%7D' \
    'query=%7B%20viewer%20%7D&%71uery=mutation%20%7B%20deleteRepo24%20%7D' \
    'query=query%20A%20%7B%20viewer%20%7D%20mutation%20B%20%7B%20deleteRepo25%20%7D&operationName=B' \
    'query=%7B%20viewer%20%7D&doc_id=deleteRepo26'; do
    out=$(pcurl "$GURL?$q")
    expect_has "GET refused: $q" "|403" "$out"
done
out=$(pcurl -X PUT -H 'Content-Type: application/json' --data-binary '{"query":"{ viewer }"}' "$GURL")
expect_has "PUT with an allowed query: 403" "|403" "$out"
out=$(gj '{"query":"{ viewer }","operationName":null}' "http://127.0.0.1:$GH_PORT/graphql;x")
expect_has "a ;param on the GraphQL path: decided by the GraphQL rules (allowed query)" "|200" "$out"
out=$(gj '{"query":"mutation { deleteRepo27 }"}' "http://127.0.0.1:$GH_PORT/graphql;x")
expect_has "a ;param on the GraphQL path: a mutation still 403" "|403" "$out"
out=$(gj '{"query":"mutation { deleteRepo28 }"}' "http://127.0.0.1:$GH_PORT/x/../graphql")
expect_has "dot segments onto the GraphQL path: 403" "|403" "$out"
out=$(gj "{\"extensions\":{\"persistedQuery\":{\"version\":1,\"sha256Hash\":\"$H1\"}}}")
expect_has "a registered hash alone: allowed" "|200" "$out"
expect_not "no deleteRepo operation ever reached the GraphQL upstream" "deleteRepo" "$(cat "$T/gh.log")"
expect_has "the allowed ones did" "$H1" "$(cat "$T/gh.log")"

finish
