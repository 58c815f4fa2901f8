#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sd_notify.sh - the three servers tell systemd they are ready (the units are
# Type=notify): each is started with $NOTIFY_SOCKET naming a datagram
# socket (a path, then an abstract '@' name for the advisor), and "READY=1"
# must arrive once it listens; a bad $NOTIFY_SOCKET is a warning, never a
# failure to start.
set -u
BUILD=${PV_BUILDDIR:-$(pwd)}
SRC=${PV_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
for b in proviso-prover proviso-advisor proviso-proxy; do
    [ -x "$BUILD/$b" ] || { echo "SKIP: build $b first"; exit 77; }
done
T=$(mktemp -d /tmp/pv-notify.XXXXXX)
PIDS=""
FAILS=0 CHECKS=0
. "$SRC/tests/pid_lib.sh"
cleanup() {
    # shellcheck disable=SC2086
    kill_own TERM $PIDS
    for p in $PIDS; do wait "$p" 2>/dev/null; done
    rm -rf "$T"
}
trap cleanup EXIT
ok() { CHECKS=$((CHECKS + 1)); }
no() { CHECKS=$((CHECKS + 1)); FAILS=$((FAILS + 1)); echo "FAIL: $*"; }

# listen NAME: a datagram socket that writes what it gets to $T/NAME.got
listen() {
    python3 - "$1" "$T/$2.got" <<'PY' &
import socket, sys
name, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + name[1:] if name.startswith("@") else name)
open(out + ".up", "w").close()
s.settimeout(30)
try:
    data = s.recv(4096)
except socket.timeout:
    data = b"(timeout)"
open(out, "wb").write(data)
PY
    PIDS="$PIDS $!"
    i=0
    while [ ! -e "$T/$2.got.up" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
}
got() { # NAME: wait for the datagram
    i=0
    while [ ! -s "$T/$1.got" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
    cat "$T/$1.got" 2>/dev/null
}

printf '%s\n' "0123456789abcdef0123456789abcdef" >"$T/tok"
chmod 600 "$T/tok"

listen "$T/prover.sock" prover
NOTIFY_SOCKET=$T/prover.sock "$BUILD/proviso-prover" --port 0 --token-file "$T/tok" \
    >"$T/prover.log" 2>&1 &
PIDS="$PIDS $!"
[ "$(got prover)" = "READY=1" ] && ok || no "prover: no READY=1 ($(got prover)): $(cat "$T/prover.log")"

listen "@pv-notify-$$" advisor
NOTIFY_SOCKET=@pv-notify-$$ "$BUILD/proviso-advisor" --data-dir "$T/adv" --port 0 \
    --token-file "$T/tok" >"$T/advisor.log" 2>&1 &
PIDS="$PIDS $!"
[ "$(got advisor)" = "READY=1" ] && ok || no "advisor (abstract socket): no READY=1 ($(got advisor))"
grep -q "listening on 127.0.0.1 port" "$T/advisor.log" && ok || no "advisor: READY before listening"
# the prover child must not inherit $NOTIFY_SOCKET: its own READY=1 would
# reach the socket before the advisor listens
adv=${PIDS##* }
kid=$(pgrep -P "$adv" proviso-prover | head -1)
if [ -n "$kid" ]; then
    tr '\0' '\n' <"/proc/$kid/environ" | grep -q '^NOTIFY_SOCKET=' &&
        no "the prover child inherited NOTIFY_SOCKET" || ok
else
    no "advisor: no prover child found"
fi

printf 'version: 1\nnetwork_policies: {}\n' >"$T/policy.yaml"
listen "$T/proxy.sock" proxy
NOTIFY_SOCKET=$T/proxy.sock "$BUILD/proviso-proxy" --policy "$T/policy.yaml" --data-dir "$T/px" \
    --port 0 --admin-port 0 --port-file "$T/px.port" --log "$T/px.log" >"$T/proxy.out" 2>&1 &
PIDS="$PIDS $!"
[ "$(got proxy)" = "READY=1" ] && ok || no "proxy: no READY=1 ($(got proxy)): $(cat "$T/proxy.out")"

# a socket that is not there: a warning, and the server runs
NOTIFY_SOCKET=$T/none.sock "$BUILD/proviso-prover" --port 0 --token-file "$T/tok" \
    >"$T/bad.log" 2>&1 &
bad=$!
PIDS="$PIDS $bad"
i=0
while ! grep -q "listening on" "$T/bad.log" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.2
grep -q 'cannot tell systemd we are ready' "$T/bad.log" && ok || no "no warning for a missing socket"
kill -0 "$bad" 2>/dev/null && ok || no "the prover stopped on a missing notify socket"

echo "sd_notify.sh: $CHECKS checks, $FAILS failures"
[ "$FAILS" = 0 ]
