#!/bin/sh
# smoke.sh SRCDIR BUILDDIR TARGET... - `make fuzz-smoke`: run each libFuzzer
# target for FUZZ_SMOKE_SECONDS (default 60) on a copy of its seed corpus
# (tests/fuzz/corpus/TARGET/) with its dictionary (tests/fuzz/TARGET.dict).
#
# A crash, a leak, a timeout (-timeout, seconds per input) or running out of
# memory fails the run; the input that did it is kept in
# BUILDDIR/fuzz-artifacts/. For each target it prints the edges (libFuzzer's
# cov:) reached by the seeds alone and at the end, and the numbers go to
# BUILDDIR/fuzz-smoke.txt. The seed corpora in the tree are never written:
# new inputs land in a temporary copy.
set -u
top=$(cd "$1" && pwd) || exit 1
bld=$(cd "$2" && pwd) || exit 1
shift 2
secs=${FUZZ_SMOKE_SECONDS:-60}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
art="$bld/fuzz-artifacts"
mkdir -p "$art" || exit 1
report="$bld/fuzz-smoke.txt"
: >"$report"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
status=0

printf '%-22s %8s %8s %6s %s\n' target seeds edges0 edges "after ${secs}s" | tee -a "$report"
for t in "$@"; do
    name=$(basename "$t")
    seeds="$top/tests/fuzz/corpus/$name"
    dict="$top/tests/fuzz/$name.dict"
    if [ ! -x "$bld/$t" ] || [ ! -d "$seeds" ] || [ ! -f "$dict" ]; then
        echo "fuzz-smoke: $name: missing program, seed corpus or dictionary"
        status=1
        continue
    fi
    mkdir "$tmp/$name" && cp "$seeds"/* "$tmp/$name"/ || exit 1
    log="$bld/fuzz-smoke-$name.log"
    "$bld/$t" -dict="$dict" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$art/$name-" "$tmp/$name" >"$log" 2>&1
    rc=$?
    n=$(ls "$seeds" | wc -l)
    e0=$(sed -n 's/.*INITED cov: \([0-9]*\).*/\1/p' "$log" | head -n 1)
    e1=$(sed -n 's/.* cov: \([0-9]*\) .*/\1/p' "$log" | tail -n 1)
    printf '%-22s %8s %8s %6s\n' "$name" "$n" "${e0:-?}" "${e1:-?}" | tee -a "$report"
    if [ "$rc" -ne 0 ] || [ -z "$e0" ]; then
        echo "fuzz-smoke: $name failed (exit $rc); the log's end ($log):"
        tail -n 40 "$log"
        status=1
    fi
done
exit "$status"
