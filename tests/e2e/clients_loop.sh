#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# clients_loop.sh - the advisor loop driven by a real client, on 127.0.0.1:
# proviso-advisor (its prover child, the mapper flushing every 300 ms),
# proviso-proxy in advisor mode inspecting TLS (the upstream's CA through
# --upstream-ca, git trusting the proxy's CA), `git http-backend` behind the
# HTTPS upstream. `git clone` is denied; the mapper proposes from git's own
# denials (the exact paths git asked for, nothing wider); a reviewer approves
# with `proviso rule approve`; the same clone then succeeds, and `git push`
# stays denied with the 403, the upstream repository unchanged.
. "$(dirname "$0")/proxy_lib.sh"
. "$(dirname "$0")/advisor_proxy_lib.sh"
. "$(dirname "$0")/clients_lib.sh"
PROVISO=$BUILD/proviso
GIT_HTTP=$(readlink -f /usr/lib/git-core/git-remote-http)

start_cupstream
git init -q --bare "$T/git/repo.git"
git -C "$T/git/repo.git" config http.receivepack true
git init -q "$T/src"
echo "the loop's repository" >"$T/src/README"
git -C "$T/src" add README
git -C "$T/src" -c user.name=t -c user.email=t@example.com commit -q -m first
git -C "$T/src" push -q "$T/git/repo.git" HEAD:refs/heads/main
git -C "$T/git/repo.git" symbolic-ref HEAD refs/heads/main
HEAD0=$(git -C "$T/git/repo.git" rev-parse refs/heads/main)

# the base lets git reach the host, inspected, for one path it never asks
# for: git's requests are denied at L7, where the mapper sees method and path
cat >"$T/base.yaml" <<EOF
version: 1
network_policies:
  git_host:
    endpoints:
      - host: 127.0.0.1
        port: $UP
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /health}
    binaries:
      - path: $GIT_HTTP
EOF
printf 'mapper_flush_interval_ms: 300\n' >"$T/adv.yaml"
start_advisor ADV --config "$T/adv.yaml"
sandbox ADV one "$T/base.yaml"
out=$(adm ADV PUT /v1/settings/agent_policy_proposals_enabled '{"value":true}')
expect_eq "proposals on" 200 "$(code "$out")"
start_aproxy P ADV one --upstream-ca "$T/ca.pem"
wait_log "$T/P.log" "advisor revision 1 loaded" || fail "the proxy never loaded revision 1"
PX=$P_PX
client_env
# only git's HTTPS goes through the proxy: the admin calls (curl, proviso)
# speak plain HTTP to the advisor directly
unset http_proxy HTTP_PROXY
export CA=$T/P.data/ca.crt
export GIT_SSL_CAINFO=$CA
URL=https://127.0.0.1:$UP/git/repo.git
export PROVISO_ADVISOR=http://127.0.0.1:$ADV_PORT PROVISO_TOKEN_FILE=$T/ADV.admin

# pending_chunk: the id of the one pending chunk for the upstream, or nothing
pending_chunk() {
    body "$(adm ADV GET "/v1/sandboxes/one/proposals?status=pending")" |
        "$JQ" -r --argjson p "$UP" '[.chunks[] | select(.host == "127.0.0.1" and .port == $p)][0].chunk_id // empty'
}
wait_chunk() {
    i=0
    while [ $i -lt 200 ]; do
        id=$(pending_chunk)
        [ -n "$id" ] && { printf '%s' "$id"; return 0; }
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

# ---------------------------------------------------------------------------
# clone denied -> mapper proposes -> approve -> clone again, until it works
# ---------------------------------------------------------------------------
out=$(git clone -q "$URL" "$T/clone" 2>&1)
expect_eq "first clone is denied" 128 $?
expect_has "git prints the 403" "The requested URL returned error: 403" "$out"
expect_log_p() { if wait_log "$T/P.log" "$2" 100; then pass; else fail "$1: no [$2] in the proxy log"; fi; }
expect_log_p "the denial is logged" "DENIED $GIT_HTTP("
rounds=0
paths=""
rev=1
while [ $rounds -lt 4 ] && [ ! -f "$T/clone/README" ]; do
    rounds=$((rounds + 1))
    id=$(wait_chunk) || { fail "round $rounds: the mapper proposed nothing"; break; }
    ch=$(body "$(adm ADV GET "/v1/sandboxes/one/proposals/$id")")
    expect_eq "round $rounds: the mapper's chunk is for git, inspected" "mechanistic l7 $GIT_HTTP" \
        "$(printf '%s' "$ch" | "$JQ" -r '.analysis_mode + " " + .stage + " " + .proposed_rule.binaries[0].path' 2>/dev/null)"
    rules=$(printf '%s' "$ch" | "$JQ" -r '[.proposed_rule.endpoints[0].rules[].allow | .method + " " + .path] | join(",")')
    paths="$paths${paths:+,}$rules"
    expect_not "round $rounds: no ** in the proposal" "**" "$rules"
    expect_not "round $rounds: no receive-pack in the proposal" "receive-pack" "$rules"
    out=$("$PROVISO" rule approve one --chunk-id "$id" 2>&1)
    expect_eq "round $rounds: proviso rule approve" 0 $?
    rev=$((rev + 1))
    wait_log "$T/P.log" "advisor revision $rev loaded" 750 || fail "round $rounds: revision $rev never loaded"
    rm -rf "$T/clone"; echo "--- round $rounds" >>"$T/clone.out"
    git clone -q "$URL" "$T/clone" >>"$T/clone.out" 2>&1
done
expect_eq "the same clone succeeds after approval" "the loop's repository" "$(cat "$T/clone/README" 2>/dev/null)"
expect_has "approved: the advertisement" "GET /git/repo.git/info/refs" "$paths"
expect_has "approved: the upload-pack POST" "POST /git/repo.git/git-upload-pack" "$paths"
echo "approved in $rounds round(s): $paths"
if up_saw '^POST /git/repo.git/git-upload-pack$'; then pass; else fail "the upstream never served the clone"; fi

# ---------------------------------------------------------------------------
# push stays denied
# ---------------------------------------------------------------------------
echo change >>"$T/clone/README"
git -C "$T/clone" -c user.name=t -c user.email=t@example.com commit -q -am second
out=$(git -C "$T/clone" push origin HEAD:main 2>&1)
expect_eq "push is denied" 1 $?
expect_has "push: git prints the 403" "The requested URL returned error: 403" "$out"
if up_saw '^POST .*git-receive-pack'; then fail "the upstream got a receive-pack POST"; else pass; fi
# the mapper drops queries (docs/advisor.md#mapper): the approved GET of
# info/refs also serves receive-pack's advertisement, a read; the POST that
# would write is what stays denied
if up_saw '^GET /git/repo.git/info/refs\?service=git-receive-pack$'; then
    echo "note: the approved info/refs rule (no query) let push read the receive-pack advertisement"
fi
expect_eq "the upstream repository is unchanged" "$HEAD0" "$(git -C "$T/git/repo.git" rev-parse refs/heads/main)"
# git shows only the status; the agent reads what was denied from policy.local
out=$(via P "http://policy.local/v1/denials?last=3")
expect_has "policy.local names the push's denial" "POST http://127.0.0.1:$UP/git/repo.git/git-receive-pack" \
    "$(jget "$out" '[.denials[].line] | join(" ")')"
# and the mapper's next proposal from the push's denial is a new chunk a
# reviewer must decide; nothing approves it by itself
id=$(wait_chunk)
ch=$(body "$(adm ADV GET "/v1/sandboxes/one/proposals/$id")")
expect_eq "push's denial: a pending chunk for receive-pack, not an approval" \
    "pending POST /git/repo.git/git-receive-pack" \
    "$(printf '%s' "$ch" | "$JQ" -r '.status + " " + ([.proposed_rule.endpoints[0].rules[].allow | .method + " " + .path] | join(","))' 2>/dev/null)"
out=$(git -C "$T/clone" push origin HEAD:main 2>&1)
expect_has "push still denied while it waits" "error: 403" "$out"

finish
