#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sandbox_identity.sh - tests/e2e/proxy_identity.sh's cases inside
# `proviso sandbox run`: the sandbox's proxy names the binary from the
# sandbox's own /proc (its PID namespace) and socket table. The executable
# and its ancestors, '*' and '**' binary globs, command-line paths that never
# grant, and the SHA-256 pin of an image changed (from the host) while the
# sandbox runs. Judged by the upstream's answers and the decision log.
# Needs root; skipped (77) otherwise.
. "$(dirname "$0")/proxy_lib.sh"
if [ "$(id -u)" != 0 ] || ! unshare --net true 2>/dev/null; then
    echo "SKIP: sandbox_identity.sh needs root and namespaces"
    exit 77
fi
id sandbox >/dev/null 2>&1 ||
    useradd --system --user-group --home-dir /sandbox --shell /usr/sbin/nologin sandbox || exit 1
chmod 755 "$T"
start_upstream A
R=$T/ro
mkdir -p "$R/launch" "$R/g/sub" "$R/h/sub" "$R/pin" "$T/work"
chmod 777 "$T/work"
cp "$(readlink -f /bin/sh)" "$R/launch/launcher"
cp "$CURL" "$R/g/tool"
cp "$CURL" "$R/g/sub/tool"
cp "$CURL" "$R/h/sub/tool"
cp "$CURL" "$R/pin/tool"
cat >"$T/policy.yaml" <<EOF
version: 1
filesystem_policy:
  include_workdir: false
  read_only: [/usr, /lib, /lib64, /etc, /proc, /dev/urandom, $R]
  read_write: [/dev/null, $T/work]
network_policies:
  curl_only:
    endpoints:
      - host: 127.0.0.1
        port: $A_HTTP
    binaries:
      - path: /usr/bin/curl
      - path: $R/launch/launcher
      - path: $R/g/*
      - path: $R/h/**
      - path: $R/pin/tool
      - path: $R/bin/notgranted
EOF
U=http://127.0.0.1:$A_HTTP
sb() {
    "$BUILD/proviso" sandbox run --policy "$T/policy.yaml" --test-allow-loopback \
        --log "$T/proxy.log" -- "$@" 2>/dev/null
}
C="-s --max-time 5 -w |%{http_code}"
W="-q -T 5 -t 1 --content-on-error -O -"

out=$(sb "$CURL" $C "$U/a")
expect_has "curl (exe) allowed" "|200" "$out"
out=$(sb "$WGET" $W "$U/b")
expect_has "wget (exe) denied" '"error":"policy_denied"' "$out"
out=$(sb "$R/launch/launcher" -c "$WGET $W $U/via-parent")
expect_has "wget allowed through an allowed ancestor" "request: GET /via-parent" "$out"
expect_log "ancestor: the log names the actual exe" "HTTP:GET [INFO] ALLOWED /usr/bin/wget("
out=$(sb "$R/g/tool" $C "$U/glob1")
expect_has "glob dir/* matches a direct child" "|200" "$out"
out=$(sb "$R/g/sub/tool" $C "$U/glob2")
expect_has "glob dir/* does not cross segments" "|403" "$out"
out=$(sb "$R/h/sub/tool" $C "$U/glob3")
expect_has "glob dir/** crosses segments" "|200" "$out"
out=$(sb "$WGET" $W --header "X-Tool: $R/bin/notgranted" "$U/cmdline")
expect_has "a policy path on the command line does not grant" '"error":"policy_denied"' "$out"

# the pin: one sandbox (one proxy, whose pins live in memory); the host
# replaces the image between the second and the third request
cat >"$T/work/pin.sh" <<EOF
"$R/pin/tool" -s --max-time 5 "$U/pin1"; echo
"$R/pin/tool" -s --max-time 5 "$U/pin2"; echo
echo ready >"$T/work/ready"
while [ ! -e "$T/work/go" ]; do sleep 0.05; done
"$R/pin/tool" $W "$U/pin3"; echo
EOF
sb /bin/sh "$T/work/pin.sh" >"$T/pin.out" &
RUN=$!
PIDS="$PIDS $RUN"
wait_file "$T/work/ready" || fail "the pin script never got ready"
cp "$WGET" "$R/pin/tool"
touch "$T/work/go"
wait "$RUN"
out=$(cat "$T/pin.out")
expect_has "pin: first use allowed (pinned)" "request: GET /pin1" "$out"
expect_has "pin: same image allowed again" "request: GET /pin2" "$out"
expect_has "pin: changed binary denied" "binary integrity check failed" "$out"
expect_log "pin: log reason" "Binary integrity violation: $R/pin/tool changed since it was first seen"
finish
