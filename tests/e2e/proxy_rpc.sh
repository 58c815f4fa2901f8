#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# proxy_rpc.sh - JSON-RPC and MCP through proviso-proxy, judged by what a
# logging JSON-RPC upstream (tests/e2e/rpc_upstream.py) received
# (docs/semantics.md#rpc, docs/proxy.md#rpc): allowed tools reach it, a tool
# outside the rules or under a deny rule does not and the client gets a
# JSON-RPC error for its id; a batch mixing allowed and denied calls sends
# nothing and answers every request; a tools/call notification is decided
# by its tool; duplicate keys, a byte order mark, reserved rpc. names,
# control characters, id games and oversized or chunked bodies are refused
# before any byte goes upstream; the receive-stream GET relays unbuffered;
# DELETE is a call of its own; names with spaces and = cannot forge a log
# field; generic json-rpc refuses response frames; audit mode forwards a
# denied call and still refuses an unreadable body; the same over
# intercepted TLS.
. "$(dirname "$0")/proxy_lib.sh"

PY=$(command -v python3) || { echo "SKIP: python3 is not installed"; exit 77; }
make_certs
# rpc_up NAME [TLS]: start an upstream; sets $NAME to its port
rpc_up() {
    if [ "${2:-}" = tls ]; then
        "$PY" "$SRC/tests/e2e/rpc_upstream.py" "$T/$1.port" "$T/$1.log" "$T/srv.pem" "$T/srv.key" \
            2>"$T/$1.err" &
    else
        "$PY" "$SRC/tests/e2e/rpc_upstream.py" "$T/$1.port" "$T/$1.log" 2>"$T/$1.err" &
    fi
    PIDS="$PIDS $!"
    wait_file "$T/$1.port" || { echo "rpc upstream did not start"; cat "$T/$1.err"; exit 1; }
    read -r port <"$T/$1.port"
    eval "$1=$port"
    touch "$T/$1.log"
}
rpc_up M
rpc_up M2
rpc_up J
rpc_up A
rpc_up MS tls

cat >"$T/policy.yaml" <<EOF
version: 1
network_policies:
  tools:
    endpoints:
      - host: 127.0.0.1
        port: $M
        path: /mcp
        protocol: mcp
        enforcement: enforce
        mcp: {allow_all_known_mcp_methods: true, max_body_bytes: 2048}
        rules:
          - allow: {tool: "gh_*"}
          - allow: {params: {name: {any: [create_issue, "a b=c"]}}}
        deny_rules:
          - {tool: "gh_delete*"}
      - host: 127.0.0.1
        port: $M2
        path: /mcp
        protocol: mcp
        enforcement: enforce
        mcp: {strict_tool_names: false}
        rules:
          - allow: {method: initialize}
          - allow: {method: tools/list}
          - allow: {method: tools/call, tool: "x y"}
        deny_rules:
          - {method: rpc.end}
      - host: 127.0.0.1
        port: $J
        protocol: json-rpc
        enforcement: enforce
        rules:
          - allow: {method: eth_call}
      - host: 127.0.0.1
        port: $A
        path: /mcp
        protocol: mcp
        enforcement: audit
        rules:
          - allow: {method: tools/list}
      - host: 127.0.0.1
        port: $MS
        path: /mcp
        protocol: mcp
        enforcement: enforce
        mcp: {allow_all_known_mcp_methods: true}
        rules:
          - allow: {tool: read_file}
    binaries:
      - path: /usr/bin/curl
      - path: $RAW
EOF
start_proxy

# mcp PORT BODY [CURL ARGS]: POST BODY to /mcp (Content-Type $CT, default
# application/json); prints body|code
mcp() {
    p=$1
    b=$2
    shift 2
    pcurl -H "Content-Type: ${CT:-application/json}" -H 'Accept: application/json, text/event-stream' \
        "$@" --data-binary "$b" "http://127.0.0.1:$p/mcp"
}
# seen LOG NEEDLE: did that upstream receive a request containing NEEDLE?
seen() { grep -qF -- "$2" "$T/$1.log"; }
# never LOG NEEDLE NAME
never() { if seen "$1" "$2"; then fail "$3: reached the upstream"; else pass; fi; }
lines() { grep -c -- "$1" "$T/proxy.log" 2>/dev/null; }

# 1. an allowed tool: forwarded unchanged, the server's answer relayed
B='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gh_search","arguments":{"q":"x"}}}'
out=$(mcp "$M" "$B")
expect_eq "allowed tool answered" '{"jsonrpc": "2.0", "id": 1, "result": {"echo": "tools/call"}}|200' "$out"
if seen M "\"body\": $(printf '%s' "$B" | "$PY" -c 'import json,sys;print(json.dumps(sys.stdin.read()))')"; then pass; else
    fail "allowed body not forwarded unchanged: $(cat "$T/M.log")"; fi
expect_log "allowed call logged with its tool" "[rpc:request tools/call tool gh_search]"

# 2. a tool no rule names: a JSON-RPC error for id 2, nothing upstream
out=$(mcp "$M" '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"drop_db"}}')
expect_has "other tool: JSON-RPC error" '"id":2,"error":{"code":-32001' "$out"
expect_has "other tool: 200 for the client" '|200' "$out"
expect_has "other tool: rule_missing names method and tool" '"rule_missing":{"type":"mcp_call","layer":"l7","method":"tools/call","tool":"drop_db"' "$out"
expect_has "other tool: protocol mcp" '"protocol":"mcp"' "$out"
never M drop_db "other tool"
expect_log "other tool logged denied" "[rpc:request tools/call tool drop_db] [reason:MCP request tools/call tool drop_db not permitted by policy]"

# 3. a deny rule wins over the gh_* allow rule
out=$(mcp "$M" '{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"name":"gh_delete_repo"}}')
expect_has "denied tool: error for id \"d\"" '"id":"d","error":{"code":-32001' "$out"
expect_has "denied tool: deny rule named" 'blocked by deny rule' "$out"
never M gh_delete_repo "denied tool"

# 4. a batch mixing allowed and denied calls: nothing is sent, every
#    request is answered (-32001 denied, -32002 withheld), one line per call
n0=$(lines '\[rpc:')
out=$(mcp "$M" '[{"jsonrpc":"2.0","id":10,"method":"tools/list"},{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"evil_tool"}},{"jsonrpc":"2.0","method":"notifications/initialized"}]')
expect_has "mixed batch: array answer" '[{"jsonrpc":"2.0","id":10,"error":{"code":-32002' "$out"
expect_has "mixed batch: denied id" '{"jsonrpc":"2.0","id":11,"error":{"code":-32001' "$out"
expect_has "mixed batch: 200" '|200' "$out"
never M evil_tool "mixed batch"
sleep 0.2
n1=$(lines '\[rpc:')
expect_eq "mixed batch: one line per call" 3 $((n1 - n0))
expect_log "mixed batch: the allowed call's line says why it was not sent" "[rpc:request tools/list] [reason:not sent: another call of this batch was denied]"
out=$(mcp "$M" '[{"jsonrpc":"2.0","id":12,"method":"tools/list"},{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"gh_ok_batch"}}]')
expect_has "allowed batch forwarded" '"echo": "tools/call"' "$out"
if seen M gh_ok_batch; then pass; else fail "allowed batch did not reach the upstream"; fi

# 5. a tools/call notification (no id) is decided by its tool: 403, id null
out=$(mcp "$M" '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"sneaky_tool"}}')
expect_has "tool notification refused" '"id":null,"error":{"code":-32001' "$out"
expect_has "tool notification: 403" '|403' "$out"
never M sneaky_tool "tool notification"

# 6. a client response (to a server's elicitation) passes under the profile;
#    without the profile or a rule naming rpc.response it does not
out=$(mcp "$M" '{"jsonrpc":"2.0","id":"srv-1","result":{"action":"accept"}}')
expect_has "response under the profile" '|202' "$out"
out=$(mcp "$M2" '{"jsonrpc":"2.0","id":"srv-2","result":{"action":"accept"}}')
expect_has "response without profile refused" '|403' "$out"
never M2 srv-2 "response without profile"

# 7. what the reader refuses: 403 with -32600, nothing upstream
refused() {
    out=$(mcp "$M" "$2")
    expect_has "$1: refused" '"id":null,"error":{"code":-32600' "$out"
    expect_has "$1: 403" '|403' "$out"
    never M "$3" "$1"
}
refused "duplicate key" '{"jsonrpc":"2.0","id":20,"method":"tools/list","method":"tools/call","params":{"name":"dup_tool"}}' dup_tool
refused "byte order mark" $'\xef\xbb\xbf{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"gh_bom"}}' gh_bom
refused "reserved rpc. name" '{"jsonrpc":"2.0","id":22,"method":"rpc.stream","params":{"rsv":"x1"}}' x1
refused "control character" '{"jsonrpc":"2.0","id":23,"method":"tools/list\u0007","params":{"ctl":"x2"}}' x2
refused "format character" '{"jsonrpc":"2.0","id":24,"method":"tools/\u200blist","params":{"fmt":"x3"}}' x3
refused "null id" '{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"gh_nullid"}}' gh_nullid
refused "fraction id" '{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"gh_floatid"}}' gh_floatid
refused "shared ids" '[{"jsonrpc":"2.0","id":7,"method":"tools/list"},{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"gh_sameid"}}]' gh_sameid
refused "no jsonrpc" '{"id":25,"method":"tools/call","params":{"name":"gh_nover"}}' gh_nover
refused "unknown member" '{"jsonrpc":"2.0","id":26,"method":"tools/call","params":{"name":"gh_x"},"tool":"gh_member"}' gh_member
refused "tool without name" '{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"tool":"gh_noname"}}' gh_noname
refused "strict tool names" '{"jsonrpc":"2.0","id":28,"method":"tools/call","params":{"name":"gh_a b"}}' 'gh_a b'
refused "empty batch" '[]' '"body": "[]"'
refused "trailing bytes" '{"jsonrpc":"2.0","id":29,"method":"tools/list"} {"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"gh_trail"}}' gh_trail
big=$(head -c 3000 /dev/zero | tr '\0' a)
refused "body over max_body_bytes" '{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"gh_big","arguments":{"x":"'"$big"'"}}}' gh_big
out=$(mcp "$M" '{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"gh_chunk_big","arguments":{"x":"'"$big"'"}}}' -H 'Transfer-Encoding: chunked')
expect_has "chunked body over the bound refused" '|403' "$out"
never M gh_chunk_big "chunked over the bound"
out=$(mcp "$M" '{"jsonrpc":"2.0","id":33,"method":"tools/call","params":{"name":"gh_chunked_ok"}}' -H 'Transfer-Encoding: chunked')
expect_has "chunked allowed call forwarded" '"echo": "tools/call"' "$out"
if seen M gh_chunked_ok; then pass; else fail "chunked allowed call did not reach the upstream"; fi
out=$(mcp "$M" '{"jsonrpc":"2.0","id":34,"method":"tools/call","params":{"name":"gh_gz"}}' -H 'Content-Encoding: gzip')
expect_has "encoded body refused" '|403' "$out"
never M gh_gz "encoded body"

# 7b. a body read one way by the proxy and another by the server
#  - a charset: body-parser (the SDK's express.json) decodes UTF-7, where
#    "+ACI-" is a quote: the proxy would read gh_search, the server drop_db
U7='{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"gh_search","arguments":{"x":"+ACIAfQAsACI-name+ACI-:+ACI-gh_utf7+ACIALAAi-arguments+ACI-:+AHsAIg-x+ACI-:+ACI-"}}}'
out=$(CT='application/json; charset=utf-7' mcp "$M" "$U7")
expect_has "charset utf-7: refused" '|403' "$out"
expect_has "charset utf-7: the reason" 'charset utf-7' "$out"
never M gh_utf7 "charset utf-7"
out=$(CT='application/json; x="charset=utf-8"; charset=UTF-7-IMAP' mcp "$M" "$U7")
expect_has "a charset hidden behind another parameter: refused" '|403' "$out"
out=$(CT='application/json; charset=utf-8' mcp "$M" \
    '{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"gh_ct2"}}' \
    -H 'Content-type: text/plain; charset=utf-16')
expect_has "two Content-Type fields: refused" '|403' "$out"
never M gh_ct2 "two Content-Type fields"
out=$(CT='application/json; charset="UTF-8"' mcp "$M" \
    '{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"gh_ct8"}}')
expect_has "charset UTF-8 quoted: forwarded" '"echo": "tools/call"' "$out"
#  - a member "NAME": Go's encoding/json matches names without case
refused "params NAME beside name" '{"jsonrpc":"2.0","id":43,"method":"tools/call","params":{"name":"gh_search","NAME":"gh_casefold"}}' gh_casefold
#  - a WebSocket upgrade is no receive stream: binary frames would carry
#    calls no decision read
out=$(pcurl -H 'Accept: text/event-stream' -H 'Connection: Upgrade' -H 'Upgrade: websocket' \
    -H 'Sec-WebSocket-Version: 13' -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' \
    "http://127.0.0.1:$M/mcp?wsupgrade")
expect_has "WebSocket upgrade on mcp: refused" '|403' "$out"
never M wsupgrade "WebSocket upgrade on mcp"
#  - a refusal quotes a member name: it cannot forge a field of its line
out=$(mcp "$M" '{"jsonrpc":"2.0","id":44,"method":"ping","x] [policy:fake9 engine:l7":1}')
expect_has "bracketed member refused" '|403' "$out"
if grep -F '[policy:fake9' "$T/proxy.log" >/dev/null; then
    fail "a member name forged a [policy:] field: $(grep -F 'fake9' "$T/proxy.log" | tail -n 1)"
else
    pass
fi
expect_log "the member name is escaped in the reason" 'x\x5D \x5Bpolicy:fake9'

# 8. names with spaces and '=' are allowed by an exact rule and logged escaped
out=$(mcp "$M" '{"jsonrpc":"2.0","id":35,"method":"tools/call","params":{"name":"a b=c"}}' )
expect_has "strict names refuse a space even when a rule names it" '|403' "$out"
out=$(mcp "$M2" '{"jsonrpc":"2.0","id":36,"method":"tools/call","params":{"name":"x y"}}')
expect_has "lax names: exact rule allows 'x y'" '"echo": "tools/call"' "$out"
expect_log "a space is escaped in the line" "[rpc:request tools/call tool x\\x20y]"
out=$(mcp "$M2" '{"jsonrpc":"2.0","id":37,"method":"tools/call","params":{"name":"z] [policy:forged"}}')
expect_has "forging name refused by the rules" '-32001' "$out"
if grep -F 'policy:forged' "$T/proxy.log" | grep -qv 'x5D\\x20\\x5Bpolicy:forged'; then
    fail "a tool name forged a log field"; else pass; fi

# 9. the receive stream: GET with Accept: text/event-stream, relayed as it comes
first=$("$CURL" -s -N --max-time 0.25 -x "http://127.0.0.1:$PX" -H 'Accept: text/event-stream' \
    "http://127.0.0.1:$M/mcp")
expect_has "stream: first event before the second is written" 'notifications/one' "$first"
expect_not "stream: not the second yet" 'notifications/two' "$first"
all=$(pcurl -N -H 'Accept: text/event-stream' "http://127.0.0.1:$M/mcp")
expect_has "stream: both events" 'notifications/two' "$all"
expect_log "stream logged as rpc.stream" "[rpc:stream rpc.stream]"
# a quiet stream whose client leaves: the upstream connection goes with it
# (the proxy does not read the client while a response relays, and nothing
# is written to it: it watches the client's socket for its close)
"$CURL" -s -N --max-time 0.5 -x "http://127.0.0.1:$PX" -H 'Accept: text/event-stream' \
    "http://127.0.0.1:$M/mcp?quiet" >/dev/null 2>&1
i=0
while [ $i -lt 60 ] && ! grep -q '"QUIET"' "$T/M.log" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
gone=$(grep '"QUIET"' "$T/M.log" | tail -n 1 | jq -r '.closed_after')
if [ -n "$gone" ] && [ "$gone" != null ] && awk -v g="$gone" 'BEGIN {exit !(g < 2)}'; then
    pass
else
    fail "quiet stream: the upstream was not closed when its client left (closed_after: ${gone:-not yet})"
fi
out=$(pcurl "http://127.0.0.1:$M/mcp?plain=get")
expect_has "GET without event-stream refused" '|403' "$out"
never M plain=get "GET without event-stream"
out=$(pcurl -H 'Accept: text/event-stream' "http://127.0.0.1:$M2/mcp?nostream")
expect_has "stream without profile or rule refused" '|403' "$out"
never M2 nostream "stream without rule"

# 10. DELETE ends a session: a call of its own (rpc.end)
out=$(pcurl -X DELETE -H 'Mcp-Session-Id: s-1' "http://127.0.0.1:$M/mcp")
expect_eq "DELETE under the profile" '|200' "$out"
if grep -q '"method": "DELETE".*"session": "s-1"' "$T/M.log"; then pass; else
    fail "DELETE with its session did not reach the upstream"; fi
out=$(pcurl -X DELETE "http://127.0.0.1:$M2/mcp?del2")
expect_has "DELETE under a deny rule refused" '|403' "$out"
never M2 del2 "denied DELETE"
out=$(mcp "$M" '{"jsonrpc":"2.0","id":38,"method":"tools/list"}' -X PUT)
expect_has "PUT carries no call" '|403' "$out"

# 11. generic json-rpc: exact methods, no response frames, POST only
out=$(pcurl -H 'Content-Type: application/json' --data-binary '{"jsonrpc":"2.0","id":1,"method":"eth_call","params":["0x1"]}' "http://127.0.0.1:$J/")
expect_has "json-rpc allowed method" '"echo": "eth_call"' "$out"
out=$(pcurl -H 'Content-Type: application/json' --data-binary '{"jsonrpc":"2.0","id":2,"method":"eth_sendTransaction"}' "http://127.0.0.1:$J/")
expect_has "json-rpc other method: error" '"id":2,"error":{"code":-32001' "$out"
expect_has "json-rpc: protocol json-rpc" '"protocol":"json-rpc"' "$out"
never J eth_sendTransaction "json-rpc other method"
out=$(pcurl -H 'Content-Type: application/json' --data-binary '{"jsonrpc":"2.0","id":3,"result":"resp_frame"}' "http://127.0.0.1:$J/")
expect_has "json-rpc response frame refused" '-32600' "$out"
never J resp_frame "json-rpc response frame"

# 12. audit mode: a denied call is forwarded and logged AUDIT; an unreadable
#     body is still refused
out=$(mcp "$A" '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"audited_tool"}}')
expect_has "audit forwards a denied call" '"echo": "tools/call"' "$out"
expect_log "audit line names the call" "AUDIT"
out=$(mcp "$A" '{"jsonrpc":"2.0","id":2,"id":3,"method":"tools/call","params":{"name":"audit_dup"}}')
expect_has "audit still refuses an unreadable body" '|403' "$out"
never A audit_dup "audit unreadable"

# 13. over intercepted TLS: the same decisions inside the tunnel
tcurl() {
    "$CURL" -s --max-time 5 -x "http://127.0.0.1:$PX" --cacert "$T/data/ca.crt" -w '|%{http_code}' \
        -H 'Content-Type: application/json' --data-binary "$1" "https://127.0.0.1:$MS/mcp"
}
out=$(tcurl '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file"}}')
expect_has "TLS: allowed tool" '"echo": "tools/call"' "$out"
out=$(tcurl '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file"}}')
expect_has "TLS: other tool error" '"id":2,"error":{"code":-32001' "$out"
never MS write_file "TLS other tool"

finish
