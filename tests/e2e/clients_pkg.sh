#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# clients_pkg.sh - package managers and HTTP libraries through the inspecting
# proxy, on 127.0.0.1, each trusting the proxy's CA the way
# docs/operations.md#client-ca says: pip installs a wheel (built here) from a
# simple index, npm installs a package from a static registry document and
# tarball, Python requests sends sized, chunked and kept-alive requests, and
# curl offers HTTP/2 (the proxy answers ALPN with http/1.1 and the request
# succeeds; over plain HTTP its h2c upgrade is refused with the reason).
# npm's registry is plain HTTP (see the comment at NPMBASE). Each client is
# admitted by its own binary and only on the paths it needs: the same client
# outside them, or another client on them, is denied, and the upstream never
# sees what was denied.
. "$(dirname "$0")/proxy_lib.sh"
. "$(dirname "$0")/clients_lib.sh"
need npm node
"$PY" -m pip --version >/dev/null 2>&1 || { echo "SKIP: python3-pip is not installed"; exit 77; }
"$PY" -c 'import requests' 2>/dev/null || { echo "SKIP: python3-requests is not installed"; exit 77; }
PYBIN=$(readlink -f "$PY")
NODEBIN=$(readlink -f "$(command -v node)")

start_cupstream
BASE=https://127.0.0.1:$UP

# ---------------------------------------------------------------------------
# the index and the registry, written by hand
# ---------------------------------------------------------------------------
mkdir -p "$T/www/npm/tinynpm/-"
make_tinypkg "tinypkg from the local index"

mkdir -p "$T/npmsrc/package"
printf '{"name":"tinynpm","version":"1.0.0","main":"index.js"}\n' >"$T/npmsrc/package/package.json"
printf 'module.exports = "tinynpm from the local registry";\n' >"$T/npmsrc/package/index.js"
tar -czf "$T/www/npm/tinynpm/-/tinynpm-1.0.0.tgz" -C "$T/npmsrc" package
TGZ=$T/www/npm/tinynpm/-/tinynpm-1.0.0.tgz
# npm over plain HTTP (the proxy's inspected forward path): through a proxy,
# npm's agent checks an IP-literal HTTPS registry's certificate against
# "localhost" (https-proxy-agent sets no servername for IP hosts) and fails
# whatever the proxy does, and the proxy never lets a name reach loopback
# (docs/proxy.md#real-clients); its CA handling is pip's and requests'
start_cupstream_plain
NPMBASE=http://127.0.0.1:$UPH
jq -n --arg url "$NPMBASE/npm/tinynpm/-/tinynpm-1.0.0.tgz" \
    --arg sha1 "$(sha1sum "$TGZ" | cut -d' ' -f1)" \
    --arg integrity "sha512-$(openssl dgst -sha512 -binary "$TGZ" | base64 -w0)" '{
    name: "tinynpm", "dist-tags": {latest: "1.0.0"},
    versions: {"1.0.0": {name: "tinynpm", version: "1.0.0", main: "index.js",
        dist: {tarball: $url, shasum: $sha1, integrity: $integrity}}}}' \
    >"$T/www/npm/tinynpm/index.json"

cat >"$T/policy.yaml" <<EOF
version: 1
network_policies:
  pypi_local:
    endpoints:
      - host: 127.0.0.1
        port: $UP
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /simple/**}
          - allow: {method: GET, path: /files/*.whl}
          - allow: {method: GET, path: /echo/**}
          - allow: {method: POST, path: /echo/upload}
    binaries:
      - path: $PYBIN
  npm_local:
    endpoints:
      - host: 127.0.0.1
        port: $UPH
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /npm/*}
          - allow: {method: GET, path: /npm/*/-/*.tgz}
    binaries:
      - path: $NODEBIN
  curl_echo:
    endpoints:
      - host: 127.0.0.1
        port: $UP
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /echo/**}
      - host: 127.0.0.1
        port: $UPH
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: /echo/**}
    binaries:
      - path: /usr/bin/curl
EOF
start_proxy
client_env

# ---------------------------------------------------------------------------
# pip: a wheel from the simple index (PIP_CERT names the proxy's CA)
# ---------------------------------------------------------------------------
out=$("$PY" -m pip install -q --disable-pip-version-check --no-cache-dir --target "$T/site" \
    --index-url "$BASE/simple/" tinypkg 2>&1)
expect_eq "pip install succeeds" 0 $?
expect_eq "the installed module imports" "tinypkg from the local index" \
    "$(PYTHONPATH=$T/site "$PY" -c 'import tinypkg; print(tinypkg.GREETING)' 2>&1)"
if up_saw '^GET /simple/tinypkg/$'; then pass; else fail "the upstream never served the index page: $(cat "$UPLOG")"; fi
if up_saw '^GET /files/tinypkg-1.0-py3-none-any.whl$'; then pass; else fail "the upstream never served the wheel"; fi
expect_log "pip allowed by its binary" "ALLOWED $PYBIN("
# without the CA, pip refuses the proxy's certificate and says why
out=$(no_ca "$PY" -m pip install --disable-pip-version-check \
    --no-cache-dir --retries 0 --target "$T/site2" --index-url "$BASE/simple/" tinypkg 2>&1)
expect_eq "pip without the CA fails" "1" "$?"
expect_has "pip names the certificate failure" "CERTIFICATE_VERIFY_FAILED" "$out"
# the proxy's once-only hint goes to that trust failure, not to the clients
# that closed their kept-alive TLS connections without close_notify before it
expect_log "the CA hint names the real failure" "alert unknown ca (does the client trust the proxy CA, $T/data/ca.crt?)"
# a package the index does not list is a 404 from the upstream, not a denial
out=$("$PY" -m pip install -q --disable-pip-version-check --no-cache-dir --retries 0 --target "$T/site3" \
    --index-url "$BASE/simple/" nosuchpkg 2>&1)
expect_has "a missing package is pip's own error" "No matching distribution found for nosuchpkg" "$out"

# ---------------------------------------------------------------------------
# npm: a registry document and a tarball
# ---------------------------------------------------------------------------
mkdir -p "$T/npmproj"
out=$(cd "$T/npmproj" && npm install --registry "$NPMBASE/npm/" --no-audit --no-fund \
    --fetch-retries=0 --no-update-notifier --cache "$T/npmcache" tinynpm 2>&1)
rc=$?; [ $rc = 0 ] || printf "%s\n" "$out" | tail -n 15
expect_eq "npm install succeeds" 0 $rc
expect_eq "the installed package loads" "tinynpm from the local registry" \
    "$(cd "$T/npmproj" && node -e 'console.log(require("tinynpm"))' 2>&1)"
if up_saw '^GET /npm/tinynpm$'; then pass; else fail "the upstream never served the registry document: $(cat "$UPLOG")"; fi
if up_saw '^GET /npm/tinynpm/-/tinynpm-1.0.0.tgz$'; then pass; else fail "the upstream never served the tarball"; fi
expect_log "npm allowed by node" "ALLOWED $NODEBIN("
# npm publish is a PUT the rule does not admit: denied, never upstream
mkdir -p "$T/npmpub"
printf '{"name":"tinynpm","version":"1.0.1","main":"index.js"}\n' >"$T/npmpub/package.json"
cp "$T/npmsrc/package/index.js" "$T/npmpub/"
out=$(cd "$T/npmpub" && npm publish --registry "$NPMBASE/npm/" --no-update-notifier --fetch-retries=0 \
    --cache "$T/npmcache" --//127.0.0.1:$UPH/npm/:_authToken=x 2>&1)
expect_eq "npm publish fails" 1 "$?"
expect_has "npm shows the 403" "403" "$out"
if up_saw '^PUT '; then fail "the upstream saw npm's PUT"; else pass; fi

# ---------------------------------------------------------------------------
# Python requests: sized, chunked and kept-alive (REQUESTS_CA_BUNDLE)
# ---------------------------------------------------------------------------
cat >"$T/req.py" <<'EOF'
import hashlib, json, sys, requests
base = sys.argv[1]
s = requests.Session()
out = []
for i in range(3):
    r = s.get(base + "/echo/get%d" % i, timeout=10)
    out.append("%d %s" % (r.status_code, r.json()["target"]))
body = b"x" * 200000
r = s.post(base + "/echo/upload", data=body, timeout=10)
j = r.json()
out.append("%d sized %d %s" % (r.status_code, j["body_length"], j["body_sha256"] == hashlib.sha256(body).hexdigest()))
r = s.post(base + "/echo/upload", data=iter([b"a" * 70000, b"b" * 5, b"c" * 30000]), timeout=10)
j = r.json()
want = hashlib.sha256(b"a" * 70000 + b"b" * 5 + b"c" * 30000).hexdigest()
out.append("%d chunked %d %s" % (r.status_code, j["body_length"], j["body_sha256"] == want))
r = s.delete(base + "/echo/get0", timeout=10)
out.append("%d %s" % (r.status_code, r.json().get("error")))
r = s.get(base + "/echo/after-deny", timeout=10)
out.append("%d %s" % (r.status_code, r.json()["target"]))
print("\n".join(out))
EOF
n0=$(grep -c "NET:OPEN" "$T/proxy.log")
out=$("$PY" "$T/req.py" "$BASE" 2>&1)
expect_eq "requests: three GETs on one session" \
    "200 /echo/get0|200 /echo/get1|200 /echo/get2" "$(printf '%s\n' "$out" | head -n 3 | paste -sd'|')"
expect_eq "requests: a 200 kB sized body arrives whole" "200 sized 200000 True" "$(printf '%s\n' "$out" | sed -n 4p)"
expect_eq "requests: a chunked body arrives whole" "200 chunked 100005 True" "$(printf '%s\n' "$out" | sed -n 5p)"
expect_eq "requests: DELETE denied with the JSON body" "403 policy_denied" "$(printf '%s\n' "$out" | sed -n 6p)"
expect_eq "requests: the session goes on after a denial" "200 /echo/after-deny" "$(printf '%s\n' "$out" | sed -n 7p)"
sleep 0.3
# keep-alive: one tunnel carries the five allowed requests; a denial closes
# its connection (docs/proxy.md#real-clients), the session opens another
expect_eq "requests: keep-alive, one tunnel before the denial and one after" "$((n0 + 2))" \
    "$(grep -c "NET:OPEN" "$T/proxy.log")"
if up_saw '^DELETE '; then fail "the upstream saw the denied DELETE"; else pass; fi
expect_eq "requests: the upstream got each allowed request once" 6 "$(grep -c '^[A-Z]* /echo/' "$UPLOG")"

# ---------------------------------------------------------------------------
# curl offering HTTP/2: ALPN settles on http/1.1 and the request succeeds
# ---------------------------------------------------------------------------
out=$("$CURL" -s --http2 --max-time 10 -w '|%{http_code}|%{http_version}' "$BASE/echo/h2")
expect_eq "curl --http2: 200 over HTTP/1.1" "200|1.1" "${out#*|}"
expect_eq "curl --http2: the upstream got it" "/echo/h2 HTTP/1.1" \
    "$(printf '%s' "${out%%|*}" | jq -r '.target + " " + .protocol')"
v=$("$CURL" -sv --http2 --max-time 10 -o /dev/null "$BASE/echo/h2b" 2>&1)
expect_has "curl offered h2" "ALPN: offers h2" "$v"
expect_has "the proxy chose http/1.1" "ALPN: server accepted http/1.1" "$v"
# a client that offers only h2 gets no ALPN answer and, speaking h2 anyway,
# a clear refusal rather than a hang
sleep 0.3
n0=$(decisions)
out=$("$PY" - "$PX" "$UP" "$CA" <<'EOF' 2>&1
import socket, ssl, sys
px, up, ca = int(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.create_connection(("127.0.0.1", px), timeout=5)
s.sendall(("CONNECT 127.0.0.1:%s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n\r\n" % (up, up)).encode())
head = b""
while b"\r\n\r\n" not in head:
    head += s.recv(1)
ctx = ssl.create_default_context(cafile=ca)
ctx.set_alpn_protocols(["h2"])
t = ctx.wrap_socket(s, server_hostname="127.0.0.1")
print("alpn", t.selected_alpn_protocol())
t.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
data = b""
try:
    while True:
        chunk = t.recv(4096)
        if not chunk:
            break
        data += chunk
except Exception:
    pass
print(data.split(b"\r\n")[0].decode("latin-1"))
print("unsupported_l7_protocol" in data.decode("latin-1"))
EOF
)
expect_eq "h2-only client: no ALPN, then 403 unsupported_l7_protocol" \
    "alpn None|HTTP/1.1 403 Forbidden|True" "$(printf '%s\n' "$out" | paste -sd'|')"
expect_log "the h2 refusal is logged" "HTTP/2 is not supported for L7-inspected endpoints"
sleep 0.3
expect_eq "h2 refusal: one decision line (and the tunnel's)" "$((n0 + 2))" "$(decisions)"
# over plain HTTP, curl --http2 asks to upgrade to h2c: refused with the
# reason (as the reference does; docs/proxy.md#real-clients), never upstream
out=$("$CURL" -s --http2 --max-time 10 -x "http://127.0.0.1:$PX" -w '|%{http_code}' "http://127.0.0.1:$UPH/echo/h2c")
expect_eq "curl --http2 on http://: 403 unsupported_l7_protocol" "403 unsupported_l7_protocol" \
    "${out##*|} $(printf '%s' "${out%|*}" | jq -r .error 2>/dev/null)"
expect_has "the h2c refusal says why" "HTTP/2 cleartext upgrades (h2c) are not supported" "$out"
if up_saw '^GET /echo/h2c$'; then fail "the upstream saw the h2c upgrade request"; else pass; fi
# curl is admitted on /echo only: the registry is denied to it
out=$("$CURL" -s --http2 --max-time 10 -w '|%{http_code}' "$BASE/npm/tinynpm")
expect_eq "curl on npm's path: 403" 403 "${out##*|}"
expect_not "closes without close_notify are not TLS failures" "unexpected eof" "$(cat "$T/proxy.log")"
expect_eq "each upstream request appears once" 1 "$(grep -c '^GET /echo/h2$' "$UPLOG")"

finish
