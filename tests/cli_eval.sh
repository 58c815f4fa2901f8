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
    binaries: [{path: "/usr/*/curl"}]
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
if [ "$fails" -ne 0 ]; then
    echo "cli_eval.sh: $fails failure(s)"
    exit 1
fi
echo "cli_eval.sh: ok"
