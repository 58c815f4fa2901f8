#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# proxy_graphql.sh - GraphQL over HTTP through proviso-proxy, judged by what
# a logging GraphQL upstream (tests/e2e/gql_upstream.py) received: under a
# query-only rule a gh-style query is allowed; a mutation, an aliased
# mutation, a mutation through a fragment spread, a batch mixing a query and
# a mutation, a hash-only persisted query, an over-limit body (also chunked)
# and a malformed document never reach it; chunked bodies are decided too;
# a GET query does, a GET mutation does not; a body sent in pieces is
# forwarded once, unchanged;
# the same over intercepted TLS and in audit mode (unreadable forwarded).
. "$(dirname "$0")/proxy_lib.sh"

PY=$(command -v python3) || { echo "SKIP: python3 is not installed"; exit 77; }
"$PY" "$SRC/tests/e2e/gql_upstream.py" "$T/gql.port" "$T/gql.log" 2>"$T/gql.err" &
PIDS="$PIDS $!"
wait_file "$T/gql.port" || { echo "gql upstream did not start"; cat "$T/gql.err"; exit 1; }
read -r G <"$T/gql.port"
touch "$T/gql.log"
# a second upstream behind an audit-mode endpoint
"$PY" "$SRC/tests/e2e/gql_upstream.py" "$T/gqa.port" "$T/gqa.log" 2>"$T/gqa.err" &
PIDS="$PIDS $!"
wait_file "$T/gqa.port" || { echo "gql upstream did not start"; cat "$T/gqa.err"; exit 1; }
read -r GA <"$T/gqa.port"
touch "$T/gqa.log"
# and one speaking TLS (gh talks to https://api.github.com/graphql)
"$PY" "$SRC/tests/e2e/gql_upstream.py" "$T/gqs.port" "$T/gqs.log" "$T/srv.pem" "$T/srv.key" \
    2>"$T/gqs.err" &
PIDS="$PIDS $!"
wait_file "$T/gqs.port" || { echo "gql upstream did not start"; cat "$T/gqs.err"; exit 1; }
read -r GS <"$T/gqs.port"
touch "$T/gqs.log"

cat >"$T/policy.yaml" <<EOF
version: 1
network_policies:
  gh:
    endpoints:
      - host: 127.0.0.1
        port: $G
        path: /graphql
        protocol: graphql
        enforcement: enforce
        graphql_max_body_bytes: 2048
        rules:
          - allow: {operation_type: query, fields: [viewer, repository]}
    binaries:
      - path: /usr/bin/curl
      - path: $RAW
  tls:
    endpoints:
      - host: 127.0.0.1
        port: $GS
        path: /graphql
        protocol: graphql
        enforcement: enforce
        rules:
          - allow: {operation_type: query, fields: [viewer]}
    binaries:
      - path: /usr/bin/curl
  audited:
    endpoints:
      - host: 127.0.0.1
        port: $GA
        path: /graphql
        protocol: graphql
        enforcement: audit
        rules:
          - allow: {operation_type: query, fields: [viewer]}
    binaries:
      - path: /usr/bin/curl
EOF
start_proxy

URL="http://127.0.0.1:$G/graphql"
# gq BODY: POST BODY as JSON through the proxy; prints body|code
gq() {
    pcurl -H 'Content-Type: application/json' --data-binary "$1" "$URL"
}
# seen NEEDLE: did the upstream receive a request containing NEEDLE?
seen() { grep -qF -- "$1" "$T/gql.log"; }
NREQ=0
req() { NREQ=$((NREQ + 1)); }

# 1. the gh-style query: allowed, reaches the upstream unchanged
out=$(gq '{"query":"query { viewer { login } }"}'); req
expect_eq "query allowed" '{"data":{}}|200' "$out"
if seen '"body": "{\"query\":\"query { viewer { login } }\"}"'; then pass; else
    fail "query body not forwarded unchanged: $(cat "$T/gql.log")"; fi
expect_log "query logged allowed" "ALLOWED"

# 1b. a charset other than UTF-8: a server decoding UTF-7 (body-parser
# does) reads "+ACI-" as a quote, so the proxy would decide one document
# and the server run another
U7='{"query":"query { viewer { login } }","variables":{"x":"+ACIAfQAsACI-query+ACI-:+ACI-mutation { utf7Mut(id: 1) { id } }"}}'
out=$(pcurl -H 'Content-Type: application/json; charset=utf-7' --data-binary "$U7" "$URL"); req
expect_has "charset utf-7 refused" '|403' "$out"
expect_has "charset utf-7: the reason" 'charset utf-7' "$out"
if seen utf7Mut; then fail "a UTF-7 body reached the upstream"; else pass; fi

# 2. a mutation: 403, never upstream, one line naming the operation
out=$(gq '{"query":"mutation { deleteRepository(id: 1) { id } }"}'); req
expect_has "mutation refused" '|403' "$out"
expect_has "mutation body" 'policy_denied' "$out"
expect_has "mutation body names the operation" 'GraphQL mutation' "$out"
if seen deleteRepository; then fail "the mutation reached the upstream"; else pass; fi
expect_log "mutation log names the operation" "GraphQL mutation (anonymous) {deleteRepository}"
# the deny body is a GraphQL one (docs/proxy.md#graphql-deny): the protocol,
# the operation and the GraphQL rule missing - never a REST rule that could
# not merge into a graphql endpoint; an anonymous operation names no name
expect_has "mutation body: protocol graphql" '"protocol":"graphql"' "$out"
expect_has "mutation body: rule names the operation" '"rule":"POST /graphql mutation {deleteRepository}"' "$out"
expect_has "mutation body: graphql object" '"graphql":{"operation_type":"mutation","fields":["deleteRepository"]}' "$out"
expect_has "mutation body: rule_missing graphql_allow" '"rule_missing":{"type":"graphql_allow","layer":"l7","operation_type":"mutation","fields":["deleteRepository"],"path":"/graphql","host":"127.0.0.1","port":'"$G" "$out"
expect_not "mutation body: no rest_allow" 'rest_allow' "$out"
expect_not "mutation body: no operation_name" 'operation_name' "$out"

# 3. an aliased mutation: the alias says viewer, the field is deleteRepository
out=$(gq '{"query":"mutation { viewer: deleteRepository(id: 2) { id } }"}'); req
expect_has "aliased mutation refused" '|403' "$out"
if seen 'id: 2'; then fail "the aliased mutation reached the upstream"; else pass; fi
# ... and an aliased query field is judged by its name too
out=$(gq '{"query":"query { viewer: organization(login: \"x\") { id } }"}'); req
expect_has "query with an aliased other field refused" '|403' "$out"
if seen organization; then fail "the aliased query reached the upstream"; else pass; fi

# 4. a mutation behind a fragment spread and an inline fragment
out=$(gq '{"query":"mutation M { ...F } fragment F on Mutation { ... { deleteRepository(id: 3) { id } } }"}'); req
expect_has "fragment mutation refused" '|403' "$out"
if seen 'id: 3'; then fail "the fragment mutation reached the upstream"; else pass; fi
expect_log "fragment log names the operation" "GraphQL mutation M {deleteRepository}"
expect_has "fragment body: rule_missing names the operation" '"type":"graphql_allow","layer":"l7","operation_type":"mutation","operation_name":"M","fields":["deleteRepository"]' "$out"

# 5. a batch: one query and one mutation - the whole batch is refused
out=$(gq '[{"query":"{ viewer { login } }"},{"query":"mutation { deleteRepository(id: 4) { id } }"}]'); req
expect_has "mixed batch refused" '|403' "$out"
# the refused operation of the batch, not the first one
expect_has "mixed batch: rule_missing names the mutation" '"operation_type":"mutation","fields":["deleteRepository"]' "$out"
expect_not "mixed batch: the query is not what is missing" '"fields":["viewer"]' "$out"
if seen 'id: 4'; then fail "the mixed batch reached the upstream"; else pass; fi
out=$(gq '[{"query":"{ viewer { login } }"},{"query":"{ repository(name: \"batch2\") { id } }"}]'); req
expect_eq "all-query batch allowed" '{"data":{}}|200' "$out"
if seen batch2; then pass; else fail "the all-query batch did not reach the upstream"; fi

# 6. a hash-only persisted query: denied (persisted_queries defaults to deny)
H=$(printf '%064d' 7)
out=$(gq "{\"extensions\":{\"persistedQuery\":{\"version\":1,\"sha256Hash\":\"$H\"}}}"); req
expect_has "hash-only query refused" '|403' "$out"
if seen "$H"; then fail "the persisted query reached the upstream"; else pass; fi
expect_has "hash-only query: rule_missing is the registry" '"rule_missing":{"type":"graphql_persisted_query","layer":"l7","persisted_id":"'"$H"'"' "$out"

# 7. a body over graphql_max_body_bytes (2048): refused before it is read
big=$(printf '{"query":"query { viewer { login } }","variables":{"pad":"%03000d"}}' 0)
out=$(gq "$big"); req
expect_has "over-limit body refused" '|403' "$out"
expect_has "over-limit reason" 'graphql_max_body_bytes' "$out"
# no operation was read: a GraphQL denial, but no rule would lift it
expect_has "over-limit body: protocol graphql" '"protocol":"graphql"' "$out"
expect_not "over-limit body: nothing to ask for" 'rule_missing' "$out"
if seen '000000000000'; then fail "the over-limit body reached the upstream"; else pass; fi

# 7b. a body the client holds back until "100 Continue" (curl sends
# Expect: 100-continue above 1 KiB): the proxy asks for it, well within the
# 10 s curl would otherwise wait (pcurl gives up after 5 s)
mid=$(printf '{"query":"query { viewer { login } }","variables":{"pad":"expect%01500d"}}' 0)
out=$(pcurl --expect100-timeout 10 -H 'Content-Type: application/json' --data-binary "$mid" "$URL"); req
expect_eq "Expect: 100-continue body allowed" '{"data":{}}|200' "$out"
if seen 'expect0000'; then pass; else fail "the 100-continue body did not reach the upstream"; fi

# 8. chunked bodies: decoded and decided like any other, forwarded once;
# a chunked mutation, one over the bound and a malformed one never arrive
out=$(pcurl -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' \
    --data-binary '{"query":"{ viewer { chunkedok } }"}' "$URL"); req
expect_eq "chunked query allowed" '{"data":{}}|200' "$out"
expect_eq "chunked query forwarded once" 1 "$(grep -c chunkedok "$T/gql.log")"
out=$(pcurl -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' \
    --data-binary '{"query":"mutation ChunkMut { deleteRepository(id: 8) { id } }"}' "$URL"); req
expect_has "chunked mutation refused" '|403' "$out"
if seen ChunkMut; then fail "the chunked mutation reached the upstream"; else pass; fi
out=$(pcurl -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' \
    --data-binary "$(printf '{"query":"{ viewer { chunkbig } }","variables":{"pad":"%03000d"}}' 0)" "$URL"); req
expect_has "chunked over-limit refused" 'exceeds graphql_max_body_bytes' "$out"
if seen chunkbig; then fail "the chunked over-limit body reached the upstream"; else pass; fi
out=$(raw_send "POST $URL HTTP/1.1\r\nHost: 127.0.0.1:$G\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"que\r\nzz\r\n"); req
expect_has "malformed chunked body refused" 'malformed chunked body' "$out"
out=$(gq '{"query":"query { viewer { login } "}'); req
expect_has "malformed document refused" '|403' "$out"
expect_has "malformed document reason" 'expected a name' "$out"
out=$(pcurl -H 'Content-Type: text/plain' --data-binary 'query { viewer { textplain } }' "$URL"); req
expect_has "other content type refused" '|403' "$out"
if seen textplain; then fail "the text/plain body reached the upstream"; else pass; fi

# 8b. a query parameter beside the body (express-graphql reads ?query= first)
out=$(pcurl -H 'Content-Type: application/json' --data-binary '{"query":"{ viewer { login } }"}' \
    "$URL?query=mutation%20UrlMut%20%7B%20deleteRepository(id%3A%207)%20%7B%20id%20%7D%20%7D"); req
expect_has "query parameter beside a body refused" '|403' "$out"
if seen 'UrlMut'; then fail "the URL mutation reached the upstream"; else pass; fi

# 8d. parameter cloaking: Rack 2, Django < 3.2 and Go < 1.17 split the query
# on ';' too and read "x=1;query=..." as a query parameter (graphql-ruby's
# controller merges it over the body); every request with a raw ';' in its
# query is refused, whatever follows it
MUT='mutation%20SemiMut%20%7B%20deleteRepository(id%3A%207)%20%7B%20id%20%7D%20%7D'
out=$(pcurl -H 'Content-Type: application/json' --data-binary '{"query":"query SemiQ { viewer { login } }"}' \
    "$URL?x=1;query=$MUT"); req
expect_has "';'-separated query beside a body refused" '|403' "$out"
out=$(pcurl -H 'Content-Type: application/json' \
    --data-binary '{"query":"query SemiA { viewer { login } } mutation SemiB { deleteRepository(id: 8) { id } }","operationName":"SemiA"}' \
    "$URL?x=1;operationName=SemiB"); req
expect_has "';'-separated operationName refused" '|403' "$out"
out=$(pcurl -H 'Content-Type: application/json' --data-binary '{"query":"query SemiV { viewer { login } }"}' \
    "$URL?x=1;variables=%7B%7D;extensions=%7B%7D"); req
expect_has "';'-separated variables and extensions refused" '|403' "$out"
out=$(pcurl "$URL?query=query%20SemiG%20%7B%20viewer%20%7B%20login%20%7D%20%7D&x=1;query=$MUT"); req
expect_has "GET with a ';'-separated second query refused" '|403' "$out"
expect_has "the refusal says why" "raw ';'" "$out"
for n in SemiMut SemiQ SemiA SemiB SemiV SemiG; do
    if seen "$n"; then fail "the ';'-cloaked request ($n) reached the upstream"; else pass; fi
done
# an encoded ';' is a byte of its value for every server: it passes
out=$(pcurl "$URL?query=query%20SemiEnc%20%7B%20viewer%20%7B%20login%20%7D%20%7D&x=1%3Bquery%3Dy"); req
expect_eq "an encoded ';' passes" '{"data":{}}|200' "$out"
if seen SemiEnc; then pass; else fail "the query with an encoded ';' did not reach the upstream"; fi

# 8c. an encoded body is not read (the server would decode what the proxy
# cannot see)
printf '{"query":"{ viewer { gzipped } }"}' | gzip -c >"$T/body.gz"
before=$(wc -l <"$T/gql.log")
out=$(pcurl -H 'Content-Type: application/json' -H 'Content-Encoding: gzip' \
    --data-binary @"$T/body.gz" "$URL"); req
expect_has "gzip body refused" 'Content-Encoding' "$out"
expect_eq "the gzip body never reached the upstream" "$before" "$(wc -l <"$T/gql.log")"

# 9. GET: a query passes with its parameters; a mutation is refused
out=$(pcurl -G --data-urlencode 'query=query GetViewer { viewer { login } }' "$URL"); req
expect_eq "GET query allowed" '{"data":{}}|200' "$out"
if seen 'GetViewer'; then pass; else fail "the GET query did not reach the upstream"; fi
out=$(pcurl -G --data-urlencode 'query=mutation GetMut { deleteRepository(id: 5) { id } }' "$URL"); req
expect_has "GET mutation refused" '|403' "$out"
if seen 'GetMut'; then fail "the GET mutation reached the upstream"; else pass; fi

# 9b. inside an inspected CONNECT tunnel (plaintext HTTP): the same decisions
# (each CONNECT has its own decision line too)
out=$(pcurl -p -H 'Content-Type: application/json' \
    --data-binary '{"query":"query Tunneled { viewer { login } }"}' "$URL"); req; req
expect_eq "tunnel query allowed" '{"data":{}}|200' "$out"
if seen 'Tunneled'; then pass; else fail "the tunneled query did not reach the upstream"; fi
out=$(pcurl -p -H 'Content-Type: application/json' \
    --data-binary '{"query":"mutation TunMut { deleteRepository(id: 6) { id } }"}' "$URL"); req; req
expect_has "tunnel mutation refused" '|403' "$out"
if seen 'TunMut'; then fail "the tunneled mutation reached the upstream"; else pass; fi
expect_log "tunnel mutation log" "GraphQL mutation TunMut {deleteRepository}"

# (the raw clients use builtins only: a child process would share the socket
# and make its owner ambiguous)
# 9c. keep-alive: two GraphQL requests on one connection, then a refused one
out=$(pcurl -H 'Content-Type: application/json' --data-binary '{"query":"query KA1 { viewer { login } }"}' "$URL" \
    --next -s -w '|%{http_code}|%{num_connects}' -x "http://127.0.0.1:$PX" -H 'Content-Type: application/json' \
    --data-binary '{"query":"query KA2 { viewer { login } }"}' "$URL"); req; req
expect_eq "keep-alive pair allowed on one connection" '{"data":{}}|200{"data":{}}|200|0' "$out"
if seen KA1 && seen KA2; then pass; else fail "the keep-alive pair did not both reach the upstream"; fi

# 10. the body arrives in pieces: held until complete, then forwarded once
"$RAW" -c '
    exec 3<>/dev/tcp/127.0.0.1/'"$PX"' || exit 1
    b="{\"query\":\"{ viewer { pieces } }\"}"
    printf "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: application/json\r\nContent-Length: %s\r\nConnection: close\r\n\r\n" "$1" "$2" "${#b}" >&3
    printf "%s" "${b:0:10}" >&3; read -r -t 0.3 x <&3; printf "%s" "${b:10}" >&3
    while IFS= read -r -t 3 line <&3 || [ -n "$line" ]; do printf "%s\n" "$line"; done' rawclient "$URL" "$G" >"$T/pieces.out" 2>/dev/null
req
expect_has "pieces answered" '200 OK' "$(cat "$T/pieces.out")"
expect_eq "pieces forwarded once, unchanged" 1 "$(grep -c '{ viewer { pieces } }' "$T/gql.log")"

# 10b. a chunked body in pieces, split inside a size line and inside data
"$RAW" -c '
    exec 3<>/dev/tcp/127.0.0.1/'"$PX"' || exit 1
    printf "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2" "$1" "$2" >&3
    read -r -t 0.2 x <&3; printf "3\r\n{\"query\":\"{ v" >&3
    read -r -t 0.2 x <&3; printf "iewer { chpieces } }\"}\r\n0\r\n\r\n" >&3
    while IFS= read -r -t 3 line <&3 || [ -n "$line" ]; do printf "%s\n" "$line"; done' rawclient "$URL" "$G" >"$T/chpieces.out" 2>/dev/null
req
expect_has "chunked pieces answered" '200 OK' "$(cat "$T/chpieces.out")"
expect_eq "chunked pieces forwarded once, unchanged" 1 "$(grep -c '{ viewer { chpieces } }' "$T/gql.log")"

# 11. a body cut short (the client closes mid-body): refused, nothing upstream
"$RAW" -c '
    exec 3<>/dev/tcp/127.0.0.1/'"$PX"' || exit 1
    printf "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"query\":\"{ viewer { cut } }\"" "$1" "$2" >&3
    read -r -t 0.3 x <&3; exec 3>&-' rawclient "$URL" "$G" 2>/dev/null
req
sleep 0.3
if seen cut; then fail "the cut body reached the upstream"; else pass; fi
expect_log "cut body refused" "the client closed before the end of the body"

# 11b. over TLS (the proxy terminates it with its CA): a query passes, a
# mutation does not
SURL="https://127.0.0.1:$GS/graphql"
out=$(pcurl --cacert "$T/data/ca.crt" -H 'Content-Type: application/json' \
    --data-binary '{"query":"query OverTls { viewer { login } }"}' "$SURL"); req; req
expect_eq "TLS query allowed" '{"data":{}}|200' "$out"
if grep -qF OverTls "$T/gqs.log"; then pass; else fail "the TLS query did not reach its upstream"; fi
out=$(pcurl --cacert "$T/data/ca.crt" -H 'Content-Type: application/json' \
    --data-binary '{"query":"mutation TlsMut { deleteRepository(id: 10) { id } }"}' "$SURL"); req; req
expect_has "TLS mutation refused" '|403' "$out"
if grep -qF TlsMut "$T/gqs.log"; then fail "the TLS mutation reached its upstream"; else pass; fi

# 11c. a reload while the second request of a kept-alive connection waits
# for its body: the request is busy, not idle at a request boundary - it is
# decided (one line) under the version it started with
"$RAW" -c '
    exec 3<>/dev/tcp/127.0.0.1/'"$PX"' || exit 1
    a="{\"query\":\"{ viewer { first } }\"}"
    b="{\"query\":\"{ viewer { reloaded } }\"}"
    printf "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: application/json\r\nContent-Length: %s\r\n\r\n%s" "$1" "$2" "${#a}" "$a" >&3
    while IFS= read -r -t 0.5 line <&3; do :; done
    printf "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: application/json\r\nContent-Length: %s\r\nConnection: close\r\n\r\n" "$1" "$2" "${#b}" >&3
    read -r -t 1 x <&3; printf "%s" "$b" >&3
    while IFS= read -r -t 3 line <&3 || [ -n "$line" ]; do printf "%s\n" "$line"; done' rawclient "$URL" "$G" >"$T/reload.out" 2>/dev/null &
RPID=$!
sleep 0.8
sed 's/fields: \[viewer, repository\]/fields: [viewer, repository, search]/' "$T/policy.yaml" >"$T/policy.next.yaml"
if reload_policy; then pass; else fail "the policy did not reload"; fi
wait "$RPID"
req; req
expect_has "held across a reload: answered" '200 OK' "$(cat "$T/reload.out")"
expect_eq "held across a reload: forwarded once" 1 "$(grep -c 'viewer { reloaded }' "$T/gql.log")"

# 12. audit mode: a mutation is forwarded and logged as audit; a document
# that cannot be read is forwarded too: audit mode grants every request, as
# `proviso eval` says (docs/semantics.md#audit)
AURL="http://127.0.0.1:$GA/graphql"
out=$(pcurl -H 'Content-Type: application/json' --data-binary '{"query":"mutation AuditMut { deleteRepository(id: 9) { id } }"}' "$AURL"); req
expect_eq "audit mutation forwarded" '{"data":{}}|200' "$out"
if grep -qF AuditMut "$T/gqa.log"; then pass; else fail "the audited mutation did not reach its upstream"; fi
expect_log "audit line" "AUDIT"
expect_log "audit line names the operation" "allowed in audit mode by policy 'audited': GraphQL mutation AuditMut {deleteRepository}"
# a batch whose only audit-mode pass is its first operation: the request is
# audited (never a plain ALLOWED line, which would also let credential
# placeholders be resolved for it), and the line names that operation
out=$(pcurl -H 'Content-Type: application/json' --data-binary '[{"query":"mutation AuditBatch { deleteRepository(id: 10) { id } }"},{"query":"{ viewer { login } }"}]' "$AURL"); req
expect_eq "audit batch forwarded" '{"data":{}}|200' "$out"
expect_log "audit batch: AUDIT, naming the audited operation" "GraphQL mutation AuditBatch {deleteRepository} (one of a batch of 2)"
out=$(pcurl -H 'Content-Type: application/json' --data-binary '{"query":"mutation AuditBad { deleteRepository("}' "$AURL"); req
expect_eq "audit: an unreadable document is forwarded (semantics.md#audit)" '{"data":{}}|200' "$out"
if grep -qF AuditBad "$T/gqa.log"; then pass; else fail "the unreadable document did not reach the audit upstream"; fi

# 13. differential: 40 generated documents (types, names, aliases, root
# fragments, inline fragments) - the proxy's answer, judged by the upstream,
# equals `proviso eval` on the operation tests/gql_driver reads
"$PY" - "$T/diff.jsonl" <<'PYEOF'
import json, random, sys
r = random.Random(28)
F = ["viewer", "repository", "viewer", "repository", "organization", "deleteRepository",
     "__typename"]
out = open(sys.argv[1], "w")
for i in range(40):
    t = r.choice(["query", "query", "mutation", ""])
    fields = [r.choice(F) for _ in range(r.randint(1, 3))]
    sel = []
    for f in fields:
        x = r.random()
        if x < 0.3:
            sel.append("%s: %s { id }" % (r.choice(F), f))
        elif x < 0.5:
            sel.append("... on Query { %s { id } }" % f)
        else:
            sel.append("%s { id }" % f)
    frag = ""
    if r.random() < 0.4:
        sel.append("...Fr")
        frag = " fragment Fr on Query { %s { id } }" % r.choice(F)
    head = (t + " D%d " % i) if t else ""
    doc = "%s{ %s }%s" % (head, " ".join(sel), frag)
    out.write(json.dumps({"doc": doc, "op": None}) + "\n")
PYEOF
i=0
agree=0
while IFS= read -r line; do
    doc=$(printf '%s' "$line" | jq -r .doc)
    op=$(printf '%s\n' "$line" | "$BUILD/tests/gql_driver")
    body=$(jq -cn --arg q "$doc" --arg m "marker$i." '{query: $q, variables: {m: $m}}')
    out=$(gq "$body"); req
    if grep -qF "marker$i." "$T/gql.log"; then got=allow; else got=deny; fi
    if [ "$(printf '%s' "$op" | jq -r .ok)" != true ]; then
        want=deny
    else
        args="--operation-type $(printf '%s' "$op" | jq -r .type) --fields $(printf '%s' "$op" | jq -r '.fields | join(",")')"
        name=$(printf '%s' "$op" | jq -r '.name // empty')
        [ -n "$name" ] && args="$args --operation-name $name"
        # shellcheck disable=SC2086
        if "$BUILD/proviso" eval --policy "$T/policy.yaml" --binary /usr/bin/curl --method POST \
            --url "$URL" --ip 127.0.0.1 --test-allow-loopback $args >/dev/null 2>&1; then
            want=allow
        else
            want=deny
        fi
    fi
    if [ "$got" = "$want" ]; then agree=$((agree + 1)); else fail "differential $i: proxy $got, eval $want: $doc"; fi
    i=$((i + 1))
done <"$T/diff.jsonl"
expect_eq "proxy and proviso eval agree on generated documents" 40 "$agree"
nallow=$(grep -c 'marker[0-9]*\.' "$T/gql.log")
echo "differential: 40 documents, $nallow allowed"
if [ "$nallow" -ge 5 ] && [ "$nallow" -le 35 ]; then pass; else fail "differential mix: $nallow of 40 allowed"; fi

# one decision line per request, and exactly the allowed ones upstream
sleep 0.2
total=$(grep -c -E ' (ALLOWED|DENIED|AUDIT) ' "$T/proxy.log")
expect_eq "one decision line per request" "$NREQ" "$total"
expect_eq "upstream requests" "$((13 + nallow))" "$(wc -l <"$T/gql.log")"
finish
