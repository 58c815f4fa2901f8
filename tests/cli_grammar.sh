#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cli_grammar.sh - make check: one command-line grammar for every executable
# and subcommand (common/pv_args.h), and one way to report a file that cannot
# be read (common/pv_file.h).
#
#   -h and --help exit 0 and show options and an Example; an unknown option
#   (also as --x=1, or -x) exits 2 with one line "PROG: unknown option '--x'
#   (see 'PROG --help')"; --opt=value is --opt value; proviso help [CMD],
#   proviso version, --version of the servers; `validate --format json x`
#   reads x as the file; a missing file, a directory and an unreadable file
#   read "FILE: reason" in every command and server, each exactly once;
#   proviso-prover refuses a directory as --config; each diagnostic of an
#   invalid policy is printed once, and the JSON invalid object carries them.
set -u
src=${PV_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
bld=${PV_BUILDDIR:-$(pwd)}
pv=$bld/proviso
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pv-grammar.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
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
# run WANT CMD...: run with stdout in $tmp/out and stderr in $tmp/err; the
# exit status must be WANT. Sets $rc.
run() {
    want=$1
    shift
    "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
    if [ "$rc" = "$want" ]; then
        return 0
    fi
    bad "'$*' exit $rc, want $want: $(head -c 300 "$tmp/err")"
    return 1
}
# once FILE TEXT: TEXT occurs on exactly one line of FILE.
once() {
    [ "$(grep -cF -- "$2" "$1")" = 1 ]
}

policy=$src/examples/policy.yaml
proposal=$src/examples/proposal.json
boundary=$src/examples/boundary.yaml
printf 'short-token-0123456789abcdef\n' >"$tmp/token"
chmod 600 "$tmp/token"

# Every command line: the program words, then how to reach it with a
# separate and an "=" value of one of its options.
commands="validate
eval
prove
check
corpus
version
sandbox create
sandbox list
sandbox show
sandbox delete
policy get
policy set
settings get
settings set
settings delete
rule list
rule get
rule approve
rule reject
rule approve-all
rule undo
rule edit
rule clear
rule history
audit pubkey
audit export
audit verify
audit replay"

# --- help, unknown options: every subcommand and every server ---------------------
echo "$commands" | while read -r c; do
    # shellcheck disable=SC2086
    set -- $c
    for h in -h --help; do
        if run 0 "$pv" "$@" $h && grep -q '^Example:' "$tmp/out" && grep -q '^options:' "$tmp/out" &&
            grep -q "^usage: proviso $c" "$tmp/out" && [ ! -s "$tmp/err" ]; then
            echo "ok - proviso $c $h: usage, options and an example on stdout"
        else
            echo "not ok - proviso $c $h: $(head -c 200 "$tmp/out")"
        fi
    done
    # 'proviso help CMD' is CMD --help.
    "$pv" "$@" --help >"$tmp/want" 2>&1
    if run 0 "$pv" help "$@" && cmp -s "$tmp/out" "$tmp/want"; then
        echo "ok - proviso help $c is 'proviso $c --help'"
    else
        echo "not ok - proviso help $c differs from 'proviso $c --help'"
    fi
    for u in --no-such-option --no-such-option=1 -Z; do
        name=${u%%=*}
        if run 2 "$pv" "$@" $u && [ "$(wc -l <"$tmp/err")" = 1 ] &&
            grep -qxF "proviso $c: unknown option '$name' (see 'proviso $c --help')" "$tmp/err" &&
            [ ! -s "$tmp/out" ]; then
            echo "ok - proviso $c $u: one usage line, exit 2"
        else
            echo "not ok - proviso $c $u: $(head -c 300 "$tmp/err")"
        fi
    done
done >"$tmp/loop"
pass=$((pass + $(grep -c '^ok' "$tmp/loop")))
fail=$((fail + $(grep -c '^not ok' "$tmp/loop")))
cat "$tmp/loop"

for b in proviso-prover proviso-advisor proviso-proxy; do
    if run 0 "$bld/$b" --help && grep -q '^Example:' "$tmp/out" && grep -q "^usage: $b" "$tmp/out"
    then
        ok "$b --help"
    fi
    if run 0 "$bld/$b" -h && grep -q '^Example:' "$tmp/out"; then
        ok "$b -h"
    fi
    if run 0 "$bld/$b" --version && grep -qx "$b [0-9.]*" "$tmp/out"; then
        ok "$b --version"
    fi
    for u in --no-such-option --no-such-option=1 -Z; do
        name=${u%%=*}
        if run 2 "$bld/$b" $u && [ "$(wc -l <"$tmp/err")" = 1 ] &&
            grep -qxF "$b: unknown option '$name' (see '$b --help')" "$tmp/err"; then
            ok "$b $u: one usage line, exit 2"
        else
            bad "$b $u: $(head -c 300 "$tmp/err")"
        fi
    done
    if run 2 "$bld/$b" stray-operand && grep -q "unexpected operand 'stray-operand'" "$tmp/err"
    then
        ok "$b refuses an operand"
    fi
done
# The servers never take a token on the command line.
for b in proviso-prover proviso-advisor; do
    if run 2 "$bld/$b" --token=abcdefabcdefabcdef && grep -q "is not accepted" "$tmp/err" &&
        ! grep -q abcdefabcdefabcdef "$tmp/err"; then
        ok "$b refuses --token=VALUE without echoing it"
    fi
done

# --- proviso itself -----------------------------------------------------------------
if run 0 "$pv" version && grep -qx 'proviso [0-9.]*' "$tmp/out"; then ok "proviso version"; fi
if run 0 "$pv" --version && grep -qx 'proviso [0-9.]*' "$tmp/out"; then ok "proviso --version"; fi
if run 0 "$pv" help && grep -q '^  validate ' "$tmp/out" && grep -q '^  help ' "$tmp/out"; then
    ok "proviso help lists the commands"
fi
if run 2 "$pv" help no-such-command && grep -q "unknown command 'no-such-command'" "$tmp/err"; then
    ok "proviso help of an unknown command: exit 2"
fi
if run 2 "$pv" no-such-command && [ "$(wc -l <"$tmp/err")" = 1 ]; then
    ok "an unknown command: one line, exit 2"
fi
if run 2 "$pv" rule no-such && grep -qxF "proviso rule: unknown command 'no-such' (see 'proviso rule --help')" "$tmp/err"
then
    ok "an unknown rule subcommand"
fi
if run 2 "$pv" version extra; then ok "proviso version takes no operand"; fi

# --- --opt=value is --opt value ------------------------------------------------------
if run 0 "$pv" validate --format=json "$policy" && grep -q '"valid": true' "$tmp/out"; then
    ok "validate --format=json"
fi
if run 0 "$pv" validate "$policy" --format json && grep -q '"valid": true' "$tmp/out"; then
    ok "validate FILE --format json (options after operands)"
fi
# The issue's case: --format is an option, x the (missing) file.
if run 2 "$pv" validate --format json "$tmp/x" && grep -q '"valid": false' "$tmp/out" &&
    grep -qF "\"$tmp/x: No such file or directory\"" "$tmp/out" && ! grep -q -- '--format' "$tmp/out"
then
    ok "validate --format json x: x is the file, --format an option"
fi
if run 2 "$pv" validate --format=yaml "$policy" && grep -q "unknown format 'yaml'" "$tmp/err"; then
    ok "validate --format=yaml is refused"
fi
if run 0 "$pv" eval --policy="$policy" --binary=/usr/bin/curl --method=GET \
    --url=https://api.github.com/repos/o/r --format=json && grep -q '"allow"' "$tmp/out"; then
    ok "eval with every option as --opt=value"
fi
if run 1 "$pv" eval --policy "$policy" --binary /usr/bin/curl --method POST \
    --url https://api.github.com/repos/o/r; then
    ok "eval with separate values: deny (exit 1)"
fi
if run 0 "$pv" check --candidate="$policy" --boundary="$boundary" --timeout-ms=20000; then
    ok "check --candidate=F --boundary=F --timeout-ms=N"
fi
if run 2 "$pv" check --candidate="$policy" --boundary="$boundary" --timeout-ms=0 &&
    grep -q "timeout-ms" "$tmp/err"; then
    ok "check --timeout-ms=0 is refused"
fi
if run 1 "$pv" prove --baseline="$policy" --proposal="$proposal" \
    --credentials="$src/examples/credentials.yaml" --format=json &&
    grep -q '"verdict": "findings"' "$tmp/out"; then
    ok "prove --baseline=F --proposal=F --credentials=F --format=json"
fi
if run 0 "$pv" corpus run --timeout-ms=20000 "$src/corpus/check/c001-within-narrower-rule.yaml"
then
    ok "corpus run --timeout-ms=N"
fi
if run 3 "$pv" rule list demo --advisor=http://127.0.0.1:1 --token-file="$tmp/token" &&
    grep -q "127.0.0.1:1" "$tmp/err"; then
    ok "rule list --advisor=URL --token-file=F (unreachable: exit 3)"
fi
if run 2 "$bld/proviso-prover" --port=70000 && grep -q "'--port' wants a number in 0..65535" "$tmp/err"
then
    ok "proviso-prover --port=70000 is refused"
fi
if run 2 "$bld/proviso-proxy" --policy="$policy" --port=x && grep -q "'--port'" "$tmp/err"; then
    ok "proviso-proxy --port=x is refused"
fi
if run 2 "$bld/proviso-advisor" --port=1 && grep -q -- "--data-dir is required" "$tmp/err"; then
    ok "proviso-advisor without --data-dir"
fi

# --- a file that cannot be read: the same words everywhere, once ---------------------
mkdir "$tmp/dir"
# file_err WHAT: every command and server that reads a file the user names.
file_err() {
    f=$1
    want=$2
    runas=${3:-}
    for c in "validate $f" \
        "eval --policy $f --binary /usr/bin/curl --method GET --url http://a/" \
        "prove --candidate $f" "prove --policy $f" "prove --proposal $f" \
        "prove --baseline $f --candidate $policy" \
        "prove --policy $policy --credentials $f" \
        "check --candidate $f --boundary $boundary" "check --candidate $policy --boundary $f" \
        "sandbox list --advisor http://127.0.0.1:1 --token-file $f"; do
        # shellcheck disable=SC2086
        $runas "$pv" $c >"$tmp/out" 2>"$tmp/err" </dev/null
        rc=$?
        if [ "$rc" = 2 ] && [ "$(cat "$tmp/err")" = "proviso: $f: $want" ] && [ ! -s "$tmp/out" ]
        then
            ok "proviso $c: 'proviso: $f: $want' once"
        else
            bad "proviso $c: exit $rc: $(cat "$tmp/err") / $(head -c 200 "$tmp/out")"
        fi
    done
    # With --format json the message is in the invalid object, and on stderr once.
    $runas "$pv" prove --candidate "$f" --format json >"$tmp/out" 2>"$tmp/err"
    if [ "$(cat "$tmp/err")" = "proviso: $f: $want" ] && grep -qF "\"$f: $want\"" "$tmp/out" &&
        grep -q '"diagnostics"' "$tmp/out"; then
        ok "prove --format json: '$want' in the invalid object's diagnostics"
    else
        bad "prove --format json on $f: $(cat "$tmp/err") / $(head -c 300 "$tmp/out")"
    fi
    # The servers: their log prefix, then the same words; exit 2. (A missing
    # --log file is created, so only the other cases apply to it. The proxy
    # run as nobody would first refuse for want of CAP_SYS_PTRACE.)
    {
        [ "$want" = "No such file or directory" ] ||
            echo "proviso-proxy --unprivileged-identity --port 0 --data-dir $tmp/proxy --policy $policy --log $f"
        echo "proviso-prover --port 0 --config $f"
        echo "proviso-advisor --data-dir $tmp/data --port 0 --config $f"
        echo "proviso-prover --port 0 --token-file $f"
        echo "proviso-proxy --unprivileged-identity --port 0 --data-dir $tmp/proxy --policy $f"
        echo "proviso-proxy --unprivileged-identity --port 0 --data-dir $tmp/proxy" \
            "--policy $policy --upstream-ca $f"
        echo "proviso-proxy --unprivileged-identity --port 0 --data-dir $tmp/proxy" \
            "--advisor http://127.0.0.1:1" \
            "--sandbox s --token-file $f"
    } >"$tmp/servers"
    while read -r s; do
        # shellcheck disable=SC2086
        timeout 20 $runas "$bld"/$s >"$tmp/out" 2>"$tmp/err" </dev/null
        rc=$?
        if [ "$rc" = 2 ] && [ "$(grep -c ": $f: $want\$" "$tmp/err")" = 1 ] &&
            [ "$(grep -c . "$tmp/err")" = 1 ]; then
            ok "$s: '$f: $want', exit 2"
        else
            bad "$s: exit $rc: $(head -c 300 "$tmp/err")"
        fi
    done <"$tmp/servers"
}
file_err "$tmp/dir" "Is a directory"
file_err "$tmp/missing" "No such file or directory"
cp "$policy" "$tmp/unreadable"
chmod 000 "$tmp/unreadable"
if ! cat "$tmp/unreadable" >/dev/null 2>&1; then
    file_err "$tmp/unreadable" "Permission denied"
elif command -v setpriv >/dev/null 2>&1 &&
    setpriv --reuid=65534 --regid=65534 --clear-groups "$pv" version >/dev/null 2>&1; then
    # root reads any file: run the commands as nobody instead.
    chmod 711 "$tmp"
    file_err "$tmp/unreadable" "Permission denied" \
        "setpriv --reuid=65534 --regid=65534 --clear-groups"
else
    echo "# running as root without setpriv: the unreadable-file case is skipped"
fi

# --- each diagnostic once; the JSON invalid object carries them ----------------------
cat >"$tmp/bad.yaml" <<'Y'
version: 1
network_policies:
  r:
    endpoints:
    - host: h.example.com
      port: 99999
      protocol: rest
      enforcment: enforce
    binaries: [{path: /usr/bin/curl}]
Y
"$pv" validate "$tmp/bad.yaml" >"$tmp/out" 2>&1
n=$(grep -c "^$tmp/bad.yaml:[0-9]*:[0-9]*: " "$tmp/out")
if [ "$n" -ge 2 ] && [ "$(sort "$tmp/out" | uniq -d | wc -l)" = 0 ]; then
    ok "validate: $n diagnostics, each printed once"
else
    bad "validate diagnostics: $(cat "$tmp/out")"
fi
sort "$tmp/out" >"$tmp/diags"
for c in "prove --candidate $tmp/bad.yaml" "check --candidate $tmp/bad.yaml --boundary $boundary" \
    "eval --policy $tmp/bad.yaml --binary /usr/bin/curl --method GET --url http://a/"; do
    # shellcheck disable=SC2086
    "$pv" $c >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" = 2 ] && [ ! -s "$tmp/out" ] && sort "$tmp/err" | cmp -s - "$tmp/diags"; then
        ok "$c: the same diagnostics as validate, each once"
    else
        bad "$c: exit $rc: $(cat "$tmp/err")"
    fi
done
"$pv" prove --candidate "$tmp/bad.yaml" --format json >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" = 2 ] && command -v jq >/dev/null 2>&1; then
    if jq -e --arg n "$n" '.verdict == "invalid" and .error == "invalid_policy" and
            (.diagnostics | length) == ($n | tonumber) and .detail == .diagnostics[0]' \
        "$tmp/out" >/dev/null && sort "$tmp/err" | cmp -s - "$tmp/diags"; then
        ok "prove --format json: the invalid object carries the $n diagnostics"
    else
        bad "prove --format json invalid object: $(head -c 400 "$tmp/out")"
    fi
elif [ "$rc" = 2 ] && grep -q '"diagnostics"' "$tmp/out"; then
    ok "prove --format json: the invalid object has diagnostics"
else
    bad "prove --format json on an invalid policy: exit $rc"
fi

# --- a proposal where a policy belongs, and the reverse: a hint ----------------------
if run 2 "$pv" validate "$proposal" &&
    once "$tmp/out" "hint: this looks like a proposal"; then
    ok "validate of a proposal: a hint"
fi
if run 2 "$pv" prove --candidate "$proposal" && once "$tmp/err" "hint: this looks like a proposal"
then
    ok "prove --candidate PROPOSAL: a hint"
fi
if run 2 "$pv" prove --proposal "$policy" && once "$tmp/err" "hint: this looks like a policy"; then
    ok "prove --proposal POLICY: a hint"
fi
if run 2 "$pv" validate "$tmp/bad.yaml" && ! grep -q "hint:" "$tmp/out"; then
    ok "no hint for an ordinary invalid policy"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
