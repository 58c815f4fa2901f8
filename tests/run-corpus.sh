#!/bin/sh
# run-corpus.sh - make check: run every corpus case through the prover, then
# show that the runner fails a case whose expectation is wrong (so a runner
# that passed everything could not pass this test).
set -u
src=${PV_SRCDIR:-$(dirname "$0")/..}
bld=${PV_BUILDDIR:-.}
pv="$bld/proviso"

"$pv" corpus run "$src/corpus" || exit 1

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0
mutate() { # NAME CASE SED-EXPRESSION
    sed "$3" "$src/corpus/$2" >"$tmp/$1.yaml"
    if cmp -s "$src/corpus/$2" "$tmp/$1.yaml"; then
        echo "FAIL mutation $1 changed nothing"; status=1; return
    fi
    if "$pv" corpus run "$tmp/$1.yaml" >"$tmp/$1.out" 2>&1; then
        echo "FAIL mutation $1 passed:"; cat "$tmp/$1.out"; status=1
    else
        echo "ok mutation $1 is caught"
    fi
}
# a category the prover does not report
mutate category compat/003-prover-metadata-hostname-link-local.yaml \
    's/^  - link_local_reach$/  - link_local_reach\n  - capability_expansion/'
# a path on the wrong port
mutate path compat/003-prover-metadata-hostname-link-local.yaml 's/^    port: 80$/    port: 81/'
# the wrong verdict
mutate verdict compat/003-prover-metadata-hostname-link-local.yaml \
    's/^  verdict: findings$/  verdict: empty/'
# a different validation_result text
mutate validation compat/102-gw-mechanistic-clean-observation-with-github-provider.yaml \
    "s/'prover: no new findings'/'prover: no findings'/"
# an invalid case whose exact message points one column off
mutate message invalid/i001-unknown-endpoint-key.yaml 's/"7:55: /"7:56: /'
# every invalid case pins its exact "LINE:COL: text" (docs/corpus.md)
for f in "$src"/corpus/invalid/*.yaml; do
    if ! grep -q '^  message: "[0-9][0-9]*:[0-9][0-9]*: ' "$f"; then
        echo "FAIL $f has no exact expect.message"; status=1
    fi
done
exit $status
