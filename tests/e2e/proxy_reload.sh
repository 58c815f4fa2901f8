#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# proxy_reload.sh - hot reload and the process contract: SIGHUP and file
# changes swap the policy atomically; idle keep-alive connections close at the
# request boundary; opaque tunnels the new version no longer reaches are
# closed while the others live on; an invalid policy fails closed until fixed;
# /healthz on the admin port; SIGTERM drains and exits 0.
. "$(dirname "$0")/proxy_lib.sh"

start_upstream A
start_upstream B

policy() { # policy FILE PORTS-FOR-RAW...
    f=$1
    shift
    {
        echo "version: 1"
        echo "network_policies:"
        echo "  curl:"
        echo "    endpoints:"
        echo "      - host: 127.0.0.1"
        echo "        port: $A_HTTP"
        echo "    binaries:"
        echo "      - path: /usr/bin/curl"
        for p in "$@"; do
            echo "  raw_$p:"
            echo "    endpoints:"
            echo "      - host: 127.0.0.1"
            echo "        port: $p"
            echo "    binaries:"
            echo "      - path: $RAW"
        done
    } >"$f"
}
policy "$T/policy.yaml" "$A_HTTP" "$B_HTTP"
start_proxy

out=$("$CURL" -s --max-time 3 "http://127.0.0.1:$ADM/healthz")
expect_eq "healthz" '{"status":"ok"}' "$out"

# one keep-alive forward connection and two tunnels, all idle across a reload
"$RAW" -c '
    trap "" PIPE
    exec 3<>/dev/tcp/127.0.0.1/'"$PX"'
    printf "GET http://127.0.0.1:'"$A_HTTP"'/one HTTP/1.1\r\nHost: x\r\n\r\n" >&3
    IFS= read -r -t 3 st <&3; echo "first: $st"
    len=0
    while IFS= read -r -t 3 h <&3 && [ "$h" != $'"'"'\r'"'"' ]; do
        case "$h" in Content-Length:*|content-length:*) len=${h#*: }; len=${len%$'"'"'\r'"'"'} ;; esac
    done
    read -r -t 3 -N "$len" body <&3
    touch '"$T"'/ka.ready
    while [ ! -e '"$T"'/go ]; do sleep 0.02; done
    printf "GET http://127.0.0.1:'"$A_HTTP"'/two HTTP/1.1\r\nHost: x\r\n\r\n" >&3 2>/dev/null
    if IFS= read -r -t 3 st <&3; then echo "second: $st"; else echo "second: closed"; fi
' >"$T/ka.out" 2>/dev/null &
KA=$!
tunnel_client() { # PORT NAME
    "$RAW" -c '
        trap "" PIPE
        exec 3<>/dev/tcp/127.0.0.1/'"$PX"'
        printf "CONNECT 127.0.0.1:%s HTTP/1.1\r\nHost: x\r\n\r\n" '"$1"' >&3
        IFS= read -r -t 3 st <&3; echo "connect: $st"
        IFS= read -r -t 3 blank <&3
        touch '"$T/$2"'.ready
        while [ ! -e '"$T"'/go ]; do sleep 0.02; done
        sleep 0.2
        printf "GET /after HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" >&3 2>/dev/null
        if IFS= read -r -t 3 st <&3; then echo "after: $st"; else echo "after: closed"; fi
    ' >"$T/$2.out" 2>/dev/null &
}
tunnel_client "$A_HTTP" tunA
TA=$!
tunnel_client "$B_HTTP" tunB
TB=$!
for f in ka tunA tunB; do
    i=0
    while [ ! -e "$T/$f.ready" ] && [ $i -lt 150 ]; do sleep 0.02; i=$((i + 1)); done
    [ -e "$T/$f.ready" ] || fail "$f not ready"
done

# the new version drops A for the raw client, keeps B
policy "$T/policy.next.yaml" "$B_HTTP"
reload_policy || fail "SIGHUP reload"
expect_log "reload logged (SIGHUP, or the file watch if it saw the change first)" "policy reloaded ("
touch "$T/go"
wait $KA $TA $TB 2>/dev/null
ka=$(cat "$T/ka.out")
expect_has "keep-alive: first request answered" "first: HTTP/1.1 200 OK" "$ka"
expect_has "keep-alive: closed at the request boundary" "second: closed" "$ka"
expect_has "tunnel A: opened" "connect: HTTP/1.1 200 Connection Established" "$(cat "$T/tunA.out")"
expect_has "tunnel A: no longer reached, closed" "after: closed" "$(cat "$T/tunA.out")"
expect_has "tunnel B: still reached, alive" "after: HTTP/1.1 200 OK" "$(cat "$T/tunB.out")"
expect_log "tunnel close logged" "[reason:tunnel closed after policy reload (no longer allowed)]"

out=$(raw_send "GET http://127.0.0.1:$A_HTTP/new HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
expect_has "new connections use the new version" "\"error\":\"policy_denied\"" "$out"

# a changed file reloads without a signal (the SIGHUP reload above may have
# been logged as a file change already: wait for one more such line)
nfc=$(grep -cF "policy reloaded (file changed)" "$T/proxy.log")
policy "$T/policy.tmp" "$A_HTTP"
sleep 0.05
mv "$T/policy.tmp" "$T/policy.yaml"
i=0
until [ "$(grep -cF "policy reloaded (file changed)" "$T/proxy.log")" -gt "$nfc" ] || [ $i -gt 60 ]; do
    sleep 0.05
    i=$((i + 1))
done
if [ "$(grep -cF "policy reloaded (file changed)" "$T/proxy.log")" -gt "$nfc" ]; then
    pass
else
    fail "file change reload: no new [policy reloaded (file changed)] line"
fi
out=$(raw_send "GET http://127.0.0.1:$A_HTTP/again HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
expect_has "file change took effect" "request: GET /again" "$out"

# an invalid policy fails closed, a valid one recovers
printf 'version: 1\nnetwork_policies:\n  bad:\n    endpoints:\n      - host: "*"\n        port: 80\n' \
    >"$T/policy.next.yaml"
reload_policy || fail "reload of an invalid policy"
out=$(pcurl "http://127.0.0.1:$A_HTTP/q")
expect_has "invalid policy: everything denied" "|403" "$out"
expect_has "invalid policy: quarantine reason" "fail-closed quarantine is active" "$out"
policy "$T/policy.next.yaml"
reload_policy || fail "recovery reload"
out=$(pcurl "http://127.0.0.1:$A_HTTP/q")
expect_has "recovered" "|200" "$out"

# SIGTERM drains and exits 0
kill -TERM "$PX_PID"
wait "$PX_PID"
expect_eq "SIGTERM exit status" "0" "$?"
PIDS=${PIDS% $PX_PID}
expect_log "drain logged" "proviso-proxy info: exiting"

finish
