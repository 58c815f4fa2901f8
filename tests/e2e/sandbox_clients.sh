#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sandbox_clients.sh - real clients inside `proviso sandbox run`, configured
# only by the environment the sandbox sets (the proxy in both spellings and
# /.proviso's CA bundle): curl, git (clone over smart HTTPS, push denied),
# Python requests and pip (a wheel from a simple index), npm and node's
# fetch where installed. Judged by the HTTPS upstream's log (clients_lib.sh)
# and the decision log: each client is named by its own binary from inside
# the sandbox. Needs root; skipped (77) otherwise.
. "$(dirname "$0")/proxy_lib.sh"
. "$(dirname "$0")/clients_lib.sh"
if [ "$(id -u)" != 0 ] || ! unshare --net true 2>/dev/null; then
    echo "SKIP: sandbox_clients.sh needs root and namespaces"
    exit 77
fi
id sandbox >/dev/null 2>&1 ||
    useradd --system --user-group --home-dir /sandbox --shell /usr/sbin/nologin sandbox || exit 1
"$PY" -c 'import requests' 2>/dev/null || { echo "SKIP: python3-requests is not installed"; exit 77; }
chmod 755 "$T"
PYBIN=$(readlink -f /usr/bin/python3)
GIT_HTTP=$(readlink -f /usr/lib/git-core/git-remote-http)
start_cupstream
BASE=https://127.0.0.1:$UP
mkdir -p "$T/work" "$T/ro"
chmod 777 "$T/work"
echo "hello from the upstream" >"$T/www/hello.txt"

git init -q --bare "$T/git/repo.git"
git -C "$T/git/repo.git" config http.receivepack true
git init -q "$T/src"
echo "hello from git" >"$T/src/README"
git -C "$T/src" add README
git -C "$T/src" -c user.name=t -c user.email=t@example.com commit -q -m first
git -C "$T/src" push -q "$T/git/repo.git" HEAD:refs/heads/main
git -C "$T/git/repo.git" symbolic-ref HEAD refs/heads/main

make_tinypkg "tinypkg inside the sandbox"

NODEBIN=
command -v node >/dev/null 2>&1 && NODEBIN=$(readlink -f "$(command -v node)")
cat >"$T/policy.yaml" <<EOF
version: 1
filesystem_policy:
  include_workdir: false
  read_only: [/usr, /lib, /lib64, /etc, /proc, /dev/urandom, $T/ro]
  read_write: [/tmp, /dev/null, $T/work]
network_policies:
  upstream:
    endpoints:
      - host: 127.0.0.1
        port: $UP
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /hello.txt}
          - allow: {method: GET, path: /simple/**}
          - allow: {method: GET, path: /files/**}
          - allow: {method: GET, path: /npm/**}
          - allow:
              method: GET
              path: /**/info/refs
              query:
                service: git-upload-pack
          - allow: {method: POST, path: /**/git-upload-pack}
    binaries:
      - path: /usr/bin/curl
      - path: $GIT_HTTP
      - path: $PYBIN
${NODEBIN:+      - path: $NODEBIN}
EOF
sb() {
    "$BUILD/proviso" sandbox run --policy "$T/policy.yaml" --upstream-ca "$T/ca.pem" \
        --test-allow-loopback --log "$T/proxy.log" --env "HOME=$T/work" --workdir "$T/work" -- "$@"
}

out=$(sb curl -sS -m 20 "$BASE/hello.txt" 2>&1)
expect_eq "curl over HTTPS with the sandbox's CA bundle" "hello from the upstream" "$out"
expect_has "curl named inside" "ALLOWED /usr/bin/curl(" "$(cat "$T/proxy.log")"

sb git clone -q "$BASE/git/repo.git" "$T/work/clone" >"$T/git.out" 2>&1
expect_eq "git clone inside" "hello from git" "$(cat "$T/work/clone/README" 2>/dev/null)"
if up_saw "git-upload-pack"; then pass; else fail "the upstream never saw upload-pack"; fi
expect_has "git named inside" "ALLOWED $GIT_HTTP(" "$(cat "$T/proxy.log")"
echo more >>"$T/work/clone/README"
sb /bin/sh -c "cd $T/work/clone && git -c user.name=t -c user.email=t@example.com commit -qam two &&
    git push -q origin HEAD:main" >"$T/push.out" 2>&1
rc=$?
expect_eq "git push denied (403)" "1 yes" "$([ $rc != 0 ] && echo 1) $(grep -q 403 "$T/push.out" && echo yes)"
if up_saw "receive-pack"; then fail "the upstream saw receive-pack"; else pass; fi

out=$(sb /usr/bin/python3 -c "import requests; print(requests.get('$BASE/hello.txt', timeout=20).text.strip())" 2>&1)
expect_eq "Python requests with the sandbox's CA bundle" "hello from the upstream" "$out"
out=$(sb /usr/bin/python3 -m pip install -q --disable-pip-version-check --no-cache-dir \
    --target "$T/work/site" --index-url "$BASE/simple/" tinypkg 2>&1)
expect_eq "pip install inside" "" "$out"
expect_eq "the wheel pip installed" "tinypkg inside the sandbox" \
    "$(PYTHONPATH=$T/work/site "$PY" -c 'import tinypkg; print(tinypkg.GREETING)' 2>&1)"
expect_has "pip named inside" "ALLOWED $PYBIN(" "$(cat "$T/proxy.log")"
out=$(sb /usr/bin/python3 -c "import requests
print(requests.get('$BASE/secret.txt', timeout=20).status_code)" 2>&1)
expect_eq "a path outside the rules is denied" 403 "$(echo "$out" | tail -1)"
if up_saw "secret.txt"; then fail "the upstream saw the denied path"; else pass; fi

if [ -n "$NODEBIN" ] && node -e 'process.exit(typeof fetch === "function" ? 0 : 1)' 2>/dev/null; then
    out=$(sb node -e "fetch('$BASE/hello.txt').then(r => r.text()).then(t => console.log(t.trim()),
        e => console.log('error ' + e.cause))" 2>&1)
    major=$(node -p 'process.versions.node.split(".")[0]')
    if [ "$major" -ge 24 ]; then
        expect_eq "node fetch (NODE_USE_ENV_PROXY)" "hello from the upstream" "$out"
    else
        echo "# node $major: fetch ignores the proxy variables (Node 24's NODE_USE_ENV_PROXY)"
        expect_has "node $major's fetch cannot leave the sandbox directly" "error" "$out"
    fi
fi
finish
