#!/bin/sh
# longfn_guard.sh - tests/check-longfn.sh finds what it must and only that.
#
# Builds small source trees in a temporary directory (a Makefile.am with
# include lines, as the real one) and checks the guard's verdict and
# message on each: a function of exactly the limit passes, one line more
# fails and is named with its length, a "/* long: WHY */" comment right
# above the signature exempts it, one separated by a blank line or without
# a reason does not, table initialisers and tests/ are not functions; and
# the file limit (1,200 lines, "long file:" exempts).
set -u
top=$(cd "${PV_SRCDIR:-$(dirname "$0")/..}" && pwd)
guard="$top/tests/check-longfn.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/longfn.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0
fail=0

# body LINES: a function body of LINES lines in total from its signature
# line to its closing brace (signature, "{", LINES-3 statements, "}").
fn() {
    echo "static int $1(void)"
    echo "{"
    i=0
    while [ $i -lt $(($2 - 3)) ]; do
        echo "    (void)0;"
        i=$((i + 1))
    done
    echo "}"
}

tree() {
    rm -rf "$tmp/t"
    mkdir -p "$tmp/t/mod" "$tmp/t/tests"
    printf 'include $(srcdir)/mod/local.mk\ninclude $(srcdir)/tests/local.mk\n' >"$tmp/t/Makefile.am"
    : >"$tmp/t/mod/local.mk"
    : >"$tmp/t/tests/local.mk"
}

# expect NAME WANT_RC [GREP]: run the guard on the tree
expect() {
    n=$((n + 1))
    out=$(sh "$guard" "$tmp/t" 2>&1)
    rc=$?
    if [ "$rc" -ne "$2" ]; then
        echo "FAIL $1: exit $rc, want $2: $out"
        fail=$((fail + 1))
        return
    fi
    if [ -n "${3:-}" ] && ! printf '%s\n' "$out" | grep -q -- "$3"; then
        echo "FAIL $1: output lacks '$3': $out"
        fail=$((fail + 1))
        return
    fi
    echo "ok $1"
}

tree
fn at_limit 100 >"$tmp/t/mod/a.c"
expect "100 lines pass" 0

tree
fn over_limit 101 >"$tmp/t/mod/a.c"
expect "101 lines fail, named with length" 1 'mod/a.c:1: over_limit() is 101 lines (over 100)'

tree
{ fn short 5; echo; fn second_long 150; } >"$tmp/t/mod/a.c"
expect "the long one of two is located" 1 'mod/a.c:7: second_long() is 150 lines'

tree
{ echo "/* long: one table-driven switch */"; fn exempt 180; } >"$tmp/t/mod/a.c"
expect "a long: comment right above exempts" 0

tree
{ echo "/* What it does."; echo " * long: not at the start of a line of the block */"; fn nope 120; } >"$tmp/t/mod/a.c"
expect "long: inside another sentence does not exempt" 1 'nope() is 120 lines'

tree
{ echo "/* Decides one thing. */"; echo "/* long: the cases read in wire order */"; fn two_blocks 120; } >"$tmp/t/mod/a.c"
expect "long: in the comment block right above, after another comment" 0

tree
{ echo "/* long: the reason */"; echo; fn gap 120; } >"$tmp/t/mod/a.c"
expect "a blank line between comment and function cancels it" 1 'gap() is 120 lines'

tree
{ echo "/* long: */"; fn no_reason 120; } >"$tmp/t/mod/a.c"
expect "long: without a reason does not exempt" 1 'no_reason() is 120 lines'

tree
{ echo "/* long: exempts the first only */"; fn first 120; echo; fn next 120; } >"$tmp/t/mod/a.c"
expect "an exemption does not carry to the next function" 1 'next() is 120 lines'

tree
{
    echo "static const int table[] = {"
    i=0
    while [ $i -lt 300 ]; do echo "    $i,"; i=$((i + 1)); done
    echo "};"
    fn small 10
} >"$tmp/t/mod/a.c"
expect "a 300-line initialiser is no function" 0

tree
{
    echo "static int multi(int a,"
    echo "                 int b)"
    echo "{"
    i=0
    while [ $i -lt 98 ]; do echo "    (void)0;"; i=$((i + 1)); done
    echo "}"
} >"$tmp/t/mod/a.c"
expect "a two-line signature counts from its first line" 1 'mod/a.c:1: multi() is 102 lines'

tree
fn small 5 >"$tmp/t/mod/a.c"
fn in_tests 300 >"$tmp/t/tests/check_x.c"
expect "tests/ is not checked" 0

tree
{
    echo "/* long: the prototype carries the reason */"
    echo "static int proto(void) __attribute__((warn_unused_result));"
    fn proto 120
} >"$tmp/t/mod/a.c"
expect "a comment above a prototype carries to its definition" 0

tree
{ echo "/* long: only for the declaration */"; echo "int other(void);"; echo; fn later 120; } >"$tmp/t/mod/a.c"
expect "a prototype's comment does not reach a later function" 1 'later() is 120 lines'

tree
{
    echo "struct s {"
    echo "    int a;"
    echo "};"
    echo "/* long: not a function's comment */"
    echo "static const char *const names[] = {\"a\", \"b\"};"
    fn after_table 120
} >"$tmp/t/mod/a.c"
expect "a one-line table's comment does not reach the next function" 1 'after_table() is 120 lines'

tree
fn over_limit 101 >"$tmp/t/mod/a.c"
n=$((n + 1))
if PV_MAX_FN_LINES=101 sh "$guard" "$tmp/t" >/dev/null 2>&1; then
    echo "ok PV_MAX_FN_LINES raises the limit"
else
    echo "FAIL PV_MAX_FN_LINES=101 did not admit 101 lines"
    fail=$((fail + 1))
fi

# files: 1,200 lines pass, 1,201 fail (named, with the count), a
# "long file:" comment near the top exempts, and headers count too
tree
for k in 1 2 3 4 5 6 7 8 9 10 11 12; do fn "f$k" 100; done >"$tmp/t/mod/big.c"
expect "a 1,200-line file passes" 0
echo "/* one more */" >>"$tmp/t/mod/big.c"
expect "a 1,201-line file fails" 1 "mod/big.c: 1201 lines (over 1200)"
{ echo "/* long file: one table, kept whole */"; cat "$tmp/t/mod/big.c"; } >"$tmp/t/mod/big2.c"
rm "$tmp/t/mod/big.c"
expect "a long-file comment exempts it" 0
tree
fn small 10 >"$tmp/t/mod/s.c"
for k in $(seq 1 1201); do echo "/* $k */"; done >"$tmp/t/mod/h.h"
expect "a header over the limit fails" 1 "mod/h.h: 1201 lines"

n=$((n + 1))
if sh "$guard" "$top" >/dev/null 2>&1; then
    echo "ok the project's own sources pass"
else
    sh "$guard" "$top"
    echo "FAIL the project's own sources"
    fail=$((fail + 1))
fi

echo "longfn_guard.sh: $n checks, $fail failures"
[ "$fail" -eq 0 ]
