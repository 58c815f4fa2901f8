# SPDX-License-Identifier: Apache-2.0
# proxy_lib.sh - shared setup for the proviso-proxy end-to-end scripts
#
# Sourced by tests/e2e/proxy_*.sh (bash). Provides a scratch directory, a test
# CA and upstream certificate, the upstream server (tests/e2e/proxy_upstream),
# proviso-proxy on free 127.0.0.1 ports, a raw-socket client ($RAW, a copy of
# bash so that its identity differs from the test shell's) and assertions.
# Every process started here is stopped by the EXIT trap.

set -u
BUILD=${PV_BUILDDIR:-$(pwd)}
SRC=${PV_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
PROXY_BIN=$BUILD/proviso-proxy
UPSTREAM_BIN=$BUILD/tests/e2e/proxy_upstream
CURL=/usr/bin/curl
WGET=/usr/bin/wget

for tool in "$CURL" "$WGET" openssl; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "SKIP: $tool is not installed"
        exit 77
    fi
done
if [ ! -x "$PROXY_BIN" ] || [ ! -x "$UPSTREAM_BIN" ]; then
    echo "SKIP: build proviso-proxy and tests/e2e/proxy_upstream first"
    exit 77
fi

. "$SRC/tests/pid_lib.sh"
T=$(mktemp -d /tmp/pv-proxy-e2e.XXXXXX)
PIDS=""
FAILS=0
CHECKS=0

cleanup() {
    # shellcheck disable=SC2086
    kill_own TERM $PIDS
    for p in $PIDS; do
        wait "$p" 2>/dev/null
    done
    if [ "$FAILS" -ne 0 ] && [ -f "$T/proxy.log" ]; then
        echo "---- proxy log"
        tail -n 40 "$T/proxy.log"
    fi
    rm -rf "$T"
}
trap cleanup EXIT

pass() { CHECKS=$((CHECKS + 1)); }
fail() {
    CHECKS=$((CHECKS + 1))
    FAILS=$((FAILS + 1))
    echo "FAIL: $*"
}

# expect_eq NAME WANT GOT
expect_eq() {
    if [ "$2" = "$3" ]; then pass; else fail "$1: want [$2] got [$3]"; fi
}
# expect_has NAME NEEDLE HAYSTACK
expect_has() {
    case "$3" in
    *"$2"*) pass ;;
    *) fail "$1: [$2] not in [$(printf '%s' "$3" | head -c 600)]" ;;
    esac
}
expect_not() {
    case "$3" in
    *"$2"*) fail "$1: [$2] unexpectedly in [$(printf '%s' "$3" | head -c 600)]" ;;
    *) pass ;;
    esac
}

finish() {
    echo "$(basename "$0"): $CHECKS checks, $FAILS failures"
    [ "$FAILS" -eq 0 ]
    exit $?
}

wait_file() {
    i=0
    while [ ! -s "$1" ] && [ $i -lt "${PV_START_TRIES:-400}" ]; do
        sleep 0.05
        i=$((i + 1))
    done
    [ -s "$1" ]
}

# start_logged NAME COMMAND [ARGS...]: start a logging upstream, COMMAND
# (words split: "$PY path/to/server.py [subcommand]") with --port-file
# $T/NAME.port --log $T/NAME.log and ARGS, its pid in PIDS; sets
# ${NAME}_PORT, and $T/NAME.log exists.
start_logged() {
    n=$1
    cmd=$2
    shift 2
    # shellcheck disable=SC2086
    $cmd --port-file "$T/$n.port" --log "$T/$n.log" "$@" 2>"$T/$n.err" &
    PIDS="$PIDS $!"
    wait_file "$T/$n.port" || { echo "upstream $n did not start"; cat "$T/$n.err"; exit 1; }
    eval "${n}_PORT=$(cat "$T/$n.port")"
    touch "$T/$n.log"
}

# make_certs: $T/ca.pem (test CA), $T/srv.pem/$T/srv.key for 127.0.0.1
make_certs() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
        -keyout "$T/ca.key" -out "$T/ca.pem" -days 2 -subj "/CN=proviso e2e test CA" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign" 2>/dev/null || return 1
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/srv.key" \
        -out "$T/srv.csr" -subj "/CN=127.0.0.1" 2>/dev/null || return 1
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
        >"$T/ext.cnf"
    openssl x509 -req -in "$T/srv.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial \
        -out "$T/srv.pem" -days 2 -extfile "$T/ext.cnf" 2>/dev/null
}

# start_upstream NAME: sets ${NAME}_HTTP and ${NAME}_HTTPS ports
start_upstream() {
    "$UPSTREAM_BIN" --port-file "$T/$1.port" --cert "$T/srv.pem" --key "$T/srv.key" \
        2>"$T/$1.err" &
    PIDS="$PIDS $!"
    wait_file "$T/$1.port" || { echo "upstream did not start"; cat "$T/$1.err"; exit 1; }
    read -r h s <"$T/$1.port"
    eval "$1_HTTP=$h; $1_HTTPS=$s"
}

# start_proxy [ARGS...]: policy in $T/policy.yaml; sets PX, ADM, PX_PID
start_proxy() {
    rm -f "$T/px.port"
    # PROXY_WRAPPER runs the proxy under a tool, e.g. "valgrind --error-exitcode=9"
    ${PROXY_WRAPPER:-} "$PROXY_BIN" --policy "$T/policy.yaml" --port 0 --admin-port 0 --port-file "$T/px.port" \
        --data-dir "$T/data" --log "$T/proxy.log" --upstream-ca "$T/ca.pem" \
        --test-allow-loopback --reload-interval 100 "$@" 2>>"$T/proxy.err" &
    PX_PID=$!
    PIDS="$PIDS $PX_PID"
    wait_file "$T/px.port" || { echo "proxy did not start"; cat "$T/proxy.err"; exit 1; }
    read -r PX ADM <"$T/px.port"
}

stop_proxy() {
    kill "$PX_PID" 2>/dev/null
    wait "$PX_PID" 2>/dev/null
}

# reload_policy: swap in $T/policy.next.yaml and SIGHUP, wait for the log line
reload_policy() {
    n=$(grep -c 'policy reloaded\|policy reload' "$T/proxy.log" 2>/dev/null)
    mv "$T/policy.next.yaml" "$T/policy.yaml"
    kill -HUP "$PX_PID"
    i=0
    while [ $i -lt 100 ]; do
        m=$(grep -c 'policy reloaded\|policy reload' "$T/proxy.log" 2>/dev/null)
        [ "$m" -gt "$n" ] && return 0
        sleep 0.02
        i=$((i + 1))
    done
    return 1
}

# pcurl ARGS...: curl through the proxy; prints the body then "|CODE"
pcurl() {
    "$CURL" -s --max-time 5 -x "http://127.0.0.1:$PX" -w '|%{http_code}' "$@"
}

# pwget URL [ARGS...]: wget through the proxy, body even on errors
pwget() {
    url=$1
    shift
    "$WGET" -q -T 5 -t 1 --content-on-error -O - -e use_proxy=yes \
        -e "http_proxy=http://127.0.0.1:$PX" -e "https_proxy=http://127.0.0.1:$PX" "$@" "$url"
}

# The decision log is flushed when the proxy's loop goes idle: poll for it.
log_has() {
    i=0
    while [ $i -lt 50 ]; do
        if grep -qF -- "$1" "$T/proxy.log" 2>/dev/null; then
            return 0
        fi
        sleep 0.02
        i=$((i + 1))
    done
    return 1
}
expect_log() {
    if log_has "$2"; then pass; else fail "$1: log has no [$2]"; fi
}

# RAW: a copy of bash (its own identity) for hand-written requests.
mkdir -p "$T/bin"
cp "$(readlink -f /bin/bash)" "$T/bin/rawclient"
RAW=$T/bin/rawclient

# raw_send BYTES: one connection to the proxy, send BYTES (printf format),
# print everything received until the proxy closes (3 s at most).
raw_send() {
    "$RAW" -c '
        exec 3<>/dev/tcp/127.0.0.1/'"$PX"' || exit 1
        printf "$1" >&3
        while IFS= read -r -t 3 line <&3 || [ -n "$line" ]; do
            printf "%s\n" "$line"
        done' rawclient "$1" 2>/dev/null
}

# raw_tunnel HOST:PORT BYTES: CONNECT, print the proxy's status line, then
# send BYTES (printf format) through the tunnel and print the answer.
raw_tunnel() {
    "$RAW" -c '
        exec 3<>/dev/tcp/127.0.0.1/'"$PX"' || exit 1
        printf "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" "$1" "$1" >&3
        IFS= read -r -t 3 status <&3
        printf "%s\n" "$status"
        case "$status" in *" 200 "*) ;; *) cat <&3; exit 0 ;; esac
        while IFS= read -r -t 3 l <&3; do [ "$l" = $'"'"'\r'"'"' ] && break; done
        printf "$2" >&3
        while IFS= read -r -t 3 line <&3 || [ -n "$line" ]; do
            printf "%s\n" "$line"
        done' rawclient "$1" "$2" 2>/dev/null
}

make_certs || { echo "openssl failed"; exit 1; }
