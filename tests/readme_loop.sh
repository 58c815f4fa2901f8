#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# readme_loop.sh - runs the README's quick start gateway and its "The advisor
# loop" block as printed, from a clean state, the way a newcomer does: the
# gateway from `./bootstrap --run` (in the source tree, as the README's first
# shell), then every line of the block in a second shell whose working
# directory is the source tree.
#
# The script runs in a network namespace of its own (unshare --net), so the
# README's ports (127.0.0.1:8788) are free and nothing can leave loopback.
# GitHub is played by a local HTTPS server on 127.0.0.1:443 (a certificate
# from a test CA); since the proxy never lets a name reach loopback, the
# second shell works in a view of the source tree whose examples/ are
# copies with api.github.com written 127.0.0.1. Only these mappings are
# applied (a line none of them covers fails the test, so the README cannot
# drift from what is tested):
#   api.github.com          -> 127.0.0.1 (in the lines and the examples)
#   ./bootstrap --run       -> the quick start's `./bootstrap --run --
#       --test-allow-loopback` (the advisor then takes rules for loopback)
#   /var/lib/proviso        -> $T/var/lib/proviso (empty: bootstrap makes it)
#   ./proviso sandbox run   -> the same, plus --test-allow-loopback and
#       --upstream-ca (the test CA)
#   3f2a9c1d, 7b0e41d2c9f3a855...  -> the agent's chunk id as `rule list`
#       prints it, and the review token `rule get` printed
# Nothing is made beforehand: no directory, no token, no sandbox.
# Needs root and namespaces (skipped, 77, otherwise) and an in-tree build
# (bootstrap runs ./proviso-advisor).
set -u
SRC=${PV_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${PV_BUILDDIR:-$(pwd)}
if [ -z "${PV_README_NETNS:-}" ]; then
    [ "$SRC" = "$BUILD" ] || { echo "SKIP: the README's loop runs ./proviso: needs an in-tree build"; exit 77; }
    [ -x "$SRC/proviso" ] && [ -x "$SRC/proviso-advisor" ] || { echo "SKIP: build proviso first"; exit 77; }
    if [ "$(id -u)" != 0 ] || ! unshare --net true 2>/dev/null; then
        echo "SKIP: readme_loop.sh needs root and namespaces (the README's sandbox lines do)"
        exit 77
    fi
    id sandbox >/dev/null 2>&1 || { echo "SKIP: no 'sandbox' user (./bootstrap makes it)"; exit 77; }
    export PV_README_NETNS=1 PV_SRCDIR=$SRC PV_BUILDDIR=$BUILD
    exec unshare --net -- "$0" "$@"
fi
# the namespace's loopback starts down
python3 -c 'import fcntl, socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
fcntl.ioctl(s, 0x8914, struct.pack("16sH22x", b"lo", 0x1 | 0x8 | 0x40))' ||
    { echo "cannot bring up the namespace's loopback"; exit 1; }

. "$SRC/tests/e2e/proxy_lib.sh"
JQ=$(command -v jq) || { echo "SKIP: jq is not installed"; exit 77; }
BOOT_PID=
stop_gateway() {
    [ -n "$BOOT_PID" ] || return 0
    kill "$BOOT_PID" 2>/dev/null
    wait "$BOOT_PID" 2>/dev/null
    BOOT_PID=
}
trap 'stop_gateway; cleanup' EXIT
unset PROVISO_ADVISOR PROVISO_TOKEN_FILE http_proxy https_proxy HTTP_PROXY HTTPS_PROXY

# GitHub: an HTTPS server on 127.0.0.1:443
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/ca.key" \
    -out "$T/ca.pem" -days 2 -subj "/CN=proviso readme test CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" 2>/dev/null &&
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/gh.key" \
        -out "$T/gh.csr" -subj "/CN=127.0.0.1" 2>/dev/null &&
    printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$T/ext.cnf" &&
    openssl x509 -req -in "$T/gh.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial \
        -out "$T/gh.pem" -days 2 -extfile "$T/ext.cnf" 2>/dev/null ||
    { echo "cannot make the test certificates"; exit 1; }
mkdir -p "$T/www" "$T/git"
: >"$T/up.log"
python3 "$SRC/tests/e2e/clients_upstream.py" --cert "$T/gh.pem" --key "$T/gh.key" --port 443 \
    --root "$T/www" --git-root "$T/git" --log "$T/up.log" --port-file "$T/up.port" 2>"$T/up.err" &
PIDS="$PIDS $!"
wait_file "$T/up.port" || { echo "GitHub's stand-in did not start: $(cat "$T/up.err")"; exit 1; }
# the second shell's tree: the built programs, and examples/ for 127.0.0.1
TREE=$T/tree
mkdir -p "$TREE/examples"
for f in "$SRC"/proviso*; do
    [ -x "$f" ] && ln -s "$f" "$TREE/"
done
for f in "$SRC"/examples/*; do
    sed 's/api\.github\.com/127.0.0.1/g' "$f" >"$TREE/examples/${f##*/}"
done
chmod 755 "$T"

VAR=$T/var/lib/proviso
[ ! -e "$VAR" ] && pass || fail "the data directory exists before bootstrap made it"

# the README's first shell: the quick start's gateway, as bootstrap runs it
# (its line with the advisor's --test-allow-loopback: GitHub is on loopback)
grep -q '^\./bootstrap --run -- --test-allow-loopback ' "$SRC/README.md" && pass ||
    fail "the quick start no longer prints ./bootstrap --run -- --test-allow-loopback"
(cd "$SRC" && PV_BOOTSTRAP_NO_BUILD=1 PROVISO_DATA_DIR=$VAR exec ./bootstrap --run -- --test-allow-loopback) \
    >"$T/boot.out" 2>&1 &
BOOT_PID=$!
i=0
while ! grep -q 'Ctrl-C stops it' "$T/boot.out" 2>/dev/null && [ $i -lt 600 ]; do
    kill -0 "$BOOT_PID" 2>/dev/null || break
    sleep 0.1
    i=$((i + 1))
done
grep -q 'Ctrl-C stops it' "$T/boot.out" || { fail "bootstrap --run did not start: $(cat "$T/boot.out")"; finish; }
expect_has "bootstrap names the README's data dir" "data:   $VAR" "$(cat "$T/boot.out")"

# the README's block, one command per line
awk '/^\*\*The advisor loop\.\*\*/ { f = 1 } f && /^```sh/ { b = 1; next }
     b && /^```/ { exit } b { print }' "$SRC/README.md" |
    sed -e ':a' -e '/\\$/N; s/\\\n *//; ta' >"$T/block.sh"
expect_eq "README block found" yes "$([ -s "$T/block.sh" ] && echo yes)"
# what bootstrap printed as next steps is the block's first lines
for l in 1 2 3; do
    want=$(sed -n "${l}p" "$T/block.sh" | sed -e 's/ *#.*$//' -e 's#/var/lib/proviso#'"$VAR"'#g')
    expect_has "bootstrap prints the block's line $l" "  $want" "$(cat "$T/boot.out")"
done

CHUNK=""
REVIEW_TOKEN=""
runs=0
n=0
cd "$TREE" || exit 1
while IFS= read -r line; do
    case "$line" in
    '' | '#'*) continue ;;
    esac
    n=$((n + 1))
    echo "README: $line"
    cmd=$(printf '%s' "$line" | sed -e "s#/var/lib/proviso#$VAR#g" -e 's/api\.github\.com/127.0.0.1/g')
    case "$cmd" in
    "export "* | "./proviso settings "* | "./proviso sandbox create "*) ;;
    "./proviso sandbox run "*)
        cmd="./proviso sandbox run --test-allow-loopback --upstream-ca $T/ca.pem ${cmd#./proviso sandbox run }"
        runs=$((runs + 1))
        ;;
    "./proviso rule "*)
        cmd=${cmd//3f2a9c1d/${CHUNK:0:8}}
        case "$cmd" in
        *"--review-token 7b0e41d2c9f3a855..."*)
            [ -n "$REVIEW_TOKEN" ] || fail "rule approve before rule get printed a review token"
            cmd=${cmd//7b0e41d2c9f3a855.../$REVIEW_TOKEN}
            ;;
        esac
        ;;
    *)
        fail "README line not mapped by tests/readme_loop.sh: $line"
        continue
        ;;
    esac
    cmd=$(printf '%s' "$cmd" | sed -e 's/ *#.*$//')
    if [ "${cmd%% *}" = export ]; then
        eval "$cmd"
        rc=$?
        out=
    else
        out=$(eval "$cmd" 2>"$T/err")
        rc=$?
    fi
    printf "%s\n" "$out" | head -n 30
    [ "$rc" = 0 ] && pass || fail "exit $rc: $line: $out $(tail -n 20 "$T/err" 2>/dev/null)"
    case "$runs $cmd" in
    "1 ./proviso sandbox run "*)
        expect_has "denied inside the sandbox" '"policy_denied"' "$out"
        expect_has "the denial names the skill" "/.proviso/skills/policy_advisor.md" "$out"
        if grep -q "^POST /repos/o/r/issues" "$T/up.log"; then
            fail "GitHub got the denied POST"
        else pass; fi
        ;;
    "2 ./proviso sandbox run "*)
        CHUNK=$(printf '%s' "$out" | "$JQ" -r '.accepted_chunk_ids[0]' 2>/dev/null)
        expect_eq "the agent's proposal is accepted ($out)" 1 \
            "$(printf '%s' "$out" | "$JQ" -r .accepted_chunks 2>/dev/null)"
        ;;
    "3 ./proviso sandbox run "*)
        expect_has "allowed after the approval: GitHub got the POST" "POST /repos/o/r/issues" \
            "$(cat "$T/up.log")"
        ;;
    *"rule list "*) expect_has "rule list shows the agent's chunk" "${CHUNK:0:8}  pending" "$out" ;;
    *"rule get "*)
        expect_has "rule get shows the rule" "/repos/o/r/issues" "$out"
        REVIEW_TOKEN=$(printf '%s\n' "$out" | sed -n 's/^review token: *\([0-9a-f]*\)$/\1/p')
        [ -n "$REVIEW_TOKEN" ] && pass || fail "rule get printed no review token: $out"
        ;;
    *"rule approve "*)
        expect_has "rule approve used the token rule get printed" "--review-token $REVIEW_TOKEN" "$cmd"
        expect_has "rule approve approved it" "approved" "$out"
        ;;
    esac
done <"$T/block.sh"
expect_eq "README commands run" 9 "$n"

# the quick start's standalone sandbox line, the same way
awk '/^## Quick start/ { f = 1 } f && /^```sh/ { b = 1; next } b && /^```/ { exit } b { print }' \
    "$SRC/README.md" | sed -e ':a' -e '/\\$/N; s/\\\n *//; ta' | grep '^\./proviso sandbox run ' >"$T/quick.sh"
expect_eq "the quick start has one sandbox line" 1 "$(wc -l <"$T/quick.sh")"
cmd=$(sed -e 's/ *# .*$//' -e 's/api\.github\.com/127.0.0.1/g' \
    -e "s#^\./proviso sandbox run #./proviso sandbox run --test-allow-loopback --upstream-ca $T/ca.pem #" "$T/quick.sh")
echo "README: $(cat "$T/quick.sh")"
: >"$T/up.log"
out=$(eval "$cmd" 2>"$T/err")
rc=$?
echo "$out"
cat "$T/err"
expect_eq "the quick start's sandbox line ends as curl's last request (denied: 56)" 56 "$rc"
expect_has "its first request is allowed" "GET /zen" "$(cat "$T/up.log")"
expect_has "its second is denied by the proxy" "CONNECT tunnel failed, response 403" "$(cat "$T/err")"
expect_eq "a decision line for each tunnel and each request in one" \
    "ALLOWED 127.0.0.1:443 ALLOWED GET /zen DENIED example.com:443" \
    "$(sed -n -e 's/.*OCSF NET:OPEN.* \(ALLOWED\|DENIED\) [^ ]* -> \([^ ]*\) .*/\1 \2/p' \
        -e 's/.*OCSF HTTP:GET.* \(ALLOWED\|DENIED\) [^ ]* -> GET http:\/\/[^/]*\([^ ]*\) .*/\1 GET \2/p' "$T/err" | tr '\n' ' ' | sed 's/ $//')"
expect_eq "README sandbox runs" 3 "$runs"
[ "$(stat -c %a "$VAR/demo.token" 2>/dev/null)" = 600 ] && pass ||
    fail "the sandbox token is not 0600: $(stat -c %a "$VAR/demo.token" 2>&1)"
stop_gateway
finish
