#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# proxy_smuggle.sh - issue 10's bypasses, judged by what an upstream that
# parses like nginx actually received (tests/e2e/proxy_upstream.c, strict
# origin: one "REQ METHOD TARGET host=H body=N sha=X" line per request it
# framed, chunk-size lines ending at LF): chunk framing tricks on the forward
# path, in plaintext and in intercepted TLS tunnels; Host against the
# absolute-form authority in a tunnel; a socket shared by more than eight
# processes; a reload that makes an opaque route inspected; half-closed
# clients; lowercase methods; h2c upgrades; one log line per outcome.
. "$(dirname "$0")/proxy_lib.sh"

RAWC_BIN=$BUILD/tests/e2e/proxy_rawc
[ -x "$RAWC_BIN" ] || { echo "SKIP: build tests/e2e/proxy_rawc first"; exit 77; }
cp "$RAWC_BIN" "$T/bin/rawc"
RAWC=$T/bin/rawc
cp "$(readlink -f /bin/bash)" "$T/bin/allowed"
cp "$(readlink -f /bin/bash)" "$T/bin/denied"
SLOG=$T/strict.log
: >"$SLOG"

"$UPSTREAM_BIN" --port-file "$T/S.port" --cert "$T/srv.pem" --key "$T/srv.key" \
    --strict-port-file "$T/strict.port" --strict-log "$SLOG" 2>"$T/S.err" &
PIDS="$PIDS $!"
wait_file "$T/S.port" || { echo "upstream did not start"; cat "$T/S.err"; exit 1; }
read -r SP ST <"$T/strict.port"
start_upstream O

write_policy() { # $1: protocol lines for the opaque endpoint
    cat >"$1" <<EOF
version: 1
network_policies:
  strict_plain:
    endpoints:
      - host: 127.0.0.1
        port: $SP
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /ok}
          - allow: {method: POST, path: /ok}
          - allow: {method: GET, path: /resp/*}
    binaries:
      - path: $RAWC
      - path: /usr/bin/openssl
  strict_tls:
    endpoints:
      - host: 127.0.0.1
        port: $ST
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: POST, path: /ok}
    binaries:
      - path: /usr/bin/openssl
  opaque:
    endpoints:
      - host: 127.0.0.1
        port: $O_HTTP
$2
    binaries:
      - path: $RAWC
      - path: $T/bin/allowed
  shared:
    endpoints:
      - host: 127.0.0.1
        port: $O_HTTPS
    binaries:
      - path: $T/bin/allowed
EOF
}
write_policy "$T/policy.yaml" ""
start_proxy --upstream-ca "$T/ca.pem"

# send BYTES (printf format) through the proxy with rawc; extra args to rawc
send() {
    b=$1
    shift
    printf "$b" | "$RAWC" "$PX" "$@"
}
# tunnel_send PORT BYTES: CONNECT then BYTES in the same write
tunnel_send() {
    printf "CONNECT 127.0.0.1:$1 HTTP/1.1\r\nHost: 127.0.0.1:$1\r\n\r\n$2" | "$RAWC" "$PX"
}
# tls_send BYTES: an intercepted TLS tunnel to the strict TLS origin
tls_send() {
    printf "$1" | timeout 5 openssl s_client -quiet -proxy "127.0.0.1:$PX" \
        -connect "127.0.0.1:$ST" -CAfile "$T/data/ca.crt" 2>/dev/null
}
slog_count() { grep -c "$1" "$SLOG"; }

H="Host: 127.0.0.1:$SP"
FW="http://127.0.0.1:$SP"
CH="Transfer-Encoding: chunked"
SMUG="DELETE /smuggled HTTP/1.1\r\n$H\r\nContent-Length: 0\r\n\r\n"

# --- 1. chunk framing: every malformed body is refused, never forwarded ------
# each row: a name and a chunked body (printf format) that a strict parser
# must reject; a lenient one could read the smuggled DELETE out of it
bad_bodies=(
    "ext-bare-LF|2;a\nxx\r\n0\r\n\r\n$SMUG"
    "ext-bare-LF-smuggle|2;\n${SMUG}0\r\n\r\n"
    "size-bare-LF|2\nxx\r\n0\r\n\r\n$SMUG"
    "size-bare-CR|2\rxx\r\n0\r\n\r\n"
    "ext-CTL|2;a\001b\r\nxx\r\n0\r\n\r\n"
    "ext-bare-CR|2;a\rb\r\nxx\r\n0\r\n\r\n"
    "data-LF-only|2\r\nxx\n0\r\n\r\n$SMUG"
    "data-too-long|2\r\nxxx\r\n0\r\n\r\n"
    "size-0x|0x2\r\nxx\r\n0\r\n\r\n"
    "size-plus|+2\r\nxx\r\n0\r\n\r\n"
    "size-leading-space| 2\r\nxx\r\n0\r\n\r\n"
    "size-trailing-space|2 \r\nxx\r\n0\r\n\r\n"
    "size-overflow|10000000000000002\r\nxx\r\n0\r\n\r\n"
    "size-empty|\r\nxx\r\n0\r\n\r\n"
    "trailer-bare-LF|0\r\nX: a\n\r\n$SMUG"
    "trailer-obs-fold|0\r\nX: a\r\n b\r\n\r\n"
    "trailer-no-colon|0\r\nX\r\n\r\n"
    "trailer-CTL|0\r\nX: a\001\r\n\r\n"
    "last-chunk-bare-LF|0\n\r\n$SMUG"
    "end-bare-LF|0\r\n\n$SMUG"
)
for row in "${bad_bodies[@]}"; do
    name=${row%%|*}
    body=${row#*|}
    before=$(wc -l <"$SLOG")
    out=$(send "POST $FW/ok HTTP/1.1\r\n$H\r\n$CH\r\n\r\n$body")
    expect_has "forward $name: 400" "HTTP/1.1 400" "$out"
    out=$(tunnel_send "$SP" "POST /ok HTTP/1.1\r\n$H\r\n$CH\r\n\r\n$body")
    expect_has "tunnel $name: 400" "HTTP/1.1 400" "$out"
    sleep 0.05
    expect_eq "$name: the upstream framed no request" "$before" "$(wc -l <"$SLOG")"
done
expect_eq "no smuggled request ever reached the upstream" "0" "$(slog_count smuggled)"

out=$(tls_send "POST /ok HTTP/1.1\r\nHost: 127.0.0.1:$ST\r\n$CH\r\n\r\n2;\n${SMUG}0\r\n\r\n")
expect_has "tls ext-bare-LF: 400" "HTTP/1.1 400" "$out"
out=$(tls_send "POST /ok HTTP/1.1\r\nHost: 127.0.0.1:$ST\r\n$CH\r\n\r\n2\r\nxx\n0\r\n\r\n$SMUG")
expect_has "tls data-LF-only: 400" "HTTP/1.1 400" "$out"
sleep 0.1
expect_eq "tls: no smuggled request reached the upstream" "0" "$(slog_count smuggled)"
expect_eq "tls: nothing framed at all" "0" "$(slog_count "REQ")"

# valid but unusual framing is re-chunked: the upstream sees one request with
# the same body bytes (sha of "hello world!" = FNV-1a computed by the origin)
good="5;name=\"q;uo\\\\\"te\"\r\nhello\r\n007 ; a=b\r\n world!\r\n0;last\r\nX-T: v\r\nY-T:\r\n\r\n"
out=$(send "POST $FW/ok HTTP/1.1\r\n$H\r\n$CH\r\nConnection: close\r\n\r\n$good")
expect_has "forward: unusual valid framing accepted" "strict: POST /ok host=127.0.0.1:$SP body=12" "$out"
out=$(tunnel_send "$SP" "POST /ok HTTP/1.1\r\n$H\r\n$CH\r\nConnection: close\r\n\r\n$good")
expect_has "tunnel: unusual valid framing accepted" "strict: POST /ok host=127.0.0.1:$SP body=12" "$out"
out=$(tls_send "POST /ok HTTP/1.1\r\nHost: 127.0.0.1:$ST\r\n$CH\r\nConnection: close\r\n\r\n$good")
expect_has "tls: unusual valid framing accepted" "strict: POST /ok host=127.0.0.1:$ST body=12" "$out"
expect_eq "three requests, three bodies with one hash" "3" \
    "$(grep -c "REQ POST /ok host=127.0.0.1:[0-9]* body=12 sha=" "$SLOG")"
expect_eq "the same body bytes every time" "1" \
    "$(grep "body=12" "$SLOG" | sed 's/.*sha=//' | sort -u | wc -l)"

# pipelined chunked requests: exactly the two the proxy decided
before=$(slog_count "REQ")
out=$(send "POST $FW/ok HTTP/1.1\r\n$H\r\n$CH\r\n\r\n1\r\na\r\n0\r\n\r\nPOST $FW/ok HTTP/1.1\r\n$H\r\n$CH\r\nConnection: close\r\n\r\n2\r\nbb\r\n0\r\n\r\n")
expect_eq "pipelined: two responses" "2" "$(printf '%s' "$out" | grep -c '^HTTP/1.1 200')"
expect_eq "pipelined: two requests upstream" "$((before + 2))" "$(slog_count "REQ")"

# framing fields: the head validator refuses ambiguity before any decision
heads=(
    "te-twice|Transfer-Encoding: chunked, chunked"
    "te-gzip|Transfer-Encoding: gzip, chunked"
    "te-space-name|Transfer-Encoding : chunked"
    "te-and-cl|Transfer-Encoding: chunked\r\nContent-Length: 3"
    "cl-list|Content-Length: 3, 3"
    "cl-plus|Content-Length: +3"
    "cl-differ|Content-Length: 3\r\nContent-Length: 4"
    "te-vtab|Transfer-Encoding: \013chunked"
    "header-bare-CR|X: a\rb"
)
for row in "${heads[@]}"; do
    name=${row%%|*}
    before=$(slog_count "REQ")
    out=$(send "POST $FW/ok HTTP/1.1\r\n$H\r\n${row#*|}\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
    expect_has "$name: 400" "HTTP/1.1 400" "$out"
    expect_eq "$name: nothing upstream" "$before" "$(slog_count "REQ")"
done
before=$(slog_count "REQ")
out=$(send "POST $FW/ok HTTP/1.0\r\n$H\r\n$CH\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
expect_has "chunked HTTP/1.0: 400" "HTTP/1.1 400" "$out"
expect_eq "chunked HTTP/1.0: nothing upstream" "$before" "$(slog_count "REQ")"

# --- responses: relayed only when framed unambiguously ------------------------
# (/resp/NAME answers a canned response; a lenient relay would let the
# "inject" body pose as the answer to the next request)
for name in ext-bare-lf head-bare-lf obs-fold te-and-cl data-lf inject; do
    out=$(send "GET $FW/resp/$name HTTP/1.1\r\n$H\r\n\r\nGET $FW/ok HTTP/1.1\r\n$H\r\nConnection: close\r\n\r\n")
    expect_has "response $name: not relayed (502)" "HTTP/1.1 502" "$out"
    expect_not "response $name: no injected response reaches the client" "INJECTED" "$out"
    expect_not "response $name: no second answer on that connection" "strict: GET /ok" "$out"
done
out=$(send "GET $FW/resp/ok-chunked HTTP/1.1\r\n$H\r\n\r\nGET $FW/ok HTTP/1.1\r\n$H\r\nConnection: close\r\n\r\n")
expect_has "response ok-chunked: relayed" "hello" "$out"
expect_has "response ok-chunked: keep-alive goes on" "strict: GET /ok" "$out"
out=$(send "GET $FW/resp/interim HTTP/1.1\r\n$H\r\nConnection: close\r\n\r\n")
expect_has "interim 100 relayed" "HTTP/1.1 100 Continue" "$out"
expect_has "final response after an interim one" "interim" "$out"

# --- 2. Host and authority ------------------------------------------------------
out=$(tunnel_send "$SP" "GET $FW/ok HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
expect_has "tunnel: Host disagrees with absolute-form: 403" "request_authority_mismatch" "$out"
out=$(tunnel_send "$SP" "GET http://127.0.0.1:$O_HTTP/ok HTTP/1.1\r\n$H\r\nConnection: close\r\n\r\n")
expect_has "tunnel: absolute-form names another port: 403" "request_authority_mismatch" "$out"
out=$(tunnel_send "$SP" "GET $FW/ok HTTP/1.1\r\nHost: 2130706433:$SP\r\nConnection: close\r\n\r\n")
expect_has "tunnel: agreeing authorities in another spelling: allowed" "strict: GET /ok" "$out"
expect_eq "tunnel: evil Host never reached the upstream" "0" "$(slog_count "host=evil")"
expect_has "tunnel: the decided Host is forwarded, not the client's spelling" \
    "host=127.0.0.1:$SP" "$(grep 'REQ GET /ok' "$SLOG" | tail -n 1)"
out=$(send "GET http://2130706433:$SP/ok HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
expect_has "forward: the normalised decided Host replaces the client's" \
    "strict: GET /ok host=127.0.0.1:$SP" "$out"
expect_eq "forward: evil Host never reached the upstream" "0" "$(slog_count "host=evil")"

# --- lowercase methods: one rule on every path --------------------------------
out=$(send "get $FW/ok HTTP/1.1\r\n$H\r\nConnection: close\r\n\r\n")
expect_has "forward: lowercase method matched case-insensitively, sent as is" \
    "strict: get /ok" "$out"
out=$(tunnel_send "$SP" "get /ok HTTP/1.1\r\n$H\r\nConnection: close\r\n\r\n")
expect_has "tunnel: lowercase method is HTTP too" "strict: get /ok" "$out"
out=$(tunnel_send "$SP" "delete /ok HTTP/1.1\r\n$H\r\nConnection: close\r\n\r\n")
expect_has "tunnel: lowercase delete denied by the GET/POST rules" "policy_denied" "$out"
expect_eq "lowercase delete never reached the upstream" "0" "$(slog_count "REQ delete")"

# --- h2c upgrades ---------------------------------------------------------------
for path in forward tunnel; do
    req="GET /ok HTTP/1.1\r\n$H\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n"
    if [ $path = forward ]; then
        out=$(send "GET $FW${req#GET }")
    else
        out=$(tunnel_send "$SP" "$req")
    fi
    expect_has "$path h2c upgrade: refused with its own message" "(h2c) are not supported" "$out"
    expect_not "$path h2c upgrade: not the WebSocket message" "WebSocket" "$out"
done

# --- half-close -------------------------------------------------------------------
out=$(send "GET $FW/ok HTTP/1.1\r\n$H\r\n\r\n" --shut)
expect_has "forward half-close: answered" "strict: GET /ok" "$out"
out=$(send "POST $FW/ok HTTP/1.1\r\n$H\r\n$CH\r\n\r\n3\r\nabc\r\n0\r\n\r\n" --shut)
expect_has "forward half-close with a chunked body: answered" "strict: POST /ok host=127.0.0.1:$SP body=3" "$out"
before=$(slog_count "REQ")
out=$(send "POST $FW/ok HTTP/1.1\r\n$H\r\nContent-Length: 10\r\n\r\nabc" --shut)
expect_eq "half-close with an incomplete body: never forwarded as complete" "$before" \
    "$(slog_count "REQ")"

# --- 3. a socket held by more than eight processes ------------------------------
# nine holders run the allowed binary (lower pids); the process that connects
# and talks (highest pid) is rawc, which this endpoint does not allow: every
# holder counts, so the identities disagree and the request is denied.
# The talker may also hide its copy from /proc/PID/fd: in a thread's own
# file table (unshare(CLONE_FILES)), or in a thread left after the main
# thread exited. Both ways of finding holders run every case: the BPF
# iterator (when this machine has it; the proxy's default) and /proc.
AMB="ambiguous shared socket ownership"
holder_cases() { # LABEL
    local nb
    for hide in "" thread leader; do
        nb=$(grep -c "$AMB" "$T/proxy.log")
        out=$(printf "GET http://127.0.0.1:$O_HTTPS/shared HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" |
            "$RAWC" "$PX" --share "${hide:+1}${hide:-9}" --holder "$T/bin/allowed" ${hide:+--hide "$hide"})
        expect_has "$1: ${hide:-nine holders}${hide:+ hides its copy}, an allowed holder and rawc: denied" \
            "HTTP/1.1 403" "$out"
        expect_eq "$1: ${hide:-nine holders}: the reason names the ambiguity" "$((nb + 1))" \
            "$(grep -c "$AMB" "$T/proxy.log")"
    done
}
scan=$(grep -o "socket holders found by [^(]*" "$T/proxy.err" | tail -1)
holder_cases "default scan (${scan#socket holders found by })"
stop_proxy
start_proxy --identity-scan proc
expect_eq "--identity-scan proc: the proxy says so" "1" \
    "$(grep -c "socket holders found by reading /proc\$" "$T/proxy.err")"
holder_cases "/proc scan"

# --- one decision line per outcome -------------------------------------------------
# each row: raw bytes, whose outcome must add exactly one decision line
n0=$(grep -c "OCSF" "$T/proxy.log")
outcomes=(
    "GET $FW/ok HTTP/1.1\r\n$H\r\nConnection: close\r\n\r\n"
    "GET /nonabs HTTP/1.1\r\n\r\n"
    "GET https://127.0.0.1:$SP/ HTTP/1.1\r\n$H\r\n\r\n"
    "GET ftp://127.0.0.1:$SP/ HTTP/1.1\r\n$H\r\n\r\n"
    "GET http://policy.local/ HTTP/1.1\r\nHost: policy.local\r\n\r\n"
    "GET http://policy.local:81/ HTTP/1.1\r\nHost: policy.local\r\n\r\n"
    "GET / HTTP/1.1\nHost: x\r\n\r\n"
    "CONNECT nope HTTP/1.1\r\n\r\n"
    "CONNECT 127.0.0.1:9 HTTP/1.1\r\n\r\n"
    "DELETE $FW/ok HTTP/1.1\r\n$H\r\n\r\n"
    "GET $FW/a/../../x HTTP/1.1\r\n$H\r\n\r\n"
    "POST $FW/ok HTTP/1.1\r\n$H\r\n$CH\r\n\r\n2;\nxx\r\n0\r\n\r\n"
)
for o in "${outcomes[@]}"; do
    send "$o" >/dev/null
done
sleep 0.3
expect_eq "one decision line per outcome (${#outcomes[@]} outcomes)" \
    "$((n0 + ${#outcomes[@]} + 1))" "$(grep -c "OCSF" "$T/proxy.log")"

# --- 4. a reload that makes an opaque route inspected closes its tunnels --------
"$T/bin/allowed" -c '
    exec 3<>/dev/tcp/127.0.0.1/'"$PX"'
    trap "" PIPE
    T='"$T"' PX='"$PX"' O_HTTP='"$O_HTTP"'

    printf "CONNECT 127.0.0.1:$O_HTTP HTTP/1.1\r\nHost: x\r\n\r\n" >&3
    IFS= read -r -t 3 st <&3
    read -r -t 1 _ <&3
    printf "%s\n" "$st" >"$T/rl.out"
    touch "$T/rl.ready"
    while [ ! -e "$T/rl.go" ]; do sleep 0.05; done
    printf "DELETE /after-reload HTTP/1.1\r\nHost: 127.0.0.1:$O_HTTP\r\nConnection: close\r\n\r\n" >&3 2>/dev/null
    if IFS= read -r -t 2 l <&3; then printf "after: %s\n" "$l" >>"$T/rl.out"; else echo "after: closed" >>"$T/rl.out"; fi
' 2>/dev/null &
RL=$!
i=0; while [ ! -e "$T/rl.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
write_policy "$T/policy.next.yaml" "        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /ok}"
reload_policy || fail "reload"
sleep 0.2
touch "$T/rl.go"
wait $RL
expect_has "reload: tunnel opened before" "200 Connection Established" "$(cat "$T/rl.out")"
expect_has "reload: opaque tunnel now inspected is closed" "after: closed" "$(cat "$T/rl.out")"
expect_log "reload: the close is logged with its cause" "tunnel closed after policy reload (route changed)"

finish
