#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sandbox.sh - `proviso sandbox run` (docs/sandbox.md), judged by what
# listeners in the host's namespace received: an allowed request through the
# proxy arrives; a denied one and every escape attempt (TCP and UDP to the
# host's 127.0.0.1 and ::1, a DNS query to a resolver on the host's
# loopback, raw and packet sockets, an abstract and a filesystem Unix socket,
# writing a policy binary, ptrace, setns, a user namespace, TIOCSTI, setuid)
# do not; identity names the binary inside; the exit status is the
# command's; SIGTERM reaches the command's tree; nothing is left after a
# normal end, a crash, or SIGKILL of proviso; two sandboxes run side by
# side; a policy binary under a read_write path and a missing user refuse to
# start. Every listener is on loopback; the sandbox has no other interface.
# Needs root (CI runs as root); skipped (77) otherwise.
set -u
B=${PV_BUILDDIR:-.}
S=${PV_SRCDIR:-.}
. "$S/tests/pid_lib.sh"
if [ "$(id -u)" != 0 ] || ! unshare --net true 2>/dev/null; then
    echo "SKIP: sandbox.sh needs root and namespaces"
    exit 77
fi
if ! id sandbox >/dev/null 2>&1; then
    useradd --system --user-group --home-dir /sandbox --shell /usr/sbin/nologin sandbox || exit 1
fi
T=$(mktemp -d /tmp/pv-sandbox.XXXXXX)
chmod 755 "$T"
pass=0
fail=0
PIDS=""
cleanup() {
    kill_own TERM $PIDS # (kill_own "$p" named no process: each run left its listeners)
    rm -rf "$T"
    [ -n "${RT:-}" ] && rm -rf "$RT"
    [ -n "${UPATH:-}" ] && rm -rf "${UPATH%/sock}" # /run/pv-sandbox-PID was left behind
}
trap cleanup EXIT
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $1"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
# limit NAME CHECK: a documented limit of identity (docs/security.md, "What
# it does not guarantee"): the outcome is printed, never failed
limit() { if eval "$2"; then echo "# limit holds - $1"; else echo "# limit (documented) - $1"; fi; }
# alive PID: running (a zombie whose reaper is slow has ended)
alive() { [ -r "/proc/$1/status" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

# Host listeners: an HTTP upstream (request lines logged), a TCP listener on
# ::1, a UDP listener (also the "resolver"), abstract and path Unix sockets.
cat >"$T/listen.py" <<'EOF'
import http.server, os, socket, sys, threading
log = open(sys.argv[1], "a", buffering=1)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        log.write("http " + self.path + "\n")
        self.send_response(200); self.send_header("Content-Length", "3"); self.end_headers()
        self.wfile.write(b"ok\n")
    def log_message(self, *a): pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
def tcp_any(fam, addr, tag):
    s = socket.socket(fam, socket.SOCK_STREAM); s.bind(addr); s.listen(8)
    def run():
        while True:
            c, _ = s.accept(); log.write(tag + " connection\n"); c.close()
    threading.Thread(target=run, daemon=True).start(); return s
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0))
    def run():
        while True:
            d, a = s.recvfrom(512); log.write("udp %r\n" % d[:20]); s.sendto(d, a)
    threading.Thread(target=run, daemon=True).start(); return s
t6 = tcp_any(socket.AF_INET6, ("::1", 0), "tcp6")
u = udp()
ab = tcp_any(socket.AF_UNIX, "\0" + sys.argv[2], "abstract")
os.makedirs(os.path.dirname(sys.argv[3]), exist_ok=True)
pu = tcp_any(socket.AF_UNIX, sys.argv[3], "path-unix"); os.chmod(sys.argv[3], 0o777)
open(sys.argv[4], "w").write("%d %d %d\n" % (srv.server_address[1], t6.getsockname()[1], u.getsockname()[1]))
srv.serve_forever()
EOF
ABS="pv-sandbox-$$"
UPATH="/run/pv-sandbox-$$/sock"
python3 "$T/listen.py" "$T/host.log" "$ABS" "$UPATH" "$T/ports" &
PIDS="$PIDS $!"
for _ in $(seq 100); do [ -s "$T/ports" ] && break; sleep 0.05; done
read -r HTTP TCP6 UDP <"$T/ports"
touch "$T/host.log"

mkdir -p "$T/work"
chmod 777 "$T/work"
cat >"$T/policy.yaml" <<EOF
version: 1
filesystem_policy:
  include_workdir: false
  read_only: [/usr, /lib, /lib64, /etc, /proc, /dev/urandom, $T/ro]
  read_write: [/tmp, /dev/null, $T/work]
landlock:
  compatibility: best_effort
network_policies:
  local:
    name: local
    endpoints:
      - host: 127.0.0.1
        port: $HTTP
    binaries:
      - path: /usr/bin/curl
EOF
mkdir -p "$T/ro"
cp "$S/tests/e2e/sandbox_escape.py" "$T/ro/escape.py"
cp /usr/bin/id "$T/work/suid-id"
chmod 4755 "$T/work/suid-id"
PV=$B/proviso
sbrun() { "$PV" sandbox run --policy "$T/policy.yaml" --test-allow-loopback --log "$T/proxy.log" "$@"; }

# 1. an allowed request arrives; a denied binary's does not
out=$(sbrun -- curl -s -m 5 "http://127.0.0.1:$HTTP/allowed-curl" 2>&1)
check "allowed curl answered" '[ "$out" = ok ]'
check "upstream received the allowed request" 'grep -q "^http /allowed-curl$" "$T/host.log"'
out=$(sbrun -- python3 -c "import urllib.request as u
try: u.urlopen('http://127.0.0.1:$HTTP/denied-python', timeout=5)
except Exception as e: print(e)" 2>&1)
check "python (not a policy binary) denied 403" 'echo "$out" | grep -q "403"'
check "upstream never saw the denied request" '! grep -q denied-python "$T/host.log"'
check "identity inside: curl named" 'grep -q "ALLOWED /usr/bin/curl(.*allowed-curl" "$T/proxy.log"'
check "identity inside: python named in its denial" 'grep -q "DENIED /usr/bin/python3[.0-9]*(.*denied-python" "$T/proxy.log"'

# 2. the environment: both spellings of the proxy, the CA for every client
env_out=$(sbrun -- /usr/bin/env 2>/dev/null)
for v in http_proxy=http://127.0.0.1:3128 HTTPS_PROXY=http://127.0.0.1:3128 NO_PROXY= \
    SSL_CERT_FILE=/.proviso/ca-bundle.crt REQUESTS_CA_BUNDLE=/.proviso/ca-bundle.crt \
    PIP_CERT=/.proviso/ca-bundle.crt GIT_SSL_CAINFO=/.proviso/ca-bundle.crt \
    npm_config_cafile=/.proviso/ca-bundle.crt NODE_EXTRA_CA_CERTS=/.proviso/ca.crt; do
    check "env $v" 'echo "$env_out" | grep -qx "$v"'
done
SECRET_TOKEN=leak sbrun -- /usr/bin/env >"$T/env2" 2>/dev/null
check "the caller's other variables stay out" '! grep -q SECRET_TOKEN "$T/env2"'
check "the CA is readable inside" 'sbrun -- /bin/sh -c "grep -q BEGIN /.proviso/ca.crt" 2>/dev/null'
check "the proxy's key is not" '! sbrun -- /bin/sh -c "cat /.proviso-proxy/ca.key" >/dev/null 2>&1'

# 3. escapes, judged by the host's listeners
cp /bin/sh "$T/work/evil"
out=$(sbrun -- python3 "$T/ro/escape.py" "$HTTP" "$TCP6" "$UDP" "$ABS" "$UPATH" \
    /usr/bin/curl </dev/null 2>&1)
echo "$out" | sed 's/^/    /'
for a in tcp4 tcp6 udp4 dns getaddrinfo raw packet abstract_unix path_unix write_binary \
    ptrace_init setns_host userns tiocsti setuid_root; do
    check "escape $a blocked" 'echo "$out" | grep -q "^$a blocked"'
done
# red team (branch redteam): these ESCAPED when they were added
for a in vsock vsock_io_uring ptrace_child pidfd_getfd_child proc_mem_child; do
    check "REDTEAM escape $a blocked" 'echo "$out" | grep -q "^$a blocked"'
done
check "tiocsti refused by the filter (EPERM, not ENOTTY)" 'echo "$out" | grep -q "^tiocsti blocked: EPERM"'
check "host listeners received nothing from the escapes" \
    '! grep -q "escape\|tcp6 connection\|udp \|abstract connection\|path-unix connection" "$T/host.log"'
check "the policy binary is unchanged" 'cmp -s /usr/bin/curl "$(command -v curl)"'
out=$(sbrun -- "$T/work/suid-id" -u 2>/dev/null)
check "a setuid binary gives no root (nosuid, no_new_privs)" '[ "$out" = "$(id -u sandbox)" ]'
out=$(sbrun -- /bin/sh -c 'ls /run /root /home 2>&1; echo x > /etc/pv-x 2>&1; ls /proc | grep -c "^[0-9]"' 2>&1)
check "paths outside the policy do not exist" 'echo "$out" | grep -q "/run.*No such file"'
check "read_only is read-only" 'echo "$out" | grep -q "pv-x.*\(Read-only\|Permission denied\)"'
sbrun -- /bin/sh -c "echo inside >$T/work/written; echo tmp >/tmp/pv-sbw-$$" 2>/dev/null
check "a read_write path is the host's (a file written inside is there)" \
    '[ "$(cat "$T/work/written" 2>/dev/null)" = inside ]'
check "/tmp is the sandbox's own (a file written there is not the host's)" '[ ! -e /tmp/pv-sbw-$$ ]'
rm -f "/tmp/pv-sbw-$$"
mounts=$(sbrun -- /bin/sh -c 'cut -d" " -f5 /proc/self/mountinfo' 2>/dev/null | sort | tr '\n' ' ')
check "the mounts are the policy's paths and /proc, nothing else" \
    '[ "$mounts" = "$(printf "%s\n" / /dev/null /dev/urandom /etc /lib /lib64 /proc /tmp /usr "$T/ro" "$T/work" | sort | tr "\n" " ")" ]'
check "only the sandbox's processes are visible" '[ "$(echo "$out" | tail -1)" -le 4 ]'

# 4. exit status, signals, teardown
sbrun -- /bin/sh -c 'exit 7' 2>/dev/null
check "exit status is the command's" '[ $? = 7 ]'
sbrun -- /bin/sh -c 'kill -SEGV $$' 2>/dev/null
check "a crash is 128+signal" '[ $? = 139 ]'
# proviso itself in the background ($! is its pid, not a subshell's)
"$PV" sandbox run --policy "$T/policy.yaml" --log "$T/proxy.log" --verbose -- \
    /bin/sh -c 'sleep 300 & sleep 301 & wait' 2>"$T/v.err" &
RUN=$!
PIDS="$PIDS $RUN"
for _ in $(seq 100); do grep -q "init [0-9]" "$T/v.err" && break; sleep 0.05; done
INIT=$(sed -n 's/.*init \([0-9]*\), proxy \([0-9]*\).*/\1/p' "$T/v.err")
PROXY=$(sed -n 's/.*init \([0-9]*\), proxy \([0-9]*\).*/\2/p' "$T/v.err")
sleep 0.3
kill -TERM "$RUN"
wait "$RUN"
rc=$?
check "SIGTERM ends the command's tree (status 143)" '[ $rc = 143 ]'
check "nothing left: init, the command, the proxy" \
    '! alive "$INIT" && ! alive "$PROXY" && ! pgrep -f "sleep 30[01]" >/dev/null'
"$PV" sandbox run --policy "$T/policy.yaml" --log "$T/proxy.log" --verbose -- \
    /bin/sh -c 'sleep 302' 2>"$T/k.err" &
RUN=$!
for _ in $(seq 100); do grep -q "init [0-9]" "$T/k.err" && break; sleep 0.05; done
INIT=$(sed -n 's/.*init \([0-9]*\), proxy \([0-9]*\).*/\1/p' "$T/k.err")
PROXY=$(sed -n 's/.*init \([0-9]*\), proxy \([0-9]*\).*/\2/p' "$T/k.err")
NS=$(readlink "/proc/$INIT/ns/net")
kill -KILL "$RUN"
wait "$RUN" 2>/dev/null
for _ in $(seq 40); do pgrep -f "sleep 302" >/dev/null || break; sleep 0.05; done
check "after SIGKILL of proviso: no init, command or proxy" \
    '! alive "$INIT" && ! alive "$PROXY" && ! pgrep -f "sleep 302" >/dev/null'
check "after SIGKILL of proviso: the namespace is gone" \
    '! ls -l /proc/[0-9]*/ns/net 2>/dev/null | grep -q "$NS"'
check "no mount of the sandbox is left on the host" '! grep -q "pv-sandbox\|proviso" /proc/self/mountinfo'

# 5. two sandboxes side by side, each with its own proxy on 127.0.0.1:3128
sbrun -- curl -s -m 5 "http://127.0.0.1:$HTTP/side-a" >"$T/a.out" 2>/dev/null &
A=$!
sbrun -- curl -s -m 5 "http://127.0.0.1:$HTTP/side-b" >"$T/b.out" 2>/dev/null &
Bp=$!
wait "$A" "$Bp"
check "two sandboxes side by side" 'grep -q side-a "$T/host.log" && grep -q side-b "$T/host.log"'

# 6. refusals
sed "s|      - path: /usr/bin/curl|      - path: $T/work/evil|" "$T/policy.yaml" >"$T/bad.yaml"
out=$("$PV" sandbox run --policy "$T/bad.yaml" -- true 2>&1)
rc=$?
check "a policy binary under read_write refuses to start (125)" \
    '[ $rc = 125 ] && echo "$out" | grep -q "lies where the command can write"'
sed 's|^landlock:|process:\n  run_as_user: "4000000000"\nlandlock:|' "$T/policy.yaml" >"$T/nouser.yaml"
out=$("$PV" sandbox run --policy "$T/nouser.yaml" --log "$T/proxy.log" -- id -u 2>&1)
check "a numeric user without an entry still runs as that uid" '[ "$(echo "$out" | tail -1)" = 4000000000 ]'
out=$("$PV" sandbox run --policy "$T/policy.yaml" 2>&1)
check "no command is a usage error (2)" '[ $? = 2 ]'

# 7. red team (branch redteam). Every check below failed (an escape) when it
# was added; docs/sandbox.md's promises are what they hold the sandbox to.
# outside /tmp: the stage of the new root is the host's /tmp (7e depends on it)
RT=$(mktemp -d /var/tmp/pv-sandbox-rt.XXXXXX)
mkdir -p "$RT/ro"
chmod 755 "$RT" "$RT/ro"
# rtpol FILE READ_WRITE_LIST [BINARY] [EXTRA_READ_ONLY] [INCLUDE_WORKDIR]
rtpol() {
    cat >"$1" <<EOP
version: 1
filesystem_policy:
  include_workdir: ${5:-false}
  read_only: [/usr, /lib, /lib64, /etc, /proc, /dev/urandom, /dev/null, $RT/ro${4:+, $4}]
  read_write: [$2]
network_policies:
  local:
    name: local
    endpoints:
      - host: 127.0.0.1
        port: $HTTP
    binaries:
      - path: "${3:-/usr/bin/curl}"
EOP
}

# 7a. identity: a denied process writes its request, corked (TCP_CORK holds
# it ~200 ms), then execs the policy binary: the proxy names the binary that
# holds the socket when it looks, not the image that wrote the bytes. The
# socket also goes in flight (SCM_RIGHTS) to a helper that takes the
# connection back once it was attributed and sends more requests on it (an
# upstream that keeps the connection alive receives them as curl's too; the
# listener here closes it after one answer, so only the first is judged).
cat >"$T/ro/cork.py" <<'PYEOF'
import array, os, signal, socket, sys, time
port = int(sys.argv[1])
a, b = socket.socketpair()
me = os.getpid()
if os.fork() == 0:
    a.close(); time.sleep(1.0)
    try:
        _, anc, _, _ = b.recvmsg(1, socket.CMSG_LEN(4))
        s = socket.socket(fileno=array.array("i", anc[0][2])[0])
        s.recv(300)
        s.sendall(b"GET http://127.0.0.1:%d/escape-cork-second HTTP/1.1\r\nHost: x\r\n\r\n" % port)
        s.recv(300)
    finally:
        os.kill(me, signal.SIGTERM); os._exit(0)
b.close()
s = socket.create_connection(("127.0.0.1", 3128))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
s.sendall(b"GET http://127.0.0.1:%d/escape-cork-first HTTP/1.1\r\nHost: x\r\n\r\n" % port)
a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [s.fileno()]))])
a.close()
os.dup2(s.fileno(), 10)
r, w = os.pipe(); os.set_inheritable(w, True); os.dup2(r, 0)
os.execv("/usr/bin/curl", ["curl", "-s", "-K", "-"])
PYEOF
sbrun -- python3 "$T/ro/cork.py" "$HTTP" >/dev/null 2>&1
limit "a corked request then exec of the policy binary is not attributed to it" \
    '! grep -q "escape-cork-first" "$T/host.log"'

# 7b. identity: a memfd's name may hold '/': exec of memfd "x/curl" is named
# /memfd:x/curl (its " (deleted)" dropped), which a "**/curl" pattern
# matches; with no read_write path the plan has nothing to refuse.
cat >"$RT/ro/memfd.py" <<'PYEOF'
import os, sys
fd = os.memfd_create("x/curl", 0)
os.write(fd, open("/usr/bin/python3", "rb").read())
os.execve("/proc/self/fd/%d" % fd, ["curl", "-c", "import urllib.request as u; u.urlopen('http://127.0.0.1:%s/escape-memfd', timeout=5)" % sys.argv[1]], dict(os.environ))
PYEOF
rtpol "$RT/glob.yaml" "" "**/curl"
"$PV" sandbox run --policy "$RT/glob.yaml" --test-allow-loopback --log "$T/proxy.log" -- \
    python3 "$RT/ro/memfd.py" "$HTTP" >/dev/null 2>&1
check "REDTEAM a memfd named x/curl is not **/curl" '! grep -q escape-memfd "$T/host.log"'

# 7c. a policy binary's directory written through another spelling of a
# read_write path ("." or a symbolic link): the plan compares strings
mkdir -p "$RT/bin"
chown sandbox: "$RT/bin"
ln -sfn bin "$RT/binlink"
rtpol "$RT/dot.yaml" "$RT/./bin" "$RT/bin/tool"
out=$("$PV" sandbox run --policy "$RT/dot.yaml" -- true 2>&1)
check "REDTEAM a read_write path spelt with /./ over a policy binary refuses to start" \
    'echo "$out" | grep -q "lies where the command can write"'
rtpol "$RT/link.yaml" "$RT/binlink" "$RT/bin/tool" "$RT/bin"
"$PV" sandbox run --policy "$RT/link.yaml" --test-allow-loopback --log "$T/proxy.log" -- \
    /bin/sh -c "cp /usr/bin/python3 $RT/binlink/tool && $RT/bin/tool -c \"import urllib.request as u; u.urlopen('http://127.0.0.1:$HTTP/escape-binlink', timeout=5)\"" \
    >/dev/null 2>&1
check "REDTEAM a policy binary written through a symlinked read_write path is not named" \
    '! grep -q escape-binlink "$T/host.log"'

# 7d. the policy and the log (and --credentials) in a read_write path: the
# proxy reloads a policy the command rewrote; root's proxy opens the log
# the command replaced with a symbolic link
mkdir -p "$RT/ws"
chown sandbox: "$RT/ws"
rtpol "$RT/ws/policy.yaml" "/dev/null" "" "" true
(cd "$RT/ws" && "$PV" sandbox run --policy policy.yaml --test-allow-loopback --log "$T/proxy.log" -- \
    /bin/sh -c "sed 's|/usr/bin/curl|/usr/bin/python3*|' policy.yaml >p.new && mv -f p.new policy.yaml && sleep 2.5 &&
    python3 -c \"import urllib.request as u; u.urlopen('http://127.0.0.1:$HTTP/escape-reload', timeout=5)\"" \
    >/dev/null 2>&1)
check "REDTEAM a policy the command rewrote is not reloaded" '! grep -q escape-reload "$T/host.log"'
rm -f "$RT/ws/policy.yaml"
rtpol "$RT/ws/policy.yaml" "/dev/null" "" "" true
(
    cd "$RT/ws" || exit 1
    "$PV" sandbox run --policy policy.yaml --log sandbox.log -- \
        /bin/sh -c "rm -f sandbox.log; ln -s $RT/victim sandbox.log" >/dev/null 2>&1
    "$PV" sandbox run --policy policy.yaml --log sandbox.log -- true >/dev/null 2>&1
)
check "REDTEAM root's proxy does not follow the command's symbolic link for --log" '[ ! -e "$RT/victim" ]'

# 7e. a policy path nested in a read_write one the command can write: made
# a relative symbolic link (in a first run: the path was missing then), it
# is followed by root both for the source (on the host) and for the mount
# point (in the new root), and "../.." climbs out of the new root.
mkdir -p "$RT/ws2"
chown sandbox: "$RT/ws2"
rtpol "$RT/nested.yaml" "$RT/ws2, $RT/ws2/cache"
up=$(echo "$RT/ws2" | sed 's|/[^/]*|../|g') # from $RT/ws2 up to /
"$PV" sandbox run --policy "$RT/nested.yaml" --log "$T/proxy.log" -- \
    /bin/sh -c "ln -s ${up%/} $RT/ws2/cache" >/dev/null 2>&1
out=$("$PV" sandbox run --policy "$RT/nested.yaml" --log "$T/proxy.log" -- \
    /bin/sh -c 'for d in /run /home /root /work; do [ -e $d ] && echo $d; done' 2>/dev/null)
check "REDTEAM a nested path made a symlink does not give the host's root" '[ -z "$out" ]'
check "REDTEAM nothing written on the host's root (/.proviso, /.proviso-proxy)" \
    '[ ! -e /.proviso-proxy ] && [ ! -e /.proviso ]'
rm -rf /.proviso /.proviso-proxy # what the escape left behind
rm -f "$RT/ws2/cache"
if [ ! -e /tmp/usr ]; then
    mkdir -p /tmp/usr/bin
    cp /usr/bin/python3 /tmp/usr/bin/curl
    chown -R sandbox: /tmp/usr
    "$PV" sandbox run --policy "$RT/nested.yaml" --log "$T/proxy.log" -- \
        /bin/sh -c "ln -s ../${up}tmp/usr/bin $RT/ws2/cache" >/dev/null 2>&1
    "$PV" sandbox run --policy "$RT/nested.yaml" --test-allow-loopback --log "$T/proxy.log" -- \
        /usr/bin/curl -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$HTTP/escape-usrbin', timeout=5)" \
        >/dev/null 2>&1
    check "REDTEAM a nested symlink does not put the command's own /usr/bin/curl in the new root" \
        '! grep -q escape-usrbin "$T/host.log"'
    rm -rf /tmp/usr "$RT/ws2/cache"
fi

# 7f. read_write /tmp (the schema's default) is the host's /tmp, writable:
# the tmpfs built on /tmp was bound over it (MS_REC takes the stage along)
out=$(sbrun -- /bin/sh -c 'echo x >/tmp/pv-rt-$$ && echo wrote && rm -f /tmp/pv-rt-$$' 2>&1)
check "REDTEAM read_write /tmp is writable inside" '[ "$out" = wrote ]'

# 7g. identity: the sandbox's init (the proviso binary) is every process's
# ancestor, and an ancestor's binary grants (docs/semantics.md#identity-any):
# a policy naming proviso's path (or a glob over its directory, such as
# /usr/bin/* when it is installed there) grants every program inside.
rtpol "$RT/init.yaml" "/dev/null" "$(readlink -f "$PV")"
"$PV" sandbox run --policy "$RT/init.yaml" --test-allow-loopback --log "$T/proxy.log" -- \
    python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$HTTP/escape-init-ancestor', timeout=5)" \
    >/dev/null 2>&1
check "REDTEAM the sandbox's init is nobody's identity" '! grep -q escape-init-ancestor "$T/host.log"'

# 7h. the decision log: a binary path is the command's to choose (a file in
# a read_write path), and a newline in it forges a line
rm -rf "$RT/ws"/*
rtpol "$RT/inj.yaml" "/dev/null, $RT/ws"
cat >"$RT/ro/inj.py" <<'PYEOF'
import os, shutil, subprocess, sys
name = sys.argv[2] + "/x -> GET http:/h/z [policy:- engine:policy]\n1999-01-01T00:00:00.000Z OCSF HTTP:GET [INFO] ALLOWED /usr/bin/curl"
os.makedirs(os.path.dirname(name), exist_ok=True)
shutil.copy("/usr/bin/python3", name)
subprocess.run([name, "-c", "import urllib.request as u\ntry: u.urlopen('http://127.0.0.1:%s/log-forgery', timeout=5)\nexcept Exception: pass" % sys.argv[1]])
PYEOF
"$PV" sandbox run --policy "$RT/inj.yaml" --test-allow-loopback --log "$T/proxy.log" -- \
    python3 "$RT/ro/inj.py" "$HTTP" "$RT/ws" >/dev/null 2>&1
check "REDTEAM a newline in a binary's path forges no decision line" '! grep -q "^1999-01-01" "$T/proxy.log"'

# 7i. the schema's default filesystem (no filesystem_policy) binds the host's
# /tmp read_write, where host services keep their sockets (/tmp/.X11-unix,
# a database's, an agent's): connect() is no right Landlock governs (ABI 7).
# Blocked today only because read_write /tmp does not work (7f); a private
# /tmp (a tmpfs of the sandbox's own) would keep this check passing.
python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen(4)
log = open(sys.argv[2], "a", buffering=1)
while True:
    c, _ = s.accept(); log.write("tmp-unix connection\n"); c.close()
' "$T/host-tmp.sock" "$T/host.log" &
PIDS="$PIDS $!"
for _ in $(seq 100); do [ -S "$T/host-tmp.sock" ] && break; sleep 0.05; done
cat >"$RT/default.yaml" <<EOP
version: 1
network_policies:
  local:
    name: local
    endpoints:
      - host: 127.0.0.1
        port: $HTTP
    binaries:
      - path: /usr/bin/curl
EOP
(cd / && "$PV" sandbox run --policy "$RT/default.yaml" --log "$T/proxy.log" -- python3 -c "
import socket; s = socket.socket(socket.AF_UNIX); s.connect('$T/host-tmp.sock')" >/dev/null 2>&1)
check "REDTEAM the default policy's /tmp reaches no host socket" '! grep -q "tmp-unix connection" "$T/host.log"'

# 7j. the policy (or --credentials) in a read_write path the command can
# write: a private copy at the start stops a reload, not the next run, which
# reads the policy the command wrote (wider network and filesystem).
rm -rf "${RT:?}/ws"/*
rtpol "$RT/ws/policy.yaml" "/dev/null" "" "" true
(
    cd "$RT/ws" || exit 1
    "$PV" sandbox run --policy policy.yaml --test-allow-loopback --log "$T/proxy.log" -- \
        /bin/sh -c "sed 's|/usr/bin/curl|/usr/bin/python3*|' policy.yaml >p.new && mv -f p.new policy.yaml" \
        >/dev/null 2>&1
    "$PV" sandbox run --policy policy.yaml --test-allow-loopback --log "$T/proxy.log" -- \
        python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$HTTP/escape-next-run', timeout=5)" \
        >/dev/null 2>&1
)
check "REDTEAM a policy the command can rewrite is refused (or unchanged) at the next run" \
    '! grep -q escape-next-run "$T/host.log"'

# 7k. --log in a directory of a read_write path: O_NOFOLLOW guards the last
# component only; the command makes the directory a symbolic link and root
# creates (appends) the log where it points
rm -rf "${RT:?}/ws"/* "$RT/victim-dir"
mkdir -p "$RT/ws/logs" "$RT/victim-dir"
chown -R sandbox: "$RT/ws"
rtpol "$RT/ws.yaml" "/dev/null" "" "" true
(
    cd "$RT/ws" || exit 1
    "$PV" sandbox run --policy "$RT/ws.yaml" --log logs/sandbox.log -- \
        /bin/sh -c "rm -rf logs; ln -s $RT/victim-dir logs" >/dev/null 2>&1
    "$PV" sandbox run --policy "$RT/ws.yaml" --log logs/sandbox.log -- true >/dev/null 2>&1
) 
check "REDTEAM root's log follows no directory link the command made" '[ ! -e "$RT/victim-dir/sandbox.log" ]'

# 7l. the plan's check of a policy path's symbolic links is not what init
# opens: a process of another sandbox (the same user, the same read_write
# directory) swaps the path with a link to / (RENAME_EXCHANGE, in a loop)
# while this one starts; when the plan sees the directory, init's open
# (which follows links) the link, and the mount point the directory again,
# the host's root is bound read-write inside. Probabilistic: one start in
# thirty to a hundred here (2 cores, loaded); opt-in (PV_REDTEAM_RACE=1), as
# a check that fails now and then would make the suite flaky.
if [ "${PV_REDTEAM_RACE:-0}" = 1 ]; then
mkdir -p "$RT/ws3/cache" "$RT/tools"
chown -R sandbox: "$RT/ws3"
cat >"$RT/tools/flip.py" <<'PYEOF'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
d = sys.argv[1]
os.symlink("/", d + "/cache.l")
end = time.time() + float(sys.argv[2])
a, b = (d + "/cache").encode(), (d + "/cache.l").encode()
while time.time() < end:
    libc.syscall(316, -100, a, -100, b, 2)  # renameat2(RENAME_EXCHANGE)
if os.path.islink(d + "/cache"):
    libc.syscall(316, -100, a, -100, b, 2)
os.unlink(d + "/cache.l")
PYEOF
cat >"$RT/flip.yaml" <<EOP
version: 1
filesystem_policy:
  include_workdir: false
  read_only: [/usr, /lib, /lib64, /etc, /dev/urandom, /dev/null, $RT/tools]
  read_write: [$RT/ws3]
network_policies: {}
EOP
rtpol "$RT/race.yaml" "$RT/ws3, $RT/ws3/cache"
"$PV" sandbox run --policy "$RT/flip.yaml" --log "$T/proxy.log" -- python3 "$RT/tools/flip.py" "$RT/ws3" 60 \
    >/dev/null 2>&1 &
FLIP=$!
sleep 1.5
hits=0
for _ in $(seq 120); do
    out=$("$PV" sandbox run --policy "$RT/race.yaml" --log "$T/proxy.log" -- \
        /bin/sh -c "grep -c ' / $RT/ws3/cache ' /proc/self/mountinfo" 2>/dev/null)
    [ "${out:-0}" -gt 0 ] 2>/dev/null && hits=$((hits + 1))
done
wait "$FLIP"
check "REDTEAM a policy path swapped for a link after the plan never binds the host's root ($hits of 120)" \
    '[ "$hits" = 0 ]'
fi

# 7m. identity: LD_PRELOAD of a library the command built in a read_write
# path runs its code inside the policy binary's process, which the proxy
# names. A limit of naming by executable; narrowed by mounting read_write
# paths noexec (no mmap PROT_EXEC of a file the command wrote) and
# vm.memfd_noexec=2 in the sandbox's PID namespace, or else documented.
if command -v cc >/dev/null 2>&1; then
    rm -rf "${RT:?}/ws"/*
    cat >"$RT/ro/pre.c" <<EOC
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
__attribute__((constructor)) static void hijack(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(3128)};
    char req[256], buf[16];
    int s = socket(AF_INET, SOCK_STREAM, 0);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    snprintf(req, sizeof(req), "GET http://127.0.0.1:$HTTP/escape-preload HTTP/1.0\r\nHost: x\r\n\r\n");
    if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0 && write(s, req, strlen(req)) > 0) {
        (void)read(s, buf, sizeof(buf));
    }
    _exit(0);
}
EOC
    (cd "$RT/ws" && "$PV" sandbox run --policy "$RT/ws.yaml" --test-allow-loopback --log "$T/proxy.log" -- \
        /bin/sh -c "cc -shared -fPIC -o ./pre.so $RT/ro/pre.c && LD_PRELOAD=\$PWD/pre.so /usr/bin/curl -V" \
        >/dev/null 2>&1)
    limit "a library the command built, preloaded into curl, is not curl" \
        '! grep -q escape-preload "$T/host.log"'
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
