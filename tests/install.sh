#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# install.sh - make check: "make install DESTDIR=..." installs what a Debian
# tool installs, and the installed binaries run from there.
#
#   the four binaries in bindir, runnable (version, --help, validate and
#   prove on the installed examples, proviso-prover and proviso-advisor
#   answering /healthz on 127.0.0.1, the advisor running its prover child
#   from the installed bindir);
#   man pages: present, groff-clean, and naming every option --help lists;
#   the examples in docdir/examples;
#   the systemd units with their sandboxing directives (and
#   systemd-analyze verify when it is there);
#   the bash completion (and links) completing commands and options;
#   make uninstall removes every file again.
set -u
src=${PV_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
bld=${PV_BUILDDIR:-$(pwd)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pv-install.XXXXXX") || exit 1
dest=$tmp/root
pids=
cleanup() {
    for p in $pids; do
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
pass=0
fail=0
ok() {
    pass=$((pass + 1))
    echo "ok - $*"
}
bad() {
    fail=$((fail + 1))
    echo "not ok - $*"
}
# check DESC COMMAND...: pass when the command succeeds.
check() {
    d=$1
    shift
    if "$@" >"$tmp/out" 2>&1; then
        ok "$d"
    else
        bad "$d: $(head -c 600 "$tmp/out")"
    fi
}

# Install (quietly; the log is shown on failure). MAKEFLAGS from an outer
# "make check" would make a parallel sub-make talk to its jobserver: drop it.
if ! env -u MAKEFLAGS -u MFLAGS make -C "$bld" install DESTDIR="$dest" >"$tmp/install.log" 2>&1
then
    echo "not ok - make install DESTDIR failed:"
    tail -n 40 "$tmp/install.log"
    exit 1
fi
ok "make install DESTDIR=$dest"

find_one() {
    find "$dest" -path "*/$1" \( -type f -o -type l \) | head -n 1
}
pv=$(find_one bin/proviso)
bindir=$(dirname "${pv:-/nonexistent/x}")
for b in proviso proviso-prover proviso-advisor proviso-proxy; do
    if [ -x "$bindir/$b" ] && [ ! -f "$bindir/.libs/$b" ]; then
        ok "$b installed in bindir"
    else
        bad "$b is not installed in bindir ($bindir)"
    fi
done
if [ -z "$pv" ]; then
    echo "not ok - nothing more to test without bin/proviso"
    exit 1
fi
docdir=$(dirname "$(find_one examples/policy.yaml)")
for e in policy.yaml proposal.json credentials.yaml boundary.yaml; do
    check "example $e installed" test -s "$docdir/$e"
done

# --- the installed binaries run -----------------------------------------------
check "installed proviso version" sh -c "'$pv' version | grep -qx 'proviso [0-9.]*'"
check "installed proviso validate on the installed example" \
    sh -c "'$pv' validate '$docdir/policy.yaml' | grep -qx '$docdir/policy.yaml: ok'"
"$pv" validate "$docdir/proposal.json" >"$tmp/out" 2>&1
rc=$?
if [ "$rc" = 2 ] && grep -q 'hint: this looks like a proposal' "$tmp/out"; then
    ok "installed proviso validate refuses the example proposal with a hint"
else
    bad "validate of the example proposal: exit $rc: $(head -c 400 "$tmp/out")"
fi
"$pv" prove --baseline "$docdir/policy.yaml" --proposal "$docdir/proposal.json" \
    --credentials "$docdir/credentials.yaml" >"$tmp/out" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q "capability_expansion" "$tmp/out"; then
    ok "installed proviso prove on the examples: findings (exit 1)"
else
    bad "installed proviso prove on the examples: exit $rc: $(head -c 400 "$tmp/out")"
fi
check "installed proviso check: the example policy is within the boundary" \
    "$pv" check --candidate "$docdir/policy.yaml" --boundary "$docdir/boundary.yaml"
for b in proviso-prover proviso-advisor proviso-proxy; do
    check "installed $b --help has an example" sh -c "'$bindir/$b' --help | grep -q '^Example:'"
    check "installed $b --version" sh -c "'$bindir/$b' --version | grep -qx '$b [0-9.]*'"
done

# wait_listening LOG NAME: the port from NAME's "listening on" line (10 s at
# most; the advisor's log also holds its prover child's line).
wait_listening() {
    n=0
    while [ "$n" -lt 100 ]; do
        p=$(grep "$2 info: listening on" "$1" |
            sed -n -e 's|.*listening on http://[^ ]*:\([0-9][0-9]*\) .*|\1|p' \
                -e 's/.*listening on .* port \([0-9][0-9]*\).*/\1/p' | head -n 1)
        if [ -n "$p" ]; then
            echo "$p"
            return 0
        fi
        sleep 0.1
        n=$((n + 1))
    done
    return 1
}
if command -v curl >/dev/null 2>&1; then
    printf 'install-test-token-0123456789abcdef\n' >"$tmp/token"
    chmod 600 "$tmp/token"
    "$bindir/proviso-prover" --port=0 --token-file="$tmp/token" >"$tmp/prover.log" 2>&1 &
    pids="$pids $!"
    port=$(wait_listening "$tmp/prover.log" proviso-prover)
    check "installed proviso-prover answers /healthz" \
        curl -sf "http://127.0.0.1:${port:-1}/healthz"
    # The advisor runs the prover beside its own binary: the installed one.
    mkdir "$tmp/data"
    "$bindir/proviso-advisor" --data-dir "$tmp/data" --port 0 --token-file "$tmp/token" \
        >"$tmp/advisor.log" 2>&1 &
    pids="$pids $!"
    port=$(wait_listening "$tmp/advisor.log" proviso-advisor)
    check "installed proviso-advisor answers /healthz" \
        curl -sf "http://127.0.0.1:${port:-1}/healthz"
    check "installed proviso sandbox list talks to it" \
        env PROVISO_TOKEN_FILE="$tmp/token" "$pv" sandbox list --advisor "http://127.0.0.1:${port:-1}"
else
    echo "# curl missing: the servers were not started"
fi

# --- man pages ----------------------------------------------------------------
for m in man1/proviso.1 man8/proviso-prover.8 man8/proviso-advisor.8 man8/proviso-proxy.8; do
    f=$(find_one "$m")
    if [ -z "$f" ]; then
        bad "$m not installed"
        continue
    fi
    ok "$m installed"
    if grep -q '@[a-zA-Z]*@' "$f"; then
        bad "$m has unsubstituted @VARIABLES@"
    fi
    if command -v groff >/dev/null 2>&1; then
        check "$m formats without warnings" sh -c "groff -man -ww -z '$f' 2>&1 | (! grep .)"
    fi
done
# Every document a man page names is installed (no "docs/x.md" of a source
# tree the reader does not have), and the pages name the inbox and the keys.
for m in man1/proviso.1 man8/proviso-prover.8 man8/proviso-advisor.8; do
    f=$(find_one "$m")
    [ -n "$f" ] || continue
    if grep -q '[( ]docs/[a-z_-]*\.md' "$f"; then
        bad "$m points at docs/ of the source tree"
    fi
    for d in $(grep -o '/[^ ()]*/[a-z_-]*\.md' "$f" | sed 's/#.*//' | sort -u); do
        check "$m: $(basename "$d") is installed" test -s "$(dirname "$docdir")/$(basename "$d")"
    done
done
# Every link of an installed page leads to an installed page (the docs are
# installed flat in docdir: a link out of it, or to a page left in the
# source tree, is a dead end for the reader of the installed copy).
for page in "$(dirname "$docdir")"/*.md; do
    [ -f "$page" ] || continue
    for l in $(grep -o '](\([^)#]*\)' "$page" | sed 's/^](//' | grep -v '^[a-z]*:' | sort -u); do
        check "$(basename "$page"): link $l leads to an installed page" test -s "$(dirname "$page")/$l"
    done
done
f=$(find_one man8/proviso-advisor.8)
check "proviso-advisor(8) names the inbox" grep -q '/ui/' "$f"
check "proviso(1) names the inbox" grep -q '/ui/' "$(find_one man1/proviso.1)"
# every key the CLI's help lists (the list the advisor checks)
keys=$("$bindir/proviso" settings set --help | sed -n 's/^Keys: //p')
[ -n "$keys" ] || bad "proviso settings set --help lists no keys"
for k in $keys; do
    check "proviso(1) names the setting $k" grep -q -- "$k" "$(find_one man1/proviso.1)"
    case "$k" in
    envelope_allow_*) check "proviso-advisor(8) names the envelope clauses" grep -q 'envelope_allow_' "$f" ;;
    *) check "proviso-advisor(8) names the setting $k" grep -q -- "$k" "$f" ;;
    esac
done
# Every option a --help lists is in the man page (roff writes "\-\-name").
man_has_opts() {
    page=$1
    shift
    "$@" --help | sed -n 's/^  \(-h, \)\{0,1\}--\([a-z0-9-]*\).*/\2/p' | sort -u >"$tmp/opts"
    missing=
    while read -r o; do
        grep -q -- "\\\\-\\\\-$o\\b" "$page" || missing="$missing --$o"
    done <"$tmp/opts"
    if [ -z "$missing" ] && [ -s "$tmp/opts" ]; then
        ok "$(basename "$page") names every option of '$(basename "$1") ${2:-}${3:+ $3}'"
    else
        bad "$(basename "$page") lacks$missing (from '$*' --help)"
    fi
}
for b in proviso-prover proviso-advisor proviso-proxy; do
    n=8
    man_has_opts "$(find_one "man$n/$b.$n")" "$bindir/$b"
done
page=$(find_one man1/proviso.1)
for c in validate eval prove check corpus run version; do
    man_has_opts "$page" "$pv" "$c"
done
for gc in "sandbox create" "sandbox list" "policy set" "settings get" "settings set" \
    "rule list" "rule get" "rule approve" "rule reject" "rule approve-all" "rule edit"; do
    # shellcheck disable=SC2086
    man_has_opts "$page" "$pv" $gc
done

# --- systemd units --------------------------------------------------------------
for u in proviso-prover proviso-advisor proviso-proxy; do
    f=$(find_one "systemd/system/$u.service")
    if [ -z "$f" ]; then
        bad "$u.service not installed"
        continue
    fi
    ok "$u.service installed"
    for d in NoNewPrivileges=yes ProtectSystem=strict ProtectHome= PrivateTmp=yes \
        RestrictAddressFamilies= SystemCallFilter=@system-service CapabilityBoundingSet= \
        StateDirectory=proviso "ExecStart=$(echo "$bindir" | sed "s|^$dest||")/$u "; do
        grep -q "^$d" "$f" || bad "$u.service lacks $d"
    done
    # each service its own state directory: DynamicUser= services sharing
    # one would take its ownership from each other at every start
    grep -q "^StateDirectory=$u\$" "$f" || bad "$u.service lacks its own StateDirectory=$u"
    # the servers send READY=1 once they listen (common/pv_notify.c)
    grep -q "^Type=notify\$" "$f" || bad "$u.service is not Type=notify"
    if [ "$u" != proviso-proxy ]; then
        grep -q '^LoadCredential=' "$f" && grep -q -- '--token-file %d/' "$f" ||
            bad "$u.service does not take its token through LoadCredential"
        grep -q '^DynamicUser=yes' "$f" || bad "$u.service lacks DynamicUser=yes"
    fi
    if command -v systemd-analyze >/dev/null 2>&1; then
        # verify wants ExecStart to exist: point it into DESTDIR.
        sed "s|ExecStart=/|ExecStart=$dest/|; s|--prover-exe /|--prover-exe $dest/|" "$f" \
            >"$tmp/$u.service"
        check "systemd-analyze verify $u.service" \
            sh -c "systemd-analyze verify --man=no '$tmp/$u.service' 2>&1 | (! grep .)"
    fi
done
# the per-sandbox template (advisor mode): its own state directory and
# token credential per instance, verified as an instance
f=$(find_one 'systemd/system/proviso-proxy@.service')
if [ -z "$f" ]; then
    bad "proviso-proxy@.service not installed"
else
    ok "proviso-proxy@.service installed"
    for d in Type=notify StateDirectory=proviso-proxy-%i LoadCredential=sandbox.token: \
        DynamicUser=yes NoNewPrivileges=yes ProtectSystem=strict "CapabilityBoundingSet=CAP_NET_ADMIN"; do
        grep -q "^$d" "$f" || bad "proviso-proxy@.service lacks $d"
    done
    grep -q -- '--sandbox %i --token-file %d/sandbox.token' "$f" ||
        bad "proviso-proxy@.service does not name its sandbox and credential"
    if command -v systemd-analyze >/dev/null 2>&1; then
        sed "s|ExecStart=/|ExecStart=$dest/|" "$f" >"$tmp/proviso-proxy@demo.service"
        check "systemd-analyze verify proviso-proxy@demo.service" \
            sh -c "systemd-analyze verify --man=no '$tmp/proviso-proxy@demo.service' 2>&1 | (! grep .)"
    fi
fi
grep -q 'CAP_NET_ADMIN CAP_SYS_PTRACE' "$(find_one systemd/system/proviso-proxy.service)" ||
    bad "proviso-proxy.service does not keep CAP_NET_ADMIN and CAP_SYS_PTRACE"

# --- bash completion ------------------------------------------------------------
comp=$(find_one completions/proviso)
if [ -z "$comp" ]; then
    bad "bash completion not installed"
else
    ok "bash completion installed"
    for l in proviso-prover proviso-advisor proviso-proxy; do
        check "completion link $l" test -L "$(dirname "$comp")/$l"
    done
    if command -v bash >/dev/null 2>&1; then
        # complete WORDS...: what the function offers for the last word.
        cat >"$tmp/comp.bash" <<'B'
. "$1"
shift
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_proviso
printf '%s\n' "${COMPREPLY[@]}"
B
        complete_has() {
            want=$1
            shift
            if PATH="$bindir:$PATH" bash "$tmp/comp.bash" "$comp" "$@" | grep -qx -- "$want"; then
                ok "completion of '$*' offers $want"
            else
                bad "completion of '$*' does not offer $want"
            fi
        }
        complete_has validate proviso val
        complete_has version proviso ver
        complete_has --format proviso validate --f
        complete_has --chunk-id proviso rule approve --ch
        complete_has approve-all proviso rule appr
        complete_has --config proviso-prover --con
        complete_has --upstream-ca proviso-proxy --up
        complete_has --prover-token-file proviso-advisor --prover-t
        complete_has json proviso prove --format j
        complete_has peer_address_ranges proviso settings set pe
        complete_has proposal_approval_mode proviso settings get --sandbox demo pro
    fi
fi

# --- uninstall --------------------------------------------------------------------
if env -u MAKEFLAGS -u MFLAGS make -C "$bld" uninstall DESTDIR="$dest" >"$tmp/uninstall.log" 2>&1
then
    left=$(find "$dest" \( -type f -o -type l \) | head -n 5)
    if [ -z "$left" ]; then
        ok "make uninstall removes every installed file"
    else
        bad "make uninstall left: $left"
    fi
else
    bad "make uninstall failed: $(tail -n 5 "$tmp/uninstall.log")"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
