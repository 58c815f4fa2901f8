#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cli_validate.sh - make check: `proviso validate` reports every error with
# its exact location (FILE:LINE:COL) and message, one line each in line
# order (warnings before the verdict), and exits 2
# when any file is invalid (0 when all are valid); --format json carries the
# same lines. Each row below is a small policy and the one line it must
# print, so a wrong line or column, a missing prefix or a changed message
# fails here.
set -u
bld=${PV_BUILDDIR:-.}
pv="$bld/proviso"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fails=0
n=0
ok() { n=$((n + 1)); printf 'ok   %s\n' "$1"; }
bad() { n=$((n + 1)); printf 'FAIL %s\n' "$1"; fails=$((fails + 1)); }

HEAD='version: 1\nnetwork_policies:\n  r:\n    endpoints:\n'
BINS='    binaries:\n      - path: /usr/bin/curl\n'

# case NAME FILE EXIT EXPECTED-LINE: validate FILE; the exit code and the
# whole of stdout must be exactly this (diagnostics go to stdout, docs/cli.md),
# and nothing goes to stderr
case_() {
    "$pv" validate "$2" >out 2>err
    rc=$?
    if [ "$rc" -ne "$3" ]; then
        bad "$1: exit $rc, want $3"
        sed 's/^/     | /' err
        return
    fi
    printf '%s\n' "$4" >want
    if cmp -s out want && [ ! -s err ]; then
        ok "$1"
    else
        bad "$1: output differs"
        diff want out | sed 's/^/     | /'
        sed 's/^/     stderr| /' err
    fi
}

printf "${HEAD}      - host: a.example.com\n        port: 443\n${BINS}" >ok.yaml
"$pv" validate ok.yaml >out 2>err
if [ $? -eq 0 ] && [ "$(cat out)" = "ok.yaml: ok" ] && [ ! -s err ]; then
    ok "a valid policy: 'FILE: ok' on stdout, exit 0"
else
    bad "a valid policy"
fi

printf "${HEAD}      - host: a.example.com\n        port: 443\n        bogus: 1\n${BINS}" >unk.yaml
case_ "unknown field" unk.yaml 2 "unk.yaml:7:9: unknown field 'bogus' in endpoint"

printf "${HEAD}      - host: a.example.com\n        port: 443\n        port: 80\n${BINS}" >dup.yaml
case_ "duplicate key" dup.yaml 2 "dup.yaml:7:9: duplicate key 'port'"

printf 'version: 1\nnetwork_policies:\n  r: [\n' >syn.yaml
case_ "YAML syntax error" syn.yaml 2 \
    "syn.yaml:4:1: invalid YAML: did not find expected node content while parsing a flow node"

printf "${HEAD}      - host: a.example.com\n        port: 70000\n${BINS}" >port.yaml
case_ "port out of range" port.yaml 2 "port.yaml:6:15: port 70000 is out of range (0..65535)"

printf "${HEAD}      - host: h.example.com\n        port: 443\n        allowed_ips: [127.0.0.0/8]\n${BINS}" >loop.yaml
case_ "allowed_ips in an always-blocked range" loop.yaml 2 \
    "loop.yaml:7:23: network policy 'r': allowed_ips entry 127.0.0.0/8 falls within always-blocked range (loopback/link-local/unspecified); remove this entry — SSRF hardening prevents traffic to these destinations regardless of policy"

printf "${HEAD}      - host: 010.1.1.1\n        port: 443\n${BINS}" >ip.yaml
case_ "non-canonical IPv4 literal" ip.yaml 2 \
    "ip.yaml:5:15: network policy 'r': endpoint host '010.1.1.1' is a non-canonical IP literal; write it as '8.1.1.1'"

printf "${HEAD}      - host: a.example.com\n        port: 443\n        protocol: rest\n        enforcement: Enforce\n        access: read-only\n${BINS}" >enf.yaml
case_ "enforcement: Enforce (values are case-sensitive)" enf.yaml 2 \
    "enf.yaml:8:22: network policy 'r': endpoint 0 has invalid L7 configuration: unknown enforcement value 'Enforce' (expected enforce or audit)"

printf "${HEAD}      - host: a.example.com\n        port: 443\n        protocol: rest\n        enforcement: enforce\n        tls: skip\n        access: read-only\n${BINS}" >tls.yaml
case_ "enforced L7 with tls: skip" tls.yaml 2 \
    "tls.yaml:9:14: network policy 'r': endpoint 0 has invalid L7 configuration: tls: skip cannot be enforced (the proxy does not inspect skipped TLS, so the rules would never apply); use enforcement: audit or remove tls: skip"

printf "${HEAD}      - host: a.example.com.\n        port: 443\n        protocol: tcp\n${BINS}" >dot.yaml
case_ "trailing dot on a tcp host" dot.yaml 2 \
    "dot.yaml:5:15: network policy 'r': protocol tcp endpoint has invalid DNS host selector 'a.example.com.': omit the trailing DNS root dot"

printf "${HEAD}      - host: a.example.com.\n        port: 443\n${BINS}" >dot_ok.yaml
"$pv" validate dot_ok.yaml >out 2>err
if [ $? -eq 0 ]; then ok "a trailing dot elsewhere is dropped at load"; else bad "trailing dot elsewhere"; fi

printf '{"version": 1,\n "network_policies": {"r": {"endpoints": [{"host": "a.example.com", "port": "x"}],\n  "binaries": [{"path": "/usr/bin/curl"}]}}}\n' >j.json
case_ "JSON input: located in the JSON text" j.json 2 "j.json:2:77: field 'port' must be an integer"

# several files: every file is reported, the exit is 2 if any is invalid
"$pv" validate ok.yaml port.yaml >out 2>err
rc=$?
if [ $rc -eq 2 ] && grep -qx "ok.yaml: ok" out &&
    grep -qx "port.yaml:6:15: port 70000 is out of range (0..65535)" out; then
    ok "two files, one invalid: both reported, exit 2"
else
    bad "two files, one invalid (exit $rc)"
fi

"$pv" validate ok.yaml missing.yaml >out 2>err
rc=$?
if [ $rc -eq 2 ] && grep -qF "missing.yaml: No such file or directory" err; then
    ok "a missing file: named with the system's words, exit 2"
else
    bad "a missing file (exit $rc)"
    sed 's/^/     | /' err
fi

# JSON: the same line in the diagnostics, valid false
"$pv" validate --format json unk.yaml >out 2>err
rc=$?
if [ $rc -eq 2 ] && command -v jq >/dev/null &&
    [ "$(jq -r '.valid' out)" = "false" ] &&
    [ "$(jq -r '.files[0].diagnostics[0]' out)" = "unk.yaml:7:9: unknown field 'bogus' in endpoint" ]; then
    ok "--format json: the exact diagnostic, valid false, exit 2"
else
    bad "--format json (exit $rc)"
    sed 's/^/     | /' out
fi

# JSON: each error is also an object like a warning (code, location, message)
"$pv" validate --format json unk.yaml >out 2>err
if command -v jq >/dev/null &&
    [ "$(jq -r '.files[0].errors[0] | .code + "|" + .location + "|" + .message' out)" = \
        "unknown-field|unk.yaml:7:9|unknown field 'bogus' in endpoint" ]; then
    ok "--format json: errors are {code, location, message} objects"
else
    bad "--format json: errors as objects"
    sed 's/^/     | /' out
fi

# a misspelled method loads (it is a valid token) but the rule is dead: a
# warning with the closest method; --strict makes it an error
printf "${HEAD}      - host: api.example.com\n        port: 443\n        protocol: rest\n\
        enforcement: enforce\n        rules:\n          - allow: {method: GTE, path: /x}\n${BINS}" >gte.yaml
case_ "method GTE: did you mean GET (warning, exit 0)" gte.yaml 0 "gte.yaml:10:29: warning: rule 'r': unknown method 'GTE' (did you mean 'GET'?): no request matches this rule [unknown-method]
gte.yaml: ok"
case_strict() { # like case_, with --strict
    "$pv" validate --strict "$2" >out 2>err
    rc=$?
    printf '%s\n' "$4" >want
    if [ "$rc" -eq "$3" ] && cmp -s out want && [ ! -s err ]; then
        ok "$1"
    else
        bad "$1: exit $rc, want $3"
        diff want out | sed 's/^/     | /'
    fi
}
case_strict "method GTE with --strict: the warning, then the verdict, exit 2" gte.yaml 2 \
    "gte.yaml:10:29: warning: rule 'r': unknown method 'GTE' (did you mean 'GET'?): no request matches this rule [unknown-method]
gte.yaml: --strict: 1 warning treated as error"

# warnings come in line order, whatever the order of the rules' keys (the
# walk goes by key: 'b' is checked before 'z'), and before the verdict
printf 'version: 1\nnetwork_policies:\n  z:\n    endpoints:\n      - {host: "*.a.example.com", port: 443}\n    binaries: [{path: /usr/bin/curl}]\n  b:\n    endpoints:\n      - {host: "*.b.example.com", port: 443}\n    binaries: [{path: /usr/bin/curl}]\n' >order.yaml
case_ "warnings in line order, then ok" order.yaml 0 "order.yaml:5:16: warning: rule 'z': wildcard host '*.a.example.com' matches every name it covers, now and later [wildcard-host]
order.yaml:9:16: warning: rule 'b': wildcard host '*.b.example.com' matches every name it covers, now and later [wildcard-host]
order.yaml: ok"

# an always-blocked (link-local, metadata) host: a warning, not an error
printf "${HEAD}      - host: 169.254.169.254\n        port: 80\n      - host: metadata.google.internal\n        port: 80\n${BINS}" >meta.yaml
case_ "link-local and metadata hosts warn" meta.yaml 0 "meta.yaml:5:15: warning: rule 'r': host '169.254.169.254' is link-local or a cloud metadata name: the proxy always blocks it, so this endpoint reaches nothing (the prover reports granting it as link_local_reach) [blocked-host]
meta.yaml:7:15: warning: rule 'r': host 'metadata.google.internal' is link-local or a cloud metadata name: the proxy always blocks it, so this endpoint reaches nothing (the prover reports granting it as link_local_reach) [blocked-host]
meta.yaml: ok"

# '?' in a path glob is one character, not a query; an escaped one is not warned
printf "${HEAD}      - host: api.example.com\n        port: 443\n        protocol: rest\n\
        enforcement: enforce\n        rules:\n          - allow: {method: GET, path: '/x?y=1'}\n\
          - allow: {method: GET, path: '/x\\\\?y'}\n${BINS}" >qm.yaml
case_ "a '?' in a path warns" qm.yaml 0 "qm.yaml:10:40: warning: rule 'r': path '/x?y=1': '?' in a path glob matches any one character, it does not start a query (match the query with 'query:') [path-question-mark]
qm.yaml: ok"

# a rule path without its leading '/' matches nothing: an error
printf "${HEAD}      - host: api.example.com\n        port: 443\n        protocol: rest\n\
        enforcement: enforce\n        rules:\n          - allow: {method: GET, path: api/v1}\n${BINS}" >rel.yaml
case_ "a rule path without '/' is refused" rel.yaml 2 "rel.yaml:10:40: network policy 'r': endpoint 0 has invalid L7 configuration: rules[0].allow.path 'api/v1' must start with '/' or '**': a request path always starts with '/', so it would match nothing"

# a host written as a URL: the message says what to write
printf "${HEAD}      - host: https://api.example.com:8443/v1\n        port: 443\n${BINS}" >url.yaml
case_ "a URL as host: a hint" url.yaml 2 "url.yaml:5:15: network policy 'r': invalid host pattern 'https://api.example.com:8443/v1': invalid character 0x3a (a host is letters, digits, '-', '_', '.' and '*'); a host is a name, not a URL: write host: api.example.com and port: 8443"

# binary for binaries: the singular gets its did-you-mean
printf "${HEAD}      - host: api.example.com\n        port: 443\n    binary:\n      - path: /usr/bin/curl\n" >sing.yaml
case_ "binary: did you mean binaries" sing.yaml 2 \
    "sing.yaml:7:5: unknown field 'binary' in network policy 'r' (did you mean 'binaries'?)"

# one run reports the typos and what validation finds: "access: readonly"
# beside "enforcment" and "binary"
printf "${HEAD}      - host: a.example\n        port: 443\n        protocol: rest\n\
        enforcment: enforce\n        access: readonly\n    binary:\n      - path: /usr/bin/curl\n" >multi.yaml
case_ "every error in one run, in line order" multi.yaml 2 "multi.yaml:8:9: unknown field 'enforcment' in endpoint (did you mean 'enforcement'?)
multi.yaml:9:17: network policy 'r': endpoint 0 has invalid L7 configuration: unknown access value 'readonly' (expected read-only, read-write, or full)
multi.yaml:10:5: unknown field 'binary' in network policy 'r' (did you mean 'binaries'?)"

# the shipped examples validate without a warning (exit 0 under --strict)
src=${PV_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
"$pv" validate --strict "$src/examples/policy.yaml" "$src/examples/boundary.yaml" >out 2>err
rc=$?
if [ $rc -eq 0 ] && ! grep -q warning out; then
    ok "examples/policy.yaml and boundary.yaml: no warnings"
else
    bad "examples validate with warnings (exit $rc)"
    sed 's/^/     | /' out
fi

echo "cli_validate.sh: $n checks, $fails failures"
[ "$fails" -eq 0 ]
