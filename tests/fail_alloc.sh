#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# fail_alloc.sh - make check: allocation failure through the parsers and the
# prover. PV_FAIL_ALLOC=N makes the Nth checked allocation fail
# (common/pv_error.c). For `proviso validate`, `proviso prove` and
# `proviso check` on the example documents, N runs over every allocation up
# to FULL and then over SAMPLES points spread to the last allocation the
# command makes: 30 and 30 in `make check`, 100 and 100 with PV_SWEEP=full,
# 15 and 15 with PV_SWEEP=asan (`make check-asan`)
# (`make check-sweeps`). Every run must end one of two ways:
#  - it fails cleanly: a non-zero exit below 128 (no signal, no sanitizer
#    abort: under ASan a leak on the error path aborts) and "out of memory"
#    (or the system's "Cannot allocate memory") in what it printed;
#  - or it tolerated the failure: the exit code and exactly the output of the
#    run without injection (timings masked) - never a different answer.
# Two sweeps have a finding as their right answer (prove with credentials,
# check that exceeds), so a failure swallowed into "empty" or "within" would
# be another answer, and fail.
set -u
src=${PV_SRCDIR:-$(dirname "$0")/..}
bld=${PV_BUILDDIR:-.}
pv="$bld/proviso"
if [ "${PV_SWEEP:-}" = full ]; then
    FULL=${PV_FAIL_FULL:-100}
    SAMPLES=${PV_FAIL_SAMPLES:-100}
elif [ "${PV_SWEEP:-}" = asan ]; then
    FULL=${PV_FAIL_FULL:-15}
    SAMPLES=${PV_FAIL_SAMPLES:-15}
else
    FULL=${PV_FAIL_FULL:-30}
    SAMPLES=${PV_FAIL_SAMPLES:-30}
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
n=0
ok() { n=$((n + 1)); printf 'ok   %s\n' "$1"; }
bad() { n=$((n + 1)); printf 'FAIL %s\n' "$1"; fails=$((fails + 1)); }

cp "$src/examples/policy.yaml" "$src/examples/proposal.json" "$src/examples/boundary.yaml" \
    "$src/examples/credentials.yaml" "$tmp/"
cd "$tmp" || exit 1
# inputs whose right answer is a finding (exit 1): a swallowed failure that
# answered "empty" or "within" would show as another answer, not as a match
sed 's/access: read-only/access: full/' policy.yaml >wide.yaml
sed 's/access: read-write/access: read-only/' boundary.yaml >narrow.yaml

# run N CMD...: one run with the Nth allocation failing (N=0: none); the
# masked stdout in out.N, stderr in err.N, the exit code in $rc
run() {
    k=$1
    shift
    if [ "$k" -eq 0 ]; then
        "$@" >raw 2>"err.$k"
    else
        PV_FAIL_ALLOC=$k "$@" >raw 2>"err.$k"
    fi
    rc=$?
    sed 's/[0-9][0-9.]* ms/T ms/g' raw >"out.$k"
}

# sweep NAME CMD...
sweep() {
    name=$1
    shift
    run 0 "$@"
    rc0=$rc
    if [ "$rc0" -gt 1 ]; then
        bad "$name: the run without injection failed (exit $rc0)"
        sed 's/^/     | /' err.0
        return
    fi
    # the number of allocations: the smallest N that no longer fails (a run
    # past the last allocation is the uninjected run)
    lo=0
    hi=1
    while :; do
        run "$hi" "$@"
        if [ "$rc" -eq "$rc0" ] && cmp -s "out.$hi" out.0; then break; fi
        lo=$hi
        hi=$((hi * 2))
        if [ "$hi" -gt 50000000 ]; then bad "$name: no end to the allocations"; return; fi
    done
    while [ $((hi - lo)) -gt 1 ]; do
        mid=$(((lo + hi) / 2))
        run "$mid" "$@"
        if [ "$rc" -eq "$rc0" ] && cmp -s "out.$mid" out.0; then hi=$mid; else lo=$mid; fi
    done
    total=$lo
    crashes=0
    wrong=0
    silent=0
    failed=0
    tolerated=0
    points=$(awk -v full="$FULL" -v total="$total" -v samples="$SAMPLES" 'BEGIN {
        for (i = 1; i <= full && i <= total; i++) print i
        if (total > full)
            for (j = 1; j <= samples; j++) print full + int((total - full) * j / samples)
    }' | sort -un)
    for k in $points; do
        run "$k" "$@"
        if [ "$rc" -ge 128 ]; then
            crashes=$((crashes + 1))
            [ "$crashes" -le 3 ] && { echo "     N=$k: exit $rc"; tail -n 5 "err.$k" | sed 's/^/     | /'; }
        elif [ "$rc" -eq "$rc0" ] && cmp -s "out.$k" out.0; then
            tolerated=$((tolerated + 1))
        elif cat "out.$k" "err.$k" | grep -q -e "out of memory" -e "Cannot allocate memory"; then
            failed=$((failed + 1))
        elif [ "$rc" -le 1 ]; then
            # exit 0 or 1 is a verdict: another one, without a word of memory
            wrong=$((wrong + 1))
            [ "$wrong" -le 3 ] && { echo "     N=$k: exit $rc (uninjected $rc0) with another answer"; diff out.0 "out.$k" | head -5 | sed 's/^/     | /'; }
        else
            silent=$((silent + 1))
            [ "$silent" -le 5 ] && { echo "     N=$k: exit $rc without 'out of memory'"; cat "out.$k" "err.$k" | head -n 4 | sed 's/^/     | /'; }
        fi
        rm -f "out.$k" "err.$k"
    done
    echo "     $name: $total allocations; $failed clean failures, $tolerated tolerated"
    [ "$crashes" -eq 0 ] && ok "$name: no crash or sanitizer abort" || bad "$name: $crashes crashes"
    [ "$wrong" -eq 0 ] && ok "$name: never another answer" || bad "$name: $wrong other answers"
    [ "$silent" -eq 0 ] && ok "$name: every failure says out of memory" ||
        bad "$name: $silent failures without the words"
    [ "$failed" -gt 0 ] && ok "$name: the injection reached it ($failed failures)" ||
        bad "$name: no injected failure took effect"
}

sweep "validate" "$pv" validate policy.yaml
sweep "prove --proposal" "$pv" prove --baseline policy.yaml --proposal proposal.json
sweep "check" "$pv" check --candidate policy.yaml --boundary boundary.yaml
sweep "prove with findings" "$pv" prove --baseline policy.yaml --proposal proposal.json \
    --credentials credentials.yaml
sweep "check exceeds" "$pv" check --candidate wide.yaml --boundary narrow.yaml

echo "fail_alloc.sh: $n checks, $fails failures"
[ "$fails" -eq 0 ]
