#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# proxy_identity.sh - the requesting binary: the socket owner's executable and
# its ancestors (found through /proc), binary globs ('*' stays in a segment,
# '**' crosses), SHA-256 trust-on-first-use pins (a changed binary is denied)
# and command-line paths that never grant.
. "$(dirname "$0")/proxy_lib.sh"

start_upstream A
mkdir -p "$T/launch" "$T/g/sub" "$T/h/sub" "$T/pin"
cp "$(readlink -f /bin/sh)" "$T/launch/launcher"
cp "$CURL" "$T/g/tool"
cp "$CURL" "$T/g/sub/tool"
cp "$CURL" "$T/h/sub/tool"
cp "$CURL" "$T/pin/tool"

cat >"$T/policy.yaml" <<EOF
version: 1
network_policies:
  curl_only:
    endpoints:
      - host: 127.0.0.1
        port: $A_HTTP
    binaries:
      - path: /usr/bin/curl
      - path: $T/launch/launcher
      - path: $T/g/*
      - path: $T/h/**
      - path: $T/pin/tool
      - path: $T/bin/notgranted
EOF
start_proxy
U=http://127.0.0.1:$A_HTTP

out=$(pcurl "$U/a")
expect_has "curl (exe) allowed" "|200" "$out"
out=$(pwget "$U/b")
expect_has "wget (exe) denied" '"error":"policy_denied"' "$out"

# an allowed ancestor grants: the launcher forks wget (no exec shortcut)
out=$("$T/launch/launcher" -c "$WGET -q -T 5 -t 1 -O - -e use_proxy=yes -e http_proxy=http://127.0.0.1:$PX $U/via-parent; exit \$?")
expect_has "wget allowed through an allowed ancestor" "request: GET /via-parent" "$out"
expect_log "ancestor: the log names the actual exe" "HTTP:GET [INFO] ALLOWED /usr/bin/wget("

# globs: '*' stays within one path segment, '**' crosses
out=$("$T/g/tool" -s --max-time 5 -x "http://127.0.0.1:$PX" -w '|%{http_code}' "$U/glob1")
expect_has "glob dir/* matches a direct child" "|200" "$out"
out=$("$T/g/sub/tool" -s --max-time 5 -x "http://127.0.0.1:$PX" -w '|%{http_code}' "$U/glob2")
expect_has "glob dir/* does not cross segments" "|403" "$out"
out=$("$T/h/sub/tool" -s --max-time 5 -x "http://127.0.0.1:$PX" -w '|%{http_code}' "$U/glob3")
expect_has "glob dir/** crosses segments" "|200" "$out"

# command-line paths never grant
out=$(pwget "$U/cmdline" -o "$T/bin/notgranted")
expect_has "a policy path on the command line does not grant" '"error":"policy_denied"' "$out"

# trust on first use: the pinned image may not change
out=$("$T/pin/tool" -s --max-time 5 -x "http://127.0.0.1:$PX" -w '|%{http_code}' "$U/pin1")
expect_has "pin: first use allowed (pinned)" "|200" "$out"
out=$("$T/pin/tool" -s --max-time 5 -x "http://127.0.0.1:$PX" -w '|%{http_code}' "$U/pin2")
expect_has "pin: same image allowed again" "|200" "$out"
cp "$WGET" "$T/pin/tool"
out=$("$T/pin/tool" -q -T 5 -t 1 --content-on-error -O - -e use_proxy=yes \
    -e "http_proxy=http://127.0.0.1:$PX" "$U/pin3")
expect_has "pin: changed binary denied" "binary integrity check failed" "$out"
expect_log "pin: log reason" "Binary integrity violation: $T/pin/tool changed since it was first seen"

# one connection, one route: the route is the one by which the resolved
# address is admitted. curl alone has an inspected route; the launcher (an
# ancestor) reaches the same address opaquely, so under the launcher the
# connection is opaque (docs/semantics.md#identity-any): a non-canonical
# target reaches the upstream as written, in a tunnel and forwarded.
# route_policy LAUNCHER_RULE: curl's inspected rule for 127.0.0.1 plus the
# launcher's rule (YAML, indented as a network policy) as the next policy
route_policy() {
    cat >"$T/policy.next.yaml" <<EOF
version: 1
network_policies:
  curl_l7:
    endpoints:
      - host: 127.0.0.1
        port: $A_HTTP
        protocol: rest
        enforcement: enforce
        rules:
          - allow:
              method: GET
              path: /a/**
    binaries:
      - path: /usr/bin/curl
$1
EOF
}
route_policy "  launcher_l4:
    endpoints:
      - host: 127.0.0.1
        port: $A_HTTP
    binaries:
      - path: $T/launch/launcher"
reload_policy || fail "reload for the route cases"
for mode in tunnel forward; do
    p=""
    [ $mode = tunnel ] && p=-p
    out=$(pcurl $p --path-as-is "$U/../x")
    expect_has "route: curl alone, $mode, non-canonical target refused" "|400" "$out"
    out=$(pcurl $p "$U/b")
    expect_has "route: curl alone, $mode, inspected rules apply" '"error":"policy_denied"' "$out"
    out=$(pcurl $p "$U/a/x")
    expect_has "route: curl alone, $mode, an allowed path" "request: GET /a/x" "$out"
    out=$("$T/launch/launcher" -c "'$CURL' -s --max-time 5 -x http://127.0.0.1:$PX $p --path-as-is '$U/../x'; exit \$?")
    expect_has "route: under the launcher, $mode is opaque (target as written)" "request: GET /../x" "$out"
    out=$(pcurl $p --path-as-is "$U/a/./x")
    expect_has "route: curl alone, $mode, the target is canonicalised" "request: GET /a/x" "$out"
    # a forward request is decided per request: the first identity entry
    # that allows it (here curl, inspected) shapes the target
    [ $mode = tunnel ] || continue
    out=$("$T/launch/launcher" -c "'$CURL' -s --max-time 5 -x http://127.0.0.1:$PX $p --path-as-is '$U/a/./x'; exit \$?")
    expect_has "route: under the launcher, the tunnel keeps a canonicalisable target as written" "request: GET /a/./x" "$out"
done

# the test switch admits loopback only for a unit that names it: the
# launcher's hostless allowed_ips endpoint never reaches 127.0.0.1, so the
# tunnel stays on curl's inspected route (a public stand-in address once
# made it opaque)
route_policy "  launcher_hostless:
    endpoints:
      - port: $A_HTTP
        allowed_ips: [93.184.216.0/24]
    binaries:
      - path: $T/launch/launcher"
reload_policy || fail "reload for the hostless case"
out=$("$T/launch/launcher" -c "'$CURL' -s --max-time 5 -w '|%{http_code}' -x http://127.0.0.1:$PX -p '$U/b'; exit \$?")
expect_has "route: a hostless allowed_ips unit never opens loopback" "|403" "$out"
expect_not "route: ... and nothing reached the upstream" "request: GET /b" "$out"
out=$("$T/launch/launcher" -c "'$CURL' -s --max-time 5 -w '|%{http_code}' -x http://127.0.0.1:$PX -p '$U/a/y'; exit \$?")
expect_has "route: the literal unit still does" "request: GET /a/y" "$out"

# a protocol upgrade is carried only by an opaque route: when one identity
# entry (the raw client) is inspected and another (this shell, an ancestor)
# reaches the address opaquely, the upgrade goes through the opaque one
SH=$(readlink -f /proc/$$/exe)
upgrade_policy() {
    cat >"$T/policy.next.yaml" <<EOF
version: 1
network_policies:
  raw_l7:
    endpoints:
      - host: 127.0.0.1
        port: $A_HTTP
        protocol: rest
        enforcement: enforce
        access: full
    binaries:
      - path: $RAW
EOF
    [ "$1" = with_shell ] && cat >>"$T/policy.next.yaml" <<EOF
  shell_l4:
    endpoints:
      - host: 127.0.0.1
        port: $A_HTTP
    binaries:
      - path: $SH
EOF
    reload_policy || fail "reload for the upgrade case ($1)"
}
UPG="GET http://127.0.0.1:$A_HTTP/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
upgrade_policy inspected_only
out=$(raw_send "$UPG")
expect_has "upgrade: an incomplete WebSocket handshake is refused on an inspected route" "invalid WebSocket upgrade: exactly one Sec-WebSocket-Key is required" "$out"
upgrade_policy with_shell
out=$(raw_send "$UPG")
expect_has "upgrade: carried by the entry with an opaque route" "request: GET /ws" "$out"

finish
