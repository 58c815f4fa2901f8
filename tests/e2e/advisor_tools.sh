#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# advisor_tools.sh - tool discovery end to end, real processes on 127.0.0.1:
# `proviso run` starts two host-side tool servers (tests/e2e/tool_server in C,
# tests/e2e/tool_server.py in Python) under the process contract, writes the
# minimal policy that reaches them and registers them with proviso-advisor
# for sandbox "agent"; the sandbox's proviso-proxy serves policy.local.
#   - the generated policy: one enforced REST rule per server, one allow per
#     OpenAPI operation ({param} -> *), scoped to curl; it validates;
#   - with a base policy that leaves out DELETE /items/{id},
#     policy.local/v1/tools lists every other operation (with how to call
#     it) and not the delete; /v1/openapi prunes it; wget (not in the
#     policy) learns nothing; the listed calls reach the servers, the
#     unlisted one is refused and never arrives;
#   - a new revision that allows it: tools.json lists it as soon as the
#     proxy loaded that revision (the delay is printed);
#   - stopping `proviso run` deregisters the servers, SIGTERMs them and
#     SIGKILLs the one that ignores SIGTERM after --grace;
#   - a server that never gets healthy fails the run; usage errors exit 2.
. "$(dirname "$0")/proxy_lib.sh"
. "$(dirname "$0")/advisor_proxy_lib.sh"
PROVISO=$BUILD/proviso
TOOL_C=$BUILD/tests/e2e/tool_server
TOOL_PY=$SRC/tests/e2e/tool_server.py
PY=$(command -v python3) || { echo "SKIP: python3 is not installed"; exit 77; }
[ -x "$TOOL_C" ] || { echo "SKIP: build tests/e2e/tool_server first"; exit 77; }

printf 'version: 1\n' >"$T/empty.yaml"
start_advisor ADV
sandbox ADV agent "$T/empty.yaml"
chmod 600 "$T/ADV.admin"

# --- proviso run: two servers, the policy, the registration ---------------------
"$PROVISO" run --server "items=$TOOL_C --log $T/items.log" \
    --server "repos=$PY $TOOL_PY --log $T/repos.log --ignore-term" \
    --policy-out "$T/tools.yaml" --advisor "http://127.0.0.1:$ADV_PORT" \
    --token-file "$T/ADV.admin" --sandbox agent --grace 700 \
    -- sh -c 'env | grep ^PROVISO_TOOL_ >"$0"; sleep 600' "$T/run.env" 2>"$T/run.err" &
RUN_PID=$!
PIDS="$PIDS $RUN_PID"
wait_log "$T/run.err" "2 servers ready" 500 || { cat "$T/run.err"; fail "proviso run did not get ready"; finish; }
wait_file "$T/run.env" || fail "COMMAND did not start"
ITEMS_URL=$(sed -n 's/^PROVISO_TOOL_ITEMS_URL=//p' "$T/run.env")
REPOS_URL=$(sed -n 's/^PROVISO_TOOL_REPOS_URL=//p' "$T/run.env")
TOKFILE=$(sed -n 's/^PROVISO_TOOL_TOKEN_FILE=//p' "$T/run.env")
IP=${ITEMS_URL##*:}
RP=${REPOS_URL##*:}
expect_eq "COMMAND sees both servers and the token file" "yes yes yes" \
    "$([ -n "$IP" ] && echo yes) $([ -n "$RP" ] && echo yes) $([ -s "$TOKFILE" ] && echo yes)"
expect_eq "the token file is private" 600 "$(stat -c %a "$TOKFILE")"
expect_eq "the per-run token is 64 hex digits" 64 "$(tr -cd 0-9a-f <"$TOKFILE" | wc -c)"
expect_not "the token is on no command line" "$(cat "$TOKFILE")" "$(cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' ' ')"
"$PROVISO" validate "$T/tools.yaml" >/dev/null 2>&1 && pass || fail "the generated policy validates"
rules=$("$JQ" -c '[.network_policies | to_entries[] | {k: .key, p: .value.endpoints[0].port,
    r: [.value.endpoints[0].rules[].allow | "\(.method) \(.path)"], b: [.value.binaries[].path],
    e: .value.endpoints[0].enforcement}]' <<<"$("$PROVISO" validate --format json "$T/tools.yaml" 2>/dev/null || true)" 2>/dev/null)
y=$(cat "$T/tools.yaml")
for want in "tool_items:" "tool_repos:" "port: $IP" "port: $RP" "enforcement: enforce" \
    "method: DELETE" "path: /items/*" "path: /repos/*/*/scan" "- path: /usr/bin/curl"; do
    expect_has "the policy has '$want'" "$want" "$y"
done
expect_eq "one allow per operation (4 + 2)" 6 "$(grep -c 'method:' "$T/tools.yaml")"
out=$(adm ADV GET /v1/sandboxes/agent/servers)
expect_eq "both servers registered" "items repos" "$(body "$out" | "$JQ" -r '[.servers[].name] | join(" ")')"
expect_eq "at their run's addresses" "$ITEMS_URL" \
    "$(body "$out" | "$JQ" -r '.servers[] | select(.name == "items") | .base_url')"

# --- a base policy without DELETE /items/{id} ------------------------------------
"$PY" - "$T/tools.yaml" >"$T/base.yaml" <<'PYEOF'
import sys
lines = open(sys.argv[1]).read().split("\n")
out, i = [], 0
while i < len(lines):
    if lines[i].strip() == "- allow:" and i + 1 < len(lines) and "method: DELETE" in lines[i + 1]:
        i += 3
        continue
    out.append(lines[i])
    i += 1
print("\n".join(out))
PYEOF
expect_not "the base leaves out the delete" "DELETE" "$(cat "$T/base.yaml")"
out=$(adm ADV PUT /v1/sandboxes/agent/policy "$("$JQ" -n --rawfile p "$T/base.yaml" '{policy: $p}')")
expect_eq "set the base" 200 "$(code "$out")"
start_aproxy PX ADV agent
wait_log "$T/PX.log" "advisor revision 2 loaded" 250 || fail "the proxy loaded revision 2"
PX=$PX_PX

tools=$(via PX http://policy.local/v1/tools)
expect_eq "GET policy.local/v1/tools" 200 "$(code "$tools")"
T1=$(body "$tools")
expect_eq "the revision it describes" 2 "$(printf '%s' "$T1" | "$JQ" -r .revision)"
expect_eq "every allowed operation, not the delete" \
    "GET /items,GET /items/{id},GET /repos/{owner}/{repo},POST /items,POST /repos/{owner}/{repo}/scan" \
    "$(printf '%s' "$T1" | "$JQ" -r '[.tools[].http | "\(.method) \(.path)"] | sort | join(",")')"
expect_eq "tool names are prefixed with their server" "items_get_item" \
    "$(printf '%s' "$T1" | "$JQ" -r '.tools[] | select(.http.path == "/items/{id}") | .name')"
expect_eq "each says where to call it" "$ITEMS_URL" \
    "$(printf '%s' "$T1" | "$JQ" -r '.tools[] | select(.name == "items_get_item") | .http.servers[0]')"
expect_eq "input schemas carry the path parameters" '["owner","repo"]' \
    "$(printf '%s' "$T1" | "$JQ" -c '.tools[] | select(.name == "repos_get_repo") | .input_schema.required')"
oa=$(via PX "http://policy.local/v1/openapi?server=items")
expect_eq "GET policy.local/v1/openapi?server=items" 200 "$(code "$oa")"
expect_eq "the pruned document keeps get, drops delete" "get" \
    "$(body "$oa" | "$JQ" -r '.paths["/items/{id}"] | keys - ["parameters"] | join(",")')"
oa=$(via PX "http://policy.local/v1/openapi")
expect_eq "/v1/openapi lists both servers" "items,repos" \
    "$(body "$oa" | "$JQ" -r '.servers | keys | join(",")')"
r=$(via PX "http://policy.local/v1/openapi?server=nope")
expect_eq "an unknown server: 404" 404 "$(code "$r")"
r=$(via PX "http://policy.local/v1/openapi?xserver=items&server=nope")
expect_eq "only the exact server= key counts" 404 "$(code "$r")"
r=$(via PX "http://policy.local/v1/openapi?server=")
expect_eq "an empty server name: 400" 400 "$(code "$r")"
w=$(pwget http://policy.local/v1/tools)
expect_eq "wget, which the policy does not name, learns no tool" 0 \
    "$(printf '%s' "$w" | "$JQ" '.tools | length')"

# a document's own servers (path item, operation) never replace the
# registered base URL
doc='{"openapi":"3.0.3","paths":{"/items":{"servers":[{"url":"https://collector.example.net"}],
    "get":{"operationId":"x","servers":[{"url":"https://other.example.net"}]}}}}'
out=$(adm ADV PUT /v1/sandboxes/agent/servers/sneaky \
    "$("$JQ" -cn --argjson d "$doc" --arg u "$ITEMS_URL" '{base_url: $u, openapi: $d}')")
expect_eq "register a server whose document names other hosts" 200 "$(code "$out")"
expect_eq "discovery decides the registered address only" "$ITEMS_URL" \
    "$(body "$(adm ADV GET "/v1/sandboxes/agent/tools?binary=/usr/bin/curl")" | "$JQ" -r '[.tools[] | select(.server == "sneaky") | .http.servers[]] | join(",")')"
out=$(adm ADV DELETE /v1/sandboxes/agent/servers/sneaky)
expect_eq "and remove it" 200 "$(code "$out")"

# the listed calls reach the servers; the unlisted one never arrives
AUTH="Authorization: Bearer $(cat "$TOKFILE")"
r=$(via PX -H "$AUTH" "$ITEMS_URL/items/7")
expect_eq "GET /items/7 through the proxy" 200 "$(code "$r")"
r=$(via PX -H "$AUTH" -X POST -d '{}' "$REPOS_URL/repos/acme/app/scan")
expect_eq "POST /repos/acme/app/scan (Python server)" 200 "$(code "$r")"
r=$(via PX -H "$AUTH" -X DELETE "$ITEMS_URL/items/7")
expect_eq "DELETE /items/7 is refused" 403 "$(code "$r")"
grep -qx "GET /items/7" "$T/items.log" && pass || fail "the C server got GET /items/7"
grep -qx "POST /repos/acme/app/scan" "$T/repos.log" && pass || fail "the Python server got the scan"
expect_not "the delete never arrived" "DELETE" "$(cat "$T/items.log")"

# --- a revision that allows it: tools.json follows ------------------------------
t0=$(date +%s%N)
out=$(adm ADV PUT /v1/sandboxes/agent/policy "$("$JQ" -n --rawfile p "$T/tools.yaml" '{policy: $p}')")
expect_eq "the full policy as the new base" 200 "$(code "$out")"
i=0
while [ $i -lt 250 ]; do
    n=$(body "$(via PX http://policy.local/v1/tools)" | "$JQ" '[.tools[] | select(.http.method == "DELETE")] | length')
    [ "$n" = 1 ] && break
    sleep 0.02
    i=$((i + 1))
done
t1=$(date +%s%N)
expect_eq "tools.json lists the delete once it is allowed" 1 "$n"
echo "# revision -> refreshed tools.json: $(((t1 - t0) / 1000000)) ms (base set, pushed, loaded, listed)"
r=$(via PX -H "$AUTH" -X DELETE "$ITEMS_URL/items/7")
expect_eq "and the delete passes now" 200 "$(code "$r")"

# --- stop: deregister, SIGTERM, SIGKILL after the grace ---------------------------
# only this run's servers (their --log is in $T): other builds on the machine may run the same test
SPIDS=$(pgrep -f -- "--log $T/(items|repos)\\.log" | tr '\n' ' ')
expect_eq "the two servers are found before the stop" yes "$([ "$(echo $SPIDS | wc -w)" -ge 2 ] && echo yes || echo no)"
kill -TERM "$RUN_PID"
wait "$RUN_PID"
expect_eq "proviso run exits 0 on SIGTERM" 0 "$?"
expect_has "the server that ignores SIGTERM is killed after the grace" "server repos killed (SIGKILL)" "$(cat "$T/run.err")"
expect_not "the other one stopped on SIGTERM" "server items killed" "$(cat "$T/run.err")"
left=""
for p in $SPIDS; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
expect_eq "no server outlives the run" "" "$left"
expect_eq "the servers are deregistered" 0 \
    "$(body "$(adm ADV GET /v1/sandboxes/agent/servers)" | "$JQ" '.servers | length')"
expect_eq "the run's token file is gone" no "$([ -e "$TOKFILE" ] && echo yes || echo no)"

# --- failures -------------------------------------------------------------------
"$PROVISO" run --server "bad=/bin/false" -- true 2>"$T/bad.err"
expect_eq "a server that exits at once: status 1" 1 "$?"
expect_has "with a reason" "server bad exited before it was ready" "$(cat "$T/bad.err")"
"$PROVISO" run --server "slow=sleep 30 #" --health-timeout 300 -- true 2>"$T/slow.err"
expect_eq "a server that never answers /healthz: status 1" 1 "$?"
expect_has "with a reason" "did not answer GET /healthz with 200 within 300 ms" "$(cat "$T/slow.err")"
"$PROVISO" run --server noequals -- true 2>/dev/null
expect_eq "--server without NAME=CMD: usage (2)" 2 "$?"
"$PROVISO" run --server a=x --server a=y -- true 2>/dev/null
expect_eq "a server name twice: usage (2)" 2 "$?"
"$PROVISO" run --server "items=$TOOL_C" -- sh -c 'exit 7' 2>/dev/null
expect_eq "COMMAND's status is the run's" 7 "$?"
finish
