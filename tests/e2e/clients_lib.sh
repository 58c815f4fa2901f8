# shellcheck shell=bash
# clients_lib.sh - shared setup for the real-client scripts (clients_*.sh),
# sourced after proxy_lib.sh: the HTTPS upstream (clients_upstream.py, its
# certificate from proxy_lib's test CA, which the proxy trusts through
# --upstream-ca), a private HOME, and the environment that makes each client
# use the proxy and trust the proxy's CA the way docs/operations.md#client-ca
# tells users to.
#   need TOOL...          skip (77) unless every tool is installed
#   start_cupstream       sets UP (port) and UPLOG (one "METHOD TARGET" a line)
#   start_cupstream_plain the same upstream in plain HTTP: sets UPH
#   client_env            exports the proxy and CA variables (after start_proxy)
#   up_saw PATTERN        the upstream got a request matching the ERE
#   make_tinypkg GREETING a wheel of package tinypkg (GREETING in its module)
#                         and the simple index that lists it, under $T/www
PY=${PV_PYTHON:-/usr/bin/python3}
CUP=$SRC/tests/e2e/clients_upstream.py

need() {
    for tool in "$@"; do
        if ! command -v "$tool" >/dev/null 2>&1; then
            echo "SKIP: $tool is not installed (./bootstrap --deps installs it)"
            exit 77
        fi
    done
}
need "$PY" git

export HOME=$T/home
mkdir -p "$HOME" "$T/www" "$T/git"
export GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY ALL_PROXY all_proxy
unset GIT_SSL_CAINFO PIP_CERT REQUESTS_CA_BUNDLE NODE_EXTRA_CA_CERTS CURL_CA_BUNDLE SSL_CERT_FILE \
    npm_config_cafile

start_cupstream() {
    UPLOG=$T/up.log
    : >"$UPLOG"
    "$PY" "$CUP" --cert "$T/srv.pem" --key "$T/srv.key" --root "$T/www" --git-root "$T/git" \
        --log "$UPLOG" --port-file "$T/cup.port" 2>"$T/cup.err" &
    PIDS="$PIDS $!"
    wait_file "$T/cup.port" || { echo "upstream did not start"; cat "$T/cup.err"; exit 1; }
    read -r UP <"$T/cup.port"
}

start_cupstream_plain() {
    "$PY" "$CUP" --root "$T/www" --git-root "$T/git" --log "$UPLOG" --port-file "$T/cuph.port" \
        2>"$T/cuph.err" &
    PIDS="$PIDS $!"
    wait_file "$T/cuph.port" || { echo "upstream did not start"; cat "$T/cuph.err"; exit 1; }
    read -r UPH <"$T/cuph.port"
}

# client_env: every client goes through the proxy and trusts its CA
# ($T/data/ca.crt, the file the proxy names at start) and nothing else.
client_env() {
    CA=$T/data/ca.crt
    export https_proxy=http://127.0.0.1:$PX HTTPS_PROXY=http://127.0.0.1:$PX
    export http_proxy=http://127.0.0.1:$PX HTTP_PROXY=http://127.0.0.1:$PX
    export GIT_SSL_CAINFO=$CA PIP_CERT=$CA REQUESTS_CA_BUNDLE=$CA
    export NODE_EXTRA_CA_CERTS=$CA CURL_CA_BUNDLE=$CA SSL_CERT_FILE=$CA
    # a cafile in any npmrc (Debian's /etc/npmrc names the system bundle)
    # replaces node's store and NODE_EXTRA_CA_CERTS with it: name ours
    export npm_config_cafile=$CA
}
# no_ca CMD...: run CMD with none of the CA variables
no_ca() {
    env -u GIT_SSL_CAINFO -u PIP_CERT -u REQUESTS_CA_BUNDLE -u NODE_EXTRA_CA_CERTS \
        -u CURL_CA_BUNDLE -u SSL_CERT_FILE -u npm_config_cafile "$@"
}

up_saw() { grep -Eq -- "$1" "$UPLOG"; }

# decisions: the number of decision lines in the proxy log so far
decisions() { grep -c 'OCSF' "$T/proxy.log" 2>/dev/null; }

make_tinypkg() {
    mkdir -p "$T/www/simple/tinypkg" "$T/www/files"
    "$PY" - "$T/www/files/tinypkg-1.0-py3-none-any.whl" "$1" <<'EOF'
import base64, hashlib, sys, zipfile
files = {
    "tinypkg/__init__.py": ('GREETING = "%s"\n' % sys.argv[2]).encode(),
    "tinypkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
    "tinypkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
for name, data in files.items():
    d = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record.append("%s,sha256=%s,%d" % (name, d, len(data)))
record.append("tinypkg-1.0.dist-info/RECORD,,")
files["tinypkg-1.0.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for name, data in files.items():
        z.writestr(name, data)
EOF
    WSHA=$(sha256sum "$T/www/files/tinypkg-1.0-py3-none-any.whl" | cut -d' ' -f1)
    printf '<!DOCTYPE html><html><body><a href="tinypkg/">tinypkg</a></body></html>\n' \
        >"$T/www/simple/index.html"
    printf '<!DOCTYPE html><html><body><a href="../../files/tinypkg-1.0-py3-none-any.whl#sha256=%s">tinypkg-1.0-py3-none-any.whl</a></body></html>\n' \
        "$WSHA" >"$T/www/simple/tinypkg/index.html"
}
