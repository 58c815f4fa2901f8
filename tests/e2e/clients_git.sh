#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# clients_git.sh - real git over smart HTTPS through proviso-proxy, on
# 127.0.0.1: `git http-backend` behind the HTTPS upstream (its CA trusted by
# the proxy through --upstream-ca), git trusting the proxy's CA through
# GIT_SSL_CAINFO. An inspected rule that admits upload-pack only lets
# `git clone` (protocol v2 and v0, a 3 MiB blob, a chunked request body of
# 1,500 wants) through; `git push` to the
# same repository gets the 403 and the upstream never sees receive-pack;
# hand-made receive-pack requests (curl, a doubled service query) are denied
# too; every outcome leaves one decision line. `proviso prove` reports
# receive-pack added on a credentialed host as capability_expansion with the
# witness request.
. "$(dirname "$0")/proxy_lib.sh"
. "$(dirname "$0")/clients_lib.sh"
PROVISO=$BUILD/proviso
GIT_HTTP=$(readlink -f /usr/lib/git-core/git-remote-http)

start_cupstream

# the repository: one commit with a text file and a 3 MiB random blob
git init -q --bare "$T/git/repo.git"
git -C "$T/git/repo.git" config http.receivepack true
git init -q "$T/src"
echo "hello from the upstream" >"$T/src/README"
head -c 3145728 /dev/urandom >"$T/src/blob.bin"
git -C "$T/src" add README blob.bin
git -C "$T/src" -c user.name=t -c user.email=t@example.com commit -q -m first
git -C "$T/src" push -q "$T/git/repo.git" HEAD:refs/heads/main
git -C "$T/git/repo.git" symbolic-ref HEAD refs/heads/main
HEAD0=$(git -C "$T/git/repo.git" rev-parse refs/heads/main)

cat >"$T/policy.yaml" <<EOF
version: 1
network_policies:
  git_read:
    endpoints:
      - host: 127.0.0.1
        port: $UP
        protocol: rest
        enforcement: enforce
        rules:
          - allow:
              method: GET
              path: /**/info/refs
              query:
                service: git-upload-pack
          - allow: {method: POST, path: /**/git-upload-pack}
    binaries:
      - path: $GIT_HTTP
      - path: /usr/bin/curl
EOF
start_proxy
client_env
URL=https://127.0.0.1:$UP/git/repo.git

# ---------------------------------------------------------------------------
# clone: allowed, through the inspected tunnel
# ---------------------------------------------------------------------------
n0=$(decisions)
out=$(git clone -q "$URL" "$T/clone" 2>&1)
expect_eq "clone (protocol v2) succeeds" 0 $?
expect_eq "clone has the file" "hello from the upstream" "$(cat "$T/clone/README" 2>/dev/null)"
expect_eq "the 3 MiB blob arrives intact" "$(sha256sum <"$T/src/blob.bin")" \
    "$(sha256sum <"$T/clone/blob.bin" 2>/dev/null)"
expect_eq "clone is at the upstream's commit" "$HEAD0" "$(git -C "$T/clone" rev-parse HEAD 2>/dev/null)"
if up_saw '^GET /git/repo.git/info/refs\?service=git-upload-pack$'; then pass; else
    fail "upstream never got info/refs for upload-pack: $(cat "$UPLOG")"; fi
if up_saw '^POST /git/repo.git/git-upload-pack$'; then pass; else
    fail "upstream never got the upload-pack POST"; fi
expect_log "clone allowed" "ALLOWED $GIT_HTTP("
expect_log "the tunnel is inspected" "POST http://127.0.0.1:$UP/git/repo.git/git-upload-pack [policy:git_read engine:l7]"
# one decision line per request the upstream answered, plus the CONNECT
sleep 0.3
nreq=$(wc -l <"$UPLOG")
nconn=$(grep -c "NET:OPEN" "$T/proxy.log")
expect_eq "one decision line per outcome (clone)" "$((n0 + nreq + nconn))" "$(decisions)"

out=$(git -c protocol.version=0 clone -q "$URL" "$T/clone0" 2>&1)
expect_eq "clone (protocol v0) succeeds" "0 hello from the upstream" "$? $(cat "$T/clone0/README" 2>/dev/null)"

# a clone that wants 1,500 tips: git's request body (75 kB) outgrows a 64 KiB post buffer
# and is sent chunked, through the TLS interception, to the CGI upstream
git init -q --bare "$T/git/many.git"
"$PY" -c '
for i in range(1500):
    m = "c%d" % i
    print("commit refs/heads/b%04d\ncommitter t <t@e> %d +0000\ndata %d\n%s\n" % (i, 1700000000 + i, len(m), m))
' | git -C "$T/git/many.git" fast-import --quiet
git -C "$T/git/many.git" symbolic-ref HEAD refs/heads/b0000
out=$(GIT_TRACE_CURL=$T/curl.trace GIT_TRACE_CURL_NO_DATA=1 git -c http.postBuffer=65536 clone -q --no-checkout \
    "https://127.0.0.1:$UP/git/many.git" "$T/many" 2>&1)
expect_eq "clone of 1,500 branches succeeds" "0 1500" "$? $(git -C "$T/many" branch -r 2>/dev/null | grep -vc HEAD)"
expect_has "git sent a chunked request body" "Send header: Transfer-Encoding: chunked" "$(cat "$T/curl.trace" 2>/dev/null)"
if up_saw '^POST /git/many.git/git-upload-pack$'; then pass; else fail "the upstream never got many.git's POST"; fi

# ---------------------------------------------------------------------------
# push: denied at the first receive-pack request, with the 403
# ---------------------------------------------------------------------------
echo change >>"$T/clone/README"
git -C "$T/clone" -c user.name=t -c user.email=t@example.com commit -q -am second
out=$(git -C "$T/clone" push origin HEAD:main 2>&1)
rc=$?
expect_eq "push fails" 128 "$rc"
expect_has "git prints the 403" "The requested URL returned error: 403" "$out"
if up_saw 'receive-pack'; then fail "the upstream saw receive-pack: $(grep receive-pack "$UPLOG")"; else pass; fi
expect_eq "the upstream repository is unchanged" "$HEAD0" "$(git -C "$T/git/repo.git" rev-parse refs/heads/main)"
expect_log "push denied, logged without the query" \
    "DENIED $GIT_HTTP("
expect_log "push denial names the path" "GET http://127.0.0.1:$UP/git/repo.git/info/refs?[redacted] [policy:git_read engine:l7] [reason:GET /git/repo.git/info/refs not permitted"
expect_not "the log never shows the query" "service=git-receive-pack" "$(cat "$T/proxy.log")"

# the body git does not print is there for an agent that asks (curl, same
# tunnel route), and names what is missing
out=$(pcurl --cacert "$CA" "$URL/info/refs?service=git-receive-pack")
expect_eq "receive-pack advertisement: 403" 403 "${out##*|}"
b=${out%|*}
expect_eq "403 body: policy_denied" policy_denied "$(printf '%s' "$b" | jq -r .error 2>/dev/null)"
expect_eq "403 body: rule_missing names the request" "GET /git/repo.git/info/refs" \
    "$(printf '%s' "$b" | jq -r '.rule_missing.method + " " + .rule_missing.path' 2>/dev/null)"

# ---------------------------------------------------------------------------
# hand-made receive-pack requests: none reaches the upstream
# ---------------------------------------------------------------------------
out=$(pcurl --cacert "$CA" "$URL/info/refs?service=git-upload-pack&service=git-receive-pack")
expect_eq "doubled service query: 403" 403 "${out##*|}"
out=$(pcurl --cacert "$CA" "$URL/info/refs?service=git-upload-pack%26service=git-receive-pack")
expect_eq "encoded & in the query: 403 (value must match)" 403 "${out##*|}"
out=$(pcurl --cacert "$CA" -X POST -H 'Content-Type: application/x-git-receive-pack-request' \
    --data-binary '0000' "$URL/git-receive-pack")
expect_eq "POST git-receive-pack: 403" 403 "${out##*|}"
out=$(pcurl --cacert "$CA" -X POST --data-binary '0000' "$URL/git-upload-pack/../git-receive-pack")
expect_eq "dot-segment to receive-pack: denied" 403 "${out##*|}"
out=$(pcurl --cacert "$CA" "$URL/info/refs")
expect_eq "info/refs without a service (dumb HTTP): 403" 403 "${out##*|}"
if up_saw 'receive-pack'; then fail "the upstream saw receive-pack: $(grep receive-pack "$UPLOG")"; else pass; fi
out=$(pcurl --cacert "$CA" "$URL/info/refs?service=git-upload-pack" | tr -d '\0')
expect_eq "curl's upload-pack advertisement: 200" 200 "${out##*|}"
expect_has "smart advertisement" "# service=git-upload-pack" "$out"
# a binary the rule does not name: git's own transport reached through a copy
cp "$GIT_HTTP" "$T/bin/git-remote-https"
out=$(GIT_EXEC_PATH=$T/bin git ls-remote "$URL" 2>&1)
expect_has "another binary: denied" "403" "$out"
expect_log "the copy is named in the denial" "DENIED $T/bin/git-remote-https("

# ---------------------------------------------------------------------------
# the prover: receive-pack on a credentialed host is capability_expansion
# ---------------------------------------------------------------------------
sed -e "s/host: 127.0.0.1/host: github.com/" -e "s/port: $UP/port: 443/" \
    -e '/\/usr\/bin\/curl/d' "$T/policy.yaml" >"$T/gh.yaml"
sed 's|^\(          - allow: {method: POST, path: /\*\*/git-upload-pack}\)$|\1\n          - allow: {method: POST, path: /**/git-receive-pack}|' \
    "$T/gh.yaml" >"$T/gh-push.yaml"
printf -- '- name: gh\n  type: github-pat\n  scopes: [repo]\n  target_hosts: [github.com]\n' >"$T/creds.yaml"
json=$("$PROVISO" prove --baseline "$T/gh.yaml" --candidate "$T/gh-push.yaml" \
    --credentials "$T/creds.yaml" --format json)
expect_eq "prove: findings (exit 1)" 1 $?
expect_eq "prove: capability_expansion" '["capability_expansion"]' "$(printf '%s' "$json" | jq -c .categories)"
expect_eq "prove: the witness is a receive-pack POST by git" \
    "POST github.com:443 /git-receive-pack $GIT_HTTP gh" \
    "$(printf '%s' "$json" | jq -r '.findings[0].paths[0] | .witness.method + " " + .witness.host + ":" + (.witness.port | tostring) + " " + .witness.path + " " + .witness.binary + " " + (.credentials | join(","))')"
txt=$("$PROVISO" prove --baseline "$T/gh.yaml" --candidate "$T/gh-push.yaml" --credentials "$T/creds.yaml")
expect_has "prove text: the finding" "capability_expansion: POST on github.com:443 via $GIT_HTTP" "$txt"
expect_has "prove text: the witness" "witness: POST github.com:443 /git-receive-pack" "$txt"
# receive-pack's advertisement alone (a new query value) is a finding too
sed 's|service: git-upload-pack|service: {any: [git-upload-pack, git-receive-pack]}|' "$T/gh.yaml" >"$T/gh-adv.yaml"
json=$("$PROVISO" prove --baseline "$T/gh.yaml" --candidate "$T/gh-adv.yaml" \
    --credentials "$T/creds.yaml" --format json)
expect_eq "prove: receive-pack query value is capability_expansion" "1 capability_expansion GET" \
    "$? $(printf '%s' "$json" | jq -r '.categories[0] + " " + .findings[0].paths[0].witness.method')"
expect_has "prove: its witness asks for receive-pack" "service=git-receive-pack" \
    "$(printf '%s' "$json" | jq -r .findings[0].paths[0].witness.query)"
# the same change without credentials is not a finding; no change is empty
json=$("$PROVISO" prove --baseline "$T/gh.yaml" --candidate "$T/gh-push.yaml" --format json)
expect_eq "prove: uncredentialed host, no finding" "0 empty" "$? $(printf '%s' "$json" | jq -r .verdict)"
json=$("$PROVISO" prove --baseline "$T/gh.yaml" --candidate "$T/gh.yaml" --credentials "$T/creds.yaml" --format json)
expect_eq "prove: no change, empty" "0 empty" "$? $(printf '%s' "$json" | jq -r .verdict)"

finish
