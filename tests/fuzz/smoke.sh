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
# new inputs land in a temporary copy. FUZZ_SMOKE_JOBS (default 1) targets
# run at once; .ci/run runs two at a time for 30 s each.
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

# fuzz_one TARGET: one target; its table line and any failure go to
# $tmp/NAME.res, and $tmp/NAME.bad marks a failure
fuzz_one() {
    t=$1
    name=$(basename "$t")
    seeds="$top/tests/fuzz/corpus/$name"
    dict="$top/tests/fuzz/$name.dict"
    if [ ! -x "$bld/$t" ] || [ ! -d "$seeds" ] || [ ! -f "$dict" ]; then
        echo "fuzz-smoke: $name: missing program, seed corpus or dictionary"
        return 1
    fi
    mkdir "$tmp/$name" && cp "$seeds"/* "$tmp/$name"/ || return 1
    log="$bld/fuzz-smoke-$name.log"
    "$bld/$t" -dict="$dict" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$art/$name-" "$tmp/$name" >"$log" 2>&1
    rc=$?
    n=$(ls "$seeds" | wc -l)
    e0=$(sed -n 's/.*INITED cov: \([0-9]*\).*/\1/p' "$log" | head -n 1)
    e1=$(sed -n 's/.* cov: \([0-9]*\) .*/\1/p' "$log" | tail -n 1)
    printf '%-22s %8s %8s %6s\n' "$name" "$n" "${e0:-?}" "${e1:-?}"
    if [ "$rc" -ne 0 ] || [ -z "$e0" ]; then
        echo "fuzz-smoke: $name failed (exit $rc); the log's end ($log):"
        tail -n 40 "$log"
        return 1
    fi
}

# FUZZ_SMOKE_JOBS targets run at a time (default 1; .ci/run uses every
# processor): a FIFO holds one token per free slot, and the lines are
# printed in the targets' order once all have ended.
jobs=${FUZZ_SMOKE_JOBS:-1}
mkfifo "$tmp/slots" || exit 1
exec 3<>"$tmp/slots"
i=0
while [ "$i" -lt "$jobs" ]; do echo >&3; i=$((i + 1)); done
for t in "$@"; do
    read -r _ <&3
    (
        name=$(basename "$t")
        fuzz_one "$t" >"$tmp/$name.res" 2>&1 || : >"$tmp/$name.bad"
        echo >&3
    ) &
done
wait
printf '%-22s %8s %8s %6s %s\n' target seeds edges0 edges "after ${secs}s, $jobs at a time" |
    tee -a "$report"
for t in "$@"; do
    name=$(basename "$t")
    [ -e "$tmp/$name.res" ] && cat "$tmp/$name.res"
    grep -v '^fuzz-smoke\|^ ' "$tmp/$name.res" 2>/dev/null | head -n 1 >>"$report"
    [ -e "$tmp/$name.bad" ] && status=1
done
exit "$status"
