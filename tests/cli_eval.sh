#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cli_eval.sh - make check: the URLs `proviso eval` accepts (docs/semantics.md#eval)
# and the path, query and identity clauses an independent implementer trips on.
set -u
src=${PV_SRCDIR:-$(dirname "$0")/..}
bld=${PV_BUILDDIR:-.}
pv="$bld/proviso"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/p.yaml" <<'Y'
version: 1
network_policies:
  r:
    endpoints:
    - host: h.example.com
      ports: [443, 8443]
      protocol: rest
      enforcement: enforce
      rules:
      - allow: {method: GET, path: "/a/**/b"}
      - allow: {method: GET, path: "/c/b/"}
      - allow: {method: GET, path: "/x/*"}
      - allow: {method: GET, path: "/p/a%3Bx"}
      - allow: {method: GET, path: "/q", query: {k: "a?c"}}
      - allow: {method: GET, path: "/r", query: {k: "[ab]"}}
      - allow: {method: GET, path: "/s", query: {k: "a\\*"}}
    binaries: [{path: "/usr/*/curl"}, {path: "/opt/**/curl"}]
Y
fails=0
# want: exit status (0 allow, 1 deny, 2 invalid) then URL [binary]
check() {
    want=$1 url=$2 bin=${3:-/usr/bin/curl}
    out=$("$pv" eval --policy "$tmp/p.yaml" --binary "$bin" --method GET --url "$url" \
        --ip 93.184.216.34 2>&1)
    got=$?
    if [ "$got" != "$want" ]; then
        echo "FAIL: $url by $bin: exit $got, want $want: $out"
        fails=$((fails + 1))
    fi
}
# #eval: schemes, authority forms, default ports, fragments, empty paths
check 0 "https://h.example.com/a/b"
check 0 "HTTPS://H.EXAMPLE.COM./a/b"
check 0 "https://h.example.com:8443/a/b#frag"
check 1 "http://h.example.com/a/b"
check 1 "https://h.example.com"
check 1 "https://h.example.com?k=abc"
check 2 "ftp://h.example.com/a/b"
check 2 "https://user@h.example.com/a/b"
check 2 "https://h.example.com:0/a/b"
check 2 "https://h.example.com:65536/a/b"
check 2 "h.example.com/a/b"
# #path-glob: /a/**/b matches zero segments; * matches the final empty segment only
check 0 "https://h.example.com/a/x/y/b"
check 0 "https://h.example.com/x/"
check 1 "https://h.example.com/x"
# #path-dot-trailing: a trailing . or .. leaves the slash
check 0 "https://h.example.com/c/b/."
check 0 "https://h.example.com/c/b/x/.."
# #path-params: a decoded %3B starts no parameters, a literal ; does
check 0 "https://h.example.com/p/a%3Bx"
check 1 "https://h.example.com/p/a;x"
# #query-glob: ? one byte, [...] a class, \ escapes
check 0 "https://h.example.com/q?k=abc"
check 1 "https://h.example.com/q?k=ac"
check 0 "https://h.example.com/r?k=b"
check 1 "https://h.example.com/r?k=%5Bab%5D"
check 0 "https://h.example.com/s?k=a*"
check 1 "https://h.example.com/s?k=ab"
# #query-parse: %00 is invalid, %01 is not, on routes with or without query matchers
check 1 "https://h.example.com/q?k=a%00c"
check 1 "https://h.example.com/a/b?z=%00"
check 1 "https://h.example.com/a/b?z=%zz"
check 0 "https://h.example.com/a/b?z=%01"
# #identity: a non-canonical path matches no pattern
check 0 "https://h.example.com/a/b" /usr/bin/curl
check 1 "https://h.example.com/a/b" //usr/bin/curl
check 1 "https://h.example.com/a/b" /usr//curl
check 1 "https://h.example.com/a/b" /usr/./curl
# #binary-glob: /opt/**/curl matches /opt/curl (** between slashes: zero or more segments)
check 0 "https://h.example.com/a/b" /opt/curl
check 0 "https://h.example.com/a/b" /opt/x/y/curl
check 1 "https://h.example.com/a/b" /optcurl
# #canonical-path step 1: the byte check covers the query as well as the path
check 1 "https://h.example.com/a/b?z=a b"
check 1 "https://h.example.com/a/b?z=$(printf '\001')"
check 1 "https://h.example.com/a/b?z=$(printf '\303\251')"
check 0 "https://h.example.com/a/b?z=%C3%A9"
# #eval: a port is decimal digits, leading zeros allowed; an empty host is
# invalid input (2), a non-empty invalid host is denied (1, #host-dns)
check 0 "https://h.example.com:0443/a/b"
check 0 "https://h.example.com:08443/a/b"
check 2 "https://:443/a/b"
check 2 "https:///a/b"
check 1 "https://h..example.com/a/b"
# #test-loopback: under the switch a target_sandbox whose resolved_ips are all
# loopback is resolved (rule 3 does not deny; rule 1 still needs h to name the
# loopback address as an IP literal); without it the endpoint is unresolved
cat >"$tmp/peer.yaml" <<'Y'
version: 1
network_policies:
  peer:
    endpoints: [{target_sandbox: peer-a, resolved_ips: [127.0.0.1], port: 8080}]
    binaries: [{path: /usr/bin/curl}]
Y
peer() {
    want=$1 why=$2
    shift 2
    out=$("$pv" eval --policy "$tmp/peer.yaml" --binary /usr/bin/curl "$@" 2>&1)
    got=$?
    case "$got:$out" in
    "$want:$why"*) ;;
    *)
        echo "FAIL: peer $*: exit $got, want $want ($why): $out"
        fails=$((fails + 1))
        ;;
    esac
}
peer 0 allow --connect 127.0.0.1:8080 --test-allow-loopback
peer 0 allow --connect peer.local:8080 --test-allow-loopback
peer 1 "deny: dest_blocked" --connect peer.local:8080 --ip 127.0.0.1 --test-allow-loopback
peer 1 "deny: dest_unresolved" --connect peer.local:8080
peer 1 "deny: dest_blocked" --connect 127.0.0.1:8080
# GraphQL operations (docs/semantics.md#graphql): --operation-type, --operation-name,
# --fields, --persisted-id; exit status, then the reason the output starts with
cat >"$tmp/gql.yaml" <<'Y'
version: 1
network_policies:
  gh:
    endpoints:
    - host: api.github.com
      port: 443
      path: /graphql
      protocol: graphql
      enforcement: enforce
      persisted_queries: allow_registered
      graphql_persisted_queries:
        h1: {operation_type: query, fields: [viewer]}
      rules:
      - allow: {operation_type: query, fields: [viewer, repository]}
      - allow: {operation_type: mutation, operation_name: "Issue*", fields: [createIssue]}
      deny_rules:
      - {operation_type: mutation, fields: [deleteRepository]}
    binaries: [{path: /usr/bin/gh}]
Y
gql() {
    want=$1 why=$2 method=$3
    shift 3
    out=$("$pv" eval --policy "$tmp/gql.yaml" --binary /usr/bin/gh --method "$method" \
        --url https://api.github.com/graphql --ip 93.184.216.34 "$@" 2>&1)
    got=$?
    case "$got:$out" in
    "$want:$why"*) ;;
    *)
        echo "FAIL: gql $method $*: exit $got, want $want ($why): $out"
        fails=$((fails + 1))
        ;;
    esac
}
gql 0 allow POST --operation-type query --fields viewer,repository
gql 0 allow GET --operation-type query --fields viewer
gql 1 "deny: l7_not_permitted: GraphQL query (anonymous) {viewer,search}" POST \
    --operation-type query --fields viewer,search
gql 0 allow POST --operation-type mutation --operation-name IssueNew --fields createIssue
gql 1 "deny: l7_not_permitted" POST --operation-type mutation --fields createIssue
gql 1 "deny: l7_deny_rule" POST --operation-type mutation --operation-name IssueX \
    --fields createIssue,deleteRepository
gql 1 "deny: graphql_bad_method" GET --operation-type mutation --operation-name IssueNew \
    --fields createIssue
gql 1 "deny: graphql_bad_method" PUT --operation-type query --fields viewer
gql 1 "deny: graphql_no_operation" POST
gql 1 "deny: graphql_bad_operation" POST --operation-type query --fields "viewer,"
gql 1 "deny: graphql_bad_operation" POST --operation-type query --fields "v*"
gql 0 allow POST --persisted-id h1
gql 1 "deny: graphql_persisted_unknown" POST --persisted-id h2
# A unit that does not read operations decides an unreadable one as if it
# carried none (#graphql-names), and a GraphQL deny rule does not match a
# hash-only id its registry does not resolve (#graphql-deny): a rest
# endpoint on the same path grants both
cp "$tmp/gql.yaml" "$tmp/gqls.yaml"
cat >>"$tmp/gqls.yaml" <<'Y'
  rest:
    endpoints:
    - {host: api.github.com, port: 443, protocol: rest, enforcement: enforce, access: read-write}
    binaries: [{path: /usr/bin/gh}]
Y
cp "$tmp/gql.yaml" "$tmp/gql-only.yaml"
cp "$tmp/gqls.yaml" "$tmp/gql.yaml"
gql 0 allow POST --operation-type query --fields "v*"
gql 0 allow POST --persisted-id h2
gql 1 "deny: l7_deny_rule" POST --operation-type mutation --fields deleteRepository
cp "$tmp/gql-only.yaml" "$tmp/gql.yaml"
gql 2 "proviso eval: --operation-type must be" POST --operation-type Query --fields viewer
gql 2 "proviso eval: give --operation-type" POST --operation-type query
gql 2 "proviso eval: give --operation-type" POST --persisted-id h1 --fields viewer
if [ "$fails" -ne 0 ]; then
    echo "cli_eval.sh: $fails failure(s)"
    exit 1
fi
echo "cli_eval.sh: ok"
