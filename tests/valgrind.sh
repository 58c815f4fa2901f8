#!/bin/sh
# valgrind.sh [BUILDDIR] - Valgrind memcheck over what the suite runs: every
# Check unit program, the whole corpus and the CLI's commands, and the three
# servers (prover, advisor, proxy) inside end-to-end scripts, through the
# SERVER_WRAPPER / ADVISOR_WRAPPER / PROXY_WRAPPER hooks of tests/e2e/*_lib.sh.
#
# Any memcheck error or definite/indirect leak in any process fails the run,
# and so does a test that fails under Valgrind. .ci/run calls it after the
# ASan build; it is not part of `make check` (it takes several minutes).
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
bld=$(cd "${1:-.}" && pwd)
command -v valgrind >/dev/null 2>&1 || { echo "valgrind.sh: valgrind is not installed"; exit 1; }

vgdir=$(mktemp -d) || exit 1
trap 'rm -rf "$vgdir"' EXIT
VG="valgrind -q --num-callers=30 --leak-check=full --errors-for-leak-kinds=definite,indirect"
# forked children without exec (test helpers) would report the parent's heap
VG="$VG --child-silent-after-fork=yes"
VG="$VG --error-exitcode=99 --suppressions=$src/tests/valgrind.supp"
# each run's processes log to vg.RUN.PID.log (%q{PV_VG_RUN}: the run's number)
VGL="$VG --log-file=$vgdir/vg.%q{PV_VG_RUN}.%p.log"
status=0
start=$(date +%s)
# Runs go VG_JOBS at a time (default: the number of processors): memcheck
# is one core per process, and the e2e scripts choose their own free ports.
# A FIFO holds one token per free slot; each run prints into its own file,
# and the results are shown in the order the runs were started.
jobs=${VG_JOBS:-$(nproc 2>/dev/null || echo 1)}
mkfifo "$vgdir/slots" || exit 1
exec 3<>"$vgdir/slots"
i=0
while [ "$i" -lt "$jobs" ]; do echo >&3; i=$((i + 1)); done
runs=0

# With -q, memcheck writes only errors, as "==PID==" lines; Valgrind's own
# notes ("--PID-- WARNING: unhandled syscall" for pidfd_open, which 3.19
# does not know: the proxy then skips no kernel thread) are not errors.
check_logs() { # WHAT RUN
    bad=0
    for l in "$vgdir"/vg."$2".*.log; do
        [ -e "$l" ] || continue
        if grep -q '^==[0-9]*==' "$l"; then
            echo "FAIL $1: memcheck reported (process ${l##*/vg.$2.}):"
            grep '^==[0-9]*==' "$l" | head -n 60
            bad=1
        fi
    done
    return $bad
}

# one RUN WHAT COMMAND...: a run, its verdict on stdout; exit 1 when it failed
one() {
    n=$1
    what=$2
    shift 2
    t0=$(date +%s)
    if PV_VG_RUN=$n "$@" >"$vgdir/out.$n" 2>&1; then
        check_logs "$what" "$n" || return 1
        echo "ok $what ($(( $(date +%s) - t0 ))s)"
    else
        echo "FAIL $what (exit $?):"
        tail -n 40 "$vgdir/out.$n"
        check_logs "$what" "$n"
        return 1
    fi
}

run() { # WHAT COMMAND...: started once a slot is free
    runs=$((runs + 1))
    read -r _ <&3
    (
        export PV_VG_RUN=$runs
        one "$runs" "$@" >"$vgdir/res.$runs" 2>&1 || : >"$vgdir/bad.$runs"
        echo >&3
    ) &
}

# Unit programs: in process (CK_FORK=no) so memcheck sees each test's leaks;
# the property test with a small sample (its 150 default is for make check).
for t in "$bld"/tests/check_*; do
    case "$t" in *.o | *.log | *.trs) continue ;; esac
    [ -x "$t" ] || continue
    run "unit ${t##*/}" env CK_FORK=no PV_PROPERTY_N=20 $VGL "$t"
done

# The CLI over the corpus (every case: prove, check, audit, invalid inputs)
# and its other commands.
run "proviso corpus run corpus" $VGL "$bld/proviso" corpus run "$src/corpus"
ex=$src/examples
run "proviso validate" $VGL "$bld/proviso" validate "$ex/policy.yaml" "$ex/boundary.yaml"
# prove exits 1 when it reports findings, check 1 when the boundary is
# exceeded. The solver's limit is wall-clock time, and memcheck runs the
# solver some twenty times slower: 60 s instead of the 2 s default, so that
# a loaded machine does not turn the answer into "unknown (timeout)".
run "proviso prove" sh -c "$VGL '$bld/proviso' prove --baseline '$ex/policy.yaml' \
    --proposal '$ex/proposal.json' --credentials '$ex/credentials.yaml' --format json \
    --timeout-ms 60000 || [ \$? -eq 1 ]"
run "proviso check" sh -c "$VGL '$bld/proviso' check --candidate '$ex/policy.yaml' \
    --boundary '$ex/boundary.yaml' --timeout-ms 60000 || [ \$? -eq 1 ]"

# Servers under memcheck inside end-to-end scripts (longer start-up allowed).
e2e() { # SCRIPT VAR
    run "e2e ${1##*/} ($2)" env PV_SRCDIR="$src" PV_BUILDDIR="$bld" PV_START_TRIES=2400 \
        "$2=$VGL" sh "$src/tests/e2e/$1"
}
e2e server_routes.sh SERVER_WRAPPER
e2e server_errors.sh SERVER_WRAPPER
e2e advisor_lifecycle.sh ADVISOR_WRAPPER
e2e proxy_forward.sh PROXY_WRAPPER
e2e proxy_connect.sh PROXY_WRAPPER

wait
i=1
while [ "$i" -le "$runs" ]; do
    cat "$vgdir/res.$i"
    [ -e "$vgdir/bad.$i" ] && status=1
    i=$((i + 1))
done
echo "valgrind.sh: $runs runs, $jobs at a time, $(( $(date +%s) - start ))s, status $status"
exit $status
